"""Rows grouped by key, compiled with numba: the bitmap writer's grouping of a column with few
distinct keys.

Grouping a million rows by sorting `key << b | row` costs a 64-bit sort plus a dozen passes
over the column; with few distinct keys a hash table of them stays in the cache, and one pass
numbering the keys plus a counting sort of the rows does the same in a fraction of the time
(Java's writer does just this, with its HashMap). The table starts small and doubles at half
load, so that a thousand keys probe a few kilobytes, not the largest table's megabyte. A
column with many distinct keys overflows it: the kernel gives up after `limit` keys and the
caller sorts.
"""

from __future__ import annotations

import array
from typing import NamedTuple

import numba
import numpy as np

#: Most distinct keys the hash table takes: 2**17 slots of 12 bytes, the size of an L2 cache.
LIMIT = 1 << 16
_FIRST_BITS = 10
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class Groups(NamedTuple):
    """Rows grouped by key, groups in ascending key order."""

    rows: array.array          # 'I': the rows of each group back to back, ascending in each
    starts: np.ndarray         # int64: where each group starts in `rows`
    counts: np.ndarray         # int64: rows per group
    keys: np.ndarray           # uint64: each group's key
    runs: np.ndarray           # bool: the group holds two adjacent rows (r and r + 1)


@numba.njit(cache=True, nogil=True)
def _number(keys: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(each row's code, each code's key, each code's count, number of codes): codes in order
    of first occurrence; number -1 when more than `limit` keys."""
    bits = _FIRST_BITS
    mask = (1 << bits) - 1
    slot_keys = np.empty(mask + 1, np.uint64)
    slot_codes = np.full(mask + 1, -1, np.int32)
    distinct = np.empty(limit, np.uint64)
    counts = np.zeros(limit, np.int64)
    codes = np.empty(keys.size, np.int32)
    found = 0
    for i in range(keys.size):
        key = keys[i]
        slot = np.int64((key * _GOLDEN) >> np.uint64(64 - bits))
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
                if 2 * found > mask + 1:         # half full: double, and place every key again
                    bits += 1
                    mask = (1 << bits) - 1
                    slot_keys = np.empty(mask + 1, np.uint64)
                    slot_codes = np.full(mask + 1, -1, np.int32)
                    for known in range(found):
                        at = np.int64((distinct[known] * _GOLDEN) >> np.uint64(64 - bits))
                        while slot_codes[at] >= 0:
                            at = (at + 1) & mask
                        slot_codes[at] = known
                        slot_keys[at] = distinct[known]
                break
            if slot_keys[slot] == key:
                break
            slot = (slot + 1) & mask
        codes[i] = code
        counts[code] += 1
    return codes, distinct, counts, found


@numba.njit(cache=True, nogil=True)
def _scatter(codes: np.ndarray, rows: np.ndarray, every_row: bool, starts: np.ndarray,
             grouped: np.ndarray) -> np.ndarray:
    """Rows by code into `grouped`, ascending within each code (a counting sort's second
    pass; `every_row`: row i is i, `rows` unused); returns whether each code has two adjacent
    rows."""
    cursor = starts.copy()
    last = np.full(starts.size, -2, np.int64)
    runs = np.zeros(starts.size, np.bool_)
    for i in range(codes.size):
        code = codes[i]
        row = i if every_row else rows[i]
        if row == last[code] + 1:
            runs[code] = True
        last[code] = row
        grouped[cursor[code]] = row
        cursor[code] += 1
    return runs


def group_rows(rows: np.ndarray | None, keys: np.ndarray, limit: int = LIMIT) -> Groups | None:
    """`rows` (ascending; None: every row, 0 to len(keys) - 1) grouped by `keys` (uint64, one
    per row); None when there are more than `limit` distinct keys."""
    codes, distinct, counts, found = _number(keys, limit)
    if found < 0:
        return None
    distinct, counts = distinct[:found], counts[:found]
    starts = np.cumsum(counts) - counts
    grouped = array.array("I", [0]) * len(keys)
    runs = _scatter(codes, np.zeros(0, np.int64) if rows is None else rows, rows is None, starts,
                    np.frombuffer(grouped, np.uint32))
    order = np.argsort(distinct)
    return Groups(grouped, starts[order], counts[order], distinct[order], runs[order])
