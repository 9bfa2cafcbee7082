"""The file-index specs (bitmap, bloom filter, BSI, range-bitmap) against real Paimon blobs.

Every blob is parsed with the generated Kaitai parser alone; bitmaps are decoded with pyroaring.
Each test checks that the parse accounts for every byte of the blob (the pieces a reader reaches
through positioned instances tile the blob exactly) and that the decoded keys and rows are the
ones the tests of paimon-rust and paimon-cpp that wrote the fixtures state. The hex examples of formats/*.ksy are checked too.
"""

from __future__ import annotations

import importlib.util
import struct
import sys
import types
from pathlib import Path

import pytest
from pyroaring import BitMap

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"

#: Tests of real blobs skip when ../shared/fixtures is absent (fail under
#: PAIMON_SCHEMA_REQUIRE_ORACLES=1, through the `shared_fixtures` fixture); the spec's hex
#: examples still run.
needs_fixtures = pytest.mark.usefixtures("shared_fixtures")


def _import_generated():
    """`paimon_schema.generated`, installed or straight from the checkout's generated/."""
    try:
        import paimon_schema.generated as generated

        return generated
    except ImportError:
        pass
    parent = sys.modules.get("paimon_schema")
    if parent is None:
        try:
            import paimon_schema as parent
        except ImportError:
            parent = types.ModuleType("paimon_schema")
            parent.__path__ = []
            sys.modules["paimon_schema"] = parent
    spec = importlib.util.spec_from_file_location(
        "paimon_schema.generated",
        REPO / "generated" / "__init__.py",
        submodule_search_locations=[str(REPO / "generated")],
    )
    generated = importlib.util.module_from_spec(spec)
    sys.modules["paimon_schema.generated"] = generated
    spec.loader.exec_module(generated)
    parent.generated = generated
    return generated


_import_generated()

import kaitaistruct  # noqa: E402
from kaitaistruct import BytesIO, KaitaiStream  # noqa: E402

from paimon_schema.generated import (  # noqa: E402
    bitmap_index,
    bloom_filter,
    bsi_index,
    file_index,
    paimon_common,
    range_bitmap,
)

KK = paimon_common.PaimonCommon.KeyKind
RUST = FIXTURES / "paimon-rust"
CPP = FIXTURES / "paimon-cpp"
TABLES = CPP / "tables" / "parquet"


# ---------------------------------------------------------------------------------------------
# helpers


def fixture(rel: str) -> bytes:
    return (FIXTURES / rel).read_bytes()


def h(text: str) -> bytes:
    """Bytes from spec-style hex with spaces, newlines and `#` comments."""
    return bytes.fromhex("".join(line.split("#")[0] for line in text.splitlines()).replace(" ", ""))


def roaring(*values: int) -> bytes:
    """A bitmap as Java serializes a freshly built one (`runOptimize()`, formats/roaring_bitmap.ksy)."""
    bm = BitMap()
    for v in values:
        bm.add(v)
    bm.run_optimize()
    return bm.serialize()


def check_roaring(data: bytes) -> BitMap:
    """Decode a stored bitmap and check it is in Java's canonical (run-optimized) form."""
    bm = BitMap.deserialize(data)
    assert roaring(*bm) == data, "bitmap bytes are not what Java would write for this set"
    return bm


def f32(value: float) -> int:
    return struct.unpack(">I", struct.pack(">f", value))[0]


def f64(value: float) -> int:
    return struct.unpack(">Q", struct.pack(">d", value))[0]


F32_NAN = 0x7FC00000
F64_NAN = 0x7FF8000000000000


def key_value(key):
    """A `paimon_common::key` as a plain value: ints, IEEE bits for floats, str for strings."""
    if key.kind == KK.string:
        return bytes(key.utf8_value.value).decode("utf-8")
    return key.bits_value if key.kind in (KK.boolean, KK.float32, KK.float64) else key.int_value


def span(obj, name: str) -> tuple[int, int]:
    """Stream span of a field or an instance, from the debug positions of the generated code."""
    getattr(obj, name)  # an instance records its span when it is first read
    debug = obj._debug[name] if name in obj._debug else obj._debug["_m_" + name]
    return debug["start"], debug["end"]


def container_blobs(rel: str) -> dict[tuple[str, str], bytes]:
    """{(column, index type): blob} of a file-index container, via the generated parser."""
    container = file_index.FileIndex(KaitaiStream(BytesIO((FIXTURES / rel).read_bytes())))
    container._read()
    blobs = {}
    for column in container.head.columns:
        for entry in column.indexes:
            blobs[column.name.value.decode(), entry.index_type.value.decode()] = entry.blob
    return blobs


def sidecar(table: str) -> str:
    matches = sorted((TABLES / f"{table}.db" / table / "bucket-0").glob("*.parquet.index"))
    assert len(matches) == 1, matches
    return str(matches[0].relative_to(FIXTURES))


# ---------------------------------------------------------------------------------------------
# bitmap (V1 and V2)


def parse_bitmap(kind, data: bytes):
    index = bitmap_index.BitmapIndex(kind, KaitaiStream(BytesIO(data)))
    index._read()
    return index


