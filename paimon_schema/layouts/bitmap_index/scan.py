"""The bitmap index's V1 dictionary and V2 head and index blocks (formats/bitmap_index.ksy),
read two ways that test_bitmap.py and test_fast_lookups.py prove equal.

The generated parser, one Python object per field, is their specification but takes seconds for
100k V1 keys and ~40 ms for one 16 KiB V2 block; `scan_v1_dictionary`, `scan_v2_head` and
`scan_v2_block` read the same bytes with `struct`/numpy (`paimon_common.scan_records`) and,
wherever the generated parser would fail, decline and let the generated parser report the
located error. `read_*` take the fast path first.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts.paimon_common import KeyKind
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError

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
        ofs_entries=parsing.field_start(index.index, "entries"), ofs_body=index.ofs_body)


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
        ofs_num_blocks=parsing.field_start(v2, "num_blocks"), ofs_index_blocks=v2.ofs_index_blocks,
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


def read_v2_block(data: bytes, kind: KeyKind, start: int, size: int, path: str = "") -> V2Block:
    """The `size`-byte index block at `start` through the fast path; the generated parser
    locates any error (under `path`)."""
    return scan_v2_block(data, kind, start, size) or parse_v2_block(data, kind, start, size, path)


def block_size(head: V2Head, i: int) -> int:
    """Byte length of index block `i` (`block_ref.len_block`): up to the next block's offset,
    the last one up to `len_index_blocks`."""
    offsets = head.block_offsets
    end = offsets[i + 1] if i + 1 < len(offsets) else head.len_index_blocks
    return end - offsets[i]


def parse_v2_block(data: bytes, kind: KeyKind, start: int, size: int, path: str = "") -> V2Block:
    """The `size`-byte index block at `start` through the generated parser, confined to its
    bytes as `block_ref.block` reads it: the reference for the fast path."""
    block = _index_block(data, BitmapIndex(kind, parsing.stream(data)), start, size, path)
    entries = block.entries
    return V2Block(keys=[keys.raw_key(e.key) for e in entries], offsets=[e.ofs_bitmap for e in entries],
                   lengths=[e.len_bitmap for e in entries], end=block._io.pos())


def _index_block(data: bytes, root: BitmapIndex, start: int, size: int,
                 path: str = "") -> BitmapIndex.IndexBlock:
    """The generated index block of `size` bytes at `start`, read as `block_ref.block` reads it:
    its bytes first (failing there as the sized instance does), then the block within them, at
    file positions. Its fields need only the root's key kind, so an unread root will do, unless
    an entry's `bitmap` is read (that needs the root's `ofs_body`)."""
    parsing.read_region(data, start, size, path)
    return parsing.parse(lambda io: BitmapIndex.IndexBlock(io, None, root),
                         memoryview(data)[:start + size], pos=start, path=path)


def scan_v2_block(data: bytes, kind: KeyKind, start: int, size: int) -> V2Block | None:
    """The `size`-byte index block at `start` via `struct`/numpy, or None exactly where the
    generated parser fails (hostile counts are sized against the block before anything is
    allocated)."""
    if size < 4 or len(data) < start + size:
        return None
    block = bytes(data[start:start + size])     # the substream the generated parser reads
    (count,) = _S4.unpack_from(block)
    entries = keys.scan_records(block, kind, 4, count, (keys.NO_MIN, -1)) if count >= 1 else None
    if entries is None:
        return None
    keys_, (offsets, lengths), end = entries
    return V2Block(keys=keys_, offsets=offsets, lengths=lengths, end=start + end)
