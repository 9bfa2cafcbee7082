"""Filters for a table read: from what users and Spark give, to what the file indexes and Arrow
evaluate.

A filter arrives as a `ps.col` predicate, a Spark SQL string (`query.sql.parse_sql`) or Spark's
pushed filters (`spark.predicates.from_spark_filters`). Three things are made of it:

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
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.query.where import check_integer
from paimon_schema.table.metadata import TableSchema
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import INTEGER_RANGES, DataType, float32, internal

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc

__all__ = ["REMAIN", "check_columns", "conjunction", "for_file", "leaves", "partition_verdict",
           "to_arrow"]

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
        assert isinstance(predicate, (And, Or))
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
    assert isinstance(predicate, (And, Or))
    children = tuple(_map(c, leaf_fn) for c in predicate.children)
    return And(children) if isinstance(predicate, And) else Or(children)


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
                and abs(int(value)) < _MAX_EXACT_INT:
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
        exponent = value.as_tuple().exponent
        assert isinstance(exponent, int) and dtype.scale is not None    # finite; DECIMAL has a scale
        if exponent < -dtype.scale and value != value.quantize(decimal.Decimal(1).scaleb(-dtype.scale)):
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
    assert isinstance(predicate, Leaf)
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
        # A NULL literal makes a miss NULL, not FALSE; either way no row is selected (NOT is
        # pushed to the leaves, so nothing above can turn it TRUE), as `stats_verdict` and
        # Java's `In`/`NotIn` answer.
        hits = [_compare(value, v) == 0 for v in literals if v is not None]
        if function == "in_":
            return any(hits)
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

def to_arrow(predicate: Predicate, schema: pa.Schema) -> pc.Expression:
    """The exact filter as a `pyarrow.compute.Expression` over the columns of `schema`,
    with Spark's semantics."""
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
        values = tuple(None if v is None else _literal(leaf, v, arrow_type) for v in leaf.literals)
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


_SQL = {"equal": "=", "not_equal": "<>", "less_than": "<", "less_or_equal": "<=",
        "greater_than": ">", "greater_or_equal": ">=", "in_": "IN", "not_in": "NOT IN",
        "between": "BETWEEN"}


def _literal(leaf: Leaf, value: Any, arrow_type: Any) -> Any:
    """`value` as a literal Arrow can compare with the column the way Spark does (a string
    against a DATE or TIMESTAMP column is cast; a DATE against a TIMESTAMP without zone is its
    midnight), or a SchemaError naming the column, its type and the literal: Spark refuses or
    casts such a comparison in ways a filter must not guess."""
    import pyarrow as pa

    t = arrow_type
    number = isinstance(value, (int, float, decimal.Decimal, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        ok = number
        if ok and pa.types.is_integer(t):
            try:
                check_integer(value)            # the WHERE grammar's rule, for `ps.col` too
            except SchemaError as exc:
                raise SchemaError(f"{_leaf_text(leaf)}: column {leaf.column!r}: {exc}") from None
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        ok = isinstance(value, str)
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        ok = isinstance(value, (bytes, bytearray))
    elif pa.types.is_boolean(t):
        ok = isinstance(value, (bool, np.bool_))
    elif pa.types.is_date(t):
        if isinstance(value, str):
            value = _parsed(leaf, value, _parse_date, "DATE")
        ok = isinstance(value, dt.date) and not isinstance(value, dt.datetime)
    elif pa.types.is_timestamp(t):
        if isinstance(value, str):
            value = _parsed(leaf, value, _parse_timestamp, "TIMESTAMP")
        elif type(value) is dt.date and t.tz is None:
            value = dt.datetime.combine(value, dt.time())
        ok = isinstance(value, dt.datetime)
    elif pa.types.is_time(t):
        ok = isinstance(value, dt.time)
    else:
        ok = False
    if not ok:
        raise SchemaError(f"{_leaf_text(leaf)}: column {leaf.column!r} is {t}, and "
                          f"{value!r} ({_kind(value)}) does not compare with it; write a "
                          f"literal of the column's type")
    return value


def _parsed(leaf: Leaf, text: str, parse: Callable[[str], Any], name: str) -> Any:
    try:
        return parse(text)
    except _Unusable:
        raise SchemaError(f"{_leaf_text(leaf)}: {text!r} is not a {name} for column "
                          f"{leaf.column!r}") from None


def _leaf_text(leaf: Leaf) -> str:
    values = ", ".join(repr(v) for v in leaf.literals)
    operator = _SQL.get(leaf.function, leaf.function)
    if leaf.function in ("in_", "not_in"):
        values = f"({values})"
    elif leaf.function == "between":
        values = " AND ".join(repr(v) for v in leaf.literals)
    return f"{leaf.column} {operator} {values}"


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    if isinstance(value, (bool, np.bool_)):
        return "a boolean"
    if isinstance(value, dt.datetime):
        return "a timestamp"
    if isinstance(value, dt.date):
        return "a date"
    if isinstance(value, dt.time):
        return "a time"
    if isinstance(value, (int, float, decimal.Decimal, np.number)):
        return "a number"
    return type(value).__name__


def _is_float(arrow_type: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_floating(arrow_type)


def _fold(predicate: Predicate, leaf_fn: Callable[[Leaf], Any]) -> Any:
    """`predicate` in another library's expressions (Arrow, Spark columns): each leaf through
    `leaf_fn`, joined with their `&` and `|`."""
    if isinstance(predicate, Leaf):
        return leaf_fn(predicate)
    assert isinstance(predicate, (And, Or))
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
