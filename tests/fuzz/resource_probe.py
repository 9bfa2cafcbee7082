"""Run entry points on given bytes in THIS process and report time and peak memory as JSON.

Started as a subprocess by test_resources.py (and test_roaring_hostile.py): `tracemalloc`
does not see what C extensions (pyroaring, numpy) allocate, so memory is the process's peak
resident set (`ru_maxrss`) over a baseline taken after a warm-up on the valid seed, and an
address-space limit (`RLIMIT_AS`, the baseline's virtual size plus `limit_mb`) turns a
runaway allocation into a MemoryError instead of a swamped machine.

stdin: one JSON job {"layout", "data_type", "row_type", "ranges", "warmup_hex", "inputs":
[{"name", "hex"}], "limit_mb", "repeat"}; stdout: one JSON line per input {"name", "size",
"seconds" (CPU time, best of `repeat`: waits on a loaded machine do not count), "rss_mb" (peak
growth over the baseline), "failures"}.

Many seeds of one layout in one process: "seeds": [{"data_type", "row_type", "ranges", "hex"}]
(all warmed up before the baseline) and inputs {"name", "seed": index, "patch": [offset, hex]}:
that seed's bytes with `hex` written at `offset`, so a large file travels once, not per input.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import fuzzlib  # noqa: E402


def vm_size() -> int:
    """The process's current virtual size in bytes (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def patched(data: bytes, patch: list) -> bytes:
    offset, raw = patch[0], bytes.fromhex(patch[1])
    return data[:offset] + raw + data[offset + len(raw):]


def _seed(layout: str, spec: dict) -> fuzzlib.Seed:
    return fuzzlib.Seed("probe", layout, bytes.fromhex(spec.get("hex", spec.get("warmup_hex", ""))),
                        data_type=spec.get("data_type"),
                        row_type=tuple(tuple(p) for p in spec.get("row_type", [])),
                        ranges=tuple(tuple(r) for r in spec.get("ranges", [])))


def main() -> None:
    job = json.load(sys.stdin)
    seeds = [_seed(job["layout"], spec) for spec in job.get("seeds", [job])]
    # Warm up: imports, compiled codecs and caches are not the input's cost.
    for seed in seeds:
        fuzzlib.run_target(seed, seed.data)
    limit = job.get("limit_mb", 256) * 2**20
    largest = max([len(s.data) for s in seeds] + [len(i.get("hex", "")) // 2 for i in job["inputs"]])
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm_size() + limit + largest * 6, hard))
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # KiB on Linux
    for item in job["inputs"]:
        name = item["name"]
        seed = seeds[item.get("seed", 0)]
        data = patched(seed.data, item["patch"]) if "patch" in item else bytes.fromhex(item["hex"])
        best = float("inf")
        failures: list[str] = []
        for _ in range(job.get("repeat", 1)):
            start = time.process_time()
            found = fuzzlib.run_target(seed, data, name, exercise=job.get("exercise", True))
            best = min(best, time.process_time() - start)
            failures = [f.describe(hex_limit=256) for f in found]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"name": name, "size": len(data), "seconds": best,
                          "rss_mb": max(0, peak - baseline) / 1024, "failures": failures}),
              flush=True)


if __name__ == "__main__":
    main()
