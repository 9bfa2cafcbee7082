"""`runtime.avro_blocks.read_records` (the C decoder of `runtime/avro.c`) reads what fastavro
reads: every manifest and manifest list of the Java-written fixture tables, and files of every
Avro type fastavro writes (logical types included); `read_fields` (`avro.c`'s `pick`: some
fields of each record) reads the same values projected. Malformed bytes raise FormatError
(with the field path when a record does not decode), never another exception."""

from __future__ import annotations

import datetime as dt
import gc
import io
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import oracle_unavailable

from paimon_schema.runtime import avro_blocks
from paimon_schema.runtime.avro_blocks import project, read_fields, read_records
from paimon_schema.values.errors import FormatError

SCHEMA = fastavro.parse_schema({"type": "record", "name": "r", "fields": [
    {"name": "b", "type": "boolean"}, {"name": "i", "type": "int"}, {"name": "l", "type": "long"},
    {"name": "f", "type": "float"}, {"name": "d", "type": "double"},
    {"name": "s", "type": "string"}, {"name": "y", "type": "bytes"},
    {"name": "u", "type": ["null", "string", "long"]},
    {"name": "a", "type": {"type": "array", "items": ["null", "long"]}},
    {"name": "m", "type": {"type": "map", "values": "int"}},
    {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y", "Z"]}},
    {"name": "x", "type": {"type": "fixed", "name": "F", "size": 3}},
    {"name": "n", "type": {"type": "record", "name": "inner", "fields": [
        {"name": "v", "type": ["null", {"type": "array", "items": "string"}]}]}},
    {"name": "again", "type": "inner"},
    {"name": "t", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}}]})

RECORDS = st.fixed_dictionaries({
    "b": st.booleans(), "i": st.integers(-2**31, 2**31 - 1), "l": st.integers(-2**63, 2**63 - 1),
    "f": st.floats(width=32, allow_nan=False), "d": st.floats(allow_nan=False),
    "s": st.text(max_size=20), "y": st.binary(max_size=20),
    "u": st.none() | st.text(max_size=5) | st.integers(-2**63, 2**63 - 1),
    "a": st.lists(st.none() | st.integers(-2**63, 2**63 - 1), max_size=5),
    "m": st.dictionaries(st.text(max_size=5), st.integers(-2**31, 2**31 - 1), max_size=3),
    "e": st.sampled_from(["X", "Y", "Z"]), "x": st.binary(min_size=3, max_size=3),
    "n": st.fixed_dictionaries({"v": st.none() | st.lists(st.text(max_size=4), max_size=3)}),
    "again": st.fixed_dictionaries({"v": st.none()}),
    "t": st.none() | st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2200, 1, 1),
                                   timezones=st.just(dt.timezone.utc)).map(
        lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
    "day": st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))})


def _avro(records: list[dict], codec: str = "zstandard", block: int = 4) -> bytes:
    buffer = io.BytesIO()
    fastavro.writer(buffer, SCHEMA, records, codec=codec, sync_interval=block)
    return buffer.getvalue()


def _fastavro(raw: bytes) -> list:
    return list(fastavro.reader(io.BytesIO(raw)))


@given(st.lists(RECORDS, max_size=12), st.sampled_from(["null", "deflate", "zstandard"]))
def test_every_type_reads_as_fastavro_reads_it(records: list[dict], codec: str) -> None:
    raw = _avro(records, codec)
    if avro_blocks._avro is None:       # built without a C compiler: fastavro reads (CI fails)
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    assert read_records(raw, "f.avro") == _fastavro(raw)


def test_other_codecs_and_recursive_schemas_fall_back_to_fastavro() -> None:
    recursive = fastavro.parse_schema({"type": "record", "name": "node", "fields": [
        {"name": "next", "type": ["null", "node"]}]})
    assert avro_blocks.compile_schema(recursive) is None
    buffer = io.BytesIO()
    fastavro.writer(buffer, recursive, [{"next": {"next": None}}])
    assert read_records(buffer.getvalue(), "n.avro") == [{"next": {"next": None}}]
    raw = _avro([{"b": True, "i": 1, "l": 2, "f": 0.5, "d": 1.5, "s": "s", "y": b"y", "u": None,
                  "a": [], "m": {}, "e": "Y", "x": b"abc", "n": {"v": None},
                  "again": {"v": None}, "t": None, "day": dt.date(2024, 5, 1)}], "bzip2")
    assert read_records(raw, "b.avro") == _fastavro(raw)


