"""The bitmap global index file: the fast block reader equals the generated parser, a lookup
reads only its footer, index block, one dictionary block and one bitmap, both versions answer
alike, and bad bytes are located FormatErrors."""

from __future__ import annotations

import io
import math
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pyroaring import BitMap64
from hypothesis import given, settings
from hypothesis import strategies as st
from leb128 import fix_block_crcs, set_var_len
from strategies import global_index_columns

from paimon_schema.generated.bitmap_global_index import BitmapGlobalIndex
from paimon_schema.generated.paimon_common import PaimonCommon
from paimon_schema.layouts.bitmap_global_index import (FOOTER, TRAILER, BitmapGlobalIndexReader, GlobalKeys,
                                                       write_bitmap_global_index)
from paimon_schema.layouts.bitmap_global_index.blocks import Reads, check_payload_filled, read_block
from paimon_schema.generated import bitmap_global_index_codec
from paimon_schema.runtime import constructs, kaitai
from paimon_schema.values.errors import FormatError


class CountingFile(io.BytesIO):
    """A file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, n: int | None = -1) -> bytes:
        data = super().read(n)
        self.read_bytes += len(data)
        return data


def _rows(data: bytes, entry: BitmapGlobalIndex.DictionaryEntry) -> list[int]:
    """The rows of a parsed entry: its bitmap parsed by the spec, its values by pyroaring."""
    assert entry.bitmap.num_buckets >= 0
    start = entry.ofs_bitmap.value
    return list(BitMap64.deserialize(data[start:start + entry.len_bitmap.value]))


def _truth(values: list[object], key: bytes, keys: GlobalKeys) -> list[int]:
    return [i for i, v in enumerate(values) if v is not None and keys.encode(v) == key]


@settings(max_examples=60, deadline=None)
@given(global_index_columns(["INT", "BIGINT", "STRING", "DOUBLE", "SMALLINT", "DATE"], max_size=80),
       st.sampled_from([1, 2]), st.sampled_from([1, 30, 16384]))
def test_generated_parser_and_reader_agree(case: tuple[str, list[object]], version: int, block: int) -> None:
    data_type, values = case
    data = write_bitmap_global_index(data_type, values, version=version, dictionary_block_size=block)
    if not values:
        assert data == b""
        return
    keys = GlobalKeys.of(data_type)
    reader = BitmapGlobalIndexReader.open(data, data_type)
    root = kaitai.parse(BitmapGlobalIndex, data)
    assert int(root.footer.version) == reader.version == version
    parsed = [(bytes(e.key), _rows(data, e)) for ref in root.index_block.payload.dictionary_blocks
              for e in ref.block.payload.entries]
    assert parsed == [(key, list(rows)) for key, rows in reader.entries()]
    order = [k for k, _ in parsed]
    assert order == (sorted(order) if version == 1 else sorted(order, key=keys.order))
    assert root.footer.num_values == len(order)
    for key, rows in parsed:
        assert rows == _truth(values, key, keys)
    assert list(reader.is_null()) == [i for i, v in enumerate(values) if v is None]
    assert list(reader.is_not_null()) == [i for i, v in enumerate(values) if v is not None]
    for value in values:
        if value is not None:
            assert list(reader.equal(value)) == _truth(values, keys.encode(value), keys)
    assert list(reader.in_(values[:4])) == sorted({i for v in values[:4] if v is not None
                                                   for i in _truth(values, keys.encode(v), keys)})


def _many_keys(version: int) -> tuple[list[object], bytes]:
    values: list[object] = [i % 5000 if i % 7 else None for i in range(40000)]
    return values, write_bitmap_global_index("INT", values, version=version, dictionary_block_size=1024)


@pytest.mark.parametrize("version", [1, 2])
def test_a_point_lookup_reads_footer_index_one_block_and_one_bitmap(version: int) -> None:
    values, data = _many_keys(version)
    root = kaitai.parse(BitmapGlobalIndex, data)
    refs = root.index_block.payload.dictionary_blocks
    assert len(refs) > 10
    file = CountingFile(data)
    reader = BitmapGlobalIndexReader.open(file, "INT")
    assert file.read_bytes == FOOTER.size
    rows = reader.equal(4321)
    assert list(rows) == [i for i, v in enumerate(values) if v == 4321]
    key = GlobalKeys.of("INT").encode(4321)
    ref = next(r for r in refs if any(bytes(e.key) == key for e in r.block.payload.entries))
    entry = next(e for e in ref.block.payload.entries if bytes(e.key) == key)
    expected = (FOOTER.size + root.footer.len_index_block + TRAILER + ref.len_block.value + TRAILER
                + entry.len_bitmap.value)
    assert file.read_bytes == reader.bytes_read == expected
    assert expected < len(data) / 10


def test_missing_keys_and_nulls_match_nothing() -> None:
    values, data = _many_keys(1)
    reader = BitmapGlobalIndexReader.open(data, "INT")
    assert len(reader.equal(123456)) == 0 and len(reader.equal(None)) == 0
    assert len(reader.in_([None, -1, 7777])) == 0
    assert len(reader.is_null()) + len(reader.is_not_null()) == len(values)
    assert reader.verify() == 5000


def _located(data: bytes) -> FormatError | None:
    try:
        BitmapGlobalIndexReader.open(data, "INT").verify()
    except FormatError as exc:
        assert exc.offset is not None and 0 <= exc.offset <= len(data) and exc.path, exc
        return exc
    return None


@pytest.mark.parametrize("version", [1, 2])
def test_truncations_are_located_format_errors(version: int) -> None:
    data = write_bitmap_global_index("STRING", ["a", None, "bb", "a", "c"] * 9, version=version,
                                     dictionary_block_size=16)
    for cut in range(len(data)):
        assert _located(data[:cut]) is not None, cut


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_bit_flips_are_located_format_errors_or_valid(draw: st.DataObject) -> None:
    data = write_bitmap_global_index("INT", [3, None, 300, 3, -7, 70000] * 5, version=draw.draw(st.sampled_from([1, 2])),
                                     dictionary_block_size=24)
    at = draw.draw(st.integers(0, len(data) - 1))
    bit = draw.draw(st.integers(0, 7))
    flipped = bytearray(data)
    flipped[at] ^= 1 << bit
    _located(bytes(flipped))


def test_checksum_mismatch_names_the_block() -> None:
    data = bytearray(write_bitmap_global_index("INT", [1, 2, 3]))
    root = kaitai.parse(BitmapGlobalIndex, bytes(data))
    ref = root.index_block.payload.dictionary_blocks[0]
    data[ref.ofs_block.value + ref.len_block.value + 1] ^= 0xFF      # the block's CRC
    with pytest.raises(FormatError) as caught:
        BitmapGlobalIndexReader.open(bytes(data), "INT").equal(1)
    assert caught.value.path == "index_block.payload.dictionary_blocks[0].block.checksum"


def test_entries_short_of_the_payload_are_located() -> None:
    """The spec's check that Kaitai parsers cannot make: a block's entries fill its payload.
    Here dictionary block 0 counts one entry less than it holds (its CRC recomputed), so its
    last entry is left over: located at the first byte no entry reads."""
    data = bytearray(write_bitmap_global_index("INT", [1, 2, 3]))
    root = kaitai.parse(BitmapGlobalIndex, bytes(data))
    ref = root.index_block.payload.dictionary_blocks[0]
    start, length = ref.ofs_block.value, ref.len_block.value
    entries = ref.block.payload.entries
    assert data[start] == len(entries) == 3
    data[start] -= 1
    data[start + length + 1:start + length + 5] = zlib.crc32(data[start:start + length + 1]).to_bytes(4, "little")
    last = start + ref.block.payload._debug["entries"]["arr"][-1]["start"]
    with pytest.raises(FormatError) as caught:
        BitmapGlobalIndexReader.open(bytes(data), "INT").equal(3)
    assert caught.value.path == "index_block.payload.dictionary_blocks[0].block.payload"
    assert caught.value.offset == last


def test_short_file_and_bad_magic() -> None:
    with pytest.raises(FormatError, match="footer"):
        BitmapGlobalIndexReader.open(b"BGIX", "INT")
    data = bytearray(write_bitmap_global_index("INT", [1]))
    data[-1] ^= 1
    with pytest.raises(FormatError) as caught:
        BitmapGlobalIndexReader.open(bytes(data), "INT")
    assert caught.value.path == "footer.magic" and caught.value.offset == len(data) - 4


def test_nan_and_signed_zero_keys_follow_java() -> None:
    values = [0.0, -0.0, math.nan, -math.nan, 1.5]
    reader = BitmapGlobalIndexReader.open(write_bitmap_global_index("DOUBLE", values, version=2), "DOUBLE")
    assert list(reader.equal(0.0)) == [0] and list(reader.equal(-0.0)) == [1]
    assert list(reader.equal(math.nan)) == [2, 3]
    assert [GlobalKeys.of("DOUBLE").order(k) for k, _ in reader.entries()] == sorted(
        GlobalKeys.of("DOUBLE").order(k) for k, _ in reader.entries())


def test_version_2_is_javas_streaming_layout() -> None:
    """Java's `SortedBitmapGlobalIndexWriter`: keys in typed order, each bitmap run-optimized,
    the null and non-null bitmaps after the dictionary blocks, just before the index block."""
    values: list[object] = [v for i in range(300) for v in ([i // 50 - 3] if i % 11 else [None])]
    data = write_bitmap_global_index("INT", values, version=2, dictionary_block_size=32)
    root = kaitai.parse(BitmapGlobalIndex, data)
    f = root.footer
    entries = [e for ref in root.index_block.payload.dictionary_blocks for e in ref.block.payload.entries]
    assert [int.from_bytes(bytes(e.key), "little", signed=True) for e in entries] == [-3, -2, -1, 0, 1, 2]
    last_block = root.index_block.payload.dictionary_blocks[-1]
    assert f.ofs_null_rows == last_block.ofs_block.value + last_block.len_block.value + TRAILER
    assert f.ofs_non_null_rows == f.ofs_null_rows + f.len_null_rows
    assert f.ofs_index_block == f.ofs_non_null_rows + f.len_non_null_rows
    for e in entries:
        rows = BitMap64.deserialize(data[e.ofs_bitmap.value:e.ofs_bitmap.value + e.len_bitmap.value])
        optimized = BitMap64(rows)
        optimized.run_optimize()
        assert data[e.ofs_bitmap.value:e.ofs_bitmap.value + e.len_bitmap.value] == optimized.serialize()
        assert data[e.ofs_bitmap.value + 12:e.ofs_bitmap.value + 14] == b"\x3b\x30"    # run containers


def test_run_optimize_gives_javas_version_1_bitmaps() -> None:
    """Java's `BitmapGlobalIndexWriter` run-optimizes every bitmap, pypaimon's does not: the same
    layout, keys and rows, other bitmap bytes where runs are shorter."""
    values: list[object] = [7] * 3000 + [None if i % 50 == 0 else i // 1000 for i in range(3000, 6000)]
    plain = BitmapGlobalIndexReader.open(write_bitmap_global_index("INT", values), "INT")
    java = write_bitmap_global_index("INT", values, run_optimize=True)
    optimized = BitmapGlobalIndexReader.open(java, "INT")
    assert optimized.version == 1 and list(optimized.entries()) == list(plain.entries())
    assert len(java) < plain.footer.ofs_index_block / 10
    root = kaitai.parse(BitmapGlobalIndex, java)
    entry = root.index_block.payload.dictionary_blocks[0].block.payload.entries[-1]         # 7: rows 0..2999
    assert bytes(entry.key) == (7).to_bytes(4, "little")
    assert java[entry.ofs_bitmap.value + 12:entry.ofs_bitmap.value + 14] == b"\x3b\x30"


# -- damaged counts and lengths: the fast block reader fails exactly where the generated parser does

DAMAGE = (0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF)
SECONDS, MEGABYTES = 0.5, 64


def _var_len_counts(obj: Any, base: int, path: str) -> Iterator[tuple[str, int, int]]:
    """(path, file offset, byte width) of every count and length varint in a parsed block
    payload (`num_*`, `len_*`), `base` being where the payload starts in the file."""
    for name, info in obj._debug.items():
        value = getattr(obj, name)
        items = [(f"{name}[{i}]", span["start"], v) for i, (span, v) in enumerate(zip(info["arr"], value))] \
            if "arr" in info else [(name, info["start"], value)]
        for sub, start, item in items:
            if isinstance(item, (PaimonCommon.VarLenInt, PaimonCommon.VarLenLong)):
                if name.startswith(("num_", "len_")):
                    yield f"{path}.{sub}", base + start, len(read_var_len_bytes(item))
            elif isinstance(item, (BitmapGlobalIndex.DictionaryBlockRef, BitmapGlobalIndex.DictionaryEntry)):
                yield from _var_len_counts(item, base, f"{path}.{sub}")


def read_var_len_bytes(varint: Any) -> list[int]:
    return [b for b in (getattr(varint, f"b{i}", None) for i in range(9)) if b is not None]


def _damage_sites(data: bytes) -> list[tuple[str, int, int]]:
    """Every count and length varint of the index block and of each dictionary block."""
    root = kaitai.parse(BitmapGlobalIndex, data)
    index = root.index_block
    base = kaitai.field_start(index, "payload")
    sites = list(_var_len_counts(index.payload, base, "index_block.payload"))
    for i, ref in enumerate(index.payload.dictionary_blocks):
        block = ref.block
        sites += _var_len_counts(block.payload, kaitai.field_start(block, "payload"),
                                 f"index_block.payload.dictionary_blocks[{i}].block.payload")
    return sites


def _generated_block(data: bytes, offset: int, length: int, index: bool) -> Any:
    """The block at `offset` through the generated parser alone, as the reader's spec reads it
    (payload substream, trailer after it, the payload filled, the CRC): (first keys or keys,
    offsets, lengths), or the FormatError as (path, offset)."""
    make = BitmapGlobalIndex.IndexBlock if index else BitmapGlobalIndex.DictionaryBlock
    try:
        block = kaitai.parse(lambda io: make(length, io), data, pos=offset, path="block")
        check_payload_filled(block, "block")
    except FormatError as exc:
        return exc.path, exc.offset
    entries = block.payload.dictionary_blocks if index else block.payload.entries
    if zlib.crc32(data[offset:offset + length + 1]) != block.checksum:
        return "crc"
    if index:
        return [(bytes(e.first_key), e.ofs_block.value, e.len_block.value) for e in entries]
    return [(bytes(e.key), e.ofs_bitmap.value, e.len_bitmap.value) for e in entries]


def _fast_block(data: bytes, offset: int, length: int) -> Any:
    block = read_block(Reads(data), offset, length)
    return None if block is None else [(key, block.offset(j), block.length(j)) for j, key in enumerate(block.keys)]


def _bounded(call: Callable[[], Any]) -> Any:
    """`call()`, checked to take under SECONDS and to allocate under MEGABYTES at its peak."""
    start = time.perf_counter()
    result = call()
    assert time.perf_counter() - start < SECONDS
    tracemalloc.start()
    try:
        call()
        assert tracemalloc.get_traced_memory()[1] < MEGABYTES << 20
    finally:
        tracemalloc.stop()
    return result


GLOBAL_SEEDS = {
    "int-v1": ("INT", write_bitmap_global_index("INT", [3, None, 300, 3, -7, 70000] * 5, dictionary_block_size=24)),
    "int-v2": ("INT", write_bitmap_global_index("INT", [3, None, 300, 3, -7, 70000] * 5, version=2,
                                                dictionary_block_size=24)),
    "string-v1": ("STRING", write_bitmap_global_index("STRING", ["a", None, "bb", "ccc", "a"] * 3)),
}


@pytest.mark.parametrize("seed", GLOBAL_SEEDS)
def test_damaged_counts_and_lengths_fail_where_the_generated_parser_does(seed: str) -> None:
    """Every count and length of the index and dictionary blocks (and the footer's index-block
    length) set to 0, 1, 0x7fffffff and 0xffffffff, the blocks' CRCs recomputed: the fast block
    reader declines exactly the blocks the generated parser rejects (reading each payload as a
    substream of its length), and every read, the reader's included, ends within 0.5 s and
    64 MB with the generated parser's located error."""
    data_type, data = GLOBAL_SEEDS[seed]
    root = kaitai.parse(BitmapGlobalIndex, data)
    f = root.footer
    refs = root.index_block.payload.dictionary_blocks
    spans = [(f.ofs_index_block, f.len_index_block)] + [(r.ofs_block.value, r.len_block.value) for r in refs]
    damaged = [(f"{path} = {value:#x}", fix_block_crcs(set_var_len(data, at, width, value), spans))
               for path, at, width in _damage_sites(data) for value in DAMAGE]
    footer_len = len(data) - FOOTER.size + 28          # the footer's len_index_block (s4)
    damaged += [(f"footer.len_index_block = {value:#x}",
                 data[:footer_len] + value.to_bytes(4, "big") + data[footer_len + 4:]) for value in DAMAGE]
    assert len(damaged) >= 40
    for case, raw in damaged:
        length = int.from_bytes(raw[footer_len:footer_len + 4], "big", signed=True)
        block_spans = [(f.ofs_index_block, length, True)] + [(o, n, False) for o, n in spans[1:]]
        for offset, size, index in block_spans:
            expected = _bounded(lambda: _generated_block(raw, offset, size, index))
            fast = _bounded(lambda: _fast_block(raw, offset, size))
            assert (fast is None) == (isinstance(expected, tuple) or expected == "crc"), (case, offset, fast, expected)
            if fast is not None:
                assert fast == expected, case
        error = _bounded(lambda: _located(raw))
        assert error is None or not str(error).startswith("malformed"), (case, error)


