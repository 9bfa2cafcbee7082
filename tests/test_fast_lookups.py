"""The lookup fast paths (struct/numpy) of bitmap V2 and range-bitmap against the generated parser.

A bitmap V2 lookup reads the head with the secondary index, then one index block; a range-bitmap
lookup reads the dictionary head, a few chunk headers and one chunk's keys. Each part is read by
a `scan_*` function that must decode exactly what the generated Kaitai parser decodes and decline
(None) exactly where that parser fails, so that the generated parser reports the located
FormatError. On top of that, readers must behave identically (same answers, same errors) through
the fast paths and forced through the generated parser, on valid and on mutated bytes.
"""

from __future__ import annotations

import math
import struct
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.generated.range_bitmap import RangeBitmap

import paimon_schema as ps
from paimon_schema.layouts.bitmap_index import scan as bitmap_scan
from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts.range_bitmap import reader as range_reader
from paimon_schema.layouts.range_bitmap import scan as range_scan
from paimon_schema.layouts.bitmap_index import BitmapIndexReader, build_bitmap_index
from paimon_schema.layouts.bitmap_index.scan import (
    V2Block,
    V2Head,
    block_size,
    parse_v2_block,
    parse_v2_head,
    read_v2_block,
    read_v2_head,
    scan_v2_block,
    scan_v2_head,
)
from paimon_schema.layouts.paimon_common import KeyKind
from paimon_schema.layouts.range_bitmap import RangeBitmapIndexReader, build_range_bitmap
from paimon_schema.layouts.range_bitmap.scan import (
    parse_chunk_header,
    parse_chunk_keys,
    dictionary_bytes,
    parse_dictionary_head,
    scan_chunk_header,
    scan_chunk_keys,
    scan_dictionary_head,
)
from paimon_schema.runtime import kaitai as parsing
from strategies import columns, values_for

# ---------------------------------------------------------------------------------------------
# Columns of every key type

INT32 = st.integers(-2**31, 2**31 - 1)
INT64 = st.integers(-2**63, 2**63 - 1)
VALUES = {t: values_for(t) for t in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "DATE", "TIME(3)", "BIGINT",
                                      "TIMESTAMP(3)", "TIMESTAMP_LTZ(6)", "FLOAT", "DOUBLE", "STRING",
                                      "VARCHAR(10)")}
RANGE_VALUES = {**VALUES, "DECIMAL(10, 2)": values_for("DECIMAL(10, 2)")}


@st.composite
def bitmap_blobs(draw: st.DrawFn) -> tuple[str, list, list, bytes]:
    """A V2 blob of a random column, with index blocks from one entry each (the largest key
    exactly fills a block) to one block."""
    data_type, column, pool = draw(columns(VALUES, max_pool=30, max_rows=80))
    codec = keys.bitmap_keys(data_type)
    entry = 8 + max(codec.size(codec.encode(v)) for v in pool)
    block_size = draw(st.sampled_from([4 + entry, 5 + entry, 4 + 2 * entry, 4 + 3 * entry,
                                       3 + 3 * entry, 100, 16384]))
    return data_type, column, pool, build_bitmap_index(data_type, column, index_block_size=block_size)


@st.composite
def range_blobs(draw: st.DrawFn) -> tuple[str, list, list, bytes]:
    """A range-bitmap blob of a random column, with chunks from one key to one chunk."""
    data_type, column, pool = draw(columns(RANGE_VALUES, max_pool=30, max_rows=80))
    codec = keys.range_bitmap_keys(data_type)
    size = max(codec.size(codec.encode(v)) for v in pool)
    chunk_size = draw(st.sampled_from([0, size - 1, size, 2 * size, 3 * size, 3 * size + 1, 64, 16384]))
    return data_type, column, pool, build_range_bitmap(data_type, column, chunk_size=chunk_size)


# ---------------------------------------------------------------------------------------------
# Mutations and outcomes

HOSTILE_S4 = [0, 1, -1, -2, 4, 13, 17, 2**31 - 1, -2**31, 2**24]


