"""The bloom filter's bulk kernels: the compiled loops (`runtime/kernels.c`), or numpy.

A bloom filter sets `k` pseudo-random bits per value. numpy has no scatter-OR that tolerates
repeated positions, so its form (`numpy_add`) writes a byte per bit into an array too large
for the cache and packs it: 4-5x slower than Java's loop. The C loop writes straight into the
packed bit set (about 1 MiB for a million items, cache-resident); numpy's form serves a
package built without a C compiler, and the tests prove the two equal.
"""

from __future__ import annotations

import numpy as np

from paimon_schema.layouts.bloom_filter.hashing import xxh64

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: numpy's form
    _kernels = None  # type: ignore[assignment]

#: Values per numpy chunk: k positions of 8 bytes each stay in tens of megabytes.
_CHUNK = 1 << 20


def add_longs(bitset: np.ndarray, keys: np.ndarray, k: int, num_bits: int) -> None:
    """Add every key of an int64 array, hashed with Thomas Wang's mix (numeric columns)."""
    _add(bitset, keys, True, k, num_bits)


def add_hashes(bitset: np.ndarray, hashes: np.ndarray, k: int, num_bits: int) -> None:
    """Add values already hashed to signed 64-bit `FastHash` values (strings, floats)."""
    _add(bitset, hashes, False, k, num_bits)


def xxh64_each(items: list[bytes]) -> np.ndarray:
    """`hashing.xxh64` of each item (int64): in one compiled loop, or a call each."""
    if _kernels is not None:
        return np.frombuffer(_kernels.xxh64_each(items), np.int64)
    return np.fromiter(map(xxh64, items), np.int64, len(items))


def _add(bitset: np.ndarray, values: np.ndarray, mix: bool, k: int, num_bits: int) -> None:
    values = np.ascontiguousarray(values, np.int64)
    if _kernels is not None:
        _kernels.bloom_add(bitset, values, mix, k, num_bits)
    else:
        numpy_add(bitset, values, mix, k, num_bits)


def numpy_add(bitset: np.ndarray, values: np.ndarray, mix: bool, k: int, num_bits: int) -> None:
    """`BloomFilter64.addHash` for every value in numpy: bit `(h1 + i*h2 as int32, complemented
    if negative) % numBits` for i in 1..k, `h1`, `h2` the hash's low and high halves."""
    if not 0 < num_bits < 2**32 or len(bitset) * 8 < num_bits:
        raise ValueError(f"num_bits {num_bits} does not fit the bit set of {len(bitset)} bytes")
    flags = np.zeros(len(bitset) * 8, bool)
    for base in range(0, len(values), _CHUNK):
        hashes = np.asarray(values[base:base + _CHUNK], np.int64)
        if mix:
            hashes = wang64(hashes)
        h1 = hashes.astype(np.int32)
        h2 = (hashes >> 32).astype(np.int32)
        for i in range(1, k + 1):
            combined = h1 + np.int32(i) * h2                      # wrapping like Java's int
            dividend = np.where(combined >= 0, combined, ~combined).astype(np.int64)
            flags[dividend % num_bits] = True
    bitset |= np.packbits(flags, bitorder="little")


def wang64(keys: np.ndarray) -> np.ndarray:
    """`hashing.wang64` over an int64 array (wrapping; `>>` on int64 is arithmetic)."""
    with np.errstate(over="ignore"):
        k = ~keys + (keys << 21)
        k ^= k >> 24
        k = k + (k << 3) + (k << 8)
        k ^= k >> 14
        k = k + (k << 2) + (k << 4)
        k ^= k >> 28
        return k + (k << 31)
