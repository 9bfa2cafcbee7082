"""Bitmap index reader: every Java-written bitmap fixture, the spec's examples, V2 laziness,
the V1 fast path against the generated parser, and located errors.

Expected contents are what the fixtures' writers wrote (paimon-rust's and paimon-cpp's test data,
the fixture tables), written out below as data; answers are the newest Java reader's
(`BitmapFileIndex.Reader`).
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from pathlib import Path

import pytest
from fixture_catalog import CONTAINERS
from strategies import columns
from hypothesis import example, given
from hypothesis import strategies as st
from paimon_schema.generated.bitmap_index import BitmapIndex
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts.bitmap_index import BitmapIndexReader
from paimon_schema.layouts.bitmap_index.scan import (
    parse_v1_dictionary,
    read_v1_dictionary,
    scan_v1_dictionary,
)
from paimon_schema.layouts.paimon_common import KeyKind
from paimon_schema.layouts.registry import open_index
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.results import REMAIN, IndexResult

NAN = float("nan")

# ---------------------------------------------------------------------------------------------
# helpers


def h(text: str) -> bytes:
    """Bytes from spec-style hex with spaces, newlines and `#` comments."""
    return bytes.fromhex("".join(line.split("#")[0] for line in text.splitlines()).replace(" ", ""))


def roaring(*rows: int) -> bytes:
    """A bitmap as Java serializes a freshly built one (`runOptimize()`, formats/roaring_bitmap.ksy)."""
    bitmap = BitMap()
    for row in rows:
        bitmap.add(row)
    bitmap.run_optimize()
    return bitmap.serialize()


_KEY_FORMATS = {KeyKind.boolean: ">B", KeyKind.int8: ">b", KeyKind.int16: ">h",
                KeyKind.int32: ">i", KeyKind.int64: ">q", KeyKind.float32: ">I",
                KeyKind.float64: ">Q"}


def encode_key(kind: KeyKind, key) -> bytes:
    if kind == KeyKind.string:
        return struct.pack(">i", len(key)) + key
    return struct.pack(_KEY_FORMATS[kind], key)


def build_blob(version: int, data_type: str, column: list, block_size: int = 16 * 1024) -> bytes:
    """A blob laid out as Java's writer lays it out (formats/bitmap_index.ksy), from column values; keys in
    first-seen order where Java uses HashMap order (readers must not care)."""
    codec = keys.bitmap_keys(data_type)
    by_key: dict = {}
    nulls = BitMap()
    for row, value in enumerate(column):
        if value is None:
            nulls.add(row)
        else:
            by_key.setdefault(codec.encode(value), []).append(row)
    null_bytes = roaring(*nulls)
    body = null_bytes if len(nulls) > 1 else b""
    offsets, lengths = {}, {}
    for key, rows in by_key.items():
        if len(rows) == 1:
            offsets[key], lengths[key] = -1 - rows[0], -1
        else:
            raw = roaring(*rows)
            offsets[key], lengths[key] = len(body), len(raw)
            body += raw
    head = struct.pack(">biib", version, len(column), len(by_key), bool(nulls))
    if nulls:
        head += struct.pack(">i", -1 - nulls.min() if len(nulls) == 1 else 0)
    if version == 1:
        entries = b"".join(encode_key(codec.kind, k) + struct.pack(">i", offsets[k]) for k in by_key)
        return head + entries + body
    if nulls:
        head += struct.pack(">i", len(null_bytes))
    blocks: list[tuple[object, list[bytes]]] = []
    size = 0
    for key in sorted(by_key, key=codec.order):
        entry = encode_key(codec.kind, key) + struct.pack(">ii", offsets[key], lengths[key])
        if not blocks or size + len(entry) > block_size:
            blocks.append((key, []))
            size = 4
        blocks[-1][1].append(entry)
        size += len(entry)
    packed = [struct.pack(">i", len(entries)) + b"".join(entries) for _, entries in blocks]
    secondary, offset = b"", 0
    for (first, _), raw in zip(blocks, packed):
        secondary += encode_key(codec.kind, first) + struct.pack(">i", offset)
        offset += len(raw)
    return (head + struct.pack(">i", len(blocks)) + secondary + struct.pack(">i", offset)
            + b"".join(packed) + body)


def check_content(reader: BitmapIndexReader, num_rows: int, expected: list[tuple[object, set[int]]],
                  nulls: set[int], absent: tuple = ()) -> None:
    """The reader holds exactly `expected` and answers every predicate kind as Java does."""
    codec = reader.codec
    everything = BitMap(range(num_rows))
    assert reader.num_rows == num_rows and len(reader) == len(expected)
    assert reader.null_rows == BitMap(nulls)
    got = [(codec.encode(v), set(rows)) for v, rows in reader.items()]
    want = sorted(((codec.encode(v), rows) for v, rows in expected), key=lambda kv: codec.order(kv[0]))
    assert got == want, "content, in Java's key order"
    for value, rows in expected:
        assert reader.equal(value) == IndexResult.of(BitMap(rows))
        assert reader.not_equal(value) == IndexResult.of(everything - BitMap(rows)), "nulls included"
    for value in absent:
        assert reader.equal(value) == IndexResult(remain=False, rows=BitMap())
        assert reader.not_equal(value) == IndexResult.of(everything)
    values = [v for v, _ in expected]
    non_null = everything - BitMap(nulls)
    assert reader.in_([*values, *absent]) == IndexResult.of(non_null)
    assert reader.not_in([*values, *absent]) == IndexResult.of(BitMap(nulls))
    assert reader.in_([]) == IndexResult.of(BitMap()) and reader.not_in([]) == IndexResult.of(everything)
    assert reader.is_null() == reader.equal(None) == IndexResult.of(BitMap(nulls))
    assert reader.is_not_null() == reader.not_equal(None) == IndexResult.of(non_null)
    if values:
        assert reader.in_([values[0], None]) == IndexResult.of(BitMap(expected[0][1]) | BitMap(nulls))
        probe = values[0]
        for answer in (reader.less_than(probe), reader.less_or_equal(probe), reader.greater_than(probe),
                       reader.greater_or_equal(probe), reader.between(probe, probe)):
            assert answer == REMAIN


def fixture(shared_fixtures: Path, rel: str) -> bytes:
    return (shared_fixtures / rel).read_bytes()


# ---------------------------------------------------------------------------------------------
# paimon-rust fixtures (paimon-rust/bitmap/): R -> {0,3}, S -> {1}, nulls {2,4}, 5 rows


RUST_PAIRS = [
    ("java_boolean", "BOOLEAN", True, False, ()),
    ("java_tinyint", "TINYINT", -128, 127, (0, -127)),
    ("java_smallint", "SMALLINT", -12345, 23456, (0,)),
    ("java_int", "INT", -123456789, 42, (0, 2**31 - 1, -2**31)),
    ("java_bigint", "BIGINT", -2**63 + 123, 2**63 - 1 - 456, (0, -2**63, 2**63 - 1)),
    ("java_date", "DATE", -1, 20000, (0,)),
    ("java_time", "TIME", 0, 86399999, (1,)),
    ("java_timestamp_millis", "TIMESTAMP(3)", -123456789, 1700000000123, (0,)),
    ("java_timestamp_millis", "TIMESTAMP(3) WITH LOCAL TIME ZONE", -123456789, 1700000000123, (0,)),
    ("java_timestamp_micros", "TIMESTAMP(6)", -1, 1700000000123456, (0,)),
    ("java_timestamp_micros", "TIMESTAMP_LTZ(6)", -1, 1700000000123456, (0,)),
    ("java_string", "STRING", "Paimon-派蒙", "z", ("", "Paimon", "y", "派蒙")),
    ("java_string", "VARCHAR(20)", "Paimon-派蒙", "z", ("zz",)),
    ("java_string", "CHAR(13)", "Paimon-派蒙", "z", ("Z",)),
]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("stem,data_type,repeated,single,absent", RUST_PAIRS,
                         ids=[f"{p[0]}-{p[1]}" for p in RUST_PAIRS])
def test_rust_typed_pairs(shared_fixtures, version, stem, data_type, repeated, single, absent):
    reader = BitmapIndexReader.open(fixture(shared_fixtures, f"paimon-rust/bitmap/{stem}_v{version}.bin"),
                                    data_type)
    assert reader.version == version
    check_content(reader, 5, [(repeated, {0, 3}), (single, {1})], {2, 4}, absent)


@pytest.mark.parametrize("version", [1, 2])
def test_plain_python_temporal_values(shared_fixtures, version):
    """Dates, times and datetimes find the same rows as their raw keys (formats/paimon_common.ksy `key_kind`)."""
    def rows(stem: str, data_type: str, value) -> set[int]:
        blob = fixture(shared_fixtures, f"paimon-rust/bitmap/{stem}_v{version}.bin")
        return set(BitmapIndexReader.open(blob, data_type).equal(value).rows)

    assert rows("java_date", "DATE", dt.date(1969, 12, 31)) == {0, 3}
    assert rows("java_date", "DATE", dt.date(2024, 10, 4)) == {1}
    assert rows("java_time", "TIME(3)", dt.time(23, 59, 59, 999000)) == {1}
    assert rows("java_timestamp_millis", "TIMESTAMP(3)", dt.datetime(2023, 11, 14, 22, 13, 20, 123000)) == {1}
    assert rows("java_timestamp_micros", "TIMESTAMP(6)", dt.datetime(1969, 12, 31, 23, 59, 59, 999999)) == {0, 3}
    aware = dt.datetime(2023, 11, 15, 0, 13, 20, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert rows("java_timestamp_micros", "TIMESTAMP_LTZ(6)", aware) == {1}


FLOAT_CONTENT = [(-1.5, {0, 5}), (0.0, {1, 6}), (-0.0, {2, 7}), (NAN, {3, 8})]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("stem,data_type", [("java_float", "FLOAT"), ("java_double", "DOUBLE")])
def test_float_keys(shared_fixtures, version, stem, data_type):
    """-0.0 and +0.0 are distinct keys, every NaN is the one NaN key (Java's Float.equals)."""
    reader = BitmapIndexReader.open(fixture(shared_fixtures, f"paimon-rust/bitmap/{stem}_v{version}.bin"),
                                    data_type)
    check_content(reader, 10, FLOAT_CONTENT, {4, 9}, absent=(1.5, math.inf, -math.inf))
    odd_nan = struct.unpack(">d", bytes.fromhex("7ff8000000000abc"))[0]
    assert set(reader.equal(odd_nan).rows) == {3, 8}
    assert [v for v, _ in reader.items()][:3] == [-1.5, -0.0, 0.0]
    assert math.copysign(1, list(reader.items())[1][0]) == -1


RUST_OTHERS = [
    ("java_int_multiblock_v2", "INT", 2, 5, [(4, {0, 4}), (1, {1}), (3, {2}), (2, {3})], set(), (0, 5)),
    ("java_int_singleton_null_v1", "INT", 1, 3, [(0, {0}), (1, {1})], {2}, (2,)),
    ("java_int_singleton_null_v2", "INT", 2, 3, [(0, {0}), (1, {1})], {2}, (2,)),
    ("java_int_empty_v1", "INT", 1, 0, [], set(), (0,)),
    ("java_int_empty_v2", "INT", 2, 0, [], set(), (0,)),
]

#: paimon-cpp vectors (paimon-cpp/bitmap/): stem, type, rows, content, nulls, absent values.
CPP_VECTORS = [
    ("string_a_b", "STRING", 5, [("a", {0, 4}), ("b", {2})], {1, 3}, ("c", "")),
    ("boolean", "BOOLEAN", 5, [(True, {0, 2}), (False, {1, 3})], {4}, ()),
    ("tinyint", "TINYINT", 5, [(1, {3, 4})], {0, 1, 2}, (0, 2)),
    ("smallint", "SMALLINT", 5, [(1, {1, 2, 3, 4})], {0}, (0,)),
    ("bigint", "BIGINT", 3, [(1, {0}), (2, {1}), (3, {2})], set(), (0, 4)),
    ("date", "DATE", 6, [(20200220, {0, 1}), (20220222, {4, 5})], {2, 3}, (0,)),
    ("int", "INT", 3, [(0, {0}), (1, {1})], {2}, (2,)),
    ("timestamp9", "TIMESTAMP(9)", 8,
     [(1745542802000123, {0, 6}), (1745542902000123, {1}), (1745542602000123, {2}),
      (-1744877, {3}), (-1764877, {4}), (-1724877, {7})], {5}, (0, 1745542802000124)),
    ("string_apple_java", "STRING", 5, [("apple", {0, 2, 4})], {1, 3}, ("appl", "apples")),
    ("int_all_null", "INT", 4, [], {0, 1, 2, 3}, (0,)),
]


@pytest.mark.parametrize("stem,data_type,version,num_rows,content,nulls,absent", RUST_OTHERS,
                         ids=[c[0] for c in RUST_OTHERS])
def test_rust_other_fixtures(shared_fixtures, stem, data_type, version, num_rows, content, nulls, absent):
    reader = BitmapIndexReader.open(fixture(shared_fixtures, f"paimon-rust/bitmap/{stem}.bin"), data_type)
    assert reader.version == version
    check_content(reader, num_rows, content, nulls, absent)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("stem,data_type,num_rows,content,nulls,absent", CPP_VECTORS,
                         ids=[c[0] for c in CPP_VECTORS])
def test_cpp_vectors(shared_fixtures, version, stem, data_type, num_rows, content, nulls, absent):
    reader = BitmapIndexReader.open(fixture(shared_fixtures, f"paimon-cpp/bitmap/{stem}_v{version}.bin"),
                                    data_type)
    assert reader.version == version
    check_content(reader, num_rows, content, nulls, absent)


HIGH_CARDINALITY = {
    "asdfghjkl123_2500": {3127, 18654, 23615, 43768, 62555, 63261, 66284, 74708, 99268},
    "asdfghjkl123_5000": {2269, 21292, 23667, 35066, 42377, 46085, 64811, 79062, 96161},
    "asdfghjkl123_7500": {14856, 50768, 60230, 68792, 72208, 73800, 78261, 81346, 86520, 87420,
                          88501, 95131, 99401},
}


def test_high_cardinality_strings(shared_fixtures):
    """paimon-cpp's high-cardinality files: 10000 keys over 100000 rows; V1 and V2 hold the same row -> key mapping."""
    contents = {}
    for version in (1, 2):
        reader = BitmapIndexReader.open(
            fixture(shared_fixtures, f"paimon-cpp/file_index/bitmap-index-v{version}"), "STRING")
        assert (reader.version, reader.num_rows, len(reader), reader.null_rows) == (version, 100000, 10000, BitMap())
        for value, rows in HIGH_CARDINALITY.items():
            assert reader.equal(value) == IndexResult.of(BitMap(rows))
        assert reader.equal("asdfghjkl123_10000") == IndexResult(False, BitMap())
        contents[version] = list(reader.items())
        assert {v for v, _ in contents[version]} == {f"asdfghjkl123_{i}" for i in range(10000)}
        assert BitMap.union(*(rows for _, rows in contents[version])) == BitMap(range(100000))
        assert sum(len(rows) for _, rows in contents[version]) == 100000
        assert reader.not_in(list(HIGH_CARDINALITY)) == IndexResult.of(
            BitMap(range(100000)) - BitMap(set().union(*HIGH_CARDINALITY.values())))
    assert contents[1] == contents[2]
    assert [v for v, _ in contents[1]] == sorted(v for v, _ in contents[1])


# ---------------------------------------------------------------------------------------------
# bitmap blobs inside the catalog's containers (fixture_catalog.py)

_APPEND_WITH_BITMAP = {
    "f0": ("STRING", 8, [("Alice", {0, 7}), ("Bob", {1, 5}), ("Emily", {2}), ("Lucy", {4}),
                         ("Tony", {3, 6})], set()),
    "f1": ("INT", 8, [(10, {0, 1, 2, 3, 5}), (20, {4, 6, 7})], set()),
    "f2": ("INT", 8, [(0, {2, 3, 6}), (1, {0, 1, 4, 5})], {7}),
}
_PK_DELETE_BATCH = {
    "f0": ("STRING", 2, [("Alice", {0}), ("Lucy", {1})], set()),
    "f1": ("INT", 2, [(10, {0}), (20, {1})], set()),
    "f2": ("INT", 2, [(1, {0, 1})], set()),
}
_BSI_BITMAP_BLOOM = {
    "f0": _APPEND_WITH_BITMAP["f0"],
    "f1": ("INT", 8, [(100, {0, 5}), (200, {1}), (300, {2}), (50, {3}), (500, {4}), (20, {7})], {6}),
    "f2": ("INT", 8, [(-2, {0, 6}), (-3, {1}), (1, {2, 3}), (-1, {4}), (2, {5})], {7}),
    "f4": ("TIMESTAMP(9)", 8, [(1745542802000123, {0, 6}), (1745542902000123, {1}),
                               (1745542602000123, {2}), (-1744877, {3}), (-1764877, {4}),
                               (-1724877, {7})], {5}),
}


#: (path fragment, bitmap version, {column: (type, rows, content, nulls)})
_CONTAINER_CONTENT = [
    ("bitmap_3col_container.bin", 1, _APPEND_WITH_BITMAP),
    ("append_with_bitmap_no_embedding/bucket-0/", 2, _APPEND_WITH_BITMAP),
    ("append_with_bitmap_no_embedding.db/external-path/", 2, _APPEND_WITH_BITMAP),
    ("pk_with_bitmap_dv/bucket-0/data-bfa36b28-40e7-4026-893b-d23116973174-0", 2, _APPEND_WITH_BITMAP),
    ("pk_with_bitmap_dv/bucket-0/data-bfa36b28-40e7-4026-893b-d23116973174-1", 2, _PK_DELETE_BATCH),
    ("append_with_bsi_bitmap_bloomfilter/", 2, _BSI_BITMAP_BLOOM),
]


BITMAP_CONTAINERS = sorted(p for p, (_, entries) in CONTAINERS.items()
                           if any(t == "bitmap" for _, t, _, _ in entries))


@pytest.mark.parametrize("path", BITMAP_CONTAINERS)
def test_container_bitmaps(shared_fixtures, path):
    matches = [(v, columns) for fragment, v, columns in _CONTAINER_CONTENT if fragment in path]
    assert len(matches) == 1, f"the README's content of {path}"
    version, columns = matches[0]
    container = ps.FileIndexFile.parse(fixture(shared_fixtures, path))
    blobs = {column: indexes["bitmap"] for column, indexes in container.columns.items() if "bitmap" in indexes}
    assert set(blobs) == set(columns)
    for column, (data_type, num_rows, content, nulls) in columns.items():
        reader = open_index("bitmap", blobs[column], data_type)
        assert reader.version == version
        check_content(reader, num_rows, content, nulls)


# ---------------------------------------------------------------------------------------------
# V1 and V2 examples and formats/bitmap_index.ksy's edge cases

SPEC_V1 = h("""
    01 00000008 00000004 01 00000000
    00000001 00000014  00000002 00000028  00000003 fffffffb  00000007 fffffff8
    3a300000 01000000 0000 0100 10000000 0200 0500
    3a300000 01000000 0000 0100 10000000 0000 0300
    3a300000 01000000 0000 0100 10000000 0100 0600
""")
SPEC_V2 = h("""
    02 00000008 00000004 01 00000000 00000014
    00000001  00000001 00000000  00000034
    00000004
    00000001 00000014 00000014  00000002 00000028 00000014
    00000003 fffffffb ffffffff  00000007 fffffff8 ffffffff
""") + roaring(2, 5) + roaring(0, 3) + roaring(1, 6)
SPEC_V2_STRING = h("""
    02 00000006 00000004 00 00000004
    00000001 61 00000000   00000001 62 00000011   00000003 636363 00000022   00000002 c3a9 00000035
    00000047
    00000001 00000001 61 00000000 00000014
    00000001 00000001 62 00000014 00000014
    00000001 00000003 636363 fffffffc ffffffff
    00000001 00000002 c3a9 fffffffa ffffffff
""") + roaring(1, 4) + roaring(0, 2)
SPEC_INT_CONTENT = [(1, {0, 3}), (2, {1, 6}), (3, {4}), (7, {7})]


@pytest.mark.parametrize("blob", [SPEC_V1, SPEC_V2], ids=["v1", "v2"])
def test_spec_int_examples(blob):
    check_content(BitmapIndexReader.open(blob, "INT"), 8, SPEC_INT_CONTENT, {2, 5}, absent=(0, 4, 8))
    column = [1, 2, None, 1, 3, None, 2, 7]
    assert build_blob(blob[0], "INT", column) == blob, "the test's writer follows the spec"


def test_spec_string_small_blocks():
    reader = BitmapIndexReader.open(SPEC_V2_STRING, "STRING")
    check_content(reader, 6, [("a", {1, 4}), ("b", {0, 2}), ("ccc", {3}), ("é", {5})], set(),
                  absent=("", "0", "bb", "ccd", "é!", "\uffff"))
    assert reader.stats.blocks_loaded == 4
    # Java's HashMap puts a's bitmap first in the body; the test's writer puts b's (first seen).
    built = build_blob(2, "STRING", ["b", "a", "b", "ccc", "a", "é"], block_size=24)
    assert list(BitmapIndexReader.open(built, "STRING").items()) == list(reader.items())
    assert len(built) == len(SPEC_V2_STRING)


SPEC_EDGE_CASES = [
    ("zero rows", h("02 00000000 00000000 00 00000000 00000000"), 0, [], set()),
    ("all null", h("02 00000002 00000000 01 00000000 00000014 00000000 00000000") + roaring(0, 1),
     2, [], {0, 1}),
    ("one null among others",
     h("02 00000003 00000001 01 fffffffe 00000012 00000001 00000005 00000000 00000010"
       "00000001 00000005 00000000 00000014") + roaring(0, 2), 3, [(5, {0, 2})], {1}),
    ("key seen once",
     h("02 00000002 00000002 00 00000001 00000005 00000000 0000001c"
       "00000002 00000005 ffffffff ffffffff 00000006 fffffffe ffffffff"), 2, [(5, {0}), (6, {1})], set()),
]


@pytest.mark.parametrize("name,blob,num_rows,content,nulls", SPEC_EDGE_CASES, ids=[c[0] for c in SPEC_EDGE_CASES])
def test_spec_edge_cases(name, blob, num_rows, content, nulls):
    check_content(BitmapIndexReader.open(blob, "INT"), num_rows, content, nulls, absent=(0, 4))
    column = [None] * num_rows
    for value, rows in content:
        for row in rows:
            column[row] = value
    assert build_blob(2, "INT", column) == blob


def test_unsupported_types_and_values():
    with pytest.raises(ps.SchemaError):
        BitmapIndexReader.open(SPEC_V1, "DECIMAL(10, 2)")
    with pytest.raises(ps.SchemaError):
        BitmapIndexReader.open(SPEC_V1, "BYTES")
    reader = BitmapIndexReader.open(SPEC_V1, "INT")
    for bad in ("1", 2**31, True, 1.0):
        with pytest.raises(ps.SchemaError):
            reader.equal(bad)


# ---------------------------------------------------------------------------------------------
# V2 laziness

MULTI_BLOCK = [
    ("paimon-cpp/file_index/bitmap-index-v2", "STRING", list(HIGH_CARDINALITY.items())),
    ("paimon-rust/bitmap/java_int_multiblock_v2.bin", "INT", [(4, {0, 4}), (1, {1}), (3, {2}), (2, {3})]),
    ("paimon-rust/bitmap/java_float_v2.bin", "FLOAT", FLOAT_CONTENT),
    ("paimon-rust/bitmap/java_double_v2.bin", "DOUBLE", FLOAT_CONTENT),
]


@pytest.mark.parametrize("rel,data_type,content", MULTI_BLOCK, ids=[m[0].split("/")[-1] for m in MULTI_BLOCK])
def test_v2_lookup_reads_one_block_and_its_bitmap(shared_fixtures, rel, data_type, content):
    blob = fixture(shared_fixtures, rel)
    for value, rows in content:
        reader = BitmapIndexReader.open(blob, data_type)
        assert reader.equal(value) == IndexResult.of(BitMap(rows))
        stored = len(rows) > 1
        assert reader.stats.blocks_loaded == 1
        assert reader.stats.bitmaps_deserialized == stored
        assert reader.stats.bitmap_bytes == (len(roaring(*rows)) if stored else 0)
        reader.not_equal(value)
        reader.in_([value, value])
        assert reader.stats.blocks_loaded == 1 and reader.stats.bitmaps_deserialized == stored, "cached"
    reader = BitmapIndexReader.open(blob, data_type)
    reader.is_null()
    reader.is_not_null()
    assert reader.stats.blocks_loaded == 0


def test_v2_lookup_never_touches_other_blocks_or_bitmaps(shared_fixtures):
    """Garble every byte after the secondary index except the one block and bitmap a lookup
    needs: the lookup still answers, so it read nothing else."""
    blob = fixture(shared_fixtures, "paimon-cpp/file_index/bitmap-index-v2")
    index = parsing.parse(lambda io: BitmapIndex(KeyKind.string, io), blob)
    v2 = index.index
    refs = v2.blocks
    for value, rows in HIGH_CARDINALITY.items():
        key = value.encode()
        i = max(n for n, ref in enumerate(refs) if bytes(ref.first_key.utf8_value.value) <= key)
        block = refs[i].block
        start = v2.ofs_index_blocks + refs[i].ofs_block
        end = start + block._debug["entries"]["end"]     # the block is its own substream
        entry = next(e for e in block.entries if bytes(e.key.utf8_value.value) == key)
        bitmap_at = v2.ofs_body + entry.ofs_bitmap
        garbled = bytearray(blob[:v2.ofs_index_blocks]) + b"\xa5" * (len(blob) - v2.ofs_index_blocks)
        garbled[start:end] = blob[start:end]
        garbled[bitmap_at:bitmap_at + entry.len_bitmap] = blob[bitmap_at:bitmap_at + entry.len_bitmap]
        reader = BitmapIndexReader.open(bytes(garbled), "STRING")
        assert reader.equal(value) == IndexResult.of(BitMap(rows))
        with pytest.raises(ps.FormatError):
            list(reader.items())


def test_below_first_key_loads_no_block(shared_fixtures):
    reader = BitmapIndexReader.open(fixture(shared_fixtures, "paimon-rust/bitmap/java_float_v2.bin"), "FLOAT")
    assert reader.equal(-math.inf) == IndexResult(False, BitMap())
    assert reader.stats.blocks_loaded == 0


# ---------------------------------------------------------------------------------------------
# model check over hand-built blobs

_TYPES = {
    "BOOLEAN": st.booleans(),
    "TINYINT": st.integers(-128, 127),
    "SMALLINT": st.integers(-2**15, 2**15 - 1),
    "INT": st.integers(-2**31, 2**31 - 1),
    "BIGINT": st.integers(-2**63, 2**63 - 1),
    "FLOAT": st.sampled_from([0.0, -0.0, NAN, 1.5, -1.5, math.inf, -math.inf, 3.4e38]),
    "DOUBLE": st.floats(allow_nan=True, width=64),
    "STRING": st.text(max_size=6),
    "DATE": st.integers(-2**31, 2**31 - 1),
    "TIMESTAMP(3)": st.integers(-2**63, 2**63 - 1),
}


@given(columns(_TYPES), st.integers(0, 200), st.integers(1, 2))
@example(("INT", [1, 2, None, 1, 3, None, 2, 7], [0]), 0, 2)
def test_readers_match_the_column(case, slack, version):
    """V1 and V2 (any block size) built from a random column answer as the column says."""
    data_type, column, pool = case
    codec = keys.bitmap_keys(data_type)
    block_size = 12 + max([codec.size(codec.encode(v)) for v in pool]) + slack
    blob = build_blob(version, data_type, column, block_size)
    by_key: dict = {}
    for row, value in enumerate(column):
        if value is not None:
            by_key.setdefault(codec.encode(value), (value, set()))[1].add(row)
    nulls = {row for row, value in enumerate(column) if value is None}
    absent = tuple(v for v in pool if codec.encode(v) not in by_key)
    check_content(BitmapIndexReader.open(blob, data_type), len(column), list(by_key.values()), nulls, absent)


# ---------------------------------------------------------------------------------------------
# V1 fast path == generated parser

KINDS = {KeyKind.boolean: st.integers(0, 255), KeyKind.int8: st.integers(-128, 127),
         KeyKind.int16: st.integers(-2**15, 2**15 - 1), KeyKind.int32: st.integers(-2**31, 2**31 - 1),
         KeyKind.int64: st.integers(-2**63, 2**63 - 1), KeyKind.float32: st.integers(0, 2**32 - 1),
         KeyKind.float64: st.integers(0, 2**64 - 1), KeyKind.string: st.binary(max_size=8)}


@st.composite
def v1_blobs(draw):
    """V1-shaped bytes: a head, entries, a random body; then maybe truncated or bit-flipped."""
    kind = draw(st.sampled_from(sorted(KINDS)))
    entries = draw(st.lists(st.tuples(KINDS[kind], st.integers(-2**31, 2**31 - 1)), max_size=12))
    num_keys = len(entries) + draw(st.sampled_from([0, 0, 0, 1, -1, 1000]))
    has_null = draw(st.sampled_from([0, 1, 1, 2]))
    data = struct.pack(">Biib", 1, draw(st.integers(-3, 100)), num_keys, has_null)
    if has_null == 1:
        data += struct.pack(">i", draw(st.sampled_from([0, -1, -5, 3])))
    data += b"".join(encode_key(kind, k) + struct.pack(">i", o) for k, o in entries)
    data += draw(st.binary(max_size=24))
    mutation = draw(st.sampled_from(["none", "truncate", "flip"]))
    if mutation == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif mutation == "flip" and data:
        bit = draw(st.integers(0, 8 * len(data) - 1))
        data = bytes(b ^ (1 << bit % 8) if n == bit // 8 else b for n, b in enumerate(data))
    return kind, data


def _generated(data: bytes, kind: KeyKind):
    try:
        return parse_v1_dictionary(data, kind)
    except ps.FormatError as exc:
        return ("error", exc.path, exc.offset)


@given(v1_blobs())
@example((KeyKind.string, b"\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\xff\xff\xff\xff"))
@example((KeyKind.int32, b"\x01\x00\x00\x00\x01\x7f\xff\xff\xff\x00"))
@example((KeyKind.int32, b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
@example((KeyKind.int32, b""))
def test_v1_fast_path_equals_generated_parser(case):
    kind, data = case
    expected = _generated(data, kind)
    fast = scan_v1_dictionary(data, kind)
    assert (fast is None) == isinstance(expected, tuple)
    if fast is not None:
        assert fast == expected
    try:
        assert read_v1_dictionary(data, kind) == expected
    except ps.FormatError as exc:
        assert ("error", exc.path, exc.offset) == expected


@given(columns(_TYPES))
def test_v1_fast_path_equals_generated_parser_on_valid_blobs(case):
    data_type, column, _ = case
    kind = keys.bitmap_keys(data_type).kind
    blob = build_blob(1, data_type, column)
    fast = scan_v1_dictionary(blob, kind)
    assert fast is not None and fast == parse_v1_dictionary(blob, kind)


def test_v1_fast_path_on_the_high_cardinality_fixture(shared_fixtures):
    blob = fixture(shared_fixtures, "paimon-cpp/file_index/bitmap-index-v1")
    assert scan_v1_dictionary(blob, KeyKind.string) == parse_v1_dictionary(blob, KeyKind.string)


# ---------------------------------------------------------------------------------------------
# errors


def _error(blob: bytes, data_type: str = "INT") -> ps.FormatError:
    with pytest.raises(ps.FormatError) as info:
        reader = BitmapIndexReader.open(blob, data_type)
        list(reader.items())
        reader.is_null()
    return info.value


TRUNCATED = ["paimon-rust/bitmap/java_string_v1.bin", "paimon-rust/bitmap/java_string_v2.bin",
             "paimon-rust/bitmap/java_int_singleton_null_v1.bin", "paimon-rust/bitmap/java_float_v2.bin",
             "paimon-cpp/bitmap/int_all_null_v1.bin", "paimon-cpp/bitmap/bigint_v2.bin"]


@pytest.mark.parametrize("rel", TRUNCATED)
def test_every_truncation_is_a_located_error(shared_fixtures, rel):
    blob = fixture(shared_fixtures, rel)
    data_type = {"string": "STRING", "float": "FLOAT", "bigint": "BIGINT"}.get(
        next((t for t in ("string", "float", "bigint") if t in rel), ""), "INT")
    for n in range(len(blob)):
        exc = _error(blob[:n], data_type)
        assert exc.path and exc.offset is not None and exc.offset >= 0, (n, exc)


@pytest.mark.parametrize("blob,path,offset", [
    (b"", "version", 0),
    (h("03 00000000 00000000 00 00000000 00000000"), "version", 0),
    (h("00 00000000 00000000 00 00000000 00000000"), "version", 0),
    (h("02 ffffffff 00000000 00 00000000 00000000"), "num_rows", 1),
    (h("01 00000001 00000000 02"), "has_null", 9),
    (h("01 00000001 00000000 01 00000004"), "ofs_null_bitmap", 10),
    (SPEC_V1[:30], "index.entries[2].key.int_value", 30),
    (SPEC_V2[:60], "index.blocks[0].block", 34),        # the block's 52 bytes are cut short
    (SPEC_EDGE_CASES[1][1][:-1], "index.null_bitmap", 26),
    (SPEC_V2[:-3], "index.blocks[0].block.entries[1].bitmap", 126),
    (SPEC_V1[:-3], "index.entries[1].bitmap.containers[0]", 102),
])
def test_located_errors(blob, path, offset):
    exc = _error(blob)
    assert (exc.path, exc.offset) == (path, offset), exc


def test_misordered_v2_blocks_and_entries():
    # The V2 STRING example with the secondary index's first two keys swapped ("a" <-> "b").
    swapped = bytearray(SPEC_V2_STRING)
    swapped[18], swapped[27] = swapped[27], swapped[18]
    exc = _error(bytes(swapped), "STRING")
    assert (exc.path, exc.offset) == ("index.blocks[1].first_key", 23)
    # The V2 INT example with the block's entries for keys 1 and 2 swapped.
    data = bytearray(SPEC_V2)
    first, second = slice(38, 50), slice(50, 62)
    data[first], data[second] = SPEC_V2[second], SPEC_V2[first]
    exc = _error(bytes(data))
    assert (exc.path, exc.offset) == ("index.blocks[0].first_key", 22)
    data[22:26] = struct.pack(">i", 2)        # the secondary index agrees with the block
    exc = _error(bytes(data))
    assert (exc.path, exc.offset) == ("index.blocks[0].block.entries[1].key", 50)


def test_v2_block_crossing_into_the_next_block():
    blob = build_blob(2, "INT", [1, 2, 3, 4], block_size=28)        # blocks {1, 2} and {3, 4}
    bad = blob.replace(struct.pack(">iii", 2, -2, -1), struct.pack(">iii", 3, -2, -1))
    assert bad.count(struct.pack(">iii", 3, -2, -1)) == 1
    exc = _error(bad)
    assert exc.path == "index.blocks[0].block.entries[1].key"


def test_v1_inconsistencies():
    duplicate = SPEC_V1[:30] + struct.pack(">i", 1) + SPEC_V1[34:]
    exc = _error(duplicate)
    assert (exc.path, exc.offset) == ("index.entries[2].key", 30)
    swapped = SPEC_V1[:18] + struct.pack(">i", 40) + SPEC_V1[22:26] + struct.pack(">i", 20) + SPEC_V1[30:]
    exc = _error(swapped)
    assert (exc.path, exc.offset) == ("index.entries[1].ofs_bitmap", 26)
    beyond = SPEC_V1[:42] + struct.pack(">i", -1 - 8) + SPEC_V1[46:]     # key 7 in row 8 of 8
    reader = BitmapIndexReader.open(beyond, "INT")
    with pytest.raises(ps.FormatError) as info:
        reader.equal(7)
    assert (info.value.path, info.value.offset) == ("index.entries[3].ofs_bitmap", 42)


@given(st.sampled_from(["java_string_v1", "java_string_v2", "java_float_v2", "java_int_v1", "java_int_v2"]),
       st.data())
def test_garbled_fixtures_raise_only_format_errors(shared_fixtures, stem, data):
    raw = bytearray(fixture(shared_fixtures, f"paimon-rust/bitmap/{stem}.bin"))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    data_type = "STRING" if "string" in stem else "FLOAT" if "float" in stem else "INT"
    try:
        reader = BitmapIndexReader.open(bytes(raw), data_type)
        list(reader.items())
        reader.is_not_null()
        reader.not_in([1.5 if data_type == "FLOAT" else 7 if data_type == "INT" else "z"])
    except ps.FormatError as exc:
        assert exc.path and exc.offset is not None
