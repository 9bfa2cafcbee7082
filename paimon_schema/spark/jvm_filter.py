"""`KeepRows.java` in the JVM for `read_table`: the row filter, and the helpers that build a
whole filtered scan in one py4j call; compiled once, loaded into a session.

Applying deletion vectors inside Spark's own Parquet scan costs one bit test per row when the
test runs in the JVM: a Java UDF of the row index alone (the file is the one the scan is
reading; the index is a column the Parquet reader fills, without Spark's per-row `_metadata`
struct), against a broadcast join on (file, 64-row word) about 1.2-2x of a plain scan's CPU and
an Arrow UDF (rows through Python) about 2x (benchmarks/spark_read.py). Planning is the other
cost: built from Python, a scan took ~250 py4j round trips (Columns, the UDF by reflection, the
reader, the paths), the Spark job `spark.read.parquet` runs to infer the schema, and the one it
runs to list more than 32 paths; `KeepRows.scan` builds it in one call from the schema
`KeepRows.fileSchema` reads from one footer the way Spark infers it, over a file index given
the files' statuses (the manifests' sizes), so nothing is listed.
The source ships in the package and is compiled on first use with the JDK's `javac` against
the session's own Spark jars (which carry RoaringBitmap) into the cache (`$PAIMON_SCHEMA_CACHE`
or `~/.cache/paimon-schema/spark-filter/`, keyed by the source and the Spark version), then
added with `ADD JAR`. Where that cannot be done (Spark Connect, no `javac`, a failed compile)
`helper` answers None and the caller builds the scan with PySpark and filters it by a join.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import struct
import subprocess
import tempfile
import weakref
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("paimon_schema.spark")

__all__ = ["Helper", "helper"]

SOURCE = Path(__file__).with_name("KeepRows.java")
CLASS = "io.paimonschema.spark.KeepRows"
#: Why the filter is not available in this process (compile failures are not retried).
_unavailable: str | None = None
#: The helper of each SparkContext that has the jar.
_helpers: weakref.WeakKeyDictionary[Any, Helper] = weakref.WeakKeyDictionary()


class Helper:
    """`KeepRows`' static methods, each one py4j round trip (a py4j `JavaClass` would ask the
    JVM about the member on every access; these members are resolved once)."""

    def __init__(self, gateway_client: Any) -> None:
        from py4j.java_gateway import JavaMember

        target = "z:" + CLASS          # py4j's prefix of a static member's target
        self._file_schema = JavaMember("fileSchema", None, target, gateway_client)
        self._scan = JavaMember("scan", None, target, gateway_client)

    def file_schema(self, spark: Any, uri: str) -> str | None:
        """The Spark schema (JSON) `spark.read.parquet(uri)` would infer, read from the file's
        footer on the driver; None where that fails (Spark's own inference then reports it)."""
        from py4j.protocol import Py4JJavaError

        try:
            return str(_call(spark, self._file_schema, spark._jsparkSession, uri))
        except Py4JJavaError as exc:
            log.debug("footer of %s not read by KeepRows (%s); Spark infers the schema", uri, exc)
            return None

    def scan(self, spark: Any, schema: str, uris: Sequence[str], options: dict[str, str],
             selects: Sequence[str], payload: bytes, sizes: Sequence[int]) -> Any:
        """`spark.read.options(options).schema(schema).parquet(uris)` without the rows the
        payload drops (an entry for each of the URIs, checked by the JVM), then `selectExpr(selects)` unless there are
        none (without selects, the frame has the filter's row-index column too). With `sizes`
        (one per URI, in bytes) the files are not listed: the scan is given their statuses."""
        from pyspark.sql.classic.dataframe import DataFrame

        settings = [s for item in options.items() for s in item]
        jdf = _call(spark, self._scan, spark._jsparkSession, schema, pack_strings(uris),
                    pack_strings(settings), pack_strings(selects), payload,
                    struct.pack(f"<{len(sizes)}q", *sizes))
        return DataFrame(jdf, spark)


def helper(spark: Any) -> Helper | None:
    """The session's `KeepRows` helper, or None where it cannot be had."""
    global _unavailable
    if _unavailable is not None:
        return None
    if getattr(spark, "_jvm", None) is None:
        log.info("no JVM gateway (Spark Connect?): scans are built with PySpark, deletion "
                 "vectors applied by a join")
        return None
    context = spark.sparkContext
    found = _helpers.get(context)
    if found is not None:
        return found
    try:
        _load(spark, new_context=True)
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        _unavailable = str(exc)
        log.warning("the JVM row filter is not available (%s); scans are built with PySpark, "
                    "deletion vectors applied by a broadcast join", exc)
        return None
    found = _helpers[context] = Helper(context._gateway._gateway_client)
    return found


def pack_strings(strings: Sequence[str]) -> bytes:
    """Strings as `KeepRows.strings` reads them: (length: i32 LE, UTF-8) each."""
    parts = []
    for string in strings:
        data = string.encode()
        parts += [struct.pack("<i", len(data)), data]
    return b"".join(parts)


def _call(spark: Any, member: Any, *args: Any) -> Any:
    """`member(*args)`; where this Python thread's JVM thread does not see the class yet (py4j
    pins each Python thread to its own JVM thread), `ADD JAR` there and call again."""
    from py4j.protocol import Py4JError, Py4JJavaError

    try:
        return member(*args)
    except Py4JJavaError:
        raise
    except Py4JError:
        _load(spark)
        return member(*args)


def _load(spark: Any, *, new_context: bool = False) -> None:
    """`ADD JAR` unless this JVM thread already sees the class (its context class loader is
    what `ADD JAR` extends) and, for a context seen the first time, it lists the jar (its
    executors load the UDF from it)."""
    jar = _jar(spark.version)
    jvm = spark._jvm
    if new_context and not any(str(j).endswith("/" + jar.name)
                               for j in spark.sparkContext._jsc.jars()):
        spark.sql(f"ADD JAR '{jar}'")
        return
    thread = jvm.java.lang.Thread.currentThread()
    try:
        jvm.java.lang.Class.forName(CLASS, False, thread.getContextClassLoader())
        return
    except Exception:  # noqa: BLE001 - py4j raises Py4JJavaError(ClassNotFoundException)
        pass
    spark.sql(f"ADD JAR '{jar}'")


def cache_dir() -> Path:
    env = os.environ.get("PAIMON_SCHEMA_CACHE")
    return (Path(env).expanduser() if env else Path.home() / ".cache" / "paimon-schema") / "spark-filter"


def _jar(spark_version: str) -> Path:
    """The compiled jar, built when missing (written aside, then renamed into place)."""
    import pyspark

    source = SOURCE.read_bytes()
    key = hashlib.sha256(source + b"\0" + spark_version.encode()).hexdigest()[:16]
    jar = cache_dir() / f"keep-rows-{key}.jar"
    if jar.is_file():
        return jar
    javac = shutil.which("javac") or (os.path.join(os.environ["JAVA_HOME"], "bin", "javac")
                                      if os.environ.get("JAVA_HOME") else None)
    if not javac or not os.path.exists(javac):
        raise RuntimeError("no javac (a JDK) to compile the filter")
    jars = Path(pyspark.__file__).parent / "jars"
    if not jars.is_dir() and os.environ.get("SPARK_HOME"):
        jars = Path(os.environ["SPARK_HOME"]) / "jars"
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
        classes = Path(tmp) / "classes"
        proc = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "--release", "17",
                               "-cp", str(jars / "*"), "-d", str(classes), str(SOURCE)],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"javac failed: {(proc.stderr or proc.stdout)[-2000:]}")
        built = Path(tmp) / "keep-rows.jar"
        with zipfile.ZipFile(built, "w") as zf:
            for path in sorted(classes.rglob("*.class")):
                zf.write(path, path.relative_to(classes).as_posix())
        os.replace(built, jar)
    return jar
