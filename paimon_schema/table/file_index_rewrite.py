"""`rewrite_file_index`: file indexes for the data files of an existing append table, built
without the JVM and published as one new snapshot (`commit.commit`).

What Paimon's `rewrite_file_index` procedure does: for each live data file the configured
indexes are built from the file's rows (the file's own schema names and types the columns, as
Java's writer would have), the container goes into the manifest entry when it is at most
`file-index.in-manifest-threshold` bytes (Paimon's default 500), else into a new `.index`
sidecar listed in the entry's extra files; the COMPACT commit deletes each old entry and adds
it again with the new index. Index entries the call does not rebuild are kept (`replace=True`
drops them). An old sidecar is never overwritten: older snapshots still read it, so a rebuilt
one gets a new name (`<file>-1.index`, ... as Java). Containers are Java's bytes: columns and
index types in Java's HashMap order.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from paimon_schema.layouts.bitmap_index.javaorder import java_map_order
from paimon_schema.layouts.file_index import FileIndexFile, write_file_index
from paimon_schema.layouts.registry import LAYOUTS, build_index
from paimon_schema.query.predicate import Predicate
from paimon_schema.table import predicates as preds
from paimon_schema.table.commit import (CommitPlan, check_format, commit, create_new, fault,
                                        remove_quietly, where_predicate, writable)
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.manifests import ADD, DELETE, DataFile
from paimon_schema.table.metadata import Table, TableLike
from paimon_schema.table.schema import TableSchema
from paimon_schema.table.snapshots import Snapshot
from paimon_schema.values import options as index_options
from paimon_schema.values.errors import FormatError, SchemaError

__all__ = ["IndexTask", "RewritePlan", "RewriteResult", "build_container", "commit_rewrite",
           "index_spec", "plan_rewrite", "rewrite_file_index"]

#: Paimon's index type names
INDEX_TYPES = ("bloom-filter", "bitmap", "bsi", "range-bitmap")
DEFAULT_IN_MANIFEST_THRESHOLD = 500


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
            for key in LAYOUTS[index_type].options:
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

    fileio: FileIO
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
            previous = task.fileio.read_bytes(previous)
        try:
            kept = FileIndexFile.parse(previous)
        except FormatError as exc:
            raise FormatError(f"the file index of {task.path} is corrupt (rewrite it with "
                              f"replace=True): {exc.reason}", offset=exc.offset,
                              path=exc.path) from exc
        for name, stored in kept.columns.items():
            built[name] = dict(stored)
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
        with task.fileio.open_input(task.path) as source:
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


def plan_rewrite(table: TableLike, columns: Mapping[str, str | Sequence[str]] | None = None,
                 options: Mapping[str, Any] | None = None, where: Predicate | str | None = None,
                 *, replace: bool = False) -> RewritePlan:
    """One `IndexTask` per live data file (of the partitions `where` selects)."""
    tab, snap, schema = writable(table)
    spec, threshold = index_spec(schema, columns, options)
    where = where_predicate(where)
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
        check_format(data_file)
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
        fileio, path = tab.io.resolve(data_file.path)
        kept: bytes | str | None = None
        if not replace:
            sidecar = data_file.index_sidecar
            kept = tab.io.resolve(sidecar)[1] if sidecar else data_file.embedded_index
        task = IndexTask(fileio, path, data_file.file_name, data_file.format, data_file.row_count,
                         tuple(columns_), kept)
        items.append(RewriteItem(entry, data_file, task))
    return RewritePlan(tab, snap, tuple(items), threshold)


def rewrite_file_index(table: TableLike, columns: Mapping[str, str | Sequence[str]] | None = None,
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
            remove_quietly(plan.table.io, path)
        raise
    snapshot = commit(plan.table, commit_plan)
    return RewriteResult(snapshot.id, len(plan.items), embedded, tuple(sidecars),
                         sum(len(c) for c in containers))


def _write_sidecar(tab: Table, data_file: DataFile, container: bytes, written: list[str]) -> str:
    """`<data file>.index` beside the data file, or Java's next free `<data file>-N.index`
    when that name is taken (by an older snapshot's sidecar)."""
    tab.io.check_writable(data_file.path)
    directory = posixpath.dirname(data_file.path)
    candidates = [f"{data_file.file_name}.index"] + [
        f"{data_file.file_name}-{n}.index" for n in range(1, 10_000)]
    fault("sidecar")
    for name in candidates:
        try:
            create_new(tab.io, posixpath.join(directory, name), container, written)
            return name
        except FileExistsError:
            continue
    raise TableError(f"no free sidecar name for {data_file.path}")
