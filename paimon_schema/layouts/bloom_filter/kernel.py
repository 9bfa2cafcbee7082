"""The bloom filter's bulk kernels, compiled with numba.

A bloom filter sets `k` pseudo-random bits per value. numpy has no scatter-OR that tolerates
repeated indexes, so the vectorized alternatives either sort all `k * n` positions or write a
byte per bit into an array too large for the cache: 4-5x slower than Java's loop. A compiled
loop writes straight into the packed bit set (about 1 MiB for a million items, cache-resident)
and hashes on the way. Imported only when a bloom filter is built.
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


@numba.njit(cache=True, nogil=True)
def _set(bitset: np.ndarray, hash64: np.int64, k: int, num_bits: np.uint64, inverse: np.uint64) -> None:
    """`BloomFilter64.addHash`: bit `(h1 + i*h2 as int32, complemented if negative) % numBits`.

    The remainder is Lemire's `fastmod_u32` (exact for every 32-bit dividend and divisor:
    `inverse` is `2**64 // numBits + 1`), a third faster than the division it replaces,
    which the random bit writes cannot hide."""
    h1 = np.int32(hash64)
    h2 = np.int32(hash64 >> 32)
    combined = h1
    for _ in range(k):
        combined = np.int32(combined + h2)           # h1 + i*h2, wrapping like Java's int
        dividend = np.uint64(combined if combined >= 0 else ~combined)
        low = inverse * dividend
        position = ((low >> _32) * num_bits + (((low & _LOW32) * num_bits) >> _32)) >> _32
        bitset[position >> _3] |= np.uint8(1) << np.uint8(position & _7)



def _inverse(num_bits: int) -> np.uint64:
    if not 0 < num_bits < 2**32:
        raise ValueError(f"num_bits {num_bits} is not a positive 32-bit count")
    return np.uint64((2**64 - 1) // num_bits + 1)


@numba.njit(cache=True, nogil=True)
def _add_longs(bitset: np.ndarray, keys: np.ndarray, k: int, num_bits: np.uint64, inverse: np.uint64) -> None:
    for j in range(keys.size):
        _set(bitset, _wang64(keys[j]), k, num_bits, inverse)


@numba.njit(cache=True, nogil=True)
def _add_hashes(bitset: np.ndarray, hashes: np.ndarray, k: int, num_bits: np.uint64, inverse: np.uint64) -> None:
    for j in range(hashes.size):
        _set(bitset, hashes[j], k, num_bits, inverse)


def add_longs(bitset: np.ndarray, keys: np.ndarray, k: int, num_bits: int) -> None:
    """Add every key of an int64 array, hashed with Thomas Wang's mix (numeric columns)."""
    _add_longs(bitset, keys, k, np.uint64(num_bits), _inverse(num_bits))


def add_hashes(bitset: np.ndarray, hashes: np.ndarray, k: int, num_bits: int) -> None:
    """Add values already hashed to signed 64-bit `FastHash` values (strings, floats)."""
    _add_hashes(bitset, hashes, k, np.uint64(num_bits), _inverse(num_bits))
