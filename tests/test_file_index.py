"""File-index containers: Java-written fixtures (sidecars and manifest-embedded), spec examples, errors."""

from __future__ import annotations

from pathlib import Path

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

import paimon_schema as ps
from fixture_catalog import CONTAINERS, TABLES

# Spec section 1.3: column "a" with bloom-filter 010203 and bitmap 09; "m[k]" with an empty bsi.
SPEC_EXAMPLE = bytes.fromhex(
    "00054e4ed01a35ae 00000001 0000005c 00000002 0001 61 00000002"
    " 000c 626c6f6f6d2d66696c746572 0000005c 00000003 0006 6269746d6170 0000005f 00000001"
    " 0004 6d5b6b5d 00000001 0003 627369 ffffffff 00000000 00000000 010203 09".replace(" ", ""))
EMPTY = bytes.fromhex("00054e4ed01a35ae 00000001 00000018 00000000 00000000".replace(" ", ""))


def test_spec_example() -> None:
    parsed = ps.FileIndexFile.parse(SPEC_EXAMPLE)
    assert parsed.columns == {"a": {"bloom-filter": b"\x01\x02\x03", "bitmap": b"\x09"},
                              "m[k]": {"bsi": None}}
    assert list(parsed.columns) == ["a", "m[k]"]
    assert list(parsed.columns["a"]) == ["bloom-filter", "bitmap"]
    assert parsed.head_length == 92
    assert [e.offset for e in parsed.entries] == [92, 95, -1]
    assert parsed.warnings == []


def test_empty_container() -> None:
    parsed = ps.FileIndexFile.parse(EMPTY)
    assert parsed.columns == {} and parsed.entries == [] and parsed.head_length == 24


def test_modified_utf8_column_name() -> None:
    name = bytes.fromhex("000b 61 c080 eda0bd edb880 c3a9".replace(" ", ""))   # modified UTF-8 (paimon_common.ksy `java_utf`)
    head = 8 + 4 + 4 + 4 + 4 + 8 + 4 + len(name) + 8
    data = (bytes.fromhex("00054e4ed01a35ae 00000001".replace(" ", "")) + head.to_bytes(4, "big")
            + (1).to_bytes(4, "big") + name + (1).to_bytes(4, "big") + bytes.fromhex("0006") + b"bitmap"
            + head.to_bytes(4, "big") + (1).to_bytes(4, "big") + bytes(4) + b"\x07")
    assert ps.FileIndexFile.parse(data).columns == {"a\x00\U0001F600é": {"bitmap": b"\x07"}}


@pytest.mark.parametrize("relpath", sorted(CONTAINERS))
def test_fixture_decodes_to_documented_entries(shared_fixtures: Path, relpath: str) -> None:
    data = (shared_fixtures / relpath).read_bytes()
    parsed = ps.FileIndexFile.parse(data)
    head_length, entries = CONTAINERS[relpath]
    assert parsed.head_length == head_length
    assert [(e.column, e.index_type, e.offset, e.length) for e in parsed.entries] == entries
    assert parsed.warnings == []
    # Blobs lie back to back after the head, in header order, up to the end of the file.
    stored = [e for e in parsed.entries if e.offset >= 0]
    assert [e.offset for e in stored] == [head_length + sum(e.length for e in stored[:i])
                                          for i in range(len(stored))]
    assert head_length + sum(e.length for e in stored) == len(data)
    for e in stored:
        assert e.blob == data[e.offset:e.offset + e.length]
        assert parsed.columns[e.column][e.index_type] == e.blob


def _embedded_containers(table: Path) -> list[bytes]:
    found = []
    for manifest in sorted((table / "manifest").glob("manifest-[0-9a-f]*")):
        with manifest.open("rb") as f:
            for record in fastavro.reader(f):
                blob = record["_FILE"].get("_EMBEDDED_FILE_INDEX")
                if blob:
                    found.append(blob)
    return found