def test_fixture_manifests_read_as_fastavro_reads_them(shared_fixtures: Path) -> None:
    if avro_blocks._avro is None:       # fastavro against itself proves nothing (CI fails)
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    files = [p for p in sorted(shared_fixtures.rglob("manifest/*")) if p.is_file()]
    assert len(files) > 100
    for path in files:
        raw = path.read_bytes()
        assert read_records(raw, str(path)) == _fastavro(raw), path


def test_a_record_that_does_not_decode_is_located() -> None:
    raw = _avro([{"b": True, "i": 1, "l": 2, "f": 0.5, "d": 1.5, "s": "s" * 30, "y": b"y",
                  "u": None, "a": [], "m": {}, "e": "Y", "x": b"abc", "n": {"v": None},
                  "again": {"v": None}, "t": None, "day": dt.date(2024, 5, 1)}], "null")
    at = raw.index(b"s" * 30) - 1                   # the string's length: now past the block
    broken = raw[:at] + b"\x7e" + raw[at + 1:]
    with pytest.raises(FormatError, match="is not a readable Avro file: length beyond the block") as info:
        read_records(broken, "f.avro")
    assert info.value.path == "[0].s"


@given(st.data())
def test_malformed_files_raise_format_errors(data: st.DataObject) -> None:
    raw = bytearray(_avro(data.draw(st.lists(RECORDS, min_size=1, max_size=3)), "null", block=1))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    try:
        read_records(bytes(raw[:cut]), "f.avro")
    except FormatError:
        pass


def _zigzag(value: int) -> bytes:
    """An Avro long."""
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _one_block(schema: dict, body: bytes, codec: str = "null", records: int = 1) -> bytes:
    """An Avro file of `schema` whose one block holds `body` (written as is, for hostile bytes)."""
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), [], codec=codec)
    header = buffer.getvalue()
    sync = header[-16:]
    return header + _zigzag(records) + _zigzag(len(body)) + body + sync


@pytest.mark.parametrize("items", ["null", {"type": "record", "name": "empty", "fields": []}])
def test_items_of_no_bytes_cannot_be_claimed_by_the_million(items: Any) -> None:
    """Nulls and empty records take no bytes: a few block headers claiming 2^24 of them each
    (50M list slots from 13 bytes) are refused, not built."""
    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "array", "items": items}}]}
    body = _zigzag(1 << 24) * 3 + _zigzag(0)
    with pytest.raises(FormatError, match="block count beyond the block"):
        read_records(_one_block(schema, body), "bomb.avro")


@pytest.mark.parametrize("codec", ["deflate", "zstandard"])
def test_a_block_that_inflates_past_the_limit_is_refused(codec: str) -> None:
    import zlib

    import zstandard

    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    zeros = bytes(avro_blocks._MAX_BLOCK + 1)
    if codec == "deflate":
        packer = zlib.compressobj(1, zlib.DEFLATED, -15)
        body = packer.compress(zeros) + packer.flush()
    else:
        body = zstandard.ZstdCompressor().compress(zeros)
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "null"}]}
    with pytest.raises(FormatError, match="past 64 MiB"):
        read_records(_one_block(schema, body, codec), "bomb.avro")


#: Field paths of `SCHEMA`, nested, missing, through a union's record (Python projects those)
PATHS = [("b",), ("i",), ("l",), ("f",), ("d",), ("s",), ("y",), ("u",), ("a",), ("m",), ("e",),
         ("x",), ("n", "v"), ("again", "v"), ("n",), ("t",), ("day",), ("nope",), ("n", "nope")]


