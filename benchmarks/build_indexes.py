"""Our index writers against Java's, from every input kind, in one run (issue 11, item 4).

Cases, over 1M rows each (`--rows`):
- bitmap V1 over INT columns with 1k, 100k and 1M distinct values;
- bitmap V1 over a STRING column with 10k distinct values;
- a bloom filter (items=1M, fpp=0.01) over a BIGINT column of 1M distinct values;
- bitmap V2, BSI and range-bitmap over the 100k-distinct INT column and over 1M random
  BIGINTs (with bitmap V1 over those): the Java jar (Paimon 1.0-SNAPSHOT from
  `paimon-python-ali`) has no BSI or range-bitmap writer (and these are not Java's bar), so
  these are timed from every input kind and judged against our bitmap V1 build of the same
  column from the same input kind (issue 19, item 2: no slower than it).

`--vs-v1` measures item 2 of issue 19 over the grid below, with no JVM: per column (type x
shape x distinct values x input kind), our bitmap V1, bitmap V2, BSI (INT, BIGINT) and
range-bitmap builds, interleaved run by run in one process, each judged against the V1 build
of the same column and input (target <= 1.0x; `--aim`, 0.9 by default, is the margin asked
for under load); `--cpu` times each build's thread CPU instead of the wall clock, which a
machine shared with other processes inflates unevenly. Defaults: INT, BIGINT and STRING. A
control column, V1 built again in the same turns, shows the run's noise: V2 does V1's work
plus its index blocks, so its ratio is read against the control's, not against 1.0 alone.

`--grid` adds the grid of shapes tables hold (issue 19, item 1): random, sorted, cyclic
(row i = i % d), clustered (runs of random length and key), Zipf-skewed, all-distinct and
90 % NULL, over INT, BIGINT, STRING, DOUBLE and TIMESTAMP, with d in {10, 1k, 100k} distinct
values (`--types`, `--shapes`, `--distinct` select), for bitmap V1 and bloom (items = rows,
fpp 0.01) against Java: each column is written to a file that Java reads and boxes before
its clock starts (`bench_index` kind "file"), so both build the same values.

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

Both sides clock each build twice: the wall clock, and the building thread's CPU time (ours
`time.thread_time()`, Java's `ThreadMXBean.getCurrentThreadCpuTime()`), which a machine
shared with other processes inflates far less (a 15 ms build waits for a core now and then;
under load Java's own medians of one case varied 5x between runs). Both ratios are printed;
the verdict is by the wall clock, or by thread CPU with `--cpu`. Java's thread CPU leaves
out its collector threads: the run prints how many collections Java's timed builds ran (0:
the CPU clock missed no collector work); its JIT has compiled the build in the warm-up.

Row i (0-based) of a column with d distinct values has k = (i * 2654435761) mod d:
INT: k * s - d * s / 2 with s = (2^31 - 1) // d; STRING: "value-" + str(k);
BIGINT: i * 0x9E3779B97F4A7C15, wrapping.

Target: every case, from every input kind, at most 1.0x Java's time.

    python benchmarks/build_indexes.py [--rows 1000000] [--jvms 3] [--warmup 5] [--runs 5]
                                       [--our-runs 3] [--strict] [--cpu] [--cases SUBSTRING ...]
                                       [--inputs list,numpy,arrow,pandas]
                                       [--grid [--types INT,...] [--shapes sorted,...]
                                        [--distinct 10,1000,...] [--no-default]]
    python benchmarks/build_indexes.py --vs-v1 [--rows 1000000] [--our-runs 5] [--cpu] [--aim 0.9]
                                       [--types INT,BIGINT,STRING] [--shapes ...] [--distinct ...]
                                       [--inputs list,numpy,arrow,pandas] [--strict]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import math
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
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
    baseline: str | None = None       # no Java: the name of our case it is judged against
    inputs: Callable[[], dict[str, Any]] | None = None    # the input kinds (default: `inputs`)
    times: dict[str, list[float]] = field(default_factory=dict)           # wall clock, per input kind
    cpu_times: dict[str, list[float]] = field(default_factory=dict)       # thread CPU, per input kind
    blobs: dict[str, tuple[str, int]] = field(default_factory=dict)     # per input kind: SHA-256, length


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
    int_100k = "bitmap v1 INT 100,000 distinct"
    out.append(Case("bitmap v2 INT 100,000 distinct", "bitmap", "INT", {}, {"version": 2},
                    lambda: int_column(rows, 100_000), java=False, baseline=int_100k))
    out.append(Case("bsi INT 100,000 distinct", "bsi", "INT", {}, {},
                    lambda: int_column(rows, 100_000), java=False, baseline=int_100k))
    out.append(Case("range-bitmap INT 100,000 distinct", "range-bitmap", "INT", {}, {},
                    lambda: int_column(rows, 100_000), java=False, baseline=int_100k))
    out.append(Case("bitmap v1 BIGINT random", "bitmap", "BIGINT", {}, {"version": 1},
                    lambda: random_longs(rows), java=False))
    for name, index_type, options in (("bitmap v2", "bitmap", {"version": 2}), ("bsi", "bsi", {}),
                                      ("range-bitmap", "range-bitmap", {})):
        out.append(Case(f"{name} BIGINT random", index_type, "BIGINT", {}, options,
                        lambda: random_longs(rows), java=False, baseline="bitmap v1 BIGINT random"))
    return out


def random_longs(rows: int) -> np.ndarray:
    return np.random.default_rng(19).integers(-2**62, 2**62, rows, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# The grid (--grid): shapes x types x distinct values, bitmap V1 and bloom against Java

SHAPES = ("random", "sorted", "cyclic", "clustered", "zipf", "distinct", "null90")
GRID_TYPES = ("INT", "BIGINT", "STRING", "DOUBLE", "TIMESTAMP")
GRID_DISTINCT = (10, 1_000, 100_000)
_EPOCH_US = 1_700_000_000_000_000


def shaped_keys(shape: str, rows: int, distinct: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Keys in [0, distinct) per row (all-distinct: a permutation of the rows) and the
    validity (None: no NULL)."""
    rng = np.random.default_rng(distinct * 31 + len(shape))
    valid = None
    if shape == "sorted":
        keys = np.sort(rng.integers(0, distinct, rows))
    elif shape == "cyclic":
        keys = np.arange(rows) % distinct
    elif shape == "clustered":        # runs of mean length rows / distinct / 4, random keys
        mean = max(2, rows // distinct // 4)
        lengths = rng.integers(1, 2 * mean, rows // mean + 2)
        keys = np.repeat(rng.integers(0, distinct, len(lengths)), lengths)[:rows]
        if len(keys) < rows:
            keys = np.concatenate([keys, rng.integers(0, distinct, rows - len(keys))])
    elif shape == "zipf":
        keys = (rng.zipf(1.2, rows) - 1) % distinct
    elif shape == "distinct":
        keys = rng.permutation(rows)
    else:
        keys = rng.integers(0, distinct, rows)
        if shape == "null90":
            valid = rng.random(rows) >= 0.9
    return keys.astype(np.int64), valid


def typed(data_type: str, keys: np.ndarray) -> np.ndarray | list[str]:
    """The column's values for its keys: a numpy array, or a list for STRING."""
    if data_type == "INT":
        return (keys - 50_000).astype(np.int32)
    if data_type == "BIGINT":
        return keys * 1_000_003 - 2**40
    if data_type == "DOUBLE":
        return keys * 0.5 - 1.25
    if data_type == "TIMESTAMP":
        return (keys * 1_000_003 + _EPOCH_US).astype("datetime64[us]")
    return ["v" + str(k) for k in keys.tolist()]


def grid_inputs(data_type: str, keys: np.ndarray, valid: np.ndarray | None) -> dict[str, Any]:
    """The column as a list (datetimes for TIMESTAMP, None for NULL), a numpy array (masked,
    NaT or object None for NULL), a pyarrow array and a pandas Series (nullable dtypes)."""
    values = typed(data_type, keys)
    mask = None if valid is None else ~valid
    as_list = values.tolist() if isinstance(values, np.ndarray) else list(values)
    if mask is not None:
        as_list = [None if m else v for v, m in zip(as_list, mask.tolist())]
    out: dict[str, Any] = {"list": as_list}
    if isinstance(values, list):
        out["numpy"] = np.array(as_list, dtype=object)
    elif data_type == "TIMESTAMP":
        out["numpy"] = values if mask is None else np.where(mask, np.datetime64("NaT", "us"), values)
    else:
        out["numpy"] = values if mask is None else np.ma.masked_array(values, mask=mask)
    try:
        import pyarrow as pa
        out["arrow"] = pa.array(as_list) if isinstance(values, list) else pa.array(values, mask=mask)
    except ImportError:
        pass
    try:
        import pandas as pd
        if isinstance(values, list) or data_type == "TIMESTAMP":
            out["pandas"] = pd.Series(out["numpy"] if data_type == "TIMESTAMP" else as_list)
        else:
            nullable = {"INT": "Int32", "BIGINT": "Int64", "DOUBLE": "Float64"}[data_type]
            out["pandas"] = pd.Series(pd.array(values, dtype=nullable)) if mask is None \
                else pd.Series(pd.array(as_list, dtype=nullable))
    except ImportError:
        pass
    return out


def java_file(directory: Path, name: str, data_type: str, keys: np.ndarray, valid: np.ndarray | None,
              rows: int) -> dict[str, Any]:
    """Writes the column for Java (`bench_index` kind "file"); returns the column spec."""
    values = typed(data_type, keys)
    path = directory / f"{name}.values"
    if isinstance(values, list):
        path.write_bytes("\n".join(values).encode())
        kind = "string"
    else:
        kind = {"INT": "int", "BIGINT": "long", "DOUBLE": "double", "TIMESTAMP": "timestamp_micros"}[data_type]
        bits = values.astype(np.int64) if data_type == "TIMESTAMP" else values.astype(
            np.float64 if data_type == "DOUBLE" else np.int64)
        path.write_bytes(bits.astype(bits.dtype.newbyteorder("<")).tobytes())
    spec: dict[str, Any] = {"kind": "file", "rows": rows, "path": str(path), "value": kind}
    if valid is not None:
        nulls = directory / f"{name}.nulls"
        nulls.write_bytes((~valid).astype(np.uint8).tobytes())
        spec["nulls"] = str(nulls)
    return spec


def grid_cases(rows: int, directory: Path, types: list[str], shapes: list[str], distincts: list[int],
               wanted: Callable[[str], bool]) -> list[Case]:
    """The grid's cases whose name is `wanted`, each column written for Java once."""
    out = []
    for data_type in types:
        for shape in shapes:
            for distinct in distincts if shape != "distinct" else [rows]:
                label = f"{data_type} {shape}" + (f" d={distinct:,}" if shape != "distinct" else "")
                names = [n for n in (f"bitmap v1 {label}", f"bloom {label}") if wanted(n)]
                if not names:
                    continue
                keys, valid = shaped_keys(shape, rows, distinct)
                column = java_file(directory, f"{data_type}-{shape}-{distinct}", data_type, keys, valid, rows)
                make = partial(grid_inputs, data_type, keys, valid)
                for name in names:
                    index_type, options = ("bitmap", {"version": 1}) if name.startswith("bitmap") \
                        else ("bloom-filter", {"items": rows, "fpp": 0.01})
                    out.append(Case(name, index_type, data_type, column, options, lambda: None, inputs=make))
    return out


# ---------------------------------------------------------------------------------------------
# --vs-v1: bitmap V2, BSI and range-bitmap against our bitmap V1 build of the same column

VS_V1_TYPES = ("INT", "BIGINT", "STRING")
V1 = ("bitmap v1", "bitmap", {"version": 1})
AGAINST_V1 = (("bitmap v2", "bitmap", {"version": 2}), ("bsi", "bsi", {}), ("range-bitmap", "range-bitmap", {}))
#: V1 built again in the same turns: its ratio to V1 is the run's noise, which V2 (V1's work
#: plus its index blocks, ~1 % more) is read against; it is printed, never judged.
CONTROL = ("v1 again", "bitmap", {"version": 1})
BSI_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP")


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def vs_v1(rows: int, types: list[str], shapes: list[str], distincts: list[int], kinds: list[str], runs: int,
          cpu: bool, aim: float) -> tuple[int, int]:
    """Every column of the grid: V1, V2, BSI and range-bitmap built in turns, `runs` times
    each after a warm-up build (whose blob is kept: equal across input kinds); the median of
    each against V1's. Returns (misses of 1.0x or of equal bytes, builds judged)."""
    clock = time.thread_time if cpu else time.perf_counter
    print(f"{rows:,} rows per column; {runs} timed builds of each index per column and input, in turns, each "
          f"after gc.collect(); {'thread CPU' if cpu else 'wall-clock'} medians; load average {load()}")
    print(f"\n{'column':<26} {'input':<7} {'V1 ms':>8} " + " ".join(f"{name:>13}" for name, _, _ in AGAINST_V1)
          + f" {CONTROL[0]:>9}  verdict")
    failed = total = 0
    worst: dict[str, float] = {}
    seen: dict[str, list[float]] = {}
    for data_type in types:
        for shape in shapes:
            for distinct in distincts if shape != "distinct" else [rows]:
                keys, valid = shaped_keys(shape, rows, distinct)
                column = f"{data_type} {shape}" + (f" d={distinct:,}" if shape != "distinct" else "")
                builds = [V1] + [b for b in AGAINST_V1 if b[1] != "bsi" or data_type in BSI_TYPES] + [CONTROL]
                shas: dict[str, str] = {}
                for kind, values in grid_inputs(data_type, keys, valid).items():
                    if kind not in kinds:
                        continue
                    same = True
                    for name, index_type, options in builds:
                        sha = hashlib.sha256(ps.build_index(index_type, data_type, values, **options)).hexdigest()
                        same &= shas.setdefault(name, sha) == sha
                    times: dict[str, list[float]] = {name: [] for name, _, _ in builds}
                    for _ in range(runs):
                        for name, index_type, options in builds:
                            gc.collect()
                            start = clock()
                            ps.build_index(index_type, data_type, values, **options)
                            times[name].append(clock() - start)
                    v1 = statistics.median(times[V1[0]])
                    ratios = {name: statistics.median(times[name]) / v1 for name in times if name != V1[0]}
                    control = ratios.pop(CONTROL[0])
                    for name, ratio in [*ratios.items(), (CONTROL[0], control)]:
                        worst[name] = max(worst.get(name, 0.0), ratio)
                        seen.setdefault(name, []).append(ratio)
                    ok = same and all(r <= TARGET for r in ratios.values())
                    failed += not ok
                    total += 1
                    cells = " ".join(f"{ratios[name]:13.2f}" if name in ratios else f"{'-':>13}"
                                     for name, _, _ in AGAINST_V1)
                    verdict = "PASS" if ok else "FAIL" if same else "FAIL (bytes differ across inputs)"
                    if ok and any(r > aim for r in ratios.values()):
                        verdict += f" (above {aim:.2f})"
                    print(f"{column:<26} {kind:<7} {v1 * 1e3:8.1f} {cells} {control:9.2f}  {verdict}", flush=True)
    print(f"\nload average after: {load()}; against V1, median / worst: "
          + ", ".join(f"{name} {statistics.median(seen[name]):.2f} / {worst[name]:.2f}" for name in worst))
    print(f"target: at most {TARGET:.1f}x our bitmap V1 build of the same column and input (aim {aim:.2f}), "
          f"bytes equal across input kinds; {total - failed} of {total} columns pass")
    return failed, total


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


def time_ours(case: Case, runs: int, kinds: list[str]) -> None:
    """One round: every input kind of `kinds`, a warm-up build and `runs` timed ones, each
    after a full collection (as Java's each follow `System.gc()`), each clocked by the wall
    and by this thread's CPU time (as Java's are)."""
    data_type = DataType.parse(case.data_type)
    for kind, values in (case.inputs() if case.inputs is not None else inputs(case.values())).items():
        if kind not in kinds:
            continue
        blob = ps.build_index(case.index_type, case.data_type, values, **case.options)
        case.blobs[kind] = (hashlib.sha256(blob).hexdigest(), len(blob))
        del blob
        for _ in range(runs):
            gc.collect()
            cpu, start = time.thread_time(), time.perf_counter()
            ps.build_index(case.index_type, case.data_type, values, **case.options)
            case.times.setdefault(kind, []).append(time.perf_counter() - start)
            case.cpu_times.setdefault(kind, []).append(time.thread_time() - cpu)
            if kind == "list":          # the step a list adds: typing its values in bulk
                start = time.perf_counter()
                column_values(data_type, values)
                case.times.setdefault("list typing", []).append(time.perf_counter() - start)


def baseline_ms(case: Case) -> str:
    return f"{statistics.median(case.times['numpy']) * 1e3:7.1f} ms" if "numpy" in case.times else "(not run)"


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
    parser.add_argument("--cases", nargs="*", default=[], help="only the cases whose name holds one of these")
    parser.add_argument("--grid", action="store_true", help="add the grid of shapes x types x distinct values")
    parser.add_argument("--no-default", action="store_true", help="only the grid")
    parser.add_argument("--types", default=",".join(GRID_TYPES))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--distinct", default=",".join(map(str, GRID_DISTINCT)))
    parser.add_argument("--vs-v1", action="store_true",
                        help="issue 19 item 2 only: V2, BSI and range-bitmap against our V1 build (no JVM)")
    parser.add_argument("--inputs", default=",".join(KINDS), help="the input kinds (numpy is the baseline "
                        "of the no-Java cases)")
    parser.add_argument("--cpu", action="store_true",
                        help="judge by thread CPU time, not the wall clock (against Java: its building "
                             "thread's CPU time; both clocks are printed)")
    parser.add_argument("--aim", type=float, default=0.9, help="--vs-v1: the margin below 1.0x to flag")
    args = parser.parse_args(argv)

    if args.vs_v1:
        types = args.types.split(",") if args.types != ",".join(GRID_TYPES) else list(VS_V1_TYPES)
        failed, _ = vs_v1(args.rows, types, args.shapes.split(","), [int(d) for d in args.distinct.split(",")],
                          args.inputs.split(","), args.our_runs, args.cpu, args.aim)
        return 1 if failed and args.strict else 0

    from paimon_schema.selfcheck.reference import JavaReference, ReferenceUnavailable
    try:
        reference = JavaReference.get()
    except ReferenceUnavailable as exc:
        print(f"the Java reference is unavailable: {exc}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="build-indexes-") as tmp:     # the grid's columns for Java
        return against_java(args, reference, Path(tmp))


def against_java(args: argparse.Namespace, reference: Any, directory: Path) -> int:
    """Every selected case, ours in rounds between `args.jvms` JVMs; the table of both clocks."""
    from paimon_schema.selfcheck.reference.java import BENCH_JVM_FLAGS
    def wanted(name: str) -> bool:
        return not args.cases or any(part in name for part in args.cases)

    selected = [] if args.no_default else [c for c in cases(args.rows) if wanted(c.name)]
    if args.grid:
        selected += grid_cases(args.rows, directory, args.types.split(","), args.shapes.split(","),
                               [int(d) for d in args.distinct.split(",")], wanted)
    kinds = args.inputs.split(",")
    print(f"{args.rows:,} rows per case. Java: Paimon {reference.version}, {args.jvms} JVMs "
          f"({' '.join(BENCH_JVM_FLAGS)}), {args.warmup} warm-up + {args.runs} timed builds per "
          f"case each, System.gc() before each timed one; median of the JVMs' medians. Ours: "
          f"{args.jvms} rounds between the JVMs, {args.our_runs} timed builds per input kind each "
          f"after gc.collect(); median of all. Both clocked by the wall and by the building thread's "
          f"CPU time; judged by the {'CPU' if args.cpu else 'wall'} clock. Load average {load()}.")
    java_medians: dict[tuple[str, ...], list[float]] = {}
    java_cpu: dict[tuple[str, ...], list[float]] = {}
    java_blobs: dict[tuple[str, ...], tuple[str, int]] = {}
    collections = 0
    for jvm in range(args.jvms):
        for case in selected:
            time_ours(case, args.our_runs, kinds)
        started = time.perf_counter()
        for key, answer in run_jvm(reference, selected, args.warmup, args.runs).items():
            java_medians.setdefault(key, []).append(answer["median_ns"] / 1e9)
            java_cpu.setdefault(key, []).append(answer["cpu_median_ns"] / 1e9)
            java_blobs[key] = (answer["sha256"], answer["length"])
            collections += answer["collections"]
        print(f"(JVM {jvm + 1}: {time.perf_counter() - started:.1f} s; load average {load()})", flush=True)

    failed = total = 0
    by_name = {c.name: c for c in selected}
    print(f"\n{'':<52} {'wall clock':^26}  {'thread CPU':^26}")
    print(f"{'case':<44} {'input':<7} {'ours ms':>9} {'Java ms':>9} {'ratio':>6}  {'ours ms':>9} {'Java ms':>9} "
          f"{'ratio':>6}  bytes   verdict")
    for case in selected:
        key = java_key(case)
        baseline = statistics.median(case.times["numpy"]) if "numpy" in case.times else math.nan
        for kind, times in case.times.items():
            if kind == "list typing":
                continue
            ours = statistics.median(case.cpu_times[kind] if args.cpu else times)
            if not case.java:
                same = case.blobs[kind] == case.blobs["numpy"]
                bar = by_name.get(case.baseline or "")
                if bar is not None and kind in bar.times:      # item 2: against our bitmap V1 build
                    ours_bar = statistics.median((bar.cpu_times if args.cpu else bar.times)[kind])
                    ok = same and ours <= ours_bar
                    print(f"{case.name:<44} {kind:<7} {ours * 1e3:9.1f} {ours_bar * 1e3:9.1f} "
                          f"{ours / ours_bar:6.2f}  {'equal' if same else 'DIFFER':<7} "
                          f"{'PASS' if ok else 'FAIL'} (vs our {bar.name})")
                    failed += not ok
                else:
                    print(f"{case.name:<44} {kind:<7} {ours * 1e3:9.1f} {'-':>9} {ours / baseline:6.2f}  "
                          f"{'equal' if same else 'DIFFER':<7} {'(vs our numpy)' if same else 'FAIL'}")
                    failed += not same
                total += 1
                continue
            wall = statistics.median(times), statistics.median(java_medians[key])
            cpu = statistics.median(case.cpu_times[kind]), statistics.median(java_cpu[key])
            java = cpu[1] if args.cpu else wall[1]
            sha, length = java_blobs[key]
            same = case.blobs[kind] == (sha, length)
            ok = ours <= TARGET * java and same
            failed += not ok
            total += 1
            print(f"{case.name:<44} {kind:<7} " + "  ".join(
                f"{o * 1e3:9.1f} {j * 1e3:9.1f} {o / j:6.2f}" if j > 0 else f"{o * 1e3:9.1f} {'-':>9} {'-':>6}"
                for o, j in (wall, cpu)) + f"  {'equal' if same else 'DIFFER':<7} {'PASS' if ok else 'FAIL'}")
    print(f"\nJava's timed builds ran {collections} collections (collector threads' work, which the CPU "
          f"clock leaves out; 0: it missed none)")
    typed_lists = [c for c in selected if c.java and c.inputs is None and "list typing" in c.times]
    if typed_lists:
        print("\nA list's extra step, typing its values in bulk (column_values: one C pass checking each"
              " value's exact type; strings numbered by first occurrence), against Java's whole build:")
    for case in typed_lists:
        typing = statistics.median(case.times["list typing"])
        java = statistics.median(java_medians[java_key(case)])
        print(f"  {case.name:<42} typing {typing * 1e3:7.1f} ms = {typing / java:5.2f}x Java; "
              f"+ the numpy build {baseline_ms(case)}")
    print("\nJava's per-JVM medians (ms), wall / thread CPU:")
    for case in selected:
        if case.java:
            key = java_key(case)
            print(f"  {case.name:<42} " + ", ".join(f"{t * 1e3:.1f} / {u * 1e3:.1f}"
                                                    for t, u in zip(java_medians[key], java_cpu[key])))
    print(f"load average after: {load()}")
    print(f"target: at most {TARGET:.1f}x Java's time, blobs SHA-256-equal to Java's (no-Java "
          f"cases: equal across input kinds and at most our bitmap V1 build of the same column); "
          f"{total - failed} of {total} pass")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
