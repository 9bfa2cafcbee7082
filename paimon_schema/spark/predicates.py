"""Filters for a table read: from what users and Spark give, to what the file indexes and Arrow
evaluate.

A filter arrives as a `ps.col` predicate, a Spark SQL string (`parse_sql`) or Spark's pushed
filters (`from_spark_filters`). Two things are made of it:

- `for_file`: the predicate a data file's indexes may answer. Column names follow the file's
  schema by field id (renamed columns keep their old name in the containers) and every leaf the
  index cannot answer *soundly under SQL semantics* becomes a REMAIN leaf: a type that changed
  other than integer widening; a literal that does not convert to the file's type exactly; NaN;
  `=` on floats also asks for the other zero (SQL `f = 0.0` matches -0.0, the indexes keep
  the zeros apart); `<=`/`>=` bounds at a zero are moved to the outer zero; a FLOAT literal
  that float32 cannot hold exactly (except for `=`/`IN`, where rounding only adds rows); `>`
  and `!=` on nanosecond timestamps (the indexes store microseconds). What remains can only
  keep more rows than the filter, never fewer.
- `partition_verdict`: the filter over a file's partition values (True / False / unknown).
- `to_arrow`: the exact filter as an Arrow expression with Spark's semantics (NULL is not
  true; NaN equals NaN and is above every number; 0.0 = -0.0).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from paimon_schema.errors import SchemaError
from paimon_schema.query import And, Leaf, Or, Predicate
from paimon_schema.spark.schema import quote
from paimon_schema.table import TableSchema
from paimon_schema.types import INTEGER_RANGES, DataType, float32, internal
from paimon_schema.where import (KEYWORDS, OPERATORS, TYPE_WORDS, Dialect, Literal, WhereError,
                                 WhereParser, null_safe_equal)

__all__ = ["REMAIN", "SqlNotUnderstood", "check_columns", "conjunction", "for_file",
           "from_spark_filters", "leaves", "parse_sql", "partition_verdict", "to_arrow",
           "to_spark_column"]

#: A column no container holds: a leaf on it answers REMAIN (the file is kept).
REMAIN_COLUMN = "\x00remain"
REMAIN = Leaf("is_not_null", REMAIN_COLUMN)
_MAX_EXACT_INT = 2**53


class _Unusable(Exception):
    """This leaf cannot be answered soundly by an index: keep the file."""


def leaves(predicate: Predicate) -> Iterable[Leaf]:
    if isinstance(predicate, Leaf):
        yield predicate
    else:
        for child in predicate.children:
            yield from leaves(child)


def conjunction(predicates: Iterable[Predicate]) -> Predicate | None:
    items = [p for p in predicates if p is not None]
    if not items:
        return None
    return items[0] if len(items) == 1 else And(tuple(items))


def check_columns(predicate: Predicate, schema: TableSchema) -> None:
    """SchemaError for a column the table does not have."""
    for leaf in leaves(predicate):
        schema.field(leaf.column)


def _map(predicate: Predicate, leaf_fn: Callable[[Leaf], Predicate]) -> Predicate:
    if isinstance(predicate, Leaf):
        return leaf_fn(predicate)
    children = tuple(_map(c, leaf_fn) for c in predicate.children)
    return type(predicate)(children)


# ------------------------------------------------------------------------------ per file

def for_file(predicate: Predicate, table_schema: TableSchema, file_schema: TableSchema
             ) -> tuple[Predicate, dict[str, str]]:
    """The predicate for one data file's indexes, and the row type (`{name: type}`, the
    file's names and types) `ps.evaluate` needs for it."""
    row_type: dict[str, str] = {}

    def leaf_fn(leaf: Leaf) -> Predicate:
        try:
            field = table_schema.field(leaf.column)
            old = file_schema.by_id.get(field.id)
            if old is None or field.atomic_type is None or old.atomic_type is None:
                raise _Unusable
            new_type, old_type = field.atomic_type, old.atomic_type
            same = _same_type(new_type, old_type)
            if not same and not (new_type.root in INTEGER_RANGES and old_type.root in INTEGER_RANGES):
                raise _Unusable
            rewritten = _sound_leaf(Leaf(leaf.function, old.name, leaf.literals), old_type)
        except _Unusable:
            return REMAIN
        row_type[old.name] = str(old_type)
        return rewritten

    return _map(predicate, leaf_fn), row_type


