"""Deletion-vector files: Java-written fixtures, the spec's examples, and located errors."""

from __future__ import annotations

import zlib
from pathlib import Path

import fastavro
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from fixture_catalog import DELETION_VECTORS, TABLES
from paimon_schema.layouts.deletion_vectors import deletion_vector_cardinality

# Spec section 6.5, positions {1, 2, 3, 100} and friends (the `01` version byte added).
SPEC_32 = bytes.fromhex("01 0000001c 5e43f2d0 3a300000 01000000 0000 0300 10000000"
                        " 0100 0200 0300 6400 09f2ab34".replace(" ", ""))
SPEC_64 = bytes.fromhex("01 00000028 d1d33964 0100000000000000 00000000 3a300000 01000000"
                        " 0000 0300 10000000 0100 0200 0300 6400 282e2b3e".replace(" ", ""))
SPEC_64_GAPS = bytes.fromhex(
    "01 0000003a d1d33964 0300000000000000 00000000 3a30000000000000 01000000 3a30000000000000"
    " 02000000 3a300000 01000000 0000 0000 10000000 0500 87c92e0b".replace(" ", ""))
SPEC_EMPTY_32 = bytes.fromhex("01 0000000c 5e43f2d0 3a30000000000000 5de5c7e9".replace(" ", ""))
SPEC_EMPTY_64 = bytes.fromhex("01 0000000c d1d33964 0000000000000000 bf18480c".replace(" ", ""))


@pytest.mark.parametrize("relpath", sorted(DELETION_VECTORS))
def test_fixture_decodes_to_documented_content(shared_fixtures: Path, relpath: str) -> None:
    data = (shared_fixtures / relpath).read_bytes()
    parsed = ps.DeletionVectorFile.parse(data)
    assert parsed.version == 1
    got = [(b.offset, b.length, b.bitmap64, set(b.bitmap)) for b in parsed.bins]
    assert got == DELETION_VECTORS[relpath]
    assert parsed.warnings == []
    for b in parsed.bins:
        assert ps.read_deletion_vector(data, b.offset, b.length) == b.bitmap


def _index_manifest_entries(table: Path) -> dict[str, dict]:
    entries = {}
    for manifest in sorted((table / "manifest").glob("index-manifest-*")):
        with manifest.open("rb") as f:
            for record in fastavro.reader(f):
                if record["_INDEX_TYPE"] == "DELETION_VECTORS":
                    entries[record["_FILE_NAME"]] = record
    return entries


@pytest.mark.parametrize("relpath", sorted(p for p in DELETION_VECTORS if p.startswith(TABLES)))
def test_table_dv_matches_java_index_manifest(shared_fixtures: Path, relpath: str) -> None:
    """Our bins are exactly the ranges Java recorded in the table's index manifest."""
    path = shared_fixtures / relpath
    table = shared_fixtures / Path(*Path(relpath).parts[:5])
    meta = _index_manifest_entries(table)[path.name]
    data = path.read_bytes()
    parsed = ps.DeletionVectorFile.parse(data)
    assert meta["_FILE_SIZE"] == len(data)
    assert meta["_ROW_COUNT"] == len(parsed.bins)
    ranges = [(r["f1"], r["f2"], r.get("_CARDINALITY")) for r in meta["_DELETIONS_VECTORS_RANGES"]]
    ours = [(b.offset, b.length, b.cardinality) for b in parsed.bins]
    # Ranges written before Paimon 1.0 have no cardinality.
    assert [(o, n, c if c is not None else card) for (o, n, c), (_, _, card)
            in zip(ranges, ours)] == ours
    for record in meta["_DELETIONS_VECTORS_RANGES"]:
        bitmap = ps.read_deletion_vector(data, record["f1"], record["f2"])
        assert record.get("_CARDINALITY") in (None, len(bitmap))


def test_cpp_payload_fixture_is_magic_and_roaring(shared_fixtures: Path) -> None:
    """paimon-cpp keeps only the magic and bitmap of a Java bin: frame it and read it."""
    payload = (shared_fixtures / "paimon-cpp/dv/java_bitmap_dv_payload_1_2_4.bin").read_bytes()
    framed = (b"\x01" + len(payload).to_bytes(4, "big") + payload
              + zlib.crc32(payload).to_bytes(4, "big"))
    assert ps.read_deletion_vector(framed, 1, len(payload)) == BitMap([1, 2, 4])


