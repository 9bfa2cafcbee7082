"""Our index writers against Java's, in one run (issue 4's writer benchmark).

Builds, over 1M rows each:
- bitmap V1 over INT columns with 1k, 100k and 1M distinct values;
- bitmap V1 over a STRING column with 10k distinct values;
- a bloom filter (items=1M, fpp=0.01) over a BIGINT column of 1M distinct values;
then the same in the Java jar (Paimon's own `FileIndexer` writers) in one JVM with the full
tiered JIT: every case is built `--java-iterations` times and the best of the last 5 counts
(JIT warmed). Java generates the same columns from the same formulas (PaimonReference's
`bench_index`), so no value crosses the process boundary; the blobs' SHA-256 are compared.

Row i (0-based) of a column with d distinct values has k = (i * 2654435761) mod d:
INT: k * s - d * s / 2 with s = (2^31 - 1) // d; STRING: "value-" + str(k);
BIGINT: i * 0x9E3779B97F4A7C15, wrapping.

Our side takes the columns as a numpy array (INT, BIGINT) and a list of str (STRING), the
best of `--repeat` builds before and `--repeat` after the JVM run; `--lists` adds the INT cases from plain lists of ints. Target: at
most 2x Java's time in every case.

    python benchmarks/build_indexes.py [--rows 1000000] [--repeat 5] [--java-iterations 12]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import paimon_schema as ps

TARGET = 2.0
MULTIPLIER = 2654435761
LONG_MULTIPLIER = 0x9E3779B97F4A7C15


@dataclass
class Case:
    name: str
    index_type: str
    data_type: str
    column: dict[str, Any]            # Java's generator (PaimonReference.benchColumn)
    options: dict[str, Any]
    values: Callable[[], Any]         # the same column for us
    as_list: bool = False


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


def cases(rows: int, lists: bool) -> list[Case]:
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
    if lists:
        out += [Case(f"bitmap v1 INT {d:,} distinct (list)", "bitmap", "INT",
                     {"kind": "int_mod", "rows": rows, "distinct": d}, {"version": 1},
                     lambda d=d: int_column(rows, d).tolist(), as_list=True)
                for d in (1_000, 100_000, 1_000_000)]
    return out


def ours(case: Case, repeat: int) -> tuple[float, bytes]:
    values = case.values()
    times, blob = [], b""
    for _ in range(repeat):
        start = time.perf_counter()
        blob = ps.build_index(case.index_type, case.data_type, values, **case.options)
        times.append(time.perf_counter() - start)
    return min(times), blob


def java_key(case: Case) -> tuple[str, ...]:
    """Cases that differ only in how our input is given share one Java measurement."""
    return case.index_type, case.data_type, repr(case.column), repr(case.options)


def java(reference: Any, selected: list[Case], iterations: int) -> dict[tuple[str, ...], dict[str, Any]]:
    from paimon_schema.selfcheck.reference.java import bench_index_request, run_benchmark

    unique = {java_key(c): c for c in selected}
    requests = [bench_index_request(c.index_type, c.data_type, c.column, iterations, **c.options)
                for c in unique.values()]
    return dict(zip(unique, run_benchmark(reference, requests)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="our builds per case (best counts)")
    parser.add_argument("--java-iterations", type=int, default=12,
                        help="Java builds per case in one JVM (best of the last 5 counts)")
    parser.add_argument("--lists", action="store_true", help="also time INT columns given as lists")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a case misses the target")
    args = parser.parse_args(argv)

    from paimon_schema.selfcheck.reference import JavaReference, ReferenceUnavailable
    try:
        reference = JavaReference.get()
    except ReferenceUnavailable as exc:
        print(f"the Java reference is unavailable: {exc}", file=sys.stderr)
        return 2

    selected = cases(args.rows, args.lists)
    print(f"{args.rows:,} rows per case; Java: Paimon {reference.version}, {args.java_iterations} "
          f"builds per case in one JVM, best of the last 5; ours: best of {args.repeat} builds "
          f"before and {args.repeat} after the JVM run (the machine's load varies)")
    before = [ours(case, args.repeat) for case in selected]
    started = time.perf_counter()
    java_times = java(reference, selected, args.java_iterations)
    print(f"(Java run: {time.perf_counter() - started:.1f} s)")

    failed = 0
    print(f"{'case':<42} {'ours ms':>9} {'Java ms':>9} {'ratio':>6}  bytes   verdict")
    for case, (first, blob) in zip(selected, before):
        seconds = min(first, ours(case, args.repeat)[0])
        answer = java_times[java_key(case)]
        java_seconds = answer["best_ns"] / 1e9
        same = hashlib.sha256(blob).hexdigest() == answer["sha256"] and len(blob) == answer["length"]
        ratio = seconds / java_seconds
        ok = ratio <= TARGET and same
        failed += not ok
        print(f"{case.name:<42} {seconds * 1e3:9.1f} {java_seconds * 1e3:9.1f} {ratio:6.2f}  "
              f"{'equal' if same else 'DIFFER'}   {'PASS' if ok else 'FAIL'}")
    print(f"target: at most {TARGET:.0f}x Java's time; {len(selected) - failed} of {len(selected)} pass")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
