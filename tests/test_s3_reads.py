"""Tables read from S3 (moto's S3 API server on loopback, `s3_server`): `Table.open` by URI,
by path plus filesystem and by environment, errors as `TableError`, `Table.uri` round trips,
external paths on the table's endpoint, and the round trips of a full read counted on the wire:
the pipeline's 200k-row, 32-file table (Java-written) in at most 60 requests, with the rows of
the local read."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from s3server import ACCESS_KEY, REGION, SECRET_KEY

from paimon_schema.table import fileio
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import ArrowFileIO
from paimon_schema.table.scan import read_arrow
from paimon_schema.table.metadata import Table


@pytest.fixture(scope="module")
def pipeline_table(java_reference, tmp_path_factory) -> Path:
    """The README pipeline's table, written by Paimon's Java: 200k rows in 32 Parquet files of
    2 partitions x 2 buckets, every tenth row deleted (deletion vectors), file indexes."""
    from paimon_schema.selfcheck.pipeline import write_table

    path, _ = write_table(tmp_path_factory.mktemp("pipeline"), 200_000)
    return path


@pytest.fixture(scope="module")
def s3_table(s3_server, pipeline_table: Path) -> str:
    """The pipeline table uploaded to the loopback server: its `s3://` URI (no endpoint)."""
    s3_server.create_bucket("pipeline")
    return s3_server.upload_tree(pipeline_table, "pipeline", "demo.db/orders")


def _filesystem(s3_server) -> pafs.S3FileSystem:
    host, port = s3_server.get_host_and_port()
    return pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION,
                             endpoint_override=f"{host}:{port}", scheme="http")


def _uri(s3_server, bucket_path: str) -> str:
    """The URI form with endpoint and credentials that pyarrow's `from_uri` takes."""
    return (f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket_path}?endpoint_override="
            f"{s3_server.endpoint.replace('://', '%3A%2F%2F')}&region={REGION}")


def test_a_full_read_takes_at_most_60_requests(s3_server, s3_table: str, pipeline_table: Path) -> None:
    """No HEAD of a data file (the manifest gives its size), each data file one GET, each
    deletion-vector file one GET (not one per data file), few metadata requests."""
    local = read_arrow(pipeline_table).sort_by("id")
    table = Table.open(s3_table.removeprefix("s3://"), filesystem=_filesystem(s3_server))
    files = table.data_files()
    dv_files = {f.deletion_file.path for f in files if f.deletion_file}
    assert len(files) == 32 and len(dv_files) == 4

    s3_server.log.clear()
    remote = read_arrow(table.uri).sort_by("id")
    requests = s3_server.log.snapshot()
    assert remote.equals(local) and remote.num_rows == 180_000 - 2
    assert len(requests) <= 60, Counter((r.method, r.path.rsplit("/", 1)[-1][:14]) for r in requests)
    data = [r for r in requests if r.path.endswith(".parquet")]
    assert {r.method for r in data} == {"GET"} and len(data) == 32
    assert Counter(r.path for r in requests if "/index/" in r.path) == {
        "/" + path: 1 for path in dv_files}
    assert all(r.status < 400 or r.path.endswith(("snapshot-6", "snapshot-6/")) for r in requests)


def test_large_files_are_read_by_coalesced_ranges(s3_server, s3_table: str, pipeline_table: Path,
                                                  monkeypatch) -> None:
    """A file above `WHOLE_FILE_BYTES` (here: every file) is read by ranged GETs without a
    HEAD: its footer, then its column chunks coalesced into one range (`pre_buffer`)."""
    monkeypatch.setattr(fileio, "WHOLE_FILE_BYTES", 0)
    table = Table.open(s3_table.removeprefix("s3://"), filesystem=_filesystem(s3_server))
    table.data_files()
    s3_server.log.clear()
    assert read_arrow(table).sort_by("id").equals(read_arrow(pipeline_table).sort_by("id"))
    data = [r for r in s3_server.log.snapshot() if r.path.endswith(".parquet")]
    assert all(r.method == "GET" and r.range for r in data)
    assert set(Counter(r.path for r in data).values()) == {2}


