"""Deletion vectors and index results as masks, and applied to Arrow batches and tables.

Every mask is compared with a naive per-row Python mask; every applied batch or table with
Arrow's `take` of the kept row indices.
"""

from __future__ import annotations

import array

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap, BitMap64, FrozenBitMap

import paimon_schema as ps
from paimon_schema.query import masks
from paimon_schema.query.masks import apply_deletion_vector, delete_mask, keep_mask, row_mask
from paimon_schema.values.results import REMAIN, SKIP, IndexResult

CHUNK = 1 << 16


def naive_keep(positions: set[int], n: int) -> np.ndarray:
    """Row by row, as Paimon's per-row readers decide."""
    return np.fromiter((i not in positions for i in range(n)), dtype=bool, count=n)


@st.composite
def deletion_vectors(draw: st.DrawFn, max_rows: int = 3 * CHUNK + 100) -> tuple[int, np.ndarray]:
    """A row count and its deleted rows (a bool array, built independently of the code under
    test): random regions of any density (array, bitset and full containers), long runs, many
    short runs (run containers that are expanded rather than sliced), rows right at the end."""
    n = draw(st.sampled_from([0, 1, 2, 4097, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 3])
             | st.integers(0, max_rows))
    deleted = np.zeros(n, dtype=bool)
    if n == 0:
        return n, deleted
    lo = draw(st.integers(0, n - 1))
    hi = draw(st.integers(lo, n))
    density = draw(st.sampled_from([0.0, 0.0005, 0.03, 0.07, 0.2, 0.5, 0.95, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    deleted[lo:hi] |= rng.random(hi - lo) < density
    for start, length in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, 70_000)),
                                       max_size=4)):
        deleted[start:start + length] = True
    if draw(st.booleans()):
        step = draw(st.sampled_from([5, 9, 40]))
        length = draw(st.integers(2, 4))
        first = draw(st.integers(0, n - 1))
        starts = np.arange(first, min(n, first + CHUNK), step)
        for k in range(length):
            deleted[starts[starts + k < n] + k] = True
    deleted[draw(st.lists(st.integers(max(0, n - 3), n - 1), max_size=3))] = True
    deleted[draw(st.lists(st.integers(0, n - 1), max_size=20))] = True
    return n, deleted


def as_kinds(deleted: np.ndarray, optimize: bool) -> list[object]:
    """The same positions as every accepted kind of vector (Python lists and iterators only
    while small: `positions.as_array` checks them item by item, which is slow, not different)."""
    positions = np.flatnonzero(deleted)
    b32 = BitMap(array.array("I", positions.astype(np.uint32).tobytes()))
    b64 = BitMap64(array.array("Q", positions.astype(np.uint64).tobytes()))
    if optimize:
        b32.run_optimize()
        b64.run_optimize()
    kinds: list[object] = [b32, b64, FrozenBitMap(b32), positions,
                           positions[::-1].astype(np.uint32)]
    if positions.size <= 2000:
        kinds += [positions.tolist(), iter(positions.tolist())]
    return kinds


# ---------------------------------------------------------------------------------------------
# Masks


@given(deletion_vectors(), st.booleans())
def test_keep_and_delete_masks_equal_the_naive_mask(case: tuple[int, np.ndarray],
                                                    optimize: bool) -> None:
    n, deleted = case
    expected = naive_keep(set(np.flatnonzero(deleted).tolist()), n)
    assert np.array_equal(expected, ~deleted)
    for kind in as_kinds(deleted, optimize):
        got = keep_mask(kind, n)
        assert got.dtype == np.bool_ and got.shape == (n,)
        assert np.array_equal(got, expected), type(kind)
    for kind in as_kinds(deleted, optimize):
        got = delete_mask(kind, n)
        assert got.dtype == np.bool_ and got.shape == (n,)
        assert np.array_equal(got, ~expected), type(kind)


@given(deletion_vectors(), st.booleans())
def test_row_mask_is_true_at_the_rows(case: tuple[int, np.ndarray], optimize: bool) -> None:
    n, rows = case
    bitmap, bitmap64 = as_kinds(rows, optimize)[:2]
    assert np.array_equal(row_mask(bitmap, n), rows)
    assert np.array_equal(row_mask(bitmap64, n), rows)
    assert np.array_equal(row_mask(IndexResult.of(bitmap), n), rows)
    assert np.array_equal(row_mask(np.flatnonzero(rows), n), rows)


