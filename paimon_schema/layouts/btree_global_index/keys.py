"""Java's `KeySerializer` for btree global index keys: the bytes a key is stored as, and the
order its comparator sorts them in (numbers by value, -0.0 before 0.0 and NaN last as
`Float.compareTo`; strings by unsigned bytes), as an `order` value Python compares directly.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from paimon_schema.runtime import varlen
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import (
    INTEGER_BOUNDS, INTEGER_RANGES, DataType, bits_to_float, float_bits, float_order, internal)

#: struct formats of the fixed-width keys, by type root
_FIXED = {"BOOLEAN": "<B", "TINYINT": "<b", "SMALLINT": "<h", "INT": "<i", "DATE": "<i",
          "TIME": "<i", "BIGINT": "<q"}
_EPOCH = dt.datetime(1970, 1, 1)
_NAN_ORDER = 2**63 - 1      # every NaN, above +inf (whose order is its bits)
#: the key kinds the compiled block search compares in place (kernels.c `block_search`)
KEY_INT, KEY_UBYTE, KEY_FLOAT, KEY_BYTES = range(4)


@dataclass(frozen=True)
class BTreeKeys:
    """How one column type's keys are stored and ordered."""

    data_type: DataType
    width: int | None                               # fixed key size, None for variable
    encode_internal: Callable[[Any], bytes]         # internal value -> key bytes
    order_internal: Callable[[Any], Any]            # internal value -> order value
    order_bytes: Callable[[bytes | memoryview], Any]   # key bytes -> order value
    decode: Callable[[bytes], Any]                  # key bytes -> Python value (for dumps)
    int_range: tuple[int, int] | None = None        # plain ints taken as they are (integer types)
    bulk_order: Callable[[np.ndarray], np.ndarray] | None = None   # fixed-width keys (rows of bytes) -> orders
    search_kind: int | None = None      # how `sst.search` compares keys in place (KEY_*), if it can

    def encode(self, value: object) -> bytes:
        """The key bytes of a Python value (SchemaError if it does not fit the type)."""
        return self.encode_internal(self.internal(value))

    def order(self, value: object) -> Any:
        """Where a Python value sorts among this type's keys."""
        return self.order_internal(self.internal(value))

    def internal(self, value: object) -> Any:
        """`types.internal`, with a shortcut for a plain int of an integer type."""
        if type(value) is int and self.int_range is not None and self.int_range[0] <= value <= self.int_range[1]:
            return value
        return internal(self.data_type, value)

    def order_of_key(self, key: bytes, where: str, offset: int) -> Any:
        """Where stored key bytes sort; FormatError at `offset` if they are no key of the type."""
        if self.width is not None and len(key) != self.width:
            raise FormatError(f"a {self.data_type} key is {self.width} bytes, not {len(key)}",
                              offset=offset, path=where)
        try:
            return self.order_bytes(key)
        except (ValueError, IndexError, struct.error) as exc:
            raise FormatError(f"not a {self.data_type} key: {bytes(key).hex()}",
                              offset=offset, path=where) from exc


