"""Bitmap file indexes (formats/bitmap_index.ksy): a reader answering predicates as Java does,
and the writer.

`BitmapIndexReader` answers `=`, `!=`, IN, NOT IN, IS NULL and IS NOT NULL exactly as the
newest Java `BitmapFileIndex.Reader` (spec §2.8, §2.9), and REMAIN for everything else.

A V2 blob is read as Java reads it: the head and the secondary index when opened, then only the
one index block a lookup needs and the bitmaps it returns. A V1 blob lists every key, unsorted,
so opening one reads the whole dictionary. The generated parser, one Python object per field, is
their specification but takes seconds for 100k V1 keys and ~40 ms for one 16 KiB V2 block;
`scan_v1_dictionary`, `scan_v2_head` and `scan_v2_block` read the same bytes with `struct`/numpy
(`keys.scan_records`) and, wherever the generated parser would fail, decline and let the
generated parser report the located error. test_bitmap.py and test_fast_lookups.py prove them
equal.

Every stored bitmap goes through `paimon_schema.roaring`, which checks the roaring header before
pyroaring sees the bytes.
"""

from __future__ import annotations

import array
import struct
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import repeat
from operator import itemgetter, lt
from typing import Any, NamedTuple

import numpy as np
from pyroaring import BitMap

from paimon_schema import constructs, javaorder, roaring, types
from paimon_schema.errors import FormatError, SchemaError
from paimon_schema.generated import bitmap_index_codec, roaring_bitmap_codec
from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.layouts import keys, parsing
from paimon_schema.layouts.keys import KeyCodec, KeyKind
from paimon_schema.positions import fresh_bitmap
from paimon_schema.results import FileIndexReader, IndexResult
from paimon_schema.types import DataType

#: A key as the generated parser returns it: an int (IEEE bits for floats) or UTF-8 bytes.
Key = int | bytes

_HEAD = struct.Struct(">BiiB")      # version, num_rows, num_keys, has_null
_S4 = struct.Struct(">i")
_S4S4 = struct.Struct(">ii")
_OFS_NULL_BITMAP = _HEAD.size       # where ofs_null_bitmap sits when has_null
_OFS_NUM_KEYS = 5

#: (all bits but the sign, +infinity, Java's canonical NaN) per float kind.
_FLOAT_BITS = {KeyKind.float32: (0x7FFFFFFF, 0x7F800000, 0x7FC00000),
               KeyKind.float64: (0x7FFF_FFFF_FFFF_FFFF, 0x7FF0_0000_0000_0000, 0x7FF8_0000_0000_0000)}


# ---------------------------------------------------------------------------------------------
# V1 dictionary: generated parser (the specification) and the fast path


@dataclass(frozen=True)
class V1Dictionary:
    """A V1 head and its entries in file order, exactly as the generated parser reads them."""

    num_rows: int
    has_null: bool
    ofs_null_bitmap: int        # 0 without nulls, as Java's field defaults
    keys: list[Key]
    offsets: list[int]          # `ofs_bitmap` of each entry
    ofs_entries: int
    ofs_body: int


def read_v1_dictionary(data: bytes, kind: KeyKind) -> V1Dictionary:
    """The V1 dictionary through the fast path; the generated parser locates any error."""
    return scan_v1_dictionary(data, kind) or parse_v1_dictionary(data, kind)


def parse_v1_dictionary(data: bytes, kind: KeyKind) -> V1Dictionary:
    """The V1 dictionary through the generated parser: slow, the reference for the fast path."""
    index = parsing.parse(lambda io: BitmapIndex(kind, io), data)
    if index.version != BitmapIndex.Version.v1:
        raise FormatError("not a V1 bitmap index", offset=0, path="version")
    entries = index.index.entries
    return V1Dictionary(
        num_rows=index.num_rows, has_null=bool(index.has_null),
        ofs_null_bitmap=index.ofs_null_bitmap if index.has_null else 0,
        keys=[keys.raw_key(e.key) for e in entries], offsets=[e.ofs_bitmap for e in entries],
        ofs_entries=index.index._debug["entries"]["start"], ofs_body=index.ofs_body)


def scan_v1_dictionary(data: bytes, kind: KeyKind) -> V1Dictionary | None:
    """The V1 dictionary via `struct`/numpy, or None exactly where the generated parser fails."""
    if len(data) < _HEAD.size:
        return None
    version, num_rows, num_keys, has_null = _HEAD.unpack_from(data)
    if version != 1 or num_rows < 0 or num_keys < 0 or has_null > 1:
        return None
    pos, ofs_null_bitmap = _HEAD.size, 0
    if has_null:
        if len(data) < pos + 4:
            return None
        (ofs_null_bitmap,) = _S4.unpack_from(data, pos)
        if ofs_null_bitmap > 0:
            return None
        pos += 4
    entries = keys.scan_records(data, kind, pos, num_keys, (keys.NO_MIN,))
    if entries is None:
        return None
    keys_, (offsets,), ofs_body = entries
    return V1Dictionary(num_rows=num_rows, has_null=bool(has_null), ofs_null_bitmap=ofs_null_bitmap,
                        keys=keys_, offsets=offsets, ofs_entries=pos, ofs_body=ofs_body)


# ---------------------------------------------------------------------------------------------
# V2 head and index blocks: generated parser (the specification) and the fast path


@dataclass(frozen=True)
class V2Head:
    """A V2 head and its secondary index, exactly as the generated parser reads them."""

    num_rows: int
    num_keys: int
    has_null: bool
    ofs_null_bitmap: int        # 0 without nulls, as Java's field defaults
    len_null_bitmap: int        # 0 without nulls
    first_keys: list[Key]       # `first_key` of each block
    block_offsets: list[int]    # `ofs_block` of each block
    ofs_num_blocks: int
    ofs_index_blocks: int
    len_index_blocks: int

    @property
    def ofs_body(self) -> int:
        return self.ofs_index_blocks + self.len_index_blocks


@dataclass(frozen=True)
class V2Block:
    """One V2 index block's entries, exactly as the generated parser reads them."""

    keys: list[Key]
    offsets: list[int]          # `ofs_bitmap` of each entry
    lengths: list[int]          # `len_bitmap` of each entry
    end: int                    # position right after the last entry


def read_v2_head(data: bytes, kind: KeyKind) -> V2Head:
    """The V2 head through the fast path; the generated parser locates any error."""
    return scan_v2_head(data, kind) or parse_v2_head(data, kind)