def decode_bitmap(kind, data: bytes):
    """Parse a bitmap index fully; check every byte is accounted for; return its content.

    Returns (num_rows, {key: set of rows} in entry order, null rows, body order of the keys,
    parsed index).
    """
    index = parse_bitmap(kind, data)
    body = {}  # body offset -> (end offset, owner)
    nulls: set[int] = set()
    if index.has_null:
        if index.is_null_bitmap_stored:
            assert index.ofs_null_bitmap == 0
            if index.version == bitmap_index.BitmapIndex.Version.v1:
                start, end = span(index.index, "null_bitmap")
                raw = data[start:end]
            else:
                raw = index.index.null_bitmap
                assert len(raw) == index.index.len_null_bitmap
            nulls = set(check_roaring(raw))
            body[0] = (len(raw), None)
        else:
            nulls = {index.null_row}
            if index.version == bitmap_index.BitmapIndex.Version.v2:
                # formats/bitmap_index.ksy null table: the length of a one-row bitmap that is not stored
                assert index.index.len_null_bitmap == len(roaring(index.null_row)) == 18

    keys = {}
    if index.version == bitmap_index.BitmapIndex.Version.v1:
        entries = index.index.entries
        assert index.ofs_body == index.index.ofs_body
    else:
        v2 = index.index
        assert v2.num_blocks == len(v2.blocks)
        entries = []
        ofs_block = 0
        for ref in v2.blocks:
            assert ref.ofs_block == ofs_block, "index blocks are back to back"
            block = ref.block
            assert key_value(ref.first_key) == key_value(block.entries[0].key)
            start, end = span(ref, "block")
            assert start == v2.ofs_index_blocks + ref.ofs_block
            ofs_block += end - start
            entries.extend(block.entries)
        assert ofs_block == v2.len_index_blocks, "the index blocks fill len_index_blocks"
        assert v2.ofs_body == v2.ofs_index_blocks + v2.len_index_blocks
    assert len(entries) == index.num_keys

    for entry in entries:
        key = key_value(entry.key)
        assert key not in keys, f"duplicate key {key!r}"
        if entry.is_singleton:
            assert entry.row == -1 - entry.ofs_bitmap
            if index.version == bitmap_index.BitmapIndex.Version.v2:
                assert entry.len_bitmap == -1
                assert entry.bitmap is None
            keys[key] = {entry.row}
            continue
        if index.version == bitmap_index.BitmapIndex.Version.v1:
            start, end = span(entry, "bitmap")
            assert start == index.ofs_body + entry.ofs_bitmap
            raw = data[start:end]
        else:
            raw = entry.bitmap
            assert len(raw) == entry.len_bitmap
        rows = check_roaring(raw)
        assert len(rows) >= 2, "a one-row key is stored as a singleton"
        keys[key] = set(rows)
        assert entry.ofs_bitmap not in body
        body[entry.ofs_bitmap] = (entry.ofs_bitmap + len(raw), key)

    # The stored bitmaps tile the body exactly, up to the end of the blob.
    position = 0
    body_order = []
    for ofs in sorted(body):
        assert ofs == position, f"gap or overlap in the body at {ofs}"
        position, owner = body[ofs]
        if owner is not None:
            body_order.append(owner)
    assert index.ofs_body + position == len(data), "bytes left over after the body"

    if index.version == bitmap_index.BitmapIndex.Version.v1:
        # V1 stores no lengths: Java derives each from the next stored offset (formats/bitmap_index.ksy, V1), which
        # only works if the body is in entry order.
        stored = [key_value(e.key) for e in entries if not e.is_singleton]
        assert body_order == stored
    else:
        ordered = [key_value(e.key) for e in entries]
        assert ordered == sorted(ordered, key=sort_key(kind)), "V2 entries must be sorted"

    all_rows = set(nulls)
    for rows in keys.values():
        assert not (rows & all_rows), "a row belongs to two keys"
        all_rows |= rows
    assert all_rows == set(range(index.num_rows))
    return index.num_rows, keys, nulls, body_order, index


def sort_key(kind):
    """Java's comparator for a key kind, over `key_value` values (formats/bitmap_index.ksy, V2)."""
    if kind == KK.float32:
        return lambda bits: float_order(struct.unpack(">f", struct.pack(">I", bits))[0], bits >> 31)
    if kind == KK.float64:
        return lambda bits: float_order(struct.unpack(">d", struct.pack(">Q", bits))[0], bits >> 63)
    if kind == KK.string:
        return lambda s: s.encode("utf-8")
    return lambda v: v


def float_order(value: float, negative: int):
    # Float.compareTo / Double.compareTo: -0.0 < 0.0, every NaN equal and above +inf.
    if value != value:
        return (2, 0.0, 0)
    return (1, value, 0 if negative else 1)


def test_bitmap_spec_example_v1():
    """A V1 blob: INT values [1, 2, null, 1, 3, null, 2, 7]."""
    data = h(
        """
        01 00000008 00000004 01 00000000
        00000001 00000014
        00000002 00000028
        00000003 fffffffb
        00000007 fffffff8
        3a300000 01000000 0000 0100 10000000 0200 0500
        3a300000 01000000 0000 0100 10000000 0000 0300
        3a300000 01000000 0000 0100 10000000 0100 0600
        """
    )
    rows, keys, nulls, _, index = decode_bitmap(KK.int32, data)
    assert rows == 8 and nulls == {2, 5}
    assert keys == {1: {0, 3}, 2: {1, 6}, 3: {4}, 7: {7}}
    assert index.ofs_body == 46  # 14 bytes of head, 4 entries of 8


