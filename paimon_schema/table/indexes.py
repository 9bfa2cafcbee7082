"""The index files of a data file, read and decoded: its deletion vector (one bin of a
deletion-vector file), its file-index container (embedded in the manifest or a `.index`
sidecar), and a bucket's HASH index. Errors name the file and give offsets in it.

Off the local disk a deletion-vector index file is fetched whole, once per process
(`deletion_bytes`): the data files of a bucket share one index file, so a read makes one request
per index file rather than one per data file. Paimon keeps these files small
(`deletion-vector.index-file.target-size`, 2 MB) and never rewrites one (its name holds a UUID),
so the bytes are kept in a bounded cache. A whole read takes all its vectors at once
(`deletion_vectors`), each index file read once, on the local disk too; where the index
manifest records no count (Paimon 0.9, 1.0 snapshot builds), planning counts a vector from its containers'
headers (`deleted_counts`), so a read still decodes each vector once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray
from pyroaring import BitMap, BitMap64

from paimon_schema.layouts.deletion_vectors import deletion_vector_cardinality, read_deletion_vector
from paimon_schema.layouts.file_index import FileIndexFile
from paimon_schema.layouts.hash_index import read_hash_index
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.manifests import HASH, DataFile, DeletionFile, IndexFile
from paimon_schema.values.errors import FormatError

__all__ = ["deleted_counts", "deletion_bytes", "deletion_vector", "deletion_vectors", "file_index",
           "file_index_bytes", "hash_index", "in_file_index"]

#: The head of an index file fetched at once (bins beyond it are read by range).
INDEX_FILE_HEAD = 8 << 20


class _IndexFileHeads:
    """The first `INDEX_FILE_HEAD` bytes of the deletion-vector files read, at most `budget`
    bytes in all (LRU); each fetched once even when threads ask for it together."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.held = 0
        self.items: OrderedDict[str, bytes] = OrderedDict()
        self.lock = threading.Lock()
        self.loading: dict[str, threading.Lock] = {}

    def get(self, io: FileIO, path: str) -> bytes:
        key = io.location(path)
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            loading = self.loading.setdefault(key, threading.Lock())
        with loading:
            with self.lock:
                if key in self.items:
                    return self.items[key]
            data = io.read_bytes(path, 0, INDEX_FILE_HEAD)
            with self.lock:
                self.loading.pop(key, None)
                self.items[key] = data
                self.held += len(data)
                while self.held > self.budget and len(self.items) > 1:
                    _, dropped = self.items.popitem(last=False)
                    self.held -= len(dropped)
            return data


_INDEX_FILE_HEADS = _IndexFileHeads(64 << 20)

#: How many deletion vectors' counts `deleted_counts` keeps (about 100 bytes each).
COUNTS_HELD = 100_000
#: {(index file location, offset, length): the bin's cardinality} of the vectors whose index
#: manifest records none: index files are never rewritten (their names hold a UUID), so a plan
#: counts each vector once per process, not once per read.
_COUNTS: dict[tuple[str, int, int], int] = {}


def deletion_bytes(io: FileIO, dv: DeletionFile) -> bytes:
    """The bytes of a deletion vector's bin: `length` plus the size field and CRC of a 32-bit
    bin (which covers a 64-bit bin too); off the local disk cut from the cached index file."""
    end = dv.offset + dv.length + 8
    if not io.remote or end > INDEX_FILE_HEAD:
        return io.read_bytes(dv.path, dv.offset, dv.length + 8)
    return _INDEX_FILE_HEADS.get(io, dv.path)[dv.offset:end]


def deletion_vector(io: FileIO, data_file: DataFile, *,
                    verify_checksum: bool = True) -> BitMap | BitMap64 | None:
    """The data file's deleted positions (None without a deletion vector)."""
    dv = data_file.deletion_file
    if dv is None:
        return None
    chunk = deletion_bytes(io, dv)
    try:
        return read_deletion_vector(chunk, 0, dv.length, verify_checksum=verify_checksum)
    except FormatError as exc:
        error = FormatError(f"deletion vector of {data_file.file_name} in {dv.path} at offset "
                            f"{dv.offset}: {exc.reason}",
                            offset=None if exc.offset is None else exc.offset + dv.offset,
                            path=exc.path)
        error.file = dv.path
        raise error from exc


