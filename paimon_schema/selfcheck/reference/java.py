"""Java reference harness ("the oracle") built on Apache Paimon's own Java classes.

The Paimon jar comes from the PyPI wheel ``paimon-python-ali==0.1.1``
(``paimon_python_java/java_dependencies/paimon-python-java-bridge.jar``, paimon-bundle
1.0-SNAPSHOT, self-contained and shaded). On first use the wheel is fetched with
``python -m pip download``, the jar is extracted into the cache directory
(``$PAIMON_SCHEMA_CACHE`` or ``~/.cache/paimon-schema/``) and ``PaimonReference.java`` (shipped
next to this module) is compiled with ``javac -cp <jar>``. The compiled class is keyed by a hash
of the source and the jar, so editing either recompiles. ``$PAIMON_SCHEMA_REFERENCE_JAR`` may
point at another Paimon jar instead of the wheel's.

One JVM handles a whole batch: :meth:`JavaReference.run` sends a JSON array of requests on stdin
and reads one response per request, in order. A request that throws in Java answers
``{"error": "<ExceptionClass>: <message>", "causes": [...]}``; the typed helpers raise
:class:`JavaError` for it. Use :meth:`JavaReference.batch` to put several typed calls into one JVM.

Requests (the ``op`` key); bytes travel as base64 strings:

- ``info`` -> ``{"paimon_version", "paimon_core_version", "java_version", "has_class": {...}}``
- ``write_container``: ``{"columns": [{"name", "indexes": [{"type", "blob": b64|null}]}],
  "order": "given"|"java"}`` -> ``{"data"}`` (``FileIndexFormat.createWriter(out)
  .writeColumnIndexes(map)``; "given" = LinkedHashMaps in request order, "java" = HashMaps built
  the way this jar's ``DataFileIndexWriter`` builds them; ``null`` blob = EMPTY_INDEX_FLAG entry)
- ``read_container``: ``{"data"}`` -> ``{"columns": {name: {type: b64|null}}, "entries":
  {name: {type: [start, length]}}}`` (``FileIndexFormat.Reader.readAll()`` + its parsed header)
- ``write_dv``: ``{"files": [[name, [pos...]], ...], "bitmap64": false, "target_size"?}`` ->
  ``{"data", "ranges": [[name, offset, length, cardinality|null]], "index_files": [...]}``
  (``DeletionVectorsIndexFile.write(LinkedHashMap)``; ranges are
  ``IndexFileMeta.deletionVectorsRanges()``)
- ``read_dv``: ``{"data", "ranges": [[name, offset, length], ...], "reader"?}`` ->
  ``{"files": {name: [pos...]}, "cardinalities": {name: n}}``; reader ``index_file`` (default,
  ``DeletionVectorsIndexFile.readDeletionVector(Map)``), ``single`` (``DeletionVector.read``)
  or ``all`` (``readAllDeletionVectors(IndexFileMeta)``)
- ``write_hash``: ``{"ints"}`` -> ``{"data"}``; ``read_hash``: ``{"data"}`` -> ``{"ints"}``
  (``HashIndexFile.write(IntIterator)`` / ``HashIndexFile.read``)
- ``write_index``: ``{"index_type", "data_type", "values", "options"}`` -> ``{"blob"}``
  (``FileIndexer.create(type, dataType, options).createWriter()``, ``writeRecord`` per value,
  ``serializedBytes()``)
- ``query_index``: ``{"index_type", "data_type", "blob", "options"?, "predicates": [{"kind",
  "literal"|"literals"}]}`` -> ``{"results": [{"kind": "remain"|"skip"|"bitmap", "rows"}]}``
  (``FileIndexer...createReader(stream, 0, len)`` and its ``visitXxx(FieldRef, literal)``)
- ``hashmap_order``: ``{"key_type", "method": "put"|"compute_if_absent", "keys", "methods"?}``
  -> ``{"order"}``: a ``java.util.HashMap``'s iteration order after ``method`` of every key in
  turn (repeats included; ``methods``, one per key, overrides ``method``). key_type ``int``,
  ``short``, ``byte``, ``long`` (JSON ints; long also as decimal strings, answered as
  strings), ``boolean``, ``float``/``double`` (hex strings of the raw bits, answered as the raw
  bits of the key the map kept), ``string`` (java.lang.String), ``binary_string``
  (``BinaryString.fromString``)
- ``int_open_hash_set_order``: ``{"values", "expected"?: 16}`` -> ``{"order"}`` (the shaded
  fastutil ``IntOpenHashSet(expected)``: ``add`` each value, then its iteration order)

Value encoding in JSON (what :func:`encode_value` produces from plain Python values):

- ``null`` = SQL NULL;
- TINYINT, SMALLINT, INT: JSON ints; BIGINT: JSON int or a string of decimal digits (used
  beyond 2**53; parsed with ``Long.parseLong``);
- FLOAT / DOUBLE: ``{"bits": "<hex of floatToRawIntBits / doubleToRawLongBits>"}`` so NaN
  payloads and -0.0 survive (a Python float is rounded to float32 for FLOAT, as Java's
  ``(float)`` cast does);
- BOOLEAN: JSON true/false;
- CHAR(n), VARCHAR(n), STRING: JSON strings (sent as UTF-8, never ``\\u`` escaped, so
  supplementary-plane characters survive) -> ``BinaryString.fromString``;
- BINARY / VARBINARY / BYTES: ``{"b64": ...}``;
- DATE: int days since 1970-01-01; TIME: int milliseconds of the day;
- TIMESTAMP(p) / TIMESTAMP_LTZ(p): ``{"millis": "<long>", "nanos": <0..999999>}`` ->
  ``Timestamp.fromEpochMillis(millis, nanos)``;
- DECIMAL(p, s): a string such as ``"12.50"`` -> ``Decimal.fromBigDecimal``.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import decimal
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import (
    Any,
    Generic,
    NamedTuple,
    TypeVar,
)

from paimon_schema.runtime import progress

__all__ = [
    "ReferenceUnavailable",
    "JavaError",
    "JavaReference",
    "ReferenceBatch",
    "Pending",
    "DvRange",
    "IndexResult",
    "encode_value",
    "cache_dir",
    "WHEEL_REQUIREMENT",
]

WHEEL_REQUIREMENT = "paimon-python-ali==0.1.1"
"""The PyPI wheel that carries the Paimon jar."""

_WHEEL_JAR_MEMBER = "paimon_python_java/java_dependencies/paimon-python-java-bridge.jar"
_JAR_NAME = "paimon-python-java-bridge.jar"
_SOURCE_NAME = "PaimonReference.java"
_MAIN_CLASS = "PaimonReference"
_JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m")

T = TypeVar("T")


class ReferenceUnavailable(RuntimeError):
    """The Java reference cannot run here: no java/javac, wheel not fetchable, javac failed..."""


class JavaError(RuntimeError):
    """A request failed inside the JVM; ``java_class``, ``java_message`` and ``causes`` say how."""

    def __init__(self, error: str, causes: Sequence[str] = ()) -> None:
        super().__init__(error + "".join(f"\n  caused by {c}" for c in causes))
        self.error = error
        self.java_class, _, self.java_message = error.partition(": ")
        self.causes = list(causes)


class DvRange(NamedTuple):
    """An ``IndexFileMeta.deletionVectorsRanges()`` entry (cardinality None if unrecorded)."""

    name: str
    offset: int
    length: int
    cardinality: int | None


@dataclasses.dataclass(frozen=True)
class IndexResult:
    """A ``FileIndexResult``: kind ``remain``/``skip``/``bitmap``; ``rows`` only for ``bitmap``."""

    kind: str
    rows: list[int] | None

    @property
    def remain(self) -> bool:
        """Java's ``FileIndexResult.remain()``."""
        return self.kind == "remain" or (self.kind == "bitmap" and bool(self.rows))


