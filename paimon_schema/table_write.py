"""Write to an existing Paimon table without the JVM: file indexes for its data files
(`rewrite_file_index`) and row deletes as deletion vectors (`delete_where`), each published
as one new snapshot by `table_commit.commit`.

`rewrite_file_index` does what Paimon's `rewrite_file_index` procedure does: for each live
data file it builds the configured indexes from the file's rows (the file's own schema names
and types the columns, as Java's writer would have), puts the container in the manifest entry
when it is at most `file-index.in-manifest-threshold` bytes (Paimon's default 500) or else in
a new `.index` sidecar listed in the entry's extra files, and commits a COMPACT snapshot that
deletes each old entry and adds it again with the new index. Index entries the call does not
rebuild are kept (`replace=True` drops them). An old sidecar is never overwritten: older
snapshots still read it, so a rebuilt one gets a new name (`<file>-1.index`, ... as Java).

`delete_where` does what Paimon's DELETE does on an append table with
`deletion-vectors.enabled`: the rows matching the predicate (Spark SQL semantics: a NULL
comparison deletes nothing) join each file's deletion vector; per partition and bucket one new
deletion-vector index file holds every vector of that bucket, replacing the index files it
supersedes in the index manifest; the commit is COMPACT, as Java's.

Only append tables stored as Parquet or ORC on a local filesystem are written; anything else
raises `TableError` naming what is not supported, before any file is written.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from paimon_schema import options as index_options
from paimon_schema.errors import FormatError, SchemaError
from paimon_schema.indexes import build_index
from paimon_schema.javaorder import java_map_order
from paimon_schema.layouts.deletion_vectors import write_deletion_vectors
from paimon_schema.layouts.file_index import FileIndexFile, write_file_index
from paimon_schema.query import Predicate
from paimon_schema.table import (ADD, DELETE, DELETION_VECTORS, DataFile, Snapshot, Table,
                                 TableError, TableSchema)
from paimon_schema.table_commit import (CommitPlan, commit, create_new, fault, live_index_entries,
                                        local_path)

__all__ = ["DeleteResult", "IndexTask", "RewriteResult", "build_container", "delete_where",
           "rewrite_file_index"]

#: Paimon's index type names
INDEX_TYPES = ("bloom-filter", "bitmap", "bsi", "range-bitmap")
DEFAULT_IN_MANIFEST_THRESHOLD = 500
READABLE_FORMATS = ("parquet", "orc")
_POSITION = "__paimon_schema_position"


# ------------------------------------------------------------------------------ checks

def writable(table: Any, *, deletion_vectors: bool = False) -> tuple[Table, Snapshot, TableSchema]:
    """The table, its latest snapshot and schema, or TableError for a table these writers
    do not support."""
    tab = Table.open(table)
    local_path(tab)
    schema = tab.schema()
    if schema.primary_keys:
        raise TableError(f"{tab.path} is a primary-key table (keys {', '.join(schema.primary_keys)}): "
                         f"only append tables can be written here")
    if schema.data_evolution:
        raise TableError(f"{tab.path} is a data-evolution table: writing it is not supported")
    if deletion_vectors and not schema.deletion_vectors:
        raise TableError(f"{tab.path} does not have 'deletion-vectors.enabled' = 'true': its rows "
                         f"cannot be deleted by deletion vectors")
    snap = tab.snapshot()
    if snap is None:
        raise TableError(f"{tab.path} has no snapshot yet: there is nothing to write to")
    return tab, snap, schema


def _check_format(data_file: DataFile) -> None:
    if data_file.format not in READABLE_FORMATS:
        raise TableError(f"{data_file.path}: {data_file.format} data files are not supported "
                         f"(only {', '.join(READABLE_FORMATS)})")


def _where(where: Predicate | str | None) -> Predicate | None:
    if isinstance(where, str):
        from paimon_schema.spark.predicates import parse_sql

        return parse_sql(where)
    return where


# ------------------------------------------------------------------------------ index specs

def index_spec(schema: TableSchema, columns: Mapping[str, str | Sequence[str]] | None,
               options: Mapping[str, Any] | None) -> tuple[dict[str, dict[str, dict[str, Any]]], int]:
    """({column: {index type: its options}} in schema order, the in-manifest threshold) from
    `columns` (column -> index type(s)) or, without it, the `file-index.<type>.columns`
    options; options are the table's overlaid with `options` (Paimon's keys)."""
    merged = {**schema.options, **{k: str(v) for k, v in (options or {}).items()}}
    wanted: dict[str, list[str]] = {}
    if columns is None:
        for index_type in INDEX_TYPES:
            for name in (merged.get(f"file-index.{index_type}.columns") or "").split(","):
                if name.strip():
                    wanted.setdefault(name.strip(), []).append(index_type)
        if not wanted:
            raise SchemaError("no index to build: pass columns={column: index type} or set "
                              "'file-index.<type>.columns' (bitmap, bloom-filter, bsi, "
                              "range-bitmap)")
    else:
        for name, types in columns.items():
            wanted[name] = [types] if isinstance(types, str) else list(types)
    spec: dict[str, dict[str, dict[str, Any]]] = {}
    for name in sorted(wanted, key=lambda n: [f.name for f in schema.fields].index(n)
                       if n in schema.by_name else -1):
        field = schema.field(name)
        dtype = field.atomic_type
        per_column: dict[str, dict[str, Any]] = {}
        for index_type in sorted(set(wanted[name]), key=_type_order):
            opts = {}
            for key in index_options.KNOWN[index_type]:
                value = merged.get(f"file-index.{index_type}.{name}.{key}")   # per column only, as Paimon
                if value is not None:
                    opts[key] = value
            if dtype is None:
                raise SchemaError(f"column {name!r} ({field.type}) cannot have a {index_type} index")
            try:
                build_index(index_type, dtype, [], **opts)      # type and options check
            except SchemaError as exc:
                raise SchemaError(f"column {name!r}: {exc}") from exc
            per_column[index_type] = opts
        spec[name] = per_column
    threshold = index_options.memory_size(
        merged.get("file-index.in-manifest-threshold", DEFAULT_IN_MANIFEST_THRESHOLD))
    return spec, threshold


def _type_order(index_type: str) -> int:
    if index_type not in INDEX_TYPES:
        raise SchemaError(f"unknown index type {index_type!r} (known: {', '.join(INDEX_TYPES)})")
    return INDEX_TYPES.index(index_type)


# ------------------------------------------------------------------------------ building

@dataclass(frozen=True)
class IndexTask:
    """What a worker needs to build one data file's container (picklable)."""

    filesystem: pafs.FileSystem
    path: str
    file_name: str
    format: str
    row_count: int
    #: (column name in the file, its type, ((index type, options), ...))
    columns: tuple[tuple[str, str, tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]], ...]
    #: the old container (embedded bytes, or its sidecar's path), whose other entries stay
    kept: bytes | str | None


