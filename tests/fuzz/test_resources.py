"""No hangs, no blow-ups: small hostile files claiming huge counts fail fast and small, and a
parse of N bytes takes time linear in N.

Measured in a subprocess (resource_probe.py): peak RSS (`ru_maxrss`, which sees pyroaring's and
numpy's allocations, unlike tracemalloc) over a baseline taken after a warm-up, under an
address-space limit of the baseline plus 256 MB so a runaway allocation becomes a MemoryError
(reported as a failure) instead of taking the machine down. Each hostile input is parsed AND
exercised (every predicate kind, items(), null_rows, values(), top_n), since lazy readers read
late.
"""

from __future__ import annotations

import gc
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyroaring import BitMap

import fuzzlib
import paimon_schema as ps
from paimon_schema.layouts.bitmap_global_index import write_bitmap_global_index
import structure
from fuzzlib import Seed

PROBE = Path(__file__).with_name("resource_probe.py")
SEEDS = {s.name: s for s in fuzzlib.writer_seeds()}
#: Generous bounds: a hostile input of at most 1 KB must fail (or answer) within this...
FAST_SECONDS = 1.0
#: ...and grow the peak RSS by at most this much (a small constant: no allocation sized by a
#: claimed count).
SMALL_MB = 16
INT31 = 2**31 - 1


def probe(seed: Seed, inputs: list[tuple[str, bytes]], *, exercise: bool = True, repeat: int = 1,
          limit_mb: int = 256, timeout: float = 120) -> list[dict]:
    """Run `inputs` as `seed.layout` in a fresh interpreter; one result dict per input."""
    job = {"layout": seed.layout, "data_type": seed.data_type, "row_type": list(seed.row_type),
           "ranges": list(seed.ranges), "warmup_hex": seed.data.hex(), "exercise": exercise,
           "inputs": [{"name": n, "hex": d.hex()} for n, d in inputs], "limit_mb": limit_mb,
           "repeat": repeat}
    return run_probe(job, timeout)


def run_probe(job: dict, timeout: float = 120) -> list[dict]:
    """resource_probe.py on one job (its docstring has the format); one result dict per input."""
    proc = subprocess.run([sys.executable, str(PROBE)], input=json.dumps(job), text=True,
                          capture_output=True, timeout=timeout)
    assert proc.returncode == 0, (f"probe died with exit code {proc.returncode} "
                                  f"(negative: killed by that signal)\n{proc.stderr[-3000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def claim(seed_name: str, fields: dict[str, int], size: int | None = None, *,
          fill: str = "zero", keep: int | None = None) -> bytes:
    """The writer seed with `fields` (paths as fuzz/structure.py names them) set, cut to
    `keep` bytes, then cut or padded (zeros or seeded random bytes) to `size`."""
    seed = SEEDS[seed_name]
    by_path = {f.path: f for f in structure.int_fields(seed)}
    data = seed.data
    for path, value in fields.items():
        data = structure.set_field(data, by_path[path], value)
    if keep is not None:
        data = data[:keep]
    if size is not None:
        rng = random.Random(f"{seed_name}:{fields}")
        pad = size - len(data)
        data = data[:size] if pad <= 0 else data + (
            bytes(pad) if fill == "zero" else bytes(rng.getrandbits(8) for _ in range(pad)))
    return data


