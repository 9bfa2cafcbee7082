"""The bitmap global index file's framing (formats/bitmap_global_index.ksy): footer, varints,
compressible blocks and their trailers, read with `struct` and one regular expression per key
width, declining whatever the generated parser would reject; and the generated parser's located
`FormatError` for what was declined."""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from operator import itemgetter
from typing import Any, BinaryIO

from paimon_schema.runtime import varlen
from paimon_schema.runtime.crc import crc32
from paimon_schema.generated.bitmap_global_index import BitmapGlobalIndex
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError

FOOTER = struct.Struct(">qiqiqiiiI")
MAGIC = 0x42474958
SERIALIZED_KEY_ORDER = 1
LOGICAL_KEY_ORDER = 2
VERSIONS = (SERIALIZED_KEY_ORDER, LOGICAL_KEY_ORDER)
TRAILER = 5                          # compression type + CRC-32
COMPRESSION_NONE = 0

Source = bytes | bytearray | memoryview | BinaryIO


def has_signature(data: bytes | memoryview) -> bool:
    """Whether `data` ends with the footer's magic "BGIX" (and holds a whole footer)."""
    return len(data) >= FOOTER.size and bytes(data[-4:]) == MAGIC.to_bytes(4, "big")


@dataclass(frozen=True)
class Footer:
    """The footer's fields, named as in the spec."""

    ofs_null_rows: int
    len_null_rows: int
    ofs_non_null_rows: int
    len_non_null_rows: int
    ofs_index_block: int
    len_index_block: int
    num_values: int
    version: int


@dataclass(frozen=True)
class Block:
    """One decoded index or dictionary block: its keys in file order and, per entry, the bytes
    of key, offset varint and length varint (decoded when asked: a lookup needs one of each)."""

    keys: list[bytes]
    entries: list[tuple[bytes, bytes, bytes]]

    def offset(self, j: int) -> int:
        return varlen.read(self.entries[j][1], 0)[0]

    def length(self, j: int) -> int:
        return varlen.read(self.entries[j][2], 0)[0]

    def reordered(self, order: list[int]) -> Block:
        return Block([self.keys[i] for i in order], [self.entries[i] for i in order])


class Reads:
    """Random access to the file's bytes, counting what is read."""

    def __init__(self, source: Source) -> None:
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._view: memoryview | None = memoryview(source).cast("B")
            self._file: BinaryIO | None = None
            self.size = len(self._view)
        else:
            self._view, self._file = None, source
            self.size = source.seek(0, 2)
        self.bytes_read = 0

    def read(self, offset: int, length: int) -> bytes | memoryview | None:
        """`length` bytes at `offset`, or None when they are not all inside the file."""
        if offset < 0 or length < 0 or offset + length > self.size:
            return None
        self.bytes_read += length
        if self._view is not None:
            return self._view[offset:offset + length]
        assert self._file is not None
        self._file.seek(offset)
        data = self._file.read(length)
        return data if len(data) == length else None

    def whole(self) -> bytes:
        data = self.read(0, self.size)
        assert data is not None
        return bytes(data)


def read_footer(reads: Reads) -> Footer:
    if reads.size < FOOTER.size:
        raise FormatError(f"{reads.size} bytes: shorter than the {FOOTER.size}-byte footer",
                          offset=0, path="footer")
    data = reads.read(reads.size - FOOTER.size, FOOTER.size)
    assert data is not None
    fields = FOOTER.unpack(data)
    if fields[8] != MAGIC or fields[7] not in VERSIONS or min(fields[:7]) < 0:
        locate(reads, lambda root: parsing.read_lazily(root, "footer"))
        raise unlocated("footer", reads.size - FOOTER.size)
    return Footer(*fields[:8])


def read_block(reads: Reads, offset: int, length: int) -> Block | None:
    """A block as the spec reads it, or None where the generated parser would fail."""
    data = reads.read(offset, length + TRAILER)
    if data is None:
        return None
    buf = bytes(data)
    if buf[length] != COMPRESSION_NONE or int.from_bytes(buf[length + 1:], "little") != crc32(buf[:length + 1]):
        return None
    try:
        count, at = varlen.read(buf, 0, 5)
    except (IndexError, ValueError):
        return None
    if count > 0x7FFFFFFF or at > length:
        return None
    return _uniform_entries(buf, at, length, count) or _entries(buf, at, length, count)


_VAR_INT = rb"(?:[\x80-\xff]{0,3}[\x00-\x7f]|[\x80-\xff]{4}[\x00-\x07])"    # var_len_int
_VAR_LONG = rb"[\x80-\xff]{0,8}[\x00-\x7f]"                                 # var_len_long


