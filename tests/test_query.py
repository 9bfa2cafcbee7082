"""Whole predicates over a container: never narrower than the truth, exact where the indexes are.

Truth follows Paimon's own predicate semantics: NULL never matches a comparison, values compare
with Java's `compareTo` (so -0.0 < 0.0 and NaN equals NaN), negation pushed to the leaves.
"""

from __future__ import annotations

import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap, BitMap64
from truth import holds

import paimon_schema as ps
from paimon_schema.query.predicate import And, Leaf, Or
from strategies import values_for

TYPES = {"i": "INT", "s": "STRING", "d": "DOUBLE", "b": "BIGINT"}
VALUES = {column: values_for(data_type) for column, data_type in TYPES.items()}
VALUES["b"] = VALUES["b"].filter(lambda v: v != -2**63)   # "b" has a BSI: Java refuses Long.MIN_VALUE
INDEXES = {  # which index types each column carries (BSI only supports integer-like columns)
    "i": ["bloom-filter", "bitmap", "bsi", "range-bitmap"],
    "b": ["bitmap", "bsi"],
    "s": ["bloom-filter", "bitmap", "range-bitmap"],
    "d": ["bitmap", "range-bitmap"],
}


def truth(predicate, table: dict[str, list], n: int) -> BitMap:
    if isinstance(predicate, And):
        return BitMap.intersection(*(truth(c, table, n) for c in predicate.children))
    if isinstance(predicate, Or):
        return BitMap.union(*(truth(c, table, n) for c in predicate.children))
    column = predicate.column
    return BitMap(r for r in range(n) if holds(predicate, table[column][r], TYPES[column]))


@st.composite
def tables(draw) -> dict[str, list]:
    n = draw(st.integers(0, 25))
    return {c: draw(st.lists(st.one_of(st.none(), VALUES[c]), min_size=n, max_size=n)) for c in TYPES}


@st.composite
def predicates(draw, depth: int = 2):
    column = draw(st.sampled_from(sorted(TYPES)))
    value = VALUES[column]
    leaf = draw(st.one_of(
        st.builds(lambda v: ps.col(column) == v, value),
        st.builds(lambda v: ps.col(column) != v, value),
        st.builds(lambda v: ps.col(column) < v, value),
        st.builds(lambda v: ps.col(column) <= v, value),
        st.builds(lambda v: ps.col(column) > v, value),
        st.builds(lambda v: ps.col(column) >= v, value),
        st.builds(lambda vs: ps.col(column).isin(vs), st.lists(value, min_size=1, max_size=3)),
        st.builds(lambda vs: ps.col(column).not_in(vs), st.lists(value, min_size=1, max_size=3)),
        st.just(ps.col(column).is_null()),
        st.just(ps.col(column).is_not_null()),
        st.builds(lambda a, b: ps.col(column).between(a, b), value, value),
    ))
    if depth == 0:
        return leaf
    return draw(st.one_of(
        st.just(leaf),
        st.builds(operator.and_, predicates(depth - 1), predicates(depth - 1)),
        st.builds(operator.or_, predicates(depth - 1), predicates(depth - 1)),
        st.builds(operator.invert, predicates(depth - 1)),
    ))


def container(table: dict[str, list], indexes: dict[str, list[str]]) -> bytes:
    return ps.write_file_index({
        c: {t: ps.build_index(t, TYPES[c], table[c], **({"items": 50} if t == "bloom-filter" else {}))
            for t in indexes[c]}
        for c in TYPES})


@settings(max_examples=60)
@given(tables(), predicates(), st.data())
def test_never_narrower_than_the_truth(table: dict[str, list], predicate, data) -> None:
    n = len(table["i"])
    result = ps.evaluate(container(table, INDEXES), predicate, TYPES)
    expected = truth(predicate, table, n)
    if not result.remain:
        assert not expected, f"skipped a file with matching rows {expected} for {predicate}"
    elif result.rows is not None:
        assert expected <= result.rows
    deleted = BitMap(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)))
    with_dv = ps.evaluate(container(table, INDEXES), predicate, TYPES, row_count=n, deletion_vector=deleted)
    if with_dv.remain:
        assert with_dv.rows is not None and (expected - deleted) <= with_dv.rows
        assert not (with_dv.rows & deleted)
    else:
        assert not (expected - deleted)


EXACT = {"i": ["range-bitmap"], "b": ["bsi"], "s": ["range-bitmap"], "d": ["range-bitmap"]}


@settings(max_examples=60)
@given(tables(), predicates())
def test_exact_indexes_give_exactly_the_truth(table: dict[str, list], predicate) -> None:
    """Range-bitmap and BSI answer every leaf exactly, so the combination is the truth."""
    n = len(table["i"])
    result = ps.evaluate(container(table, EXACT), predicate, TYPES, row_count=n, deletion_vector=BitMap())
    expected = truth(predicate, table, n)
    assert (result.rows if result.remain else BitMap()) == expected


def _bitmap_and_bloom(values: list) -> bytes:
    return ps.write_file_index({"a": {"bitmap": ps.build_index("bitmap", "INT", values)},
                                "b": {"bloom-filter": ps.build_index("bloom-filter", "INT", values, items=10)}})


def test_or_of_a_bitmap_and_a_remain_keeps_the_file() -> None:
    """Java ANDs here (its OR fallback) and would skip a file holding b = 3."""
    fi = _bitmap_and_bloom([1, 2, 3])
    result = ps.evaluate(fi, (ps.col("a") == 99) | (ps.col("b") == 3), {"a": "INT", "b": "INT"})
    assert result.remain and result.rows is None


