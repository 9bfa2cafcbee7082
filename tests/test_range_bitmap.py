"""The range-bitmap reader answers every predicate as Java's `RangeBitmap` does.

The truth for each predicate is computed straight from the column values with Paimon's
semantics (nulls never match; `!=` and NOT IN exclude nulls; keys compare as Java's comparator:
signed integers, `Float.compareTo` for floats, unsigned bytes for strings). It is checked on
every real range-bitmap blob (their column values written out below, as the tests of
paimon-rust and paimon-cpp that wrote them state), on the spec's examples, and on random columns encoded by
`encode`, a straightforward writer written from formats/range_bitmap.ksy that reproduces the
Java blobs byte for byte.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import struct
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from fixture_catalog import CONTAINERS
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.generated.range_bitmap import RangeBitmap
from paimon_schema.layouts.paimon_common import KeyKind, range_bitmap_keys
from paimon_schema.layouts.range_bitmap import RangeBitmapIndexReader, build_range_bitmap
from paimon_schema.layouts.range_bitmap import writer as range_bitmap_writer
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.layouts.registry import open_index
from paimon_schema.values.results import IndexResult
from tests.strategies import string_key_sets

# ---------------------------------------------------------------------------------------------
# A writer from the spec (formats/range_bitmap.ksy), kept in the test: keys are Python values of the type.

FIXED = {"INT": ">i", "DATE": ">i", "TIME": ">i", "BIGINT": ">q", "TIMESTAMP(3)": ">q",
         "TINYINT": ">b", "SMALLINT": ">h", "FLOAT": ">f", "DOUBLE": ">d"}


def key_bytes(data_type: str, value) -> bytes:
    """A key as `ByteBuffer.putX` writes it (floats keep their raw bits)."""
    if data_type == "STRING":
        raw = value.encode("utf-8")
        return struct.pack(">i", len(raw)) + raw
    if data_type == "BOOLEAN":
        return bytes([1 if value else 0])
    return struct.pack(FIXED[data_type], value)


def java_order(data_type: str, value):
    """A sort key ordering values as Java's range-bitmap comparator does."""
    if data_type == "STRING":
        return value.encode("utf-8")
    if data_type in ("FLOAT", "DOUBLE"):
        if math.isnan(value):
            return (2, 0.0, 0)
        return (1, value, 0 if math.copysign(1.0, value) < 0 else 1)
    return value


def as_stored(data_type: str, value):
    """The Java value of a Python one: FLOAT rounds to float32 (keeping NaN)."""
    if data_type == "FLOAT" and value is not None:
        return struct.unpack(">f", struct.pack(">f", value))[0]
    return value


def roaring(rows) -> bytes:
    bitmap = BitMap()
    for row in rows:
        bitmap.add(row)
    bitmap.run_optimize()
    return bitmap.serialize()


def encode(data_type: str, values: list, chunk_size: int = 16384) -> bytes:
    """The range-bitmap blob Java writes for `values` (None = null), per formats/range_bitmap.ksy."""
    distinct: dict = {}
    for row, value in enumerate(values):
        if value is not None:
            distinct.setdefault(java_order(data_type, value), (value, []))[1].append(row)
    entries = [distinct[k] for k in sorted(distinct)]
    n = len(entries)
    dictionary = _dictionary(data_type, [key for key, _ in entries], chunk_size)
    bsi = _bsi(len(values), [rows for _, rows in entries])
    keys = key_bytes(data_type, entries[0][0]) + key_bytes(data_type, entries[-1][0]) if n else b""
    header = struct.pack(">bii", 1, len(values), n) + keys + struct.pack(">i", len(dictionary))
    return struct.pack(">i", len(header)) + header + dictionary + bsi


def _dictionary(data_type: str, keys: list, limit: int) -> bytes:
    variable = data_type == "STRING"
    chunks: list[list] = []                  # [first key, code, [keys]]
    for code, key in enumerate(keys):
        size = len(key_bytes(data_type, key))
        if chunks:
            others = chunks[-1][2]
            used = sum(len(key_bytes(data_type, k)) for k in others)
            fits = size <= limit - used and (not variable or 4 <= limit - 4 * len(others))
            if fits:
                others.append(key)
                continue
        chunks.append([key, code, []])
    headers, blobs, offsets = [], [], []
    keys_offset = chunks_offset = 0
    for first, code, others in chunks:
        encoded = [key_bytes(data_type, k) for k in others]
        key_region = b"".join(encoded)
        if variable:
            positions = [sum(map(len, encoded[:i])) for i in range(len(encoded))]
            blob = b"".join(struct.pack(">i", p) for p in positions) + key_region
            tail = struct.pack(">iii", len(others), 4 * len(others), len(key_region))
        else:
            blob = key_region
            width = len(key_bytes(data_type, first))
            tail = struct.pack(">iii", len(others), len(key_region), width)
        header = (b"\x01" + key_bytes(data_type, first) + struct.pack(">ii", code, keys_offset)
                  + tail)
        offsets.append(chunks_offset)
        headers.append(header)
        blobs.append(blob)
        chunks_offset += len(header)
        keys_offset += len(blob)
    body = b"".join(struct.pack(">i", o) for o in offsets) + b"".join(headers) + b"".join(blobs)
    return struct.pack(">ibiii", 13, 1, len(chunks), 4 * len(chunks), chunks_offset) + body


