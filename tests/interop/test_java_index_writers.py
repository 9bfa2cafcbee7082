"""Our bitmap (V1) and bloom-filter writers against Java's, over randomized columns of every
type the jar (Paimon 1.0-SNAPSHOT) writes them for: for the same input our bytes are Java's
bytes, through the vectorized layout pass (lists and numpy arrays) and through the per-row
reference pass with the generated codec; and Java's readers answer every predicate over our
blobs exactly as over their own.

Two JVM batches for the module: Java writes every blob, then Java answers every predicate over
its blob and over ours. The columns come from the generators of test_java_bitmap.py and
test_java_bloom.py (nulls, singletons, zero rows, all-null, non-ASCII and supplementary
strings, +-0.0 and NaN payloads, extreme integers, timestamps inside one microsecond), with
other seeds, plus columns of more than 65536 rows. The jar writes no BOOLEAN bitmap and no
bitmap V2 (those are proven against Java-written fixtures in test_bitmap_writer.py).

The second half (no JVM) is the Hypothesis proof of the fast writers: the vectorized bitmap
layout pass equals the per-row reference pass (layouts and bytes, both writers), and the
range-bitmap fast writer equals the generated codec, over every key kind, nulls, block and
chunk sizes. (These would sit better in tests/test_bitmap_writer.py and
tests/test_range_bitmap.py.)
"""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import pytest
import test_java_bitmap as bitmap_cases
import test_java_bloom as bloom_cases
from hypothesis import example, given
from hypothesis import strategies as st

import paimon_schema as ps
from paimon_schema.layouts.range_bitmap import writer as range_bitmap
from paimon_schema.layouts.bitmap_index import BitmapIndexReader
from paimon_schema.layouts.bitmap_index.writer import (
    row_layout,
    serialize_bitmaps,
    vector_layout,
    write_layout,
)
from paimon_schema.layouts.bitmap_index.writer import write_with_codec
from paimon_schema.values.positions import fresh_bitmap
import strategies
from strategies import values_for

SEED = 20261124
BIG = 70_000          # rows: more than 65536, several roaring containers per key
BIG_PREDICATES = 12   # per big column (Java re-reads a V1 dictionary for every predicate)


def _bitmap_cases() -> list[tuple[str, list]]:
    """(data type, column of (Java value, our value) pairs or None) per case."""
    rng = random.Random(SEED)
    cases = []
    for data_type, pool_of in bitmap_cases.POOLS.items():
        pool = pool_of(rng)
        for shape in ["mixed", "mixed", "singletons"]:
            cases.append((data_type, bitmap_cases._column(rng, pool, shape)))
    for data_type, shape in [("INT", "empty"), ("STRING", "empty"), ("STRING", "all-null"),
                             ("DOUBLE", "all-null"), ("BIGINT", "big"), ("STRING", "big"),
                             ("FLOAT", "big")]:
        cases.append((data_type, bitmap_cases._column(rng, bitmap_cases.POOLS[data_type](rng), shape)))
    # every row its own key (all singletons) and a dense column without nulls
    cases.append(("INT", [(v, v) for v in rng.sample(range(-2**31, 2**31), BIG)]))
    cases.append(("SMALLINT", [(v, v) for v in (rng.randint(-5, 5) for _ in range(BIG))]))
    return cases


def _bloom_cases() -> list[bloom_cases.Case]:
    rng = random.Random(SEED)
    cases = [bloom_cases._case(rng, t, i) for t in bloom_cases.GENERATORS
             for i in range(bloom_cases.CASES_PER_TYPE)]
    big = [None if rng.random() < 0.05 else rng.randint(-2**63, 2**63 - 1) for _ in range(BIG)]
    cases.append(bloom_cases.Case("BIGINT", big, {"items": 50_000, "fpp": 0.03},
                                  [("equal", v) for v in big[:20] + [1, 2, 3]]))
    strings = [bloom_cases._strings(rng) for _ in range(BIG)]
    cases.append(bloom_cases.Case("STRING", strings, {"items": 1000, "fpp": 0.2},
                                  [("equal", v) for v in strings[:20] + ["absent", ""]]))
    return cases


def _java_predicate(kind: str, java: object) -> tuple:
    return (kind,) if kind in ("is_null", "is_not_null") else (kind, java)