# ----------------------------------------------------------------------------------------------
# Locations
# ----------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """``$PAIMON_SCHEMA_CACHE`` or ``~/.cache/paimon-schema``."""
    env = os.environ.get("PAIMON_SCHEMA_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "paimon-schema"


def _source_path() -> Path:
    return Path(__file__).with_name(_SOURCE_NAME)


def _find_java_tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if not found:
        raise ReferenceUnavailable(f"'{name}' not found on PATH (nor in $JAVA_HOME/bin)")
    return found


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock across processes (best effort where fcntl is missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_jar(root: Path) -> tuple[Path, str]:
    """Download the wheel with pip and keep only the jar (plus its sha256)."""
    wheel_dir = root / WHEEL_REQUIREMENT.replace("==", "-")
    jar = wheel_dir / _JAR_NAME
    sha_file = wheel_dir / (_JAR_NAME + ".sha256")
    if jar.is_file() and sha_file.is_file():
        return jar, sha_file.read_text().strip()
    with _file_lock(root / ".fetch.lock"):
        if jar.is_file() and sha_file.is_file():
            return jar, sha_file.read_text().strip()
        wheel_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=wheel_dir, prefix=".download-") as tmp:
            cmd = [
                sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                "--disable-pip-version-check", "--quiet", WHEEL_REQUIREMENT, "-d", tmp,
            ]
            try:
                with progress.step(f"fetching Paimon's Java jar ({WHEEL_REQUIREMENT} from PyPI, "
                                   f"about 100 MB, once; cached in {root})"):
                    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ReferenceUnavailable(
                    f"pip could not fetch {WHEEL_REQUIREMENT}: {exc}"
                ) from exc
            wheels = list(Path(tmp).glob("*.whl"))
            if proc.returncode != 0 or not wheels:
                detail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
                raise ReferenceUnavailable(
                    f"pip could not fetch {WHEEL_REQUIREMENT} (exit {proc.returncode}): "
                    + " | ".join(detail)
                )
            try:
                with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(_WHEEL_JAR_MEMBER) as src:
                    partial = Path(tmp) / _JAR_NAME
                    with open(partial, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
            except (KeyError, zipfile.BadZipFile) as exc:
                raise ReferenceUnavailable(
                    f"{wheels[0].name} has no {_WHEEL_JAR_MEMBER}: {exc}"
                ) from exc
            sha = _sha256_file(partial)
            os.replace(partial, jar)
            sha_file.write_text(sha + "\n")
    return jar, sha


def _compile(root: Path, jar: Path, jar_sha: str, javac: str) -> Path:
    """Compile PaimonReference.java against the jar into a directory keyed by (source, jar)."""
    source = _source_path()
    try:
        source_bytes = source.read_bytes()
    except OSError as exc:
        raise ReferenceUnavailable(f"harness source missing: {source} ({exc})") from exc
    key = hashlib.sha256(source_bytes + b"\0" + jar_sha.encode()).hexdigest()[:20]
    classes = root / "classes" / key
    if (classes / f"{_MAIN_CLASS}.class").is_file():
        return classes
    with _file_lock(root / ".compile.lock"):
        if (classes / f"{_MAIN_CLASS}.class").is_file():
            return classes
        classes.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=classes.parent, prefix=".build-"))
        try:
            cmd = [javac, "-nowarn", "-encoding", "UTF-8", "-cp", str(jar), "-d", str(tmp),
                   str(source)]
            try:
                with progress.step(f"compiling {source.name} against the jar (once)"):
                    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ReferenceUnavailable(f"javac failed to run: {exc}") from exc
            if proc.returncode != 0:
                raise ReferenceUnavailable(
                    f"javac could not compile {source.name} against {jar.name}:\n"
                    + (proc.stderr or proc.stdout)[-4000:]
                )
            os.chmod(tmp, 0o755)
            os.replace(tmp, classes)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return classes


