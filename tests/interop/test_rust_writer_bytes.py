"""Our writers against an independent writer's bytes: pypaimon-rust 0.4.0 (through pypaimon
2.1.0, tests/interop/rust_writer.py) writes data-evolution tables with bitmap V2, bloom-filter,
BSI and range-bitmap indexes over INT, BIGINT, STRING and DOUBLE columns (nulls, runs of one
value, duplicates, negatives and extremes, -0.0, NaN, infinities), once with small options
(`index-block-size` 64b, `chunk-size` 32b, several bloom sizes; four data files) and once with
the defaults (16kb blocks and chunks, one data file, high cardinality so that there are several
blocks and chunks anyway). For every data file, our `build_index` over the file's column values
against each blob in its container:

- range-bitmap and bloom-filter: byte for byte equal.
- bitmap V2: NOT equal, by design: pypaimon-rust writes the body (the stored bitmaps) in the
  index's sorted key order, with offsets to match, where Java writes it in `id2bitmap`'s HashMap
  iteration order (formats/bitmap_index.ksy; Rust has no Java HashMap). Everything else is equal: the header,
  the null bitmap and its length, the blocks and their packing, every entry's key, singleton
  offset and length, every bitmap's bytes (run-optimized as in Java). Asserted exactly: our
  layout with its body rewritten in sorted key order (`sorted_body`) gives the Rust blob byte
  for byte, and both decode to the same rows per key.
- BSI: NOT equal, by design: pypaimon-rust does not call `runOptimize()` before serializing the
  BSI's roaring bitmaps (the existence bitmap and the slices), where Java's
  `BitSliceIndexRoaringBitmap` serializes through `RoaringBitmap32.serialize()`, which does
  (formats/roaring_bitmap.ksy): where a run container is smaller, Rust keeps the array or bitmap container.
  Everything else is equal. Asserted exactly both ways: the Rust blob with every bitmap
  run-optimized is our blob, and our blob with every bitmap re-serialized without run
  containers is the Rust blob.
- The container: NOT what Java writes for the same blobs, in two ways, neither of which a reader
  sees. (1) Its order: pypaimon-rust iterates Rust HashMaps (randomly seeded per process), so
  columns and index types come in an order that changes from file to file, where Java writes
  columns in `String.hashCode` HashMap order and types as bloom-filter, bitmap, bsi,
  range-bitmap (`FileIndexFormat.Writer`). (2) The body: the blobs tile it without gaps, but in another order
  than the head's entries (a second iteration), where Java writes them in head order (spec
  1.2), so `write_file_index` over the same blobs in the head's order gives the same head but
  for the offsets and the blobs in head order. Asserted exactly: the parsed model written back
  (`FileIndexFile.to_bytes`, entries at their recorded offsets) is the container, with the
  Rust blobs and with ours in Rust's conventions above; and `write_file_index`'s output equals
  it with the offsets moved and the body in head order.
"""

from __future__ import annotations

import dataclasses
import math
import struct

import numpy as np
import pyarrow as pa
import pytest
import rust_writer
from oracles import oracle_unavailable
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.bitmap_index import BitmapIndexReader
from paimon_schema.layouts.bitmap_index.writer import BitmapLayout, bitmap_layout, write_layout
from paimon_schema.values import options

TYPES = {"i": "INT", "b": "BIGINT", "s": "STRING", "d": "DOUBLE"}
ROWS = 6000
BATCH = 1500          # with a 1kb target file size, one data file per batch
INTS = [-(2**31), 2**31 - 1, 0, -1, 7, -7] + list(range(-40, 40, 3))
LONGS = [-(2**63) + 1, 2**63 - 1, 0, -1] + [n * 10**12 + n for n in range(-30, 30)]   # BSI refuses MIN
STRINGS = ["", "a", "b", "ab", "é", "名前", "\U0001F600", "z" * 40] + [f"v{n}" for n in range(30)]
DOUBLES = [0.0, -0.0, math.nan, math.inf, -math.inf, -1.5, 1e300, 5e-324] + [n / 4 for n in range(-20, 20)]

SMALL = {
    "bitmap": {c: {"index-block-size": "64b"} for c in TYPES},
    "bloom-filter": {"i": {"items": "100"}, "b": {"items": "1000", "fpp": "0.01"},
                     "s": {"items": "300", "fpp": "0.05"}, "d": {"items": "10"}},
    "bsi": {"i": {}, "b": {}},
    "range-bitmap": {c: {"chunk-size": "32b"} for c in TYPES},
}
DEFAULT = {"bitmap": {c: {} for c in TYPES}, "bloom-filter": {c: {} for c in TYPES},
           "bsi": {"i": {}, "b": {}}, "range-bitmap": {c: {} for c in TYPES}}


def _column(values: list, every: int, stride: int) -> list:
    """A run of one value (rows 0-299), a run of nulls (300-399), then values by stride with a
    null every `every` rows."""
    return [values[1] if k < 300 else None if k < 400 or k % every == 0
            else values[(k * stride) % len(values)] for k in range(ROWS)]