@pytest.fixture(scope="module")
def exchange(java_reference):
    bitmaps = _bitmap_cases()
    blooms = _bloom_cases()
    ours_bitmap = [ps.build_index("bitmap", t, [None if c is None else c[1] for c in column], version=1)
                   for t, column in bitmaps]
    ours_bloom = [ps.build_index("bloom-filter", c.data_type,
                                 [bloom_cases.ours(c.data_type, v) for v in c.values], **c.options)
                  for c in blooms]
    with java_reference.batch() as batch:
        java_bitmap = [batch.build_index("bitmap", t, [None if c is None else c[0] for c in column],
                                         version=1) for t, column in bitmaps]
        java_bloom = [batch.build_index("bloom-filter", c.data_type, c.values, **c.options)
                      for c in blooms]
    java_bitmap = [p.result() for p in java_bitmap]
    java_bloom = [p.result() for p in java_bloom]

    # Java's reader is a function of the bytes: where ours equal Java's, one query answers for
    # both blobs; where they differ (a failure anyway), both are queried.
    rng = random.Random(SEED + 1)
    pools = {t: bitmap_cases.POOLS[t](random.Random(SEED + 2)) for t in bitmap_cases.POOLS}
    predicates = [bitmap_cases._predicates(rng, column, pools[t])[:BIG_PREDICATES if len(column) > 5000 else None]
                  for t, column in bitmaps]
    with java_reference.batch() as batch:
        answers_bitmap = [
            [batch.query_index("bitmap", t, blob, [_java_predicate(k, j) for k, j, _ in preds])
             for blob in dict.fromkeys((java_blob, our_blob))]
            for (t, _), preds, java_blob, our_blob in zip(bitmaps, predicates, java_bitmap, ours_bitmap)]
        answers_bloom = [
            [batch.query_index("bloom-filter", c.data_type, blob, c.predicates)
             for blob in dict.fromkeys((java_blob, our_blob))]
            for c, java_blob, our_blob in zip(blooms, java_bloom, ours_bloom)]
    def both(answers: list) -> list:        # (over Java's blob, over ours)
        results = [a.result() for a in answers]
        return results * 2 if len(results) == 1 else results

    return {
        "bitmap": [(t, column, preds, ours, java, both(answers))
                   for (t, column), preds, ours, java, answers
                   in zip(bitmaps, predicates, ours_bitmap, java_bitmap, answers_bitmap)],
        "bloom": [(c, ours, java, both(answers))
                  for c, ours, java, answers in zip(blooms, ours_bloom, java_bloom, answers_bloom)],
    }


def test_cases_cover_what_the_brief_asks(exchange) -> None:
    bitmaps, blooms = exchange["bitmap"], exchange["bloom"]
    assert {t for t, *_ in bitmaps} == set(bitmap_cases.POOLS)
    assert {c.data_type for c, *_ in blooms} == set(bloom_cases.GENERATORS)
    assert any(len(column) > 65536 for _, column, *_ in bitmaps)
    assert {kind for _, _, preds, *_ in bitmaps for kind, *_ in preds} == set(bitmap_cases.METHODS)
    assert any(len(c.values) > 65536 for c, *_ in blooms)
    assert any(not column for _, column, *_ in bitmaps) and any(not c.values for c, *_ in blooms)
    assert len({(c.options.get("items"), c.options.get("fpp")) for c, *_ in blooms}) > 10


def test_bitmap_v1_bytes_equal_javas(exchange) -> None:
    for data_type, column, _, ours, java, _ in exchange["bitmap"]:
        assert ours == java, (data_type, len(column))
        if len(column) > 5000:     # the codec takes seconds per 10k keys; Hypothesis covers it
            continue
        values = [None if c is None else c[1] for c in column]
        reference = row_layout(data_type, values, version=1)
        assert write_with_codec(reference) == java
        assert vector_layout(data_type, values, version=1) in (None, reference)


def test_bitmap_v1_from_numpy_equals_javas(exchange) -> None:
    """Columns without nulls as numpy arrays (the vectorized pass's own input)."""
    checked = 0
    for data_type, column, _, _, java, _ in exchange["bitmap"]:
        if not column or None in column or data_type in ("STRING", "VARCHAR(10)", "CHAR(4)"):
            continue
        values = [c[1] for c in column]
        array = np.array(values, dtype=np.float32 if data_type == "FLOAT" else
                         np.float64 if data_type == "DOUBLE" else np.int64)
        assert vector_layout(data_type, array, version=1) is not None, data_type
        assert ps.build_index("bitmap", data_type, array, version=1) == java, data_type
        checked += 1
    assert checked >= 5


def test_java_reads_our_bitmaps_as_its_own(exchange) -> None:
    """... and as our reader reads them (test_java_bitmap.py proves that for Java's blobs)."""
    checked = 0
    for data_type, _, preds, ours, _, (over_java, over_ours) in exchange["bitmap"]:
        assert over_ours == over_java, data_type
        reader = BitmapIndexReader.open(ours, data_type)
        for (kind, _, value), java in zip(preds, over_ours, strict=True):
            method = getattr(reader, bitmap_cases.METHODS[kind])
            result = method() if kind in ("is_null", "is_not_null") else method(value)
            assert result == bitmap_cases._java_result(java), (data_type, kind, value)
            checked += 1
    assert checked > 1000


