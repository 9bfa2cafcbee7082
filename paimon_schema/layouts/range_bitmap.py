"""Range-bitmap file indexes (formats/range_bitmap.ksy): read, answer predicates, and write.

Answers are Java's `RangeBitmapFileIndex` / `RangeBitmap` at the newest Paimon in
spec/paimon-layouts.md §3.8: a probe value is compared with the header's min and max, then
looked up in the chunked dictionary (binary search over the chunks' first keys, then inside
the floor chunk) to get its code, or the insertion code on a miss, and codes are compared on
the bit-sliced index (paimon_schema.bitslice). Nulls never match; `!=` and NOT IN exclude them.

Everything is read lazily, as Java reads it: opening parses only the header; a lookup parses
the dictionary header, the chunk headers its binary search visits and one chunk's keys, and
deserializes only the bitmaps the comparison needs. Parsed chunks and bitmaps are cached;
`stats` counts what was loaded. The dictionary parts are read with struct/numpy (`scan_*`,
proven equal to the generated parser in test_fast_lookups.py), which decline wherever the
generated parser would fail so that it reports the located error.

Writing follows `RangeBitmapFileIndex.Writer`: distinct keys get codes in key order, the
dictionary packs them into chunks of at most `chunk-size` key bytes (the first key of a chunk
sits in its header for free), and the bit-sliced index stores each row's code.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import accumulate
from operator import lt
from typing import Any

import numpy as np
from pyroaring import BitMap

from paimon_schema import bitslice, options, roaring, types
from paimon_schema.errors import FormatError
from paimon_schema.generated import range_bitmap_codec
from paimon_schema.generated.range_bitmap import RangeBitmap
from paimon_schema.layouts import parsing
from paimon_schema.layouts.keys import (
    FIXED_SIZES,
    KEY_DTYPES,
    NO_MIN,
    KeyCodec,
    KeyKind,
    plain_array,
    range_bitmap_keys,
    raw_key,
    scan_records,
    string_codes,
)
from paimon_schema.positions import fresh_bitmap
from paimon_schema.results import REMAIN, FileIndexReader, IndexResult
from paimon_schema.types import DataType

Key = int | bytes


@dataclass
class ReaderStats:
    """What a reader has loaded so far (each item at most once: it is cached)."""

    chunk_headers: int = 0      # dictionary chunk headers parsed
    chunks: int = 0             # dictionary chunk key blobs parsed
    bitmaps: int = 0            # roaring bitmaps deserialized (existence bitmap and slices)


@dataclass(frozen=True)
class _ChunkHeader:
    start: int              # position of the header
    first: Key              # first key, normalized (see `_stored`)
    order: Any              # its position in Java's comparator order
    code: int
    num_keys: int
    ofs_keys: int
    len_key_blob: int


class RangeBitmapIndexReader(FileIndexReader):
    """Java's range-bitmap reader over one blob."""

    def __init__(self, blob: bytes, codec: KeyCodec, parsed: RangeBitmap) -> None:
        self._blob = memoryview(blob)
        self._codec = codec
        self._parsed = parsed
        header = parsed.header
        self.num_rows: int = header.num_rows
        self.num_keys: int = header.num_keys
        self._min = self._stored(raw_key(header.min_key)) if self.num_keys > 0 else None
        self._max = self._stored(raw_key(header.max_key)) if self.num_keys > 0 else None
        self.stats = ReaderStats()
        self._headers: dict[int, _ChunkHeader] = {}
        self._header_indexes: list[int] = []            # sorted keys of _headers
        self._chunk_keys: dict[int, tuple[list[Key], list[Any]]] = {}
        self._slice_cache: dict[int, BitMap] = {}
        self._slices = _LazySlices(self)

    @classmethod
    def open(cls, blob: bytes, data_type: str | DataType) -> "RangeBitmapIndexReader":
        """Parse the header; SchemaError for a type the index refuses, FormatError for bad bytes."""
        codec = range_bitmap_keys(data_type)
        parsed = parsing.parse(lambda io: RangeBitmap(codec.kind, io), blob)
        return cls(blob, codec, parsed)

    # -- enumeration ---------------------------------------------------------------------------

    @property
    def min(self) -> object:
        """The smallest value (None without keys)."""
        return None if self._min is None else self._codec.decode(self._min)

    @property
    def max(self) -> object:
        """The largest value (None without keys)."""
        return None if self._max is None else self._codec.decode(self._max)

    @property
    def null_rows(self) -> BitMap:
        return self._is_null()

    def items(self) -> Iterator[tuple[object, BitMap]]:
        """(value, rows) for every key, in key order."""
        for index in range(self._dictionary.num_chunks):
            header = self._header(index)
            keys, _ = self._keys(index)
            for offset, key in enumerate([header.first, *keys]):
                rows = bitslice.equal(self._existence, self._slices, header.code + offset)
                yield self._codec.decode(key), rows

    # -- predicates (RangeBitmapFileIndex.Reader) ------------------------------------------------

    def equal(self, value: object) -> IndexResult:
        if value is None:
            return REMAIN        # Java compares the null literal and throws; never narrow
        return IndexResult.of(self._eq(self._probe(value)))

    def not_equal(self, value: object) -> IndexResult:
        if value is None:
            return REMAIN
        probe = self._probe(value)
        return IndexResult.of(self._not(self._eq(probe)) if self.num_keys > 0 else BitMap())

    def in_(self, values: Iterable[object]) -> IndexResult:
        values = list(values)
        if any(v is None for v in values):
            return REMAIN
        return IndexResult.of(self._in([self._probe(v) for v in values]))

    def not_in(self, values: Iterable[object]) -> IndexResult:
        values = list(values)
        if any(v is None for v in values):
            return REMAIN
        probes = [self._probe(v) for v in values]
        return IndexResult.of(self._not(self._in(probes)) if self.num_keys > 0 else BitMap())

    def is_null(self) -> IndexResult:
        return IndexResult.of(self._is_null())

    def is_not_null(self) -> IndexResult:
        return IndexResult.of(self._is_not_null())

    def less_than(self, value: object) -> IndexResult:
        return self._range(value, self._lt)

    def less_or_equal(self, value: object) -> IndexResult:
        return self._range(value, self._lte)

    def greater_than(self, value: object) -> IndexResult:
        return self._range(value, self._gt)

    def greater_or_equal(self, value: object) -> IndexResult:
        return self._range(value, self._gte)

    def top_n(self, k: int, ascending: bool = True, nulls_first: bool = False,
              within: BitMap | None = None) -> IndexResult:
        """`visitTopN` with one sort key: exactly `k` rows (fewer if the file has fewer).

        `within` restricts the candidates first (the rows a deletion vector leaves), as Java
        passes the evaluator's current selection to `topK` / `bottomK`.

        Ascending is `bottomK`, descending `topK`. NULLS FIRST takes the null rows first (the
        lowest-numbered ones if there are more than `k`), then the best non-null rows; NULLS
        LAST the other way round. Among rows tied on the k-th value, Java keeps the ones with
        the HIGHEST row numbers (bitslice._select_k). With no key at all (every row null)
        Java returns every row, untrimmed.
        """
        if k < 0:
            raise ValueError(f"k must not be negative in top_n, got {k}")
        def restrict(rows: BitMap) -> BitMap:
            return rows if within is None else rows & within

        if self.num_keys <= 0:
            return IndexResult.of(restrict(self._all_rows()))
        pick = bitslice.bottom_k if ascending else bitslice.top_k
        nulls = restrict(self._is_null())
        existence = restrict(self._existence)
        if nulls_first:
            if len(nulls) >= k:
                return IndexResult.of(nulls[:k])
            return IndexResult.of(nulls | pick(existence, self._slices, k - len(nulls)))
        rows = pick(existence, self._slices, k)
        if len(rows) < k:
            rows |= nulls[:k - len(rows)]
        return IndexResult.of(rows)

    # -- RangeBitmap ----------------------------------------------------------------------------

    def _probe(self, value: object) -> Any:
        """A query value in comparator order; SchemaError if it does not fit the column."""
        return self._codec.order(self._codec.encode(value))

    def _range(self, value: object, compare: Callable[[Any], BitMap]) -> IndexResult:
        if value is None:
            return REMAIN
        probe = self._probe(value)
        return IndexResult.of(compare(probe) if self.num_keys > 0 else BitMap())

    def _bounds(self, probe: Any) -> tuple[int, int]:
        """Java's `compare(key, min)` and `compare(key, max)`, as signs."""
        low, high = self._codec.order(self._min), self._codec.order(self._max)
        return (probe > low) - (probe < low), (probe > high) - (probe < high)

    def _eq(self, probe: Any) -> BitMap:
        if self.num_keys <= 0:
            return BitMap()
        to_min, to_max = self._bounds(probe)
        if to_min == 0 and to_max == 0:
            return self._is_not_null()
        if to_min < 0 or to_max > 0:
            return BitMap()
        code = self._find(probe)
        return BitMap() if code < 0 else bitslice.equal(self._existence, self._slices, code)

    def _in(self, probes: list[Any]) -> BitMap:
        rows = BitMap()
        if self.num_keys > 0:
            for probe in probes:
                rows |= self._eq(probe)
        return rows

    def _lte(self, probe: Any) -> BitMap:
        to_min, to_max = self._bounds(probe)
        if to_max >= 0:
            return self._is_not_null()
        if to_min < 0:
            return BitMap()
        return self._not(self._gt(probe))

    def _lt(self, probe: Any) -> BitMap:
        to_min, to_max = self._bounds(probe)
        if to_max > 0:
            return self._is_not_null()
        if to_min <= 0:
            return BitMap()
        return self._not(self._gte(probe))

    def _gte(self, probe: Any) -> BitMap:
        to_min, to_max = self._bounds(probe)
        if to_min <= 0:
            return self._is_not_null()
        if to_max > 0:
            return BitMap()
        code = self._find(probe)
        start = -code - 1 if code < 0 else code
        return bitslice.greater_or_equal(self._existence, self._slices, start)

    def _gt(self, probe: Any) -> BitMap:
        to_min, to_max = self._bounds(probe)
        if to_min < 0:
            return self._is_not_null()
        if to_max >= 0:
            return BitMap()
        code = self._find(probe)
        if code < 0:
            return bitslice.greater_or_equal(self._existence, self._slices, -code - 1)
        return bitslice.greater_than(self._existence, self._slices, code)

    def _is_not_null(self) -> BitMap:
        return BitMap(self._existence) if self.num_keys > 0 else BitMap()

    def _is_null(self) -> BitMap:
        """Rows without a value; with no key at all every row (Java after ea293d58fa)."""
        if self.num_keys <= 0:
            return self._all_rows()
        return self._existence.flip(0, self.num_rows)

    def _not(self, rows: BitMap) -> BitMap:
        """Java's `not`: flip over [0, rid), keep non-null rows (ebm lies in [0, rid))."""
        return self._existence - rows

    def _all_rows(self) -> BitMap:
        return BitMap().flip(0, self.num_rows)

    # -- ChunkedDictionary ------------------------------------------------------------------------

    def _find(self, probe: Any) -> int:
        """`ChunkedDictionary.find`: the probe's code, or -(insertion code) - 1 on a miss."""
        low, high = 0, self._dictionary.num_chunks - 1
        while low <= high:
            mid = (low + high) // 2
            header = self._header(mid)
            if header.order > probe:
                high = mid - 1
            elif header.order < probe:
                low = mid + 1
            else:
                return header.code
        if low == 0:
            raise self._chunk_error(0, self._header(0), "first_key", "the first chunk's key is "
                                    "above a probe that is above the header's min key")
        return self._find_in_chunk(low - 1, probe)

    def _find_in_chunk(self, index: int, probe: Any) -> int:
        """`AbstractChunk.find` (its keys are checked ascending, so bisect is Java's search)."""
        header = self._header(index)
        if header.order == probe:
            return header.code
        _, orders = self._keys(index)
        at = bisect.bisect_left(orders, probe)
        if at < len(orders) and orders[at] == probe:
            return header.code + 1 + at
        return -(header.code + 1 + at) - 1

    @cached_property
    def _dictionary(self) -> DictionaryHead:
        """The dictionary header and chunk offsets."""
        start = self._parsed.ofs_dictionary
        dictionary = scan_dictionary_head(self._blob, start) \
            or parse_dictionary_head(self._generated_dictionary)
        if self.num_keys > 0 and not 1 <= dictionary.num_chunks <= self.num_keys:
            raise FormatError(f"{dictionary.num_chunks} chunks for {self.num_keys} keys",
                              offset=start + _OFS_NUM_CHUNKS, path="dictionary.num_chunks")
        return dictionary

    @cached_property
    def _generated_dictionary(self) -> RangeBitmap.ChunkedDictionary:
        """The dictionary through the generated parser, to locate what the fast path declines."""
        return _instance(self._parsed, "dictionary")

    def _header(self, index: int) -> _ChunkHeader:
        """Chunk `index`'s header, checked against the nearest headers already read: Java's
        binary search silently misses in a dictionary that is out of order."""
        if index in self._headers:
            return self._headers[index]
        dictionary = self._dictionary
        start = dictionary.ofs_chunk_headers + dictionary.chunk_offsets[index]
        self._check_inside(start, f"dictionary.chunks[{index}].ofs_chunk",
                           dictionary.ofs_chunk_headers - 4 * (dictionary.num_chunks - index))
        raw = scan_chunk_header(self._blob, self._codec.kind, start, dictionary.len_chunk_header(index)) \
            or parse_chunk_header(self._generated_dictionary.chunks[index], f"dictionary.chunks[{index}]")
        self.stats.chunk_headers += 1
        first = self._stored(raw.first_key)
        header = _ChunkHeader(start, first, self._codec.order(first), raw.code, raw.num_keys,
                              raw.ofs_keys, raw.len_key_blob)
        if raw.code + raw.num_keys >= self.num_keys:
            last = raw.code + raw.num_keys
            raise self._chunk_error(index, header, "num_keys", f"codes {raw.code}..{last} exceed "
                                    f"the {self.num_keys} keys of the header")
        at = bisect.bisect_left(self._header_indexes, index)
        for neighbour in self._header_indexes[max(at - 1, 0):at + 1]:
            other = self._headers[neighbour]
            before = neighbour < index
            if (other.order < header.order) != before or (other.code < header.code) != before:
                raise self._chunk_error(index, header, "first_key", f"chunk {index} is out of "
                                        f"order with chunk {neighbour}")
        self._header_indexes.insert(at, index)
        self._headers[index] = header
        return header

    def _keys(self, index: int) -> tuple[list[Key], list[Any]]:
        """Chunk `index`'s keys after its first one, and their comparator orders (ascending)."""
        if index in self._chunk_keys:
            return self._chunk_keys[index]
        header = self._header(index)
        base = self._dictionary.ofs_key_region + header.ofs_keys
        self._check_inside(base, f"dictionary.chunks[{index}].header.ofs_keys",
                           header.start + self._field_offset(header, "ofs_keys"))
        blob = scan_chunk_keys(self._blob, self._codec.kind, base, header.len_key_blob, header.num_keys) \
            or parse_chunk_keys(self._generated_dictionary.chunks[index], f"dictionary.chunks[{index}]")
        self.stats.chunks += 1
        keys = list(map(self._stored, blob.keys)) if self._codec.kind == KeyKind.boolean else blob.keys
        orders = self._codec.orders(keys)
        if self._codec.kind == KeyKind.string:
            self._check_key_offsets(blob, index, base)
        ascending = [header.order, *orders]
        if not all(map(lt, ascending, ascending[1:])):
            j = next(j for j in range(len(orders)) if not ascending[j] < ascending[j + 1])
            raise FormatError("dictionary keys are not in ascending order",
                              offset=base + 4 * len(blob.ofs_keys) + self._key_starts(blob)[j],
                              path=f"dictionary.chunks[{index}].keys.keys[{j}]")
        self._chunk_keys[index] = keys, orders
        return keys, orders

    def _check_key_offsets(self, blob: ChunkKeys, index: int, base: int) -> None:
        """Java reads each string key at its stored offset; the spec reads them in sequence."""
        starts = self._key_starts(blob)
        if blob.ofs_keys != starts:
            j = next(j for j, (ofs, start) in enumerate(zip(blob.ofs_keys, starts)) if ofs != start)
            raise FormatError(f"key offset {blob.ofs_keys[j]} does not point at key {j} "
                              f"(at {starts[j]})", offset=base + 4 * j,
                              path=f"dictionary.chunks[{index}].keys.ofs_keys[{j}]")

    def _key_starts(self, blob: ChunkKeys) -> list[int]:
        """Where each key starts, from the first key."""
        if self._codec.kind == KeyKind.string:
            return list(accumulate((4 + len(k) for k in blob.keys), initial=0))[:-1]
        size = self._codec.size(0)
        return list(range(0, size * len(blob.keys), size))

    def _chunk_error(self, index: int, header: _ChunkHeader, field: str, message: str) -> FormatError:
        return FormatError(message, offset=header.start + self._field_offset(header, field),
                           path=f"dictionary.chunks[{index}].header.{field}")

    def _field_offset(self, header: _ChunkHeader, field: str) -> int:
        """Where a field of a chunk header starts in it (version u1, first_key, then s4s)."""
        if field == "first_key":
            return 1
        return self._codec.size(header.first) + _AFTER_FIRST_KEY[field]

    def _stored(self, key: Key) -> Key:
        """A key as the comparator sees it: booleans as Java reads them (only 1 is true), else
        what the parser gives (floats as raw bits, strings as bytes)."""
        return int(key == 1) if self._codec.kind == KeyKind.boolean else key

    # -- BitSliceIndexBitmap -------------------------------------------------------------------

    @cached_property
    def _bsi(self) -> Any:
        """The BSI header and slice index."""
        self._check_inside(self._parsed.ofs_bsi, "header.len_dictionary",
                           self._parsed._debug["header"]["start"]
                           + self._parsed.header._debug["len_dictionary"]["start"])
        bsi = _instance(self._parsed, "bsi")
        expected = max((self.num_keys - 1).bit_length(), 1) if self.num_keys > 0 else 64
        if bsi.num_slices != expected:
            raise FormatError(f"{bsi.num_slices} slices, but codes 0..{self.num_keys - 1} "
                              f"need {expected}", offset=bsi._debug["num_slices"]["start"],
                              path="bsi.num_slices")
        return bsi

    @cached_property
    def _existence(self) -> BitMap:
        """The existence bitmap (rows with a value); checked to lie in [0, rid)."""
        bsi = self._bsi
        ebm = self._bitmap(bsi, "ebm", bsi.ofs_ebm, "bsi")
        if ebm and ebm.max() >= self.num_rows:
            raise FormatError(f"row {ebm.max()} has a value but the index has "
                              f"{self.num_rows} rows", offset=bsi.ofs_ebm, path="bsi.ebm")
        return ebm

    def _slice(self, i: int) -> BitMap:
        if i not in self._slice_cache:
            entry = self._bsi.slices[i]
            where = f"bsi.slices[{i}]"
            start = self._bsi.ofs_slices + entry.ofs_bitmap
            self._check_inside(start, f"{where}.ofs_bitmap", entry._debug["ofs_bitmap"]["start"])
            self._slice_cache[i] = self._bitmap(entry, "bitmap", start, where)
        return self._slice_cache[i]

    def _check_inside(self, position: int, path: str, offset: int) -> None:
        """A part found at `position` must start inside the blob; else blame the field (at
        `path`, `offset`) that put it there (Kaitai would report the position, past the end)."""
        if position > len(self._blob):
            raise FormatError(f"points at byte {position}, past the end of the "
                              f"{len(self._blob)}-byte blob", path=path, offset=offset)

    def _bitmap(self, owner: Any, attribute: str, start: int, where: str) -> BitMap:
        """The roaring bitmap of `owner.attribute` (at `start` in the blob), deserialized.

        Like Java, bytes after the bitmap inside its stated length are ignored."""
        raw = _instance(owner, attribute, where)
        try:
            bitmap, _ = roaring.deserialize(self._blob[:start + len(raw)], start)
        except FormatError as exc:
            raise exc.within(f"{where}.{attribute}", 0) from exc
        self.stats.bitmaps += 1
        return bitmap