def _bsi(num_rows: int, rows_per_code: list[list[int]]) -> bytes:
    n = len(rows_per_code)
    num_slices = max((n - 1).bit_length(), 1) if n else 64
    slices: list[list[int]] = [[] for _ in range(num_slices)]
    existence = []
    for code, rows in enumerate(rows_per_code):
        existence.extend(rows)
        for i in range(num_slices):
            if code >> i & 1:
                slices[i].extend(rows)
    ebm = roaring(sorted(existence))
    bitmaps = [roaring(sorted(s)) for s in slices]
    indexes, offset = b"", 0
    for bitmap in bitmaps:
        indexes += struct.pack(">ii", offset, len(bitmap))
        offset += len(bitmap)
    header = struct.pack(">bbii", 1, num_slices, len(ebm), len(indexes)) + indexes
    return struct.pack(">i", len(header)) + header + ebm + b"".join(bitmaps)


# ---------------------------------------------------------------------------------------------
# The truth, from the values.


def truth(data_type: str, values: list, test: Callable) -> BitMap:
    return BitMap(r for r, v in enumerate(values)
                  if v is not None and test(java_order(data_type, v)))


def expected_top_n(data_type: str, values: list, k: int, ascending: bool,
                   nulls_first: bool) -> BitMap:
    """`visitTopN` with one key: nulls by row number; on a tie at the k-th value Java keeps
    the tied rows with the highest row numbers; with no key at all every row."""
    if all(v is None for v in values):
        return BitMap(range(len(values)))
    nulls = [r for r, v in enumerate(values) if v is None]
    direction = 1 if ascending else -1
    ranked = sorted((r for r, v in enumerate(values) if v is not None),
                    key=lambda r: (java_order(data_type, values[r]), -direction * r),
                    reverse=not ascending)
    if nulls_first:
        picked = nulls[:k] + ranked[:max(k - len(nulls), 0)]
    else:
        picked = ranked[:k] + nulls[:max(k - len(ranked), 0)]
    return BitMap(picked)


def assert_rows(result: IndexResult, expected: BitMap, what: str) -> None:
    assert result.rows is not None, f"{what}: REMAIN, expected rows {list(expected)}"
    assert result.rows == expected, f"{what}: {list(result.rows)} != {list(expected)}"
    assert result.remain == bool(expected), what


def check_everything(reader: RangeBitmapIndexReader, data_type: str, values: list,
                     probes: list) -> None:
    """Every predicate for every probe, and top_n for every k, against the truth."""
    stored = [as_stored(data_type, v) for v in values]
    order = lambda v: java_order(data_type, as_stored(data_type, v))  # noqa: E731
    non_null = [v for v in stored if v is not None]
    assert reader.num_rows == len(values)
    assert reader.num_keys == len({java_order(data_type, v) for v in non_null})
    assert_rows(reader.is_null(), BitMap(r for r, v in enumerate(values) if v is None)
                if non_null else BitMap(range(len(values))), "is_null")
    assert_rows(reader.is_not_null(), truth(data_type, stored, lambda o: True), "is_not_null")
    for p in probes:
        o = order(p)
        checks = {
            "equal": (reader.equal, lambda x: x == o),
            "not_equal": (reader.not_equal, lambda x: x != o),
            "less_than": (reader.less_than, lambda x: x < o),
            "less_or_equal": (reader.less_or_equal, lambda x: x <= o),
            "greater_than": (reader.greater_than, lambda x: x > o),
            "greater_or_equal": (reader.greater_or_equal, lambda x: x >= o),
        }
        for name, (predicate, test) in checks.items():
            assert_rows(predicate(p), truth(data_type, stored, test), f"{name}({p!r})")
    for i in range(0, len(probes), 3):
        group = probes[i:i + 3]
        orders = [order(p) for p in group]
        assert_rows(reader.in_(group), truth(data_type, stored, lambda x: x in orders),
                    f"in {group}")
        assert_rows(reader.not_in(group), truth(data_type, stored, lambda x: x not in orders),
                    f"not in {group}")
        low, high = orders[0], orders[-1]
        assert_rows(reader.between(group[0], group[-1]),
                    truth(data_type, stored, lambda x: low <= x <= high), f"between {group}")
    for k in range(len(values) + 2):
        for ascending in (True, False):
            for nulls_first in (True, False):
                assert_rows(reader.top_n(k, ascending, nulls_first),
                            expected_top_n(data_type, stored, k, ascending, nulls_first),
                            f"top_n({k}, ascending={ascending}, nulls_first={nulls_first})")