#: (case id, writer seed, hostile bytes): every one claims far more than its bytes hold.
HOSTILE = [
    ("container: 2^31-1 columns in 100 B", "writer/container-4types",
     claim("writer/container-4types", {"head.num_columns": INT31}, 100)),
    ("container: 2^31-1 indexes of a column in 100 B", "writer/container-4types",
     claim("writer/container-4types", {"head.columns[0].num_indexes": INT31}, 100)),
    ("container: 2^31-1 byte head in 1 KB", "writer/container-4types",
     claim("writer/container-4types", {"len_head": INT31}, 1024)),
    ("container: 2^31-1 byte blob in 1 KB", "writer/container-4types",
     claim("writer/container-4types", {"head.columns[0].indexes[0].len_blob": INT31}, 1024)),
    ("dv: bin claiming a 2 GB payload in 1 KB", "writer/array+run",
     claim("writer/array+run", {"bins[0].len_payload": INT31}, 1024, fill="random")),
    ("dv: 64-bit bin claiming 2^31-1 buckets", "writer/64-gaps",
     structure.fix_dv_checksums(claim("writer/64-gaps", {"bins[0].bitmap.num_buckets": INT31}))),
    ("dv: 64-bit bin claiming 2^31-1 buckets in 1 KB of random", "writer/64-gaps",
     claim("writer/64-gaps", {"bins[0].bitmap.num_buckets": INT31, "bins[0].len_payload": 1015},
           1024, fill="random", keep=17)),
    ("bitmap V1 STRING: 2^31-1 keys in 100 B", "writer/bitmap-string-v1",
     claim("writer/bitmap-string-v1", {"num_keys": INT31}, 100)),
    ("bitmap V1 BIGINT: 2^31-1 keys in 100 B", "writer/bitmap-bigint-v1-singletons",
     claim("writer/bitmap-bigint-v1-singletons", {"num_keys": INT31}, 100)),
    ("bitmap V2: 2^31-1 blocks in 1 KB", "writer/bitmap-int-many",
     claim("writer/bitmap-int-many", {"index.num_blocks": INT31}, 1024)),
    ("bitmap V2: 2^31-1 rows (every query answers up to 2^31 rows)", "writer/bitmap-int-many",
     claim("writer/bitmap-int-many", {"num_rows": INT31})),
    ("range-bitmap: 2^31-1 chunks", "writer/range-int-chunks",
     claim("writer/range-int-chunks", {"dictionary.num_chunks": INT31})),
    ("range-bitmap: 64 slices of 2^31-1 bytes in 1 KB", "writer/range-int-chunks",
     claim("writer/range-int-chunks", {"bsi.len_header": 522, "bsi.header.num_slices": 64,
                                        "bsi.header.len_indexes": 512,
                                        "bsi.header.slices[0].len_bitmap": INT31},
           1024, fill="random")),
    ("range-bitmap: 2^31-1 rows", "writer/range-int-chunks",
     claim("writer/range-int-chunks", {"header.num_rows": INT31})),
    ("bsi: a part claiming 64 slices of garbage", "writer/bsi-bigint-wide",
     claim("writer/bsi-bigint-wide", {"positive.num_slices": 64}, 1024, fill="random", keep=49)),
    ("bsi: 2^31-1 rows", "writer/bsi-bigint-wide",
     claim("writer/bsi-bigint-wide", {"num_rows": INT31})),
    ("roaring: 65536 containers in 100 B", "writer/roaring-array",
     claim("writer/roaring-array", {"num_containers_field": 65536}, 100)),
    ("roaring: 2^32-1 containers in 100 B", "writer/roaring-array",
     claim("writer/roaring-array", {"num_containers_field": 2**32 - 1}, 100)),
    ("roaring: 65536 run containers in 100 B", "writer/roaring-runs",
     claim("writer/roaring-runs", {"num_containers_minus_one": 0xFFFF}, 100, fill="random")),
    ("bloom: 2^31-1 hash functions", "writer/bloom-double",
     claim("writer/bloom-double", {"num_hash_functions": INT31})),
]


#: One interpreter per seed (startup and warm-up cost ~1 s); the peak RSS only grows, so each
#: input's growth is bounded by what the test reports for it.
BY_SEED = sorted({seed for _, seed, _ in HOSTILE})


@pytest.mark.parametrize("seed_name", BY_SEED)
def test_claimed_counts_fail_fast_and_small(seed_name: str) -> None:
    cases = [(case, data) for case, seed, data in HOSTILE if seed == seed_name]
    problems = []
    for (case, data), result in zip(cases, probe(SEEDS[seed_name], cases), strict=True):
        assert len(data) <= 2048, case
        if result["failures"]:
            problems.append(f"{case}: " + "\n".join(result["failures"]))
        if result["seconds"] > FAST_SECONDS or result["rss_mb"] > SMALL_MB:
            problems.append(f"{case}: {result['seconds']:.2f} s, peak RSS +{result['rss_mb']:.1f} MB "
                            f"(bounds {FAST_SECONDS} s, {SMALL_MB} MB); input hex {data.hex()}")
    assert not problems, "\n\n".join(problems)


# -- time linear in N ---------------------------------------------------------------------------


def _runs(containers: int) -> BitMap:
    bitmap = BitMap()
    for key in range(containers):
        bitmap.add_range(key << 16, (key << 16) + 100)
    bitmap.run_optimize()
    return bitmap


def _strings(n: int) -> list[str]:
    return [f"key-{i:07d}" for i in range(n)]


