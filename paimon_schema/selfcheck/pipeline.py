"""The Spark pipeline of the README: Paimon's own Java writes a table, Spark reads it through our
data sources with a filter, and the run prints rows, files pruned and time.

1. The Java reference (Paimon's BatchWriteBuilder) writes an append table with deletion vectors
   into a fresh warehouse: 200k rows in two partitions and two buckets (each city a range of
   ids, so that few files hold a city), a bitmap index on `city` and a bloom filter on `id`, then
   deletes every tenth row of every file through Paimon's AppendDeletionFileMaintainer.
2. A `local[2]` session reads it: `paimon-deletion-vectors` and `paimon-file-index` show the
   index files; the `paimon` source and `read_table` (Spark's Parquet scan) read the rows
   with a selective filter; both must give the rows Java's own read gives.

    python -m paimon_schema.selfcheck.pipeline [--rows 200000] [--keep DIR]

With `--keep DIR` the warehouse is written into DIR and left there (the table is
`DIR/demo.db/orders`, for `paimon-schema table` or `Table.open`); else into a temporary
directory that is removed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from paimon_schema.values.results import plural

FIELDS = [("id", "BIGINT"), ("city", "STRING"), ("amount", "DOUBLE"), ("day", "STRING")]
WHERE = "city = 'Lima' AND amount < 50"
CITIES = ["Oslo", "Lima", "Pune", "Kyiv", "Rome", "Doha", "Baku", "Riga"]


def write_table(warehouse: Path, rows: int, *, java_read: bool = True) -> tuple[Path, list[tuple]]:
    """Java writes the table and deletes every tenth row of each file; returns its path and
    Java's read of it (empty with `java_read=False`, e.g. for a benchmark's table)."""
    from paimon_schema.selfcheck.reference import JavaReference
    from paimon_schema.selfcheck.reference.java import (
        decode_rows,
        delete_positions_request,
        read_table_request,
        run_table_ops,
        write_table_request,
    )
    from paimon_schema.table.metadata import Table

    java = JavaReference.get()
    data = [("+I", i, CITIES[i * len(CITIES) // rows], float(i % 500),
             "2024-05-01" if i < rows // 2 else "2024-05-02") for i in range(rows)]
    options = {"bucket": 2, "bucket-key": "id", "deletion-vectors.enabled": "true",
               "file.format": "parquet", "file-index.bitmap.columns": "city",
               "file-index.bloom-filter.columns": "id", "target-file-size": "256kb"}
    run_table_ops(java, [write_table_request(warehouse, "demo", "orders", FIELDS,
                                             [data[: rows // 2], data[rows // 2:]],
                                             partition_keys=["day"], options=options)])
    path = warehouse / "demo.db" / "orders"
    deletes = {f.file_name: range(0, f.row_count, 10) for f in Table.open(path).data_files()}
    requests = [delete_positions_request(warehouse, "demo", "orders", deletes)]
    if not java_read:
        run_table_ops(java, requests)
        return path, []
    _, read = run_table_ops(java, [*requests, read_table_request(warehouse, "demo", "orders")])
    return path, [row[1:] for row in decode_rows(read, [t for _, t in FIELDS])]


def spark_session() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from paimon_schema.runtime import progress
    from paimon_schema.spark import QUIET_LOGGING

    with progress.step("starting Spark (local[2], a JVM)"):
        spark = (SparkSession.builder.master("local[2]").appName("paimon-schema-pipeline")
                 .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.extraJavaOptions", QUIET_LOGGING)
                 .config("spark.sql.shuffle.partitions", "2")
                 .config("spark.sql.python.filterPushdown.enabled", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _source_read(spark: Any, table: str) -> tuple[list, Any]:
    """The rows, and the statistics of the plan the source's planner makes for the filter
    Spark pushes down (the same `plan_read`, run here again to show them)."""
    from paimon_schema.query.sql import parse_sql
    from paimon_schema.table.merge import plan_read

    rows = spark.read.format("paimon").load(table).where(WHERE).collect()
    return rows, plan_read(table, parse_sql(WHERE)).stats


def _native_read(spark: Any, table: str) -> tuple[list, Any]:
    from paimon_schema import spark as ps_spark

    df, stats = ps_spark.read_table(spark, table, WHERE, with_stats=True)
    return df.collect(), stats


def run(spark: Any, table: str, java_rows: list[tuple]) -> bool:
    """Read `table` through the index sources and both row paths; print what they show.
    True when both filtered reads equal Java's read filtered the same way."""
    from paimon_schema import spark as ps_spark

    ps_spark.register(spark)
    dvs = spark.read.format("paimon-deletion-vectors").load(table)
    deleted = dvs.agg({"cardinality": "sum"}).first()[0] or 0
    print(f"\ndeletion vectors: {dvs.count()} data files, {deleted:,} rows deleted")
    spark.read.format("paimon-file-index").load(table) \
        .select("partition", "bucket", "column", "index_type", "row_count", "distinct_values") \
        .show(4, truncate=False)
    expected = sorted(r for r in java_rows if r[1] == "Lima" and r[2] < 50)
    ok = True
    for name, read in (("paimon data source", _source_read), ("read_table (native scan)", _native_read)):
        started = time.perf_counter()
        rows, stats = read(spark, table)
        seconds = time.perf_counter() - started
        got = sorted(tuple(r) for r in rows)
        ok &= got == expected
        pruned = f", {stats.files_skipped} of {plural(stats.files, 'file')} pruned" if stats else ""
        print(f"{name}: {plural(len(got), 'row')} where {WHERE}{pruned}, {seconds:.2f} s, "
              f"{'equal to' if got == expected else 'DIFFERENT FROM'} Java's read")
    print("first rows:", *expected[:5], sep="\n  ")
    return ok


@contextlib.contextmanager
def _warehouse(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="paimon-schema-pipeline-") as tmp:
        yield Path(tmp)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    from paimon_schema.cli.arguments import rows_argument, warehouse_argument

    parser.add_argument("--rows", type=rows_argument, default=200_000)
    parser.add_argument("--keep", metavar="DIR", type=warehouse_argument,
                        help="write the warehouse into DIR and keep it (table DIR/demo.db/orders)")
    args = parser.parse_args(argv)
    with _warehouse(args.keep) as warehouse:
        started = time.perf_counter()
        from paimon_schema.runtime import progress

        with progress.step(f"Paimon's Java writes {args.rows:,} rows and deletes every tenth"):
            path, java_rows = write_table(warehouse, args.rows)
        print(f"Java wrote {path.name}: {args.rows:,} rows, {len(java_rows):,} left after deletes "
              f"({time.perf_counter() - started:.1f} s)")
        spark = spark_session()
        try:
            ok = run(spark, str(path), java_rows)
        finally:
            spark.stop()
    if args.keep is not None:
        print(f"\nkept the table in {path} (try: paimon-schema table {path})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
