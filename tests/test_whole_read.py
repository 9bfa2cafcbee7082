"""The whole read (`table.whole_read`) against the per-file read it replaces
(`merge.read_tasks`): the same rows in the same order for every Java-written fixture table,
with deletion vectors, schema evolution, partitions and index-pruned rows; the scan really
taken; and a file that disagrees with its manifest entry failing as the per-file read fails."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.table import Table, whole_read
from paimon_schema.table.errors import TableError
from paimon_schema.table.merge import FileTask, TaskPlan, plan_read, read_task, read_tasks

TABLES = ["append_with_bitmap", "append_with_bitmap_alter_table", "append_with_bitmap_no_embedding",
          "append_with_bitmap_v1", "append_with_bloomfilter", "append_with_bsi",
          "append_with_bsi_bitmap_bloomfilter", "append_with_rangebitmap",
          "append_with_rangebitmap_multi_chunk", "pk_09", "pk_btree_e2e",
          "pk_dv_index_in_data_no_external", "pk_dv_index_not_in_data_no_external",
          "pk_table_scan_and_read_dv", "pk_table_with_alter_table", "pk_table_with_dv_cardinality",
          "pk_with_bitmap_dv"]


@pytest.fixture(scope="module")
def tables(shared_fixtures: Path) -> Path:
    return shared_fixtures / "paimon-cpp" / "tables" / "parquet"


def per_file(plan: TaskPlan, tasks: list[FileTask] | None = None) -> pa.Table:
    return pa.Table.from_batches([b for part in read_tasks(plan.tasks if tasks is None else tasks)
                                  for b in part], schema=plan.schema)


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many tasks the whole read sent to the per-file path."""
    sent: list[int] = []

    def spy(tasks: list[FileTask]) -> list[list[pa.RecordBatch]]:
        sent.append(len(tasks))
        return read_tasks(tasks)

    monkeypatch.setattr(whole_read, "read_tasks", spy)
    return sent


