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
    covered = sorted((f.offset, f.offset + f.size) for f in located if f.size)
    position = 0
    for start, end in covered:
        assert start == position, f"gap or overlap at {position}: next field starts at {start}"
        position = end
    assert position == len(data)
    lines = list(hexdump.render(parsing.parse(make, data), data))
    assert len(lines) >= len(located)
