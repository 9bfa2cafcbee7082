"""Btree global index files: our writer gives pypaimon 2.1.0's bytes and Java's structure, our
reader answers every query like the truth (and like pypaimon's reader), reads lazily, and
reports bad bytes located; the generated parser reads what the reader reads."""

from __future__ import annotations

import io
import math
import os
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from pyroaring import BitMap64
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import REQUIRE_ORACLES_ENV, import_oracle, oracles_required
from strategies import damaged_btree_files, hostile_btree_footers, values_for

from paimon_schema import FormatError, SchemaError
from paimon_schema.generated.btree_global_index import BtreeGlobalIndex
from paimon_schema.layouts import registry
from paimon_schema.layouts.btree_global_index import BTreeGlobalIndexReader, write_btree_global_index
from paimon_schema.layouts.btree_global_index import sst
from paimon_schema.layouts.btree_global_index.keys import btree_keys
from paimon_schema.generated import btree_global_index_codec
from paimon_schema.runtime import constructs
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.types import float32, float_bits

TABLE = Path("paimon-cpp/tables/parquet/pk_btree_e2e.db/pk_btree_e2e")
TYPES = ["INT", "BIGINT", "SMALLINT", "TINYINT", "BOOLEAN", "DATE", "TIME", "FLOAT", "DOUBLE", "STRING",
         "DECIMAL(10, 2)", "DECIMAL(25, 3)", "TIMESTAMP(3)", "TIMESTAMP(6)"]


def _java_sortable(data_type: str, value: Any) -> bool:
    """pypaimon agrees with Java except on -0.0 (merged with 0.0) and on NaNs other than Java's
    one (their bits kept): the spec's doc records both; the byte-identity property leaves them out."""
    if not isinstance(value, float):
        return True
    if math.isnan(value):
        width = 32 if data_type == "FLOAT" else 64
        return float_bits(value, width, canonical=False) == float_bits(value, width, canonical=True)
    return not (value == 0 and math.copysign(1.0, value) < 0)


@st.composite
def columns(draw: st.DrawFn, data_type: str) -> list[Any]:
    value = values_for(data_type).filter(lambda v: _java_sortable(data_type, v))
    if data_type == "FLOAT":
        value = value.map(float32).filter(lambda v: _java_sortable(data_type, v))
    return draw(st.lists(st.none() | value, min_size=1, max_size=300))


# -- pypaimon 2.1.0 as the oracle -------------------------------------------------------------------


class _Output(io.BytesIO):
    def close(self) -> None:
        self.written = self.getvalue()


class _FileIO:
    """The slice of pypaimon's FileIO its btree writer and reader use, in memory."""

    def __init__(self, data: bytes = b"") -> None:
        self.data = data

    def check_or_mkdirs(self, path: str) -> None:
        pass

    def new_output_stream(self, path: str) -> _Output:
        self.out = _Output()
        return self.out

    def new_input_stream(self, path: str) -> io.BytesIO:
        return io.BytesIO(self.data)

    def delete_quietly(self, path: str) -> None:
        pass


def _pypaimon_serializer(data_type: str) -> Any:
    import_oracle("pypaimon")
    from pypaimon.globalindex.key_serializer import create_serializer
    from pypaimon.schema.data_types import AtomicType

    return create_serializer(AtomicType(data_type.replace(" ", "")))


def _pypaimon_value(data_type: str, value: Any) -> Any:
    import decimal
    return decimal.Decimal(value) if data_type.startswith("DECIMAL") and value is not None else value


def pypaimon_write(data_type: str, values: list[Any], *, block_size: int, bloom_filter: bool) -> tuple[bytes, bytes]:
    """pypaimon's file and `_INDEX_META` for a column: its writer fed (key, row id) in key order,
    then the nulls (its contract: keys ascending, as Java's builders sort them)."""
    from pypaimon.globalindex.btree.btree_index_writer import BTreeIndexWriter

    keys = btree_keys(data_type)
    present = sorted(((keys.order(v), i, v) for i, v in enumerate(values) if v is not None),
                     key=lambda p: (p[0], p[1]))
    fio = _FileIO()
    writer = BTreeIndexWriter(fio, "/index", _pypaimon_serializer(data_type), block_size=block_size,
                              bloom_filter_enabled=bloom_filter)
    for _, row, value in present:
        writer.write(_pypaimon_value(data_type, value), row)
    for row, value in enumerate(values):
        if value is None:
            writer.write(None, row)
    (entry,) = writer.finish()
    return fio.out.written, entry.meta


#: days from 1970-01-01 to Python's date.min and date.max: pypaimon decodes keys into `datetime`s
_DAYS = (-719_162, 2_932_896)


def _pypaimon_can_read(data_type: str, values: list[Any]) -> bool:
    """Whether every key is a date or datetime Python can hold (pypaimon's reader decodes them)."""
    per_day = {"DATE": 1, "TIMESTAMP(3)": 86_400_000, "TIMESTAMP(6)": 86_400_000_000}.get(data_type)
    return per_day is None or all(v is None or _DAYS[0] * per_day <= v < _DAYS[1] * per_day for v in values)


def pypaimon_reader(data_type: str, data: bytes, meta: bytes) -> Any:
    from pypaimon.globalindex.btree.btree_index_reader import BTreeIndexReader
    from pypaimon.globalindex.global_index_meta import GlobalIndexIOMeta

    return BTreeIndexReader(_pypaimon_serializer(data_type), _FileIO(data), "/index",
                            GlobalIndexIOMeta("btree.index", len(data), meta))


