"""Reads and writes of S3 and S3-compatible stores (`S3FileIO` in `fileio`), through one boto3
client per store: one request per read or write.

Reads: pyarrow's S3 filesystem sends a HEAD before every file it opens (its Python
`open_input_*` take no size) and a HEAD plus a LIST for every name that is missing or a
directory; on an object store each request is a round trip of 10-100 ms. The manifests give
each data file's size, so a read here is one GET (with a Range) and nothing else; the ranged
GET's `Content-Range` gives the object's size, so a size the manifest got wrong fails the very
request that reads with it (`TableError`), never yields wrong rows.

Writes: a commit needs a create-if-absent, which S3 has (`PutObject` with `If-None-Match: *`,
answered `412 Precondition Failed` when the key exists, as Paimon's own S3 commit does) and
pyarrow cannot send. Every new name is put conditionally (a taken name is `FileExistsError`,
never overwritten); only the `LATEST` hint is put plainly. A store that ignores `If-None-Match`
would silently overwrite a snapshot: before the first write to a bucket, a probe puts one object
twice and the store must refuse the second (`verify`), else writes are refused by name.

The client has the endpoint, region and credentials of the table's `pyarrow.fs.S3FileSystem`
(`s3_options`), or the environment's where it has none (`AWS_ACCESS_KEY_ID`,
`AWS_ENDPOINT_URL_S3`, ...), as pyarrow would; or it is a boto3 client of the user's own.
"""

from __future__ import annotations

import io
import re
import threading
import time
import uuid
from typing import Any

import pyarrow.fs as pafs

from paimon_schema.table.errors import TableError

__all__ = ["RangedObject", "S3Store", "filesystem_settings", "s3_options"]

#: 409 ConditionalRequestConflict: a concurrent conditional put of the same key is in flight
CONFLICT_RETRIES = 5
#: Connections per client: the readers of a scan share one client across threads.
POOL_CONNECTIONS = 32

_TOTAL = re.compile(r"/(\d+)$")
_MISSING = ("NoSuchKey", "404", "NotFound")

_VERIFIED: set[tuple[str, str]] = set()      # (endpoint, bucket) that honour If-None-Match
_VERIFIED_LOCK = threading.Lock()


def filesystem_settings(filesystem: pafs.S3FileSystem) -> dict[str, Any]:
    """The options an `S3FileSystem` was made with (what pyarrow pickles it by)."""
    reduced = filesystem.__reduce__()[1]
    if not reduced or not isinstance(reduced[0], dict):
        raise TableError("this pyarrow's S3FileSystem does not tell its endpoint and credentials: "
                         "pass filesystem=S3FileIO(fs, client=boto3_client)")
    return dict(reduced[0])


def s3_options(filesystem: pafs.S3FileSystem) -> dict[str, Any]:
    """The endpoint, region and credentials of an `S3FileSystem` as boto3 client arguments;
    absent ones come from boto3's environment."""
    options = filesystem_settings(filesystem)
    endpoint = options.get("endpoint_override") or None
    if endpoint and "://" not in endpoint:
        endpoint = f"{options.get('scheme') or 'https'}://{endpoint}"
    client = {"endpoint_url": endpoint, "region_name": options.get("region") or filesystem.region or None,
              "aws_access_key_id": options.get("access_key") or None,
              "aws_secret_access_key": options.get("secret_key") or None,
              "aws_session_token": options.get("session_token") or None}
    return {k: v for k, v in client.items() if v is not None}


def _split(path: str) -> tuple[str, str]:
    """(bucket, key) of a path `bucket/key` on the filesystem."""
    bucket, _, key = path.lstrip("/").partition("/")
    return bucket, key


def _error(exc: Exception) -> tuple[int, str, str]:
    """HTTP status, error code and message of a botocore error (0, "", "" when it has none)."""
    response = getattr(exc, "response", None) or {}
    error = response.get("Error", {})
    return (int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0),
            str(error.get("Code", "")), str(error.get("Message", "")))


