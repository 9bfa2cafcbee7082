"""The compiled kernels (`runtime/kernels.c`) equal their numpy / pyroaring paths: bloom bit
setting, row grouping, every key's roaring bitmap serialized straight from the grouped rows
(over the shapes of columns tables hold) and the bit slices of BSI and range-bitmap."""

from __future__ import annotations

import array
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.layouts.bitmap_index import javaorder, row_groups
from paimon_schema.layouts.bitmap_index.row_groups import group_rows
from paimon_schema.layouts import column_values, paimon_common, roaring_writer
from paimon_schema.layouts.bitmap_index import writer as bitmap_writer
from paimon_schema.layouts.bloom_filter import hashing, kernel
from paimon_schema.layouts.bloom_filter import writer as bloom_writer
from tests.oracles import REQUIRE_ORACLES_ENV, oracles_required
from paimon_schema.table import plan
from paimon_schema.values.types import DataType
from tests.strategies import (byte_key_lists, coded_keys, file_paths, mostly_null_lists, read_order_files,
                              shaped_column, shaped_columns, sliced_columns, string_key_sets)

if kernel._kernels is None:
    # Built without a C compiler, the package is correct but slower (numpy's paths); CI builds
    # it, so there a missing extension fails.
    reason = "the C extension paimon_schema.runtime._kernels is not built (no C compiler?)"
    if oracles_required():
        pytest.fail(f"{REQUIRE_ORACLES_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=5000) | st.integers(0, 10_000).map(
           lambda n: np.random.default_rng(n).integers(-2**63, 2**63 - 1, n, dtype=np.int64).tolist()),
       st.booleans(), st.integers(0, 30), st.integers(1, 2**32 - 1) | st.integers(1, 100_000))
def test_bloom_compiled_equals_numpy(values: list[int], mix: bool, k: int, num_bits: int) -> None:
    num_bits = min(num_bits, 2**32 - 1)
    size = (num_bits + 7) // 8 if num_bits < 2**24 else 2**21      # a bit set of 16 Mbit at most
    num_bits = min(num_bits, size * 8)
    array = np.array(values, np.int64)
    compiled, numpy = np.zeros(size, np.uint8), np.zeros(size, np.uint8)
    kernel._kernels.bloom_add(compiled, array, mix, k, num_bits)
    kernel.numpy_add(numpy, array, mix, k, num_bits)
    np.testing.assert_array_equal(compiled, numpy)


@given(st.lists(st.sampled_from([0, 1, -1, 4096, 2 * 4096, 1 << 40, (1 << 40) + 4096, 2**63 - 1, -2**63]),
                max_size=3000), st.booleans(), st.integers(1, 10), st.integers(1, 100_000))
def test_bloom_repeated_values_equal_numpy(values: list[int], mix: bool, k: int, num_bits: int) -> None:
    """Repeats (runs, and values sharing a slot of the kernel's table of recent hashes, which
    are skipped or evict each other) set the bits numpy's path sets."""
    array = np.array(values, np.int64)
    size = (num_bits + 7) // 8
    compiled, numpy = np.zeros(size, np.uint8), np.zeros(size, np.uint8)
    kernel._kernels.bloom_add(compiled, array, mix, k, num_bits)
    kernel.numpy_add(numpy, array, mix, k, num_bits)
    np.testing.assert_array_equal(compiled, numpy)


def test_bloom_refuses_a_bit_count_past_the_set() -> None:
    with pytest.raises(ValueError, match="num_bits"):
        kernel._kernels.bloom_add(np.zeros(1, np.uint8), np.zeros(1, np.int64), True, 3, 9)
    with pytest.raises(ValueError, match="num_bits"):
        kernel.numpy_add(np.zeros(1, np.uint8), np.zeros(1, np.int64), True, 3, 9)


