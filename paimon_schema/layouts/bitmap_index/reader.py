"""Bitmap file indexes (formats/bitmap_index.ksy): a reader answering predicates as Java does.

`BitmapIndexReader` answers `=`, `!=`, IN, NOT IN, IS NULL and IS NOT NULL exactly as the
newest Java `BitmapFileIndex.Reader` (formats/bitmap_index.ksy), and REMAIN for everything else.

A V2 blob is read as Java reads it: the head and the secondary index when opened, then only the
one index block a lookup needs and the bitmaps it returns. A V1 blob lists every key, unsorted,
so opening one reads the whole dictionary (see `scan` for the two ways of reading them).

Every stored bitmap goes through `paimon_schema.layouts.roaring_bitmap`, which checks the roaring
header before pyroaring sees the bytes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from operator import lt
from typing import Any, NamedTuple

import numpy as np
from pyroaring import BitMap

from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.bitmap_index.scan import (
    _FLOAT_BITS,
    _OFS_NULL_BITMAP,
    _OFS_NUM_KEYS,
    Key,
    V1Dictionary,
    V2Block,
    V2Head,
    _index_block,
    block_size,
    read_v1_dictionary,
    read_v2_block,
    read_v2_head,
)
from paimon_schema.layouts.paimon_common import KeyCodec, KeyKind
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError
from paimon_schema.values.results import FileIndexReader, IndexResult, plural
from paimon_schema.values.types import DataType


def _java_key(kind: KeyKind, raw: Key) -> Key:
    """A stored key as Java's reader compares it: `readBoolean` takes any non-zero byte as true,
    and Float/Double equality (`floatToIntBits`) makes every NaN the one canonical NaN."""
    if kind == KeyKind.boolean:
        return int(raw != 0)
    if kind in _FLOAT_BITS and isinstance(raw, int):
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

    def __repr__(self) -> str:
        nulls = ", with nulls" if self._has_null else ""
        return (f"<BitmapIndexReader V{self.version} {self.codec.data_type}: "
                f"{plural(self.num_rows, 'row')}, {plural(self._num_keys, 'key')}{nulls}>")

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
    size: int                   # its byte length (`block_ref.len_block`)
    entries: V2Block
    orders: list[Any]           # Java's comparator order of each entry's key (all ints or all bytes)


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
            entry = _index_block(self._data, self._generated, block.start, block.size).entries[j]
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

    def _orders(self, raw: list[Key]) -> list[Any]:
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
        start, size = self._head.ofs_index_blocks + self._head.block_offsets[i], block_size(self._head, i)
        entries = read_v2_block(self._data, self.codec.kind, start, size, path)
        self.stats.blocks_loaded += 1
        block = _Block(start, size, entries, self._orders(entries.keys))
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
            return sum(map(self.codec.size, keys_)) + tail * len(keys_)
        return (self.codec.size(0) + tail) * len(keys_)
