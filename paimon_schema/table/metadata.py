"""`Table`: a Paimon table directory, the one object readers and writers start from. It composes
the pieces that each hold one job: `fileio` (the bytes, on any filesystem), `schema` and
`snapshots` (the JSON entrances), `manifests` (the live data and index files of a snapshot),
`indexes` (deletion vectors, file indexes, hash indexes of a data file) and `plan` (what a batch
read reads); `Table.scan` hands a read to `scan.TableScan`. The names of those modules stay
importable from here, where they used to live.

Needs the `table` dependencies: `pyarrow` and `fastavro[zstandard]`.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Union, overload

import pyarrow.fs as pafs
from pyroaring import BitMap, BitMap64

from paimon_schema.layouts.file_index import FileIndexFile
from paimon_schema.table import indexes
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import ArrowFileIO, FileIO, FileSystemLike, filesystem_for, open_fileio
from paimon_schema.table.global_indexes import GlobalIndexFile, global_index_files
from paimon_schema.table.manifests import (ADD, DELETE, DataFile, DeletionFile, IndexFile, Manifests,
                                           PartitionFilter)
from paimon_schema.table.plan import in_runs, read_files, read_order
from paimon_schema.table.schema import DataField, TableSchema, latest_schema_id, load_schema, type_root
from paimon_schema.table.snapshots import (
    Snapshot,
    TimeTravel,
    latest_snapshot_id,
    load_snapshot,
    load_tag,
    snapshot_ids,
    tag_names,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from paimon_schema.query.predicate import Predicate
    from paimon_schema.table.scan import TableScan

__all__ = [
    "ADD", "DELETE", "DataField", "DataFile", "DeletionFile", "IndexFile", "ReadPlan", "Snapshot",
    "Table", "TableError", "TableLike", "TableSchema", "filesystem_for", "type_root",
]


@dataclass(frozen=True)
class ReadPlan:
    """What a batch read of one snapshot reads: `files` are the data files Paimon reads
    (with their deletion vectors), in the schema `schema` (the snapshot's, or the latest)."""

    table: Table
    snapshot: Snapshot | None
    schema: TableSchema
    files: tuple[DataFile, ...]
    live_files: tuple[DataFile, ...]
    #: live files of partitions the plan's `partitions` filter excludes (not in `live_files`)
    excluded: int = 0


def _schema(io: FileIO, path: str, known: dict[int, TableSchema], schema_id: int) -> TableSchema:
    """The table's schema `schema_id`, loaded once into `known`."""
    if schema_id not in known:
        known[schema_id] = load_schema(io, path, schema_id)
    return known[schema_id]


class Table:
    """A Paimon table directory. `Table.open("/warehouse/db.db/t")`, or a URI
    (`s3://...`) for any `pyarrow.fs` filesystem, or `filesystem=` (pyarrow or fsspec)."""

    def __init__(self, path: str, io: FileIO) -> None:
        self.path = path.rstrip("/") or "/"
        self.io = io
        self._schemas: dict[int, TableSchema] = {}
        # (not the bound `self.schema`: a Table -> Manifests -> Table cycle left each plan's
        # Table to the garbage collector)
        self._manifests = Manifests(io, self.path, partial(_schema, io, self.path, self._schemas))

    def __repr__(self) -> str:
        kind = type(self.fs).__name__ if isinstance(self.io, ArrowFileIO) else self.io.name
        where = "" if kind == "LocalFileSystem" else f" on {kind}"
        return f"<Table {self.path}{where}>"

    @classmethod
    def open(cls, path: TableLike, filesystem: FileSystemLike | FileIO | None = None) -> Table:
        """The table at a local path or URI (`s3://bucket/path`, with the endpoint and
        credentials pyarrow's `FileSystem.from_uri` takes, or from the environment), or at a
        path on `filesystem` (pyarrow or fsspec); TableError naming the path and the reason
        when it is not a reachable Paimon table directory."""
        if isinstance(path, Table):
            return path
        io, text = open_fileio(path, filesystem)
        table = cls(text, io)
        if not io.is_dir(table._join("schema")):
            if io.is_dir(table.path):
                raise TableError(f"{text} is not a Paimon table: it has no schema/ directory")
            if io.exists(table.path):
                raise TableError(f"{text} is a file, not a Paimon table directory")
            raise TableError(f"{text} does not exist")
        return table

    @property
    def uri(self) -> str:
        """The table as a URI that opens it in another process: `Table.open(t.uri)`,
        `spark.read.format("paimon").load(t.uri)` (`file:///...`, `s3://bucket/path`, on S3
        with the endpoint and the credentials the table was opened with, if given explicitly:
        in pyarrow's URI form)."""
        return self.io.location(self.path)

    @property
    def fs(self) -> pafs.FileSystem:
        """The table's pyarrow filesystem (reads and writes go through `io`)."""
        if not isinstance(self.io, ArrowFileIO):
            raise TableError(f"{self.path} is on {self.io.name}, not on a pyarrow filesystem")
        return self.io.filesystem

    # ----------------------------------------------------------------- bytes

    def _join(self, *parts: str) -> str:
        return posixpath.join(self.path, *parts)

    def read_bytes(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes of a file of the table (a path from `DataFile`, `IndexFile`, ...)."""
        return self.io.read_bytes(path, offset, length)

    def filesystem_for(self, path: str) -> tuple[pafs.FileSystem, str]:
        """The filesystem and inner path of a table path or of an external path URI."""
        return filesystem_for(self.fs, path)

    # ----------------------------------------------------------------- schemas & snapshots

    def schema(self, schema_id: int | None = None) -> TableSchema:
        """A schema by id, or the latest (the highest `schema/schema-N`)."""
        if schema_id is None:
            schema_id = latest_schema_id(self.io, self.path)
        return _schema(self.io, self.path, self._schemas, schema_id)

    def latest_snapshot_id(self) -> int | None:
        """The `LATEST` hint when the snapshot it names exists and has no successor (Paimon
        writes the hint after the snapshot, so it may lag); else the highest snapshot file."""
        return latest_snapshot_id(self.io, self.path)

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
        return load_snapshot(self.io, self.path, snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """Every snapshot there is (expired ones are gone), oldest first."""
        return [load_snapshot(self.io, self.path, i) for i in snapshot_ids(self.io, self.path)]

    def tags(self) -> dict[str, Snapshot]:
        """{tag name: the snapshot it holds} (`tag/tag-NAME`), by name."""
        return {name: load_tag(self.io, self.path, name) for name in tag_names(self.io, self.path)}

    def travel(self, snapshot: int | None = None, tag: str | None = None,
               as_of: int | dt.datetime | str | None = None) -> Snapshot | None:
        """The snapshot a read of a snapshot id, a tag or a moment (epoch milliseconds, a
        datetime: the latest snapshot committed at or before it) reads, as Paimon's
        `scan.snapshot-id` / `scan.tag-name` / `scan.timestamp-millis` pick it; the latest
        without any (None: nothing committed). At most one of the three."""
        return TimeTravel(snapshot, tag, as_of).resolve(self.io, self.path)

    # ----------------------------------------------------------------- manifests

    def _snap(self, snapshot: Snapshot | int | None) -> Snapshot | None:
        return snapshot if isinstance(snapshot, Snapshot) else self.snapshot(snapshot)

    def data_files(self, snapshot: Snapshot | int | None = None) -> list[DataFile]:
        """The live data files of a snapshot (default: the latest), each with its deletion
        vector (see `manifests.Manifests.data_files`)."""
        snap = self._snap(snapshot)
        return [] if snap is None else self._manifests.data_files(snap)

    def live_entries(self, snapshot: Snapshot) -> list[dict[str, Any]]:
        """The ADD entries (raw manifest records) of the snapshot's live data files, in
        manifest order: what a writer re-commits with changes."""
        return self._manifests.live_entries(snapshot)

    def data_file(self, entry: dict[str, Any], schema: TableSchema) -> DataFile:
        """The `DataFile` of a raw manifest entry (without its deletion vector); `schema` is
        the snapshot's."""
        return self._manifests.data_file(entry, schema)

    def index_file(self, entry: dict[str, Any], schema: TableSchema) -> IndexFile:
        """The `IndexFile` of a raw index-manifest entry; `schema` is the snapshot's."""
        return self._manifests.index_file(entry, schema)

    def index_files(self, snapshot: Snapshot | int | None = None) -> list[IndexFile]:
        """The live entries of a snapshot's index manifest (deletion vectors, hash indexes and
        any other index type), folded ADD/DELETE."""
        snap = self._snap(snapshot)
        return [] if snap is None else self._manifests.index_files(snap)

    def global_indexes(self, snapshot: Snapshot | int | None = None) -> list[GlobalIndexFile]:
        """The global index files of a snapshot (btree, bitmap, vector, full-text, ...), with
        their column and row range (`global_indexes.GlobalIndexFile`)."""
        snap = self._snap(snapshot)
        if snap is None:
            return []
        return global_index_files(self.schema(snap.schema_id), self._manifests.index_files(snap))

    # ----------------------------------------------------------------- reading index files

    def deletion_vector(self, data_file: DataFile, *, verify_checksum: bool = True) -> BitMap | BitMap64 | None:
        """The data file's deleted positions (None without a deletion vector)."""
        return indexes.deletion_vector(self.io, data_file, verify_checksum=verify_checksum)

    def deleted_counts(self, data_files: Iterable[DataFile]) -> dict[str, int]:
        """{data file path: rows its deletion vector deletes}: the manifest's cardinality,
        else (Paimon 0.9, 1.0 snapshot builds) the count in the vector's headers (each vector
        file read once, no vector decoded); 0 without one."""
        return indexes.deleted_counts(self.io, data_files)

    def file_index_bytes(self, data_file: DataFile) -> bytes | None:
        """The data file's file-index container (embedded or sidecar), or None."""
        return indexes.file_index_bytes(self.io, data_file)

    def file_index(self, data_file: DataFile) -> FileIndexFile | None:
        """The parsed container; a FormatError names the sidecar or the manifest entry."""
        return indexes.file_index(self.io, data_file)

    def hash_index(self, index_file: IndexFile) -> NDArray[np.int32]:
        """A HASH index file's key hashes (numpy int32, file order)."""
        return indexes.hash_index(self.io, index_file)

    # ----------------------------------------------------------------- what a read reads

    def plan(self, snapshot: Snapshot | int | None = None,
             partitions: PartitionFilter | None = None, *, ordered: bool = True,
             attributes: tuple[str, ...] = ()) -> ReadPlan:
        """The files a batch read of the snapshot (default: the latest; a `Snapshot` from
        `travel` or `tags`) reads, or TableError for a table this library cannot merge. The
        schema is the snapshot's when one is named, else the latest. With `partitions`
        (`manifest_filter.PartitionFilter`), only the files of partitions it may match (but
        for primary-key tables). In read order, or with `ordered=False` in manifest order
        where `partitions` prunes and the files' partitions come in runs there (for a caller
        that prunes first and sorts what it keeps: `merge.plan_read`); `attributes` of each
        file read with the files' runs where the C extension finds them (`plan.read_files`)."""
        snap = self._snap(snapshot)
        schema = self.schema(None if snapshot is None or snap is None else snap.schema_id)
        if snap is None:
            return ReadPlan(self, None, schema, (), ())
        if schema.primary_keys:         # its read skips level-0 files, which a count of the
            partitions = None           # files of skipped manifests cannot tell apart
        if partitions is None or not partitions.useful(self.schema(snap.schema_id)):
            ordered = True              # (every file: their manifests scatter partitions)
        listing = self._manifests.listing(snap, read_order if ordered else None, partitions)
        files = read_files(self.path, schema, listing.files, attributes)
        if not ordered and not in_runs(files):      # (then sorted, the sort cached)
            listing = self._manifests.listing(snap, read_order, partitions)
            files = read_files(self.path, schema, listing.files, attributes)
        return ReadPlan(self, snap, schema, files, listing.files, listing.excluded)

    def scan(self, where: Predicate | str | None = None, columns: Sequence[str] | None = None,
             snapshot: int | None = None, tag: str | None = None,
             as_of: int | dt.datetime | str | None = None, *, mode: str = "FAILFAST") -> TableScan:
        """A read of the table: `where` (a `ps.col` predicate or Spark SQL comparisons) prunes
        files and filters rows, `columns` selects, `snapshot` / `tag` / `as_of` travel (see
        `travel`; a snapshot or tag that does not exist fails here). The files are planned on
        the first `files()`, `stats`, `to_arrow()`, `to_batches()`, ...; see `scan.TableScan`."""
        from paimon_schema.table.scan import TableScan

        travel = TimeTravel(snapshot, tag, as_of).checked()
        snap = None if travel == TimeTravel() else travel.resolve(self.io, self.path)
        return TableScan(self, where, columns, snap, mode=mode)


#: What the readers and writers take for a table: an open `Table`, or a local path or URI.
TableLike = Union[Table, str, "os.PathLike[str]"]