def _jar_version(jar: Path) -> str:
    """paimon-bundle's version from the jar's Maven metadata ("" if not found)."""
    try:
        with zipfile.ZipFile(jar) as zf:
            for artifact in ("paimon-bundle", "paimon-core", "paimon-common"):
                member = f"META-INF/maven/org.apache.paimon/{artifact}/pom.properties"
                try:
                    text = zf.read(member).decode("utf-8", "replace")
                except KeyError:
                    continue
                match = re.search(r"^version=(.+)$", text, re.M)
                if match:
                    return match.group(1).strip()
    except (OSError, zipfile.BadZipFile):
        pass
    return ""


# ----------------------------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------------------------

_TYPE_RE = re.compile(r"^\s*([A-Za-z_]+(?:\s+[A-Za-z_]+)*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?"
                      r"\s*(WITH\s+LOCAL\s+TIME\s+ZONE)?\s*(NOT\s+NULL)?\s*$", re.I)

_INTEGER_RANGES = {
    "TINYINT": (-(1 << 7), (1 << 7) - 1),
    "SMALLINT": (-(1 << 15), (1 << 15) - 1),
    "INT": (-(1 << 31), (1 << 31) - 1),
    "INTEGER": (-(1 << 31), (1 << 31) - 1),
    "BIGINT": (-(1 << 63), (1 << 63) - 1),
}
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_DATE = _dt.date(1970, 1, 1)


def _parse_type(data_type: str) -> tuple[str, int | None]:
    """(root, precision) of a Paimon SQL type string; TIMESTAMP_LTZ is folded into TIMESTAMP."""
    match = _TYPE_RE.match(data_type)
    if not match:
        raise ValueError(f"unrecognised data type: {data_type!r}")
    root = re.sub(r"\s+", " ", match.group(1).upper())
    precision = int(match.group(2)) if match.group(2) else None
    if root in ("TIMESTAMP_LTZ", "TIMESTAMP WITH LOCAL TIME ZONE"):
        root = "TIMESTAMP"
    if root == "TIMESTAMP" and precision is None:
        precision = 6  # Paimon's default TIMESTAMP precision
    return root, precision


def _float_bits(value: Any, double: bool) -> dict[str, str]:
    if isinstance(value, Mapping) and "bits" in value:
        return {"bits": str(value["bits"])}
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a float, got {value!r}")
    if double:
        (bits,) = struct.unpack(">Q", struct.pack(">d", float(value)))
        return {"bits": f"{bits:016x}"}
    (bits,) = struct.unpack(">I", struct.pack(">f", float(value)))  # round like Java (float)
    return {"bits": f"{bits:08x}"}


def _json_long(value: int) -> int | str:
    return value if -(1 << 53) <= value <= (1 << 53) else str(value)


def encode_value(value: Any, data_type: str) -> Any:
    """Encode a plain Python value (or an already encoded JSON value) for ``data_type``."""
    if value is None:
        return None
    root, precision = _parse_type(data_type)
    if root in _INTEGER_RANGES:
        if isinstance(value, bool):
            raise TypeError(f"{data_type} does not take a bool: {value!r}")
        if isinstance(value, str):
            value = int(value)
        if not isinstance(value, int):
            raise TypeError(f"{data_type} needs an int, got {value!r}")
        low, high = _INTEGER_RANGES[root]
        if not low <= value <= high:
            raise ValueError(f"{value} does not fit {data_type}")
        return _json_long(value)
    if root == "FLOAT":
        return _float_bits(value, double=False)
    if root == "DOUBLE":
        return _float_bits(value, double=True)
    if root == "BOOLEAN":
        if not isinstance(value, bool):
            raise TypeError(f"BOOLEAN needs a bool, got {value!r}")
        return value
    if root in ("STRING", "CHAR", "VARCHAR"):
        if not isinstance(value, str):
            raise TypeError(f"{data_type} needs a str, got {value!r}")
        return value
    if root in ("BYTES", "BINARY", "VARBINARY"):
        if isinstance(value, Mapping) and "b64" in value:
            return {"b64": str(value["b64"])}
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    if root == "DATE":
        if isinstance(value, _dt.datetime):
            raise TypeError("DATE needs a datetime.date, not a datetime")
        if isinstance(value, _dt.date):
            return (value - _EPOCH_DATE).days
        return int(value)
    if root == "TIME":
        if isinstance(value, _dt.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
                value.microsecond // 1000
            )
        return int(value)
    if root == "TIMESTAMP":
        if isinstance(value, Mapping):
            return {"millis": str(int(value["millis"])), "nanos": int(value.get("nanos", 0))}
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
            delta = value - _EPOCH
            micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        elif isinstance(value, int) and not isinstance(value, bool):
            # the raw index key: epoch millis for p <= 3, epoch micros above
            micros = value * 1000 if (precision or 6) <= 3 else value
        else:
            raise TypeError(f"{data_type} needs a datetime or an int, got {value!r}")
        millis, micro_rest = divmod(micros, 1000)
        return {"millis": str(millis), "nanos": micro_rest * 1000}
    if root == "DECIMAL":
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"DECIMAL cannot hold {value!r}")
            value = decimal.Decimal(repr(value))
        return str(value)
    raise ValueError(f"no JSON encoding for data type {data_type!r}")


