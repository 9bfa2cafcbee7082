"""`create_global_index`: build a btree or bitmap global index over one column of a
data-evolution (row-tracking) table and commit it as one new snapshot, as pypaimon 2.1.0's
`create_global_index` does, so that pypaimon, pypaimon-rust and Java read and use it.

What is built (pypaimon's `GlobalIndexBuilder` for sorted indexes): the live data files of each
partition, in row-id order, split into runs of contiguous row ids; each run minus the row ids
already indexed by this index type on this column is one row range, and each row range one
index file (ranges above `sorted-index.records-per-file` x 1.2 rows are cut into several
ranges, where pypaimon cuts one range into several files by key). A file holds the range's
physical rows, deleted ones included (Java indexes the physical row-id range; readers apply the
deletion vectors), with row ids local to the range. Bytes are pypaimon's: btree with the
table's `btree-index.block-size` and `btree-index.bloom-filter.enabled`, bitmap version 1 with
`bitmap-index.dictionary-block-size`. The index-manifest record is pypaimon's too (`_VERSION`
1, bucket 0, `_SOURCE_META` null); the commit is an APPEND that adds index files only, through
`commit.commit` (fresh names, atomic snapshot create, `CommitConflict` to a loser, retried on
the winner's snapshot by `retry.with_retries` as the other writers do).

The work is split so Spark can run the middle step on executors (`spark/global_index.py`):
`plan_global_index` (driver: checks, ranges, file tasks), `build_global_index` (one range:
read the column, write the file's bytes), `commit_global_index` (driver: write the files, one
commit).
"""

from __future__ import annotations

import dataclasses
import posixpath
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from paimon_schema.layouts.bitmap_global_index import build_bitmap_global_index, write_bitmap_global_index
from paimon_schema.layouts.btree_global_index import write_btree_global_index
from paimon_schema.layouts.global_index_meta import GlobalIndexMeta
from paimon_schema.table.commit import CommitPlan, commit, create_new, remove_quietly
from paimon_schema.table.errors import TableError
from paimon_schema.table.manifests import ADD
from paimon_schema.table.merge import FileTask, plan_read, read_task
from paimon_schema.table.metadata import Table
from paimon_schema.table.retry import RetryPolicy, with_retries
from paimon_schema.table.snapshots import Snapshot
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

__all__ = ["BuiltIndex", "GlobalIndexPlan", "GlobalIndexResult", "IndexTask", "build_global_index",
           "commit_global_index", "create_global_index", "create_with_retries", "plan_global_index"]

INDEX_TYPES = ("btree", "bitmap")
RECORDS_PER_FILE = 25_000_000            # sorted-index.records-per-file
_RECORDS_PER_FILE_FLOATING = 1.2         # pypaimon's _SORTED_INDEX_RECORDS_PER_FILE_FLOATING
_OPTION_ALIASES = ("sorted-index.records-per-file", "sorted-index.records-per-range",
                   "btree-index.records-per-range")


@dataclass(frozen=True)
class IndexTask:
    """One index file to build (picklable): rows `start`..`end` (inclusive row ids) of the
    column, read from `files` (each with its first row id), in row-id order."""

    index_type: str
    data_type: str
    column: str
    start: int
    end: int
    files: tuple[tuple[int, FileTask], ...]
    partition: bytes
    options: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class BuiltIndex:
    """An index file's bytes and what its manifest record says of it."""

    data: bytes
    row_count: int
    index_meta: bytes


@dataclass
class GlobalIndexPlan:
    table: Table
    snapshot: Snapshot
    column: str
    index_type: str
    field_id: int
    tasks: list[IndexTask]


@dataclass(frozen=True)
class GlobalIndexResult:
    """What `create_global_index` committed: the new snapshot id (None when every row was
    already indexed: nothing is committed) and the index files with their row ranges."""

    snapshot_id: int | None
    index_type: str
    column: str
    files: tuple[tuple[str, int, int], ...]        # (file name, first row id, last row id)


def create_global_index(table: Any, column: str, index_type: str,
                        options: Mapping[str, Any] | None = None) -> GlobalIndexResult:
    """Build the `index_type` ("btree" or "bitmap") global index of `column` over the rows not
    yet indexed and commit it; TableError naming why for a table or column it cannot index.
    A commit that loses to another writer is planned and committed again (Paimon's
    `commit.max-retries`, `commit.min-retry-wait`, `commit.max-retry-wait`, `commit.timeout`
    in the table options or `options`; `commit.max-retries=0` raises the `CommitConflict`)."""
    return create_with_retries(table, column, index_type, options,
                               lambda tasks: [build_global_index(task) for task in tasks])