def _same_type(a: DataType, b: DataType) -> bool:
    if a.is_string and b.is_string:
        return True          # CHAR/VARCHAR length changes keep the stored bytes
    return a == b


def _sound_leaf(leaf: Leaf, dtype: DataType) -> Predicate:
    function = leaf.function
    literals = tuple(_coerce(v, dtype) for v in leaf.literals)
    if dtype.is_float:
        return _float_leaf(Leaf(function, leaf.column, literals), dtype)
    if dtype.is_timestamp and (dtype.precision or 0) > 6:
        if function in ("not_equal", "not_in"):
            raise _Unusable       # a row 1 ns past the literal has the literal's key
        if function == "greater_than":
            function = "greater_or_equal"
    return Leaf(function, leaf.column, literals)


def _float_leaf(leaf: Leaf, dtype: DataType) -> Predicate:
    function, values = leaf.function, leaf.literals
    if any(isinstance(v, float) and math.isnan(v) for v in values):
        raise _Unusable
    if function in ("equal", "in_"):
        expanded = list(values)
        if any(v == 0.0 for v in values if v is not None):
            expanded += [0.0, -0.0]
        unique = list(dict.fromkeys((math.copysign(1, v), v) if v is not None else None
                                    for v in expanded))
        out = [None if u is None else u[1] for u in unique]
        return Leaf("equal", leaf.column, (out[0],)) if len(out) == 1 else Leaf("in_", leaf.column, tuple(out))
    if dtype.root == "FLOAT" and any(v is not None and float32(v) != v for v in values):
        raise _Unusable          # the index would round the literal to float32
    if function in ("not_equal", "not_in", "is_null", "is_not_null"):
        return leaf
    if function == "less_or_equal" and values[0] == 0.0:
        return Leaf(function, leaf.column, (0.0,))
    if function == "greater_or_equal" and values[0] == 0.0:
        return Leaf(function, leaf.column, (-0.0,))
    if function == "between":
        low, high = values
        return Leaf(function, leaf.column, (-0.0 if low == 0.0 else low, 0.0 if high == 0.0 else high))
    return leaf


def _coerce(value: Any, dtype: DataType) -> Any:
    """`value` as the index's Python value for `dtype`, exactly; _Unusable when that would
    round or when the value is not of the column's kind (Spark would cast the column)."""
    if value is None:
        return None
    root = dtype.root
    if isinstance(value, (bool, np.bool_)):
        if root != "BOOLEAN":
            raise _Unusable
        return bool(value)
    if root in INTEGER_RANGES:
        if isinstance(value, (int, np.integer)):
            number = int(value)
        elif isinstance(value, (float, decimal.Decimal)) and math.isfinite(value) and value == int(value) \
                and abs(value) < _MAX_EXACT_INT:
            number = int(value)
        else:
            raise _Unusable
        bits = INTEGER_RANGES[root]
        if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
            raise _Unusable
        return number
    if dtype.is_float:
        if isinstance(value, (int, np.integer)) and abs(int(value)) <= _MAX_EXACT_INT:
            return float(value)
        if isinstance(value, (float, np.floating, decimal.Decimal)):
            return float(value)
        raise _Unusable
    if root == "DECIMAL":
        if isinstance(value, (int, np.integer)):
            value = decimal.Decimal(int(value))
        if not isinstance(value, decimal.Decimal) or not value.is_finite():
            raise _Unusable
        if value.as_tuple().exponent < -dtype.scale and value != value.quantize(decimal.Decimal(1).scaleb(-dtype.scale)):
            raise _Unusable
    elif dtype.is_string:
        if not isinstance(value, str):
            raise _Unusable
    elif dtype.is_binary:
        if not isinstance(value, (bytes, bytearray)):
            raise _Unusable
        value = bytes(value)
    elif root == "DATE":
        if isinstance(value, str):
            value = _parse_date(value)
        if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
            raise _Unusable
    elif dtype.is_timestamp:
        if isinstance(value, str):
            value = _parse_timestamp(value)
        if not isinstance(value, dt.datetime):
            raise _Unusable
        if (root == "TIMESTAMP_LTZ") == (value.tzinfo is None):
            raise _Unusable       # an instant against wall-clock time: only the session zone knows
        if (dtype.precision or 0) <= 3 and value.microsecond % 1000:
            raise _Unusable
    elif root == "TIME":
        if not isinstance(value, dt.time) or value.microsecond % 1000:
            raise _Unusable
    else:
        raise _Unusable
    try:
        internal(dtype, value)
    except SchemaError:
        raise _Unusable from None
    return value


