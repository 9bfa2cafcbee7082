"""Deletion vectors and index results as row masks, and applied to Arrow data, no per-row loop.

A deletion vector names the deleted row positions of one data file (0-based, file order). Here
it becomes a numpy boolean mask (`keep_mask`, `delete_mask`), or is applied to a
`pyarrow.RecordBatch` / `pyarrow.Table` (`apply_deletion_vector`). `row_mask` turns an index
result's candidate rows into the same kind of mask.

A vector may be a `pyroaring.BitMap` (32-bit), a `pyroaring.BitMap64` (64-bit), None (nothing
deleted) or, per the API conventions, any iterable of ints / numpy integer array.

How it is fast: a bitmap is never expanded into a list of positions. pyroaring serializes it in
the portable format (about 0.5 ms for 20M rows) and the mask is written container by container:
a bitset container (more than 4096 of 65536 rows set) is `numpy.unpackbits` of its 8 KiB, an
array container scatters at most 4096 positions, a run container fills slices. A dense vector
(every container a bitset) turns into the mask with a single `unpackbits` over the containers'
bytes. Applying to a RecordBatch (or a one-chunk Table) takes the kept rows by index when at
least a tenth of the rows go: the kept positions come straight from CRoaring's `flip` +
`to_array`, and Arrow's `take` with them (bounds checked once, on the last, sorted index) beats
`filter`, which turns its mask into indices at about 10 ns a row. Otherwise, and for tables of
several chunks (whose `take` is slow), one `filter` with the mask handed to Arrow as packed bits
(`np.packbits`: pyarrow's own conversion of a numpy bool array costs about 5x more).

Positions past the rows: `keep_mask(dv, n_rows)` raises `SchemaError` when the vector names a row
at or past `n_rows`, because then the vector and the file's row count disagree (corrupt or
mismatched metadata; applying it would silently keep rows Paimon deletes, or the other way
round). It is not a `FormatError`: no bytes are being parsed here, the inconsistency is between
two values the caller passed, as with `positions.as_array`'s range check. `apply_deletion_vector`
reads a window of the file (`offset` .. `offset + num_rows`) and ignores positions outside it,
since they belong to other batches; pass `row_count=` (the data file's row count) to have it
check the whole vector against the file as `keep_mask` does.
"""

from __future__ import annotations

import operator
from typing import Any, cast

import numpy as np
from pyroaring import AbstractBitMap, AbstractBitMap64, BitMap, BitMap64

from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.positions import as_array
from paimon_schema.values.results import IndexResult

__all__ = ["apply_deletion_vector", "arrow_mask", "delete_mask", "keep_mask", "row_mask"]

_CHUNK = 1 << 16                 # rows per roaring container
_BITSET_BYTES = _CHUNK // 8
_ARRAY_MAX = 4096
_MAX_32 = 1 << 32
_MAX_POSITION = (1 << 63) - 1
#: Below this fraction of rows deleted a RecordBatch goes through `filter`, above it `take`.
TAKE_FRACTION = 0.1


# --------------------------------------------------------------------------------------------
# Public API


def keep_mask(dv: Any, n_rows: int) -> np.ndarray:
    """Boolean mask over the rows `0 .. n_rows-1` of a data file: True for the rows `dv` does not
    delete. `dv` is a BitMap, BitMap64, None (all True) or any iterable of ints / integer array.

    A position at or past `n_rows` raises `SchemaError` (the vector does not fit the file).
    """
    n = _count(n_rows, "n_rows")
    return _mask(dv, n, keep=True, what="deleted position")


def delete_mask(dv: Any, n_rows: int) -> np.ndarray:
    """The complement of `keep_mask`: True for the deleted rows (None: all False)."""
    n = _count(n_rows, "n_rows")
    return _mask(dv, n, keep=False, what="deleted position")


def row_mask(rows: Any, n_rows: int) -> np.ndarray:
    """Boolean mask of an index answer's candidate rows: True for the rows in `rows`.

    `rows` is `IndexResult.rows` (a BitMap, or None = every row may match), an `IndexResult`
    itself (a SKIP result gives all False) or any bitmap / iterable of row positions. A row at or
    past `n_rows` raises `SchemaError`.
    """
    n = _count(n_rows, "n_rows")
    if isinstance(rows, IndexResult):
        if not rows.remain:
            return np.zeros(n, dtype=bool)
        rows = rows.rows
    if rows is None:
        return np.ones(n, dtype=bool)
    return _mask(rows, n, keep=False, what="row")


