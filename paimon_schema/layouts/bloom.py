"""Bloom-filter file indexes (formats/bloom_filter.ksy): read and write.

A bloom filter can only prove a value absent from a data file, so `equal` answers SKIP or
REMAIN (never rows), `in_` is the OR of `equal`, and every other predicate is REMAIN, exactly as
Java's `BloomFilterFileIndex.Reader` answers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import numpy as np

from paimon_schema import hashing, types
from paimon_schema.errors import FormatError, SchemaError
from paimon_schema.generated import bloom_filter_codec
from paimon_schema.generated.bloom_filter import BloomFilter
from paimon_schema.layouts import parsing
from paimon_schema.results import REMAIN, SKIP, FileIndexReader, IndexResult
from paimon_schema.types import DataType

#: Types whose internal value `FastHash` turns into a long for Wang's mix (spec 5.3).
_LONG_HASHED = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME",
                          "TIMESTAMP", "TIMESTAMP_LTZ"})
DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
MAX_HASH_FUNCTIONS = 255      # what the spec (and a correct Java read) allows
INT_MAX = 2**31 - 1


def hash_function(data_type: DataType) -> Callable[[object], int]:
    """`FastHash` for `data_type`: a non-null Python value -> its signed 64-bit hash.

    SchemaError for the types Paimon's bloom filter refuses (BOOLEAN, DECIMAL, complex types).
    """
    root = data_type.root
    if root in _LONG_HASHED:
        return lambda value: hashing.wang64(types.internal(data_type, value))
    if root == "FLOAT":
        return lambda value: hashing.wang64(_float_to_int_bits(types.internal(data_type, value)))
    if root == "DOUBLE":
        return lambda value: hashing.wang64(
            types.float_bits(types.internal(data_type, value), 64, canonical=True))
    if data_type.is_string or data_type.is_binary:
        return lambda value: hashing.xxh64(types.internal(data_type, value))
    raise SchemaError(f"the bloom-filter index does not support {data_type}")


def _float_to_int_bits(value: float) -> int:
    """Java's `floatToIntBits` (canonical NaN) as a signed int, so the long is sign-extended."""
    bits = types.float_bits(value, 32, canonical=True)
    return bits - (1 << 32) if bits >> 31 else bits


class BloomFilterIndexReader(FileIndexReader):
    """Java's `BloomFilterFileIndex.Reader` over one blob."""

    def __init__(self, num_hash_functions: int, bitset: bytes | memoryview,
                 data_type: DataType) -> None:
        self._k = num_hash_functions
        self._bitset = bitset
        self._hash = hash_function(data_type)
        self.data_type = data_type

    @classmethod
    def open(cls, blob: bytes, data_type: str | DataType) -> "BloomFilterIndexReader":
        """Parse `blob` (FormatError if malformed) for a column of `data_type` (SchemaError if
        the bloom filter does not support it).

        An empty bit set is refused: Java's reader accepts it and then divides by zero
        (`ArithmeticException`) on the first non-null probe.
        """
        dtype = DataType.parse(data_type)
        hash_function(dtype)                       # SchemaError before looking at the bytes
        try:
            parsed = parsing.parse(BloomFilter, blob)
        except FormatError as exc:
            if exc.path != "bitset":               # the spec's only check there: not empty
                raise
            raise FormatError("empty bit set: a bloom filter has at least 8 bits",
                              offset=exc.offset, path=exc.path) from exc
        return cls(parsed.num_hash_functions, parsed.bitset, dtype)

    @property
    def num_hash_functions(self) -> int:
        """`k` as stored in the header."""
        return self._k

    @property
    def num_bits(self) -> int:
        return len(self._bitset) * 8

    @property
    def probes(self) -> int:
        """How many bits Java's reader tests per value.

        Java decodes the header over signed bytes, so a stored k of 128..255 (the spec allows
        up to 255) becomes k - 256: no bit is tested and every value passes.
        """
        return self._k if self._k < 128 else 0

    def might_contain(self, value: object) -> bool:
        """False only when `value` (non-null) is certainly not in the data file."""
        if value is None:
            return True
        positions = hashing.bloom_positions(self._hash(value), self.probes, self.num_bits)
        bits = self._bitset
        return all(bits[p >> 3] >> (p & 7) & 1 for p in positions)

    def equal(self, value: object) -> IndexResult:
        return REMAIN if self.might_contain(value) else SKIP



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


def build_bloom_filter(data_type: str | DataType, values: Iterable[Any], *,
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
    return _codec().build({"num_hash_functions": k, "bitset": bitset.tobytes()})


@cache
def _codec() -> Any:
    return bloom_filter_codec.bloom_filter.compile()


def _add(bitset: np.ndarray, dtype: DataType, values: Iterable[Any], k: int, num_bits: int) -> None:
    """Set the bits of every non-null value; integer arrays are hashed in the compiled loop."""
    from paimon_schema import bloom_bits

    if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and dtype.root in _LONG_HASHED \
            and dtype.root not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        low, high = types.INTEGER_BOUNDS[dtype.root]
        if values.size and (int(values.min()) < low or int(values.max()) > high):
            raise SchemaError(f"a value is out of range for {dtype}")
        bloom_bits.add_longs(bitset, values.astype(np.int64, copy=False), k, num_bits)
        return
    hash_of = hash_function(dtype)
    hashes = np.array([hash_of(v) for v in values if v is not None], dtype=np.int64)
    bloom_bits.add_hashes(bitset, hashes, k, num_bits)


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