@given(st.lists(RECORDS, max_size=12), st.sampled_from(["null", "deflate", "zstandard"]),
       st.lists(st.sampled_from(PATHS), min_size=1, max_size=8, unique=True),
       st.sets(st.integers(0, 7)))
def test_picked_fields_are_the_records_projected(records: list[dict], codec: str,
                                                 wanted: list[tuple[str, ...]],
                                                 shared: set[int]) -> None:
    """`read_fields` (`avro.c`'s `pick`: some fields into flat tuples, the rest walked over)
    reads the values `read_records` reads, at any depth; None for what the schema lacks;
    the same whichever values it shares (decodes once per distinct encoding)."""
    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    raw = _avro(records, codec)
    paths = tuple(p for p in wanted if not any(p[:len(q)] == q and p != q for q in wanted))
    assert read_fields(raw, "f.avro", paths, tuple(sorted(shared))) == \
        [project(r, paths) for r in read_records(raw, "f.avro")]


def test_shared_values_are_one_object() -> None:
    """Equal values of a shared field (equal encodings) are one object, across blocks; other
    fields' are not, and distinct values stay distinct."""
    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    record = {"b": True, "i": 1, "l": 2, "f": 0.5, "d": 1.5, "s": "same", "y": b"y" * 40,
              "u": None, "a": [1, None], "m": {}, "e": "X", "x": b"abc", "n": {"v": ["p"]},
              "again": {"v": None}, "t": None, "day": dt.date(2024, 5, 14)}
    raw = _avro([record, record, {**record, "y": b"z", "s": "other"}, record], block=2)
    rows = read_fields(raw, "f.avro", (("y",), ("s",), ("a",), ("n", "v")), (0, 2, 3))
    assert [r[0] for r in rows] == [b"y" * 40, b"y" * 40, b"z", b"y" * 40]
    assert rows[0][0] is rows[1][0] is rows[3][0] and rows[0][2] is rows[3][2]
    assert rows[0][3] is rows[3][3] == ("p",)
    assert rows[0][1] == rows[1][1] == "same" and rows[0][1] is not rows[1][1]


def test_fields_behind_a_union_or_a_leaf_are_projected_in_python() -> None:
    schema = fastavro.parse_schema({"type": "record", "name": "o", "fields": [
        {"name": "maybe", "type": ["null", {"type": "record", "name": "in", "fields": [
            {"name": "w", "type": "long"}]}]}]})
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, [{"maybe": {"w": 3}}, {"maybe": None}])
    compiled = avro_blocks.compile_schema(schema)
    assert compiled is not None and avro_blocks._picks(compiled, (("maybe", "w"),)) is None
    assert read_fields(buffer.getvalue(), "o.avro", (("maybe", "w"), ("maybe",))) == \
        [(3, {"w": 3}), (None, None)]


def test_fixture_manifest_entries_pick_as_they_read(shared_fixtures: Path) -> None:
    """Every Java-written manifest (and manifest list), picked as the planner picks data file
    entries: the values `read_records` reads."""
    from paimon_schema.table.manifests import _ENTRY_FIELDS

    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    files = [p for p in sorted(shared_fixtures.rglob("manifest/*")) if p.is_file()]
    assert len(files) > 100
    for path in files:
        raw = path.read_bytes()
        assert read_fields(raw, str(path), _ENTRY_FIELDS) == \
            [project(r, _ENTRY_FIELDS) for r in read_records(raw, str(path))], path


@given(st.data())
def test_damaged_files_pick_as_they_read_or_raise_format_errors(data: st.DataObject) -> None:
    """On damaged bytes `read_fields` reads what `read_records` reads, or raises a
    FormatError; it fails only where `read_records` fails too (it may read on where a skipped
    string is not UTF-8 or a skipped logical type does not convert)."""
    raw = bytearray(_avro(data.draw(st.lists(RECORDS, min_size=1, max_size=3)),
                          data.draw(st.sampled_from(["null", "zstandard"])), block=1))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    damaged = bytes(raw[:data.draw(st.integers(0, len(raw)))])
    paths = tuple(data.draw(st.lists(st.sampled_from([p for p in PATHS if p != ("n",)]),
                                     min_size=1, max_size=6, unique=True)))
    try:
        expected: list | None = [project(r, paths) for r in read_records(damaged, "f.avro")]
    except FormatError:
        expected = None
    try:
        picked = read_fields(damaged, "f.avro", paths, tuple(range(0, len(paths), 2)))
    except FormatError:
        assert expected is None
    else:
        assert expected is None or picked == expected


