"""Merge-on-read in pyarrow (`read_arrow`, no Spark): every Java-written fixture table equals
pypaimon-rust's read of it and its documented content; filters equal polars SQL applied after a
full read while skipping files; pruning stays sound for -0.0, NaN and rounding; corrupt indexes
fail or are reported."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import forged_tables as forge
import pyarrow as pa
import pytest
from table_oracles import FIXTURE_TABLES, fixture_table, rows, rust_read, sql_filter

import paimon_schema as ps
from paimon_schema.query.sql import parse_sql
from paimon_schema.spark import ReadStats, read_arrow
from paimon_schema.table.metadata import Table, TableError


@pytest.mark.parametrize("name", FIXTURE_TABLES)
def test_fixture_table_equals_paimon_rust(fixture_tables: Path, name: str) -> None:
    path = fixture_table(fixture_tables, name)
    ours = read_arrow(path)
    theirs = rust_read(path)
    assert ours.schema.names == theirs.schema.names
    assert rows(ours) == rows(theirs.cast(ours.schema))


@pytest.mark.parametrize("name,snapshot", [("pk_table_scan_and_read_dv", 2),
                                           ("pk_table_scan_and_read_dv", 4), ("pk_09", 3),
                                           ("pk_09", 6), ("pk_table_with_alter_table", 2),
                                           ("append_with_bitmap_alter_table", 1)])
def test_time_travel_equals_paimon_rust(fixture_tables: Path, name: str, snapshot: int) -> None:
    path = fixture_table(fixture_tables, name)
    ours = read_arrow(path, snapshot=snapshot)
    theirs = rust_read(path, snapshot)
    assert rows(ours) == rows(theirs.cast(ours.schema))


def test_documented_content(fixture_tables: Path) -> None:
    bitmap = read_arrow(fixture_table(fixture_tables, "append_with_bitmap"))
    assert bitmap.to_pydict() == {
        "f0": ["Alice", "Bob", "Emily", "Tony", "Lucy", "Bob", "Tony", "Alice"],
        "f1": [10, 10, 10, 10, 20, 10, 20, 20], "f2": [1, 1, 0, 0, 1, 1, 0, None],
        "f3": [11.1, 12.1, 13.1, 14.1, 15.1, 16.1, 17.1, 18.1]}
    dv = read_arrow(fixture_table(fixture_tables, "pk_with_bitmap_dv"))
    assert sorted(dv.column("key").to_pylist()) == [1, 2, 3, 5, 6, 7]     # keys 0 and 4 deleted
    altered = read_arrow(fixture_table(fixture_tables, "pk_table_with_alter_table"))
    assert altered.schema.names == ["key1", "k", "key_2", "c", "d", "a", "key0", "e"]
    assert sorted(altered.select(["k", "key_2", "c", "d", "a", "key0", "e"]).to_pylist(),
                  key=lambda r: r["key_2"]) == [
        dict(zip(["k", "key_2", "c", "d", "a", "key0", "e"], values)) for values in [
            ("Two roads diverged in a wood, and I took the one less traveled by, And that has "
             "made all the difference.", 2, 4, None, 6, 0, None),
            ("Alice", 12, 94, None, 96, 0, None), ("Bob", 22, 24, None, 26, 1, None),
            ("Emily", 32, 34, None, 36, 1, None), ("Alex", 52, 514, 518, 516, 1, 519),
            ("David", 62, 64, None, 66, 1, None),
            ("Whether I shall turn out to be the hero of my own life.", 72, 74, None, 76, 1, None),
            ("Paul", 502, 504, 508, 506, 0, 509)]]
    evolved = read_arrow(fixture_table(fixture_tables, "append_with_bitmap_alter_table"))
    assert evolved.schema == pa.schema([("f1", pa.int64()), ("f4", pa.string()),
                                        ("f3", pa.float64()), ("f5", pa.int32())])
    assert evolved.column("f5").null_count == 9


def test_split_columns_fail_clearly(fixture_tables: Path) -> None:
    path = fixture_table(fixture_tables, "data_evolution_with_index")
    with pytest.raises(TableError, match="columns split across files is not supported"):
        read_arrow(path)
    first = read_arrow(path, snapshot=1)       # one file per row range: readable
    assert rows(first) == rows(rust_read(path, 1).cast(first.schema))


FILTERS = [
    ("append_with_bitmap", "f0 = 'Alice'", 0),
    ("append_with_bitmap", "f0 = 'Nobody'", 1),
    ("append_with_bitmap", "f1 = 20 AND f2 IS NULL", 0),
    ("append_with_bitmap", "f2 IN (5, 6) OR f0 = 'Zed'", 1),
    ("append_with_bitmap_v1", "f0 <> 'Alice' AND f2 = 0", 0),
    ("append_with_bitmap_no_embedding", "NOT (f1 = 10) AND f0 = 'Lucy'", 0),
    ("append_with_bitmap_alter_table", "f4 = 'David'", 1),
    ("append_with_bitmap_alter_table", "f1 = 30", 1),
    ("append_with_bitmap_alter_table", "f5 = 100", 0),
    ("append_with_bitmap_alter_table", "f1 >= 20 AND f5 IS NULL", 0),
    ("append_with_bloomfilter", "f0 = 'Nobody'", 1),
    ("append_with_bloomfilter", "f3 = 0.0", 1),
    ("append_with_bloomfilter", "f4 = TIMESTAMP '2025-04-25 01:00:02.000123'", 0),
    ("append_with_bsi", "f1 > 1000", 1),
    ("append_with_bsi", "f1 > 400 OR f2 < -2", 0),
    ("append_with_bsi", "f4 > TIMESTAMP '2025-04-25 01:00:02.000123'", 0),
    ("append_with_bsi_bitmap_bloomfilter", "f2 BETWEEN -1 AND 1", 0),
    ("append_with_bsi_bitmap_bloomfilter", "f1 = 7", 1),
    ("append_with_rangebitmap", "f2 < 1.0", 1),
    ("append_with_rangebitmap", "f2 <= 2.2", 0),
    ("append_with_rangebitmap", "f4 > DATE '2024-01-20'", 1),
    ("append_with_rangebitmap", "f0 BETWEEN 4 AND 8", 0),
    ("append_with_rangebitmap_multi_chunk", "f1 >= 600 OR f3 < 0", 0),
    ("pk_with_bitmap_dv", "f0 = 'Lucy'", 1),            # only a deleted row has Lucy
    ("pk_with_bitmap_dv", "f0 = 'Bob'", 0),
    ("pk_table_scan_and_read_dv", "f1 = 20", 3),         # partition pruning
    ("pk_table_with_alter_table", "key0 = 0 AND c > 10", 2),
]


@pytest.mark.parametrize("name,where,skipped", FILTERS)
def test_filter_equals_sql_after_full_read(fixture_tables: Path, name: str, where: str,
                                           skipped: int) -> None:
    path = fixture_table(fixture_tables, name)
    full = read_arrow(path)
    filtered, stats = read_arrow(path, where, with_stats=True)
    expected = sql_filter(full, where)
    assert rows(filtered) == rows(expected.cast(filtered.schema))
    assert stats.files_skipped == skipped
    assert rows(read_arrow(path, parse_sql(where))) == rows(filtered)


def test_columns_and_stats(fixture_tables: Path) -> None:
    path = fixture_table(fixture_tables, "pk_with_bitmap_dv")
    result, stats = read_arrow(path, ps.col("f0") == "Bob", columns=["key"], with_stats=True)
    assert result.schema.names == ["key"] and sorted(result.column("key").to_pylist()) == [1, 5]
    assert isinstance(stats, ReadStats)
    assert (stats.files, stats.files_read, stats.rows, stats.rows_deleted) == (1, 1, 8, 2)
    assert stats.rows_skipped == 4                     # 8 rows - 2 deleted - 2 candidates
    with pytest.raises(ps.SchemaError, match="no column 'nope'"):
        read_arrow(path, ps.col("nope") == 1)


# ------------------------------------------------------------------------------ forged tables

FLOATS = [0.0, -0.0, math.nan, 1.5, -1.5, None, 2.0, 0.7, float("inf"), -math.inf]


@pytest.fixture(scope="module")
def float_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """-0.0, NaN, infinities and a float32-rounding value under every index that takes floats,
    one or two rows per file so that pruning shows."""
    n = len(FLOATS)
    data = pa.table({"id": pa.array(range(n), pa.int32()), "d": pa.array(FLOATS, pa.float64()),
                     "f": pa.array(FLOATS, pa.float32()),
                     "p": pa.array([i % 2 for i in range(n)], pa.int32())})
    root = tmp_path_factory.mktemp("floats") / "t"
    forge.write_table(root, data, {"id": "INT", "d": "DOUBLE", "f": "FLOAT", "p": "INT"},
                      partition_keys=["p"], file_rows=1,
                      indexes={"d": {"bitmap": {}, "bloom-filter": {"items": 10},
                                     "range-bitmap": {}},
                               "f": {"bitmap": {}, "bloom-filter": {"items": 10},
                                     "range-bitmap": {}}},
                      deleted=[9])
    return root


FLOAT_FILTERS = [f"{c} {op} {v}" for c in ("d", "f") for op in ("=", "<>", "<", "<=", ">", ">=")
                 for v in ("0.0", "-0.0", "0", "1.5", "0.7", "2")] + [
    "d IN (0.0, 3)", "f IN (-0.0)", "d NOT IN (0.0, 1.5)", "d BETWEEN -0.0 AND 1.5",
    "f BETWEEN 0.0 AND 0.0", "d IS NULL", "f IS NOT NULL", "NOT (d = 0.0)",
    "d > 9007199254740993", "f < 9007199254740993"]


@pytest.mark.parametrize("where", FLOAT_FILTERS)
def test_float_pruning_is_sound(float_table: Path, where: str) -> None:
    full = read_arrow(float_table)
    result, stats = read_arrow(float_table, where, with_stats=True)
    expected = sql_filter(full, where)
    assert rows(result) == rows(expected.cast(result.schema))
    # every file whose rows match is read; a file is skipped only when none of its rows match
    assert stats.files_read >= expected.num_rows


def test_float_equality_prunes(float_table: Path) -> None:
    result, stats = read_arrow(float_table, "d = 0.0", with_stats=True)
    assert sorted(result.column("id").to_pylist()) == [0, 1]
    assert stats.files_read == 2 and stats.files_skipped == 8
    _, nan_stats = read_arrow(float_table, ps.col("d") == math.nan, with_stats=True)
    assert nan_stats.files_skipped_by_index == 0         # NaN never prunes


def test_large_forged_table_with_deletion_vectors(tmp_path: Path) -> None:
    n = 20_000
    data = pa.table({"k": pa.array(range(n), pa.int64()), "g": pa.array([i % 7 for i in range(n)], pa.int32()),
                     "s": pa.array([f"v{i % 100}" for i in range(n)]),
                     "part": pa.array(["a" if i % 3 else "bb" for i in range(n)])})
    deleted = list(range(0, n, 3)) + list(range(1, 500))
    root = tmp_path / "big"
    files = forge.write_table(root, data, {"k": "BIGINT", "g": "INT", "s": "STRING", "part": "STRING"},
                              partition_keys=["part"], bucket_of=[i % 2 for i in range(n)],
                              file_rows=2_500, indexes={"s": {"bitmap": {}}, "k": {"bsi": {}}},
                              deleted=deleted, row_group_rows=1_000)
    assert len(files) > 8 and sum(1 for f in files if f.deleted) > 4
    kept = sorted(set(range(n)) - set(deleted))
    result = read_arrow(root)
    assert sorted(result.column("k").to_pylist()) == kept
    selective, stats = read_arrow(root, "k < 1200 AND s = 'v7'", with_stats=True)
    assert sorted(selective.column("k").to_pylist()) == [k for k in kept if k < 1200 and k % 100 == 7]
    assert stats.files_skipped >= 1
    table = Table.open(root)
    assert {f.file_name: sorted(table.deletion_vector(f)) for f in table.data_files() if f.deletion_file} \
        == {f.path.name: f.deleted for f in files if f.deleted}


def test_external_data_files(tmp_path: Path) -> None:
    data = pa.table({"k": pa.array(range(10), pa.int32())})
    files = forge.write_table(tmp_path / "t", data, {"k": "INT"}, external_dir=tmp_path / "ext",
                              indexes={"k": {"bloom-filter": {"items": 100}}}, deleted=[3],
                              threshold=1)
    assert all(tmp_path / "ext" in f.path.parents for f in files)
    assert sorted(read_arrow(tmp_path / "t").column("k").to_pylist()) == [0, 1, 2, 4, 5, 6, 7, 8, 9]
    assert read_arrow(tmp_path / "t", "k = 77").num_rows == 0


def test_corrupt_index_fails_or_is_reported(fixture_tables: Path, tmp_path: Path) -> None:
    path = tmp_path / "t"
    shutil.copytree(fixture_table(fixture_tables, "append_with_bitmap_no_embedding"), path)
    [data_file] = Table.open(path).data_files()
    sidecar = Path(data_file.index_sidecar)
    sidecar.write_bytes(sidecar.read_bytes()[:100])
    with pytest.raises(ps.FormatError, match=sidecar.name) as info:
        read_arrow(path, "f0 = 'Alice'")
    assert info.value.file == str(sidecar)
    result, stats = read_arrow(path, "f0 = 'Alice'", mode="PERMISSIVE", with_stats=True)
    assert result.column("f1").to_pylist() == [10, 20]
    assert stats.corrupt_index_files == [str(sidecar)] and stats.files_read == 1
    assert read_arrow(path).num_rows == 8                 # no filter: the index is never read
    with pytest.raises(ValueError, match="mode"):
        read_arrow(path, mode="LENIENT")


def test_unsupported_file_format_fails_clearly(tmp_path: Path) -> None:
    import io

    import fastavro

    root = tmp_path / "t"
    forge.write_table(root, pa.table({"k": pa.array([1, 2], pa.int32())}), {"k": "INT"})
    for manifest in (root / "manifest").glob("manifest-[0-9a-f]*"):
        with manifest.open("rb") as f:
            reader = fastavro.reader(f)
            schema, records = reader.writer_schema, list(reader)
        for record in records:
            record["_FILE"]["_FILE_NAME"] = record["_FILE"]["_FILE_NAME"].replace(".parquet", ".avro")
        buffer = io.BytesIO()
        fastavro.writer(buffer, schema, records)
        manifest.write_bytes(buffer.getvalue())
    with pytest.raises(TableError, match="avro data files are not supported"):
        read_arrow(root)


def test_string_literals_for_temporal_columns(fixture_tables: Path) -> None:
    path = fixture_table(fixture_tables, "append_with_rangebitmap")
    result, stats = read_arrow(path, "f4 > '2024-01-09'", with_stats=True)
    assert sorted(result.column("f5").to_pylist()) == ["row0", "row7"]
    assert stats.rows_skipped == 6                        # the range bitmap took the string too


def test_literals_that_do_not_compare_with_the_column_fail_clearly(tmp_path: Path) -> None:
    root = tmp_path / "t"
    forge.write_table(root, pa.table({"amount": pa.array([1.0, 60.0]), "city": ["Lima", "Oslo"],
                                      "ts": pa.array([0, 86_400_000_000], pa.timestamp("us"))}),
                      {"amount": "DOUBLE", "city": "STRING", "ts": "TIMESTAMP(6)"})
    cases = {"amount < 'x'": r"amount < 'x': column 'amount' is double, and 'x' \(a string\)",
             "city = 5": r"city = 5: column 'city' is string, and 5 \(a number\)",
             "amount IN (1, 'x')": r"amount IN \(1, 'x'\): .* 'x' \(a string\)",
             "ts > 'noon'": r"ts > 'noon': 'noon' is not a TIMESTAMP for column 'ts'",
             "amount = DATE '2024-01-01'": r"column 'amount' is double, .* \(a date\)"}
    for where, message in cases.items():
        with pytest.raises(ps.SchemaError, match=message):
            read_arrow(root, where)
    # what Spark casts still reads: a date against a TIMESTAMP column is its midnight
    assert read_arrow(root, "ts >= DATE '1970-01-02'").column("city").to_pylist() == ["Oslo"]
    assert read_arrow(root, "amount < 50 AND city = 'Lima'").num_rows == 1


# ------------------------------------------------------------------------------ strings read as dictionaries

def _string_table(n: int = 9_000) -> pa.Table:
    """`s` few strings (nulls too) and `b` few binaries: dictionary pages only; `u` unique
    strings, whose dictionary outgrows the writer's small page limit (PLAIN fallback)."""
    return pa.table({
        "k": pa.array(range(n), pa.int64()),
        "s": pa.array([None if i % 11 == 0 else f"v{i % 40}" for i in range(n)]),
        "u": pa.array([f"unique-{i:08d}-{i * 7919 % 10007}" for i in range(n)]),
        "b": pa.array([bytes([i % 5]) * (i % 3 + 1) for i in range(n)], pa.binary())})


