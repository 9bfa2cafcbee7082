"""Hex dumps account for every byte of a file exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest
from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.generated.bsi_index import BsiIndex
from paimon_schema.generated.deletion_vectors import DeletionVectors
from paimon_schema.generated.file_index import FileIndex
from paimon_schema.generated.range_bitmap import RangeBitmap

from paimon_schema.cli import hexdump
from paimon_schema.layouts import registry
from paimon_schema.runtime import kaitai as parsing

INT, STRING = 4, 8
CASES = [
    ("paimon/dv/dvindex-32", DeletionVectors),
    ("paimon/dv/dvindex-64", DeletionVectors),
    ("paimon-cpp/file-index/bitmap_3col_container.bin", FileIndex),
    ("paimon-rust/bitmap/java_int_v2.bin", lambda io: BitmapIndex(INT, io)),
    ("paimon-rust/bitmap/java_string_v1.bin", lambda io: BitmapIndex(STRING, io)),
    ("paimon-rust/bitmap/java_int_multiblock_v2.bin", lambda io: BitmapIndex(INT, io)),
    ("paimon-rust/range-bitmap/java_string_v1.bin", lambda io: RangeBitmap(STRING, io)),
    ("paimon-rust/bsi/java_int.bin", BsiIndex),
]


@pytest.mark.parametrize("relpath, make", CASES, ids=[c[0] for c in CASES])
def test_every_byte_is_one_field(shared_fixtures: Path, relpath: str, make) -> None:
    data = (shared_fixtures / relpath).read_bytes()
    located = [f for f in hexdump.fields(parsing.parse(make, data), data) if f.offset is not None]
    covered = sorted((f.offset, f.offset + f.size) for f in located if f.size and not f.opened)
    position = 0
    for start, end in covered:
        assert start == position, f"gap or overlap at {position}: next field starts at {start}"
        position = end
    assert position == len(data)
    lines = list(hexdump.render(parsing.parse(make, data), data))
    assert len(lines) >= len(located)


def _opened_children_cover(fields: list[hexdump.Field]) -> None:
    """Inside each opened field, its own fields account for every byte exactly once."""
    for blob in (f for f in fields if f.opened):
        inner = sorted((f.offset, f.offset + f.size) for f in fields
                       if f.path.startswith(blob.path + ".") and f.offset is not None and f.size)
        position = blob.offset
        for start, end in inner:
            assert start == position, (blob.path, position, start)
            position = end
        assert position == blob.offset + blob.size, blob.path


def test_container_blobs_strings_and_dv_bins_are_opened() -> None:
    import paimon_schema as ps

    blobs = {"city": {"bitmap": ps.build_index("bitmap", "STRING", ["Lima", "Oslo", "Lima"]),
                      "bsi": None},
             "n": {"range-bitmap": ps.build_index("range-bitmap", "INT", [3, 1, None]),
                   "bsi": ps.build_index("bsi", "INT", [3, 1, None]),
                   "bloom-filter": ps.build_index("bloom-filter", "INT", [3], items=10)}}
    data = ps.write_file_index(blobs)
    root = registry.parse_generated("file-index", data)
    typed = hexdump.fields(root, data, {"city": "STRING", "n": "INT"}.get)
    by_path = {f.path: f for f in typed}
    assert by_path["head.columns[0].name.value"].value == "city"
    assert by_path["head.columns[1].indexes[2].index_type.value"].value == "bloom-filter"
    assert by_path["head.columns[0].indexes[0].blob"].opened
    keys = [f.value for f in typed if f.path.endswith("key.utf8_value.value")]
    assert keys and set(keys) <= {"Lima", "Oslo"}          # UTF-8 keys as text
    assert all(by_path[f"head.columns[1].indexes[{j}].blob"].opened for j in range(3))
    _opened_children_cover(typed)
    # without a type, the bitmap and range-bitmap blobs stay bytes; bsi/bloom need none
    untyped = {f.path: f for f in hexdump.fields(root, data)}
    assert not untyped["head.columns[0].indexes[0].blob"].opened
    assert not untyped["head.columns[1].indexes[0].blob"].opened
    assert untyped["head.columns[1].indexes[1].blob"].opened
    # a 32-bit deletion-vector bin is read as a RoaringBitmap, its containers as positions
    dv, _ = ps.write_deletion_vectors({"a": [1, 5, 70000], "b": [*range(100, 200), 196615]})
    fields = hexdump.fields(registry.parse_generated("dv", dv), dv)
    shown = [hexdump.show_value(f.value, f.size) for f in fields if f.path.endswith((".array_values", ".runs"))]
    assert shown == ["positions 1, 5", "positions 70000", "positions 100-199", "positions 196615"]
    _opened_children_cover(fields)
    lines = list(hexdump.render(registry.parse_generated("dv", dv), dv))
    assert any(line.endswith("bins[0].bitmap.containers[0].array_values = positions 1, 5") for line in lines)


def test_a_blob_that_does_not_parse_stays_bytes() -> None:
    import paimon_schema as ps

    data = ps.write_file_index({"n": {"bsi": b"\x07garbage"}})
    fields = hexdump.fields(registry.parse_generated("file-index", data), data)
    blob = next(f for f in fields if f.path.endswith(".blob"))
    assert not blob.opened and bytes(blob.value) == b"\x07garbage"