@cache
def _entry_pattern(width: int) -> re.Pattern[bytes]:
    """One entry whose key is `width` (< 128) bytes long: its length byte, then key, offset and
    length as groups."""
    return re.compile(re.escape(bytes((width,))) + rb"(.{%d})(%s)(%s)" % (width, _VAR_LONG, _VAR_INT),
                      re.DOTALL)


_KEY = itemgetter(0)


def _uniform_entries(buf: bytes, at: int, length: int, count: int) -> Block | None:
    """The entries of a block whose keys all have one length (every numeric column), matched by
    one regular expression; None unless they are exactly the payload's `count` entries."""
    if count == 0 or buf[at] >= 0x80:
        return None
    found = _entry_pattern(buf[at]).findall(buf, at, length)
    # disjoint matches whose sizes add up to the payload cover it: they are its entries
    if len(found) != count or sum(len(o) + len(n) for _, o, n in found) != length - at - count * (1 + buf[at]):
        return None
    return Block(list(map(_KEY, found)), found)


def _entries(buf: bytes, at: int, length: int, count: int) -> Block | None:
    """The entries of any block, one at a time."""
    keys: list[bytes] = []
    entries: list[tuple[bytes, bytes, bytes]] = []
    try:
        for _ in range(count):
            n, at = varlen.read(buf, at, 5)
            if n > 0x7FFFFFFF or at + n > length:
                return None
            key = buf[at:at + n]
            _, end = varlen.read(buf, at + n, 9)
            size, after = varlen.read(buf, end, 5)
            if size > 0x7FFFFFFF:
                return None
            keys.append(key)
            entries.append((key, buf[at + n:end], buf[end:after]))
            at = after
    except (IndexError, ValueError):
        return None
    return Block(keys, entries) if at == length else None


def locate(reads: Reads, reach: Callable[[Any], Any]) -> None:
    """Parse the whole file with the generated parser up to what `reach` asks for; the
    located FormatError of whatever is wrong propagates."""
    root = parsing.parse(BitmapGlobalIndex, reads.whole())
    reach(root)


def index_block(root: Any) -> Any:
    """The generated parser's index block payload, its entries checked to fill it
    (`check_payload_filled`)."""
    index = parsing.read_lazily(root, "index_block")
    check_payload_filled(index, "index_block")
    return index.payload


def dictionary_block(ref: Any, i: int) -> Any:
    """The generated parser's dictionary block `i` (in file order) payload, its entries checked
    to fill it."""
    prefix = f"index_block.payload.dictionary_blocks[{i}]"
    block = parsing.read_lazily(ref, "block", prefix)
    check_payload_filled(block, f"{prefix}.block")
    return block.payload


def check_payload_filled(block: Any, path: str) -> None:
    """A block's entries end exactly where its `len_payload`-byte payload ends (the trailer
    follows it): a check the spec states but Kaitai parsers do not make (not expressible for
    every target). The FormatError is at the first byte left over."""
    payload = block.payload
    used = payload._io.pos()
    if used != block.len_payload:
        raise FormatError(f"the entries end {used} bytes into a {block.len_payload}-byte payload",
                          offset=parsing.field_start(block, "payload") + used,
                          path=f"{path}.payload")


def dictionary_block_at(root: Any, offset: int) -> None:
    for i, ref in enumerate(index_block(root).dictionary_blocks):
        if ref.ofs_block.value == offset:
            dictionary_block(ref, i)


def bitmap_at(root: Any, where: str, offset: int) -> None:
    if where in ("null_rows", "non_null_rows"):
        parsing.read_lazily(root, where)
        return
    i, j = (int(part) for part in where.split("."))
    block = dictionary_block(index_block(root).dictionary_blocks[i], i)
    parsing.read_lazily(block.entries[j], "bitmap",
                        f"index_block.payload.dictionary_blocks[{i}].block.payload.entries[{j}]")


def checksum_error(reads: Reads, offset: int, length: int, path: str) -> FormatError:
    """The generated parser accepts a block the fast path declined: Kaitai does not compute
    checksums, so it is the trailer's CRC-32 (the generated codec checks it too)."""
    data = reads.read(offset, length + TRAILER)
    assert data is not None
    stored = int.from_bytes(data[length + 1:], "little")
    computed = crc32(data[:length + 1])
    if stored != computed:
        return FormatError(f"CRC-32 mismatch: stored {stored:#010x}, computed {computed:#010x}",
                           offset=offset + length + 1, path=f"{path}.checksum")
    return unlocated(path, offset)


def unlocated(what: str, offset: int) -> FormatError:
    """The fast path declined bytes the generated parser accepts: a disagreement to report."""
    return FormatError(f"malformed {what}", offset=offset, path=what.replace(" ", "_"))