def test_mixed_container_layouts() -> None:
    """Bitset, array and run containers interleaved: bitsets and arrays not stored back to back,
    runs both sliced (few, long) and expanded (many, short)."""
    rng = np.random.default_rng(5)
    kinds = ["bitset", "array", "bitset", "short-runs", "array", "array", "empty", "bitset",
             "long-run", "array"]
    deleted = np.zeros(len(kinds) * CHUNK - 17, dtype=bool)
    for i, kind in enumerate(kinds):
        chunk = deleted[i * CHUNK:(i + 1) * CHUNK]
        if kind == "bitset":
            chunk |= rng.random(chunk.size) < 0.4
        elif kind == "array":
            chunk[rng.integers(0, chunk.size, 300)] = True
        elif kind == "short-runs":
            for k in range(4):
                chunk[k::40] = True
        elif kind == "long-run":
            chunk[100:60_000] = True
    bitmap = BitMap(np.flatnonzero(deleted).tolist())
    bitmap.run_optimize()
    stats = bitmap.get_statistics()
    assert stats["n_bitset_containers"] == 3 and stats["n_array_containers"] == 4
    assert stats["n_run_containers"] == 2
    n = deleted.size
    for vector in (bitmap, BitMap64(bitmap)):
        assert np.array_equal(keep_mask(vector, n), ~deleted)
        assert np.array_equal(delete_mask(vector, n), deleted)
    batch = sample_batch(n)
    expected = batch.take(pa.array(np.flatnonzero(~deleted)))
    assert apply_deletion_vector(batch, bitmap).equals(expected)
    assert apply_deletion_vector(chunked(batch, [50_000] * 20), bitmap).equals(
        pa.Table.from_batches([expected]))
    few = BitMap(bitmap)                       # under a tenth deleted: the filter path
    few.remove_range(0, 3 * CHUNK)
    few.remove_range(7 * CHUNK, 9 * CHUNK)
    kept = np.flatnonzero(~delete_mask(few, n))
    assert len(few) < 0.1 * n
    assert apply_deletion_vector(batch, few).equals(batch.take(pa.array(kept)))


def test_masks_of_nothing() -> None:
    for n in (0, 1, 70_000):
        assert np.array_equal(keep_mask(None, n), np.ones(n, bool))
        assert np.array_equal(delete_mask(None, n), np.zeros(n, bool))
        assert np.array_equal(keep_mask(BitMap(), n), np.ones(n, bool))
        assert np.array_equal(keep_mask(BitMap64(), n), np.ones(n, bool))
        assert np.array_equal(keep_mask([], n), np.ones(n, bool))
        assert np.array_equal(row_mask(None, n), np.ones(n, bool))
        assert np.array_equal(row_mask(REMAIN, n), np.ones(n, bool))
        assert np.array_equal(row_mask(SKIP, n), np.zeros(n, bool))
        assert np.array_equal(row_mask(BitMap(), n), np.zeros(n, bool))
    assert keep_mask(np.array([], dtype=np.int64), 0).shape == (0,)


def test_all_deleted_and_masks_that_own_their_memory() -> None:
    for n in (1, CHUNK, 3 * CHUNK + 7):
        full = BitMap(range(n))
        assert not keep_mask(full, n).any()
        full.run_optimize()
        assert not keep_mask(full, n).any()
        assert not keep_mask(BitMap64(range(n)), n).any()
    mask = keep_mask(BitMap(range(0, 2 * CHUNK, 2)), 2 * CHUNK)   # bitset containers only
    mask[0] = True                                                # writable
    assert mask[0] and not mask[2]


def test_sixty_four_bit_vectors_above_two_to_the_32() -> None:
    big = 1 << 32
    dv = BitMap64([3, big + 5, big + 7])
    batch = pa.record_batch({"i": pa.array(range(10))})
    out = apply_deletion_vector(batch, dv, offset=big + 3)
    assert out.column("i").to_pylist() == [0, 1, 3, 5, 6, 7, 8, 9]
    with pytest.raises(ps.SchemaError):
        keep_mask(dv, 100)
    # 32-bit vectors in windows at and past 2^32
    assert apply_deletion_vector(batch, BitMap([1, 2**32 - 1]), offset=big - 2).column(
        "i").to_pylist() == [0, 2, 3, 4, 5, 6, 7, 8, 9]
    assert apply_deletion_vector(batch, BitMap([1, 2**32 - 1]), offset=big).equals(batch)


