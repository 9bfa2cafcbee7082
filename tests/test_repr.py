"""Readable reprs: what a reader, a parsed file or a table holds, in one line, without dumping
bytes or decoding bitmaps (a container's repr was its blobs' bytes, a reader's its address)."""

from __future__ import annotations

from pathlib import Path

import paimon_schema as ps


def test_index_readers() -> None:
    def reader(index_type: str, data_type: str, values: list, **opts: object) -> str:
        return repr(ps.open_index(index_type, ps.build_index(index_type, data_type, values, **opts),
                                  data_type))

    assert reader("bitmap", "INT", [1, 2, None, 1]) == \
        "<BitmapIndexReader V2 INT: 4 rows, 2 keys, with nulls>"
    assert reader("bitmap", "STRING", ["a"], version=1) == "<BitmapIndexReader V1 STRING: 1 row, 1 key>"
    assert reader("bloom-filter", "BIGINT", [1, 2], items=100, fpp=0.01) == \
        "<BloomFilterIndexReader BIGINT: 960 bits, 7 hash functions>"
    assert reader("bsi", "BIGINT", [1, -5, None]) == "<BsiIndexReader BIGINT: 3 rows, 1 null>"
    assert reader("range-bitmap", "STRING", ["b", "a", None]) == \
        "<RangeBitmapIndexReader STRING: 3 rows, 2 keys, 'a'..'b'>"
    assert reader("range-bitmap", "DATE", [None]) == "<RangeBitmapIndexReader DATE: 1 row, 0 keys>"


def test_parsed_files() -> None:
    blob = ps.build_index("bitmap", "INT", list(range(1000)))
    container = ps.FileIndexFile.parse(ps.write_file_index({"a": {"bitmap": blob, "x": None},
                                                            "b": {"bsi": b"\x01"}}))
    assert repr(container) == (f"<FileIndexFile a: bitmap ({len(blob)} bytes), x (empty); "
                               f"b: bsi (1 bytes)>")
    data, _ = ps.write_deletion_vectors({"f": range(0, 300, 3), "g": [7]})
    dv = ps.DeletionVectorFile.parse(data)
    assert repr(dv) == "<DeletionVectorFile v1: 2 bins, 101 deleted rows>"
    assert repr(dv.bins[1]).endswith("32-bit: 1 deleted row>")


def test_table(tmp_path: Path) -> None:
    from paimon_schema.table import Table

    (tmp_path / "t" / "schema").mkdir(parents=True)
    assert repr(Table.open(tmp_path / "t")) == f"<Table {tmp_path / 't'}>"