@pytest.mark.parametrize("data, bins", [
    (SPEC_32, [(1, 28, False, BitMap([1, 2, 3, 100]))]),
    (SPEC_64, [(1, 48, True, BitMap64([1, 2, 3, 100]))]),
    (SPEC_64_GAPS, [(1, 66, True, BitMap64([2**33 + 5]))]),
    (SPEC_EMPTY_32, [(1, 12, False, BitMap())]),
    (SPEC_EMPTY_64, [(1, 20, True, BitMap64())]),
    (b"\x01", []),
])
def test_spec_examples(data: bytes, bins: list) -> None:
    parsed = ps.DeletionVectorFile.parse(data)
    assert [(b.offset, b.length, b.bitmap64, b.bitmap) for b in parsed.bins] == bins
    for offset, length, _, bitmap in bins:
        assert ps.read_deletion_vector(data, offset, length) == bitmap


def test_mixed_32_and_64_bit_bins_in_one_file() -> None:
    data = SPEC_32 + SPEC_64[1:]
    parsed = ps.DeletionVectorFile.parse(data)
    assert [b.bitmap64 for b in parsed.bins] == [False, True]
    assert parsed.bins[1].offset == len(SPEC_32)


def _error(call, *args, **kwargs) -> ps.FormatError:
    with pytest.raises(ps.FormatError) as info:
        call(*args, **kwargs)
    return info.value


def test_checksum_mismatch_is_located_and_can_be_skipped() -> None:
    bad = bytearray(SPEC_32)
    bad[-1] ^= 0xFF
    err = _error(ps.DeletionVectorFile.parse, bytes(bad))
    assert (err.path, err.offset) == ("bins[0].checksum", len(SPEC_32) - 4)
    assert ps.DeletionVectorFile.parse(bytes(bad), verify_checksum=False).bins[0].bitmap == BitMap([1, 2, 3, 100])
    err = _error(ps.read_deletion_vector, bytes(bad), 1, 28)
    assert err.path == "bin.checksum"
    assert ps.read_deletion_vector(bytes(bad), 1, 28, verify_checksum=False) == BitMap([1, 2, 3, 100])


@pytest.mark.parametrize("mutate, path, offset", [
    (lambda d: b"\x02" + d[1:], "version", 0),
    (lambda d: d[:5] + b"\x12\x34\x56\x78" + d[9:], "bins[0].magic", 5),
    (lambda d: d[:1] + b"\x00\x00\x00\x02" + d[5:], "bins[0].len_payload", 1),
    (lambda d: d[:1] + b"\x7f\xff\xff\xff" + d[5:], "bins[0].bitmap", 9),
    (lambda d: d[:20], "bins[0].bitmap", 9),
    (lambda d: d[:-2], "bins[0].checksum", len(SPEC_32) - 4),
])
def test_malformed_files_are_located(mutate, path: str, offset: int) -> None:
    err = _error(ps.DeletionVectorFile.parse, mutate(SPEC_32))
    assert (err.path, err.offset) == (path, offset)


def test_corrupt_roaring_inside_a_valid_crc_is_located() -> None:
    payload = bytes.fromhex("5e43f2d0") + b"\x3a\x30\x00\x00\x05\x00\x00\x00"
    data = b"\x01" + len(payload).to_bytes(4, "big") + payload + zlib.crc32(payload).to_bytes(4, "big")
    err = _error(ps.DeletionVectorFile.parse, data)
    assert err.path.startswith("bins[0].bitmap") and err.offset is not None and err.offset >= 9


def test_64_bit_keys_must_ascend() -> None:
    body = (bytes.fromhex("0200000000000000") + bytes.fromhex("01000000 3a30000000000000".replace(" ", ""))
            + bytes.fromhex("01000000 3a30000000000000".replace(" ", "")))
    payload = bytes.fromhex("d1d33964") + body
    data = b"\x01" + len(payload).to_bytes(4, "big") + payload + zlib.crc32(payload).to_bytes(4, "big")
    err = _error(ps.DeletionVectorFile.parse, data)
    assert (err.path, err.offset) == ("bins[0].bitmap.buckets[1].key", 9 + 8 + 12)


