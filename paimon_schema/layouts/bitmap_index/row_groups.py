"""Rows grouped by key, compiled with numba: the bitmap writer's grouping of a column with few
distinct keys.

Grouping a million rows by sorting `key << b | row` costs a 64-bit sort plus a dozen passes
over the column; with few distinct keys a hash table of them stays in the cache, and one pass
numbering the keys plus a counting sort of the rows does the same in a fraction of the time
(Java's writer does just this, with its HashMap). A column with many distinct keys overflows the
table: the kernel gives up after `limit` keys and the caller sorts.
"""

from __future__ import annotations

import numba
import numpy as np

#: Most distinct keys the hash table takes: 2**17 slots of 12 bytes, the size of an L2 cache.
LIMIT = 1 << 16
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, nogil=True)
def _number(keys: np.ndarray, limit: int, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(each row's code, each code's key, each code's count, number of codes): codes in order
    of first occurrence; number -1 when more than `limit` keys."""
    size = 1 << bits
    mask = size - 1
    shift = np.uint64(64 - bits)
    slot_keys = np.empty(size, np.uint64)
    slot_codes = np.full(size, -1, np.int32)
    distinct = np.empty(limit, np.uint64)
    counts = np.zeros(limit, np.int64)
    codes = np.empty(keys.size, np.int32)
    found = 0
    for i in range(keys.size):
        key = keys[i]
        slot = np.int64((key * _GOLDEN) >> shift)
        while True:
            code = slot_codes[slot]
            if code < 0:
                if found == limit:
                    return codes, distinct, counts, -1
                code = found
                slot_codes[slot] = code
                slot_keys[slot] = key
                distinct[found] = key
                found += 1
                break
            if slot_keys[slot] == key:
                break
            slot = (slot + 1) & mask
        codes[i] = code
        counts[code] += 1
    return codes, distinct, counts, found


@numba.njit(cache=True, nogil=True)
def _scatter(codes: np.ndarray, rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Rows by code, ascending within each code (a counting sort's second pass)."""
    cursor = starts.copy()
    grouped = np.empty(codes.size, np.uint32)
    for i in range(codes.size):
        code = codes[i]
        grouped[cursor[code]] = rows[i]
        cursor[code] += 1
    return grouped


def group_rows(rows: np.ndarray, keys: np.ndarray, limit: int = LIMIT
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """`rows` (ascending) grouped by `keys` (uint64, one per row): (rows grouped, ascending in
    each group, as uint32; group starts; group counts; each group's key), groups in ascending
    key order; None when there are more than `limit` distinct keys."""
    codes, distinct, counts, found = _number(keys, limit, max(limit - 1, 1).bit_length() + 1)
    if found < 0:
        return None
    distinct, counts = distinct[:found], counts[:found]
    starts = np.cumsum(counts) - counts
    grouped = _scatter(codes, rows, starts)
    order = np.argsort(distinct)
    return grouped, starts[order], counts[order], distinct[order]