def apply_deletion_vector(batch_or_table: Any, dv: Any, *, offset: int = 0,
                          row_count: int | None = None) -> Any:
    """`batch_or_table` without the rows `dv` deletes, as the same type (RecordBatch or Table).

    `offset` is the position of the first row within the data file, for data read batch by
    batch: row `i` is file row `offset + i`, and positions outside
    `offset .. offset + num_rows - 1` are ignored (they belong to other batches). With
    `row_count` (the data file's row count) a position at or past it, or a window reaching past
    it, raises `SchemaError`. The rows go in one Arrow call (`take` or `filter`), whatever the
    number of chunks of a table.
    """
    import pyarrow as pa

    if not isinstance(batch_or_table, (pa.RecordBatch, pa.Table)):
        raise TypeError(f"apply_deletion_vector takes a pyarrow.RecordBatch or pyarrow.Table, "
                        f"not {type(batch_or_table).__name__}")
    start = _count(offset, "offset")
    n = batch_or_table.num_rows
    if row_count is not None:
        total = _count(row_count, "row_count")
        if start + n > total:
            raise SchemaError(f"rows {start}..{start + n - 1} reach past the data file's "
                              f"{total} rows")
    else:
        total = None
    rel = _relative(_vector(dv, total, "deleted position"), start, n)
    deleted = 0 if rel is None else len(rel)
    if deleted == 0:
        return batch_or_table
    if deleted == n:
        return batch_or_table.slice(0, 0)
    if batch_or_table.num_columns == 0:      # rows without columns are all alike
        return batch_or_table.slice(0, n - deleted)
    single = isinstance(batch_or_table, pa.RecordBatch) or batch_or_table.column(0).num_chunks <= 1
    if single and deleted >= TAKE_FRACTION * n and isinstance(rel, BitMap):
        import pyarrow.compute as pc

        kept = np.frombuffer(rel.flip(0, n).to_array(), dtype=np.uint32)
        if len(kept) and int(kept[-1]) >= n:     # not reached: `rel` lies in 0..n-1
            raise SchemaError(f"kept row {int(kept[-1])} is past the {n} rows")
        # in bounds by the check above (sorted), so Arrow's own pass over the indices is spared
        return pc.take(batch_or_table, pa.array(kept, type=pa.uint32()), boundscheck=False)
    return batch_or_table.filter(arrow_mask(_relative_mask(rel, n, keep=True)))


# --------------------------------------------------------------------------------------------
# From any vector to window-relative positions


