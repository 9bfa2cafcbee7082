"""Bloom-filter reader: Java-written fixtures, the spec's examples rebuilt bit by bit, random
member sets (never a false negative), Java's header quirks, and located errors."""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from typing import Any
from pathlib import Path

import numpy as np
import pytest
from fixture_catalog import CONTAINERS
from hypothesis import given
from hypothesis import strategies as st

import paimon_schema as ps
from paimon_schema.layouts.bloom_filter import BloomFilterIndexReader
from paimon_schema.layouts.bloom_filter.hashing import bloom_positions, wang64, xxh64
from paimon_schema.layouts.registry import open_index
from paimon_schema.values.results import REMAIN, SKIP
from strategies import values_for

LN2 = math.log(2)
INTEGER_TYPES = ["TINYINT", "SMALLINT", "INT", "BIGINT", "DATE"]


# ---------------------------------------------------------------------------------------------
# A test-side writer, straight from spec sections 5.1 (sizing), 5.3 (hashing) and 5.4 (bits)


def sizing(items: int, fpp: float) -> tuple[int, int]:
    """(numBits, k) as `BloomFilter64` sizes them, in Java double arithmetic."""
    nb = int(-items * math.log(fpp) / (LN2 * LN2))
    num_bits = nb + (8 - nb % 8)
    # items = 0: round(inf) is Long.MAX_VALUE, which the (int) cast turns into -1.
    k = 1 if items == 0 else max(1, math.floor(num_bits / items * LN2 + 0.5))
    return num_bits, k


def java_hash(data_type: str, value: object) -> int:
    """`FastHash`, computed from the Java definitions rather than the library's mapping."""
    if data_type == "FLOAT":
        bits = 0x7FC00000 if math.isnan(value) else struct.unpack(">I", struct.pack(">f", value))[0]
        return wang64(struct.unpack(">i", bits.to_bytes(4, "big"))[0])
    if data_type == "DOUBLE":
        value = math.nan if math.isnan(value) else value
        return wang64(struct.unpack(">q", struct.pack(">d", value))[0])
    if data_type == "STRING":
        return xxh64(value.encode("utf-8"))
    if data_type == "BYTES":
        return xxh64(value)
    return wang64(value)