def _grouped(keys: np.ndarray, valid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows grouped by key by a stable sort: (rows, starts, counts)."""
    rows = np.arange(len(keys)) if valid is None else np.flatnonzero(valid)
    kept = keys[rows]
    order = np.argsort(kept, kind="stable")
    _, counts = np.unique(kept[order], return_counts=True)
    return rows[order].astype(np.uint32), np.cumsum(counts) - counts, counts


@settings(max_examples=60, deadline=None)
@given(shaped_columns())
def test_serialized_groups_equal_pyroaring(column: tuple[str, np.ndarray, np.ndarray | None]) -> None:
    """Every group's serialization, written from the rows, equals pyroaring's run-optimized
    `BitMap` of them (Java's runOptimize choices: array, bitmap or run containers)."""
    _, keys, valid = column
    rows, starts, counts = _grouped(keys, valid)
    view = np.ascontiguousarray(rows)
    blob, lengths = roaring_writer.serialize_bitmaps(view, counts, starts)
    expected, expected_lengths = roaring_writer.roaring_bitmaps(array.array("I", view.tobytes()), counts, starts)
    assert lengths.tolist() == expected_lengths.tolist()
    assert blob == expected


@pytest.mark.parametrize("rows", [
    [], [0], [5, 6, 7], list(range(4096)), list(range(4097)), list(range(0, 8194, 2)),
    list(range(0, 2 * 4097, 2)), list(range(65530, 65542)), [0, 65536, 131072, 196608, 2**32 - 1],
    [0, 65536, 65537, 131072], list(range(0, 65536 * 5, 3)), list(range(2**32 - 70_000, 2**32)),
    [r for r in range(70_000) if r % 64 < 32], [r for r in range(70_000) if r % 8 < 4]])
def test_serialized_edges_equal_pyroaring(rows: list[int]) -> None:
    """Container edges: 4096 and 4097 rows, runs at the tie (2 + 4r against 2 * cardinality and
    8192), the offset table from four containers on, the last row 2**32 - 1."""
    blob, lengths = roaring_writer.serialize_bitmaps(np.array(rows, np.uint32), np.array([len(rows)]))
    expected = BitMap(rows)
    expected.run_optimize()
    assert blob == expected.serialize() and lengths.tolist() == [len(blob)]


def test_serialize_refuses_groups_that_do_not_ascend() -> None:
    with pytest.raises(ValueError, match="ascending"):
        kernel._kernels.serialize_groups(np.array([3, 3], np.uint32), np.zeros(1, np.int64), np.full(1, 2, np.int64))
    with pytest.raises(ValueError, match="outside"):
        kernel._kernels.serialize_groups(np.array([3], np.uint32), np.zeros(1, np.int64), np.full(1, 2, np.int64))
    # descents across containers, many of them: refused before the containers overflow
    alternating = np.array([(i % 2) << 16 | i for i in range(200_000)], np.uint32)
    for rows in (np.array([70_000, 3], np.uint32), np.array([1, 70_000, 3], np.uint32), alternating):
        with pytest.raises(ValueError, match="group 1 is not strictly ascending"):
            kernel._kernels.serialize_groups(np.concatenate(([5], rows)).astype(np.uint32),
                                             np.array([0, 1], np.int64), np.array([1, len(rows)], np.int64))
    with pytest.raises(ValueError, match="ascending"):
        kernel._kernels.serialize_slices(np.array([4, 3], np.uint32), np.ones(2, np.uint64), 1)
    with pytest.raises(ValueError, match="uint64 value per"):
        kernel._kernels.serialize_slices(np.array([3], np.uint32), np.ones(2, np.uint64), 1)


_TYPES = {"INT": lambda k: (k * 7919 - 2**30).astype(np.int32), "BIGINT": lambda k: k * -(2**40) + 3,
          "DOUBLE": lambda k: k / 8 - 3.5, "STRING": lambda k: [f"v{x}" for x in k.tolist()]}


@settings(max_examples=40, deadline=None)
@given(shaped_columns(max_rows=120_000), st.sampled_from(sorted(_TYPES)), st.sampled_from([1, 2]))
def test_bitmap_writer_equals_the_pyroaring_path(column: tuple[str, np.ndarray, np.ndarray | None],
                                                 data_type: str, version: int) -> None:
    """The whole bitmap index, built through the compiled grouping and serialization, equals
    the blob of the package without them (numpy's sort, one pyroaring object per key)."""
    _, keys, valid = column
    values: Any = _TYPES[data_type](keys)
    if valid is not None:
        values = [v if ok else None for v, ok in zip(list(values), valid.tolist())]
    compiled = ps.build_index("bitmap", data_type, values, version=version)
    with pytest.MonkeyPatch.context() as patch:
        for module in (roaring_writer, row_groups, bitmap_writer, column_values, javaorder):
            patch.setattr(module, "_kernels", None)
        assert ps.build_index("bitmap", data_type, values, version=version) == compiled


@settings(max_examples=40, deadline=None)
@given(shaped_columns(max_rows=120_000), st.sampled_from([1, 7, 300]))
def test_wide_keys_grouped_by_the_hash_table_equal_the_sort(column: tuple[str, np.ndarray, np.ndarray | None],
                                                          limit: int) -> None:
    """Keys too wide for the packed sort (doubles' bits, -0.0 and NaN's among them) take the
    hash table up to an eighth of the rows (`LIMIT` lowered: both that table and the sort past
    it): the groups the sort makes."""
    _, keys, valid = column
    doubles = keys / 8 - 3.5
    doubles[keys % 97 == 5] = -0.0
    doubles[keys % 97 == 6] = math.inf
    bits = doubles.view(np.uint64).copy()
    rows = None if valid is None else np.flatnonzero(valid)
    present = bits if rows is None else bits[rows]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bitmap_writer, "LIMIT", limit)
        hashed = bitmap_writer._group(len(keys), rows, present)
        patch.setattr(row_groups, "_kernels", None)
        patch.setattr(roaring_writer, "_kernels", None)
        sorted_ = bitmap_writer._group(len(keys), rows, present)
    assert hashed.keys.tolist() == sorted_.keys.tolist() and hashed.counts.tolist() == sorted_.counts.tolist()
    assert hashed.runs.tolist() == sorted_.runs.tolist()
    assert [hashed.rows[s:s + c] for s, c in zip(hashed.starts.tolist(), hashed.counts.tolist())] \
        == [sorted_.rows[s:s + c] for s, c in zip(sorted_.starts.tolist(), sorted_.counts.tolist())]


@settings(max_examples=60, deadline=None)
@given(shaped_columns(max_rows=150_000), st.integers(0, 66), st.integers(0, 2**64 - 1))
def test_serialized_slices_equal_pyroaring(column: tuple[str, np.ndarray, np.ndarray | None], count: int,
                                           mix: int) -> None:
    """Bit slices of values: low bits (few runs), high bits, past bit 63 (empty)."""
    _, keys, valid = column
    rows = np.arange(len(keys), dtype=np.uint32) if valid is None else np.flatnonzero(valid).astype(np.uint32)
    values = keys[rows].astype(np.uint64) * np.uint64(mix | 1)
    assert roaring_writer.serialize_slices(rows, values, count)[0] == roaring_writer.roaring_slices(rows, values, count)[0]


@pytest.mark.parametrize("rows, values", [
    (range(65536 * 2), lambda r: np.full(len(r), 2**64 - 1, np.uint64)),  # full containers: one run each
    (range(2**32 - 70_000, 2**32), lambda r: r),                        # the last container, 2**32 - 1
    (range(0, 3 * 65536, 2), lambda r: r // 2),                         # gaps: no runs in slice 0
    (range(100, 70_000), lambda r: (r // 4096) % 3),                    # long runs in low slices
    (list(range(5000)) + list(range(200_000, 204_000)), lambda r: r % 7)])  # an empty container between
def test_serialized_slice_edges_equal_pyroaring(rows: Any, values: Any) -> None:
    """The dense pass (a 64x64 bit transpose per 64 rows) at container edges and full words."""
    row_array = np.array(rows, np.uint32)
    value_array = np.asarray(values(row_array.astype(np.uint64)), np.uint64)
    for count in (1, 7, 64, 65):
        assert roaring_writer.serialize_slices(row_array, value_array, count)[0] \
            == roaring_writer.roaring_slices(row_array, value_array, count)[0]


@settings(max_examples=30, deadline=None)
@given(shaped_columns(max_rows=100_000), st.sampled_from(["bsi", "range-bitmap"]), st.integers(-2**62, 2**62))
def test_bit_sliced_indexes_equal_the_pyroaring_path(column: tuple[str, np.ndarray, np.ndarray | None],
                                                    index_type: str, offset: int) -> None:
    _, keys, valid = column
    values = np.ma.masked_array(keys * 977 + offset, mask=~valid) if valid is not None else keys * 977 + offset
    compiled = ps.build_index(index_type, "BIGINT", values)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(roaring_writer, "_kernels", None)
        patch.setattr(row_groups, "_kernels", None)      # range-bitmap codes by sorting
        assert ps.build_index(index_type, "BIGINT", values) == compiled


@settings(max_examples=80, deadline=None)
@given(shaped_columns(max_rows=140_000), st.sampled_from([np.int8, np.int16, np.int32, np.int64]),
       st.sampled_from([1, -1, 0, "table", "span", "table 1", "table -1"]),
       st.sampled_from([None, 0, 1, 3, 9, 64, 66]),
       st.integers(-2**63 + 1, 2**63 - 1) | st.integers(-300, 300), st.integers(1, 2**40))
@example(("random", np.array([5, -7, 0]), None), np.int64, -1, None, 2**62, 1)
@example(("sorted", np.arange(200_000), None), np.int64, 1, None, 0, 2**40 + 1)    # past 2 containers, bits above 32
def test_column_slices_equal_the_numpy_path(column: tuple[str, np.ndarray, np.ndarray | None], dtype: Any,
                                            sign: Any, count: int | None, offset: int, scale: int) -> None:
    """The compiled pass over a column (a BSI part, range-bitmap codes through a table of codes
    or of values, a part of one sign of a table's signed values) equals `reference_slices`:
    constant and varying bits per container, NULLs, every width."""
    _, keys, valid = column
    info = np.iinfo(dtype)
    with np.errstate(over="ignore"):
        values = (keys.astype(np.int64) * scale + offset).clip(info.min + 1, info.max).astype(dtype)
    present = values if valid is None else values[valid]
    table, low = None, 0
    if sign == "table":
        distinct, inner = np.unique(present, return_inverse=True)
        table = np.random.default_rng(len(distinct)).permutation(len(distinct)).astype(np.int64)
        present, sign = inner.ravel().astype(np.int32), 0
    elif isinstance(sign, str) and sign.startswith("table "):     # the part's rows by their stored sign
        distinct, inner = np.unique(present, return_inverse=True)
        table = (np.random.default_rng(len(distinct)).permutation(len(distinct)) - len(distinct) // 2) * scale
        present, sign = inner.ravel().astype(np.int32), int(sign.split()[1])
    elif sign == "span":            # a table over the values' span, indexed by value - low
        if len(present) and int(present.max()) - int(present.min()) > 300_000:
            present = (present.astype(np.int64) // 2**12).astype(dtype) if dtype != np.int64 \
                else present // 2**50
        low = int(present.min()) if len(present) else 0
        span = int(present.max()) - low + 1 if len(present) else 0
        table, sign = np.random.default_rng(span).integers(0, 2**40, span), 0
    elif sign == 0:
        present = np.abs(present)
    if sign == 0 and count is None:
        count = 64
    compiled = roaring_writer.column_slices(present, valid, table=table, offset=low, sign=sign, count=count)
    reference = roaring_writer.reference_slices(present, valid, table=table, offset=low, sign=sign, count=count)
    assert compiled.ebm == reference.ebm and compiled.slices == reference.slices
    assert compiled.lengths.tolist() == reference.lengths.tolist()
    assert compiled.rows == reference.rows


_WIDE = np.random.default_rng(7).integers(-2**40, 2**40, 2 * 65536 + 40_010)


@settings(max_examples=60, deadline=None)
@given(sliced_columns(), st.sampled_from([1, -1, 0, "table", "table 1", "table -1"]),
       st.sampled_from([None, 3, 64]))
@example((_WIDE, None), 0, None)                                # transposed in place, a short last container
@example(((_WIDE >> 12).astype(np.int32) | -2**31, None), -1, None)    # transposed from the decoded values
def test_column_slices_of_containers_at_the_edges_equal_the_numpy_path(
        column: tuple[np.ndarray, np.ndarray | None], sign: Any, count: int | None) -> None:
    """The compiled slicing's paths (a container's part listed when an eighth of its rows or
    fewer are non-null, scanned byte plane by byte plane, or transposed 16 rows at a time when 3 or
    more bytes vary; a container of one sign taken whole or skipped) equal `reference_slices`
    on containers of 0, 1, 4096 +- 1, 8192 +- 1 and all non-null rows, of one sign or both."""
    present, valid = column
    table = None
    if sign == "table":
        distinct, inner = np.unique(present, return_inverse=True)
        table = np.random.default_rng(len(distinct)).permutation(len(distinct)).astype(np.int64) << 20
        present, sign = inner.ravel().astype(np.int32), 0
    elif isinstance(sign, str):     # a table of the values themselves: their signs, whole containers of one
        distinct, inner = np.unique(present, return_inverse=True)
        table = distinct.astype(np.int64)
        present, sign = inner.ravel().astype(np.int32), int(sign.split()[1])
    elif sign == 0:
        present = np.abs(present)
    if sign == 0 and count is None:
        count = 64
    compiled = roaring_writer.column_slices(present, valid, table=table, sign=sign, count=count)
    reference = roaring_writer.reference_slices(present, valid, table=table, sign=sign, count=count)
    assert compiled.ebm == reference.ebm and compiled.slices == reference.slices
    assert compiled.lengths.tolist() == reference.lengths.tolist()
    assert compiled.rows == reference.rows


def test_column_slices_of_a_mostly_null_column_refuse_bad_codes_and_counts() -> None:
    """A container of few non-null rows (sliced from their list) is checked as any other."""
    valid = np.zeros(70_000, bool)
    valid[::100] = True                     # 700 non-null rows: both containers are listed
    codes = np.zeros(int(valid.sum()), np.int32)
    table = np.arange(2, dtype=np.int64)
    codes[5] = 2
    with pytest.raises(ValueError, match="outside the table"):
        kernel._kernels.column_slices(codes, 4, valid, table, 0, 0, 2)
    codes[5] = -1
    with pytest.raises(ValueError, match="outside the table"):
        kernel._kernels.column_slices(codes, 4, valid, table, 0, 0, 2)
    longs = np.arange(int(valid.sum()), dtype=np.int64)
    for values in (longs[:-1], longs[:600], np.append(longs, 7)):
        with pytest.raises(ValueError, match="one value per valid row"):
            kernel._kernels.column_slices(values, 8, valid, None, 0, 1, -1)


def test_column_slices_refuse_codes_outside_the_table_and_short_values() -> None:
    table = np.arange(3, dtype=np.int64)
    with pytest.raises(ValueError, match="outside the table"):
        kernel._kernels.column_slices(np.array([0, 3], np.int32), 4, None, table, 0, 0, 2)
    with pytest.raises(ValueError, match="outside the table"):
        kernel._kernels.column_slices(np.array([5, 4], np.int32), 4, None, table, 5, 0, 2)
    with pytest.raises(ValueError, match="outside the table"):
        kernel._kernels.column_slices(np.array([5], np.int64), 8, np.array([False, True]), table, 6, 0, 2)
    with pytest.raises(ValueError, match="one value per valid row"):
        kernel._kernels.column_slices(np.array([1, 2], np.int64), 8, np.array([True, True, True]), None, 0, 0, 2)
    with pytest.raises(ValueError, match="one value per valid row"):
        kernel._kernels.column_slices(np.array([1, 2], np.int64), 8, np.array([True, False, False]), None, 0, 0, 2)
    with pytest.raises(ValueError, match="outside low"):
        kernel._kernels.value_presence(np.array([3, 9], np.int16), 2, 3, 6)


@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=200) | st.lists(st.integers(-40, 40), min_size=1),
       st.sampled_from([np.int8, np.int16, np.int32, np.int64]))
@example([-2**63, 2**63 - 1], np.int64)
def test_value_presence_marks_the_values_that_occur(values: list[int], dtype: Any) -> None:
    info = np.iinfo(dtype)
    array = np.array([min(max(v, info.min), info.max) for v in values], dtype)
    low = int(array.min())
    span = min(int(array.max()) - low + 1, 1000)
    inside = [v - low for v in array.tolist() if v - low < span]
    expected = np.zeros(span, bool)
    expected[inside] = True
    if len(inside) < len(array):
        with pytest.raises(ValueError, match="outside low"):
            kernel._kernels.value_presence(array, array.itemsize, low, span)
    else:
        assert np.frombuffer(kernel._kernels.value_presence(array, array.itemsize, low, span), bool).tolist() \
            == expected.tolist()


@pytest.mark.parametrize("shape", ["sorted", "cyclic", "clustered", "skewed", "random", "distinct", "mostly_null"])
def test_large_shapes_equal_the_pyroaring_path(shape: str) -> None:
    """Past the hash table's 65536 keys and over many containers per key."""
    keys, valid = shaped_column(shape, 400_000, 100_000 if shape != "clustered" else 3_000, 7)
    values = np.ma.masked_array(keys, mask=~valid) if valid is not None else keys
    compiled = ps.build_index("bitmap", "BIGINT", values, version=1)
    with pytest.MonkeyPatch.context() as patch:
        for module in (roaring_writer, row_groups, bitmap_writer):     # sort, nulls, bitmaps in numpy
            patch.setattr(module, "_kernels", None)
        assert ps.build_index("bitmap", "BIGINT", values, version=1) == compiled


@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1]), max_size=3000)
       | shaped_columns(max_rows=70_000).map(lambda column: column[1].tolist()), st.integers(0, 3000))
