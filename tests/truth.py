"""Which rows truly match a predicate leaf, with Paimon's own semantics: NULL never matches a
comparison, values compare with Java's `compareTo` (-0.0 < 0.0, NaN equals NaN and is largest),
strings byte-wise on UTF-8."""

from __future__ import annotations

import operator

from paimon_schema.query.predicate import Leaf
from paimon_schema.values.types import float_bits, float_order

COMPARE = {"equal": operator.eq, "not_equal": operator.ne, "less_than": operator.lt,
           "less_or_equal": operator.le, "greater_than": operator.gt,
           "greater_or_equal": operator.ge}


def sort_key(data_type: str, value):
    if data_type in ("DOUBLE", "FLOAT"):
        return float_order(float_bits(float(value), 64, canonical=True), 64)
    if data_type in ("STRING", "VARCHAR", "CHAR"):
        return value.encode()
    return value


def holds(leaf: Leaf, value, data_type: str) -> bool:
    """Does a row holding `value` (None = NULL) satisfy `leaf`?"""
    f = leaf.function
    if f == "is_null":
        return value is None
    if f == "is_not_null":
        return value is not None
    if value is None or any(v is None for v in leaf.literals):
        return False
    key = sort_key(data_type, value)
    literals = [sort_key(data_type, v) for v in leaf.literals]
    if f == "in_":
        return key in literals
    if f == "not_in":
        return key not in literals
    if f == "between":
        return literals[0] <= key <= literals[1]
    return COMPARE[f](key, literals[0])
