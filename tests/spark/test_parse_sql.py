"""`parse_sql`: the Spark SQL spelling of the WHERE grammar `parse_where` reads (one tokenizer,
one grammar, two dialects). Literals stay untyped; anything else is SqlNotUnderstood, never
another exception."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_schema.query import And, Leaf, Or
from paimon_schema.spark.predicates import SqlNotUnderstood, parse_sql
from paimon_schema.types import float32


def leaf(function: str, column: str, *literals: object) -> Leaf:
    return Leaf(function, column, literals)


@pytest.mark.parametrize("where, expected", [
    ("a = 5", leaf("equal", "a", 5)),
    ("a == 5L", leaf("equal", "a", 5)),
    ("a != 5S OR a <> 5Y", Or((leaf("not_equal", "a", 5), leaf("not_equal", "a", 5)))),
    ("a <=> NULL", leaf("is_null", "a")),
    ("a <=> 5", And((leaf("equal", "a", 5), leaf("is_not_null", "a")))),
    ("NOT (a <=> 5)", Or((leaf("not_equal", "a", 5), leaf("is_null", "a")))),   # keeps NULLs
    ("NULL <=> a", leaf("is_null", "a")),
    ("NOT a <=> NULL", leaf("is_not_null", "a")),
    ("5 < a", leaf("greater_than", "a", 5)),
    ("'x' >= b", leaf("less_or_equal", "b", "x")),
    ("a = 1.5", leaf("equal", "a", decimal.Decimal("1.5"))),
    ("a = 2BD", leaf("equal", "a", decimal.Decimal(2))),
    ("a = 1.5D", leaf("equal", "a", 1.5)),
    ("a = 1e3", leaf("equal", "a", 1000.0)),
    ("a = 1.1F", leaf("equal", "a", float32(1.1))),
    ("a = - 5", leaf("equal", "a", -5)),
    ("a = +5", leaf("equal", "a", 5)),
    ("a = -1.5", leaf("equal", "a", decimal.Decimal("-1.5"))),
    ("d >= DATE '2024-01-31'", leaf("greater_or_equal", "d", dt.date(2024, 1, 31))),
    ("t < TIMESTAMP_NTZ '2024-01-31 12:00:00'",
     leaf("less_than", "t", dt.datetime(2024, 1, 31, 12))),
    ("t < timestamp '2024-01-31 12:00:00.5'",
     leaf("less_than", "t", dt.datetime(2024, 1, 31, 12, 0, 0, 500000))),
    ("b = 'it''s'", leaf("equal", "b", "it's")),
    ("b = 'it\\'s'", leaf("equal", "b", "it's")),
    ("b = 'a\\\\b'", leaf("equal", "b", "a\\b")),
    ("b = 'a\\qb'", leaf("equal", "b", "aqb")),
    ("ok = TRUE OR ok IS NULL", Or((leaf("equal", "ok", True), leaf("is_null", "ok")))),
    ("`m[k]` IN (1, 2L) AND `a``b` NOT IN ('x')",
     And((leaf("in_", "m[k]", 1, 2), leaf("not_in", "a`b", "x")))),
    ("a BETWEEN 1 AND 5 AND b IS NOT NULL",
     And((leaf("between", "a", 1, 5), leaf("is_not_null", "b")))),
    ("a NOT BETWEEN 1 AND 5", Or((leaf("less_than", "a", 1), leaf("greater_than", "a", 5)))),
    ("NOT (a = 1 OR b IS NULL)", And((leaf("not_equal", "a", 1), leaf("is_not_null", "b")))),
    ("a = 1 AND (b = 2 AND c = 3)",
     And((leaf("equal", "a", 1), leaf("equal", "b", 2), leaf("equal", "c", 3)))),
    ("NOT (a BETWEEN 1 AND 2 AND b = 1)",
     Or((leaf("less_than", "a", 1), leaf("greater_than", "a", 2), leaf("not_equal", "b", 1)))),
    ("time = 1", leaf("equal", "time", 1)),
])
def test_spark_sql_reads(where: str, expected) -> None:
    assert parse_sql(where) == expected


@pytest.mark.parametrize("where", [
    "", "a = b", "a LIKE 'x'", "upper(b) = 'X'", "5 = 6", "a = 1 ; DROP TABLE t", "a = 1.5.5",
    "a = X'0f'",                                             # binary literals are not read
    "t = TIMESTAMP_LTZ '2024-01-01 00:00:00'", "t = TIME '12:00:00'", "date = 1",
    "d = DATE '2024-1-5'", "t = TIMESTAMP 'noon'",           # Python's ISO reader refuses them
    "a = " + "1" * 5000,                                     # past int()'s digit limit
    "(" * 200 + "a = 1" + ")" * 200, "NOT " * 200 + "a = 1", # deeper than MAX_NESTING
    "名前 = 'x'", "a = ٣",                                   # Spark's words and digits are ASCII
    "b = 'a\\nb'", "b = 'a\\u0041'", "b = 'a\\101'", "b = 'x\\%'",  # Spark: newline, A, A, \\%
    "`` = 1", "b = 'open", "b = 'a\\'", "a = -'x'", "a = - - 5", "a IN ()", "a IS 5",
])
def test_anything_else_is_not_understood(where: str) -> None:
    with pytest.raises(SqlNotUnderstood):
        parse_sql(where)


SQL_WORDS = ["a", "b", "`m[k]`", "=", "==", "<=>", "<>", "<", ">=", "(", ")", ",", "-", "+",
             "AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "TRUE", "1", "2.5", "5L", "1.5D",
             "2BD", "1.5F", "1e400", "'x'", "'it''s'", "'a\\'b'", "DATE", "TIMESTAMP_NTZ",
             "'2024-01-01'", "X'0f'", "'", "`", ";", "\\"]


@given(st.lists(st.sampled_from(SQL_WORDS), max_size=14).map(" ".join) | st.text(max_size=30))
def test_parse_sql_never_raises_anything_but_sql_not_understood(where: str) -> None:
    try:
        parse_sql(where)
    except SqlNotUnderstood:
        pass


def test_null_safe_equality_keeps_its_nulls_under_not() -> None:
    """`NOT (a <=> 5)` holds for NULL (Spark's `<=>` is never NULL); read as `a <> 5` it would
    drop those rows, from the Arrow filter and from pruning."""
    import pyarrow as pa
    from pyspark.sql.datasource import EqualNullSafe, Not

    from paimon_schema.spark.predicates import from_spark_filters, to_arrow

    table = pa.table({"a": pa.array([None, 5, 6], pa.int32())})
    for predicate in (parse_sql("NOT (a <=> 5)"), parse_sql("NOT 5 <=> a"),
                      from_spark_filters([Not(EqualNullSafe(("a",), 5))])):
        assert table.filter(to_arrow(predicate, table.schema)).column("a").to_pylist() == [None, 6]
    assert table.filter(to_arrow(parse_sql("a <=> 5"), table.schema)).num_rows == 1
