"""How long does `create_global_index` take on a 1M-row data-evolution table, against pypaimon's
own `create_global_index` (goal: >= 5x faster), and what does a read with the index skip?

The table: a data-evolution append table (`row-tracking.enabled`, `data-evolution.enabled`,
Parquet) of `--rows` rows in `--files` commits, written by pypaimon 2.1.0: `id` BIGINT, `k` INT
(100,000 distinct values), `c` STRING (50 distinct values). Timed, best of `--repeat`
interleaved runs, each on a fresh copy (the copy is not timed), from the table directory to the
committed snapshot: a btree index on `k` and a bitmap index on `c`, by pypaimon and by us. Our
files are checked to be pypaimon's bytes. Then `read_arrow(t, "k = 4242")` and
`read_arrow(t, "c = '7'")` with the btree and bitmap indexes, against the same reads of the
unindexed table (rows and files read printed).

    python benchmarks/global_index_table.py [--rows 1000000] [--files 4] [--repeat 1]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests"),
                str(Path(__file__).resolve().parents[1] / "tests" / "interop")]

from global_index_tables import index_files, write_table  # noqa: E402

import paimon_schema as ps  # noqa: E402
from paimon_schema.spark import read_arrow  # noqa: E402

INDEXES = (("k", "btree"), ("c", "bitmap"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    data = pa.table({"id": pa.array(np.arange(args.rows), pa.int64()),
                     "k": pa.array(rng.integers(0, 100_000, args.rows), pa.int32()),
                     "c": pa.array(rng.integers(0, 50, args.rows).astype(str))})
    with tempfile.TemporaryDirectory(prefix="global-index-bench-") as tmp:
        base = Path(tmp) / "base"
        write_table(base, data, batches=args.files)
        copies = iter(range(10**6))

        def fresh() -> Path:
            warehouse = Path(tmp) / f"copy{next(copies)}"
            shutil.copytree(base, warehouse)
            return warehouse

        def pypaimon(warehouse: Path, column: str, kind: str) -> None:
            from pypaimon import CatalogFactory
            from pypaimon.globalindex.create_global_index import create_global_index

            create_global_index(CatalogFactory.create({"warehouse": str(warehouse)}).get_table("db.t"),
                                column, kind)

        def ours(warehouse: Path, column: str, kind: str) -> None:
            ps.create_global_index(warehouse / "db.db" / "t", column, kind)

        print(f"{args.rows:,} rows in {args.files} data files")
        indexed = None
        for column, kind in INDEXES:
            best = {"pypaimon": float("inf"), "ours": float("inf")}
            outputs: dict[str, Path] = {}
            for _ in range(args.repeat):
                for name, build in (("pypaimon", pypaimon), ("ours", ours)):
                    warehouse = fresh()
                    start = time.perf_counter()
                    build(warehouse, column, kind)
                    best[name] = min(best[name], time.perf_counter() - start)
                    outputs[name] = warehouse
            assert [f.data for f in index_files(outputs["ours"])] == \
                [f.data for f in index_files(outputs["pypaimon"])], "not pypaimon's bytes"
            ratio = best["pypaimon"] / best["ours"]
            print(f"  {kind} on {column}: pypaimon {best['pypaimon'] * 1000:8.0f} ms, ours "
                  f"{best['ours'] * 1000:6.0f} ms, {ratio:.1f}x (goal >= 5x)")
            if indexed is None:
                indexed = outputs["ours"]
            else:
                ours(indexed, column, kind)
        assert indexed is not None
        for where in ("k = 4242", "c = '7'"):
            for label, warehouse in (("without", base), ("with", indexed)):
                start = time.perf_counter()
                rows, stats = read_arrow(warehouse / "db.db" / "t", where, with_stats=True)
                took = time.perf_counter() - start
                print(f"  read {where!r} {label} global indexes: {rows.num_rows:,} rows, "
                      f"{stats.files_read} of {stats.files} files read, "
                      f"{stats.rows - stats.rows_skipped:,} rows kept before the filter, {took * 1000:.0f} ms")


if __name__ == "__main__":
    main()