STRING_TYPES = {"k": "BIGINT", "s": "STRING", "u": "STRING", "b": "BYTES"}


def _forge_strings(root: Path, deleted: list[int], **options: object) -> list[forge.ForgedFile]:
    return forge.write_table(root, _string_table(), STRING_TYPES, file_rows=4_000,
                             row_group_rows=1_500, deleted=deleted,
                             parquet_options={"dictionary_pagesize_limit": 4096}, **options)


@pytest.mark.parametrize("bitmap64", [False, True])
def test_dictionary_read_strings_are_exact(tmp_path: Path, bitmap64: bool) -> None:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from paimon_schema.table.parquet_footer import dictionary_columns

    data = _string_table()
    deleted = [i for i in range(data.num_rows) if i % 10 in (1, 4, 5)] + list(range(8_000, 9_000))
    root = tmp_path / "t"
    files = _forge_strings(root, deleted, bitmap64=bitmap64)
    assert len(files) == 3 and files[-1].rows == list(range(8_000, 9_000))   # one file all deleted
    for f in files[:2]:          # the read takes both paths: dictionary (s, b) and dense (u)
        encoded = dictionary_columns(pq.ParquetFile(f.path).metadata)
        assert {"s", "b"} <= encoded and "u" not in encoded
    expected = data.filter(pa.array([i not in set(deleted) for i in range(data.num_rows)]))

    result = read_arrow(root)
    assert result.schema == pa.schema([("k", pa.int64()), ("s", pa.string()), ("u", pa.string()),
                                       ("b", pa.binary())])
    assert result.sort_by("k").equals(expected)
    assert read_arrow(root, columns=["s"]).column("s").to_pylist() == expected.column("s").to_pylist()
    assert read_arrow(root, columns=["b", "k"]).sort_by("k").equals(expected.select(["b", "k"]))
    for where, mask in [("s = 'v7'", pc.equal(expected.column("s"), "v7")),
                        ("s IS NULL", pc.is_null(expected.column("s"))),
                        ("k >= 5000 AND s <> 'v3'",
                         pc.and_(pc.greater_equal(expected.column("k"), 5000),
                                 pc.not_equal(expected.column("s"), "v3")))]:
        got = read_arrow(root, where, columns=["k", "u", "s"]).sort_by("k")
        assert got.equals(expected.filter(mask).select(["k", "u", "s"])), where
    nothing = read_arrow(root, "s = 'absent'")
    assert nothing.num_rows == 0 and nothing.schema == result.schema


