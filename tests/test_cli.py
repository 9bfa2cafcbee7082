"""The `paimon-schema` command line, called in-process: dump, verify, demo.

Files are copies of Java-written fixtures (../shared/fixtures), corrupted where a test needs it.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from pyroaring import BitMap, BitMap64

from fixture_catalog import CONTAINERS, DELETION_VECTORS
from paimon_schema.cli import bitmap_ranges, main

DV_32 = "paimon/dv/dvindex-32"                        # bins {2,3} at (1, 24) and {1} at (33, 22)
CONTAINER_3COL = "paimon-cpp/file-index/bitmap_3col_container.bin"
CONTAINER_EMPTY_ENTRY = "paimon-cpp/file-index/java_empty_entry_container.bin"


@pytest.fixture
def copy(shared_fixtures: Path, tmp_path: Path):
    """Copy a fixture into tmp_path, optionally changed by `mutate(bytearray)`."""

    def make(relpath: str, mutate=None, name: str = "file") -> str:
        data = bytearray((shared_fixtures / relpath).read_bytes())
        if mutate:
            mutate(data)
        path = tmp_path / name
        path.write_bytes(data)
        return str(path)

    return make


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- ranges -------------------------------------------------------------------------------------


def _naive_ranges(values: list[int]) -> list[list[int]]:
    ranges: list[list[int]] = []
    for v in values:
        if ranges and ranges[-1][1] == v:
            ranges[-1][1] = v + 1
        else:
            ranges.append([v, v + 1])
    return ranges


@pytest.mark.parametrize("bitmap", [
    BitMap(),
    BitMap([0]),
    BitMap([1, 2, 3, 100, 2**32 - 1]),
    BitMap(np.random.default_rng(7).integers(0, 5_000, 3_000).tolist()),
    BitMap64([5, 2**40, 2**40 + 1, 2**62]),
])
def test_bitmap_ranges_are_half_open_runs(bitmap) -> None:
    assert bitmap_ranges(bitmap).tolist() == _naive_ranges(list(bitmap))


# -- dump ---------------------------------------------------------------------------------------


def test_dump_detects_a_deletion_vector_file(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", copy(DV_32))
    assert code == 0
    assert "deletion vectors, version 1, 2 bins (63 bytes)" in out
    assert "bins[0]  range (1, 24)  32-bit  cardinality 2" in out and out.count("{2-3}") == 1
    assert "bins[1]  range (33, 22)  32-bit  cardinality 1" in out and "{1}" in out


def test_dump_detects_a_container(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", copy(CONTAINER_3COL))
    assert code == 0
    assert "file-index container, head 96 bytes, 3 columns, 3 entries (377 bytes)" in out
    assert "'f0': bitmap  at 96, 131 bytes" in out
    assert "'f2': bitmap  at 301, 76 bytes" in out


def test_dump_json_of_a_deletion_vector_file(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", "--json", copy(DV_32))
    doc = json.loads(out)
    assert code == 0 and doc["layout"] == "dv" and doc["size"] == 63 and doc["version"] == 1
    assert [(b["offset"], b["length"], b["bitmap64"]) for b in doc["bins"]] == [
        (1, 24, False), (33, 22, False)]
    assert [b["positions"] for b in doc["bins"]] == [
        {"cardinality": 2, "ranges": [[2, 4]]}, {"cardinality": 1, "ranges": [[1, 2]]}]
    assert doc["warnings"] == []


def test_dump_json_of_a_container_with_an_empty_entry(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", "--json", copy(CONTAINER_EMPTY_ENTRY))
    doc = json.loads(out)
    assert code == 0 and doc["layout"] == "file-index" and doc["head_length"] == 47
    assert doc["columns"] == [{"name": "c1", "indexes": [
        {"type": "empty", "offset": -1, "length": 0, "blob_size": None}]}]


def test_dump_of_a_hash_index_needs_the_layout(capsys, tmp_path: Path) -> None:
    path = tmp_path / "hash"
    path.write_bytes(struct.pack(">4i", 7, -1, 2**31 - 1, 7))
    code, _, err = run(capsys, "dump", str(path))
    assert code == 2 and "--layout" in err
    code, out, _ = run(capsys, "dump", "--layout", "hash", str(path))
    assert code == 0 and "hash index, 4 ints (16 bytes)" in out and "7 -1 2147483647 7" in out
    code, out, _ = run(capsys, "dump", "--layout", "hash", "--json", str(path))
    assert json.loads(out)["hashes"] == [7, -1, 2**31 - 1, 7]


def test_index_blob_layouts_are_not_available_yet(capsys, shared_fixtures: Path) -> None:
    blob = str(shared_fixtures / "paimon-cpp/bitmap/int_v1.bin")
    code, _, err = run(capsys, "dump", "--layout", "bitmap", "--type", "INT", blob)
    assert code == 2 and "bitmap reader is not available yet" in err


# -- verify -------------------------------------------------------------------------------------


def test_verify_every_catalogued_fixture(capsys, shared_fixtures: Path) -> None:
    files = [str(shared_fixtures / p) for p in [*DELETION_VECTORS, *CONTAINERS]]
    code, out, _ = run(capsys, "verify", *files)
    assert code == 0
    assert out.count("OK ") == len(files) and "FAIL" not in out


def _flip_second_magic(data: bytearray) -> None:
    data[37] ^= 0xFF


@pytest.mark.parametrize("mutate, location", [
    (_flip_second_magic, "offset=37 path=bins[1].magic"),
    (lambda d: d.__delitem__(slice(-3, None)), "offset=59 path=bins[1].checksum"),
    (lambda d: d.__setitem__(20, d[20] ^ 1), "offset=29 path=bins[0].checksum"),
])
def test_verify_locates_a_corrupted_file(capsys, copy, mutate, location: str) -> None:
    good, bad = copy(DV_32, name="good"), copy(DV_32, mutate, name="bad")
    code, out, _ = run(capsys, "verify", good, bad)
    assert code == 1
    assert f"OK {good} (dv: 2 bins, 3 positions, 63 bytes)" in out
    assert f"FAIL {bad}: " in out and location in out


def test_verify_with_an_explicit_layout(capsys, copy) -> None:
    bad = copy(DV_32, lambda d: d.__setitem__(5, d[5] ^ 0xFF))   # no longer recognisable
    assert run(capsys, "verify", bad)[0] == 2
    code, out, _ = run(capsys, "verify", "--layout", "dv", bad)
    assert code == 1 and "offset=5 path=bins[0].magic" in out


def test_verify_reports_warnings(capsys, copy) -> None:
    def add_head_slack(data: bytearray) -> None:         # len_head + 2, two bytes of slack
        head = struct.unpack_from(">i", data, 12)[0]
        struct.pack_into(">i", data, 12, head + 2)
        data[head:head] = b"\0\0"

    code, out, _ = run(capsys, "verify", copy(CONTAINER_EMPTY_ENTRY, add_head_slack))
    assert code == 0 and "OK " in out and "WARN " in out and "unused bytes" in out


def test_verify_a_truncated_hash_index(capsys, tmp_path: Path) -> None:
    path = tmp_path / "hash"
    path.write_bytes(struct.pack(">2i", 1, 2)[:-1])
    code, out, _ = run(capsys, "verify", "--layout", "hash", str(path))
    assert code == 1 and "offset=4 path=hashes[1]" in out


def test_an_unreadable_file_is_a_usage_error(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "verify", str(tmp_path / "missing"))
    assert code == 2 and "cannot read" in out


# -- demo ---------------------------------------------------------------------------------------


def test_demo_end_to_end(capsys, java_reference, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "demo", "--keep", str(tmp_path))
    assert code == 0, out
    assert "MISMATCH" not in out and "0 mismatched" in out
    assert (tmp_path / "dv-large").stat().st_size > 65536
    assert {"dv-empty", "hash-edges", "container-indexes"} <= {p.name for p in tmp_path.iterdir()}


def test_demo_without_java_says_why(capsys, monkeypatch) -> None:
    from paimon_schema.reference import JavaReference, ReferenceUnavailable

    def unavailable() -> JavaReference:
        raise ReferenceUnavailable("'java' not found on PATH")

    monkeypatch.setattr(JavaReference, "get", unavailable)
    code, out, _ = run(capsys, "demo")
    assert code == 1 and "'java' not found on PATH" in out