def _b64(data: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text)


def _encode_predicate(predicate: Any, data_type: str) -> dict[str, Any]:
    """A predicate as a dict (``{"kind", "literal"|"literals"}``) or a tuple ``(kind[, arg])``."""
    if isinstance(predicate, Mapping):
        kind = predicate["kind"]
        out: dict[str, Any] = {"kind": kind}
        if "literal" in predicate:
            out["literal"] = encode_value(predicate["literal"], data_type)
        if "literals" in predicate:
            out["literals"] = [encode_value(v, data_type) for v in predicate["literals"]]
        return out
    kind, *args = predicate
    if kind in ("is_null", "is_not_null"):
        return {"kind": kind}
    if kind in ("in", "not_in"):
        return {"kind": kind, "literals": [encode_value(v, data_type) for v in args[0]]}
    return {"kind": kind, "literal": encode_value(args[0], data_type)}


def _check(response: Mapping[str, Any]) -> Mapping[str, Any]:
    if "error" in response:
        raise JavaError(str(response["error"]), response.get("causes") or ())
    return response


# ----------------------------------------------------------------------------------------------
# Batches
# ----------------------------------------------------------------------------------------------


class Pending(Generic[T]):
    """The future result of one request in a :class:`ReferenceBatch`."""

    _UNSET: Any = object()

    def __init__(self, decode: Callable[[Mapping[str, Any]], T]) -> None:
        self._decode = decode
        self._response: Any = self._UNSET

    def _set(self, response: Mapping[str, Any]) -> None:
        self._response = response

    @property
    def response(self) -> Mapping[str, Any]:
        """The raw JSON response (available once the batch ran)."""
        if self._response is self._UNSET:
            raise RuntimeError("the batch has not run yet")
        return self._response

    def result(self) -> T:
        """The decoded result; raises :class:`JavaError` if Java threw for this request."""
        return self._decode(_check(self.response))

    @property
    def error(self) -> str | None:
        """Java's ``"<ExceptionClass>: <message>"`` for this request, or None."""
        return self.response.get("error")


