"""`create_global_index` on data-evolution tables written by pypaimon 2.1.0: our index files
and index-manifest records equal pypaimon's own `create_global_index` output for the same table;
pypaimon and pypaimon-rust 0.4.0 read the committed snapshot and use our indexes (their plans
read one data file of three for `k = -3`); a second build indexes only rows appended since;
refusals and the commit conflict leave the table as it was."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pytest
from global_index_tables import OPTIONS, index_files, pypaimon_index, rust_index, write_table
from oracles import import_oracle

import paimon_schema as ps
from paimon_schema.table import Table, TableError
from paimon_schema.table.commit import CommitPlan, commit
from paimon_schema.table.global_index_write import build_global_index, commit_global_index, plan_global_index
from paimon_schema.table.scan import read_arrow

ROWS = 300


def _data(rows: int = ROWS, start: int = 0) -> pa.Table:
    ids = range(start, start + rows)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "s": pa.array([f"s{i % 7}" if i % 5 else None for i in ids], pa.string()),
                     "k": pa.array([i // 40 - 3 for i in ids], pa.int32())})


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(warehouse indexed by pypaimon, copy indexed by us), each with btree on k, bitmap on s."""
    theirs = tmp_path_factory.mktemp("theirs")
    catalog = write_table(theirs, _data(), batches=3)
    ours = tmp_path_factory.mktemp("ours") / "w"
    shutil.copytree(theirs, ours)
    pypaimon_index(catalog, "k", "btree")
    pypaimon_index(catalog, "s", "bitmap")
    table = ours / "db.db" / "t"
    assert ps.create_global_index(table, "k", "btree").files[0][1:] == (0, ROWS - 1)
    assert ps.create_global_index(str(table), "s", "bitmap").snapshot_id == 5
    return theirs, ours


def _catalog(warehouse: Path) -> Any:
    import_oracle("pypaimon")
    from pypaimon import CatalogFactory

    return CatalogFactory.create({"warehouse": str(warehouse.resolve())})


def _append(warehouse: Path, data: pa.Table) -> None:
    builder = _catalog(warehouse).get_table("db.t").new_batch_write_builder()
    write, commit_ = builder.new_write(), builder.new_commit()
    try:
        write.write_arrow(data)
        commit_.commit(write.prepare_commit())
    finally:
        write.close()
        commit_.close()


def _pypaimon_read(warehouse: Path, k: int | None = None) -> tuple[pa.Table, int]:
    """pypaimon's rows (with `k = k` when given) and the data files its plan reads."""
    read_builder = _catalog(warehouse).get_table("db.t").new_read_builder()
    if k is not None:
        read_builder = read_builder.with_filter(read_builder.new_predicate_builder().equal("k", k))
    splits = read_builder.new_scan().plan().splits()
    return read_builder.new_read().to_arrow(splits), sum(len(s.files) for s in splits)


def _rows(table: pa.Table) -> list[dict]:
    return sorted(table.select(["id", "s", "k"]).to_pylist(), key=lambda r: r["id"])


def test_our_index_files_are_pypaimons(tables: tuple[Path, Path]) -> None:
    theirs, ours = tables
    expected = {f.record["_INDEX_TYPE"]: f for f in index_files(theirs)}
    got = {f.record["_INDEX_TYPE"]: f for f in index_files(ours)}
    assert set(got) == set(expected) == {"btree", "bitmap"}
    for index_type, file in got.items():
        assert file.data == expected[index_type].data
        assert {k: v for k, v in file.record.items() if k != "_FILE_NAME"} == \
            {k: v for k, v in expected[index_type].record.items() if k != "_FILE_NAME"}
        assert file.record["_FILE_NAME"].startswith(f"{index_type}-global-index-")


def test_pypaimon_reads_and_uses_our_index(tables: tuple[Path, Path]) -> None:
    theirs, ours = tables
    everything, all_files = _pypaimon_read(ours)
    assert all_files == 3 and _rows(everything) == _rows(_pypaimon_read(theirs)[0])
    for k in (-3, 1, 4):
        rows, files = _pypaimon_read(ours, k)
        assert files == 1                        # the global index picked the one file
        assert _rows(rows) == _rows(everything.filter(pc.equal(everything["k"], k)))
        ours_read, stats = read_arrow(ours / "db.db" / "t", f"k = {k}", with_stats=True)
        assert _rows(ours_read) == _rows(rows) and stats.files_skipped_by_global_index == 2


