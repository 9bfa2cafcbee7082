"""Java writes randomized files; our readers decode exactly what Java's readers decode.

Two JVM batches for the whole module: one where Java writes every file, one where Java reads
them back; the tests compare our readers with both.
"""

from __future__ import annotations

import random

import pytest
from pyroaring import BitMap

import paimon_schema as ps

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


def _dv_mappings() -> list[dict[str, list[int]]]:
    rng = random.Random(SEED)
    mappings = [{}, {"data-0.parquet": []}, {"data-0.parquet": list(range(70_000))}]
    while len(mappings) < CASES:
        mappings.append({f"data-{rng.getrandbits(32):08x}-{i}.parquet": _positions(rng)
                         for i in range(rng.randint(1, 4))})
    return mappings


def _hash_lists() -> list[list[int]]:
    rng = random.Random(SEED + 1)
    lists = [[], [0], [-1, 0, 2**31 - 1, -2**31]]
    while len(lists) < CASES:
        n = rng.choice([1, 10, 1000, 70_000])
        lists.append([rng.randint(-2**31, 2**31 - 1) for _ in range(n)] + [0] * rng.randint(0, 2))
    return lists


NAMES = ["a", "f0", "m[k1]", "é", "\u0000nul", "名前", "emoji\U0001F600", "x" * 300, "a.b", ""]
TYPES = ["bloom-filter", "bitmap", "bsi", "range-bitmap"]


def _containers() -> list[dict[str, dict[str, bytes | None]]]:
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


@pytest.fixture(scope="module")
def java_files(java_reference):
    """Everything Java wrote, and what Java's readers read back from it."""
    with java_reference.batch() as batch:
        dvs = [(m, batch.write_deletion_vectors(m)) for m in _dv_mappings()]
        hashes = [(h, batch.write_hash_index(h)) for h in _hash_lists()]
        containers = [(c, batch.write_container(c)) for c in _containers()]
    dvs = [(m, *p.result()) for m, p in dvs]
    hashes = [(h, p.result()) for h, p in hashes]
    containers = [(c, p.result()) for c, p in containers]
    with java_reference.batch() as batch:
        dv_reads = [batch.read_deletion_vectors(data, [(r.name, r.offset, r.length) for r in ranges])
                    if ranges else None for _, data, ranges in dvs]
        hash_reads = [batch.read_hash_index(data) for _, data in hashes]
        container_reads = [batch.read_container(data) for _, data in containers]
    return {
        "dv": [(m, d, r, p.result() if p else {}) for (m, d, r), p in zip(dvs, dv_reads)],
        "hash": [(h, d, p.result()) for (h, d), p in zip(hashes, hash_reads)],
        "container": [(c, d, p.result()) for (c, d), p in zip(containers, container_reads)],
    }


@pytest.mark.parametrize("case", range(CASES))
def test_deletion_vectors(java_files, case: int) -> None:
    mapping, data, ranges, java_read = java_files["dv"][case]
    parsed = ps.DeletionVectorFile.parse(data)
    assert parsed.warnings == []
    assert [(b.offset, b.length) for b in parsed.bins] == [(r.offset, r.length) for r in ranges]
    assert [r.name for r in ranges] == list(mapping)
    for b, name in zip(parsed.bins, mapping):
        assert b.bitmap == BitMap(mapping[name]) == BitMap(java_read[name])
        assert not b.bitmap64
    for r in ranges:
        assert ps.read_deletion_vector(data, r.offset, r.length) == BitMap(mapping[r.name])


def test_dv_cases_cover_the_sizes_asked_for(java_files) -> None:
    sizes = [len(set(p)) for m, *_ in java_files["dv"] for p in m.values()]
    assert 0 in sizes and max(sizes) > 65536
    assert sum(1 for m, *_ in java_files["dv"] if len(m) > 1) >= 5


@pytest.mark.parametrize("case", range(CASES))
def test_hash_index(java_files, case: int) -> None:
    values, data, java_read = java_files["hash"][case]
    ours = ps.read_hash_index(data).tolist()
    assert ours == java_read
    assert sorted(set(ours)) == sorted(set(values))


@pytest.mark.parametrize("case", range(CASES))
def test_container(java_files, case: int) -> None:
    columns, data, java_read = java_files["container"][case]
    parsed = ps.FileIndexFile.parse(data)
    assert parsed.columns == columns == java_read
    assert list(parsed.columns) == list(columns)
    assert parsed.warnings == []
