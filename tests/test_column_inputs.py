"""`build_index` from every input kind: a Python list, a numpy (masked) array, a pyarrow array
(plain, chunked, dictionary-encoded) and a pandas Series give the bytes of the per-row
reference pass, and refuse the same columns with SchemaError."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import paimon_schema as ps
from paimon_schema.layouts import bsi_index as bsi
from paimon_schema.layouts.bitmap_index import writer as bitmap
from paimon_schema.layouts.column_values import column_values
from paimon_schema.layouts.range_bitmap import writer as range_bitmap
from paimon_schema.values.types import DataType
from tests.strategies import mostly_null_lists


class _Int(int):
    """An int the bulk typing does not recognise (exact types only): forces the per-row pass."""


class _Float(float):
    pass


class _Str(str):
    pass


def reference(index_type: str, data_type: str, values: list, **options: Any) -> bytes:
    """The per-row pass of every writer, reached with values of subclassed types, which the
    reference takes as what they are and the bulk typing never takes."""
    def plain(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, (dt.date, dt.time, decimal.Decimal, bytes)):
            return np.bool_(v) if isinstance(v, bool) else v
        return {int: _Int, float: _Float, str: _Str}[type(v)](v)
    return ps.build_index(index_type, data_type, [plain(v) for v in values], **options)


INTS = {"TINYINT": (8, pa.int8(), "Int8"), "SMALLINT": (16, pa.int16(), "Int16"),
        "INT": (32, pa.int32(), "Int32"), "BIGINT": (64, pa.int64(), "Int64")}
EPOCH = dt.datetime(1970, 1, 1)


def _ints(bits: int) -> st.SearchStrategy[int]:
    return st.integers(-2**(bits - 1), 2**(bits - 1) - 1)


#: data type -> (Python values, Arrow type, numpy dtype or None, pandas dtype or None)
KINDS: dict[str, tuple[st.SearchStrategy, Any, Any, Any]] = {
    **{t: (_ints(bits), arrow, np.dtype(f"i{bits // 8}"), pandas) for t, (bits, arrow, pandas) in INTS.items()},
    "BOOLEAN": (st.booleans(), pa.bool_(), np.dtype(bool), "boolean"),
    "DOUBLE": (st.floats(width=64), pa.float64(), np.dtype(np.float64), "Float64"),
    "FLOAT": (st.floats(width=32), pa.float32(), np.dtype(np.float32), "Float32"),
    "STRING": (st.sampled_from(["", "a", "b", "ab", "é", "日本", "value-1"]) | st.text(max_size=4),
               pa.string(), None, "string"),
    "BYTES": (st.binary(max_size=4), pa.binary(), None, None),
    "DATE": (st.dates(), pa.date32(), np.dtype("datetime64[D]"), None),
    "TIME": (st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
             pa.time32("ms"), None, None),
    "TIMESTAMP(3)": (st.datetimes(min_value=dt.datetime(1, 1, 1)), pa.timestamp("us"),
                     np.dtype("datetime64[us]"), None),
    "TIMESTAMP(6)": (st.datetimes(), pa.timestamp("us", tz="UTC"), np.dtype("datetime64[us]"), None),
    "DECIMAL(10, 2)": (st.decimals(-10**8 + 1, 10**8 - 1, places=2, allow_nan=False),
                       pa.decimal128(10, 2), None, None),
}
INDEXES = {
    "bitmap": ("TINYINT", "SMALLINT", "INT", "BIGINT", "BOOLEAN", "DOUBLE", "FLOAT", "STRING",
               "DATE", "TIME", "TIMESTAMP(3)", "TIMESTAMP(6)"),
    "bloom-filter": ("TINYINT", "SMALLINT", "INT", "BIGINT", "DOUBLE", "FLOAT", "STRING", "BYTES",
                     "DATE", "TIME", "TIMESTAMP(3)", "TIMESTAMP(6)"),
    "bsi": ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP(3)",
            "TIMESTAMP(6)", "DECIMAL(10, 2)"),
    "range-bitmap": ("TINYINT", "SMALLINT", "INT", "BIGINT", "BOOLEAN", "DOUBLE", "FLOAT",
                     "STRING", "DATE", "TIME", "TIMESTAMP(3)", "TIMESTAMP(6)", "DECIMAL(10, 2)"),
}
OPTIONS = {"bitmap": st.sampled_from([{"version": 1}, {"version": 2},
                                      {"version": 2, "index_block_size": 64}]),
           "bloom-filter": st.sampled_from([{"items": 100, "fpp": 0.05}, {"items": 7}]),
           "bsi": st.just({}),
           "range-bitmap": st.sampled_from([{}, {"chunk_size": 16}])}
CASES = [(i, t) for i, types_ in INDEXES.items() for t in types_]


def inputs(data_type: str, values: list) -> dict[str, Any]:
    """`values` (plain Python, None = NULL) in every input kind that can carry the type."""
    _, arrow_type, np_dtype, pandas_dtype = KINDS[data_type]
    nulls = [v is None for v in values]
    out: dict[str, Any] = {"list": values, "tuple": tuple(values), "generator": iter(values)}
    arrow = pa.array(values, type=arrow_type)
    out["arrow"] = arrow
    out["arrow sliced"] = pa.array([None, *values, None], type=arrow_type)[1:-1]   # buffers at an offset
    out["arrow chunked"] = pa.chunked_array([arrow[:len(values) // 2], arrow[len(values) // 2:]],
                                            type=arrow_type)
    if pa.types.is_string(arrow_type) or pa.types.is_binary(arrow_type) or pa.types.is_integer(arrow_type):
        out["arrow dictionary"] = arrow.dictionary_encode()
    if pa.types.is_decimal(arrow_type):               # a wider scale: rounding, per value
        out["arrow decimal(20, 4)"] = pa.array(values, type=pa.decimal128(20, 4))
    out["numpy object"] = np.array(values + [0], dtype=object)[:-1]
    if np_dtype is not None:
        filler = {"b": False, "M": None}.get(np_dtype.kind, 0)
        data = np.array([filler if v is None else v for v in values], dtype=np_dtype)
        out["numpy masked"] = np.ma.masked_array(data, mask=nulls)
        if not any(nulls):
            out["numpy"] = data
        elif np_dtype.kind == "M":
            out["numpy NaT"] = data                  # None became NaT
    if pandas_dtype is not None and not (data_type in ("DOUBLE", "FLOAT")
                                         and any(isinstance(v, float) and math.isnan(v) for v in values)):
        out["pandas nullable"] = pd.Series(values, dtype=pandas_dtype)  # (NaN would be NA)
    if pandas_dtype in ("Float64", "Float32"):
        data = np.array([0.0 if v is None else v for v in values], dtype=np_dtype)
        out["pandas masked NaN"] = pd.Series(pd.arrays.FloatingArray(data, np.array(nulls, bool)))
    if data_type == "STRING":
        out["pandas pyarrow"] = pd.Series(values, dtype="string[pyarrow]")
        out["pandas categorical"] = pd.Series(values, dtype="category")
    if np_dtype is not None and not any(nulls) and np_dtype.kind != "M":
        out["pandas numpy"] = pd.Series(np.array(values, dtype=np_dtype))
    if data_type.startswith("TIMESTAMP") and not any(nulls):
        out["pandas datetime64 UTC"] = pd.Series(pd.to_datetime(values, utc=True)) \
            if all(v.year >= 1678 and v.year < 2262 for v in values) else None
    out["pandas object"] = pd.Series(values + [0], dtype=object)[:-1] if not any(
        isinstance(v, float) and math.isnan(v) for v in values) else None
    return {k: v for k, v in out.items() if v is not None}


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, list, dict[str, Any]]:
    index_type, data_type = draw(st.sampled_from(CASES))
    values = draw(st.lists(st.none() | KINDS[data_type][0], max_size=40)
                  | st.lists(st.none() | st.sampled_from(draw(st.lists(KINDS[data_type][0],
                                                                       min_size=1, max_size=3))),
                             max_size=60))
    return index_type, data_type, values, draw(OPTIONS[index_type])


@given(cases())
@example(("bitmap", "INT", [1, None, 1, 2**31 - 1, -2**31], {"version": 1}))
@example(("bitmap", "STRING", ["b", None, "a", "b", None], {"version": 2}))
@example(("bloom-filter", "DOUBLE", [math.nan, -0.0, 0.0, None], {"items": 10}))
@example(("bloom-filter", "FLOAT", [0.1, 3.4e38, None], {"items": 10}))
@example(("range-bitmap", "DOUBLE", [math.nan, 1.0, None, -math.inf], {}))
@example(("bsi", "DECIMAL(10, 2)", [decimal.Decimal("-1.25"), None, decimal.Decimal("99999999.99")], {}))
@example(("bsi", "BIGINT", [-2**63, None], {}))
@example(("bsi", "TIMESTAMP(3)", [dt.datetime(1969, 12, 31, 23, 59, 59, 999_999), None], {}))
@example(("range-bitmap", "TIME", [dt.time(23, 59, 59, 999_000), dt.time(0)], {}))
@example(("bitmap", "DATE", [dt.date(1, 1, 1), dt.date(9999, 12, 31), None], {"version": 2}))
def test_every_input_kind_writes_the_reference_bytes(case: tuple[str, str, list, dict[str, Any]]) -> None:
    index_type, data_type, values, options = case
    try:
        expected = reference(index_type, data_type, values, **options)
    except ps.SchemaError:                       # e.g. Long.MIN_VALUE in a BSI
        for kind, column in inputs(data_type, values).items():
            with pytest.raises(ps.SchemaError):
                ps.build_index(index_type, data_type, column, **options)
                pytest.fail(kind)
        return
    for kind, column in inputs(data_type, values).items():
        assert ps.build_index(index_type, data_type, column, **options) == expected, kind


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(CASES).flatmap(lambda case: st.tuples(
    st.just(case), mostly_null_lists(KINDS[case[1]][0], max_rows=9_000), OPTIONS[case[0]])))
def test_mostly_null_columns_from_every_input_kind_write_the_reference_bytes(
        case: tuple[tuple[str, str], list, dict[str, Any]]) -> None:
    """Long columns of mostly NULL (which the compiled passes set aside a block of 4096 rows at
    a time, and Arrow's from its buffers) give every writer the per-row pass's bytes."""
    (index_type, data_type), values, options = case
    try:
        expected = reference(index_type, data_type, values, **options)
    except ps.SchemaError:
        return                                   # refused alike: the test above checks that
    for kind, column in inputs(data_type, values).items():
        assert ps.build_index(index_type, data_type, column, **options) == expected, kind


@given(st.sampled_from(INDEXES["bsi"]).flatmap(
    lambda t: st.tuples(st.just(t), st.lists(st.none() | KINDS[t][0], max_size=60))))
@example(("BIGINT", [2**63 - 1, -2**63 + 1, 0, None, -1]))
@example(("INT", []))
@example(("INT", [None, None]))
def test_bsi_bytes_equal_the_codec(column: tuple[str, list]) -> None:
    """The BSI's struct/pyroaring writer writes the generated codec's bytes."""
    data_type, values = column
    try:
        expected = bsi.write_with_codec(data_type, values)
    except ps.SchemaError:                       # Long.MIN_VALUE
        with pytest.raises(ps.SchemaError):
            bsi.build_bsi(data_type, values)
        return
    assert bsi.build_bsi(data_type, values) == expected


def test_reference_is_the_per_row_pass() -> None:
    """The subclassed values reach the per-row pass (what `reference` relies on), plain ones
    are typed in bulk, and both give the generated codec's bytes."""
    values = [3, None, 1, 3]
    assert column_values(DataType.parse("INT"), [_Int(v) if v else v for v in values]).rows is not None
    assert column_values(DataType.parse("INT"), values).numbers is not None
    codec_bytes = bitmap.write_with_codec(bitmap.row_layout("INT", values))
    assert reference("bitmap", "INT", values) == codec_bytes == ps.build_index("bitmap", "INT", values)
    assert reference("range-bitmap", "INT", values) == range_bitmap.write_with_codec("INT", values)


#: (data type, column, input kinds): columns Paimon cannot hold, in each kind that can carry them
REFUSED: list[tuple[str, Callable[[], Any]]] = [
    ("INT", lambda: [2**31, 1]), ("INT", lambda: np.array([2**31, 1], np.int64)),
    ("INT", lambda: pa.array([2**31, None], pa.int64())), ("INT", lambda: pd.Series([2**31, None], dtype="Int64")),
    ("TINYINT", lambda: np.ma.masked_array(np.array([-129, 5], np.int16), mask=[False, True])),
    ("BIGINT", lambda: [2**63]), ("BIGINT", lambda: np.array([2**63], np.uint64)),
    ("BIGINT", lambda: pa.array([2**63], pa.uint64())),
    ("INT", lambda: [True, 1]), ("INT", lambda: np.array([True])), ("INT", lambda: pa.array([True])),
    ("INT", lambda: pd.Series([True, None], dtype="boolean")),
    ("INT", lambda: [1.0]), ("INT", lambda: np.array([1.0])), ("INT", lambda: pa.array([1.5])),
    ("INT", lambda: pd.Series([1.0, 2.0])), ("INT", lambda: ["1"]), ("INT", lambda: pa.array(["1"])),
    ("TIME", lambda: [86_400_000]), ("TIME", lambda: np.array([-1], np.int32)),
    ("TIME", lambda: pa.array([86_400_000], pa.int64())),
    ("DATE", lambda: [dt.datetime(2020, 1, 1)]),
    ("DATE", lambda: pa.array([dt.datetime(2020, 1, 1)])),
    ("DATE", lambda: np.array(["2020-01-01T10"], dtype="datetime64[h]")),
    ("DATE", lambda: np.array([5], "datetime64[ns]")),       # 5 ns is no date (nor 5 days)
    ("TIMESTAMP(3)", lambda: pa.array([dt.date(2020, 1, 1)])),
    ("TIMESTAMP(3)", lambda: np.array(["2020-01-01"], "datetime64[D]")),
    # past int64 microseconds: numpy's unit conversions would wrap them silently
    ("TIMESTAMP(3)", lambda: np.array([2**61, 0], "datetime64[10s]")),
    ("TIMESTAMP(6)", lambda: np.array([0, 2**60], "datetime64[s]")),
    ("TIMESTAMP(6)", lambda: np.array([-(2**50), 0], "datetime64[W]")),
    ("TIMESTAMP(6)", lambda: pa.array([0, 2**60], pa.timestamp("s"))),
    ("TIMESTAMP(6)", lambda: pd.Series(np.array([2**60, 0], "datetime64[s]"))),
    ("STRING", lambda: [1]), ("STRING", lambda: pa.array([1])), ("STRING", lambda: [b"a"]),
    ("STRING", lambda: pa.array([b"a"])), ("STRING", lambda: ["\ud800"]),
    ("STRING", lambda: np.array(["a", "\ud800"], dtype=object)),
    ("STRING", lambda: pd.Series(["a", None, float("nan"), 3], dtype=object)),
    ("BOOLEAN", lambda: [1, 0]), ("BOOLEAN", lambda: np.array([1, 0])), ("BOOLEAN", lambda: pa.array([1])),
    ("DOUBLE", lambda: [True]), ("DOUBLE", lambda: ["1.5"]), ("DOUBLE", lambda: [10**400]),
    ("DOUBLE", lambda: pa.array(["1.5"])),
    ("DECIMAL(10, 2)", lambda: [decimal.Decimal("123456789.01")]), ("DECIMAL(10, 2)", lambda: [10**8]),
    ("DECIMAL(10, 2)", lambda: np.array([10**8])), ("DECIMAL(10, 2)", lambda: pa.array([10**8])),
    ("DECIMAL(10, 2)", lambda: pa.array([decimal.Decimal("123456789.01")], pa.decimal128(11, 2))),
    ("DECIMAL(10, 2)", lambda: [1.5]),
]


@pytest.mark.parametrize("data_type, make", REFUSED, ids=[f"{t}-{i}" for i, (t, _) in enumerate(REFUSED)])
@pytest.mark.parametrize("index_type", list(INDEXES))
def test_refused_from_every_input_kind(index_type: str, data_type: str, make: Callable[[], Any]) -> None:
    """A column Paimon cannot hold is refused by every writer that takes its type, from every
    input kind, never written with a wrapped or truncated value."""
    if data_type not in INDEXES[index_type] and not (data_type == "STRING" and index_type == "bloom-filter"):
        with pytest.raises(ps.SchemaError, match=re.escape(f"does not support {DataType.parse(data_type)}")):
            ps.build_index(index_type, data_type, make())
        return
    with pytest.raises(ps.SchemaError):
        ps.build_index(index_type, data_type, make())


@pytest.mark.parametrize("values, message", [
    (5, "not int"), ("abc", "not str"), ({1, 2}, "not set"), ({1: 2}, "not dict"),
    (np.zeros((2, 2), np.int32), "one-dimensional, not a 2-d array"),
    (pa.array([[1, 2]]), re.escape("unsupported Arrow type list<item: int64> for a column of type INT")),
    (pa.table({"a": [1]}), "not Table"), (pd.DataFrame({"a": [1]}), "not DataFrame"),
])
def test_unsupported_inputs_are_named(values: Any, message: str) -> None:
    with pytest.raises(ps.SchemaError, match=message):
        ps.build_index("bitmap", "INT", values)


def test_unsupported_index_and_data_types_are_named() -> None:
    with pytest.raises(ps.SchemaError, match="unknown index type 'hash'"):
        ps.build_index("hash", "INT", [1])
    for index_type, data_type in [("bitmap", "DECIMAL(5, 2)"), ("bloom-filter", "BOOLEAN"),
                                  ("bsi", "STRING"), ("range-bitmap", "BYTES"),
                                  ("bsi", "DOUBLE"), ("bitmap", "BYTES")]:
        with pytest.raises(ps.SchemaError, match=re.escape(f"the {index_type} index does not support "
                                                           f"{DataType.parse(data_type)}")):
            ps.build_index(index_type, data_type, pa.array([None], pa.int32()))


def test_typed_in_bulk() -> None:
    """What the benchmark's columns become: arrays for the writers' compiled/numpy passes."""
    int_type, str_type = DataType.parse("INT"), DataType.parse("STRING")
    for column in ([1, None, 3], np.array([1, 2], np.int32), pa.array([1, None]),
                   pa.chunked_array([[1], [None, 2]]), pd.Series([1, None], dtype="Int64"),
                   pd.Series([1, 2]), np.ma.masked_array([1, 2], mask=[True, False]),
                   pd.Series([1, 2], dtype="category")):
        assert column_values(int_type, column).numbers is not None, column
    for column in (["a", None, "a"], pa.array(["a", None]), pa.array(["a", "b"]).dictionary_encode(),
                   pd.Series(["a", None], dtype="string[pyarrow]"), pd.Series(["a", None], dtype="string"),
                   pd.Series(["a", None]), pd.Series(["a", "b", "a"], dtype="category"),
                   np.array(["a", "b"]), np.array(["a", None], dtype=object)):
        assert column_values(str_type, column).strings is not None, column
    timestamps = column_values(DataType.parse("TIMESTAMP(3)"), pa.array([-1, 1_999], pa.timestamp("us")))
    assert timestamps.numbers.tolist() == [-1, 1]              # floored, as datetime arithmetic floors
    dates = column_values(DataType.parse("DATE"), np.array(["1969-12-31", "NaT"], "datetime64[D]"))
    assert dates.numbers.tolist() == [-1] and dates.valid.tolist() == [True, False]


def test_dictionary_with_duplicate_and_unused_entries() -> None:
    """Arrow lets a dictionary repeat a value or hold unused ones; the index sees values only."""
    column = pa.DictionaryArray.from_arrays(pa.array([0, 2, None, 0], pa.int8()),
                                            pa.array(["x", "unused", "x"]))
    for index_type in ("bitmap", "range-bitmap", "bloom-filter"):
        assert ps.build_index(index_type, "STRING", column) == \
            reference(index_type, "STRING", ["x", "x", None, "x"])


@given(st.lists(st.none() | st.sampled_from(["", "a", "é", "日本", "a\x00b"]) | st.text(max_size=4), max_size=50),
       st.integers(0, 3))
def test_arrow_strings_of_every_width_and_view_give_the_list_s_bytes(values: list[str | None], cut: int) -> None:
    """Distinct values sliced from the dictionary's buffers (string, large_string, binary,
    large_binary, at an offset) or decoded (views) give what the list gives."""
    text = [v for v in values if v is None or not any(0xD800 <= ord(c) < 0xE000 for c in v)]
    binary = [None if v is None else v.encode() for v in text]
    types_ = [(pa.string(), "STRING", text), (pa.large_string(), "STRING", text), (pa.binary(), "BYTES", binary),
              (pa.large_binary(), "BYTES", binary)]
    if hasattr(pa, "string_view"):
        types_.append((pa.string_view(), "STRING", text))
    for arrow_type, data_type, column in types_:
        sliced = pa.array(["x"] * cut + column, type=arrow_type)[cut:]
        index_type = "bitmap" if data_type == "STRING" else "bloom-filter"
        assert ps.build_index(index_type, data_type, sliced) == ps.build_index(index_type, data_type, column), \
            arrow_type
        assert ps.build_index("range-bitmap", "STRING", sliced) == ps.build_index("range-bitmap", "STRING", text) \
            if data_type == "STRING" else True


@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string()])
@pytest.mark.parametrize("index_type", ["bitmap", "range-bitmap"])
def test_arrow_strings_that_are_not_utf8_are_refused(arrow_type: pa.DataType, index_type: str) -> None:
    """Arrow builds a string array of any bytes without checking them; a STRING index of one
    is refused as the list path refuses a lone surrogate (a SchemaError naming the bytes),
    never with Python's UnicodeDecodeError."""
    width = 4 if arrow_type == pa.string() else 8
    offsets = b"".join(n.to_bytes(width, "little") for n in (0, 2, 4))
    bad = pa.Array.from_buffers(arrow_type, 2, [None, pa.py_buffer(offsets), pa.py_buffer(b"\xff\xfeok")])
    for column in (bad, pa.chunked_array([bad, bad])):
        with pytest.raises(ps.SchemaError, match="not valid UTF-8: b'\\\\xff"):
            ps.build_index(index_type, "STRING", column)
    assert ps.build_index(index_type, "STRING", bad[1:]) == ps.build_index(index_type, "STRING", ["ok"])


