"""The hash functions Paimon's bloom filter uses, with Java's 64-bit signed arithmetic, and
`hash_function`: `FastHash` for a column's data type."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import xxhash

from paimon_schema.values import types
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

MASK64 = (1 << 64) - 1


def to_signed64(value: int) -> int:
    value &= MASK64
    return value - (1 << 64) if value >> 63 else value


def wang64(key: int) -> int:
    """Thomas Wang's 64-bit mix (`FastHash` for numeric types); `>>` is arithmetic."""
    k = key & MASK64

    def sar(x: int, n: int) -> int:          # arithmetic shift right of a 64-bit pattern
        return (to_signed64(x) >> n) & MASK64

    k = ((~k) + (k << 21)) & MASK64
    k ^= sar(k, 24)
    k = (k + (k << 3) + (k << 8)) & MASK64
    k ^= sar(k, 14)
    k = (k + (k << 2) + (k << 4)) & MASK64
    k ^= sar(k, 28)
    k = (k + (k << 31)) & MASK64
    return to_signed64(k)


def xxh64(data: bytes) -> int:
    """XXH64 with seed 0, read as a signed long (zero-allocation-hashing's `xx()`)."""
    return to_signed64(xxhash.xxh64_intdigest(data, 0))


def bloom_positions(hash64: int, num_hash_functions: int, num_bits: int) -> list[int]:
    """Bit positions `BloomFilter64` sets/tests for one hash: `h1 + i*h2` over int32."""
    h1 = _int32(hash64)
    h2 = _int32(hash64 >> 32)
    positions = []
    for i in range(1, num_hash_functions + 1):
        combined = _int32(h1 + i * h2)
        if combined < 0:
            combined = ~combined
        positions.append(combined % num_bits)
    return positions


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


_LONG_HASHED = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME",
                          "TIMESTAMP", "TIMESTAMP_LTZ"})


def hash_function(data_type: DataType) -> Callable[[object], int]:
    """`FastHash` for `data_type`: a non-null Python value -> its signed 64-bit hash.

    SchemaError for the types Paimon's bloom filter refuses (BOOLEAN, DECIMAL, complex types).
    """
    root = data_type.root
    if root in _LONG_HASHED:
        return lambda value: wang64(_internal(data_type, value, int))
    if root == "FLOAT":
        return lambda value: wang64(_float_to_int_bits(_internal(data_type, value, float)))
    if root == "DOUBLE":
        return lambda value: wang64(
            types.float_bits(_internal(data_type, value, float), 64, canonical=True))
    if data_type.is_string or data_type.is_binary:
        return lambda value: xxh64(_internal(data_type, value, bytes))
    raise SchemaError(f"the bloom-filter index does not support {data_type}")


_T = TypeVar("_T", int, float, bytes)


def _internal(data_type: DataType, value: object, kind: type[_T]) -> _T:
    """`types.internal` of a non-null value, as the Python type it gives for `data_type`."""
    internal = types.internal(data_type, value)
    if not isinstance(internal, kind):
        raise SchemaError(f"{value!r} for {data_type} has no {kind.__name__} value")
    return internal


def _float_to_int_bits(value: float) -> int:
    """Java's `floatToIntBits` (canonical NaN) as a signed int, so the long is sign-extended."""
    bits = types.float_bits(value, 32, canonical=True)
    return bits - (1 << 32) if bits >> 31 else bits
