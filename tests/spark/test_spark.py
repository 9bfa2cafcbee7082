"""The Spark glue on one local session: every fixture table through the `paimon` data source
and through `read_table` (Spark's Parquet scan) equals the pyarrow merge-on-read row for row;
filters (pushed to the source, or given to `read_table`) prune files and stay exact; the index
sources show what the index files hold."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import forged_tables as forge
import pyarrow as pa
import pytest
from table_oracles import FIXTURE_TABLES, fixture_table, rows

from paimon_schema import spark as ps_spark
from paimon_schema.spark import read_arrow
from paimon_schema.table.arrow_types import spark_arrow_schema, to_spark_arrow
from paimon_schema.table.metadata import Table


def spark_typed(table: pa.Table, path: Path, snapshot: int | None = None) -> pa.Table:
    """A `read_arrow` result in the types Spark returns (timestamps in microseconds)."""
    schema = Table.open(path)
    target = spark_arrow_schema(schema.schema(None if snapshot is None else schema.snapshot(snapshot).schema_id))
    target = pa.schema([target.field(n) for n in table.schema.names])
    return pa.table([to_spark_arrow(c, f.type) for c, f in zip(table.columns, target)], schema=target)


def source(spark: Any, path: Path, **options: str) -> Any:
    reader = spark.read.format("paimon")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_both_paths_equal_the_pyarrow_read(spark: Any, fixture_tables: Path, name: str) -> None:
    path = fixture_table(fixture_tables, name)
    expected = rows(spark_typed(read_arrow(path), path))
    assert rows(source(spark, path).collect()) == expected
    assert rows(ps_spark.read_table(spark, path).collect()) == expected


def test_time_travel_on_both_paths(spark: Any, fixture_tables: Path) -> None:
    path = fixture_table(fixture_tables, "pk_table_with_alter_table")
    expected = rows(spark_typed(read_arrow(path, snapshot=2), path, 2))
    df = source(spark, path, snapshot="2")
    assert df.columns == ["key0", "key1", "key2", "a", "b", "c", "d", "k"]
    assert rows(df.collect()) == expected
    assert rows(ps_spark.read_table(spark, path, snapshot=2).collect()) == expected


SPARK_FILTERS = [
    ("append_with_bitmap", "f0 = 'Nobody'", 1),
    ("append_with_bitmap_alter_table", "f4 = 'David'", 1),
    ("append_with_bitmap_alter_table", "f1 >= 20 AND f5 IS NULL", 0),
    ("append_with_bsi", "f1 > 400 OR f2 < -2", 0),
    ("append_with_bloomfilter", "f3 = 0.0", 1),
    ("append_with_rangebitmap", "f2 <= 2.2", 0),                # FLOAT vs decimal literal
    ("append_with_rangebitmap", "f4 > DATE '2024-01-20'", 1),
    ("pk_with_bitmap_dv", "f0 = 'Lucy'", 1),
    ("pk_table_scan_and_read_dv", "f1 = 20", 3),
    ("pk_table_with_alter_table", "key0 = 0 AND c > 10", 2),
]


@pytest.mark.parametrize("name,where,skipped", SPARK_FILTERS)
def test_filters_are_exact_and_prune(spark: Any, fixture_tables: Path, name: str, where: str,
                                     skipped: int) -> None:
    path = fixture_table(fixture_tables, name)
    expected = rows(spark_typed(read_arrow(path, where), path))
    assert rows(source(spark, path).where(where).collect()) == expected
    df, stats = ps_spark.read_table(spark, path, where, with_stats=True)
    assert rows(df.collect()) == expected
    assert stats.files_skipped == skipped


@pytest.fixture(scope="module")
def big_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """12k rows, 2 partitions x 2 buckets, 12 files, bitmap + BSI indexes, a third deleted."""
    n = 12_000
    data = pa.table({"k": pa.array(range(n), pa.int64()),
                     "name": pa.array([f"n{i % 50}" for i in range(n)]),
                     "score": pa.array([float(i % 97) for i in range(n)]),
                     "dt": pa.array(["2024-01-01" if i < n // 2 else "2024-01-02" for i in range(n)])})
    root = tmp_path_factory.mktemp("big") / "t"
    files = forge.write_table(root, data, {"k": "BIGINT", "name": "STRING", "score": "DOUBLE", "dt": "STRING"},
                              partition_keys=["dt"], bucket_of=[i % 2 for i in range(n)],
                              file_rows=1_000, indexes={"k": {"bsi": {}}, "name": {"bitmap": {}}},
                              deleted=[i for i in range(n) if i % 3 == 1], row_group_rows=400)
    return root, files


def test_big_table_both_paths(spark: Any, big_table: tuple[Path, list]) -> None:
    root, files = big_table
    expected = rows(spark_typed(read_arrow(root), root))
    assert len(expected) == 8_000
    assert rows(source(spark, root).collect()) == expected
    assert rows(ps_spark.read_table(spark, root).collect()) == expected
    where = "k BETWEEN 100 AND 1500 AND name = 'n7'"
    df, stats = ps_spark.read_table(spark, root, where, with_stats=True)
    assert sorted(r.k for r in df.collect()) == [k for k in range(100, 1501) if k % 50 == 7 and k % 3 != 1]
    assert stats.files_skipped >= 8 and stats.rows_deleted > 0
    assert rows(source(spark, root).where(where).collect()) == rows(df.collect())


def test_pushed_filters_prune_files(spark: Any, big_table: tuple[Path, list], tmp_path: Path) -> None:
    """A file the index rules out is never opened: delete it, the filtered read still works."""
    root, files = big_table
    copy = tmp_path / "t"
    shutil.copytree(root, copy)
    pruned = [f for f in files if max(f.rows) < 6_000 and 5_000 not in f.rows]
    for f in pruned:
        (copy / f.path.relative_to(root)).unlink()
    where = "k = 11999"
    assert [r.k for r in source(spark, copy).where(where).collect()] == [11999]
    assert [r.k for r in ps_spark.read_table(spark, copy, where).collect()] == [11999]
    with pytest.raises(Exception, match="does not exist|FileNotFound|No such file"):
        source(spark, copy).where("k = 3").collect()


def test_orc_files_go_through_pyarrow(spark: Any, tmp_path: Path) -> None:
    data = pa.table({"k": pa.array(range(50), pa.int32()), "v": pa.array([f"v{i}" for i in range(50)])})
    root = tmp_path / "t"
    forge.write_table(root, data, {"k": "INT", "v": "STRING"}, file_rows=20, deleted=[3, 30],
                      file_format="orc", indexes={"k": {"bitmap": {}}})
    expected = sorted(set(range(50)) - {3, 30})
    assert sorted(read_arrow(root).column("k").to_pylist()) == expected
    assert sorted(r.k for r in ps_spark.read_table(spark, root).collect()) == expected
    assert sorted(r.k for r in source(spark, root).collect()) == expected
    df, stats = ps_spark.read_table(spark, root, "k = 45", with_stats=True)
    assert [r.v for r in df.collect()] == ["v45"] and stats.files_skipped == 2


# ------------------------------------------------------------------------------ index sources

def test_deletion_vector_source(spark: Any, fixture_tables: Path) -> None:
    path = fixture_table(fixture_tables, "pk_table_with_dv_cardinality")
    df = spark.read.format("paimon-deletion-vectors").load(str(path))
    assert df.columns == ["partition", "bucket", "data_file", "index_file", "offset", "length",
                          "cardinality", "bitmap64"]
    got = {(r.data_file[:13], r.partition, r.bucket, r.offset, r.length, r.cardinality, r.bitmap64)
           for r in df.collect()}
    assert got == {("data-ed5d7184", "f1=10", 1, 1, 24, 2, False),
                   ("data-3061fa63", "f1=10", 0, 1, 22, 1, False)}
    exploded = spark.read.format("paimon-deletion-vectors").option("explode", "true").load(str(path))
    assert sorted((r.data_file[:13], r.position) for r in exploded.collect()) == [
        ("data-3061fa63", 0), ("data-ed5d7184", 4), ("data-ed5d7184", 5)]
    old = fixture_table(fixture_tables, "pk_09")
    at6 = spark.read.format("paimon-deletion-vectors").option("snapshot", "6").load(str(old))
    assert sorted((r.offset, r.cardinality) for r in at6.collect()) == [(1, 1), (1, 1), (31, 1)]


def test_deletion_vector_source_on_a_bare_file(spark: Any, shared_fixtures: Path) -> None:
    for name, bitmap64 in (("dvindex-32", False), ("dvindex-64", True)):
        df = (spark.read.format("paimon-deletion-vectors").option("explode", "true")
              .load(str(shared_fixtures / "paimon" / "dv" / name)))
        got = sorted((r.offset, r.position, r.bitmap64, r.data_file) for r in df.collect())
        second = 45 if bitmap64 else 33
        assert got == [(1, 2, bitmap64, None), (1, 3, bitmap64, None), (second, 1, bitmap64, None)]


def test_bad_paths_fail_with_our_message_first(spark: Any, tmp_path: Path, capfd: Any) -> None:
    """A missing path, a directory that is no table, a file that is not a deletion-vector file:
    each source fails at load or planning time, the message starting with our error, with no
    Python traceback before it and no Java stack trace logged (no task ever runs)."""
    (tmp_path / "plain").mkdir()
    text = tmp_path / "plain" / "notes.txt"
    text.write_text("hello")
    missing = tmp_path / "missing"
    cases = [(fmt, missing, f"TableError: {missing} does not exist")
             for fmt in ("paimon", "paimon-deletion-vectors", "paimon-file-index")]
    cases += [(fmt, tmp_path / "plain", "is not a Paimon table: it has no schema/ directory")
              for fmt in ("paimon", "paimon-deletion-vectors", "paimon-file-index")]
    cases += [("paimon", text, "is a file, not a Paimon table directory"),
              ("paimon-deletion-vectors", text,
               f"FormatError: {text} is not a deletion-vector file: invalid value 104")]
    capfd.readouterr()
    for fmt, path, message in cases:
        with pytest.raises(Exception) as info:
            spark.read.format(fmt).load(str(path)).collect()
        first = str(info.value).split("\n")[0]
        assert message in first and "Traceback" not in first, (fmt, path, str(info.value))
    logged = capfd.readouterr().err
    assert "\tat org.apache" not in logged and "Traceback" not in logged


def test_file_index_source(spark: Any, fixture_tables: Path) -> None:
    path = fixture_table(fixture_tables, "append_with_bitmap")
    df = spark.read.format("paimon-file-index").load(str(path))
    assert df.columns == ["partition", "bucket", "data_file", "column", "index_type", "stored",
                          "size", "row_count", "distinct_values", "null_count"]
    got = {(r.column, r.index_type, r.stored, r.row_count, r.distinct_values, r.null_count)
           for r in df.collect()}
    assert got == {("f0", "bitmap", "embedded", 8, 5, 0), ("f1", "bitmap", "embedded", 8, 2, 0),
                   ("f2", "bitmap", "embedded", 8, 2, 1)}
    values = spark.read.format("paimon-file-index").option("values", "true").load(str(path))
    f2 = [r for r in values.collect() if r.column == "f2"][0]
    assert {(v.value, tuple(v.rows)) for v in f2["values"]} == {
        ("0", (2, 3, 6)), ("1", (0, 1, 4, 5)), (None, (7,))}
    sidecars = spark.read.format("paimon-file-index").load(
        str(fixture_table(fixture_tables, "append_with_rangebitmap")))
    assert {(r.column, r.row_count, r.distinct_values, r.null_count) for r in sidecars.collect()} == {
        (c, 8, 6, 2) for c in ("f0", "f1", "f2", "f3", "f4")}
    bloom = spark.read.format("paimon-file-index").load(
        str(fixture_table(fixture_tables, "append_with_bloomfilter")))
    assert {(r.size, r.row_count) for r in bloom.collect()} == {(599071, None)}


def test_corrupt_index_in_spark(spark: Any, fixture_tables: Path, tmp_path: Path) -> None:
    path = tmp_path / "t"
    shutil.copytree(fixture_table(fixture_tables, "append_with_bitmap_no_embedding"), path)
    [data_file] = Table.open(path).data_files()
    Path(data_file.index_sidecar).write_bytes(b"garbage")
    with pytest.raises(Exception, match="corrupt file index .*parquet.index"):
        source(spark, path).where("f0 = 'Alice'").collect()
    permissive = source(spark, path, mode="PERMISSIVE").where("f0 = 'Alice'")
    assert sorted(r.f1 for r in permissive.collect()) == [10, 20]
    df, stats = ps_spark.read_table(spark, path, "f0 = 'Alice'", mode="PERMISSIVE", with_stats=True)
    assert sorted(r.f1 for r in df.collect()) == [10, 20]
    assert stats.corrupt_index_files == [data_file.index_sidecar]


@pytest.mark.parametrize(("sizes", "cores", "expected"), [
    ([17_000] * 288, 2, [144, 144]),        # the open-file cost adds no task: 2, not 9
    ([17_000] * 288, 3, [96, 96, 96]),
    ([128 << 20] * 5, 2, [1] * 5),          # 5 splits' worth, rounded up to 6: one file each
    ([300 << 20, 10, 10, 10], 2, [1, 1, 1, 1]),   # 3 splits' worth, rounded up to 4
    ([10] * 3, 4, [1, 1, 1]),               # fewer files than cores
    ([600 << 20] + [1 << 20] * 8, 2, [1, 1, 1, 2, 2, 2]),   # 5 rounded up to 6 partitions
])
def test_paimon_source_splits(sizes: list[int], cores: int, expected: list[int]) -> None:
    """`paimon`'s partitions: as many as the bytes need at the split target (128 MB), at least
    the cores and whole waves of them; files balanced by weight (at least the 4 MB open
    cost), heaviest first."""
    from types import SimpleNamespace

    from paimon_schema.spark.sources import splits

    schema = SimpleNamespace(option=lambda key, default: default)
    tasks = [SimpleNamespace(file_size=size, name=i) for i, size in enumerate(sizes)]
    groups = splits(tasks, schema, cores)
    assert sorted(len(g) for g in groups) == expected
    assert sorted(t.name for g in groups for t in g) == list(range(len(sizes)))
