"""Find the data files of a Paimon table and the index files that belong to them.

From a table directory: the snapshot (the `LATEST` hint, checked against the snapshot files),
its manifest lists (base, then delta), the data manifests folded ADD/DELETE into the live data
files, and the index manifest (deletion vectors, hash indexes). Nothing here lists data
directories: compacted files stay on disk until they expire, so only the manifests say which
files are live. Each `DataFile` carries its partition (decoded from the manifest's BinaryRow),
bucket, level, row count, schema id, where its file-index container is (embedded bytes or a
`.index` sidecar) and its deletion vector (`DeletionFile`: index file, offset, length,
cardinality).

Manifests are Avro (fastavro); files are reached through a `pyarrow.fs` filesystem (local by
default; a URI picks one; an fsspec filesystem is wrapped). Needs the `table` dependencies:
`pyarrow` and `fastavro[zstandard]`.

`Table.plan()` adds what a batch read needs: which of the live files Paimon reads (levels > 0
of a primary-key table in deletion-vector mode) and a `TableError` for tables whose rows cannot
be read file by file (a primary-key table without deletion vectors, columns of a
data-evolution table split across files).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import posixpath
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast, overload

import fastavro
import pyarrow.fs as pafs
from pyroaring import BitMap, BitMap64

from paimon_schema.layouts.binary_row import decode_binary_row
from paimon_schema.layouts.deletion_vectors import read_deletion_vector
from paimon_schema.layouts.file_index import FileIndexFile
from paimon_schema.layouts.hash_index import read_hash_index
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import DataType

__all__ = [
    "DataField", "DataFile", "DeletionFile", "IndexFile", "ReadPlan", "Snapshot", "Table",
    "TableError", "TableSchema",
]

ADD, DELETE = 0, 1                      # manifest entry `_KIND`
DELETION_VECTORS = "DELETION_VECTORS"
HASH = "HASH"
POSTPONE_BUCKET = -2                    # written but not yet assigned; readers skip it
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"


class _RecentDataFiles:
    """The data files of the last snapshots read (a thread-safe LRU map), at most `files` of
    them in all: a table of a million files is folded at each read rather than held."""

    def __init__(self, files: int) -> None:
        self.limit = files
        self.held = 0
        self.items: OrderedDict[tuple, tuple[DataFile, ...]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> tuple[DataFile, ...] | None:
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
            return value

    def put(self, key: tuple, value: tuple[DataFile, ...]) -> tuple[DataFile, ...]:
        if len(value) > self.limit:
            return value
        with self.lock:
            if key not in self.items:
                self.items[key] = value
                self.held += len(value)
            while self.held > self.limit:
                _, dropped = self.items.popitem(last=False)
                self.held -= len(dropped)
        return value


_DATA_FILES = _RecentDataFiles(100_000)


class TableError(ValueError):
    """A table this library cannot read (a feature not supported yet), or metadata that does not
    hold together (a missing snapshot, a deletion vector named twice, ...)."""


# ------------------------------------------------------------------------------ schema

@dataclass(frozen=True)
class DataField:
    """One column of a schema: `type` is the schema file's type (a string for atomic types,
    a JSON object for ARRAY / MAP / MULTISET / ROW)."""

    id: int
    name: str
    type: str | dict
    description: str | None = None

    @property
    def atomic_type(self) -> DataType | None:
        """The type as `paimon_schema.values.types.DataType`, or None for nested or other types
        (VARIANT, BLOB, ...) that no file index supports."""
        if not isinstance(self.type, str):
            return None
        try:
            return DataType.parse(self.type)
        except SchemaError:
            return None


def type_root(raw: str | dict) -> str:
    """The type's name without parameters or nullability: `INT`, `DECIMAL`, `ROW`, ..."""
    text = raw if isinstance(raw, str) else raw.get("type", "")
    match = re.match(r"\s*([A-Za-z_]+)", text)
    if match is None:
        raise TableError(f"unreadable data type {raw!r}")
    return match.group(1).upper()