@example(list(range(2000)) * 2, 2000)
@example([5], 0)
def test_number_rows_numbers_keys_by_first_occurrence(keys: list[int], limit: int) -> None:
    array = np.array(keys, np.uint64)
    distinct, first, inverse = np.unique(array, return_index=True, return_inverse=True)
    numbered = row_groups.number_rows(array, limit)
    if len(distinct) > limit:
        assert numbered is None
        return
    assert numbered is not None
    codes, keys_ = numbered
    by_first = np.argsort(first)
    rank = np.empty(len(distinct), np.int64)
    rank[by_first] = np.arange(len(distinct))
    np.testing.assert_array_equal(keys_, distinct[by_first])
    np.testing.assert_array_equal(codes, rank[inverse.ravel()])


@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1]), max_size=3000),
       st.integers(1, 3000), st.data())
@example([], 5, None)
@example([7] * 10, 1, None)
@example([1, 2], 1, None)                        # more keys than the limit: declined
@example(list(range(2000)) * 2, 2000, None)      # the table doubles past 512 keys, twice
def test_group_rows_equals_sorting(keys: list[int], limit: int, data: st.DataObject | None) -> None:
    every_row = data is None or not keys or data.draw(st.booleans())
    rows = np.arange(len(keys), dtype=np.int64)
    if not every_row:                              # ascending rows with gaps, as with NULLs
        assert data is not None
        rows = np.cumsum(np.array(data.draw(st.lists(st.integers(1, 5), min_size=len(keys),
                                                     max_size=len(keys))), np.int64))
    array = np.array(keys, dtype=np.uint64)
    result = group_rows(None if every_row else rows, array, limit)
    distinct = np.unique(array)
    if len(distinct) > limit:
        assert result is None
        return
    assert result is not None
    grouped = np.frombuffer(result.rows, np.uint32)
    assert result.keys.tolist() == distinct.tolist()
    for key, start, count, runs in zip(result.keys.tolist(), result.starts.tolist(), result.counts.tolist(),
                                       result.runs.tolist()):
        expected = rows[array == key]
        assert grouped[start:start + count].tolist() == expected.tolist()
        assert runs == bool((np.diff(expected) == 1).any())
    assert int(result.counts.sum()) == len(keys)


