"""Queries over one btree global index file: equal / in / ranges / is-null / prefix -> row ids.

Opening reads the footer and the index block (one entry per data block, keyed by its last
key); a point lookup then reads the one data block whose last key is the first at or above
the literal, and a range the blocks it spans, as Java's `BTreeIndexReader` does. Keys are
compared in the column type's order (`keys.BTreeKeys`), found by binary search inside a
block; the row ids of a run of entries are decoded in bulk (`sst.decode_row_ids`). Results
are `BitMap64`s of row ids relative to the file's row range.

A point lookup parses only what it touches: the index block's entries are searched in place
(all parsed and checked once a range, `entries` or `blocks` needs them), and with the C
extension both searches and the row-id decoding run in place too (`sst.find_handle`,
`sst.find_row_ids`), and a data block not yet read is checked and searched in one call
(`sst.lookup_block`: no block object; the cache keeps its checked bytes until a range needs
the block); a reader opened per lookup costs one open, two reads (the file's tail, with the
footer and the index block; one data block) and two CRCs. Opened from a path, two compiled
calls do the rest (`sst.open_tail`: the footer and index block checked in the tail;
`sst.fetch_row_ids`: the index searched, the data block read, checked and searched), and the
footer and index block objects are built only when something else needs them; whatever the
kernels do not check, the Python path reads and locates.
"""

from __future__ import annotations

import array
import struct
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from pyroaring import BitMap64

from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.bitmap_index.javaorder import binary_string_hash
from paimon_schema.layouts.btree_global_index import sst
from paimon_schema.layouts.btree_global_index.bloom import bloom_test
from paimon_schema.layouts.btree_global_index.keys import BTreeKeys, btree_keys
from paimon_schema.layouts.btree_global_index.sst import (
    _PREAD, FOOTER_SIZE, SHORT_VALUE, TRAILER_SIZE, Block, Footer, Source, decode_row_ids, fetch_row_ids, find_handle,
    find_row_ids, lookup_block, open_tail, parse_block, parse_handle, read_block, read_footer, row_ids_of, search)
from paimon_schema.runtime.crc import crc32
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import DataType

_U4 = struct.Struct("<I")
_U8 = struct.Struct("<Q")
DEFAULT_CACHE_SIZE = 128 << 20      # btree-index.cache-size
_MAX_BUCKETS = 0x7FFFFFFF           # of a 64-bit bitmap (deletion_vectors.ksy `bitmap64`)


#: `_kernels.btree_tail`'s reading of a file's last bytes: (the footer's fields, where the index
#: block starts in them, its entry count, its entries' length, its aligned entry size)
TailReading = tuple[tuple[int, ...], int, int, int, int]
#: the index block as `sst.fetch_row_ids` takes it (`BTreeGlobalIndexReader._index_table`)
IndexTable = tuple[bytes | memoryview, int, int, int, int, int]


@dataclass(frozen=True)
class DataBlockHandle:
    """Index entry `i`: data block `offset`, `size` (stored, without trailer), its last key."""

    offset: int
    size: int
    last_key: bytes