@pytest.mark.parametrize("take_rows", [1, whole_read.TAKE_ROWS])
@pytest.mark.parametrize("name", TABLES)
def test_scan_equals_the_per_file_read(tables: Path, name: str, take_rows: int,
                                       fallbacks: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(whole_read, "TAKE_ROWS", take_rows)
    plan = plan_read(tables / f"{name}.db" / name)
    assert plan.tasks
    got = whole_read.read_whole(plan.tasks, plan.schema)
    assert got.schema == plan.schema
    assert got.equals(per_file(plan))
    assert fallbacks == []


@pytest.mark.parametrize("take_rows", [1, whole_read.TAKE_ROWS])
def test_index_pruned_rows_and_time_travel(tables: Path, take_rows: int, fallbacks: list[int],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Deletion vectors and index candidates, the kept rows taken by position or filtered."""
    monkeypatch.setattr(whole_read, "TAKE_ROWS", take_rows)
    path = tables / "pk_with_bitmap_dv.db" / "pk_with_bitmap_dv"
    for where in (ps.col("f0") == "Bob", ps.col("key") > 2, None):
        for snapshot in (None, 3):
            plan = plan_read(path, where, snapshot)
            got = whole_read.read_whole(plan.tasks, plan.schema)
            assert got.equals(per_file(plan))
    assert any(t.candidate_rows is not None for t in plan_read(path, ps.col("f0") == "Bob").tasks)
    assert fallbacks == []


@pytest.mark.parametrize("repeat_rows", [2, whole_read.REPEAT_ROWS])
@pytest.mark.parametrize("columns", [["f1"], ["f3", "f1"], ["f0"], None])
def test_partition_columns_from_the_partition_values(tables: Path, columns: list[str] | None,
                                                     repeat_rows: int, fallbacks: list[int],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """As Paimon reads them (never from the file), over files of several partitions, alone or
    beside file columns, with deletion vectors; a partition's rows in one slice of the
    repeated value or in several."""
    monkeypatch.setattr(whole_read, "REPEAT_ROWS", repeat_rows)
    path = tables / "pk_09.db" / "pk_09"
    plan = plan_read(path, columns=columns, snapshot=6)
    assert len({t.columns[0].constant for t in plan.tasks}) > 1 or columns != ["f1"]
    got = whole_read.read_whole(plan.tasks, plan.schema)
    assert got.equals(per_file(plan))
    assert fallbacks == []


def test_partition_values_win_over_the_file_columns(tables: Path, fallbacks: list[int]) -> None:
    """Files that store their partition column, but whose tasks (forged) name other partition
    values: every read takes the partition value, as Paimon does (`PartitionUtils`), the whole
    read, the per-file read and `to_batches`' `read_task` alike."""
    path = tables / "pk_09.db" / "pk_09"
    plan = plan_read(path, snapshot=6)
    assert all("f1" in pq.read_schema(t.path).names for t in plan.tasks)
    forged = [dataclasses.replace(t, columns=tuple(
        dataclasses.replace(c, constant=c.constant + 5) if c.partition else c for c in t.columns))
        for t in plan.tasks]
    got = whole_read.read_whole(forged, plan.schema)
    assert got.equals(per_file(plan, forged))
    streamed = pa.Table.from_batches([b for t in forged for b in read_task(t)], schema=plan.schema)
    assert got.equals(streamed)
    stored = whole_read.read_whole(plan.tasks, plan.schema)
    assert got.column("f1").to_pylist() == [v + 5 for v in stored.column("f1").to_pylist()]
    assert got.drop_columns(["f1"]).equals(stored.drop_columns(["f1"]))
    assert fallbacks == []


def test_runs_keep_the_task_order(tables: Path, fallbacks: list[int]) -> None:
    """Tasks of two schemas interleaved: one scan per run of alike tasks, in task order."""
    plan = plan_read(tables / "append_with_bitmap_alter_table.db" / "append_with_bitmap_alter_table")
    tasks = plan.tasks + plan.tasks[::-1]
    got = whole_read.read_whole(tasks, plan.schema)
    assert got.equals(per_file(plan, tasks))
    assert fallbacks == []


@pytest.mark.parametrize("change,message", [
    ({"row_count": 1}, "its manifest entry says"),
    ({"file_size": 7}, "a stale or corrupt manifest entry"),
])
def test_a_file_unlike_its_manifest_entry_fails_by_name(tables: Path, change: dict[str, int],
                                                        message: str, fallbacks: list[int]) -> None:
    plan = plan_read(tables / "pk_with_bitmap_dv.db" / "pk_with_bitmap_dv")
    task = plan.tasks[-1]
    wrong = dataclasses.replace(task, **{k: getattr(task, k) + v for k, v in change.items()})
    with pytest.raises(TableError, match=message) as raised:
        whole_read.read_whole([*plan.tasks[:-1], wrong], plan.schema)
    assert task.path in str(raised.value)
    assert fallbacks == [len(plan.tasks)]


@pytest.mark.parametrize("name", ["pk_09", "pk_with_bitmap_dv", "append_with_bitmap"])
def test_no_columns_still_counts_the_rows(tables: Path, name: str) -> None:
    """`columns=[]` (a row count) keeps every live row: the whole read, the per-file read and
    `to_batches` agree with the rows of the full read."""
    path = tables / f"{name}.db" / name
    expected = Table.open(path).scan().to_arrow().num_rows
    assert expected > 0
    scan = Table.open(path).scan(columns=[])
    assert scan.to_arrow().num_rows == expected
    assert sum(b.num_rows for b in scan.to_batches()) == expected
    plan = plan_read(path, columns=[])
    assert per_file(plan).num_rows == expected


@pytest.mark.parametrize("value", [pa.scalar("2024-01-02"), pa.scalar(""), pa.scalar(b"\x00b"),
                                   pa.scalar(None, pa.string()), pa.scalar(7, pa.int32()),
                                   pa.scalar("x", pa.large_string())])
@pytest.mark.parametrize("count", [0, 1, 70_001])
def test_partition_values_repeated(value: pa.Scalar, count: int) -> None:
    got = whole_read._repeated(value, count)
    got.validate(full=True)
    assert got.equals(pa.repeat(value, count))


@pytest.mark.parametrize("candidates", [[2, 3, 6], [7], [], [0, 1, 2, 3, 4, 5, 6, 7]])
def test_row_groups_without_a_kept_row_are_not_read(tables: Path, tmp_path: Path,
                                                    candidates: list[int], fallbacks: list[int],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of 4 row groups of 2 rows whose index candidates (or deletion vector: the same
    mask) leave some groups without a kept row: only the other groups are decoded, and the
    rows are the per-file read's."""
    plan = plan_read(tables / "append_with_bitmap.db" / "append_with_bitmap")
    task = plan.tasks[0]
    path = tmp_path / "groups.parquet"
    pq.write_table(pq.read_table(task.path), path, row_group_size=2)
    forged = dataclasses.replace(task, path=str(path), file_size=path.stat().st_size,
                                 candidate_rows=BitMap(candidates).serialize())
    read_groups: list[list[int]] = []
    real = pq.ParquetFile.read_row_groups

    def spy(self: pq.ParquetFile, groups: list[int], **kwargs: object) -> pa.Table:
        read_groups.append(list(groups))
        return real(self, groups, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", spy)
    got = whole_read.read_whole([task, forged, task], plan.schema)
    assert got.equals(per_file(plan, [task, forged, task]))
    assert got.num_rows == 16 + len(candidates)
    wanted = sorted({row // 2 for row in candidates})
    assert read_groups == ([] if len(wanted) == 4 else [wanted])
    assert fallbacks == []


def _plan_outcome(path: Path, where: ps.Predicate | None, snapshot: int | None) -> Any:
    """A plan's every outcome: tasks (field by field; the FileIO by its type), files, counts,
    schema, or the error it raised."""
    try:
        plan = plan_read(path, where, snapshot)
    except Exception as exc:                # (compared, not hidden: the same error both ways)
        return type(exc), str(exc)
    counts = plan.stats.as_dict()
    counts.pop("planning_seconds")
    tasks = [tuple(type(value) if f.name == "fileio" else value
                   for f, value in zip(dataclasses.fields(task), dataclasses.astuple(task)))
             for task in plan.tasks]
    return tasks, [f.path for f in plan.files], counts, plan.schema


@pytest.mark.parametrize("name", [*TABLES, "data_evolution_with_index"])
def test_the_plan_is_the_same_without_the_c_extensions(tables: Path, name: str) -> None:
    """`merge.plan_read` numbers files by container, partition and directory, picks runs and
    sorts in C where built (`_kernels`) and answers embedded bitmap indexes in C (`_avro`); an
    install without them plans the same tasks, files, counts and errors, for filters on each
    column's first value (equal, not equal, both of two columns, either) and snapshots."""
    from paimon_schema.query import quick_evaluate
    from paimon_schema.table import bulk_stats, merge
    from paimon_schema.table import plan as plan_module

    path = tables / f"{name}.db" / name
    try:
        first = Table.open(path).scan().to_arrow().slice(0, 1).to_pylist()
    except TableError:
        first = []
    leaves = [ps.col(column) == value for column, value in (first[0] if first else {}).items()
              if isinstance(value, (int, str)) and not isinstance(value, bool)]
    wheres: list[ps.Predicate | None] = [None, *leaves, *[~leaf for leaf in leaves]]
    if len(leaves) >= 2:
        wheres += [leaves[0] & leaves[1], leaves[0] | ~leaves[1]]
    cases = [(where, snapshot) for where in wheres for snapshot in (None, 1)]
    compiled = [_plan_outcome(path, where, snapshot) for where, snapshot in cases]
    assert any(isinstance(outcome[0], list) and outcome[0] for outcome in compiled) or name.startswith("data_")
    for modules, attribute in (((bulk_stats, merge, plan_module), "_kernels"), ((quick_evaluate,), "_avro")):
        with pytest.MonkeyPatch.context() as patch:
            for module in modules:
                patch.setattr(module, attribute, None)
            assert [_plan_outcome(path, where, snapshot) for where, snapshot in cases] == compiled