def test_pandas_missing_values_are_null() -> None:
    """pandas' missing values in an object Series (None, NaN, NA, NaT) are NULL; in a float
    Series NaN stays the float NaN (as from numpy), and only a nullable dtype's mask is NULL."""
    strings = pd.Series(["a", None, float("nan"), "b", pd.NA, pd.NaT, "a"], dtype=object)
    assert ps.build_index("bitmap", "STRING", strings) == \
        reference("bitmap", "STRING", ["a", None, None, "b", None, None, "a"])
    ints = pd.Series([1, None, float("nan"), pd.NA, 3], dtype=object)
    assert ps.build_index("bsi", "INT", ints) == reference("bsi", "INT", [1, None, None, None, 3])
    floats = pd.Series([1.5, float("nan")])
    assert ps.build_index("bitmap", "DOUBLE", floats) == reference("bitmap", "DOUBLE", [1.5, math.nan])
    nullable = pd.Series([1.5, None], dtype="Float64")
    assert ps.build_index("bitmap", "DOUBLE", nullable) == reference("bitmap", "DOUBLE", [1.5, None])


@pytest.mark.parametrize("column", [["x" * 100, None], pa.array(["x" * 100, None]),
                                    pd.Series(["x" * 100, None], dtype="string")])
def test_declined_typed_columns_reach_the_per_row_pass(column: Any) -> None:
    """A typed column the bulk pass declines (a key larger than an index block) goes to the
    per-row pass as plain values, which refuses it as Java does."""
    with pytest.raises(ps.SchemaError, match="index-block-size 32 cannot hold the key 'x"):
        ps.build_index("bitmap", "STRING", column, version=2, index_block_size=32)
    rows = column_values(DataType.parse("DECIMAL(10, 2)"), pa.array([1, None, -2])).python_rows()
    assert rows == [decimal.Decimal("1.00"), None, decimal.Decimal("-2.00")]