def parse_v2_head(data: bytes, kind: KeyKind) -> V2Head:
    """The V2 head through the generated parser: slow, the reference for the fast path."""
    index = parsing.parse(lambda io: BitmapIndex(kind, io), data)
    if index.version != BitmapIndex.Version.v2:
        raise FormatError("not a V2 bitmap index", offset=0, path="version")
    v2 = index.index
    return V2Head(
        num_rows=index.num_rows, num_keys=index.num_keys, has_null=bool(index.has_null),
        ofs_null_bitmap=index.ofs_null_bitmap if index.has_null else 0,
        len_null_bitmap=v2.len_null_bitmap if index.has_null else 0,
        first_keys=[keys.raw_key(ref.first_key) for ref in v2.blocks],
        block_offsets=[ref.ofs_block for ref in v2.blocks],
        ofs_num_blocks=v2._debug["num_blocks"]["start"], ofs_index_blocks=v2.ofs_index_blocks,
        len_index_blocks=v2.len_index_blocks)


def scan_v2_head(data: bytes, kind: KeyKind) -> V2Head | None:
    """The V2 head via `struct`/numpy, or None exactly where the generated parser fails."""
    if len(data) < _HEAD.size:
        return None
    version, num_rows, num_keys, has_null = _HEAD.unpack_from(data)
    if version != 2 or num_rows < 0 or num_keys < 0 or has_null > 1:
        return None
    pos, ofs_null_bitmap, len_null_bitmap = _HEAD.size, 0, 0
    if has_null:
        if len(data) < pos + 8:
            return None
        ofs_null_bitmap, len_null_bitmap = _S4S4.unpack_from(data, pos)
        if ofs_null_bitmap > 0 or len_null_bitmap < 0:
            return None
        pos += 8
    if len(data) < pos + 4:
        return None
    (num_blocks,) = _S4.unpack_from(data, pos)
    refs = keys.scan_records(data, kind, pos + 4, num_blocks, (0,)) if num_blocks >= 0 else None
    if refs is None:
        return None
    first_keys, (block_offsets,), end = refs
    if len(data) < end + 4:
        return None
    (len_index_blocks,) = _S4.unpack_from(data, end)
    if len_index_blocks < 0:
        return None
    return V2Head(num_rows=num_rows, num_keys=num_keys, has_null=bool(has_null),
                  ofs_null_bitmap=ofs_null_bitmap, len_null_bitmap=len_null_bitmap,
                  first_keys=first_keys, block_offsets=block_offsets, ofs_num_blocks=pos,
                  ofs_index_blocks=end + 4, len_index_blocks=len_index_blocks)


def read_v2_block(data: bytes, kind: KeyKind, start: int, path: str = "") -> V2Block:
    """The index block at `start` through the fast path; the generated parser locates any error
    (under `path`)."""
    return scan_v2_block(data, kind, start) or parse_v2_block(data, kind, start, path)


def parse_v2_block(data: bytes, kind: KeyKind, start: int, path: str = "") -> V2Block:
    """The index block at `start` through the generated parser: the reference for the fast path."""
    block = _index_block(data, BitmapIndex(kind, parsing.stream(data)), start, path)
    entries = block.entries
    return V2Block(keys=[keys.raw_key(e.key) for e in entries], offsets=[e.ofs_bitmap for e in entries],
                   lengths=[e.len_bitmap for e in entries], end=block._io.pos())


def _index_block(data: bytes, root: BitmapIndex, start: int, path: str = "") -> BitmapIndex.IndexBlock:
    """The generated index block at `start`. Its fields need only the root's key kind, so an
    unread root will do, unless an entry's `bitmap` is read (that needs the root's `ofs_body`)."""
    return parsing.parse(lambda io: BitmapIndex.IndexBlock(io, None, root), data, pos=start, path=path)


def scan_v2_block(data: bytes, kind: KeyKind, start: int) -> V2Block | None:
    """The index block at `start` via `struct`/numpy, or None exactly where the generated
    parser fails (hostile counts are sized against the data before anything is allocated)."""
    if len(data) < start + 4:
        return None
    (count,) = _S4.unpack_from(data, start)
    entries = keys.scan_records(data, kind, start + 4, count, (keys.NO_MIN, -1)) if count >= 1 else None
    if entries is None:
        return None
    keys_, (offsets, lengths), end = entries
    return V2Block(keys=keys_, offsets=offsets, lengths=lengths, end=end)


def _java_key(kind: KeyKind, raw: Key) -> Key:
    """A stored key as Java's reader compares it: `readBoolean` takes any non-zero byte as true,
    and Float/Double equality (`floatToIntBits`) makes every NaN the one canonical NaN."""
    if kind == KeyKind.boolean:
        return int(raw != 0)
    if kind in _FLOAT_BITS:
        magnitude, infinity, nan = _FLOAT_BITS[kind]
        return nan if raw & magnitude > infinity else raw
    return raw


# ---------------------------------------------------------------------------------------------
# The reader


@dataclass
class ReadStats:
    """What a reader has read so far (V2 laziness is asserted on it)."""

    blocks_loaded: int = 0
    bitmaps_deserialized: int = 0
    bitmap_bytes: int = 0


