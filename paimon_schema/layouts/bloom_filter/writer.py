"""Bloom-filter file indexes (formats/bloom_filter.ksy): the writer, sized and filled exactly
as Java's `BloomFilterFileIndex.Writer` / `BloomFilter64`.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from paimon_schema.generated import bloom_filter_codec
from paimon_schema.layouts.bloom_filter.hashing import hash_function
from paimon_schema.layouts.column_values import column_values
from paimon_schema.values import types
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
MAX_HASH_FUNCTIONS = 255      # what the spec (and a correct Java read) allows
INT_MAX = 2**31 - 1
#: The types whose plain ints are their keys, which `FastHash` mixes as they are.
_INT_KEYED = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"})


def bloom_size(items: int, fpp: float) -> tuple[int, int]:
    """`(numBits, numHashFunctions)` exactly as `BloomFilter64` sizes itself, in Java doubles.

    numBits always gains 1..8 bits over the optimum; k is `Math.round`ed and cast to int.
    """
    optimum = -items * math.log(fpp) / (math.log(2) * math.log(2))
    nb = _java_int(optimum)
    num_bits = nb + (8 - nb % 8)
    ratio = num_bits / items * math.log(2) if items else math.inf
    k = max(1, _long_to_int(_java_round(ratio)))
    return num_bits, k


def build_bloom_filter(data_type: str | DataType, values: Any, *,
                       items: int = DEFAULT_ITEMS, fpp: float = DEFAULT_FPP) -> bytes:
    """The blob Java's `BloomFilterFileIndex.Writer` writes for `values` (nulls ignored)."""
    dtype = DataType.parse(data_type)
    if isinstance(items, bool) or not isinstance(items, int) or not 0 <= items <= INT_MAX:
        raise SchemaError(f"items must be an int in 0..{INT_MAX}, not {items!r}")
    if not isinstance(fpp, (int, float)) or not 0 < fpp < 1:
        raise SchemaError(f"fpp must be a number between 0 and 1 (exclusive), not {fpp!r}")
    num_bits, k = bloom_size(items, float(fpp))
    if k > MAX_HASH_FUNCTIONS:
        raise SchemaError(f"items={items}, fpp={fpp} needs {k} hash functions; Java's reader "
                          f"misreads more than {MAX_HASH_FUNCTIONS}")
    bitset = np.zeros(num_bits // 8, dtype=np.uint8)
    _add(bitset, dtype, values, k, num_bits)
    # the codec writes the header; the bit set (a megabyte for a million items) is copied once
    return b"".join((_codec().build({"num_hash_functions": k, "bitset": b""}), bitset.data))


@cache
def _codec() -> Any:
    return bloom_filter_codec.bloom_filter.compile()


def _add(bitset: np.ndarray, dtype: DataType, values: Any, k: int, num_bits: int) -> None:
    """Set the bits of every non-null value: strings and binaries hashed straight from the
    column where they can be (`kernel.add_strings`), and a list's ints or doubles hashed as its
    items are read (`kernel.add_ints`, `add_doubles`: a mostly NULL list is mostly the pass
    over its items); typed columns (`column_values`) in the compiled loop (numbers) or once per
    distinct value (strings, bytes: a value's bits are set once however often it occurs); the
    rest per value."""
    from paimon_schema.layouts.bloom_filter import kernel

    hash_of = hash_function(dtype)                  # SchemaError for a type Paimon refuses
    if dtype.is_string or dtype.is_binary:
        if kernel.add_strings(bitset, dtype.is_string, values, k, num_bits):
            return
    elif dtype.root in _INT_KEYED:
        extremes = kernel.add_ints(bitset, values, k, num_bits)
        if extremes is not None:
            low, high = types.INTEGER_BOUNDS[dtype.root]
            if low <= extremes[0] and extremes[1] <= high:
                return
            bitset[:] = 0                           # out of range: the typed pass says which
    elif dtype.root == "DOUBLE" and kernel.add_doubles(bitset, values, k, num_bits):
        return
    column = column_values(dtype, values)
    if column.numbers is not None:
        kernel.add_longs(bitset, _long_keys(dtype, column.numbers), k, num_bits)
        return
    if column.strings is not None:        # every code is used: its distinct values suffice
        _, distinct = column.strings
        kernel.add_hashes(bitset, kernel.xxh64_each(distinct), k, num_bits)
        return
    hashes = np.array([hash_of(v) for v in column.python_rows() if v is not None], dtype=np.int64)
    kernel.add_hashes(bitset, hashes, k, num_bits)


def _long_keys(dtype: DataType, numbers: np.ndarray) -> np.ndarray:
    """The longs `FastHash` mixes: an integer-backed key itself; Java's `floatToIntBits`
    (sign-extended) and `doubleToLongBits`, both with the canonical NaN."""
    if dtype.root == "FLOAT":
        with np.errstate(over="ignore"):
            bits = numbers.astype(np.float32).view(np.int32).astype(np.int64)
        bits[np.isnan(numbers)] = 0x7FC00000
        return bits
    if dtype.root == "DOUBLE":
        bits = numbers.astype(np.float64).view(np.int64).copy()
        bits[np.isnan(numbers)] = 0x7FF8_0000_0000_0000
        return bits
    return numbers


def _java_int(value: float) -> int:
    """Java's `(int)` of a double: truncation, saturating, NaN as 0."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return INT_MAX if value > 0 else -INT_MAX - 1
    return max(-INT_MAX - 1, min(INT_MAX, int(value)))


def _java_round(value: float) -> int:
    """Java's `Math.round(double)`: floor(x + 0.5) as a saturating long, NaN as 0."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return 2**63 - 1 if value > 0 else -2**63
    return max(-2**63, min(2**63 - 1, math.floor(value + 0.5)))


def _long_to_int(value: int) -> int:
    """Java's `(int)` of a long: the low 32 bits, signed."""
    return ((value + 2**31) % 2**32) - 2**31