class BTreeGlobalIndexReader:
    """One btree global index file of a column of type `data_type`, read on demand."""

    __slots__ = ("source", "cache_size", "_cache", "_cached_bytes", "keys", "verify_checksum", "_footer",
                 "_index_block", "_all", "_bloom", "_has_bloom", "_blocks_end", "_pending")   # cheaper to build

    def __init__(self, source: Source, keys: BTreeKeys, *, verify_checksum: bool = True,
                 cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self.source = source
        self.cache_size = cache_size
        # insertion order = least recently used first; a block's checked stored bytes until parsed
        self._cache: dict[int, Block | memoryview] = {}
        self._cached_bytes = 0
        self.keys = keys
        self.verify_checksum = verify_checksum
        self._footer: Footer | None = (f := read_footer(source))
        self._index_block: Block | None = parse_block(
            memoryview(source.read(f.ofs_index_block, f.len_index_block + TRAILER_SIZE)), f.ofs_index_block,
            f.len_index_block, "index_block", is_index=True, verify_checksum=verify_checksum)    # `read_block`
        # what `_kernels.btree_tail` read of the file's last bytes, until `footer` and `_index` are built
        self._pending: TailReading | None = None
        self._all: tuple[list[DataBlockHandle], list[Any]] | None = None    # `_index_entries`
        self._bloom: bytes | None = None
        self._has_bloom = f.has_bloom_filter
        # data blocks end before both: a handle ending past either is checked (`_check_located`)
        self._blocks_end = min(f.ofs_index_block, source.size - FOOTER_SIZE)

    @classmethod
    def open(cls, data: bytes | bytearray | memoryview | IO[bytes] | str | Path, data_type: str | DataType,
             *, verify_checksum: bool = True, cache_size: int = DEFAULT_CACHE_SIZE,
             size: int | None = None) -> BTreeGlobalIndexReader:
        """A reader over the file's bytes, a seekable binary file or a path; FormatError on bad
        bytes, SchemaError for a type Java's btree index does not support. The data blocks
        read last are kept up to `cache_size` bytes (Java's `btree-index.cache-size`, 128 MiB;
        0: every lookup reads and checks its block again). `size`: the file's size where the
        caller knows it (the index manifest's `_FILE_SIZE`, as Java's reader takes it)."""
        keys = btree_keys(data_type)
        if _PREAD and isinstance(data, (str, Path)):
            source, found = open_tail(data, size, verify_checksum)
            try:
                if found is not None:
                    return cls._checked(source, keys, found, verify_checksum, cache_size)
                return cls(source, keys, verify_checksum=verify_checksum, cache_size=cache_size)
            except BaseException:
                source.close()
                raise
        return cls(Source(data, size), keys, verify_checksum=verify_checksum, cache_size=cache_size)

    @classmethod
    def _checked(cls, source: Source, keys: BTreeKeys, found: TailReading, verify_checksum: bool,
                 cache_size: int) -> BTreeGlobalIndexReader:
        """`__init__` over a footer and index block the kernels checked (`sst.open_tail`): their
        objects are built when something other than a first point lookup needs them."""
        fields = found[0]
        reader = cls.__new__(cls)
        reader.source = source
        reader.cache_size = cache_size
        reader._cache = {}
        reader._cached_bytes = 0
        reader.keys = keys
        reader.verify_checksum = verify_checksum
        reader._footer = reader._index_block = reader._all = reader._bloom = None
        reader._has_bloom = bool(fields[0] or fields[1] or fields[2])     # `Footer.has_bloom_filter`
        reader._blocks_end = fields[3]      # the index block lies before the footer
        reader._pending = found
        return reader

    @property
    def footer(self) -> Footer:
        """The file's footer (checked when the reader was opened)."""
        footer = self._footer
        if footer is None:
            assert self._pending is not None
            footer = self._footer = tuple.__new__(Footer, self._pending[0])
        return footer

    @property
    def _index(self) -> Block:
        """The index block (checked when the reader was opened)."""
        index = self._index_block
        if index is None:
            assert self._pending is not None and self.source._tail is not None
            fields, start, count, len_entries, aligned = self._pending
            index = self._index_block = Block(self.source._tail[start:start + fields[4]], count, len_entries,
                                              aligned, fields[3], "index_block.contents", True, True)
        return index

    def _index_table(self) -> IndexTable:
        """The index block as the kernels search it, without building its object where it is
        not built: (buffer, where the block starts in it, its length, its entries' length, its
        entry count, its aligned entry size)."""
        pending = self._pending
        if pending is not None and self._index_block is None:
            fields, start, count, len_entries, aligned = pending
            return self.source._tail or b"", start, fields[4], len_entries, count, aligned
        index = self._index
        return index.data, 0, len(index.data), index.len_entries, index.count, index.aligned_size

    @property
    def blocks(self) -> list[DataBlockHandle]:
        """Every data block's handle, in key order (the whole index block parsed and checked)."""
        return self._index_entries()[0]

    def _index_entries(self) -> tuple[list[DataBlockHandle], list[Any]]:
        """(handles, last-key orders) of every index entry, checked to ascend: parsed on first
        use (by a range, `entries` or `blocks`); a point lookup parses only the entries its
        binary search over the index block touches."""
        if self._all is None:
            self._index.value_spans(0, len(self._index))      # entries back to back, filling the block
            blocks: list[DataBlockHandle] = []
            orders: list[Any] = []
            for i in range(len(self._index)):
                handle, order = self._index_entry(i, orders[-1] if orders else None)
                blocks.append(handle)
                orders.append(order)
            self._all = (blocks, orders)
        return self._all

    def _index_entry(self, i: int, previous: Any = None) -> tuple[DataBlockHandle, Any]:
        """Index entry `i`: its data block's handle and the order of its key (the block's last
        key; above `previous`, the entry before's, when given)."""
        key, offset, size = self._handle(i)
        index = self._index
        start = index.start(i)
        order = self.keys.order_of_key(bytes(key), f"{index.path}.entries[{i}].key", index.file_offset + start)
        if previous is not None and order <= previous:
            raise index.error("index keys must ascend (each is its data block's last key)",
                              start, f"{index.path}.entries[{i}].key")
        return DataBlockHandle(offset, size, bytes(key)), order

    def _handle(self, i: int) -> tuple[bytes | memoryview, int, int]:
        """(key, offset, stored size) of index entry `i`, its data block checked."""
        key, offset, size = parse_handle(self._index, i)
        self._check_handle(i, offset, size)
        return key, offset, size

    def _check_handle(self, i: int, offset: int, size: int) -> None:
        """Data block `i` (`size` stored bytes at `offset`) must lie before the footer and
        outside the index block."""
        index, f = self._index, self.footer
        if offset + size + TRAILER_SIZE > f.ofs_index_block and offset < f.ofs_index_block + f.len_index_block:
            raise index.error(f"data block {i} ({size} bytes at {offset}) overlaps the index block",
                              index.start(i), f"{index.path}.entries[{i}].value")
        if offset + size + TRAILER_SIZE > self.source.size - FOOTER_SIZE:
            raise index.error(f"data block {i} ({size} bytes at {offset}) runs past the footer",
                              index.start(i), f"{index.path}.entries[{i}].value")

    # -- queries

    def equal(self, value: object) -> BitMap64:
        """Rows whose key equals `value` (None: no row, as SQL's `= NULL`)."""
        if value is None:
            return BitMap64()
        keys = self.keys
        internal = keys.internal(value)
        ids = self._lookup(internal, keys.order_internal(internal))
        if type(ids) is list:       # `_bitmap`, one call less
            bitmap = BitMap64()
            bitmap.update(ids)
            return bitmap
        return _bitmap(ids)

    def isin(self, values: Iterable[object]) -> BitMap64:
        """Rows whose key is one of `values` (None among them matches nothing)."""
        result = BitMap64()
        internals = [self.keys.internal(v) for v in values if v is not None]
        found = {(self.keys.order_internal(v), self.keys.encode_internal(v)): v for v in internals}
        for (order, _), internal in sorted(found.items(), key=lambda item: item[0]):
            result |= _bitmap(self._lookup(internal, order))
        return result

    def less_than(self, value: object) -> BitMap64:
        return self._range(None, True, self._order(value), False)

    def less_or_equal(self, value: object) -> BitMap64:
        return self._range(None, True, self._order(value), True)

    def greater_than(self, value: object) -> BitMap64:
        return self._range(self._order(value), False, None, True)

    def greater_or_equal(self, value: object) -> BitMap64:
        return self._range(self._order(value), True, None, True)

    def between(self, low: object, high: object) -> BitMap64:
        """Rows with `low <= key <= high` (SQL BETWEEN)."""
        return self._range(self._order(low), True, self._order(high), True)

    def is_not_null(self) -> BitMap64:
        return self._range(None, True, None, True)

    def is_null(self) -> BitMap64:
        """Rows whose key is null (the null bitmap, read on first use)."""
        f = self.footer
        if not f.has_null_bitmap:
            return BitMap64()
        raw = bytes(self.source.read(f.ofs_null_bitmap, f.len_null_bitmap + 4))
        return read_null_bitmap(raw, f.ofs_null_bitmap, verify_checksum=self.verify_checksum)

    def starts_with(self, prefix: str) -> BitMap64:
        """Rows whose string key starts with `prefix` (UTF-8 bytes), exactly."""
        if not self.keys.data_type.is_string:
            raise SchemaError(f"starts_with needs a string column, not {self.keys.data_type}")
        low = self.keys.encode(prefix)
        high = _prefix_end(low)
        return self._range(low, True, high, False) if high is not None else self._range(low, True, None, True)

    def entries(self) -> Iterator[tuple[bytes, np.ndarray]]:
        """Every (key bytes, row ids) in key order, every block checked: what `verify` reads."""
        previous = None
        blocks, last_orders = self._index_entries()
        for b in range(len(blocks)):
            block = self._data_block(b)
            value_starts, value_ends = block.value_spans(0, len(block))
            for i in range(len(block)):
                key = bytes(block.key(i))
                where = f"{block.path}.entries[{i}].key"
                order = self.keys.order_of_key(key, where, block.file_offset + block.start(i))
                if previous is not None and order <= previous:
                    raise block.error("keys must ascend", block.start(i), where)
                previous = order
                yield key, decode_row_ids(block.data, value_starts[i:i + 1], value_ends[i:i + 1], block, [i])
            if previous != last_orders[b]:
                raise FormatError(f"data block {b} does not end with the key its index entry names",
                                  offset=self.footer.ofs_index_block, path=f"{self._index.path}.entries[{b}].key")

    # -- the walk

    def _order(self, value: object) -> Any:
        if value is None:
            raise SchemaError("a range bound cannot be NULL")
        return self.keys.order(value)

    def _data_block(self, b: int, handle: tuple[int, int, int] | None = None) -> Block:
        """Data block `b`, from the cache of the blocks read last (Java's `BlockCache`): a
        block is read and checked once, however many lookups land in it. `handle`: (b,
        offset, stored size) as the index block holds them, when the caller found them."""
        cached = self._cache.pop(b, None)
        if isinstance(cached, Block):
            cached.hits += 1
            block = cached
        else:       # not read yet, or read and checked by a compiled lookup (`_lookup`): parsed now
            if self._all is not None:
                offset, size = self._all[0][b].offset, self._all[0][b].size
            elif handle is not None:
                _, offset, size = handle
                self._check_located(b, offset, size)
            else:
                _, offset, size = self._handle(b)
            if cached is None:
                block = read_block(self.source, offset, size, f"data_blocks[{b}].block",
                                   verify_checksum=self.verify_checksum)
                self._cached_bytes += len(block.data)
            else:
                block = parse_block(cached, offset, size, f"data_blocks[{b}].block", verify_checksum=False)
        self._keep(b, block)
        return block

    def _check_located(self, b: int, offset: int, size: int) -> None:
        """Data block `b`'s handle (`offset`, stored `size`), as the compiled index search found
        it, checked as `_handle` checks it (it is already known to lie before the index block
        when it ends there)."""
        if offset + size + TRAILER_SIZE > self._blocks_end:
            self._check_handle(b, offset, size)

    def _keep(self, b: int, block: Block | memoryview) -> None:
        """Block `b` (or its checked stored bytes) cached as the one used last, the cache
        trimmed to `cache_size` bytes (stored bytes count as the block they hold)."""
        cache = self._cache
        cache[b] = block
        while self._cached_bytes > self.cache_size and cache:
            oldest = cache.pop(next(iter(cache)))
            self._cached_bytes -= len(oldest.data) if isinstance(oldest, Block) else len(oldest) - TRAILER_SIZE

    def _key_order(self, block: Block, i: int) -> Any:
        """The order of entry `i`'s key; a key that is none of the type is located."""
        key = block.key(i)
        width = self.keys.width
        if width is None or len(key) == width:
            try:
                return self.keys.order_bytes(key)
            except (ValueError, IndexError, struct.error, TypeError):
                pass
        return self.keys.order_of_key(bytes(key), f"{block.path}.entries[{i}].key", block.file_offset + block.start(i))

    def _first_at_or_above(self, block: Block, order: Any, inclusive: bool) -> int:
        """Index of the block's first entry `>= order` (`> order` when not inclusive): a binary
        search, over the block's key orders when a cached block has them in one array."""
        if block.orders is None and block.hits and self.keys.bulk_order is not None:   # a cached block
            rows = block.fixed_keys(self.keys.width or 0)
            if rows is not None:
                orders = self.keys.bulk_order(rows)
                block.orders = orders if bool((np.diff(orders) > 0).all()) else None   # else: located below
        if block.orders is not None:
            return int(np.searchsorted(block.orders, order, side="left" if inclusive else "right"))
        found = search(block, self.keys.search_kind, self.keys.width, order, inclusive)
        if found is not None:
            return found
        lo, hi = 0, len(block)
        while lo < hi:
            mid = (lo + hi) // 2
            key = self._key_order(block, mid)
            if key < order or (not inclusive and key == order):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _lookup(self, internal: Any, order: Any) -> list[int] | np.ndarray:
        """Row ids of one exact key (`internal`, whose order is `order`): the bloom filter (if
        any), then one data block."""
        keys = self.keys
        if self._has_bloom and not bloom_test(self._bloom_filter(), self.footer.num_expected_entries,
                                              binary_string_hash(keys.encode_internal(internal))):
            return []
        handle = None
        if self._all is not None:
            b = bisect_left(self._all[1], order)
            if b == len(self._all[1]):
                return []
        elif not self._cache and (found := fetch_row_ids(self.source, self._index_table(), keys.search_kind,
                                                         keys.width, order, self.verify_checksum,
                                                         self._blocks_end)) is not None:
            # a reader's first lookup, from a path: the index searched (in the file's kept last
            # bytes, as the kernels checked it at opening, where they did), the data block read,
            # checked and searched in one compiled call, where it answers
            if isinstance(found, list):
                return found
            b, offset, size, stored, ids = found
            self.source.bytes_read += size + TRAILER_SIZE
            return self._checked_block(b, offset, size, memoryview(stored), ids, order)
        else:       # a binary search over the index block's keys
            index = self._index
            handle = find_handle(index, keys.search_kind, keys.width, order)
            b = handle[0] if handle is not None else self._first_at_or_above(index, order, True)
            if b == index.count:
                return []
        if handle is not None:      # the whole data block step in one compiled call, where it answers
            raw = self._cache.get(b)
            if raw is None:
                _, offset, size = handle
                if offset + size + TRAILER_SIZE > self._blocks_end:
                    self._check_handle(b, offset, size)
                raw = memoryview(self.source.read(offset, size + TRAILER_SIZE))
                # `sst.lookup_block` without its checks: `find_handle` answered, so the kernels can
                found = sst._kernels.lookup_block(raw, size, crc32(raw[:size + 1]) if self.verify_checksum else -1,
                                                  keys.search_kind or 0, keys.width or 0, order, SHORT_VALUE)
                return self._checked_block(b, offset, size, raw, found, order)
            elif not isinstance(raw, Block):
                found = lookup_block(raw, len(raw) - TRAILER_SIZE, -1, keys.search_kind, keys.width, order)
                if found is not None:
                    self._keep(b, self._cache.pop(b))
                    return found
                block = self._data_block(b, handle)
            else:
                block = self._data_block(b, handle)
        else:
            block = self._data_block(b, handle)
        return self._block_lookup(block, order)

    def _checked_block(self, b: int, offset: int, size: int, raw: memoryview, found: list[int] | None,
                       order: Any) -> list[int] | np.ndarray:
        """Data block `b` (`size` stored bytes at `offset`, read as `raw` with its trailer) as a
        compiled lookup left it: its row ids `found` (the block checked: its bytes cached), or
        None (parsed, checked and searched step by step, locating any error)."""
        if found is not None:
            if self.cache_size:
                self._cached_bytes += size
                self._cache[b] = raw
                if self._cached_bytes > self.cache_size:
                    self._keep(b, raw)      # trims the cache
            return found
        block = parse_block(raw, offset, size, f"data_blocks[{b}].block", verify_checksum=self.verify_checksum)
        self._cached_bytes += len(block.data)
        self._keep(b, block)
        return self._block_lookup(block, order)

    def _block_lookup(self, block: Block, order: Any) -> list[int] | np.ndarray:
        """Row ids of the key whose order is `order` in a data block ([]: none)."""
        keys = self.keys
        if block.orders is None:
            found = find_row_ids(block, keys.search_kind, keys.width, order)
            if found is not None:
                return found
        i = self._first_at_or_above(block, order, True)
        if i == len(block) or (block.orders[i] if block.orders is not None else self._key_order(block, i)) != order:
            return []
        _, start, end = block.entry(i)
        if end - start <= SHORT_VALUE:
            return row_ids_of(block.data, start, end, block, i)
        return decode_row_ids(block.data, np.array([start]), np.array([end]), block, [i])

    def _range(self, low: Any, low_inclusive: bool, high: Any, high_inclusive: bool) -> BitMap64:
        parts: list[np.ndarray] = []
        blocks, last_orders = self._index_entries()
        b = 0 if low is None else bisect_left(last_orders, low)
        while b < len(blocks):
            block = self._data_block(b)
            first = 0 if low is None else self._first_at_or_above(block, low, low_inclusive)
            last_order = last_orders[b]
            done = high is not None and (last_order > high or (not high_inclusive and last_order == high))
            stop = self._first_at_or_above(block, high, not high_inclusive) if done else len(block)
            if first < stop:
                parts.append(self._row_ids(block, first, stop))
            if done:
                break
            low = None
            b += 1
        return _bitmap(np.concatenate(parts) if parts else np.zeros(0, np.uint64))

    def _row_ids(self, block: Block, first: int, stop: int) -> np.ndarray:
        """Row ids of entries `first` .. `stop - 1` of a block."""
        starts, ends = block.value_spans(first, stop)
        return decode_row_ids(block.data, starts, ends, block, range(first, stop))

    def _bloom_filter(self) -> bytes:
        if self._bloom is None:
            f = self.footer
            self._bloom = bytes(self.source.read(f.ofs_bloom_filter, f.len_bloom_filter))
        return self._bloom

    def close(self) -> None:
        """Close the file opened from a path; the reader must not be used afterwards."""
        self.source.close()
        self._cache.clear()

    def __enter__(self) -> BTreeGlobalIndexReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.source.close()         # `close`, one call less for a reader opened per lookup
        self._cache.clear()

    def __repr__(self) -> str:
        f = self.footer
        return (f"<BTreeGlobalIndexReader {self.keys.data_type}: {len(self._index)} data blocks, "
                f"null bitmap {'yes' if f.has_null_bitmap else 'no'}, "
                f"bloom filter {'yes' if f.has_bloom_filter else 'no'}>")


def read_null_bitmap(raw: bytes, base: int, *, verify_checksum: bool = True) -> BitMap64:
    """The null bitmap and its CRC32 (`raw`: the bitmap bytes and 4), read at file offset `base`."""
    n = len(raw) - 4
    stored = _U4.unpack_from(raw, n)[0]
    if verify_checksum and crc32(raw[:n]) != stored:
        raise FormatError(f"null bitmap CRC32 mismatch: stored 0x{stored:08x}, computed 0x{crc32(raw[:n]):08x}",
                          offset=base + n, path="null_bitmap.checksum")
    view = memoryview(raw)[:n]
    if n < 8:
        raise FormatError("unexpected end of data: a 64-bit bitmap starts with an 8-byte bucket count",
                          offset=base, path="null_bitmap.bitmap.num_buckets")
    count = _U8.unpack_from(view, 0)[0]
    if count > _MAX_BUCKETS:     # deletion_vectors::bitmap64's limits, which the spec's null bitmap is
        raise FormatError(f"{count} buckets: at most {_MAX_BUCKETS}", offset=base,
                          path="null_bitmap.bitmap.num_buckets")
    pos, previous = 8, -1
    for i in range(count):
        where = f"null_bitmap.bitmap.buckets[{i}]"
        if pos + 4 > n:
            raise FormatError("unexpected end of data in a bucket key", offset=base + pos, path=f"{where}.key")
        key = _U4.unpack_from(view, pos)[0]
        if key <= previous or key > _MAX_BUCKETS - 1:
            raise FormatError("bucket keys must ascend, up to 2^31-2", offset=base + pos, path=f"{where}.key")
        previous = key
        try:
            pos += 4 + roaring.serialized_size(view, pos + 4)
        except FormatError as exc:
            raise exc.within(f"{where}.bitmap", base) from exc
    if pos != n:
        raise FormatError(f"{n - pos} bytes follow the null bitmap's last bucket", offset=base + pos,
                          path="null_bitmap.bitmap.trailing")
    try:
        return roaring.deserialize64(view)
    except FormatError as exc:
        raise exc.within("null_bitmap.bitmap", base) from exc


def _bitmap(ids: list[int] | np.ndarray) -> BitMap64:
    if isinstance(ids, list):
        bitmap = BitMap64()
        bitmap.update(ids)      # a fifth cheaper than BitMap64(ids) for a few ids
        return bitmap
    return BitMap64(array.array("Q", ids.astype(np.uint64, copy=False).tobytes()))


def _prefix_end(prefix: bytes) -> bytes | None:
    """The least byte string above every string starting with `prefix` (None: no bound)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])
