"""`table.parquet_footer.dictionary_columns`: which columns a read may take as Arrow
dictionaries, from the footer's page encoding statistics."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_schema.table import parquet_footer
from paimon_schema.table.parquet_footer import dictionary_columns


def _metadata(path: Path, table: pa.Table, **options: object) -> pq.FileMetaData:
    pq.write_table(table, path, **options)
    return pq.ParquetFile(path).metadata


def test_dictionary_pages_only(tmp_path: Path) -> None:
    n = 5_000
    table = pa.table({"few": [f"v{i % 7}" for i in range(n)],
                      "unique": [f"value-{i:010d}" for i in range(n)],
                      "num": pa.array([i % 3 for i in range(n)], pa.int64()),
                      "nested": pa.array([{"x": f"n{i % 2}", "y": i} for i in range(n)])})
    metadata = _metadata(tmp_path / "a.parquet", table, dictionary_pagesize_limit=2048,
                         write_batch_size=256)
    # `unique` outgrows the 2 KiB dictionary and falls back to PLAIN pages
    assert dictionary_columns(metadata) == {"few", "num", "nested.x"}
    plain = _metadata(tmp_path / "b.parquet", table, use_dictionary=False)
    assert dictionary_columns(plain) == frozenset()
    some = _metadata(tmp_path / "c.parquet", table, use_dictionary=["few"])
    assert dictionary_columns(some) == {"few"}


def test_every_row_group_must_be_dictionary_encoded(tmp_path: Path) -> None:
    """A column that falls back in one row group only is not read as a dictionary."""
    values = [f"v{i % 5}" for i in range(3_000)] + [f"value-{i:012d}" for i in range(3_000)]
    metadata = _metadata(tmp_path / "a.parquet", pa.table({"s": values}), row_group_size=3_000,
                         dictionary_pagesize_limit=4096, write_batch_size=256)
    assert metadata.num_row_groups == 2
    assert dictionary_columns(metadata) == frozenset()
    first = _metadata(tmp_path / "b.parquet", pa.table({"s": values[:3_000]}))
    assert dictionary_columns(first) == {"s"}


def test_empty_file_and_unexpected_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pq.ParquetWriter(tmp_path / "a.parquet", pa.schema([("s", pa.string())])):
        pass                                                     # no row group at all
    empty = pq.ParquetFile(tmp_path / "a.parquet").metadata
    assert empty.num_row_groups == 0 and dictionary_columns(empty) == frozenset()
    metadata = _metadata(tmp_path / "b.parquet", pa.table({"s": ["a", "b", "a"]}))
    assert dictionary_columns(metadata) == {"s"}
    footer = parquet_footer._footer_bytes(metadata)
    for broken in (footer[:len(footer) // 2], b"\x1f" * 40, b"\x19\xfc" + footer, b""):
        monkeypatch.setattr(parquet_footer, "_footer_bytes", lambda _, data=broken: data)
        assert dictionary_columns(metadata) == frozenset()      # read the dense way


def test_java_written_files(shared_fixtures: Path) -> None:
    """parquet-mr (Paimon's writer) writes the statistics too: Java's tables take the path."""
    folder = (shared_fixtures / "paimon-cpp" / "tables" / "parquet" / "append_with_bitmap.db"
              / "append_with_bitmap" / "bucket-0")
    files = sorted(folder.glob("*.parquet"))
    assert files
    for path in files:
        metadata = pq.ParquetFile(path).metadata
        assert metadata.created_by.startswith("parquet-mr")
        with_dictionary = {metadata.row_group(0).column(i).path_in_schema
                           for i in range(metadata.num_columns)
                           if metadata.row_group(0).column(i).has_dictionary_page}
        assert "f0" in dictionary_columns(metadata) <= with_dictionary