def encode(k: int, num_bits: int, hashes: Iterable[int]) -> bytes:
    bits = bytearray(num_bits // 8)
    for h in hashes:
        for p in bloom_positions(h, k, num_bits):
            bits[p >> 3] |= 1 << (p & 7)
    return k.to_bytes(4, "big") + bytes(bits)


def build(data_type: str, values: Iterable[object], items: int = 10, fpp: float = 0.1) -> bytes:
    num_bits, k = sizing(items, fpp)
    return encode(k, num_bits, [java_hash(data_type, v) for v in values if v is not None])


# ---------------------------------------------------------------------------------------------
# The spec's own numbers


@pytest.mark.parametrize("items, fpp, num_bits, k", [
    (1_000_000, 0.1, 4_792_536, 3), (10, 0.1, 48, 3), (0, 0.1, 8, 1), (10, 0.02, 88, 6)])
def test_sizing_matches_the_spec(items: int, fpp: float, num_bits: int, k: int) -> None:
    assert sizing(items, fpp) == (num_bits, k)


@pytest.mark.parametrize("data_type, values, blob", [
    ("INT", [1, 2, None, 3], "00000003 892001504000"),
    ("STRING", ["a", "hello"], "00000003 008024700000"),
])
def test_spec_examples(data_type: str, values: list, blob: str) -> None:
    data = bytes.fromhex(blob.replace(" ", ""))
    assert build(data_type, values) == data
    reader = BloomFilterIndexReader.open(data, data_type)
    assert (reader.num_hash_functions, reader.num_bits) == (3, 48)
    assert all(reader.equal(v) == REMAIN for v in values)


# ---------------------------------------------------------------------------------------------
# Java-written fixtures


def _read(shared_fixtures: Path, relpath: str, data_type: str) -> BloomFilterIndexReader:
    return BloomFilterIndexReader.open((shared_fixtures / relpath).read_bytes(), data_type)


def test_rust_java_golden(shared_fixtures: Path) -> None:
    reader = _read(shared_fixtures, "paimon-rust/bloom-filter/java_bigint_items10_fpp0.1.bin", "BIGINT")
    assert (reader.num_hash_functions, reader.num_bits) == (3, 48)
    assert [reader.equal(v) for v in (-1, 0, 1, 42, None, 43, 44)] == [REMAIN] * 5 + [SKIP] * 2
    assert reader.in_([43, 44]) == SKIP and reader.in_([44, 42]) == REMAIN
    assert build("BIGINT", [-1, 0, 1, 42, None]) == (
        shared_fixtures / "paimon-rust/bloom-filter/java_bigint_items10_fpp0.1.bin").read_bytes()


TIMESTAMP9_MICROS = [1745542802000123, 1745542902000123, 1745542602000123, -1744877, -1764877,
                     1745542802000123, -1724877]     # fixtures README 2b, rows 0-7 without the null
CPP_VECTORS = [(stem, t, members) for stem, types, members in [
    ("string", ["STRING", "CHAR(3)", "VARCHAR(10)"], ["a", "b", ""]),
    ("integer", INTEGER_TYPES, [1, 2, -1, 123]),
    ("float", ["FLOAT"], [-0.3, -5.2, 0.0, 0.1, 123.12]),     # rounded to float32 by the reader
    ("double", ["DOUBLE"], [-0.3, -5.2, 0.0, 0.1, 123.12]),
    ("timestamp9", ["TIMESTAMP(9)"], TIMESTAMP9_MICROS),
] for t in types]


@pytest.mark.parametrize("stem, data_type, members", CPP_VECTORS)
def test_cpp_vectors(shared_fixtures: Path, stem: str, data_type: str, members: list) -> None:
    reader = _read(shared_fixtures, f"paimon-cpp/bloom-filter/{stem}.bin", data_type)
    assert (reader.num_hash_functions, reader.num_bits) == (6, 88)
    assert all(reader.equal(v) == REMAIN for v in members)
    assert reader.in_(members) == REMAIN


def test_cpp_vectors_prove_absence(shared_fixtures: Path) -> None:
    """88 bits with 4 members: most other values must be skipped, or the reader is blind."""
    reader = _read(shared_fixtures, "paimon-cpp/bloom-filter/integer.bin", "INT")
    assert sum(reader.equal(v) == SKIP for v in range(1000, 1100)) > 50


#: Columns of the two bloom tables (their READMEs): f4 is TIMESTAMP(9), given in nanoseconds.
TABLE_COLUMNS = {
    "f0": ("STRING", ["Alice", "Bob", "Emily", "Tony", "Lucy", "Bob", "Tony", "Alice"]),
    "f1": ("INT", [100, 200, 300, 50, 500, 100, None, 20]),
    "f2": ("INT", [-2, -3, 1, 1, -1, 2, -2, None]),
    "f3": ("DOUBLE", [11.1, 12.1, 13.1, 14.1, 15.1, 16.1, 17.1, 18.1]),
    "f4": ("TIMESTAMP(9)", [n // 1000 for n in (1745542802000123000, 1745542902000123000,
                                                1745542602000123000, -1744877000, -1764877000,
                                                1745542802000123001, -1724877000)] + [None]),
}
ABSENT = {"f0": "Zoe", "f1": 7, "f2": 99, "f3": 11.2, "f4": 1745542802000124}
BLOOM_TABLES = ["append_with_bloomfilter", "append_with_bsi_bitmap_bloomfilter"]