def test_negation_is_pushed_to_the_leaves() -> None:
    predicate = ~((ps.col("a") == 1) & ps.col("b").isin([1, 2]))
    assert predicate == Or((Leaf("not_equal", "a", (1,)), Leaf("not_in", "b", (1, 2))))
    assert ~ps.col("a").is_null() == Leaf("is_not_null", "a")
    assert ~(ps.col("a") < 3) == Leaf("greater_or_equal", "a", (3,))
    fi = _bitmap_and_bloom([1, 1, None])
    # ~(a = 1): bitmap's != includes the null row, as Java; never a complement of a REMAIN
    assert ps.evaluate(fi, ~(ps.col("a") == 1), {"a": "INT", "b": "INT"}).rows == BitMap([2])
    assert ps.evaluate(fi, ~(ps.col("b") == 5), {"a": "INT", "b": "INT"}).remain


def test_an_and_or_an_or_of_nothing() -> None:
    """An AND of no children holds for every row, an OR of none for no row (a negated empty
    AND is one); both once raised TypeError from `reduce` where a container was parsed."""
    fi = _bitmap_and_bloom([1, 1, None])
    row_type = {"a": "INT", "b": "INT"}
    assert ps.evaluate(fi, And(()), row_type).remain and ps.evaluate(fi, And(()), row_type).rows is None
    assert not ps.evaluate(fi, Or(()), row_type).remain
    assert not ps.evaluate(fi, ~And(()), row_type).remain
    assert ps.evaluate(fi, Or((Or(()), ps.col("a") == 1)), row_type).rows == BitMap([0, 1])


def test_empty_index_entry_behaves_like_javas_empty_reader() -> None:
    fi = ps.write_file_index({"m[k]": {"bitmap": None}})
    row_type = {"m[k]": "INT"}
    skips = [ps.col("m[k]") == 1, ps.col("m[k]").is_not_null(), ps.col("m[k]") < 1,
             ps.col("m[k]").isin([1]), ps.col("m[k]").between(1, 2)]
    remains = [ps.col("m[k]").is_null(), ps.col("m[k]") != 1, ps.col("m[k]").not_in([1])]
    assert all(not ps.evaluate(fi, p, row_type).remain for p in skips)
    assert all(ps.evaluate(fi, p, row_type).remain for p in remains)


def test_empty_entry_of_unknown_index_type_skips_like_java() -> None:
    # FileIndexFormat.Reader returns EmptyFileIndexReader for offset -1 before it looks up the
    # index type, so an empty entry answers even for a type no reader knows, and needs no type.
    fi = ps.write_file_index({"a": {"my-index": None}})
    assert ps.evaluate(fi, ps.col("a") == 1, {}) == ps.IndexResult(remain=False)
    assert ps.evaluate(fi, ps.col("a").isin([1, 2]), {}) == ps.IndexResult(remain=False)
    assert ps.evaluate(fi, ps.col("a") != 1, {}).remain
    assert ps.evaluate(fi, ps.col("a").is_null(), {}).remain
    # next to a known index, the empty entry still decides
    mixed = ps.write_file_index({"a": {"bitmap": ps.build_index("bitmap", "INT", [1, 2]),
                                       "my-index": None}})
    assert not ps.evaluate(mixed, ps.col("a") == 1, {"a": "INT"}).remain


def test_unindexed_columns_and_unknown_index_types_remain() -> None:
    fi = ps.write_file_index({"a": {"my-index": b"\x00"}})
    assert ps.evaluate(fi, ps.col("a") == 1, {"a": "INT"}).remain
    assert ps.evaluate(fi, ps.col("zzz") == 1, {"a": "INT"}).remain


def test_deletion_vectors() -> None:
    fi = ps.write_file_index({"a": {"bitmap": ps.build_index("bitmap", "INT", [1, 1, 2, 1])}})
    row_type = {"a": "INT"}
    assert ps.evaluate(fi, ps.col("a") == 1, row_type, row_count=4, deletion_vector=[0]).rows == BitMap([1, 3])
    assert not ps.evaluate(fi, ps.col("a") == 2, row_type, row_count=4, deletion_vector=BitMap([2])).remain
    # a 64-bit vector makes Java bypass the indexes
    assert ps.evaluate(fi, ps.col("a") == 2, row_type, row_count=4, deletion_vector=BitMap64([2])) \
        == ps.IndexResult(remain=True)
    with pytest.raises(ps.SchemaError):
        ps.evaluate(fi, ps.col("a") == 1, row_type, deletion_vector=[0])


def test_top_n_with_a_deletion_vector() -> None:
    values = [5, 3, None, 9, 1, 7]
    fi = ps.write_file_index({"a": {"range-bitmap": ps.build_index("range-bitmap", "INT", values)}})
    row_type = {"a": "INT"}
    assert ps.top_n(fi, "a", 2, row_type).rows == BitMap([1, 4])
    assert ps.top_n(fi, "a", 2, row_type, ascending=False).rows == BitMap([3, 5])
    assert ps.top_n(fi, "a", 2, row_type, row_count=6, deletion_vector=[4]).rows == BitMap([0, 1])
    assert ps.top_n(fi, "a", 1, row_type, nulls_first=True).rows == BitMap([2])
    assert ps.top_n(ps.write_file_index({"a": {"bitmap": ps.build_index("bitmap", "INT", values)}}),
                    "a", 2, row_type).rows is None
