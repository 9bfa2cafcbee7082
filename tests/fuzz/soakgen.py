"""The soak's generator: the CI mutators and the structure-aware ones, mixed and stacked, for as
many executions as asked. Used by test_soak.py (`pytest -m soak`, shards for pytest-xdist) and
benchmarks/fuzz_soak.py (its own process pool).

One execution = one input through every entry point of its layout, parsed values exercised
(fuzzlib.run_target).
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import fuzzlib
import structure
from fuzzlib import Seed


def _field_mutation(seed: Seed, data: bytes, rng: random.Random) -> tuple[bytes, str]:
    fields = structure.int_fields(seed)
    if not fields:
        return data, ""
    steps = []
    for _ in range(rng.randint(1, 3)):
        f = rng.choice(fields)
        value = (rng.choice(structure.candidates(f, len(data))) if rng.random() < 0.8
                 else rng.getrandbits(8 * f.width))
        data = structure.set_field(data, f, value)
        steps.append(f"{f.path}={value}")
    return data, "; ".join(steps)


def mutate(seed: Seed, rng: random.Random) -> tuple[bytes, str]:
    """One soak input from `seed`."""
    roll = rng.random()
    if seed.layout == "container" and roll < 0.4:
        blobs = structure.container_blobs(seed)
        if blobs:
            entry, blob_seed = rng.choice(blobs)
            if rng.random() < 0.5:
                blob, steps = _field_mutation(blob_seed, blob_seed.data, rng)
            else:
                m = fuzzlib.havoc(blob_seed.data, rng)
                blob, steps = m.data, m.detail
            return structure.replace_blob(seed, entry, blob), f"entry {entry} blob: {steps}"
    if roll < 0.45:
        data, steps = _field_mutation(seed, seed.data, rng)
        if rng.random() < 0.3:
            m = fuzzlib.havoc(data, rng)
            data, steps = m.data, f"{steps}; {m.detail}"
    elif roll < 0.9:
        m = fuzzlib.havoc(seed.data, rng)
        data, steps = m.data, m.detail
    else:
        cut = rng.randrange(len(seed.data) + 1)
        data, steps = seed.data[:cut], f"truncate {cut}"
    if seed.layout == "dv" and rng.random() < 0.7:
        data, steps = structure.fix_dv_checksums(data), f"{steps}; CRCs recomputed"
    if seed.layout == "btree" and rng.random() < 0.7:
        data, steps = structure.fix_btree_checksums(data), f"{steps}; CRCs recomputed"
    return data, steps


@dataclass
class SoakResult:
    layout: str
    executions: int = 0
    failures: dict[str, list] = field(default_factory=dict)   # kind -> [count, example]

    def merge(self, other: SoakResult) -> None:
        self.executions += other.executions
        for kind, (count, example) in other.failures.items():
            mine = self.failures.setdefault(kind, [0, example])
            mine[0] += count

    def describe(self) -> str:
        lines = [f"{self.layout}: {self.executions} executions, "
                 f"{sum(c for c, _ in self.failures.values())} failing "
                 f"({len(self.failures)} kinds)"]
        for kind, (count, example) in sorted(self.failures.items(), key=lambda x: -x[1][0]):
            lines.append(f"  {count:7d} x {kind}\n    e.g. {example}")
        return "\n".join(lines)


def inputs(layout: str, count: int, rng_seed: str) -> Iterator[tuple[Seed, bytes, str]]:
    seeds = fuzzlib.seeds_of(layout)
    rng = random.Random(f"soak:{layout}:{rng_seed}")
    for i in range(count):
        seed = seeds[i % len(seeds)]
        data, steps = mutate(seed, rng)
        yield seed, data, steps


class Hang(BaseException):
    """An execution ran past HANG_SECONDS (BaseException: no entry point's handler eats it)."""


#: an execution taking longer than this is a failure ("slow"); past HANG_SECONDS it is stopped
SLOW_SECONDS = 2.0
HANG_SECONDS = 20.0


def _expire(signum, frame):
    raise Hang()


def run(layout: str, count: int, rng_seed: str = "0") -> SoakResult:
    result = SoakResult(layout)

    def record(kind: str, example: str) -> None:
        slot = result.failures.setdefault(kind, [0, example])
        slot[0] += 1

    previous = signal.signal(signal.SIGALRM, _expire)
    try:
        for seed, data, steps in inputs(layout, count, rng_seed):
            result.executions += 1
            started = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
            try:
                failures = fuzzlib.run_target(seed, data, steps)
            except Hang:
                failures = []
                record(f"all: hang: stopped after {HANG_SECONDS} s",
                       f"{seed.id} [{steps}] input hex: {data.hex()[:1024]}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            elapsed = time.perf_counter() - started
            if elapsed > SLOW_SECONDS:
                record(f"all: slow: over {SLOW_SECONDS} s",
                       f"{elapsed:.1f} s: {seed.id} [{steps}] input hex: {data.hex()[:1024]}")
            for f in failures:
                record(f.kind, f.describe(hex_limit=512)[:1500])
    finally:
        signal.signal(signal.SIGALRM, previous)
    return result