def deletion_vectors(io: FileIO, deletions: Sequence[DeletionFile | None]) -> list[BitMap | BitMap64 | None]:
    """The deleted positions each `DeletionFile` points at (None for None), each index file
    read once, from its first bin read to its last (the data files of a bucket share one)."""
    spans: dict[str, tuple[int, int]] = {}
    for dv in deletions:
        if dv is not None:
            lo, hi = spans.get(dv.path, (dv.offset, 0))
            spans[dv.path] = (min(lo, dv.offset), max(hi, dv.offset + dv.length + 8))
    data = {path: (lo, _index_bytes(io, path, lo, hi)) for path, (lo, hi) in spans.items()}
    vectors: list[BitMap | BitMap64 | None] = []
    for dv in deletions:
        if dv is None:
            vectors.append(None)
            continue
        base, chunk = data[dv.path]
        try:
            vectors.append(read_deletion_vector(chunk, dv.offset - base, dv.length))
        except FormatError as exc:
            raise FormatError(f"deletion vector in {dv.path} at offset {dv.offset}: {exc.reason}",
                              offset=exc.offset, path=exc.path) from exc
    return vectors


def _index_bytes(io: FileIO, path: str, start: int, end: int) -> bytes:
    """Bytes `start .. end` of a deletion-vector index file (off the local disk from the
    cached head where it holds them)."""
    if io.remote and end <= INDEX_FILE_HEAD:
        return _INDEX_FILE_HEADS.get(io, path)[start:end]
    return io.read_bytes(path, start, end - start)


def deleted_counts(io: FileIO, data_files: Iterable[DataFile]) -> dict[str, int]:
    """{data file path: how many of its rows its deletion vector deletes} (0 without one): the
    cardinality the index manifest records, or, where it records none (Paimon 0.9, and 1.0
    snapshot builds before the release such as the pipeline's Java), the count in the vector's
    container headers: each index file read once for all its bins, no vector decoded (the read
    decodes it, once), and each count kept per process."""
    counts: dict[str, int] = {}
    unrecorded: dict[str, list[DataFile]] = {}
    locations: dict[str, str] = {}
    for f in data_files:
        dv = f.deletion_file
        if dv is not None and dv.cardinality is None:
            location = locations.get(dv.path)
            if location is None:
                location = locations[dv.path] = io.location(dv.path)
            known = _COUNTS.get((location, dv.offset, dv.length))
            if known is None:
                unrecorded.setdefault(dv.path, []).append(f)
            else:
                counts[f.path] = known
        else:
            counts[f.path] = 0 if dv is None or dv.cardinality is None else dv.cardinality
    for path, files in unrecorded.items():
        bins = [f.deletion_file for f in files if f.deletion_file is not None]
        start = min(dv.offset for dv in bins)
        data = _index_bytes(io, path, start, max(dv.offset + dv.length + 8 for dv in bins))
        for f, dv in zip(files, bins):
            try:
                counts[f.path] = deletion_vector_cardinality(data, dv.offset - start, dv.length)
            except FormatError as exc:
                error = FormatError(f"deletion vector of {f.file_name} in {path} at offset "
                                    f"{dv.offset}: {exc.reason}",
                                    offset=None if exc.offset is None else exc.offset + start,
                                    path=exc.path)
                error.file = path
                raise error from exc
        if len(_COUNTS) + len(bins) > COUNTS_HELD:
            _COUNTS.clear()
        _COUNTS.update(((locations[path], dv.offset, dv.length), counts[f.path])
                       for f, dv in zip(files, bins))
    return counts


def file_index_bytes(io: FileIO, data_file: DataFile) -> bytes | None:
    """The data file's file-index container (embedded or sidecar), or None."""
    if data_file.embedded_index is not None:
        return data_file.embedded_index
    sidecar = data_file.index_sidecar
    return None if sidecar is None else io.read_bytes(sidecar)


def file_index(io: FileIO, data_file: DataFile) -> FileIndexFile | None:
    """The parsed container; a FormatError names the sidecar or the manifest entry."""
    data = file_index_bytes(io, data_file)
    if data is None:
        return None
    try:
        return FileIndexFile.parse(data)
    except FormatError as exc:
        raise in_file_index(exc, data_file) from exc


def in_file_index(exc: FormatError, data_file: DataFile) -> FormatError:
    """A FormatError of a data file's container (or of a blob in it, located in the container
    by `FormatError.within`) naming its file: the sidecar, whose offsets these are, or the
    manifest entry that embeds it (offsets in the embedded container)."""
    where = data_file.index_sidecar or f"the manifest entry of {data_file.path}"
    error = FormatError(f"file index of {data_file.file_name} ({where}): {exc.reason}",
                        offset=exc.offset, path=exc.path)
    error.file = where
    return error


def hash_index(io: FileIO, index_file: IndexFile) -> NDArray[np.int32]:
    """A HASH index file's key hashes (numpy int32, file order)."""
    if index_file.index_type != HASH:
        raise TableError(f"{index_file.file_name} is a {index_file.index_type} index, not HASH")
    return read_hash_index(io.read_bytes(index_file.path))