@pytest.mark.parametrize("data_type", TYPES)
@given(data=st.data(), block_size=st.sampled_from([1, 16, 64, 300, 65536]), bloom=st.booleans())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_writer_gives_pypaimons_bytes_and_its_reader_reads_ours(data_type: str, data: st.DataObject,
                                                                block_size: int, bloom: bool) -> None:
    values = data.draw(columns(data_type))
    ours = write_btree_global_index(data_type, values, block_size=block_size, bloom_filter=bloom,
                                    java_null_bitmap=False)
    theirs, meta = pypaimon_write(data_type, values, block_size=block_size, bloom_filter=bloom)
    assert ours.data == theirs
    assert ours.index_meta == meta
    if not _pypaimon_can_read(data_type, values):
        return
    reader = pypaimon_reader(data_type, ours.data, ours.index_meta)
    mine = BTreeGlobalIndexReader.open(ours.data, data_type)
    present = [v for v in values if v is not None]
    for probe in present[:3]:
        literal = _pypaimon_value(data_type, probe)
        assert set(reader.visit_equal(literal).results()) == set(mine.equal(probe))
        assert set(reader.visit_less_than(literal).results()) == set(mine.less_than(probe))
        assert set(reader.visit_greater_or_equal(literal).results()) == set(mine.greater_or_equal(probe))
    assert set(reader.visit_is_null().results()) == set(mine.is_null())
    assert set(reader.visit_is_not_null().results()) == set(mine.is_not_null())


# -- queries against the truth ---------------------------------------------------------------------


def _truth(data_type: str, values: list[Any], keep: Callable[[Any], bool]) -> set[int]:
    keys = btree_keys(data_type)
    return {i for i, v in enumerate(values) if v is not None and keep(keys.order(v))}


@pytest.mark.parametrize("data_type", ["INT", "DOUBLE", "STRING", "DECIMAL(25, 3)", "TIMESTAMP(6)"])
@given(data=st.data(), block_size=st.sampled_from([1, 40, 4096]))
@settings(max_examples=30, deadline=None)
def test_every_query_answers_like_the_truth(data_type: str, data: st.DataObject, block_size: int) -> None:
    values = data.draw(st.lists(st.none() | values_for(data_type), min_size=1, max_size=200))
    f = write_btree_global_index(data_type, values, block_size=block_size, bloom_filter=data.draw(st.booleans()))
    reader = BTreeGlobalIndexReader.open(f.data, data_type)
    keys = btree_keys(data_type)
    probes = data.draw(st.lists(values_for(data_type), min_size=2, max_size=4)) + values[:2]
    for probe in (p for p in probes if p is not None):
        o = keys.order(probe)
        assert set(reader.equal(probe)) == _truth(data_type, values, lambda k, o=o: k == o)
        assert set(reader.less_than(probe)) == _truth(data_type, values, lambda k, o=o: k < o)
        assert set(reader.less_or_equal(probe)) == _truth(data_type, values, lambda k, o=o: k <= o)
        assert set(reader.greater_than(probe)) == _truth(data_type, values, lambda k, o=o: k > o)
        assert set(reader.greater_or_equal(probe)) == _truth(data_type, values, lambda k, o=o: k >= o)
    ordered = sorted((p for p in probes if p is not None), key=keys.order)
    low, high = ordered[0], ordered[-1]
    lo, hi = keys.order(low), keys.order(high)
    assert set(reader.between(low, high)) == _truth(data_type, values, lambda k: lo <= k <= hi)
    assert set(reader.isin(probes + [None])) == _truth(data_type, values,
                                                     lambda k: k in {keys.order(p) for p in probes if p is not None})
    assert set(reader.is_null()) == {i for i, v in enumerate(values) if v is None}
    assert set(reader.is_not_null()) == _truth(data_type, values, lambda k: True)
    if data_type == "STRING":
        for prefix in {p[:1] for p in probes if p is not None} | {"", "\U0001f600"}:
            assert set(reader.starts_with(prefix)) == {i for i, v in enumerate(values)
                                                       if v is not None and v.startswith(prefix)}


def test_a_reader_opened_from_a_path_closes_its_file(tmp_path: Path) -> None:
    path = tmp_path / "btree.index"
    path.write_bytes(_sample())
    with BTreeGlobalIndexReader.open(path, "INT") as reader:
        assert set(reader.equal(1)) == set(range(2, 180, 6))
    assert reader.source.closed


@pytest.mark.parametrize("block_size", [65536, 512])
def test_a_point_lookup_reads_the_footer_the_index_block_and_one_data_block(block_size: int,
                                                                             tmp_path: Path) -> None:
    """Opening reads the file's last `sst.TAIL` bytes (the footer, and the index block where
    it lies inside them: with 64 KiB blocks; with 512-byte ones it is larger and read apart),
    a point lookup one data block more: counted on a file object and on a path."""
    values = [None if i % 1000 == 7 else i % 50_000 for i in range(200_000)]
    f = write_btree_global_index("INT", values, block_size=block_size)
    path = tmp_path / "btree.index"
    path.write_bytes(f.data)
    for counted in (_CountingFile(f.data), None):
        reader = BTreeGlobalIndexReader.open(counted or path, "INT")
        read = counted or reader.source
        footer = reader.footer
        inside = footer.ofs_index_block >= len(f.data) - sst.TAIL
        assert inside == (block_size == 65536)
        opened = sst.TAIL + (0 if inside else footer.len_index_block + 5)
        assert read.bytes_read == opened
        assert set(reader.equal(31_337)) == {31_337, 81_337, 131_337, 181_337}
        block = next(b for b in reader.blocks if btree_keys("INT").order_of_key(b.last_key, "", 0) >= 31_337)
        assert read.bytes_read == opened + block.size + 5
        assert read.bytes_read < len(f.data) // 10
        assert set(reader.is_null()) == set(range(7, 200_000, 1000))
        # the null bitmap is small and just before the index block: read with it where that is
        assert (footer.ofs_null_bitmap >= len(f.data) - sst.TAIL) == inside
        assert read.bytes_read == opened + block.size + 5 + (0 if inside else footer.len_null_bitmap + 4)
        reader.close()


class _CountingFile(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, n: int | None = -1) -> bytes:
        chunk = super().read(n)
        self.bytes_read += len(chunk)
        return chunk


