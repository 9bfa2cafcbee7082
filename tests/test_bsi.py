"""The BSI reader answers every predicate as Java's `BitSliceIndexBitmapFileIndex` does.

The truth for each predicate is computed straight from the column values (longs; nulls never
match; `!=` and NOT IN exclude nulls). Java's 2.0.0 answers for a `Long.MIN_VALUE` literal are
the truth too, since no stored value can be MIN. It is checked on every real BSI blob (their
column values written out below, as the paimon-cpp and paimon-rust tests that wrote them state), on the spec's examples,
and on random columns encoded by `encode`, a writer written from formats/bsi_index.ksy
that reproduces the real blobs byte for byte.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from fixture_catalog import CONTAINERS
from hypothesis import example, given
from hypothesis import strategies as st
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.layouts.bsi_index import BsiIndexReader, build_bsi
from paimon_schema.layouts.registry import open_index
from paimon_schema.values.results import IndexResult

LONG_MIN, LONG_MAX = -2**63, 2**63 - 1

# ---------------------------------------------------------------------------------------------
# A writer from the spec (formats/bsi_index.ksy), kept in the test.


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def roaring(rows) -> bytes:
    bitmap = BitMap()
    for row in rows:
        bitmap.add(row)
    bitmap.run_optimize()
    return bitmap.serialize()


def encode(values: list[int | None]) -> bytes:
    """The BSI blob Java writes for `values` (longs, None = null)."""
    positive = [(r, v) for r, v in enumerate(values) if v is not None and v >= 0]
    negative = [(r, -v) for r, v in enumerate(values) if v is not None and v < 0]
    out = struct.pack(">bi", 1, len(values))
    for part in (positive, negative):
        out += b"\x01" + _part(part) if part else b"\x00"
    return out


def _part(entries: list[tuple[int, int]]) -> bytes:
    top = max(v for _, v in entries)
    slices = [roaring(r for r, v in entries if v >> i & 1) for i in range(top.bit_length())]
    return (struct.pack(">bqq", 1, 0, top) + roaring(r for r, _ in entries)
            + struct.pack(">i", len(slices)) + b"".join(slices))


# ---------------------------------------------------------------------------------------------
# The truth, from the values.


def truth(values: list, test: Callable[[int], bool]) -> BitMap:
    return BitMap(r for r, v in enumerate(values) if v is not None and test(v))


def assert_rows(result: IndexResult, expected: BitMap, what: str) -> None:
    assert result.rows is not None, f"{what}: REMAIN, expected rows {list(expected)}"
    assert result.rows == expected, f"{what}: {list(result.rows)} != {list(expected)}"
    assert result.remain == bool(expected), what


def check_everything(reader: BsiIndexReader, values: list, probes: list[int]) -> None:
    """Every predicate for every probe against the truth, and the decoded values."""
    assert reader.num_rows == len(values)
    assert reader.values() == {r: v for r, v in enumerate(values) if v is not None}
    assert_rows(reader.is_null(), BitMap(r for r, v in enumerate(values) if v is None), "is_null")
    assert_rows(reader.is_not_null(), truth(values, lambda v: True), "is_not_null")
    for p in probes:
        checks = {
            "equal": (reader.equal, lambda v: v == p),
            "not_equal": (reader.not_equal, lambda v: v != p),
            "less_than": (reader.less_than, lambda v: v < p),
            "less_or_equal": (reader.less_or_equal, lambda v: v <= p),
            "greater_than": (reader.greater_than, lambda v: v > p),
            "greater_or_equal": (reader.greater_or_equal, lambda v: v >= p),
        }
        for name, (predicate, test) in checks.items():
            assert_rows(predicate(p), truth(values, test), f"{name}({p})")
    for i in range(0, len(probes), 3):
        group = probes[i:i + 3]
        assert_rows(reader.in_(group), truth(values, lambda v: v in group), f"in {group}")
        assert_rows(reader.not_in(group), truth(values, lambda v: v not in group),
                    f"not in {group}")
        low, high = min(group), max(group)
        assert_rows(reader.between(low, high), truth(values, lambda v: low <= v <= high),
                    f"between {low} and {high}")


def probes_for(values: list, low: int, high: int) -> list[int]:
    """The column's values, their neighbours, zero, -1 and the type's ends."""
    present = [v for v in values if v is not None]
    near = [v + d for v in present for d in (-1, 1) if low <= v + d <= high]
    return present + near + [low, high, 0, -1, 1, low + 1]


RANGES = {"INT": (-2**31, 2**31 - 1), "BIGINT": (LONG_MIN, LONG_MAX),
          "TIMESTAMP(9)": (LONG_MIN, LONG_MAX)}

# ---------------------------------------------------------------------------------------------
# Real blobs.

TIMESTAMPS = [1745542802000123, 1745542902000123, 1745542602000123, -1744877, -1764877, None,
              1745542802000123, -1724877]
TABLE_COLUMNS = {
    "f1": ("INT", [100, 200, 300, 50, 500, 100, None, 20]),
    "f2": ("INT", [-2, -3, 1, 1, -1, 2, -2, None]),
    "f4": ("TIMESTAMP(9)", TIMESTAMPS),
}
STANDALONE = {
    "paimon-rust/bsi/java_int.bin": ("INT", [None, -5, -2, 0, 3, 8, None]),
    "paimon-cpp/bsi/int_mix.bin": ("INT", [1, 2, None, -2, -2, -1, None, 2, 0, 5, None]),
    "paimon-cpp/bsi/int_positive_only.bin": ("INT", [0, 1, None, 3, 4, 5, 6, 0, None]),
    "paimon-cpp/bsi/int_negative_only.bin": ("INT", [None, -1, None, -3, -4, -5, -6, -1, None]),
    "paimon-cpp/bsi/null_1_null_2_minus1.bin": ("INT", [None, 1, None, 2, -1]),
    "paimon-cpp/bsi/timestamp9.bin": ("TIMESTAMP(9)", TIMESTAMPS),
}
TABLES = ("append_with_bsi", "append_with_bsi_bitmap_bloomfilter")
SIDECARS = {table: path for path in CONTAINERS for table in TABLES if f"/{table}/bucket-0/" in path}
REAL_BLOBS = [*STANDALONE, *(f"{t}/{c}" for t in TABLES for c in TABLE_COLUMNS)]


def real_blob(shared_fixtures: Path, name: str) -> tuple[bytes, str, list]:
    """(blob, data type, values) of a real BSI blob."""
    if name in STANDALONE:
        return ((shared_fixtures / name).read_bytes(), *STANDALONE[name])
    table, column = name.split("/")
    container = ps.FileIndexFile.parse((shared_fixtures / SIDECARS[table]).read_bytes())
    return (container.columns[column]["bsi"], *TABLE_COLUMNS[column])


@pytest.mark.parametrize("name", REAL_BLOBS)
def test_real_blob_answers_every_predicate(shared_fixtures: Path, name: str) -> None:
    blob, data_type, values = real_blob(shared_fixtures, name)
    for as_type in {data_type, "BIGINT"}:            # BIGINT to probe Long.MIN_VALUE too
        reader = BsiIndexReader.open(blob, as_type)
        check_everything(reader, values, probes_for(values, *RANGES[as_type]))


@pytest.mark.parametrize("name", REAL_BLOBS)
def test_the_test_writer_reproduces_the_real_blob(shared_fixtures: Path, name: str) -> None:
    """So the random blobs below are what Java would write."""
    blob, data_type, values = real_blob(shared_fixtures, name)
    assert encode(values) == blob
    assert build_bsi(data_type, values) == blob


def test_primitive_types_read_the_same_blob(shared_fixtures: Path) -> None:
    """paimon-cpp's null_1_null_2_minus1 serves TINYINT, SMALLINT, INT, DATE, BIGINT and
    TIMESTAMP; typed literals map to the same longs."""
    blob = (shared_fixtures / "paimon-cpp/bsi/null_1_null_2_minus1.bin").read_bytes()
    for data_type in ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIMESTAMP(3)",
                      "TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIME", "DECIMAL(5, 0)"):
        reader = BsiIndexReader.open(blob, data_type)
        assert list(reader.null_rows) == [0, 2]
    reader = BsiIndexReader.open(blob, "DATE")
    assert list(reader.greater_than(dt.date(1970, 1, 1)).rows) == [1, 3]
    assert list(reader.equal(dt.date(1969, 12, 31)).rows) == [4]
    reader = BsiIndexReader.open(blob, "DECIMAL(5, 2)")
    assert list(reader.equal(decimal.Decimal("0.02")).rows) == [3]
    assert list(reader.less_than(decimal.Decimal("0")).rows) == [4]
    reader = BsiIndexReader.open((shared_fixtures / "paimon-cpp/bsi/timestamp9.bin").read_bytes(),
                                 "TIMESTAMP(9)")
    moment = dt.datetime(2025, 4, 25, 1, 0, 2, 123)         # 1745542802000123 micros
    assert list(reader.equal(moment).rows) == [0, 6]


# ---------------------------------------------------------------------------------------------
# The spec's examples (formats/bsi_index.ksy).


def test_spec_example() -> None:
    values = [5, -3, None, 0, 2, -1]
    blob = (h("01 00000006  01 01 0000000000000000 0000000000000005") + roaring([0, 3, 4])
            + h("00000003") + roaring([0]) + roaring([4]) + roaring([0])
            + h("01 01 0000000000000000 0000000000000003") + roaring([1, 5])
            + h("00000002") + roaring([1, 5]) + roaring([1]))
    assert encode(values) == blob
    check_everything(BsiIndexReader.open(blob, "INT"), values, probes_for(values, *RANGES["INT"]))


def test_zero_rows() -> None:
    blob = h("01 00000000 00 00")
    assert encode([]) == blob
    reader = BsiIndexReader.open(blob, "INT")
    check_everything(reader, [], [0, -1, 5])
    assert reader.not_in([]).rows == BitMap() and reader.in_([]).rows == BitMap()


def test_zeros_have_no_slices() -> None:
    values = [0, 0]
    blob = encode(values)
    assert blob == (h("01 00000002 01 01 0000000000000000 0000000000000000") + roaring([0, 1])
                    + h("00000000 00"))
    reader = BsiIndexReader.open(blob, "BIGINT")
    assert reader.positive.slices == []
    check_everything(reader, values, probes_for(values, *RANGES["BIGINT"]))


@pytest.mark.parametrize("values", [[None, None, None], [LONG_MIN + 1, LONG_MAX, None, -1, 0]])
def test_extremes_and_all_null(values: list) -> None:
    check_everything(BsiIndexReader.open(encode(values), "BIGINT"), values,
                     probes_for(values, *RANGES["BIGINT"]))


def test_long_min_literal() -> None:
    """Since 2.0.0: |MIN| overflows, so Java answers MIN as below every stored value."""
    values = [3, None, -7, 0]
    reader = BsiIndexReader.open(encode(values), "BIGINT")
    assert reader.equal(LONG_MIN).rows == BitMap() and not reader.equal(LONG_MIN).remain
    assert reader.less_than(LONG_MIN).rows == reader.less_or_equal(LONG_MIN).rows == BitMap()
    for result in (reader.greater_than(LONG_MIN), reader.greater_or_equal(LONG_MIN),
                   reader.not_equal(LONG_MIN), reader.not_in([LONG_MIN])):
        assert list(result.rows) == [0, 2, 3]
    assert list(reader.in_([LONG_MIN, -7]).rows) == [2]


def test_open_index_knows_the_type() -> None:
    reader = open_index("bsi", encode([5, -3, None, 0]), "INT")
    assert isinstance(reader, BsiIndexReader)
    assert list(reader.between(-3, 0).rows) == [1, 3]


def test_null_literals_never_narrow() -> None:
    reader = BsiIndexReader.open(encode([1, None, -2]), "INT")
    for result in (reader.equal(None), reader.not_equal(None), reader.less_than(None),
                   reader.greater_or_equal(None), reader.in_([1, None]), reader.not_in([None])):
        assert result.remain and result.rows is None


def test_unsupported_types_and_values() -> None:
    blob = encode([1, None, -2])
    for data_type in ("STRING", "FLOAT", "DOUBLE", "BOOLEAN", "BYTES"):
        with pytest.raises(ps.SchemaError):
            BsiIndexReader.open(blob, data_type)
    with pytest.raises(ps.SchemaError):
        BsiIndexReader.open(blob, "DECIMAL(38, 0)").equal(decimal.Decimal(10**20))
    with pytest.raises(ps.SchemaError):
        BsiIndexReader.open(blob, "INT").less_than(2**31)


# ---------------------------------------------------------------------------------------------
# Random columns.

LONGS = st.integers(LONG_MIN + 1, LONG_MAX) | st.sampled_from([LONG_MIN + 1, LONG_MAX, 0, -1, 1])


@given(st.lists(st.one_of(st.none(), st.integers(-20, 20)), max_size=30))
@example([None, None])
@example([4, 4, 4])
@example([-4, -4])
def test_random_small_columns(values: list) -> None:
    assert build_bsi("INT", values) == encode(values)
    reader = BsiIndexReader.open(build_bsi("INT", values), "INT")
    check_everything(reader, values, probes_for(values, *RANGES["INT"]))


@given(st.lists(st.one_of(st.none(), LONGS), max_size=20))
def test_random_bigint_columns(values: list) -> None:
    assert build_bsi("BIGINT", values) == encode(values)
    reader = BsiIndexReader.open(build_bsi("BIGINT", values), "BIGINT")
    check_everything(reader, values, probes_for(values, *RANGES["BIGINT"]))


# ---------------------------------------------------------------------------------------------
# Malformed blobs: a located FormatError, never another exception.


def exercise(blob: bytes, probes: list[int]) -> None:
    reader = BsiIndexReader.open(blob, "BIGINT")
    for p in probes:
        reader.equal(p)
        reader.less_than(p)
        reader.greater_or_equal(p)
    reader.is_null()
    reader.values()


def test_truncated_and_flipped_real_blobs(shared_fixtures: Path) -> None:
    for rel in ("paimon-rust/bsi/java_int.bin", "paimon-cpp/bsi/int_mix.bin"):
        blob = (shared_fixtures / rel).read_bytes()
        errors = 0
        variants = [blob[:n] for n in range(len(blob))] + [
            blob[:at] + bytes([blob[at] ^ mask]) + blob[at + 1:]
            for at in range(len(blob)) for mask in (0x01, 0x80, 0xFF)]
        for mutated in variants:
            try:
                exercise(mutated, [-5, -2, 0, 3, 8, 100])
            except ps.FormatError as exc:
                assert exc.offset is not None and 0 <= exc.offset <= len(mutated), exc
                assert exc.path, exc
                errors += 1
        assert errors > len(blob)


def test_inconsistent_parts_are_errors() -> None:
    blob = bytearray(encode([5, -3, None, 0]))
    blob[1:5] = struct.pack(">i", 2)                          # row 3 has a value but 2 rows
    with pytest.raises(ps.FormatError) as info:
        BsiIndexReader.open(bytes(blob), "INT")
    assert info.value.path == "positive.ebm" and info.value.offset == 23
    blob = bytearray(encode([5, -3]))
    blob[15:23] = struct.pack(">q", 9)                        # max 9 needs 4 slices, 3 stored
    with pytest.raises(ps.FormatError) as info:
        BsiIndexReader.open(bytes(blob), "INT")
    assert (info.value.path, info.value.offset) == ("positive.num_slices", 23 + len(roaring([0])))