def _failure(path: str, exc: Exception, doing: str = "", kind: type[Exception] = TableError) -> Exception:
    """The error of a failed request: a read's (`doing` empty) is a TableError saying the object
    does not exist or the store's code; a write's is `kind`, naming what failed."""
    status, code, message = _error(exc)
    if not doing:
        if code in _MISSING:
            return TableError(f"s3://{path} does not exist")
        return TableError(f"s3://{path}: {code} {message}".rstrip() if code else f"s3://{path}: {exc}")
    detail = f"{status} {code}: {exc}" if status else str(exc)
    return kind(f"s3://{path}: {doing} failed ({detail})")


class S3Store:
    """The requests to one S3 endpoint, each one request; paths are `bucket/key`. The boto3
    client is `client` or made on first use (threads share it; pickles carry only the options)."""

    def __init__(self, options: dict[str, Any], client: Any = None, anonymous: bool = False) -> None:
        self.options, self.anonymous = options, anonymous
        self._client = client
        self._lock = threading.Lock()

    @classmethod
    def of(cls, filesystem: pafs.S3FileSystem, client: Any = None) -> S3Store:
        """The store of an `S3FileSystem` (unsigned requests when it is anonymous)."""
        return cls(s3_options(filesystem), client, bool(filesystem_settings(filesystem).get("anonymous")))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.options, None, self.anonymous)

    @staticmethod
    def serves(filesystem: pafs.FileSystem) -> bool:
        """Whether `filesystem` is S3 with settings boto3 takes as they are (not an assumed
        role or a proxy: reads there stay with pyarrow's own)."""
        if not isinstance(filesystem, pafs.S3FileSystem):
            return False
        options = filesystem_settings(filesystem)
        return not options.get("role_arn") and not (options.get("proxy_options") or {}).get("host")

    @property
    def endpoint(self) -> str:
        return str(self.options.get("endpoint_url", "AWS S3"))

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import boto3
                    from botocore import UNSIGNED
                    from botocore.config import Config
                except ImportError:
                    raise TableError("S3 needs boto3: pip install 'paimon-schema[s3]'") from None
                config = Config(max_pool_connections=POOL_CONNECTIONS, signature_version=UNSIGNED) \
                    if self.anonymous else Config(max_pool_connections=POOL_CONNECTIONS)
                self._client = boto3.session.Session().client("s3", config=config, **self.options)
            return self._client

    # reads

    def get(self, path: str, offset: int = 0, length: int | None = None, *,
            size: int | None = None) -> bytes:
        """`length` bytes at `offset` (to the end when None) in one GET; with `size` (what the
        manifest says), TableError unless the object has exactly that size."""
        from botocore.exceptions import BotoCoreError, ClientError

        if length == 0:
            return b""
        bucket, key = _split(path)
        extra = {}
        if offset or length is not None:
            end = "" if length is None else str(offset + length - 1)
            extra["Range"] = f"bytes={offset}-{end}"
        try:
            response = self.client().get_object(Bucket=bucket, Key=key, **extra)
            data = response["Body"].read()
        except (BotoCoreError, ClientError) as exc:
            if size is not None and _error(exc)[1] == "InvalidRange":
                raise _wrong_size(path, size, None) from None
            raise _failure(path, exc) from None
        total = _TOTAL.search(response.get("ContentRange") or "")
        actual = int(total.group(1)) if total else int(response.get("ContentLength", len(data)))
        if size is not None and actual != size:
            raise _wrong_size(path, size, actual)
        return data

    def size(self, path: str) -> int | None:
        """The object's size, None when there is no such object (one HEAD)."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _split(path)
        try:
            return int(self.client().head_object(Bucket=bucket, Key=key)["ContentLength"])
        except (BotoCoreError, ClientError) as exc:
            if _error(exc)[1] in _MISSING:
                return None
            raise _failure(path, exc) from None

    def _list(self, path: str, **options: Any) -> dict:
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _split(path)
        prefix = key.rstrip("/") + "/" if key.strip("/") else ""
        try:
            return dict(self.client().list_objects_v2(Bucket=bucket, Prefix=prefix, **options))
        except (BotoCoreError, ClientError) as exc:
            raise _failure(path, exc) from None

    def is_dir(self, path: str) -> bool:
        """Whether objects exist under `path/` (one LIST of one key)."""
        return bool(self._list(path, MaxKeys=1).get("KeyCount"))

    def list(self, path: str) -> list[str]:
        """The names of the objects and prefixes right under `path/` (a LIST per 1000)."""
        names: list[str] = []
        token: dict[str, str] = {}
        while True:
            page = self._list(path, Delimiter="/", **token)
            names += [c["Key"].rstrip("/").rsplit("/", 1)[-1] for c in page.get("Contents", ())]
            names += [p["Prefix"].rstrip("/").rsplit("/", 1)[-1] for p in page.get("CommonPrefixes", ())]
            if not page.get("IsTruncated"):
                return [n for n in names if n]
            token = {"ContinuationToken": page["NextContinuationToken"]}

    # writes

    def put_new(self, path: str, data: bytes) -> None:
        """Create `bucket/key` if absent (`If-None-Match: *`); FileExistsError when it exists."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _object(path)
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                self.client().put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
                return
            except (BotoCoreError, ClientError) as exc:
                status = _error(exc)[0]
                if status == 412:
                    raise FileExistsError(f"s3://{path} already exists") from None
                if status == 409 and attempt < CONFLICT_RETRIES:    # in flight: ask again
                    time.sleep(0.05 * 2 ** attempt)
                    continue
                raise _failure(path, exc, "the conditional put") from exc

    def put(self, path: str, data: bytes) -> None:
        """Put `bucket/key`, replacing it; OSError on failure."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _object(path)
        try:
            self.client().put_object(Bucket=bucket, Key=key, Body=data)
        except (BotoCoreError, ClientError) as exc:
            raise _failure(path, exc, "the put", OSError) from exc

    def delete(self, path: str) -> None:
        """Delete `bucket/key` (a missing key is not an error on S3); OSError on failure."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _object(path)
        try:
            self.client().delete_object(Bucket=bucket, Key=key)
        except (BotoCoreError, ClientError) as exc:
            raise _failure(path, exc, "the delete", OSError) from exc

    def verify(self, directory: str) -> None:
        """TableError unless the store refuses a second conditional put of one key (checked once
        per endpoint and bucket in this process, with a probe object under `directory`)."""
        bucket = directory.lstrip("/").split("/", 1)[0]
        with _VERIFIED_LOCK:
            if (self.endpoint, bucket) in _VERIFIED:
                return
        probe = f"{directory.rstrip('/')}/.paimon-schema-probe-{uuid.uuid4()}"
        try:
            self.put_new(probe, b"")
            try:
                self.put_new(probe, b"")
            except FileExistsError:
                with _VERIFIED_LOCK:
                    _VERIFIED.add((self.endpoint, bucket))
                return
            raise TableError(f"s3://{bucket} at {self.endpoint} ignores If-None-Match (a conditional "
                             f"create): a commit there could overwrite another writer's snapshot, so "
                             f"paimon-schema does not write to it")
        finally:
            try:
                self.delete(probe)
            except OSError:
                pass


