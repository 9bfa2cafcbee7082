"""Writers under adversarial logical input: wrong Python types for the column, NaN, huge strings
(1 MB values, names past 65535 bytes of modified UTF-8), names that collide once encoded,
positions out of range, negative, bool or float, mixed types, options out of range.

Every writer either returns bytes that our readers read back as exactly what was written (at the
model level: the same positions, columns, blobs, hashes; each value's rows and the null rows)
or raises `ps.SchemaError` with a message; never another exception, never a file that reads
back differently.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.values import types

DATA_TYPES = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
              "DECIMAL(10, 2)", "DECIMAL(18, 0)", "DECIMAL(38, 4)", "STRING", "VARCHAR(3)", "CHAR(2)",
              "DATE", "TIME", "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)",
              "TIMESTAMP_LTZ(3)", "BYTES", "BINARY(2)"]
HUGE_STRING = "x" * (1 << 20)

ODD_VALUES = [object(), [1], (1,), {1: 2}, np.int64(3), np.int8(-1), np.float32(1.5),
              np.bool_(True), np.uint64(2**64 - 1), 10**400, -10**400, complex(1, 0), b"\xff",
              bytearray(b"a"), "\ud800", "\U0001F600", HUGE_STRING, decimal.Decimal("NaN"),
              decimal.Decimal("-Infinity"), decimal.Decimal("1E+40"), math.nan, -math.inf,
              dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=5))),
              dt.datetime.max, dt.date.min, dt.time(23, 59, 59, 999999), 2**63, -2**63 - 1]

junk = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(width=64),
    st.text(max_size=4), st.binary(max_size=4), st.decimals(allow_nan=True, allow_infinity=True),
    st.dates(), st.datetimes(timezones=st.none() | st.just(dt.timezone.utc)), st.times(),
    st.sampled_from(ODD_VALUES))


def valid_for(data_type: str) -> st.SearchStrategy:
    root = types.DataType.parse(data_type).root
    return {
        "BOOLEAN": st.booleans(), "TINYINT": st.integers(-128, 127), "SMALLINT": st.integers(-2**15, 2**15 - 1),
        "INT": st.integers(-2**31, 2**31 - 1), "BIGINT": st.integers(-2**63, 2**63 - 1),
        "FLOAT": st.floats(width=32), "DOUBLE": st.floats(),
        "DECIMAL": st.decimals(places=2, min_value=-10**6, max_value=10**6, allow_nan=False),
        "VARCHAR": st.text(max_size=6), "CHAR": st.text(max_size=6),
        "DATE": st.dates() | st.integers(-2**31, 2**31 - 1),
        "TIME": st.times() | st.integers(0, 86_399_999),
        "TIMESTAMP": st.datetimes() | st.integers(-2**62, 2**62),
        "TIMESTAMP_LTZ": st.datetimes(timezones=st.just(dt.timezone.utc)),
    }.get(root, st.binary(max_size=4))


@st.composite
def columns_of_values(draw) -> tuple[str, list]:
    data_type = draw(st.sampled_from(DATA_TYPES))
    value = valid_for(data_type) | st.none()
    values = draw(st.lists(st.one_of(value, value, value, junk), max_size=25))
    return data_type, values


OPTIONS = {
    "bitmap": st.fixed_dictionaries({}, optional={
        "version": st.sampled_from([1, 2, 0, 3, -1, "1", "2", True, 2.0, None]),
        "index_block_size": st.sampled_from(["16kb", "64b", "1b", "0b", "-1kb", 0, 1, 10**12,
                                             "1 tb", "abc", 1.5, None])}),
    "bloom-filter": st.fixed_dictionaries({}, optional={
        "items": st.sampled_from([10, 1, 0, -1, 2**31, 1.5, "10", True, None]),
        "fpp": st.sampled_from([0.1, 0.5, 1e-9, 0, 1, 1.5, -0.1, math.nan, math.inf, "0.1", None])}),
    "bsi": st.fixed_dictionaries({}, optional={"chunk_size": st.just("16kb")}),
    "range-bitmap": st.fixed_dictionaries({}, optional={
        "chunk_size": st.sampled_from(["16kb", "8b", "1b", "0b", "-1", 0, 3, "x", 10**12, None])}),
}


def key(data_type: str, value: Any) -> Any:
    """When two values are the same index key (floats compared as Java compares them)."""
    dtype = types.DataType.parse(data_type)
    if dtype.root in ("FLOAT", "DOUBLE"):
        x = types.float32(float(value)) if dtype.root == "FLOAT" else float(value)
        return "NaN" if math.isnan(x) else (x, math.copysign(1.0, x))
    return types.internal(dtype, value)


def check_read_back(index_type: str, data_type: str, values: list, blob: bytes) -> None:
    reader = ps.open_index(index_type, blob, data_type)
    rows_of: dict[Any, BitMap] = {}
    for row, v in enumerate(values):
        if v is not None:
            rows_of.setdefault(key(data_type, v), BitMap()).add(row)
    nulls = BitMap(r for r, v in enumerate(values) if v is None)
    representative = {}
    for v in values:
        if v is not None:
            representative.setdefault(key(data_type, v), v)
    if index_type == "bloom-filter":
        for v in representative.values():
            assert reader.might_contain(v), f"{v!r} written but the bloom filter says absent"
        return
    assert reader.null_rows == nulls, (reader.null_rows, nulls)
    for k, v in representative.items():
        result = reader.equal(v)
        if index_type == "bsi" or index_type == "range-bitmap" or index_type == "bitmap":
            assert result.rows == rows_of[k], (v, result, rows_of[k])
    if index_type == "bsi":
        expected = {r: types.internal(types.DataType.parse(data_type), v) for r, v in enumerate(values)
                    if v is not None}
        assert reader.values() == expected
    if index_type in ("bitmap", "range-bitmap") and types.DataType.parse(data_type).root in (
            "TINYINT", "SMALLINT", "INT", "BIGINT", "VARCHAR", "CHAR", "BOOLEAN"):
        decoded = {value: BitMap(rows) for value, rows in reader.items()}
        expected_rows = {representative[k] if not isinstance(representative[k], np.generic)
                         else representative[k].item(): rows for k, rows in rows_of.items()}
        assert decoded == {(bool(v) if isinstance(v, (bool, np.bool_)) else v): r
                           for v, r in expected_rows.items()}, (decoded, expected_rows)


def refused_clearly(exc: ps.SchemaError) -> None:
    assert isinstance(exc, ValueError) and str(exc).strip(), repr(exc)


@given(st.sampled_from(["bitmap", "bloom-filter", "bsi", "range-bitmap"]), columns_of_values(),
       st.data())
@example("bitmap", ("FLOAT", [10**400]), None)
@example("range-bitmap", ("DOUBLE", [-10**400]), None)
@example("bitmap", ("STRING", [decimal.Decimal("sNaN")]), None)
@example("bitmap", ("STRING", [[1]]), None)
def test_build_index(index_type: str, column: tuple[str, list], data) -> None:
    data_type, values = column
    options = data.draw(OPTIONS[index_type]) if data is not None else {}
    options = {k: v for k, v in options.items() if v is not None}
    try:
        blob = ps.build_index(index_type, data_type, values, **options)
    except ps.SchemaError as exc:
        refused_clearly(exc)
        return
    assert isinstance(blob, bytes)
    check_read_back(index_type, data_type, values, blob)


names = st.text(alphabet=st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
                | st.sampled_from(["\U0001F600", "\ud83d", "\ude00", "\x00", "é"]), max_size=5)
blobs = st.none() | st.binary(max_size=8) | st.sampled_from([bytearray(b"ab"), memoryview(b"xyz")[1:],
                                                              "str", 5, [1]])


@given(st.dictionaries(names | st.sampled_from(["a" * 70000, "ä" * 21845, "ä" * 21846, 5]),
                       st.dictionaries(names, blobs, max_size=3), max_size=4))
@example({"\U00010000": {"b": b"x"}, "\ud800\udc00": {"b": b"y"}})
@example({"a": {"\U0001F600": b"x", "\ud83d\ude00": b"y"}})
@example({"\ud800\ude00": {}})
def test_write_file_index(columns: dict) -> None:
    try:
        data = ps.write_file_index(columns)
    except ps.SchemaError as exc:
        refused_clearly(exc)
        return
    parsed = ps.FileIndexFile.parse(data)
    assert parsed.column_names == list(columns)
    assert parsed.columns == {name: {t: None if b is None else bytes(b) for t, b in indexes.items()}
                              for name, indexes in columns.items()}
    assert [(e.column, e.index_type) for e in parsed.entries] == [
        (name, t) for name, indexes in columns.items() for t in indexes]
    assert not parsed.warnings


positions = st.one_of(
    st.lists(st.integers(0, 2**31 - 1) | junk, max_size=20),
    st.lists(st.integers(0, 2**40), max_size=10),
    st.sampled_from([range(0, 5000, 7), BitMap([1, 70000]), BitMap64([2**33]), {3, 1},
                     np.array([5, 1, 5], dtype=np.int64), np.array([1.0]), np.array([2**63], dtype=np.uint64),
                     np.array([-1]), np.array([True]), np.array([[1, 2]]), 5, None, "12", b"\x01"]))


@given(st.dictionaries(st.text(max_size=3) | st.sampled_from([1, None, b"a"]), positions, max_size=4),
       st.booleans())
def test_write_deletion_vectors(vectors: dict, bitmap64: bool) -> None:
    try:
        data, ranges = ps.write_deletion_vectors(vectors, bitmap64=bitmap64)
    except ps.SchemaError as exc:
        refused_clearly(exc)
        return
    parsed = ps.DeletionVectorFile.parse(data)
    assert list(ranges) == list(vectors)
    assert len(parsed.bins) == len(vectors)
    for (name, given_positions), b in zip(vectors.items(), parsed.bins):
        expected = sorted({int(p) for p in np.asarray(
            list(given_positions) if not isinstance(given_positions, np.ndarray) else given_positions
        ).ravel().tolist()})
        assert b.bitmap64 == bitmap64
        assert list(b.bitmap) == expected, (name, given_positions)
        assert (b.offset, b.length) == ranges[name]
        assert list(ps.read_deletion_vector(data, *ranges[name])) == expected


@given(st.one_of(st.lists(st.integers(-2**31, 2**31 - 1) | junk, max_size=20),
                 st.sampled_from([np.array([1, -1], dtype=np.int64), np.array([2**40]), np.array([1.5]),
                                  np.array([True]), np.uint32([2**32 - 1]), range(3), 5, None])))
@example([0, [1]])
@example(["", b"\x80"])
def test_write_hash_index(hashes) -> None:
    try:
        data = ps.write_hash_index(hashes)
    except ps.SchemaError as exc:
        refused_clearly(exc)
        return
    expected = [int(h) for h in np.asarray(list(hashes) if not isinstance(hashes, np.ndarray)
                                           else hashes).ravel().tolist()]
    assert ps.read_hash_index(data).tolist() == expected


@pytest.mark.parametrize("columns", [{"a": None}, {"a": [("bitmap", b"x")]}, "abc", None],
                         ids=["column mapped to None", "column mapped to a list", "a string", "None"])
def test_write_file_index_refuses_non_mappings(columns) -> None:
    """Bug: `write_file_index` lets AttributeError/TypeError escape for input that is not a
    {column: {index type: blob}} mapping; every other writer says SchemaError for wrong types
    (write_deletion_vectors(positions=5) does). Fix: check `isinstance(columns, Mapping)` and each
    value's in `write_file_index` and raise SchemaError naming the column."""
    with pytest.raises(ps.SchemaError):
        ps.write_file_index(columns)