class BitmapIndexReader(FileIndexReader):
    """Java's `BitmapFileIndex.Reader` over one blob; open it with `BitmapIndexReader.open`.

    `=`/IN give the OR of the keys' rows (a missing key: no rows); `!=`/NOT IN flip that over
    `[0, num_rows)`, so they include the null rows as Java's do; IS NULL gives the null rows,
    IS NOT NULL their flip; a None literal stands for the null rows. Decoded bitmaps are cached
    per key; results are fresh bitmaps. `items()` enumerates the content for dumps.
    """

    def __init__(self, data: bytes, codec: KeyCodec, *, version: int, num_rows: int,
                 num_keys: int, has_null: bool, ofs_null_bitmap: int, ofs_body: int) -> None:
        self._data = data
        self.codec = codec
        self.version = version
        self.num_rows = num_rows
        self._num_keys = num_keys
        self._has_null = has_null
        self._ofs_null_bitmap = ofs_null_bitmap
        self._ofs_body = ofs_body
        self._bitmaps: dict[Key | None, BitMap] = {}
        self.stats = ReadStats()

    @classmethod
    def open(cls, blob: bytes, data_type: str | DataType) -> BitmapIndexReader:
        """A reader of a V1 or V2 blob whose keys have `data_type`.

        SchemaError for a type the bitmap index does not support; FormatError for bad bytes.
        """
        codec = keys.bitmap_keys(data_type)
        data = bytes(blob)
        if data[:1] == b"\x01":
            return _V1Reader(data, codec, read_v1_dictionary(data, codec.kind))
        return _V2Reader(data, codec, read_v2_head(data, codec.kind))

    # -- predicates (Java's visitXxx) ----------------------------------------------------------

    def equal(self, value: object) -> IndexResult:
        return self.in_([value])

    def not_equal(self, value: object) -> IndexResult:
        return self.not_in([value])

    def in_(self, values: Iterable[object]) -> IndexResult:
        return IndexResult.of(self._in_rows(values))

    def not_in(self, values: Iterable[object]) -> IndexResult:
        return IndexResult.of(self._in_rows(values).flip(0, self.num_rows))

    def is_null(self) -> IndexResult:
        return self.in_([None])

    def is_not_null(self) -> IndexResult:
        return self.not_in([None])

    # -- content ------------------------------------------------------------------------------

    @property
    def null_rows(self) -> BitMap:
        return BitMap(self._rows(None))

    def __len__(self) -> int:
        """Number of distinct non-null keys."""
        return self._num_keys

    def items(self) -> Iterator[tuple[object, BitMap]]:
        """(value, rows) of every key, in Java's key order; values as `KeyCodec.decode` gives."""
        raise NotImplementedError

    # -- shared machinery ---------------------------------------------------------------------

    def _in_rows(self, values: Iterable[object]) -> BitMap:
        """Java's getInListResultBitmap: the OR of each literal's rows, as a new bitmap."""
        found = [self._rows(None if v is None else self.codec.encode(v)) for v in values]
        return BitMap.union(*found) if found else BitMap()

    def _rows(self, key: Key | None) -> BitMap:
        """The rows of a key (None: the null rows), decoded once per reader."""
        if key not in self._bitmaps:
            self._bitmaps[key] = self._null_rows() if key is None else self._key_rows(key)
        return self._bitmaps[key]

    def _null_rows(self) -> BitMap:
        if not self._has_null:
            return BitMap()
        if self._ofs_null_bitmap < 0:
            return self._singleton(self._ofs_null_bitmap, _OFS_NULL_BITMAP, "ofs_null_bitmap")
        return self._stored_null_rows()

    def _key_rows(self, key: Key) -> BitMap:
        raise NotImplementedError

    def _stored_null_rows(self) -> BitMap:
        raise NotImplementedError

    def _singleton(self, ofs_bitmap: int, offset: int, path: str) -> BitMap:
        """A key (or null) seen in one row stores `-1 - row` and no bitmap."""
        row = -1 - ofs_bitmap
        self._check_rows(row, offset, path)
        return BitMap([row])

    def _streamed(self, pos: int, path: str, length: int = -1) -> BitMap:
        """Java's streaming deserialize of the self-delimiting bitmap at `pos`; `length`, where
        the layout implies one, must be its size."""
        try:
            bitmap, size = roaring.deserialize(self._data, pos)
        except FormatError as exc:
            raise exc.within(path, 0) from exc
        if length not in (-1, size):
            raise FormatError(f"the bitmap takes {size} bytes but the offsets leave {length}",
                              offset=pos, path=path)
        return self._counted(bitmap, size, pos, path)

    def _sized(self, raw: memoryview, pos: int, path: str) -> BitMap:
        """A bitmap of a stored length, which must be exactly its serialized size."""
        try:
            bitmap, size = roaring.deserialize(raw, exact=True)
        except FormatError as exc:      # a bitmap placed past the end fails at the end
            raise exc.within(path, min(pos, len(self._data))) from exc
        return self._counted(bitmap, size, pos, path)

    def _counted(self, bitmap: BitMap, size: int, pos: int, path: str) -> BitMap:
        self.stats.bitmaps_deserialized += 1
        self.stats.bitmap_bytes += size
        if bitmap:
            self._check_rows(bitmap.max(), pos, path)
        return bitmap

    def _check_rows(self, last_row: int, offset: int, path: str) -> None:
        if last_row >= self.num_rows:
            raise FormatError(f"row {last_row} is beyond the {self.num_rows} rows of the index",
                              offset=offset, path=path)


class _V1Reader(BitmapIndexReader):
    """V1: the whole dictionary is read on open; lengths are derived as Java derives them."""

    def __init__(self, data: bytes, codec: KeyCodec, dictionary: V1Dictionary) -> None:
        super().__init__(data, codec, version=1, num_rows=dictionary.num_rows,
                         num_keys=len(dictionary.keys), has_null=dictionary.has_null,
                         ofs_null_bitmap=dictionary.ofs_null_bitmap, ofs_body=dictionary.ofs_body)
        self._dictionary = dictionary
        java_keys = dictionary.keys
        if codec.kind == KeyKind.boolean or codec.kind in _FLOAT_BITS:
            java_keys = [_java_key(codec.kind, k) for k in java_keys]
        self._slots = dict(zip(java_keys, range(len(java_keys))))
        if len(self._slots) != len(java_keys):
            self._duplicate(java_keys)
        self._offsets = np.asarray(dictionary.offsets, dtype=np.int64)
        self._lengths, self._null_length = self._derive_lengths()

    def items(self) -> Iterator[tuple[object, BitMap]]:
        for key in sorted(self._slots, key=self.codec.order):
            yield self.codec.decode(key), BitMap(self._rows(key))

    def _key_rows(self, key: Key) -> BitMap:
        j = self._slots.get(key)
        if j is None:
            return BitMap()
        ofs_bitmap = int(self._offsets[j])
        if ofs_bitmap < 0:
            return self._singleton(ofs_bitmap, self._field_offset(j, "ofs_bitmap"),
                                   f"index.entries[{j}].ofs_bitmap")
        return self._streamed(self._ofs_body + ofs_bitmap, f"index.entries[{j}].bitmap",
                              int(self._lengths[j]))

    def _stored_null_rows(self) -> BitMap:
        return self._streamed(self._ofs_body, "index.null_bitmap", self._null_length)

    def _derive_lengths(self) -> tuple[np.ndarray, int]:
        """`BitmapFileIndexMeta.deserialize`: walking the entries in file order, each stored
        offset minus the previous stored one (the null bitmap's first) is that one's length; the
        last is streamed (-1). This only works with the body in entry order, which is checked."""
        stored = np.flatnonzero(self._offsets >= 0)
        offsets = self._offsets[stored]
        null_stored = self._has_null and self._ofs_null_bitmap >= 0
        if len(stored) and (offsets[0] <= 0 if null_stored else offsets[0] != 0):
            where = "after the null bitmap" if null_stored else "at body offset 0"
            self._raise_at(int(stored[0]), "ofs_bitmap",
                           f"the first stored bitmap must start {where}, not at {offsets[0]}")
        steps = np.diff(offsets)
        if len(steps) and not bool(np.all(steps > 0)):
            j = int(stored[int(np.argmin(steps > 0)) + 1])
            self._raise_at(j, "ofs_bitmap", "V1 bitmaps must be stored in entry order "
                                            "(Java derives each length from the next offset)")
        lengths = np.full(len(self._offsets), -1, dtype=np.int64)
        lengths[stored[:-1]] = steps
        null_length = int(offsets[0]) if null_stored and len(stored) else -1
        return lengths, null_length

    def _duplicate(self, java_keys: list[Key]) -> None:
        seen: set[Key] = set()
        for j, key in enumerate(java_keys):
            if key in seen:
                self._raise_at(j, "key", f"key {self.codec.decode(key)!r} appears twice")
            seen.add(key)

    def _field_offset(self, j: int, field: str) -> int:
        """Offset of entry `j`'s key or ofs_bitmap (sizes summed: only for error reports)."""
        d = self._dictionary
        start = d.ofs_entries + sum(self.codec.size(k) + 4 for k in d.keys[:j])
        return start if field == "key" else start + self.codec.size(d.keys[j])

    def _raise_at(self, j: int, field: str, message: str) -> None:
        raise FormatError(message, offset=self._field_offset(j, field),
                          path=f"index.entries[{j}].{field}")