def probes_for(data_type: str, values: list) -> list:
    """The column's values, values next to them, and values beyond both ends."""
    present = [v for v in values if v is not None]
    if data_type == "STRING":
        extra = (["", "\x00", "a", "zzzz", "\uffff"] + [v + "\x00" for v in present]
                 + [v[:-1] for v in present])
    elif data_type in ("FLOAT", "DOUBLE"):
        extra = [-math.inf, math.inf, math.nan, -0.0, 0.0, -1e30, 1e30] + [v + 0.5 for v in present]
    elif data_type == "BOOLEAN":
        extra = [False, True]
    else:
        bits = {"TINYINT": 8, "SMALLINT": 16, "BIGINT": 64, "TIMESTAMP(3)": 64}.get(data_type, 32)
        lo, hi = -2**(bits - 1), 2**(bits - 1) - 1
        extra = [lo, hi, 0] + [v + d for v in present for d in (-1, 1) if lo <= v + d <= hi]
    return present + extra


# ---------------------------------------------------------------------------------------------
# Real blobs.

RUST_INT = [1, 3, 5, 7, 9, None, None, 10]
TABLE_COLUMNS = {
    "f0": ("INT", [17, 3, 5, 7, 9, None, None, 10]),
    "f1": ("BIGINT", [100, 200, 300, 400, 500, None, None, 600]),
    "f2": ("FLOAT", [1.1, 2.2, 3.3, 4.4, 5.5, None, None, 6.6]),
    "f3": ("DOUBLE", [11.11, 22.22, 33.33, 44.44, 55.55, None, None, 66.66]),
    "f4": ("DATE", [19739, 19725, 19727, 19729, 19731, None, None, 19732]),
}
STANDALONE = {
    "paimon-rust/range-bitmap/java_int_v1.bin": ("INT", RUST_INT),
    "paimon-cpp/file_index/rangebitmap/rangebitmap.index": ("INT", RUST_INT),
    "paimon-rust/range-bitmap/java_string_v1.bin": ("STRING", ["aa", "b", "你好", None, "ccc"]),
    "paimon-rust/range-bitmap/java_float_v1.bin": ("FLOAT", [-0.0, 0.0, 1.5, math.nan, None]),
}
SIDECARS = {table: path for path in CONTAINERS for table in
            ("append_with_rangebitmap", "append_with_rangebitmap_multi_chunk")
            if f"/{table}/bucket-0/" in path}


def sidecar_blob(shared_fixtures: Path, table: str, column: str) -> bytes:
    container = ps.FileIndexFile.parse((shared_fixtures / SIDECARS[table]).read_bytes())
    return container.columns[column]["range-bitmap"]


TABLE_CHUNK_SIZES = {"append_with_rangebitmap": 16384, "append_with_rangebitmap_multi_chunk": 16}
REAL_BLOBS = [*STANDALONE, *(f"{t}/{c}" for t in TABLE_CHUNK_SIZES for c in TABLE_COLUMNS)]


def real_blob(shared_fixtures: Path, name: str) -> tuple[bytes, str, list, int]:
    """(blob, data type, values, chunk size) of a real range-bitmap blob."""
    if name in STANDALONE:
        return ((shared_fixtures / name).read_bytes(), *STANDALONE[name], 16384)
    table, column = name.split("/")
    return (sidecar_blob(shared_fixtures, table, column), *TABLE_COLUMNS[column],
            TABLE_CHUNK_SIZES[table])


@pytest.mark.parametrize("name", REAL_BLOBS)
def test_real_blob_answers_every_predicate(shared_fixtures: Path, name: str) -> None:
    blob, data_type, values, _ = real_blob(shared_fixtures, name)
    reader = RangeBitmapIndexReader.open(blob, data_type)
    check_everything(reader, data_type, values, probes_for(data_type, values))


