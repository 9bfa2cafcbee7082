"""What do deletion vectors and file-index pruning cost or save in a Spark read?

Two tables of 2M rows are written with the test forge (tests/spark/forged_tables.py: Paimon's
layout from Python, so that the run needs no JVM writer), both append tables with deletion
vectors, 2 partitions x 2 buckets, a bitmap index on `tag` and a BSI index on `k`:

- few large files: 8 Parquet files, 30 % of the rows deleted;
- many small files: 288 files (the shape of `paimon-schema pipeline --rows 2000000`'s
  Java-written table, whose files share sizes), 10 % deleted;

and `--pipeline DIR` adds a table of your own (e.g. the pipeline's, kept with `--keep`). They are
read on a `local[2]` session (`write.format("noop")`, so every row is produced and nothing is
collected):

0. driver planning alone (building the DataFrame, median of `--repeat` x 5): `read_table`
   against `spark.read.parquet`, with the py4j round trips each takes;
1. merge-on-read cost, per table: `read_table` (Spark's Parquet scan, the deleted rows dropped
   in the JVM by the `KeepRows` Java UDF) and the `paimon` Python data source (pyarrow in Python
   workers) against `spark.read.parquet` of the same files without applying any deletion
   vector, in interleaved rounds (each round runs the three back to back, so they see the same
   load; the ratio is the median of the rounds' ratios, their range beside it). Targets (issue
   19): `read_table` at most 1.1x the plain scan, the `paimon` source at most 1.0x, each
   printed PASS/FAIL. Also the CPU-time ratio of the whole process tree (driver, JVM, Python
   workers; medians), which the shared machine's other processes disturb less than the wall
   clock. On the few-files table, for the record: the plain scan given its schema (no
   inference job: what `read_table` spares) and `read_table`'s broadcast-join fallback;
2. pruning (few-files table): a selective predicate (`tag = 4059`: 250 rows, in one file;
   every file's `tag` values interleave, so Parquet's min/max statistics cannot skip anything),
   with file-index pruning against the same read without it: `read_table` (baselines: Spark's
   own Parquet filter pushdown, and none at all) and the `paimon` source (baseline: `CAST(tag AS
   STRING) = '4059'`, which Spark does not push to a data source, so it filters after reading
   every file);
3. a range filter (`k < 100000`, one file of the few) pruned by the manifests' min/max
   statistics.

The load average is printed with every section: on the shared 2-core machine the wall clock
varies by tens of percent from run to run, the per-round ratios much less.

    python benchmarks/spark_read.py [--rows 2000000] [--repeat 5] [--pipeline DIR]
"""
from __future__ import annotations

import argparse
import os
import statistics
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
from paimon_schema.table.metadata import Table  # noqa: E402
from timing import Rounds, best_of, rounds  # noqa: E402

FEW_FILES = 8
#: 250 rows of the few-files table (i % 1000 == 507 in file 3: none deleted), in one file
WHERE = f"tag = {507 * FEW_FILES + 3}"
RANGE = "k < 100000"
TARGETS = {"read_table": 1.1, "paimon source": 1.0}
#: (name, files, fraction of rows deleted) of the forged tables
SHAPES = [("few large files", FEW_FILES, 0.3), ("many small files", 288, 0.1)]
OPAQUE = f"CAST(tag AS STRING) = '{507 * FEW_FILES + 3}'"