def _count(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not bool")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None
    if n < 0:
        raise SchemaError(f"{name} must not be negative, got {n}")
    return n


def _vector(dv: Any, limit: int | None, what: str) -> Any:
    """`dv` as None, a pyroaring bitmap, or sorted unique uint64 positions (any other iterable,
    through `positions.as_array`). With `limit`, a position at or past it raises SchemaError:
    the vector does not fit a file of `limit` rows."""
    if dv is None:
        return None
    if isinstance(dv, (AbstractBitMap, AbstractBitMap64)):
        if limit is not None and len(dv) and dv.max() >= limit:
            raise SchemaError(f"{what} {dv.max()} is past the data file's {limit} rows "
                              f"(0..{limit - 1}): the vector does not belong to a file of this "
                              f"size")
        return dv
    return as_array(dv, maximum=_MAX_POSITION if limit is None else limit - 1, what=what)


def _relative(vector: Any, start: int, n: int) -> BitMap | np.ndarray | None:
    """The positions of a `_vector` in `start .. start+n-1`, minus `start`: a 32-bit BitMap for
    bitmap input (while n <= 2^32), sorted uint64 otherwise; None for no vector."""
    if vector is None:
        return None
    if isinstance(vector, np.ndarray):
        return _window(vector, start, n)
    if n > _MAX_32:                      # a mask of more than 4G rows: no fast path
        dtype = np.uint32 if isinstance(vector, AbstractBitMap) else np.uint64
        return _window(np.frombuffer(vector.to_array(), dtype=dtype).astype(np.uint64), start, n)
    # Clip to the window before shifting: a batch's window is a few containers of a vector
    # that may span the whole file, and CRoaring intersects by container.
    stop = start + n
    outside = len(vector) > 0 and (vector.min() < start or vector.max() >= stop)
    if isinstance(vector, AbstractBitMap):
        if outside:
            stop = min(stop, _MAX_32)
            vector = vector & BitMap(range(start, stop)) if start < stop else BitMap()
        return vector.shift(-start) if start else vector
    if outside:
        vector = vector & BitMap64(range(start, stop))
    return _low_bucket(vector.shift(-start) if start else vector)


def _window(values: np.ndarray, start: int, n: int) -> np.ndarray:
    lo, hi = np.searchsorted(values, [start, start + n])
    rel = values[lo:hi]
    return rel - np.uint64(start) if start else rel


def _low_bucket(bitmap64: AbstractBitMap64) -> BitMap:
    """A BitMap64 whose values are all below 2^32, as a BitMap, without per-value work: the
    64-bit portable form is a bucket count, then per bucket a u32 high key and a 32-bit bitmap
    (pyroaring writes only non-empty buckets, so here one, with key 0, or none)."""
    data = memoryview(bitmap64.serialize())
    if int.from_bytes(data[:8], "little") == 0:
        return BitMap()
    assert int.from_bytes(data[8:12], "little") == 0, "values below 2^32 have high key 0"
    return BitMap.deserialize(cast(bytes, data[12:12 + roaring.serialized_size(data, 12)]))   # any buffer


# --------------------------------------------------------------------------------------------
# Masks


def _mask(dv: Any, n: int, *, keep: bool, what: str) -> np.ndarray:
    """`keep_mask` (keep) or `delete_mask` (not keep) of a vector that must fit `n` rows."""
    return _relative_mask(_relative(_vector(dv, n, what), 0, n), n, keep=keep)


def _relative_mask(rel: BitMap | np.ndarray | None, n: int, *, keep: bool) -> np.ndarray:
    """The mask of `_relative` positions (every one below `n`)."""
    if rel is None or len(rel) == 0 or n == 0:
        return np.full(n, keep, dtype=bool)
    if not isinstance(rel, np.ndarray):
        stats = rel.get_statistics()
        if stats["n_bitset_containers"] or stats["n_run_containers"]:
            return _portable_mask(memoryview(rel.serialize()), 0, n, keep=keep)
        rel = np.frombuffer(rel.to_array(), dtype=np.uint32)   # sparse: nothing to gain
    mask = np.full(n, keep, dtype=bool)
    mask[rel] = not keep
    return mask


def arrow_mask(mask: np.ndarray) -> Any:
    """A numpy bool mask as an Arrow BooleanArray (for `filter`), packed by numpy: pyarrow's
    own conversion of a numpy bool array is much slower (25 ms against 0.4 ms for 2M rows)."""
    import pyarrow as pa

    packed = np.packbits(mask, bitorder="little")
    return pa.BooleanArray.from_buffers(pa.bool_(), len(mask), [None, pa.py_buffer(packed)])


def _portable_mask(buf: memoryview, pos: int, n: int, *, keep: bool) -> np.ndarray:
    """The mask of the portable 32-bit Roaring bitmap at `buf[pos]` (as pyroaring serialized it,
    every value below `n`): `keep` -> False at its values, else True at its values."""
    keys, cards, runs, offsets, _ = roaring.containers(buf, pos)
    chunks = -(-n // _CHUNK)
    raw = np.frombuffer(buf, dtype=np.uint8)
    bitsets = np.flatnonzero(~runs & (cards > _ARRAY_MAX))
    if bitsets.size:
        # One unpackbits over every chunk's bits: the bitset containers' own 8 KiB, zeros
        # (nothing set) for the other chunks, which the array and run containers fill below.
        bitset_keys, bitset_offsets = keys[bitsets], offsets[bitsets]
        # Groups of bitsets for consecutive chunks, stored back to back: one copy per group.
        breaks = (np.flatnonzero((np.diff(bitset_keys) != 1)
                                 | (np.diff(bitset_offsets) != _BITSET_BYTES)) + 1).tolist()
        if bitsets.size == chunks and not breaks:                  # all bitsets: no copy
            first = int(bitset_offsets[0])
            packed = raw[first:first + _BITSET_BYTES * chunks]
            if keep:
                packed = np.invert(packed)
        else:
            grid = np.zeros((chunks, _BITSET_BYTES), dtype=np.uint8)
            for lo, hi in zip([0, *breaks], [*breaks, bitsets.size]):
                key, at = int(bitset_keys[lo]), int(bitset_offsets[lo])
                grid[key:key + hi - lo] = raw[at:at + _BITSET_BYTES * (hi - lo)].reshape(
                    hi - lo, _BITSET_BYTES)
            packed = np.invert(grid, out=grid) if keep else grid
        out = np.unpackbits(packed.reshape(-1), bitorder="little").view(bool)
    else:
        out = np.full(chunks * _CHUNK, keep, dtype=bool)
    hit = not keep

    arrays = np.flatnonzero(~runs & (cards <= _ARRAY_MAX))
    if arrays.size:
        # Consecutive array containers are stored back to back: one read per group of them.
        if arrays[-1] - arrays[0] == arrays.size - 1:
            groups = [arrays]
        else:
            groups = np.split(arrays, np.flatnonzero(np.diff(arrays) != 1) + 1)
        parts = [np.frombuffer(buf, dtype="<u2", count=int(cards[g].sum()),
                               offset=int(offsets[g[0]])) + np.repeat(keys[g] << 16, cards[g])
                 for g in groups]
        out[parts[0] if len(parts) == 1 else np.concatenate(parts)] = hit

    run_rows = np.flatnonzero(runs)
    if run_rows.size:
        starts_parts, lengths_parts = [], []
        for k, o in zip(keys[run_rows].tolist(), offsets[run_rows].tolist()):
            count = int.from_bytes(buf[o:o + 2], "little")
            pairs = np.frombuffer(buf, dtype="<u2", count=2 * count, offset=o + 2).reshape(count, 2)
            starts_parts.append(pairs[:, 0].astype(np.int64) + (k << 16))
            lengths_parts.append(pairs[:, 1].astype(np.int64) + 1)
        starts = np.concatenate(starts_parts)
        lengths = np.concatenate(lengths_parts)
        total = int(lengths.sum())
        if starts.size <= 64 or total >= 256 * starts.size:
            for s, e in zip(starts.tolist(), (starts + lengths).tolist()):
                out[s:e] = hit
        else:                            # many short runs: expand them, no Python per run
            before = np.cumsum(lengths) - lengths        # run i's first index in the expansion
            out[np.arange(total, dtype=np.int64) + np.repeat(starts - before, lengths)] = hit
    return out[:n]