def test_bitmap_spec_example_v2():
    """The same data in V2, one block."""
    data = h(
        """
        02 00000008 00000004 01 00000000 00000014
        00000001
        00000001 00000000
        00000034
        00000004
        00000001 00000014 00000014
        00000002 00000028 00000014
        00000003 fffffffb ffffffff
        00000007 fffffff8 ffffffff
        """
    ) + roaring(2, 5) + roaring(0, 3) + roaring(1, 6)
    rows, keys, nulls, order, index = decode_bitmap(KK.int32, data)
    assert rows == 8 and nulls == {2, 5}
    assert keys == {1: {0, 3}, 2: {1, 6}, 3: {4}, 7: {7}}
    assert order == [1, 2]
    assert index.index.ofs_index_blocks == 34 and index.ofs_body == 34 + 52


def test_bitmap_spec_example_v2_string_small_blocks():
    """V2 STRING b,a,b,ccc,a,é with index-block-size=24b, one entry per block."""
    data = h(
        """
        02 00000006 00000004 00 00000004
        00000001 61 00000000   00000001 62 00000011   00000003 636363 00000022
        00000002 c3a9 00000035
        00000047
        00000001 00000001 61 00000000 00000014
        00000001 00000001 62 00000014 00000014
        00000001 00000003 636363 fffffffc ffffffff
        00000001 00000002 c3a9 fffffffa ffffffff
        """
    ) + roaring(1, 4) + roaring(0, 2)
    rows, keys, nulls, order, index = decode_bitmap(KK.string, data)
    assert rows == 6 and not nulls
    assert keys == {"a": {1, 4}, "b": {0, 2}, "ccc": {3}, "é": {5}}
    assert [key_value(b.first_key) for b in index.index.blocks] == ["a", "b", "ccc", "é"]
    assert order == ["a", "b"]


def test_bitmap_spec_edge_cases():
    """formats/bitmap_index.ksy's edge cases: zero rows, and all rows null."""
    rows, keys, nulls, _, index = decode_bitmap(KK.int32, h("02 00000000 00000000 00 00000000 00000000"))
    assert (rows, keys, nulls, index.index.num_blocks) == (0, {}, set(), 0)
    data = h("02 00000002 00000000 01 00000000 00000014 00000000 00000000") + roaring(0, 1)
    rows, keys, nulls, _, index = decode_bitmap(KK.int32, data)
    assert (rows, keys, nulls) == (2, {}, {0, 1})


def test_bitmap_rejects_unknown_version():
    with pytest.raises(kaitaistruct.ValidationNotAnyOfError):
        parse_bitmap(KK.int32, h("03 00000000 00000000 00 00000000 00000000"))


# (file stem, key kind, R (rows {0,3}), S (singleton row 1)); nulls {2,4}; paimon-rust's Java-written pairs (paimon-rust/bitmap/).
RUST_TYPED_PAIRS = [
    ("java_boolean", KK.boolean, 1, 0),
    ("java_tinyint", KK.int8, -128, 127),
    ("java_smallint", KK.int16, -12345, 23456),
    ("java_int", KK.int32, -123456789, 42),
    ("java_bigint", KK.int64, -(2**63) + 123, 2**63 - 1 - 456),
    ("java_date", KK.int32, -1, 20000),
    ("java_time", KK.int32, 0, 86399999),
    ("java_timestamp_millis", KK.int64, -123456789, 1700000000123),
    ("java_timestamp_micros", KK.int64, -1, 1700000000123456),
    ("java_string", KK.string, "Paimon-派蒙", "z"),
]


@needs_fixtures
@pytest.mark.parametrize("stem,kind,repeated,single", RUST_TYPED_PAIRS, ids=[p[0] for p in RUST_TYPED_PAIRS])
def test_bitmap_rust_java_pairs(stem, kind, repeated, single):
    results = {}
    for version in (1, 2):
        data = fixture(f"paimon-rust/bitmap/{stem}_v{version}.bin")
        rows, keys, nulls, order, index = decode_bitmap(kind, data)
        assert index.version == version
        assert rows == 5 and nulls == {2, 4}
        assert keys == {repeated: {0, 3}, single: {1}}
        assert index.is_null_bitmap_stored and index.num_keys == 2
        results[version] = (index, order)
    # The V1 entry order (HashMap order) is the body order of both versions.
    v1_entries = [key_value(e.key) for e in results[1][0].index.entries]
    assert [k for k in v1_entries if k != single] == results[1][1] == results[2][1]
    assert results[2][0].index.num_blocks == 1