def build_container(task: IndexTask) -> bytes:
    """The file-index container of one data file: the task's indexes built from its rows,
    plus the old container's entries for other (column, index type) pairs."""
    names = [c for c, _, _ in task.columns]
    table = _read_columns(task, names)
    if table.num_rows != task.row_count:
        raise TableError(f"{task.path} has {table.num_rows} rows, its manifest entry says "
                         f"{task.row_count}")
    built: dict[str, dict[str, bytes | None]] = {}
    if task.kept is not None:
        previous = task.kept
        if isinstance(previous, str):
            with task.filesystem.open_input_file(previous) as f:
                previous = f.read()
        try:
            kept = FileIndexFile.parse(previous)
        except FormatError as exc:
            raise FormatError(f"the file index of {task.path} is corrupt (rewrite it with "
                              f"replace=True): {exc.reason}", offset=exc.offset,
                              path=exc.path) from exc
        for name, indexes in kept.columns.items():
            built[name] = dict(indexes)
    for name, data_type, indexes in task.columns:
        values = _values(table.column(name))
        column = built.setdefault(name, {})
        for index_type, opts in indexes:
            column[index_type] = build_index(index_type, data_type, values, **dict(opts))
    # Java's writer keeps columns, and each column's indexes, in HashMaps keyed by name
    return write_file_index({name: {t: built[name][t]
                                    for t in java_map_order(list(built[name]), "string")}
                             for name in java_map_order(list(built), "string")})