@dataclass(frozen=True)
class TableSchema:
    """`schema/schema-N`: fields with their ids, partition and primary keys, options."""

    id: int
    fields: tuple[DataField, ...]
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: Mapping[str, str]
    highest_field_id: int

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> TableSchema:
        fields = tuple(DataField(f["id"], f["name"], f["type"], f.get("description"))
                       for f in document["fields"])
        return cls(int(document["id"]), fields, tuple(document.get("partitionKeys") or ()),
                   tuple(document.get("primaryKeys") or ()),
                   dict(document.get("options") or {}),
                   int(document.get("highestFieldId", max((f.id for f in fields), default=-1))))

    @cached_property
    def by_id(self) -> dict[int, DataField]:
        return {f.id: f for f in self.fields}

    @cached_property
    def by_name(self) -> dict[str, DataField]:
        return {f.name: f for f in self.fields}

    def field(self, name: str) -> DataField:
        try:
            return self.by_name[name]
        except KeyError:
            raise SchemaError(f"no column {name!r} in schema {self.id} "
                              f"(columns: {', '.join(f.name for f in self.fields)})") from None

    @overload
    def option(self, key: str, default: str) -> str: ...

    @overload
    def option(self, key: str, default: None = None) -> str | None: ...

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    @cached_property
    def partition_types(self) -> list[str]:
        """The partition keys' types, as BinaryRow reads and writes them (atomic types only:
        Paimon partitions by atomic columns)."""
        types = []
        for key in self.partition_keys:
            raw = self.field(key).type
            if not isinstance(raw, str):
                raise TableError(f"partition key {key!r} has the nested type {type_root(raw)}")
            types.append(raw)
        return types

    def flag(self, key: str) -> bool:
        return str(self.options.get(key, "false")).strip().lower() == "true"

    @property
    def deletion_vectors(self) -> bool:
        return self.flag("deletion-vectors.enabled")

    @property
    def data_evolution(self) -> bool:
        return self.flag("data-evolution.enabled")


# ------------------------------------------------------------------------------ snapshot

@dataclass(frozen=True)
class Snapshot:
    """`snapshot/snapshot-N`: the entrance to one committed version of the table."""

    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    index_manifest: str | None
    commit_kind: str
    time_millis: int
    total_record_count: int | None

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Snapshot:
        return cls(int(document["id"]), int(document["schemaId"]), document["baseManifestList"],
                   document["deltaManifestList"], document.get("indexManifest"),
                   document.get("commitKind", ""), int(document.get("timeMillis", 0)),
                   document.get("totalRecordCount"))


# ------------------------------------------------------------------------------ files

@dataclass(frozen=True)
class DeletionFile:
    """Where a data file's deletion vector is: Java's `DeletionFile(path, offset, length,
    cardinality)`; `cardinality` is None in metadata written before Paimon 1.0."""

    path: str                 # the index file, on the table's filesystem
    index_file: str           # its name
    offset: int
    length: int
    cardinality: int | None