def test_float_columns_refuse_ints_beyond_double() -> None:
    """Bug: `types.internal` does `float(value)` on an int too large for a double: OverflowError
    escapes `build_index` for FLOAT/DOUBLE (bitmap, bloom-filter, range-bitmap), the readers'
    predicates (`reader.equal(10**400)`) and `ps.evaluate`. The contract: a value that does not
    fit the column's type raises SchemaError. Fix: in `types.internal`, catch OverflowError
    around `float(value)` and raise SchemaError("... too large for FLOAT/DOUBLE")."""
    for index_type in ("bitmap", "bloom-filter", "range-bitmap"):
        for data_type in ("FLOAT", "DOUBLE"):
            with pytest.raises(ps.SchemaError):
                ps.build_index(index_type, data_type, [10**400])
            reader = ps.open_index(index_type, ps.build_index(index_type, data_type, [1.5]), data_type)
            with pytest.raises(ps.SchemaError):
                reader.equal(10**400)
    container = ps.write_file_index({"d": {"bitmap": ps.build_index("bitmap", "DOUBLE", [1.5])}})
    with pytest.raises(ps.SchemaError):
        ps.evaluate(container, ps.col("d") == -10**400, {"d": "DOUBLE"})


def test_container_names_that_collide_once_encoded_are_refused() -> None:
    """Bug: "\\U00010000" and the surrogate pair "\\ud800\\udc00" are different Python strings
    with the same modified UTF-8 (ed a0 80 ed b0 80), so `write_file_index` writes two columns
    that read back as ONE (the first blob is lost: Java merges them, the last entry wins). Same
    for index types of one column. Fix: in `write_file_index`, refuse (SchemaError) a column
    name or index type whose encoding repeats an earlier one."""
    with pytest.raises(ps.SchemaError):
        ps.write_file_index({"\U00010000": {"bitmap": b"x"}, "\ud800\udc00": {"bitmap": b"y"}})
    with pytest.raises(ps.SchemaError):
        ps.write_file_index({"a": {"\U0001F600": b"x", "\ud83d\ude00": b"y"}})



def test_bitmap_string_columns_refuse_unhashable_values() -> None:
    """Bug (in the working copy's new `bitmap._string_column` fast path): it numbers values with
    a dict before checking their type, so an unhashable value (list, dict, bytearray) or
    Decimal('sNaN') in a STRING column raises TypeError instead of SchemaError. INT columns
    refuse the same values properly. Fix: in `_string_column`, catch TypeError around the
    numbering and return None (the checked path then raises SchemaError)."""
    for bad in ([1], {1: 2}, bytearray(b"a"), decimal.Decimal("sNaN")):
        for version in (1, 2):
            with pytest.raises(ps.SchemaError):
                ps.build_index("bitmap", "STRING", ["a", bad], version=version)


def test_write_hash_index_refuses_ragged_input() -> None:
    """Bug: `write_hash_index([0, [1]])` lets numpy's ValueError ("inhomogeneous shape")
    escape, and `write_hash_index(["", b"\\x80"])` a UnicodeDecodeError; it catches only
    TypeError around `np.asarray`. Fix: catch ValueError too (UnicodeDecodeError is one)."""
    for hashes in ([0, [1]], ["", b"\x80"]):
        with pytest.raises(ps.SchemaError):
            ps.write_hash_index(hashes)