class ReferenceBatch:
    """Collects typed requests and runs them in one JVM (on ``run()`` or leaving the ``with``)."""

    def __init__(self, reference: JavaReference) -> None:
        self._reference = reference
        self._requests: list[dict[str, Any]] = []
        self._pending: list[Pending[Any]] = []
        self._ran = False

    def __enter__(self) -> ReferenceBatch:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and not self._ran:
            self.run()

    def __len__(self) -> int:
        return len(self._requests)

    def add(self, request: dict[str, Any], decode: Callable[[Mapping[str, Any]], T]) -> Pending[T]:
        """Queue a raw request with its decoder."""
        if self._ran:
            raise RuntimeError("this batch already ran")
        pending: Pending[T] = Pending(decode)
        self._requests.append(request)
        self._pending.append(pending)
        return pending

    def run(self) -> None:
        """Run every queued request in one JVM."""
        if self._ran:
            return
        self._ran = True
        if not self._requests:
            return
        responses = self._reference.run(self._requests)
        for pending, response in zip(self._pending, responses, strict=True):
            pending._set(response)

    # -- typed requests ------------------------------------------------------------------------

    def info(self) -> Pending[dict[str, Any]]:
        """Versions and capability probes of the jar."""
        return self.add({"op": "info"}, dict)

    def write_container(
        self, columns: Mapping[str, Mapping[str, bytes | None]], order: str = "given"
    ) -> Pending[bytes]:
        """``FileIndexFormat.Writer.writeColumnIndexes``; ``None`` = EMPTY_INDEX_FLAG entry."""
        request = {
            "op": "write_container",
            "order": order,
            "columns": [
                {
                    "name": name,
                    "indexes": [
                        {"type": t, "blob": None if blob is None else _b64(blob)}
                        for t, blob in indexes.items()
                    ],
                }
                for name, indexes in columns.items()
            ],
        }
        return self.add(request, lambda r: _unb64(r["data"]))

    def read_container(self, data: bytes) -> Pending[dict[str, dict[str, bytes | None]]]:
        """What ``FileIndexFormat.Reader`` sees: ``{column: {type: bytes | None}}``."""

        def decode(r: Mapping[str, Any]) -> dict[str, dict[str, bytes | None]]:
            return {
                column: {t: None if b is None else _unb64(b) for t, b in types.items()}
                for column, types in r["columns"].items()
            }

        return self.add({"op": "read_container", "data": _b64(data)}, decode)

    def write_deletion_vectors(
        self, mapping: Mapping[str, Iterable[int]], bitmap64: bool = False
    ) -> Pending[tuple[bytes, list[DvRange]]]:
        """``DeletionVectorsIndexFile.write`` over the mapping, in its order -> (bytes, ranges)."""
        request = {
            "op": "write_dv",
            "bitmap64": bool(bitmap64),
            "files": [[name, [_json_long(int(p)) for p in positions]]
                      for name, positions in mapping.items()],
        }

        def decode(r: Mapping[str, Any]) -> tuple[bytes, list[DvRange]]:
            return _unb64(r["data"]), [DvRange(*rng) for rng in r["ranges"]]

        return self.add(request, decode)

    def read_deletion_vectors(
        self,
        data: bytes,
        ranges: Iterable[Sequence[Any]] | Mapping[str, Sequence[int]],
        reader: str = "index_file",
    ) -> Pending[dict[str, list[int]]]:
        """Java's DV reader over ``ranges`` (``[(name, offset, length), ...]`` or a dict)."""
        if isinstance(ranges, Mapping):
            items = [[name, int(r[0]), int(r[1])] for name, r in ranges.items()]
        else:
            items = [[r[0], int(r[1]), int(r[2])] for r in ranges]
        request = {"op": "read_dv", "data": _b64(data), "ranges": items, "reader": reader}
        return self.add(request, lambda r: {k: list(v) for k, v in r["files"].items()})

    def write_hash_index(self, ints: Iterable[int]) -> Pending[bytes]:
        """``HashIndexFile.write(IntIterator)``."""
        request = {"op": "write_hash", "ints": [int(i) for i in ints]}
        return self.add(request, lambda r: _unb64(r["data"]))

    def read_hash_index(self, data: bytes) -> Pending[list[int]]:
        """``HashIndexFile.read``."""
        return self.add({"op": "read_hash", "data": _b64(data)}, lambda r: list(r["ints"]))

    def build_index(
        self, index_type: str, data_type: str, values: Iterable[Any], **options: Any
    ) -> Pending[bytes]:
        """``FileIndexer.create(type, dataType, options)`` writer: ``writeRecord`` each value."""
        request = {
            "op": "write_index",
            "index_type": index_type,
            "data_type": data_type,
            "values": [encode_value(v, data_type) for v in values],
            "options": _options(options),
        }
        return self.add(request, lambda r: _unb64(r["blob"]))

    write_index = build_index

    def query_index(
        self,
        index_type: str,
        data_type: str,
        blob: bytes,
        predicates: Iterable[Any],
        **options: Any,
    ) -> Pending[list[IndexResult]]:
        """Java's ``FileIndexReader.visitXxx`` for each predicate (dict or ``(kind[, arg])``)."""
        request = {
            "op": "query_index",
            "index_type": index_type,
            "data_type": data_type,
            "blob": _b64(blob),
            "options": _options(options),
            "predicates": [_encode_predicate(p, data_type) for p in predicates],
        }
        return self.add(
            request, lambda r: [IndexResult(x["kind"], x["rows"]) for x in r["results"]]
        )

    def hashmap_order(
        self, key_type: str, keys: Iterable[Any], method: str | Sequence[str] = "put"
    ) -> Pending[list[Any]]:
        """A ``java.util.HashMap``'s iteration order after ``method`` ("put" or
        "compute_if_absent", or one of them per key) of each key in turn.

        Keys (and the answer) are in :mod:`paimon_schema.layouts.bitmap_index.javaorder`'s representation: ints
        (float/double as raw bit patterns), bools, str for ``string``, UTF-8 bytes (or str)
        for ``binary_string``.
        """
        request: dict[str, Any] = {
            "op": "hashmap_order",
            "key_type": key_type,
            "keys": [_encode_order_key(key_type, k) for k in keys],
        }
        if isinstance(method, str):
            request["method"] = method
        else:
            request["methods"] = list(method)
        return self.add(request, lambda r: [_decode_order_key(key_type, k) for k in r["order"]])

    def int_open_hash_set_order(
        self, values: Iterable[int], expected: int = 16
    ) -> Pending[list[int]]:
        """fastutil ``IntOpenHashSet(expected)``: ``add`` each value, then its iteration order."""
        request = {
            "op": "int_open_hash_set_order",
            "values": [int(v) for v in values],
            "expected": int(expected),
        }
        return self.add(request, lambda r: list(r["order"]))


def _encode_order_key(key_type: str, key: Any) -> Any:
    if key_type == "float":
        return f"{int(key):08x}"
    if key_type == "double":
        return f"{int(key):016x}"
    if key_type == "boolean":
        return bool(key)
    if key_type == "binary_string" and isinstance(key, (bytes, bytearray)):
        return bytes(key).decode("utf-8")
    if key_type == "string":
        return str(key)
    return _json_long(int(key))


def _decode_order_key(key_type: str, key: Any) -> Any:
    if key_type in ("float", "double"):
        return int(key, 16)
    if key_type == "binary_string":
        return key.encode("utf-8")
    if key_type in ("string", "boolean"):
        return key
    return int(key)


def _options(options: Mapping[str, Any]) -> dict[str, str]:
    """Python keywords (``index_block_size``) become Paimon names (``index-block-size``)."""
    return {k.replace("_", "-"): str(v) for k, v in options.items()}


# ----------------------------------------------------------------------------------------------
# The reference
# ----------------------------------------------------------------------------------------------


