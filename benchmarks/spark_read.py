"""What do deletion vectors and file-index pruning cost or save in a Spark read?

A 2M-row append table with 30 % of its rows deleted by deletion vectors (20 Parquet files, 2
partitions x 2 buckets, a bitmap index on `tag`, a BSI index on `k`) is written with the test
forge (tests/spark/forged_tables.py: Paimon's layout from Python, so that the run needs no
JVM writer), then read on a `local[2]` session, each line the best of `--repeat` runs
(`write.format("noop")`, so every row is produced and nothing is collected):

0. driver planning alone (building the DataFrame, median of `--repeat` x 5): `read_table`
   against `spark.read.parquet`, with the py4j round trips each takes;
1. merge-on-read cost: `read_table` (Spark's Parquet scan, the deleted rows dropped in the JVM
   by the `KeepRows` Java UDF; for the record also its broadcast-join fallback) and the `paimon`
   Python data source (pyarrow in Python workers) against `spark.read.parquet` of the same files
   without applying any deletion vector. Targets (issue 12): `read_table` at most 1.3x the plain
   scan, the `paimon` source at most 2x, each printed PASS/FAIL with the ratio of this run.
   `read_table` reads the schema from a footer instead of running Spark's inference job, so a
   plain scan given its schema (`spark.read.schema(...)`) is printed too: the filter's own cost;
2. pruning: a selective predicate (`tag = 12343`: 100 rows, in one file; every file's `tag`
   values interleave, so Parquet's min/max statistics cannot skip anything), with file-index
   pruning against the same read without it: `read_table` (baselines: Spark's own Parquet
   filter pushdown, and none at all) and the `paimon` source (baseline: `CAST(tag AS STRING) =
   '12343'`, which Spark does not push to a data source, so it filters after reading every
   file; Spark 4.3 simplifies `tag + 0 = 12343` to `tag = 12343` and pushes that);
3. a range filter (`k < 100000`, one file of 20) pruned by the manifests' min/max statistics.

    python benchmarks/spark_read.py [--rows 2000000] [--files 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "spark"))
import forged_tables  # noqa: E402

from paimon_schema import spark as ps_spark  # noqa: E402
from paimon_schema.spark import jvm_filter  # noqa: E402
from timing import best_of  # noqa: E402

WHERE = "tag = 12343"
RANGE = "k < 100000"
TARGETS = {"read_table (DVs applied)": 1.3, "paimon source (DVs applied)": 2.0}
OPAQUE = "CAST(tag AS STRING) = '12343'"


def build(root: Path, rows: int, files: int) -> list[Any]:
    """Row i is in file i // file_rows; its tag is (i % 1000) * files + that file's number, so
    a tag lives in one file while every file spans nearly the whole tag range."""
    file_rows = max(1, rows // files)
    data = pa.table({"k": pa.array(range(rows), pa.int64()),
                     "tag": pa.array([(i % 1000) * files + i // file_rows for i in range(rows)], pa.int32()),
                     "value": pa.array([float(i % 1009) for i in range(rows)]),
                     "part": pa.array(["a" if i < rows // 2 else "b" for i in range(rows)])})
    deleted = [i for i in range(rows) if (i * 2654435761) % 10 < 3]      # 30 %, spread out
    return forged_tables.write_table(
        root, data, {"k": "BIGINT", "tag": "INT", "value": "DOUBLE", "part": "STRING"},
        partition_keys=["part"], bucket_of=[(i // file_rows) % 2 for i in range(rows)],
        file_rows=file_rows, indexes={"tag": {"bitmap": {}}, "k": {"bsi": {}}},
        deleted=deleted, row_group_rows=100_000, value_stats=True)


def session() -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("paimon-schema-bench")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "4g")
             .config("spark.sql.python.filterPushdown.enabled", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    ps_spark.register(spark)
    return spark


def noop(df: Any) -> None:
    df.write.format("noop").mode("overwrite").save()


def planning(spark: Any, paths: list[str], root: Path, repeat: int) -> None:
    """Median time and py4j round trips of building each DataFrame, nothing executed."""
    client = type(spark.sparkContext._gateway._gateway_client)
    send = client.send_command
    calls = [0]

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return send(self, *args, **kwargs)

    builds = {"spark.read.parquet": lambda: spark.read.parquet(*paths).select("k", "tag", "value", "part"),
              "read_table": lambda: ps_spark.read_table(spark, root)}
    print(f"\n0. planning on the driver, nothing executed (median of {repeat})")
    client.send_command = counted
    try:
        for name, build_df in builds.items():
            times = []
            for _ in range(repeat):
                calls[0] = 0
                started = time.perf_counter()
                build_df()
                times.append(time.perf_counter() - started)
            print(f"   {name:32s} {sorted(times)[len(times) // 2] * 1000:5.0f} ms   "
                  f"{calls[0]} py4j round trips")
    finally:
        client.send_command = send


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "t"
        started = time.perf_counter()
        files = build(root, args.rows, args.files)
        print(f"table: {args.rows:,} rows, {len(files)} files, "
              f"{sum(len(f.deleted) for f in files):,} deleted; written in "
              f"{time.perf_counter() - started:.1f} s")
        spark = session()
        paths = ["file://" + str(f.path) for f in files]
        raw = lambda: noop(spark.read.parquet(*paths).select("k", "tag", "value", "part"))  # noqa: E731
        schema = spark.read.parquet(*paths).schema
        given = lambda: noop(spark.read.schema(schema).parquet(*paths).select("k", "tag", "value", "part"))  # noqa: E731
        native = lambda: noop(ps_spark.read_table(spark, root))  # noqa: E731
        source = lambda: noop(spark.read.format("paimon").load(str(root)))  # noqa: E731
        pruned = lambda: noop(ps_spark.read_table(spark, root, WHERE))  # noqa: E731
        unpruned = lambda: noop(ps_spark.read_table(spark, root).where(WHERE))  # noqa: E731
        source_pruned = lambda: noop(spark.read.format("paimon").load(str(root)).where(WHERE))  # noqa: E731
        # the same filter in a form Spark does not push to a data source
        source_unpruned = lambda: noop(spark.read.format("paimon").load(str(root)).where(OPAQUE))  # noqa: E731

        def joined() -> None:                       # read_table without the JVM filter
            jvm_filter._unavailable = "benchmark: the join fallback"
            try:
                native()
            finally:
                jvm_filter._unavailable = None

        for warm in (raw, native, joined, source, pruned):
            warm()
        planning(spark, paths, root, args.repeat * 5)
        full = best_of({"spark.read.parquet, no DVs": raw,
                        "  the same, schema given": given, "read_table (DVs applied)": native,
                        "read_table, join fallback": joined,
                        "paimon source (DVs applied)": source}, args.repeat)
        baseline = full["spark.read.parquet, no DVs"]
        print(f"\n1. full read, {args.rows:,} rows, 30 % deleted (best of {args.repeat})")
        verdicts = []
        for name, seconds in full.items():
            ratio = seconds / baseline
            target = TARGETS.get(name)
            verdict = "" if target is None else \
                f"  (<= {target}x) {'PASS' if ratio <= target else 'FAIL'}"
            if target is not None:
                verdicts.append(ratio <= target)
            print(f"   {name:32s} {seconds:7.2f} s   {ratio:.2f}x{verdict}")
        _, stats = ps_spark.read_table(spark, root, WHERE, with_stats=True)

        def without(setting: str, run: Callable[[], Any]) -> Callable[[], Any]:
            def go() -> None:
                spark.conf.set(setting, "false")
                try:
                    run()
                finally:
                    spark.conf.set(setting, "true")
            return go

        print(f"\n2. selective read: {WHERE} (best of {args.repeat})")
        print(f"   file indexes skip {stats.files_skipped} of {stats.files} files, "
              f"{stats.rows_skipped:,} of {stats.rows:,} rows; planning with the indexes took "
              f"{stats.planning_seconds:.2f} s")
        native_runs = best_of({"no pruning at all": without("spark.sql.parquet.filterPushdown", unpruned),
                               "Parquet filter pushdown only": unpruned,
                               "with file-index pruning": pruned}, args.repeat)
        source_runs = best_of({"no pruning (filter not pushed)": source_unpruned,
                               "with file-index pruning": source_pruned}, args.repeat)
        for title, runs in (("read_table", native_runs), ("paimon source", source_runs)):
            slowest = next(iter(runs.values()))
            print(f"   {title}:")
            for name, seconds in runs.items():
                print(f"     {name:30s} {seconds:7.2f} s   {slowest / seconds:.2f}x faster")
        ranged = lambda: noop(ps_spark.read_table(spark, root, RANGE))  # noqa: E731
        ranged_unpruned = lambda: noop(ps_spark.read_table(spark, root).where(RANGE))  # noqa: E731
        _, range_stats = ps_spark.read_table(spark, root, RANGE, with_stats=True)
        range_runs = best_of({"Parquet filter pushdown only": ranged_unpruned,
                              "with min/max statistics": ranged}, args.repeat)
        print(f"\n3. range read: {RANGE} (best of {args.repeat})")
        print(f"   statistics skip {range_stats.files_skipped_by_stats} of {range_stats.files} files")
        slowest = next(iter(range_runs.values()))
        for name, seconds in range_runs.items():
            print(f"     {name:30s} {seconds:7.2f} s   {slowest / seconds:.2f}x faster")
        print(f"\ntargets: {'PASS' if all(verdicts) else 'FAIL'}")
        spark.stop()


if __name__ == "__main__":
    main()
