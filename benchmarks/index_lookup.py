"""Do lookups stay cheap as an index grows, and how do range-bitmap and BSI compare?

Targets (issue #5):
- a point lookup (`open_index` + `equal`, a cold reader each time) in bitmap V2 and in
  range-bitmap costs at most 3x more at 1M distinct values than at 10k (indexes built with our
  writers): V2 reads one index block and one bitmap, range-bitmap one chunk and the slices.
  Both columns have the same 2M rows, so that only the number of distinct values changes: a
  range-bitmap lookup also reads every bit slice whole, which costs time linear in rows
  whatever the dictionary. For scale, the same ratio with rows = 2 x distinct (20k vs 2M rows)
  is printed too, without a verdict: there it mostly measures the row count;
- a range predicate over range-bitmap vs BSI at 1M rows, reported side by side (no target).

    python benchmarks/index_lookup.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import paimon_schema as ps
from timing import best


def column(rows: int, distinct: int, seed: int = 11) -> np.ndarray:
    """`rows` INT values taking exactly `distinct` values spread over the int range."""
    rng = np.random.default_rng(seed)
    domain = np.linspace(-2**30, 2**30, distinct, dtype=np.int64)
    values = np.concatenate([domain, domain[rng.integers(0, distinct, rows - distinct)]])
    rng.shuffle(values)
    return values


def lookup_cost(index_type: str, blob: bytes, probes: np.ndarray, repeat: int) -> float:
    """Mean cost of one cold point lookup (a fresh reader per probe)."""
    def run() -> None:
        for probe in probes:
            ps.open_index(index_type, blob, "INT").equal(int(probe))
    return best(run, repeat) / len(probes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k instead of 1M distinct values")
    args = parser.parse_args()
    large = 100_000 if args.quick else 1_000_000
    small = 10_000
    probes_per_run, repeat = 50, 5
    rng = np.random.default_rng(3)

    verdicts = []
    for design, rows_of in (("same rows", lambda d: 2 * large), ("rows = 2 x distinct", lambda d: 2 * d)):
        print(f"-- {design}")
        results: dict[str, dict[int, float]] = {"bitmap": {}, "range-bitmap": {}}
        for distinct in (small, large):
            values = column(rows_of(distinct), distinct)
            for index_type in results:
                start = time.perf_counter()
                options = {"version": 2} if index_type == "bitmap" else {}
                blob = ps.build_index(index_type, "INT", values, **options)
                built = time.perf_counter() - start
                probes = rng.choice(values, probes_per_run)
                results[index_type][distinct] = lookup_cost(index_type, blob, probes, repeat)
                print(f"{index_type:13} {distinct:>9,} distinct {len(values):>9,} rows  "
                      f"{len(blob) / 1e6:7.2f} MB  built in {built:6.2f} s  "
                      f"point lookup {results[index_type][distinct] * 1e3:7.3f} ms")
        for index_type, costs in results.items():
            ratio = costs[large] / costs[small]
            verdict = ""
            if design == "same rows":
                verdicts.append(ratio <= 3.0)
                verdict = f"(target <= 3x) {'PASS' if ratio <= 3.0 else 'FAIL'}"
            print(f"{index_type:13} lookup at {large:,} / at {small:,} distinct: {ratio:5.2f}x  "
                  f"{verdict}")

    values = column(large, large // 10)
    range_blob = ps.build_index("range-bitmap", "INT", values)
    bsi_blob = ps.build_index("bsi", "INT", values)
    pivot = int(np.median(values))
    range_s = best(lambda: ps.open_index("range-bitmap", range_blob, "INT").less_than(pivot), repeat)
    bsi_s = best(lambda: ps.open_index("bsi", bsi_blob, "INT").less_than(pivot), repeat)
    print(f"range predicate (< median) over {large:,} rows: range-bitmap {range_s * 1e3:.1f} ms, "
          f"bsi {bsi_s * 1e3:.1f} ms (bsi/range-bitmap {bsi_s / range_s:.2f}x)")
    print("targets:", "PASS" if all(verdicts) else "FAIL")


if __name__ == "__main__":
    main()