@pytest.mark.parametrize("distinct", [7, 70_000])       # the hash table, and past it the sort
def test_signed_grouping_equals_flipped_keys(distinct: int) -> None:
    """The bitmap writer hands int64 bits to `_group` unflipped (`signed`): the groups, their
    order and their keys equal those of the sign-flipped keys."""
    from paimon_schema.layouts.bitmap_index import writer

    rng = np.random.default_rng(distinct)
    keys = rng.integers(-2**63, 2**63 - 1, distinct, dtype=np.int64)
    values = np.concatenate([keys, keys[rng.integers(0, distinct, 30_000)]])     # every key present
    rng.shuffle(values)
    raw = values.view(np.uint64)
    signed = writer._group(len(values), None, raw, signed=True)
    flipped = writer._group(len(values), None, raw ^ np.uint64(1 << 63))
    assert signed.rows == flipped.rows
    for got, expected in zip(signed[1:], flipped[1:]):
        np.testing.assert_array_equal(got, expected)
    assert (signed.keys ^ np.uint64(1 << 63)).view(np.int64).tolist() == sorted(set(keys.tolist()))


#: The grouping keys `_group` takes: int64 bits handed unflipped (`signed`, integer kinds),
#: narrow unsigned codes (strings), and doubles' bits too wide for the packed sort.
_GROUPINGS = {"signed": lambda k: ((k * 7919 - 2**40).view(np.uint64), True),
              "codes": lambda k: (k.astype(np.uint64), False),
              "doubles": lambda k: (np.where(k % 97 == 5, -0.0, k / 8 - 3.5).view(np.uint64).copy(), False)}


@settings(max_examples=60, deadline=None)
@given(shaped_columns(max_rows=120_000), st.sampled_from(sorted(_GROUPINGS)))
def test_sorted_grouping_compiled_equals_numpy(column: tuple[str, np.ndarray, np.ndarray | None],
                                               grouping: str) -> None:
    """Past the hash table (its limit lowered to 0), the sort's packed array built and split in
    C (`pack_rows`, `split_packed`; doubles: the rank sort split in C) gives the groups numpy's
    passes give: rows, starts, counts, keys and adjacent rows, over every shape of column."""
    _, keys, valid = column
    bits, signed = _GROUPINGS[grouping](keys)
    rows = None if valid is None else np.flatnonzero(valid)
    present = bits if rows is None else bits[rows]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bitmap_writer, "LIMIT", 0)
        patch.setattr(row_groups, "_kernels", None)
        compiled = bitmap_writer._group(len(keys), rows, present, signed)
        patch.setattr(bitmap_writer, "_kernels", None)
        expected = bitmap_writer._group(len(keys), rows, present, signed)
    assert compiled.rows == expected.rows
    for got, want in zip(compiled[1:], expected[1:]):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 200_000), st.sampled_from([0.0, 0.001, 0.3, 0.5, 0.9, 0.999, 1.0]),
       st.sampled_from(["random", "runs", "alternate"]), st.integers(0, 2**32 - 1))