def test_more_than_two_to_the_32_rows_takes_the_numpy_path() -> None:
    # A 4G-row mask is too big for a test; the window logic that serves it is checked alone.
    big = (1 << 32) + 10
    for dv in (BitMap([1, 5, 2**32 - 1]), BitMap64([1, 5, 2**32 - 1, 2**32 + 3, 2**33])):
        rel = masks._relative(dv, 0, big)
        assert isinstance(rel, np.ndarray)
        assert rel.tolist() == [v for v in dv if v < big]
        assert masks._relative(dv, 4, big).tolist() == [v - 4 for v in dv if 4 <= v < big + 4]


# ---------------------------------------------------------------------------------------------
# Positions past the rows, and wrong types


@pytest.mark.parametrize("vector", [BitMap([0, 5]), BitMap64([0, 5]), BitMap64([2**40]),
                                    [0, 5], np.array([5]), range(3, 6)])
def test_positions_past_the_rows_raise_schema_error(vector: object) -> None:
    with pytest.raises(ps.SchemaError) as info:
        keep_mask(vector, 5)
    assert isinstance(info.value, ValueError)
    assert "5" in str(info.value) or "1099511627776" in str(info.value)
    with pytest.raises(ps.SchemaError):
        delete_mask(vector, 5)
    with pytest.raises(ps.SchemaError):
        row_mask(vector, 5)


def test_last_row_is_fine_and_zero_rows_take_no_position() -> None:
    assert keep_mask(BitMap([4]), 5).tolist() == [True, True, True, True, False]
    assert keep_mask(BitMap64([4]), 5).tolist() == [True, True, True, True, False]
    assert keep_mask(BitMap(), 0).shape == (0,)
    for vector in (BitMap([0]), BitMap64([0]), [0]):
        with pytest.raises(ps.SchemaError):
            keep_mask(vector, 0)


def test_type_errors() -> None:
    for n_rows in (1.5, "3", None, True):
        with pytest.raises(TypeError):
            keep_mask(BitMap(), n_rows)          # type: ignore[arg-type]
    with pytest.raises(ps.SchemaError):
        keep_mask(BitMap(), -1)
    assert keep_mask(BitMap([1]), np.int64(3)).tolist() == [True, False, True]
    for vector in ("012", b"\x00", 3, 1.5, [1.5], [True], np.array([0.5]), [-1], object()):
        with pytest.raises(ps.SchemaError):
            keep_mask(vector, 3)
    batch = pa.record_batch({"i": pa.array(range(3))})
    for data in (batch.column(0), batch.to_pydict(), np.arange(3), None):
        with pytest.raises(TypeError):
            apply_deletion_vector(data, BitMap([1]))
    with pytest.raises(TypeError):
        apply_deletion_vector(batch, BitMap([1]), offset=1.0)    # type: ignore[arg-type]
    with pytest.raises(ps.SchemaError):
        apply_deletion_vector(batch, BitMap([1]), offset=-1)
    with pytest.raises(ps.SchemaError):
        apply_deletion_vector(batch, "1")


# ---------------------------------------------------------------------------------------------
# Applied to RecordBatches and Tables


def sample_batch(n: int, seed: int = 0) -> pa.RecordBatch:
    rng = np.random.default_rng(seed)
    ids = pa.array(np.arange(n, dtype=np.int64))
    strings = pa.compute.if_else(pa.array(np.arange(n) % 7 == 3), pa.scalar(None, pa.string()),
                                 pa.compute.cast(ids, pa.string()))
    schema = pa.schema([("id", pa.int64()), ("x", pa.float64()), ("s", pa.string())],
                       metadata={"source": "test"})
    return pa.record_batch([pa.array(np.arange(n, dtype=np.int64)), pa.array(rng.random(n)),
                            strings], schema=schema)


def chunked(batch: pa.RecordBatch, sizes: list[int]) -> pa.Table:
    batches, at = [], 0
    for size in sizes:
        if at >= batch.num_rows:
            break
        batches.append(batch.slice(at, size))
        at += size
    if at < batch.num_rows:
        batches.append(batch.slice(at))
    return pa.Table.from_batches(batches, schema=batch.schema)


@given(deletion_vectors(max_rows=2 * CHUNK + 50), st.booleans(),
       st.lists(st.integers(1, 40_000), min_size=1, max_size=6))