@pytest.mark.parametrize("name", REAL_BLOBS)
def test_the_test_writer_reproduces_the_real_blob(shared_fixtures: Path, name: str) -> None:
    """So the random blobs below are what Java would write."""
    blob, data_type, values, chunk_size = real_blob(shared_fixtures, name)
    assert encode(data_type, values, chunk_size) == blob
    assert build_range_bitmap(data_type, values, chunk_size=chunk_size) == blob


def test_real_blob_contents(shared_fixtures: Path) -> None:
    """paimon-rust's Java-written range-bitmaps: min/max, enumeration, and the documented answers."""
    reader = RangeBitmapIndexReader.open(
        (shared_fixtures / "paimon-rust/range-bitmap/java_int_v1.bin").read_bytes(), "INT")
    assert (reader.num_rows, reader.num_keys, reader.min, reader.max) == (8, 6, 1, 10)
    assert [(v, list(r)) for v, r in reader.items()] == [
        (1, [0]), (3, [1]), (5, [2]), (7, [3]), (9, [4]), (10, [7])]
    assert list(reader.null_rows) == [5, 6]
    assert list(reader.equal(5).rows) == [2] and list(reader.less_than(5).rows) == [0, 1]
    assert list(reader.greater_than(6).rows) == [3, 4, 7]
    floats = RangeBitmapIndexReader.open(
        (shared_fixtures / "paimon-rust/range-bitmap/java_float_v1.bin").read_bytes(), "FLOAT")
    assert [math.copysign(1, v) if v == 0 else v for v, _ in floats.items()][:3] == [-1.0, 1.0, 1.5]
    assert math.isnan(floats.max) and math.copysign(1, floats.min) == -1.0
    strings = RangeBitmapIndexReader.open(
        (shared_fixtures / "paimon-rust/range-bitmap/java_string_v1.bin").read_bytes(),
        "VARCHAR(10)")
    assert [v for v, _ in strings.items()] == ["aa", "b", "ccc", "你好"]
    assert list(strings.equal("你好").rows) == [2]
    assert list(strings.greater_than("b").rows) == [2, 4]
    dates = RangeBitmapIndexReader.open(
        sidecar_blob(shared_fixtures, "append_with_rangebitmap", "f4"), "DATE")
    assert list(dates.equal(dt.date(2024, 1, 17)).rows) == [0]
    assert list(dates.less_than(dt.date(2024, 1, 7)).rows) == [1, 2]


def test_one_equal_loads_one_chunk(shared_fixtures: Path) -> None:
    """Multi-chunk dictionary (chunk-size 16B: chunks [3, 5, 7, 9, 10] and [17]): a lookup
    reads one chunk's keys (none when the probe is a chunk's first key) and only the bitmaps
    its comparison needs."""
    blob = sidecar_blob(shared_fixtures, "append_with_rangebitmap_multi_chunk", "f0")
    reader = RangeBitmapIndexReader.open(blob, "INT")
    assert reader.stats == type(reader.stats)()
    assert list(reader.equal(7).rows) == [3]
    assert (reader.stats.chunks, reader.stats.bitmaps) == (1, 4)       # ebm + 3 slices
    assert reader.stats.chunk_headers <= 2
    reader.equal(5)
    assert reader.stats.chunks == 1 and reader.stats.bitmaps == 4     # cached
    assert list(reader.equal(17).rows) == [0]
    assert reader.stats.chunks == 1 and reader.stats.chunk_headers == 2
    fresh = RangeBitmapIndexReader.open(blob, "INT")
    assert list(fresh.greater_than(5).rows) == [0, 3, 4, 7]           # 5 has code 1 = 0b001:
    assert fresh.stats.bitmaps == 3                                   # ebm, slices 1 and 2


def test_lookup_reads_log_many_chunk_headers() -> None:
    values = list(range(0, 2000, 2))
    reader = RangeBitmapIndexReader.open(encode("INT", values, chunk_size=16), "INT")
    assert list(reader.equal(1002).rows) == [501] and list(reader.equal(1003).rows) == []
    assert reader.stats.chunks == 1
    assert reader.stats.chunk_headers <= 2 * math.ceil(math.log2(250)) + 1


# ---------------------------------------------------------------------------------------------
# The spec's examples.

SPEC_EXAMPLE = bytes.fromhex(
    "00000015 01 00000006 00000004 0000000a 00000028 0000003a"
    "0000000d 01 00000001 00000004 00000019 00000000"
    "01 0000000a 00000000 00000000 00000003 0000000c 00000004 00000014 0000001e 00000028"
    "0000001a 01 02 0000001a 00000010 00000000 00000014 00000014 00000014".replace(" ", "")
) + roaring([0, 1, 3, 4, 5]) + roaring([3, 5]) + roaring([1, 5])