# ---------------------------------------------------------------------------------------------
# The chunked dictionary as a lookup reads it: generated parser (the specification) and the fast
# path. A lookup reads the dictionary head, ~log2(chunks) chunk headers and one chunk's keys; the
# generated parser costs ~6 ms for the head of 1M INT keys and ~40 ms for one 16 KiB chunk. Each
# `scan_*` returns None exactly where the generated parser fails, which then locates the error.

_DICTIONARY_HEAD = struct.Struct(">iBiii")  # len_header, version, num_chunks, len_offsets, len_chunks
_OFS_NUM_CHUNKS = 5
#: `valid: min` of the `s4`s after a chunk header's first key: code, ofs_keys, num_keys, then
#: len_keys, len_fixed_key (fixed-size keys) or len_offsets, len_keys (strings).
_FIXED_CHUNK_S4S = (0, 0, 0, 0, NO_MIN)
_VARIABLE_CHUNK_S4S = (0, 0, 0, NO_MIN, 0)
#: Where fields start after the first key (version u1, first_key, code, ofs_keys, num_keys).
_AFTER_FIRST_KEY = {"ofs_keys": 5, "num_keys": 9}


@dataclass(frozen=True)
class DictionaryHead:
    """The chunked dictionary's header and chunk offsets, as the generated parser reads them."""

    num_chunks: int
    len_chunks: int
    chunk_offsets: list[int]        # `ofs_chunk` of each chunk
    ofs_chunk_headers: int

    @property
    def ofs_key_region(self) -> int:
        return self.ofs_chunk_headers + self.len_chunks

    def len_chunk_header(self, index: int) -> int:
        """Java slices a chunk header up to the next chunk's offset (the last: `len_chunks`)."""
        end = self.chunk_offsets[index + 1] if index + 1 < self.num_chunks else self.len_chunks
        return end - self.chunk_offsets[index]