@example(4096, 1.0, "random", 0)            # a full array container
@example(4097, 1.0, "random", 0)
@example(65537, 1.0, "random", 0)           # a bitmap container, then one row
@example(8192 * 2 + 7, 0.5, "alternate", 0)   # one row in two: runs and array tie
def test_mask_bitmap_equals_pyroaring(rows: int, share: float, layout: str, seed: int) -> None:
    """The NULL rows' bitmap written from the validity bytes, a word at a time, equals
    pyroaring's run-optimized `BitMap` of the rows listed (array, bitmap and run containers,
    every share of NULLs, column lengths off the 64-row words), with their count and the first."""
    rng = np.random.default_rng(seed)
    if layout == "runs":                    # NULLs in runs of random length
        lengths = rng.integers(1, 300, rows + 1)
        flags = np.repeat(rng.random(len(lengths)) >= share, lengths)[:rows]
    elif layout == "alternate":
        flags = (np.arange(rows) % 2 == 1) | (rng.random(rows) >= share)
    else:
        flags = rng.random(rows) >= share
    missing = np.flatnonzero(~flags)
    expected = BitMap(missing.astype(np.uint32))
    expected.run_optimize()
    bitmap, count, first = kernel._kernels.mask_bitmap(np.ascontiguousarray(flags))
    assert bitmap == (expected.serialize() if len(missing) else b"")
    assert (count, first) == (len(missing), int(missing[0]) if len(missing) else -1)
    present, none = kernel._kernels.split_rows(np.ascontiguousarray(flags), False)
    assert np.frombuffer(present, np.int64).tolist() == np.flatnonzero(flags).tolist() and none == bytearray()


def test_packed_kernels_refuse_what_they_cannot_take() -> None:
    """`pack_rows` declines keys whose span leaves the rows no room and refuses rows past
    `row_bits`; `split_packed` refuses items that do not ascend (equal items included)."""
    keys = np.array([0, 2**62], np.uint64)
    assert kernel._kernels.pack_rows(keys, None, 0, 1) is not None
    assert kernel._kernels.pack_rows(keys, None, 0, 2) is None
    assert kernel._kernels.pack_rows(keys, None, 1 << 63, 2) is None     # flipped: a span of 2**63 + 2**62
    packed, least = kernel._kernels.pack_rows(np.array([9, 4], np.uint64), np.array([1, 6], np.int64), 0, 3)
    assert least == 4 and np.frombuffer(packed, np.uint64).tolist() == [5 << 3 | 1, 6]
    with pytest.raises(ValueError, match="row does not fit"):
        kernel._kernels.pack_rows(np.array([9, 4], np.uint64), np.array([1, 8], np.int64), 0, 3)
    with pytest.raises(ValueError, match="row does not fit"):
        kernel._kernels.pack_rows(np.zeros(9, np.uint64), None, 0, 3)
    with pytest.raises(ValueError, match="one int64 row"):
        kernel._kernels.pack_rows(np.zeros(2, np.uint64), np.zeros(3, np.int64), 0, 3)
    for items in ([1 << 3, 1 << 3], [2 << 3 | 1, 1 << 3 | 5]):
        with pytest.raises(ValueError, match="item 1 is not above"):
            kernel._kernels.split_packed(np.array(items, np.uint64), 3, array.array("I", [0, 0]))
    with pytest.raises(ValueError, match="one uint32 each"):
        kernel._kernels.split_packed(np.array([1, 2], np.uint64), 3, array.array("I", [0]))
    keys_, starts, counts, runs = kernel._kernels.split_packed(np.zeros(0, np.uint64), 3, array.array("I"))
    assert keys_ == starts == counts == runs == bytearray()


@given(st.lists(st.booleans(), max_size=3000), st.sampled_from([np.uint8, np.int16, np.int32, np.float64]))
def test_compress_and_split_rows_equal_numpy(valid: list[bool], dtype: type) -> None:
    flags = np.array(valid, bool)
    values = np.arange(len(flags)).astype(dtype)
    kept = np.frombuffer(kernel._kernels.compress(values, values.itemsize, flags), dtype)
    np.testing.assert_array_equal(kept, values[flags])
    present, missing = kernel._kernels.split_rows(flags)
    np.testing.assert_array_equal(np.frombuffer(present, np.int64), np.flatnonzero(flags))
    np.testing.assert_array_equal(np.frombuffer(missing, np.uint32), np.flatnonzero(~flags))
    with pytest.raises(ValueError, match="per validity byte"):
        kernel._kernels.compress(values, 3, flags)


@given(st.lists(st.binary(max_size=100), max_size=200))
def test_xxh64_each_equals_xxhash(items: list[bytes]) -> None:
    """Every length class of XXH64 (stripes of 32, words of 8 and 4, single bytes)."""
    hashes = np.frombuffer(kernel._kernels.xxh64_each(items), np.int64).tolist()
    assert hashes == [hashing.xxh64(item) for item in items]
    with pytest.raises(TypeError, match="not bytes"):
        kernel._kernels.xxh64_each(["text"])