@needs_fixtures
@pytest.mark.parametrize("stem,kind,nan", [("java_float", KK.float32, F32_NAN), ("java_double", KK.float64, F64_NAN)])
def test_bitmap_rust_float_keys(stem, kind, nan):
    bits = f32 if kind == KK.float32 else f64
    expected = {bits(-1.5): {0, 5}, bits(0.0): {1, 6}, bits(-0.0): {2, 7}, nan: {3, 8}}
    v1_order = {
        "java_float": [nan, bits(-0.0), bits(0.0), bits(-1.5)],
        "java_double": [bits(-0.0), bits(0.0), nan, bits(-1.5)],
    }[stem]
    rows, keys, nulls, order, v1 = decode_bitmap(kind, fixture(f"paimon-rust/bitmap/{stem}_v1.bin"))
    assert (rows, keys, nulls) == (10, expected, {4, 9})
    assert [key_value(e.key) for e in v1.index.entries] == v1_order == order
    rows, keys, nulls, order2, v2 = decode_bitmap(kind, fixture(f"paimon-rust/bitmap/{stem}_v2.bin"))
    assert (rows, keys, nulls) == (10, expected, {4, 9})
    assert order2 == order
    # Four blocks of one entry each, sorted -1.5 < -0.0 < +0.0 < NaN.
    assert v2.index.num_blocks == 4
    assert [key_value(b.first_key) for b in v2.index.blocks] == [bits(-1.5), bits(-0.0), bits(0.0), nan]


@needs_fixtures
def test_bitmap_rust_small_cases():
    rows, keys, nulls, _, index = decode_bitmap(KK.int32, fixture("paimon-rust/bitmap/java_int_multiblock_v2.bin"))
    assert (rows, keys, nulls) == (5, {4: {0, 4}, 1: {1}, 3: {2}, 2: {3}}, set())
    assert index.index.num_blocks == 4
    for version in (1, 2):
        data = fixture(f"paimon-rust/bitmap/java_int_singleton_null_v{version}.bin")
        rows, keys, nulls, _, index = decode_bitmap(KK.int32, data)
        assert (rows, keys, nulls) == (3, {0: {0}, 1: {1}}, {2})
        assert index.ofs_null_bitmap == -3 and not index.is_null_bitmap_stored
    data = fixture("paimon-rust/bitmap/java_int_empty_v1.bin")
    assert data == h("01 00000000 00000000 00")
    assert decode_bitmap(KK.int32, data)[:3] == (0, {}, set())
    data = fixture("paimon-rust/bitmap/java_int_empty_v2.bin")
    assert data == b"\x02" + bytes(17)
    assert decode_bitmap(KK.int32, data)[:3] == (0, {}, set())


# paimon-cpp's test vectors (paimon-cpp/bitmap/): (stem, kind, rows, {key: rows}, null rows)
CPP_VECTORS = [
    ("string_a_b", KK.string, 5, {"a": {0, 4}, "b": {2}}, {1, 3}),
    ("boolean", KK.boolean, 5, {1: {0, 2}, 0: {1, 3}}, {4}),
    ("tinyint", KK.int8, 5, {1: {3, 4}}, {0, 1, 2}),
    ("smallint", KK.int16, 5, {1: {1, 2, 3, 4}}, {0}),
    ("bigint", KK.int64, 3, {1: {0}, 2: {1}, 3: {2}}, set()),
    ("date", KK.int32, 6, {20200220: {0, 1}, 20220222: {4, 5}}, {2, 3}),
    ("int", KK.int32, 3, {0: {0}, 1: {1}}, {2}),
    (
        "timestamp9",
        KK.int64,
        8,
        {
            1745542802000123: {0, 6},
            1745542902000123: {1},
            1745542602000123: {2},
            -1744877: {3},
            -1764877: {4},
            -1724877: {7},
        },
        {5},
    ),
    ("string_apple_java", KK.string, 5, {"apple": {0, 2, 4}}, {1, 3}),
    ("int_all_null", KK.int32, 4, {}, {0, 1, 2, 3}),
]


@needs_fixtures
@pytest.mark.parametrize("stem,kind,num_rows,expected,expected_nulls", CPP_VECTORS, ids=[v[0] for v in CPP_VECTORS])
def test_bitmap_cpp_vectors(stem, kind, num_rows, expected, expected_nulls):
    orders = []
    for version in (1, 2):
        rows, keys, nulls, order, index = decode_bitmap(kind, fixture(f"paimon-cpp/bitmap/{stem}_v{version}.bin"))
        assert (rows, keys, nulls) == (num_rows, expected, expected_nulls)
        orders.append(order)
    assert orders[0] == orders[1]
    if stem == "timestamp9":
        v1 = parse_bitmap(kind, fixture("paimon-cpp/bitmap/timestamp9_v1.bin"))
        assert [key_value(e.key) for e in v1.index.entries] == [
            1745542802000123, -1724877, -1764877, -1744877, 1745542602000123, 1745542902000123]
    if stem == "int_all_null":
        v2 = parse_bitmap(kind, fixture("paimon-cpp/bitmap/int_all_null_v2.bin"))
        assert v2.index.num_blocks == 0 and v2.index.len_index_blocks == 0
        assert v2.index.len_null_bitmap == 15  # a run container


HIGH_CARDINALITY_PROBES = {
    "asdfghjkl123_2500": {3127, 18654, 23615, 43768, 62555, 63261, 66284, 74708, 99268},
    "asdfghjkl123_5000": {2269, 21292, 23667, 35066, 42377, 46085, 64811, 79062, 96161},
    "asdfghjkl123_7500": {14856, 50768, 60230, 68792, 72208, 73800, 78261, 81346, 86520,
                          87420, 88501, 95131, 99401},
}