@pytest.mark.parametrize("items", ["null", {"type": "record", "name": "empty", "fields": []}])
def test_skipped_items_of_no_bytes_cannot_be_claimed_by_the_million(items: Any) -> None:
    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "a", "type": {"type": "array", "items": items}}, {"name": "k", "type": "int"}]}
    body = _zigzag(1 << 24) * 3 + _zigzag(0) + _zigzag(7)
    with pytest.raises(FormatError, match="block count beyond the block") as info:
        read_fields(_one_block(schema, body), "bomb.avro", (("k",),))
    assert info.value.path == "[0].a"


def test_picked_tuples_of_atomic_values_are_not_tracked() -> None:
    """Rows and arrays of atomic values are untracked by the collector (its next pass would
    walk each of a big table's entries); a row holding a tracked dict (a record holding an
    array, picked whole) stays tracked."""
    if avro_blocks._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    record = {"b": True, "i": 1, "l": 2, "f": 0.5, "d": 1.5, "s": "s", "y": b"y", "u": None,
              "a": [1, None], "m": {"k": 1}, "e": "X", "x": b"abc", "n": {"v": ["p"]},
              "again": {"v": None}, "t": None, "day": dt.date(2024, 5, 14)}
    raw = _avro([record, record])
    atomic = read_fields(raw, "f.avro", (("s",), ("a",), ("n", "v")), (1,))
    assert not any(gc.is_tracked(row) or gc.is_tracked(row[1]) for row in atomic)
    assert all(gc.is_tracked(row) for row in read_fields(raw, "f.avro", (("s",), ("n",))))


@pytest.mark.parametrize("header", [b"\x02\x01\x01", b"\x02\x02k\x01", b"\x02\x7fk"])
def test_a_header_length_that_is_negative_or_past_the_end_is_refused(header: bytes) -> None:
    """A damaged metadata length (negative: the reading went back over the same bytes,
    forever) raises a FormatError."""
    raw = b"Obj\x01" + header + bytes(20)
    with pytest.raises(FormatError, match="header length"):
        read_records(raw, "h.avro")
    with pytest.raises(FormatError, match="header length"):
        read_fields(raw, "h.avro", (("a",),))


@pytest.mark.parametrize("codec", ["null", "deflate", "zstandard", "bzip2"])
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("count", [-1, 0, 2, 4])
def test_a_damaged_block_count_is_refused_not_read_short(codec: str, compiled: bool, count: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A block's record count lowered or made negative: fastavro reads that many records and
    goes on (records, and so files of a listing, lost without an error); both decoders refuse
    the block, located at its first byte (bzip2: fastavro's reader with C too)."""
    if not compiled:
        monkeypatch.setattr(avro_blocks, "_avro", None)
    record = {"b": True, "i": 1, "l": 2, "f": 0.5, "d": 1.5, "s": "s", "y": b"y", "u": None,
              "a": [], "m": {}, "e": "Y", "x": b"abc", "n": {"v": None}, "again": {"v": None},
              "t": None, "day": dt.date(2024, 5, 1)}
    raw = _avro([record] * 5, codec, block=1 << 20)
    start = raw.index(raw[-16:]) + 16                   # the only block, past the header's sync
    assert raw[start] == 5 << 1                         # zigzag 5
    damaged = raw[:start] + bytes([(count << 1) ^ (count >> 63)]) + raw[start + 1:]
    with pytest.raises(FormatError, match="block") as info:
        read_records(damaged, "c.avro")
    assert (info.value.offset, info.value.file, info.value.path) == (start, "c.avro", "")
