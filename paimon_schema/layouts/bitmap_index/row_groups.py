"""Rows grouped by key: the bitmap writer's grouping of a column with few distinct keys, by
the compiled hash table (`runtime/kernels.c`); and the same table's numbering of the rows'
keys, the range-bitmap writer's codes.

Grouping a million rows by sorting `key << b | row` costs a 64-bit sort plus a dozen passes
over the column; with few distinct keys a hash table of them stays in the cache, and one pass
numbering the keys plus a counting sort of the rows does the same in a fraction of the time
(Java's writer does just this, with its HashMap). A column with many distinct keys overflows
it: the kernel gives up after `limit` keys and the caller sorts, as it does in a package built
without a C compiler.
"""

from __future__ import annotations

import array
from typing import NamedTuple

import numpy as np

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: the caller sorts
    _kernels = None  # type: ignore[assignment]

#: Most distinct keys the hash table takes: 2**17 slots of 16 bytes, about an L2 cache.
LIMIT = 1 << 16


class Groups(NamedTuple):
    """Rows grouped by key, groups in ascending key order."""

    rows: array.array          # 'I': the rows of each group back to back, ascending in each
    starts: np.ndarray         # int64: where each group starts in `rows`
    counts: np.ndarray         # int64: rows per group
    keys: np.ndarray           # uint64: each group's key
    runs: np.ndarray           # bool: the group holds two adjacent rows (r and r + 1)


def group_rows(rows: np.ndarray | None, keys: np.ndarray, limit: int = LIMIT) -> Groups | None:
    """`rows` (ascending; None: every row, 0 to len(keys) - 1) grouped by `keys` (uint64, one
    per row); None when there are more than `limit` distinct keys, or no compiled kernel."""
    if _kernels is None:
        return None
    grouped = array.array("I", [0]) * len(keys)
    found = _kernels.group_rows(np.ascontiguousarray(keys, np.uint64),
                                None if rows is None else np.ascontiguousarray(rows, np.int64), limit, grouped)
    if found is None:
        return None
    distinct, starts, counts, runs = (np.frombuffer(b, t) for b, t in zip(found, (np.uint64, np.int64, np.int64, bool)))
    order = np.argsort(distinct)
    return Groups(grouped, starts[order], counts[order], distinct[order], runs[order])


def number_rows(keys: np.ndarray, limit: int = LIMIT) -> tuple[np.ndarray, np.ndarray] | None:
    """Each row's code (int32; `keys` (uint64, one per row) numbered in order of first
    occurrence) and each code's key, by the same hash table without the grouping; None when
    there are more than `limit` distinct keys, or no compiled kernel."""
    if _kernels is None:
        return None
    found = _kernels.number_rows(np.ascontiguousarray(keys, np.uint64), limit)
    if found is None:
        return None
    return np.frombuffer(found[0], np.int32), np.frombuffer(found[1], np.uint64)