def test_pypaimon_rust_reads_and_uses_our_index(tables: tuple[Path, Path]) -> None:
    import_oracle("pypaimon_rust")
    from pypaimon_rust.datafusion import SQLContext

    _, ours = tables
    context = SQLContext()
    context.register_catalog("paimon", {"warehouse": str(ours.resolve())}, "db")
    context.set_current_catalog("paimon")
    batches = context.sql("SELECT id, s, k FROM t WHERE k = -3")
    rows = pa.Table.from_batches(batches)
    assert sorted(rows.column("id").to_pylist()) == list(range(40))
    plan = "".join(str(b.column(1).to_pylist()) for b in context.sql("EXPLAIN SELECT id FROM t WHERE k = -3"))
    assert "files=1," in plan and "manifest_row_range_pruned=2" in plan


def test_second_build_indexes_appended_rows_only(tables: tuple[Path, Path], tmp_path: Path) -> None:
    _, ours = tables
    warehouse = tmp_path / "w"
    shutil.copytree(ours, warehouse)
    table = warehouse / "db.db" / "t"
    _append(warehouse, _data(100, ROWS))
    result = ps.create_global_index(table, "k", "btree")
    assert [f[1:] for f in result.files] == [(ROWS, ROWS + 99)]
    assert ps.create_global_index(table, "k", "btree").snapshot_id is None     # nothing left
    listed = [(g.index_type, g.row_range) for g in Table.open(table).global_indexes() if g.column == "k"]
    assert sorted(listed) == [("btree", (0, ROWS - 1)), ("btree", (ROWS, ROWS + 99))]
    rows, files = _pypaimon_read(warehouse, 4)   # pypaimon's fast mode: now every row is indexed
    assert files == 2 and sorted(rows.column("id").to_pylist()) == list(range(280, 320))
    assert _rows(read_arrow(table, "k = 4")) == _rows(rows)


def test_rust_written_table_indexed_by_us(tmp_path: Path) -> None:
    """A table whose existing bitmap index pypaimon-rust built: our btree on another column
    joins it, and both are used."""
    write_table(tmp_path, _data(), batches=3)
    rust_index(tmp_path, "s", "bitmap")
    table = tmp_path / "db.db" / "t"
    ps.create_global_index(table, "k", "btree")
    assert sorted(g.index_type for g in Table.open(table).global_indexes()) == ["bitmap", "btree"]
    rows, stats = read_arrow(table, "k = -3 AND s = 's1'", with_stats=True)
    assert sorted(rows.column("id").to_pylist()) == [i for i in range(40) if i % 7 == 1 and i % 5]
    assert stats.files_skipped_by_global_index == 2


def test_refusals(tmp_path: Path, tables: tuple[Path, Path]) -> None:
    _, ours = tables
    table = ours / "db.db" / "t"
    before = sorted(p.name for p in (table / "snapshot").iterdir())
    with pytest.raises(TableError, match="no column 'nope'"):
        ps.create_global_index(table, "nope", "btree")
    with pytest.raises(TableError, match="'ivf-flat' cannot be built here"):
        ps.create_global_index(table, "k", "ivf-flat")
    with pytest.raises(TableError, match="atomic"):
        ps.create_global_index(Table.open(str(table), pafs.SubTreeFileSystem("/", pafs.LocalFileSystem())),
                               "k", "btree")
    assert sorted(p.name for p in (table / "snapshot").iterdir()) == before
    import_oracle("pypaimon")
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", True)
    plain = {k: v for k, v in OPTIONS.items() if not k.startswith(("row-tracking", "data-evolution"))}
    catalog.create_table("db.plain", Schema.from_pyarrow_schema(_data().schema, options=plain), False)
    with pytest.raises(TableError, match="not a data-evolution table"):
        ps.create_global_index(tmp_path / "db.db" / "plain", "k", "btree")


def test_commit_conflict_removes_the_index_files(tables: tuple[Path, Path], tmp_path: Path) -> None:
    _, ours = tables
    warehouse = tmp_path / "w"
    shutil.copytree(ours, warehouse)
    table = warehouse / "db.db" / "t"
    _append(warehouse, _data(50, ROWS))
    plan = plan_global_index(table, "k", "bitmap")
    built = [build_global_index(task) for task in plan.tasks]
    _append(warehouse, _data(10, ROWS + 50))        # another writer commits first
    index_dir = sorted(p.name for p in (table / "index").iterdir())
    with pytest.raises(ps.CommitConflict):
        commit_global_index(plan, built)
    assert sorted(p.name for p in (table / "index").iterdir()) == index_dir


