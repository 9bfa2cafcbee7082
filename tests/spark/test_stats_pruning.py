"""Pruning by the manifests' min/max/null-count statistics never drops a matching row.

Java writes append tables (Parquet and ORC; Paimon's default stats mode `truncate(16)` and
`full`) with one data file per commit, each file holding what can fool a pruner: NaN (above
every number for Spark, left out of Parquet's statistics), -0.0 and 0.0, a column all NULL,
strings longer than the 16 code points truncation keeps (sharing that prefix), a supplementary
character, and nanosecond timestamps. Every filter must return what the filter applied after a
full read returns, while the range filters skip files by statistics. A Hypothesis property
checks `stats_verdict` against a brute-force evaluation of the same values."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_schema.query.predicate import Leaf
from paimon_schema.spark import read_arrow
from paimon_schema.query.sql import parse_sql
from paimon_schema.table.predicates import _evaluate_value
from paimon_schema.table.stats import ColumnStats, stats_verdict

from table_oracles import rows, sql_filter

FIELDS = [("id", "BIGINT"), ("d", "DOUBLE"), ("s", "STRING"), ("ts", "TIMESTAMP(9)"), ("n", "INT")]
PREFIX = "p" * 20                       # longer than truncate(16) keeps
NAN = math.nan


def _ts(micros: int, nanos: int = 0) -> dict:
    millis, rest = divmod(micros, 1000)
    return {"millis": millis, "nanos": rest * 1000 + nanos}


#: One commit (one data file) per entry: (id, d, s, ts, n).
COMMITS = [
    [(0, 1.0, PREFIX + "a", _ts(0), 1), (1, NAN, PREFIX + "z", _ts(1000), 2), (2, 3.0, None, None, None)],
    [(10, -0.0, "b", _ts(5000), 3), (11, -0.0, "bb", _ts(6000), 4)],
    [(20, None, None, None, None), (21, None, None, None, None)],
    [(30, 0.0, "\U0001F600 smile", _ts(7000), 5), (31, 5.0, "zzzzzzzzzzzzzzzzzzzzzzzzz", _ts(8000), 6)],
    [(40, 7.5, "m", _ts(10_000_000, 500), 7), (41, 8.5, "mm", _ts(10_000_000), 8)],
    [(50, NAN, "q", _ts(20_000_000), 9), (51, NAN, "qq", _ts(20_000_001), 10)],
]

WHERES = [
    ("id < 5", True), ("id >= 20 AND id < 22", True), ("id IN (1, 41)", True), ("id = 1000", True),
    ("id > 45", True), ("id BETWEEN 11 AND 12", True), ("n <= 2", True), ("n > 9", True),
    ("d > 100", False), ("d >= 8.5", False), ("d = 0.0", False), ("d = -0.0", False),
    ("d < 0.0", False), ("d <= 0.0", False), ("d <> 1.0", False), ("d IS NULL", True),
    ("d IS NOT NULL", True), ("d BETWEEN 7 AND 8", False), ("d = 5.0 OR d < -1", False),
    (f"s > '{PREFIX}b'", False), (f"s = '{PREFIX}z'", False), (f"s >= '{PREFIX}'", False),
    ("s < 'c'", False), ("s = 'm'", False), ("s > 'zzzz'", False), ("s IS NULL", True),
    ("s >= '\U0001F600'", False), ("s < 'a'", False), ("s IN ('bb', 'qq')", False),
    ("ts > TIMESTAMP '1970-01-01 00:00:10'", False),
    ("ts >= TIMESTAMP '1970-01-01 00:00:10.000001'", False),
    ("ts < TIMESTAMP '1970-01-01 00:00:00.001'", False),
    ("ts = TIMESTAMP '1970-01-01 00:00:20.000001'", False),
]


@pytest.fixture(scope="module")
def warehouse(java_reference: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from paimon_schema.selfcheck.reference.java import run_table_ops, write_table_request

    root = tmp_path_factory.mktemp("stats-warehouse")
    requests = []
    for file_format in ("parquet", "orc"):
        for mode in ("default", "full"):
            options = {"bucket": "-1", "file.format": file_format}
            if mode == "full":
                options["metadata.stats-mode"] = "full"
            requests.append(write_table_request(
                root, "db", f"{file_format}_{mode}", FIELDS,
                [[("+I", *row) for row in commit] for commit in COMMITS], options=options))
    run_table_ops(java_reference, requests)
    return root


TABLES = ["parquet_default", "parquet_full", "orc_default", "orc_full"]


@pytest.mark.parametrize("where,prunes", WHERES)
@pytest.mark.parametrize("name", TABLES)
def test_stats_pruning_keeps_every_matching_row(warehouse: Path, name: str, where: str,
                                                prunes: bool) -> None:
    path = warehouse / "db.db" / name
    full = read_arrow(path)
    assert full.num_rows == sum(len(c) for c in COMMITS)
    result, stats = read_arrow(path, where, with_stats=True)
    expected = sql_filter(full, where)
    assert rows(result) == rows(expected.cast(result.schema))
    assert rows(read_arrow(path, parse_sql(where))) == rows(result)
    # a file is skipped only when none of its rows match
    matching_files = {next(i for i, c in enumerate(COMMITS) if any(r[0] == row_id for r in c))
                      for row_id in expected.column("id").to_pylist()}
    assert stats.files_read >= len(matching_files)
    if prunes:             # integer ranges and null counts prune in every stats mode
        assert stats.files_skipped_by_stats > 0, stats


def test_range_filter_skips_by_stats(warehouse: Path) -> None:
    result, stats = read_arrow(warehouse / "db.db" / "parquet_default", "id < 5", with_stats=True)
    assert sorted(result.column("id").to_pylist()) == [0, 1, 2]
    assert (stats.files, stats.files_read, stats.files_skipped_by_stats) == (6, 1, 5)
    assert stats.as_dict()["files_skipped_by_stats"] == 5


def test_spark_paths_prune_by_stats(spark: Any, warehouse: Path) -> None:
    from paimon_schema import spark as ps_spark

    path = str(warehouse / "db.db" / "parquet_full")
    df, stats = ps_spark.read_table(spark, path, "id BETWEEN 10 AND 21", with_stats=True)
    assert sorted(r.id for r in df.collect()) == [10, 11, 20, 21]
    assert stats.files_skipped_by_stats == 4
    source = spark.read.format("paimon").load(path).where("d > 100")
    assert sorted(r.id for r in source.collect()) == [1, 50, 51]           # the NaN rows


# ------------------------------------------------------------------------------ property

_VALUES = {
    "int": st.integers(-5, 5),
    "float": st.sampled_from([0.0, -0.0, 1.5, -1.5, NAN, math.inf, -math.inf, 2.0]),
    "str": st.sampled_from(["", "a", "ab", "b", "\U0001F600", "\uffff", "é"]),
}
_FUNCTIONS = ["equal", "not_equal", "less_than", "less_or_equal", "greater_than",
              "greater_or_equal", "in_", "between", "is_null", "is_not_null"]


def _java_order(value: Any) -> Any:
    """Sort key of Java's `Double.compare` (NaN above all, -0.0 below 0.0) and of UTF-8 bytes."""
    if isinstance(value, float):
        return (1, 0.0) if math.isnan(value) else (0, value, math.copysign(1, value))
    if isinstance(value, str):
        return value.encode()
    return value