def _small_table() -> pa.Table:
    table = pa.table({"i": pa.array(_column(INTS, 7, 5), pa.int32()),
                      "b": pa.array(_column(LONGS, 11, 7), pa.int64()),
                      "s": pa.array(_column(STRINGS, 5, 3), pa.string()),
                      "d": pa.array(_column(DOUBLES, 9, 11), pa.float64())})
    return pa.Table.from_batches(table.to_batches(max_chunksize=BATCH))


def _default_table() -> pa.Table:
    """Thousands of distinct values: several 16kb blocks and chunks."""
    def spread(k: int, n: int) -> int:
        return (k * 7919) % n - n // 2

    return pa.table({
        "i": pa.array(_column(INTS + [spread(k, 5000) * 1000 for k in range(5000)], 13, 7919), pa.int32()),
        "b": pa.array(_column(LONGS + [spread(k, 3000) * 10**9 for k in range(3000)], 17, 7919), pa.int64()),
        "s": pa.array(_column(STRINGS + [f"key-{spread(k, 2000)}-名" for k in range(2000)], 19, 7919), pa.string()),
        "d": pa.array(_column(DOUBLES + [spread(k, 2500) / 7 for k in range(2500)], 23, 7919), pa.float64()),
    })


@pytest.fixture(scope="module", params=["small", "default"])
def written(request, tmp_path_factory):
    try:
        rust_writer.require()
    except rust_writer.RustWriterUnavailable as exc:
        oracle_unavailable(f"pypaimon-rust not installed: {exc}")
    if request.param == "small":
        data, indexes, options = _small_table(), SMALL, {"target-file-size": "1kb"}
    else:
        data, indexes, options = _default_table(), DEFAULT, {}
    files = rust_writer.write_table(data, tmp_path_factory.mktemp(request.param), indexes, options)
    assert sum(f.row_count for f in files) == ROWS and all(f.container for f in files)
    return request.param, indexes, files


def _ours(indexes: dict, column: str, index_type: str, values: list) -> bytes:
    return ps.build_index(index_type, TYPES[column], values, **indexes[index_type][column])


def _blobs(files, index_type: str):
    for f in files:
        for column, blobs in ps.FileIndexFile.parse(f.container).columns.items():
            if index_type in blobs:
                yield f, column, blobs[index_type]


