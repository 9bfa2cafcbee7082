"""Our writers against Java's: the same input gives Java's bytes, and Java reads ours back.

One JVM batch: Java writes every input and reads every file we wrote.
"""

from __future__ import annotations

import pytest
from pyroaring import BitMap

import paimon_schema as ps
from random_cases import CASES, containers, dv_mappings, hash_lists


@pytest.fixture(scope="module")
def exchange(java_reference):
    ours = {
        "dv": [ps.write_deletion_vectors(m) for m in dv_mappings()],
        "hash": [ps.write_hash_index(h) for h in hash_lists()],
        "container": [ps.write_file_index(c) for c in containers()],
    }
    with java_reference.batch() as batch:
        java_dv = [batch.write_deletion_vectors(m) for m in dv_mappings()]
        java_hash = [batch.write_hash_index(h) for h in hash_lists()]
        java_container = [batch.write_container(c) for c in containers()]
        read_dv = [batch.read_deletion_vectors(data, [(n, o, l) for n, (o, l) in ranges.items()])
                   if ranges else None for data, ranges in ours["dv"]]
        read_hash = [batch.read_hash_index(data) for data in ours["hash"]]
        read_container = [batch.read_container(data) for data in ours["container"]]
    return ours, {
        "dv": [p.result() for p in java_dv], "hash": [p.result() for p in java_hash],
        "container": [p.result() for p in java_container],
        "read_dv": [p.result() if p else {} for p in read_dv],
        "read_hash": [p.result() for p in read_hash],
        "read_container": [p.result() for p in read_container],
    }


@pytest.mark.parametrize("case", range(CASES))
def test_deletion_vectors_equal_javas_bytes_and_ranges(exchange, case: int) -> None:
    ours, java = exchange
    data, ranges = ours["dv"][case]
    java_data, java_ranges = java["dv"][case]
    assert data == java_data
    assert ranges == {r.name: (r.offset, r.length) for r in java_ranges}
    mapping = dv_mappings()[case]
    assert {name: BitMap(p) for name, p in java["read_dv"][case].items()} == \
        {name: BitMap(p) for name, p in mapping.items()}


@pytest.mark.parametrize("case", range(CASES))
def test_hash_index_equals_javas_bytes(exchange, case: int) -> None:
    ours, java = exchange
    assert ours["hash"][case] == java["hash"][case]
    assert java["read_hash"][case] == hash_lists()[case]


@pytest.mark.parametrize("case", range(CASES))
def test_container_equals_javas_bytes(exchange, case: int) -> None:
    ours, java = exchange
    assert ours["container"][case] == java["container"][case]
    assert java["read_container"][case] == containers()[case]