def _numpy_bits(hashes: list[int], mix: bool, k: int, num_bits: int) -> np.ndarray:
    """The bit set numpy's path makes of `hashes` (ints, mixed if `mix`)."""
    bits = np.zeros((num_bits + 7) // 8, np.uint8)
    kernel.numpy_add(bits, np.array(hashes, np.int64), mix, k, num_bits)
    return bits


def _added(add: Any, values: Any, k: int, num_bits: int) -> tuple[Any, np.ndarray]:
    """What `add(bitset, values, k, num_bits)` answers, and the bit set it leaves."""
    bits = np.zeros((num_bits + 7) // 8, np.uint8)
    return add(bits, values, k, num_bits), bits


_K_BITS = (st.integers(1, 12), st.integers(1, 100_000))


@given(st.lists(st.none() | st.text(max_size=40), max_size=200), st.integers(0, 5), *_K_BITS)
def test_added_strings_equal_numpy(values: list[str | None], cut: int, k: int, num_bits: int) -> None:
    """Hashed from a list (strs as UTF-8: compact ASCII read in place, others through their
    cached UTF-8) and from Arrow's buffers (sliced, large offsets, chunked), straight into the
    bit set: the bits numpy's path sets for each non-null value's XXH64."""
    import pyarrow as pa

    values = [v for v in values if v is None or not any(0xD800 <= ord(c) < 0xE000 for c in v)]
    expected = _numpy_bits([hashing.xxh64(v.encode()) for v in values if v is not None], False, k, num_bits)
    binaries = [None if v is None else v.encode() for v in values]
    columns: list[tuple[bool, Any]] = [(True, values), (True, np.array(values + [0], dtype=object)[:-1]),
                                       (False, binaries), (False, pa.array(binaries, type=pa.binary()))]
    for arrow_type in (pa.string(), pa.large_string()):
        sliced = pa.array(["x"] * cut + values + ["y"], type=arrow_type)[cut:cut + len(values)]
        columns += [(True, sliced), (True, pa.chunked_array([sliced[:cut], sliced[cut:]], type=arrow_type))]
    for text, column in columns:
        added, bits = _added(lambda b, v, k_, n: kernel.add_strings(b, text, v, k_, n), column, k, num_bits)
        assert added
        np.testing.assert_array_equal(bits, expected)


@given(mostly_null_lists(st.text(alphabet="ab\x00é\u4e16\U0001f600", max_size=40)), st.integers(0, 130),
       st.data(), *_K_BITS)
def test_added_strings_of_mostly_null_columns_equal_numpy(values: list[str | None], cut: int, data: st.DataObject,
                                                          k: int, num_bits: int) -> None:
    """Long columns of mostly NULL from every input kind (a list, an object array, a strided
    one, a pandas Series with NaN and None, Arrow's buffers with its validity bitmap, read 64
    values a word, sliced at any bit): the bits of the present values; an untyped item
    anywhere declines a list, its bits cleared."""
    import pandas as pd
    import pyarrow as pa

    expected = _numpy_bits([hashing.xxh64(v.encode()) for v in values if v is not None], False, k, num_bits)
    nan_and_none = pd.Series([math.nan if v is None and i % 2 else v for i, v in enumerate(values)], dtype=object)
    binaries = [None if v is None else v.encode() for v in values]
    for text, column in ((True, values), (True, np.array(values + [0], dtype=object)[:-1]),
                         (True, np.array([v for v in values for _ in (0, 1)] + [0], dtype=object)[:-1][::2]),
                         (True, nan_and_none), (True, pa.array(values, type=pa.string())),
                         (True, pa.array([None, "x"] * cut + values + ["y"], type=pa.string())[2 * cut:-1]),
                         (False, binaries), (False, pa.array(binaries, type=pa.large_binary()))):
        added, bits = _added(lambda b, v, k_, n: kernel.add_strings(b, text, v, k_, n), column, k, num_bits)
        assert added
        np.testing.assert_array_equal(bits, expected)
    if values:
        at = data.draw(st.integers(0, len(values) - 1))
        added, bits = _added(lambda b, v, k_, n: kernel.add_strings(b, True, v, k_, n),
                             values[:at] + [math.nan] + values[at + 1:], k, num_bits)
        assert not added and not bits.any()


def test_added_strings_decline_what_the_typing_pass_reports() -> None:
    """Values that are not exactly str (bytes), lone surrogates and other Arrow types are left
    to `column_values` and the reference pass, with the bit set as it was given (all zero)."""
    import pyarrow as pa

    for values in (["a", b"b"], ["a", 1], ["a", True], ["\ud800"], pa.array(["a"]).dictionary_encode(),
                   (x for x in "ab")):
        added, bits = _added(lambda b, v, k, n: kernel.add_strings(b, True, v, k, n), values, 3, 64)
        assert not added and not bits.any()
    assert not kernel.add_strings(np.zeros(8, np.uint8), False, ["a"], 3, 64)
    with pytest.raises(ValueError, match="outside the data"):
        kernel._kernels.xxh64_offsets(np.array([0, 9], np.int32), 4, b"abc", 0, 1)
    with pytest.raises(ValueError, match="num_bits"):
        kernel._kernels.bloom_add_items(np.zeros(1, np.uint8), ["a"], "s", False, 3, 9)
    with pytest.raises(ValueError, match="kind"):
        kernel._kernels.bloom_add_items(np.zeros(1, np.uint8), ["a"], "x", False, 3, 8)


def test_added_strings_of_pandas_objects_skip_what_pandas_calls_missing() -> None:
    import pandas as pd

    series = pd.Series(["a", math.nan, None, pd.NA, "b", pd.NaT], dtype=object)
    added, bits = _added(lambda b, v, k, n: kernel.add_strings(b, True, v, k, n), series, 3, 1000)
    assert added
    np.testing.assert_array_equal(bits, _numpy_bits([hashing.xxh64(b"a"), hashing.xxh64(b"b")], False, 3, 1000))
    assert ps.build_index("bloom-filter", "STRING", series, items=10) == \
        ps.build_index("bloom-filter", "STRING", ["a", None, "b"], items=10)


_INT64 = st.integers(-2**63, 2**63 - 1)


@given(mostly_null_lists(_INT64 | st.sampled_from([0, -1, 2**31, -2**63, 2**63 - 1]))
       | st.lists(st.none() | _INT64, max_size=200).map(lambda v: [None, *v]) | st.lists(_INT64, max_size=50),
       *_K_BITS)
def test_added_ints_equal_numpy(values: list[int | None], k: int, num_bits: int) -> None:
    """A list's (or object array's) exact ints within int64, mixed and added as the items are
    read: the bits numpy's path sets for the typed column, and the extremes of its values."""
    present = [v for v in values if v is not None]
    expected = _numpy_bits(present, True, k, num_bits)
    for column in (values, np.array(values + [0], dtype=object)[:-1]):
        extremes, bits = _added(kernel.add_ints, column, k, num_bits)
        if None not in values[:4096] and values:      # few NULLs: left to the typed pass
            assert extremes is None and not bits.any()
            continue
        assert extremes == ((min(present), max(present)) if present else (0, 0))
        np.testing.assert_array_equal(bits, expected)


@pytest.mark.parametrize("values", [[None, 1, True], [None, 1, 2.0], [None, 2**63], [None, -2**63 - 1],
                                    [None, 1, "1"], [None, 1, math.nan], [1, 2],
                                    np.array([[1]], dtype=object), np.array([1, 2]), (1, 2)])
def test_added_ints_decline_anything_but_exact_int64s(values: Any) -> None:
    extremes, bits = _added(kernel.add_ints, values, 3, 64)
    assert extremes is None and not bits.any()


_DOUBLES = st.floats() | st.sampled_from([0.0, -0.0, math.nan, -math.nan, math.inf]) | _INT64


@given(mostly_null_lists(_DOUBLES) | st.lists(st.none() | _DOUBLES, max_size=200), *_K_BITS)
def test_added_doubles_equal_numpy(values: list[float | int | None], k: int, num_bits: int) -> None:
    """A list's (or object array's) exact floats and ints, added as the items are read: the
    bits numpy's path sets for the typed column (doubleToLongBits: one NaN, -0.0 apart)."""
    present = np.array([float(v) for v in values if v is not None], np.float64)
    expected = _numpy_bits(bloom_writer._long_keys(DataType.parse("DOUBLE"), present).tolist(), True, k, num_bits)
    for column in (values, np.array(values + [0], dtype=object)[:-1]):
        added, bits = _added(kernel.add_doubles, column, k, num_bits)
        assert added
        np.testing.assert_array_equal(bits, expected)
    for declined in ([1.0, True], [None, 2**63], [1.0, "1"], np.array([1.0])):
        added, bits = _added(kernel.add_doubles, declined, k, num_bits)
        assert not added and not bits.any()


def _equal_without_compiled_loops(build: Callable[[], bytes], *extensions: tuple[Any, str]) -> None:
    """`build`'s blob, or its SchemaError's message, is the same with the C extension's
    modules (`extensions`: module, attribute) switched off."""
    def blob_or_refusal() -> bytes | str:
        try:
            return build()
        except ps.SchemaError as exc:
            return str(exc)

    compiled = blob_or_refusal()
    with pytest.MonkeyPatch.context() as patch:
        for module, name in extensions:
            patch.setattr(module, name, None)
        assert blob_or_refusal() == compiled


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["STRING", "BYTES", "TINYINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP", "DOUBLE"]).flatmap(
    lambda data_type: st.tuples(st.just(data_type), mostly_null_lists(
        st.text(max_size=12) if data_type == "STRING" else st.binary(max_size=12) if data_type == "BYTES"
        else _DOUBLES if data_type == "DOUBLE"
        else st.integers(-2**31 - 2, 2**31 + 1) | st.integers(-3, 200) | _INT64, max_rows=9_000))))