# -- Java's files ----------------------------------------------------------------------------------


def _java_files(shared_fixtures: Path) -> list[tuple[str, bytes, np.ndarray, bytes]]:
    """(file name, bytes, the indexed column in row-id order, `_INDEX_META`) of the sample
    table's btree files: row ids number the rows of the source files the manifest lists."""
    import_oracle("fastavro")
    import_oracle("pyarrow.parquet")
    import fastavro
    import pyarrow.parquet as pq
    table = shared_fixtures / TABLE
    found: dict[str, tuple[str, bytes, np.ndarray, bytes]] = {}
    for manifest in sorted((table / "manifest").glob("index-manifest-*")):
        with manifest.open("rb") as fh:
            for record in fastavro.reader(fh):
                if record["_INDEX_TYPE"] != "btree":
                    continue
                meta = record["_GLOBAL_INDEX"]
                sources = re.findall(rb"(data-[0-9a-f-]+\.parquet)(.{8})", meta["_SOURCE_META"], re.S)
                scores = np.concatenate([
                    pq.read_table(table / "bucket-0" / name.decode(), columns=["score"])["score"].to_numpy(zero_copy_only=False) for name, _ in sources])
                assert len(scores) == sum(int.from_bytes(n, "big") for _, n in sources)
                name = record["_FILE_NAME"]
                found[name] = (name, (table / "index" / name).read_bytes(), scores, meta["_INDEX_META"])
    assert len(found) == 3
    return list(found.values())


def test_java_files_answer_like_the_tables_data(shared_fixtures: Path) -> None:
    for name, data, scores, _ in _java_files(shared_fixtures):
        reader = BTreeGlobalIndexReader.open(data, "INT")
        for value in sorted(set(scores.tolist())):
            assert set(reader.equal(value)) == set(np.flatnonzero(scores == value).tolist()), name
            assert set(reader.less_than(value)) == set(np.flatnonzero(scores < value).tolist()), name
        assert set(reader.between(2, 5)) == set(np.flatnonzero((scores >= 2) & (scores <= 5)).tolist())
        assert set(reader.is_not_null()) == set(range(len(scores)))
        assert not reader.is_null()


def test_our_writer_gives_javas_files_but_for_the_row_id_order_within_a_key(shared_fixtures: Path) -> None:
    """Java's builder lists a key's row ids in its sorter's order, ours ascending (the spec's
    doc); sizes, blocks, keys, row-id sets, footer and `_INDEX_META` are Java's."""
    for name, data, scores, meta in _java_files(shared_fixtures):
        ours = write_btree_global_index("INT", scores.tolist())
        assert len(ours.data) == len(data) and ours.data[-52:] == data[-52:], name
        assert ours.index_meta == meta
        java, mine = BTreeGlobalIndexReader.open(data, "INT"), BTreeGlobalIndexReader.open(ours.data, "INT")
        assert java.blocks == mine.blocks
        assert [(k, sorted(r.tolist())) for k, r in java.entries()] == \
            [(k, sorted(r.tolist())) for k, r in mine.entries()]


def test_the_generated_parser_reads_what_the_reader_reads(shared_fixtures: Path) -> None:
    files = [("INT", data) for _, data, _, _ in _java_files(shared_fixtures)]
    files.append(("STRING", write_btree_global_index("STRING", ["b", None, "a", "b"] * 40, block_size=64,
                                                     bloom_filter=True).data))
    for data_type, data in files:
        parsed = parsing.parse(BtreeGlobalIndex, data)
        reader = BTreeGlobalIndexReader.open(data, data_type)
        assert [(e.value.ofs_block.value, e.value.len_block.value, bytes(e.key)) for e in parsed.index_block.contents.entries] \
            == [(h.offset, h.size, h.last_key) for h in reader.blocks]
        assert [len(b.block.stored) for b in parsed.data_blocks] == [h.size for h in reader.blocks]
        generated = [(bytes(e.key), [r.value for r in e.value.row_ids])
                     for b in parsed.data_blocks for e in b.block.contents.entries]
        assert generated == [(k, r.tolist()) for k, r in reader.entries()]
        assert parsed.footer.has_null_bitmap == reader.footer.has_null_bitmap


@pytest.mark.parametrize("compiled", [False, True], ids=["interpreted", "compiled"])
def test_the_generated_codec_round_trips_and_decodes_what_kaitai_decodes(shared_fixtures: Path, compiled: bool) -> None:
    codec = btree_global_index_codec.btree_global_index
    codec = codec.compile() if compiled else codec
    files = [data for _, data, _, _ in _java_files(shared_fixtures)]
    files += [_sample(), write_btree_global_index("STRING", ["b", None, "a"] * 30, block_size=32, bloom_filter=True).data]
    for data in files:
        model = constructs.parse(codec, data)
        assert codec.build(model) == data
        parsed = parsing.parse(BtreeGlobalIndex, data)
        assert [bytes(e["key"]) for b in model["data_blocks"] for e in b["block"]["contents"]["entries"]] == \
            [bytes(e.key) for b in parsed.data_blocks for e in b.block.contents.entries]
        assert model["footer"]["ofs_index_block"] == parsed.footer.ofs_index_block


# -- bad bytes --------------------------------------------------------------------------------------


def _sample() -> bytes:
    return write_btree_global_index("INT", [3, None, 1, 2, 3, None] * 30, block_size=40).data


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1:]


def _query_all(data: bytes) -> None:
    reader = BTreeGlobalIndexReader.open(data, "INT")
    reader.is_null()
    list(reader.entries())


