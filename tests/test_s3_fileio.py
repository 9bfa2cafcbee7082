"""`S3FileIO` against a real S3 API server on loopback (moto, `s3_server`): conditional creates
(exactly one winner of a race, `412` is `CommitConflict`), plain puts and deletes, endpoint and
credentials from a URI, a pyarrow filesystem or the environment, and stores that ignore
`If-None-Match` (or cannot be written) refused by name before anything is written."""

from __future__ import annotations

import pickle
import threading
import uuid
from typing import Any

import pyarrow.fs as pafs
import pytest

from paimon_schema.table import S3FileIO, TableError
from paimon_schema.table import s3 as table_s3
from paimon_schema.table.errors import CommitConflict
from paimon_schema.table.fileio import fileio_for, open_fileio

from oracles import import_oracle
from s3server import ACCESS_KEY, REGION, SECRET_KEY


def _bucket(s3_server: Any) -> str:
    return s3_server.create_bucket(f"fileio-{uuid.uuid4().hex[:12]}")


def _filesystem(s3_server: Any) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(endpoint_override=s3_server.endpoint, access_key=ACCESS_KEY,
                             secret_key=SECRET_KEY, region=REGION)


def _keys(s3_server: Any, bucket: str) -> list[str]:
    listing = s3_server.client().list_objects_v2(Bucket=bucket)
    return sorted(o["Key"] for o in listing.get("Contents", []))


def _writes(io: Any, bucket: str) -> None:
    """Every write of a commit, checked on the server."""
    io.check_writable(f"{bucket}/t")
    io.mkdirs(f"{bucket}/t/manifest")
    io.write_new(f"{bucket}/t/manifest/m-1", b"manifest")
    with pytest.raises(FileExistsError):
        io.write_new(f"{bucket}/t/manifest/m-1", b"other")
    io.create_exclusive(f"{bucket}/t/snapshot/snapshot-1", b"one")
    with pytest.raises(CommitConflict, match="snapshot-1 already exists"):
        io.create_exclusive(f"{bucket}/t/snapshot/snapshot-1", b"two")
    io.overwrite(f"{bucket}/t/snapshot/LATEST", b"1")
    io.overwrite(f"{bucket}/t/snapshot/LATEST", b"2")
    io.delete(f"{bucket}/t/manifest/m-1")
    io.delete(f"{bucket}/t/manifest/m-1")          # a missing key is not an error
    assert io.read_bytes(f"{bucket}/t/snapshot/snapshot-1") == b"one"
    assert io.read_bytes(f"{bucket}/t/snapshot/LATEST") == b"2"


def test_writes_with_a_pyarrow_filesystem(s3_server: Any) -> None:
    bucket = _bucket(s3_server)
    io = fileio_for(_filesystem(s3_server))
    assert isinstance(io, S3FileIO) and io.name == "s3"
    _writes(io, bucket)
    assert _keys(s3_server, bucket) == ["t/snapshot/LATEST", "t/snapshot/snapshot-1"]


def test_writes_with_credentials_in_the_uri(s3_server: Any) -> None:
    bucket = _bucket(s3_server)
    host = s3_server.endpoint.split("://", 1)[1]
    io, path = open_fileio(f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}/t?endpoint_override={host}"
                           f"&scheme=http&region={REGION}")
    assert isinstance(io, S3FileIO) and path == f"{bucket}/t"
    assert io.writer.options == {"endpoint_url": s3_server.endpoint, "region_name": REGION,
                                 "aws_access_key_id": ACCESS_KEY, "aws_secret_access_key": SECRET_KEY}
    _writes(io, bucket)


