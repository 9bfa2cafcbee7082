"""Data types, value -> key mapping, Java ordering, and IndexResult algebra."""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap

from paimon_schema import SchemaError
from paimon_schema.layouts.paimon_common import KeyKind, bitmap_keys, range_bitmap_keys
from paimon_schema.values.results import REMAIN, SKIP, FileIndexReader, IndexResult
from paimon_schema.values.types import DataType, float_bits, float_order, internal


@pytest.mark.parametrize("text, expected", [
    ("int", "INT"), ("INTEGER NOT NULL", "INT"), ("string", "STRING"), ("VARCHAR(10)", "VARCHAR(10)"),
    ("char", "CHAR(1)"), ("bytes", "BYTES"), ("BINARY(4)", "BINARY(4)"), ("decimal", "DECIMAL(10, 0)"),
    ("DECIMAL(5, 2)", "DECIMAL(5, 2)"), ("time", "TIME(0)"), ("timestamp", "TIMESTAMP(6)"),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("timestamp_ltz(6)", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
])
def test_parse_type(text: str, expected: str) -> None:
    assert str(DataType.parse(text)) == expected


@pytest.mark.parametrize("text", ["ARRAY<INT>", "INT(3)", "DECIMAL(40, 2)", "TIMESTAMP(10)", "MAP", "", "VARCHAR(1, 2)"])
def test_bad_types_are_schema_errors(text: str) -> None:
    with pytest.raises(SchemaError):
        DataType.parse(text)


def T(text: str) -> DataType:
    return DataType.parse(text)


@pytest.mark.parametrize("data_type, value, expected", [
    ("TINYINT", -128, -128), ("BIGINT", 2**63 - 1, 2**63 - 1), ("BOOLEAN", True, True),
    ("FLOAT", 0.1, struct.unpack(">f", struct.pack(">f", 0.1))[0]), ("FLOAT", 1e300, math.inf),
    ("DOUBLE", 1, 1.0), ("STRING", "派蒙", "派蒙".encode()), ("BYTES", b"\x00", b"\x00"),
    ("DECIMAL(5, 2)", Decimal("1.005"), 101), ("DECIMAL(5, 2)", -3, -300), ("DECIMAL(18, 0)", "12", 12),
    ("DATE", dt.date(2024, 1, 17), 19739), ("DATE", -1, -1),
    ("TIME(3)", dt.time(23, 59, 59, 999_999), 86_399_999), ("TIME", 5, 5),
    ("TIMESTAMP(3)", dt.datetime(1970, 1, 1, 0, 0, 0, 1500), 1),
    ("TIMESTAMP(6)", dt.datetime(1969, 12, 31, 23, 59, 59, 999_999), -1),   # spec: ts(-1 ms, 999999 ns)
    ("TIMESTAMP(9)", dt.datetime(2025, 4, 25, tzinfo=dt.timezone(dt.timedelta(hours=2))),
     (dt.datetime(2025, 4, 24, 22) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", 1700000000123, 1700000000123),
    ("INT", None, None),
])
def test_internal_values(data_type: str, value, expected) -> None:
    assert internal(T(data_type), value) == expected


@pytest.mark.parametrize("data_type, value", [
    ("INT", True), ("INT", 2**31), ("TINYINT", 128), ("INT", 1.0), ("BOOLEAN", 1), ("DOUBLE", "1"),
    ("STRING", b"a"), ("STRING", "\ud800"), ("BYTES", "a"), ("DECIMAL(5, 2)", Decimal("1234.5")),
    ("DECIMAL(5, 2)", 1.5), ("DECIMAL(5, 2)", Decimal("NaN")), ("DATE", dt.datetime(2024, 1, 1)),
    ("TIME", 86_400_000), ("TIMESTAMP(6)", dt.date(2024, 1, 1)), ("TIMESTAMP(6)", 2**63),
])
def test_values_that_do_not_fit_are_schema_errors(data_type: str, value) -> None:
    with pytest.raises(SchemaError):
        internal(T(data_type), value)


def test_java_float_order() -> None:
    values = [math.inf, 0.0, -0.0, -math.inf, math.nan, -1.5, 1.5, 5e-324, -5e-324]
    java_order = [-math.inf, -1.5, -5e-324, -0.0, 0.0, 5e-324, 1.5, math.inf, math.nan]
    got = sorted(values, key=lambda v: float_order(float_bits(v, 64, canonical=False), 64))
    assert [repr(v) for v in got] == [repr(v) for v in java_order]
    negative_nan = struct.unpack(">Q", struct.pack(">d", -math.nan))[0]
    assert float_order(negative_nan, 64) == float_order(float_bits(math.nan, 64, True), 64)


@given(st.lists(st.floats(width=32, allow_nan=False), min_size=2))
def test_float32_order_agrees_with_numbers(values: list[float]) -> None:
    by_bits = sorted(values, key=lambda v: float_order(float_bits(v, 32, False), 32))
    assert [v for v in by_bits] == sorted(values, key=lambda v: (v, math.copysign(1, v)))


def test_key_codecs() -> None:
    assert bitmap_keys("FLOAT").encode(math.nan) == 0x7FC00000
    raw_nan = struct.unpack(">d", bytes.fromhex("7ff0000000000001"))[0]
    assert range_bitmap_keys("DOUBLE").encode(raw_nan) == 0x7FF0000000000001
    assert bitmap_keys("DOUBLE").encode(raw_nan) == 0x7FF8000000000000
    assert bitmap_keys("BOOLEAN").encode(True) == 1
    assert bitmap_keys("STRING").encode("é") == b"\xc3\xa9"
    assert bitmap_keys("TIMESTAMP(9)").kind == KeyKind.int64
    assert range_bitmap_keys("DECIMAL(18, 2)").encode(Decimal("1.25")) == 125
    for unsupported in ("DECIMAL(5, 2)", "BYTES"):
        with pytest.raises(SchemaError):
            bitmap_keys(unsupported)
    for unsupported in ("DECIMAL(19, 2)", "TIMESTAMP(9)", "BYTES"):
        with pytest.raises(SchemaError):
            range_bitmap_keys(unsupported)


ROWS = IndexResult.of(BitMap([1, 2]))
NONE = IndexResult.of(BitMap())


@pytest.mark.parametrize("a, b, both, either", [
    (REMAIN, REMAIN, REMAIN, REMAIN),
    (REMAIN, SKIP, SKIP, REMAIN),
    (REMAIN, ROWS, ROWS, REMAIN),
    (SKIP, ROWS, SKIP, ROWS),
    (SKIP, SKIP, SKIP, SKIP),
    (NONE, ROWS, NONE, ROWS),
    (NONE, REMAIN, NONE, REMAIN),
])
def test_result_algebra(a: IndexResult, b: IndexResult, both: IndexResult, either: IndexResult) -> None:
    for x, y in ((a, b), (b, a)):
        assert (x & y).remain == both.remain and (x & y).rows == both.rows
        assert (x | y).remain == either.remain and (x | y).rows == either.rows


def test_reader_defaults_are_javas() -> None:
    reader = FileIndexReader()
    assert reader.equal(1) is REMAIN and reader.less_than(1) is REMAIN and reader.top_n(3) is REMAIN
    assert reader.in_([1, 2]) is REMAIN and reader.not_in([1]) is REMAIN
    assert not reader.in_([]).remain
