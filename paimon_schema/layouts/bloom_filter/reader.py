"""Bloom-filter file indexes (formats/bloom_filter.ksy): the reader.

A bloom filter can only prove a value absent from a data file, so `equal` answers SKIP or
REMAIN (never rows), `in_` is the OR of `equal`, and every other predicate is REMAIN, exactly as
Java's `BloomFilterFileIndex.Reader` answers.
"""

from __future__ import annotations

import numpy as np

from paimon_schema.generated.bloom_filter import BloomFilter
from paimon_schema.layouts.bloom_filter import hashing
from paimon_schema.layouts.bloom_filter.hashing import hash_function
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError
from paimon_schema.values.results import REMAIN, SKIP, FileIndexReader, IndexResult
from paimon_schema.values.types import DataType


class BloomFilterIndexReader(FileIndexReader):
    """Java's `BloomFilterFileIndex.Reader` over one blob."""

    def __init__(self, num_hash_functions: int, bitset: bytes | memoryview,
                 data_type: DataType) -> None:
        self._k = num_hash_functions
        self._bitset = bitset
        self._hash = hash_function(data_type)
        self.data_type = data_type

    @classmethod
    def open(cls, blob: bytes, data_type: str | DataType) -> BloomFilterIndexReader:
        """Parse `blob` (FormatError if malformed) for a column of `data_type` (SchemaError if
        the bloom filter does not support it).

        An empty bit set is refused: Java's reader accepts it and then divides by zero
        (`ArithmeticException`) on the first non-null probe.
        """
        dtype = DataType.parse(data_type)
        hash_function(dtype)                       # SchemaError before looking at the bytes
        parsed = parsing.parse(BloomFilter, blob)
        if not len(parsed.bitset):                 # the spec says so; no target can check it
            raise FormatError("empty bit set: a bloom filter has at least 8 bits",
                              offset=parsing.field_start(parsed, "bitset"), path="bitset")
        return cls(parsed.num_hash_functions, parsed.bitset, dtype)

    def __repr__(self) -> str:
        return (f"<BloomFilterIndexReader {self.data_type}: {8 * len(self._bitset)} bits, "
                f"{self._k} hash functions>")

    @property
    def num_hash_functions(self) -> int:
        """`k` as stored in the header."""
        return self._k

    @property
    def num_bits(self) -> int:
        return len(self._bitset) * 8

    @property
    def set_bits(self) -> int:
        """How many bits of the filter are set (its fill decides the false-positive rate)."""
        return int(np.unpackbits(np.frombuffer(self._bitset, dtype=np.uint8)).sum())

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