def create_with_retries(table: Any, column: str, index_type: str, options: Mapping[str, Any] | None,
                        build: Callable[[Sequence[IndexTask]], Sequence[BuiltIndex]]) -> GlobalIndexResult:
    """Plan, `build` the index files, commit; on `CommitConflict` plan again on the new latest
    snapshot (`retry.RetryPolicy`) and build only the row ranges not built yet (rows the winner
    appended; a range another writer indexed meanwhile is no longer planned)."""
    tab = Table.open(table)
    policy = RetryPolicy.of(tab.schema().options, options)
    built: dict[tuple[bytes, int, int], BuiltIndex] = {}

    def key(task: IndexTask) -> tuple[bytes, int, int]:
        return task.partition, task.start, task.end

    def attempt() -> GlobalIndexResult:
        plan = plan_global_index(tab, column, index_type, options)
        todo = [task for task in plan.tasks if key(task) not in built]
        files = build(todo) if todo else []
        if len(files) != len(todo):
            raise RuntimeError(f"{len(files)} index files built for {len(todo)} row ranges")
        built.update(zip(map(key, todo), files))
        return commit_global_index(plan, [built[key(task)] for task in plan.tasks])

    return with_retries(attempt, policy)


def plan_global_index(table: Any, column: str, index_type: str,
                      options: Mapping[str, Any] | None = None) -> GlobalIndexPlan:
    """The index files to build, or TableError for what cannot be indexed (checked before
    anything is read or written)."""
    tab = Table.open(table)
    tab.io.check_writable(tab.path)
    kind = str(index_type).strip().lower()
    if kind not in INDEX_TYPES:
        raise TableError(f"global index type {index_type!r} cannot be built here (one of: "
                         f"{', '.join(INDEX_TYPES)}; vector and full-text indexes need their engines)")
    schema = tab.schema()
    if not schema.flag("row-tracking.enabled"):
        raise TableError(f"{tab.path} is not a data-evolution table: a global index needs row ids "
                         f"('row-tracking.enabled' = 'true', with 'data-evolution.enabled')")
    if schema.primary_keys:
        raise TableError(f"{tab.path} is a primary-key table: its global indexes are built by Paimon")
    field = schema.by_name.get(column)
    if field is None:
        raise TableError(f"{tab.path} has no column {column!r} (columns: "
                         f"{', '.join(f.name for f in schema.fields)})")
    dtype = field.atomic_type
    if dtype is None:
        raise TableError(f"column {column!r} has a nested type: a {kind} global index keys atomic values")
    _check_type(kind, dtype, column)
    merged = {**schema.options, **{k: str(v) for k, v in (options or {}).items()}}
    if merged.get("global-index.external-path"):
        raise TableError("'global-index.external-path' is set: writing global indexes outside the "
                         "table is not supported")
    snap = tab.snapshot()
    if snap is None:
        raise TableError(f"{tab.path} has no snapshot yet: there is nothing to index")
    read = plan_read(tab, None, snap.id, [column])
    live = {(f.partition_path, f.file_name): f for f in tab.plan(snap.id).files}
    indexed = [g.row_range for g in tab.global_indexes(snap)
               if g.index_type == kind and g.field_id == field.id and not g.meta.extra_field_ids]
    partitions = {tab.data_file(e, tab.schema(snap.schema_id)).partition_path: bytes(e["_PARTITION"])
                  for e in tab.live_entries(snap)}
    limit = int(_records_per_file(merged) * _RECORDS_PER_FILE_FLOATING)
    if limit <= 0:
        raise TableError("sorted-index.records-per-file must be positive")
    runs: dict[str, list[tuple[int, FileTask]]] = {}
    for task in read.tasks:
        data_file = live[(task.partition_path, task.file_name)]
        if data_file.first_row_id is None:
            raise TableError(f"data file {data_file.file_name} has no first row id: it was written "
                             f"before row tracking, and its rows cannot be indexed")
        physical = dataclasses.replace(task, deletion_file=None, candidate_rows=None)
        runs.setdefault(task.partition_path, []).append((data_file.first_row_id, physical))
    frozen_options = tuple(sorted(merged.items()))
    tasks = []
    for partition_path, files in sorted(runs.items()):
        files.sort(key=lambda item: item[0])
        for run in _contiguous(files):
            first, last = run[0][0], run[-1][0] + run[-1][1].row_count - 1
            for start, end in _exclude((first, last), indexed):
                for lo in range(start, end + 1, limit):
                    hi = min(end, lo + limit - 1)
                    wanted = tuple((f, t) for f, t in run if f <= hi and f + t.row_count > lo)
                    tasks.append(IndexTask(kind, str(dtype), column, lo, hi, wanted,
                                           partitions[partition_path], frozen_options))
    return GlobalIndexPlan(tab, snap, column, kind, field.id, tasks)


def _check_type(kind: str, dtype: DataType, column: str) -> None:
    try:
        if kind == "btree":
            write_btree_global_index(dtype, [None])
        else:
            write_bitmap_global_index(dtype, [None])
    except SchemaError as exc:
        raise TableError(f"column {column!r} ({dtype}) cannot have a {kind} global index: {exc}") from exc