@dataclass(frozen=True)
class ChunkHeader:
    """A chunk header as the generated parser reads it (`first_key` as the parser gives it)."""

    first_key: Key
    code: int
    ofs_keys: int
    num_keys: int
    len_key_blob: int


def parse_dictionary_head(dictionary: RangeBitmap.ChunkedDictionary) -> DictionaryHead:
    """The generated dictionary as a `DictionaryHead`: the reference for the fast path."""
    return DictionaryHead(dictionary.num_chunks, dictionary.len_chunks,
                          [chunk.ofs_chunk for chunk in dictionary.chunks],
                          dictionary.ofs_chunk_headers)


def scan_dictionary_head(data: bytes | memoryview, pos: int) -> DictionaryHead | None:
    """The dictionary head at `pos` via struct/numpy, or None exactly where the generated
    parser fails (the chunk count is checked against the data before anything is read)."""
    if len(data) < pos + _DICTIONARY_HEAD.size:
        return None
    len_header, version, num_chunks, len_offsets, len_chunks = _DICTIONARY_HEAD.unpack_from(data, pos)
    if len_header != 13 or version != 1 or num_chunks < 0 or len_offsets != 4 * num_chunks \
            or len_chunks < 0:
        return None
    pos += _DICTIONARY_HEAD.size
    if num_chunks > (len(data) - pos) // 4:
        return None
    offsets = np.frombuffer(data, ">i4", num_chunks, pos).tolist()
    if num_chunks and min(offsets) < 0:
        return None
    return DictionaryHead(num_chunks, len_chunks, offsets, pos + 4 * num_chunks)