def test_apply_equals_take_of_kept_rows(case: tuple[int, np.ndarray], optimize: bool,
                                        sizes: list[int]) -> None:
    n, deleted = case
    batch = sample_batch(n)
    table = chunked(batch, sizes)
    kept = pa.array(np.flatnonzero(~deleted), type=pa.int64())
    expected = batch.take(kept)
    for kind in as_kinds(deleted, optimize):
        got = apply_deletion_vector(table if isinstance(kind, type(iter([]))) else batch, kind)
        if isinstance(kind, type(iter([]))):             # one-shot: a table, once
            assert isinstance(got, pa.Table) and got.equals(table.take(kept))
            continue
        assert isinstance(got, pa.RecordBatch)
        assert got.schema == batch.schema and got.schema.metadata == batch.schema.metadata
        assert got.equals(expected)
        got_table = apply_deletion_vector(table, kind)
        assert isinstance(got_table, pa.Table)
        assert got_table.schema.metadata == batch.schema.metadata
        assert got_table.equals(pa.Table.from_batches([expected]))
        assert apply_deletion_vector(batch, kind, row_count=n).equals(expected)


@given(deletion_vectors(max_rows=3 * CHUNK), st.booleans(),
       st.lists(st.integers(1, 50_000), min_size=1, max_size=8), st.booleans())
def test_apply_batch_by_batch_with_offsets(case: tuple[int, np.ndarray], optimize: bool,
                                           sizes: list[int], as_tables: bool) -> None:
    """A file read in several batches: each batch gets its file offset; together they are the
    file's kept rows."""
    n, deleted = case
    whole = sample_batch(n, seed=1)
    expected = pa.Table.from_batches([whole.take(pa.array(np.flatnonzero(~deleted)))])
    pieces = chunked(whole, sizes).to_batches()
    for kind in as_kinds(deleted, optimize)[:4]:
        out, offset = [], 0
        for piece in pieces:
            data = pa.Table.from_batches([piece]) if as_tables else piece
            got = apply_deletion_vector(data, kind, offset=offset, row_count=n)
            assert type(got) is type(data)
            out.extend(got.to_batches() if as_tables else [got])
            offset += piece.num_rows
        assert offset == n
        assert pa.Table.from_batches(out, schema=whole.schema).equals(expected)


def test_offset_windows_ignore_other_batches_positions() -> None:
    batch = sample_batch(10)
    dv = BitMap([0, 12, 15, 19, 20, 1000])          # a file of 1001+ rows; window 10..19
    got = apply_deletion_vector(batch, dv, offset=10)
    assert got.column("id").to_pylist() == [0, 1, 3, 4, 6, 7, 8]
    assert apply_deletion_vector(batch, BitMap64(dv), offset=10).equals(got)
    assert apply_deletion_vector(batch, list(dv), offset=10).equals(got)
    assert apply_deletion_vector(batch, dv, offset=10, row_count=1001).equals(got)
    # The row count makes the vector and the window checked against the file.
    with pytest.raises(ps.SchemaError):
        apply_deletion_vector(batch, dv, offset=10, row_count=1000)
    with pytest.raises(ps.SchemaError):
        apply_deletion_vector(batch, list(dv), offset=10, row_count=1000)
    with pytest.raises(ps.SchemaError):
        apply_deletion_vector(batch, BitMap(), offset=995, row_count=1000)
    # Without it, positions past a whole table are ignored, as Paimon's per-row readers do.
    assert apply_deletion_vector(batch, BitMap([3, 10])).num_rows == 9


def test_apply_edge_cases() -> None:
    empty = sample_batch(0)
    assert apply_deletion_vector(empty, None).num_rows == 0
    assert apply_deletion_vector(empty, BitMap()).num_rows == 0
    assert apply_deletion_vector(empty, BitMap([3]), offset=3).num_rows == 0
    assert apply_deletion_vector(pa.Table.from_batches([empty]), BitMap()).num_rows == 0
    batch = sample_batch(5)
    assert apply_deletion_vector(batch, None) is batch
    gone = apply_deletion_vector(batch, BitMap(range(5)))
    assert gone.num_rows == 0 and gone.schema == batch.schema
    table = chunked(sample_batch(100_000), [30_000] * 4)
    gone_table = apply_deletion_vector(table, BitMap(range(100_000)))
    assert gone_table.num_rows == 0 and gone_table.schema == table.schema
    no_columns = pa.table({"a": pa.array(range(6))}).drop_columns(["a"])
    assert apply_deletion_vector(no_columns, BitMap([1, 2])).num_rows == 4


def test_many_chunk_table_answers_like_one_chunk() -> None:
    n = 3 * CHUNK
    batch = sample_batch(n)
    dv = BitMap(range(0, n, 3))
    kept = pa.array([i for i in range(n) if i % 3], type=pa.int64())
    table = chunked(batch, [1000] * (n // 1000))
    assert table.column(0).num_chunks > 100
    assert apply_deletion_vector(table, dv).equals(table.take(kept))
    single = pa.Table.from_batches([batch])
    assert apply_deletion_vector(single, dv).equals(single.take(kept))