class JavaReference:
    """Runs batches of requests through Paimon's Java classes (see the module docstring)."""

    _instance: JavaReference | None = None
    _failure: ReferenceUnavailable | None = None
    _lock = threading.Lock()

    def __init__(self, java: str, jar: Path, classes: Path, version: str) -> None:
        self.java = java
        self.jar = jar
        self.classes = classes
        self.version = version
        self.setup_seconds = 0.0

    @classmethod
    def get(cls) -> JavaReference:
        """The cached singleton; fetches the jar and compiles on first use."""
        with cls._lock:
            if cls._instance is not None:
                return cls._instance
            if cls._failure is not None:
                raise cls._failure
            started = time.monotonic()
            try:
                instance = cls._create()
            except ReferenceUnavailable as exc:
                cls._failure = exc
                raise
            instance.setup_seconds = time.monotonic() - started
            cls._instance = instance
            return instance

    @classmethod
    def reset(cls) -> None:
        """Forget the singleton (and a remembered failure)."""
        with cls._lock:
            cls._instance = None
            cls._failure = None

    @classmethod
    def _create(cls) -> JavaReference:
        java = _find_java_tool("java")
        javac = _find_java_tool("javac")
        root = cache_dir() / "java-reference"
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ReferenceUnavailable(f"cannot create cache directory {root}: {exc}") from exc
        override = os.environ.get("PAIMON_SCHEMA_REFERENCE_JAR")
        if override:
            jar = Path(override).expanduser()
            if not jar.is_file():
                raise ReferenceUnavailable(f"$PAIMON_SCHEMA_REFERENCE_JAR not found: {jar}")
            jar_sha = _sha256_file(jar)
        else:
            jar, jar_sha = _fetch_jar(root)
        classes = _compile(root, jar, jar_sha, javac)
        # Reading the version opens the 96 MB jar's directory (~0.3 s): remember it per build.
        version_file = classes / "paimon-version.txt"
        try:
            version = version_file.read_text(encoding="utf-8").strip()
        except OSError:
            version = _jar_version(jar)
            try:
                version_file.write_text(version + "\n", encoding="utf-8")
            except OSError:
                pass
        return cls(java, jar, classes, version)

    def command(self) -> list[str]:
        """The JVM command line used for a batch."""
        classpath = os.pathsep.join([str(self.classes), str(self.jar)])
        return [self.java, *_JVM_FLAGS, "-cp", classpath, _MAIN_CLASS]

    def run(self, requests: list[dict[str, Any]], timeout: float = 600.0) -> list[dict[str, Any]]:
        """One JVM for the whole list: one response dict per request, same order."""
        if not requests:
            return []
        payload = json.dumps(requests, ensure_ascii=False).encode("utf-8")
        try:
            proc = subprocess.run(self.command(), input=payload, capture_output=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"the Java reference timed out after {timeout} s") from exc
        except OSError as exc:
            raise ReferenceUnavailable(f"cannot start java: {exc}") from exc
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0:
            raise RuntimeError(
                f"the Java reference exited with {proc.returncode}:\n{stderr[-4000:]}"
            )
        try:
            responses = json.loads(proc.stdout.decode("utf-8"))
        except ValueError as exc:
            raise RuntimeError(
                f"the Java reference wrote invalid JSON: {exc}\nstderr:\n{stderr[-2000:]}"
            ) from exc
        if not isinstance(responses, list) or len(responses) != len(requests):
            raise RuntimeError(
                f"the Java reference answered {len(responses)} responses to "
                f"{len(requests)} requests"
            )
        return responses

    def batch(self) -> ReferenceBatch:
        """A batch of typed requests run in one JVM (``with ref.batch() as b: ...``)."""
        return ReferenceBatch(self)

    def _one(self, queue: Callable[[ReferenceBatch], Pending[T]]) -> T:
        batch = self.batch()
        pending = queue(batch)
        batch.run()
        return pending.result()

    # -- typed helpers: one JVM each ---------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Versions and capability probes of the jar."""
        return self._one(lambda b: b.info())

    def write_container(
        self, columns: Mapping[str, Mapping[str, bytes | None]], order: str = "given"
    ) -> bytes:
        """Container bytes from ``{column: {type: blob | None}}`` ("given" or "java" order)."""
        return self._one(lambda b: b.write_container(columns, order))

    def read_container(self, data: bytes) -> dict[str, dict[str, bytes | None]]:
        """``{column: {type: bytes | None}}`` as Java's reader sees the container."""
        return self._one(lambda b: b.read_container(data))

    def write_deletion_vectors(
        self, mapping: Mapping[str, Iterable[int]], bitmap64: bool = False
    ) -> tuple[bytes, list[DvRange]]:
        """(file bytes, ranges) from Java's DV index-file writer, bins in mapping order."""
        return self._one(lambda b: b.write_deletion_vectors(mapping, bitmap64))

    def read_deletion_vectors(
        self,
        data: bytes,
        ranges: Iterable[Sequence[Any]] | Mapping[str, Sequence[int]],
        reader: str = "index_file",
    ) -> dict[str, list[int]]:
        """``{name: positions}`` read by Java (reader ``index_file``, ``single`` or ``all``)."""
        return self._one(lambda b: b.read_deletion_vectors(data, ranges, reader))

    def write_hash_index(self, ints: Iterable[int]) -> bytes:
        """Hash-index file bytes written by ``HashIndexFile``."""
        return self._one(lambda b: b.write_hash_index(ints))

    def read_hash_index(self, data: bytes) -> list[int]:
        """Ints read back by ``HashIndexFile``."""
        return self._one(lambda b: b.read_hash_index(data))

    def build_index(
        self, index_type: str, data_type: str, values: Iterable[Any], **options: Any
    ) -> bytes:
        """An index blob written by Paimon's ``FileIndexer`` for ``index_type``."""
        return self._one(lambda b: b.build_index(index_type, data_type, values, **options))

    write_index = build_index

    def query_index(
        self,
        index_type: str,
        data_type: str,
        blob: bytes,
        predicates: Iterable[Any],
        **options: Any,
    ) -> list[IndexResult]:
        """Java's answer per predicate for an index blob."""
        return self._one(
            lambda b: b.query_index(index_type, data_type, blob, predicates, **options)
        )

    def hashmap_order(
        self, key_type: str, keys: Iterable[Any], method: str | Sequence[str] = "put"
    ) -> list[Any]:
        """A ``java.util.HashMap``'s iteration order (see :meth:`ReferenceBatch.hashmap_order`)."""
        return self._one(lambda b: b.hashmap_order(key_type, keys, method))

    def int_open_hash_set_order(self, values: Iterable[int], expected: int = 16) -> list[int]:
        """fastutil ``IntOpenHashSet(expected)`` iteration order after adding ``values``."""
        return self._one(lambda b: b.int_open_hash_set_order(values, expected))


