"""Soak-fuzz every layout's public parse entry points: `--executions N` per layout, spread over
a process pool, counts and failures printed per layout.

    python benchmarks/fuzz_soak.py --executions 100000            # all layouts, all cores
    python benchmarks/fuzz_soak.py --executions 20000 --layouts dv container --jobs 2
    python benchmarks/fuzz_soak.py --atheris 600      # coverage-guided (pip install atheris)

The generator is tests/fuzz/soakgen.py (the same as `pytest -m soak`): the CI mutators (bit
flips, overwrites, truncations, insertions, interesting integers) and the structure-aware ones
(counts, lengths, offsets and versions set to 0, -1, huge, off by one; DV CRCs recomputed; a
container blob mutated under a consistent head), over the shared fixtures of at most 64 KB and
our writers' files. One execution is one input through every entry point of its layout, with
the parsed value exercised. Exit status 1 when anything but a located FormatError came out.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[1] / "tests" / "fuzz"
sys.path[:0] = [str(FUZZ), str(FUZZ.parent)]

import fuzzlib  # noqa: E402
import soakgen  # noqa: E402

#: executions per task: small enough to balance the pool, large enough to amortize start-up
CHUNK = 2500


#: address space a worker may add to what it has after start-up: a blow-up becomes a
#: MemoryError (reported as a failure) instead of the machine swapping
WORKER_LIMIT = 1 << 30


def _limit_memory() -> None:
    import resource

    size = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            size = int(line.split()[1]) * 1024
    if size:
        resource.setrlimit(resource.RLIMIT_AS, (size + WORKER_LIMIT, resource.RLIM_INFINITY))


def _task(layout: str, count: int, rng_seed: str) -> soakgen.SoakResult:
    return soakgen.run(layout, count, rng_seed)


def run_atheris(seconds: int, layouts: list[str]) -> int:
    """Coverage-guided: libFuzzer (through atheris) mutates `seed index (2 bytes) + bytes`,
    starting from a corpus of every seed, for `seconds`; failures are counted by kind (not
    stopped at), so known bugs do not hide new ones. Hangs: libFuzzer's -timeout=10."""
    import tempfile

    import atheris

    seeds = [s for s in fuzzlib.all_seeds() if s.layout in layouts]
    corpus = Path(tempfile.mkdtemp(prefix="paimon-atheris-"))
    for i, seed in enumerate(seeds):
        (corpus / f"seed-{i}").write_bytes(i.to_bytes(2, "big") + seed.data)
    result = soakgen.SoakResult("atheris")

    def one_input(data: bytes) -> None:
        if len(data) < 2:
            return
        seed = seeds[int.from_bytes(data[:2], "big") % len(seeds)]
        result.executions += 1
        for f in fuzzlib.run_target(seed, data[2:], "atheris"):
            if f.kind not in result.failures:
                print(f"NEW KIND {f.kind}\n  {f.describe(hex_limit=512)[:1500]}", flush=True)
            slot = result.failures.setdefault(f.kind, [0, ""])
            slot[0] += 1
        if result.executions % 5000 == 0:      # libFuzzer exits without running atexit hooks
            tally = ", ".join(f"{count} x {kind}" for kind, (count, _) in result.failures.items())
            print(f"TALLY {result.executions} executions; failures: {tally or 'none'}", flush=True)

    atheris.instrument_all()
    atheris.Setup([sys.argv[0], str(corpus), f"-max_total_time={seconds}", "-timeout=10",
                   "-rss_limit_mb=2048", "-print_final_stats=1"], one_input)
    atheris.Fuzz()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=100_000, help="per layout (default 100000)")
    parser.add_argument("--layouts", nargs="*", default=list(fuzzlib.LAYOUTS), choices=fuzzlib.LAYOUTS)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", default="0", help="RNG seed prefix (default 0)")
    parser.add_argument("--atheris", type=int, metavar="SECONDS",
                        help="coverage-guided fuzzing with atheris for SECONDS instead")
    args = parser.parse_args(argv)
    if args.atheris:
        return run_atheris(args.atheris, args.layouts)

    per_layout = {layout: soakgen.SoakResult(layout) for layout in args.layouts}
    tasks = []
    for layout in args.layouts:
        for start in range(0, args.executions, CHUNK):
            tasks.append((layout, min(CHUNK, args.executions - start), f"{args.seed}-{start}"))
    started = time.perf_counter()
    print(f"{len(fuzzlib.all_seeds())} seeds; {args.executions} executions per layout over "
          f"{args.jobs} processes", flush=True)
    with ProcessPoolExecutor(args.jobs, initializer=_limit_memory) as pool:
        for result in pool.map(_task, *zip(*tasks)):
            per_layout[result.layout].merge(result)
    elapsed = time.perf_counter() - started
    failed = False
    for layout in args.layouts:
        print(per_layout[layout].describe())
        failed |= bool(per_layout[layout].failures)
    total = sum(r.executions for r in per_layout.values())
    print(f"total: {total} executions in {elapsed:.0f} s ({total / elapsed:.0f}/s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