@pytest.mark.parametrize("table", BLOOM_TABLES)
@pytest.mark.parametrize("column", sorted(TABLE_COLUMNS))
def test_table_sidecars(shared_fixtures: Path, table: str, column: str) -> None:
    (relpath,) = [p for p in CONTAINERS if f"/{table}.db/" in p]
    blob = ps.FileIndexFile.parse((shared_fixtures / relpath).read_bytes()).columns[column]["bloom-filter"]
    data_type, values = TABLE_COLUMNS[column]
    reader = open_index("bloom-filter", blob, data_type)
    assert (reader.num_hash_functions, reader.num_bits) == (3, 4_792_536)
    assert all(reader.equal(v) == REMAIN for v in values)
    assert reader.equal(ABSENT[column]) == SKIP


# ---------------------------------------------------------------------------------------------
# Random member sets

TYPED_VALUES = {t: values_for(t) for t in ("TINYINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING", "BYTES")}


@st.composite
def filters(draw: st.DrawFn) -> tuple[str, list, int, float]:
    data_type = draw(st.sampled_from(sorted(TYPED_VALUES)))
    values = draw(st.lists(st.none() | TYPED_VALUES[data_type], max_size=60))
    return data_type, values, draw(st.integers(0, 3000)), draw(st.floats(0.0005, 0.9))


@given(filters(), st.data())
def test_no_false_negatives(case: tuple[str, list, int, float], data: st.DataObject) -> None:
    data_type, values, items, fpp = case
    blob = build(data_type, values, items, fpp)
    reader = BloomFilterIndexReader.open(blob, data_type)
    num_bits, k = sizing(items, fpp)
    assert (reader.num_bits, reader.num_hash_functions) == (num_bits, k)
    assert all(reader.might_contain(v) for v in values)
    if values:
        assert reader.in_(values) == REMAIN
    # Any probe agrees with BloomFilter64.testHash over the test-side hash.
    probe = data.draw(TYPED_VALUES[data_type])
    expected = all(blob[4 + (p >> 3)] >> (p & 7) & 1
                   for p in bloom_positions(java_hash(data_type, probe), k, num_bits))
    assert reader.equal(probe) == (REMAIN if expected else SKIP)


@pytest.mark.parametrize("data_type, make", [
    ("BIGINT", lambda rng: rng.integers(-2**63, 2**63 - 1, 5_001, dtype=np.int64)),
    ("DOUBLE", lambda rng: rng.standard_normal(4_097)),
    ("STRING", lambda rng: [f"s{v}" for v in rng.integers(0, 3_000, 6_143).tolist()])])
def test_compiled_blocks_equal_the_spec_writer(data_type: str, make: Any) -> None:
    """The compiled loop hashes 2048 values per block: columns of several blocks and a partial
    last one set exactly the test-side writer's bits."""
    values = make(np.random.default_rng(11))
    expected = build(data_type, values.tolist() if isinstance(values, np.ndarray) else values, items=4_000, fpp=0.02)
    assert ps.build_index("bloom-filter", data_type, values, items=4_000, fpp=0.02) == expected


INTEGER_DTYPES = {"TINYINT": ["int8", "int16", "int64", "uint8"], "INT": ["int32", "int64", "uint16"],
                  "BIGINT": ["int64", "int32", "uint32", "uint64"]}


@given(filters(), st.data())
def test_writer_equals_the_spec_writer(case: tuple[str, list, int, float], data: st.DataObject) -> None:
    """The library's writer (compiled loop over integer arrays, hashes of other values) sets
    exactly the bits of the test-side writer, whatever container the column comes in."""
    data_type, values, items, fpp = case
    expected = build(data_type, values, items, fpp)
    assert ps.build_index("bloom-filter", data_type, values, items=items, fpp=fpp) == expected
    if data_type in INTEGER_DTYPES:
        dtype = np.dtype(data.draw(st.sampled_from(INTEGER_DTYPES[data_type])))
        present = [v for v in values if v is not None]
        info = np.iinfo(dtype)
        if all(info.min <= v <= info.max for v in present):
            array = np.array(present, dtype=dtype)
            assert ps.build_index("bloom-filter", data_type, array, items=items, fpp=fpp) == expected


