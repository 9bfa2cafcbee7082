"""Java's global-index `KeySerializer` for one column type: Python values to key bytes, and the
typed order version-2 files sort them in."""

from __future__ import annotations

import decimal
import struct
from dataclasses import dataclass
from typing import Any, cast

from paimon_schema.runtime import varlen
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType, float_bits, float_order, internal


@dataclass(frozen=True)
class GlobalKeys:
    """Java's global-index `KeySerializer` for one column type: value <-> key bytes, and the
    typed order of version-2 files (`order` of the bytes, `value_order` of a value)."""

    data_type: DataType

    @classmethod
    def of(cls, data_type: str | DataType) -> GlobalKeys:
        dtype = DataType.parse(data_type)
        if dtype.is_binary:
            raise SchemaError(f"{dtype} is not supported by global indexes (Java's KeySerializer)")
        return cls(dtype)

    def encode(self, value: object) -> bytes:
        """The key bytes of a Python value (SchemaError if it does not fit the type)."""
        return self.encode_internal(internal(self.data_type, value))

    def encode_internal(self, item: object) -> bytes:
        """The key bytes of an internal value (`types.internal`: days, unscaled, UTF-8 ...)."""
        dtype, root = self.data_type, self.data_type.root
        if root == "TINYINT":
            return struct.pack("<b", item)
        if root == "SMALLINT":
            return struct.pack("<h", item)
        if root in ("INT", "DATE", "TIME"):
            return struct.pack("<i", item)
        if root == "BIGINT":
            return struct.pack("<q", item)
        if root == "BOOLEAN":
            return b"\x01" if item else b"\x00"
        if root == "FLOAT":
            return struct.pack("<I", float_bits(cast(float, item), 32, True))
        if root == "DOUBLE":
            return struct.pack("<Q", float_bits(cast(float, item), 64, True))
        if root == "DECIMAL":
            unscaled = cast(int, item)
            if (dtype.precision or 0) <= 18:
                return struct.pack("<q", unscaled)
            magnitude = unscaled if unscaled >= 0 else ~unscaled
            return unscaled.to_bytes(magnitude.bit_length() // 8 + 1, "big", signed=True)
        if dtype.is_timestamp:
            key = cast(int, item)
            if (dtype.precision or 0) <= 3:
                return struct.pack("<q", key)
            millis, micros = divmod(key, 1000)
            return struct.pack("<q", millis) + varlen.encode(micros * 1000)
        return cast(bytes, item)                     # CHAR / VARCHAR: UTF-8

    def decode(self, key: bytes) -> object:
        """The value of key bytes (DATE as days, TIME as millis, TIMESTAMP as its raw key)."""
        dtype, root = self.data_type, self.data_type.root
        if dtype.is_string:
            return key.decode("utf-8", errors="replace")
        if root == "BOOLEAN":
            return key == b"\x01"
        if root in ("FLOAT", "DOUBLE"):
            return struct.unpack("<f" if root == "FLOAT" else "<d", key)[0]
        if root == "DECIMAL":
            unscaled = (int.from_bytes(key, "big", signed=True) if (dtype.precision or 0) > 18
                        else int.from_bytes(key, "little", signed=True))
            return decimal.Decimal(unscaled).scaleb(-(dtype.scale or 0))
        if dtype.is_timestamp:
            millis, nanos = self.order(key)
            return millis if (dtype.precision or 0) <= 3 else millis * 1000 + nanos // 1000
        return self.order(key)

    def order(self, key: bytes) -> Any:
        """A sort key of key bytes in the column's typed order (Java's comparator)."""
        root = self.data_type.root
        if self.data_type.is_string:
            return key
        if root == "FLOAT":
            return float_order(int.from_bytes(key, "little"), 32)
        if root == "DOUBLE":
            return float_order(int.from_bytes(key, "little"), 64)
        if root == "DECIMAL" and (self.data_type.precision or 0) > 18:
            return int.from_bytes(key, "big", signed=True)
        if self.data_type.is_timestamp and len(key) > 8:
            nanos, _ = varlen.read(key, 8)
            return (int.from_bytes(key[:8], "little", signed=True), nanos)
        if self.data_type.is_timestamp:
            return (int.from_bytes(key[:8], "little", signed=True), 0)
        return int.from_bytes(key, "little", signed=root != "BOOLEAN")