def test_bloom_bytes_equal_javas(exchange) -> None:
    for case, ours, java, _ in exchange["bloom"]:
        assert ours == java, (case.data_type, case.options, len(case.values))


def test_java_reads_our_blooms_as_its_own(exchange) -> None:
    skips = 0
    for case, _, _, (over_java, over_ours) in exchange["bloom"]:
        assert over_ours == over_java, (case.data_type, case.options)
        skips += sum(r.kind == "skip" for r in over_ours)
    assert skips > 300


# ---------------------------------------------------------------------------------------------
# The fast writers equal the reference writers (Hypothesis; no JVM)

VALUES = {t: values_for(t) for t in ("INT", "BIGINT", "TINYINT", "SMALLINT", "DATE", "TIME", "TIMESTAMP(3)",
                                      "TIMESTAMP_LTZ(6)", "BOOLEAN", "DOUBLE", "FLOAT", "STRING", "VARCHAR(3)")}
# A FLOAT column also takes doubles, rounded to float32 as Java's `(float)` does (3.4e39 -> inf).
VALUES["FLOAT"] = VALUES["FLOAT"] | st.floats() | st.just(3.4e39)
BLOCK_SIZES = st.sampled_from([16, 17, 20, 21, 24, 28, 29, 64, 100, 16 * 1024])
CHUNK_SIZES = st.sampled_from([0, 1, 4, 7, 8, 12, 16, 24, 64, 16 * 1024])


def columns(values: dict[str, st.SearchStrategy] = VALUES) -> st.SearchStrategy:
    """(type, column): few or many distinct values, nulls or none, up to a few hundred rows
    (sometimes runs of rows with one key, so run containers appear)."""
    return strategies.columns(values, max_pool=60, max_rows=300, runs=True,
                              distinct_edges=(13, 25, 49)).map(strategies.pairs)


def _numpy(data_type: str, column: list) -> np.ndarray | None:
    """The column as a numpy array, when it has no nulls and a numeric type."""
    if None in column or data_type.startswith(("STRING", "VARCHAR")):
        return None
    dtype = {"BOOLEAN": np.bool_, "DOUBLE": np.float64, "FLOAT": np.float64}.get(data_type, np.int64)
    if dtype is np.int64 and data_type in ("INT", "DATE", "TIME") and column:
        dtype = np.int32
    return np.array(column, dtype=dtype)


@given(columns(), st.sampled_from([1, 2]), BLOCK_SIZES)
@example(("INT", [1, 2, None, 1, 3, None, 2, 7]), 2, 16)
@example(("INT", [1, 2, 3]), 2, 28)                        # two 12-byte entries fill 28 exactly
@example(("INT", [1, 2, 3]), 2, 27)                        # ... one byte short
@example(("STRING", ["a", "b", "a", "ccc", None, "é"]), 2, 24)
@example(("STRING", ["aa", "b", "c"]), 2, 17)              # 4 + 13 = 17: one entry per block
@example(("STRING", ["aaaaaaaaaaaaaaaaaaaa", "b"]), 2, 30)  # does not fit: the reference raises
@example(("INT", []), 1, 16 * 1024)
@example(("INT", [None]), 2, 16 * 1024)
@example(("INT", [None, None]), 1, 16 * 1024)
@example(("INT", [0, 1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192] * 2), 2, 64)   # tree bins
@example(("INT", [0, 17, 2, 19, 4, 21, 6, 23, 8, 25, 10, 27, 12, 0]), 1, 16 * 1024)  # pending resize
@example(("INT", [7] * 4097 + [8] * 4096 + [None] * 3), 1, 16 * 1024)   # 4097 / 4096 values
@example(("BIGINT", [-2**63, 2**63 - 1, -2**63]), 2, 16 * 1024)          # the span needs 64 bits
@example(("DOUBLE", [0.0, -0.0, math.nan, -math.nan, None, 0.0, -0.0]), 2, 20)
@example(("FLOAT", [3.4e39, math.inf, 1e-46, -0.0]), 2, 16 * 1024)
@example(("BOOLEAN", [True, False, None, True]), 2, 16)
def test_vector_layout_equals_row_layout(column, version: int, block_size: int) -> None:
    data_type, values = column
    try:
        reference = row_layout(data_type, values, version=version, index_block_size=block_size)
    except ps.SchemaError:
        assert vector_layout(data_type, values, version=version, index_block_size=block_size) is None
        return
    inputs = [values] + ([array] if (array := _numpy(data_type, values)) is not None else [])
    for given_values in inputs:
        fast = vector_layout(data_type, given_values, version=version, index_block_size=block_size)
        assert fast is not None, (data_type, type(given_values))
        assert fast == reference
        assert [type(e.key) for e in fast.entries] == [type(e.key) for e in reference.entries]
        assert write_layout(fast) == write_with_codec(reference)


