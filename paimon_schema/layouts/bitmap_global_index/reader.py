"""The lazy reader of one bitmap global index file: equal / in / is-null / is-not-null as
`BitMap64`s of row ids, reading the footer, the index block, one dictionary block per key and
its bitmap, as Java's `BitmapIndexReader` does."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pyroaring import BitMap64

from paimon_schema.generated.bitmap_global_index import BitmapGlobalIndex
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.bitmap_global_index.blocks import (FOOTER, LOGICAL_KEY_ORDER, SERIALIZED_KEY_ORDER,
                                                              Block, Footer, Reads, Source, bitmap_at,
                                                              checksum_error, dictionary_block_at, index_block, locate,
                                                              read_block, read_footer, unlocated)
from paimon_schema.layouts.bitmap_global_index.keys import GlobalKeys
from paimon_schema.layouts.deletion_vectors import scan_bitmap64
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import DataType


@dataclass
class BitmapGlobalIndexReader:
    """One bitmap global index file, read lazily; every answer is a fresh `BitMap64`."""

    key_codec: GlobalKeys | None          # None: structure only (dump, verify), no lookups
    footer: Footer
    _reads: Reads
    _blocks: Block | None = None
    _first_orders: list[Any] | None = None
    _dictionaries: dict[int, Block] = field(default_factory=dict)
    _orders: dict[int, list[Any]] = field(default_factory=dict)     # typed keys of version-2 blocks

    @classmethod
    def open(cls, source: Source, data_type: str | DataType | None) -> BitmapGlobalIndexReader:
        """Read the footer of `source` (bytes, or a seekable binary file); without the
        column's data type only the structure can be read (`entries`, `verify`)."""
        reads = Reads(source)
        return cls(None if data_type is None else GlobalKeys.of(data_type), read_footer(reads), reads)

    @property
    def keys(self) -> GlobalKeys:
        if self.key_codec is None:
            raise SchemaError("a bitmap global index lookup needs the column's data type")
        return self.key_codec

    @property
    def version(self) -> int:
        return self.footer.version

    @property
    def bytes_read(self) -> int:
        """Bytes read from the source so far (footer, blocks and bitmaps)."""
        return self._reads.bytes_read

    def is_null(self) -> BitMap64:
        f = self.footer
        return self._bitmap(f.ofs_null_rows, f.len_null_rows, "null_rows")

    def is_not_null(self) -> BitMap64:
        f = self.footer
        return self._bitmap(f.ofs_non_null_rows, f.len_non_null_rows, "non_null_rows")

    def equal(self, value: object) -> BitMap64:
        """Rows whose value equals `value`; None matches nothing (SQL `= NULL`), as in Java."""
        if value is None:
            return BitMap64()
        found = self._find(self.keys.encode(value))
        return BitMap64() if found is None else self._bitmap(*found)

    def in_(self, values: Iterable[object]) -> BitMap64:
        """Rows whose value is one of `values` (None entries match nothing)."""
        result = BitMap64()
        for key in dict.fromkeys(self.keys.encode(v) for v in values if v is not None):
            found = self._find(key)
            if found is not None:
                result |= self._bitmap(*found)
        return result

    def entries(self) -> Iterator[tuple[bytes, BitMap64]]:
        """Every (key bytes, rows) in file order: for dumps and checks, not for lookups."""
        blocks = self._index()
        for i in range(len(blocks.keys)):
            block = self._dictionary(i)
            for j, key in enumerate(block.keys):
                yield key, self._bitmap(block.offset(j), block.length(j), f"{i}.{j}")

    def verify(self) -> int:
        """Read every block and bitmap (FormatError on the first bad byte); the number of keys."""
        self.is_null()
        self.is_not_null()
        count = sum(1 for _ in self.entries())
        if count != self.footer.num_values:
            raise FormatError(f"footer counts {self.footer.num_values} keys, the dictionary {count}",
                              offset=self._reads.size - FOOTER.size + 36, path="footer.num_values")
        return count

    def keys_ascend(self) -> bool:
        """Whether the dictionary's keys ascend in the order the footer's version declares
        (reads the index and dictionary blocks, no bitmap). pypaimon-rust 0.4.0 writes
        version 1 files in typed order; lookups in them miss keys (as Java's do), so a reader
        that must not miss rows checks this first."""
        logical = self.version == LOGICAL_KEY_ORDER
        previous: Any = None
        blocks = self._index()
        for i in range(len(blocks.keys)):
            for key in self._dictionary(i).keys:
                here = self.keys.order(key) if logical else key
                if previous is not None and here <= previous:
                    return False
                previous = here
        return True

    # -- the lookup path

    def _find(self, key: bytes) -> tuple[int, int, str] | None:
        blocks = self._index()
        if not blocks.keys:
            return None
        logical = self.version == LOGICAL_KEY_ORDER
        if logical:
            if self._first_orders is None:
                self._first_orders = [self.keys.order(k) for k in blocks.keys]
            target: Any = self.keys.order(key)
            i = bisect.bisect_right(self._first_orders, target) - 1
        else:
            target = key
            i = bisect.bisect_right(blocks.keys, key) - 1
        if i < 0:
            return None
        block = self._dictionary(i)
        entries: list[Any] = block.keys
        if logical:
            entries = self._orders.get(i) or self._orders.setdefault(i, [self.keys.order(k) for k in block.keys])
        # Java scans the block to the first key not below the target: the same answer as a
        # binary search in a sorted block, and Java's answer in one that is not
        j = next((j for j, here in enumerate(entries) if here >= target), None)
        if j is None or entries[j] != target:
            return None
        return block.offset(j), block.length(j), f"{i}.{j}"

    def _index(self) -> Block:
        if self._blocks is None:
            f = self.footer
            block = read_block(self._reads, f.ofs_index_block, f.len_index_block)
            if block is None:
                locate(self._reads, index_block)
                raise checksum_error(self._reads, f.ofs_index_block, f.len_index_block, "index_block")
            if self.version == SERIALIZED_KEY_ORDER:      # Java sorts a version-1 index block
                block = block.reordered(sorted(range(len(block.keys)), key=block.keys.__getitem__))
            self._blocks = block
        return self._blocks

    def _dictionary(self, i: int) -> Block:
        block = self._dictionaries.get(i)
        if block is None:
            blocks = self._index()
            block = read_block(self._reads, blocks.offset(i), blocks.length(i))
            if block is None:
                ofs = blocks.offset(i)
                locate(self._reads, lambda root: dictionary_block_at(root, ofs))
                raise checksum_error(self._reads, ofs, blocks.length(i),
                                      f"index_block.payload.dictionary_blocks[{self._file_index(i)}].block")
            self._dictionaries[i] = block
        return block

    def _file_index(self, i: int) -> int:
        """The file position of sorted dictionary block `i` (a version-1 index is sorted)."""
        offsets = [ref.ofs_block.value for ref in parsing.parse(BitmapGlobalIndex, self._reads.whole())
                   .index_block.payload.dictionary_blocks]
        return offsets.index(self._index().offset(i))

    def _bitmap(self, offset: int, length: int, where: str) -> BitMap64:
        data = self._reads.read(offset, length)
        if data is None or not scan_bitmap64(memoryview(data)):
            locate(self._reads, lambda root: bitmap_at(root, where, offset))
            raise unlocated("bitmap", offset)
        return roaring.deserialize64(data)
