"""How long do `rewrite_file_index` (Python, and the Spark job) and `delete_where` take on a
1M-row table?

The table: an append table with `deletion-vectors.enabled` (unaware bucket, Parquet), 1M rows
by default in 8 data files of one commit each (`id` BIGINT, `k` INT, `amount` DOUBLE,
`tag` STRING of 5000 distinct values), written by pypaimon 2.1.0 (as `table_read.py`).

Timed, best of `--repeat` interleaved runs, each on a fresh copy of the table (the copy is not
timed), from the table directory to the committed snapshot:

- `rewrite_file_index(t, {"tag": "bitmap", "id": "bloom-filter", "k": "bsi"})` in Python
  (files built on one thread per CPU);
- the same through `paimon_schema.spark.rewrite_file_index` (local[2], one Spark task per data
  file; the session is started before timing);
- `delete_where(t, "k < 100000")` (about 10 % of the rows: a vector for every file).

No target: the ratio Spark job / Python is printed for scale (on one machine the job adds its
task scheduling and the containers' trip to the driver; it pays off on a cluster). Each result
is checked: every file has its index, and the delete leaves exactly the rows with k >= 100000.

    python benchmarks/table_write.py [--rows 1000000] [--files 8] [--repeat 3] [--no-spark]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pypaimon_tables import DATABASE, NAME, write_table

import paimon_schema as ps
from paimon_schema.spark import read_arrow
from paimon_schema.table import Table

INDEXES = {"tag": "bitmap", "id": "bloom-filter", "k": "bsi"}
DELETE = "k < 100000"


def build(warehouse: Path, rows: int, files: int, seed: int = 5) -> Path:
    """pypaimon writes the table, one commit (one data file) per `files`."""
    return write_table(warehouse, rows, files, np.random.default_rng(seed))


def spark_session() -> object:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("table-write-bench")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.python.worker.reuse", "true").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="table-write-bench-") as tmp:
        base = build(Path(tmp) / "base", args.rows, args.files)
        rows_kept = read_arrow(base, f"NOT ({DELETE})").num_rows
        spark = None if args.no_spark else spark_session()
        copies = iter(range(10**6))

        def timed(action: Callable[[Path], Any], check: Callable[[Path, Any], bool]) -> Callable[[], float]:
            """`action` on a fresh copy of the table, timed alone; then its result checked."""
            def run() -> float:
                path = Path(tmp) / f"copy{next(copies)}" / f"{DATABASE}.db" / NAME
                shutil.copytree(base, path)
                start = time.perf_counter()
                result = action(path)
                took = time.perf_counter() - start
                assert check(path, result), (path, result)
                return took
            return run

        def indexed(path: Path, result: Any) -> bool:
            return result.files == args.files and all(f.index_stored for f in Table.open(path).data_files())

        def spark_job(path: Path) -> Any:
            from paimon_schema import spark as ps_spark

            return ps_spark.rewrite_file_index(spark, str(path), INDEXES)

        python = timed(lambda path: ps.rewrite_file_index(path, INDEXES), indexed)
        delete = timed(lambda path: ps.delete_where(path, DELETE),
                       lambda path, result: read_arrow(path).num_rows == rows_kept
                       == args.rows - result.rows_deleted)

        runs: dict[str, Callable[[], float]] = {"rewrite_file_index (Python)": python}
        if spark is not None:
            runs["rewrite_file_index (Spark job)"] = timed(spark_job, indexed)
        runs["delete_where"] = delete
        times = {name: float("inf") for name in runs}
        for _ in range(args.repeat):                  # interleaved rounds, best of each
            for name, fn in runs.items():
                times[name] = min(times[name], fn())
        print(f"{args.rows:,} rows in {args.files} files; indexes {INDEXES}; delete {DELETE!r}")
        for name, seconds in times.items():
            print(f"  {name:32s} {seconds * 1000:9.0f} ms")
        if spark is not None:
            ratio = times["rewrite_file_index (Spark job)"] / times["rewrite_file_index (Python)"]
            print(f"  Spark job / Python: {ratio:.2f}x")


if __name__ == "__main__":
    main()