class _Block(NamedTuple):
    start: int                  # position of the block
    entries: V2Block
    orders: list[object]        # Java's comparator order of each entry's key


class _V2Reader(BitmapIndexReader):
    """V2: the head and secondary index on open; one block per lookup (Java's two binary
    searches), checked to be in order since a misordered block would silently miss keys.

    Head and blocks come from the fast path; the generated parser is only run to locate an
    error the fast path declined or a bitmap that lies past the end."""

    def __init__(self, data: bytes, codec: KeyCodec, head: V2Head) -> None:
        super().__init__(data, codec, version=2, num_rows=head.num_rows, num_keys=head.num_keys,
                         has_null=head.has_null, ofs_null_bitmap=head.ofs_null_bitmap,
                         ofs_body=head.ofs_body)
        self._head = head
        self._first_orders = self._orders(head.first_keys)
        self._blocks: dict[int, _Block] = {}
        self._check_secondary_index()

    def items(self) -> Iterator[tuple[object, BitMap]]:
        blocks = [self._block(i) for i in range(len(self._first_orders))]
        count = sum(len(b.orders) for b in blocks)
        if count != self._num_keys:
            raise FormatError(f"the index blocks hold {count} keys, the head says {self._num_keys}",
                              offset=_OFS_NUM_KEYS, path="num_keys")
        for i, block in enumerate(blocks):
            for j, raw in enumerate(block.entries.keys):
                key = _java_key(self.codec.kind, raw)
                if key not in self._bitmaps:
                    self._bitmaps[key] = self._entry_rows(i, j)
                yield self.codec.decode(key), BitMap(self._bitmaps[key])

    def _key_rows(self, key: Key) -> BitMap:
        order = self.codec.order(key)
        i = bisect_right(self._first_orders, order) - 1
        if i < 0:
            return BitMap()
        orders = self._block(i).orders
        j = bisect_left(orders, order)
        if j == len(orders) or orders[j] != order:
            return BitMap()
        return self._entry_rows(i, j)

    def _entry_rows(self, i: int, j: int) -> BitMap:
        block = self._block(i)
        ofs_bitmap, len_bitmap = block.entries.offsets[j], block.entries.lengths[j]
        path = f"index.blocks[{i}].block.entries[{j}]"
        if ofs_bitmap < 0:
            key_start = self._entry_start(block, j)
            return self._singleton(ofs_bitmap, key_start + self.codec.size(block.entries.keys[j]),
                                   f"{path}.ofs_bitmap")
        pos = self._ofs_body + ofs_bitmap
        if len_bitmap == -1:
            return self._streamed(pos, f"{path}.bitmap")
        if pos + len_bitmap > len(self._data):      # the generated parser locates the error
            entry = _index_block(self._data, self._generated, block.start).entries[j]
            parsing.read_lazily(entry, "bitmap", path)
        return self._sized(memoryview(self._data)[pos:pos + len_bitmap], pos, f"{path}.bitmap")

    def _stored_null_rows(self) -> BitMap:
        length = self._head.len_null_bitmap
        if self._ofs_body + length > len(self._data):   # the generated parser locates the error
            parsing.read_lazily(self._generated.index, "null_bitmap", "index")
        raw = memoryview(self._data)[self._ofs_body:self._ofs_body + length]
        return self._sized(raw, self._ofs_body, "index.null_bitmap")

    @cached_property
    def _generated(self) -> BitmapIndex:
        """The head through the generated parser, to locate errors in what it points at."""
        return parsing.parse(lambda io: BitmapIndex(self.codec.kind, io), self._data)

    def _orders(self, raw: list[Key]) -> list[object]:
        """Java's comparator order of stored keys (`readBoolean` takes any non-zero byte as
        true; every NaN is the one canonical NaN, which `order` already makes them)."""
        if self.codec.kind == KeyKind.boolean:
            return [int(k != 0) for k in raw]
        return self.codec.orders(raw)

    def _check_secondary_index(self) -> None:
        head, orders = self._head, self._first_orders
        num_blocks = len(orders)
        if (num_blocks == 0) != (self._num_keys == 0) or num_blocks > self._num_keys:
            raise FormatError(f"{num_blocks} index blocks cannot hold {self._num_keys} keys",
                              offset=head.ofs_num_blocks, path="index.num_blocks")
        if all(map(lt, orders, orders[1:])) and max(head.block_offsets, default=-1) < head.len_index_blocks:
            return
        for i, ofs_block in enumerate(head.block_offsets):       # the first failing block
            if i and orders[i] <= orders[i - 1]:
                raise FormatError("index blocks are not in ascending key order (Java's binary "
                                  "search would miss keys)", offset=self._ref_start(i),
                                  path=f"index.blocks[{i}].first_key")
            if ofs_block >= head.len_index_blocks:
                raise FormatError(f"block offset {ofs_block} lies beyond the "
                                  f"{head.len_index_blocks} bytes of index blocks",
                                  offset=self._ref_start(i) + self.codec.size(head.first_keys[i]),
                                  path=f"index.blocks[{i}].ofs_block")

    def _block(self, i: int) -> _Block:
        if i not in self._blocks:
            self._blocks[i] = self._load_block(i)
        return self._blocks[i]

    def _load_block(self, i: int) -> _Block:
        """Read index block `i` alone and check what Java's binary searches rely on."""
        path = f"index.blocks[{i}].block"
        start = self._head.ofs_index_blocks + self._head.block_offsets[i]
        entries = read_v2_block(self._data, self.codec.kind, start, path)
        self.stats.blocks_loaded += 1
        if entries.end > self._ofs_body:
            raise FormatError("the index block runs into the bitmap body", offset=start, path=path)
        block = _Block(start, entries, self._orders(entries.keys))
        orders = block.orders
        if orders[0] != self._first_orders[i]:
            raise FormatError("the secondary index's first key differs from the block's",
                              offset=self._ref_start(i), path=f"index.blocks[{i}].first_key")
        if not all(map(lt, orders, orders[1:])):
            j = next(j for j in range(1, len(orders)) if orders[j] <= orders[j - 1])
            self._misordered(block, j, path, "entries are not in ascending key order")
        if i + 1 < len(self._first_orders) and orders[-1] >= self._first_orders[i + 1]:
            self._misordered(block, len(orders) - 1, path, "the block overlaps the next one")
        return block

    def _misordered(self, block: _Block, j: int, path: str, message: str) -> None:
        raise FormatError(f"{message} (Java's binary search would miss keys)",
                          offset=self._entry_start(block, j), path=f"{path}.entries[{j}].key")

    def _ref_start(self, i: int) -> int:
        """Where the secondary index's entry `i` starts (only for error reports)."""
        return self._head.ofs_num_blocks + 4 + self._records_size(self._head.first_keys[:i], 4)

    def _entry_start(self, block: _Block, j: int) -> int:
        """Where entry `j` of a block starts (its key)."""
        return block.start + 4 + self._records_size(block.entries.keys[:j], 8)

    def _records_size(self, keys_: list[Key], tail: int) -> int:
        """Bytes taken by records of `keys_`, each followed by `tail` bytes."""
        if self.codec.kind == KeyKind.string:
            return sum(map(len, keys_)) + (4 + tail) * len(keys_)
        return (self.codec.size(0) + tail) * len(keys_)


