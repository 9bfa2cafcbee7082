"""Writers of the container, deletion-vector and hash-index layouts.

parse(build(model)) == model over generated models, build(parse(bytes)) == bytes over every
Java-written fixture, and the fast hash writer equals the generated codec.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from fixture_catalog import CONTAINERS, DELETION_VECTORS
from paimon_schema.layouts.hash_index import build_hash_index


@st.composite
def position_sets(draw, maximum: int) -> list[int]:
    """Positions shaped to hit array, bitmap and run containers and their thresholds."""
    shape = draw(st.sampled_from(["empty", "sparse", "runs", "array-4096", "bitmap-4097", "dense"]))
    base = draw(st.integers(0, maximum // 2)) & ~0xFFFF
    if shape == "empty":
        return []
    if shape == "sparse":
        return draw(st.lists(st.integers(0, maximum), max_size=40))
    if shape == "runs":
        start = draw(st.integers(0, 60000))
        return list(range(base + start, base + start + draw(st.integers(1, 5000))))
    if shape == "array-4096":
        return list(range(base, base + 2 * 4096, 2))
    if shape == "bitmap-4097":
        return list(range(base, base + 2 * 4097, 2))
    return list(range(base, base + 70_000, draw(st.integers(1, 3))))




@given(st.dictionaries(st.text(max_size=20), position_sets(2**31 - 1), max_size=4))
@example({})
@example({"a": []})
def test_dv_32_parse_of_build_is_identity(vectors: dict[str, list[int]]) -> None:
    data, ranges = ps.write_deletion_vectors(vectors)
    parsed = ps.DeletionVectorFile.parse(data)
    assert [b.bitmap for b in parsed.bins] == [BitMap(v) for v in vectors.values()]
    assert [(b.offset, b.length) for b in parsed.bins] == list(ranges.values())
    assert list(ranges) == list(vectors)
    assert parsed.to_bytes() == data
    for name, (offset, length) in ranges.items():
        assert ps.read_deletion_vector(data, offset, length) == BitMap(vectors[name])


@given(st.dictionaries(st.text(max_size=8), st.lists(st.integers(0, 6 * 2**32), max_size=30), max_size=3))
@example({"gap": [2**33 + 5]})
@example({"empty": []})
def test_dv_64_parse_of_build_is_identity(vectors: dict[str, list[int]]) -> None:
    data, ranges = ps.write_deletion_vectors(vectors, bitmap64=True)
    parsed = ps.DeletionVectorFile.parse(data)
    assert all(b.bitmap64 for b in parsed.bins)
    assert [b.bitmap for b in parsed.bins] == [BitMap64(v) for v in vectors.values()]
    assert [(b.offset, b.length) for b in parsed.bins] == list(ranges.values())
    assert parsed.to_bytes() == data


@pytest.mark.parametrize("vectors, bitmap64, complaint", [
    ({"a": [-1]}, False, "out of range"),
    ({"a": [2**31]}, False, "out of range"),
    ({"a": [0x7FFF_FFFE_8000_0001]}, True, "out of range"),
    ({"a": [1.5]}, False, "integers"),
    ({"a": [True]}, False, "integers"),
    ({"a": "12"}, False, "iterable"),
    ({1: [1]}, False, "strings"),
    ({"a": [2**40 * 2**20]}, True, "buckets"),
])
def test_dv_writer_refuses_what_paimon_cannot_store(vectors, bitmap64: bool, complaint: str) -> None:
    with pytest.raises(ps.SchemaError, match=complaint):
        ps.write_deletion_vectors(vectors, bitmap64=bitmap64)


def test_dv_writer_takes_numpy_and_bitmaps() -> None:
    a, _ = ps.write_deletion_vectors({"f": np.array([5, 1, 5, 3], dtype=np.int32)})
    b, _ = ps.write_deletion_vectors({"f": BitMap(range(1, 6, 2))})   # range-built: rebuilt fresh
    c, _ = ps.write_deletion_vectors({"f": [1, 3, 5]})
    assert a == b == c


@given(st.dictionaries(
    st.text(max_size=12),
    st.dictionaries(st.sampled_from(["bloom-filter", "bitmap", "bsi", "range-bitmap", "x\x00é😀"]),
                    st.one_of(st.none(), st.binary(max_size=64)), max_size=4),
    max_size=5))
def test_container_parse_of_build_is_identity(columns: dict[str, dict[str, bytes | None]]) -> None:
    data = ps.write_file_index(columns)
    parsed = ps.FileIndexFile.parse(data)
    assert parsed.columns == columns
    assert [list(v) for v in parsed.columns.values()] == [list(v) for v in columns.values()]
    assert parsed.to_bytes() == data
    assert parsed.warnings == []


@pytest.mark.parametrize("columns, complaint", [
    ({"a": {"bitmap": "text"}}, "bytes or None"),
    ({"a" * 70000: {"bitmap": b""}}, "65535"),
    ({1: {"bitmap": b""}}, "string"),
])
def test_container_writer_refuses_what_java_cannot_store(columns, complaint: str) -> None:
    with pytest.raises(ps.SchemaError, match=complaint):
        ps.write_file_index(columns)


@given(st.lists(st.integers(-2**31, 2**31 - 1), max_size=200))
def test_hash_writer_equals_the_generated_codec(hashes: list[int]) -> None:
    data = ps.write_hash_index(hashes)
    assert data == build_hash_index(hashes)
    assert ps.read_hash_index(data).tolist() == hashes


@pytest.mark.parametrize("bad", [[2**31], [-2**31 - 1], [1.5], ["1"]])
def test_hash_writer_refuses_non_int32(bad) -> None:
    with pytest.raises(ps.SchemaError):
        ps.write_hash_index(bad)


@pytest.mark.parametrize("relpath", sorted(DELETION_VECTORS))
def test_dv_fixture_writes_back_identically(shared_fixtures: Path, relpath: str) -> None:
    data = (shared_fixtures / relpath).read_bytes()
    assert ps.DeletionVectorFile.parse(data).to_bytes() == data


@pytest.mark.parametrize("relpath", sorted(CONTAINERS))
def test_container_fixture_writes_back_identically(shared_fixtures: Path, relpath: str) -> None:
    data = (shared_fixtures / relpath).read_bytes()
    parsed = ps.FileIndexFile.parse(data)
    assert parsed.to_bytes() == data
    assert ps.write_file_index(parsed.columns) == data