@needs_fixtures
def test_bitmap_cpp_high_cardinality():
    """paimon-cpp's high-cardinality STRING files: 100000 rows, 10000 string keys, V1 and V2 (18 blocks) with one mapping."""
    _, keys_v1, nulls_v1, _, v1 = decode_bitmap(KK.string, fixture("paimon-cpp/file_index/bitmap-index-v1"))
    _, keys_v2, nulls_v2, _, v2 = decode_bitmap(KK.string, fixture("paimon-cpp/file_index/bitmap-index-v2"))
    assert v1.num_rows == v2.num_rows == 100000
    assert len(keys_v1) == 10000 and set(keys_v1) == {f"asdfghjkl123_{i}" for i in range(10000)}
    assert keys_v1 == keys_v2 and not nulls_v1 and not nulls_v2
    for key, rows in HIGH_CARDINALITY_PROBES.items():
        assert keys_v1[key] == rows
    assert v2.index.num_blocks == 18 and v2.index.len_index_blocks == 288962
    for ref in v2.index.blocks:
        start, end = span(ref, "block")
        assert end - start <= 16384, "a block is at most index-block-size (16 KiB) bytes"


@needs_fixtures
def test_bitmap_v2_lookup_is_lazy():
    """One V2 lookup parses the head, one index block and one bitmap, nothing else."""
    index = parse_bitmap(KK.string, fixture("paimon-cpp/file_index/bitmap-index-v2"))
    blocks = index.index.blocks
    probe = "asdfghjkl123_5000"
    ref = max((b for b in blocks if key_value(b.first_key).encode() <= probe.encode()),
              key=lambda b: key_value(b.first_key).encode())
    entry = next(e for e in ref.block.entries if key_value(e.key) == probe)
    assert set(BitMap.deserialize(entry.bitmap)) == HIGH_CARDINALITY_PROBES[probe]
    assert sum(hasattr(b, "_m_block") for b in blocks) == 1
    assert sum(hasattr(e, "_m_bitmap") for e in ref.block.entries) == 1


BITMAP_TABLE_ROWS = {
    "f0": (KK.string, {"Alice": {0, 7}, "Bob": {1, 5}, "Emily": {2}, "Lucy": {4}, "Tony": {3, 6}}, set()),
    "f1": (KK.int32, {10: {0, 1, 2, 3, 5}, 20: {4, 6, 7}}, set()),
    "f2": (KK.int32, {0: {2, 3, 6}, 1: {0, 1, 4, 5}}, {7}),
}


@needs_fixtures
@pytest.mark.parametrize("source", ["v1 embedded container", "v2 sidecar"])
def test_bitmap_in_containers(source):
    rel = ("paimon-cpp/file-index/bitmap_3col_container.bin" if source.startswith("v1")
           else sidecar("append_with_bitmap_no_embedding"))
    blobs = container_blobs(rel)
    expected_version = 1 if source.startswith("v1") else 2
    for column, (kind, expected, expected_nulls) in BITMAP_TABLE_ROWS.items():
        rows, keys, nulls, _, index = decode_bitmap(kind, blobs[column, "bitmap"])
        assert (rows, keys, nulls) == (8, expected, expected_nulls)
        assert index.version == expected_version


# ---------------------------------------------------------------------------------------------
# bloom filter


def parse_bloom(data: bytes):
    bloom = bloom_filter.BloomFilter(KaitaiStream(BytesIO(data)))
    bloom._read()
    assert bloom._io.pos() == len(data)
    return bloom


def wang64(x: int) -> int:
    """Thomas Wang's 64-bit mix with Java's wrapping arithmetic and arithmetic shifts (formats/bloom_filter.ksy, `FastHash`)."""
    mask = (1 << 64) - 1

    def signed(v):
        v &= mask
        return v - (1 << 64) if v >> 63 else v

    k = signed(x)
    k = signed(~k + (k << 21))
    k = signed(k ^ (k >> 24))
    k = signed(k + (k << 3) + (k << 8))
    k = signed(k ^ (k >> 14))
    k = signed(k + (k << 2) + (k << 4))
    k = signed(k ^ (k >> 28))
    k = signed(k + (k << 31))
    return k


def might_contain(bloom, hash64: int) -> bool:
    """BloomFilter64.testHash over the parsed bit set (formats/bloom_filter.ksy)."""

    def int32(v):
        v &= 0xFFFFFFFF
        return v - (1 << 32) if v >> 31 else v

    h1, h2 = int32(hash64), int32(hash64 >> 32)
    for i in range(1, bloom.num_hash_functions + 1):
        c = int32(h1 + i * h2)
        if c < 0:
            c = ~c
        pos = c % bloom.num_bits
        if not bloom.bitset[pos >> 3] & (1 << (pos & 7)):
            return False
    return True


def xxh64(text: str) -> int:
    xxhash = pytest.importorskip("xxhash")
    return xxhash.xxh64_intdigest(text.encode("utf-8"), seed=0)


def float_bits_long(value: float) -> int:
    bits = f32(value)
    return bits - (1 << 32) if bits >> 31 else bits


def test_bloom_spec_examples():
    bloom = parse_bloom(h("00000003 892001504000"))
    assert (bloom.num_hash_functions, bloom.num_bits) == (3, 48)
    assert all(might_contain(bloom, wang64(v)) for v in (1, 2, 3))
    bloom = parse_bloom(h("00000003 008024700000"))
    assert all(might_contain(bloom, xxh64(s)) for s in ("a", "hello"))