@pytest.mark.parametrize("where, path", [
    (lambda r: r.blocks[1].offset + 2, "data_blocks[1].block.checksum"),
    (lambda r: r.footer.ofs_index_block, "index_block.checksum"),
    (lambda r: r.footer.ofs_null_bitmap + 9, "null_bitmap.checksum"),
    (lambda r: r.blocks[0].offset + r.blocks[0].size + 1, "data_blocks[0].block.checksum"),
])
def test_a_crc_mismatch_is_located(where: Callable[[Any], int], path: str) -> None:
    data = _sample()
    bad = _flip(data, where(BTreeGlobalIndexReader.open(data, "INT")))
    with pytest.raises(FormatError, match="CRC32 mismatch") as info:
        _query_all(bad)
    assert info.value.path == path and info.value.offset is not None


def test_a_wrong_magic_a_short_file_and_a_foreign_type_are_refused() -> None:
    data = _sample()
    with pytest.raises(FormatError) as info:
        BTreeGlobalIndexReader.open(data[:-1] + b"Q", "INT")
    assert (info.value.path, info.value.offset) == ("footer.magic", len(data) - 4)
    with pytest.raises(FormatError) as info:
        BTreeGlobalIndexReader.open(data[-30:], "INT")
    assert info.value.path == "footer"
    with pytest.raises(SchemaError, match="BINARY"):
        BTreeGlobalIndexReader.open(data, "BYTES")
    with pytest.raises(SchemaError):
        write_btree_global_index("INT", [])


@pytest.mark.parametrize("count, path, offset", [
    (2, "value.trailing[0]", 9),        # a byte after the count's ids: the spec's `trailing` refuses it
    (0, "value.no_row_ids[0]", 7),      # no row ids: the spec's `no_row_ids` refuses it
])
def test_an_entry_whose_row_ids_disagree_with_its_count_is_located(count: int, path: str, offset: int) -> None:
    """Refused where the generated parser refuses it, by the compiled and the Python paths."""
    data = bytearray(write_btree_global_index("INT", [7, 7, 7]).data)
    assert data[5:8] == b"\x04\x03\x00"            # len_value 4, count 3, first row id 0
    data[6] = count
    data[16:20] = struct.pack("<I", zlib.crc32(bytes(data[:16])))     # stored block + compression byte
    assert _generated_contents_error(bytes(data[:15]), False) == (f"contents.entries[0].{path}", offset)
    for kernels in (sst._kernels, None):
        with mock.patch.object(sst, "_kernels", kernels), pytest.raises(FormatError) as info:
            BTreeGlobalIndexReader.open(bytes(data), "INT").equal(7)
        assert (info.value.path, info.value.offset) == (f"data_blocks[0].block.contents.entries[0].{path}", offset)


def test_the_registry_detects_dumps_and_hex_dumps_it() -> None:
    data = _sample()
    assert registry.detect(data) == "btree-global-index"
    assert registry.find("btree").name == "btree-global-index"
    root = registry.parse_generated("btree", data)
    assert root.footer.magic == 0x50425449


def test_a_zstd_block_is_read_and_lz4_is_named() -> None:
    zstandard = import_oracle("zstandard")
    plain = write_btree_global_index("INT", [1, 2, 2, 3] * 100, block_size=1 << 20).data
    reader = BTreeGlobalIndexReader.open(plain, "INT")
    (block,) = reader.blocks
    stored = plain[:block.size]
    compressed = _var(block.size) + zstandard.ZstdCompressor().compress(stored)  # type: ignore[attr-defined]
    rebuilt = _with_block(plain, reader, compressed, 1)
    assert set(BTreeGlobalIndexReader.open(rebuilt, "INT").equal(2)) == {i for i in range(400) if i % 4 in (1, 2)}
    with pytest.raises(FormatError, match="lz4-compressed blocks are not supported") as info:
        BTreeGlobalIndexReader.open(_with_block(plain, reader, compressed, 2), "INT").equal(2)
    assert info.value.path == "data_blocks[0].block.compression"


