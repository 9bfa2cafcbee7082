"""`Table.scan`: what it will read (`files()`, `stats`, `schema`), the same rows whole
(`to_arrow`, pandas, polars, DuckDB) and streaming (`to_batches`, which opens files only as it
is consumed and holds batches of at most `batch_rows` rows); `read_arrow` stays an alias
(exported from `paimon_schema.table` and `paimon_schema.spark`); every table error is
`paimon_schema.TableError`."""

from __future__ import annotations

from pathlib import Path

import forged_tables as forge
import pyarrow as pa
import pytest
from table_oracles import rows

import paimon_schema as ps
from paimon_schema import spark as ps_spark
from paimon_schema.table import ReadStats, Table, TableError, TableScan, read_arrow

TYPES = {"id": "INT", "city": "STRING", "amount": "DOUBLE", "day": "STRING"}
CITIES = ["Lima", "Oslo", "Rome", "Kyiv"]


@pytest.fixture
def table(tmp_path: Path) -> tuple[Path, list[forge.ForgedFile]]:
    """1,000 rows in 2 partitions x 2 buckets, files of 200 rows in row groups of 50, a bitmap
    index on city, every 7th row deleted."""
    n = 1_000
    data = pa.table({"id": pa.array(range(n), pa.int32()),
                     "city": [CITIES[i % 4] for i in range(n)],
                     "amount": [float(i % 100) for i in range(n)],
                     "day": ["2024-05-01" if i < n // 2 else "2024-05-02" for i in range(n)]})
    root = tmp_path / "orders"
    files = forge.write_table(root, data, TYPES, partition_keys=["day"],
                              bucket_of=[i % 2 for i in range(n)], file_rows=200,
                              row_group_rows=50, indexes={"city": {"bitmap": {}}},
                              deleted=range(0, n, 7), value_stats=True)
    return root, files


def _expected(where: str | None = None) -> list[tuple]:
    n = 1_000
    out = []
    for i in range(n):
        row = {"id": i, "city": CITIES[i % 4], "amount": float(i % 100),
               "day": "2024-05-01" if i < n // 2 else "2024-05-02"}
        if i % 7 == 0:
            continue
        if where == "city = 'Lima' AND amount < 50" and not (row["city"] == "Lima" and row["amount"] < 50):
            continue
        out.append(tuple(row.values()))
    return sorted(out)


def test_whole_and_streaming_reads_agree(table: tuple[Path, list]) -> None:
    root, _ = table
    scan = Table.open(root).scan("city = 'Lima' AND amount < 50")
    whole = scan.to_arrow()
    assert sorted(tuple(r.values()) for r in whole.to_pylist()) == _expected("city = 'Lima' AND amount < 50")
    reader = scan.to_batches(batch_rows=32)
    assert isinstance(reader, pa.RecordBatchReader) and reader.schema == whole.schema
    batches = list(reader)
    assert len(batches) > 4 and all(0 < b.num_rows <= 32 for b in batches)
    assert rows(pa.Table.from_batches(batches)) == rows(whole)
    assert rows(Table.open(root).scan().to_batches().read_all()) == rows(Table.open(root).scan().to_arrow())


def test_files_stats_and_schema_say_what_is_read(table: tuple[Path, list]) -> None:
    root, files = table
    t = Table.open(root)
    scan = t.scan("day = '2024-05-02' AND city = 'Lima'", columns=["id", "amount"])
    assert scan.schema.names == ["id", "amount"]
    read = scan.files()       # Lima (id % 4 == 0) is in bucket 0 only: its bitmap prunes bucket 1
    assert {(f.partition_path, f.bucket) for f in read} == {("day=2024-05-02", 0)}
    assert isinstance(scan.stats, ReadStats)
    assert scan.stats.files == len(files) and scan.stats.files_read == len(read) == 2
    assert scan.stats.files_skipped_by_partition == 4 and scan.stats.files_skipped_by_index == 2
    assert scan.stats.rows_deleted == sum(len(f.deleted) for f in files
                                          if f.partition == ("2024-05-02",) and f.bucket == 0)
    assert scan.snapshot is not None and scan.snapshot.id == 1
    result = scan.to_arrow()
    assert result.column_names == ["id", "amount"]
    assert sorted(result.column("id").to_pylist()) == [
        i for i in range(500, 1000) if i % 4 == 0 and i % 7]


def test_batches_are_read_as_consumed(table: tuple[Path, list]) -> None:
    """The reader opens a file when it reaches it: a file removed after the first batch was
    read fails the read only when the reader gets there."""
    root, files = table
    reader = Table.open(root).scan().to_batches(batch_rows=50)
    first = reader.read_next_batch()
    assert first.num_rows > 0
    last = Table.open(root).scan().files()[-1]
    Path(last.path).unlink()
    with pytest.raises(TableError, match="does not exist"):
        reader.read_all()


def test_pandas_polars_duckdb(table: tuple[Path, list]) -> None:
    root, _ = table
    scan = Table.open(root).scan("city = 'Lima' AND amount < 50", columns=["id", "city"])
    expected = sorted(r[0] for r in _expected("city = 'Lima' AND amount < 50"))
    assert sorted(scan.to_pandas()["id"].tolist()) == expected
    assert sorted(scan.to_polars()["id"].to_list()) == expected
    duckdb = pytest.importorskip("duckdb")
    con = scan.to_duckdb(duckdb.connect(), "orders")
    assert [r[0] for r in con.sql("SELECT id FROM orders ORDER BY id").fetchall()] == expected
    assert scan.to_duckdb().sql("SELECT count(*) FROM paimon").fetchall() == [(len(expected),)]


def test_read_arrow_is_an_alias(table: tuple[Path, list]) -> None:
    root, _ = table
    where = "city = 'Lima' AND amount < 50"
    assert ps_spark.read_arrow is read_arrow
    assert rows(read_arrow(root, where)) == rows(Table.open(root).scan(where).to_arrow())
    result, stats = read_arrow(root, where, with_stats=True)
    timeless = {**TableScan(root, where).stats.as_dict(), "planning_seconds": None}
    assert {**stats.as_dict(), "planning_seconds": None} == timeless
    assert result.num_rows == len(_expected(where))


def test_errors_are_exported_at_the_top(table: tuple[Path, list], tmp_path: Path) -> None:
    root, _ = table
    assert issubclass(ps.CommitConflict, ps.TableError)
    with pytest.raises(ps.TableError, match="does not exist"):
        Table.open(tmp_path / "nowhere")
    with pytest.raises(ps.TableError, match="snapshot 9 does not exist"):
        Table.open(root).scan(snapshot=9)
    with pytest.raises(ps.SchemaError):
        Table.open(root).scan("amount < 'x'").to_arrow()


def test_as_of_takes_millis_datetimes_and_iso_text(table: tuple[Path, list]) -> None:
    """The forged table's one snapshot was committed at epoch millisecond 0."""
    import datetime as dt

    root, _ = table
    t = Table.open(root)
    utc = dt.timezone.utc
    for moment in (0, dt.datetime(1970, 1, 1, tzinfo=utc), "1970-01-01T00:00:00.500+00:00", "5"):
        scan = t.scan(as_of=moment)
        assert scan.snapshot is not None and scan.snapshot.id == 1
    with pytest.raises(ps.TableError, match="no snapshot earlier than or equal to timestamp -1"):
        t.scan(as_of=dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=utc))
    with pytest.raises(ps.TableError, match="neither epoch milliseconds nor an ISO timestamp"):
        t.scan(as_of="yesterday")