def build(root: Path, rows: int, files: int, deleted_fraction: float = 0.3) -> list[Any]:
    """Row i is in file i // file_rows; its tag is (i % 1000) * files + that file's number, so
    a tag lives in one file while every file spans nearly the whole tag range."""
    file_rows = -(-rows // files)
    data = pa.table({"k": pa.array(range(rows), pa.int64()),
                     "tag": pa.array([(i % 1000) * files + i // file_rows for i in range(rows)], pa.int32()),
                     "value": pa.array([float(i % 1009) for i in range(rows)]),
                     "part": pa.array(["a" if i < rows // 2 else "b" for i in range(rows)])})
    cut = round(deleted_fraction * 10)
    deleted = [i for i in range(rows) if i % 10 < cut]                     # spread out
    return forged_tables.write_table(
        root, data, {"k": "BIGINT", "tag": "INT", "value": "DOUBLE", "part": "STRING"},
        partition_keys=["part"], bucket_of=[(i // file_rows) % 2 for i in range(rows)],
        file_rows=file_rows, indexes={"tag": {"bitmap": {}}, "k": {"bsi": {}}},
        deleted=deleted, row_group_rows=100_000, value_stats=True)


def tree_cpu_seconds() -> float:
    """CPU time of this process and all its descendants (the JVM, its Python workers), dead
    children included (`cutime`), from /proc; 0 where there is no /proc."""
    if not os.path.isdir("/proc"):
        return 0.0
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
        ticks[int(entry)] = sum(int(x) for x in fields[11:15])
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


def cpu_rounds(runs: dict[str, Callable[[], Any]], repeat: int) -> tuple[Rounds, dict[str, float]]:
    """`rounds` of the runs, and each one's median CPU time of the whole process tree."""
    cpu: dict[str, list[float]] = {name: [] for name in runs}

    def counted(name: str, run: Callable[[], Any]) -> Callable[[], None]:
        def go() -> None:
            before = tree_cpu_seconds()
            run()
            cpu[name].append(tree_cpu_seconds() - before)
        return go

    timed = rounds({name: counted(name, run) for name, run in runs.items()}, repeat)
    return timed, {name: statistics.median(values) for name, values in cpu.items()}


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


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

    builds = {"spark.read.parquet": lambda: spark.read.parquet(*paths),
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


def full_reads(spark: Any, root: Path, *, extras: bool) -> dict[str, Callable[[], Any]]:
    """The whole-table reads of section 1; with `extras` also the plain scan given its schema
    and read_table's join fallback."""
    paths = uris(root)
    runs: dict[str, Callable[[], Any]] = {
        "spark.read.parquet, no DVs": lambda: noop(spark.read.parquet(*paths)),
        "read_table": lambda: noop(ps_spark.read_table(spark, root)),
        "paimon source": lambda: noop(spark.read.format("paimon").load(str(root)))}
    if extras:
        schema = spark.read.parquet(*paths).schema

        def joined() -> None:                       # read_table without the JVM filter
            jvm_filter._unavailable = "benchmark: the join fallback"
            try:
                noop(ps_spark.read_table(spark, root))
            finally:
                jvm_filter._unavailable = None

        runs["  plain scan, schema given"] = lambda: noop(spark.read.schema(schema).parquet(*paths))
        runs["  read_table, join fallback"] = joined
    return runs


def uris(root: Path) -> list[str]:
    """The URIs of the table's live data files."""
    table = Table.open(str(root))
    return [fileio.uri(path) for fileio, path in (table.io.resolve(f.path) for f in table.data_files())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pipeline", metavar="DIR", action="append", default=[],
                        help="also read this table (e.g. the pipeline's Java-written one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tables: list[tuple[str, Path]] = []
        for name, files, fraction in SHAPES:
            root = Path(tmp) / name.replace(" ", "-")
            started = time.perf_counter()
            forged = build(root, args.rows, files, fraction)
            print(f"table {name!r}: {args.rows:,} rows, {len(forged)} files, "
                  f"{sum(len(f.deleted) for f in forged):,} deleted; written in "
                  f"{time.perf_counter() - started:.1f} s")
            tables.append((name, root))
        tables += [(f"{Path(d).name} (--pipeline)", Path(d)) for d in args.pipeline]
        spark = session()
        root = tables[0][1]
        paths = uris(root)
        raw = lambda: noop(spark.read.parquet(*paths))  # noqa: E731
        native = lambda: noop(ps_spark.read_table(spark, root))  # noqa: E731
        source = lambda: noop(spark.read.format("paimon").load(str(root)))  # noqa: E731
        pruned = lambda: noop(ps_spark.read_table(spark, root, WHERE))  # noqa: E731
        unpruned = lambda: noop(ps_spark.read_table(spark, root).where(WHERE))  # noqa: E731
        source_pruned = lambda: noop(spark.read.format("paimon").load(str(root)).where(WHERE))  # noqa: E731
        # the same filter in a form Spark does not push to a data source
        source_unpruned = lambda: noop(spark.read.format("paimon").load(str(root)).where(OPAQUE))  # noqa: E731
        for warm in (raw, native, source, pruned):
            warm()
        planning(spark, paths, root, args.repeat * 5)
        print(f"\n1. full read, deletion vectors applied (interleaved rounds: median and range of "
              f"{args.repeat} rounds' ratios; CPU: the process tree's, median over median)")
        verdicts = []
        for name, table in tables:
            runs = full_reads(spark, table, extras=table == root)
            for warm in runs.values():
                warm()
            timed, cpu = cpu_rounds(runs, args.repeat)
            print(f"   {name} ({len(uris(table))} files; {load()}):")
            base = "spark.read.parquet, no DVs"
            for run in runs:
                ratio = timed.ratio(run, base)
                target = TARGETS.get(run)
                verdict = "" if target is None else \
                    f"  (<= {target}x) {'PASS' if ratio <= target else 'FAIL'}"
                if target is not None:
                    verdicts.append(ratio <= target)
                print(f"     {run:28s} {timed.median(run):6.2f} s  {ratio:5.2f}x "
                      f"({timed.spread(run, base)})  CPU {cpu[run]:5.2f} s "
                      f"{cpu[run] / cpu[base]:5.2f}x{verdict}")
        _, stats = ps_spark.read_table(spark, root, WHERE, with_stats=True)

        def without(setting: str, run: Callable[[], Any]) -> Callable[[], Any]:
            def go() -> None:
                spark.conf.set(setting, "false")
                try:
                    run()
                finally:
                    spark.conf.set(setting, "true")
            return go

        print(f"\n2. selective read: {WHERE} (best of {args.repeat}; {load()})")
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
        print(f"\n3. range read: {RANGE} (best of {args.repeat}; {load()})")
        print(f"   statistics skip {range_stats.files_skipped_by_stats} of {range_stats.files} files")
        slowest = next(iter(range_runs.values()))
        for name, seconds in range_runs.items():
            print(f"     {name:30s} {seconds:7.2f} s   {slowest / seconds:.2f}x faster")
        print(f"\ntargets: {'PASS' if all(verdicts) else 'FAIL'}")
        spark.stop()


if __name__ == "__main__":
    main()
