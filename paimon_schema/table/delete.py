"""`delete_where`: row deletes on an append table with `deletion-vectors.enabled`, as
deletion vectors, without the JVM, published as one new snapshot (`commit.commit`).

What Paimon's DELETE does on such a table: the rows matching the predicate (Spark SQL
semantics: a comparison with NULL deletes nothing) join each file's deletion vector; per
partition and bucket one new deletion-vector index file holds every vector of that bucket and
replaces the index files it supersedes in the index manifest (Java keeps one per bucket of a
bucketed table), with each vector's range and cardinality; the commit is COMPACT, as Java's.
"""

from __future__ import annotations

import array
import os
import posixpath
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from paimon_schema.layouts.deletion_vectors import read_deletion_vector, write_deletion_vectors
from paimon_schema.query.predicate import Predicate
from paimon_schema.table import predicates as preds
from paimon_schema.table.commit import (CommitPlan, check_format, commit, create_new, fault,
                                        live_index_entries, remove_quietly, where_predicate,
                                        writable)
from paimon_schema.table.errors import TableError
from paimon_schema.table.manifests import ADD, DELETION_VECTORS
from paimon_schema.table.merge import BATCH_ROWS, FileTask, TaskPlan, _file_batches, evolve, plan_read
from paimon_schema.table.metadata import Table, TableLike
from paimon_schema.table.schema import TableSchema
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.positions import fresh_bitmap

__all__ = ["DeleteResult", "delete_where", "deleted_positions"]

_POSITION = "__paimon_schema_position"
MAX_32_BIT_POSITION = 2**31 - 1


@dataclass(frozen=True)
class DeleteResult:
    """What `delete_where` did: the new snapshot (None when no row was deleted), the rows
    newly deleted, the data files whose vectors changed, the index files written."""

    snapshot_id: int | None
    rows_deleted: int
    files: int
    index_files: tuple[str, ...]


def deleted_positions(table: TableLike, where: Predicate | str, snapshot: int | None = None
                      ) -> tuple[TaskPlan, dict[tuple[str, int, str], np.ndarray]]:
    """(the read plan, {(partition path, bucket, file name): positions matching `where`}),
    files pruned by partition and index as a read would (deleted rows included)."""
    predicate = where_predicate(where)
    plan = plan_read(table, predicate, snapshot, columns=[], with_filter_columns=True)
    expression = preds.to_arrow(predicate, plan.schema)
    out = {}

    def positions(task: FileTask) -> np.ndarray:
        found, offset = [], 0
        try:
            for batch in _file_batches(task, BATCH_ROWS):
                rows = np.arange(offset, offset + batch.num_rows, dtype=np.int64)
                data = pa.Table.from_batches([evolve(batch, task)]).append_column(
                    _POSITION, pa.array(rows))
                found.append(data.filter(expression).column(_POSITION).to_numpy())
                offset += batch.num_rows
        except (OSError, pa.ArrowException) as exc:
            raise TableError(f"data file {task.path} cannot be read: {exc}") from exc
        if offset != task.row_count:
            raise TableError(f"{task.path} has {offset} rows, its manifest entry says "
                             f"{task.row_count}")
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    workers = max(1, min(len(plan.tasks), os.cpu_count() or 1))
    with ThreadPoolExecutor(workers, thread_name_prefix="paimon-delete") as pool:
        for task, found in zip(plan.tasks, pool.map(positions, plan.tasks)):
            if len(found):
                out[(task.partition_path, task.bucket, task.file_name)] = found
    return plan, out


