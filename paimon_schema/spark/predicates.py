"""Spark's side of a table filter: its pushed filters as a predicate (`from_spark_filters`) and
a predicate as a Spark Column (`to_spark_column`). What the indexes, partitions and Arrow make of
a predicate is in `paimon_schema.table.predicates`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from paimon_schema.query.predicate import Leaf, Predicate
from paimon_schema.query.where import null_safe_equal
from paimon_schema.table.arrow_types import quote
from paimon_schema.table.predicates import _fold, conjunction

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.datasource import Filter

__all__ = ["from_spark_filters", "to_spark_column"]


def from_spark_filters(filters: Iterable[Filter]) -> Predicate | None:
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
        return None if value is None else Leaf("in_", column, tuple(value))
    if name == "IsNull":
        return Leaf("is_null", column)
    if name == "IsNotNull":
        return Leaf("is_not_null", column)
    return None


def to_spark_column(predicate: Predicate) -> Column:
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

    column: Column = _fold(predicate, leaf_col)
    return column