# ---------------------------------------------------------------------------------------------
# Writing (`BitmapFileIndex.Writer`): the layout pass, then bytes


#: javaorder key kinds of Paimon's `id2bitmap` keys (Integer/Short/Byte, Long, Float, ...).
_JAVA_KINDS = {KeyKind.boolean: "boolean", KeyKind.int8: "int", KeyKind.int16: "int",
               KeyKind.int32: "int", KeyKind.int64: "long", KeyKind.float32: "float",
               KeyKind.float64: "double", KeyKind.string: "binary_string"}
DEFAULT_BLOCK_SIZE = 16 * 1024


class _Entry(NamedTuple):
    key: Key
    offset: int            # body offset, or -1 - row for a single row
    length: int            # serialized length, -1 for a single row


@dataclass(frozen=True)
class BitmapLayout:
    """Everything `BitmapFileIndex.Writer` decides, before any byte is written."""

    codec: KeyCodec
    version: int
    num_rows: int
    null_offset: int | None          # None: no null rows
    null_length: int                 # V2's nullBitmapLength (18 for a single, unstored row)
    entries: list[_Entry]            # id2bitmap HashMap order (V1 entries; body order)
    body: bytes                      # null bitmap (>= 2 rows), then key bitmaps in entry order
    blocks: list[list[_Entry]]       # V2: sorted entries packed into index blocks


def build_bitmap_index(data_type: str | DataType, values: Iterable[object], *, version: int = 2,
                       index_block_size: int = DEFAULT_BLOCK_SIZE) -> bytes:
    """The blob Java's bitmap writer writes for `values` (one per row, None = null)."""
    return write_layout(bitmap_layout(data_type, values, version=version,
                                      index_block_size=index_block_size))


def bitmap_layout(data_type: str | DataType, values: Iterable[object], *, version: int = 2,
                  index_block_size: int = DEFAULT_BLOCK_SIZE) -> BitmapLayout:
    """The layout pass: rows per key, Java's HashMap order, single-row offsets, body offsets
    and, for V2, the sorted entries packed into blocks of at most `index_block_size` bytes.

    Columns the vectorized pass takes (`vector_layout`: numpy arrays of numbers or booleans,
    lists of ints, floats, bools or strs, None for nulls) go through it; everything else, and
    every column it declines (a value the type cannot hold, an entry larger than a block),
    through the per-row pass `row_layout`, the reference, which also reports the errors.
    Hypothesis proves the two give equal layouts.
    """
    if not isinstance(values, (list, tuple, np.ndarray)):
        values = list(values)
    layout = vector_layout(data_type, values, version=version, index_block_size=index_block_size)
    if layout is not None:
        return layout
    return row_layout(data_type, values, version=version, index_block_size=index_block_size)


def _bitmap_codec(data_type: str | DataType, version: int) -> KeyCodec:
    codec = keys.bitmap_keys(data_type)
    if version not in (1, 2):
        raise SchemaError(f"invalid bitmap index version {version} (1 or 2)")
    return codec


def row_layout(data_type: str | DataType, values: Iterable[object], *, version: int = 2,
               index_block_size: int = DEFAULT_BLOCK_SIZE) -> BitmapLayout:
    """The layout pass one row at a time, exactly as Java's writer goes: the reference."""
    codec = _bitmap_codec(data_type, version)
    row_keys = [None if v is None else codec.encode(v) for v in values]
    rows: dict[Key, list[int]] = {}
    nulls: list[int] = []
    for row, key in enumerate(row_keys):
        (nulls if key is None else rows.setdefault(key, [])).append(row)
    order = javaorder.bitmap_key_order([k for k in row_keys if k is not None], _JAVA_KINDS[codec.kind])

    body: list[bytes] = []
    null_offset, null_length = None, 0
    if nulls:
        null_bitmap = fresh_bitmap(np.array(nulls, dtype=np.uint64)).serialize()
        null_length = len(null_bitmap)
        if len(nulls) == 1:
            null_offset = -1 - nulls[0]
        else:
            null_offset = 0
            body.append(null_bitmap)
    cursor = sum(map(len, body))
    entries = []
    for key in order:
        key_rows = rows[key]
        if len(key_rows) == 1:
            entries.append(_Entry(key, -1 - key_rows[0], -1))
            continue
        serialized = fresh_bitmap(np.array(key_rows, dtype=np.uint64)).serialize()
        entries.append(_Entry(key, cursor, len(serialized)))
        body.append(serialized)
        cursor += len(serialized)
    blocks = _pack_blocks(codec, sorted(entries, key=lambda e: codec.order(e.key)), index_block_size) \
        if version == 2 else []
    return BitmapLayout(codec, version, len(row_keys), null_offset, null_length, entries,
                        b"".join(body), blocks)


