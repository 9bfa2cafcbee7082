"""`read_table` builds each Parquet scan with one py4j call (`KeepRows.scan`), its schema read
from a footer by `KeepRows.fileSchema` instead of Spark's inference job, and still drops
exactly the rows the Python-side filter (`read_arrow`) drops: files with and without deletion
vectors in one table, files of one size (keyed by file name), files of one name and size,
projections and filters (pruned by min/max and a bitmap index)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from py4j.protocol import MEMORY_COMMAND_NAME, MEMORY_DEL_SUBCOMMAND_NAME
from pyspark.sql.types import StructType

from paimon_schema.spark import jvm_filter, native, read_arrow, read_table

import forged_tables as forge

FILE_ROWS, PARTS = 100, "abc"
N = FILE_ROWS * 2 * len(PARTS)
#: files 0 (a), 2 (b), 5 (c) lose rows (word boundaries, a scattering, all but one);
#: files 1, 3, 4 have no deletion vector
DELETED = [0, 63, 64, 127 % FILE_ROWS, 99] + [200 + i for i in range(0, 100, 7)] + \
    [500 + i for i in range(1, 100)]


def _row(i: int) -> dict:
    """Partitions a and b hold identical files but for the partition value (one size, so the
    filter keys on file names); partition c's files differ in size."""
    part = PARTS[i // (2 * FILE_ROWS)]
    j = i % (2 * FILE_ROWS) if part != "c" else i
    return {"k": j, "v": float(j % 9), "tag": j % 5, "p": part}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scan") / "t"
    rows = [_row(i) for i in range(N)]
    data = pa.table({name: [r[name] for r in rows] for name in ("k", "v", "tag", "p")},
                    schema=pa.schema([("k", pa.int64()), ("v", pa.float64()), ("tag", pa.int32()),
                                      ("p", pa.string())]))
    files = forge.write_table(root, data, {"k": "BIGINT", "v": "DOUBLE", "tag": "INT", "p": "STRING"},
                              partition_keys=["p"], file_rows=FILE_ROWS, deleted=DELETED,
                              indexes={"tag": {"bitmap": {}}}, value_stats=True)
    assert len(files) == 6 and sum(bool(f.deleted) for f in files) == 3
    sizes = [f.path.stat().st_size for f in files if f.deleted]
    assert len(set(sizes)) < len(sizes)         # the files that lose rows share a size
    return root


def _kept() -> list[dict]:
    deleted = set(DELETED)
    return [_row(i) for i in range(N) if i not in deleted]


def _sorted(rows: Any, columns: list[str]) -> list[tuple]:
    rows = rows.to_pylist() if isinstance(rows, pa.Table) else [r.asDict() for r in rows]
    return sorted(tuple(r[c] for c in columns) for r in rows)


def _plan(df: Any) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


#: the start of py4j's command releasing a collected proxy
_RELEASE = MEMORY_COMMAND_NAME + MEMORY_DEL_SUBCOMMAND_NAME


class _Calls:
    """Counts py4j round trips and `KeepRows.scan` calls."""

    def __init__(self, spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.py4j = self.scans = 0
        client = type(spark.sparkContext._gateway._gateway_client)
        send, scan = client.send_command, jvm_filter.Helper.scan

        def counted_send(gateway: Any, command: str, *args: Any, **kwargs: Any) -> Any:
            # a collected proxy's release ("m", "d": py4j's memory-delete) is bookkeeping that
            # lands whenever the collector runs, not a round trip of the read
            self.py4j += not command.startswith(_RELEASE)
            return send(gateway, command, *args, **kwargs)

        def counted_scan(helper: Any, *args: Any, **kwargs: Any) -> Any:
            self.scans += 1
            return scan(helper, *args, **kwargs)

        monkeypatch.setattr(client, "send_command", counted_send)
        monkeypatch.setattr(jvm_filter.Helper, "scan", counted_scan)


def test_a_scan_is_one_py4j_call_and_exact(spark: Any, table: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    read_table(spark, table)                    # the jar is loaded once per context
    calls = _Calls(spark, monkeypatch)
    df = read_table(spark, table)
    # the footer, two scans (files with vectors, files without), their union
    assert calls.scans == 2 and calls.py4j <= 10, (calls.scans, calls.py4j)
    columns = ["k", "v", "tag", "p"]
    assert _sorted(df.collect(), columns) == _sorted(pa.Table.from_pylist(_kept()), columns)
    assert _sorted(read_arrow(table), columns) == _sorted(df.collect(), columns)
    plan = _plan(df)
    # files 0 and 2 share a size: their rows are told by name, file 5's by size
    assert "CASE WHEN (_metadata" in plan and "THEN UDF(_metadata#" in plan and "BroadcastHashJoin" not in plan
    assert ".file_name, " in plan and ".file_size, " in plan


@pytest.mark.parametrize("where", [None, "k >= 60 AND k <= 70", "tag = 3", "p = 'c' AND k > 550",
                                   "p = 'b' OR v > 6.0"])
@pytest.mark.parametrize("columns", [None, ["v", "k"], ["p"]])
def test_filters_and_projections_keep_what_the_python_filter_keeps(
        spark: Any, table: Path, where: str | None, columns: list[str] | None) -> None:
    names = columns or ["k", "v", "tag", "p"]
    expected = read_arrow(table, where, columns=columns)
    assert expected.column_names == names
    df = read_table(spark, table, where, columns=columns)
    assert df.columns == names
    assert _sorted(df.collect(), names) == _sorted(expected, names)
    if where is None:
        assert len(df.collect()) == len(_kept())


def test_without_the_footer_spark_infers_the_schema(spark: Any, table: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A footer KeepRows cannot read leaves the schema to Spark's inference; rows are the same."""
    helper = jvm_filter.helper(spark)
    assert helper is not None
    assert helper.file_schema(spark, "file://" + str(table / "schema" / "schema-0")) is None
    expected = _sorted(read_table(spark, table).collect(), ["k", "v", "tag", "p"])
    monkeypatch.setattr(jvm_filter.Helper, "file_schema", lambda *args: None)
    assert _sorted(read_table(spark, table).collect(), ["k", "v", "tag", "p"]) == expected


def test_files_of_one_name_and_size_go_to_scans_by_size(spark: Any, table: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Names tell files apart only within a directory: files that share a name and a size are
    split into scans whose files differ in size (were the names used, the renamed files'
    rows would not be dropped)."""
    plan_read = native.plan_read

    def one_name(*args: Any, **kwargs: Any) -> Any:
        plan = plan_read(*args, **kwargs)
        plan.tasks = [dataclasses.replace(t, file_name="data-same.parquet") for t in plan.tasks]
        return plan

    monkeypatch.setattr(native, "plan_read", one_name)
    calls = _Calls(spark, monkeypatch)
    df = read_table(spark, table)
    assert calls.scans >= 3
    columns = ["k", "v", "tag", "p"]
    assert _sorted(df.collect(), columns) == _sorted(pa.Table.from_pylist(_kept()), columns)
    assert "file_name" not in _plan(df) and "file_size" in _plan(df)


def test_files_of_one_size_without_dropped_rows_keep_them(spark: Any, table: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Where only a file of its own size loses rows, the filter keys on sizes alone and the
    files that share a size keep every row."""
    dropped_rows = native._dropped_rows
    monkeypatch.setattr(native, "_dropped_rows", lambda tasks: {
        path: mask for path, mask in dropped_rows(tasks).items() if "/p=c/" in path})
    df = read_table(spark, table)
    kept = [_row(i) for i in range(N) if i < 4 * FILE_ROWS or i not in set(DELETED)]
    columns = ["k", "v", "tag", "p"]
    assert _sorted(df.collect(), columns) == _sorted(pa.Table.from_pylist(kept), columns)
    assert "file_name" not in _plan(df) and "UDF(_metadata#" in _plan(df)


def _parquet_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.parquet") if p.is_file())


def test_file_schema_is_what_spark_infers(spark: Any, table: Path, shared_fixtures: Path) -> None:
    """For every Parquet file of the fixtures (Java, paimon-cpp and Rust writers: timestamps,
    decimals, nested types) and of a forged table, the schema KeepRows reads from the footer
    is the one `spark.read.parquet` infers."""
    helper = jvm_filter.helper(spark)
    assert helper is not None
    files = _parquet_files(shared_fixtures) + _parquet_files(table)
    assert len(files) > 20
    for path in files:
        uri = "file://" + str(path)
        ours = helper.file_schema(spark, uri)
        assert ours is not None, path
        inferred = spark.read.parquet(uri).schema
        assert StructType.fromJson(json.loads(ours)) == inferred, path
