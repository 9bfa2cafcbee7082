"""Paimon's serialized BinaryRow (formats/binary_row.ksy): the partition values of a manifest
and the min/max of its partition statistics, read and written.

The generated parser reads the structure (arity, null bits, slots, variable part) and locates
what is malformed; what a slot means depends on the field's type, which only the schema knows,
so the values are interpreted here, as Java's `BinaryRow` getters do. Values are plain Python as
the API conventions say (DATE -> date, TIMESTAMP -> naive UTC datetime, ...).

`encode_binary_row` writes the row as Java's `BinaryRowSerializer` does: a big-endian i32 arity,
a null bitset (8 header bits, then one bit per field, padded to 8-byte words), one little-endian
8-byte slot per field, then the variable-length part in 8-byte words. Strings and bytes of at
most 7 bytes live in their slot (length | 0x80 in the slot's top byte); longer ones, DECIMAL of
precision > 18 and TIMESTAMP of precision > 3 point into the variable part (`offset << 32 |
length`, or `offset << 32 | nanos-of-milli` for timestamps).
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import struct
from collections.abc import Callable, Sequence
from typing import Any

from paimon_schema.generated import binary_row_codec
from paimon_schema.generated.binary_row import BinaryRow
from paimon_schema.runtime import kaitai
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values import types
from paimon_schema.values.types import DataType

__all__ = ["decode_binary_row", "encode_binary_row", "row_decoder", "row_kinds"]

ARITY_FIELD = 4
_HIGHEST_BIT = 0x80 << 56
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def decode_binary_row(data: bytes, types: Sequence[str | DataType]) -> tuple[Any, ...]:
    """The values of a serialized `BinaryRow`, one per type in `types` (None for a null).

    FormatError for malformed bytes, an arity other than `len(types)`, or a field that does
    not decode as its type (including a type a partition cannot have).
    """
    fast = _decode_simple(data, types)
    if fast is not None:
        return fast
    view = memoryview(bytes(data))
    parsed = kaitai.parse(BinaryRow, view)
    if parsed.num_slots != len(types):
        raise FormatError(f"BinaryRow has {parsed.num_slots} fields, the schema's partition has {len(types)}",
                          offset=0, path="num_slots")
    row = view[ARITY_FIELD:]
    values: list[Any] = []
    for i, raw_type in enumerate(types):
        bit = i + 8
        if parsed.null_bits[bit >> 3] & (1 << (bit & 7)):
            values.append(None)
            continue
        slot = kaitai.field_start(parsed, "slots", i) - ARITY_FIELD
        try:
            values.append(_value(row, slot, DataType.parse(raw_type)))
        except (struct.error, IndexError, ValueError, OverflowError) as exc:
            if isinstance(exc, FormatError):
                raise
            raise FormatError(f"field {i} does not decode as {raw_type}: {exc}",
                              offset=ARITY_FIELD + slot, path=f"slots[{i}]") from exc
    return tuple(values)


#: The types `_decode_simple` reads: (struct format of the slot, or "s"/"b" for string/bytes).
_SIMPLE = {"BOOLEAN": "?", "TINYINT": "b", "SMALLINT": "h", "INT": "i", "BIGINT": "q",
           "FLOAT": "f", "DOUBLE": "d", "DATE": "D", "CHAR": "s", "VARCHAR": "s",
           "BINARY": "y", "VARBINARY": "y"}


@functools.lru_cache(maxsize=256)
def _simple_kinds(type_names: tuple[str | DataType, ...]) -> tuple[str, ...] | None:
    kinds = []
    for raw_type in type_names:
        try:
            kind = _SIMPLE.get(DataType.parse(raw_type).root)
        except SchemaError:
            return None
        if kind is None:
            return None
        kinds.append(kind)
    return tuple(kinds)


def row_kinds(types: Sequence[str | DataType]) -> str | None:
    """One letter per type (`_SIMPLE`: `?bhiqfdDsy`) when the fast decoder reads every one,
    else None: the row layout `_kernels.stats_bounds` checks and reads in place."""
    kinds = _simple_kinds(tuple(types))
    return None if kinds is None else "".join(kinds)


def row_decoder(types: Sequence[str | DataType]) -> Callable[[bytes], tuple[Any, ...]]:
    """`decode_binary_row(data, types)` as a function of `data`, for many rows of one type
    (the statistics of a table's files): the types are looked at once."""
    types = tuple(types)
    kinds = _simple_kinds(types)
    if kinds is None:
        return lambda data: decode_binary_row(data, types)

    def decode(data: bytes) -> tuple[Any, ...]:
        fast = _decode_kinds(data, kinds) if type(data) is bytes else None
        return fast if fast is not None else decode_binary_row(data, types)

    return decode


def _decode_simple(data: bytes, types: Sequence[str | DataType]) -> tuple[Any, ...] | None:
    """The row's values when every type is a plain number, date, string or bytes and the
    bytes hold together; else None, and the generated parser reads the row (and locates what
    is malformed). Manifests hold a partition and two statistics rows per data file: this
    reads one in ~2 us, the parser in ~100."""
    kinds = _simple_kinds(tuple(types))
    if kinds is None or not isinstance(data, bytes):
        return None
    return _decode_kinds(data, kinds)


#: The 8-byte slot of each `_SIMPLE` kind as one `struct` item (strings and bytes: the slot
#: whole, taken apart in `_decode_kinds`).
_KIND_SLOTS = {"?": "?7x", "b": "b7x", "h": "h6x", "i": "i4x", "q": "q", "f": "f4x", "d": "d",
                 "D": "i4x", "s": "Q", "y": "Q"}


@functools.lru_cache(maxsize=256)
def _row_plan(kinds: tuple[str, ...]) -> tuple[bytes, struct.Struct, tuple[int, ...]]:
    """For rows of `kinds` without a null: the null bits all clear (header byte aside), every
    slot in one `struct`, and the positions of the slots read further (dates, strings, bytes)."""
    nulls = ((len(kinds) + 63 + 8) // 64) * 8
    return (bytes(nulls - 1), struct.Struct("<" + "".join(_KIND_SLOTS[k] for k in kinds)),
            tuple(i for i, k in enumerate(kinds) if k in "Dsy"))


def _decode_kinds(data: bytes, kinds: tuple[str, ...]) -> tuple[Any, ...] | None:
    arity = len(kinds)
    nulls = ((arity + 63 + 8) // 64) * 8
    fixed = ARITY_FIELD + nulls
    size = len(data)
    if size < fixed + 8 * arity or int.from_bytes(data[:4], "big", signed=True) != arity:
        return None
    clear, slots, further = _row_plan(kinds)
    if data[ARITY_FIELD + 1:fixed] == clear:
        return _decode_without_nulls(data, kinds, slots, further, fixed)
    values: list[Any] = []
    for i, kind in enumerate(kinds):
        bit = i + 8
        if data[ARITY_FIELD + (bit >> 3)] & (1 << (bit & 7)):
            values.append(None)
            continue
        slot = fixed + 8 * i
        if kind == "s" or kind == "y":
            if data[slot + 7] & 0x80:
                length = data[slot + 7] & 0x7F
                if length > 7:
                    return None
                raw = data[slot:slot + length]
            else:
                length, offset = struct.unpack_from("<II", data, slot)
                start = ARITY_FIELD + offset
                if start + length > size:
                    return None
                raw = data[start:start + length]
            if kind == "y":
                values.append(raw)
                continue
            try:
                values.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                return None
        elif kind == "?":
            values.append(data[slot] != 0)
        elif kind == "D":
            try:
                values.append(_EPOCH_DATE + dt.timedelta(days=struct.unpack_from("<i", data, slot)[0]))
            except OverflowError:
                return None
        else:
            values.append(struct.unpack_from("<" + kind, data, slot)[0])
    return tuple(values)


def _decode_without_nulls(data: bytes, kinds: tuple[str, ...], slots: struct.Struct,
                          further: tuple[int, ...], fixed: int) -> tuple[Any, ...] | None:
    """`_decode_kinds` of a row without a null: the slots in one `unpack_from` (the statistics
    of every file a plan prunes are decoded: this halves it)."""
    values = list(slots.unpack_from(data, fixed))
    size = len(data)
    for i in further:
        kind, value = kinds[i], values[i]
        if kind == "D":
            try:
                values[i] = _EPOCH_DATE + dt.timedelta(days=value)
            except OverflowError:
                return None
            continue
        if value >> 63:
            length = (value >> 56) & 0x7F
            if length > 7:
                return None
            slot = fixed + 8 * i
            raw = data[slot:slot + length]
        else:
            length, start = value & 0xFFFFFFFF, ARITY_FIELD + (value >> 32)
            if start + length > size:
                return None
            raw = data[start:start + length]
        if kind == "y":
            values[i] = raw
            continue
        try:
            values[i] = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return tuple(values)


def _value(row: memoryview, slot: int, data_type: DataType) -> Any:
    root = data_type.root
    long_ = struct.unpack_from("<q", row, slot)[0]
    if root == "BOOLEAN":
        return row[slot] != 0
    if root == "TINYINT":
        return struct.unpack_from("<b", row, slot)[0]
    if root == "SMALLINT":
        return struct.unpack_from("<h", row, slot)[0]
    if root in ("INT", "DATE", "TIME"):
        value = struct.unpack_from("<i", row, slot)[0]
        if root == "DATE":
            return dt.date(1970, 1, 1) + dt.timedelta(days=value)
        if root == "TIME":
            return (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=value)).time()
        return value
    if root == "BIGINT":
        return long_
    if root == "FLOAT":
        return struct.unpack_from("<f", row, slot)[0]
    if root == "DOUBLE":
        return struct.unpack_from("<d", row, slot)[0]
    if data_type.is_string or data_type.is_binary:
        raw = _var_bytes(row, slot, long_)
        return raw.decode("utf-8") if data_type.is_string else raw
    if root == "DECIMAL":
        assert data_type.precision is not None and data_type.scale is not None
        if data_type.precision <= 18:
            unscaled = long_
        else:
            offset, size = (long_ >> 32) & 0xFFFFFFFF, long_ & 0xFFFFFFFF
            unscaled = int.from_bytes(bytes(row[offset:offset + size]), "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-data_type.scale)
    if data_type.is_timestamp:
        assert data_type.precision is not None
        if data_type.precision <= 3:
            millis, nanos = long_, 0
        else:
            offset, nanos = (long_ >> 32) & 0xFFFFFFFF, long_ & 0xFFFFFFFF
            millis = struct.unpack_from("<q", row, offset)[0]
        return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis, microseconds=nanos // 1000)
    raise SchemaError(f"partition values of type {data_type} are not supported")


def _var_bytes(row: memoryview, slot: int, long_: int) -> bytes:
    unsigned = long_ & 0xFFFFFFFFFFFFFFFF
    if unsigned & _HIGHEST_BIT:
        size = (unsigned >> 56) & 0x7F
        if size > 7:
            raise FormatError(f"inline length {size} > 7", offset=ARITY_FIELD + slot)
        return bytes(row[slot:slot + size])
    offset, size = unsigned >> 32, unsigned & 0xFFFFFFFF
    if offset + size > len(row):
        raise FormatError(f"variable part [{offset}, {offset + size}) is past the row's "
                          f"{len(row)} bytes", offset=ARITY_FIELD + slot)
    return bytes(row[offset:offset + size])


def encode_binary_row(values: Sequence[Any], types: Sequence[str | DataType]) -> bytes:
    """The serialized row (arity prefix included) of `values` typed by `types`: each value
    becomes its slot (and variable-part bytes) here; the generated codec lays out the row."""
    if len(values) != len(types):
        raise SchemaError(f"{len(values)} values for {len(types)} types")
    arity = len(values)
    null_bits = bytearray(((arity + 63 + 8) // 64) * 8)
    slots = [0] * arity
    variable = bytearray()
    fixed_size = len(null_bits) + 8 * arity
    for i, (value, raw_type) in enumerate(zip(values, types)):
        if value is None:
            bit = i + 8
            null_bits[bit >> 3] |= 1 << (bit & 7)
            continue
        inline, extra = _encode(value, DataType.parse(raw_type))
        if extra is None:
            slots[i] = int.from_bytes(inline, "little")
            continue
        offset = fixed_size + len(variable)
        variable += extra + bytes(-len(extra) % 8)
        slots[i] = (offset << 32) | inline
    return bytes(_codec().build({"num_slots": arity, "null_bits": bytes(null_bits), "slots": slots,
                                 "variable_part": bytes(variable)}))


@functools.cache
def _codec() -> Any:
    return binary_row_codec.binary_row.compile()


def _encode(value: Any, data_type: DataType) -> tuple[Any, bytes | None]:
    """(the 8 slot bytes, None) for a value stored in its slot, else (the low 32 bits of the
    slot, the variable-length bytes). The value is checked and converted by `types.internal`,
    as an index key is (days, millis of day, unscaled decimals, epoch millis or micros)."""
    key = types.internal(data_type, value)
    root = data_type.root
    if root == "BOOLEAN":
        return struct.pack("<?7x", key), None
    if root in _SLOT_FORMATS:
        return struct.pack(_SLOT_FORMATS[root], key), None
    if data_type.is_string or data_type.is_binary:
        assert isinstance(key, bytes)
        if len(key) <= 7:
            return key + bytes(7 - len(key)) + bytes([0x80 | len(key)]), None
        return len(key), key
    if root == "DECIMAL":
        assert data_type.precision is not None and isinstance(key, int)
        if data_type.precision <= 18:
            return struct.pack("<q", key), None
        raw = key.to_bytes((key.bit_length() + 8) // 8 or 1, "big", signed=True)
        return len(raw), raw + bytes(16 - len(raw))
    if data_type.is_timestamp:
        assert data_type.precision is not None and isinstance(key, int)
        if data_type.precision <= 3:
            return struct.pack("<q", key), None
        millis, rest = divmod(key, 1000)          # the key is epoch micros above precision 3
        return rest * 1000, struct.pack("<q", millis)
    raise SchemaError(f"partition values of type {data_type} cannot be written")


#: Slot layouts of the types whose key is one number (little-endian, zero-padded to 8 bytes).
_SLOT_FORMATS = {"TINYINT": "<b7x", "SMALLINT": "<h6x", "INT": "<i4x", "DATE": "<i4x",
                 "TIME": "<i4x", "BIGINT": "<q", "FLOAT": "<f4x", "DOUBLE": "<d"}
