"""Writes to S3 and S3-compatible stores (`S3FileIO` in `fileio`), through boto3.

A commit needs a create-if-absent: S3 has one, `PutObject` with `If-None-Match: *`, answered
`412 Precondition Failed` when the key exists (Paimon's own S3 commit does the same). pyarrow's
`S3FileSystem` cannot send that header, so reads stay on pyarrow and the few writes of a commit
go through boto3 (the optional extra `s3`), with the endpoint, region and credentials of the
table's `S3FileSystem` (its own, or the AWS environment's when it has none). Every new name is
put conditionally (a taken name is `FileExistsError`, never overwritten: the same one request
as a plain put); only the `LATEST` hint is put plainly. A store that ignores `If-None-Match`
would silently overwrite a snapshot: before the first write to a bucket, a probe puts one
object twice and the store must refuse the second (`verify`), else writes are refused by name.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pyarrow.fs as pafs

from paimon_schema.table.errors import TableError

__all__ = ["S3Writer", "s3_options"]

#: 409 ConditionalRequestConflict: a concurrent conditional put of the same key is in flight
CONFLICT_RETRIES = 5

_VERIFIED: set[tuple[str, str]] = set()      # (endpoint, bucket) that honour If-None-Match
_VERIFIED_LOCK = threading.Lock()


def s3_options(filesystem: pafs.S3FileSystem) -> dict[str, Any]:
    """The endpoint, region and credentials a pyarrow `S3FileSystem` was made with (what it
    pickles), as boto3 client arguments; absent ones come from boto3's environment."""
    reduced = filesystem.__reduce__()[1]
    options = reduced[0] if reduced and isinstance(reduced[0], dict) else None
    if options is None:
        raise TableError("this pyarrow's S3FileSystem does not tell its endpoint and credentials: "
                         "pass filesystem=S3FileIO(fs, client=boto3_client) to write")
    endpoint = options.get("endpoint_override") or None
    if endpoint and "://" not in endpoint:
        endpoint = f"{options.get('scheme') or 'https'}://{endpoint}"
    region = options.get("region") or filesystem.region or None
    client = {"endpoint_url": endpoint, "region_name": region,
              "aws_access_key_id": options.get("access_key") or None,
              "aws_secret_access_key": options.get("secret_key") or None,
              "aws_session_token": options.get("session_token") or None}
    return {k: v for k, v in client.items() if v is not None}


def _split(path: str) -> tuple[str, str]:
    """(bucket, key) of a path `bucket/key` on the filesystem."""
    bucket, _, key = path.lstrip("/").partition("/")
    if not bucket or not key:
        raise TableError(f"{path} is not an object path (bucket/key)")
    return bucket, key


def _status(exc: Exception) -> tuple[int, str]:
    response = getattr(exc, "response", None) or {}
    error = response.get("Error", {})
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)), str(error.get("Code", ""))


class S3Writer:
    """The writes of a commit on one S3 endpoint: conditional puts, plain puts, deletes. The
    boto3 client is made on first use (threads share it; pickles carry only the options)."""

    def __init__(self, options: dict[str, Any], client: Any = None) -> None:
        self.options = options
        self._client = client
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.options,)

    @property
    def endpoint(self) -> str:
        return str(self.options.get("endpoint_url", "AWS S3"))

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import boto3
                except ImportError:
                    raise TableError("writing to S3 needs boto3: pip install 'paimon-schema[s3]'") from None
                self._client = boto3.session.Session().client("s3", **self.options)
            return self._client

    def put_new(self, path: str, data: bytes) -> None:
        """Create `bucket/key` if absent (`If-None-Match: *`); FileExistsError when it exists."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _split(path)
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                self.client().put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
                return
            except ClientError as exc:
                status, code = _status(exc)
                if status == 412:
                    raise FileExistsError(f"s3://{path} already exists") from None
                if status == 409 and attempt < CONFLICT_RETRIES:    # in flight: ask again
                    time.sleep(0.05 * 2 ** attempt)
                    continue
                raise TableError(f"s3://{path}: the conditional put failed ({status} {code}: {exc})") from exc
            except BotoCoreError as exc:
                raise TableError(f"s3://{path}: the conditional put failed ({exc})") from exc

    def put(self, path: str, data: bytes) -> None:
        """Put `bucket/key`, replacing it; OSError on failure."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _split(path)
        try:
            self.client().put_object(Bucket=bucket, Key=key, Body=data)
        except (ClientError, BotoCoreError) as exc:
            raise OSError(f"s3://{path}: the put failed ({exc})") from exc

    def delete(self, path: str) -> None:
        """Delete `bucket/key` (a missing key is not an error on S3); OSError on failure."""
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = _split(path)
        try:
            self.client().delete_object(Bucket=bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            raise OSError(f"s3://{path}: the delete failed ({exc})") from exc

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