@st.composite
def mutated(draw: st.DrawFn, blob: bytes, hot: int) -> bytes:
    """`blob` with 1-3 mutations (bit flip, byte, hostile s4, truncation), mostly in its first
    `hot` bytes: the part a lookup parses before any bitmap."""
    data = bytearray(blob)
    for _ in range(draw(st.integers(1, 3))):
        if not data:
            break
        inside = st.integers(0, max(min(hot, len(data)) - 1, 0))
        at = draw(inside | inside | st.integers(0, len(data) - 1))
        kind = draw(st.sampled_from(["flip", "byte", "s4", "s4", "truncate"]))
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte":
            data[at] = draw(st.integers(0, 255))
        elif kind == "s4":
            value = draw(st.sampled_from(HOSTILE_S4) | INT32)
            data[at:at + 4] = struct.pack(">i", value)[:len(data) - at]
        else:
            del data[at:]
    return bytes(data)


def outcome(call: Callable[[], Any]) -> Any:
    """What `call` returns, or its FormatError as (path, offset, message); anything else fails."""
    try:
        return call()
    except ps.FormatError as exc:
        assert exc.path and exc.offset is not None, exc
        return ("FormatError", exc.path, exc.offset, str(exc))


def assert_same_decoding(fast: Any, generated: Callable[[], Any],
                         read: Callable[[], Any] | None = None) -> None:
    """`fast` (a scan's result) is None exactly where the generated parser fails, else what it
    decodes; `read` (fast path, then generated parser) gives the generated outcome exactly."""
    expected = outcome(generated)
    failed = isinstance(expected, tuple)
    assert (fast is None) == failed, (fast, expected)
    if not failed:
        assert fast == expected
    if read is not None:
        assert outcome(read) == expected


@contextmanager
def generated_only() -> Iterator[None]:
    """Readers go through the generated parser alone: every fast path declines."""
    with ExitStack() as stack:
        for module, name in [(bitmap_scan, "scan_v2_head"), (bitmap_scan, "scan_v2_block"),
                             (range_reader, "scan_dictionary_head"),
                             (range_reader, "scan_chunk_header"), (range_reader, "scan_chunk_keys")]:
            stack.enter_context(mock.patch.object(module, name, lambda *args: None))
        yield


def shown(items: list[tuple[object, Any]]) -> list[tuple[str, Any]]:
    return [(repr(value), rows) for value, rows in items]      # NaN != NaN; its repr is equal


def bitmap_session(blob: bytes, data_type: str, probes: list) -> list:
    """What a pipeline asks of a bitmap reader, a fresh reader per lookup."""
    def reader() -> BitmapIndexReader:
        return BitmapIndexReader.open(blob, data_type)
    return ([outcome(lambda p=p: reader().equal(p)) for p in probes]
            + [outcome(lambda: reader().not_in(probes[:3])), outcome(lambda: reader().is_null()),
               outcome(lambda: shown(list(reader().items())))])


def range_session(blob: bytes, data_type: str, probes: list) -> list:
    """What a pipeline asks of a range-bitmap reader, a fresh reader per lookup."""
    def reader() -> RangeBitmapIndexReader:
        return RangeBitmapIndexReader.open(blob, data_type)
    return ([outcome(lambda p=p: reader().equal(p)) for p in probes]
            + [outcome(lambda p=p: reader().less_than(p)) for p in probes[:3]]
            + [outcome(lambda: reader().is_null()), outcome(lambda: shown(list(reader().items())))])


def truth(codec: keys.KeyCodec, column: list, probe: object) -> set[int]:
    """The rows equal to `probe` as Java's comparators see it."""
    order = codec.order(codec.encode(probe))
    return {row for row, v in enumerate(column) if v is not None and codec.order(codec.encode(v)) == order}


def block_spans(head: V2Head) -> list[tuple[int, int]]:
    """(start, size) of every index block, as `block_ref.block` reads it."""
    return [(head.ofs_index_blocks + offset, block_size(head, i))
            for i, offset in enumerate(head.block_offsets)]