@pytest.mark.parametrize("endpoint_variable", ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"])
def test_writes_with_credentials_from_the_environment(s3_server: Any, monkeypatch: Any,
                                                       endpoint_variable: str) -> None:
    bucket = _bucket(s3_server)
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv(endpoint_variable, s3_server.endpoint)
    io, path = open_fileio(f"s3://{bucket}/t")
    assert isinstance(io, S3FileIO) and path == f"{bucket}/t"
    _writes(io, bucket)


def test_a_boto3_client_of_ones_own(s3_server: Any) -> None:
    bucket = _bucket(s3_server)
    client = s3_server.client()
    io, path = open_fileio(f"{bucket}/t", S3FileIO(_filesystem(s3_server), client=client))
    assert path == f"{bucket}/t" and io.writer.client() is client
    gets: list[str] = []
    client.meta.events.register("before-call.s3.GetObject", lambda params, **_: gets.append(params["url_path"]))
    _writes(io, bucket)
    assert len(gets) == 2                      # its reads went through the same client
    again = pickle.loads(pickle.dumps(io.writer))       # a pickle carries the options, not the client
    assert again.options == io.writer.options and again.client() is not client


def test_racing_conditional_creates_have_exactly_one_winner(s3_server: Any) -> None:
    bucket = _bucket(s3_server)
    io = fileio_for(_filesystem(s3_server))
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def create(i: int) -> None:
        barrier.wait()
        try:
            io.create_exclusive(f"{bucket}/t/snapshot/snapshot-7", str(i).encode())
            outcomes.append(f"won {i}")
        except CommitConflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=create, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if o.startswith("won")]
    assert len(winners) == 1 and outcomes.count("conflict") == 5
    assert io.read_bytes(f"{bucket}/t/snapshot/snapshot-7") == winners[0].split()[1].encode()


def test_a_store_ignoring_if_none_match_is_refused_before_any_write(s3_server: Any) -> None:
    """A store that drops the header would overwrite a snapshot: the probe finds out and
    refuses by name; the probe object is removed and nothing else is written."""
    bucket = _bucket(s3_server)
    client = s3_server.client()

    def drop_condition(params: dict, **_: Any) -> None:
        params["headers"].pop("If-None-Match", None)

    client.meta.events.register("before-call.s3.PutObject", drop_condition)
    io = S3FileIO(_filesystem(s3_server), client=client)
    with pytest.raises(TableError, match=f"s3://{bucket} at .* ignores If-None-Match"):
        io.check_writable(f"{bucket}/t")
    assert _keys(s3_server, bucket) == []


def test_a_missing_bucket_is_a_table_error(s3_server: Any) -> None:
    io = fileio_for(_filesystem(s3_server))
    with pytest.raises(TableError, match="no-such-bucket-here/t/.* the conditional put failed "
                                         "\\(404 NoSuchBucket"):
        io.check_writable("no-such-bucket-here/t")


@pytest.mark.parametrize(("make", "kind"), [
    (lambda: pafs.GcsFileSystem(anonymous=True), "GcsFileSystem"),
    (lambda: pafs.AzureFileSystem(account_name="x", account_key="eA=="), "AzureFileSystem")])
def test_gcs_and_azure_are_refused_by_name_before_any_request(make: Any, kind: str) -> None:
    io = fileio_for(make())
    for write in (lambda: io.check_writable("bucket/t"), lambda: io.create_exclusive("bucket/t/x", b"")):
        with pytest.raises(TableError, match=f"bucket/t.* is on {kind}: writing needs an atomic "
                                             "create-if-absent"):
            write()


def test_fsspec_filesystems_are_refused_by_name() -> None:
    fsspec = import_oracle("fsspec")
    io = fileio_for(fsspec.filesystem("memory"))
    with pytest.raises(TableError, match="fsspec filesystem MemoryFileSystem: writing needs an "
                                         "atomic create-if-absent, which paimon-schema knows only "
                                         "for local filesystems and S3"):
        io.check_writable("/t")


def test_the_probe_runs_once_per_bucket(s3_server: Any) -> None:
    bucket = _bucket(s3_server)
    io = fileio_for(_filesystem(s3_server))
    s3_server.log.clear()
    io.check_writable(f"{bucket}/t")
    io.check_writable(f"{bucket}/u")
    fileio_for(_filesystem(s3_server)).check_writable(f"s3://{bucket}/v")
    assert [(r.method, r.status) for r in s3_server.log.snapshot()] == [
        ("PUT", 200), ("PUT", 412), ("DELETE", 204)]
    assert (s3_server.endpoint, bucket) in table_s3._VERIFIED
