"""Is our bitmap global index ≥ 5x faster than pypaimon 2.1.0's on the same 1M-row index?

Targets (issue #21): an `equal` and an `in` lookup (a cold reader each time: footer, index
block, one dictionary block per key, the bitmaps) and the build of the file (version 1, the
same bytes: checked), each at least 5x faster than pypaimon's `BitmapIndexReader` /
`BitmapIndexWriter`. 1M INT rows, 10k distinct values, 1 % nulls; ratios measured in one run,
contenders interleaved.

    python benchmarks/bitmap_global_index.py [--quick]
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np

from paimon_schema.layouts.bitmap_global_index import BitmapGlobalIndexReader, write_bitmap_global_index
from timing import best_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pypaimon_global_index import pypaimon_reader, pypaimon_write  # noqa: E402


def column(rows: int, distinct: int) -> list[int | None]:
    rng = np.random.default_rng(21)
    values: list[int | None] = (rng.integers(0, distinct, rows) * 7919 - 40_000_000).tolist()
    for row in rng.choice(rows, rows // 100, replace=False).tolist():
        values[row] = None
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k rows, fewer rounds")
    args = parser.parse_args()
    rows, repeat = (100_000, 2) if args.quick else (1_000_000, 3)
    values = column(rows, 10_000)
    probe = next(v for v in values if v is not None)
    probes = [v for v in values[:200] if v is not None][:10]

    built = best_of({"ours": lambda: write_bitmap_global_index("INT", values),
                     "pypaimon": lambda: pypaimon_write("INT", values, 16 * 1024)}, repeat)
    data = write_bitmap_global_index("INT", values)
    assert data == pypaimon_write("INT", values, 16 * 1024)[0], "not pypaimon's bytes"
    ours_rows = BitmapGlobalIndexReader.open(io.BytesIO(data), "INT").in_(probes)
    assert list(ours_rows) == list(pypaimon_reader("INT", data).visit_in(probes).results())

    equal = best_of({"ours": lambda: BitmapGlobalIndexReader.open(io.BytesIO(data), "INT").equal(probe),
                     "pypaimon": lambda: pypaimon_reader("INT", data).visit_equal(probe)}, repeat * 20)
    in_ = best_of({"ours": lambda: BitmapGlobalIndexReader.open(io.BytesIO(data), "INT").in_(probes),
                   "pypaimon": lambda: pypaimon_reader("INT", data).visit_in(probes)}, repeat * 10)
    print(f"bitmap global index, {rows:,} INT rows, 10k distinct, {len(data):,} bytes")
    for name, times in (("build", built), ("equal (cold reader)", equal), ("in, 10 keys (cold)", in_)):
        ratio = times["pypaimon"] / times["ours"]
        verdict = "OK" if ratio >= 5 else "below target"
        print(f"  {name:22s} ours {times['ours'] * 1e3:9.2f} ms  pypaimon {times['pypaimon'] * 1e3:9.2f} ms"
              f"  {ratio:6.1f}x  (target >= 5x: {verdict})")


if __name__ == "__main__":
    main()
