"""How much memory does a streaming scan hold, against a whole read into Arrow?

Target (issue 18): `Table.scan().to_batches()` consumed batch by batch peaks at most 1/4 of the
memory of `Table.scan().to_arrow()` on the 2M-row pipeline table, each read in a fresh
subprocess.

The table is the one `paimon-schema pipeline --rows 2000000 --keep DIR` leaves in
`DIR/demo.db/orders` (pass it with `--table`), or, by default, the same table written here the
same way without Spark: Paimon's own Java writes 2M rows (`id` BIGINT, `city` STRING, `amount`
DOUBLE, `day` STRING) in two partitions and two buckets, 256 kB target files, a bitmap index on
`city` and a bloom filter on `id`, then deletes every tenth row of every file
(`selfcheck.pipeline.write_table`'s table; Java's read of it is skipped).

Each contender runs in its own Python process, which imports the library, opens the table,
plans the scan (`scan.files()`) and reads one batch of another stream of the table (the first
read of a process maps pyarrow's Parquet reader and starts its thread pools: about 40 MiB of
RSS, the same for both, measured as 110 -> 150 MiB on a 200k-row table, after which a
streaming read of it adds 2 MiB); then it resets the kernel's peak-RSS mark
(`/proc/self/clear_refs`), notes its RSS, reads every row (the stream's batches are counted and
dropped) and reports the peak (`VmHWM`). Printed: both processes' peaks, what the read added to
each (peak minus the RSS before reading), and the ratios; the target is checked on what the
read added (the ratio of the whole peaks is printed too: the interpreter with pyarrow loaded,
the same in both, weighs on it).

    python benchmarks/table_scan_memory.py [--rows 2000000] [--table DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.25


def build(warehouse: Path, rows: int) -> Path:
    """The pipeline's table, written by Java (without the pipeline's Java read)."""
    from paimon_schema.selfcheck.pipeline import write_table

    return write_table(warehouse, rows, java_read=False)[0]


def _status(field: str) -> int:
    """A `/proc/self/status` memory field, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def measure(table_dir: str, how: str) -> dict[str, float]:
    """In this process: plan, reset the peak mark, read the table `how`, report the memory."""
    from paimon_schema.table import Table

    table = Table.open(table_dir)
    scan = table.scan()
    scan.files()                                          # manifests read, files planned
    warm_up = table.scan().to_batches()                   # pyarrow's reader mapped, pools started
    warm_up.read_next_batch()
    del warm_up
    Path("/proc/self/clear_refs").write_text("5")         # the peak RSS mark := current RSS
    before = _status("VmRSS")
    started = time.perf_counter()
    if how == "to_arrow":
        rows = scan.to_arrow().num_rows
    else:
        rows = 0
        for batch in scan.to_batches():
            rows += batch.num_rows
    seconds = time.perf_counter() - started
    peak = _status("VmHWM")
    return {"rows": rows, "before": before, "peak": peak, "added": peak - before,
            "seconds": seconds}


def run_child(table_dir: Path, how: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", how, str(table_dir)],
                         check=True, capture_output=True, text=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def bench(table_dir: Path) -> bool:
    from paimon_schema.table import Table

    files = Table.open(table_dir).data_files()
    size = sum(f.file_size for f in files)
    print(f"table: {table_dir}: {sum(f.row_count for f in files):,} rows in {len(files)} "
          f"Parquet files ({size / 2**20:.1f} MiB), {sum(1 for f in files if f.deletion_file)} "
          f"with deletion vectors")
    whole = run_child(table_dir, "to_arrow")
    stream = run_child(table_dir, "to_batches")
    assert whole["rows"] == stream["rows"], (whole, stream)
    for name, r in (("to_arrow()  ", whole), ("to_batches()", stream)):
        print(f"{name} {int(r['rows']):,} rows in {r['seconds']:.2f} s: peak RSS {mib(r['peak'])} "
              f"({mib(r['before'])} before the read, {mib(r['added'])} added by it)")
    added = stream["added"] / whole["added"]
    total = stream["peak"] / whole["peak"]
    ok = added <= TARGET
    print(f"streaming / whole: {added:.3f} of the memory the read adds "
          f"(target <= {TARGET}: {'PASS' if ok else 'FAIL'}); {total:.3f} of the whole peak RSS")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--table", type=Path, help="an existing table (e.g. the pipeline's)")
    parser.add_argument("--keep", type=Path, help="write the table into this warehouse, kept")
    parser.add_argument("--child", nargs=2, metavar=("HOW", "TABLE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child[1], args.child[0])))
        return 0
    if args.table is not None:
        return 0 if bench(args.table) else 1
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = args.keep or Path(tmp)
        started = time.perf_counter()
        path = build(warehouse, args.rows)
        print(f"Java wrote the table in {time.perf_counter() - started:.0f} s")
        return 0 if bench(path) else 1


if __name__ == "__main__":
    sys.exit(main())