def _pack_blocks(codec: KeyCodec, entries: list[_Entry], limit: int) -> list[list[_Entry]]:
    """`BitmapIndexBlock.tryAdd`: a block counts 4 bytes plus `8 + key size` per entry and
    closes when the next entry would pass `limit` (spec 2.6)."""
    blocks: list[list[_Entry]] = []
    size = 0
    for entry in entries:
        needed = 8 + codec.size(entry.key)
        if 4 + needed > limit:
            raise SchemaError(f"index-block-size {limit} cannot hold the key "
                              f"{codec.decode(entry.key)!r} ({4 + needed} bytes); Java fails too")
        if not blocks or size + needed > limit:
            blocks.append([])
            size = 4
        blocks[-1].append(entry)
        size += needed
    return blocks


# ---------------------------------------------------------------------------------------------
# The vectorized layout pass
#
# Every non-null row gets a 64-bit grouping key whose equality is Java's `equals` (signed
# integers with the sign bit flipped, so that their order is kept; floats as their canonical
# bits; strings as their code in order of first occurrence). Sorting `grouping key << b | row`
# (one uint64 sort, when the keys' span leaves b bits for the row numbers) or a stable argsort
# groups the rows per key, ascending; the groups give each key's rows, its first row and its
# count. Java's HashMap order then needs only the distinct keys in order of first occurrence
# (`javaorder.bitmap_distinct_order`), and each stored bitmap is built from a slice of the
# grouped rows.

_SIGN = np.uint64(1 << 63)
_CANONICAL_NAN = {KeyKind.float32: 0x7FC00000, KeyKind.float64: 0x7FF8_0000_0000_0000}


class _Column(NamedTuple):
    """A column as the vectorized pass sees it."""

    num_rows: int
    rows: np.ndarray            # int64: the non-null rows, ascending
    grouping: np.ndarray        # uint64 per non-null row: equal iff the keys are equal
    strings: list[bytes] | None  # string kinds: the key of each code (`grouping`)


def vector_layout(data_type: str | DataType, values: Any, *, version: int = 2,
                  index_block_size: int = DEFAULT_BLOCK_SIZE) -> BitmapLayout | None:
    """The layout pass over whole columns (numpy), equal to `row_layout`; None where it
    declines the column (see `bitmap_layout`)."""
    codec = _bitmap_codec(data_type, version)
    with javaorder.gc_paused():      # millions of entry tuples: full collections would cost seconds
        return _vector_layout(codec, values, version, index_block_size)


def _vector_layout(codec: KeyCodec, values: Any, version: int, index_block_size: int) -> BitmapLayout | None:
    column = _column(codec, values)
    if column is None:
        return None
    num_rows, rows, grouping, strings = column
    grouped, starts, counts, group_keys = _group(num_rows, rows, grouping)
    first_rows = grouped[starts].astype(np.int64)

    nulls = _complement(num_rows, rows)
    body: list[bytes] = []
    null_offset, null_length = None, 0
    if len(nulls):
        null_bitmap = fresh_bitmap(nulls).serialize()
        null_length = len(null_bitmap)
        if len(nulls) == 1:
            null_offset = -1 - int(nulls[0])
        else:
            null_offset = 0
            body.append(null_bitmap)

    # Java's order: the distinct keys in order of first occurrence, then the HashMap.
    kind = codec.kind
    java_keys = [strings[i] for i in group_keys.tolist()] if kind == KeyKind.string else []
    arrival = np.argsort(first_rows)
    trailing = len(rows) > 0 and int(first_rows.max()) != int(rows[-1])
    arrived = [java_keys[i] for i in arrival.tolist()] if kind == KeyKind.string \
        else _hash_input(kind, group_keys)[arrival]
    order = arrival[javaorder.bitmap_distinct_order(arrived, _JAVA_KINDS[kind], trailing)]

    cursor = len(body[0]) if body else 0
    counts_o = counts[order]
    lengths = np.full(len(order), -1, np.int64)
    stored = np.flatnonzero(counts_o > 1)
    stored_starts, stored_counts = starts[order[stored]], counts_o[stored]
    serialized, lengths[stored] = serialize_bitmaps(grouped, stored_counts, stored_starts)
    body.append(serialized)
    ends = cursor + np.cumsum(np.where(lengths > 0, lengths, 0))
    offsets = np.where(lengths > 0, ends - lengths, -1 - first_rows[order])
    ordered_keys = [java_keys[i] for i in order.tolist()] if kind == KeyKind.string \
        else _hash_input(kind, group_keys[order]).tolist()
    entries = list(map(tuple.__new__, repeat(_Entry),
                       zip(ordered_keys, offsets.tolist(), lengths.tolist())))

    blocks: list[list[_Entry]] = []
    if version == 2 and entries:
        position = np.empty(len(order), np.int64)
        position[order] = np.arange(len(order))
        ordered = [entries[i] for i in position[_java_sorted(kind, group_keys, strings)].tolist()]
        blocks = _vector_blocks(codec, ordered, index_block_size)
        if blocks is None:
            return None
    return BitmapLayout(codec, version, num_rows, null_offset, null_length, entries,
                        b"".join(body), blocks)


