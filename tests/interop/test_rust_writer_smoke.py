"""The Rust-writer oracle works: pypaimon-rust writes a data-evolution table with all four file
indexes, and every container and blob it wrote parses with our specs; the bloom filters hold
every value of their column.

Written twice: once with sidecar containers (the default threshold) and once with containers
embedded in the manifest.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pyarrow as pa
import pytest
import rust_writer
from oracles import oracle_unavailable
from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.generated.bsi_index import BsiIndex
from paimon_schema.generated.range_bitmap import RangeBitmap

import paimon_schema as ps
from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts.bloom_filter import BloomFilterIndexReader
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.results import SKIP

ROWS = 1000
TYPES = {"i": "INT", "b": "BIGINT", "s": "STRING", "d": "DOUBLE"}
STRINGS = ["", "a", "é", "名前", "\U0001F600", "Paimon-派蒙", "z" * 40] + [f"v{n}" for n in range(10)]
DOUBLES = [0.0, -0.0, math.nan, math.inf, -1.5, 1e300, 5e-324] + [n / 4 for n in range(10)]

INDEXES = {
    "bitmap": {c: {"index-block-size": "64b"} for c in ("i", "s", "d")},
    "bloom-filter": {"i": {"items": "100"}, "b": {"items": "1000", "fpp": "0.01"}, "s": {}, "d": {}},
    "bsi": {"i": {}, "b": {}},
    "range-bitmap": {c: {"chunk-size": "32b"} for c in ("i", "b", "s", "d")},
}
ABSENT = {"i": 123456, "b": 42, "s": "absent", "d": 2.6}
BLOOM_SIZES = {"i": (480, 3), "b": (9592, 7), "s": (4_792_536, 3), "d": (4_792_536, 3)}   # formats/bloom_filter.ksy sizing


def _table() -> pa.Table:
    def column(n: int, every: int, values: list) -> list:
        return [None if k % every == 0 else values[(k * 7) % len(values)] for k in range(n)]

    ints = [-(2**31), 2**31 - 1, 0, -1] + list(range(-6, 7))
    longs = [-(2**63) + 1, 2**63 - 1,   # BSI refuses Long.MIN_VALUE
             0, -1] + [n * 10**12 for n in range(-5, 6)]
    return pa.table({"i": pa.array(column(ROWS, 7, ints), pa.int32()),
                     "b": pa.array(column(ROWS, 11, longs), pa.int64()),
                     "s": pa.array(column(ROWS, 5, STRINGS), pa.string()),
                     "d": pa.array(column(ROWS, 9, DOUBLES), pa.float64())})


@pytest.fixture(scope="module", params=["sidecar", "embedded"])
def written(request, tmp_path_factory) -> tuple[str, pa.Table, list[rust_writer.WrittenFile]]:
    try:
        rust_writer.require()
    except rust_writer.RustWriterUnavailable as exc:
        oracle_unavailable(f"pypaimon-rust not installed: {exc}")
    options = {"file-index.in-manifest-threshold": "16mb"} if request.param == "embedded" else {}
    data = _table()
    files = rust_writer.write_table(data, tmp_path_factory.mktemp("warehouse"), INDEXES, options)
    return request.param, data, files


def _blobs(files: list[rust_writer.WrittenFile], index_type: str
           ) -> Iterator[tuple[rust_writer.WrittenFile, str, bytes]]:
    for f in files:
        for column, indexes in ps.FileIndexFile.parse(f.container).columns.items():
            if index_type in indexes:
                yield f, column, indexes[index_type]


def test_files_and_containers(written) -> None:
    stored, data, files = written
    assert sum(f.row_count for f in files) == ROWS
    for column in TYPES:
        read_back = [v for f in files for v in f.columns[column]]
        assert _comparable(read_back) == _comparable(data[column].to_pylist())
    for f in files:
        assert f.stored == ("embedded" if stored == "embedded" else f.data_file.name + ".index")
        container = ps.FileIndexFile.parse(f.container)
        assert container.warnings == []
        assert {(c, t) for c, ts in container.columns.items() for t in ts} == {
            (c, t) for t, cs in INDEXES.items() for c in cs}


def _comparable(values: list) -> list:
    """Floats by their bits, so that NaN equals NaN and -0.0 differs from 0.0."""
    return [v.hex() if isinstance(v, float) else v for v in values]


def _distinct_keys(codec: keys.KeyCodec, values: list) -> set:
    return {codec.encode(v) for v in values if v is not None}


def test_bitmaps_are_v2_with_several_blocks(written) -> None:
    for f, column, blob in _blobs(written[2], "bitmap"):
        codec = keys.bitmap_keys(TYPES[column])
        index = parsing.parse(lambda io: BitmapIndex(codec.kind, io), blob)
        assert (index.version, index.num_rows, index.has_null) == (2, f.row_count, True)
        assert index.index.num_blocks > 1
        stored = {keys.raw_key(e.key) for ref in index.index.blocks for e in ref.block.entries}
        assert stored == _distinct_keys(codec, f.columns[column])


def test_range_bitmaps_have_several_chunks(written) -> None:
    for f, column, blob in _blobs(written[2], "range-bitmap"):
        codec = keys.range_bitmap_keys(TYPES[column])
        index = parsing.parse(lambda io: RangeBitmap(codec.kind, io), blob)
        assert index.header.num_rows == f.row_count
        assert index.header.num_keys == len(_distinct_keys(codec, f.columns[column]))
        assert index.dictionary.num_chunks > 1


def test_bsi_parse(written) -> None:
    for f, _, blob in _blobs(written[2], "bsi"):
        index = parsing.parse(BsiIndex, blob)
        assert (index.version, index.num_rows) == (1, f.row_count)


def test_bloom_filters_hold_every_value(written) -> None:
    for f, column, blob in _blobs(written[2], "bloom-filter"):
        reader = BloomFilterIndexReader.open(blob, TYPES[column])
        assert (reader.num_bits, reader.num_hash_functions) == BLOOM_SIZES[column]
        assert all(reader.might_contain(v) for v in f.columns[column])
        assert reader.equal(ABSENT[column]) == SKIP