@functools.lru_cache(maxsize=256)
def btree_keys(data_type: str | DataType) -> BTreeKeys:
    """The key codec of a column type; SchemaError for a type Java's `KeySerializer` refuses
    (BINARY, VARBINARY). Cached: a reader opened per lookup would build it each time."""
    dtype = DataType.parse(data_type)
    root = dtype.root
    if root in _FIXED:
        fmt = struct.Struct(_FIXED[root])
        if root == "BOOLEAN":
            return BTreeKeys(dtype, 1, lambda v: b"\x01" if v else b"\x00", int,
                             lambda k: k[0], lambda k: k[0] == 1, search_kind=KEY_UBYTE)
        unpack = fmt.unpack
        return BTreeKeys(dtype, fmt.size, fmt.pack, int, lambda k: unpack(k)[0],
                         _temporal_decoder(root, lambda k: unpack(k)[0]),
                         INTEGER_BOUNDS[root] if root in INTEGER_RANGES else None,
                         _bulk_ints(f"<i{fmt.size}"), KEY_INT)
    if root in ("FLOAT", "DOUBLE"):
        size = 4 if root == "FLOAT" else 8
        bits = struct.Struct("<I" if size == 4 else "<Q")

        def encode_float(v: float) -> bytes:
            return bits.pack(float_bits(v, size * 8, canonical=True))

        def order_of_bits(b: int) -> int:
            order = float_order(b, size * 8)
            return _NAN_ORDER if order == 1 << (size * 8 - 1) else order

        def order_float_key(k: bytes | memoryview) -> int:
            return order_of_bits(bits.unpack(k)[0])

        return BTreeKeys(dtype, size, encode_float,
                         lambda v: order_of_bits(float_bits(v, size * 8, canonical=True)),
                         order_float_key, lambda k: bits_to_float(bits.unpack(k)[0], size * 8),
                         bulk_order=lambda rows: float_orders(rows.view(f"<u{size}").ravel(), size),
                         search_kind=KEY_FLOAT)
    if root == "DECIMAL":
        assert dtype.precision is not None and dtype.scale is not None
        scale = dtype.scale
        compact = dtype.precision <= 18          # Decimal.isCompact: an unscaled long
        q = struct.Struct("<q")

        def unscaled_of(k: bytes | memoryview) -> int:
            return int(q.unpack(k)[0]) if compact else _big_endian_int(k)

        return BTreeKeys(dtype, 8 if compact else None, q.pack if compact else _to_byte_array, int,
                         unscaled_of, lambda k: decimal.Decimal(unscaled_of(k)).scaleb(-scale),
                         bulk_order=_bulk_ints("<i8") if compact else None,
                         search_kind=KEY_INT if compact else None)
    if dtype.is_timestamp:
        q = struct.Struct("<q")
        if (dtype.precision or 0) <= 3:
            return BTreeKeys(dtype, 8, q.pack, int, lambda k: q.unpack(k)[0],
                             lambda k: _EPOCH + dt.timedelta(milliseconds=q.unpack(k)[0]),
                             bulk_order=_bulk_ints("<i8"), search_kind=KEY_INT)

        def encode_ts(micros: int) -> bytes:
            millis, sub = divmod(micros, 1000)
            return q.pack(millis) + varlen.encode(sub * 1000)

        def order_ts_key(k: bytes | memoryview) -> int:
            nanos, end = varlen.read(k, 8, 5)
            if end != len(k) or nanos >= 1_000_000:
                raise ValueError("bad nanos of millisecond")
            return int(q.unpack(k[:8])[0]) * 1_000_000 + nanos

        return BTreeKeys(dtype, None, encode_ts, lambda micros: micros * 1000, order_ts_key,
                         lambda k: _EPOCH + dt.timedelta(microseconds=order_ts_key(k) // 1000))
    if dtype.is_string:
        return BTreeKeys(dtype, None, bytes, bytes, bytes, lambda k: bytes(k).decode("utf-8", "replace"),
                         search_kind=KEY_BYTES)
    raise SchemaError(f"{dtype} cannot be indexed by a btree global index "
                      f"(Java's KeySerializer supports no {dtype.root})")


def _bulk_ints(dtype: str) -> Callable[[np.ndarray], np.ndarray]:
    def orders(rows: np.ndarray) -> np.ndarray:
        result: np.ndarray = rows.view(dtype).ravel().astype(np.int64)
        return result
    return orders


def float_orders(bits: np.ndarray, width: int) -> np.ndarray:
    """`types.float_order` of many IEEE bit patterns (`width` bytes each), as int64; NaNs, all
    equal, above +inf."""
    bits = bits.astype(np.uint64)
    sign = np.uint64(1 << (width * 8 - 1))
    magnitude = (bits & (sign - np.uint64(1))).astype(np.int64)
    orders = np.where((bits & sign) != 0, -magnitude - 1, magnitude)
    exponent = (0xFF << 23) if width == 4 else (0x7FF << 52)
    orders[(magnitude & exponent == exponent) & (magnitude != exponent)] = _NAN_ORDER
    result: np.ndarray = orders
    return result


def _temporal_decoder(root: str, raw: Callable[[bytes], int]) -> Callable[[bytes], Any]:
    if root == "DATE":
        return lambda k: dt.date(1970, 1, 1) + dt.timedelta(days=raw(k))
    if root == "TIME":
        return lambda k: (dt.datetime.min + dt.timedelta(milliseconds=raw(k))).time()
    return raw


def _big_endian_int(k: bytes | memoryview) -> int:
    if not k:
        raise ValueError("an empty decimal")
    return int.from_bytes(k, "big", signed=True)


def _to_byte_array(value: int) -> bytes:
    """Java's `BigInteger.toByteArray()`: minimal big-endian two's complement."""
    bits = value.bit_length() if value >= 0 else (~value).bit_length()
    return value.to_bytes(bits // 8 + 1, "big", signed=True)