def test_spec_example() -> None:
    """formats/range_bitmap.ksy's example: INT [10, 30, null, 20, 10, 40] with the default chunk size, and 8b chunks."""
    values = [10, 30, None, 20, 10, 40]
    assert encode("INT", values) == SPEC_EXAMPLE
    reader = RangeBitmapIndexReader.open(SPEC_EXAMPLE, "INT")
    check_everything(reader, "INT", values, probes_for("INT", values))
    small = encode("INT", values, chunk_size=8)
    reader = RangeBitmapIndexReader.open(small, "INT")
    assert reader._dictionary.num_chunks == 2
    check_everything(reader, "INT", values, probes_for("INT", values))


def test_spec_example_strings_in_two_chunks() -> None:
    """STRING b,a,dd,null,c,a with chunk-size=12b: chunks [a, b, c] and [dd]."""
    values = ["b", "a", "dd", None, "c", "a"]
    blob = encode("STRING", values, chunk_size=12)
    assert bytes.fromhex("00000000 00000005 00000001 62 00000001 63".replace(" ", "")) in blob
    reader = RangeBitmapIndexReader.open(blob, "STRING")
    assert [reader._header(i).code for i in range(reader._dictionary.num_chunks)] == [0, 3]
    check_everything(reader, "STRING", values, probes_for("STRING", values))


@pytest.mark.parametrize("rows", [0, 1, 5])
def test_all_null_blob_is_1080_bytes_and_every_row_is_null(rows: int) -> None:
    """No key gives 64 empty slices; IS NULL is every row (the post-2.0 fix)."""
    blob = encode("INT", [None] * rows)
    assert len(blob) == 1080
    reader = RangeBitmapIndexReader.open(blob, "INT")
    assert (reader.min, reader.max, list(reader.items())) == (None, None, [])
    check_everything(reader, "INT", [None] * rows, [0, -1, 2**31 - 1])
    assert reader.stats.bitmaps == 0


def test_one_distinct_value_has_one_empty_slice() -> None:
    values = [7, None, 7, 7]
    blob = encode("BIGINT", values)
    reader = RangeBitmapIndexReader.open(blob, "BIGINT")
    assert reader._bsi.header.num_slices == 1
    check_everything(reader, "BIGINT", values, probes_for("BIGINT", values))


def test_other_key_types() -> None:
    """BOOLEAN, TINYINT, SMALLINT (one key per chunk by default), DECIMAL, TIMESTAMP."""
    cases = [("BOOLEAN", [True, None, False, True]), ("TINYINT", [-128, 5, None, 127, 5]),
             ("SMALLINT", [300, -2, None, -2])]
    for data_type, values in cases:
        reader = RangeBitmapIndexReader.open(encode(data_type, values, chunk_size=0), data_type)
        check_everything(reader, data_type, values, probes_for(data_type, values))
    unscaled = [1250, None, -5, 99]
    reader = RangeBitmapIndexReader.open(encode("BIGINT", unscaled), "DECIMAL(6, 2)")
    assert list(reader.equal(decimal.Decimal("12.50")).rows) == [0]
    assert list(reader.less_than(decimal.Decimal("0.99")).rows) == [2]
    millis = [0, 1_700_000_000_123, None]
    reader = RangeBitmapIndexReader.open(encode("TIMESTAMP(3)", millis), "TIMESTAMP(3)")
    moment = dt.datetime(2023, 11, 14, 22, 13, 20, 123000)
    assert list(reader.greater_or_equal(moment).rows) == [1]


def test_open_index_knows_the_type() -> None:
    reader = open_index("range-bitmap", SPEC_EXAMPLE, "INT")
    assert isinstance(reader, RangeBitmapIndexReader)
    assert list(reader.between(15, 35).rows) == [1, 3]


def test_null_literals_never_narrow() -> None:
    reader = RangeBitmapIndexReader.open(SPEC_EXAMPLE, "INT")
    for result in (reader.equal(None), reader.not_equal(None), reader.less_than(None),
                   reader.in_([10, None]), reader.not_in([None])):
        assert result.remain and result.rows is None


def test_unsupported_types_and_values() -> None:
    for data_type in ("BYTES", "TIMESTAMP(9)", "DECIMAL(19, 0)", "ARRAY<INT>"):
        with pytest.raises(ps.SchemaError):
            RangeBitmapIndexReader.open(SPEC_EXAMPLE, data_type)
    reader = RangeBitmapIndexReader.open(SPEC_EXAMPLE, "INT")
    with pytest.raises(ps.SchemaError):
        reader.equal(2**31)
    with pytest.raises(ValueError):
        reader.top_n(-1)