@st.composite
def _case(draw: Any) -> tuple[list, Leaf, ColumnStats]:
    kind = draw(st.sampled_from(sorted(_VALUES)))
    values = draw(st.lists(st.one_of(st.none(), _VALUES[kind]), min_size=1, max_size=6))
    function = draw(st.sampled_from(_FUNCTIONS))
    count = {"in_": draw(st.integers(1, 3)), "between": 2, "is_null": 0, "is_not_null": 0}.get(function, 1)
    literals = tuple(draw(_VALUES[kind]) for _ in range(count))
    if kind == "float":                             # `for_file` never hands NaN to a pruner
        literals = tuple(0.5 if math.isnan(v) else v for v in literals)
    present = [v for v in values if v is not None]
    # statistics as a writer may keep them: NaN left out (Parquet) or ordered last (Java)
    kept = [v for v in present if not (isinstance(v, float) and math.isnan(v))] \
        if draw(st.booleans()) else present
    low = min(kept, key=_java_order) if kept else None
    high = max(kept, key=_java_order) if kept else None
    nulls = draw(st.sampled_from([len(values) - len(present), None]))
    if low is not None and isinstance(low, float) and math.isnan(low):
        low = None
    if high is not None and isinstance(high, float) and math.isnan(high):
        high = None
    stats = ColumnStats(low, high, nulls, len(values), kind == "float")
    return values, Leaf(function, "c", literals), stats


@settings(max_examples=400, deadline=None)
@given(_case())
def test_stats_verdict_never_drops_a_matching_value(case: tuple[list, Leaf, ColumnStats]) -> None:
    values, leaf, stats = case
    if stats_verdict(leaf, {"c": stats}) is False:
        assert not any(_evaluate_value(leaf, v) is True for v in values), (values, leaf, stats)


def test_stats_verdict_on_timestamps_and_truncated_strings() -> None:
    ts = dt.datetime(2024, 1, 1)
    at_most = ColumnStats(ts, ts, 0, 3, False)     # maxima rounded down to microseconds
    assert stats_verdict(Leaf("greater_or_equal", "c", (ts,)), {"c": at_most}) is None
    assert stats_verdict(Leaf("less_than", "c", (ts,)), {"c": at_most}) is False
    cut = ColumnStats("abc", None, 0, 3, False)    # a truncated maximum is no bound
    assert stats_verdict(Leaf("greater_than", "c", ("zzz",)), {"c": cut}) is None
    assert stats_verdict(Leaf("less_than", "c", ("abc",)), {"c": cut}) is False
