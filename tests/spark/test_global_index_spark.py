"""Global indexes in Spark: `create_global_index(spark, ...)` builds one index file per row
range in Spark tasks and commits once, the same files as the Python function; the `paimon`
source and `read_table` prune files by the indexes, with pypaimon's rows."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from interop.global_index_tables import index_files, write_table

import paimon_schema as ps
from paimon_schema import spark as ps_spark
from paimon_schema.table import Table

ROWS = 300
SMALL_RANGES = {"sorted-index.records-per-file": "50"}        # 60 rows a range: 5 ranges


def _data() -> pa.Table:
    ids = range(ROWS)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "s": pa.array([f"s{i % 7}" if i % 5 else None for i in ids], pa.string()),
                     "k": pa.array([i // 40 - 3 for i in ids], pa.int32())})


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> tuple[Path, Path]:
    """(indexed by the Python function, indexed by the Spark job): btree on k, bitmap on s."""
    python = tmp_path_factory.mktemp("python")
    write_table(python, _data(), batches=3)
    spark_built = tmp_path_factory.mktemp("spark") / "w"
    shutil.copytree(python, spark_built)
    for column, index_type in (("k", "btree"), ("s", "bitmap")):
        ps.create_global_index(python / "db.db" / "t", column, index_type, SMALL_RANGES)
        result = ps_spark.create_global_index(spark, spark_built / "db.db" / "t", column, index_type,
                                              SMALL_RANGES)
        assert [f[1:] for f in result.files] == [(lo, min(lo + 59, ROWS - 1)) for lo in range(0, ROWS, 60)]
    return python, spark_built


def test_spark_job_writes_the_python_files(warehouses: tuple[Path, Path]) -> None:
    python, spark_built = warehouses

    def key(f: Any) -> tuple:
        g = f.record["_GLOBAL_INDEX"]
        return (f.record["_INDEX_TYPE"], g["_ROW_RANGE_START"])

    ours = sorted(index_files(spark_built), key=key)
    expected = sorted(index_files(python), key=key)
    assert len(ours) == len(expected) == 10
    for a, b in zip(ours, expected):
        assert a.data == b.data and a.record["_GLOBAL_INDEX"] == b.record["_GLOBAL_INDEX"]
    assert Table.open(spark_built / "db.db" / "t").snapshot().id == 5        # one commit each


def test_spark_reads_prune_by_global_indexes(warehouses: tuple[Path, Path], spark: Any) -> None:
    _, spark_built = warehouses
    path = str(spark_built / "db.db" / "t")
    expected = sorted(i for i in range(ROWS) if i // 40 - 3 == -3 and i % 5 and i % 7 == 1)
    where = "k = -3 AND s = 's1'"
    df = spark.read.format("paimon").load(path).where(where)
    assert sorted(r["id"] for r in df.collect()) == expected
    native, stats = ps_spark.read_table(spark, path, where, with_stats=True)
    assert sorted(r["id"] for r in native.collect()) == expected
    assert stats.files_skipped_by_global_index == 2 and stats.files_read == 1
    rows, arrow_stats = ps_spark.read_arrow(path, where, with_stats=True)
    assert sorted(rows.column("id").to_pylist()) == expected
    assert arrow_stats.as_dict()["files_skipped_by_global_index"] == 2