@dataclass(frozen=True)
class DataFile:
    """One live data file of a snapshot, with what the manifests say about it."""

    partition: Mapping[str, Any]      # partition column -> value
    partition_path: str               # e.g. "dt=2024-05-14/hr=1", "" when unpartitioned
    bucket: int
    total_buckets: int
    file_name: str
    path: str                         # on the table's filesystem (the external path if set)
    file_size: int
    row_count: int
    level: int
    schema_id: int
    min_sequence_number: int
    max_sequence_number: int
    extra_files: tuple[str, ...]
    embedded_index: bytes | None      # `_EMBEDDED_FILE_INDEX`
    external_path: str | None         # `_EXTERNAL_PATH`, as written
    delete_row_count: int | None
    file_source: int | None           # 0 = APPEND, 1 = COMPACT
    first_row_id: int | None          # row tracking (data-evolution tables)
    write_cols: tuple[str, ...] | None
    deletion_file: DeletionFile | None = None
    #: `_VALUE_STATS` as stored: (min BinaryRow, max BinaryRow, null counts or None, the
    #: columns `_VALUE_STATS_COLS` names or None for all); None when the entry has none.
    value_stats: tuple[bytes, bytes, tuple[int | None, ...] | None, tuple[str, ...] | None] | None = None

    @property
    def format(self) -> str:
        """The file format, from the name's extension (`parquet`, `orc`, `avro`, ...)."""
        return self.file_name.rsplit(".", 1)[-1].lower()

    @property
    def index_sidecar(self) -> str | None:
        """The path of the `.index` sidecar when the container is not embedded (Java's
        `FileIndexEvaluator`: embedded bytes win; more than one sidecar is an error)."""
        if self.embedded_index is not None:
            return None
        sidecars = [name for name in self.extra_files if name.endswith(".index")]
        if len(sidecars) > 1:
            raise TableError(f"data file {self.file_name} names {len(sidecars)} file-index "
                             f"sidecars: {sidecars}")
        return posixpath.join(posixpath.dirname(self.path), sidecars[0]) if sidecars else None

    @property
    def index_stored(self) -> str | None:
        """`embedded`, the sidecar's name, or None when the file has no index."""
        if self.embedded_index is not None:
            return "embedded"
        sidecar = self.index_sidecar
        return None if sidecar is None else posixpath.basename(sidecar)


@dataclass(frozen=True)
class IndexFile:
    """One live entry of the index manifest (a deletion-vector file, a hash index, ...)."""

    partition: Mapping[str, Any]
    partition_path: str
    bucket: int
    index_type: str
    file_name: str
    path: str
    file_size: int
    row_count: int
    #: (data file name, offset, length, cardinality or None), in write order
    dv_ranges: tuple[tuple[str, int, int, int | None], ...] = ()


@dataclass(frozen=True)
class ReadPlan:
    """What a batch read of one snapshot reads: `files` are the data files Paimon reads
    (with their deletion vectors), in the schema `schema` (the snapshot's, or the latest)."""

    table: Table
    snapshot: Snapshot | None
    schema: TableSchema
    files: tuple[DataFile, ...]
    live_files: tuple[DataFile, ...]


# ------------------------------------------------------------------------------ BinaryRow

# ------------------------------------------------------------------------------ partition paths

_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^') | frozenset(chr(c) for c in range(1, 0x20))


def _escape(text: str) -> str:
    """Hive's `escapePathName`, which Paimon's partition paths use."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def _java_double(value: float) -> str:
    """Java's `Double.toString` for the usual cases (partition names of FLOAT/DOUBLE)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(float(value))
        return text if "e" not in text else f"{value:.1f}"
    mantissa, exponent = f"{value:e}".split("e")
    digits = repr(float(mantissa)).rstrip("0")
    digits = digits + "0" if digits.endswith(".") else digits
    return f"{digits}E{int(exponent)}"


def _partition_string(value: Any, data_type: DataType, legacy: bool) -> str | None:
    """The partition value as it appears in the path (`InternalRowPartitionComputer`): the
    internal value's `toString()` with `partition.legacy-name` (the default), else the value
    cast to a string."""
    if value is None:
        return None
    root = data_type.root
    if isinstance(value, bool):
        return "true" if value else "false"
    if root == "DATE":
        return str((value - dt.date(1970, 1, 1)).days) if legacy else value.isoformat()
    if root in ("FLOAT", "DOUBLE"):
        return _java_double(value)
    if root == "DECIMAL":
        return format(value, "f")
    if data_type.is_timestamp:
        if legacy:              # Java LocalDateTime.toString()
            text = value.strftime("%Y-%m-%dT%H:%M")
            if value.second or value.microsecond:
                text += f":{value.second:02d}"
            if value.microsecond:
                text += f".{value.microsecond:06d}".rstrip("0").ljust(4, "0")
            return text
        return value.isoformat(sep=" ")
    if root == "TIME":
        return value.isoformat()
    if isinstance(value, bytes):
        raise TableError("BINARY partition columns are not supported")
    return str(value)