@pytest.mark.parametrize("table, columns", [
    ("append_with_bitmap.db/append_with_bitmap", ["f0", "f1", "f2"]),
    ("append_with_bitmap_v1.db/append_with_bitmap_v1", ["f0", "f1", "f2"]),
    ("data_evolution_with_index.db/data_evolution_with_index", ["f2"]),
])
def test_manifest_embedded_containers(shared_fixtures: Path, table: str, columns: list[str]) -> None:
    blobs = _embedded_containers(shared_fixtures / TABLES / table)
    assert blobs, "the table's manifests embed file indexes"
    for blob in blobs:
        parsed = ps.FileIndexFile.parse(blob)
        assert list(parsed.columns) == columns
        assert all(list(types) == ["bitmap"] for types in parsed.columns.values())
        assert parsed.head_length + sum(e.length for e in parsed.entries) == len(blob)


def test_v1_embedded_container_equals_cpp_golden(shared_fixtures: Path) -> None:
    golden = (shared_fixtures / "paimon-cpp/file-index/bitmap_3col_container.bin").read_bytes()
    assert golden in _embedded_containers(shared_fixtures / TABLES / "append_with_bitmap_v1.db/append_with_bitmap_v1")


def _error(data: bytes) -> ps.FormatError:
    with pytest.raises(ps.FormatError) as info:
        ps.FileIndexFile.parse(data)
    return info.value


@pytest.mark.parametrize("mutate, path, offset", [
    (lambda d: b"\x00" * 8 + d[8:], "magic", 0),
    (lambda d: d[:8] + b"\x00\x00\x00\x02" + d[12:], "version", 8),
    (lambda d: d[:12] + b"\x00\x00\x00\x05" + d[16:], "len_head", 12),
    # 2^31-1 columns: the head substream ends inside the third column, not in the blobs after it
    (lambda d: d[:16] + b"\x7f\xff\xff\xff" + d[20:], "head.columns[2].num_indexes", 90),
    (lambda d: d[:30], "head", 16),     # the declared head is not all there
    (lambda d: d[:94], "head.columns[0].indexes[0].ofs_blob", 41),
    (lambda d: d[:41] + b"\xff\xff\xff\xfe" + d[45:], "head.columns[0].indexes[0].ofs_blob", 41),
    (lambda d: d[:22] + b"\xff" + d[23:], "head.columns[0].name.value", 22),
])
def test_malformed_containers_are_located(mutate, path: str, offset: int) -> None:
    err = _error(mutate(SPEC_EXAMPLE))
    assert (err.path, err.offset) == (path, offset)


def test_head_slack_and_duplicates_are_warnings() -> None:
    # headLength 4 bytes larger than needed: Java ignores the slack.
    data = EMPTY[:12] + (28).to_bytes(4, "big") + EMPTY[16:] + b"\x00" * 4
    assert ps.FileIndexFile.parse(data).warnings == ["4 unused bytes at the end of the head"]


@given(st.data())
def test_plain_containers_parse_as_the_generated_parser_parses_them(data: st.DataObject) -> None:
    """`_parse_simple` (ASCII names, no repeats, blobs after the head, no slack) reads what the
    generated parser reads, and declines (None) what the parser refuses or warns about: on
    written containers, the spec's examples and damaged copies of them."""
    from paimon_schema.layouts.file_index import _parse_simple

    columns = data.draw(st.dictionaries(
        st.text("ab[]\u00e9", min_size=1, max_size=4),
        st.dictionaries(st.sampled_from(["bitmap", "bloom-filter", "bsi"]),
                        st.none() | st.binary(max_size=6), max_size=2), max_size=3))
    container = bytearray(data.draw(st.sampled_from(
        [ps.write_file_index(columns), SPEC_EXAMPLE, EMPTY])))
    for _ in range(data.draw(st.integers(0, 2))):
        container[data.draw(st.integers(0, len(container) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        container = container[:data.draw(st.integers(0, len(container)))]
    fast = _parse_simple(bytes(container))
    try:
        slow = ps.FileIndexFile.parse(container)    # a bytearray: the generated parser's path
    except ps.FormatError:
        assert fast is None
        return
    if slow.warnings or not all(name.isascii() and "\x00" not in name for name in slow.column_names):
        assert fast is None
    elif fast is not None:
        assert (fast, fast.warnings) == (slow, [])
    else:                       # declined a plain container: only an index type not ASCII
        assert any(not e.index_type.isascii() or "\x00" in e.index_type for e in slow.entries)
