"""Global indexes in real index manifests: pypaimon 2.1.0 and pypaimon-rust 0.4.0 build bitmap
(and btree) global indexes on a data-evolution table; pypaimon's bitmap files are our writer's
bytes and our reader answers like the data; pypaimon-rust's hold the same keys and rows but in
typed order under a version-1 footer (the disagreement the spec records); the `_GLOBAL_INDEX`
metadata decodes and re-encodes to the same record and bytes. Java's one sample
(`pk_btree_e2e`, release 2.0.0) decodes too."""

from __future__ import annotations

from pathlib import Path

import fastavro
import pyarrow as pa
from global_index_tables import index_files, pypaimon_index, rust_index, write_table

from paimon_schema.layouts.bitmap_global_index import BitmapGlobalIndexReader, GlobalKeys, build_bitmap_global_index
from paimon_schema.layouts.global_index_meta import GlobalIndexMeta, SortedIndexFileMeta

ROWS = 300
COLUMNS = {"d": ("DATE", 1), "s": ("STRING", 2), "k": ("INT", 3)}
VALUES = {
    "d": [19960 + i % 20 if i % 9 else None for i in range(ROWS)],   # keys straddle 0x4e00
    "s": [f"s{i % 7}" if i % 5 else None for i in range(ROWS)],
    "k": [i // 40 - 3 for i in range(ROWS)],                         # long runs
}


def _data() -> pa.Table:
    return pa.table({"id": pa.array(range(ROWS), pa.int64()),
                     "d": pa.array(VALUES["d"], pa.int32()).cast(pa.date32()),
                     "s": pa.array(VALUES["s"], pa.string()),
                     "k": pa.array(VALUES["k"], pa.int32())})


def _check_bitmap_files(warehouse: Path, typed_order: bool = False) -> int:
    """Check every index file of the table; `typed_order`: its bitmap files are version 1 over
    keys in typed order (pypaimon-rust 0.4.0), compared entry by entry, not byte by byte."""
    checked = 0
    for file in index_files(warehouse):
        meta = GlobalIndexMeta.from_entry(file.record)
        assert meta is not None and meta.kind == "sorted" and meta.source is None
        assert (meta.row_range_start, meta.row_range_end) == (0, ROWS - 1)
        assert GlobalIndexMeta.from_entry({"_INDEX_TYPE": meta.index_type,
                                           "_GLOBAL_INDEX": meta.to_record()}) == meta
        sorted_meta = meta.sorted_meta
        assert sorted_meta is not None and sorted_meta.to_bytes() == meta.index_meta
        if meta.index_type != "bitmap":
            continue
        column = next(c for c, (_, field_id) in COLUMNS.items() if field_id == meta.index_field_id)
        data_type, values = COLUMNS[column][0], VALUES[column]
        keys = GlobalKeys.of(data_type)
        built = build_bitmap_global_index(data_type, values)
        assert built is not None and built.index_meta == meta.index_meta and built.row_count == ROWS
        ours = built.data
        if typed_order:
            theirs = list(BitmapGlobalIndexReader.open(file.data, data_type).entries())
            assert sorted(theirs) == sorted(BitmapGlobalIndexReader.open(ours, data_type).entries())
            assert [k for k, _ in theirs] == sorted((k for k, _ in theirs), key=keys.order)
            assert BitmapGlobalIndexReader.open(file.data, data_type).version == 1
            checked += 1
            continue
        assert file.data == ours
        present = sorted({v for v in values if v is not None}, key=lambda v: keys.order(keys.encode(v)))
        assert sorted_meta == SortedIndexFileMeta(keys.encode(present[0]), keys.encode(present[-1]),
                                                  None in values)
        reader = BitmapGlobalIndexReader.open(file.data, data_type)
        for value in present:
            assert list(reader.equal(value)) == [i for i, v in enumerate(values) if v == value]
        checked += 1
    return checked


def test_pypaimon_built_global_indexes(tmp_path: Path) -> None:
    catalog = write_table(tmp_path, _data())
    for column in COLUMNS:
        pypaimon_index(catalog, column, "bitmap")
    pypaimon_index(catalog, "id", "btree")
    assert _check_bitmap_files(tmp_path) == 3


def test_pypaimon_rust_built_global_indexes(tmp_path: Path) -> None:
    write_table(tmp_path, _data())
    for column in COLUMNS:
        rust_index(tmp_path, column, "bitmap")
    assert _check_bitmap_files(tmp_path, typed_order=True) == 3


def test_java_written_btree_metadata(shared_fixtures: Path) -> None:
    table = shared_fixtures / "paimon-cpp/tables/parquet/pk_btree_e2e.db/pk_btree_e2e"
    metas = []
    for manifest in sorted((table / "manifest").glob("index-manifest-*")):
        with manifest.open("rb") as f:
            metas += [m for m in map(GlobalIndexMeta.from_entry, fastavro.reader(f)) if m is not None]
    assert {m.index_type for m in metas} == {"btree"} and len(metas) == 4
    for meta in metas:
        sorted_meta = meta.sorted_meta
        assert sorted_meta is not None and sorted_meta.to_bytes() == meta.index_meta
        assert not sorted_meta.has_nulls and meta.index_field_id == 1
        assert meta.source is None          # a primary-key index's source meta, not DEIX
    assert {(m.row_range_start, m.row_range_end) for m in metas} == {(0, 1999), (0, 0), (0, 2000)}
    assert {m.sorted_meta.first_key for m in metas if m.sorted_meta} == {b"\0\0\0\0", b"M\0\0\0"}