def _var(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _with_block(plain: bytes, reader: BTreeGlobalIndexReader, stored: bytes, compression: int) -> bytes:
    """`plain` with its one data block replaced by `stored` (compression byte `compression`),
    the index block and footer rewritten to match."""
    f = reader.footer
    block = stored + bytes([compression]) + struct.pack("<I", zlib.crc32(stored + bytes([compression])))
    key = reader.blocks[0].last_key
    handle = _var(0) + _var(len(stored))
    entry = _var(len(key)) + key + _var(len(handle)) + handle
    index = entry + struct.pack("<I", len(entry)) + b"\x00"
    index_block = index + b"\x00" + struct.pack("<I", zlib.crc32(index + b"\x00"))
    footer = struct.pack("<QIQQIQIII", 0, 0, 0, len(block), len(index), 0, 0, 1, 0x50425449)
    assert not f.has_null_bitmap and not f.has_bloom_filter
    return block + index_block + footer


def test_the_command_line_dumps_verifies_and_hex_dumps_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from paimon_schema.cli import main as cli

    good, bad = tmp_path / "btree.index", tmp_path / "bad.index"
    data = _sample()
    good.write_bytes(data)
    bad.write_bytes(_flip(data, BTreeGlobalIndexReader.open(data, "INT").footer.ofs_index_block))
    assert cli.main(["dump", str(good), "--type", "INT"]) == 0
    out = capsys.readouterr().out
    assert "btree global index (INT), 3 data blocks" in out and "  3: {0, 4, 6, 10" in out and "  null: {1, 5," in out
    assert cli.main(["verify", str(good), "--type", "INT"]) == 0
    assert "OK" in capsys.readouterr().out
    assert cli.main(["verify", str(bad), "--type", "INT"]) == 1
    assert "index_block.checksum" in capsys.readouterr().out
    assert cli.main(["dump", str(good), "--hex"]) == 0
    assert "data_blocks[0].block.contents.entries[0].key" in capsys.readouterr().out
    assert cli.main(["dump", str(good), "--html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and "footer" in page and "magic" in page


# -- the compiled lookups (kernels.c) against the Python paths ------------------------------------


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return sorted(call())
    except FormatError as exc:
        return ("FormatError", exc.path, exc.offset)


def _lookups(data: bytes, data_type: str, probes: list[Any], path: Path | None = None,
             verify_checksum: bool = True) -> list[Any]:
    """Each probe's `equal` on a reader opened for it (the cold point lookup), or its error."""
    outcomes = []
    for probe in probes:
        def lookup(probe: Any = probe) -> Any:
            with BTreeGlobalIndexReader.open(path or data, data_type, verify_checksum=verify_checksum) as reader:
                return reader.equal(probe)
        outcomes.append(_outcome(lookup))
    return outcomes


def _shared_lookups(data: bytes, data_type: str, probes: list[Any], cache_size: int) -> list[Any]:
    """Each probe's `equal` twice on one reader (the second finds its block cached, as checked
    bytes or a block), then every row (`is_not_null`, which parses the cached blocks), or the errors."""
    try:
        reader = BTreeGlobalIndexReader.open(data, data_type, cache_size=cache_size)
    except FormatError as exc:
        return [("FormatError", exc.path, exc.offset)]
    outcomes = [_outcome(lambda probe=probe: reader.equal(probe)) for probe in probes + probes]
    return outcomes + [_outcome(reader.is_not_null), _outcome(lambda: reader.isin(probes))]


def _with_crcs(data: bytearray, spans: list[tuple[int, int]]) -> bytes:
    for offset, size in spans:
        data[offset + size + 1:offset + size + 5] = struct.pack("<I", zlib.crc32(bytes(data[offset:offset + size + 1])))
    return bytes(data)


@pytest.mark.parametrize("data_type", TYPES)
@given(data=st.data(), block_size=st.sampled_from([1, 40, 4096]))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_compiled_lookups_answer_and_fail_as_the_python_paths(data_type: str, data: st.DataObject, block_size: int,
                                                             tmp_path: Path) -> None:
    """A point lookup through the kernels (index and data block searched and decoded in
    place) gives the Python paths' row ids, and on a damaged block (CRCs fixed, so the damage
    reaches the entries) their FormatError, at the same offset and field path."""
    if sst._kernels is None:
        _no_kernels()
    values = data.draw(columns(data_type))
    f = write_btree_global_index(data_type, values, block_size=block_size)
    clean = BTreeGlobalIndexReader.open(f.data, data_type)
    spans = [(b.offset, b.size) for b in clean.blocks] + [(clean.footer.ofs_index_block,
                                                           clean.footer.len_index_block)]
    probes = [v for v in values[:3] + data.draw(st.lists(values_for(data_type), max_size=3)) if v is not None]
    damaged = bytearray(f.data)
    for _ in range(data.draw(st.integers(0, 3))):
        offset, size = data.draw(st.sampled_from(spans))
        at = offset + data.draw(st.integers(0, size - 1))
        damaged[at] = data.draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, damaged[at] ^ 1]))
    damaged_data = _with_crcs(damaged, spans)
    path = tmp_path / "btree.index"
    path.write_bytes(damaged_data)
    cache_size = data.draw(st.sampled_from([0, 1, 1 << 20]))
    compiled = _lookups(damaged_data, data_type, probes), _lookups(damaged_data, data_type, probes, path)
    shared = _shared_lookups(damaged_data, data_type, probes, cache_size)
    with mock.patch.object(sst, "_kernels", None):
        assert compiled == (_lookups(damaged_data, data_type, probes),) * 2
        python = _shared_lookups(damaged_data, data_type, probes, cache_size)
    # One reader, blocks cached: the same answers; on damaged bytes, where the Python path's
    # bulk checks of a cached block refuse it, the compiled path (which checks what each
    # lookup touches) may still answer, never the other way round.
    assert len(shared) == len(python)
    for ours, theirs in zip(shared, python):
        assert ours == theirs or (damaged_data != f.data and isinstance(theirs, tuple))


def test_the_compiled_block_lookup_declines_what_it_does_not_check() -> None:
    """`lookup_block` answers only for an intact uncompressed block (its CRC as given, its
    table describing entries); anything else is None, for the reader's own path to locate."""
    if sst._kernels is None:
        _no_kernels()
    f = write_btree_global_index("INT", [3, 5, 5, 9])
    (handle,) = BTreeGlobalIndexReader.open(f.data, "INT").blocks
    size, raw = handle.size, f.data[handle.offset:handle.offset + handle.size + 5]
    crc = zlib.crc32(raw[:size + 1])
    kind, width = btree_keys("INT").search_kind, btree_keys("INT").width

    def lookup(block: bytes, key: int = 5, checksum: int = crc, length: int = size) -> list[int] | None:
        return sst.lookup_block(block, length, checksum, kind, width, key)

    assert lookup(raw) == [1, 2] and lookup(raw, 4) == [] and lookup(raw, 99) == [] and lookup(raw, 9) == [3]
    assert lookup(raw, checksum=-1) == [1, 2]
    assert lookup(raw, checksum=crc ^ 1) is None                             # CRC mismatch
    assert lookup(raw[:size] + b"\x01" + raw[size + 1:]) is None             # compressed
    assert lookup(raw[:-1]) is None and lookup(raw, length=size - 1) is None  # cut short
    assert lookup(raw[:size - 1] + b"\x02" + raw[size:]) is None             # unknown aligned type
    table = raw[:size - 5] + struct.pack("<I", 0x7FFFFFFF) + raw[size - 1:]
    assert lookup(table) is None                                              # entries do not fit
    with mock.patch.object(sst, "_kernels", None):
        assert lookup(raw) is None