# ---------------------------------------------------------------------------------------------
# Random columns: the library's writer equals the spec encoder above, and reads back the truth.


def written(data_type: str, values: list, chunk_size: int = 16384) -> bytes:
    blob = build_range_bitmap(data_type, values, chunk_size=chunk_size)
    assert blob == encode(data_type, values, chunk_size)
    return blob

def columns(values: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(st.one_of(st.none(), values), max_size=24)


CHUNK_SIZES = st.sampled_from([0, 4, 8, 12, 16, 24, 64, 16384])


@given(columns(st.integers(-40, 40)), CHUNK_SIZES)
@example([None, None], 16)
@example([5, 5, 5], 0)
@example([3, 1, 2, 1, 3, 3, None, 2], 4)
def test_random_int_columns(values: list, chunk_size: int) -> None:
    blob = written("INT", values, chunk_size)
    check_everything(RangeBitmapIndexReader.open(blob, "INT"), "INT", values,
                     probes_for("INT", values))
    for probe in probes_for("INT", values):
        lazy = RangeBitmapIndexReader.open(blob, "INT")
        lazy.equal(probe)
        assert lazy.stats.chunks <= 1


@given(columns(st.integers(-2**63, 2**63 - 1) | st.sampled_from([-2**63, 2**63 - 1, 0])),
       CHUNK_SIZES)
def test_random_bigint_columns(values: list, chunk_size: int) -> None:
    reader = RangeBitmapIndexReader.open(written("BIGINT", values, chunk_size), "BIGINT")
    check_everything(reader, "BIGINT", values, probes_for("BIGINT", values))


@given(columns(st.sampled_from([-0.0, 0.0, math.nan, -math.inf, math.inf, 1.5, -1.5, 2.0])
               | st.floats(allow_nan=True)), CHUNK_SIZES)
@example([0.0, -0.0, math.nan, None, -0.0], 8)
def test_random_double_columns(values: list, chunk_size: int) -> None:
    reader = RangeBitmapIndexReader.open(written("DOUBLE", values, chunk_size), "DOUBLE")
    check_everything(reader, "DOUBLE", values, probes_for("DOUBLE", values))


@given(columns(st.floats(width=32, allow_nan=True) | st.sampled_from([-0.0, 0.0, math.nan])),
       CHUNK_SIZES)
def test_random_float_columns(values: list, chunk_size: int) -> None:
    reader = RangeBitmapIndexReader.open(written("FLOAT", values, chunk_size), "FLOAT")
    check_everything(reader, "FLOAT", values, probes_for("FLOAT", values))


@settings(max_examples=60, deadline=None)
@given(string_key_sets(max_keys=400), st.sampled_from([0, 12, 100, 300, 2000, 16384]), st.integers(0, 2**32 - 1),
       st.booleans())
def test_many_distinct_strings_equal_the_spec_writer(keys: list[str], chunk_size: int, seed: int,
                                                      compiled: bool) -> None:
    """Dictionaries of hundreds of string keys, in chunks of a few keys (the blobs scattered
    byte by byte) or of many (joined from slices), with and without the compiled records."""
    rng = random.Random(seed)
    values: list[str | None] = [rng.choice(keys) if keys and rng.random() < 0.9 else None
                                for _ in range(len(keys) * 2)] + list(keys)
    with pytest.MonkeyPatch.context() as patch:
        if not compiled:
            patch.setattr(range_bitmap_writer, "_kernels", None)
        assert build_range_bitmap("STRING", values, chunk_size=chunk_size) == encode("STRING", values, chunk_size)


@given(columns(st.text(st.sampled_from("ab\x00é\u4e16\U0001f600"), max_size=4)), CHUNK_SIZES)
@example(["b", "a", "dd", None, "c", "a"], 12)
def test_random_string_columns(values: list, chunk_size: int) -> None:
    reader = RangeBitmapIndexReader.open(written("STRING", values, chunk_size), "STRING")
    check_everything(reader, "STRING", values, probes_for("STRING", values))


@given(st.lists(st.one_of(st.none(), st.integers(0, 6)), min_size=1, max_size=40))
def test_random_top_n_with_many_ties(values: list) -> None:
    reader = RangeBitmapIndexReader.open(written("INT", values, 8), "INT")
    for k in range(len(values) + 2):
        for ascending in (True, False):
            for nulls_first in (True, False):
                assert_rows(reader.top_n(k, ascending, nulls_first),
                            expected_top_n("INT", values, k, ascending, nulls_first), f"top_n {k}")


# ---------------------------------------------------------------------------------------------
# Malformed blobs: a located FormatError, never another exception.


def exercise(blob: bytes, data_type: str, probes: list) -> None:
    reader = RangeBitmapIndexReader.open(blob, data_type)
    for p in probes:
        reader.equal(p)
        reader.less_than(p)
        reader.greater_or_equal(p)
    reader.is_null()
    reader.top_n(3, ascending=False)
    list(reader.items())


def mutations(blob: bytes):
    for length in range(len(blob)):
        yield blob[:length]
    for at in range(len(blob)):
        for mask in (0x01, 0x80, 0xFF):
            yield blob[:at] + bytes([blob[at] ^ mask]) + blob[at + 1:]


def check_mutations(blob: bytes, data_type: str, probes: list) -> int:
    errors = 0
    for mutated in mutations(blob):
        try:
            exercise(mutated, data_type, probes)
        except ps.FormatError as exc:
            assert exc.offset is not None and 0 <= exc.offset <= len(mutated), exc
            assert exc.path, exc
            errors += 1
    return errors


def test_truncated_and_flipped_real_blobs(shared_fixtures: Path) -> None:
    for rel, data_type, probes in [
            ("paimon-rust/range-bitmap/java_string_v1.bin", "STRING", ["b", "ccc", "zz"]),
            ("paimon-rust/range-bitmap/java_float_v1.bin", "FLOAT", [0.0, 1.5, math.nan])]:
        assert check_mutations((shared_fixtures / rel).read_bytes(), data_type, probes) > 0
    blob = sidecar_blob(shared_fixtures, "append_with_rangebitmap_multi_chunk", "f1")
    assert check_mutations(blob, "BIGINT", [100, 400, 600, 650]) > 0


def test_dictionary_out_of_order_is_an_error() -> None:
    blob = bytearray(encode("INT", [1, 2, 3, 4], chunk_size=16384))
    keys_at = blob.index(bytes.fromhex("00000002 00000003 00000004".replace(" ", "")))
    blob[keys_at + 3] = 9                                    # keys 9, 3, 4: not ascending
    reader = RangeBitmapIndexReader.open(bytes(blob), "INT")
    with pytest.raises(ps.FormatError) as info:
        reader.equal(3)
    assert info.value.path == "dictionary.chunks[0].keys.keys[1]"
    assert info.value.offset == keys_at + 4
    with pytest.raises(ps.FormatError):
        reader.equal(3)                                      # and again, not a stale cache


def test_chunks_out_of_order_is_an_error() -> None:
    blob = encode("INT", [10, 20, 30, 40], chunk_size=0)     # four chunks of one key
    first_key_of_chunk_2 = blob.index(bytes.fromhex("01 0000001e".replace(" ", ""))) + 1
    broken = blob[:first_key_of_chunk_2] + struct.pack(">i", 5) + blob[first_key_of_chunk_2 + 4:]
    reader = RangeBitmapIndexReader.open(broken, "INT")
    with pytest.raises(ps.FormatError) as info:
        for probe in (25, 35, 15):
            reader.equal(probe)
    assert info.value.path.startswith("dictionary.chunks[")


def test_wrong_slice_count_is_an_error() -> None:
    blob = bytearray(encode("INT", [1, 2, 3]))               # 3 keys, 2 slices
    blob[9:13] = struct.pack(">i", 5)                         # header: 5 keys need 3 slices
    bsi_at = len(blob) - len(_bsi(3, [[0], [1], [2]]))
    reader = RangeBitmapIndexReader.open(bytes(blob), "INT")
    with pytest.raises(ps.FormatError) as info:
        reader.is_not_null()
    assert (info.value.path, info.value.offset) == ("bsi.header.num_slices", bsi_at + 5)


@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-3, 3), min_size=1, max_size=300))
@example([2**63 - 1, -2**63, 0])                 # the span leaves no room for the rows: numpy's unique
@example([5] * 40 + [-7])
def test_unique_codes_equal_numpys(values: list[int]) -> None:
    """By the compiled hash table (few distinct values) and by sorting (without it)."""
    import numpy as np

    from paimon_schema.layouts.bitmap_index import row_groups
    from paimon_schema.layouts.range_bitmap.writer import _unique_codes

    array = np.array(values, np.int64)
    expected, inverse = np.unique(array, return_inverse=True)
    for kernels in (row_groups._kernels, None):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(row_groups, "_kernels", kernels)
            distinct, inner, table = _unique_codes(array)
        codes = inner if table is None else table[inner]
        assert distinct.tolist() == expected.tolist() and codes.tolist() == inverse.ravel().tolist()


