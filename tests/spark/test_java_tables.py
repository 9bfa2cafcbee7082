"""Tables Java writes at test time (Paimon's own BatchWriteBuilder through the Java reference):
primary-key tables with deletion vectors (inserts, updates, deletes; DV mode compacts every
commit) and append tables whose deletion vectors come from Paimon's
AppendDeletionFileMaintainer; 10k rows, a partition column, 2 buckets, Parquet and ORC,
bitmap and bloom-filter indexes. Our reads (pyarrow, the `paimon` source, `read_table`) equal
Java's own read of the same table row for row; filters equal the filter applied after the
read while skipping files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from table_oracles import sql_filter

from paimon_schema import spark as ps_spark
from paimon_schema.spark import read_arrow
from paimon_schema.table.metadata import Table

FIELDS = [("id", "BIGINT"), ("name", "STRING"), ("score", "DOUBLE"), ("dt", "STRING")]
TYPES = [t for _, t in FIELDS]
N = 10_000
INDEXES = {"file-index.bitmap.columns": "name", "file-index.bloom-filter.columns": "id",
           "file-index.bloom-filter.id.items": "5000", "file-index.bloom-filter.id.fpp": "0.001"}
TABLES = ["pk_parquet", "pk_orc", "append_parquet", "append_orc"]


def _row(kind: str, i: int, score: float | None = None) -> tuple:
    return (kind, i, f"n{i % 50}", float(i % 97) if score is None else score,
            "d1" if i < N // 2 else "d2")


@pytest.fixture(scope="module")
def warehouse(java_reference: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The four tables and Java's read of each: {name: rows}."""
    from paimon_schema.selfcheck.reference.java import (
        decode_rows,
        delete_positions_request,
        read_table_request,
        run_table_ops,
        write_table_request,
    )

    root = tmp_path_factory.mktemp("java-warehouse")
    inserts = [_row("+I", i) for i in range(N)]
    updates = [_row("+U", i, -1.0) for i in range(0, N, 10)]
    deletes = [_row("-D", i) for i in range(3, N, 7)]
    requests = []
    for file_format in ("parquet", "orc"):
        requests.append(write_table_request(
            root, "db", f"pk_{file_format}", FIELDS, [inserts, updates, deletes],
            primary_keys=["dt", "id"], partition_keys=["dt"],
            options={"bucket": 2, "deletion-vectors.enabled": "true", "commit.force-compact": "true",
                     "file.format": file_format, **INDEXES}))
        requests.append(write_table_request(
            root, "db", f"append_{file_format}", FIELDS, [inserts[:N // 2], inserts[N // 2:]],
            partition_keys=["dt"],
            options={"bucket": 2, "bucket-key": "id", "deletion-vectors.enabled": "true",
                     "file.format": file_format, **INDEXES}))
    run_table_ops(java_reference, requests)
    requests = []
    for file_format in ("parquet", "orc"):
        name = f"append_{file_format}"
        files = {f.file_name: [p for p in range(f.row_count) if p % 5 == 1]
                 for f in Table.open(root / "db.db" / name).data_files()}
        requests.append(delete_positions_request(root, "db", name, files))
    requests += [read_table_request(root, "db", name) for name in TABLES]
    requests.append(read_table_request(root, "db", "pk_parquet", snapshot=2))
    responses = run_table_ops(java_reference, requests)
    reads = {name: decode_rows(r, TYPES) for name, r in zip(TABLES + ["pk_parquet@2"], responses[2:])}
    assert all(row[0] == "+I" for rows in reads.values() for row in rows)
    return root, {name: sorted(row[1:] for row in rows) for name, rows in reads.items()}


def _rows(table: Any) -> list[tuple]:
    items = table.to_pylist() if hasattr(table, "to_pylist") else [r.asDict() for r in table]
    return sorted(tuple(item[name] for name, _ in FIELDS) for item in items)


def test_tables_have_what_the_issue_asks(warehouse: tuple[Path, dict]) -> None:
    root, reads = warehouse
    for name in TABLES:
        table = Table.open(root / "db.db" / name)
        files = table.data_files()
        assert {f.partition_path for f in files} == {"dt=d1", "dt=d2"}
        assert {f.bucket for f in files} == {0, 1}
        assert {f.format for f in files} == {name.split("_")[1]}
        assert any(f.deletion_file for f in files)
        # this Paimon (1.0-SNAPSHOT) writes file indexes for append tables only
        assert all(f.index_stored for f in files) == name.startswith("append")
    expected_pk = {i for i in range(N) if i % 7 != 3}
    assert {row[0] for row in reads["pk_parquet"]} == expected_pk
    assert all(row[2] == -1.0 for row in reads["pk_parquet"] if row[0] % 10 == 0)
    assert len(reads["append_parquet"]) < N


@pytest.mark.parametrize("name", TABLES)
def test_pyarrow_read_equals_java(warehouse: tuple[Path, dict], name: str) -> None:
    root, reads = warehouse
    assert _rows(read_arrow(root / "db.db" / name)) == reads[name]


def test_time_travel_equals_java(warehouse: tuple[Path, dict]) -> None:
    root, reads = warehouse
    assert _rows(read_arrow(root / "db.db" / "pk_parquet", snapshot=2)) == reads["pk_parquet@2"]


@pytest.mark.parametrize("name", ["pk_parquet", "append_parquet"])
def test_paimon_rust_agrees(warehouse: tuple[Path, dict], name: str) -> None:
    from table_oracles import rust_read

    root, reads = warehouse
    assert _rows(rust_read(root / "db.db" / name)) == reads[name]


@pytest.mark.parametrize("name", TABLES)
def test_spark_paths_equal_java(spark: Any, warehouse: tuple[Path, dict], name: str) -> None:
    root, reads = warehouse
    path = str(root / "db.db" / name)
    assert _rows(spark.read.format("paimon").load(path).collect()) == reads[name]
    assert _rows(ps_spark.read_table(spark, path).collect()) == reads[name]


@pytest.mark.parametrize("where,append_skips,pk_skips", [
    # partition pruning (+ bitmap rows); min/max statistics: compacted primary-key files of
    # the updated rows (ids 0, 10, 20, ...) hold the names n0 .. n40 only
    ("name = 'n7' AND dt = 'd2'", 2, 6),
    ("id = 123456789", 4, 8),                # statistics (and bloom filter): no file has the id
    ("name = 'nope' OR id = 77777777", 4, 8),
    ("name IN ('n1', 'n2') AND score > 50", 0, 0),
])
@pytest.mark.parametrize("name", TABLES)
def test_filters_equal_java_then_filter(warehouse: tuple[Path, dict], name: str, where: str,
                                        append_skips: int, pk_skips: int) -> None:
    root, reads = warehouse
    path = root / "db.db" / name
    java = [dict(zip([n for n, _ in FIELDS], row)) for row in reads[name]]
    import pyarrow as pa

    expected = sql_filter(pa.Table.from_pylist(java, schema=read_arrow(path).schema), where)
    result, stats = read_arrow(path, where, with_stats=True)
    assert _rows(result) == _rows(expected)
    assert stats.files_skipped == (append_skips if name.startswith("append") else pk_skips)


def test_spark_filter_skips_files(spark: Any, warehouse: tuple[Path, dict]) -> None:
    root, reads = warehouse
    cases = [("pk_parquet", "name = 'n7' AND dt = 'd2'", 6, lambda r: r[1] == "n7" and r[3] == "d2"),
             ("append_orc", "id = 123456789 OR name = 'n3'", 0, lambda r: r[1] == "n3"),
             ("append_parquet", "id = 123456789", 4, lambda r: False)]
    for name, where, skipped, keep in cases:
        path = str(root / "db.db" / name)
        expected = [r for r in reads[name] if keep(r)]
        df, stats = ps_spark.read_table(spark, path, where, with_stats=True)
        assert _rows(df.collect()) == expected and stats.files_skipped == skipped
        assert _rows(spark.read.format("paimon").load(path).where(where).collect()) == expected


def test_readme_pipeline(spark: Any, java_reference: Any, tmp_path: Path, capsys: Any,
                         monkeypatch: Any) -> None:
    """`paimon-schema pipeline --keep DIR` (on the tests' session): both reads equal Java's and
    prune, and the table stays in DIR for `paimon-schema table`."""
    from paimon_schema.selfcheck import pipeline

    class SharedSession:                     # the session fixture outlives this run
        def __getattr__(self, name: str) -> Any:
            return getattr(spark, name)

        def stop(self) -> None:
            pass

    monkeypatch.setattr(pipeline, "spark_session", SharedSession)
    warehouse = tmp_path / "warehouse"
    assert pipeline.main(["--rows", "20000", "--keep", str(warehouse)]) == 0
    out = capsys.readouterr().out
    assert out.count("equal to Java's read") == 2 and "DIFFERENT" not in out
    pruned = re.findall(r"(\d+) of (\d+) files pruned", out)
    assert len(pruned) == 2 and all(0 < int(n) < int(total) for n, total in pruned)
    table = warehouse / "demo.db" / "orders"
    assert f"kept the table in {table}" in out
    files = Table.open(table).data_files()
    assert sum(f.row_count for f in files) == 20_000 and all(f.deletion_file for f in files)
    with pytest.raises(SystemExit):          # a second run would mix two tables: refused
        pipeline.main(["--rows", "20000", "--keep", str(warehouse)])
    assert "already holds demo.db/orders" in capsys.readouterr().err