def _python_tail(data: bytes, verify: bool) -> Any:
    """What opening a reader reads of a file in Python (`read_footer`, `parse_block`): (the
    footer's fields, where the index block starts in the file's last `sst.TAIL` bytes, its
    entry count, entries' length, aligned size), or "FormatError"."""
    with mock.patch.object(sst, "_kernels", None):
        try:
            reader = BTreeGlobalIndexReader(sst.Source(data), btree_keys("INT"), verify_checksum=verify)
        except FormatError:
            return "FormatError"
    index, footer = reader._index, reader.footer
    start = footer.ofs_index_block - (len(data) - min(sst.TAIL, len(data)))
    return tuple(footer), start, index.count, index.len_entries, index.aligned_size


def _compiled_tail(data: bytes, verify: bool, size: int | None = None) -> Any:
    tail = memoryview(data)[len(data) - min(sst.TAIL, len(data)):]
    return sst._kernels.btree_tail(tail, len(data) if size is None else size, zlib.crc32 if verify else None)


@given(file=damaged_btree_files() | hostile_btree_footers(), verify=st.booleans())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_compiled_tail_reads_what_opening_reads_in_python(file: tuple[str, bytes], verify: bool) -> None:
    """`btree_tail` (the footer and the index block, checked from the file's last bytes in one
    call) gives what `read_footer` and `parse_block` read, or declines (None): never an answer
    where they refuse the bytes, on files damaged in their blocks (CRCs fixed) and on footers
    with hostile offsets and lengths (an offset plus a length past 2^64, sizes past the file)."""
    if sst._kernels is None:
        _no_kernels()
    _, data = file
    compiled = _compiled_tail(data, verify)
    assert compiled is None or compiled == _python_tail(data, verify)
    # a tail longer than the file it is said to end, or too short for a footer: declined
    for size in (51, 0, -1) + ((len(data) - 1,) if len(data) <= sst.TAIL else ()):
        assert _compiled_tail(data, verify, size) is None


@pytest.mark.parametrize("data_type", ["INT", "STRING", "DOUBLE"])
@pytest.mark.parametrize("block_size", [64, 4096, 65536])
def test_the_compiled_tail_answers_for_the_files_writers_write(data_type: str, block_size: int) -> None:
    """On intact files whose index block lies in the file's last `sst.TAIL` bytes, `btree_tail`
    answers (with and without the CRC) what the Python path reads; a flipped CRC is declined."""
    if sst._kernels is None:
        _no_kernels()
    values = [None if i % 13 == 0 else i % 400 for i in range(3000)]
    if data_type == "STRING":
        values = [None if v is None else f"k{v:04}" for v in values]
    data = write_btree_global_index(data_type, values, block_size=block_size, bloom_filter=block_size == 4096).data
    footer = BTreeGlobalIndexReader.open(data, data_type).footer
    assert footer.ofs_index_block >= len(data) - sst.TAIL
    for verify in (True, False):
        assert _compiled_tail(data, verify) == _python_tail(data, verify) != "FormatError"
    checksum = footer.ofs_index_block + footer.len_index_block + 1
    assert _compiled_tail(_flip(data, checksum), True) is None
    assert _compiled_tail(_flip(data, checksum), False) is not None


@given(file=damaged_btree_files() | hostile_btree_footers(), probes=st.lists(st.integers(-2**31, 2**31 - 1), max_size=3),
       verify=st.booleans())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
def test_a_reader_opened_from_a_path_answers_and_fails_as_the_python_path(
        file: tuple[str, bytes], probes: list[int], verify: bool, tmp_path: Path) -> None:
    """A reader opened per lookup from a path (the kernels check its footer and index block:
    `sst.open_tail`) gives, on drawn, damaged and hostile files, the row ids or the FormatError
    (field path and offset) of the Python path over the same bytes, and closes its file either way."""
    data_type, data = file
    keys = btree_keys(data_type)
    present = []
    try:
        present = [keys.decode(k) for k, _ in BTreeGlobalIndexReader.open(data, data_type).entries()][::5]
    except FormatError:
        pass
    chosen = present + ([str(p) for p in probes + [0]] if data_type == "STRING" else probes + [0])
    path = tmp_path / "btree.index"
    path.write_bytes(data)
    opened: list[int] = []
    real_open = sst.os.open

    def counted_open(*args: Any) -> int:
        opened.append(real_open(*args))
        return opened[-1]

    with mock.patch.object(sst.os, "open", counted_open):
        compiled = _lookups(data, data_type, chosen, path, verify)
    assert opened and all(_closed(fd) for fd in opened)
    with mock.patch.object(sst, "_kernels", None):
        assert compiled == _lookups(data, data_type, chosen, None, verify)
        assert compiled == _lookups(data, data_type, chosen, path, verify)