def parse_chunk_header(chunk: RangeBitmap.Chunk, path: str = "") -> ChunkHeader:
    """A chunk's header through the generated parser: the reference for the fast path."""
    header = _instance(chunk, "header", path)
    return ChunkHeader(raw_key(header.first_key), header.code, header.ofs_keys, header.num_keys,
                       header.len_key_blob)


def scan_chunk_header(data: bytes | memoryview, kind: KeyKind, pos: int,
                      size: int) -> ChunkHeader | None:
    """The `size`-byte chunk header at `pos` via struct, or None exactly where the generated
    parser fails."""
    if size < 1 or pos + size > len(data) or data[pos] != 1:
        return None
    variable = kind == KeyKind.string
    records = scan_records(bytes(data[pos + 1:pos + size]), kind, 0, 1,
                           _VARIABLE_CHUNK_S4S if variable else _FIXED_CHUNK_S4S)
    if records is None:
        return None
    (first_key,), columns, _ = records
    code, ofs_keys, num_keys, fourth, fifth = (column[0] for column in columns)
    if variable:
        len_offsets, len_keys = fourth, fifth
        if len_offsets != 4 * num_keys:
            return None
        return ChunkHeader(first_key, code, ofs_keys, num_keys, len_offsets + len_keys)
    len_keys, len_fixed_key = fourth, fifth
    if len_fixed_key != FIXED_SIZES[kind] or len_fixed_key * num_keys != len_keys:
        return None
    return ChunkHeader(first_key, code, ofs_keys, num_keys, len_keys)