# ---------------------------------------------------------------------------------------------
# Comparator orders of many keys at once


def float_bits(width: int) -> st.SearchStrategy[int]:
    """Bit patterns, with every NaN payload, both zeros, both infinities and the extremes."""
    top = (1 << width) - 1
    exponent = 0x7F800000 if width == 32 else 0x7FF0_0000_0000_0000
    sign = 1 << (width - 1)
    special = [0, sign, exponent, exponent | sign, exponent + 1, top, sign - 1, top ^ sign, 1]
    return st.sampled_from(special) | st.integers(0, top)


@given(st.sampled_from(["FLOAT", "DOUBLE", "INT", "BIGINT", "STRING", "BOOLEAN"]), st.data())
def test_orders_of_many_keys_are_each_keys_order(data_type, data):
    codec = keys.range_bitmap_keys(data_type)
    width = {"FLOAT": 32, "DOUBLE": 64}.get(data_type)
    stored = {"INT": INT32, "BIGINT": INT64, "STRING": st.binary(max_size=4),
              "BOOLEAN": st.integers(0, 1)}.get(data_type) if width is None else float_bits(width)
    raw = data.draw(st.lists(stored, max_size=40))
    assert codec.orders(raw) == [codec.order(k) for k in raw]


# ---------------------------------------------------------------------------------------------
# Bitmap V2: head and index blocks


@given(bitmap_blobs(), st.data())
def test_v2_head_fast_path_equals_generated_parser(case, data):
    data_type, _, _, blob = case
    kind = keys.bitmap_keys(data_type).kind
    hot = parse_v2_head(blob, kind).ofs_index_blocks
    for raw in (blob, data.draw(mutated(blob, hot))):
        assert_same_decoding(scan_v2_head(raw, kind), lambda: parse_v2_head(raw, kind),
                             lambda: read_v2_head(raw, kind))


@given(bitmap_blobs(), st.data())
def test_v2_block_fast_path_equals_generated_parser(case, data):
    data_type, _, _, blob = case
    kind = keys.bitmap_keys(data_type).kind
    head = parse_v2_head(blob, kind)
    raw = data.draw(mutated(blob, head.ofs_body))
    spans = block_spans(head) + [(data.draw(st.integers(0, len(raw) + 4)),
                                  data.draw(st.integers(-4, len(raw) + 4)))]
    for data_ in (blob, raw):
        for start, size in spans:
            assert_same_decoding(scan_v2_block(data_, kind, start, size),
                                 lambda: parse_v2_block(data_, kind, start, size, "block"),
                                 lambda: read_v2_block(data_, kind, start, size, "block"))


def _generated_block(ref: BitmapIndex.BlockRef, start: int, path: str) -> V2Block:
    """A block through the generated `block_ref.block` instance (a substream of `len_block`
    bytes), located errors and all."""
    block = parsing.read_lazily(ref, "block", path)
    entries = block.entries
    return V2Block([keys.raw_key(e.key) for e in entries], [e.ofs_bitmap for e in entries],
                   [e.len_bitmap for e in entries], start + block._io.pos())


@given(bitmap_blobs(), st.data())
def test_v2_block_is_read_as_the_generated_sized_instance(case, data):
    """`parse_v2_block` over a block's (start, size) fails and decodes exactly as the
    generated `block_ref.block` does, the secondary index's damaged offsets included."""
    data_type, _, _, blob = case
    kind = keys.bitmap_keys(data_type).kind
    head = parse_v2_head(blob, kind)
    raw = data.draw(mutated(blob, head.ofs_body))
    for data_ in (blob, raw):
        try:
            index = parsing.parse(lambda io: BitmapIndex(kind, io), data_)
        except ps.FormatError:
            continue
        if index.version != BitmapIndex.Version.v2:
            continue
        v2 = index.index
        for i, ref in enumerate(v2.blocks):
            start = v2.ofs_index_blocks + ref.ofs_block
            expected = outcome(lambda: _generated_block(ref, start, f"index.blocks[{i}]"))
            assert outcome(lambda: parse_v2_block(data_, kind, start, ref.len_block,
                                                  f"index.blocks[{i}].block")) == expected


