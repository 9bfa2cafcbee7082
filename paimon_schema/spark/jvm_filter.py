"""`KeepRows.java`, a row filter in the JVM for `read_table`: compiled once, loaded into a session.

Applying deletion vectors inside Spark's own Parquet scan costs one bit test per row when the
test runs in the JVM: measured on 2M rows (benchmarks/spark_read.py), this Java UDF adds about
0.3x of a plain scan, a broadcast join on (file, 64-row word) about 1.2-2x, an Arrow UDF (rows
through Python) about 2x. The source ships in the package and is compiled on first use with
the JDK's `javac` against the session's own Spark jars (which carry RoaringBitmap) into the
cache (`$PAIMON_SCHEMA_CACHE` or `~/.cache/paimon-schema/spark-filter/`, keyed by the source
and the Spark version), then added with `ADD JAR`. Where that cannot be done (Spark Connect,
no `javac`, a failed compile) `keep_column` answers None and the caller uses the join.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

log = logging.getLogger("paimon_schema.spark")

__all__ = ["keep_column"]

SOURCE = Path(__file__).with_name("KeepRows.java")
CLASS = "io.paimonschema.spark.KeepRows"
#: Why the filter is not available in this process (compile failures are not retried).
_unavailable: str | None = None


def keep_column(spark: Any, payload: bytes, key: Any, row: Any, *, by_name: bool = False) -> Any:
    """The Column `KeepRows(payload)(key, row)` (`KeepRows.ByName` with `by_name`: the key
    is the file name, not its size), or None where the JVM filter cannot be had."""
    global _unavailable
    if _unavailable is not None:
        return None
    try:
        jvm = spark._jvm
        if jvm is None:
            raise AttributeError("no JVM gateway")
    except AttributeError:
        log.info("no JVM gateway (Spark Connect?): deletion vectors are applied by a join")
        return None
    try:
        _load(spark)
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        _unavailable = str(exc)
        log.warning("the JVM row filter is not available (%s); deletion vectors are applied "
                    "by a broadcast join", exc)
        return None
    from pyspark.sql.classic.column import Column, _to_java_column, _to_seq

    from py4j.java_gateway import JavaClass

    keep = JavaClass(CLASS + "$ByName" if by_name else CLASS, spark.sparkContext._gateway._gateway_client)(payload)
    udf = _java_udf2(spark, keep, jvm.org.apache.spark.sql.types.DataTypes.BooleanType)
    return Column(udf.apply(_to_seq(spark.sparkContext, [key, row], _to_java_column)))


def _java_udf2(spark: Any, function: Any, return_type: Any) -> Any:
    """`functions.udf(UDF2, DataType)`, by reflection: py4j would pick the untyped Scala
    overload `udf(AnyRef, DataType)`, which Spark refuses."""
    gateway, jvm = spark.sparkContext._gateway, spark._jvm
    load = jvm.java.lang.Class.forName
    params = gateway.new_array(jvm.java.lang.Class, 2)
    params[0] = load("org.apache.spark.sql.api.java.UDF2")
    params[1] = load("org.apache.spark.sql.types.DataType")
    args = gateway.new_array(jvm.java.lang.Object, 2)
    args[0], args[1] = function, return_type
    return load("org.apache.spark.sql.functions").getMethod("udf", params).invoke(None, args)


def _load(spark: Any) -> None:
    """`ADD JAR` unless this JVM thread already sees the class (py4j pins a Python thread to a
    JVM thread, whose context class loader `ADD JAR` extends)."""
    jvm = spark._jvm
    thread = jvm.java.lang.Thread.currentThread()
    try:
        jvm.java.lang.Class.forName(CLASS, False, thread.getContextClassLoader())
        return
    except Exception:  # noqa: BLE001 - py4j raises Py4JJavaError(ClassNotFoundException)
        pass
    jar = _jar(spark.version)
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
