"""Commit a new snapshot of a Paimon table: manifests, manifest lists, index manifest, then the
snapshot file, created atomically so a concurrent commit is never overwritten.

Java's `FileStoreCommitImpl` in what a reader sees: the new snapshot's base manifest list holds
the previous snapshot's base and delta manifests (merged into one manifest of the live files
once there are `manifest.merge-min-count` of them), its delta list the one manifest of this
commit's ADD/DELETE entries; the index manifest holds the live index entries (all ADD) after
this commit's index changes. Avro schemas are Paimon's current ones (a superset of older
Paimons': the 1.0 reader reads them), zstd unless `manifest.compression` says otherwise.

Order is what makes a half-written commit invisible: every file the snapshot names is written
and flushed first, under a fresh name (new UUID), never over an existing file; then
`snapshot/snapshot-N` appears in one step (on local disk a hard link of a complete temporary
file, on S3 a put with `If-None-Match: *`: it fails when the name exists, so of two racing
writers exactly one wins and the other gets `CommitConflict`, which the writers retry on the
winner's snapshot, `retry.py`); the `LATEST` hint comes last (readers check it against the
snapshot files).
A failed commit removes what it wrote; a killed one leaves only unreferenced files, which
Paimon's orphan-file cleanup removes. Every byte goes through the table's `FileIO`
(`Table.io`, `fileio.py`), which refuses writes where it knows no atomic create-if-absent.
"""

from __future__ import annotations

import io
import json
import posixpath
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import fastavro

from paimon_schema.query.predicate import Predicate
from paimon_schema.layouts.binary_row import decode_binary_row, encode_binary_row
from paimon_schema.table.errors import CommitConflict, TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.manifests import ADD, DELETE, DataFile, read_avro
from paimon_schema.table.metadata import Table
from paimon_schema.table.schema import TableSchema, read_json
from paimon_schema.table.snapshots import Snapshot

__all__ = ["CommitConflict", "CommitPlan", "FAULT_HOOK", "check_format", "commit", "create_new",
           "live_index_entries", "remove_quietly", "where_predicate", "writable"]

COMPACT = "COMPACT"
BATCH_COMMIT_IDENTIFIER = 2**63 - 1         # Java's BatchWriteBuilder.COMMIT_IDENTIFIER
MERGE_MIN_COUNT = 30                        # Paimon's manifest.merge-min-count default
READABLE_FORMATS = ("parquet", "orc")

#: A test hook called with a step name before each file of a commit is written (and before
#: the snapshot is linked and the hint updated): fault injection kills the writer there.
FAULT_HOOK: Callable[[str], None] | None = None


_R = "org.apache.paimon.avro.generated.record"


def _stats(name: str) -> dict[str, Any]:
    return {"type": "record", "name": f"{_R}_{name}", "fields": [
        {"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"},
        {"default": None, "name": "_NULL_COUNTS",
         "type": ["null", {"type": "array", "items": ["null", "long"]}]}]}


def _nullable(name: str, avro_type: Any) -> dict[str, Any]:
    return {"default": None, "name": name, "type": ["null", avro_type]}


MANIFEST_ENTRY_SCHEMA: dict[str, Any] = {"type": "record", "name": _R, "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"},
    {"name": "_PARTITION", "type": "bytes"}, {"name": "_BUCKET", "type": "int"},
    {"name": "_TOTAL_BUCKETS", "type": "int"},
    {"name": "_FILE", "type": {"type": "record", "name": f"{_R}__FILE", "fields": [
        {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"}, {"name": "_MIN_KEY", "type": "bytes"},
        {"name": "_MAX_KEY", "type": "bytes"},
        {"name": "_KEY_STATS", "type": _stats("_FILE__KEY_STATS")},
        {"name": "_VALUE_STATS", "type": _stats("_FILE__VALUE_STATS")},
        {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"}, {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_LEVEL", "type": "int"},
        {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
        _nullable("_CREATION_TIME", {"logicalType": "timestamp-millis", "type": "long"}),
        _nullable("_DELETE_ROW_COUNT", "long"), _nullable("_EMBEDDED_FILE_INDEX", "bytes"),
        _nullable("_FILE_SOURCE", "int"),
        _nullable("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
        _nullable("_EXTERNAL_PATH", "string"), _nullable("_FIRST_ROW_ID", "long"),
        _nullable("_WRITE_COLS", {"type": "array", "items": "string"})]}}]}

MANIFEST_FILE_META_SCHEMA: dict[str, Any] = {"type": "record", "name": _R, "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"}, {"name": "_NUM_ADDED_FILES", "type": "long"},
    {"name": "_NUM_DELETED_FILES", "type": "long"},
    {"name": "_PARTITION_STATS", "type": _stats("_PARTITION_STATS")},
    {"name": "_SCHEMA_ID", "type": "long"},
    _nullable("_MIN_BUCKET", "int"), _nullable("_MAX_BUCKET", "int"),
    _nullable("_MIN_LEVEL", "int"), _nullable("_MAX_LEVEL", "int"),
    _nullable("_MIN_ROW_ID", "long"), _nullable("_MAX_ROW_ID", "long")]}

