"""Our index writers against Java's, from every input kind, in one run (issue 11, item 4).

Cases, over 1M rows each (`--rows`):
- bitmap V1 over INT columns with 1k, 100k and 1M distinct values;
- bitmap V1 over a STRING column with 10k distinct values;
- a bloom filter (items=1M, fpp=0.01) over a BIGINT column of 1M distinct values;
- BSI and range-bitmap over the 100k-distinct INT column: the Java jar
  (Paimon 1.0-SNAPSHOT from `paimon-python-ali`) has neither writer, so these two are timed
  from every input kind but left out of the Java verdict; their ratio is to our numpy build.

Each case is built from the column given as a Python list, a numpy array (strings: object
dtype), a pyarrow array and a pandas Series (default dtype), prepared before the clock starts.
Java (Paimon's own `FileIndexer` writers, `writeRecord` per boxed value) is measured fairly:
`--jvms` separate JVMs with a fixed, pre-touched heap (-Xms = -Xmx), each building every case
`--warmup` times untimed (JIT) and `--runs` times timed with `System.gc()` before each; Java's
time is the median over JVMs of each JVM's median. Java generates the same columns from the
same formulas (PaimonReference's `bench_index`), so no value crosses the process boundary;
every blob's SHA-256 is compared with Java's. Our builds run in turns with the JVMs (one round
of ours before each JVM, `--our-runs` timed builds per input kind after a warm-up build), each
after `gc.collect()`; our time is the median of all of them.

Row i (0-based) of a column with d distinct values has k = (i * 2654435761) mod d:
INT: k * s - d * s / 2 with s = (2^31 - 1) // d; STRING: "value-" + str(k);
BIGINT: i * 0x9E3779B97F4A7C15, wrapping.

Target: every case, from every input kind, at most 1.0x Java's time.

    python benchmarks/build_indexes.py [--rows 1000000] [--jvms 3] [--warmup 5] [--runs 5]
                                       [--our-runs 3] [--strict]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import paimon_schema as ps
from paimon_schema.layouts.column_values import column_values
from paimon_schema.values.types import DataType

TARGET = 1.0
MULTIPLIER = 2654435761
LONG_MULTIPLIER = 0x9E3779B97F4A7C15
KINDS = ("list", "numpy", "arrow", "pandas")


@dataclass
class Case:
    name: str
    index_type: str
    data_type: str
    column: dict[str, Any]            # Java's generator (PaimonReference.benchColumn)
    options: dict[str, Any]
    values: Callable[[], Any]         # the same column for us: a numpy array or a list of str
    java: bool = True                 # the jar has a writer for it
    times: dict[str, list[float]] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)


def int_column(rows: int, distinct: int) -> np.ndarray:
    k = (np.arange(rows, dtype=np.int64) * MULTIPLIER) % distinct
    scale = (2**31 - 1) // distinct
    return (k * scale - distinct * scale // 2).astype(np.int32)


def string_column(rows: int, distinct: int, prefix: str) -> list[str]:
    k = (np.arange(rows, dtype=np.int64) * MULTIPLIER) % distinct
    return [prefix + str(v) for v in k.tolist()]


def long_column(rows: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (np.arange(rows, dtype=np.uint64) * np.uint64(LONG_MULTIPLIER)).view(np.int64)


def cases(rows: int) -> list[Case]:
    out = [Case(f"bitmap v1 INT {d:,} distinct", "bitmap", "INT",
                {"kind": "int_mod", "rows": rows, "distinct": d}, {"version": 1},
                lambda d=d: int_column(rows, d))
           for d in (1_000, 100_000, 1_000_000)]
    out.append(Case("bitmap v1 STRING 10,000 distinct", "bitmap", "STRING",
                    {"kind": "string_mod", "rows": rows, "distinct": 10_000, "prefix": "value-"},
                    {"version": 1}, lambda: string_column(rows, 10_000, "value-")))
    out.append(Case("bloom BIGINT items=1M fpp=0.01", "bloom-filter", "BIGINT",
                    {"kind": "long_mul", "rows": rows}, {"items": 1_000_000, "fpp": 0.01},
                    lambda: long_column(rows)))
    out.append(Case("bsi INT 100,000 distinct (no Java writer)", "bsi", "INT", {}, {},
                    lambda: int_column(rows, 100_000), java=False))
    out.append(Case("range-bitmap INT 100,000 distinct (no Java)", "range-bitmap", "INT", {}, {},
                    lambda: int_column(rows, 100_000), java=False))
    return out


def inputs(values: Any) -> dict[str, Any]:
    """The column in every input kind we have the libraries for."""
    as_list = values.tolist() if isinstance(values, np.ndarray) else values
    out: dict[str, Any] = {"list": as_list,
                           "numpy": values if isinstance(values, np.ndarray)
                           else np.array(values, dtype=object)}
    try:
        import pyarrow as pa
        out["arrow"] = pa.array(values)
    except ImportError:
        pass
    try:
        import pandas as pd
        out["pandas"] = pd.Series(values)
    except ImportError:
        pass
    return out


def time_ours(case: Case, runs: int) -> None:
    """One round: every input kind, a warm-up build and `runs` timed ones, each after a full
    collection (as Java's each follow `System.gc()`)."""
    data_type = DataType.parse(case.data_type)
    for kind, values in inputs(case.values()).items():
        case.blobs[kind] = ps.build_index(case.index_type, case.data_type, values, **case.options)
        for _ in range(runs):
            gc.collect()
            start = time.perf_counter()
            ps.build_index(case.index_type, case.data_type, values, **case.options)
            case.times.setdefault(kind, []).append(time.perf_counter() - start)
            if kind == "list":          # the step a list adds: typing its values in bulk
                start = time.perf_counter()
                column_values(data_type, values)
                case.times.setdefault("list typing", []).append(time.perf_counter() - start)


def java_key(case: Case) -> tuple[str, ...]:
    return case.index_type, case.data_type, repr(case.column), repr(case.options)


def run_jvm(reference: Any, selected: list[Case], warmup: int, runs: int) -> dict[tuple[str, ...], dict[str, Any]]:
    """One JVM over every case the jar can write."""
    from paimon_schema.selfcheck.reference.java import bench_index_request, run_benchmark

    unique = {java_key(c): c for c in selected if c.java}
    requests = [bench_index_request(c.index_type, c.data_type, c.column, warmup, runs, **c.options)
                for c in unique.values()]
    return dict(zip(unique, run_benchmark(reference, requests)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--jvms", type=int, default=3, help="separate JVMs (median over them)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed builds per case per JVM")
    parser.add_argument("--runs", type=int, default=5, help="timed builds per case per JVM")
    parser.add_argument("--our-runs", type=int, default=3,
                        help="our timed builds per case and input kind in each round")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a case misses the target")
    args = parser.parse_args(argv)

    from paimon_schema.selfcheck.reference import JavaReference, ReferenceUnavailable
    try:
        reference = JavaReference.get()
    except ReferenceUnavailable as exc:
        print(f"the Java reference is unavailable: {exc}", file=sys.stderr)
        return 2

    from paimon_schema.selfcheck.reference.java import BENCH_JVM_FLAGS
    selected = cases(args.rows)
    print(f"{args.rows:,} rows per case. Java: Paimon {reference.version}, {args.jvms} JVMs "
          f"({' '.join(BENCH_JVM_FLAGS)}), {args.warmup} warm-up + {args.runs} timed builds per "
          f"case each, System.gc() before each timed one; median of the JVMs' medians. Ours: "
          f"{args.jvms} rounds between the JVMs, {args.our_runs} timed builds per input kind each "
          f"after gc.collect(); median of all.")
    java_medians: dict[tuple[str, ...], list[float]] = {}
    java_blobs: dict[tuple[str, ...], tuple[str, int]] = {}
    for jvm in range(args.jvms):
        for case in selected:
            time_ours(case, args.our_runs)
        started = time.perf_counter()
        for key, answer in run_jvm(reference, selected, args.warmup, args.runs).items():
            java_medians.setdefault(key, []).append(answer["median_ns"] / 1e9)
            java_blobs[key] = (answer["sha256"], answer["length"])
        print(f"(JVM {jvm + 1}: {time.perf_counter() - started:.1f} s)")

    failed = total = 0
    print(f"\n{'case':<44} {'input':<7} {'ours ms':>9} {'Java ms':>9} {'ratio':>6}  bytes   verdict")
    for case in selected:
        key = java_key(case)
        baseline = statistics.median(case.times["numpy"])
        for kind, times in case.times.items():
            if kind == "list typing":
                continue
            ours = statistics.median(times)
            if not case.java:
                same = case.blobs[kind] == case.blobs["numpy"]
                print(f"{case.name:<44} {kind:<7} {ours * 1e3:9.1f} {'-':>9} {ours / baseline:6.2f}  "
                      f"{'equal' if same else 'DIFFER':<7} {'(vs our numpy)' if same else 'FAIL'}")
                failed += not same
                total += 1
                continue
            java = statistics.median(java_medians[key])
            sha, length = java_blobs[key]
            same = hashlib.sha256(case.blobs[kind]).hexdigest() == sha and len(case.blobs[kind]) == length
            ok = ours <= TARGET * java and same
            failed += not ok
            total += 1
            print(f"{case.name:<44} {kind:<7} {ours * 1e3:9.1f} {java * 1e3:9.1f} {ours / java:6.2f}  "
                  f"{'equal' if same else 'DIFFER':<7} {'PASS' if ok else 'FAIL'}")
    print("\nA list's extra step, typing its values in bulk (column_values: one C pass checking each"
          " value's exact type; strings numbered by first occurrence), against Java's whole build:")
    for case in selected:
        if case.java:
            typing = statistics.median(case.times["list typing"])
            java = statistics.median(java_medians[java_key(case)])
            print(f"  {case.name:<42} typing {typing * 1e3:7.1f} ms = {typing / java:5.2f}x Java; "
                  f"+ the numpy build {statistics.median(case.times['numpy']) * 1e3:7.1f} ms")
    print("\nJava's per-JVM medians (ms): " + "; ".join(
        f"{c.name}: {', '.join(f'{t * 1e3:.1f}' for t in java_medians[java_key(c)])}"
        for c in selected if c.java))
    print(f"target: at most {TARGET:.1f}x Java's time, blobs SHA-256-equal to Java's "
          f"(no-Java cases: equal across input kinds); {total - failed} of {total} pass")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