def test_bloom_writer_equals_the_package_without_compiled_loops(column: tuple[str, list]) -> None:
    """The bloom filter of a list, hashed and added in one compiled pass over its items (ints
    out of the type's range fall back to the typed pass, which refuses them), equals the blob
    (or the refusal) of the package built without a C compiler."""
    data_type, values = column
    _equal_without_compiled_loops(
        lambda: ps.build_index("bloom-filter", data_type, values, items=5_000, fpp=0.05),
        (kernel, "_kernels"), (column_values, "_kernels"), (column_values, "_pylists"))


@given(st.binary(max_size=5000) | st.integers(0, 300_000).map(lambda n: np.random.default_rng(n).bytes(n)),
       st.integers(0, 2**32 - 1), st.integers(0, 15))
def test_crc32_equals_zlib(data: bytes, value: int, skip: int) -> None:
    """The library's CRC32 (ISA-L's, `runtime/crc.py`) equals zlib's for every length, starting
    value and buffer alignment: Paimon's checksums are zlib's."""
    import zlib
    from paimon_schema.runtime.crc import crc32
    view = memoryview(data)[min(skip, len(data)):]
    assert crc32(view, value) == zlib.crc32(view, value)
    assert crc32(data) == zlib.crc32(data)


def test_counts_whose_sizes_overflow_are_refused() -> None:
    """Counts so large that `first + count` or `count * 8` would wrap around are refused before
    any buffer is sized or read (they once passed the bounds check and read or wrote past it)."""
    with pytest.raises(ValueError, match="one past each value"):
        kernel._kernels.xxh64_offsets(np.array([0, 1], np.int32), 4, b"a", 2**63 - 2**61, 2**61)
    with pytest.raises(ValueError, match="a uint64 value per uint32 row"):
        kernel._kernels.serialize_slices(np.array([1, 2], np.uint32), np.ones(2, np.uint64), 2**61)


@given(st.lists(st.binary(max_size=40) | st.sampled_from([b"", "é日本".encode(), b"\x00" * 300]), max_size=200),
       st.integers(0, 2), st.integers(-2**31, 2**31 - 1))
def test_string_records_equal_numpy(keys: list[bytes], columns: int, base: int) -> None:
    """A bitmap index's string records written in C (`string_records`) are numpy's bytes and
    sizes, for empty, long and non-ASCII keys and negative columns; a key that is not bytes
    is refused."""
    codec = bitmap_writer.keys.bitmap_keys("STRING")
    values = [np.arange(len(keys), dtype=np.int64) * (c + 3) - base for c in range(columns)]
    compiled = bitmap_writer._records(codec, keys, *values)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bitmap_writer, "_kernels", None)
        expected = bitmap_writer._records(codec, keys, *values)
    assert compiled[0].tobytes() == expected[0].tobytes() and compiled[1].tolist() == expected[1].tolist()
    with pytest.raises(ValueError, match="not bytes"):
        kernel._kernels.string_records([*keys, "text"], ())