INDEX_MANIFEST_ENTRY_SCHEMA: dict[str, Any] = {"type": "record", "name": _R, "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"},
    {"name": "_PARTITION", "type": "bytes"}, {"name": "_BUCKET", "type": "int"},
    {"name": "_INDEX_TYPE", "type": "string"}, {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"}, {"name": "_ROW_COUNT", "type": "long"},
    _nullable("_DELETIONS_VECTORS_RANGES", {"type": "array", "items": ["null", {
        "type": "record", "name": f"{_R}__DELETIONS_VECTORS_RANGES", "fields": [
            {"name": "f0", "type": "string"}, {"name": "f1", "type": "int"},
            {"name": "f2", "type": "int"}, _nullable("_CARDINALITY", "long")]}]}),
    _nullable("_EXTERNAL_PATH", "string"),
    _nullable("_GLOBAL_INDEX", {"type": "record", "name": f"{_R}__GLOBAL_INDEX", "fields": [
        {"name": "_ROW_RANGE_START", "type": "long"}, {"name": "_ROW_RANGE_END", "type": "long"},
        {"name": "_INDEX_FIELD_ID", "type": "int"},
        _nullable("_EXTRA_FIELD_IDS", {"type": "array", "items": "int"}),
        _nullable("_INDEX_META", "bytes"), _nullable("_SOURCE_META", "bytes")]})]}

_PARSED = {id(s): fastavro.parse_schema(s) for s in
           (MANIFEST_ENTRY_SCHEMA, MANIFEST_FILE_META_SCHEMA, INDEX_MANIFEST_ENTRY_SCHEMA)}
_CODECS = {"zstd": "zstandard", "zstandard": "zstandard", "snappy": "snappy",
           "deflate": "deflate", "none": "null", "null": "null"}


# ------------------------------------------------------------------------------ what writers check

def writable(table: Any, *, deletion_vectors: bool = False) -> tuple[Table, Snapshot, TableSchema]:
    """The table, its latest snapshot and schema, or TableError for a table these writers
    do not support."""
    tab = Table.open(table)
    tab.io.check_writable(tab.path)
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


def check_format(data_file: DataFile) -> None:
    if data_file.format not in READABLE_FORMATS:
        raise TableError(f"{data_file.path}: {data_file.format} data files are not supported "
                         f"(only {', '.join(READABLE_FORMATS)})")


@overload
def where_predicate(where: Predicate | str) -> Predicate: ...


@overload
def where_predicate(where: Predicate | str | None) -> Predicate | None: ...


def where_predicate(where: Predicate | str | None) -> Predicate | None:
    if isinstance(where, str):
        from paimon_schema.query.sql import parse_sql

        return parse_sql(where)
    return where


@dataclass
class CommitPlan:
    """What one commit changes: data-manifest entries (raw Avro records: an old entry with
    `_KIND` DELETE, its replacement with ADD), index-manifest entries to remove (by file name)
    and to add, and the files already written for it (removed if the commit fails)."""

    base: Snapshot
    data_entries: list[dict] = field(default_factory=list)
    index_removed: set[tuple[bytes, int, str, str]] = field(default_factory=set)
    index_added: list[dict] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    commit_kind: str = COMPACT


def fault(step: str) -> None:
    if FAULT_HOOK is not None:
        FAULT_HOOK(step)


def create_new(fileio: FileIO, path: str, data: bytes, written: list[str]) -> None:
    """Write a new file (`FileIO.write_new`: FileExistsError if the name is taken, never
    overwrites) and note it in `written`, the files a failed commit removes."""
    fileio.write_new(path, data)
    written.append(path)


class _Names:
    """Java's naming: one UUID per commit, a counter per kind of file."""

    def __init__(self) -> None:
        self.uuid = str(uuid.uuid4())
        self.counts: dict[str, int] = {}

    def __call__(self, prefix: str) -> str:
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        return f"{prefix}-{self.uuid}-{n}"


