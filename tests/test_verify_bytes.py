"""`verify` accounts for every byte: the fields of the file's spec (its blobs and bitmaps
opened) must read each byte exactly once. Trailing garbage, a gap, blobs that overlap, a blob
read as the wrong layout: exit 1 with the offset, for every layout the registry lists."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import paimon_schema as ps
from paimon_schema.cli.main import main
from paimon_schema.layouts import registry
from paimon_schema.layouts.bitmap_global_index import write_bitmap_global_index
from paimon_schema.layouts.btree_global_index import write_btree_global_index

COLUMN = [i % 7 if i % 3 else None for i in range(7000)]
#: Layouts whose last field takes whatever bytes follow (a bloom filter's bit set, a hash
#: index's ints): appended bytes are more of it, no spec can tell them apart.
UNFRAMED = {"bloom-filter", "hash-index"}


def samples() -> dict[str, tuple[bytes, list[str]]]:
    """A file Java's writers would write, per layout, and the verify options it needs."""
    bitmap = ps.build_index("bitmap", "INT", COLUMN)
    bloom = ps.build_index("bloom-filter", "INT", [1, 2, 3], items=10)
    return {
        "file-index": (ps.write_file_index({"a": {"bitmap": bitmap, "bloom-filter": bloom}}),
                       ["--row-type", "a:INT"]),
        "bitmap": (bitmap, ["--type", "INT"]),
        "bloom-filter": (bloom, ["--type", "INT"]),
        "bsi": (ps.build_index("bsi", "INT", COLUMN), ["--type", "INT"]),
        "range-bitmap": (ps.build_index("range-bitmap", "INT", COLUMN), ["--type", "INT"]),
        "deletion-vectors": (ps.write_deletion_vectors({"a": [1, 2], "b": [70000]})[0], []),
        "hash-index": (ps.write_hash_index([1, -2, 3]), []),
        "btree-global-index": (write_btree_global_index("INT", [i % 13 if i % 5 else None
                                                               for i in range(500)],
                                                        block_size=256).data, ["--type", "INT"]),
        "bitmap-global-index": (write_bitmap_global_index("INT", COLUMN[:500], dictionary_block_size=64),
                                ["--type", "INT"]),
    }


def verify(capsys, tmp_path: Path, data: bytes, layout: str, *args: str) -> tuple[int, str]:
    path = tmp_path / f"{layout}.bin"
    path.write_bytes(data)
    code = main(["verify", "--layout", layout, *args, str(path)])
    return code, capsys.readouterr().out


def test_every_layout_has_a_sample() -> None:
    assert sorted(samples()) == sorted(registry.FILES)


@pytest.mark.parametrize("layout", registry.FILES)
def test_what_java_writes_verifies(capsys, tmp_path: Path, layout: str) -> None:
    data, args = samples()[layout]
    code, out = verify(capsys, tmp_path, data, layout, *args)
    assert code == 0 and out.startswith("OK "), out


@pytest.mark.parametrize("layout", sorted(set(registry.FILES) - UNFRAMED))
def test_garbage_after_the_end_fails(capsys, tmp_path: Path, layout: str) -> None:
    data, args = samples()[layout]
    code, out = verify(capsys, tmp_path, data + b"\x00\x01\x02\x03", layout, *args)
    assert code == 1 and out.startswith("FAIL "), out
    if layout not in ("deletion-vectors", "btree-global-index", "bitmap-global-index"):   # the reader objects:
        assert f"offset={len(data)} " in out and "read by no field" in out   # a bin, a footer


@pytest.mark.parametrize("version", [1, 2])
def test_a_bitmap_read_as_bsi_fails(capsys, tmp_path: Path, version: int) -> None:
    blob = ps.build_index("bitmap", "INT", COLUMN, version=version)
    code, out = verify(capsys, tmp_path, blob, "bsi", "--type", "INT")
    assert code == 1 and out.startswith("FAIL ") and "OK" not in out


def _entry_at(container: bytes, entry: ps.IndexEntry) -> int:
    """Where an entry's (offset, length) pair lies in the head."""
    return container.index(struct.pack(">ii", entry.offset, entry.length))


@pytest.mark.parametrize("typed", [True, False])
def test_container_blobs_must_tile_the_file(capsys, tmp_path: Path, typed: bool) -> None:
    data, args = samples()["file-index"]
    args = args if typed else []
    first, second = ps.FileIndexFile.parse(data).entries

    overlap = bytearray(data)                      # the first blob's length reaches the second
    struct.pack_into(">ii", overlap, _entry_at(data, first), first.offset, first.length + 4)
    code, out = verify(capsys, tmp_path, bytes(overlap), "file-index", *args)
    assert code == 1 and "overlaps head.columns[0].indexes[0].blob: 4 bytes read twice" in out, out
    assert f"offset={second.offset} " in out

    gap = bytearray(data[:second.offset] + b"\0\0" + data[second.offset:])   # two bytes between
    struct.pack_into(">ii", gap, _entry_at(data, second), second.offset + 2, second.length)
    code, out = verify(capsys, tmp_path, bytes(gap), "file-index", *args)
    assert code == 1 and "2 bytes before head.columns[0].indexes[1].blob read by no field" in out, out
    assert f"offset={second.offset} " in out


def test_an_opened_blob_must_fill_its_length(capsys, tmp_path: Path) -> None:
    """A blob whose length in the head runs past its own fields (here: four bytes more at the
    end of the file), read with its type."""
    bitmap = ps.build_index("bitmap", "INT", COLUMN)
    data = ps.write_file_index({"a": {"bitmap": bitmap}})
    [entry] = ps.FileIndexFile.parse(data).entries
    longer = bytearray(data + b"\0\0\0\0")
    struct.pack_into(">ii", longer, _entry_at(data, entry), entry.offset, entry.length + 4)
    code, out = verify(capsys, tmp_path, bytes(longer), "file-index", "--row-type", "a:INT")
    assert code == 1 and "4 bytes at the end of head.columns[0].indexes[0].blob" in out, out
    assert f"offset={len(data)} path=head.columns[0].indexes[0].blob " in out
