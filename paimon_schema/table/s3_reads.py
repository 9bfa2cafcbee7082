"""Reads from S3 and S3-compatible stores in as few round trips as a table's metadata allows.

pyarrow's S3 filesystem sends a HEAD before every file it opens (its Python `open_input_*`
take no size) and a HEAD plus a LIST for every name that is missing or a directory; on an
object store each request is a round trip of 10-100 ms. The manifests give each data file's
size, so the reads here send one GET (with a Range) per read and nothing else: a boto3 client
with the settings of the table's `pyarrow.fs.S3FileSystem` (endpoint, credentials, region), or
the environment's where it has none (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL_S3`, ...), as
pyarrow would. A ranged GET's `Content-Range` gives the object's size, so a size the manifest
got wrong fails the very request that reads with it (`TableError`), never yields wrong rows.
"""

from __future__ import annotations

import io
import re
import threading
from typing import Any

import pyarrow.fs as pafs

from paimon_schema.table.errors import TableError

__all__ = ["RangedObject", "S3Reads", "filesystem_settings"]

_TOTAL = re.compile(r"/(\d+)$")


def filesystem_settings(filesystem: pafs.S3FileSystem) -> dict[str, Any]:
    """The options an `S3FileSystem` was made with (what pyarrow pickles it by)."""
    return dict(filesystem.__reduce__()[1][0])


def _endpoint(options: dict[str, Any]) -> str | None:
    endpoint = options.get("endpoint_override") or ""
    if not endpoint:
        return None
    return endpoint if "://" in endpoint else f"{options.get('scheme') or 'https'}://{endpoint}"


class S3Reads:
    """GETs, HEADs and LISTs of one S3 endpoint, each one request; paths are `bucket/key`."""

    def __init__(self, filesystem: pafs.S3FileSystem) -> None:
        self.options = filesystem_settings(filesystem)
        self._client: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def serves(filesystem: pafs.FileSystem) -> bool:
        """Whether `filesystem` is S3 with settings boto3 takes as they are (not an assumed
        role or a proxy: those stay with pyarrow's own reads)."""
        if not isinstance(filesystem, pafs.S3FileSystem):
            return False
        options = filesystem_settings(filesystem)
        return not options.get("role_arn") and not (options.get("proxy_options") or {}).get("host")

    @property
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                import boto3
                from botocore import UNSIGNED
                from botocore.config import Config

                o = self.options
                config = Config(max_pool_connections=32, signature_version=UNSIGNED) \
                    if o.get("anonymous") else Config(max_pool_connections=32)
                self._client = boto3.session.Session().client(
                    "s3", endpoint_url=_endpoint(o), region_name=o.get("region") or None,
                    aws_access_key_id=o.get("access_key") or None,
                    aws_secret_access_key=o.get("secret_key") or None,
                    aws_session_token=o.get("session_token") or None, config=config)
            return self._client

    @staticmethod
    def _split(path: str) -> tuple[str, str]:
        bucket, _, key = path.lstrip("/").partition("/")
        return bucket, key

    def _fail(self, path: str, exc: Exception) -> TableError:
        from botocore.exceptions import ClientError

        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            if code in ("NoSuchKey", "404", "NotFound"):
                return TableError(f"s3://{path} does not exist")
            return TableError(f"s3://{path}: {code} {error.get('Message', '')}".rstrip())
        return TableError(f"s3://{path}: {exc}")

    def get(self, path: str, offset: int = 0, length: int | None = None, *,
            size: int | None = None) -> bytes:
        """`length` bytes at `offset` (to the end when None) in one GET; with `size` (what the
        manifest says), TableError unless the object has exactly that size."""
        from botocore.exceptions import BotoCoreError, ClientError

        if length == 0:
            return b""
        bucket, key = self._split(path)
        extra = {}
        if offset or length is not None:
            end = "" if length is None else str(offset + length - 1)
            extra["Range"] = f"bytes={offset}-{end}"
        try:
            response = self.client.get_object(Bucket=bucket, Key=key, **extra)
            data = response["Body"].read()
        except (BotoCoreError, ClientError) as exc:
            if size is not None and isinstance(exc, ClientError) \
                    and exc.response.get("Error", {}).get("Code") == "InvalidRange":
                raise self._wrong_size(path, size, None) from None
            raise self._fail(path, exc) from None
        total = _TOTAL.search(response.get("ContentRange") or "")
        actual = int(total.group(1)) if total else int(response.get("ContentLength", len(data)))
        if size is not None and actual != size:
            raise self._wrong_size(path, size, actual)
        return data

    @staticmethod
    def _wrong_size(path: str, size: int, actual: int | None) -> TableError:
        has = "fewer bytes" if actual is None else f"{actual} bytes"
        return TableError(f"s3://{path}: the manifest says the file has {size} bytes, it has "
                          f"{has} (a stale or corrupt manifest entry)")

    def size(self, path: str) -> int | None:
        """The object's size, None when there is no such object (one HEAD)."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = self._split(path)
        try:
            return int(self.client.head_object(Bucket=bucket, Key=key)["ContentLength"])
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise self._fail(path, exc) from None
        except BotoCoreError as exc:
            raise self._fail(path, exc) from None

    def _list(self, path: str, **options: Any) -> dict:
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = self._split(path)
        prefix = key.rstrip("/") + "/" if key.strip("/") else ""
        try:
            return dict(self.client.list_objects_v2(Bucket=bucket, Prefix=prefix, **options))
        except (BotoCoreError, ClientError) as exc:
            raise self._fail(path, exc) from None

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


class RangedObject(io.RawIOBase):
    """A read-only file over ranged GETs of an object whose size is known (no HEAD): what
    `pyarrow.PythonFile` wraps for pyarrow's readers, which coalesce their reads
    (`pre_buffer`)."""

    def __init__(self, reads: S3Reads, path: str, size: int) -> None:
        super().__init__()
        self.reads, self.path, self.length = reads, path, size
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
        data = self.reads.get(self.path, self.position, end - self.position, size=self.length)
        self.position += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)
