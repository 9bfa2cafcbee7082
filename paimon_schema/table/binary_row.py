"""Java's `BinaryRow` bytes for a row of plain values: what a manifest stores as a partition
and as the min/max of partition statistics (`layouts.binary_row.decode_binary_row`, from
formats/binary_row.ksy, reads them).

The row as `BinaryRowSerializer` writes it: a big-endian i32 arity, a null bitset (8 header
bits, then one bit per field, padded to 8-byte words), one little-endian 8-byte slot per field,
then the variable-length part in 8-byte words. Strings and bytes of at most 7 bytes live in
their slot (length | 0x80 in the slot's top byte); longer ones, DECIMAL of precision > 18 and
TIMESTAMP of precision > 3 point into the variable part (`offset << 32 | length`, or
`offset << 32 | nanos-of-milli` for timestamps).
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Sequence
from typing import Any

from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

__all__ = ["encode_binary_row"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def encode_binary_row(values: Sequence[Any], types: Sequence[str | DataType]) -> bytes:
    """The serialized row (arity prefix included) of `values` typed by `types`."""
    if len(values) != len(types):
        raise SchemaError(f"{len(values)} values for {len(types)} types")
    arity = len(values)
    bitset = ((arity + 63 + 8) // 64) * 8
    fixed = bytearray(bitset + 8 * arity)
    variable = bytearray()
    for i, (value, raw_type) in enumerate(zip(values, types)):
        slot = bitset + 8 * i
        if value is None:
            bit = i + 8
            fixed[bit >> 3] |= 1 << (bit & 7)
            continue
        data_type = DataType.parse(raw_type)
        inline, extra = _encode(value, data_type)
        if extra is None:
            fixed[slot:slot + 8] = inline
            continue
        offset = len(fixed) + len(variable)
        variable += extra + bytes(-len(extra) % 8)
        fixed[slot:slot + 8] = struct.pack("<q", (offset << 32) | inline)
    return struct.pack(">i", arity) + bytes(fixed) + bytes(variable)


def _encode(value: Any, data_type: DataType) -> tuple[Any, bytes | None]:
    """(the 8 slot bytes, None) for a value stored in its slot, else (the low 32 bits of the
    slot, the variable-length bytes)."""
    root = data_type.root
    if root == "BOOLEAN":
        return struct.pack("<?7x", bool(value)), None
    if root == "TINYINT":
        return struct.pack("<b7x", value), None
    if root == "SMALLINT":
        return struct.pack("<h6x", value), None
    if root == "INT":
        return struct.pack("<i4x", value), None
    if root == "DATE":
        days = value if isinstance(value, int) else (value - _EPOCH_DATE).days
        return struct.pack("<i4x", days), None
    if root == "TIME":
        millis = value if isinstance(value, int) else (
            (value.hour * 3600 + value.minute * 60 + value.second) * 1000 + value.microsecond // 1000)
        return struct.pack("<i4x", millis), None
    if root == "BIGINT":
        return struct.pack("<q", value), None
    if root == "FLOAT":
        return struct.pack("<f4x", value), None
    if root == "DOUBLE":
        return struct.pack("<d", value), None
    if data_type.is_string or data_type.is_binary:
        raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        if len(raw) <= 7:
            return raw + bytes(7 - len(raw)) + bytes([0x80 | len(raw)]), None
        return len(raw), raw
    if root == "DECIMAL":
        unscaled = int(decimal.Decimal(value).scaleb(data_type.scale).to_integral_value())
        if data_type.precision <= 18:
            return struct.pack("<q", unscaled), None
        raw = unscaled.to_bytes((unscaled.bit_length() + 8) // 8 or 1, "big", signed=True)
        return len(raw), raw + bytes(16 - len(raw))
    if data_type.is_timestamp:
        delta = value - _EPOCH if isinstance(value, dt.datetime) else None
        if delta is None:
            raise SchemaError(f"a {data_type} partition value must be a datetime, not {value!r}")
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        millis, rest = divmod(micros, 1000)
        if data_type.precision <= 3:
            return struct.pack("<q", millis), None
        return rest * 1000, struct.pack("<q", millis)
    raise SchemaError(f"partition values of type {data_type} cannot be written")