@pytest.mark.parametrize("size", [-5, 0, 51])
def test_a_path_reader_told_a_size_too_small_for_a_footer_refuses_it_and_closes(size: int, tmp_path: Path) -> None:
    path = tmp_path / "btree.index"
    path.write_bytes(_sample())
    opened: list[int] = []
    real_open = sst.os.open

    def counted_open(*args: Any) -> int:
        opened.append(real_open(*args))
        return opened[-1]

    with mock.patch.object(sst.os, "open", counted_open), pytest.raises(FormatError) as info:
        BTreeGlobalIndexReader.open(path, "INT", size=size)
    assert (info.value.path, info.value.offset) == ("footer", size)
    assert len(opened) == 1 and _closed(opened[0])


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _no_kernels() -> None:
    """Built without a C compiler the reader takes its Python paths (CI builds the kernels)."""
    reason = "the C extension paimon_schema.runtime._kernels is not built (no C compiler?)"
    if oracles_required():
        pytest.fail(f"{REQUIRE_ORACLES_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


# -- a block's contents: the reader fails where the generated parser fails ------------------------


def _generated_contents_error(data: bytes, is_index: bool) -> tuple[str, int | None] | None:
    """(path, offset) of the generated `block_contents`' first failure over a block's bytes:
    its table (`num_entries`), then its entries, then its entry positions, as `contents` of a
    `block` reads them in the substream of its stored size."""
    contents = BtreeGlobalIndex.BlockContents(is_index, len(data), parsing.stream(data))
    try:
        for name in ("num_entries", "entries", "entry_positions"):
            parsing.read_lazily(contents, name, "contents")
    except FormatError as exc:
        return exc.path, exc.offset
    return None


def _block_spans(f: Any) -> list[tuple[int, int, bool]]:
    reader = BTreeGlobalIndexReader.open(f.data, "INT")
    return [(b.offset, b.size, False) for b in reader.blocks] + [(reader.footer.ofs_index_block,
                                                                  reader.footer.len_index_block, True)]


@given(data=st.data(), block_size=st.sampled_from([1, 40, 200, 4096]))
@settings(max_examples=300, deadline=None)
def test_a_blocks_contents_fail_where_the_generated_parser_fails(data: st.DataObject, block_size: int) -> None:
    """`sst.contents_error` (the reader's refusals of a block defer to it) walks a block's
    contents as the generated `block.contents` reads them, a substream of the block's stored
    size, and fails at the same field path and offset: counts, lengths and table bytes set to
    0, 1, 0x7f, 0x80, 0xff or 0x7fffffff / 0xffffffff, the block cut or grown."""
    values = data.draw(st.lists(st.none() | st.integers(-300, 300), min_size=1, max_size=120))
    f = write_btree_global_index("INT", values, block_size=block_size)
    offset, size, is_index = data.draw(st.sampled_from(_block_spans(f)))
    block = bytearray(f.data[offset:offset + size])
    for _ in range(data.draw(st.integers(0, 3))):
        if data.draw(st.booleans()) and len(block) >= 5:     # the table's count or size
            block[-5:-1] = struct.pack("<I", data.draw(st.sampled_from([0, 1, 2, 3, 5, 0x7FFFFFFF, 0xFFFFFFFF])))
        elif block:
            at = data.draw(st.integers(0, len(block) - 1))
            block[at] = data.draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, block[at] ^ 1]))
    cut = data.draw(st.sampled_from([len(block), len(block), max(0, len(block) - 1), len(block) + 1]))
    contents = bytes(block[:cut]) + b"\x00" * (cut - len(block))
    expected = _generated_contents_error(contents, is_index)
    found = sst.contents_error(contents, 0, "contents", is_index)
    if expected is None or expected[1] is None:
        # the generated parser reads it all, or fails at a negative position (before it records one)
        assert found is None or expected is not None
    else:
        assert found is not None and (found.path, found.offset) == expected


@pytest.mark.parametrize("value", [0, 1, 0x7FFFFFFF, 0xFFFFFFFF])
@pytest.mark.parametrize("which", ["data", "index"])
def test_a_damaged_block_count_fails_the_reader_where_the_generated_parser_fails(value: int, which: str) -> None:
    """A block's count (or entry size) set to a hostile value, the CRC fixed: reading every
    row fails at the generated parser's field path and offset when it fails reading the
    block's contents, else at the reader's own check of the block, inside the block."""
    f = write_btree_global_index("INT", [i % 500 for i in range(3000)], block_size=1024)
    offset, size, is_index = _block_spans(f)[-1 if which == "index" else 1]
    data = bytearray(f.data)
    data[offset + size - 5:offset + size - 1] = struct.pack("<I", value)
    damaged = _with_crcs(data, [(offset, size)])
    with pytest.raises(FormatError) as info:
        BTreeGlobalIndexReader.open(damaged, "INT").is_not_null()
    expected = _generated_contents_error(damaged[offset:offset + size], is_index)
    where = "index_block" if is_index else "data_blocks[1].block"
    if expected is not None and expected[1] is not None:
        assert (info.value.path, info.value.offset) == (f"{where}.{expected[0]}", offset + expected[1])
    else:
        assert info.value.path.startswith(f"{where}.contents.") and offset <= info.value.offset < offset + size


# -- the fast paths against the generated parser, on drawn and damaged files ----------------------

_Part = Any     # a part's values, or the string "FormatError"


def _part(read: Callable[[], Any]) -> _Part:
    try:
        return read()
    except FormatError:
        return "FormatError"


def _fast_paths(data: bytes, data_type: str) -> dict[str, _Part]:
    """What the reader's fast paths read: the footer (`sst.read_footer`), the block handles
    (the index block searched and parsed in place), every data block's keys and row ids
    (decoded in bulk), point lookups through a fresh reader (the kernels; without a bloom
    filter), and the null rows."""
    def handles() -> list[tuple[int, int, bytes]]:
        return [(h.offset, h.size, h.last_key) for h in BTreeGlobalIndexReader.open(data, data_type).blocks]

    def entries() -> list[tuple[bytes, list[int]]]:
        return [(k, r.tolist()) for k, r in BTreeGlobalIndexReader.open(data, data_type).entries()]

    def lookups() -> list[list[int]]:
        keys = btree_keys(data_type)
        if _has_bloom_filter(data):
            return []
        return [sorted(BTreeGlobalIndexReader.open(data, data_type, cache_size=0).equal(keys.decode(k)))
                for k, _ in entries()[::7]]

    return {"footer": _part(lambda: tuple(sst.read_footer(sst.Source(data)))), "handles": _part(handles),
            "entries": _part(entries), "lookups": _part(lookups),
            "nulls": _part(lambda: sorted(BTreeGlobalIndexReader.open(data, data_type).is_null()))}


