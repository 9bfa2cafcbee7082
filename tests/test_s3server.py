"""The loopback S3 server the object-store tests use: conditional creates and the request log."""

from __future__ import annotations

import pytest


def test_conditional_create_is_honoured_and_logged(s3_server) -> None:
    from botocore.exceptions import ClientError

    bucket = s3_server.create_bucket("conditional-create")
    client = s3_server.client()
    s3_server.log.clear()
    client.put_object(Bucket=bucket, Key="snapshot/snapshot-1", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as failure:
        client.put_object(Bucket=bucket, Key="snapshot/snapshot-1", Body=b"second", IfNoneMatch="*")
    assert failure.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert client.get_object(Bucket=bucket, Key="snapshot/snapshot-1")["Body"].read() == b"first"
    puts = [r for r in s3_server.log.snapshot() if r.method == "PUT"]
    assert [(r.path, r.status) for r in puts] == [(f"/{bucket}/snapshot/snapshot-1", 200),
                                                  (f"/{bucket}/snapshot/snapshot-1", 412)]
    client.get_object(Bucket=bucket, Key="snapshot/snapshot-1", Range="bytes=0-1")
    assert s3_server.log.snapshot()[-1].range == "bytes=0-1"