@pytest.mark.parametrize("whole_file_bytes", [fileio.WHOLE_FILE_BYTES, 0])
def test_a_wrong_manifest_size_is_a_clear_error(s3_server, pipeline_table: Path, monkeypatch,
                                                whole_file_bytes: int) -> None:
    """The object's size comes with the GET that reads it: a manifest that says another size
    fails the read naming the file (never wrong rows), larger or smaller alike, read whole or
    by ranges."""
    monkeypatch.setattr(fileio, "WHOLE_FILE_BYTES", whole_file_bytes)
    bucket = s3_server.create_bucket(f"resized-{whole_file_bytes}")
    uri = s3_server.upload_tree(pipeline_table, bucket, "t")
    table = Table.open(uri.removeprefix("s3://"), filesystem=_filesystem(s3_server))
    client = s3_server.client()
    victim = table.data_files()[3]
    key = victim.path.split("/", 1)[1]
    original = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    for body in (original + b"\0" * 7, original[:-7]):
        client.put_object(Bucket=bucket, Key=key, Body=body)
        with pytest.raises(TableError, match=rf"{victim.file_name}: the manifest says the file "
                                             rf"has {len(original)} bytes, it has {len(body)}"):
            read_arrow(table)


def test_open_by_uri_filesystem_and_environment_and_uri_round_trips(
        s3_server, s3_table: str, monkeypatch) -> None:
    bucket_path = s3_table.removeprefix("s3://")
    by_uri = Table.open(_uri(s3_server, bucket_path))
    by_fs = Table.open(bucket_path, filesystem=_filesystem(s3_server))
    for table in (by_uri, by_fs):
        assert table.path == bucket_path
        assert table.uri.startswith(f"s3://{ACCESS_KEY}:") and "endpoint_override=" in table.uri
        assert len(Table.open(table.uri).data_files()) == 32
    assert repr(by_uri) == f"<Table {bucket_path} on S3FileSystem>"

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_server.endpoint)
    by_env = Table.open(s3_table)
    # (pyarrow takes the endpoint from the environment: it travels in the URI, not the keys)
    assert by_env.uri == s3_table + "?endpoint_override=" + s3_server.endpoint.replace(
        "://", "%3A%2F%2F").replace(":", "%3A")
    assert len(by_env.data_files()) == 32
    assert Table.open(s3_table.replace("s3://", "s3a://")).path == bucket_path


@pytest.mark.parametrize("uri, reason", [
    ("bogus://bucket/t", "Unrecognized filesystem type"),
    ("s3://bucket/t?colour=blue", "Unexpected query parameter"),
])
def test_a_bad_uri_is_a_table_error(uri: str, reason: str) -> None:
    with pytest.raises(TableError, match=rf"cannot open {uri.split('?')[0]}.*{reason}"):
        Table.open(uri)


def test_missing_buckets_tables_and_unreachable_endpoints_are_table_errors(s3_server, s3_table: str) -> None:
    fs = _filesystem(s3_server)
    with pytest.raises(TableError, match="s3://no-such-bucket/t/schema: NoSuchBucket"):
        Table.open("no-such-bucket/t", filesystem=fs)
    with pytest.raises(TableError, match="pipeline/elsewhere does not exist"):
        Table.open("pipeline/elsewhere", filesystem=fs)
    with pytest.raises(TableError, match="is not a Paimon table: it has no schema/"):
        Table.open(s3_table.removeprefix("s3://") + "/manifest", filesystem=fs)
    secret = "s3://user:hunter2@pipeline/t?endpoint_override=http%3A%2F%2F127.0.0.1%3A9&region=us-east-1"
    with pytest.raises(TableError, match="s3://pipeline/t") as failure:
        Table.open(secret)
    assert "hunter2" not in str(failure.value)


def test_external_paths_reuse_the_tables_endpoint_and_credentials(s3_server, s3_table: str) -> None:
    """An `_EXTERNAL_PATH` (`s3://` or Hadoop's `s3a://`, another bucket) is read with the
    table's filesystem, not the environment's (which has no credentials here)."""
    table = Table.open(_uri(s3_server, s3_table.removeprefix("s3://")))
    bucket = s3_server.create_bucket("external-data")
    s3_server.client().put_object(Bucket=bucket, Key="t/data-1.parquet", Body=b"external bytes")
    for uri in (f"s3://{bucket}/t/data-1.parquet", f"s3a://{bucket}/t/data-1.parquet"):
        io, inner = table.io.resolve(uri)
        assert io is table.io and inner == f"{bucket}/t/data-1.parquet"
        assert table.read_bytes(uri, 9, 5) == b"bytes"
    assert isinstance(table.io, ArrowFileIO) and table.io.uri(f"s3a://{bucket}/x") == f"s3://{bucket}/x"



def test_a_local_tables_uri_round_trips(pipeline_table: Path) -> None:
    table = Table.open(pipeline_table)
    assert table.uri == f"file://{pipeline_table}"
    assert Table.open(table.uri).path == str(pipeline_table)