def test_bloom_rejects_corrupt_header():
    with pytest.raises(kaitaistruct.ValidationLessThanError):
        parse_bloom(h("00000000 00"))
    with pytest.raises(kaitaistruct.ValidationGreaterThanError):
        parse_bloom(h("00000100 00"))
    # No bit at all: the spec leaves the refusal to readers (test_bloom.py checks ours).
    assert parse_bloom(h("00000003")).num_bits == 0


@needs_fixtures
def test_bloom_rust_java_golden():
    data = fixture("paimon-rust/bloom-filter/java_bigint_items10_fpp0.1.bin")
    assert data == h("00000003 818281005001")
    bloom = parse_bloom(data)
    assert (bloom.num_hash_functions, bloom.num_bits) == (3, 48)
    assert all(might_contain(bloom, wang64(v)) for v in (-1, 0, 1, 42))
    assert not might_contain(bloom, wang64(43)) and not might_contain(bloom, wang64(44))


TIMESTAMP9_MICROS = [1745542802000123, 1745542902000123, 1745542602000123, -1744877, -1764877,
                     1745542802000123, -1724877]


@needs_fixtures
@pytest.mark.parametrize("stem,hashes", [
    ("integer", lambda: [wang64(v) for v in (1, 2, -1, 123)]),
    ("float", lambda: [wang64(float_bits_long(v)) for v in (-0.3, -5.2, 0.0, 0.1, 123.12)]),
    ("double", lambda: [wang64(struct.unpack(">q", struct.pack(">d", v))[0])
                        for v in (-0.3, -5.2, 0.0, 0.1, 123.12)]),
    ("timestamp9", lambda: [wang64(v) for v in TIMESTAMP9_MICROS]),
    ("string", lambda: [xxh64(s) for s in ("a", "b", "")]),
])
def test_bloom_cpp_vectors(stem, hashes):
    bloom = parse_bloom(fixture(f"paimon-cpp/bloom-filter/{stem}.bin"))
    assert (bloom.num_hash_functions, bloom.num_bits) == (6, 88)
    assert all(might_contain(bloom, h64) for h64 in hashes())


@needs_fixtures
def test_bloom_default_sized_in_container():
    """Five default-sized filters (4792536 bits, k = 3: 599071-byte blobs) in one sidecar."""
    blobs = container_blobs(sidecar("append_with_bloomfilter"))
    assert sorted(blobs) == [(f"f{i}", "bloom-filter") for i in range(5)]
    for blob in blobs.values():
        assert len(blob) == 599071
        bloom = parse_bloom(blob)
        assert (bloom.num_hash_functions, bloom.num_bits) == (3, 4792536)
    assert might_contain(parse_bloom(blobs["f0", "bloom-filter"]), xxh64("Emily"))
    assert might_contain(parse_bloom(blobs["f1", "bloom-filter"]), wang64(500))


# ---------------------------------------------------------------------------------------------
# BSI


def decode_bsi(data: bytes) -> list[int | None]:
    """Parse a BSI blob (every byte must be consumed) and return each row's value or None."""
    index = bsi_index.BsiIndex(KaitaiStream(BytesIO(data)))
    index._read()
    assert index._io.pos() == len(data), "bytes left over after the BSI"
    values: list[int | None] = [None] * index.num_rows
    for part, sign in ((index.positive if index.has_positive else None, 1),
                       (index.negative if index.has_negative else None, -1)):
        if part is None:
            continue
        assert part.min_value == 0, "every writer stores min 0 (the collector starts at 0)"
        assert part.num_slices == part.max_value.bit_length()
        ebm = bitmap_of(data, part, "ebm")
        assert ebm, "a part is written only when it has rows"
        slices = [bitmap_of(data, part, "slices", i) for i in range(part.num_slices)]
        for row in ebm:
            assert values[row] is None, "a row in both parts"
            value = sum(1 << i for i, s in enumerate(slices) if row in s)
            assert value <= part.max_value
            values[row] = sign * value
        stored = [abs(values[r]) for r in ebm]
        assert max(stored) == part.max_value
    return values


def bitmap_of(data: bytes, obj, name: str, i: int | None = None) -> BitMap:
    """A self-delimiting roaring field: its bytes are sliced by its debug span."""
    debug = obj._debug[name]
    if i is not None:
        debug = debug["arr"][i]
    return check_roaring(data[debug["start"]:debug["end"]])


def test_bsi_spec_examples():
    data = (h("01 00000006 01 01 0000000000000000 0000000000000005") + roaring(0, 3, 4)
            + h("00000003") + roaring(0) + roaring(4) + roaring(0)
            + h("01 01 0000000000000000 0000000000000003") + roaring(1, 5)
            + h("00000002") + roaring(1, 5) + roaring(1))
    assert decode_bsi(data) == [5, -3, None, 0, 2, -1]
    assert decode_bsi(h("01 00000000 00 00")) == []


@needs_fixtures
def test_bsi_rust_java():
    data = fixture("paimon-rust/bsi/java_int.bin")
    assert decode_bsi(data) == [None, -5, -2, 0, 3, 8, None]
    index = bsi_index.BsiIndex(KaitaiStream(BytesIO(data)))
    index._read()
    assert (index.positive.max_value, index.positive.num_slices) == (8, 4)
    assert (index.negative.max_value, index.negative.num_slices) == (5, 3)