def test_read_deletion_vector_checks_length_per_kind() -> None:
    assert ps.read_deletion_vector(SPEC_64, 1, 48) == BitMap64([1, 2, 3, 100])
    err = _error(ps.read_deletion_vector, SPEC_64, 1, 40)   # a 32-bit length for a 64-bit bin
    assert (err.path, err.offset) == ("bin.len_payload", 1)
    err = _error(ps.read_deletion_vector, SPEC_32, 99, 28)
    assert err.path == "bin"
    err = _error(ps.read_deletion_vector, SPEC_32, 2, 28)
    assert err.path == "bin.magic"


@pytest.mark.parametrize("bitmap64", [False, True])
@given(st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 9000)), max_size=6))
@settings(max_examples=60, deadline=None)
def test_the_header_count_is_the_decoded_count(bitmap64: bool, runs: list) -> None:
    """Array, bitset and run containers (pyroaring's `run_optimize` picks runs for long
    ranges), 32- and 64-bit bins: the count from the headers is the decoded vector's."""
    positions = np.unique(np.concatenate([np.arange(lo, lo + n) for lo, n in runs] or [[]])
                          .astype(np.uint64))
    data, ranges = ps.write_deletion_vectors({"f": positions, "g": positions[::3]},
                                             bitmap64=bitmap64)
    for offset, length in ranges.values():
        assert deletion_vector_cardinality(data, offset, length) \
            == len(ps.read_deletion_vector(data, offset, length))


def test_the_header_count_of_the_spec_examples_and_its_errors() -> None:
    assert deletion_vector_cardinality(SPEC_32, 1, 28) == 4
    assert deletion_vector_cardinality(SPEC_64, 1, 48) == 4
    assert deletion_vector_cardinality(SPEC_64_GAPS, 1, len(SPEC_64_GAPS) - 1) == 1
    assert deletion_vector_cardinality(SPEC_EMPTY_32, 1, 12) == 0
    assert deletion_vector_cardinality(SPEC_EMPTY_64, 1, 20) == 0
    err = _error(deletion_vector_cardinality, SPEC_64, 1, 40)   # a 32-bit length, 64-bit bin
    assert (err.path, err.offset) == ("bin.len_payload", 1)
    payload = bytes.fromhex("5e43f2d0") + b"\x3a\x30\x00\x00\x05\x00\x00\x00"
    bad = b"\x01" + len(payload).to_bytes(4, "big") + payload + zlib.crc32(payload).to_bytes(4, "big")
    err = _error(deletion_vector_cardinality, bad, 1, len(payload))
    assert err.path.startswith("bin.bitmap") and err.offset is not None and err.offset >= 9


def _dv64_file(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    highs = rng.integers(0, 3, 400).astype(np.uint64) << np.uint64(32)
    positions = np.unique(highs | rng.integers(0, 1 << 20, 400).astype(np.uint64))
    return ps.write_deletion_vectors({"f": positions, "g": positions[:7]}, bitmap64=True)[0]


def test_a_64_bit_bin_is_decoded_once_without_the_generated_parser(monkeypatch) -> None:
    """The struct framing and the bucket-header walk accept a well-formed file, so only
    pyroaring decodes its bitmaps; the generated parser is not run."""
    from paimon_schema.layouts import deletion_vectors as dv

    data = _dv64_file(1)
    expected = ps.DeletionVectorFile.parse(data)
    monkeypatch.setattr(dv.parsing, "parse", lambda *a, **k: pytest.fail("generated parser ran"))
    assert ps.DeletionVectorFile.parse(data) == expected
    assert ps.read_deletion_vector(data, expected.bins[0].offset, expected.bins[0].length) \
        == expected.bins[0].bitmap


@given(st.integers(0, 3), st.data())
@settings(max_examples=200, deadline=None)
def test_the_struct_walk_accepts_only_what_the_generated_parser_accepts(seed: int, data) -> None:
    """Mutated 64-bit files: where `_scan_file` frames a file, the generated parser reads it
    too, with the same bins; elsewhere the generated parser's located error is what callers see."""
    from paimon_schema.layouts import deletion_vectors as dv
    from paimon_schema.runtime import kaitai

    blob = bytearray(_dv64_file(seed))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(blob) - 1))
        blob[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    view = memoryview(bytes(blob[:cut]))
    frames = dv._scan_file(view)
    if frames is not None:
        parsed = kaitai.parse(dv.DeletionVectors, view)
        assert [(kaitai.field_start(parsed, "bins", i), dv._frame(raw))
                for i, raw in enumerate(parsed.bins)] == frames