@dataclass(frozen=True)
class ChunkKeys:
    """A chunk's key blob (the keys after its first one), exactly as the generated parser
    reads it: keys as `paimon_common::key` gives them (float bits, string bytes)."""

    keys: list[Key]
    ofs_keys: list[int]         # strings: each key's stored offset; fixed-size keys have none


def parse_chunk_keys(chunk: RangeBitmap.Chunk, path: str = "") -> ChunkKeys:
    """A chunk's key blob through the generated parser: slow, the reference for the fast path."""
    blob = _instance(chunk, "keys", path)
    return ChunkKeys([raw_key(k) for k in blob.keys],
                     list(blob.ofs_keys) if isinstance(blob, RangeBitmap.VariableKeys) else [])


def scan_chunk_keys(data: bytes | memoryview, kind: KeyKind, pos: int, size: int,
                    count: int) -> ChunkKeys | None:
    """The key blob of `size` bytes at `pos` holding `count` keys (the chunk header's
    `len_key_blob` and `num_keys`) via struct/numpy, or None exactly where the generated parser
    fails; hostile sizes and counts are checked against the data before anything is read."""
    if min(pos, size, count) < 0 or (size and pos + size > len(data)):
        return None                 # (Kaitai reads 0 bytes anywhere, even past the end)
    blob = bytes(data[pos:pos + size])          # the substream the generated parser reads
    ofs_keys: list[int] = []
    if kind == KeyKind.string:
        if 4 * count > size:
            return None
        ofs_keys = np.frombuffer(blob, ">i4", count).tolist()
        if count and min(ofs_keys) < 0:
            return None
    records = scan_records(blob, kind, 4 * len(ofs_keys), count, ())
    return None if records is None else ChunkKeys(records[0], ofs_keys)


def _instance(owner: Any, attribute: str, path: str = "") -> Any:
    """A positioned instance of a generated object, failures located. Kaitai keeps a
    half-read instance after a failure; drop it so that asking again fails again."""
    try:
        return parsing.read_lazily(owner, attribute, path)
    except FormatError:
        owner.__dict__.pop(f"_m_{attribute}", None)
        raise


class _LazySlices(Sequence[BitMap]):
    """The BSI slices of a reader, each deserialized when first indexed."""

    def __init__(self, reader: RangeBitmapIndexReader) -> None:
        self._reader = reader

    def __len__(self) -> int:
        return self._reader._bsi.num_slices

    def __getitem__(self, i):  # type: ignore[override]
        return self._reader._slice(i)


#: `KeyFactory.defaultChunkSize`: one key per chunk for the 1- and 2-byte kinds.
DEFAULT_CHUNK_SIZE = {KeyKind.boolean: 0, KeyKind.int8: 0, KeyKind.int16: 0}
CHUNK_SIZE = 16 * 1024


