"""Timing shared by the benchmarks: the best of N runs, contenders run in turns so that the
machine's drifting load hits all of them alike (this is a shared 2-core box)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


def best_interleaved(fns: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """Best time in seconds of each function, all of them run once per round."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, slot in zip(fns, times):
            start = time.perf_counter()
            fn()
            slot.append(time.perf_counter() - start)
    return [min(slot) for slot in times]


def best_of(runs: Mapping[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """`best_interleaved` over named runs."""
    return dict(zip(runs, best_interleaved(list(runs.values()), repeat)))


def best(fn: Callable[[], object], repeat: int) -> float:
    """Best time in seconds of one function."""
    return best_interleaved([fn], repeat)[0]


@dataclass(frozen=True)
class Rounds:
    """Every timed run of named contenders, round by round (seconds): wall-clock `times`, and
    `cpu`, the process's CPU time (all threads) over the same run."""

    times: dict[str, list[float]]
    cpu: dict[str, list[float]]

    def best(self, name: str) -> float:
        return min(self.times[name])

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])

    def ratios(self, name: str, baseline: str) -> list[float]:
        """`name`'s time over `baseline`'s, per round: the two ran back to back, so a round's
        ratio sees the same machine load (the load drifts between rounds)."""
        return [a / b for a, b in zip(self.times[name], self.times[baseline])]

    def ratio(self, name: str, baseline: str) -> float:
        """The median of the per-round ratios."""
        return statistics.median(self.ratios(name, baseline))

    def spread(self, name: str, baseline: str) -> str:
        ratios = self.ratios(name, baseline)
        return f"{min(ratios):.2f}-{max(ratios):.2f}"

    def cpu_ratio(self, name: str, baseline: str) -> float:
        """The median CPU time over the baseline's: the work done, which the other processes
        of a shared machine disturb less than they disturb the wall clock."""
        return statistics.median(self.cpu[name]) / statistics.median(self.cpu[baseline])


def rounds(runs: Mapping[str, Callable[[], object]], repeat: int) -> Rounds:
    """Each contender once per round, `repeat` rounds, the garbage collected before each run
    (so that no contender pays for another's garbage)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return Rounds(times, cpu)
