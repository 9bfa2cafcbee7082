"""Many roaring bitmaps serialized at once, in the portable format and as Java's `runOptimize`
leaves them: the compiled passes (`runtime/kernels.c`) write them straight from the rows,
with no bitmap object each; without a C compiler, one pyroaring `BitMap` each (the
reference the tests compare them with).
"""

from __future__ import annotations

import array

import numpy as np
from pyroaring import BitMap

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: pyroaring serializes each bitmap
    _kernels = None  # type: ignore[assignment]


def serialize_bitmaps(rows: np.ndarray | array.array, counts: np.ndarray, starts: np.ndarray | None = None,
                      runs: np.ndarray | None = None) -> tuple[bytes, np.ndarray]:
    """The run-optimized serializations of many bitmaps, back to back, and their lengths:
    bitmap i holds `rows[starts[i]:starts[i] + counts[i]]` (strictly ascending; `starts`
    defaults to the bitmaps back to back). The compiled pass (`runtime/kernels.c`) writes
    them all straight from the rows, in one pass; without it, one pyroaring `BitMap` each
    (`roaring_bitmaps`, the reference the tests compare it with)."""
    counts = np.ascontiguousarray(counts, np.int64)
    if starts is None:
        starts = np.cumsum(counts) - counts
    starts = np.ascontiguousarray(starts, np.int64)
    typed = isinstance(rows, array.array) and rows.typecode == "I"
    if _kernels is None:
        view = rows if typed else array.array("I", np.asarray(rows, np.uint32).tobytes())
        return roaring_bitmaps(view, counts, starts, runs)
    blob, lengths = _kernels.serialize_groups(rows if typed else np.ascontiguousarray(rows, np.uint32), starts, counts)
    return blob, np.frombuffer(lengths, np.int64)


def roaring_bitmaps(view: array.array, counts: np.ndarray, starts: np.ndarray,
                    runs: np.ndarray | None = None) -> tuple[bytes, np.ndarray]:
    """`serialize_bitmaps` with one pyroaring `BitMap` per bitmap, from a slice of one
    `array('I')`, pyroaring's fastest input. `run_optimize` only changes a bitmap with two
    adjacent rows (a run container of r runs takes 2 + 4r bytes, never less than the 2 per
    value of an array or the 8 KiB of a bitmap container when every run is one value), so it
    runs only there (`runs`, found here unless given)."""
    if runs is None:
        runs = adjacent(np.frombuffer(view, np.uint32), starts, counts)
    ends = (starts + counts).tolist()
    if not runs.any():
        out = [BitMap(view[start:end], optimize=False).serialize() for start, end in zip(starts.tolist(), ends)]
    else:
        out = []
        for start, end, has_runs in zip(starts.tolist(), ends, runs.tolist()):
            bitmap = BitMap(view[start:end], optimize=False)
            if has_runs:
                bitmap.run_optimize()
            out.append(bitmap.serialize())
    return b"".join(out), np.fromiter(map(len, out), np.int64, len(out))


def serialize_slices(rows: np.ndarray, values: np.ndarray, count: int) -> tuple[bytes, np.ndarray]:
    """The `count` bit slices of a bit-sliced index serialized back to back, and their
    lengths: slice i holds the `rows` (strictly ascending) whose value (uint64, one per row)
    has bit i set."""
    rows = np.ascontiguousarray(rows, np.uint32)
    values = np.ascontiguousarray(values, np.uint64)
    if _kernels is not None:
        blob, lengths = _kernels.serialize_slices(rows, values, count)
        return blob, np.frombuffer(lengths, np.int64)
    return roaring_slices(rows, values, count)


def roaring_slices(rows: np.ndarray, values: np.ndarray, count: int) -> tuple[bytes, np.ndarray]:
    """`serialize_slices` with one pyroaring `BitMap` per slice."""
    out = []
    for i in range(count):
        bitmap = BitMap(rows[(values >> np.uint64(i)) & np.uint64(1) == 1] if i < 64 else [])
        bitmap.run_optimize()
        out.append(bitmap.serialize())
    return b"".join(out), np.fromiter(map(len, out), np.int64, len(out))


def adjacent(rows: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Whether each group `rows[start:start + count]` (ascending uint32) holds two adjacent rows."""
    pairs = np.flatnonzero(rows[1:] - rows[:-1] == 1)     # rows[p], rows[p + 1] adjacent
    return np.searchsorted(pairs, starts + counts - 1) > np.searchsorted(pairs, starts)
