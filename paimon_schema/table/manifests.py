"""A snapshot's manifests folded into its live files: the data manifests (base, then delta
manifest list) folded ADD/DELETE into `DataFile`s, the index manifest into `IndexFile`s, each
data file with its deletion vector (`DeletionFile`). Nothing here lists data directories:
compacted files stay on disk until they expire, so only the manifests say which files are live.

Manifests are Avro, decoded in C (`runtime.avro_blocks.read_fields`: only the values a
`DataFile` takes). Manifests are never rewritten (their names carry a UUID), so each is decoded
once per process and kept in a bounded cache, shared by the snapshots that name it: the next
snapshot's plan decodes only its new manifests, and a plan filtered by partition decodes only
the manifests whose partition statistics it may match (`manifest_filter`), and in them only the
entries of the partitions it may match past their partition (`read_fields`' gate: a merged
manifest holds every partition; a later plan that keeps the others decodes them then).
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
import posixpath
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NoReturn, Protocol, TypeVar, cast

from paimon_schema.layouts.global_index_meta import GlobalIndexMeta
from paimon_schema.runtime import collector
from paimon_schema.runtime.avro_blocks import project, read_fields, read_records
from paimon_schema.table.bulk_partitions import FALSE as EXCLUDED
from paimon_schema.table.bulk_partitions import UNDECIDED
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.partitions import bucket_dir, partition_of
from paimon_schema.table.schema import TableSchema
from paimon_schema.table.snapshots import Snapshot
from paimon_schema.values.errors import FormatError

try:
    from paimon_schema.runtime import _kernels
except ImportError:                     # built without a C compiler
    _kernels = None  # type: ignore[assignment]
try:
    from paimon_schema.runtime import _avro
except ImportError:
    _avro = None  # type: ignore[assignment]

__all__ = ["ADD", "BULK_SORTS", "DELETE", "DELETION_VECTORS", "HASH", "DataFile", "DeletionFile", "IndexFile",
           "Listing", "Manifests", "PartitionFilter", "read_avro"]

ADD, DELETE = 0, 1                      # manifest entry `_KIND`
_DELETED = object()                     # a DELETE folded before its file's ADD
_Live = TypeVar("_Live")
DELETION_VECTORS = "DELETION_VECTORS"
HASH = "HASH"


@dataclass(frozen=True)
class DeletionFile:
    """Where a data file's deletion vector is: Java's `DeletionFile(path, offset, length,
    cardinality)`; `cardinality` is None in metadata written before Paimon 1.0."""

    path: str                 # the index file, on the table's filesystem
    index_file: str           # its name
    offset: int
    length: int
    cardinality: int | None


#: Slots (Python 3.11 keeps weak references to them): a big table's plan makes 100k `DataFile`s,
#: each then a third smaller and one container, not two, for the garbage collector to walk.
_SLOTS: dict[str, Any] = {"slots": True, "weakref_slot": True} if sys.version_info >= (3, 11) else {}


@dataclass(frozen=True, **_SLOTS)
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
    #: `_GLOBAL_INDEX` of a global index file (None for deletion vectors, hash indexes, ...)
    global_index: GlobalIndexMeta | None = None


class _RecentDataFiles:
    """What the last plans decoded and folded (a thread-safe LRU map), at most about `budget`
    bytes of it in all: decoded manifests (immutable: keyed by filesystem, table, schema and
    name), charged what their files and fold keys hold; and folded snapshots (their live
    files, in manifest or read order), charged their references only, since their files are
    the manifests' (a file given its deletion vector is charged in full). A folded snapshot
    `needs` its manifests: evicting one drops it too, so nothing the budget does not count
    stays reachable from the cache. A value that alone exceeds the budget is not held."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.held = 0
        self.items: OrderedDict[tuple, tuple[Any, int, tuple[tuple, ...]]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> Any:
        """The value held under `key` (and the manifests it needs, now the most recent),
        None when not held."""
        with self.lock:
            item = self.items.get(key)
            if item is None:
                return None
            for need in item[2]:
                self.items.move_to_end(need)
            self.items.move_to_end(key)
            return item[0]

    def put(self, key: tuple, value: Any, size: int, needs: tuple[tuple, ...] = ()) -> None:
        """Hold `value`, charged `size` bytes, unless it alone exceeds the budget or a
        manifest it needs is no longer held."""
        if size > self.budget:
            return
        with self.lock:
            if key in self.items or any(need not in self.items for need in needs):
                return
            self.items[key] = (value, size, needs)
            self.held += size
            self._evict()

    def charge(self, key: tuple, size: int) -> None:
        """Charge the value held under `key` (if it is) `size` bytes now: it grew."""
        with self.lock:
            item = self.items.get(key)
            if item is not None:
                self.items[key] = (item[0], size, item[2])
                self.held += size - item[1]
                self._evict()

    def _evict(self) -> None:
        """The least recent values dropped until the budget holds, and what needed them."""
        evicted = False
        while self.held > self.budget:
            _, (_, dropped, _) = self.items.popitem(last=False)
            self.held -= dropped
            evicted = True
        if evicted:
            for other in [k for k, (_, _, n) in self.items.items()
                          if any(need not in self.items for need in n)]:
                self.held -= self.items.pop(other)[1]


#: What a `DataFile` holds beyond its bytes and strings (its slots, ints, tuples; measured
#: with tracemalloc: ~1.1 KiB a file of the forged tables, with its entry's, repeated values shared).
_FILE_OVERHEAD = 470
#: What a decoded manifest holds per entry beyond its `DataFile`: the fold key (a tuple of 7),
#: the kind, and until the file is made its values (a tuple of 22 and what only it holds).
#: With `_FILE_OVERHEAD`, within 10 % of what tracemalloc measures (`test_plan_scale`).
_ENTRY_OVERHEAD = 200
#: What a folded snapshot holds per file: a reference in its tuple (and one in a view).
_REFERENCE = 8


def held_bytes(files: tuple[DataFile, ...]) -> int:
    """An estimate of the memory `files` hold (shared partition values not counted)."""
    total = 0
    for f in files:
        total += _FILE_OVERHEAD + len(f.path) + len(f.embedded_index or b"")
        if f.value_stats is not None:
            total += len(f.value_stats[0]) + len(f.value_stats[1])
    return total


#: The cache's budget: a 100k-file table's manifests with statistics and embedded indexes
#: (~120 MiB decoded) fit; the cache never holds more than this, whatever is planned.
DATA_FILES_CACHE_BYTES = 160 << 20
_DATA_FILES = _RecentDataFiles(DATA_FILES_CACHE_BYTES)


class PartitionFilter(Protocol):
    """What a scan's filter says of partitions (`table.manifest_filter`): `manifest` is False
    when no partition within a manifest's `_PARTITION_STATS` can match, `partitions` of each
    partition (a BinaryRow) that cannot, `useful` when it names no partition column (it cannot
    skip anything); `key` names the filter in the cache (None: not cached); `judge` answers one
partition with a `bulk_partitions` code (`EXCLUDED`: `partitions` says False; `UNDECIDED`:
ask `partitions`; others: True), for the decoder to skip the rest of an excluded partition's
entries (None: no such judge)."""

    key: Hashable | None

    def useful(self, schema: TableSchema) -> bool: ...

    def manifest(self, meta: Mapping[str, Any], schema: TableSchema) -> bool: ...

    def partitions(self, raws: list[bytes], schema: TableSchema) -> list[bool]: ...

    def judge(self, schema: TableSchema) -> Callable[[bytes], int] | None: ...


#: Key functions that sort in bulk: `listing` sorts by one in a single call, not a call per
#: file (registered by the module that defines the key: `plan.read_order`).
BULK_SORTS: dict[Callable[[DataFile], Any], Callable[[tuple[DataFile, ...]], tuple[DataFile, ...]]] = {}


@dataclass(frozen=True)
class Listing:
    """The live data files of a snapshot a filter may match (all without one) and how many
    live files the filter's partitions exclude (counted from the manifest list for the
    manifests it skips: `_NUM_ADDED_FILES - _NUM_DELETED_FILES`)."""

    files: tuple[DataFile, ...]
    excluded: int = 0


#: The values of a manifest entry a `DataFile` takes (`avro_blocks.read_fields`): the first
#: eleven but `_TOTAL_BUCKETS` are required of a data file's entry.
_ENTRY_FIELDS = (
    ("_KIND",), ("_PARTITION",), ("_BUCKET",), ("_TOTAL_BUCKETS",), ("_FILE", "_FILE_NAME"),
    ("_FILE", "_FILE_SIZE"), ("_FILE", "_ROW_COUNT"), ("_FILE", "_LEVEL"), ("_FILE", "_SCHEMA_ID"),
    ("_FILE", "_MIN_SEQUENCE_NUMBER"), ("_FILE", "_MAX_SEQUENCE_NUMBER"), ("_FILE", "_EXTRA_FILES"),
    ("_FILE", "_EMBEDDED_FILE_INDEX"), ("_FILE", "_EXTERNAL_PATH"), ("_FILE", "_DELETE_ROW_COUNT"),
    ("_FILE", "_FILE_SOURCE"), ("_FILE", "_FIRST_ROW_ID"), ("_FILE", "_WRITE_COLS"),
    ("_FILE", "_VALUE_STATS", "_MIN_VALUES"), ("_FILE", "_VALUE_STATS", "_MAX_VALUES"),
    ("_FILE", "_VALUE_STATS", "_NULL_COUNTS"), ("_FILE", "_VALUE_STATS_COLS"))
#: Where `_ENTRY_FIELDS` has the partition (`read_fields`' gate).
_PARTITION_SLOT = 1
#: The fold key's values (`_fold_key`): partition, bucket, level, name, extra files (a tuple),
#: embedded index, external path.
_KEY_SLOTS = (1, 2, 7, 4, 11, 12, 13)
#: The values that repeat from entry to entry, one object each in a manifest (`read_fields`'
#: `shared`): partition, write columns, null counts, statistics' columns.
_SHARED_SLOTS = (1, 17, 20, 21)


class _Decoded:
    """A decoded manifest: each entry's kind and fold key, and each ADD's `DataFile`, made
    when a fold first finds it live (an ADD a later DELETE cancels, or of a partition no
    filter wanted, is never made: its entry's values wait in `rows`). `size` estimates what
    it holds, its files made. The entries of the partitions in `gated` hold their kind and
    partition only (the plan that decoded it excluded them: `read_fields`' gate); a plan that
    keeps any of them first decodes the rest (`complete`)."""

    __slots__ = ("path", "kinds", "keys", "rows", "files", "shared", "size", "gated")

    def __init__(self, path: str, rows: list[tuple], gated: frozenset[bytes] = frozenset()) -> None:
        self.path = path
        self.gated = gated
        self.shared: dict[Any, Any] = {}
        self.files: list[DataFile | None] = [None] * len(rows)
        self.kinds: list[int]
        self.keys: list[tuple]
        # an ADD's values until its file is made; a DELETE's key says all the fold needs
        self.rows: list[tuple | None]
        if _avro is not None:           # one pass in C, the keys not tracked by the collector
            self.kinds, self.keys, self.rows, adds, length = _avro.entries(
                rows, 0, _KEY_SLOTS, 11, ADD, (4, 12), (18, 19))
        else:
            with collector.paused():
                self.rows = [row if row[0] == ADD else None for row in rows]
                self.kinds = [row[0] for row in rows]
                self.keys = [tuple((tuple(row[11]) if row[11] else ()) if s == 11 else row[s]
                                   for s in _KEY_SLOTS) for row in rows]
                added = [row for row in rows if row[0] == ADD]
                adds = len(added)
                length = sum(len(value) for row in rows for value in (row[4], row[12]) if value) \
                    + sum(len(value) for row in added for value in (row[18], row[19]) if value)
                if _kernels is not None:    # the collector's next pass need not walk them
                    _kernels.untrack(rows)
                    _kernels.untrack(self.keys)
        if _kernels is not None:    # nor these lists' items, one by one (`untrack_containers`)
            _kernels.untrack_containers((self.files, self.kinds, self.keys, self.rows))
        self.size = _charge(len(rows), adds, length)

    def complete(self, raw: bytes) -> None:
        """The entries of the `gated` partitions decoded in full from the manifest's bytes
        `raw`, the others walked over (the gate the other way round), in place: the files
        already made stay, and so do the other entries."""
        with _COMPLETING:                   # (once: plans on other threads may need it too)
            gated = self.gated
            if not gated:
                return
            rest = _Decoded(self.path, read_fields(raw, self.path, _ENTRY_FIELDS, _SHARED_SLOTS,
                                                   (_PARTITION_SLOT, gated.__contains__, {}, False)))
            for i in [i for i, key in enumerate(self.keys) if _PARTITION_OF_KEY(key) in gated]:
                self.keys[i], self.rows[i] = rest.keys[i], rest.rows[i]
            self.gated = frozenset()
            self.size += rest.size - _charge(len(rest.kinds), rest.kinds.count(ADD), 0)

    def convert(self, i: int, manifests: Manifests, schema: TableSchema,
                known: dict[Any, Any]) -> DataFile:
        """The `DataFile` of ADD entry `i`, made once; `known` is the fold's (`_place`)."""
        row = self.rows[i]
        if row is None:                 # made meanwhile by another thread
            return cast(DataFile, self.files[i])
        data_file = manifests._data_file(row, self.keys[i][4], schema, self.shared, self.path, known)
        self.files[i] = data_file
        self.rows[i] = None
        return data_file


#: Held while a decoded manifest completes (`_Decoded.complete`).
_COMPLETING = threading.Lock()


def _charge(entries: int, adds: int, length: int) -> int:
    """What a decoded manifest of `entries` (`adds` of them ADDs, their files to be made)
    holds, `length` the summed lengths of its strings and bytes."""
    return 200 + _ENTRY_OVERHEAD * entries + (_FILE_OVERHEAD + 100) * adds + length


def read_avro(io: FileIO, path: str) -> list[dict]:
    """The records of a manifest or manifest list (zstd-compressed Avro), as fastavro reads
    them (`runtime.avro_blocks`: decoded in C)."""
    return read_records(io.read_bytes(path), path)


class Manifests:
    """The manifests of the table at `root`; `schema` looks a schema up by id."""

    def __init__(self, io: FileIO, root: str, schema: Callable[[int], TableSchema]) -> None:
        self.io = io
        self.root = root
        self.schema = schema

    def _manifest(self, name: str) -> str:
        return posixpath.join(self.root, "manifest", name)

    def entries(self, manifest_list: str) -> Iterator[dict]:
        """The entries of every manifest a manifest list names, in order."""
        for meta in read_avro(self.io, self._manifest(manifest_list)):
            yield from read_avro(self.io, self._manifest(meta["_FILE_NAME"]))

    def data_files(self, snap: Snapshot, order: Callable[[DataFile], Any] | None = None
                   ) -> list[DataFile]:
        """The live data files of a snapshot, each with its deletion vector (see `listing`)."""
        return list(self.listing(snap, order).files)

    def listing(self, snap: Snapshot, order: Callable[[DataFile], Any] | None = None,
                partitions: PartitionFilter | None = None) -> Listing:
        """The live data files of a snapshot, each with its deletion vector: the base and delta
        manifest lists' entries folded in order, a DELETE removing the ADD of the same file
        (partition, bucket, level, name, extra files, embedded index, external path: a
        compaction that only moves a file to another level re-adds it). In manifest order,
        or sorted by `order` (a module-level function: the sorted files are cached too, a
        reference per file, for the next plan of the snapshot).

        With `partitions`, only the files of partitions it may match: a manifest whose
        partition statistics exclude them all is not read, and the entries of excluded
        partitions in the others are not folded (an ADD and its DELETE are in the same
        partition, so the files of the partitions kept fold the same)."""
        if partitions is not None and not partitions.useful(self.schema(snap.schema_id)):
            partitions = None
        filter_key = None if partitions is None else partitions.key
        cacheable = partitions is None or filter_key is not None
        key = (self.io.name, self.root, snap.id, snap.schema_id, snap.base_manifest_list,
               snap.delta_manifest_list, snap.index_manifest, filter_key)
        view = None if order is None else f"{order.__module__}.{order.__qualname__}"
        held = _DATA_FILES.get((*key, view)) if cacheable else None
        if held is not None:
            return cast(Listing, held[0])
        folded = _DATA_FILES.get((*key, None)) if cacheable and view is not None else None
        if folded is None:
            with collector.paused():
                folded = self._fold_data_files(snap, partitions)
            listing, needs, size = folded
            if cacheable:
                _DATA_FILES.put((*key, None), folded, size, needs)
        listing, needs, _ = folded
        if order is not None:
            with collector.paused():
                sort = BULK_SORTS.get(order)
                listing = Listing(_untracked(tuple(sorted(listing.files, key=order)) if sort is None
                                             else sort(listing.files)), listing.excluded)
            if cacheable:
                _DATA_FILES.put((*key, view), (listing,), _REFERENCE * len(listing.files),
                                (*needs, (*key, None)))
        return listing

    def _fold_data_files(self, snap: Snapshot, partitions: PartitionFilter | None
                         ) -> tuple[Listing, tuple[tuple, ...], int]:
        """The listing, the cache keys of the decoded manifests it was folded from (what it
        needs held) and the bytes it holds beyond theirs. Folded in C where built (`fold_into`,
        `live_files`: no Python statement per entry or per file), else by `_fold`; each
        partition's values decoded once per fold (its files, in every manifest, share them)."""
        schema = self.schema(snap.schema_id)
        dvs = self.deletion_files(snap)
        needs: list[tuple] = []
        excluded = 0
        known: dict[Any, Any] = {}         # `_place`
        verdicts: dict[bytes, bool] = {}
        judge = None if partitions is None else partitions.judge(schema)

        def manifests() -> Iterator[tuple[_Decoded, dict[bytes, bool] | None]]:
            """Each manifest the filter may match, decoded (but the entries of partitions it
            excludes, where `judge` tells them), and the verdicts of its partitions (None
            without a filter)."""
            nonlocal excluded
            for meta in self._manifest_metas(snap):
                counts = meta.get("_NUM_ADDED_FILES"), meta.get("_NUM_DELETED_FILES")
                if partitions is not None and isinstance(counts[0], int) \
                        and isinstance(counts[1], int) and not partitions.manifest(meta, schema):
                    excluded += counts[0] - counts[1]
                    continue
                judged: dict[bytes, int] = {}
                cache_key, decoded = self._decoded(meta["_FILE_NAME"], snap.schema_id, schema, judge,
                                                   judged)
                needs.append(cache_key)
                if partitions is not None:      # each partition's verdict once (the gate's too)
                    verdicts.update((p, code != EXCLUDED) for p, code in judged.items() if code != UNDECIDED)
                    new = list(set(map(_PARTITION_OF_KEY, decoded.keys)).difference(verdicts))
                    verdicts.update(zip(new, partitions.partitions(new, schema)))
                if decoded.gated and (partitions is None or any(map(verdicts.__getitem__, decoded.gated))):
                    decoded.complete(self.io.read_bytes(decoded.path))   # (another filter's decode)
                    _DATA_FILES.charge(cache_key, decoded.size)
                yield decoded, None if partitions is None else verdicts

        def entries() -> Iterator[tuple[int, tuple, tuple[_Decoded, int]]]:
            nonlocal excluded
            for decoded, wanted_of in manifests():
                at = zip(itertools.repeat(decoded), range(len(decoded.kinds)))
                if wanted_of is None:
                    yield from zip(decoded.kinds, decoded.keys, at)
                    continue
                # the entries of the partitions kept (no Python per entry)
                wanted = list(map(wanted_of.__getitem__, map(_PARTITION_OF_KEY, decoded.keys)))
                dropped = list(itertools.compress(decoded.kinds, map(operator.not_, wanted)))
                excluded += len(dropped) - 2 * sum(map(ADD.__ne__, dropped))
                yield from itertools.compress(zip(decoded.kinds, decoded.keys, at), wanted)

        if _kernels is None or not _SLOTS:
            out = [decoded.files[i] or decoded.convert(i, self, schema, known)
                   for decoded, i in _fold(snap, entries())]
        else:
            live: dict[tuple, int | None] = {}
            folded: list[_Decoded] = []
            for decoded, wanted_of in manifests():
                dropped, failed = _kernels.fold_into(live, len(folded), decoded.kinds, decoded.keys,
                                                     wanted_of)
                excluded += dropped
                if failed is not None:
                    _fold_failure(snap, *failed)
                folded.append(decoded)
            out = _kernels.live_files(
                live, [(d.rows, d.files, d.keys, d.shared) for d in folded],
                known, partial(self._place, schema=schema, known=known),
                lambda m, i: folded[m].convert(i, self, schema, known),
                DataFile, _DATA_FILE_OFFSETS)
        size = 200
        if dvs:
            for at, data_file in enumerate(out):
                deletion = dvs.pop((data_file.partition_path, data_file.file_name), None)
                if deletion:
                    out[at] = data_file = _new_data_file(tuple(
                        deletion if name == "deletion_file" else getattr(data_file, name)
                        for name in _DATA_FILE_FIELDS))
                    size += held_bytes((data_file,))
        size += _REFERENCE * len(out)
        return Listing(_untracked(tuple(out)), excluded), tuple(needs), size

    def _manifest_metas(self, snap: Snapshot) -> Iterator[dict]:
        yield from read_avro(self.io, self._manifest(snap.base_manifest_list))
        yield from read_avro(self.io, self._manifest(snap.delta_manifest_list))

    def _decoded(self, name: str, schema_id: int, schema: TableSchema,
                 judge: Callable[[bytes], int] | None = None, judged: dict[bytes, int] | None = None
                 ) -> tuple[tuple, _Decoded]:
        """A manifest's entries decoded (from the cache when held), with its cache key; with
        a `judge`, the entries of the partitions it excludes decoded no further than their
        partition (a merged manifest holds every partition, and a filter keeps a few), its
        codes put in `judged`."""
        key = (self.io.name, self.root, schema_id, name)
        held = _DATA_FILES.get(key)
        if held is not None:
            return key, cast(_Decoded, held)
        path = self._manifest(name)
        seen: dict[bytes, int] = {} if judged is None else judged
        rows = read_fields(self.io.read_bytes(path), path, _ENTRY_FIELDS, _SHARED_SLOTS,
                           None if judge is None else (_PARTITION_SLOT, judge, seen, EXCLUDED))
        decoded = _Decoded(path, rows, frozenset(p for p, code in seen.items() if code == EXCLUDED))
        _DATA_FILES.put(key, decoded, decoded.size)
        return key, decoded

    def live_entries(self, snap: Snapshot) -> list[dict]:
        """The ADD entries (raw manifest records) of the snapshot's live data files, in
        manifest order: what a writer re-commits with changes."""
        def entries() -> Iterator[tuple[int, tuple, dict]]:
            for meta in self._manifest_metas(snap):
                for entry in read_avro(self.io, self._manifest(meta["_FILE_NAME"])):
                    yield entry["_KIND"], _fold_key(entry), entry

        return _fold(snap, entries())

    def index_files(self, snap: Snapshot) -> list[IndexFile]:
        """The live entries of a snapshot's index manifest (deletion vectors, hash indexes and
        any other index type), folded ADD/DELETE."""
        if not snap.index_manifest:
            return []
        schema = self.schema(snap.schema_id)
        live: dict[tuple, dict] = {}
        for entry in read_avro(self.io, self._manifest(snap.index_manifest)):
            key = (entry["_PARTITION"], entry["_BUCKET"], entry["_INDEX_TYPE"], entry["_FILE_NAME"])
            if entry["_KIND"] == ADD:
                live[key] = entry
            else:
                live.pop(key, None)
        return [self.index_file(e, schema) for e in live.values()]

    def deletion_files(self, snap: Snapshot) -> dict[tuple[str, str], DeletionFile]:
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

    def data_file(self, entry: dict, schema: TableSchema,
                  shared: dict[Any, Any] | None = None) -> DataFile:
        """The `DataFile` of a raw manifest entry (without its deletion vector); `schema` is
        the snapshot's. `shared` keeps, for the next entries of the same manifest, each
        (partition, bucket)'s values and directory (a table has far fewer partitions than
        files, and their BinaryRows decode in Python) and one copy of the small tuples files
        repeat (statistics' column names, null counts): the files of one partition share its
        dict, which nothing changes."""
        row = project(entry, _ENTRY_FIELDS)
        shared = {} if shared is None else shared
        return self._data_file(row, tuple(row[11]) if row[11] else (), schema,
                               shared, "the manifest entry", shared)

    def _data_file(self, row: tuple, extra: tuple[str, ...], schema: TableSchema,
                   shared: dict[Any, Any], where: str,
                   known: dict[Any, Any]) -> DataFile:
        """`data_file` of an entry's `_ENTRY_FIELDS` (its `_EXTRA_FILES` as a tuple)."""
        (_, partition_row, bucket, total_buckets, name, file_size, row_count, level, schema_id,
         min_sequence, max_sequence, _, embedded, external, delete_rows, source, first_row_id,
         write_cols, minimum, maximum, nulls, names) = row
        if partition_row is None or bucket is None or name is None or file_size is None \
                or row_count is None or level is None or schema_id is None \
                or min_sequence is None or max_sequence is None:
            missing = [field for i, field in enumerate(_ENTRY_FIELDS[:11]) if i != 3 and row[i] is None]
            raise FormatError(f"{where}: a data file entry without {'.'.join(missing[0])}",
                              path=".".join(missing[0]))
        place = shared.get((partition_row, bucket))
        if place is None:
            place = self._place(shared, partition_row, bucket, schema=schema, known=known)
        if minimum is None and maximum is None and nulls is None:
            stats = None
        else:
            nulls = None if nulls is None else tuple(nulls)
            names = None if names is None else tuple(names)
            stats = (minimum or b"", maximum or b"", known.setdefault(nulls, nulls),
                     known.setdefault(names, names))
        return _new_data_file((
            place[0], place[1], bucket, -1 if total_buckets is None else total_buckets, name,
            external or f"{place[2]}/{name}", file_size, row_count, level, schema_id,
            min_sequence, max_sequence, extra, embedded, external, delete_rows, source,
            first_row_id, None if write_cols is None else tuple(write_cols), None, stats))

    def _place(self, shared: dict[Any, Any], partition_row: bytes, bucket: int, *,
               schema: TableSchema, known: dict[Any, Any]
               ) -> tuple[dict[str, Any], str, str]:
        """A (partition, bucket)'s values, path and bucket directory, kept in `shared` (a
        manifest's) and its values in `known`. `known` is a fold's: each partition's values
        by its BinaryRow (decoded once; its files in every manifest share the dict, and
        pruning's runs and verdicts are per dict) and one copy of each small tuple the files
        repeat (statistics' column names, null counts: `bulk_stats` answers the files that
        share a names tuple together)."""
        values = known.get(partition_row)
        if values is None:
            values = known[partition_row] = partition_of(partition_row, schema)
        found = shared[(partition_row, bucket)] = (
            values[0], values[1], bucket_dir(self.root, values[1], bucket, schema))
        return found

    def index_file(self, entry: dict, schema: TableSchema) -> IndexFile:
        """The `IndexFile` of a raw index-manifest entry; `schema` is the snapshot's."""
        partition, partition_path = partition_of(entry["_PARTITION"], schema)
        name = entry["_FILE_NAME"]
        external = entry.get("_EXTERNAL_PATH")
        global_index = GlobalIndexMeta.from_entry(entry)
        if external:
            path = external
        elif schema.flag("index-file-in-data-file-dir") and global_index is None:
            path = posixpath.join(bucket_dir(self.root, partition_path, entry["_BUCKET"], schema), name)
        else:
            path = posixpath.join(self.root, "index", name)
        ranges = tuple((r["f0"], r["f1"], r["f2"], r.get("_CARDINALITY"))
                       for r in entry.get("_DELETIONS_VECTORS_RANGES") or () if r is not None)
        return IndexFile(partition, partition_path, entry["_BUCKET"], entry["_INDEX_TYPE"], name,
                         path, entry["_FILE_SIZE"], entry["_ROW_COUNT"], ranges, global_index)


def _fold_key(entry: Mapping[str, Any]) -> tuple:
    """What identifies a file in the fold: partition, bucket, level, name, extra files,
    embedded index, external path."""
    meta = entry["_FILE"]
    return (entry["_PARTITION"], entry["_BUCKET"], meta["_LEVEL"], meta["_FILE_NAME"],
            tuple(meta.get("_EXTRA_FILES") or ()), meta.get("_EMBEDDED_FILE_INDEX"),
            meta.get("_EXTERNAL_PATH"))


def _fold_failure(snap: Snapshot, kind: Any, key: tuple) -> NoReturn:
    """The error of a fold's entry of `kind` and fold key `key` that cannot fold (as `_fold`)."""
    if kind == ADD:
        raise TableError(f"snapshot {snap.id} adds {key[3]} twice, or after deleting it (Paimon "
                         "adds a file once, then deletes it at most once)")
    raise FormatError(f"manifest entry kind {kind} is neither ADD nor DELETE", path="_KIND")


def _fold(snap: Snapshot, entries: Iterable[tuple[int, tuple, _Live]]) -> list[_Live]:
    """The live values of (kind, fold key, value) entries in manifest order: an ADD's value
    unless a later DELETE of the same key cancels it. A DELETE whose ADD is not read stays a
    tombstone; an ADD of a key already folded, added or deleted, fails (Java's
    `FileEntry.mergeEntries`: "Trying to add file ... which is already added")."""
    live: dict[tuple, Any] = {}
    for kind, key, value in entries:
        if kind == ADD:
            if key in live:
                _fold_failure(snap, kind, key)
            live[key] = value
        elif kind == DELETE:
            if live.get(key, _DELETED) is not _DELETED:
                del live[key]
            else:
                live[key] = _DELETED
        else:
            _fold_failure(snap, kind, key)
    return [value for value in live.values() if value is not _DELETED]


def _untracked(files: tuple[DataFile, ...]) -> tuple[DataFile, ...]:
    """`files`, which the cache may keep, untracked by the collector where the C extension is
    built (`untrack_containers`: a file refers to nothing that refers back to the tuple)."""
    if _kernels is not None:
        _kernels.untrack_containers((files,))
    return files


_PARTITION_OF_KEY = operator.itemgetter(0)
_DATA_FILE_FIELDS = tuple(field.name for field in dataclasses.fields(DataFile))


def _init_fields(values: tuple) -> DataFile:
    """`DataFile(*values)`: without the C extension."""
    return DataFile(*values)


#: `DataFile(*values)` (`values` in field order) at a tenth of the cost: a frozen dataclass's
#: `__init__` sets each of its 21 fields through `object.__setattr__` (most of a big table's
#: fold); the C extension stores them straight into the slots.
_DATA_FILE_OFFSETS: tuple[int, ...] = (
    () if _kernels is None or not _SLOTS else _kernels.slot_offsets(DataFile, _DATA_FILE_FIELDS))
_new_data_file: Callable[[tuple], DataFile] = (
    _init_fields if _kernels is None or not _SLOTS
    else partial(_kernels.new_slotted, DataFile, _DATA_FILE_OFFSETS))
