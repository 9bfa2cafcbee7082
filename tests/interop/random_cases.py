"""Randomized inputs for the Java interop tests, the same on every run (fixed seeds)."""

from __future__ import annotations

import random
from functools import cache

CASES = 24
SEED = 20261122


def _positions(rng: random.Random) -> list[int]:
    shape = rng.choice(["empty", "few", "dense", "runs", "wide", "huge"])
    if shape == "empty":
        return []
    if shape == "few":
        return rng.sample(range(1 << 20), rng.randint(1, 20))
    if shape == "dense":
        return list(range(0, rng.randint(5000, 140_000), rng.randint(1, 3)))
    if shape == "runs":
        start = rng.randint(0, 1 << 24)
        return [p for s in range(20) for p in range(start + s * 9000, start + s * 9000 + rng.randint(1, 3000))]
    if shape == "wide":
        return rng.sample(range(2**31 - 1), 3000)
    return rng.sample(range(300_000), 100_000)   # > 65536 positions, several containers


@cache
def dv_mappings() -> list[dict[str, list[int]]]:
    rng = random.Random(SEED)
    mappings = [{}, {"data-0.parquet": []}, {"data-0.parquet": list(range(70_000))}]
    while len(mappings) < CASES:
        mappings.append({f"data-{rng.getrandbits(32):08x}-{i}.parquet": _positions(rng)
                         for i in range(rng.randint(1, 4))})
    return mappings


@cache
def hash_lists() -> list[list[int]]:
    rng = random.Random(SEED + 1)
    lists = [[], [0], [-1, 0, 2**31 - 1, -2**31]]
    while len(lists) < CASES:
        n = rng.choice([1, 10, 1000, 70_000])
        lists.append([rng.randint(-2**31, 2**31 - 1) for _ in range(n)] + [0] * rng.randint(0, 2))
    return lists


NAMES = ["a", "f0", "m[k1]", "é", "\u0000nul", "名前", "emoji\U0001F600", "x" * 300, "a.b", ""]
TYPES = ["bloom-filter", "bitmap", "bsi", "range-bitmap"]


@cache
def containers() -> list[dict[str, dict[str, bytes | None]]]:
    """Random containers; no 0-byte blobs: no index writes one, and the jar's reader cannot
    seek to a blob at the very end of the file."""
    rng = random.Random(SEED + 2)
    containers: list[dict[str, dict[str, bytes | None]]] = [{}]
    while len(containers) < CASES:
        columns = {}
        for name in rng.sample(NAMES, rng.randint(1, 5)):
            columns[name] = {t: (None if rng.random() < 0.2 else rng.randbytes(rng.choice([1, 17, 600, 70_000])))
                             for t in rng.sample(TYPES, rng.randint(1, 4))}
        containers.append(columns)
    return containers