def build_range_bitmap(data_type: str | DataType, values: Iterable[Any], *,
                       chunk_size: int | str | None = None) -> bytes:
    """The blob Java's range-bitmap writer writes for `values` (None = null), one row each.

    The fast writer: keys and codes with numpy where the column allows (`_vector_codes`,
    else one row at a time as `write_with_codec`), then every header, chunk and slice table
    with `struct`/numpy. `write_with_codec` is the reference; Hypothesis proves them equal.
    """
    codec = range_bitmap_keys(data_type)
    limit = _chunk_limit(codec, chunk_size)
    if not isinstance(values, (list, tuple, np.ndarray)):
        values = list(values)
    coded = _vector_codes(codec, values)
    keys, codes = coded if coded is not None else _row_codes(codec, values)
    dictionary = _dictionary_bytes(codec, keys, limit)
    bsi = _bsi_bytes(codes, len(keys))
    bounds = _key_bytes(codec, keys[:1]) + _key_bytes(codec, keys[-1:]) if keys else b""
    header = struct.pack(">bii", 1, len(codes), len(keys)) + bounds + struct.pack(">i", len(dictionary))
    return struct.pack(">i", len(header)) + header + dictionary + bsi


def write_with_codec(data_type: str | DataType, values: Iterable[Any], *,
                     chunk_size: int | str | None = None) -> bytes:
    """The blob through the generated Construct codec, one row at a time: the reference."""
    codec = range_bitmap_keys(data_type)
    limit = _chunk_limit(codec, chunk_size)
    keys, codes = _row_codes(codec, values)
    dictionary = _dictionary_model(codec, keys, limit)
    bsi = _bsi_model(codes, len(keys))
    header = {"version": 1, "num_rows": len(codes), "num_keys": len(keys),
              "min_key": _key(codec, keys[0]) if keys else None,
              "max_key": _key(codec, keys[-1]) if keys else None,
              "len_dictionary": _dictionary_length(dictionary)}
    fixed = 1 + 4 + 4 + 4 + (codec.size(keys[0]) + codec.size(keys[-1]) if keys else 0)
    # Positions the codec reads forward (Kaitai's lazy marks), known once the sizes are.
    dictionary_start = 4 + fixed
    dictionary["chunk_headers_mark"] = {"ofs": dictionary_start + 17 + dictionary["len_offsets"]}
    bsi["ebm_mark"] = {"ofs": dictionary_start + header["len_dictionary"] + 14 + bsi["len_indexes"]}
    model = {"len_header": fixed, "header": header, "dictionary_mark": {"ofs": dictionary_start},
             "dictionary": dictionary, "bsi": bsi}
    return _codec(int(codec.kind)).build(model)


def _chunk_limit(codec: KeyCodec, chunk_size: int | str | None) -> int:
    return options.memory_size(chunk_size) if chunk_size is not None else \
        DEFAULT_CHUNK_SIZE.get(codec.kind, CHUNK_SIZE)


def _row_codes(codec: KeyCodec, values: Iterable[Any]) -> tuple[list[Key], np.ndarray]:
    """(distinct keys in Java's order, each row's code or -1 for null), one row at a time."""
    first_key: dict[Any, Key] = {}          # Java's TreeMap keeps the first key of equal ones
    row_orders: list[Any] = []
    for value in values:
        if value is None:
            row_orders.append(None)
            continue
        key = codec.encode(value)
        order = codec.order(key)
        first_key.setdefault(order, key)
        row_orders.append(order)
    orders = sorted(first_key)
    code_of = {order: code for code, order in enumerate(orders)}
    codes = np.array([-1 if o is None else code_of[o] for o in row_orders], dtype=np.int64)
    return [first_key[o] for o in orders], codes


@cache
def _codec(kind: int) -> Any:
    return range_bitmap_codec.t_range_bitmap(kind).compile()


def _key(codec: KeyCodec, key: Key) -> dict[str, Any]:
    if codec.kind == KeyKind.string:
        return {"value": {"len_value": len(key), "value": key}}
    return {"value": key}


def _dictionary_model(codec: KeyCodec, keys: list[Key], limit: int) -> dict[str, Any]:
    """`ChunkedDictionary.Appender`: chunks of consecutive codes (spec 3.4, 3.5)."""
    variable = codec.kind == KeyKind.string
    chunks: list[tuple[int, list[Key]]] = []          # (code of the first key, keys)
    used = 0
    for code, key in enumerate(keys):
        size = codec.size(key)
        if chunks:
            others = len(chunks[-1][1]) - 1
            if size <= limit - used and (not variable or 4 <= limit - 4 * others):
                chunks[-1][1].append(key)
                used += size
                continue
        chunks.append((code, [key]))
        used = 0
    models, ofs_chunk, ofs_keys = [], 0, 0
    for code, (first, *others) in chunks:
        len_keys = sum(codec.size(k) for k in others)
        header = {"version": 1, "first_key": _key(codec, first), "code": code,
                  "ofs_keys": ofs_keys, "num_keys": len(others),
                  "len_offsets": 4 * len(others) if variable else None, "len_keys": len_keys,
                  "len_fixed_key": None if variable else codec.size(first)}
        blob: dict[str, Any] = {"keys": [_key(codec, k) for k in others]}
        if variable:
            blob["ofs_keys"] = [sum(codec.size(k) for k in others[:i]) for i in range(len(others))]
        models.append({"ofs_chunk": ofs_chunk, "header": header, "keys": blob})
        ofs_chunk += 1 + codec.size(first) + 5 * 4   # code, ofs, num, two lengths
        ofs_keys += len_keys + (4 * len(others) if variable else 0)
    return {"len_header": 13, "version": 1, "num_chunks": len(models),
            "len_offsets": 4 * len(models), "len_chunks": ofs_chunk, "chunks": models,
            "chunk_headers_mark": {}}


def _dictionary_length(dictionary: dict[str, Any]) -> int:
    key_region = sum(c["header"]["len_keys"] + (c["header"]["len_offsets"] or 0)
                     for c in dictionary["chunks"])
    return 4 + 13 + dictionary["len_offsets"] + dictionary["len_chunks"] + key_region


def _num_slices(num_keys: int) -> int:
    return max((num_keys - 1).bit_length(), 1) if num_keys else 64   # Java's n-1 = -1 quirk