def test_shapes(written) -> None:
    label, indexes, files = written
    assert len(files) == (ROWS // BATCH if label == "small" else 1)
    for f in files:
        columns = ps.FileIndexFile.parse(f.container).columns
        assert {(c, t) for c, ts in columns.items() for t in ts} == {
            (c, t) for t, cs in indexes.items() for c in cs}
    if label == "default":      # several blocks and chunks even at 16kb
        bitmap = next(blob for f, c, blob in _blobs(files, "bitmap") if c == "i")
        assert struct.unpack_from(">i", bitmap, 18 if bitmap[9] else 10)[0] > 1   # V2 block count
        chunks = next(blob for f, c, blob in _blobs(files, "range-bitmap") if c == "i")
        header = struct.unpack_from(">i", chunks)[0]
        assert struct.unpack_from(">i", chunks, 4 + header + 5)[0] > 1        # dictionary chunks


@pytest.mark.parametrize("index_type", ["range-bitmap", "bloom-filter"])
def test_equal_bytes(written, index_type: str) -> None:
    _, indexes, files = written
    checked = 0
    for f, column, blob in _blobs(files, index_type):
        assert _ours(indexes, column, index_type, f.columns[column]) == blob, (f.data_file.name, column)
        checked += 1
    assert checked == len(files) * len(indexes[index_type])


def sorted_body(layout: BitmapLayout) -> BitmapLayout:
    """The V2 layout with its body in the index's sorted key order (pypaimon-rust's), offsets
    rewritten to match; all else kept."""
    body_of = {e.key: layout.body[e.offset:e.offset + e.length] for e in layout.entries if e.offset >= 0}
    parts = [layout.body[:layout.null_length] if layout.null_offset == 0 else b""]
    offsets, cursor = {}, len(parts[0])
    for entry in (e for block in layout.blocks for e in block if e.offset >= 0):
        offsets[entry.key] = cursor
        parts.append(body_of[entry.key])
        cursor += entry.length

    def moved(entry):
        return entry._replace(offset=offsets[entry.key]) if entry.offset >= 0 else entry

    return dataclasses.replace(layout, offsets=np.array([moved(e).offset for e in layout.entries], np.int64),
                               body=b"".join(parts))     # blocks: the same entries, sorted


def _rows(blob: bytes, data_type: str) -> dict:
    reader = BitmapIndexReader.open(blob, data_type)
    return {repr(value): rows for value, rows in reader.items()} | {"null": reader.null_rows}


def test_bitmap_v2_differs_only_in_body_order(written) -> None:
    _, indexes, files = written
    differ = 0
    for f, column, blob in _blobs(files, "bitmap"):
        block = indexes["bitmap"][column].get("index-block-size", "16kb")
        layout = bitmap_layout(TYPES[column], f.columns[column], version=2,
                               index_block_size=options.memory_size(block))
        ours = write_layout(layout)
        assert write_layout(sorted_body(layout)) == blob, (f.data_file.name, column)
        assert _rows(ours, TYPES[column]) == _rows(blob, TYPES[column])
        differ += ours != blob
    assert differ       # the body orders do differ somewhere


def _bsi_bitmaps(blob: bytes, rewrite) -> bytes:
    """The BSI blob (formats/bsi_index.ksy) with every roaring bitmap passed through `rewrite`."""
    out, pos = bytearray(blob[:6]), 6                      # version, row count, hasPositive
    for part in range(2):
        if blob[pos - 1]:                                  # the part's flag
            out += blob[pos:pos + 17]                      # version, min, max
            pos += 17
            bitmap, size = roaring.deserialize(blob, pos)
            out += rewrite(bitmap)
            pos += size
            (slices,) = struct.unpack_from(">i", blob, pos)
            out += blob[pos:pos + 4]
            pos += 4
            for _ in range(slices):
                bitmap, size = roaring.deserialize(blob, pos)
                out += rewrite(bitmap)
                pos += size
        if part == 0:
            out += blob[pos:pos + 1]                       # hasNegative
            pos += 1
    assert pos == len(blob)
    return bytes(out)


def _optimized(bitmap: BitMap) -> bytes:
    bitmap.run_optimize()
    return bitmap.serialize()


def _unoptimized(bitmap: BitMap) -> bytes:
    return BitMap(bitmap.to_array(), optimize=False).serialize()


def test_bsi_differs_only_in_run_containers(written) -> None:
    _, indexes, files = written
    differ = 0
    for f, column, blob in _blobs(files, "bsi"):
        ours = _ours(indexes, column, "bsi", f.columns[column])
        assert _bsi_bitmaps(blob, _optimized) == ours, (f.data_file.name, column)
        assert _bsi_bitmaps(ours, _unoptimized) == blob, (f.data_file.name, column)
        differ += ours != blob
    assert differ       # the runs of rows do make run containers


def _ours_in_rust_conventions(indexes: dict, f, column: str, index_type: str) -> bytes:
    values = f.columns[column]
    if index_type == "bitmap":
        block = indexes["bitmap"][column].get("index-block-size", "16kb")
        return write_layout(sorted_body(bitmap_layout(TYPES[column], values,
                                                      index_block_size=options.memory_size(block))))
    if index_type == "bsi":
        return _bsi_bitmaps(_ours(indexes, column, "bsi", values), _unoptimized)
    return _ours(indexes, column, index_type, values)


def test_containers(written) -> None:
    """The container again from the parsed model (its entries at their offsets), with the Rust
    blobs and with ours in Rust's conventions; `write_file_index` (Java's writer) differs from
    it only in where the blobs sit in the body."""
    _, indexes, files = written
    body_orders_differ = 0
    for f in files:
        container = ps.FileIndexFile.parse(f.container)
        assert container.warnings == [] and container.redundant == b""
        assert container.to_bytes() == f.container
        ours = [dataclasses.replace(e, blob=_ours_in_rust_conventions(indexes, f, e.column, e.index_type))
                for e in container.entries]
        assert dataclasses.replace(container, entries=ours).to_bytes() == f.container
        # The blobs tile the body with no gap, in an order of their own.
        by_offset = sorted(container.entries, key=lambda e: e.offset)
        assert by_offset[0].offset == container.head_length
        assert all(a.offset + a.length == b.offset for a, b in zip(by_offset, by_offset[1:]))
        assert by_offset[-1].offset + by_offset[-1].length == len(f.container)
        body_orders_differ += by_offset != container.entries
        java = ps.write_file_index({c: dict(ts) for c, ts in container.columns.items()})
        rewritten = ps.FileIndexFile.parse(java)
        assert rewritten.columns == container.columns and rewritten.head_length == container.head_length
        assert java[:container.head_length] == _head_with_offsets(f.container, container, rewritten)
        assert java[container.head_length:] == b"".join(e.blob for e in container.entries)
    assert body_orders_differ


def _head_with_offsets(data: bytes, parsed: ps.FileIndexFile, other: ps.FileIndexFile) -> bytes:
    """`data`'s head with every entry's offset replaced by the one in `other`."""
    head = bytearray(data[:parsed.head_length])
    pos = 20
    for _ in parsed.column_names:
        pos += 2 + struct.unpack_from(">H", head, pos)[0]
        (count,) = struct.unpack_from(">i", head, pos)
        pos += 4
        for _ in range(count):
            pos += 2 + struct.unpack_from(">H", head, pos)[0]
            entry = next(e for e in parsed.entries if e.offset == struct.unpack_from(">i", head, pos)[0])
            moved = next(e for e in other.entries if (e.column, e.index_type) == (entry.column, entry.index_type))
            struct.pack_into(">i", head, pos, moved.offset)
            pos += 8
    return bytes(head)
