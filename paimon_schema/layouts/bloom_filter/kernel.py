"""The bloom filter's bulk kernels, compiled with numba.

A bloom filter sets `k` pseudo-random bits per value. numpy has no scatter-OR that tolerates
repeated indexes, so the vectorized alternatives either sort all `k * n` positions or write a
byte per bit into an array too large for the cache: 4-5x slower than Java's loop. A compiled
loop writes straight into the packed bit set (about 1 MiB for a million items, cache-resident),
hashing a block of values at a time. Imported only when a bloom filter is built.
"""

from __future__ import annotations

import numba
import numpy as np

_32, _3, _7, _LOW32 = np.uint64(32), np.uint64(3), np.uint64(7), np.uint64(0xFFFFFFFF)


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


#: Values per block: each block's bit positions are computed in vectorizable passes (one per
#: hash function), then set; 16 KiB of positions stay in the L1 cache.
_BLOCK = 2048


@numba.njit(cache=True, nogil=True)
def _set_block(bitset: np.ndarray, h1: np.ndarray, h2: np.ndarray, count: int, k: int,
               num_bits: np.uint64, inverse: np.uint64, positions: np.ndarray) -> None:
    """`BloomFilter64.addHash` for `count` values split into their halves `h1`, `h2`: bit
    `(h1 + i*h2 as int32, complemented if negative) % numBits` for i in 1..k.

    The remainder is Lemire's `fastmod_u32` (exact for every 32-bit dividend and divisor:
    `inverse` is `2**64 // numBits + 1`), a third faster than the division it replaces; a
    pass per hash function computes a block's positions with SIMD (the random bit writes,
    which cannot be vectorized, are the other half of the time)."""
    for i in range(1, k + 1):
        for j in range(count):
            combined = np.int32(h1[j] + np.int32(i) * h2[j])     # wrapping like Java's int
            dividend = np.uint64(combined if combined >= 0 else ~combined)
            low = inverse * dividend
            positions[j] = ((low >> _32) * num_bits + (((low & _LOW32) * num_bits) >> _32)) >> _32
        for j in range(count):
            position = positions[j]
            bitset[position >> _3] |= np.uint8(1) << np.uint8(position & _7)


def _inverse(num_bits: int) -> np.uint64:
    if not 0 < num_bits < 2**32:
        raise ValueError(f"num_bits {num_bits} is not a positive 32-bit count")
    return np.uint64((2**64 - 1) // num_bits + 1)


@numba.njit(cache=True, nogil=True)
def _add(bitset: np.ndarray, values: np.ndarray, mix: bool, k: int, num_bits: np.uint64,
         inverse: np.uint64) -> None:
    """Add every value, a block at a time: int64 keys mixed with `_wang64` (`mix`), or values
    already hashed."""
    h1 = np.empty(_BLOCK, np.int32)
    h2 = np.empty(_BLOCK, np.int32)
    positions = np.empty(_BLOCK, np.uint64)
    for base in range(0, values.size, _BLOCK):
        count = min(_BLOCK, values.size - base)
        for j in range(count):
            hash64 = _wang64(values[base + j]) if mix else values[base + j]
            h1[j] = np.int32(hash64)
            h2[j] = np.int32(hash64 >> 32)
        _set_block(bitset, h1, h2, count, k, num_bits, inverse, positions)


def add_longs(bitset: np.ndarray, keys: np.ndarray, k: int, num_bits: int) -> None:
    """Add every key of an int64 array, hashed with Thomas Wang's mix (numeric columns)."""
    _add(bitset, keys, True, k, np.uint64(num_bits), _inverse(num_bits))


def add_hashes(bitset: np.ndarray, hashes: np.ndarray, k: int, num_bits: int) -> None:
    """Add values already hashed to signed 64-bit `FastHash` values (strings, floats)."""
    _add(bitset, hashes, False, k, np.uint64(num_bits), _inverse(num_bits))