def _read_columns(task: Any, names: Sequence[str]) -> pa.Table:
    try:
        with task.filesystem.open_input_file(task.path) as source:
            if task.format == "parquet":
                import pyarrow.parquet as pq

                return pq.read_table(source, columns=list(names))
            if task.format == "orc":
                import pyarrow.orc as orc

                return orc.ORCFile(source).read(columns=list(names))
    except (OSError, pa.ArrowException) as exc:
        raise TableError(f"data file {task.path} cannot be read: {exc}") from exc
    raise TableError(f"{task.path}: {task.format} data files are not supported")


def _values(column: pa.ChunkedArray) -> Any:
    """The column as `build_index` takes it: a numpy array for null-free numbers and strings
    (the fast paths), else plain Python values."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if array.null_count == 0 and (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)
                                  or pa.types.is_string(array.type)
                                  or pa.types.is_large_string(array.type)):
        return array.to_numpy(zero_copy_only=False)
    return array.to_pylist()


# ------------------------------------------------------------------------------ rewrite_file_index

@dataclass(frozen=True)
class RewriteItem:
    entry: dict
    data_file: DataFile
    task: IndexTask


@dataclass(frozen=True)
class RewritePlan:
    table: Table
    snapshot: Snapshot
    items: tuple[RewriteItem, ...]
    threshold: int


@dataclass(frozen=True)
class RewriteResult:
    """What `rewrite_file_index` did: the new snapshot (None when no file matched)."""

    snapshot_id: int | None
    files: int
    embedded: int
    sidecars: tuple[str, ...]
    index_bytes: int


def plan_rewrite(table: Any, columns: Mapping[str, str | Sequence[str]] | None = None,
                 options: Mapping[str, Any] | None = None, where: Predicate | str | None = None,
                 *, replace: bool = False) -> RewritePlan:
    """One `IndexTask` per live data file (of the partitions `where` selects)."""
    from paimon_schema.spark import predicates as preds

    tab, snap, schema = writable(table)
    spec, threshold = index_spec(schema, columns, options)
    where = _where(where)
    if where is not None:
        preds.check_columns(where, schema)
        outside = {leaf.column for leaf in preds.leaves(where)} - set(schema.partition_keys)
        if outside:
            raise SchemaError(f"where selects partitions and may only name partition columns "
                              f"({', '.join(schema.partition_keys) or 'none'}), not "
                              f"{', '.join(sorted(outside))}")
    items = []
    snap_schema = tab.schema(snap.schema_id)
    for entry in tab.live_entries(snap):
        data_file = tab.data_file(entry, snap_schema)
        if where is not None and preds.partition_verdict(where, data_file.partition) is False:
            continue
        _check_format(data_file)
        file_schema = tab.schema(data_file.schema_id)
        columns_ = []
        for name, indexes in spec.items():
            old = file_schema.by_id.get(schema.field(name).id)
            if old is None:
                continue                  # added after this file was written: no values
            columns_.append((old.name, old.type if isinstance(old.type, str) else str(old.type),
                             tuple((t, tuple(sorted(o.items()))) for t, o in indexes.items())))
        if not columns_:
            continue                      # none of the columns existed when it was written
        fs, path = tab.filesystem_for(data_file.path)
        kept: bytes | str | None = None
        if not replace:
            sidecar = data_file.index_sidecar
            kept = tab.filesystem_for(sidecar)[1] if sidecar else data_file.embedded_index
        task = IndexTask(fs, path, data_file.file_name, data_file.format, data_file.row_count,
                         tuple(columns_), kept)
        items.append(RewriteItem(entry, data_file, task))
    return RewritePlan(tab, snap, tuple(items), threshold)


def rewrite_file_index(table: Any, columns: Mapping[str, str | Sequence[str]] | None = None,
                       options: Mapping[str, Any] | None = None,
                       where: Predicate | str | None = None, *, replace: bool = False,
                       workers: int | None = None) -> RewriteResult:
    """Build file indexes for the table's live data files and commit them as a new snapshot.

    `columns` maps a column to its index type(s) (`{"id": "bloom-filter", "name": ["bitmap",
    "bsi"]}`); without it the table's `file-index.<type>.columns` options say. `options` adds
    or overrides table options (`file-index.bloom-filter.id.fpp`,
    `file-index.in-manifest-threshold`, ...). `where` (partition columns only) limits the
    rewrite to some partitions. Files are built on a thread pool (`workers`, default one per
    CPU); the Spark job `paimon_schema.spark.rewrite_file_index` builds them on executors.
    """
    plan = plan_rewrite(table, columns, options, where, replace=replace)
    tasks = [item.task for item in plan.items]
    workers = max(1, min(len(tasks), workers or os.cpu_count() or 1))
    if workers == 1:
        containers = [build_container(t) for t in tasks]
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="paimon-index") as pool:
            containers = list(pool.map(build_container, tasks))
    return commit_rewrite(plan, containers)


def commit_rewrite(plan: RewritePlan, containers: Sequence[bytes]) -> RewriteResult:
    """Embed or write each container, then commit (see the module doc)."""
    if len(containers) != len(plan.items):
        raise ValueError(f"{len(containers)} containers for {len(plan.items)} files")
    if not plan.items:
        return RewriteResult(None, 0, 0, (), 0)
    commit_plan = CommitPlan(plan.snapshot)
    sidecars = []
    embedded = 0
    try:
        for item, container in zip(plan.items, containers):
            meta = dict(item.entry["_FILE"])
            extra = [n for n in meta.get("_EXTRA_FILES") or () if not n.endswith(".index")]
            if len(container) <= plan.threshold:
                meta["_EMBEDDED_FILE_INDEX"] = bytes(container)
                embedded += 1
            else:
                name = _write_sidecar(plan.table, item.data_file, container, commit_plan.written)
                sidecars.append(name)
                extra.append(name)
                meta["_EMBEDDED_FILE_INDEX"] = None
            meta["_EXTRA_FILES"] = extra
            commit_plan.data_entries.append({**item.entry, "_KIND": DELETE})
            commit_plan.data_entries.append({**item.entry, "_KIND": ADD, "_FILE": meta})
    except BaseException:
        for path in commit_plan.written:
            _unlink_quietly(path)
        raise
    snapshot = commit(plan.table, commit_plan)
    return RewriteResult(snapshot.id, len(plan.items), embedded, tuple(sidecars),
                         sum(len(c) for c in containers))


def _write_sidecar(tab: Table, data_file: DataFile, container: bytes, written: list[str]) -> str:
    """`<data file>.index` beside the data file, or Java's next free `<data file>-N.index`
    when that name is taken (by an older snapshot's sidecar)."""
    fs, path = tab.filesystem_for(data_file.path)
    if not isinstance(fs, pafs.LocalFileSystem):
        raise TableError(f"{data_file.path} is not on the local filesystem: its sidecar "
                         f"cannot be written")
    directory = os.path.dirname(path)
    candidates = [f"{data_file.file_name}.index"] + [
        f"{data_file.file_name}-{n}.index" for n in range(1, 10_000)]
    fault("sidecar")
    for name in candidates:
        try:
            create_new(os.path.join(directory, name), container, written)
            return name
        except FileExistsError:
            continue
    raise TableError(f"no free sidecar name for {data_file.path}")


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# ------------------------------------------------------------------------------ delete_where

@dataclass(frozen=True)
class DeleteResult:
    """What `delete_where` did: the new snapshot (None when no row was deleted), the rows
    newly deleted, the data files whose vectors changed, the index files written."""

    snapshot_id: int | None
    rows_deleted: int
    files: int
    index_files: tuple[str, ...]


def deleted_positions(table: Any, where: Predicate | str, snapshot: int | None = None
                      ) -> tuple[Any, dict[tuple[str, int, str], np.ndarray]]:
    """(the read plan, {(partition path, bucket, file name): positions matching `where`}),
    files pruned by partition and index as a read would (deleted rows included)."""
    from paimon_schema.spark import predicates as preds
    from paimon_schema.spark.merge import BATCH_ROWS, _file_batches, evolve, plan_read

    where = _where(where)
    plan = plan_read(table, where, snapshot, columns=[], with_filter_columns=True)
    expression = preds.to_arrow(where, plan.schema)
    out = {}

    def positions(task: Any) -> np.ndarray:
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


def delete_where(table: Any, where: Predicate | str) -> DeleteResult:
    """Delete the rows matching `where` (a `ps.col` predicate or a Spark SQL condition) from
    an append table with deletion vectors, as one new snapshot; see the module doc."""
    from pyroaring import BitMap, BitMap64

    tab, snap, schema = writable(table, deletion_vectors=True)
    if where is None:
        raise SchemaError("delete_where needs a predicate (deleting every row is not offered)")
    for data_file in tab.data_files(snap):
        _check_format(data_file)
    _, matches = deleted_positions(tab, where, snap.id)
    bitmap64 = schema.flag("deletion-vectors.bitmap64")
    snap_schema = tab.schema(snap.schema_id)
    with_dvs = {(f.partition_path, f.bucket, f.file_name): f for f in tab.data_files(snap)}
    entries = {}
    for entry in tab.live_entries(snap):
        f = tab.data_file(entry, snap_schema)
        key = (f.partition_path, f.bucket, f.file_name)
        entries[key] = (entry, with_dvs[key])
    changed: dict[tuple[bytes, int], dict[str, Any]] = {}
    rows_deleted = 0
    for key, positions in matches.items():
        entry, data_file = entries[key]
        old = tab.deletion_vector(data_file) if data_file.deletion_file else None
        new = (BitMap64 if bitmap64 or (len(positions) and positions.max() >= 2**31) else BitMap)(
            positions.astype(np.uint64) if bitmap64 else positions.astype(np.uint32))
        merged = new | old if old is not None else new
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
                index_file = tab._index_file(entry, snap_schema)
                for name, offset, length, cardinality in index_file.dv_ranges:
                    if name in live_names[(partition, bucket)] and name not in updates:
                        vectors[name] = _read_vector(tab, index_file.path, offset, length)
            vectors.update(updates)
            data, ranges = write_deletion_vectors(vectors, bitmap64=bitmap64)
            name = f"index-{uuid.uuid4()}-0"
            directory = _index_dir(tab, snap_schema, entries, partition, bucket)
            fault("deletion-vectors")
            os.makedirs(directory, exist_ok=True)
            create_new(os.path.join(directory, name), data, commit_plan.written)
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
            _unlink_quietly(path)
        raise
    snapshot = commit(tab, commit_plan)
    return DeleteResult(snapshot.id, rows_deleted, sum(len(u) for u in changed.values()),
                        tuple(written_names))


def _read_vector(tab: Table, path: str, offset: int, length: int) -> Any:
    from paimon_schema.layouts.deletion_vectors import read_deletion_vector

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
    return os.path.join(tab.path, "index")