BSI_DAMAGE = (0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF)
#: The BSI's length and count fields: the header length, then those inside the header (a substream).
BSI_HEADER_FIELDS = ("num_slices", "len_ebm", "len_indexes")
BSI_SLICE_FIELDS = ("ofs_bitmap", "len_bitmap")


def _bsi_generated(blob: bytes, kind: KeyKind) -> object:
    """The BSI of `blob` through the generated parser alone, read as the reader reads it (the
    header, the existence bitmap, then every slice bitmap): None, or the located FormatError
    as (path, offset)."""
    try:
        root = parsing.parse(lambda io: RangeBitmap(kind, io), blob)
        bsi = parsing.read_lazily(root, "bsi")
        parsing.read_lazily(bsi, "ebm", "bsi")
        for i, piece in enumerate(bsi.header.slices):
            parsing.read_lazily(piece, "bitmap", f"bsi.header.slices[{i}]")
    except ps.FormatError as exc:
        return exc.path, exc.offset
    return None


def _bsi_reader(blob: bytes, data_type: str) -> object:
    """The same through the reader (its own checks after the generated parser's)."""
    try:
        reader = RangeBitmapIndexReader.open(blob, data_type)
        reader._existence                   # (without keys no query reads it)
        for i in range(reader.num_slices):
            reader._slice(i)
    except ps.FormatError as exc:
        return exc.path, exc.offset
    return None


