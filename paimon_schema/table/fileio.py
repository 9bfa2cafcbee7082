"""The one seam between the table floor and the bytes of a table: every reader and writer of
table files goes through a `FileIO`, so a new kind of store is one new class here.

Paths are table paths (absolute on the table's filesystem) or URIs (`file:/...`, `s3://...`:
Paimon's `_EXTERNAL_PATH`), which `resolve` sends to the filesystem they name (an `s3://`,
`s3a://` URI on a table on S3 keeps the table's endpoint and credentials). Reads go through a
`pyarrow.fs` filesystem (an fsspec filesystem is wrapped); on S3 through boto3 (`s3.py`), one
request per read (no HEAD where the manifest gives the size). Writes are what a commit needs:
fresh names (`write_new`), one name created atomically if absent (`create_exclusive`, the
`snapshot-N` of a commit: of two racing writers exactly one wins, the other gets
`CommitConflict`), a hint replaced in one step (`overwrite`), and removal of a loser's files.
`LocalFileIO` writes with `O_EXCL`, `fsync` and a hard link; `S3FileIO` reads and writes with
one boto3 client (`s3.py`: ranged GETs, conditional puts); `ArrowFileIO` reads any other
filesystem (GCS, Azure, HDFS, fsspec ones) and refuses writes by name, before anything is
written: pyarrow promises no atomic create-if-absent there.
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
from urllib.parse import quote, urlencode

import pyarrow as pa
import pyarrow.fs as pafs

from paimon_schema.table.errors import CommitConflict, TableError
from paimon_schema.table.s3 import RangedObject, S3Store, filesystem_settings, s3_options

if TYPE_CHECKING:
    import fsspec

__all__ = ["ArrowFileIO", "FileIO", "FileSystemLike", "LocalFileIO", "S3FileIO", "filesystem_for",
           "fileio_for", "open_fileio"]

#: A filesystem a table may be on: a `pyarrow.fs` one, or an fsspec one (wrapped for pyarrow).
FileSystemLike = Union[pafs.FileSystem, "fsspec.AbstractFileSystem"]

#: A data file of at most this size is read in one request when its size is known: a round
#: trip costs what 1-10 MB of transfer does (Paimon's `source.split.open-file-cost` is 4 MB).
WHOLE_FILE_BYTES = 8 << 20
#: URI schemes that name S3 (Hadoop's `s3a`/`s3n`, as Java writes `_EXTERNAL_PATH` there).
S3_SCHEMES = ("s3", "s3a", "s3n")


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
    def open_input(self, path: str, size: int | None = None) -> pa.NativeFile:
        """A random-access input file for pyarrow's readers (Parquet, ORC); close it. `size`
        (the manifest's) saves a request on an object store; a file of another size is a
        TableError."""

    @property
    def remote(self) -> bool:
        """Whether each read is a round trip (an object store): readers then coalesce."""
        return False

    @abstractmethod
    def uri(self, path: str) -> str:
        """The path as a URI another reader (Spark, Java) opens."""

    def location(self, path: str) -> str:
        """The URI that opens `path` on this store in another process (`Table.open`, the
        Spark sources): `uri`, plus what the store needs to be reached (endpoint, explicit
        credentials) where the URI form can carry it."""
        return self.uri(path)

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
    scheme, _, rest = path.partition("://")
    if scheme.lower() in S3_SCHEMES and isinstance(default, pafs.S3FileSystem):
        return default, rest.split("?", 1)[0]
    return _from_uri(path)


def _from_uri(uri: str) -> tuple[pafs.FileSystem, str]:
    """`pyarrow.fs.FileSystem.from_uri`, its errors a TableError naming the URI."""
    try:
        return pafs.FileSystem.from_uri(uri)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TableError(f"cannot open {_redacted(uri)}: {exc}") from None


def _redacted(uri: str) -> str:
    """A URI without the secret of its user info (for messages)."""
    return re.sub(r"^([a-zA-Z0-9+.-]+://[^:/@]*):[^@/]*@", r"\1:***@", uri)


def fileio_for(filesystem: FileSystemLike | FileIO) -> FileIO:
    """The FileIO of a pyarrow filesystem, or of an fsspec one (wrapped); a FileIO is itself."""
    if isinstance(filesystem, FileIO):
        return filesystem
    if isinstance(filesystem, pafs.S3FileSystem):
        return S3FileIO(filesystem)
    if not isinstance(filesystem, pafs.FileSystem):
        filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    if isinstance(filesystem, pafs.LocalFileSystem):
        return LocalFileIO(filesystem)
    return ArrowFileIO(filesystem)


def open_fileio(path: str | os.PathLike[str],
                filesystem: FileSystemLike | FileIO | None = None) -> tuple[FileIO, str]:
    """The FileIO and inner path of what `Table.open` takes: a local path (made absolute), a
    URI (`s3://...`, `file:///...`), or a path on `filesystem` (pyarrow or fsspec, or a
    FileIO such as `S3FileIO(filesystem, client=boto3_client)`)."""
    text = str(path)
    if filesystem is not None:
        return fileio_for(filesystem), text
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme.lower() in ("s3a", "s3n"):         # Hadoop's names of S3 (Spark's paths)
            text = "s3://" + rest
        filesystem, text = _from_uri(text)
        return fileio_for(filesystem), text
    return LocalFileIO(), os.path.abspath(text)


class ArrowFileIO(FileIO):
    """Reads through a `pyarrow.fs` filesystem; writes are refused (no atomic create-if-absent
    that pyarrow promises)."""

    def __init__(self, filesystem: pafs.FileSystem) -> None:
        self.filesystem = filesystem
        self.s3 = S3Store.of(filesystem) if S3Store.serves(filesystem) else None

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

    @property
    def remote(self) -> bool:
        return not isinstance(self.filesystem, pafs.LocalFileSystem)

    def _s3_path(self, path: str) -> str | None:
        """The `bucket/key` of a path this FileIO reads with its `S3Store`, else None."""
        if self.s3 is None:
            return None
        filesystem, inner = filesystem_for(self.filesystem, path)
        return inner if filesystem is self.filesystem else None

    def read_bytes(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        key = self._s3_path(path)
        if key is not None and self.s3 is not None:
            return self.s3.get(key, offset, length)
        try:
            with self._open(path) as f:
                if length is None:
                    f.seek(offset)
                    return f.read()
                return f.read_at(length, offset)
        except FileNotFoundError:
            raise TableError(f"{path} does not exist") from None
        except (pa.ArrowException, OSError) as exc:
            raise TableError(f"cannot read {path}: {exc}") from None

    def _info(self, path: str) -> pafs.FileInfo:
        filesystem, inner = filesystem_for(self.filesystem, path)
        try:
            return filesystem.get_file_info(inner)
        except (pa.ArrowException, OSError) as exc:
            raise TableError(f"cannot reach {path}: {exc}") from None

    def size(self, path: str) -> int:
        key = self._s3_path(path)
        if key is not None and self.s3 is not None:
            size = self.s3.size(key)
        else:
            info = self._info(path)
            size = int(info.size) if info.type == pafs.FileType.File else None
        if size is None:
            raise TableError(f"{path} does not exist")
        return size

    def exists(self, path: str) -> bool:
        key = self._s3_path(path)
        if key is not None and self.s3 is not None:
            return self.s3.size(key) is not None
        return self._info(path).type == pafs.FileType.File

    def is_dir(self, path: str) -> bool:
        key = self._s3_path(path)
        if key is not None and self.s3 is not None:
            return self.s3.is_dir(key)
        return self._info(path).type == pafs.FileType.Directory

    def list(self, directory: str) -> list[str]:
        key = self._s3_path(directory)
        if key is not None and self.s3 is not None:
            return self.s3.list(key)
        filesystem, inner = filesystem_for(self.filesystem, directory)
        selector = pafs.FileSelector(inner, allow_not_found=True)
        try:
            return [posixpath.basename(info.path) for info in filesystem.get_file_info(selector)]
        except (pa.ArrowException, OSError) as exc:
            raise TableError(f"cannot list {directory}: {exc}") from None

    def _open(self, path: str) -> pa.NativeFile:
        filesystem, inner = filesystem_for(self.filesystem, path)
        return filesystem.open_input_file(inner)

    def open_input(self, path: str, size: int | None = None) -> pa.NativeFile:
        key = self._s3_path(path)
        if key is not None and self.s3 is not None:
            if size is None:
                size = self.size(path)
            if size <= WHOLE_FILE_BYTES:                 # one GET, whatever the reader reads
                return pa.BufferReader(self.s3.get(key, 0, None, size=size))
            return pa.PythonFile(RangedObject(self.s3, key, size), mode="r")
        try:
            source = self._open(path)
        except FileNotFoundError:
            raise TableError(f"{path} does not exist") from None
        except (pa.ArrowException, OSError) as exc:
            raise TableError(f"cannot read {path}: {exc}") from None
        actual = source.size() if size is not None else None
        if actual != size:
            source.close()
            raise TableError(f"{path}: the manifest says the file has {size} bytes, it has "
                             f"{actual} (a stale or corrupt manifest entry)")
        return source

    def uri(self, path: str) -> str:
        filesystem, inner = filesystem_for(self.filesystem, path)
        if isinstance(filesystem, pafs.LocalFileSystem):
            return "file://" + inner
        return f"{filesystem.type_name}://{inner}"

    def location(self, path: str) -> str:
        filesystem, inner = filesystem_for(self.filesystem, path)
        if not isinstance(filesystem, pafs.S3FileSystem):
            return self.uri(path)
        options = filesystem_settings(filesystem)
        user = ""
        if options.get("access_key") and options.get("secret_key"):
            user = f"{quote(options['access_key'], safe='')}:{quote(options['secret_key'], safe='')}@"
        endpoint = s3_options(filesystem).get("endpoint_url", "")
        query = urlencode({k: v for k, v in (("endpoint_override", endpoint),
                                             ("region", options.get("region") or "")) if v})
        return f"s3://{user}{inner}" + (f"?{query}" if query else "")

    def check_writable(self, path: str) -> None:
        raise TableError(f"{path} is on {self._kind()}: writing needs an atomic create-if-absent, "
                         f"which paimon-schema knows only for local filesystems and S3 "
                         f"(If-None-Match)")

    def _kind(self) -> str:
        if isinstance(self.filesystem, pafs.PyFileSystem):
            handler = self.filesystem.handler
            inner = getattr(handler, "fs", None)
            if inner is not None:
                return f"the fsspec filesystem {type(inner).__name__}"
        return type(self.filesystem).__name__

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


class S3FileIO(ArrowFileIO):
    """S3 and S3-compatible stores: reads and writes through one boto3 client with the endpoint
    and credentials of the `S3FileSystem` (`s3.S3Store`: ranged GETs, conditional puts, `412` is
    `CommitConflict`); an assumed role or a proxy reads through pyarrow. `client` is a boto3 S3
    client to use instead. `s3://` URIs (external paths) are written with this store's endpoint
    and credentials."""

    def __init__(self, filesystem: pafs.S3FileSystem, client: Any = None) -> None:
        self.filesystem = filesystem
        self.writer = S3Store.of(filesystem, client)
        self.s3 = self.writer if S3Store.serves(filesystem) else None   # one client for both

    @property
    def name(self) -> str:
        return "s3"

    def resolve(self, path: str) -> tuple[FileIO, str]:
        for scheme in ("s3://", "s3a://"):
            if path.startswith(scheme):
                return self, path[len(scheme):]
        return super().resolve(path)

    def _inner(self, path: str) -> str:
        """The bucket/key of `path`, or the refusal of the filesystem a URI names."""
        io, inner = self.resolve(path)
        if io is not self:
            io.check_writable(path)
        return inner

    def check_writable(self, path: str) -> None:
        self.writer.verify(self._inner(path))

    def write_new(self, path: str, data: bytes) -> None:
        self.writer.put_new(self._inner(path), data)

    def create_exclusive(self, path: str, data: bytes) -> None:
        try:
            self.writer.put_new(self._inner(path), data)
        except FileExistsError:
            raise CommitConflict(f"{path} already exists") from None

    def overwrite(self, path: str, data: bytes) -> None:
        self.writer.put(self._inner(path), data)

    def delete(self, path: str) -> None:
        self.writer.delete(self._inner(path))

    def mkdirs(self, path: str) -> None:
        self._inner(path)                      # no directories on an object store


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