def test_vector_indexes_are_listed_not_read(tables: tuple[Path, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An index type this library does not read (a vector index) is listed with its type and
    size; reads ignore it."""
    from paimon_schema.cli.main import main

    _, ours = tables
    warehouse = tmp_path / "w"
    shutil.copytree(ours, warehouse)
    table = Table.open(warehouse / "db.db" / "t")
    (warehouse / "db.db" / "t" / "index" / "ivf-index-0.index").write_bytes(b"\x00" * 77)
    entry = {"_VERSION": 1, "_KIND": 0, "_PARTITION": bytes(12), "_BUCKET": 0,
             "_INDEX_TYPE": "lumina-vector-ann", "_FILE_NAME": "ivf-index-0.index", "_FILE_SIZE": 77,
             "_ROW_COUNT": ROWS, "_DELETIONS_VECTORS_RANGES": None, "_EXTERNAL_PATH": None,
             "_GLOBAL_INDEX": {"_ROW_RANGE_START": 0, "_ROW_RANGE_END": ROWS - 1, "_INDEX_FIELD_ID": 2,
                               "_EXTRA_FIELD_IDS": None, "_INDEX_META": b"opaque", "_SOURCE_META": None}}
    snapshot = table.snapshot()
    assert snapshot is not None
    commit(table, CommitPlan(base=snapshot, index_added=[entry], commit_kind="APPEND"))
    vector = [g for g in table.global_indexes() if g.kind == "opaque"]
    assert [(g.index_type, g.file_size, g.column) for g in vector] == [("lumina-vector-ann", 77, "k")]
    assert main(["table", str(table.path), "indexes"]) == 0
    assert "global lumina-vector-ann on 'k': rows 0..299, ivf-index-0.index, 77 bytes" in capsys.readouterr().out
    rows, stats = read_arrow(table, "k = -3", with_stats=True)
    assert rows.num_rows == 40 and stats.files_skipped_by_global_index == 2


def test_partitioned_table_gets_pypaimons_files(tmp_path: Path) -> None:
    """One file per partition's run of row ids, with the partition's BinaryRow, as pypaimon."""
    import_oracle("pypaimon")
    from pypaimon import CatalogFactory, Schema
    from pypaimon.globalindex.create_global_index import create_global_index as pypaimon_create

    data = pa.table({"id": pa.array(range(200), pa.int64()),
                     "p": pa.array(["x" if i % 3 else "y" for i in range(200)]),
                     "k": pa.array([i % 11 for i in range(200)], pa.int32())})
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    catalog = CatalogFactory.create({"warehouse": str(theirs)})
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(data.schema, partition_keys=["p"], options=OPTIONS),
                         False)
    for start in (0, 100):
        _append(theirs, data.slice(start, 100))
    shutil.copytree(theirs, ours)
    pypaimon_create(catalog.get_table("db.t"), "k", "bitmap")
    assert len(ps.create_global_index(ours / "db.db" / "t", "k", "bitmap").files) == 3

    def by_range(warehouse: Path) -> list[Any]:
        return sorted(index_files(warehouse), key=lambda f: f.record["_GLOBAL_INDEX"]["_ROW_RANGE_START"])

    for mine, expected in zip(by_range(ours), by_range(theirs), strict=True):
        assert mine.data == expected.data
        assert (mine.record["_PARTITION"], mine.record["_GLOBAL_INDEX"]) == \
            (expected.record["_PARTITION"], expected.record["_GLOBAL_INDEX"])
    rows, files = _pypaimon_read(ours, 3)
    assert _rows_k(rows) == _rows_k(read_arrow(ours / "db.db" / "t", "k = 3"))
    assert sorted(rows.column("id").to_pylist()) == [i for i in range(200) if i % 11 == 3]


def _rows_k(table: pa.Table) -> list[tuple]:
    return sorted(zip(table.column("id").to_pylist(), table.column("k").to_pylist()))


def test_split_columns_stay_refused(tmp_path: Path) -> None:
    """pypaimon refuses to update an indexed column (so indexes never go stale); updating
    another one writes it into a second file over the same row ids: reading and indexing such
    a table stay refused by name."""
    data = pa.table({"id": pa.array(range(100), pa.int64()), "k": pa.array([i % 5 for i in range(100)], pa.int32()),
                     "v": pa.array(["a"] * 100)})
    catalog = write_table(tmp_path, data, batches=1)
    table = tmp_path / "db.db" / "t"
    ps.create_global_index(table, "k", "btree")
    builder = catalog.get_table("db.t").new_batch_write_builder()

    def update(column: str, values: pa.Array) -> None:
        messages = builder.new_update().with_update_type([column]).update_by_arrow_with_row_id(
            pa.table({"_ROW_ID": pa.array([0, 1], pa.int64()), column: values}))
        commit_ = builder.new_commit()
        try:
            commit_.commit(messages)
        finally:
            commit_.close()

    with pytest.raises(RuntimeError, match="globally indexed columns"):
        update("k", pa.array([7, 7], pa.int32()))
    update("v", pa.array(["b", "b"]))
    for action in (lambda: read_arrow(table, "k = 3"), lambda: ps.create_global_index(table, "k", "bitmap")):
        with pytest.raises(TableError, match="columns split across files"):
            action()


def test_lost_race_is_retried_on_the_winners_snapshot(tables: tuple[Path, Path], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer appends rows just before our snapshot is published: the commit is planned
    again on its snapshot (the appended rows continue the row range, which is built again over
    all of them) and published after it; with `commit.max-retries=0` the conflict surfaces and
    the table is as the winner left it."""
    from paimon_schema.table import commit as table_commit
    from paimon_schema.table import global_index_write

    _, ours = tables
    warehouse = tmp_path / "w"
    shutil.copytree(ours, warehouse)
    table = warehouse / "db.db" / "t"
    raced = []

    def race(step: str) -> None:
        if step == "snapshot" and not raced:
            raced.append(step)
            _append(warehouse, _data(40, ROWS))

    builds: list[int] = []
    original = global_index_write.build_global_index

    def counting(task: Any) -> Any:
        builds.append(task.start)
        return original(task)

    monkeypatch.setattr(global_index_write, "build_global_index", counting)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", race)
    result = ps.create_global_index(table, "k", "bitmap")
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    assert raced and builds == [0, 0]
    assert [f[1:] for f in result.files] == [(0, ROWS + 39)]
    assert result.snapshot_id == Table.open(table).snapshot().id == 7
    everything = _pypaimon_read(warehouse)[0]
    assert _rows(read_arrow(table, "k = 4")) == _rows(everything.filter(pc.equal(everything["k"], 4)))

    raced.clear()
    monkeypatch.setattr(table_commit, "FAULT_HOOK", race)
    before = sorted(p.name for p in (table / "index").iterdir())
    with pytest.raises(ps.CommitConflict):
        ps.create_global_index(table, "s", "btree", {"commit.max-retries": "0"})
    assert sorted(p.name for p in (table / "index").iterdir()) == before


def test_on_s3(tables: tuple[Path, Path], s3_server: Any, tmp_path: Path) -> None:
    """The same build on a table in an S3 bucket (the loopback server): the same index files
    as on local disk, committed by conditional puts; the read prunes by them."""
    from s3server import ACCESS_KEY, REGION, SECRET_KEY

    _, ours = tables
    local = tmp_path / "w"
    shutil.copytree(ours, local)
    bucket = s3_server.create_bucket("global-index")
    uri = s3_server.upload_tree(local / "db.db" / "t", bucket, "db.db/t")
    filesystem = pafs.S3FileSystem(endpoint_override=s3_server.endpoint, access_key=ACCESS_KEY,
                                   secret_key=SECRET_KEY, region=REGION)
    remote = Table.open(uri.removeprefix("s3://"), filesystem=filesystem)
    ps.create_global_index(local / "db.db" / "t", "s", "btree")
    result = ps.create_global_index(remote, "s", "btree")
    assert [f[1:] for f in result.files] == [(0, ROWS - 1)]
    [listed] = [g for g in remote.global_indexes() if g.index_type == "btree" and g.column == "s"]
    [expected] = [g for g in Table.open(local / "db.db" / "t").global_indexes()
                  if g.index_type == "btree" and g.column == "s" and g.row_range == (0, ROWS - 1)]
    assert remote.read_bytes(listed.path) == Path(expected.path).read_bytes()
    rows, stats = read_arrow(remote, "k = -3 AND s = 's1'", with_stats=True)
    assert sorted(rows.column("id").to_pylist()) == [i for i in range(40) if i % 7 == 1 and i % 5]
    assert stats.files_skipped_by_global_index == 2