def test_dictionary_read_batches_and_spark_types(tmp_path: Path) -> None:
    """Small batches across row groups (the Spark tasks' reads) give the same rows, as Spark's
    string and binary types."""
    from paimon_schema.table.arrow_types import spark_arrow_schema
    from paimon_schema.table.merge import plan_read, read_task

    root = tmp_path / "t"
    _forge_strings(root, list(range(0, 9_000, 3)))
    plan = plan_read(root)
    whole = read_arrow(root)
    spark_types = spark_arrow_schema(plan.table_schema, [f.name for f in plan.table_schema.fields])
    batches = [b for task in plan.tasks for b in read_task(task, spark_types=spark_types,
                                                             batch_rows=700)]
    assert all(b.num_rows <= 700 for b in batches)
    assert all(not pa.types.is_dictionary(t) for t in batches[0].schema.types)
    assert pa.Table.from_batches(batches).cast(whole.schema).sort_by("k").equals(whole.sort_by("k"))


def test_no_deletions_and_all_deleted_read_as_dictionaries(tmp_path: Path) -> None:
    data = _string_table()
    none_deleted = tmp_path / "none"
    forge.write_table(none_deleted, data, STRING_TYPES, file_rows=4_000,
                      parquet_options={"dictionary_pagesize_limit": 4096})
    assert read_arrow(none_deleted).sort_by("k").equals(data)
    everything = tmp_path / "all"
    _forge_strings(everything, list(range(data.num_rows)))
    empty = read_arrow(everything)
    assert empty.num_rows == 0 and empty.schema == read_arrow(none_deleted).schema


def test_repeated_reads_see_new_snapshots(tmp_path: Path) -> None:
    """A snapshot's data files are folded once per process; a commit makes a new snapshot,
    which the next read plans afresh."""
    root = tmp_path / "t"
    _forge_strings(root, [0, 1])
    first = read_arrow(root)
    assert first.num_rows == 8_998 and read_arrow(root).equals(first)
    files = Table.open(root).data_files()
    files.clear()                                   # the caller's list, not the cache's
    assert len(Table.open(root).data_files()) == 3
    ps.delete_where(root, "k < 100 OR s = 'v7'")
    after = read_arrow(root)
    assert sorted(after.column("k").to_pylist()) == [
        k for k in range(100, 9_000) if k % 11 == 0 or k % 40 != 7]
    assert read_arrow(root, snapshot=1).sort_by("k").equals(first.sort_by("k"))
