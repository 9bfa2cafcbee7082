"""Where a partition's files are: the partition's values decoded from a manifest's BinaryRow
and named as Paimon names its directories (`dt=2024-05-14/hr=1`, Hive's escaping, Java's
`toString` of the values), and the bucket directory under it."""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import Any

from paimon_schema.layouts.binary_row import decode_binary_row
from paimon_schema.table.errors import TableError
from paimon_schema.table.schema import TableSchema
from paimon_schema.values.types import DataType

__all__ = ["DEFAULT_PARTITION_NAME", "POSTPONE_BUCKET", "bucket_dir", "partition_of"]

POSTPONE_BUCKET = -2                    # written but not yet assigned; readers skip it
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"

_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^') | frozenset(chr(c) for c in range(1, 0x20))


_NEEDS_ESCAPE = re.compile("[" + re.escape("".join(sorted(_ESCAPED))) + "]")


def _escape(text: str) -> str:
    """Hive's `escapePathName`, which Paimon's partition paths use (most names and values
    need none: returned as they are, a plan of a thousand partitions escapes each twice)."""
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def _java_double(value: float) -> str:
    """Java's `Double.toString` for the usual cases (partition names of FLOAT/DOUBLE)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(float(value))
        return text if "e" not in text else f"{value:.1f}"
    mantissa, exponent = f"{value:e}".split("e")
    digits = repr(float(mantissa)).rstrip("0")
    digits = digits + "0" if digits.endswith(".") else digits
    return f"{digits}E{int(exponent)}"


def _partition_string(value: Any, data_type: DataType, legacy: bool) -> str | None:
    """The partition value as it appears in the path (`InternalRowPartitionComputer`): the
    internal value's `toString()` with `partition.legacy-name` (the default), else the value
    cast to a string."""
    if value is None:
        return None
    root = data_type.root
    if isinstance(value, bool):
        return "true" if value else "false"
    if root == "DATE":
        return str((value - dt.date(1970, 1, 1)).days) if legacy else value.isoformat()
    if root in ("FLOAT", "DOUBLE"):
        return _java_double(value)
    if root == "DECIMAL":
        return format(value, "f")
    if data_type.is_timestamp:
        if legacy:              # Java LocalDateTime.toString()
            text = value.strftime("%Y-%m-%dT%H:%M")
            if value.second or value.microsecond:
                text += f":{value.second:02d}"
            if value.microsecond:
                text += f".{value.microsecond:06d}".rstrip("0").ljust(4, "0")
            return text
        return value.isoformat(sep=" ")
    if root == "TIME":
        return value.isoformat()
    if isinstance(value, bytes):
        raise TableError("BINARY partition columns are not supported")
    return str(value)


def partition_of(raw: bytes, schema: TableSchema) -> tuple[dict[str, Any], str]:
    """The partition's {column: value} and its directory path, from a manifest's BinaryRow."""
    types = schema.partition_types
    values = decode_binary_row(raw, types) if types else ()
    legacy = schema.flag("partition.legacy-name") if "partition.legacy-name" in schema.options else True
    default = schema.option("partition.default-name", DEFAULT_PARTITION_NAME)
    parts = []
    for key, raw_type, value in zip(schema.partition_keys, types, values):
        text = _partition_string(value, DataType.parse(raw_type), legacy)
        if text is None or not text.strip():
            text = default
        parts.append(f"{_escape(key)}={_escape(text)}")
    return dict(zip(schema.partition_keys, values)), "/".join(parts)


def bucket_dir(root: str, partition_path: str, bucket: int, schema: TableSchema) -> str:
    """The directory of a bucket's data files (under `data-file.path-directory` if set)."""
    base = root
    directory = schema.option("data-file.path-directory")
    if directory:
        base = posixpath.join(base, directory)
    name = "bucket-postpone" if bucket == POSTPONE_BUCKET else f"bucket-{bucket}"
    return posixpath.join(base, partition_path, name) if partition_path else posixpath.join(base, name)