@needs_fixtures
@pytest.mark.parametrize("stem,expected", [
    ("int_mix", [1, 2, None, -2, -2, -1, None, 2, 0, 5, None]),
    ("int_positive_only", [0, 1, None, 3, 4, 5, 6, 0, None]),
    ("int_negative_only", [None, -1, None, -3, -4, -5, -6, -1, None]),
    ("null_1_null_2_minus1", [None, 1, None, 2, -1]),
    ("timestamp9", [1745542802000123, 1745542902000123, 1745542602000123, -1744877, -1764877,
                    None, 1745542802000123, -1724877]),
])
def test_bsi_cpp_vectors(stem, expected):
    assert decode_bsi(fixture(f"paimon-cpp/bsi/{stem}.bin")) == expected


@needs_fixtures
def test_bsi_in_container():
    blobs = container_blobs(sidecar("append_with_bsi"))
    assert decode_bsi(blobs["f1", "bsi"]) == [100, 200, 300, 50, 500, 100, None, 20]
    assert decode_bsi(blobs["f2", "bsi"]) == [-2, -3, 1, 1, -1, 2, -2, None]
    assert decode_bsi(blobs["f4", "bsi"]) == [1745542802000123, 1745542902000123, 1745542602000123,
                                             -1744877, -1764877, None, 1745542802000123, -1724877]


# ---------------------------------------------------------------------------------------------
# range-bitmap


def parse_range_bitmap(kind, data: bytes):
    index = range_bitmap.RangeBitmap(kind, KaitaiStream(BytesIO(data)))
    index._read()
    return index


def decode_range_bitmap(kind, data: bytes):
    """Parse every chunk and slice; check every byte is accounted for; return (keys by code,
    each row's key or None, parsed index)."""
    index = parse_range_bitmap(kind, data)
    header = index.header
    assert index.ofs_dictionary == 4 + index.len_header
    assert index.is_variable_length == (kind == KK.string)

    # Dictionary: 17-byte header, offsets, chunk headers back to back, key blobs back to back.
    dictionary = index.dictionary
    assert dictionary._io.size() == header.len_dictionary, "read as a substream of its length"
    assert dictionary.ofs_chunk_headers == 17 + 4 * dictionary.num_chunks     # within it
    keys = []
    ofs_chunk = ofs_keys = 0
    for chunk in dictionary.chunks:
        assert chunk.ofs_chunk == ofs_chunk, "chunk headers are back to back"
        chunk_header = chunk.header
        assert chunk_header._io.is_eof(), "the chunk header fills its slice"
        ofs_chunk += chunk.len_header
        assert chunk_header.code == len(keys), "codes are consecutive across chunks"
        assert chunk_header.ofs_keys == ofs_keys, "key blobs are back to back"
        blob = chunk.keys
        assert blob._io.is_eof(), "the keys fill the chunk's key blob"
        ofs_keys += chunk_header.len_key_blob
        chunk_keys = [key_value(chunk_header.first_key)] + [key_value(k) for k in blob.keys]
        if index.is_variable_length:
            assert len(blob.ofs_keys) == chunk_header.num_keys
            key_spans = blob._debug["keys"]["arr"]
            base = blob._debug["keys"]["start"]
            assert list(blob.ofs_keys) == [s["start"] - base for s in key_spans]
        keys.extend(chunk_keys)
    assert ofs_chunk == dictionary.len_chunks
    assert ofs_keys == dictionary.len_key_region
    assert len(keys) == header.num_keys
    assert keys == sorted(keys, key=sort_key(kind)) and len(set(keys)) == len(keys)
    if keys:
        assert key_value(header.min_key) == keys[0] and key_value(header.max_key) == keys[-1]

    # BSI: header, then the ebm and the slices back to back up to the end of the blob.
    bsi = index.bsi
    n = header.num_keys
    assert bsi.header.num_slices == (64 if n == 0 else max((n - 1).bit_length(), 1))
    assert bsi.ofs_ebm == index.ofs_bsi + 4 + bsi.len_header
    ebm = check_roaring(bsi.ebm)
    ofs = 0
    slices = []
    for piece in bsi.header.slices:
        assert piece.ofs_bitmap == ofs, "slices are back to back after the ebm"
        ofs += piece.len_bitmap
        slices.append(check_roaring(piece.bitmap))
    assert bsi.ofs_slices + ofs == len(data), "bytes left over after the last slice"

    rows = []
    for row in range(header.num_rows):
        if row not in ebm:
            assert not any(row in s for s in slices)
            rows.append(None)
            continue
        code = sum(1 << i for i, s in enumerate(slices) if row in s)
        rows.append(keys[code])
    return keys, rows, index


def test_range_bitmap_spec_example():
    """formats/range_bitmap.ksy's example: INT values [10, 30, null, 20, 10, 40]."""
    data = h(
        """
        00000015 01 00000006 00000004 0000000a 00000028 0000003a
        0000000d 01 00000001 00000004 00000019
        00000000
        01 0000000a 00000000 00000000 00000003 0000000c 00000004
        00000014 0000001e 00000028
        0000001a 01 02 0000001a 00000010 00000000 00000014 00000014 00000014
        """
    ) + roaring(0, 1, 3, 4, 5) + roaring(3, 5) + roaring(1, 5)
    keys, rows, index = decode_range_bitmap(KK.int32, data)
    assert keys == [10, 20, 30, 40]
    assert rows == [10, 30, None, 20, 10, 40]
    assert index.dictionary.chunks[0].header.len_fixed_key == 4