@given(bitmap_blobs(), st.data())
def test_v2_reader_equals_the_generated_parser_reader(case, data):
    """Same answers and same located errors, lookup by lookup, on valid and mutated blobs."""
    data_type, _, pool, blob = case
    head = parse_v2_head(blob, keys.bitmap_keys(data_type).kind)
    raw = data.draw(mutated(blob, head.ofs_body))
    probes = pool[:6] + [data.draw(VALUES[data_type])]
    for bytes_ in {blob, raw}:
        fast = bitmap_session(bytes_, data_type, probes)
        with generated_only():
            assert bitmap_session(bytes_, data_type, probes) == fast


@given(bitmap_blobs())
def test_v2_reader_offsets_are_where_the_generated_parser_puts_the_fields(case):
    """The reader locates its own errors (misordered keys, offsets beyond the blocks, rows past
    the end) by arithmetic on the decoded keys; it must agree with the parser's `_debug`."""
    data_type, _, _, blob = case
    reader = BitmapIndexReader.open(blob, data_type)
    index = parsing.parse(lambda io: BitmapIndex(reader.codec.kind, io), blob)
    assert reader._head.ofs_num_blocks == index.index._debug["num_blocks"]["start"]
    for i, ref in enumerate(index.index.blocks):
        assert reader._ref_start(i) == ref._debug["first_key"]["start"]
        block = reader._block(i)
        entries = ref.block.entries
        base = ref._debug["_m_block"]["start"]      # the block is a substream of its own
        assert (base, len(ref._raw__m_block)) == (block.start, block.size)
        for j, entry in enumerate(entries):
            assert reader._entry_start(block, j) == base + entry._debug["key"]["start"]
            assert reader._entry_start(block, j) + reader.codec.size(block.entries.keys[j]) \
                == base + entry._debug["ofs_bitmap"]["start"]


def distinct_values(data_type: str, count: int) -> list:
    """`count` distinct values of a type (fewer for BOOLEAN), all keys the same size."""
    if data_type == "BOOLEAN":
        return [False, True][:count]
    if data_type in ("FLOAT", "DOUBLE"):
        return ([-math.inf, -1.5, -0.0, 0.0, 1.5, math.inf, math.nan]
                + [float(i) + 0.25 for i in range(count)])[:count]
    if data_type in ("STRING", "VARCHAR(10)"):
        return [f"k{i:04d}" for i in range(count)]
    low = 0 if data_type == "TIME(3)" else -count
    return [low + i * 7 for i in range(count)]


BITMAP_TYPES = sorted(VALUES)