def _slice_rows(codes: np.ndarray, present: np.ndarray, i: int) -> np.ndarray:
    return np.flatnonzero(present & ((codes >> i) & 1 == 1)) if i < 63 else np.zeros(0, np.int64)


def _bsi_model(codes: np.ndarray, num_keys: int) -> dict[str, Any]:
    """`BitSliceIndexBitmap.Appender`: slice i holds the rows whose code has bit i set."""
    num_slices = _num_slices(num_keys)
    present = codes >= 0
    ebm = fresh_bitmap(np.flatnonzero(present)).serialize()
    slices, offset = [], 0
    for i in range(num_slices):
        bitmap = fresh_bitmap(_slice_rows(codes, present, i)).serialize()
        slices.append({"ofs_bitmap": offset, "len_bitmap": len(bitmap), "bitmap": bitmap})
        offset += len(bitmap)
    return {"len_header": 10 + 8 * num_slices, "version": 1, "num_slices": num_slices,
            "len_ebm": len(ebm), "len_indexes": 8 * num_slices, "slices": slices,
            "ebm_mark": {}, "ebm": ebm}


# ---------------------------------------------------------------------------------------------
# The fast writer's parts

def _vector_codes(codec: KeyCodec, values: Any) -> tuple[list[Key], np.ndarray] | None:
    """`_row_codes` with numpy for numeric arrays and lists of plain ints, floats, bools or
    strs (None for nulls); None where it declines (then `_row_codes` goes row by row and
    reports any error)."""
    if codec.data_type.root == "DECIMAL":
        return None
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            return None
        if values.dtype.kind in "OU":
            values = values.tolist()
        else:
            return _array_codes(codec, values, None)
    if codec.kind == KeyKind.string:
        return _string_codes(codec, values)
    typed = plain_array(codec, values)
    if typed is None:
        return None
    return _array_codes(codec, *typed)


def _array_codes(codec: KeyCodec, array: np.ndarray, valid: np.ndarray | None
                 ) -> tuple[list[Key], np.ndarray] | None:
    """Codes of the non-null values in `array` (`valid` marks the non-null rows; None: all)."""
    kind, letter = codec.kind, array.dtype.kind
    if not len(array):
        keys_, inner = [], np.zeros(0, np.int64)
    elif kind == KeyKind.string:
        return None
    elif kind == KeyKind.boolean:
        if letter != "b":
            return None
        distinct, inner = np.unique(array.astype(np.int64), return_inverse=True)
        keys_ = distinct.tolist()
    elif kind in (KeyKind.float32, KeyKind.float64):
        if letter != "f":
            return None
        keys_, inner = _float_codes(codec, array)
    else:
        if letter not in "iu":
            return None
        low, high = types.INTEGER_BOUNDS[codec.data_type.root]
        if int(array.min()) < low or int(array.max()) > high:
            return None
        distinct, inner = np.unique(array.astype(np.int64), return_inverse=True)
        keys_ = distinct.tolist()
    inner = inner.astype(np.int64).ravel()
    if valid is None:
        return keys_, inner
    codes = np.full(len(valid), -1, np.int64)
    codes[valid] = inner
    return keys_, codes


def _float_codes(codec: KeyCodec, array: np.ndarray) -> tuple[list[Key], np.ndarray]:
    """Float keys are raw bits (spec 3.1) ordered by `compareTo` (-0.0 < 0.0, every NaN one key
    after +inf); of equal keys the TreeMap keeps the first, which matters for NaN payloads."""
    width = 32 if codec.kind == KeyKind.float32 else 64
    with np.errstate(over="ignore"):
        floats = array.astype(np.float32 if width == 32 else np.float64)
    bits = floats.view(np.uint32 if width == 32 else np.uint64).astype(np.uint64)
    sign = np.uint64(1 << (width - 1))
    magnitude = (bits & (sign - np.uint64(1))).view(np.int64)
    nan = np.isnan(array)
    order = np.where(nan, np.iinfo(np.int64).max, np.where(bits & sign, -magnitude - 1, magnitude))
    distinct, first, inner = np.unique(order, return_index=True, return_inverse=True)
    keys_ = bits[first].tolist()
    if nan.any():       # the first NaN as `KeyCodec.encode` gives it (a Python float's bits)
        keys_[-1] = codec.encode(array[first[-1]])
    return keys_, inner


def _string_codes(codec: KeyCodec, values: list) -> tuple[list[Key], np.ndarray] | None:
    """Strings by first occurrence (`keys.string_codes`), then by rank of their bytes."""
    coded = string_codes(values)
    if coded is None:
        return None
    first, encoded = coded
    ranked = sorted((i for i, key in enumerate(encoded) if key is not None), key=encoded.__getitem__)
    rank = np.full(len(encoded), -1, np.int64)
    rank[ranked] = np.arange(len(ranked))
    return [encoded[i] for i in ranked], rank[first]


def _key_bytes(codec: KeyCodec, keys_: list[Key]) -> bytes:
    """Keys encoded back to back (spec 3.1)."""
    if codec.kind == KeyKind.string:
        return _string_records(keys_)[0].tobytes()
    return np.array(keys_, dtype=KEY_DTYPES[codec.kind].replace(">", "=")).astype(KEY_DTYPES[codec.kind]).tobytes()