@pytest.mark.parametrize("data_type, array", [
    ("BIGINT", np.array([2**63], dtype=np.uint64)), ("INT", np.array([2**31], dtype=np.int64)),
    ("TINYINT", np.array([-129], dtype=np.int16)), ("TIME", np.array([-1], dtype=np.int32)),
    ("TIME", np.array([86_400_000], dtype=np.int64))])
def test_integer_arrays_out_of_range(data_type: str, array: np.ndarray) -> None:
    """Refused with the per-value message, which names the value."""
    with pytest.raises(ps.SchemaError, match=f"(out of range|not a millisecond).*{array[0]}"):
        ps.build_index("bloom-filter", data_type, array, items=10)


def test_float_hashes_java_bits() -> None:
    """NaN payloads hash as Java's one NaN; +0.0 and -0.0 are different values."""
    for data_type in ("FLOAT", "DOUBLE"):
        reader = BloomFilterIndexReader.open(build(data_type, [math.nan, 0.0], 1000, 0.001), data_type)
        payload = struct.unpack(">d", bytes.fromhex("7ff0000000000123"))[0]
        assert reader.equal(payload) == REMAIN
        assert reader.equal(-0.0) == SKIP


# ---------------------------------------------------------------------------------------------
# Everything a bloom filter cannot answer, and Java's header quirk


def test_other_predicates_remain() -> None:
    reader = BloomFilterIndexReader.open(build("INT", [1]), "INT")
    assert reader.equal(None) == REMAIN and reader.in_([None]) == REMAIN
    assert [reader.not_equal(1), reader.not_in([1, 2]), reader.is_null(), reader.is_not_null(),
            reader.less_than(0), reader.less_or_equal(0), reader.greater_than(5),
            reader.greater_or_equal(5), reader.between(7, 9), reader.top_n(3)] == [REMAIN] * 10


@pytest.mark.parametrize("k", [128, 200, 255])
def test_java_reads_large_k_as_negative(k: int) -> None:
    """Java rebuilds k over signed bytes: 128..255 becomes negative, so nothing is skipped."""
    reader = BloomFilterIndexReader.open(k.to_bytes(4, "big") + bytes(8), "INT")
    assert reader.num_hash_functions == k and reader.probes == 0
    assert all(reader.equal(v) == REMAIN for v in range(100))


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("hex_blob, offset, path", [
    ("", 0, "num_hash_functions"),
    ("000000", 0, "num_hash_functions"),
    ("00000003", 4, "bitset"),                 # no bit at all: Java divides by zero
    ("00000000 ff", 0, "num_hash_functions"),  # k = 0
    ("00000100 ff", 0, "num_hash_functions"),  # k = 256
    ("ffffffff ff", 0, "num_hash_functions"),  # k = -1
])
def test_malformed_blobs(hex_blob: str, offset: int, path: str) -> None:
    with pytest.raises(ps.FormatError) as info:
        BloomFilterIndexReader.open(bytes.fromhex(hex_blob.replace(" ", "")), "INT")
    assert (info.value.offset, info.value.path) == (offset, path)


@pytest.mark.parametrize("data_type", ["BOOLEAN", "DECIMAL(10, 2)", "ARRAY<INT>"])
def test_unsupported_types(data_type: str) -> None:
    with pytest.raises(ps.SchemaError):
        BloomFilterIndexReader.open(build("INT", [1]), data_type)


def test_value_of_the_wrong_type() -> None:
    reader = BloomFilterIndexReader.open(build("INT", [1]), "INT")
    for value in ("1", 2**31, True, 1.0):
        with pytest.raises(ps.SchemaError):
            reader.equal(value)