# ------------------------------------------------------------------------------ the table

def filesystem_for(default: pafs.FileSystem, path: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem and inner path of `path`: a path on `default`, or a URI (an external
    path such as `file:/...`, `s3://...`)."""
    if path.startswith("file:"):
        local = re.sub(r"^file:(//)?", "", path)
        return pafs.LocalFileSystem(), local if local.startswith("/") else "/" + local
    if "://" not in path:
        return default, path
    return pafs.FileSystem.from_uri(path)


class Table:
    """A Paimon table directory. `Table.open("/warehouse/db.db/t")`, or a URI
    (`s3://...`) for any `pyarrow.fs` filesystem, or `filesystem=` (pyarrow or fsspec)."""

    def __init__(self, path: str, filesystem: pafs.FileSystem) -> None:
        self.path = path.rstrip("/") or "/"
        self.fs = filesystem
        self._schemas: dict[int, TableSchema] = {}

    def __repr__(self) -> str:
        kind = type(self.fs).__name__
        where = "" if kind == "LocalFileSystem" else f" on {kind}"
        return f"<Table {self.path}{where}>"

    @classmethod
    def open(cls, path: Any, filesystem: Any = None) -> Table:
        if isinstance(path, Table):
            return path
        text = str(path)
        if filesystem is None:
            if "://" in text:
                filesystem, text = pafs.FileSystem.from_uri(text)
            else:
                filesystem, text = pafs.LocalFileSystem(), os.path.abspath(text)
        elif not isinstance(filesystem, pafs.FileSystem):      # an fsspec filesystem
            filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
        table = cls(text, filesystem)
        if table._info(table._join("schema")).type != pafs.FileType.Directory:
            kind = table._info(table.path).type
            if kind == pafs.FileType.NotFound:
                raise TableError(f"{text} does not exist")
            if kind != pafs.FileType.Directory:
                raise TableError(f"{text} is a file, not a Paimon table directory")
            raise TableError(f"{text} is not a Paimon table: it has no schema/ directory")
        return table

    # ----------------------------------------------------------------- bytes

    def _join(self, *parts: str) -> str:
        return posixpath.join(self.path, *parts)

    def _info(self, path: str) -> pafs.FileInfo:
        return self.fs.get_file_info(path)

    def read_bytes(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes of a file of the table (a path from `DataFile`, `IndexFile`, ...)."""
        fs, inner = self.filesystem_for(path)
        try:
            with fs.open_input_file(inner) as f:
                if length is None:
                    f.seek(offset)
                    return f.read()
                return f.read_at(length, offset)
        except FileNotFoundError:
            raise TableError(f"{path} does not exist") from None

    def filesystem_for(self, path: str) -> tuple[pafs.FileSystem, str]:
        """The filesystem and inner path of a table path or of an external path URI."""
        return filesystem_for(self.fs, path)

    def _json(self, path: str) -> dict:
        raw = self.read_bytes(path)
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise FormatError(f"{path} is not JSON: {exc}", offset=None, path=path) from exc

    def _avro(self, path: str) -> list[dict]:
        """The records of a manifest or manifest list (zstd-compressed Avro)."""
        import io

        raw = self.read_bytes(path)
        try:
            # fastavro types a datum as any Avro value; manifests and their lists are records
            return [cast(dict, r) for r in fastavro.reader(io.BytesIO(raw)) if r is not None]
        except Exception as exc:        # fastavro raises many types on bad input
            raise FormatError(f"{path} is not a readable Avro file: {exc}", path=path) from exc

    # ----------------------------------------------------------------- schemas & snapshots

    def schema(self, schema_id: int | None = None) -> TableSchema:
        """A schema by id, or the latest (the highest `schema/schema-N`)."""
        if schema_id is None:
            ids = self._ids("schema", "schema-")
            if not ids:
                raise TableError(f"{self.path} has no schema file")
            schema_id = max(ids)
        if schema_id not in self._schemas:
            path = self._join("schema", f"schema-{schema_id}")
            try:
                self._schemas[schema_id] = TableSchema.from_json(self._json(path))
            except KeyError as exc:
                raise FormatError(f"{path} lacks {exc}", path=path) from exc
        return self._schemas[schema_id]

    def _ids(self, directory: str, prefix: str) -> list[int]:
        selector = pafs.FileSelector(self._join(directory), allow_not_found=True)
        names = (posixpath.basename(info.path) for info in self.fs.get_file_info(selector))
        return [int(n[len(prefix):]) for n in names
                if n.startswith(prefix) and n[len(prefix):].isdigit()]

    def latest_snapshot_id(self) -> int | None:
        """The `LATEST` hint when the snapshot it names exists and has no successor (Paimon
        writes the hint after the snapshot, so it may lag); else the highest snapshot file."""
        hint = self._join("snapshot", "LATEST")
        try:
            text = self.read_bytes(hint).decode().strip()
            candidate = int(text)
        except (TableError, ValueError):
            candidate = None
        if candidate is not None:
            exists = self._info(self._join("snapshot", f"snapshot-{candidate}")).type
            after = self._info(self._join("snapshot", f"snapshot-{candidate + 1}")).type
            if exists == pafs.FileType.File and after == pafs.FileType.NotFound:
                return candidate
        ids = self._ids("snapshot", "snapshot-")
        return max(ids) if ids else None

    @overload
    def snapshot(self, snapshot_id: int) -> Snapshot: ...

    @overload
    def snapshot(self, snapshot_id: None = None) -> Snapshot | None: ...

    def snapshot(self, snapshot_id: int | None = None) -> Snapshot | None:
        """A snapshot by id, or the latest (None for a table without commits)."""
        if snapshot_id is None:
            snapshot_id = self.latest_snapshot_id()
            if snapshot_id is None:
                return None
        path = self._join("snapshot", f"snapshot-{int(snapshot_id)}")
        if self._info(path).type != pafs.FileType.File:
            ids = sorted(self._ids("snapshot", "snapshot-"))
            have = f"snapshots {ids[0]}..{ids[-1]}" if ids else "no snapshots"
            raise TableError(f"snapshot {snapshot_id} does not exist in {self.path} ({have})")
        try:
            return Snapshot.from_json(self._json(path))
        except KeyError as exc:
            raise FormatError(f"{path} lacks {exc}", path=path) from exc

    # ----------------------------------------------------------------- manifests

    def _manifest_entries(self, manifest_list: str) -> Iterator[dict]:
        for meta in self._avro(self._join("manifest", manifest_list)):
            yield from self._avro(self._join("manifest", meta["_FILE_NAME"]))

    def data_files(self, snapshot: Snapshot | int | None = None) -> list[DataFile]:
        """The live data files of a snapshot (default: the latest), each with its deletion
        vector: the base and delta manifest lists' entries folded in order, a DELETE removing
        the ADD of the same file (partition, bucket, level, name, extra files, embedded index,
        external path: a compaction that only moves a file to another level re-adds it)."""
        snap = snapshot if isinstance(snapshot, Snapshot) else self.snapshot(snapshot)
        if snap is None:
            return []
        # Manifests are never rewritten (their names carry a UUID), so the files a snapshot's
        # manifest lists name are the same at every read: folded once per process.
        key = (self.fs.type_name, self.path, snap.id, snap.schema_id, snap.base_manifest_list,
               snap.delta_manifest_list, snap.index_manifest)
        cached = _DATA_FILES.get(key)
        if cached is None:
            cached = _DATA_FILES.put(key, tuple(self._fold_data_files(snap)))
        return list(cached)

    def _fold_data_files(self, snap: Snapshot) -> Iterator[DataFile]:
        schema = self.schema(snap.schema_id)
        dvs = self._deletion_files(snap)
        for entry in self.live_entries(snap):
            data_file = self._data_file(entry, schema)
            deletion = dvs.pop((data_file.partition_path, data_file.file_name), None)
            yield dataclasses.replace(data_file, deletion_file=deletion) if deletion else data_file

    def live_entries(self, snapshot: Snapshot) -> list[dict]:
        """The ADD entries (raw manifest records) of the snapshot's live data files, in
        manifest order: what a writer re-commits with changes."""
        live: dict[tuple, dict] = {}
        snap = snapshot
        for entry in self._fold_order(snap):
            meta = entry["_FILE"]
            key = (entry["_PARTITION"], entry["_BUCKET"], meta["_LEVEL"], meta["_FILE_NAME"],
                   tuple(meta.get("_EXTRA_FILES") or ()), meta.get("_EMBEDDED_FILE_INDEX"),
                   meta.get("_EXTERNAL_PATH"))
            if entry["_KIND"] == ADD:
                if key in live and live[key]["_KIND"] == ADD:
                    raise TableError(f"snapshot {snap.id} adds {meta['_FILE_NAME']} twice")
                live[key] = entry
            elif entry["_KIND"] == DELETE:
                if key in live and live[key]["_KIND"] == ADD:
                    del live[key]
                else:
                    live[key] = entry
            else:
                raise FormatError(f"manifest entry kind {entry['_KIND']} is neither ADD nor DELETE",
                                  path="_KIND")
        return [entry for entry in live.values() if entry["_KIND"] == ADD]

    def data_file(self, entry: dict, schema: TableSchema) -> DataFile:
        """The `DataFile` of a raw manifest entry (without its deletion vector); `schema` is
        the snapshot's."""
        return self._data_file(entry, schema)

    def index_file(self, entry: dict, schema: TableSchema) -> IndexFile:
        """The `IndexFile` of a raw index-manifest entry; `schema` is the snapshot's."""
        return self._index_file(entry, schema)

    def _fold_order(self, snap: Snapshot) -> Iterator[dict]:
        yield from self._manifest_entries(snap.base_manifest_list)
        yield from self._manifest_entries(snap.delta_manifest_list)

    def index_files(self, snapshot: Snapshot | int | None = None) -> list[IndexFile]:
        """The live entries of a snapshot's index manifest (deletion vectors, hash indexes and
        any other index type), folded ADD/DELETE."""
        snap = snapshot if isinstance(snapshot, Snapshot) else self.snapshot(snapshot)
        if snap is None or not snap.index_manifest:
            return []
        schema = self.schema(snap.schema_id)
        live: dict[tuple, dict] = {}
        for entry in self._avro(self._join("manifest", snap.index_manifest)):
            key = (entry["_PARTITION"], entry["_BUCKET"], entry["_INDEX_TYPE"], entry["_FILE_NAME"])
            if entry["_KIND"] == ADD:
                live[key] = entry
            else:
                live.pop(key, None)
        return [self._index_file(e, schema) for e in live.values()]

    def _deletion_files(self, snap: Snapshot) -> dict[tuple[str, str], DeletionFile]:
        """{(partition path, data file name): its deletion vector}."""
        out: dict[tuple[str, str], DeletionFile] = {}
        for index in self.index_files(snap):
            if index.index_type != DELETION_VECTORS:
                continue
            for name, offset, length, cardinality in index.dv_ranges:
                key = (index.partition_path, name)
                if key in out:
                    raise TableError(f"data file {name} has deletion vectors in both "
                                     f"{out[key].index_file} and {index.file_name}")
                out[key] = DeletionFile(index.path, index.file_name, offset, length, cardinality)
        return out

    def _partition(self, raw: bytes, schema: TableSchema) -> tuple[dict[str, Any], str]:
        types = schema.partition_types
        values = decode_binary_row(raw, types) if types else ()
        legacy = schema.flag("partition.legacy-name") if "partition.legacy-name" in schema.options else True
        default = schema.option("partition.default-name", DEFAULT_PARTITION_NAME)
        parts = []
        for key, raw_type, value in zip(schema.partition_keys, types, values):
            text = _partition_string(value, DataType.parse(raw_type), legacy)
            if text is None or not text.strip():
                text = default
            parts.append(f"{_escape(key)}={_escape(text)}")
        return dict(zip(schema.partition_keys, values)), "/".join(parts)

    def _bucket_dir(self, partition_path: str, bucket: int, schema: TableSchema) -> str:
        base = self.path
        directory = schema.option("data-file.path-directory")
        if directory:
            base = posixpath.join(base, directory)
        name = "bucket-postpone" if bucket == POSTPONE_BUCKET else f"bucket-{bucket}"
        return posixpath.join(base, partition_path, name) if partition_path else posixpath.join(base, name)

    def _data_file(self, entry: dict, schema: TableSchema) -> DataFile:
        meta = entry["_FILE"]
        partition, partition_path = self._partition(entry["_PARTITION"], schema)
        external = meta.get("_EXTERNAL_PATH")
        name = meta["_FILE_NAME"]
        path = external or posixpath.join(self._bucket_dir(partition_path, entry["_BUCKET"], schema), name)
        write_cols = meta.get("_WRITE_COLS")
        return DataFile(
            partition=partition, partition_path=partition_path, bucket=entry["_BUCKET"],
            total_buckets=entry.get("_TOTAL_BUCKETS", -1), file_name=name, path=path,
            file_size=meta["_FILE_SIZE"], row_count=meta["_ROW_COUNT"], level=meta["_LEVEL"],
            schema_id=meta["_SCHEMA_ID"], min_sequence_number=meta["_MIN_SEQUENCE_NUMBER"],
            max_sequence_number=meta["_MAX_SEQUENCE_NUMBER"],
            extra_files=tuple(meta.get("_EXTRA_FILES") or ()),
            embedded_index=meta.get("_EMBEDDED_FILE_INDEX"), external_path=external,
            delete_row_count=meta.get("_DELETE_ROW_COUNT"), file_source=meta.get("_FILE_SOURCE"),
            first_row_id=meta.get("_FIRST_ROW_ID"),
            write_cols=None if write_cols is None else tuple(write_cols),
            value_stats=_value_stats(meta))

    def _index_file(self, entry: dict, schema: TableSchema) -> IndexFile:
        partition, partition_path = self._partition(entry["_PARTITION"], schema)
        name = entry["_FILE_NAME"]
        external = entry.get("_EXTERNAL_PATH")
        if external:
            path = external
        elif schema.flag("index-file-in-data-file-dir"):
            path = posixpath.join(self._bucket_dir(partition_path, entry["_BUCKET"], schema), name)
        else:
            path = self._join("index", name)
        ranges = tuple((r["f0"], r["f1"], r["f2"], r.get("_CARDINALITY"))
                       for r in entry.get("_DELETIONS_VECTORS_RANGES") or () if r is not None)
        return IndexFile(partition, partition_path, entry["_BUCKET"], entry["_INDEX_TYPE"], name,
                         path, entry["_FILE_SIZE"], entry["_ROW_COUNT"], ranges)

    # ----------------------------------------------------------------- reading index files

    def deletion_vector(self, data_file: DataFile, *, verify_checksum: bool = True) -> BitMap | BitMap64 | None:
        """The data file's deleted positions (None without a deletion vector). Only the bin is
        read: `length` plus the size field and CRC for a 32-bit bin covers a 64-bit bin too."""
        dv = data_file.deletion_file
        if dv is None:
            return None
        chunk = self.read_bytes(dv.path, dv.offset, dv.length + 8)
        try:
            return read_deletion_vector(chunk, 0, dv.length, verify_checksum=verify_checksum)
        except FormatError as exc:
            raise FormatError(f"deletion vector of {data_file.file_name} in {dv.path} at offset "
                              f"{dv.offset}: {exc.reason}",
                              offset=None if exc.offset is None else exc.offset + dv.offset,
                              path=exc.path) from exc

    def file_index_bytes(self, data_file: DataFile) -> bytes | None:
        """The data file's file-index container (embedded or sidecar), or None."""
        if data_file.embedded_index is not None:
            return data_file.embedded_index
        sidecar = data_file.index_sidecar
        return None if sidecar is None else self.read_bytes(sidecar)

    def file_index(self, data_file: DataFile) -> FileIndexFile | None:
        """The parsed container; a FormatError names the sidecar or the manifest entry."""
        data = self.file_index_bytes(data_file)
        if data is None:
            return None
        try:
            return FileIndexFile.parse(data)
        except FormatError as exc:
            raise FormatError(f"file index of {data_file.file_name} "
                              f"({data_file.index_sidecar or 'embedded in the manifest'}): "
                              f"{exc.reason}", offset=exc.offset, path=exc.path) from exc

    def hash_index(self, index_file: IndexFile) -> Any:
        """A HASH index file's key hashes (numpy int32, file order)."""
        if index_file.index_type != HASH:
            raise TableError(f"{index_file.file_name} is a {index_file.index_type} index, not HASH")
        return read_hash_index(self.read_bytes(index_file.path))

    # ----------------------------------------------------------------- what a read reads

    def plan(self, snapshot: int | None = None) -> ReadPlan:
        """The files a batch read of the snapshot (default: the latest) reads, or TableError
        for a table this library cannot merge."""
        snap = self.snapshot(snapshot)
        schema = self.schema(None if snapshot is None or snap is None else snap.schema_id)
        if snap is None:
            return ReadPlan(self, None, schema, (), ())
        live = tuple(sorted(self.data_files(snap),
                            key=lambda f: (f.partition_path, f.bucket, f.first_row_id or 0,
                                           -f.level, f.min_sequence_number, f.file_name)))
        files = [f for f in live if f.bucket != POSTPONE_BUCKET]
        if schema.primary_keys:
            if not schema.deletion_vectors:
                raise TableError(
                    f"{self.path} is a primary-key table without deletion vectors: its rows need "
                    f"Paimon's LSM merge of every level, which paimon-schema does not do yet "
                    f"(enable 'deletion-vectors.enabled' and compact, or read it with Paimon)")
            files = [f for f in files if f.level > 0]        # Paimon's DV-mode batch read
        if schema.data_evolution or any(f.first_row_id is not None and f.write_cols for f in files):
            _check_no_split_columns(files, schema)
        return ReadPlan(self, snap, schema, tuple(files), live)


def _value_stats(meta: Mapping[str, Any]) -> tuple | None:
    stats = meta.get("_VALUE_STATS")
    if not stats:
        return None
    nulls = stats.get("_NULL_COUNTS")
    names = meta.get("_VALUE_STATS_COLS")
    return (stats.get("_MIN_VALUES") or b"", stats.get("_MAX_VALUES") or b"",
            None if nulls is None else tuple(nulls), None if names is None else tuple(names))


def _check_no_split_columns(files: Iterable[DataFile], schema: TableSchema) -> None:
    """A data-evolution table may write some columns of a row range into another file; such
    rows can only be read by merging files, which is not supported here."""
    ranges = sorted((f.first_row_id, f.first_row_id + f.row_count, f.file_name)
                    for f in files if f.first_row_id is not None)
    for (_, hi, name), (lo2, hi2, name2) in zip(ranges, ranges[1:]):
        if lo2 < hi:
            raise TableError(
                f"data-evolution table: rows {lo2}..{min(hi, hi2) - 1} have columns in both "
                f"{name} and {name2}; reading columns split across files is not supported yet")