def _parse_date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise _Unusable from None


def _parse_timestamp(text: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise _Unusable from None


# ------------------------------------------------------------------------------ partitions

def partition_verdict(predicate: Predicate, partition: Mapping[str, Any]) -> bool | None:
    """Whether the predicate holds for every row of a partition (True), for none (False), or
    depends on other columns / cannot be told (None), with SQL's NULL rules."""
    if isinstance(predicate, And):
        verdicts = [partition_verdict(c, partition) for c in predicate.children]
        return False if False in verdicts else True if all(v is True for v in verdicts) else None
    if isinstance(predicate, Or):
        verdicts = [partition_verdict(c, partition) for c in predicate.children]
        return True if True in verdicts else False if all(v is False for v in verdicts) else None
    if predicate.column not in partition:
        return None
    try:
        return _evaluate_value(predicate, partition[predicate.column])
    except (TypeError, ValueError, decimal.InvalidOperation):
        return None


def _evaluate_value(leaf: Leaf, value: Any) -> bool | None:
    function, literals = leaf.function, leaf.literals
    if function == "is_null":
        return value is None
    if function == "is_not_null":
        return value is not None
    if value is None:
        return False
    if function in ("in_", "not_in"):
        hits = [_compare(value, v) == 0 for v in literals if v is not None]
        if function == "in_":
            return any(hits) or (None if None in literals else False)
        return False if None in literals or any(hits) else True
    if function == "between":
        low, high = (_compare(value, v) for v in literals)
        return low >= 0 and high <= 0
    if literals[0] is None:
        return False
    c = _compare(value, literals[0])
    return {"equal": c == 0, "not_equal": c != 0, "less_than": c < 0, "less_or_equal": c <= 0,
            "greater_than": c > 0, "greater_or_equal": c >= 0}[function]


def _compare(value: Any, literal: Any) -> int:
    """Spark's ordering of two values of one kind (NaN above everything, NaN = NaN)."""
    if isinstance(value, bool) != isinstance(literal, bool):
        raise TypeError("boolean against non-boolean")
    if isinstance(value, str) != isinstance(literal, str):
        raise TypeError("string against non-string")
    if isinstance(value, float) or isinstance(literal, float):
        a, b = float(value), float(literal)
        if math.isnan(a) or math.isnan(b):
            return 0 if math.isnan(a) and math.isnan(b) else (1 if math.isnan(a) else -1)
    if isinstance(value, str):
        value, literal = value.encode(), literal.encode()
    return (value > literal) - (value < literal)


# ------------------------------------------------------------------------------ Arrow

def to_arrow(predicate: Predicate, schema: Any) -> Any:
    """The exact filter as a `pyarrow.compute.Expression` over the columns of `schema`
    (a `pyarrow.Schema`), with Spark's semantics."""
    import pyarrow.compute as pc

    def leaf_expr(leaf: Leaf) -> Any:
        field = pc.field(leaf.column)
        arrow_type = schema.field(leaf.column).type
        floating = _is_float(arrow_type)
        function = leaf.function
        if function == "is_null":
            return field.is_null()
        if function == "is_not_null":
            return field.is_valid()
        values = leaf.literals
        if function in ("in_", "not_in"):
            present = [v for v in values if v is not None]
            if function == "not_in":
                if len(present) < len(values):
                    return pc.scalar(False)
                return _and([_cmp("not_equal", field, v, arrow_type, floating) for v in present]) \
                    if present else field.is_valid()
            return _or([_cmp("equal", field, v, arrow_type, floating) for v in present]) \
                if present else pc.scalar(False)
        if function == "between":
            if None in values:
                return pc.scalar(False)
            return _cmp("greater_or_equal", field, values[0], arrow_type, floating) & \
                _cmp("less_or_equal", field, values[1], arrow_type, floating)
        if values[0] is None:
            return pc.scalar(False)
        return _cmp(function, field, values[0], arrow_type, floating)

    return _fold(predicate, leaf_expr)


def _is_float(arrow_type: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_floating(arrow_type)


def _fold(predicate: Predicate, leaf_fn: Callable[[Leaf], Any]) -> Any:
    """`predicate` in another library's expressions (Arrow, Spark columns): each leaf through
    `leaf_fn`, joined with their `&` and `|`."""
    if isinstance(predicate, Leaf):
        return leaf_fn(predicate)
    parts = [_fold(child, leaf_fn) for child in predicate.children]
    return _and(parts) if isinstance(predicate, And) else _or(parts)


def _and(parts: list) -> Any:
    out = parts[0]
    for p in parts[1:]:
        out = out & p
    return out


def _or(parts: list) -> Any:
    out = parts[0]
    for p in parts[1:]:
        out = out | p
    return out


def _scalar(value: Any, arrow_type: Any) -> Any:
    import pyarrow as pa

    if isinstance(value, (int, decimal.Decimal)) and not isinstance(value, bool) \
            and pa.types.is_floating(arrow_type):
        value = float(value)
    elif isinstance(value, str) and pa.types.is_date(arrow_type):
        value = _parse_date(value)                 # Spark casts the string to the column's type
    elif isinstance(value, str) and pa.types.is_timestamp(arrow_type):
        value = _parse_timestamp(value)
    try:
        return pa.scalar(value, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError, ValueError):
        return pa.scalar(value)


def _cmp(function: str, field: Any, value: Any, arrow_type: Any, floating: bool) -> Any:
    import pyarrow.compute as pc

    if floating and isinstance(value, (float, int, decimal.Decimal)) and not isinstance(value, bool) \
            and math.isnan(float(value)):
        nan = pc.is_nan(field)
        return {"equal": nan, "not_equal": ~nan & field.is_valid(),
                "less_than": ~nan & field.is_valid(), "less_or_equal": field.is_valid(),
                "greater_than": pc.scalar(False), "greater_or_equal": nan}[function]
    import pyarrow as pa

    if floating:           # Spark compares a FLOAT column with a DOUBLE literal in double
        field = field.cast(pa.float64())
        arrow_type = pa.float64()
    elif pa.types.is_timestamp(arrow_type) and arrow_type.unit == "ns":
        arrow_type = pa.timestamp("us", tz=arrow_type.tz)     # Spark sees microseconds
        field = field.cast(arrow_type, safe=False)
    literal = _scalar(value, arrow_type)
    op = {"equal": pc.equal, "not_equal": pc.not_equal, "less_than": pc.less,
          "less_or_equal": pc.less_equal, "greater_than": pc.greater,
          "greater_or_equal": pc.greater_equal}[function]
    expr = op(field, literal)
    if floating and function in ("greater_than", "greater_or_equal", "not_equal"):
        expr = expr | pc.is_nan(field)         # NaN is above every number (and != it)
    return expr


# ------------------------------------------------------------------------------ Spark

def from_spark_filters(filters: Iterable[Any]) -> Predicate | None:
    """The conjunction of Spark's pushed filters (`pyspark.sql.datasource` Filter objects)
    that map to predicates; the others are left out (Spark evaluates every filter again)."""
    return conjunction(p for p in (_spark_filter(f) for f in filters) if p is not None)


def _spark_filter(f: Any) -> Predicate | None:
    name = type(f).__name__
    if name == "Not":
        inner = _spark_filter(f.child)
        return None if inner is None else ~inner
    attribute = getattr(f, "attribute", None)
    if attribute is None or len(attribute) != 1:
        return None
    column = attribute[0]
    value = getattr(f, "value", None)
    if isinstance(value, list):
        return None
    if name == "EqualTo":
        return Leaf("equal", column, (value,))
    if name == "EqualNullSafe":
        return null_safe_equal(column, value)
    if name in ("GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual"):
        function = {"GreaterThan": "greater_than", "GreaterThanOrEqual": "greater_or_equal",
                    "LessThan": "less_than", "LessThanOrEqual": "less_or_equal"}[name]
        return Leaf(function, column, (value,))
    if name == "In":
        return Leaf("in_", column, tuple(value))
    if name == "IsNull":
        return Leaf("is_null", column)
    if name == "IsNotNull":
        return Leaf("is_not_null", column)
    return None


def to_spark_column(predicate: Predicate) -> Any:
    """The predicate as a Spark Column (Spark evaluates it with its own semantics)."""
    from pyspark.sql import functions as F

    def leaf_col(leaf: Leaf) -> Any:
        c = F.col(quote(leaf.column))
        v = leaf.literals
        function = leaf.function
        if function == "is_null":
            return c.isNull()
        if function == "is_not_null":
            return c.isNotNull()
        if function == "in_":
            return c.isin([F.lit(x) for x in v])
        if function == "not_in":
            return ~c.isin([F.lit(x) for x in v])
        if function == "between":
            return c.between(F.lit(v[0]), F.lit(v[1]))
        lit = F.lit(v[0])
        return {"equal": c == lit, "not_equal": c != lit, "less_than": c < lit,
                "less_or_equal": c <= lit, "greater_than": c > lit, "greater_or_equal": c >= lit}[function]

    return _fold(predicate, leaf_col)


# ------------------------------------------------------------------------------ SQL strings

class SqlNotUnderstood(ValueError):
    """The filter is not a simple comparison tree; Spark still applies it, without pruning."""


class _Spark(Dialect):
    r"""Spark SQL's spelling of the WHERE grammar. Literals stay untyped (`for_file` converts them
    per data file): 5 int, 5L/5S/5Y int, 1.5 and 2BD Decimal, 1e3 and 1.5D float, 1.5F float32,
    DATE 'text' date, TIMESTAMP / TIMESTAMP_NTZ 'text' datetime; `==`, `<=>` and `5 < a` read;
    in 'text', \' and \\ (and \q for q). X'..', TIMESTAMP_LTZ and TIME literals are not read."""

    operators = {**OPERATORS, "==": "equal", "<=>": "null_safe_equal"}
    reserved = KEYWORDS | TYPE_WORDS - {"TIME"}
    prefixes = frozenset({"DATE", "TIMESTAMP", "TIMESTAMP_NTZ"})
    flip = True
    string = r"'(?:[^'\\]|\\.|'')*'"
    word = r"[A-Za-z_][A-Za-z_0-9]*"
    suffix = r"(?:[LlDdFfSsYy]|BD|bd)?"

    def column(self, name: str) -> None:
        if not name:
            raise ValueError("an empty column name")

    def value(self, literal: Literal, column: None) -> object:
        token = literal.token
        if token.kind == "hex":
            raise ValueError("X'..' literals are not read")
        if token.kind == "string" and literal.prefix:
            text = self.unquote(token.text)
            if literal.prefix == "DATE":
                return dt.date.fromisoformat(text)
            stamp = dt.datetime.fromisoformat(text)
            # Spark drops a zone offset from a TIMESTAMP_NTZ literal: wall-clock time stays.
            return stamp.replace(tzinfo=None) if literal.prefix == "TIMESTAMP_NTZ" else stamp
        if token.kind != "number":
            return super().value(literal, column)
        digits, suffix = re.fullmatch(r"(.+?)(BD|bd|[LlDdFfSsYy])?", token.text).groups()
        text, suffix = literal.sign + digits, (suffix or "").upper()
        if suffix == "F":
            return float32(float(text))
        if suffix == "D" or "e" in text.lower():
            return float(text)
        if "." in text or suffix == "BD":
            return decimal.Decimal(text)      # exact: `-1 * Decimal` would round to 28 digits
        return int(text)

    def unquote(self, text: str) -> str:
        return re.sub(r"\\(.)", _unescape, super().unquote(text))


def _unescape(match: re.Match[str]) -> str:
    r"""Spark reads `\x` as x, except the escapes that mean another character (\n, \t, \Z,
    \u00e9, octal \101 ...) or keep the backslash (\%, \_): refused, so never misread."""
    if match[1] in "0123456789bnrtuUZ%_":
        raise ValueError(f"the escape \\{match[1]} is not read")
    return match[1]


def parse_sql(text: str) -> Predicate:
    """A predicate from a Spark SQL boolean expression made of column-vs-literal comparisons
    (`=`, `<>`, `<`, ..., `IN`, `IS [NOT] NULL`, `BETWEEN`) joined by AND / OR / NOT.
    Anything else raises SqlNotUnderstood. Only used to prune: Spark evaluates the text itself.
    """
    try:
        return WhereParser(text, _Spark()).parse()
    except WhereError as exc:
        raise SqlNotUnderstood(f"{exc.reason} at character {exc.pos}") from None