def test_vector_layout_declines_what_it_cannot_represent() -> None:
    """The reference reports these (SchemaError); the vectorized pass leaves them to it."""
    for data_type, values in [("INT", [2**31]), ("INT", [True]), ("TIME", [-1]), ("INT", [1.5]),
                              ("BOOLEAN", [1]), ("STRING", [b"x"]), ("STRING", ["\ud800"]),
                              ("INT", np.array([2**40])), ("SMALLINT", np.array([1.0])),
                              ("TINYINT", np.array([2**7])), ("BIGINT", [2**63])]:
        assert vector_layout(data_type, values) is None, (data_type, values)
        with pytest.raises(ps.SchemaError):
            ps.build_index("bitmap", data_type, values)
    # valid, but numpy scalars in a list: the per-row pass takes them
    for data_type, values in [("TIMESTAMP(3)", [np.int64(5)]), ("INT", [np.int32(1), 2])]:
        assert vector_layout(data_type, values) is None
        assert ps.build_index("bitmap", data_type, values) == write_with_codec(row_layout(data_type, values))
    # ints and floats in a DOUBLE column: typed in bulk (float(int) rounds as numpy's cast does)
    for data_type, values in [("DOUBLE", [1, 2.5]), ("FLOAT", [2**53 + 1, 0.1])]:
        assert write_layout(vector_layout(data_type, values)) == write_with_codec(row_layout(data_type, values))


@given(st.lists(st.lists(st.integers(0, 300_000), min_size=2, max_size=400), max_size=6),
       st.booleans())
@example([list(range(4096)), list(range(4097)), list(range(0, 8192, 2))], False)
@example([list(range(70_000)), [0, 65535, 65536, 131072]], True)
def test_serialize_bitmaps_equals_fresh_bitmaps(sets: list[list[int]], runs: bool) -> None:
    if runs:
        sets = [sorted({v + d for v in s for d in range(3)}) for s in sets]
    sets = [sorted(set(s)) for s in sets]
    rows = np.array([v for s in sets for v in s], np.uint32)
    body, lengths = serialize_bitmaps(rows, np.array([len(s) for s in sets], np.int64))
    expected = [fresh_bitmap(np.array(s, np.uint64)).serialize() for s in sets]
    assert body == b"".join(expected)
    assert lengths.tolist() == [len(e) for e in expected]


RANGE_VALUES = {**{t: VALUES[t] for t in ("INT", "BIGINT", "TINYINT", "SMALLINT", "DATE", "TIME",
                                           "TIMESTAMP(3)", "BOOLEAN", "DOUBLE", "FLOAT", "STRING",
                                           "VARCHAR(3)")},
                "DECIMAL(10, 2)": values_for("DECIMAL(10, 2)")}


def _nan_payloads(data_type: str, column: list) -> list:
    """Some NaNs with payloads (the range-bitmap keeps raw bits; the first NaN wins)."""
    if data_type != "DOUBLE":
        return column
    payload = struct.unpack(">d", bytes.fromhex("7ff0000000000123"))[0]
    return [payload if isinstance(v, float) and math.isnan(v) and i % 2 else v
            for i, v in enumerate(column)]


@given(columns(RANGE_VALUES), CHUNK_SIZES)
@example(("INT", [10, 30, None, 20, 10, 40]), 8)
@example(("STRING", ["b", "a", "dd", None, "c", "a"]), 12)
@example(("STRING", ["aaaaaaaaaaaaaaaaaaaaaaaaaaaa", "b", "c"]), 8)    # keys larger than a chunk
@example(("INT", []), 16 * 1024)
@example(("INT", [None, None]), 16)
@example(("DOUBLE", [math.nan, 0.0, -0.0, -math.nan, math.inf, None]), 8)
@example(("INT", [(i * 7919) % 5000 - 2500 for i in range(BIG)]), 16 * 1024)   # > 65536 rows, chunks
def test_range_bitmap_fast_writer_equals_codec(column, chunk_size: int) -> None:
    data_type, values = column
    values = _nan_payloads(data_type, values)
    try:
        reference = range_bitmap.write_with_codec(data_type, values, chunk_size=chunk_size)
    except ps.SchemaError:
        with pytest.raises(ps.SchemaError):
            range_bitmap.build_range_bitmap(data_type, values, chunk_size=chunk_size)
        return
    assert range_bitmap.build_range_bitmap(data_type, values, chunk_size=chunk_size) == reference
    if (array := _numpy(data_type, values)) is not None and not data_type.startswith("DECIMAL"):
        assert range_bitmap._vector_codes(range_bitmap.range_bitmap_keys(data_type), array) is not None
        assert range_bitmap.build_range_bitmap(data_type, array, chunk_size=chunk_size) == reference
