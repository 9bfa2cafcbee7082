"""How does planning scale with the table, against pypaimon-rust's planning of the same table?

Targets (issue 19, item 4): planning a scan (open the table, list the live files of the latest
snapshot, prune them with a partition + file-index filter) grows linearly with the number of
data files (the 100k-file table plans in at most 12x the 10k-file table's time), stays below
pypaimon-rust 0.4.0's planning of the same table and filter, and the per-process snapshot
cache keeps memory bounded.

The tables (`tests/spark/forged_history.py`): append tables of 1k, 10k and 100k live data
files, daily partitions (`dt`, one per 100 files), one APPEND commit per partition and a
COMPACT commit (8 files of an older partition replaced by 2) every 4th, so a few hundred to
1,250 snapshots; Paimon's manifest merging (a full rewrite once the base holds 30 manifests), so
the latest snapshot's fold reads the merged manifests plus up to 30 deltas of ADD and DELETE
entries. Each entry carries value statistics (`id`, `city`, `amount`) and an embedded file
index (a bitmap on `city`). Only the metadata is written: no data file exists (planning never
opens one; pypaimon-rust's neither), which keeps the 100k table to a couple of minutes to forge.

The filter: `dt >= <the last quarter of the days> AND city = 'Lima'`: the partitions prune 3/4
of the files, the statistics and the bitmap indexes most of the rest. pypaimon-rust prunes by
partition and statistics but reads no file index, so it plans more files; its planning is
what is timed, with the same filter (`with_filter`), through its own API
(`PaimonCatalog.get_table(...).new_read_builder().with_filter(...).new_scan().plan()`).

Each contender runs in a fresh process per round (so the first plan is cold: no cache), both
in turn, `--repeat` rounds; per process, after a first plan of the table's first snapshot (a
few files: imports and first calls, not timed):

- ours: `Table.open(path).scan(where).files()`: cold (manifests read and folded, the snapshot
  cached, then pruned), then again, warm (the cached snapshot, pruning only); then
  `Table.data_files()` of the same snapshot (warm) and the peak RSS the plan added;
- pypaimon-rust: the same plan three times (it keeps no cache: each plan reads the manifests);
  the unfiltered plan; the peak RSS it added.

Times are the medians over rounds of the process CPU time (a shared 2-core machine's load
disturbs CPU time less than wall time; pypaimon-rust plans on one thread here, checked by
comparing its wall and CPU time, both printed) and the wall time. The cold ratio is the median
of the rounds' own ratios (a round runs ours and pypaimon-rust back to back, under the same
load), printed with their range and the ratio of the medians. A separate process per size
runs ours under `tracemalloc`: the peak of Python allocations during a cold plan and what stays
allocated after it (the cache), and what stays after planning the latest 3 snapshots one
after another (time travel): bounded by the cache's budget, not by the snapshots planned.
`--pypaimon` adds pypaimon 2.1.0's Python planner (`new_scan().plan()`) for scale.

    python benchmarks/table_plan.py [--sizes 1000,10000,100000] [--repeat 3] [--keep DIR]
                                    [--pypaimon]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "spark"))

GROWTH_TARGET = 12.0
FILES_PER_PARTITION = 100
DATABASE = "plan"


def table_name(files: int) -> str:
    return f"t{files}"


def forge(warehouse: Path, files: int) -> tuple[Path, int, dict[str, Any]]:
    """The table of `files` live files (written unless already there), its partition count and
    what the forge wrote."""
    from forged_history import write_history

    partitions = max(10, files // FILES_PER_PARTITION)
    root = warehouse / f"{DATABASE}.db" / table_name(files)
    info_path = root.parent / f"{table_name(files)}.json"
    if not info_path.exists():
        started = time.perf_counter()
        history = write_history(root, files, partitions=partitions)
        info = {"snapshots": history.snapshots, "entries": history.entries,
                "forge_seconds": time.perf_counter() - started}
        info_path.write_text(json.dumps(info))
    return root, partitions, json.loads(info_path.read_text())


def where_text(partitions: int) -> tuple[str, str]:
    from forged_history import day

    first = day(partitions * 3 // 4)
    return first, f"dt >= '{first}' AND city = 'Lima'"


# ------------------------------------------------------------------------------ children

def _rss_kib() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in KiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines()
                  if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def _timed(fn: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def child_ours(root: str, partitions: int) -> dict[str, Any]:
    from paimon_schema.table import Table

    _, where = where_text(partitions)

    def plan(snapshot: int | None = None) -> tuple[int, int]:
        scan = Table.open(root).scan(where, snapshot=snapshot)
        return len(scan.files()), scan.stats.files

    plan(1)                 # imports and first calls, on the first snapshot (a few files)
    before, _ = _rss_kib()
    cold = _timed(plan)
    _, peak = _rss_kib()
    warm = [_timed(plan) for _ in range(3)]
    listed = _timed(lambda: len(Table.open(root).data_files()))
    return {"cold": cold[:2], "warm": [statistics.median(t[i] for t in warm) for i in (0, 1)],
            "list": listed[:2], "kept": cold[2][0], "live": cold[2][1], "listed": listed[2],
            "rss_added_mib": (peak - before) / 1024}


def child_trace(root: str, partitions: int) -> dict[str, Any]:
    import tracemalloc

    from paimon_schema.table import Table

    _, where = where_text(partitions)
    table = Table.open(root)
    latest = table.latest_snapshot_id()
    assert latest is not None
    tracemalloc.start()
    table.scan(where).files()
    retained, peak = tracemalloc.get_traced_memory()
    for snapshot in range(latest - 2, latest + 1):
        table.scan(where, snapshot=snapshot).files()
    after_history, _ = tracemalloc.get_traced_memory()
    return {"peak_mib": peak / 2**20, "retained_mib": retained / 2**20,
            "retained_after_3_mib": after_history / 2**20}


def _rust_filter(partitions: int) -> dict[str, Any]:
    first, _ = where_text(partitions)
    return {"method": "and", "children": [
        {"method": "greaterOrEqual", "field": "dt", "literals": [first]},
        {"method": "equal", "field": "city", "literals": ["Lima"]}]}


def child_rust(warehouse: str, files: int, partitions: int) -> dict[str, Any]:
    from pypaimon_rust.datafusion import PaimonCatalog

    predicate = _rust_filter(partitions)

    def plan(filtered: bool = True, options: dict[str, str] | None = None) -> int:
        catalog = PaimonCatalog({"warehouse": warehouse, "metastore": "filesystem"})
        builder = catalog.get_table((DATABASE, table_name(files))).new_read_builder(options)
        if filtered:
            builder = builder.with_filter(predicate)
        return sum(len(split_files(s)) for s in builder.new_scan().plan().splits())

    plan(options={"scan.snapshot-id": "1"})     # as ours: first calls on the first snapshot
    before, _ = _rss_kib()
    cold = _timed(plan)
    _, peak = _rss_kib()
    warm = [_timed(plan) for _ in range(3)]
    listed = _timed(lambda: plan(False))
    return {"cold": cold[:2], "warm": [statistics.median(t[i] for t in warm) for i in (0, 1)],
            "list": listed[:2], "kept": cold[2], "listed": listed[2],
            "rss_added_mib": (peak - before) / 1024}


def split_files(split: Any) -> list[int]:
    """The data files of a pypaimon-rust split (its row count is 16 rows a forged file)."""
    from forged_history import ROWS

    return [0] * (split.row_count() // ROWS)


def child_pypaimon(warehouse: str, files: int, partitions: int) -> dict[str, Any]:
    from pypaimon import CatalogFactory

    first, _ = where_text(partitions)

    def plan() -> int:
        table = CatalogFactory.create({"warehouse": warehouse}).get_table(
            f"{DATABASE}.{table_name(files)}")
        builder = table.new_read_builder()
        p = builder.new_predicate_builder()
        builder = builder.with_filter(p.and_predicates([p.greater_or_equal("dt", first),
                                                        p.equal("city", "Lima")]))
        return sum(len(s.files) for s in builder.new_scan().plan().splits())

    cold = _timed(plan)
    return {"cold": cold[:2], "kept": cold[2]}


def run_child(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--child", *args], check=True,
                         capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------------------ the run

def measure(warehouse: Path, files: int, repeat: int, pypaimon: bool) -> dict[str, Any]:
    root, partitions, info = forge(warehouse, files)
    ours, rust = [], []
    for _ in range(repeat):
        ours.append(run_child("ours", str(root), str(partitions)))
        rust.append(run_child("rust", str(warehouse), str(files), str(partitions)))
    trace = run_child("trace", str(root), str(partitions))
    result = {"files": files, "partitions": partitions, **info, "trace": trace,
              "ours": _medians(ours), "rust": _medians(rust),
              "paired": sorted(o["cold"][1] / t["cold"][1] for o, t in zip(ours, rust))}
    if pypaimon:
        result["pypaimon"] = run_child("pypaimon", str(warehouse), str(files), str(partitions))
    assert result["ours"]["listed"] == files and result["rust"]["listed"] == files, result
    return result


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(runs[0])
    for key in ("cold", "warm", "list"):
        out[key] = [statistics.median(r[key][i] for r in runs) for i in (0, 1)]
    out["rss_added_mib"] = statistics.median(r["rss_added_mib"] for r in runs)
    return out


def report(results: list[dict[str, Any]]) -> bool:
    print(f"{'files':>7} {'parts':>5} {'snaps':>5} {'entries':>7} | "
          f"{'ours cold':>15} {'warm':>7} {'list':>7} {'kept':>5} | "
          f"{'rust cold':>15} {'warm':>7} {'list':>7} {'kept':>5} | {'ours/rust':>9} | "
          f"{'RSS+ ours':>9} {'rust':>6} | {'traced peak':>11} {'kept':>6} {'after 3':>7}")
    ms = lambda seconds: f"{seconds * 1000:7.1f}"      # noqa: E731
    for r in results:
        o, t, tr = r["ours"], r["rust"], r["trace"]
        print(f"{r['files']:>7} {r['partitions']:>5} {r['snapshots']:>5} {r['entries']:>7} | "
              f"{ms(o['cold'][1])} ({ms(o['cold'][0]).strip():>5}) {ms(o['warm'][1])} "
              f"{ms(o['list'][1])} {o['kept']:>5} | "
              f"{ms(t['cold'][1])} ({ms(t['cold'][0]).strip():>5}) {ms(t['warm'][1])} "
              f"{ms(t['list'][1])} {t['kept']:>5} | {o['cold'][1] / t['cold'][1]:9.2f} | "
              f"{o['rss_added_mib']:8.1f}M {t['rss_added_mib']:5.1f}M | "
              f"{tr['peak_mib']:10.1f}M {tr['retained_mib']:5.1f}M {tr['retained_after_3_mib']:6.1f}M")
        if "pypaimon" in r:
            p = r["pypaimon"]
            print(f"{'':>7} pypaimon 2.1.0 (Python planner): cold {ms(p['cold'][1]).strip()} ms CPU "
                  f"({ms(p['cold'][0]).strip()} ms wall), {p['kept']} files kept")
    print("(times in ms: CPU, wall in brackets; cold = first plan of a process, "
          "warm = the cached snapshot; kept = files the plan keeps)")
    ok = True
    by_size = {r["files"]: r for r in results}
    for small, big in zip(sorted(by_size), sorted(by_size)[1:]):
        for kind in ("cold", "warm"):
            ratio = by_size[big]["ours"][kind][1] / by_size[small]["ours"][kind][1]
            rust = by_size[big]["rust"][kind][1] / by_size[small]["rust"][kind][1]
            target = GROWTH_TARGET * big / small / 10
            met = ratio <= target
            ok &= met
            print(f"growth {big}/{small} files, {kind}: ours {ratio:5.2f}x "
                  f"(target <= {target:.0f}x: {'met' if met else 'NOT met'}), "
                  f"pypaimon-rust {rust:5.2f}x")
    for r in results:
        for kind in ("cold", "warm"):
            ratio = r["ours"][kind][1] / r["rust"]["cold"][1]
            paired = ""
            if kind == "cold":          # (judged by the rounds' own ratios: a round's two
                rounds = r["paired"]     # processes run back to back, under the same load)
                ratio = statistics.median(rounds)
                paired = f" (median of the rounds' ratios, {rounds[0]:.2f}-{rounds[-1]:.2f}; " \
                         f"of the medians {r['ours'][kind][1] / r['rust']['cold'][1]:.2f})"
            met = ratio < 1
            ok &= met
            print(f"{r['files']} files, ours {kind} / pypaimon-rust: {ratio:5.2f}{paired} "
                  f"(target < 1: {'met' if met else 'NOT met'})")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="forge the tables there (and reuse them)")
    parser.add_argument("--pypaimon", action="store_true", help="also pypaimon's Python planner")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "ours":
            print(json.dumps(child_ours(rest[0], int(rest[1]))))
        elif kind == "trace":
            print(json.dumps(child_trace(rest[0], int(rest[1]))))
        elif kind == "rust":
            print(json.dumps(child_rust(rest[0], int(rest[1]), int(rest[2]))))
        else:
            print(json.dumps(child_pypaimon(rest[0], int(rest[1]), int(rest[2]))))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the start")
    with tempfile.TemporaryDirectory() as scratch:
        warehouse = args.keep or Path(scratch)
        results = []
        for files in sizes:
            results.append(measure(warehouse, files, args.repeat, args.pypaimon))
            r = results[-1]
            print(f"  {files} files: forged in {r['forge_seconds']:.0f} s (or reused), "
                  f"measured", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    report(results)


if __name__ == "__main__":
    main()