def commit(table: Table, plan: CommitPlan) -> Snapshot:
    """Write the plan's manifests and publish snapshot `plan.base.id + 1`; see the module doc.
    Raises CommitConflict when another writer created that snapshot first."""
    table.io.check_writable(table.path)
    try:
        return _commit(table, table.path, plan)
    except BaseException:
        for path in reversed(plan.written):
            remove_quietly(table.io, path)
        raise


def _commit(table: Table, root: str, plan: CommitPlan) -> Snapshot:
    base = plan.base
    schema = table.schema()                   # Java commits with the table's latest schema
    codec = _CODECS.get(schema.option("manifest.compression", "zstd").lower())
    if codec is None:
        raise TableError(f"manifest.compression={schema.option('manifest.compression')!r} is not "
                         f"supported (zstd, snappy, deflate, none)")
    fileio = table.io
    manifest_dir = posixpath.join(root, "manifest")
    names = _Names()
    partition_types = schema.partition_types

    def write_avro(step: str, name: str, avro_schema: dict, records: Sequence[dict]) -> int:
        buffer = io.BytesIO()
        fastavro.writer(buffer, _PARSED[id(avro_schema)], records, codec=codec)
        data = buffer.getvalue()
        fault(step)
        create_new(fileio, posixpath.join(manifest_dir, name), data, plan.written)
        return len(data)

    previous = read_avro(fileio, posixpath.join(manifest_dir, base.base_manifest_list)) + \
        read_avro(fileio, posixpath.join(manifest_dir, base.delta_manifest_list))
    if len(previous) >= int(schema.option("manifest.merge-min-count", str(MERGE_MIN_COUNT))):
        # Java's full compaction of manifests: the live files in one manifest, so that a table
        # written by many commits still plans from few files
        live = table.live_entries(base)
        if live:
            name = names("manifest")
            merged = live
            size = write_avro("merged-manifest", name, MANIFEST_ENTRY_SCHEMA, merged)
            previous = [_manifest_meta(name, size, merged, partition_types, schema.id)]
        else:
            previous = []
    delta_metas = []
    if plan.data_entries:
        name = names("manifest")
        size = write_avro("manifest", name, MANIFEST_ENTRY_SCHEMA, plan.data_entries)
        delta_metas.append(_manifest_meta(name, size, plan.data_entries, partition_types,
                                          schema.id))
    base_list = names("manifest-list")
    base_size = write_avro("base-manifest-list", base_list, MANIFEST_FILE_META_SCHEMA, previous)
    delta_list = names("manifest-list")
    delta_size = write_avro("delta-manifest-list", delta_list, MANIFEST_FILE_META_SCHEMA, delta_metas)

    index_manifest = base.index_manifest
    if plan.index_added or plan.index_removed:
        live = live_index_entries(table, base)
        entries = [e for e in live if _index_key(e) not in plan.index_removed]
        missing = plan.index_removed - {_index_key(e) for e in live}
        if missing:
            raise TableError(f"index files {sorted(k[3] for k in missing)} are not live in "
                             f"snapshot {base.id}")
        entries += plan.index_added
        index_manifest = names("index-manifest")
        write_avro("index-manifest", index_manifest, INDEX_MANIFEST_ENTRY_SCHEMA, entries)

    delta_records = sum(e["_FILE"]["_ROW_COUNT"] * (1 if e["_KIND"] == ADD else -1)
                        for e in plan.data_entries)
    document = _snapshot_document(table, base, base_list, base_size, delta_list, delta_size,
                                  index_manifest, plan.commit_kind, delta_records)
    new_id = base.id + 1
    snapshot_dir = posixpath.join(root, "snapshot")
    # the snapshot file appears in one step (`create_exclusive`: written complete under a
    # temporary name, every file it reaches made durable, then published if the name is free)
    fault("snapshot-temp")
    fault("snapshot")
    try:
        fileio.create_exclusive(posixpath.join(snapshot_dir, f"snapshot-{new_id}"),
                                json.dumps(document, indent=2).encode())
    except CommitConflict:
        raise CommitConflict(
            f"commit conflict on {table.path}: snapshot {new_id} was created by another writer "
            f"after this commit read snapshot {base.id}; nothing was changed (read the table "
            f"again and retry)") from None
    plan.written.clear()                      # published: nothing may be removed any more
    fault("latest")
    try:                                      # a lagging hint is tolerated by readers
        fileio.overwrite(posixpath.join(snapshot_dir, "LATEST"), str(new_id).encode())
    except OSError:
        pass
    return Snapshot.from_json(document)