def serialize_bitmaps(rows: np.ndarray, counts: np.ndarray, starts: np.ndarray | None = None
                      ) -> tuple[bytes, np.ndarray]:
    """The run-optimized serializations of many bitmaps, back to back, and their lengths:
    bitmap i holds `rows[starts[i]:starts[i] + counts[i]]` (ascending; `starts` defaults to
    the bitmaps back to back). One `BitMap` per bitmap from a slice of one `array('I')`,
    pyroaring's fastest input (a single 64-bit bitmap of `i << 32 | row`, cut into its 32-bit
    parts, measured slower)."""
    counts = np.asarray(counts, np.int64)
    if starts is None:
        starts = np.cumsum(counts) - counts
    view = array.array("I", np.asarray(rows, np.uint32).tobytes())
    out = []
    for start, size in zip(np.asarray(starts).tolist(), counts.tolist()):
        bitmap = BitMap(view[start:start + size])
        bitmap.run_optimize()
        out.append(bitmap.serialize())
    return b"".join(out), np.fromiter(map(len, out), np.int64, len(out))


def _column(codec: KeyCodec, values: Any) -> _Column | None:
    """Grouping keys of a numpy array or of a list of plain Python values; None to decline."""
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            return None
        if values.dtype.kind not in "OU":
            return _array_column(codec, values, len(values), None)
        values = values.tolist()
    if codec.kind == KeyKind.string:
        return _string_column(codec, values)
    typed = keys.plain_array(codec, values)
    if typed is None:
        return None
    array, valid = typed
    return _array_column(codec, array, len(valid) if valid is not None else len(array), valid)


def _array_column(codec: KeyCodec, array: np.ndarray, num_rows: int,
                  valid: np.ndarray | None) -> _Column | None:
    """`array` holds the non-null values; `valid` marks the non-null rows (None: all)."""
    if num_rows >= 2**31:
        return None
    rows = np.arange(num_rows, dtype=np.int64) if valid is None else np.flatnonzero(valid)
    kind, letter = codec.kind, array.dtype.kind
    if not len(array):
        return _Column(num_rows, rows, np.zeros(0, np.uint64), [] if kind == KeyKind.string else None)
    if kind == KeyKind.string:
        return None
    if kind == KeyKind.boolean:
        return _Column(num_rows, rows, array.astype(np.uint64), None) if letter == "b" else None
    if kind in (KeyKind.float32, KeyKind.float64):
        if letter != "f":
            return None
        with np.errstate(over="ignore"):
            if kind == KeyKind.float32:
                bits = array.astype(np.float32).view(np.uint32).astype(np.uint64)
            else:
                bits = array.astype(np.float64).view(np.uint64).copy()
        bits[np.isnan(array)] = _CANONICAL_NAN[kind]
        return _Column(num_rows, rows, bits, None)
    if letter not in "iu":
        return None
    low, high = types.INTEGER_BOUNDS[codec.data_type.root]
    if int(array.min()) < low or int(array.max()) > high:
        return None
    return _Column(num_rows, rows, array.astype(np.int64).view(np.uint64) ^ _SIGN, None)


def _string_column(codec: KeyCodec, values: list) -> _Column | None:
    """Strings by code in order of first occurrence (`keys.string_codes`)."""
    coded = keys.string_codes(values)
    if coded is None:
        return None
    codes, strings = coded
    if None not in strings:
        return _Column(len(values), np.arange(len(values), dtype=np.int64),
                       codes.astype(np.uint64), strings)
    null_code = strings.index(None)
    rows = np.flatnonzero(codes != null_code)
    return _Column(len(values), rows, codes[rows].astype(np.uint64), strings)


def _group(num_rows: int, rows: np.ndarray, grouping: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows grouped by key, ascending in each group as uint32; group starts; group counts;
    each group's grouping key), groups in ascending grouping-key order."""
    if not len(rows):
        empty = np.zeros(0, np.int64)
        return np.zeros(0, np.uint32), empty, empty, np.zeros(0, np.uint64)
    low = int(grouping.min())
    row_bits = max(1, (num_rows - 1).bit_length())
    if (int(grouping.max()) - low).bit_length() + row_bits <= 64:
        packed = ((grouping - np.uint64(low)) << np.uint64(row_bits)) | rows.astype(np.uint64)
        packed.sort()
        grouped = (packed & np.uint64((1 << row_bits) - 1)).astype(np.uint32)
        sorted_keys = packed >> np.uint64(row_bits)
    else:
        order = np.argsort(grouping, kind="stable")
        grouped = rows[order].astype(np.uint32)
        sorted_keys = grouping[order]
        low = 0
    starts = np.concatenate(([0], np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1))
    counts = np.diff(np.append(starts, len(rows)))
    return grouped, starts, counts, sorted_keys[starts] + np.uint64(low)


def _complement(num_rows: int, rows: np.ndarray) -> np.ndarray:
    """The rows (uint64) of [0, num_rows) not in the ascending `rows`."""
    if len(rows) == num_rows:
        return np.zeros(0, np.uint64)
    mask = np.ones(num_rows, bool)
    mask[rows] = False
    return np.flatnonzero(mask).astype(np.uint64)


def _hash_input(kind: KeyKind, group_keys: np.ndarray) -> np.ndarray:
    """The keys as javaorder takes them and `KeyCodec.encode` gives them: signed integers,
    booleans 0/1, float bits."""
    if kind in (KeyKind.boolean, KeyKind.float32, KeyKind.float64):
        return group_keys
    return (group_keys ^ _SIGN).view(np.int64)


def _java_sorted(kind: KeyKind, group_keys: np.ndarray, strings: list[bytes] | None) -> np.ndarray:
    """Group indices in the order of Java's comparator (spec 2.2)."""
    if kind == KeyKind.string:
        return np.array(sorted(range(len(group_keys)),
                               key=[strings[i] for i in group_keys.tolist()].__getitem__), np.int64)
    if kind in (KeyKind.float32, KeyKind.float64):
        # Canonical NaN is the largest positive pattern: -inf ... -0.0 < 0.0 ... +inf < NaN.
        sign = np.uint64(1 << (31 if kind == KeyKind.float32 else 63))
        magnitude = (group_keys & (sign - np.uint64(1))).view(np.int64)
        return np.argsort(np.where(group_keys & sign, -magnitude - 1, magnitude), kind="stable")
    return np.arange(len(group_keys), dtype=np.int64)    # groups ascend by signed value


def _vector_blocks(codec: KeyCodec, entries: list[_Entry], limit: int) -> list[list[_Entry]] | None:
    """`_pack_blocks` by block (fixed-size keys: a block holds (limit - 4) // entry size), None
    where an entry does not fit any block."""
    if codec.kind != KeyKind.string:
        per_block = (limit - 4) // (8 + codec.size(0))
        if per_block < 1:
            return None
        return [entries[i:i + per_block] for i in range(0, len(entries), per_block)]
    needed = 12 + np.fromiter((len(e.key) for e in entries), np.int64, len(entries))
    if int(needed.max()) + 4 > limit:
        return None
    ends = np.cumsum(needed)
    blocks, start = [], 0
    while start < len(entries):
        base = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, base + limit - 4, side="right"))
        blocks.append(entries[start:stop])
        start = stop
    return blocks


