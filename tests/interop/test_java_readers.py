"""Java writes randomized files; our readers decode exactly what Java's readers decode.

Two JVM batches for the whole module: one where Java writes every file, one where Java reads
them back; the tests compare our readers with both.
"""

from __future__ import annotations

import pytest
from pyroaring import BitMap

import paimon_schema as ps
import random_cases
from random_cases import CASES, dv_mappings, hash_lists

@pytest.fixture(scope="module")
def java_files(java_reference):
    """Everything Java wrote, and what Java's readers read back from it."""
    with java_reference.batch() as batch:
        dvs = [(m, batch.write_deletion_vectors(m)) for m in dv_mappings()]
        hashes = [(h, batch.write_hash_index(h)) for h in hash_lists()]
        containers = [(c, batch.write_container(c)) for c in random_cases.containers()]
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