def _bsi_sites(blob: bytes, kind: KeyKind) -> list[tuple[str, int, int]]:
    """(path, offset, width) of the BSI's length and count fields, the first slice's included."""
    bsi = parsing.read_lazily(parsing.parse(lambda io: RangeBitmap(kind, io), blob), "bsi")
    header, at = bsi.header, parsing.field_start(bsi, "header")
    sites = [("bsi.len_header", parsing.field_start(bsi, "len_header"), 4)]
    sites += [(f"bsi.header.{name}", at + parsing.field_start(header, name), 1 if name == "num_slices" else 4)
              for name in BSI_HEADER_FIELDS]
    piece = header.slices[0]
    sites += [(f"bsi.header.slices[0].{name}", at + parsing.field_start(piece, name), 4)
              for name in BSI_SLICE_FIELDS]
    return sites


@pytest.mark.parametrize("data_type,values", [("INT", [10, 30, None, 20, 10, 40]),
                                              ("STRING", ["b", None, "a", "c", "a"]),
                                              ("BIGINT", [None, None])])          # no key: 64 slices
def test_damaged_bsi_lengths_and_counts_fail_where_the_generated_parser_does(data_type: str,
                                                                             values: list) -> None:
    """The BSI header's length and counts (and the first slice's offset and length) set to 0, 1,
    0x7fffffff and 0xffffffff: the reader fails with the generated parser's located error
    wherever that parser (the header a substream of `len_header`) fails, and each read ends
    within 0.5 s and 64 MB. (A slice offset past the blob the reader blames on the offset.)"""
    blob = encode(data_type, values)
    kind = range_bitmap_keys(data_type).kind
    for path, at, width in _bsi_sites(blob, kind):
        for value in dict.fromkeys(v % (1 << 8 * width) for v in BSI_DAMAGE):
            raw = blob[:at] + value.to_bytes(width, "big") + blob[at + width:]
            expected = _bounded(lambda: _bsi_generated(raw, kind))
            got = _bounded(lambda: _bsi_reader(raw, data_type))
            if expected is not None and not path.endswith("ofs_bitmap"):
                assert got == expected, (path, value)
            elif got is not None:
                assert str(got[0]).startswith("bsi.") and 0 <= got[1] <= len(raw), (path, value, got)


def _bounded(call: Callable[[], object]) -> object:
    """`call()`, checked to take under 0.5 s and to allocate under 64 MB at its peak."""
    start = time.perf_counter()
    result = call()
    assert time.perf_counter() - start < 0.5
    tracemalloc.start()
    try:
        call()
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()
    return result


@given(st.sets(st.binary(max_size=6) | st.sampled_from([b"", b"\x00", b"a\x00", b"a", b"\xff", b"\x80a"]), max_size=300))
@example({b"a", b"a\x00", b"a\x00\x00"})                 # NULs at the end: Python's sort
@example({b"", b"b", b"ab"})
def test_byte_order_is_unsigned_byte_order(strings: set[bytes]) -> None:
    """Java's order of string keys (range-bitmap codes, bitmap V2 entries), by numpy's sort of
    fixed-width bytes where no key ends with NUL."""
    from paimon_schema.layouts.paimon_common import byte_order

    keys = list(strings)
    assert [keys[i] for i in byte_order(keys).tolist()] == sorted(keys)