def delete_where(table: TableLike, where: Predicate | str) -> DeleteResult:
    """Delete the rows matching `where` (a `ps.col` predicate or a Spark SQL condition) from
    an append table with deletion vectors, as one new snapshot; see the module doc."""
    from pyroaring import BitMap, BitMap64

    tab, snap, schema = writable(table, deletion_vectors=True)
    if where is None:
        raise SchemaError("delete_where needs a predicate (deleting every row is not offered)")
    with_dvs = {(f.partition_path, f.bucket, f.file_name): f for f in tab.data_files(snap)}
    for data_file in with_dvs.values():
        check_format(data_file)
    _, matches = deleted_positions(tab, where, snap.id)
    bitmap64 = schema.flag("deletion-vectors.bitmap64")
    snap_schema = tab.schema(snap.schema_id)
    entries = {}
    for entry in tab.live_entries(snap):
        f = tab.data_file(entry, snap_schema)
        key = (f.partition_path, f.bucket, f.file_name)
        entries[key] = (entry, with_dvs[key])
    changed: dict[tuple[bytes, int], dict[str, Any]] = {}
    rows_deleted = 0
    for key, positions in matches.items():
        entry, data_file = entries[key]
        if not bitmap64 and positions.max() > MAX_32_BIT_POSITION:
            raise TableError(f"{data_file.path}: row {positions.max()} does not fit a 32-bit "
                             f"deletion vector (set 'deletion-vectors.bitmap64' = 'true')")
        old = tab.deletion_vector(data_file) if data_file.deletion_file else None
        merged: BitMap | BitMap64
        if bitmap64:
            merged = BitMap64(array.array("Q", positions.astype(np.uint64).tobytes()))
            if old is not None:
                merged |= old if isinstance(old, BitMap64) else BitMap64(old)
        else:
            merged = fresh_bitmap(positions)
            if old is not None:
                merged |= old if isinstance(old, BitMap) else BitMap(old)
        added = len(merged) - (len(old) if old is not None else 0)
        if added == 0:
            continue
        rows_deleted += added
        changed.setdefault((bytes(entry["_PARTITION"]), entry["_BUCKET"]), {})[data_file.file_name] = merged
    if not changed:
        return DeleteResult(None, 0, 0, ())
    commit_plan = CommitPlan(snap)
    written_names = []
    live_names: dict[tuple[bytes, int], set[str]] = {}
    for e, f in entries.values():
        live_names.setdefault((bytes(e["_PARTITION"]), e["_BUCKET"]), set()).add(f.file_name)
    index_entries = [e for e in live_index_entries(tab, snap) if e["_INDEX_TYPE"] == DELETION_VECTORS]
    try:
        for (partition, bucket), updates in changed.items():
            vectors: dict[str, Any] = {}
            for entry in index_entries:
                if bytes(entry["_PARTITION"]) != partition or entry["_BUCKET"] != bucket:
                    continue
                commit_plan.index_removed.add((partition, bucket, DELETION_VECTORS, entry["_FILE_NAME"]))
                index_file = tab.index_file(entry, snap_schema)
                for name, offset, length, _ in index_file.dv_ranges:
                    if name in live_names[(partition, bucket)] and name not in updates:
                        vectors[name] = _read_vector(tab, index_file.path, offset, length)
            vectors.update(updates)
            data, ranges = write_deletion_vectors(vectors, bitmap64=bitmap64)
            name = f"index-{uuid.uuid4()}-0"
            directory = _index_dir(tab, snap_schema, entries, partition, bucket)
            fault("deletion-vectors")
            tab.io.mkdirs(directory)
            create_new(tab.io, posixpath.join(directory, name), data, commit_plan.written)
            written_names.append(name)
            commit_plan.index_added.append({
                "_VERSION": 1, "_KIND": ADD, "_PARTITION": partition, "_BUCKET": bucket,
                "_INDEX_TYPE": DELETION_VECTORS, "_FILE_NAME": name, "_FILE_SIZE": len(data),
                "_ROW_COUNT": len(vectors),
                "_DELETIONS_VECTORS_RANGES": [
                    {"f0": n, "f1": ranges[n][0], "f2": ranges[n][1], "_CARDINALITY": len(v)}
                    for n, v in vectors.items()],
                "_EXTERNAL_PATH": None, "_GLOBAL_INDEX": None})
    except BaseException:
        for path in commit_plan.written:
            remove_quietly(tab.io, path)
        raise
    snapshot = commit(tab, commit_plan)
    return DeleteResult(snapshot.id, rows_deleted, sum(len(u) for u in changed.values()),
                        tuple(written_names))


def _read_vector(tab: Table, path: str, offset: int, length: int) -> Any:
    chunk = tab.read_bytes(path, offset, length + 8)
    return read_deletion_vector(chunk, 0, length)


def _index_dir(tab: Table, schema: TableSchema, entries: Mapping, partition: bytes,
               bucket: int) -> str:
    """Where Paimon puts a new index file: `index/`, or the bucket's data directory with
    `index-file-in-data-file-dir`."""
    if schema.flag("index-file-in-data-file-dir"):
        for entry, data_file in entries.values():
            if bytes(entry["_PARTITION"]) == partition and entry["_BUCKET"] == bucket:
                return posixpath.dirname(data_file.path)
    return posixpath.join(tab.path, "index")