#: name -> (seed kind, data type, make(scale) -> bytes); scale 1 and 8.
FAMILIES = {
    "roaring: run containers": ("roaring", None, lambda k: _runs(4096 * k).serialize()),
    "roaring: array containers": (
        "roaring", None, lambda k: BitMap(i << 16 | j for i in range(4096 * k) for j in (1, 9)).serialize()),
    "dv: one bin of run containers": (
        "dv", None, lambda k: ps.write_deletion_vectors({"a": _runs(2048 * k)})[0]),
    "dv: many bins": (
        "dv", None, lambda k: ps.write_deletion_vectors({f"f{i}": [i, i + 5] for i in range(500 * k)})[0]),
    "container: many columns": (
        "container", None, lambda k: ps.write_file_index({f"c{i}": {"x": b"\x01"} for i in range(500 * k)})),
    "bitmap V1: STRING keys": (
        "bitmap", "STRING", lambda k: ps.build_index("bitmap", "STRING", _strings(2000 * k), version=1)),
    "bitmap V2: STRING keys": (
        "bitmap", "STRING", lambda k: ps.build_index("bitmap", "STRING", _strings(2000 * k),
                                                     index_block_size="1kb")),
    "range-bitmap: STRING keys": (
        "range-bitmap", "STRING", lambda k: ps.build_index("range-bitmap", "STRING", _strings(2000 * k),
                                                           chunk_size="1kb")),
    "bsi: rows": (
        "bsi", "BIGINT", lambda k: ps.build_index("bsi", "BIGINT", [i * 7919 % 2**40 for i in range(4000 * k)])),
    "hash: ints": ("hash", None, lambda k: ps.write_hash_index(range(100_000 * k))),
    "bitmap global index: STRING keys": (
        "bitmap-global-index", None, lambda k: write_bitmap_global_index("STRING", _strings(2000 * k),
                                                                         dictionary_block_size=1024)),
}
#: Linear is 8x for 8x the bytes, quadratic 64x; allow noise and fixed costs up to 3x linear.
MAX_RATIO = 24


@pytest.mark.parametrize("family", FAMILIES)
def test_parse_time_is_linear(family: str) -> None:
    layout, data_type, make = FAMILIES[family]
    seed = next(s for s in SEEDS.values() if s.layout == layout)
    if data_type:       # warm up on a small valid blob of the type
        values = ["a", None] if data_type == "STRING" else [1, None]
        seed = Seed("warm-up", layout, ps.build_index(layout, data_type, values), data_type=data_type)
    small, large = make(1), make(8)
    results = probe(seed, [("N", small), ("8N", large)], exercise=False, repeat=3)
    assert all(not r["failures"] for r in results), results
    (n, t1), (n8, t8) = ((r["size"], r["seconds"]) for r in results)
    ratio = t8 / max(t1, 1e-4)
    assert ratio < MAX_RATIO * (n8 / n) / 8, (
        f"{family}: {n} bytes parse in {t1 * 1000:.1f} ms, {n8} bytes ({n8 / n:.1f}x) in "
        f"{t8 * 1000:.1f} ms ({ratio:.1f}x): superlinear")
    # ...and memory: the peak grows by at most a constant times N (Kaitai's debug objects).
    assert results[-1]["rss_mb"] < 32 + 200 * n8 / 2**20, results


def test_container_round_trip_is_not_quadratic() -> None:
    """`FileIndexFile.parse(data).to_bytes()`: 10x the columns may take at most ~30x the time
    (linear is 10x). Bug: `to_bytes` gathers each column's entries with a scan of all entries
    (`[e for e in self.entries if e.column_index == i]` per column), quadratic: a 230 KB head of
    10000 columns takes ~10 s, a 1 MB one of 170000 columns hours. Fix: group the entries by
    `column_index` in one pass. An alarm stops the large cases at 5 s of CPU time."""
    def model(n: int) -> ps.FileIndexFile:
        return ps.FileIndexFile.parse(ps.write_file_index({f"c{i}": {"x": b"\x01"} for i in range(n)}))

    def seconds(m: ps.FileIndexFile) -> float:
        # The collector is off while timing: a full collection of the suite's heap landing in
        # the large case alone made it look quadratic in the full run (0.68 s vs 0.01 s).
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()        # CPU time: a loaded machine's waits do not count
            m.to_bytes()
            return time.process_time() - start
        finally:
            gc.enable()

    small, large = model(1000), model(10000)
    t1 = min(seconds(small) for _ in range(3))

    def expire(signum, frame):
        raise TimeoutError(f"to_bytes of 10000 columns ran past 5 CPU seconds (1000 columns: {t1:.3f} s)")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, 5.0)
    try:
        t10 = min(seconds(large) for _ in range(2))
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    assert t10 < 30 * t1 + 0.2, f"to_bytes: 1000 columns {t1:.3f} s, 10000 columns {t10:.3f} s"
