"""The index files of a data file, read and decoded: its deletion vector (one bin of a
deletion-vector file), its file-index container (embedded in the manifest or a `.index`
sidecar), and a bucket's HASH index. Errors name the file and give offsets in it."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray
from pyroaring import BitMap, BitMap64

from paimon_schema.layouts.deletion_vectors import read_deletion_vector
from paimon_schema.layouts.file_index import FileIndexFile
from paimon_schema.layouts.hash_index import read_hash_index
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.manifests import HASH, DataFile, IndexFile
from paimon_schema.values.errors import FormatError

__all__ = ["deleted_counts", "deletion_vector", "file_index", "file_index_bytes", "hash_index",
           "in_file_index"]


def deletion_vector(io: FileIO, data_file: DataFile, *,
                    verify_checksum: bool = True) -> BitMap | BitMap64 | None:
    """The data file's deleted positions (None without a deletion vector). Only the bin is
    read: `length` plus the size field and CRC for a 32-bit bin covers a 64-bit bin too."""
    dv = data_file.deletion_file
    if dv is None:
        return None
    chunk = io.read_bytes(dv.path, dv.offset, dv.length + 8)
    try:
        return read_deletion_vector(chunk, 0, dv.length, verify_checksum=verify_checksum)
    except FormatError as exc:
        error = FormatError(f"deletion vector of {data_file.file_name} in {dv.path} at offset "
                            f"{dv.offset}: {exc.reason}",
                            offset=None if exc.offset is None else exc.offset + dv.offset,
                            path=exc.path)
        error.file = dv.path
        raise error from exc


def deleted_counts(io: FileIO, data_files: Iterable[DataFile]) -> dict[str, int]:
    """{data file path: how many of its rows its deletion vector deletes} (0 without one): the
    cardinality the index manifest records, or, where it records none (Paimon 1.0 and older),
    the vector's own count, each vector file read once for all its bins."""
    counts: dict[str, int] = {}
    unrecorded: dict[str, list[DataFile]] = {}
    for f in data_files:
        dv = f.deletion_file
        if dv is not None and dv.cardinality is None:
            unrecorded.setdefault(dv.path, []).append(f)
        else:
            counts[f.path] = 0 if dv is None or dv.cardinality is None else dv.cardinality
    for path, files in unrecorded.items():
        data = io.read_bytes(path)
        for f in files:
            dv = f.deletion_file
            assert dv is not None
            try:
                counts[f.path] = len(read_deletion_vector(data, dv.offset, dv.length))
            except FormatError as exc:
                error = FormatError(f"deletion vector of {f.file_name} in {path} at offset "
                                    f"{dv.offset}: {exc.reason}", offset=exc.offset,
                                    path=exc.path)
                error.file = path
                raise error from exc
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
