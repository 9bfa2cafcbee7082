"""Many roaring bitmaps serialized at once, in the portable format and as Java's `runOptimize`
leaves them: the compiled passes (`runtime/kernels.c`) write them straight from the rows,
with no bitmap object each; without a C compiler, one pyroaring `BitMap` each (the
reference the tests compare them with).
"""

from __future__ import annotations

import array
from typing import NamedTuple

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


class Sliced(NamedTuple):
    """A bit-sliced index of a column (`column_slices`)."""

    ebm: bytes              # the existence bitmap, serialized
    slices: bytes           # the slices, serialized back to back
    lengths: np.ndarray     # int64: each slice's length
    rows: int               # rows in the existence bitmap


def column_slices(values: np.ndarray, valid: np.ndarray | None, *, table: np.ndarray | None = None,
                  offset: int = 0, sign: int = 0, count: int | None = None) -> Sliced:
    """The bit-sliced index (existence bitmap and slices, as `serialize_slices` writes them) of
    a column: `values` (signed integers) holds the non-null rows' values, `valid` marks the
    non-null rows (None: every row); with `table` (int64) a row stores `table[value - offset]`
    (a range-bitmap's rank of its code, or of its value). The rows indexed: with `sign` 1 those whose value is
    >= 0, with -1 those < 0, storing the magnitude (a BSI's two parts), with 0 all. `count`
    slices (None: as many as the largest stored value has bits).

    The compiled pass (`runtime/kernels.c` column_slices) goes once over the column, a
    container's rows at a time, slicing only the bits that vary in it: no row list, no pass
    per slice; `reference_slices` is the numpy path it is proven equal to."""
    if _kernels is None or values.dtype.kind != "i":
        return reference_slices(values, valid, table=table, offset=offset, sign=sign, count=count)
    ebm, slices, lengths, rows = _kernels.column_slices(
        np.ascontiguousarray(values), values.dtype.itemsize,
        None if valid is None else np.ascontiguousarray(valid, bool),
        None if table is None else np.ascontiguousarray(table, np.int64), offset, sign, -1 if count is None else count)
    return Sliced(ebm, slices, np.frombuffer(lengths, np.int64), rows)


def framed_slices(values: np.ndarray, valid: np.ndarray | None, *, sign: int, prefix: bytes, suffix: bytes
                  ) -> bytes:
    """`prefix`, then the existence bitmap, the slice count (int32, big-endian) and the slices
    of `column_slices(values, valid, sign=sign)`, then `suffix`: a BSI part as its reader reads
    it, written by the compiled pass into one blob (megabytes of slices not copied again)."""
    if _kernels is None or values.dtype.kind != "i":
        part = reference_slices(values, valid, sign=sign)
        return b"".join((prefix, part.ebm, len(part.lengths).to_bytes(4, "big"), part.slices, suffix))
    _, blob, _, _ = _kernels.column_slices(
        np.ascontiguousarray(values), values.dtype.itemsize,
        None if valid is None else np.ascontiguousarray(valid, bool), None, 0, sign, -1, prefix, suffix)
    return blob


def reference_slices(values: np.ndarray, valid: np.ndarray | None, *, table: np.ndarray | None = None,
                     offset: int = 0, sign: int = 0, count: int | None = None) -> Sliced:
    """`column_slices` with numpy: the part's rows and stored values, then `serialize_bitmaps`
    and `serialize_slices`."""
    stored = np.asarray(values, np.int64)
    if table is not None:
        stored = np.asarray(table, np.int64)[stored - offset]
    rows = np.arange(len(stored), dtype=np.int64) if valid is None else np.flatnonzero(valid)
    if sign:
        keep = stored >= 0 if sign > 0 else stored < 0
        rows, stored = rows[keep], stored[keep]
    with np.errstate(over="ignore"):
        magnitudes = (-stored if sign < 0 else stored).view(np.uint64)
    maximum = int(magnitudes.max()) if len(magnitudes) else 0
    positions = rows.astype(np.uint32)
    ebm, _ = serialize_bitmaps(positions, np.array([len(positions)]))
    slices, lengths = serialize_slices(positions, magnitudes, maximum.bit_length() if count is None else count)
    return Sliced(ebm, slices, lengths, len(positions))


def adjacent(rows: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Whether each group `rows[start:start + count]` (ascending uint32) holds two adjacent rows."""
    pairs = np.flatnonzero(rows[1:] - rows[:-1] == 1)     # rows[p], rows[p + 1] adjacent
    return np.searchsorted(pairs, starts + counts - 1) > np.searchsorted(pairs, starts)