# -- the generated codec builds whole files -----------------------------------------------------------

_CODECS: dict[bool, Any] = {}


def _bitmap_codec(compiled: bool) -> Any:
    if compiled not in _CODECS:
        codec = bitmap_global_index_codec.bitmap_global_index
        _CODECS[compiled] = codec.compile() if compiled else codec
    return _CODECS[compiled]


@pytest.mark.parametrize("compiled", [False, True], ids=["interpreted", "compiled"])
@given(column=global_index_columns(max_size=150), version=st.sampled_from([1, 2]),
       block_size=st.sampled_from([16, 100, 16 * 1024]))
@settings(max_examples=40, deadline=None)
def test_the_generated_codec_builds_the_file_it_parses(compiled: bool, column: tuple[str, list], version: int,
                                                       block_size: int) -> None:
    """parse then build = the same bytes, the 48-byte footer (at `_io.size - 48`) included: the
    codec builds it last, at the end of the body (`constructs.KsTrailer`)."""
    data_type, values = column
    data = write_bitmap_global_index(data_type, values, version=version, dictionary_block_size=block_size)
    if not data:        # an empty column: no file
        return
    codec = _bitmap_codec(compiled)
    model = constructs.parse(codec, data)
    assert codec.build(model) == data
    assert model["footer"]["ofs_index_block"] == kaitai.parse(BitmapGlobalIndex, data).footer.ofs_index_block
