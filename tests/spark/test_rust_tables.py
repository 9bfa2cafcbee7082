"""A data-evolution append table written at test time by pypaimon 2.1.0 with pypaimon-rust's
native writer (bitmap V2, bloom-filter, BSI and range-bitmap sidecars) and deletion vectors
from `delete_by_row_id`: our reads equal pypaimon-rust's own read, filters equal the filter
applied after the read while skipping files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from table_oracles import oracle_unavailable, rows, rust_read, sql_filter

from paimon_schema import spark as ps_spark
from paimon_schema.spark import read_arrow
from paimon_schema.table.metadata import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import rust_writer  # noqa: E402

N = 12_000
INDEXES = {"bitmap": {"name": {}}, "bloom-filter": {"id": {"items": "40000"}},
           "bsi": {"v": {}}, "range-bitmap": {"score": {}}}


def _chunk(start: int, prefix: str) -> pa.Table:
    ids = range(start, start + N)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([f"{prefix}{i % 50}" for i in ids]),
                     "v": pa.array([start // 12 + i % 1000 for i in ids], pa.int32()),
                     "score": pa.array([start / 100 + i % 97 for i in ids])})


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12k rows in one commit, 12k more in three files, every 4th row of the first deleted."""
    try:
        rust_writer.require()
    except rust_writer.RustWriterUnavailable as exc:
        oracle_unavailable(str(exc))
    import pypaimon_rust.datafusion as native

    warehouse = tmp_path_factory.mktemp("rust-warehouse")
    rust_writer.write_table(_chunk(0, "n"), warehouse, INDEXES,
                            {"deletion-vectors.enabled": "true", "target-file-size": "16kb"})
    table = native.PaimonCatalog({"warehouse": str(warehouse)}).get_table("oracle.t")
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    for batch in _chunk(N, "m").to_batches(max_chunksize=4_000):
        write.write_arrow(batch)
    builder.new_commit().commit(write.prepare_commit())
    write.close()
    builder = table.new_batch_write_builder()
    builder.new_commit().commit(builder.new_update().delete_by_row_id(list(range(0, N, 4))))
    return warehouse / "oracle.db" / "t"


def test_layout(table_dir: Path) -> None:
    files = Table.open(table_dir).data_files()
    assert len(files) == 4 and all(f.index_stored and f.index_stored != "embedded" for f in files)
    assert sum(1 for f in files if f.deletion_file) == 1
    assert [f.first_row_id for f in sorted(files, key=lambda f: f.first_row_id)] == [0, 12_000, 16_000, 20_000]


def test_reads_equal_paimon_rust(spark: Any, table_dir: Path) -> None:
    expected = rust_read(table_dir)
    ours = read_arrow(table_dir)
    assert ours.num_rows == 2 * N - N // 4
    assert rows(ours) == rows(expected.cast(ours.schema))
    assert rows(spark.read.format("paimon").load(str(table_dir)).collect()) == rows(ours)
    assert rows(ps_spark.read_table(spark, table_dir).collect()) == rows(ours)


@pytest.mark.parametrize("where,skipped", [
    ("v = 1005", 1),                          # BSI
    ("name = 'm7'", 1),                       # bitmap
    ("score > 200", 1),                       # range-bitmap
    ("id = 40000000", 4),                     # bloom filter
    ("id = 8 OR name = 'n9'", 3),
    ("v BETWEEN 10 AND 12 AND score < 50", 3),
])
def test_filters(table_dir: Path, where: str, skipped: int) -> None:
    full = rust_read(table_dir)
    result, stats = read_arrow(table_dir, where, with_stats=True)
    assert rows(result) == rows(sql_filter(full, where).cast(result.schema))
    assert stats.files_skipped == skipped
