"""The Hypothesis strategies shared by the tests: values of a Paimon data type, and columns.

`values_for(data_type)` draws non-null values as the writers take them (temporal types as their
raw index-key integers, DECIMAL as numbers): a few small values that repeat, so that keys
collide and predicates hit; the type's edge cases (extremes, -0.0, NaN, infinities, empty and
non-BMP strings); and the whole range of the type. `columns(values)` draws whole columns from
such values: a small pool of keys repeated over the rows, with none, some or only NULLs
(test_strategies.py checks they do draw NaN, -0.0, repeated keys and NULLs);
`shaped_columns()` draws whole columns in the shapes tables hold (sorted, cyclic, clustered,
skewed, ...), for the bulk writers; `mostly_null_lists(items)` long lists of mostly None, for
the compiled passes that set NULLs aside a block of rows at a time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from hypothesis import strategies as st

from paimon_schema.values.types import INTEGER_BOUNDS, DataType

SPECIAL_FLOATS = [0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1.5, -1.5]
#: Characters of 1 to 4 UTF-8 bytes, and NUL (Java's modified UTF-8 writes it on 2 bytes).
ALPHABET = "ab\x00é\u4e16\U0001f600"


def values_for(data_type: str | DataType) -> st.SearchStrategy:
    """Values of `data_type` (never None: mix in `st.none()` for nulls)."""
    dtype = DataType.parse(data_type)
    root = dtype.root
    if root == "BOOLEAN":
        return st.booleans()
    if root in INTEGER_BOUNDS:
        low, high = INTEGER_BOUNDS[root]
        edges = sorted({v for v in (low, high, 0, 1, -1, 1024, 65536, low + 1, high - 1) if low <= v <= high})
        return st.integers(max(low, -5), min(high, 5)) | st.sampled_from(edges) | st.integers(low, high)
    if root == "FLOAT":
        return st.sampled_from(SPECIAL_FLOATS) | st.floats(width=32)
    if root == "DOUBLE":
        return st.sampled_from(SPECIAL_FLOATS) | st.floats()
    if dtype.is_string:
        size = min(dtype.length or 5, 5)
        return st.sampled_from(["", "a", "é", "\U0001f600", "\x00"][:1 + size]) | st.text(ALPHABET, max_size=size)
    if dtype.is_binary:
        size = min(dtype.length or 5, 5)
        return st.binary(max_size=size)
    if root == "DECIMAL":
        assert dtype.precision is not None and dtype.scale is not None
        bound = 10 ** (dtype.precision - dtype.scale) - 1
        return st.integers(-5, 5) | st.integers(-bound, bound)
    raise ValueError(f"no value strategy for {data_type}")


#: The shapes of a column that index builds meet in tables (`shaped_column`).
SHAPES = ("random", "sorted", "cyclic", "clustered", "skewed", "distinct", "mostly_null")


def shaped_column(shape: str, rows: int, distinct: int, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A column of `rows` int64 keys in `[0, distinct)` laid out as `shape`, and its validity
    (None: no NULL): random; sorted (each key's rows one run); cyclic (row i = i % distinct:
    each key's rows spread over every container); clustered (runs of random length and key);
    skewed (Zipf); distinct (a permutation of the rows); mostly_null (random, 90 % NULL)."""
    rng = np.random.default_rng(seed)
    distinct = max(1, distinct)
    valid = None
    if shape == "sorted":
        keys = np.sort(rng.integers(0, distinct, rows))
    elif shape == "cyclic":
        keys = np.arange(rows) % distinct
    elif shape == "clustered":
        lengths = rng.integers(1, 2 * max(1, rows // max(1, distinct)) + 2, rows + 1)
        ends = np.cumsum(lengths)
        runs = int(np.searchsorted(ends, rows)) + 1
        keys = np.repeat(rng.integers(0, distinct, runs), lengths[:runs])[:rows]
    elif shape == "skewed":
        keys = (rng.zipf(1.3, rows) - 1) % distinct
    elif shape == "distinct":
        keys = rng.permutation(rows)
    else:
        keys = rng.integers(0, distinct, rows)
        if shape == "mostly_null":
            valid = rng.random(rows) >= 0.9
    return keys.astype(np.int64), valid


def shaped_columns(max_rows: int = 200_000) -> st.SearchStrategy:
    """(shape, keys, validity) of `shaped_column`, rows and distinct keys drawn: small, and
    past a roaring container (65536 rows), with keys dense enough for bitmap and run containers."""
    return st.builds(lambda shape, rows, distinct, seed: (shape, *shaped_column(shape, rows, distinct, seed)),
                     st.sampled_from(SHAPES),
                     st.integers(0, 300) | st.integers(60_000, max_rows),
                     st.sampled_from([1, 2, 3, 10, 100, 1000]) | st.integers(1, 100_000),
                     st.integers(0, 2**32 - 1))


def mostly_null_lists(items: st.SearchStrategy, max_rows: int = 12_000) -> st.SearchStrategy[list]:
    """Lists of up to `max_rows` items (past the compiled passes' blocks of 4096 rows), half to
    all of them None, the others drawn from a small pool of `items`, at random rows."""
    return st.builds(_mostly_null, st.lists(items, min_size=1, max_size=6), st.integers(0, max_rows),
                     st.floats(0.5, 1.0), st.integers(0, 2**32 - 1))


def _mostly_null(pool: list, rows: int, null_share: float, seed: int) -> list:
    rng = np.random.default_rng(seed)
    picks, nulls = rng.integers(0, len(pool), rows).tolist(), (rng.random(rows) < null_share).tolist()
    return [None if null else pool[pick] for pick, null in zip(picks, nulls)]


@st.composite
def columns(draw: st.DrawFn, values: Mapping[str, st.SearchStrategy], *, max_pool: int = 12,
            max_rows: int = 60, runs: bool = False, distinct_edges: Sequence[int] = ()
            ) -> tuple[str, list, list]:
    """(data type, column, pool): a column of one of the types `values` maps to a strategy,
    its cells drawn from a pool of at most `max_pool` values (so keys repeat), with no NULLs,
    some or only NULLs, at most `max_rows` rows. `runs` sometimes repeats each row 3 or 17
    times (run containers); `distinct_edges` sometimes gives a column of exactly that many
    distinct keys then repeats (a hash table's pending resize in Java's writers)."""
    data_type = draw(st.sampled_from(sorted(values)))
    if distinct_edges and data_type != "BOOLEAN" and draw(st.integers(0, 4)) == 0:
        distinct = draw(st.lists(values[data_type], min_size=min(distinct_edges),
                                 max_size=max(distinct_edges), unique_by=repr))
        size = max((n for n in distinct_edges if n <= len(distinct)), default=0)
        if size:
            pool = distinct[:size]
            return data_type, pool + draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3)), pool
    pool = draw(st.lists(values[data_type], min_size=1,
                         max_size=draw(st.sampled_from(sorted({min(3, max_pool), max_pool})))))
    nulls = draw(st.sampled_from(["none", "some", "some", "all"]))
    cells = {"none": st.sampled_from(pool), "some": st.none() | st.sampled_from(pool),
             "all": st.none()}[nulls]
    column = draw(st.lists(cells, max_size=draw(st.sampled_from(sorted({5, max_rows // 4, max_rows})))))
    if runs and column and draw(st.booleans()):
        column = [v for v in column for _ in range(draw(st.sampled_from([1, 3, 17])))]
    return data_type, column, pool


def pairs(column: tuple[str, list, list]) -> tuple[str, list]:
    """(data type, column) of a `columns` draw, for tests that need no pool."""
    return column[0], column[1]


#: The column types the global-index tests draw (every key serializer of Java's `KeySerializer`).
GLOBAL_INDEX_TYPES = ["TINYINT", "SMALLINT", "INT", "BIGINT", "BOOLEAN", "FLOAT", "DOUBLE", "STRING",
                      "DECIMAL(10, 2)", "DECIMAL(30, 4)", "DATE", "TIMESTAMP(3)", "TIMESTAMP(6)"]


@st.composite
def global_index_columns(draw: st.DrawFn, types: list[str] = GLOBAL_INDEX_TYPES,
                         max_size: int = 120) -> tuple[str, list]:
    """(data type, one value per row with NULLs): DATE as days and TIMESTAMP as raw keys."""
    data_type = draw(st.sampled_from(types))
    root = DataType.parse(data_type).root
    values = (st.integers(-30000, 30000) if root == "DATE"
              else st.integers(-2**40, 2**40) if root in ("TIMESTAMP", "TIMESTAMP_LTZ") else values_for(data_type))
    return data_type, draw(st.lists(st.none() | values, max_size=max_size))