def _dictionary_bytes(codec: KeyCodec, keys_: list[Key], limit: int) -> bytes:
    """`_dictionary_model` as bytes (spec 3.4, 3.5), with numpy for fixed-size keys."""
    count_ = len(keys_)
    if codec.kind != KeyKind.string:
        size = codec.size(0)
        firsts = np.arange(0, count_, 1 + max(limit, 0) // size, dtype=np.int64)
        others = np.diff(np.append(firsts, count_)) - 1
        header = np.dtype([("version", "u1"), ("key", KEY_DTYPES[codec.kind]), ("code", ">i4"),
                           ("ofs_keys", ">i4"), ("num_keys", ">i4"), ("len_keys", ">i4"),
                           ("len_fixed", ">i4")])
        chunks = np.empty(len(firsts), header)
        chunks["version"] = 1
        chunks["key"] = np.array(keys_, dtype=KEY_DTYPES[codec.kind].replace(">", "="))[firsts] \
            if count_ else np.zeros(0)
        chunks["code"] = firsts
        chunks["ofs_keys"] = (np.cumsum(others) - others) * size
        chunks["num_keys"] = others
        chunks["len_keys"] = others * size
        chunks["len_fixed"] = size
        rest = np.ones(count_, bool)
        rest[firsts] = False
        key_region = np.array(keys_, dtype=KEY_DTYPES[codec.kind].replace(">", "="))[rest] \
            .astype(KEY_DTYPES[codec.kind]).tobytes() if count_ else b""
        offsets = (np.arange(len(firsts), dtype=np.int64) * header.itemsize).astype(">i4")
        chunk_bytes = chunks.tobytes()
    else:
        firsts = _string_chunk_starts(keys_, limit)
        records, sizes = _string_records(keys_)
        starts = np.cumsum(sizes) - sizes
        ends = np.append(firsts[1:], count_)
        others = ends - firsts - 1
        record_bytes = np.append(starts, len(records))[ends] - starts[firsts] - sizes[firsts]
        blob_sizes = 4 * others + record_bytes
        heads, head_sizes = _string_records([keys_[i] for i in firsts.tolist()], b"\x01",
                                            firsts, np.cumsum(blob_sizes) - blob_sizes, others,
                                            4 * others, record_bytes)
        offsets = (np.cumsum(head_sizes) - head_sizes).astype(">i4")
        chunk_bytes = heads.tobytes()
        # Each chunk's blob: its other keys' offsets (from its first other key), then their
        # records, which are contiguous in `records`.
        rest = np.ones(count_, bool)
        rest[firsts] = False
        chunk_of = np.repeat(np.arange(len(firsts)), ends - firsts)[rest]
        blob_starts = np.cumsum(blob_sizes) - blob_sizes
        base = (starts[firsts] + sizes[firsts])[chunk_of]
        region = np.empty(int(blob_sizes.sum()), np.uint8)
        position = np.flatnonzero(rest) - firsts[chunk_of] - 1           # among the chunk's others
        at = blob_starts[chunk_of] + 4 * position
        region[at[:, None] + np.arange(4)] = (starts[rest] - base).astype(">i4").view(np.uint8).reshape(-1, 4)
        source = _ranges(starts[rest], sizes[rest])
        target = _ranges(blob_starts[chunk_of] + 4 * others[chunk_of] + starts[rest] - base, sizes[rest])
        region[target] = records[source]
        key_region = region.tobytes()
    body = struct.pack(">biii", 1, len(offsets), 4 * len(offsets), len(chunk_bytes))
    return struct.pack(">i", 13) + body + offsets.tobytes() + chunk_bytes + key_region


def _string_chunk_starts(keys_: list[bytes], limit: int) -> np.ndarray:
    """The first key of each chunk: after its free first key a chunk takes keys while their
    encoded sizes fit `limit` and their 4-byte offsets do too (spec 3.5)."""
    most = max(limit, 0) // 4
    if not keys_ or not most:
        return np.arange(len(keys_), dtype=np.int64)
    ends = np.cumsum(4 + np.fromiter(map(len, keys_), np.int64, len(keys_)))
    firsts, start = [], 0
    while start < len(keys_):
        firsts.append(start)
        stop = int(np.searchsorted(ends, ends[start] + limit, side="right"))   # keys before stop fit
        start = max(start + 1, min(stop, start + 1 + most))
    return np.array(firsts, np.int64)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices `starts[0] .. starts[0] + counts[0] - 1, starts[1] ...` (int64)."""
    if not len(counts):
        return np.zeros(0, np.int64)
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(starts - (ends - counts), counts)


def _string_records(keys_: list[bytes], prefix: bytes = b"", *columns: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Records `prefix, i32 length, key bytes, i32 columns...` back to back, with numpy:
    (bytes as uint8, size of each record)."""
    count_ = len(keys_)
    lengths = np.fromiter(map(len, keys_), np.int64, count_)
    head = len(prefix) + 4
    sizes = head + lengths + 4 * len(columns)
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), np.uint8)
    if prefix:
        out[starts[:, None] + np.arange(len(prefix))] = np.frombuffer(prefix, np.uint8)
    out[(starts + len(prefix))[:, None] + np.arange(4)] = lengths.astype(">i4").view(np.uint8).reshape(-1, 4)
    out[_ranges(starts + head, lengths)] = np.frombuffer(b"".join(keys_), np.uint8)
    for i, column in enumerate(columns):
        at = starts + head + lengths + 4 * i
        out[at[:, None] + np.arange(4)] = np.asarray(column, np.int64).astype(">i4").view(np.uint8).reshape(-1, 4)
    return out, sizes


def _bsi_bytes(codes: np.ndarray, num_keys: int) -> bytes:
    """`_bsi_model` as bytes (spec 3.6)."""
    num_slices = _num_slices(num_keys)
    present = codes >= 0
    ebm = fresh_bitmap(np.flatnonzero(present)).serialize()
    slices = [fresh_bitmap(_slice_rows(codes, present, i)).serialize() for i in range(num_slices)]
    lengths = np.fromiter(map(len, slices), np.int64, num_slices)
    table = np.empty((num_slices, 2), ">i4")
    table[:, 0] = np.cumsum(lengths) - lengths
    table[:, 1] = lengths
    head = struct.pack(">ibbii", 10 + 8 * num_slices, 1, num_slices, len(ebm), 8 * num_slices)
    return head + table.tobytes() + ebm + b"".join(slices)
