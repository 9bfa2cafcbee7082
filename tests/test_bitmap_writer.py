"""The bitmap writer: Java's bytes for every Java-written bitmap fixture, the fast writer equal
to the generated codec, and parse(build(column)) == column."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from fixture_catalog import CONTAINERS
from hypothesis import example, given
from hypothesis import strategies as st

import paimon_schema as ps
from paimon_schema.layouts.bitmap_index import BitmapIndexReader, build_bitmap_index
from paimon_schema.layouts.bitmap_index.writer import bitmap_layout, write_layout
from paimon_schema.layouts.bitmap_index.writer import write_with_codec
from strategies import columns, pairs, values_for

STANDALONE = {
    **{f"paimon-rust/bitmap/java_{stem}_v{v}.bin": t for v in (1, 2) for stem, t in [
        ("boolean", "BOOLEAN"), ("tinyint", "TINYINT"), ("smallint", "SMALLINT"), ("int", "INT"),
        ("bigint", "BIGINT"), ("date", "DATE"), ("time", "TIME"), ("timestamp_millis", "TIMESTAMP(3)"),
        ("timestamp_micros", "TIMESTAMP(6)"), ("string", "STRING"), ("float", "FLOAT"),
        ("double", "DOUBLE"), ("int_singleton_null", "INT"), ("int_empty", "INT")]},
    "paimon-rust/bitmap/java_int_multiblock_v2.bin": "INT",
    **{f"paimon-cpp/bitmap/{stem}_v{v}.bin": t for v in (1, 2) for stem, t in [
        ("string_a_b", "STRING"), ("boolean", "BOOLEAN"), ("tinyint", "TINYINT"),
        ("smallint", "SMALLINT"), ("bigint", "BIGINT"), ("date", "DATE"), ("int", "INT"),
        ("timestamp9", "TIMESTAMP(9)"), ("string_apple_java", "STRING"), ("int_all_null", "INT")]},
    "paimon-cpp/file_index/bitmap-index-v1": "STRING",
    "paimon-cpp/file_index/bitmap-index-v2": "STRING",
}
#: column types of the tables whose containers hold bitmaps (README section 6)
TABLE_TYPES = {"f0": "STRING", "f1": "INT", "f2": "INT", "f4": "TIMESTAMP(9)"}
PK_SECOND_BATCH_TYPES = {"f0": "STRING", "f1": "INT", "f2": "INT"}


def _column(reader: BitmapIndexReader) -> list:
    """The column a bitmap index was written from: every row's value, None for nulls."""
    column: list = [None] * reader.num_rows
    for value, rows in reader.items():
        for row in rows:
            column[row] = value
    return column


def _blobs(root: Path) -> list[tuple[str, str, bytes]]:
    found = [(rel, t, (root / rel).read_bytes()) for rel, t in STANDALONE.items()]
    for rel in CONTAINERS:
        container = ps.FileIndexFile.parse((root / rel).read_bytes())
        for column, indexes in container.columns.items():
            if "bitmap" in indexes:
                found.append((f"{rel}#{column}", TABLE_TYPES[column], indexes["bitmap"]))
    return found


ROOT = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
BLOBS = _blobs(ROOT) if ROOT.is_dir() else []


@pytest.mark.parametrize("name, data_type, blob", BLOBS, ids=[b[0] for b in BLOBS])
def test_java_written_bitmaps_are_rebuilt_byte_for_byte(shared_fixtures: Path, name: str,
                                                        data_type: str, blob: bytes) -> None:
    reader = BitmapIndexReader.open(blob, data_type)
    column = _column(reader)
    if reader.version == 1:
        assert build_bitmap_index(data_type, column, version=1) == blob
        return
    # V2 fixtures that do not record their index-block-size: the smallest size that gives
    # Java's bytes must exist (most use the 16 KiB default).
    sizes = [16 * 1024, *range(1, 512)]
    assert any(_v2_or_none(data_type, column, s) == blob for s in sizes), \
        f"no index-block-size reproduces {name}"


def _v2_or_none(data_type: str, column: list, block_size: int) -> bytes | None:
    try:
        return build_bitmap_index(data_type, column, version=2, index_block_size=block_size)
    except ps.SchemaError:
        return None


VALUES = {t: values_for(t) for t in ("INT", "BIGINT", "TINYINT", "SMALLINT", "BOOLEAN", "DOUBLE",
                                      "FLOAT", "STRING", "DATE", "TIMESTAMP(6)")}


@given(columns(VALUES).map(pairs), st.sampled_from([1, 2]), st.sampled_from([16, 20, 24, 29, 64, 16 * 1024]))
@example(("INT", [1, 2, None, 1, 3, None, 2, 7]), 2, 16)    # one entry per 16-byte block
@example(("INT", [1, 2, 3]), 2, 28)                          # two 12-byte entries: exactly 28
@example(("INT", [1, 2, 3]), 2, 27)                          # ... one byte short
@example(("INT", [None]), 2, 16 * 1024)
@example(("INT", []), 1, 16 * 1024)
@example(("INT", [0, 1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192] * 2), 2, 64)
def test_fast_writer_equals_codec_and_reads_back(column, version: int, block_size: int) -> None:
    data_type, values = column
    try:
        layout = bitmap_layout(data_type, values, version=version, index_block_size=block_size)
    except ps.SchemaError:
        assert version == 2 and data_type == "STRING" or block_size < 20
        return
    blob = write_layout(layout)
    assert blob == write_with_codec(layout)
    reader = BitmapIndexReader.open(blob, data_type)
    assert reader.num_rows == len(values)
    assert list(reader.null_rows) == [i for i, v in enumerate(values) if v is None]
    decoded = _column(reader)
    assert [repr(v) if isinstance(v, float) and math.isnan(v) else v for v in decoded] == \
        [_stored(data_type, v) for v in values]


def _stored(data_type: str, value):
    if value is None:
        return None
    if data_type == "FLOAT":
        value = ps.types.float32(value)
    if isinstance(value, float) and math.isnan(value):
        return repr(math.nan)
    return value


@pytest.mark.parametrize("kwargs, complaint", [
    ({"version": 3}, "invalid bitmap index version"),
    ({"index_block_size": 15}, "cannot hold"),
])
def test_writer_refuses_what_java_refuses(kwargs: dict, complaint: str) -> None:
    with pytest.raises(ps.SchemaError, match=complaint):
        build_bitmap_index("INT", [1, 2], **kwargs)


@pytest.mark.parametrize("data_type", ["DECIMAL(5, 2)", "BYTES"])
def test_unsupported_types(data_type: str) -> None:
    with pytest.raises(ps.SchemaError):
        build_bitmap_index(data_type, [None])