# ==============================================================================================
# BEGIN benchmark ops (issue 4: writers' speed; used by benchmarks/build_indexes.py)
# ==============================================================================================

#: The test batches run C1 only (fast start-up); a benchmark wants the full tiered JIT (C2), and
#: a fixed, pre-touched heap: no build pays for growing the heap or faulting its pages in.
BENCH_JVM_FLAGS = ("-Xss4m", "-Xms3g", "-Xmx3g", "-XX:+AlwaysPreTouch")


def bench_index_request(
    index_type: str,
    data_type: str,
    column: Mapping[str, Any],
    warmup: int,
    runs: int,
    **options: Any,
) -> dict[str, Any]:
    """A ``bench_index`` request: Java generates ``column`` (``{"kind": "int_mod" | "string_mod"
    | "long_mul", "rows", "distinct"?, "prefix"?}``, formulas in PaimonReference.benchIndex)
    or reads it (``{"kind": "file", "rows", "path", "value", "nulls"?}``, the format there),
    builds the index ``warmup`` times untimed, then ``runs`` times timed, each after
    ``System.gc()``. The answer: ``times_ns`` of the timed builds (wall clock), their
    ``median_ns``, ``cpu_times_ns`` and ``cpu_median_ns`` (the building thread's CPU time, -1
    where the JVM cannot measure it), the ``collections`` that ran during the timed builds
    (collector threads' work, which the thread's CPU time leaves out), the blob's ``length``
    and ``sha256``."""
    return {
        "op": "bench_index",
        "index_type": index_type,
        "data_type": data_type,
        "options": _options(options),
        "column": dict(column),
        "warmup": int(warmup),
        "runs": int(runs),
    }


class _BenchReference(JavaReference):
    def __init__(self, base: JavaReference, flags: Sequence[str]) -> None:
        super().__init__(base.java, base.jar, base.classes, base.version)
        self._flags = tuple(flags)

    def command(self) -> list[str]:
        classpath = os.pathsep.join([str(self.classes), str(self.jar)])
        return [self.java, *self._flags, "-cp", classpath, _MAIN_CLASS]


def run_benchmark(
    reference: JavaReference,
    requests: list[dict[str, Any]],
    jvm_flags: Sequence[str] = BENCH_JVM_FLAGS,
    timeout: float = 1800.0,
) -> list[dict[str, Any]]:
    """Run requests (e.g. :func:`bench_index_request`) in one JVM started with ``jvm_flags``;
    raises :class:`JavaError` for the first request that failed."""
    responses = _BenchReference(reference, jvm_flags).run(requests, timeout=timeout)
    return [dict(_check(r)) for r in responses]


# ==============================================================================================
# END benchmark ops
# ==============================================================================================


# ==============================================================================================
# BEGIN table ops (issue 6: whole tables written and read by Java; tests/spark/test_java_tables.py)
# ==============================================================================================

