"""A Hypothesis property for a decoded manifest (`table.manifests._Decoded`, whose kinds, fold
keys and ADD rows `avro.c`'s `entries` makes in one pass): on drawn manifests, written as a
writer writes them, it holds what the Python comprehensions make from the same rows, and the
whole decode with the C extension what it gives without (fastavro's records, projected); on
damaged bytes both raise FormatError, never another exception, what the C decoder refuses
the Python path refuses too (a damaged block count once lost records there), and where both
read they read the same (`test_manifest_decode.py` holds the same on the fixture manifests)."""

from __future__ import annotations

import io
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import oracle_unavailable

from paimon_schema.runtime import avro_blocks
from paimon_schema.runtime.avro_blocks import read_fields
from paimon_schema.table import manifests
from paimon_schema.table.commit import MANIFEST_ENTRY_SCHEMA
from paimon_schema.table.manifests import _ENTRY_FIELDS, _SHARED_SLOTS, _Decoded
from paimon_schema.values.errors import FormatError
from tests.strategies import manifest_entries

_SCHEMA = fastavro.parse_schema(MANIFEST_ENTRY_SCHEMA)


def _manifest(records: list[dict[str, Any]], codec: str, block: int) -> bytes:
    buffer = io.BytesIO()
    fastavro.writer(buffer, _SCHEMA, records, codec=codec, sync_interval=block)
    return buffer.getvalue()


def _parts(decoded: _Decoded) -> tuple:
    return decoded.kinds, decoded.keys, decoded.rows, decoded.size, decoded.files


def _decoded(raw: bytes) -> tuple | None:
    """The manifest `raw` decoded (`Manifests._decoded`'s two calls); None for a FormatError."""
    try:
        return _parts(_Decoded("m", read_fields(raw, "m", _ENTRY_FIELDS, _SHARED_SLOTS)))
    except FormatError:
        return None


def _without_c(call: Any, *, decoder: bool) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifests, "_avro", None)
        if decoder:
            patch.setattr(avro_blocks, "_avro", None)
        return call()


@settings(max_examples=150, deadline=None)
@given(manifest_entries(), st.sampled_from(["null", "deflate", "zstandard"]), st.sampled_from([1, 200, 16_000]),
       st.data())
def test_entries_in_c_are_the_comprehensions_on_drawn_manifests(records: list[dict[str, Any]], codec: str,
                                                                 block: int, data: st.DataObject) -> None:
    if manifests._avro is None or avro_blocks._avro is None:    # Python against itself (CI fails)
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    raw = _manifest(records, codec, block)
    rows = read_fields(raw, "m", _ENTRY_FIELDS, _SHARED_SLOTS)
    compiled = _parts(_Decoded("m", rows))
    assert _without_c(lambda: _parts(_Decoded("m", rows)), decoder=False) == compiled
    assert _without_c(lambda: _decoded(raw), decoder=True) == compiled
    assert compiled[0] == [r["_KIND"] for r in records]
    assert [row is not None for row in compiled[2]] == [r["_KIND"] == manifests.ADD for r in records]

    damaged = bytearray(raw)                # bytes changed, mostly the records', some cut off
    blocks = raw.index(raw[-16:]) + 16      # past the header's sync marker
    low = data.draw(st.sampled_from([0, min(blocks, len(raw) - 1)]))
    for _ in range(data.draw(st.integers(1, 4))):
        damaged[data.draw(st.integers(low, len(damaged) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        damaged = damaged[:data.draw(st.integers(0, len(damaged)))]
    python = _without_c(lambda: _decoded(bytes(damaged)), decoder=True)   # FormatError or rows, nothing else
    try:
        rows = read_fields(bytes(damaged), "m", _ENTRY_FIELDS, _SHARED_SLOTS)
    except FormatError:
        assert python is None       # what the C decoder refuses, the Python path refuses too
        return
    compiled = _parts(_Decoded("m", rows))          # damaged values that still decode
    assert _without_c(lambda: _parts(_Decoded("m", rows)), decoder=False) == compiled
    assert python is None or python == compiled


@settings(max_examples=120, deadline=None)
@given(manifest_entries(), st.sampled_from(["null", "deflate", "zstandard"]), st.sampled_from([1, 200, 16_000]),
       st.data())
def test_a_gated_decode_is_the_full_one_but_for_the_excluded_entries(
        records: list[dict[str, Any]], codec: str, block: int, data: st.DataObject) -> None:
    """`read_fields`' gate (a plan skipping the entries of the partitions its filter excludes):
    an entry of a partition the judge keeps is decoded as in full, one of an excluded partition
    holds its kind and partition only, and each partition is judged once. On damaged bytes the
    gated decode raises FormatError only, and reads the same wherever the full decode reads
    (it walks over what it skips, checking less)."""
    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    raw = _manifest(records, codec, block)
    partitions = sorted({r["_PARTITION"] for r in records})
    excluded = set(data.draw(st.lists(st.sampled_from(partitions), unique=True))) if partitions else set()
    judged: list[bytes] = []

    def judge(partition: bytes) -> int:
        judged.append(partition)
        return 0 if partition in excluded else 1

    def gated(blob: bytes) -> tuple[list[tuple], dict[bytes, int]]:
        seen: dict[bytes, int] = {}
        return read_fields(blob, "m", _ENTRY_FIELDS, _SHARED_SLOTS, (manifests._PARTITION_SLOT, judge, seen, 0)), seen

    def held(full: list[tuple], rows: list[tuple]) -> None:
        assert len(rows) == len(full)
        for row, every in zip(rows, full):
            assert row == (every if every[1] not in excluded else every[:2] + (None,) * (len(every) - 2))

    rows, seen = gated(raw)
    held(read_fields(raw, "m", _ENTRY_FIELDS, _SHARED_SLOTS), rows)
    assert sorted(judged) == partitions and seen == {p: 0 if p in excluded else 1 for p in partitions}

    damaged = bytearray(raw)
    blocks = raw.index(raw[-16:]) + 16
    for _ in range(data.draw(st.integers(1, 4))):
        damaged[data.draw(st.integers(blocks if blocks < len(raw) else 0, len(damaged) - 1))] = \
            data.draw(st.integers(0, 255))
    try:
        rows = gated(bytes(damaged))[0]
    except FormatError:
        rows = None
    try:
        full = read_fields(bytes(damaged), "m", _ENTRY_FIELDS, _SHARED_SLOTS)
    except FormatError:
        return
    assert rows is not None
    held(full, rows)