def _generated_parts(data: bytes, data_type: str) -> dict[str, _Part]:
    """The same parts as the generated parser reads them, with the checks the spec leaves to
    readers applied to its values (CRC32s, the footer's parts inside the file, keys of the
    type and ascending, handles inside the file and off the index block, entry positions as
    the entries lie, each block ending with its index key, nothing after the null bitmap)."""
    keys = btree_keys(data_type)
    parsed = parsing.parse(BtreeGlobalIndex, data)
    base = len(data) - 52

    def fresh(read: Callable[[], Any]) -> _Part:
        """A part read on a new parse: a failed instance may stay cached half-read."""
        nonlocal parsed
        parsed = parsing.parse(BtreeGlobalIndex, data)
        return _part(read)

    def footer() -> tuple[int, ...]:
        f = parsing.read_lazily(parsed, "footer")
        fields = (f.ofs_bloom_filter, f.len_bloom_filter, f.num_expected_entries, f.ofs_index_block,
                  f.len_index_block, f.ofs_null_bitmap, f.len_null_bitmap, int(f.version))
        _expect(f.ofs_index_block + f.len_index_block + 5 <= base)
        _expect(not f.has_null_bitmap or f.ofs_null_bitmap + f.len_null_bitmap + 4 <= base)
        _expect(not f.has_bloom_filter or (f.ofs_bloom_filter + f.len_bloom_filter <= base
                                           and f.len_bloom_filter > 0 and f.num_expected_entries > 0))
        return fields

    def block_contents(block: Any) -> Any:
        _expect(zlib.crc32(bytes(block.stored) + bytes([int(block.compression)])) == block.checksum)
        _expect(block.compression == BtreeGlobalIndex.BlockCompression.none)
        contents = parsing.read_lazily(block, "contents")
        for name in ("num_entries", "entries", "entry_positions"):
            parsing.read_lazily(contents, name)
        return contents

    def handles() -> list[tuple[int, int, bytes]]:
        opened()
        index = block_contents(parsing.read_lazily(parsed, "index_block"))
        _expect_positions(index)        # the index block's positions too (the reader checks them)
        found, previous = [], None
        for e in index.entries:
            order = keys.order_of_key(bytes(e.key), "", 0)
            _expect(previous is None or order > previous)
            previous = order
            offset, size = e.value.ofs_block.value, e.value.len_block.value
            _expect(offset + size + 5 <= base)
            _expect(offset + size + 5 <= footer()[3] or offset >= footer()[3] + footer()[4])
            found.append((offset, size, bytes(e.key)))
        return found

    def entries() -> list[tuple[bytes, list[int]]]:
        index = handles()
        found: list[tuple[bytes, list[int]]] = []
        previous = None
        for b, ref in enumerate(parsing.read_lazily(parsed, "data_blocks")):
            contents = block_contents(parsing.read_lazily(ref, "block"))
            _expect_positions(contents)
            for e in contents.entries:
                order = keys.order_of_key(bytes(e.key), "", 0)
                _expect(previous is None or order > previous)
                previous = order
                found.append((bytes(e.key), [r.value for r in e.value.row_ids]))
            _expect(previous == keys.order_of_key(index[b][2], "", 0))
        return found

    def lookups() -> list[list[int]]:
        return [] if _has_bloom_filter(data) else [sorted(ids) for _, ids in entries()[::7]]

    def opened() -> None:
        """What opening a reader checks: the footer, the index block's CRC and table."""
        footer()
        block = parsing.read_lazily(parsed, "index_block")
        _expect(zlib.crc32(bytes(block.stored) + bytes([int(block.compression)])) == block.checksum)
        _expect(block.compression == BtreeGlobalIndex.BlockCompression.none)
        contents = parsing.read_lazily(block, "contents")
        parsing.read_lazily(contents, "num_entries")
        n, tail = len(block.stored), contents.entry_size_or_count
        if contents.aligned_type == BtreeGlobalIndex.BlockAlignedType.aligned:
            _expect(tail != 0 and (n - 5) % tail == 0)
        else:
            _expect(n - 5 - 4 * tail >= 0 and (tail == 0) == (n - 5 - 4 * tail == 0))

    def nulls() -> list[int]:       # on an opened reader
        opened()
        f = parsing.read_lazily(parsed, "footer")
        if not f.has_null_bitmap:
            return []
        null_bitmap = parsing.read_lazily(parsed, "null_bitmap")
        _expect(zlib.crc32(bytes(null_bitmap._raw_bitmap)) == null_bitmap.checksum)
        _expect(not bytes(null_bitmap.bitmap.trailing))
        return sorted(BitMap64.deserialize(bytes(null_bitmap._raw_bitmap)))

    return {"footer": fresh(footer), "handles": fresh(handles), "entries": fresh(entries),
            "lookups": fresh(lookups), "nulls": fresh(nulls)}


def _has_bloom_filter(data: bytes) -> bool:
    """Whether the footer names a bloom filter: lookups consult it, the generated parser cannot
    (a damaged filter rightly hides keys), so the property leaves such lookups out."""
    return any(data[-52:-32])


def _expect(holds: bool) -> None:
    if not holds:
        raise FormatError("a check the spec leaves to readers fails", offset=None, path="")


def _expect_positions(contents: Any) -> None:
    """Entries lie back to back and fill the entries' bytes: unaligned, each starts where its
    position says; aligned, the common size divides the entries' bytes and each entry takes
    exactly that size (the spec reads them one after another, the reader at `i * size`)."""
    starts = [parsing.field_start(contents, "entries", i) for i in range(len(contents.entries))]
    if contents.aligned_type == BtreeGlobalIndex.BlockAlignedType.unaligned:
        _expect(list(contents.entry_positions) == starts)
    else:
        size = contents.entry_size_or_count
        _expect(size != 0 and contents.len_entries % size == 0)
        _expect(starts == [i * size for i in range(len(starts))])
    _expect(not contents.entries or parsing.field_end(contents, "entries") == contents.len_entries)


@given(file=damaged_btree_files())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_fast_paths_read_what_the_generated_parser_reads(file: tuple[str, bytes]) -> None:
    """On drawn files, damaged or not (CRCs fixed): the reader's fast paths for the footer,
    the block handles, the row ids (bulk and per lookup) and the null bitmap give the values
    the generated parser reads, or both refuse the bytes (FormatError)."""
    data_type, data = file
    assert _fast_paths(data, data_type) == _generated_parts(data, data_type)
