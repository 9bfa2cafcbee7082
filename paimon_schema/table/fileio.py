"""The one seam between the table floor and the bytes of a table: every reader and writer of
table files goes through a `FileIO`, so a new kind of store is one new class here.

Paths are table paths (absolute on the table's filesystem) or URIs (`file:/...`, `s3://...`:
Paimon's `_EXTERNAL_PATH`), which `resolve` sends to the filesystem they name. Reads go through
a `pyarrow.fs` filesystem (an fsspec filesystem is wrapped). Writes are what a commit needs:
fresh names (`write_new`), one name created atomically if absent (`create_exclusive`, the
`snapshot-N` of a commit: of two racing writers exactly one wins, the other gets
`CommitConflict`), a hint replaced in one step (`overwrite`), and removal of a loser's files.
`LocalFileIO` writes with `O_EXCL`, `fsync` and a hard link; `ArrowFileIO` reads any other
filesystem and refuses writes by name, before anything is written: pyarrow promises no atomic
create-if-absent there.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Union

import pyarrow as pa
import pyarrow.fs as pafs

from paimon_schema.table.errors import CommitConflict, TableError

if TYPE_CHECKING:
    import fsspec

__all__ = ["ArrowFileIO", "FileIO", "FileSystemLike", "LocalFileIO", "filesystem_for", "fileio_for",
           "open_fileio"]

#: A filesystem a table may be on: a `pyarrow.fs` one, or an fsspec one (wrapped for pyarrow).
FileSystemLike = Union[pafs.FileSystem, "fsspec.AbstractFileSystem"]


class FileIO(ABC):
    """Reads and writes of table files. Every method takes a table path or a URI; a missing
    file is `TableError("<path> does not exist")` for the reads that need one."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The kind of store (`local`, `s3`, ...), for messages and cache keys."""

    @abstractmethod
    def resolve(self, path: str) -> tuple[FileIO, str]:
        """The FileIO and inner path of `path`: this one for a table path, another for a URI
        naming another filesystem."""

    # ----------------------------------------------------------------- reads

    @abstractmethod
    def read_bytes(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        """`length` bytes at `offset` (to the end when None)."""

    @abstractmethod
    def size(self, path: str) -> int:
        """The file's size in bytes."""

    @abstractmethod
    def exists(self, path: str) -> bool:
        """Whether a file (not a directory) of that name exists."""

    @abstractmethod
    def is_dir(self, path: str) -> bool:
        """Whether `path` is a directory (a prefix holding objects, on an object store)."""

    @abstractmethod
    def list(self, directory: str) -> list[str]:
        """The names (not paths) in `directory`; empty when it does not exist."""

    @abstractmethod
    def open_input(self, path: str) -> pa.NativeFile:
        """A random-access input file for pyarrow's readers (Parquet, ORC); close it."""

    @abstractmethod
    def uri(self, path: str) -> str:
        """The path as a URI another reader (Spark, Java) opens."""

    # ----------------------------------------------------------------- writes

    @abstractmethod
    def check_writable(self, path: str) -> None:
        """TableError naming why files under `path` cannot be written here; writers call it
        before writing anything."""

    @abstractmethod
    def write_new(self, path: str, data: bytes) -> None:
        """Write a file under a fresh name, durably; FileExistsError if the name is taken (it
        is never overwritten). A failed write leaves no file behind."""

    @abstractmethod
    def create_exclusive(self, path: str, data: bytes) -> None:
        """Create `path` with `data` in one step if it does not exist, else CommitConflict;
        every file written by `write_new` before it is durable first."""

    @abstractmethod
    def overwrite(self, path: str, data: bytes) -> None:
        """Replace a hint file (`LATEST`) in one step: readers see the old or the new bytes.
        OSError on failure (a lagging hint is tolerated by readers)."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Remove a file; a missing file is not an error."""

    @abstractmethod
    def mkdirs(self, path: str) -> None:
        """Make a directory and its parents (nothing to do on an object store)."""


def filesystem_for(default: pafs.FileSystem, path: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem and inner path of `path`: a path on `default`, or a URI (an external
    path such as `file:/...`, `s3://...`)."""
    if path.startswith("file:"):
        local = re.sub(r"^file:(//)?", "", path)
        return pafs.LocalFileSystem(), local if local.startswith("/") else "/" + local
    if "://" not in path:
        return default, path
    return pafs.FileSystem.from_uri(path)


def fileio_for(filesystem: FileSystemLike) -> FileIO:
    """The FileIO of a pyarrow filesystem, or of an fsspec one (wrapped)."""
    if not isinstance(filesystem, pafs.FileSystem):
        filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    if isinstance(filesystem, pafs.LocalFileSystem):
        return LocalFileIO(filesystem)
    return ArrowFileIO(filesystem)


def open_fileio(path: str | os.PathLike[str],
                filesystem: FileSystemLike | None = None) -> tuple[FileIO, str]:
    """The FileIO and inner path of what `Table.open` takes: a local path (made absolute), a
    URI (`s3://...`, `file:///...`), or a path on `filesystem` (pyarrow or fsspec)."""
    text = str(path)
    if filesystem is not None:
        return fileio_for(filesystem), text
    if "://" in text:
        filesystem, text = pafs.FileSystem.from_uri(text)
        return fileio_for(filesystem), text
    return LocalFileIO(), os.path.abspath(text)


class ArrowFileIO(FileIO):
    """Reads through a `pyarrow.fs` filesystem; writes are refused (no atomic create-if-absent
    that pyarrow promises)."""

    def __init__(self, filesystem: pafs.FileSystem) -> None:
        self.filesystem = filesystem

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.filesystem).__name__})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ArrowFileIO) and type(other) is type(self)
                and bool(self.filesystem.equals(other.filesystem)))

    def __hash__(self) -> int:
        return hash((type(self), self.filesystem.type_name))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.filesystem,)

    @property
    def name(self) -> str:
        return str(self.filesystem.type_name)

    def resolve(self, path: str) -> tuple[FileIO, str]:
        filesystem, inner = filesystem_for(self.filesystem, path)
        return (self if filesystem is self.filesystem else fileio_for(filesystem)), inner

    def read_bytes(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        try:
            with self.open_input(path) as f:
                if length is None:
                    f.seek(offset)
                    return f.read()
                return f.read_at(length, offset)
        except FileNotFoundError:
            raise TableError(f"{path} does not exist") from None

    def _info(self, path: str) -> pafs.FileInfo:
        filesystem, inner = filesystem_for(self.filesystem, path)
        return filesystem.get_file_info(inner)

    def size(self, path: str) -> int:
        info = self._info(path)
        if info.type != pafs.FileType.File:
            raise TableError(f"{path} does not exist")
        return int(info.size)

    def exists(self, path: str) -> bool:
        return self._info(path).type == pafs.FileType.File

    def is_dir(self, path: str) -> bool:
        return self._info(path).type == pafs.FileType.Directory

    def list(self, directory: str) -> list[str]:
        filesystem, inner = filesystem_for(self.filesystem, directory)
        selector = pafs.FileSelector(inner, allow_not_found=True)
        return [posixpath.basename(info.path) for info in filesystem.get_file_info(selector)]

    def open_input(self, path: str) -> pa.NativeFile:
        filesystem, inner = filesystem_for(self.filesystem, path)
        return filesystem.open_input_file(inner)

    def uri(self, path: str) -> str:
        filesystem, inner = filesystem_for(self.filesystem, path)
        if isinstance(filesystem, pafs.LocalFileSystem):
            return "file://" + inner
        return f"{filesystem.type_name}://{inner}"

    def check_writable(self, path: str) -> None:
        raise TableError(f"{path} is on {type(self.filesystem).__name__}: writing needs an atomic "
                         f"create-if-absent, which paimon-schema only knows for local "
                         f"filesystems")

    def write_new(self, path: str, data: bytes) -> None:
        self.check_writable(path)

    def create_exclusive(self, path: str, data: bytes) -> None:
        self.check_writable(path)

    def overwrite(self, path: str, data: bytes) -> None:
        self.check_writable(path)

    def delete(self, path: str) -> None:
        self.check_writable(path)

    def mkdirs(self, path: str) -> None:
        self.check_writable(path)


class LocalFileIO(ArrowFileIO):
    """The local disk: reads as `ArrowFileIO`, writes with `O_EXCL` (never over an existing
    file), `fsync` of files and of the directories holding new names, and `create_exclusive` as
    a hard link of a complete temporary file (fails when the name exists: one winner)."""

    def __init__(self, filesystem: pafs.LocalFileSystem | None = None) -> None:
        super().__init__(filesystem or pafs.LocalFileSystem())
        self._unsynced: set[str] = set()       # directories holding names not yet fsynced
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.filesystem,)

    @property
    def name(self) -> str:
        return "local"

    def resolve(self, path: str) -> tuple[FileIO, str]:
        filesystem, inner = filesystem_for(self.filesystem, path)
        return (self if isinstance(filesystem, pafs.LocalFileSystem) else fileio_for(filesystem)), inner

    def _local(self, path: str) -> str:
        """The local path of `path`, or the refusal of the filesystem a URI names."""
        io, inner = self.resolve(path)
        if io is not self:
            io.check_writable(path)
        return inner

    def check_writable(self, path: str) -> None:
        self._local(path)

    def write_new(self, path: str, data: bytes) -> None:
        local = self._local(path)
        fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            _remove(local)
            raise
        os.close(fd)
        with self._lock:
            self._unsynced.add(os.path.dirname(local))

    def create_exclusive(self, path: str, data: bytes) -> None:
        local = self._local(path)
        directory, name = os.path.split(local)
        temp = os.path.join(directory, f".{name}.{uuid.uuid4()}.tmp")
        self.write_new(temp, data)
        try:
            with self._lock:
                unsynced, self._unsynced = self._unsynced, set()
            _sync_directories(unsynced)        # every name the new file reaches is durable
            try:
                os.link(temp, local)
            except FileExistsError:
                raise CommitConflict(f"{path} already exists") from None
        finally:
            _remove(temp)
        _sync_directories([directory])

    def overwrite(self, path: str, data: bytes) -> None:
        local = self._local(path)
        directory, name = os.path.split(local)
        temp = os.path.join(directory, f".{name}.{uuid.uuid4()}.tmp")
        try:
            self.write_new(temp, data)
            os.replace(temp, local)
        except OSError:
            _remove(temp)
            raise

    def delete(self, path: str) -> None:
        try:
            os.unlink(self._local(path))
        except FileNotFoundError:
            pass

    def mkdirs(self, path: str) -> None:
        os.makedirs(self._local(path), exist_ok=True)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _sync_directories(directories: Iterable[str]) -> None:
    """fsync directories, so the new names in them survive a crash."""
    for directory in sorted(directories):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