def remove_quietly(fileio: FileIO, path: str) -> None:
    """Remove a file this writer made, if it is still there."""
    try:
        fileio.delete(path)
    except OSError:
        pass


def _snapshot_document(table: Table, base: Snapshot, base_list: str, base_size: int,
                       delta_list: str, delta_size: int, index_manifest: str | None,
                       commit_kind: str, delta_records: int) -> dict[str, Any]:
    """The new snapshot's JSON: the fields Java writes in its order; fields of newer Paimons
    that describe the table rather than the commit (statistics, watermark, nextRowId, ...) are
    carried over from the previous snapshot."""
    previous = read_json(table.io, posixpath.join(table.path, "snapshot", f"snapshot-{base.id}"))
    total = previous.get("totalRecordCount")
    document: dict[str, Any] = {
        "version": previous.get("version", 3),
        "id": base.id + 1,
        "schemaId": table.schema().id,
        "baseManifestList": base_list,
        "baseManifestListSize": base_size,
        "deltaManifestList": delta_list,
        "deltaManifestListSize": delta_size,
        "changelogManifestList": None,
        "indexManifest": index_manifest,
        "commitUser": str(uuid.uuid4()),
        "commitIdentifier": BATCH_COMMIT_IDENTIFIER,
        "commitKind": commit_kind,
        "timeMillis": int(time.time() * 1000),
        "logOffsets": previous.get("logOffsets", {}),
        "totalRecordCount": None if total is None else total + delta_records,
        "deltaRecordCount": delta_records,
        "changelogRecordCount": 0,
    }
    if index_manifest is None:
        del document["indexManifest"]
    if "uuid" in previous:                    # newer Paimons name each snapshot
        document["uuid"] = str(uuid.uuid4())
    skip = {"uuid", "changelogManifestListSize", "writerVersion"}     # not ours to repeat
    for key, value in previous.items():
        if key not in document and key not in skip:
            document[key] = value
    return document


def _index_key(entry: dict) -> tuple[bytes, int, str, str]:
    return (bytes(entry["_PARTITION"]), entry["_BUCKET"], entry["_INDEX_TYPE"], entry["_FILE_NAME"])


def live_index_entries(table: Table, snapshot: Snapshot) -> list[dict]:
    """The snapshot's index-manifest entries folded ADD/DELETE, as raw records."""
    if not snapshot.index_manifest:
        return []
    live: dict[tuple, dict] = {}
    for entry in read_avro(table.io, posixpath.join(table.path, "manifest", snapshot.index_manifest)):
        if entry["_KIND"] == ADD:
            live[_index_key(entry)] = entry
        else:
            live.pop(_index_key(entry), None)
    return list(live.values())


def _manifest_meta(name: str, size: int, entries: Iterable[dict], partition_types: list[str],
                   schema_id: int) -> dict[str, Any]:
    """The manifest list's record of one manifest: counts, partition statistics (field-wise
    min, max and null count of the entries' partitions), bucket and level ranges."""
    entries = list(entries)
    partitions = [decode_binary_row(e["_PARTITION"], partition_types) for e in entries]
    arity = len(partition_types)
    mins: list[Any] = [None] * arity
    maxs: list[Any] = [None] * arity
    nulls = [0] * arity
    for values in partitions:
        for i, value in enumerate(values):
            if value is None:
                nulls[i] += 1
                continue
            if mins[i] is None or value < mins[i]:
                mins[i] = value
            if maxs[i] is None or value > maxs[i]:
                maxs[i] = value
    buckets = [e["_BUCKET"] for e in entries]
    levels = [e["_FILE"]["_LEVEL"] for e in entries]
    return {
        "_VERSION": 2, "_FILE_NAME": name, "_FILE_SIZE": size,
        "_NUM_ADDED_FILES": sum(1 for e in entries if e["_KIND"] == ADD),
        "_NUM_DELETED_FILES": sum(1 for e in entries if e["_KIND"] == DELETE),
        "_PARTITION_STATS": {"_MIN_VALUES": encode_binary_row(mins, partition_types),
                             "_MAX_VALUES": encode_binary_row(maxs, partition_types),
                             "_NULL_COUNTS": nulls},
        "_SCHEMA_ID": schema_id,
        "_MIN_BUCKET": min(buckets), "_MAX_BUCKET": max(buckets),
        "_MIN_LEVEL": min(levels), "_MAX_LEVEL": max(levels),
        "_MIN_ROW_ID": None, "_MAX_ROW_ID": None,
    }
