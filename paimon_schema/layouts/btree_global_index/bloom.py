"""The bloom filter of an SST file (Paimon's `BloomFilter` over `MurmurHashUtils.hashBytes`,
`javaorder.binary_string_hash`).

Java's btree writer never builds one; pypaimon's does on request (`bloom_filter_enabled`),
and Java's `SstFileReader` consults it before a point lookup, as `reader` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

_M32 = 0xFFFFFFFF


def num_hash_functions(num_bytes: int, expected_entries: int) -> int:
    """Java's `optimalNumOfHashFunctions` (Math.round rounds halves up)."""
    return max(1, int(math.floor(num_bytes * 8 / expected_entries * math.log(2) + 0.5)))


def _positions(hash1: int, count: int, num_bits: int) -> list[int]:
    hash2 = (hash1 & _M32) >> 16
    out = []
    for i in range(1, count + 1):
        combined = (hash1 + i * hash2) & _M32
        if combined & 0x80000000:
            combined = ~combined & _M32
        out.append(combined % num_bits)
    return out


def bloom_test(bits: bytes, expected_entries: int, hash1: int) -> bool:
    """Whether a key with this hash may be in the filter."""
    count = num_hash_functions(len(bits), expected_entries)
    return all(bits[p >> 3] >> (p & 7) & 1 for p in _positions(hash1, count, len(bits) * 8))


def build_bloom(hashes: Sequence[int], fpp: float) -> bytes:
    """The bit set pypaimon's `BloomFilter.from_hashes` builds: sized for `len(hashes)` keys
    at false-positive rate `fpp` (Java's `optimalNumOfBits`), every hash added."""
    n = len(hashes)
    num_bytes = math.ceil(int(-n * math.log(fpp) / (math.log(2) ** 2)) / 8)
    count = num_hash_functions(num_bytes, n)
    bits = np.zeros(num_bytes, np.uint8)
    num_bits = num_bytes * 8
    for h in hashes:
        for p in _positions(h, count, num_bits):
            bits[p >> 3] |= 1 << (p & 7)
    return bits.tobytes()
