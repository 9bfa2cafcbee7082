"""Index keys: which encoding (`paimon_common::key_kind`) a column's type uses, how a query
value becomes a key as the generated parsers return it, how keys sort in Java, and how runs of
stored keys are read without the generated parsers (`scan_records`)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache
from typing import TypeAlias, cast

import numpy as np

from paimon_schema.generated.paimon_common import PaimonCommon
from paimon_schema.values import types
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: numpy's sort of fixed-width bytes
    _kernels = None  # type: ignore[assignment]

KeyKind: TypeAlias = PaimonCommon.KeyKind

_KINDS = {"BOOLEAN": KeyKind.boolean, "TINYINT": KeyKind.int8, "SMALLINT": KeyKind.int16,
          "INT": KeyKind.int32, "DATE": KeyKind.int32, "TIME": KeyKind.int32,
          "BIGINT": KeyKind.int64, "TIMESTAMP": KeyKind.int64, "TIMESTAMP_LTZ": KeyKind.int64,
          "FLOAT": KeyKind.float32, "DOUBLE": KeyKind.float64,
          "CHAR": KeyKind.string, "VARCHAR": KeyKind.string}
#: numpy dtypes of the fixed-size `paimon_common::key` kinds (floats as raw IEEE bits).
KEY_DTYPES = {KeyKind.boolean: "u1", KeyKind.int8: "i1", KeyKind.int16: ">i2",
              KeyKind.int32: ">i4", KeyKind.int64: ">i8", KeyKind.float32: ">u4",
              KeyKind.float64: ">u8"}
NO_MIN = -2**31                     # the `valid: min` of an `s4` that has none
_S4 = struct.Struct(">i")
#: Kinds whose key is `bits_value` (unsigned: a boolean byte, IEEE bits); the other numbers are `int_value`.
_BITS_KINDS = frozenset({KeyKind.boolean, KeyKind.float32, KeyKind.float64})
_FLOAT_WIDTHS = {KeyKind.float32: 32, KeyKind.float64: 64}
_INFINITY_BITS = {32: 0x7F80_0000, 64: 0x7FF0_0000_0000_0000}
#: Encoded size of the fixed-size kinds (`len_fixed_key`).
FIXED_SIZES = {KeyKind.boolean: 1, KeyKind.int8: 1, KeyKind.int16: 2, KeyKind.int32: 4,
               KeyKind.int64: 8, KeyKind.float32: 4, KeyKind.float64: 8}


@dataclass(frozen=True)
class KeyCodec:
    """Keys of one column in one index type.

    A key is what the generated parser returns for `paimon_common::key`: an int (booleans as
    0/1, floats as their unsigned IEEE bits) or the UTF-8 bytes of a string.
    """

    data_type: DataType
    kind: KeyKind
    canonical_nan: bool     # DataOutput (bitmap) canonicalizes NaN; ByteBuffer (range-bitmap) does not

    def encode(self, value: object) -> int | bytes:
        """The key of a non-null query value; SchemaError if it does not fit the type."""
        internal = types.internal(self.data_type, value)
        if isinstance(internal, float):     # FLOAT and DOUBLE: the only types with float values
            return types.float_bits(internal, _FLOAT_WIDTHS[self.kind], self.canonical_nan)
        if isinstance(internal, (int, bytes)):  # booleans as 0/1
            return int(internal) if isinstance(internal, bool) else internal
        raise SchemaError(f"{value!r} for {self.data_type} has no {self.kind.name} key")

    def order(self, key: int | bytes) -> int | bytes:
        """A Python-comparable stand-in sorting keys as Java's comparator does."""
        width = _FLOAT_WIDTHS.get(self.kind)
        if width is not None and isinstance(key, int):
            return types.float_order(key, width)
        return key

    def orders(self, keys_: list[int | bytes]) -> list[int | bytes]:
        """`order` of many keys as the parser gives them; numpy for floats, the only kind whose
        order is not the key itself, so that a lookup's 16 KiB of keys costs no Python call each."""
        width = _FLOAT_WIDTHS.get(self.kind)
        if width is None:
            return keys_
        bits = np.array(keys_, dtype=np.uint64)
        sign = np.uint64(1 << (width - 1))
        magnitude = bits & (sign - np.uint64(1))
        signed = magnitude.astype(np.int64)
        result = np.where(bits & sign != 0, -signed - 1, signed).tolist()
        for i in np.flatnonzero(magnitude > np.uint64(_INFINITY_BITS[width])).tolist():
            result[i] = 1 << (width - 1)                # every NaN, above +inf
        return result

    def decode(self, key: int | bytes) -> object:
        """A readable value for a stored key (raw integers for temporal types)."""
        if self.kind == KeyKind.boolean:
            return key != 0
        width = _FLOAT_WIDTHS.get(self.kind)
        if width is not None and isinstance(key, int):
            return types.bits_to_float(key, width)
        if self.kind == KeyKind.string:
            return bytes(key).decode("utf-8", errors="backslashreplace")
        return key

    def size(self, key: int | bytes) -> int:
        """Encoded size of a key (Java's `measure`)."""
        return 4 + len(key) if isinstance(key, bytes) else FIXED_SIZES[self.kind]


