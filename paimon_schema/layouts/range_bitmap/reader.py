"""Range-bitmap file indexes (formats/range_bitmap.ksy): read and answer predicates.

Answers are Java's `RangeBitmapFileIndex` / `RangeBitmap` at the newest Paimon in
`RangeBitmap`'s reader (formats/range_bitmap.ksy): a probe value is compared with the header's min and max, then
looked up in the chunked dictionary (binary search over the chunks' first keys, then inside
the floor chunk) to get its code, or the insertion code on a miss, and codes are compared on
the bit-sliced index (paimon_schema.layouts.bitslice). Nulls never match; `!=` and NOT IN
exclude them.

Everything is read lazily, as Java reads it: opening parses only the header; a lookup parses
the dictionary header, the chunk headers its binary search visits and one chunk's keys, and
deserializes only the bitmaps the comparison needs. Parsed chunks and bitmaps are cached;
`stats` counts what was loaded. The dictionary parts are read with struct/numpy (`scan_*`,
proven equal to the generated parser in test_fast_lookups.py), which decline wherever the
generated parser would fail so that it reports the located error.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from operator import lt
from typing import Any

from pyroaring import BitMap

from paimon_schema.generated.range_bitmap import RangeBitmap
from paimon_schema.layouts import bitslice
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.paimon_common import (
    KeyCodec,
    KeyKind,
    range_bitmap_keys,
    raw_key,
)
from paimon_schema.layouts.range_bitmap.scan import (
    _AFTER_FIRST_KEY,
    _OFS_NUM_CHUNKS,
    ChunkKeys,
    DictionaryHead,
    Key,
    _instance,
    parse_chunk_header,
    parse_chunk_keys,
    parse_dictionary_head,
    scan_chunk_header,
    scan_chunk_keys,
    scan_dictionary_head,
)
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError
from paimon_schema.values.results import REMAIN, FileIndexReader, IndexResult, plural
from paimon_schema.values.types import DataType


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
    def open(cls, blob: bytes, data_type: str | DataType) -> RangeBitmapIndexReader:
        """Parse the header; SchemaError for a type the index refuses, FormatError for bad bytes."""
        codec = range_bitmap_keys(data_type)
        parsed = parsing.parse(lambda io: RangeBitmap(codec.kind, io), blob)
        return cls(blob, codec, parsed)

    def __repr__(self) -> str:
        span = f", {self.min!r}..{self.max!r}" if self.num_keys else ""
        return (f"<RangeBitmapIndexReader {self._codec.data_type}: {plural(self.num_rows, 'row')}, "
                f"{plural(self.num_keys, 'key')}{span}>")

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
        assert self._min is not None and self._max is not None, "only asked with keys (num_keys > 0)"
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

    @property
    def num_chunks(self) -> int:
        """Chunks of the key dictionary (reads the dictionary header)."""
        return self._dictionary.num_chunks

    @property
    def num_slices(self) -> int:
        """Bit slices of the codes (reads the BSI header)."""
        return int(self._bsi.header.num_slices)

    @cached_property
    def _dictionary(self) -> DictionaryHead:
        """The dictionary header and chunk offsets."""
        start = self._parsed.ofs_dictionary
        dictionary = scan_dictionary_head(self._blob, start, self._parsed.header.len_dictionary) \
            or parse_dictionary_head(self._generated_dictionary, start)
        if self.num_keys > 0 and not 1 <= dictionary.num_chunks <= self.num_keys:
            raise FormatError(f"{dictionary.num_chunks} chunks for {self.num_keys} keys",
                              offset=start + _OFS_NUM_CHUNKS, path="dictionary.num_chunks")
        return dictionary

    @cached_property
    def _dictionary_bytes(self) -> memoryview:
        """The blob up to the dictionary's end: what the chunks are read from, confined to it."""
        return memoryview(self._blob)[:self._parsed.ofs_bsi]

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
        raw = scan_chunk_header(self._dictionary_bytes, self._codec.kind, start,
                                dictionary.len_chunk_header(index)) \
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
        blob = scan_chunk_keys(self._dictionary_bytes, self._codec.kind, base, header.len_key_blob,
                               header.num_keys) \
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
            return list(accumulate(map(self._codec.size, blob.keys), initial=0))[:-1]
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
                           parsing.field_start(self._parsed, "header")
                           + parsing.field_start(self._parsed.header, "len_dictionary"))
        bsi = _instance(self._parsed, "bsi")
        header = bsi.header
        expected = max((self.num_keys - 1).bit_length(), 1) if self.num_keys > 0 else 64
        if header.num_slices != expected:
            raise FormatError(f"{header.num_slices} slices, but codes 0..{self.num_keys - 1} "
                              f"need {expected}", offset=parsing.field_start(bsi, "header")
                              + parsing.field_start(header, "num_slices"),
                              path="bsi.header.num_slices")
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
            bsi = self._bsi
            entry = bsi.header.slices[i]
            where = f"bsi.header.slices[{i}]"
            start = bsi.ofs_slices + entry.ofs_bitmap
            self._check_inside(start, f"{where}.ofs_bitmap", parsing.field_start(bsi, "header")
                               + parsing.field_start(entry, "ofs_bitmap"))
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


class _LazySlices(Sequence[BitMap]):
    """The BSI slices of a reader, each deserialized when first indexed."""

    def __init__(self, reader: RangeBitmapIndexReader) -> None:
        self._reader = reader

    def __len__(self) -> int:
        return self._reader._bsi.header.num_slices

    def __getitem__(self, i):
        return self._reader._slice(i)