def test_range_bitmap_spec_all_null_quirk():
    """With no keys Java writes 64 empty slices, 1080 bytes in all."""
    empty = roaring()
    data = (h("0000000d 01 00000003 00000000 00000011")
            + h("0000000d 01 00000000 00000000 00000000")
            + h("0000020a 01 40 00000008 00000200")
            + b"".join(struct.pack(">ii", 8 * i, 8) for i in range(64))
            + empty + empty * 64)
    assert len(data) == 1080
    keys, rows, index = decode_range_bitmap(KK.int32, data)
    assert keys == [] and rows == [None, None, None]
    assert not hasattr(index.header, "min_key") and not hasattr(index.header, "max_key")


def test_range_bitmap_rejects_four_byte_slice_count():
    """The docs' 4-byte slice count does not parse: the count is ONE byte (Appendix C.1)."""
    data = bytearray(h(
        """
        00000015 01 00000006 00000004 0000000a 00000028 0000003a
        0000000d 01 00000001 00000004 00000019
        00000000
        01 0000000a 00000000 00000000 00000003 0000000c 00000004
        00000014 0000001e 00000028
        0000001d 01 00000002 0000001a 00000010 00000000 00000014 00000014 00000014
        """
    ))
    with pytest.raises(kaitaistruct.ValidationFailedError):
        parse_range_bitmap(KK.int32, bytes(data)).bsi


@needs_fixtures
def test_range_bitmap_rust_int():
    data = fixture("paimon-rust/range-bitmap/java_int_v1.bin")
    assert len(data) == 210
    assert fixture("paimon-cpp/file_index/rangebitmap/rangebitmap.index") == data
    keys, rows, index = decode_range_bitmap(KK.int32, data)
    assert rows == [1, 3, 5, 7, 9, None, None, 10]
    assert (index.header.num_rows, index.header.num_keys) == (8, 6)
    assert (index.dictionary.num_chunks, index.bsi.header.num_slices) == (1, 3)


@needs_fixtures
def test_range_bitmap_rust_string():
    keys, rows, index = decode_range_bitmap(KK.string, fixture("paimon-rust/range-bitmap/java_string_v1.bin"))
    assert rows == ["aa", "b", "你好", None, "ccc"]
    assert keys == ["aa", "b", "ccc", "你好"]
    assert (index.dictionary.num_chunks, index.bsi.header.num_slices) == (1, 2)


@needs_fixtures
def test_range_bitmap_rust_float():
    keys, rows, index = decode_range_bitmap(KK.float32, fixture("paimon-rust/range-bitmap/java_float_v1.bin"))
    assert keys == [f32(-0.0), f32(0.0), f32(1.5), F32_NAN]
    assert rows == [f32(-0.0), f32(0.0), f32(1.5), F32_NAN, None]


RANGE_TABLE_COLUMNS = {
    "f0": (KK.int32, [17, 3, 5, 7, 9, None, None, 10]),
    "f1": (KK.int64, [100, 200, 300, 400, 500, None, None, 600]),
    "f2": (KK.float32, [f32(v) if v is not None else None
                        for v in (1.1, 2.2, 3.3, 4.4, 5.5, None, None, 6.6)]),
    "f3": (KK.float64, [f64(v) if v is not None else None
                        for v in (11.11, 22.22, 33.33, 44.44, 55.55, None, None, 66.66)]),
    "f4": (KK.int32, [19739, 19725, 19727, 19729, 19731, None, None, 19732]),
}


@needs_fixtures
@pytest.mark.parametrize("table,num_chunks", [("append_with_rangebitmap", 1),
                                              ("append_with_rangebitmap_multi_chunk", 2)])
def test_range_bitmap_in_containers(table, num_chunks):
    blobs = container_blobs(sidecar(table))
    for column, (kind, expected) in RANGE_TABLE_COLUMNS.items():
        _, rows, index = decode_range_bitmap(kind, blobs[column, "range-bitmap"])
        assert rows == expected
        assert index.dictionary.num_chunks == num_chunks
        assert index.bsi.header.num_slices == 3


@needs_fixtures
def test_range_bitmap_lookup_is_lazy():
    """A lookup reads the header, one chunk and the slices it needs, nothing else."""
    blobs = container_blobs(sidecar("append_with_rangebitmap_multi_chunk"))
    index = parse_range_bitmap(KK.int64, blobs["f1", "range-bitmap"])
    assert not hasattr(index, "_m_dictionary") and not hasattr(index, "_m_bsi")
    chunks = index.dictionary.chunks
    last = chunks[-1]
    assert key_value(last.header.first_key) <= 600
    assert 600 in [key_value(k) for k in last.keys.keys]
    assert [hasattr(c, "_m_header") for c in chunks] == [False] * (len(chunks) - 1) + [True]
    bsi = index.bsi
    # slice 2 holds codes 4 and 5 (0b100, 0b101): 500 in row 4 and 600 in row 7
    assert BitMap.deserialize(bsi.header.slices[2].bitmap) == BitMap([4, 7])
    assert [hasattr(s, "_m_bitmap") for s in bsi.header.slices] == [False, False, True]
