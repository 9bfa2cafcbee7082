"""The Spark entry points on a real cluster: `local-cluster[2,1,1024]` (two executor JVMs,
each with its own Python workers importing the package), in a subprocess (`cluster_run.py`),
since a second SparkSession cannot share this process with the `local[2]` one. One run does
every entry point (the cluster costs ~20-40 s to start); each has its test here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from s3server import ACCESS_KEY, REGION, SECRET_KEY

import forged_tables as forge
from oracles import import_oracle
from paimon_schema.table.scan import read_arrow
from paimon_schema.table.metadata import Table

N = 4_000
#: The session's default parallelism: not this machine's CPU count (8 files to split).
PARALLELISM = 5 if os.cpu_count() == 3 else 3


def _write(root: Path, indexes: dict) -> None:
    data = pa.table({"k": pa.array(range(N), pa.int64()),
                     "name": pa.array([f"n{i % 16}" for i in range(N)])})
    forge.write_table(root, data, {"k": "BIGINT", "name": "STRING"}, bucket_of=[i % 2 for i in range(N)],
                      file_rows=500, indexes=indexes,
                      deleted=[i for i in range(N) if i % 7 == 0])


@pytest.fixture(scope="module")
def cluster(s3_server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The outcome of each entry point under local-cluster, and the tables it read."""
    import_oracle("pyspark")
    base = tmp_path_factory.mktemp("cluster")
    table, rewrite = base / "t", base / "rewrite"
    _write(table, {"name": {"bitmap": {}}})
    _write(rewrite, {})
    bucket = s3_server.create_bucket("cluster-reads")
    s3_server.upload_tree(table, bucket, "t")
    endpoint = s3_server.endpoint.replace("://", "%3A%2F%2F")
    s3_uri = Table.open(f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}/t?endpoint_override={endpoint}"
                        f"&region={REGION}").uri
    config = base / "config.json"
    config.write_text(json.dumps({"table": str(table), "rewrite": str(rewrite), "s3_uri": s3_uri,
                                  "parallelism": PARALLELISM}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run([sys.executable, str(Path(__file__).with_name("cluster_run.py")), str(config)],
                         capture_output=True, text=True, timeout=900, env=env)
    assert run.returncode == 0, run.stderr[-4000:]
    results = json.loads(run.stdout.strip().splitlines()[-1])
    return {"results": results, "table": table, "rewrite": rewrite}


def _value(cluster: dict[str, Any], name: str) -> Any:
    outcome = cluster["results"][name]
    assert "error" not in outcome, outcome["error"]
    return outcome["value"]


def _keys(path: Path) -> list[int]:
    return sorted(read_arrow(path).column("k").to_pylist())


def test_two_executors_ran(cluster: dict[str, Any]) -> None:
    assert _value(cluster, "executors") == 2


def test_read_table(cluster: dict[str, Any]) -> None:
    assert _value(cluster, "read_table") == _keys(cluster["table"])


def test_paimon_source_with_the_clusters_parallelism(cluster: dict[str, Any]) -> None:
    """8 small files: as many partitions as the session's default parallelism (not the CPUs
    of this machine)."""
    assert _value(cluster, "paimon") == _keys(cluster["table"])
    assert _value(cluster, "paimon_partitions") == PARALLELISM != os.cpu_count()


def test_paimon_deletion_vectors_source(cluster: dict[str, Any]) -> None:
    table = Table.open(cluster["table"])
    expected = sorted((f.file_name, len(table.deletion_vector(f))) for f in table.data_files()
                      if f.deletion_file)
    assert [tuple(r) for r in _value(cluster, "paimon-deletion-vectors")] == expected


def test_paimon_file_index_source(cluster: dict[str, Any]) -> None:
    files = Table.open(cluster["table"]).data_files()
    assert [tuple(r) for r in _value(cluster, "paimon-file-index")] == \
        sorted((f.file_name, "name", "bitmap", 8) for f in files)


def test_spark_rewrite_file_index(cluster: dict[str, Any]) -> None:
    assert _value(cluster, "rewrite_file_index") == 8
    table = Table.open(cluster["rewrite"])
    assert all(set(table.file_index(f).columns) == {"name"} for f in table.data_files())
    assert _keys(cluster["rewrite"]) == _keys(cluster["table"])


def test_paimon_source_reads_s3(cluster: dict[str, Any]) -> None:
    assert _value(cluster, "paimon_s3") == _keys(cluster["table"])