def write_table_request(
    warehouse: str | os.PathLike[str],
    database: str,
    table: str,
    fields: Sequence[tuple[str, str]],
    commits: Sequence[Sequence[Sequence[Any]]],
    primary_keys: Sequence[str] = (),
    partition_keys: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``write_table`` request: create ``database.table`` in the local ``warehouse`` unless it
    exists (``fields`` = (name, Paimon type) pairs), then one ``BatchWriteBuilder`` commit per
    entry of ``commits``; a row is ``(kind, value, ...)`` with kind ``"+I"``, ``"-U"``,
    ``"+U"`` or ``"-D"`` and plain Python values. Answers ``{"path", "snapshot"}``."""
    types = [t for _, t in fields]
    return {
        "op": "write_table", "warehouse": str(warehouse), "database": database, "table": table,
        "fields": [{"name": n, "type": t} for n, t in fields],
        "primary_keys": list(primary_keys), "partition_keys": list(partition_keys),
        "options": {k: str(v) for k, v in (options or {}).items()},
        "commits": [[[row[0], *(encode_value(v, t) for v, t in zip(row[1:], types, strict=True))]
                     for row in commit] for commit in commits],
    }


def delete_positions_request(
    warehouse: str | os.PathLike[str], database: str, table: str,
    files: Mapping[str, Iterable[int]],
) -> dict[str, Any]:
    """A ``delete_positions`` request: give data files of an append table with deletion vectors
    their complete deleted positions (``AppendDeletionFileMaintainer``, one commit)."""
    return {"op": "delete_positions", "warehouse": str(warehouse), "database": database,
            "table": table, "files": {name: sorted(int(p) for p in positions)
                                      for name, positions in files.items()}}


def read_table_request(
    warehouse: str | os.PathLike[str], database: str, table: str, snapshot: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``read_table`` request: Paimon's own batch read (answers ``{"fields", "rows"}``; decode
    the rows with :func:`decode_rows`); ``options`` are dynamic table options (time travel:
    ``scan.tag-name``, ``scan.timestamp-millis``, ...)."""
    request: dict[str, Any] = {"op": "read_table", "warehouse": str(warehouse),
                               "database": database, "table": table}
    if snapshot is not None:
        request["snapshot"] = int(snapshot)
    if options:
        request["options"] = {k: str(v) for k, v in options.items()}
    return request


def create_tag_request(
    warehouse: str | os.PathLike[str], database: str, table: str, tag: str, snapshot: int,
) -> dict[str, Any]:
    """A ``create_tag`` request: Paimon's own ``createTag(tag, snapshot)`` (``tag/tag-NAME``)."""
    return {"op": "create_tag", "warehouse": str(warehouse), "database": database,
            "table": table, "tag": tag, "snapshot": int(snapshot)}


def scan_table_request(
    warehouse: str | os.PathLike[str], database: str, table: str, where: Any = None,
    types: Mapping[str, str] | None = None, options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``scan_table`` request: Paimon's batch read with ``where`` (a ``ps.col`` predicate,
    literals typed by ``types``: column -> Paimon type) pushed down, one split per data file.
    Answers ``{"fields", "rows", "files": [{"file", "row_count", "rows_read", "sidecar_skips"}],
    "pruned_at_scan": [file...]}``; ``options`` are dynamic table options."""
    request: dict[str, Any] = {"op": "scan_table", "warehouse": str(warehouse),
                               "database": database, "table": table,
                               "options": {k: str(v) for k, v in (options or {}).items()}}
    if where is not None:
        request["filter"] = _encode_filter(where, types or {})
    return request


def _encode_filter(predicate: Any, types: Mapping[str, str]) -> dict[str, Any]:
    from paimon_schema.query.predicate import And, Leaf, Or

    if isinstance(predicate, (And, Or)):
        return {"and" if isinstance(predicate, And) else "or":
                [_encode_filter(c, types) for c in predicate.children]}
    if not isinstance(predicate, Leaf):
        raise TypeError(f"not a predicate: {predicate!r}")
    data_type = types[predicate.column]
    kind = {"in_": "in"}.get(predicate.function, predicate.function)
    if kind == "between":
        low, high = predicate.literals
        return {"and": [{"column": predicate.column, "kind": "greater_or_equal",
                         "literal": encode_value(low, data_type)},
                        {"column": predicate.column, "kind": "less_or_equal",
                         "literal": encode_value(high, data_type)}]}
    out: dict[str, Any] = {"column": predicate.column, "kind": kind}
    if kind in ("in", "not_in"):
        out["literals"] = [encode_value(v, data_type) for v in predicate.literals]
    elif predicate.literals:
        out["literal"] = encode_value(predicate.literals[0], data_type)
    return out


def decode_rows(response: Mapping[str, Any], types: Sequence[str]) -> list[tuple[Any, ...]]:
    """``read_table`` rows as ``(kind, value, ...)`` tuples of plain Python values: floats from
    their bits, DECIMAL as ``Decimal``, DATE as ``date``, TIMESTAMP as a naive UTC
    ``datetime`` (microseconds, floored), bytes as ``bytes``."""
    return [(row[0], *(_decode_value(v, t) for v, t in zip(row[1:], types, strict=True)))
            for row in response["rows"]]


def _decode_value(value: Any, data_type: str) -> Any:
    if value is None:
        return None
    root, _ = _parse_type(data_type)
    if root == "FLOAT":
        return struct.unpack(">f", struct.pack(">I", int(value["bits"], 16)))[0]
    if root == "DOUBLE":
        return struct.unpack(">d", struct.pack(">Q", int(value["bits"], 16)))[0]
    if root == "DECIMAL":
        return decimal.Decimal(value)
    if root == "DATE":
        return _EPOCH_DATE + _dt.timedelta(days=int(value))
    if root == "TIMESTAMP":
        return _EPOCH + _dt.timedelta(milliseconds=int(value["millis"]),
                                      microseconds=int(value["nanos"]) // 1000)
    if root in ("BYTES", "BINARY", "VARBINARY"):
        return _unb64(value["b64"])
    return value


def run_table_ops(reference: JavaReference, requests: list[dict[str, Any]],
                  timeout: float = 1800.0) -> list[dict[str, Any]]:
    """Run table requests in one JVM; raises :class:`JavaError` for the first that failed."""
    return [dict(_check(r)) for r in reference.run(requests, timeout=timeout)]


# ==============================================================================================
# END table ops
# ==============================================================================================