@pytest.mark.parametrize("data_type", BITMAP_TYPES)
@pytest.mark.parametrize("per_block", [1, 2, 5])
@pytest.mark.parametrize("over", [0, 1])
@pytest.mark.parametrize("nulls", [0, 1, 3])
def test_v2_blocks_exactly_at_the_block_size_and_one_over(data_type, per_block, over, nulls):
    """Blocks exactly `index-block-size` bytes, and one key more than they hold (a last block
    of one entry); singletons, stored bitmaps and 0, 1 or 3 nulls."""
    values = distinct_values(data_type, 3 * per_block + over)
    codec = keys.bitmap_keys(data_type)
    limit = 4 + per_block * (8 + codec.size(codec.encode(values[0])))
    column = values + values[::2] + [None] * nulls     # every other value stored, the rest single
    blob = build_bitmap_index(data_type, column, index_block_size=limit)
    head = parse_v2_head(blob, codec.kind)
    ends = head.block_offsets[1:] + [head.len_index_blocks]
    sizes = [end - start for start, end in zip(head.block_offsets, ends)]
    full, rest = divmod(len(values), per_block)
    assert sizes == [limit] * full + ([4 + rest * (limit - 4) // per_block] if rest else [])
    assert scan_v2_head(blob, codec.kind) == head
    for start, size in block_spans(head):
        assert scan_v2_block(blob, codec.kind, start, size) == parse_v2_block(blob, codec.kind, start, size)
    reader = BitmapIndexReader.open(blob, data_type)
    for value in values:
        assert set(reader.equal(value).rows) == truth(codec, column, value)
    assert set(reader.is_null().rows) == set(range(len(column) - nulls, len(column)))
    assert reader.stats.blocks_loaded == len(sizes)


BITMAP_FIXTURES = {
    **{f"paimon-rust/bitmap/java_{stem}_v2.bin": t for stem, t in [
        ("bigint", "BIGINT"), ("boolean", "BOOLEAN"), ("date", "DATE"), ("double", "DOUBLE"),
        ("float", "FLOAT"), ("int_empty", "INT"), ("int_multiblock", "INT"),
        ("int_singleton_null", "INT"), ("int", "INT"), ("smallint", "SMALLINT"),
        ("string", "STRING"), ("time", "TIME(3)"), ("timestamp_micros", "TIMESTAMP(6)"),
        ("timestamp_millis", "TIMESTAMP(3)"), ("tinyint", "TINYINT")]},
    **{f"paimon-cpp/bitmap/{stem}_v2.bin": t for stem, t in [
        ("bigint", "BIGINT"), ("boolean", "BOOLEAN"), ("date", "DATE"), ("int_all_null", "INT"),
        ("int", "INT"), ("smallint", "SMALLINT"), ("string_a_b", "STRING"),
        ("string_apple_java", "STRING"), ("timestamp9", "TIMESTAMP(9)"), ("tinyint", "TINYINT")]},
    "paimon-cpp/file_index/bitmap-index-v2": "STRING",
}


@pytest.mark.parametrize("rel", sorted(BITMAP_FIXTURES))
def test_v2_fast_path_on_java_written_blobs(shared_fixtures: Path, rel: str):
    blob = (shared_fixtures / rel).read_bytes()
    kind = keys.bitmap_keys(BITMAP_FIXTURES[rel]).kind
    head = parse_v2_head(blob, kind)
    assert scan_v2_head(blob, kind) == head
    for start, size in block_spans(head):
        assert scan_v2_block(blob, kind, start, size) == parse_v2_block(blob, kind, start, size)
    small = len(blob) <= 4096      # every truncation of the small ones (O(n^2) generated parses)
    for n in range(len(blob)) if small else ():  # declined exactly where the parser fails
        for start, size in [(0, len(blob)), *block_spans(head)]:
            truncated = blob[:n]
            assert_same_decoding(scan_v2_block(truncated, kind, start, size),
                                 lambda: parse_v2_block(truncated, kind, start, size, "b"),
                                 lambda: read_v2_block(truncated, kind, start, size, "b"))
        assert_same_decoding(scan_v2_head(blob[:n], kind), lambda: parse_v2_head(blob[:n], kind),
                             lambda: read_v2_head(blob[:n], kind))


# ---------------------------------------------------------------------------------------------
# Range-bitmap: dictionary head, chunk headers and chunk keys


def generated_dictionary(blob: bytes, kind: KeyKind) -> RangeBitmap.ChunkedDictionary:
    parsed = parsing.parse(lambda io: RangeBitmap(kind, io), blob)
    return parsing.read_lazily(parsed, "dictionary", "dictionary")


def assert_same_dictionary(blob: bytes, kind: KeyKind) -> None:
    """Every part of the dictionary a lookup reads decodes the same through both paths (as far
    as the generated parser gets: its errors are the expected outcome)."""
    try:
        parsed = parsing.parse(lambda io: RangeBitmap(kind, io), blob)
    except ps.FormatError:
        return              # no dictionary to speak of: the range-bitmap header is broken
    start = parsed.ofs_dictionary
    dictionary = outcome(lambda: parsing.read_lazily(parsed, "dictionary", "dictionary"))
    size = parsed.header.len_dictionary
    fast = scan_dictionary_head(blob, start, size)
    if isinstance(dictionary, tuple):
        assert fast is None
        return
    head = parse_dictionary_head(dictionary, start)
    assert fast == head
    confined = dictionary_bytes(blob, start, size)      # the dictionary substream's bytes
    assert confined is not None
    for index, chunk in enumerate(dictionary.chunks):
        at = head.ofs_chunk_headers + head.chunk_offsets[index]
        generated = outcome(lambda: parse_chunk_header(chunk, "c"))
        fast_header = scan_chunk_header(confined, kind, at, head.len_chunk_header(index))
        assert (fast_header is None) == isinstance(generated, tuple), (fast_header, generated)
        if fast_header is None:
            continue
        assert fast_header == generated
        base = head.ofs_key_region + generated.ofs_keys
        assert_same_decoding(scan_chunk_keys(confined, kind, base, generated.len_key_blob,
                                             generated.num_keys),
                             lambda: parse_chunk_keys(chunk, "c"))


@given(range_blobs(), st.data())
def test_range_dictionary_fast_paths_equal_generated_parser(case, data):
    data_type, _, _, blob = case
    kind = keys.range_bitmap_keys(data_type).kind
    assert_same_dictionary(blob, kind)
    hot = parsing.parse(lambda io: RangeBitmap(kind, io), blob).ofs_bsi
    assert_same_dictionary(data.draw(mutated(blob, hot)), kind)


@given(range_blobs(), st.data())
def test_range_reader_equals_the_generated_parser_reader(case, data):
    data_type, _, pool, blob = case
    kind = keys.range_bitmap_keys(data_type).kind
    hot = parsing.parse(lambda io: RangeBitmap(kind, io), blob).ofs_bsi
    raw = data.draw(mutated(blob, hot))
    probes = pool[:6] + [data.draw(RANGE_VALUES[data_type])]
    for bytes_ in {blob, raw}:
        fast = range_session(bytes_, data_type, probes)
        with generated_only():
            assert range_session(bytes_, data_type, probes) == fast


@given(range_blobs())
def test_range_reader_offsets_are_where_the_generated_parser_puts_the_fields(case):
    data_type, _, _, blob = case
    reader = RangeBitmapIndexReader.open(blob, data_type)
    if reader.num_keys == 0:
        return
    dictionary = generated_dictionary(blob, reader._codec.kind)
    assert reader._parsed.ofs_dictionary + range_scan._OFS_NUM_CHUNKS \
        == reader._parsed.ofs_dictionary + dictionary._debug["num_chunks"]["start"]
    for index, chunk in enumerate(dictionary.chunks):
        header, generated = reader._header(index), chunk.header
        assert header.start == reader._parsed.ofs_dictionary + chunk._debug["_m_header"]["start"]
        for field in ("first_key", "ofs_keys", "num_keys"):
            assert reader._field_offset(header, field) == generated._debug[field]["start"]
        blob_keys = parse_chunk_keys(chunk)
        assert [4 * len(blob_keys.ofs_keys) + start for start in reader._key_starts(blob_keys)] \
            == [key["start"] for key in chunk.keys._debug["keys"]["arr"]]


RANGE_TYPES = sorted(RANGE_VALUES)


@pytest.mark.parametrize("data_type", RANGE_TYPES)
@pytest.mark.parametrize("per_chunk", [1, 2, 5])
@pytest.mark.parametrize("over", [0, 1])
@pytest.mark.parametrize("nulls", [0, 1, 3])
def test_range_chunks_exactly_at_the_chunk_size_and_one_over(data_type, per_chunk, over, nulls):
    """Chunks whose keys take exactly `chunk-size` bytes, and one key more than they hold."""
    values = distinct_values(data_type, 3 * (per_chunk + 1) + over)
    codec = keys.range_bitmap_keys(data_type)
    size = codec.size(codec.encode(values[0]))
    chunk_size = per_chunk * size     # strings: their offsets are counted apart (4 per key)
    column = values + values[::2] + [None] * nulls
    blob = build_range_bitmap(data_type, column, chunk_size=chunk_size)
    parsed = parsing.parse(lambda io: RangeBitmap(codec.kind, io), blob)
    dictionary = generated_dictionary(blob, codec.kind)
    start, length = parsed.ofs_dictionary, parsed.header.len_dictionary
    head = parse_dictionary_head(dictionary, start)
    assert scan_dictionary_head(blob, start, length) == head
    confined = blob[:start + length]
    sizes = []
    for index, chunk in enumerate(dictionary.chunks):
        header = parse_chunk_header(chunk)
        at = head.ofs_chunk_headers + head.chunk_offsets[index]
        assert scan_chunk_header(confined, codec.kind, at, head.len_chunk_header(index)) == header
        base = head.ofs_key_region + header.ofs_keys
        assert scan_chunk_keys(confined, codec.kind, base, header.len_key_blob, header.num_keys) \
            == parse_chunk_keys(chunk)
        sizes.append(chunk.header.len_keys)
    full = len(values) // (per_chunk + 1)
    assert sizes[:full] == [chunk_size] * full
    assert len(sizes) == full + (len(values) % (per_chunk + 1) > 0)
    reader = RangeBitmapIndexReader.open(blob, data_type)
    for value in values:
        assert set(reader.equal(value).rows) == truth(codec, column, value)
    assert set(reader.is_null().rows) == set(range(len(column) - nulls, len(column)))


RANGE_FIXTURES = {"paimon-rust/range-bitmap/java_int_v1.bin": "INT",
                  "paimon-cpp/file_index/rangebitmap/rangebitmap.index": "INT",
                  "paimon-rust/range-bitmap/java_string_v1.bin": "STRING",
                  "paimon-rust/range-bitmap/java_float_v1.bin": "FLOAT"}


@pytest.mark.parametrize("rel", sorted(RANGE_FIXTURES))
def test_range_fast_paths_on_java_written_blobs(shared_fixtures: Path, rel: str):
    blob = (shared_fixtures / rel).read_bytes()
    kind = keys.range_bitmap_keys(RANGE_FIXTURES[rel]).kind
    for n in range(len(blob) + 1):
        assert_same_dictionary(blob[:n], kind)


# ---------------------------------------------------------------------------------------------
# Hostile counts and lengths: declined before anything is allocated


def test_hostile_counts_allocate_nothing():
    blob = build_bitmap_index("STRING", ["a", "b", "b", None, None])
    head = parse_v2_head(blob, KeyKind.string)
    start, size = block_spans(head)[0]
    huge = struct.pack(">i", 2**31 - 1)
    block = blob[:start] + huge + blob[start + 4:]
    tracemalloc.start()
    try:
        for kind in (KeyKind.string, KeyKind.int64):
            assert scan_v2_block(block, kind, start, size) is None
            assert scan_v2_block(block, kind, start, 2**31 - 1) is None
            assert scan_v2_head(blob[:head.ofs_num_blocks] + huge + blob[head.ofs_num_blocks + 4:],
                                kind) is None
            assert scan_chunk_keys(blob, kind, 0, 2**31 - 1, 2**31 - 1) is None
            assert scan_chunk_keys(blob, kind, 0, len(blob), 2**31 - 1) is None
            assert scan_chunk_header(blob, kind, 0, 2**31 - 1) is None
        hostile = struct.pack(">iBiii", 13, 1, 2**28, 2**30, 0) + blob
        assert scan_dictionary_head(hostile, 0, len(hostile)) is None
        assert scan_dictionary_head(hostile, 0, 2**31 - 1) is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024
    with pytest.raises(ps.FormatError) as info:
        BitmapIndexReader.open(block, "STRING").equal("a")
    assert info.value.path.startswith("index.blocks[0].block.entries[")
