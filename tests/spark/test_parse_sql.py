"""`parse_sql`: the Spark SQL spelling of the WHERE grammar `parse_where` reads (one tokenizer,
one grammar, two dialects). Literals stay untyped; anything else is SqlNotUnderstood, never
another exception."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.query.sql import SqlNotUnderstood, parse_sql
from paimon_schema.query.where import parse_where, sql_text
from paimon_schema.table.predicates import _coerce
from paimon_schema.values.types import INTEGER_RANGES, DataType, float32


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
    ("a = -12345678901234567890123456789.25",                  # 31 digits, none rounded
     leaf("equal", "a", decimal.Decimal("-12345678901234567890123456789.25"))),
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

    from paimon_schema.spark.predicates import from_spark_filters
    from paimon_schema.table.predicates import to_arrow

    table = pa.table({"a": pa.array([None, 5, 6], pa.int32())})
    for predicate in (parse_sql("NOT (a <=> 5)"), parse_sql("NOT 5 <=> a"),
                      from_spark_filters([Not(EqualNullSafe(("a",), 5))])):
        assert table.filter(to_arrow(predicate, table.schema)).column("a").to_pylist() == [None, 6]
    assert table.filter(to_arrow(parse_sql("a <=> 5"), table.schema)).num_rows == 1


# ------------------------------------------------------------------------------ both dialects

COLUMN_TYPES = ["TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(5, 2)",
                "DECIMAL(38, 10)", "STRING", "VARCHAR(10)", "BOOLEAN", "DATE", "TIMESTAMP(0)",
                "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)", "TIME", "BYTES"]
NAMES = st.sampled_from(["a", "b_1", "Date", "time", "and", "m[k]", "a`b", "名前", "x y", "_"])


def values_of(type_text: str) -> st.SearchStrategy:
    data_type = DataType.parse(type_text)
    root = data_type.root
    if root in INTEGER_RANGES:
        bits = INTEGER_RANGES[root]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if data_type.is_float:
        return st.floats(allow_nan=False, allow_infinity=False,
                         width=32 if root == "FLOAT" else 64)
    if root == "DECIMAL":
        digits = data_type.precision - data_type.scale
        return st.decimals(-(10 ** digits) + 1, 10 ** digits - 1, places=data_type.scale,
                           allow_nan=False, allow_infinity=False)
    if data_type.is_string:
        return st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\\"),
                       max_size=8)
    if root == "BOOLEAN":
        return st.booleans()
    if root == "DATE":
        return st.dates()
    if root == "TIME":
        return st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
    if data_type.is_timestamp:
        unit = 10 ** (6 - min(data_type.precision, 6))
        return st.datetimes().map(lambda t: t.replace(microsecond=t.microsecond // unit * unit))
    return st.binary(max_size=4)


@st.composite
def typed_predicates(draw: st.DrawFn) -> tuple[Predicate, dict[str, str]]:
    row_type = draw(st.dictionaries(NAMES, st.sampled_from(COLUMN_TYPES), min_size=1, max_size=3))

    def leaves() -> st.SearchStrategy:
        name = draw(st.sampled_from(sorted(row_type)))
        value = values_of(row_type[name]) | st.none()
        return st.one_of(
            st.builds(lambda f, v: Leaf(f, name, (v,)), st.sampled_from(
                ["equal", "not_equal", "less_than", "less_or_equal", "greater_than",
                 "greater_or_equal"]), value),
            st.builds(lambda f, vs: Leaf(f, name, tuple(vs)), st.sampled_from(["in_", "not_in"]),
                      st.lists(value, min_size=1, max_size=3)),
            st.builds(lambda lo, hi: Leaf("between", name, (lo, hi)), value, value),
            st.sampled_from([Leaf("is_null", name), Leaf("is_not_null", name)]))

    tree = st.recursive(st.deferred(leaves), lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda cs: And(tuple(cs))),
        st.lists(inner, min_size=2, max_size=3).map(lambda cs: Or(tuple(cs))),
        inner.map(lambda p: ~p)), max_leaves=6)
    return draw(tree), row_type


def same_predicate(spark: Predicate, typed: Predicate, row_type: dict[str, str]) -> bool:
    """Equal trees whose Spark literals, converted per column as `for_file` does, are the typed
    ones."""
    if isinstance(typed, Leaf):
        if not isinstance(spark, Leaf) or (spark.function, spark.column) != (typed.function,
                                                                          typed.column):
            return False
        data_type = DataType.parse(row_type[typed.column])
        return [_coerce(v, data_type) for v in spark.literals] == list(typed.literals)
    return type(spark) is type(typed) and len(spark.children) == len(typed.children) and all(
        same_predicate(s, t, row_type) for s, t in zip(spark.children, typed.children))


@given(typed_predicates())
def test_both_dialects_read_sql_text_alike(case: tuple[Predicate, dict[str, str]]) -> None:
    """`sql_text` is read alike by `parse_where` (typed) and `parse_sql` (Spark, converted per
    column) wherever Spark's dialect reads it at all (it has no TIME or X'..' literal). Left out
    because the dialects differ there: backslashes in strings (Spark's escapes), NaN and
    infinities (`'NaN'` is a string to Spark, cast only when it runs) and TIMESTAMP_LTZ (a
    literal without a zone is a UTC instant to parse_where, of unknown zone to for_file)."""
    predicate, row_type = case
    text = sql_text(predicate)
    typed = parse_where(text, row_type)
    try:
        spark = parse_sql(text)
    except SqlNotUnderstood:
        return
    assert same_predicate(spark, typed, row_type), text


def test_timestamp_literals_keep_spark_zone_rules() -> None:
    """Spark drops an offset from a TIMESTAMP_NTZ literal; an instant against wall-clock time
    (or the reverse) depends on the session zone, so such a leaf never prunes."""
    from paimon_schema.table.predicates import _Unusable

    ntz = parse_sql("t = TIMESTAMP_NTZ '2024-01-31 12:00:00+02:00'")
    assert ntz == leaf("equal", "t", dt.datetime(2024, 1, 31, 12))
    aware = parse_sql("t = TIMESTAMP '2024-01-31 12:00:00+02:00'").literals[0]
    assert aware.utcoffset() == dt.timedelta(hours=2)
    naive = dt.datetime(2024, 1, 31, 12)
    assert _coerce(naive, DataType.parse("TIMESTAMP(6)")) == naive
    assert _coerce(aware, DataType.parse("TIMESTAMP_LTZ(6)")) == aware
    for value, data_type in ((aware, "TIMESTAMP(6)"), (naive, "TIMESTAMP_LTZ(6)")):
        with pytest.raises(_Unusable):
            _coerce(value, DataType.parse(data_type))
