"""One Hypothesis strategy for the values of a Paimon data type, shared by every test.

`values_for(data_type)` draws non-null values as the writers take them (temporal types as their
raw index-key integers, DECIMAL as numbers): a few small values that repeat, so that keys
collide and predicates hit; the type's edge cases (extremes, -0.0, NaN, infinities, empty and
non-BMP strings); and the whole range of the type.
"""

from __future__ import annotations

import math

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
