"""Global-index metadata: `SortedIndexFileMeta` and the DEIX source metadata decode through
their specs and re-encode to Java's bytes; legacy and malformed bytes; index-type kinds."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_schema.layouts.global_index_meta import (DataEvolutionSourceMeta, GlobalIndexMeta, SortedIndexFileMeta,
                                                     index_kind)
from paimon_schema.values.errors import FormatError

KEYS = st.none() | st.binary(max_size=12)


@given(KEYS, KEYS, st.booleans())
def test_sorted_meta_round_trips(first: bytes | None, last: bytes | None, has_nulls: bool) -> None:
    meta = SortedIndexFileMeta(first, last, has_nulls)
    assert SortedIndexFileMeta.parse(meta.to_bytes()) == meta


def test_sorted_meta_java_bytes() -> None:
    # Java: first key 0 (INT), last key 9, no nulls, version 1, no null flags
    data = bytes.fromhex("04000000 00000000 04000000 09000000 00 01 00")
    assert SortedIndexFileMeta.parse(data) == SortedIndexFileMeta(b"\0\0\0\0", b"\t\0\0\0", False)
    assert SortedIndexFileMeta(b"", None, True).to_bytes() == bytes.fromhex("00000000 00000000 01 01 02")


def test_legacy_sorted_meta() -> None:
    assert SortedIndexFileMeta.parse(bytes(8) + b"\x01") == SortedIndexFileMeta(None, None, True)
    assert SortedIndexFileMeta.parse(bytes(8) + b"\x00") == SortedIndexFileMeta(b"", b"", False)
    one_key = struct.pack("<i", 1) + b"a" + bytes(4) + b"\x01"
    assert SortedIndexFileMeta.parse(one_key) == SortedIndexFileMeta(b"a", b"", True)
    # one byte after has_nulls: no version read, the legacy rule applies, as in Java
    assert SortedIndexFileMeta.parse(bytes(8) + b"\x01\x01") == SortedIndexFileMeta(None, None, True)
    # an unknown version: its flags byte is not read
    assert SortedIndexFileMeta.parse(bytes(8) + b"\x01\x02\x03") == SortedIndexFileMeta(b"", b"", True)


@pytest.mark.parametrize(("data", "path"), [
    (b"\x05\x00\x00\x00ab", "first_key"),
    (b"\xff\xff\xff\xff", "len_first_key"),
    (bytes(8), "has_nulls"),
])
def test_bad_sorted_meta_is_located(data: bytes, path: str) -> None:
    with pytest.raises(FormatError) as caught:
        SortedIndexFileMeta.parse(data)
    assert caught.value.path == path and caught.value.offset is not None


@given(st.integers(1, 2**63 - 1))
def test_deix_round_trips(snapshot: int) -> None:
    meta = DataEvolutionSourceMeta(snapshot)
    data = meta.to_bytes()
    assert data[:4] == b"DEIX" and len(data) == 16
    assert DataEvolutionSourceMeta.is_data_evolution(data)
    assert DataEvolutionSourceMeta.parse(data) == meta


@pytest.mark.parametrize(("data", "path"), [
    (b"DEIY" + bytes(12), "magic"),
    (b"DEIX" + struct.pack(">iq", 2, 5), "version"),
    (b"DEIX" + struct.pack(">iq", 1, 0), "scan_snapshot_id"),
    (b"DEIX" + struct.pack(">iq", 1, 5) + b"\0", "scan_snapshot_id"),
    (b"DEIX" + struct.pack(">i", 1), "scan_snapshot_id"),
])
def test_bad_deix_is_located(data: bytes, path: str) -> None:
    with pytest.raises(FormatError) as caught:
        DataEvolutionSourceMeta.parse(data)
    assert caught.value.path == path


def test_global_index_meta_record() -> None:
    source = DataEvolutionSourceMeta(7).to_bytes()
    record = {"_INDEX_TYPE": "bitmap", "_GLOBAL_INDEX": {
        "_ROW_RANGE_START": 100, "_ROW_RANGE_END": 199, "_INDEX_FIELD_ID": 3, "_EXTRA_FIELD_IDS": [4, 5],
        "_INDEX_META": SortedIndexFileMeta(b"a", b"z", False).to_bytes(), "_SOURCE_META": source}}
    meta = GlobalIndexMeta.from_entry(record)
    assert meta is not None and meta.to_record() == record["_GLOBAL_INDEX"]
    assert meta.source == DataEvolutionSourceMeta(7) and meta.sorted_meta == SortedIndexFileMeta(b"a", b"z", False)
    assert GlobalIndexMeta.from_entry({"_INDEX_TYPE": "DELETION_VECTORS", "_GLOBAL_INDEX": None}) is None
    broken = GlobalIndexMeta.from_entry({**record, "_GLOBAL_INDEX": {**record["_GLOBAL_INDEX"],
                                                                     "_SOURCE_META": b"DEIX\0"}})
    assert broken is not None
    with pytest.raises(FormatError, match="_SOURCE_META"):
        broken.source


def test_index_kinds() -> None:
    assert [index_kind(t) for t in ("btree", "bitmap", "BITMAP")] == ["sorted"] * 3
    opaque = ["ivf-flat", "ivf-pq", "IVF_PQ", "diskann", "DANN", "ESM1", "lumina", "lumina-vector-ann",
              "full-text", "es-index", "fm", "multivalue"]
    assert {index_kind(t) for t in opaque} == {"opaque"}
    assert index_kind("HASH") == index_kind("DELETION_VECTORS") == "other"
    vector = GlobalIndexMeta("ivf-pq", 0, 9, 1, None, b"\x00opaque", None)
    assert vector.kind == "opaque" and vector.sorted_meta is None