@settings(max_examples=150, deadline=None)
@given(string_key_sets(), st.integers(0, 3), st.sampled_from([40, 64, 100, 300, 16 * 1024]),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_v2_string_blocks_equal_the_numpy_path(keys: list[str], repeats: int, block_size: int, nulls: bool,
                                               seed: int) -> None:
    """Bitmap V2 of string keys built with the compiled sort and block writer (`kernels.c`
    v2_blocks) equals the blob of the numpy path, and so does the refusal of a key no block
    holds; every key once (only the sorted order) or some repeated (stored bitmaps)."""
    rng = np.random.default_rng(seed)
    values: list[str | None] = keys + [keys[i] for i in rng.integers(0, len(keys), repeats * len(keys)).tolist()]
    values += [None] * (nulls * 2)
    rng.shuffle(values)                                 # type: ignore[arg-type]
    _equal_without_compiled_loops(
        lambda: ps.build_index("bitmap", "STRING", values, version=2, index_block_size=block_size),
        (bitmap_writer, "_kernels"), (paimon_common, "_kernels"))


@given(string_key_sets(max_keys=300), st.integers(16, 200))
def test_v2_kernels_equal_python(keys: list[str], limit: int) -> None:
    """`v2_sort` is Python's (stable) sort of bytes; `v2_block_starts` is `_block_starts`; both
    on the same drawn keys."""
    encoded = [key.encode() for key in keys]
    order = np.frombuffer(kernel._kernels.v2_sort(encoded), np.int64)
    assert order.tolist() == sorted(range(len(encoded)), key=encoded.__getitem__)
    starts = kernel._kernels.v2_block_starts(encoded, order, limit)
    needed = 12 + np.array([len(encoded[i]) for i in order.tolist()], np.int64)
    expected = bitmap_writer._block_starts(needed, limit)
    assert (None if starts is None else np.frombuffer(starts, np.int64).tolist()) == \
        (None if expected is None else expected.tolist())


@settings(max_examples=300, deadline=None)
@given(byte_key_lists())
@example([b"a" * 8 + bytes([i % 3]) for i in range(100)] + [b"a" * 8, b"a" * 7 + b"\x00", b"a" * 7])
@example([b"x" * 520 + bytes([i % 5, i % 2]) for i in range(60)])         # 520 shared bytes skipped at once
@example([b"a" * k for k in range(300, -1, -1)] + [b"a" * 9] * 3)       # a chain of prefixes: compared whole
def test_the_compiled_key_sort_is_pythons(keys: list[bytes]) -> None:
    """`v2_sort` (bitmap V2's entries, range-bitmap codes) is Python's stable sort of bytes, in
    Java's order (unsigned bytes, a key before the longer keys it starts; equal keys by
    index), and `sorted_keys` gives that order and the keys in it."""
    expected = sorted(range(len(keys)), key=keys.__getitem__)
    assert np.frombuffer(kernel._kernels.v2_sort(keys), np.int64).tolist() == expected
    order, in_order = kernel._kernels.sorted_keys(keys)
    assert np.frombuffer(order, np.int64).tolist() == expected
    assert in_order == [keys[i] for i in expected]
    with pytest.MonkeyPatch.context() as patch:             # the path without the C extension
        patch.setattr(paimon_common, "_kernels", None)
        assert paimon_common.byte_order(keys).tolist() == expected


def test_v2_kernels_refuse_bad_indices() -> None:
    """Entry indices and block starts are checked before anything is read or written."""
    keys, one = [b"a", b"b"], np.zeros(2, np.int64)
    with pytest.raises(IndexError):
        kernel._kernels.v2_block_starts(keys, np.array([0, 2], np.int64), 100)
    with pytest.raises(IndexError):
        kernel._kernels.v2_blocks(keys, np.array([0, -1], np.int64), np.zeros(1, np.int64), one, one)
    with pytest.raises(IndexError):
        kernel._kernels.v2_blocks(keys, np.array([0, 1], np.int64), np.zeros(1, np.int64), one[:1], one[:1])
    with pytest.raises(ValueError, match="block starts"):
        kernel._kernels.v2_blocks(keys, np.array([0, 1], np.int64), np.array([0, 3], np.int64), one, one)
    with pytest.raises(ValueError, match="block starts"):
        kernel._kernels.v2_blocks(keys, np.array([0, 1], np.int64), np.array([1], np.int64), one, one)
    with pytest.raises(ValueError, match="int64"):
        kernel._kernels.v2_blocks(keys, b"\0" * 9, np.zeros(1, np.int64), one, one)
    with pytest.raises(TypeError):
        kernel._kernels.v2_sort([b"a", "b"])
    with pytest.raises(TypeError, match="sorted_keys"):
        kernel._kernels.sorted_keys([b"a", bytearray(b"b")])


@given(read_order_files())
def test_the_read_order_sorts_in_c_as_by_its_key(files: list) -> None:
    """`read_sorted` orders files as `sorted(files, key=read_order)` (ties kept in order),
    and declines keys that are not str and 64-bit ints, which Python then sorts."""
    expected = sorted(files, key=plan.read_order)
    assert [id(f) for f in plan._read_sorted(tuple(files))] == [id(f) for f in expected]
    numbers = [(f.bucket, f.first_row_id or 0, f.level, f.min_sequence_number) for f in files]
    plain = all(type(n) is int and -2**63 <= n < 2**63 for key in numbers for n in key) \
        and -2**63 not in [f.level for f in files]          # (negated, it would overflow)
    assert (plan._kernels.read_sorted(tuple(files)) is None) == (not plain)
    from unittest import mock

    # the positions in that order, as the filtered plan sorts the files it keeps
    assert [id(files[i]) for i in plan.read_permutation(tuple(files))] == [id(f) for f in expected]
    assert (plan._kernels.read_positions(tuple(files)) is None) == (not plain)
    with mock.patch.object(plan, "_kernels", None):
        assert [id(files[i]) for i in plan.read_permutation(tuple(files))] == [id(f) for f in expected]


def test_attributes_read_slots_as_getattr_does() -> None:
    """`attributes` reads object slots in place where the type reads them the generic way;
    a property over a slot, another type, a dict-backed object and an unset slot answer as
    getattr does."""
    from paimon_schema.runtime import _kernels

    class Slots:
        __slots__ = ("a", "b")

    class Overridden(Slots):
        __slots__ = ()

        @property                                   # type: ignore[override]
        def a(self) -> str:
            return "property"

    class Plain:
        def __init__(self) -> None:
            self.a, self.b = "plain", 2

    one, two = Slots(), Overridden()
    one.a, one.b = "slot", 1
    Slots.a.__set__(two, "hidden")                  # (the property hides it)
    two.b = 3
    objects = [one, two, Plain(), one]
    assert _kernels.attributes(objects, ("a", "b")) == (["slot", "property", "plain", "slot"], [1, 3, 2, 1])
    unset = Slots()
    unset.a = "x"
    with pytest.raises(AttributeError):
        _kernels.attributes([one, unset], ("b",))
    assert _kernels.attributes([], ("a",)) == ([],)


@given(coded_keys())
def test_value_codes_number_keys_as_the_python_loop(case: tuple[list, list[int] | None, bool]) -> None:
    """`value_codes` numbers keys (picked by position, or all) as `merge._value_codes`' loop
    does: by equality (1 and 1.0, equal bytes that are other objects share a number) or by
    identity, first seen first, with where each number first occurs; unhashable keys raise
    TypeError on both paths."""
    from unittest import mock

    from paimon_schema.table import merge

    keys, positions, identity = case
    try:
        codes, firsts = merge._value_codes(keys, positions, identity)
    except TypeError:
        with mock.patch.object(merge, "_kernels", None), pytest.raises(TypeError):
            merge._value_codes(keys, positions, identity)
        return
    with mock.patch.object(merge, "_kernels", None):
        expected_codes, expected_firsts = merge._value_codes(keys, positions, identity)
    assert codes.dtype == expected_codes.dtype == np.int32
    assert codes.tolist() == expected_codes.tolist() and firsts == expected_firsts
    picked = keys if positions is None else [keys[p] for p in positions]
    same = (lambda a, b: a is b) if identity else (lambda a, b: a == b)
    for code, key in zip(codes.tolist(), picked):
        assert same(picked[firsts[code]], key)
    assert sorted(set(codes.tolist())) == list(range(len(firsts))) == sorted(codes[firsts].tolist())


def test_value_codes_refuse_what_python_refuses() -> None:
    from paimon_schema.runtime import _kernels

    with pytest.raises(IndexError):
        _kernels.value_codes([1, 2], [2], False)
    with pytest.raises(IndexError):
        _kernels.value_codes([1, 2], [-3], False)
    with pytest.raises(TypeError):
        _kernels.value_codes([1, 2], ["0"], False)
    with pytest.raises(TypeError):
        _kernels.value_codes([1, 2], (0,), False)
    with pytest.raises(TypeError):
        _kernels.value_codes([[1]], None, False)
    assert _kernels.value_codes([], None, True) == (b"", [])


@given(file_paths())
def test_path_directories_are_each_directory_with_its_last_path(paths: list[str]) -> None:
    """`path_directories`: each path's `rpartition("/")[0]`, in first-seen order, with its
    last path's index, as the Python expression, or None where a path holds a `?`; the
    directories' paths resolve the plan's files as each path alone does (`merge._resolved`)."""
    from unittest import mock

    from paimon_schema.table import merge
    from paimon_schema.table.fileio import LocalFileIO

    got = merge._path_directories(paths)
    with mock.patch.object(merge, "_kernels", None):
        expected = merge._path_directories(paths)
    assert (got is None) == (expected is None) == ("?" in "".join(paths))
    assert list((got or {}).items()) == list((expected or {}).items())
    assert merge._kernels.path_directories(["a/b", "a/c?d", 1]) is None       # (not looked past)
    odd = ["a/", "a/b", "/x", "", "y", "a//b", "\u00e9/a", "\u00e9/b", "\U0001f600/c"]
    assert list(merge._kernels.path_directories(odd).items()) == [
        (path.rpartition("/")[0], max(i for i, other in enumerate(odd)
                                      if other.rpartition("/")[0] == path.rpartition("/")[0]))
        for path in dict.fromkeys(odd, None) if path in odd
        and odd.index(path) == min(i for i, other in enumerate(odd)
                                   if other.rpartition("/")[0] == path.rpartition("/")[0])]
    io = LocalFileIO()
    fileios, inner = merge._resolved(io, paths)
    resolved = [io.resolve(path) for path in paths]
    assert inner == [r for _, r in resolved]
    assert [f is io for f in fileios] == [f is io for f, _ in resolved]
    with pytest.raises(TypeError):
        merge._kernels.path_directories(["a/b", b"a/c"])
