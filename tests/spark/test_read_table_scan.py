"""`read_table` builds each Parquet scan with one py4j call (`KeepRows.scan`), its schema read
from a footer by `KeepRows.fileSchema` instead of Spark's inference job, and still drops
exactly the rows the Python-side filter (`read_arrow`) drops: files with and without deletion
vectors in one table, files of one size, files of one name in different directories,
projections and filters (pruned by min/max and a bitmap index). The filter reads the row
index alone (the column Spark's Parquet reader fills), and a scan given the manifests' file
sizes lists no file (no Spark job, however many files)."""

from __future__ import annotations

import dataclasses
import json
import uuid
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
    """Partitions a and b hold identical files but for the partition value (one size);
    partition c's files differ in size."""
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
    # files 0 and 2 share a size: no matter, the filter's argument is the row index alone
    assert "Filter UDF(_tmp_metadata_row_index#" in plan and "BroadcastHashJoin" not in plan
    assert "_metadata" not in plan.replace("_tmp_metadata_row_index", "")


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


def test_files_of_one_name_in_other_directories_are_told_apart(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every partition's files have the same names (and partitions a and b the same sizes):
    the filter keys on a file's whole URI, so each file loses its own rows, in one scan."""
    monkeypatch.setattr(forge.uuid, "uuid4", lambda: uuid.UUID(int=7))
    rows = [_row(i) for i in range(N)]
    data = pa.table({name: [r[name] for r in rows] for name in ("k", "v", "tag", "p")},
                    schema=pa.schema([("k", pa.int64()), ("v", pa.float64()), ("tag", pa.int32()),
                                      ("p", pa.string())]))
    files = forge.write_table(tmp_path / "t", data, {"k": "BIGINT", "v": "DOUBLE", "tag": "INT",
                                                     "p": "STRING"},
                              partition_keys=["p"], file_rows=FILE_ROWS, deleted=DELETED)
    assert len({f.path.name for f in files}) == 2 and len(files) == 6
    monkeypatch.undo()
    calls = _Calls(spark, monkeypatch)
    df = read_table(spark, tmp_path / "t")
    assert calls.scans == 2                     # files with vectors, files without
    columns = ["k", "v", "tag", "p"]
    assert _sorted(df.collect(), columns) == _sorted(pa.Table.from_pylist(_kept()), columns)


def test_a_scan_given_the_sizes_lists_no_file(spark: Any, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """40 files (Spark lists more than 32 paths with a Spark job): building the read runs no
    job; without the manifests' sizes Spark lists them, and the rows are the same."""
    rows = 40 * 10
    data = pa.table({"k": pa.array(range(rows), pa.int64())})
    forge.write_table(tmp_path / "t", data, {"k": "BIGINT"}, file_rows=10,
                      deleted=list(range(0, rows, 3)))
    context = spark.sparkContext

    def jobs_of(group: str, build: Any) -> tuple[int, list[int]]:
        context.setJobGroup(group, group)
        try:
            df = build()
        finally:
            context.setJobGroup("", "")
        return len(context.statusTracker().getJobIdsForGroup(group)), sorted(
            r.k for r in df.collect())

    expected = [k for k in range(rows) if k % 3]
    assert jobs_of("given-sizes", lambda: read_table(spark, tmp_path / "t")) == (0, expected)
    plan_read = native.plan_read

    def unknown_sizes(*args: Any, **kwargs: Any) -> Any:
        plan = plan_read(*args, **kwargs)
        plan.tasks = [dataclasses.replace(t, file_size=0) for t in plan.tasks]
        return plan

    monkeypatch.setattr(native, "plan_read", unknown_sizes)
    listed, rows_listed = jobs_of("listed", lambda: read_table(spark, tmp_path / "t"))
    assert listed >= 1 and rows_listed == expected


def test_a_file_column_named_like_the_row_index_column(spark: Any, tmp_path: Path) -> None:
    """Spark gives no row index beside a file column of the row-index column's name: such files
    that lose rows are read with pyarrow in Spark tasks, and the column is read as data."""
    name = native.ROW_INDEX_COLUMN
    data = pa.table({"k": pa.array(range(100), pa.int64()), name: pa.array([-1] * 100, pa.int64())})
    forge.write_table(tmp_path / "t", data, {"k": "BIGINT", name: "BIGINT"}, file_rows=50,
                      deleted=[0, 1, 70])
    df = read_table(spark, tmp_path / "t")
    assert sorted((r.k, r[name]) for r in df.collect()) == [(k, -1) for k in range(100)
                                                           if k not in (0, 1, 70)]
    assert "MapInArrow" in _plan(df) and "UDF" not in _plan(df)


def test_files_without_dropped_rows_keep_them(spark: Any, table: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of a filtered scan whose payload bitmap is empty keep every row (here the files
    of partitions a and b, which share a size)."""
    dropped_rows = native._dropped_rows
    monkeypatch.setattr(native, "_dropped_rows", lambda tasks: {
        path: mask for path, mask in dropped_rows(tasks).items() if "/p=c/" in path})
    df = read_table(spark, table)
    kept = [_row(i) for i in range(N) if i < 4 * FILE_ROWS or i not in set(DELETED)]
    columns = ["k", "v", "tag", "p"]
    assert _sorted(df.collect(), columns) == _sorted(pa.Table.from_pylist(kept), columns)
    assert "UDF(_tmp_metadata_row_index#" in _plan(df)


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


@pytest.mark.parametrize("vectorized", ["true", "false"])
def test_files_split_across_tasks_and_the_row_reader(spark: Any, tmp_path: Path,
                                                     vectorized: str) -> None:
    """Files of several row groups split into many Spark partitions (a split's rows start
    mid-file; the scan names the file again for each split), read by the vectorized reader and
    by parquet-mr's row reader: every row is still tested against its own file's rows."""
    rows = 4000
    data = pa.table({"k": pa.array(range(rows), pa.int64()),
                     "v": pa.array([float(i % 13) for i in range(rows)])})
    deleted = [i for i in range(rows) if i % 7 == 0 or 1500 <= i < 1800]
    forge.write_table(tmp_path / "t", data, {"k": "BIGINT", "v": "DOUBLE"}, file_rows=2000,
                      deleted=deleted, row_group_rows=250)
    settings = {"spark.sql.files.maxPartitionBytes": "2048", "spark.sql.files.openCostInBytes": "0",
                "spark.sql.parquet.enableVectorizedReader": vectorized}
    before = {key: spark.conf.get(key) for key in settings}
    try:
        for key, value in settings.items():
            spark.conf.set(key, value)
        df = read_table(spark, tmp_path / "t")
        assert df.rdd.getNumPartitions() > 4
        assert sorted(r.k for r in df.collect()) == sorted(set(range(rows)) - set(deleted))
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)


def test_a_payload_missing_a_file_raises(spark: Any, table: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of a filtered scan without its entry in the payload (as where the driver keyed
    it differently) fails the read, naming its key, rather than keeping its rows; so does an
    entry for a file the scan does not read."""
    from pyspark.errors import IllegalArgumentException

    payload = native._payload
    missing: list[str] = []

    def without_first(tasks: list[Any], dropped: dict[str, Any]) -> bytes:
        missing.append(native._uri(tasks[0]))
        return payload(tasks[1:], dropped)

    monkeypatch.setattr(native, "_payload", without_first)
    with pytest.raises(IllegalArgumentException, match="no entry for the scan's file") as raised:
        read_table(spark, table).collect()
    assert missing[0].removeprefix("file://") in str(raised.value)

    def with_another(tasks: list[Any], dropped: dict[str, Any]) -> bytes:
        other = dataclasses.replace(tasks[0], path=tasks[0].path + ".other")
        return payload([*tasks, other], dropped)

    monkeypatch.setattr(native, "_payload", with_another)
    with pytest.raises(IllegalArgumentException, match=r"\.parquet\.other is not among the scan's"):
        read_table(spark, table).collect()


def test_the_filter_raises_on_a_file_it_has_no_entry_for(spark: Any, table: Path) -> None:
    """On the executor, a row of a file the payload does not name (the driver and the scan
    spelling its URI differently) is an error naming the file's key; a named file keeps or drops
    its own rows, an empty bitmap keeps every row."""
    from py4j.protocol import Py4JJavaError

    from paimon_schema.table.merge import plan_read

    tasks = [t for t in plan_read(table).tasks if t.deletion_file is not None]
    lost, kept = tasks[0], tasks[1]
    rows = native._dropped_rows([lost])[lost.path]
    payload = native._payload([lost, kept], {lost.path: rows})
    jvm_filter._load(spark)                     # this thread's JVM thread sees the class
    jvm = spark._jvm
    holder = jvm.org.apache.spark.rdd.InputFileBlockHolder
    keep = jvm.io.paimonschema.spark.KeepRows(payload)
    try:
        holder.set(native._uri(lost), 0, 0)
        assert [keep.call(i) for i in range(FILE_ROWS)] == [not r for r in rows]
        holder.set(native._uri(kept), 0, 0)
        assert all(keep.call(i) for i in range(FILE_ROWS))
        other = str(table / "bucket-0" / "elsewhere.parquet")
        holder.set("file:" + other, 0, 0)
        with pytest.raises(Py4JJavaError, match="is not among the payload's 2 files") as raised:
            keep.call(0)
        assert other in str(raised.value)
    finally:
        holder.unset()


@pytest.mark.parametrize("directory", ["with space", "per%25cent%", "hash#tag?q", "caf\u00e9 \u6771\u4eac"])
def test_paths_that_url_escape_keep_their_keys(spark: Any, tmp_path: Path, directory: str) -> None:
    """A table under a directory whose name URL-escapes (space, `%`, `#`, non-ASCII): the
    driver's key of each file (from its URI) is the key of the file the scan reads, so every
    file finds its own entry (a mismatch would raise) and loses exactly its rows."""
    rows = [_row(i) for i in range(N)]
    data = pa.table({name: [r[name] for r in rows] for name in ("k", "v", "tag", "p")},
                    schema=pa.schema([("k", pa.int64()), ("v", pa.float64()), ("tag", pa.int32()),
                                      ("p", pa.string())]))
    root = tmp_path / directory / "t"
    forge.write_table(root, data, {"k": "BIGINT", "v": "DOUBLE", "tag": "INT", "p": "STRING"},
                      partition_keys=["p"], file_rows=FILE_ROWS, deleted=DELETED)
    df = read_table(spark, root)
    columns = ["k", "v", "tag", "p"]
    assert _sorted(df.collect(), columns) == _sorted(pa.Table.from_pylist(_kept()), columns)
    assert "UDF(_tmp_metadata_row_index#" in _plan(df)
