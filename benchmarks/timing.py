"""Timing shared by the benchmarks: the best of N runs, contenders run in turns so that the
machine's drifting load hits all of them alike (this is a shared 2-core box)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence


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
