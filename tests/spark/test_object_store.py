"""Spark's entry points on a table on S3 (moto's S3 API server on loopback): the three Python
data sources read it by `Table.uri` (endpoint and credentials in the URI, no environment), and
`read_table`, whose scan needs Hadoop's s3a filesystem, which PyPI's pyspark lacks, fails with
one `TableError` that names hadoop-aws and the `paimon` source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from s3server import ACCESS_KEY, REGION, SECRET_KEY

import forged_tables as forge
from paimon_schema import spark as ps_spark
from paimon_schema.table.errors import TableError
from paimon_schema.table.scan import read_arrow
from paimon_schema.table.metadata import Table


@pytest.fixture(scope="module")
def tables(s3_server, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Table]:
    """A 3k-row table (2 buckets, 6 files, bitmap index, every fifth row deleted), local and
    on S3 (opened by a URI that carries the endpoint and credentials)."""
    n = 3_000
    data = pa.table({"k": pa.array(range(n), pa.int64()),
                     "name": pa.array([f"n{i % 20}" for i in range(n)])})
    root = tmp_path_factory.mktemp("s3spark") / "t"
    forge.write_table(root, data, {"k": "BIGINT", "name": "STRING"}, bucket_of=[i % 2 for i in range(n)],
                      file_rows=500, indexes={"name": {"bitmap": {}}},
                      deleted=[i for i in range(n) if i % 5 == 0])
    bucket = s3_server.create_bucket("spark-reads")
    s3_server.upload_tree(root, bucket, "db/t")
    endpoint = s3_server.endpoint.replace("://", "%3A%2F%2F")
    table = Table.open(f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}/db/t?endpoint_override={endpoint}"
                       f"&region={REGION}")
    return root, table


def test_the_sources_read_a_table_on_s3_by_its_uri(spark: Any, tables: tuple[Path, Table]) -> None:
    root, table = tables
    expected = sorted(read_arrow(root).column("k").to_pylist())
    assert len(expected) == 2_400
    df = spark.read.format("paimon").load(table.uri)
    assert sorted(r.k for r in df.collect()) == expected
    assert sorted(r.k for r in df.where("name = 'n7'").collect()) == [k for k in expected if k % 20 == 7]
    dvs = spark.read.format("paimon-deletion-vectors").load(table.uri).collect()
    assert len(dvs) == 6 and sum(r.cardinality for r in dvs) == 600
    indexes = spark.read.format("paimon-file-index").load(table.uri).collect()
    assert {(r.column, r.index_type, r.distinct_values) for r in indexes} == {("name", "bitmap", 10)}   # a bucket holds 10 names


def test_read_table_without_hadoop_aws_is_one_table_error(spark: Any, tables: tuple[Path, Table]) -> None:
    _, table = tables
    with pytest.raises(TableError) as failure:
        ps_spark.read_table(spark, table)
    message = str(failure.value)
    assert "s3://spark-reads/db/t" in message and "no Hadoop filesystem for s3a://" in message
    assert "hadoop-aws" in message and 'format("paimon")' in message
    assert SECRET_KEY not in message


def test_read_table_hands_the_endpoint_and_credentials_to_s3a(tables: tuple[Path, Table]) -> None:
    """What the scan would get where hadoop-aws is present: per-bucket s3a settings."""
    from paimon_schema.spark import native
    from paimon_schema.table.merge import plan_read

    _, table = tables
    tasks = plan_read(table).tasks

    class NoJvm:                       # a session whose filesystems are not checked here
        pass

    options = native._hadoop_options(NoJvm(), table, tasks)
    prefix = "fs.s3a.bucket.spark-reads."
    assert options == {prefix + "endpoint": table.io.filesystem.__reduce__()[1][0]["endpoint_override"],
                       prefix + "endpoint.region": REGION, prefix + "access.key": ACCESS_KEY,
                       prefix + "secret.key": SECRET_KEY, prefix + "path.style.access": "true",
                       prefix + "connection.ssl.enabled": "false"}
    assert {native._uri(t).split("://")[0] for t in tasks} == {"s3a"}