def _records_per_file(options: Mapping[str, str]) -> int:
    for key in _OPTION_ALIASES:
        if options.get(key) is not None:
            try:
                return int(options[key])
            except ValueError:
                raise TableError(f"{key} = {options[key]!r} is not a number of records") from None
    return RECORDS_PER_FILE


def _contiguous(files: list[tuple[int, FileTask]]) -> list[list[tuple[int, FileTask]]]:
    runs: list[list[tuple[int, FileTask]]] = []
    for first, task in files:
        if runs and runs[-1][-1][0] + runs[-1][-1][1].row_count == first:
            runs[-1].append((first, task))
        elif runs and first < runs[-1][-1][0] + runs[-1][-1][1].row_count:
            raise TableError(f"data files overlap at row id {first}: columns split across files "
                             f"cannot be indexed here")
        else:
            runs.append([(first, task)])
    return [run for run in runs if sum(t.row_count for _, t in run) > 0]


def _exclude(span: tuple[int, int], indexed: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the inclusive range `span` outside every inclusive range of `indexed`."""
    out = [span]
    for lo, hi in indexed:
        out = [part for start, end in out
               for part in ((start, min(end, lo - 1)), (max(start, hi + 1), end))
               if part[0] <= part[1]]
    return out


def build_global_index(task: IndexTask) -> BuiltIndex:
    """Read the task's rows of the column and write the index file's bytes (the part a Spark
    executor runs)."""
    chunks = []
    for first, file_task in task.files:
        batches = list(read_task(file_task, use_threads=False))
        values = pa.concat_arrays([b.column(0) for b in batches]) if batches else pa.array([])
        lo = max(task.start, first) - first
        hi = min(task.end, first + file_task.row_count - 1) - first
        chunks.append(values.slice(lo, hi - lo + 1))
    column = pa.chunked_array(chunks)
    if len(column) != task.end - task.start + 1:
        raise TableError(f"rows {task.start}..{task.end} of {task.column}: read {len(column)} values")
    options = dict(task.options)
    if task.index_type == "btree":
        written = write_btree_global_index(
            task.data_type, column,
            block_size=_memory(options.get("btree-index.block-size", "64kb")),
            bloom_filter=options.get("btree-index.bloom-filter.enabled", "false").lower() == "true",
            java_null_bitmap=False)
        return BuiltIndex(written.data, written.row_count, written.index_meta)
    bitmap = build_bitmap_global_index(
        task.data_type, column,
        dictionary_block_size=_memory(options.get("bitmap-index.dictionary-block-size", "16kb")))
    if bitmap is None:                 # not reached: a range has rows
        raise TableError(f"rows {task.start}..{task.end} of {task.column}: no rows to index")
    return BuiltIndex(bitmap.data, bitmap.row_count, bitmap.index_meta)


def _memory(text: str) -> int:
    """Paimon's MemorySize text ("64kb", "1 mb", "4096") in bytes."""
    value = text.strip().lower().replace(" ", "")
    for suffix, scale in (("kb", 1 << 10), ("k", 1 << 10), ("mb", 1 << 20), ("m", 1 << 20),
                          ("gb", 1 << 30), ("g", 1 << 30), ("b", 1)):
        if value.endswith(suffix):
            return int(value[:-len(suffix)]) * scale
    return int(value)


def commit_global_index(plan: GlobalIndexPlan, built: Sequence[BuiltIndex]) -> GlobalIndexResult:
    """Write the built files under fresh names and commit them in one snapshot."""
    if len(built) != len(plan.tasks):
        raise TableError(f"{len(plan.tasks)} index files planned, {len(built)} built")
    if not plan.tasks:
        return GlobalIndexResult(None, plan.index_type, plan.column, ())
    tab = plan.table
    commit_plan = CommitPlan(base=plan.snapshot, commit_kind="APPEND")
    files = []
    tab.io.mkdirs(posixpath.join(tab.path, "index"))
    try:
        for task, index in zip(plan.tasks, built):
            name = f"{task.index_type}-global-index-{uuid.uuid4()}.index"
            create_new(tab.io, posixpath.join(tab.path, "index", name), index.data, commit_plan.written)
            meta = GlobalIndexMeta(task.index_type, task.start, task.end, plan.field_id, None,
                                   index.index_meta, None)
            commit_plan.index_added.append({
                "_VERSION": 1, "_KIND": ADD, "_PARTITION": task.partition, "_BUCKET": 0,
                "_INDEX_TYPE": task.index_type, "_FILE_NAME": name, "_FILE_SIZE": len(index.data),
                "_ROW_COUNT": index.row_count, "_DELETIONS_VECTORS_RANGES": None,
                "_EXTERNAL_PATH": None, "_GLOBAL_INDEX": meta.to_record()})
            files.append((name, task.start, task.end))
    except BaseException:
        for path in commit_plan.written:
            remove_quietly(tab.io, path)
        raise
    snapshot = commit(tab, commit_plan)
    return GlobalIndexResult(snapshot.id, plan.index_type, plan.column, tuple(files))