def _object(path: str) -> tuple[str, str]:
    """(bucket, key) of a path a write names: both must be there."""
    bucket, key = _split(path)
    if not bucket or not key:
        raise TableError(f"{path} is not an object path (bucket/key)")
    return bucket, key


def _wrong_size(path: str, size: int, actual: int | None) -> TableError:
    has = "fewer bytes" if actual is None else f"{actual} bytes"
    return TableError(f"s3://{path}: the manifest says the file has {size} bytes, it has "
                      f"{has} (a stale or corrupt manifest entry)")


class RangedObject(io.RawIOBase):
    """A read-only file over ranged GETs of an object whose size is known (no HEAD): what
    `pyarrow.PythonFile` wraps for pyarrow's readers, which coalesce their reads
    (`pre_buffer`)."""

    def __init__(self, store: S3Store, path: str, size: int) -> None:
        super().__init__()
        self.store, self.path, self.length = store, path, size
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.length}[whence]
        self.position = base + offset
        return self.position

    def size(self) -> int:
        return self.length

    def read(self, size: int = -1) -> bytes:
        end = self.length if size is None or size < 0 else min(self.length, self.position + size)
        if end <= self.position:
            return b""
        data = self.store.get(self.path, self.position, end - self.position, size=self.length)
        self.position += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)