# ---------------------------------------------------------------------------------------------
# Bytes


_KEY, _OFFSET, _LENGTH = itemgetter(0), itemgetter(1), itemgetter(2)


def _records(codec: KeyCodec, keys_: list[Key], *columns: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """Records `key, column0 (i32), column1 (i32), ...` back to back, with numpy: (bytes as
    uint8, size of each record)."""
    count = len(keys_)
    if codec.kind != KeyKind.string:
        dtype = np.dtype([("key", keys.KEY_DTYPES[codec.kind])]
                         + [(f"c{i}", ">i4") for i in range(len(columns))])
        table = np.empty(count, dtype)
        table["key"] = np.array(keys_, dtype=np.uint64 if codec.kind == KeyKind.float64
                                else np.int64 if codec.kind != KeyKind.float32 else np.uint32)
        for i, column in enumerate(columns):
            table[f"c{i}"] = np.fromiter(column, np.int64, count)
        return table.view(np.uint8), np.full(count, dtype.itemsize, np.int64)
    lengths = np.fromiter(map(len, keys_), np.int64, count)
    sizes = 4 + lengths + 4 * len(columns)
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), np.uint8)
    spread = starts[:, None] + np.arange(4)

    def put(at: np.ndarray, values: Iterable[int]) -> None:
        out[at[:, None] + np.arange(4)] = np.fromiter(values, np.int64, count).astype(">i4").view(
            np.uint8).reshape(-1, 4)

    out[spread] = lengths.astype(">i4").view(np.uint8).reshape(-1, 4)
    text = np.frombuffer(b"".join(keys_), np.uint8)
    key_starts = np.cumsum(lengths) - lengths
    out[np.repeat(starts + 4 - key_starts, lengths) + np.arange(len(text))] = text
    for i, column in enumerate(columns):
        put(starts + 4 + lengths + 4 * i, column)
    return out, sizes


def write_layout(layout: BitmapLayout) -> bytes:
    """The blob for a layout, with numpy records: the fast path, proven equal to
    `write_with_codec`."""
    codec = layout.codec
    head = _HEAD.pack(layout.version, layout.num_rows, len(layout.entries),
                      layout.null_offset is not None)
    if layout.null_offset is not None:
        head += _S4.pack(layout.null_offset)
    if layout.version == 1:
        entries = layout.entries
        index, _ = _records(codec, list(map(_KEY, entries)), map(_OFFSET, entries))
        return head + index.tobytes() + layout.body
    ordered = [e for block in layout.blocks for e in block]
    records, sizes = _records(codec, list(map(_KEY, ordered)), map(_OFFSET, ordered),
                              map(_LENGTH, ordered))
    ends = np.cumsum(sizes).tolist()
    blocks, first = [], 0
    for block in layout.blocks:
        last = first + len(block)
        blocks.append(_S4.pack(len(block)) + records[ends[first - 1] if first else 0:ends[last - 1]].tobytes())
        first = last
    block_offsets = np.cumsum([0] + [len(b) for b in blocks])
    secondary, _ = _records(codec, [block[0].key for block in layout.blocks], block_offsets[:-1].tolist())
    null_length = _S4.pack(layout.null_length) if layout.null_offset is not None else b""
    return (head + null_length + _S4.pack(len(blocks)) + secondary.tobytes()
            + _S4.pack(int(block_offsets[-1])) + b"".join(blocks) + layout.body)


def write_with_codec(layout: BitmapLayout) -> bytes:
    """The blob for a layout through the generated Construct codec: the reference writer."""
    codec = layout.codec
    has_null = layout.null_offset is not None
    head_size = _HEAD.size + (4 if has_null else 0)

    def key(k: Key) -> dict:
        return {"value": {"len_value": len(k), "value": k} if codec.kind == KeyKind.string else k}

    def body_bitmap(offset: int, length: int) -> bytes:
        return layout.body[offset:offset + length]

    if layout.version == 1:
        body_start = head_size + sum(codec.size(e.key) + 4 for e in layout.entries)
        index = {"entries": [{"key": key(e.key), "ofs_bitmap": e.offset,
                              "bitmap": _roaring_model(body_bitmap(e.offset, e.length))
                              if e.offset >= 0 else None} for e in layout.entries],
                 "body_mark": {"ofs": body_start},
                 "null_bitmap": _roaring_model(body_bitmap(0, layout.null_length))
                 if has_null and layout.null_offset >= 0 else None}
    else:
        block_sizes = [4 + sum(8 + codec.size(e.key) for e in block) for block in layout.blocks]
        secondary_size = sum(codec.size(block[0].key) + 4 for block in layout.blocks)
        index_start = head_size + (4 if has_null else 0) + 4 + secondary_size + 4
        offsets = [sum(block_sizes[:i]) for i in range(len(block_sizes))]
        index = {"len_null_bitmap": layout.null_length if has_null else None,
                 "num_blocks": len(layout.blocks),
                 "blocks": [{"first_key": key(block[0].key), "ofs_block": ofs,
                             "block": {"num_entries": len(block), "entries": [
                                 {"key": key(e.key), "ofs_bitmap": e.offset, "len_bitmap": e.length,
                                  "bitmap": body_bitmap(e.offset, e.length) if e.offset >= 0 else None}
                                 for e in block]}}
                            for block, ofs in zip(layout.blocks, offsets)],
                 "len_index_blocks": sum(block_sizes),
                 "index_blocks_mark": {"ofs": index_start},
                 "null_bitmap": body_bitmap(0, layout.null_length)
                 if has_null and layout.null_offset >= 0 else None}
    model = {"version": layout.version, "num_rows": layout.num_rows, "num_keys": len(layout.entries),
             "has_null": int(has_null), "ofs_null_bitmap": layout.null_offset, "index": index}
    return _codec(int(codec.kind)).build(model)


@cache
def _codec(kind: int) -> Any:
    return bitmap_index_codec.t_bitmap_index(kind).compile()


@cache
def _roaring_codec() -> Any:
    return roaring_bitmap_codec.roaring_bitmap.compile()


def _roaring_model(data: bytes) -> Any:
    return constructs.parse(_roaring_codec(), data)
