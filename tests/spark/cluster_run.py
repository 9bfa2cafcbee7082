"""Run in its own process by `test_local_cluster.py`: every Spark entry point under
`local-cluster[2,1,1024]` (a master, two workers, two executor JVMs; a second SparkSession
cannot share the test process with the `local[2]` one). Prints one JSON line: each entry
point's outcome (its rows summed up, or its error).

    python cluster_run.py CONFIG.json     # {"table", "rewrite", "s3_uri", "parallelism"}
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any


def session(parallelism: int) -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("paimon-schema-cluster")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.default.parallelism", str(parallelism))    # not this machine's CPUs
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.executor.memory", "512m")
             .config("spark.driver.memory", "1g")
             .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
             .config("spark.executorEnv.PYTHONPATH", os.pathsep.join(sys.path))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    from paimon_schema import spark as ps_spark

    ps_spark.register(spark)
    return spark


def executors(spark: Any) -> int:
    """The executors that ran tasks (hosts x JVMs), from the ids Spark assigns them."""
    status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus()
    return int(status.size()) - 1                      # without the driver


def main(config_path: str) -> int:
    with open(config_path) as f:
        config = json.load(f)
    spark = session(config["parallelism"])
    from paimon_schema import spark as ps_spark

    def keys(df: Any) -> list[int]:
        return sorted(r.k for r in df.collect())

    checks: dict[str, Callable[[], Any]] = {
        "read_table": lambda: keys(ps_spark.read_table(spark, config["table"])),
        "paimon": lambda: keys(spark.read.format("paimon").load(config["table"])),
        "paimon_partitions": lambda: spark.read.format("paimon").load(config["table"]).rdd.getNumPartitions(),
        "paimon-deletion-vectors": lambda: sorted(
            (r.data_file, r.cardinality) for r in
            spark.read.format("paimon-deletion-vectors").load(config["table"]).collect()),
        "paimon-file-index": lambda: sorted(
            (r.data_file, r.column, r.index_type, r.distinct_values) for r in
            spark.read.format("paimon-file-index").load(config["table"]).collect()),
        "rewrite_file_index": lambda: ps_spark.rewrite_file_index(
            spark, config["rewrite"], {"name": "bitmap"}).files,
        "paimon_s3": lambda: keys(spark.read.format("paimon").load(config["s3_uri"])),
    }
    results: dict[str, Any] = {}
    for name, check in checks.items():
        try:
            results[name] = {"value": check()}
        except Exception:  # noqa: BLE001 - reported to the test, which fails on it
            results[name] = {"error": traceback.format_exc(limit=3)[-3000:]}
    results["executors"] = {"value": executors(spark)}
    spark.stop()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
