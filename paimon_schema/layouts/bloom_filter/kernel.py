"""The bloom filter's bulk kernels, compiled with numba.

A bloom filter sets `k` pseudo-random bits per value. numpy has no scatter-OR that tolerates
repeated indexes, so the vectorized alternatives either sort all `k * n` positions or write a
byte per bit into an array too large for the cache: 4-5x slower than Java's loop. A compiled
loop writes straight into the packed bit set (about 1 MiB for a million items, cache-resident)
and hashes on the way. Imported only when a filter is built from an array of integers.
"""

from __future__ import annotations

import numba
import numpy as np

_MASK32 = 0xFFFFFFFF


@numba.njit(cache=True, nogil=True)
def _wang64(key: np.int64) -> np.int64:
    """`hashing.wang64` in 64-bit machine arithmetic (wrapping; `>>` on int64 is arithmetic)."""
    k = key
    k = ~k + (k << 21)
    k = k ^ (k >> 24)
    k = k + (k << 3) + (k << 8)
    k = k ^ (k >> 14)
    k = k + (k << 2) + (k << 4)
    k = k ^ (k >> 28)
    k = k + (k << 31)
    return k


@numba.njit(cache=True, nogil=True)
def _int32(value: np.int64) -> np.int64:
    value &= _MASK32
    return value - (1 << 32) if value >> 31 else value


@numba.njit(cache=True, nogil=True)
def _set(bitset: np.ndarray, hash64: np.int64, k: int, num_bits: int) -> None:
    """`BloomFilter64.addHash`: bit `(h1 + i*h2 as int32, complemented if negative) % numBits`."""
    h1 = _int32(hash64)
    h2 = _int32(hash64 >> 32)
    for i in range(1, k + 1):
        combined = _int32(h1 + i * h2)
        if combined < 0:
            combined = ~combined
        position = combined % num_bits
        bitset[position >> 3] |= np.uint8(1 << (position & 7))


@numba.njit(cache=True, nogil=True)
def add_longs(bitset: np.ndarray, keys: np.ndarray, k: int, num_bits: int) -> None:
    """Add every key of an int64 array, hashed with Thomas Wang's mix (numeric columns)."""
    for j in range(keys.size):
        _set(bitset, _wang64(keys[j]), k, num_bits)


@numba.njit(cache=True, nogil=True)
def add_hashes(bitset: np.ndarray, hashes: np.ndarray, k: int, num_bits: int) -> None:
    """Add values already hashed to signed 64-bit `FastHash` values (strings, floats)."""
    for j in range(hashes.size):
        _set(bitset, hashes[j], k, num_bits)