def string_keys(keys_: list[int | bytes]) -> list[bytes]:
    """The keys of a string column, which are all bytes: the key kind says so, not the element
    type, and checking each key would cost a Python call per key."""
    return cast(list[bytes], keys_)


#: Most bytes a fixed-width copy of the strings may take for `byte_order` to sort them in numpy.
_FIXED_WIDTH_LIMIT = 1 << 26


def byte_order(strings: list[bytes]) -> np.ndarray:
    """Indices (int64) of distinct `strings` in ascending unsigned byte order, Java's order of
    string and binary keys: numpy's sort of them as fixed-width bytes (its padding with NULs
    cannot tie two strings when none ends with a NUL), else, or where the copy would be large,
    Python's sort (a call per comparison: twice the time for 100k keys). Compiled, a radix
    sort of the bytes in place, 8 at a time (`kernels.c` v2_sort)."""
    if _kernels is not None:
        return np.frombuffer(_kernels.v2_sort(strings), np.int64)
    count = len(strings)
    lengths = np.fromiter(map(len, strings), np.int64, count)
    width = int(lengths.max()) if count else 0
    if count and width and count * width <= _FIXED_WIDTH_LIMIT:
        fixed = np.array(strings, dtype=f"S{width}")
        last = fixed.view(np.uint8).reshape(count, width)[np.arange(count), np.maximum(lengths - 1, 0)]
        if not ((last == 0) & (lengths > 0)).any():
            return np.argsort(fixed, kind="stable").astype(np.int64, copy=False)
    return np.array(sorted(range(count), key=strings.__getitem__), np.int64)


def raw_key(key: PaimonCommon.Key) -> int | bytes:
    """A key object of the generated parser as a key: its int, or a string key's bytes."""
    if key.kind in _BITS_KINDS:
        return cast(int, key.bits_value)
    if key.kind == KeyKind.string:
        return bytes(key.utf8_value.value)
    return cast(int, key.int_value)


def key_model(kind: KeyKind, key: int | bytes) -> dict[str, object]:
    """A key as the generated codec builds `paimon_common::key` of `kind`: the field of its
    kind set, the others None (`start` only marks a position for readers)."""
    if isinstance(key, bytes):
        return {"start": {}, "int_value": None, "bits_value": None,
                "utf8_value": {"len_value": len(key), "value": key}}
    bits = kind in _BITS_KINDS
    return {"start": {}, "int_value": None if bits else key, "bits_value": key if bits else None,
            "utf8_value": None}


def bitmap_keys(data_type: str | DataType) -> KeyCodec:
    """Key codec of the bitmap index; SchemaError for types Java's bitmap index refuses."""
    dtype = DataType.parse(data_type)
    kind = _KINDS.get(dtype.root)
    if kind is None:
        raise SchemaError(f"the bitmap index does not support {dtype}")
    return KeyCodec(dtype, kind, canonical_nan=True)


def range_bitmap_keys(data_type: str | DataType) -> KeyCodec:
    """Key codec of the range-bitmap index (adds DECIMAL(p <= 18); TIMESTAMP only up to p 6)."""
    dtype = DataType.parse(data_type)
    if dtype.root == "DECIMAL" and (dtype.precision or 0) <= 18:
        return KeyCodec(dtype, KeyKind.int64, canonical_nan=False)
    if dtype.is_timestamp and (dtype.precision or 0) > 6:
        raise SchemaError(f"the range-bitmap index does not support {dtype} (precision above 6)")
    kind = _KINDS.get(dtype.root)
    if kind is None:
        raise SchemaError(f"the range-bitmap index does not support {dtype}")
    return KeyCodec(dtype, kind, canonical_nan=False)


# ---------------------------------------------------------------------------------------------
# Runs of records `key, s4...` read with struct/numpy: bitmap V1 entries, V2 block references and
# index-block entries, range-bitmap chunk keys. The generated parser, one Python object per
# field, is their specification but costs ~40 ms per 16 KiB of INT keys.


def scan_records(data: bytes, kind: KeyKind, pos: int, count: int, minimums: tuple[int, ...]
                 ) -> tuple[list[int | bytes], list[list[int]], int] | None:
    """`count` records of a key and one `s4` per entry of `minimums`, from `pos` in `data`
    (bytes, so that string keys come out as bytes): (keys as the generated parser gives them,
    each `s4` column, end), or None wherever the generated parser fails: the data ends early,
    a string length is negative or an `s4` is below its `valid: min`. Counts are checked
    against the data before anything is allocated, so hostile ones cost nothing."""
    scan = _scan_string_records if kind == KeyKind.string else _scan_fixed_records
    records = scan(data, kind, pos, count, len(minimums))
    if records is None:
        return None
    _, columns, _ = records
    if count and any(min(column) < low for column, low in zip(columns, minimums)):
        return None
    return records


def _scan_fixed_records(data: bytes, kind: KeyKind, pos: int, count: int,
                        width: int) -> tuple[list[int | bytes], list[list[int]], int] | None:
    """Fixed-size keys: one structured big-endian `numpy.frombuffer`, sized before reading."""
    dtype = _record_dtype(kind, width)
    if count > max(len(data) - pos, 0) // dtype.itemsize:
        return None
    records = np.frombuffer(data, dtype, count, min(pos, len(data)))   # no records: anywhere
    return (records["key"].tolist(), [records[f"c{i}"].tolist() for i in range(width)],
            pos + count * dtype.itemsize)


@cache
def _record_dtype(kind: KeyKind, width: int) -> np.dtype:
    return np.dtype([("key", KEY_DTYPES[kind])] + [(f"c{i}", ">i4") for i in range(width)])


def _scan_string_records(data: bytes, kind: KeyKind, pos: int, count: int,
                         width: int) -> tuple[list[int | bytes], list[list[int]], int] | None:
    """String keys (`s4` length, UTF-8 bytes, then the `s4`s): a tight `unpack_from` loop,
    which raises struct.error where the data ends (an empty format too, past the end)."""
    keys_: list[int | bytes] = []
    values: list[int] = []              # the s4s of every record, back to back
    unpack, columns = _S4.unpack_from, struct.Struct(">" + "i" * width).unpack_from
    add_key, add_values = keys_.append, values.extend
    try:
        for _ in range(count):
            (length,) = unpack(data, pos)
            if length < 0:
                return None
            stop = pos + 4 + length
            add_key(data[pos + 4:stop])
            add_values(columns(data, stop))
            pos = stop + 4 * width
    except struct.error:
        return None
    return keys_, [values[i::width] for i in range(width)], pos
