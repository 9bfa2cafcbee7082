"""The SST file under a btree global index (formats/btree_global_index.ksy), read on demand.

A `Source` hands out byte ranges of the file (bytes in memory, or a seekable file), so that
opening reads the footer and the index block only and a lookup one data block more. Each
block is checked as Java's `SstFileReader` checks it (trailer CRC32, compression byte, the
block's own table) and every entry as it is decoded; a problem is a `FormatError` at the
file offset, with the spec's field path (`data_blocks[2].block.contents.entries[7].value`).
Where the generated parser fails reading an uncompressed block's contents (a substream of
the block's stored size), a block the reader refuses fails exactly there
(`contents_error`); the reader's own checks (key order and width, row-id counts, handles
inside the file) locate what the generated parser reads without complaint. Row-id lists
are decoded in bulk by numpy (`decode_row_ids`).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np

from paimon_schema.runtime import varlen
from paimon_schema.generated.btree_global_index import BtreeGlobalIndex
from paimon_schema.layouts.btree_global_index.keys import KEY_BYTES
from paimon_schema.runtime.crc import crc32

try:
    from paimon_schema.runtime import _kernels
except ImportError:  # pragma: no cover - built without a C compiler: `search` declines
    _kernels = None  # type: ignore[assignment]
from paimon_schema.values.errors import FormatError

FOOTER = struct.Struct("<QIQQIQIII")
FOOTER_SIZE = FOOTER.size
MAGIC = 0x50425449
VERSION = int(BtreeGlobalIndex.FooterVersion.v1)
TRAILER_SIZE = 5
Compression = BtreeGlobalIndex.BlockCompression
ALIGNED = int(BtreeGlobalIndex.BlockAlignedType.aligned)
UNALIGNED = int(BtreeGlobalIndex.BlockAlignedType.unaligned)
_U4 = struct.Struct("<I")
_INT_MAX = 2**31 - 1
SHORT_VALUE = 64        # a value (row-id list) up to this many bytes is decoded one id at a time
TAIL = 4096             # the bytes opening reads at the file's end (`Source.read_tail`)
_PREAD = hasattr(os, "pread")


class Source:
    """Byte ranges of one file: `read(offset, length)`, counting what was read (`bytes_read`).
    A path is opened as a bare descriptor and read with one `pread` per range (where the OS
    has it). Opening reads the file's last `TAIL` bytes at once (`read_tail`): the footer and,
    in the files Java and pypaimon write, the index block (and often the null bitmap) just
    before it, which later reads of that range take without a read (a reader opened per
    lookup pays one open, one seek and two reads). `size`: the size of the file (not of bytes
    in memory) when the caller knows it, as an index manifest records it: no seek then."""

    __slots__ = ("_file", "_owned", "_view", "_fd", "_closed", "size", "bytes_read", "_tail", "_tail_at")

    def __init__(self, data: bytes | bytearray | memoryview | IO[bytes] | str | Path,
                 size: int | None = None) -> None:
        self._file: IO[bytes] | None = None
        self._owned: IO[bytes] | None = None
        self._view: memoryview | None = None
        self._fd = -1
        self._closed = False
        if isinstance(data, (str, Path)) and _PREAD:
            self._fd = os.open(data, os.O_RDONLY)
            self.size = os.lseek(self._fd, 0, os.SEEK_END) if size is None else size
        elif isinstance(data, (bytes, bytearray, memoryview)):
            self._view = memoryview(data).cast("B")
            self.size = len(self._view)
        else:
            if isinstance(data, (str, Path)):
                data = self._owned = open(data, "rb")     # noqa: SIM115 - closed by `close`
            self._file = data
            self.size = data.seek(0, 2) if size is None else size
        self.bytes_read = 0
        self._tail: memoryview | None = None     # the file's last bytes, once read
        self._tail_at = self.size                # where they start

    @property
    def closed(self) -> bool:
        """Whether the file this source opened from a path is closed (False for others)."""
        return self._closed

    def close(self) -> None:
        """Close the file this source opened from a path (not one it was handed)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self._closed = True
        if self._owned is not None:
            self._owned.close()
            self._closed = True

    def read_tail(self, length: int) -> memoryview:
        """The file's last `length` bytes (at most its size), kept for later reads inside them
        (read once: `open_tail` may have read them)."""
        length = min(length, self.size)
        if self._tail is not None and len(self._tail) == length:
            return self._tail
        if self._fd >= 0:       # `read`, one call less for a reader opened per lookup
            self.bytes_read += length
            tail = self._tail = memoryview(os.pread(self._fd, length, self.size - length))
        else:
            tail = self._tail = memoryview(self.read(self.size - length, length))
        self._tail_at = self.size - len(tail)
        return tail

    def read(self, offset: int, length: int) -> bytes | memoryview:
        at = offset - self._tail_at
        if at >= 0 and self._tail is not None:
            return self._tail[at:at + length]
        self.bytes_read += length
        if self._view is not None:
            return self._view[offset:offset + length]
        if self._fd >= 0:
            return os.pread(self._fd, length, offset)
        if self._file is None:
            raise ValueError("read from a closed btree index file")
        self._file.seek(offset)
        return self._file.read(length)


def open_tail(path: str | Path, size: int | None, verify_checksum: bool) -> tuple[Source, Any]:
    """A `Source` over the file at `path` with its last `TAIL` bytes read (`Source.read_tail`,
    one `pread`), and the kernels' reading of them: `_kernels.btree_tail`'s (the footer and the
    index block checked, `verify_checksum`: its CRC32 too), or None where it declines or the
    kernels are not built (`read_footer` and `parse_block` then read the kept bytes, locating
    any error). A reader opened per point lookup: one open, one read, one call."""
    fd = os.open(path, os.O_RDONLY)
    tail: memoryview | None = None
    found = None
    try:
        if size is None:
            size = os.lseek(fd, 0, os.SEEK_END)
        if size >= FOOTER_SIZE:     # else nothing to read: `read_footer` refuses the size
            tail = memoryview(os.pread(fd, min(TAIL, size), size - min(TAIL, size)))
            found = (_kernels.btree_tail(tail, size, crc32 if verify_checksum else None)
                     if _kernels is not None else None)
    except BaseException:
        os.close(fd)
        raise
    source = Source.__new__(Source)     # `Source(path, size)` without its checks of what `path` is
    source._file = source._owned = source._view = None
    source._fd = fd
    source._closed = False
    source.size = size
    source.bytes_read = 0 if tail is None else min(TAIL, size)
    source._tail = tail
    source._tail_at = size - (0 if tail is None else len(tail))
    return source, found


class Footer(NamedTuple):
    """The 52-byte `BTreeFileFooter`; absent parts have length 0 (`has_*` False)."""

    ofs_bloom_filter: int
    len_bloom_filter: int
    num_expected_entries: int
    ofs_index_block: int
    len_index_block: int
    ofs_null_bitmap: int
    len_null_bitmap: int
    version: int

    @property
    def has_bloom_filter(self) -> bool:
        return bool(self.ofs_bloom_filter or self.len_bloom_filter or self.num_expected_entries)

    @property
    def has_null_bitmap(self) -> bool:
        return bool(self.ofs_null_bitmap or self.len_null_bitmap)


def read_footer(source: Source) -> Footer:
    """The footer, with every handle checked to lie inside the file before it (read with the
    file's last `TAIL` bytes: `Source.read_tail`)."""
    size = source.size
    if size < FOOTER_SIZE:
        raise FormatError(f"unexpected end of data: a btree global index file has a {FOOTER_SIZE}-byte "
                          f"footer, this file is {size} bytes", offset=size, path="footer")
    tail = source.read_tail(TAIL)
    if len(tail) < FOOTER_SIZE:
        raise FormatError("unexpected end of data in the footer", offset=size - FOOTER_SIZE + len(tail),
                          path="footer")
    fields = FOOTER.unpack_from(tail, len(tail) - FOOTER_SIZE)
    base = size - FOOTER_SIZE
    # fields: ofs/len bloom, expected entries, ofs/len index, ofs/len null bitmap, version, magic
    if (fields[8] != MAGIC or fields[7] != VERSION or fields[3] + fields[4] + TRAILER_SIZE > base
            or ((fields[5] or fields[6]) and fields[5] + fields[6] + 4 > base)
            or ((fields[0] or fields[1] or fields[2]) and (fields[0] + fields[1] > base or not fields[1]
                                                          or not fields[2]))):
        _check_footer(fields, base)     # raises, located
    return tuple.__new__(Footer, fields[:8])    # Footer(*...) without its Python-level __new__


def _check_footer(fields: tuple[int, ...], base: int) -> None:
    """The footer's fields (at file offset `base`) checked one by one: a located FormatError."""
    (ofs_bloom, len_bloom, num_expected, ofs_index, len_index, ofs_null, len_null, version, magic) = fields
    if magic != MAGIC:
        raise FormatError(f"not a btree global index file: footer magic 0x{magic:08x}, "
                          f"expected 0x{MAGIC:08x} (bytes ITBP)", offset=base + 48, path="footer.magic")
    if version != VERSION:
        raise FormatError(f"unknown btree footer version {version} (known: {VERSION})",
                          offset=base + 44, path="footer.version")
    footer = Footer(ofs_bloom, len_bloom, num_expected, ofs_index, len_index, ofs_null, len_null, version)
    _check_range(footer.ofs_index_block, footer.len_index_block + TRAILER_SIZE, base,
                 base + 20, "footer.len_index_block", "index block")
    if footer.has_null_bitmap:
        _check_range(footer.ofs_null_bitmap, footer.len_null_bitmap + 4, base, base + 40,
                     "footer.len_null_bitmap", "null bitmap")
    if footer.has_bloom_filter:
        _check_range(footer.ofs_bloom_filter, footer.len_bloom_filter, base, base + 8,
                     "footer.len_bloom_filter", "bloom filter")
        if footer.len_bloom_filter == 0 or footer.num_expected_entries == 0:
            raise FormatError("a bloom filter needs a size and an expected entry count",
                              offset=base + 8, path="footer.len_bloom_filter")


def _check_range(offset: int, length: int, limit: int, at: int, path: str, what: str) -> None:
    if offset + length > limit:
        raise FormatError(f"the {what} ({length} bytes at {offset}) runs past the footer at {limit}",
                          offset=at, path=path)


class Block:
    """One block's entries, decoded on demand: entry `i` starts at `start(i)` (its table is
    read per access, so a lookup decodes only the entries its binary search touches)."""

    __slots__ = ("data", "count", "len_entries", "aligned_size", "file_offset", "path", "is_index", "stored",
                 "orders", "hits")

    def __init__(self, data: bytes | memoryview, count: int, len_entries: int, aligned_size: int,
                 file_offset: int, path: str, is_index: bool, stored: bool) -> None:
        self.data = data                    # the (uncompressed) block
        self.count = count
        self.len_entries = len_entries      # the entries' bytes, before the block's table
        self.aligned_size = aligned_size    # every entry's size, or 0 when unaligned
        self.file_offset = file_offset      # where the block starts in the file (errors)
        self.path = path                    # the field path of its contents (errors)
        self.is_index = is_index            # the index block (entries hold block handles)
        self.stored = stored                # stored uncompressed: `data` is the file's bytes
        self.orders: np.ndarray | None = None   # every key's order, once a reader computed them
        self.hits = 0                           # lookups that found this block cached

    def fixed_keys(self, width: int) -> np.ndarray | None:
        """Every key as a row of `width` bytes, or None unless every key has that width."""
        starts = self.starts(0, self.count)
        buf = np.frombuffer(self.data, dtype=np.uint8, count=self.len_entries)
        if width >= 0x80 or not len(starts) or starts[-1] + 1 + width > len(buf) or (buf[starts] != width).any():
            return None
        rows: np.ndarray = buf[(starts + 1)[:, None] + np.arange(width)]
        return rows

    def __len__(self) -> int:
        return self.count

    def start(self, i: int) -> int:
        if self.aligned_size:
            return i * self.aligned_size
        start: int = _U4.unpack_from(self.data, self.len_entries + 4 * i)[0]
        if start >= self.len_entries:
            raise self.error(f"entry {i} starts at {start}, past the entries ({self.len_entries} bytes)",
                             self.len_entries + 4 * i, f"{self.path}.entry_positions[{i}]")
        return start

    def starts(self, first: int, stop: int) -> np.ndarray:
        """Where entries `first` .. `stop - 1` start, checked to ascend inside the entries."""
        if self.aligned_size:
            return np.arange(first, stop, dtype=np.int64) * self.aligned_size
        at = self.len_entries + 4 * first
        positions = np.frombuffer(self.data, dtype="<u4", count=stop - first, offset=at).astype(np.int64)
        bad = np.r_[False, np.diff(positions) <= 0] | (positions >= self.len_entries)
        if first == 0 and len(positions):
            bad[0] |= positions[0] != 0
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise self.error("entry positions must start at 0 and ascend inside the entries",
                             at + 4 * k, f"{self.path}.entry_positions[{first + k}]")
        return positions

    def key(self, i: int) -> bytes | memoryview:
        """Entry `i`'s key bytes."""
        data, pos = self.data, self.start(i)
        try:
            len_key, at = varlen.read(data, pos, 5)
        except (IndexError, ValueError) as exc:
            raise self.error(f"malformed key length: {exc}", pos, f"{self.path}.entries[{i}].len_key") from exc
        if at + len_key > self.len_entries:
            raise self.error(f"entry {i}'s key runs past the entries", pos, f"{self.path}.entries[{i}].len_key")
        return data[at:at + len_key]

    def entry(self, i: int) -> tuple[bytes | memoryview, int, int]:
        """(key, start, end) of entry `i`'s value."""
        data, pos = self.data, self.start(i)
        try:
            len_key, at = varlen.read(data, pos, 5)
            key_end = at + len_key
            len_value, value_start = varlen.read(data, key_end, 5) if key_end < self.len_entries else (0, 0)
        except (IndexError, ValueError) as exc:
            raise self.error(f"malformed entry: {exc}", pos, f"{self.path}.entries[{i}].len_key") from exc
        value_end = value_start + len_value
        if key_end >= self.len_entries or value_end > self.len_entries or len_value == 0:
            raise self.error(f"entry {i} runs past the block's entries or has an empty value", pos,
                             f"{self.path}.entries[{i}].len_value")
        return data[at:key_end], value_start, value_end

    def value_spans(self, first: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """(start, end) of the values of entries `first` .. `stop - 1`, found in bulk; every
        entry must end where the next starts (the last where the next begins or the entries
        end), as `BlockWriter` lays them out."""
        starts = self.starts(first, stop)
        buf = np.frombuffer(self.data, dtype=np.uint8, count=self.len_entries)
        len_key, at = _varints_at(buf, starts)
        key_end = at + len_key
        len_value, value_start = _varints_at(buf, np.minimum(key_end, len(buf)))
        value_end = value_start + len_value
        following = np.r_[starts[1:], self.start(stop) if stop < self.count else self.len_entries]
        bad = (len_key < 0) | (len_value <= 0) | (key_end >= len(buf)) | (value_end != following)
        if self.aligned_size and stop == self.count > first:     # (an aligned block may hold no entry)
            bad[-1] |= value_end[-1] != self.len_entries
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise self.error(f"entry {first + k} does not end where the next entry starts",
                             int(starts[k]), f"{self.path}.entries[{first + k}].len_value")
        return value_start, value_end

    def error(self, message: str, pos: int, path: str) -> FormatError:
        """The block refused at `pos` (`path`, `message`): where the generated parser fails
        reading the block's contents, its failure; else this one, located in the file."""
        generated = contents_error(self.data, self.file_offset, self.path, self.is_index) if self.stored else None
        return generated or FormatError(message, offset=self.file_offset + pos, path=path)


def _varints_at(buf: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The var_len_int at each position (-1 where malformed or cut off) and where it ends."""
    if len(positions) and positions.max() < len(buf):
        first = buf[positions]
        if (first < 0x80).all():    # one byte each: the common case, a few numpy calls
            return first.astype(np.int64), positions + 1
    value = np.zeros(len(positions), np.int64)
    end = positions.copy()
    alive = np.ones(len(positions), bool)
    for k in range(5):
        at = positions + k
        inside = at < len(buf)
        value[alive & ~inside] = -1
        alive &= inside
        byte = buf[np.where(alive, at, 0)].astype(np.int64)
        value[alive] |= (byte[alive] & 0x7F) << (7 * k)
        stops = alive & (byte < 0x80)
        end[stops] = at[stops] + 1
        alive &= ~stops
    value[alive] = -1               # longer than 5 bytes
    return value, end


def read_block(source: Source, offset: int, length: int, path: str, *, is_index: bool = False,
               verify_checksum: bool = True) -> Block:
    """The block at `offset` (`length` stored bytes, then its trailer, at field `path`),
    checked and decompressed; `is_index`: the index block, whose values are block handles."""
    return parse_block(memoryview(source.read(offset, length + TRAILER_SIZE)), offset, length, path,
                       is_index=is_index, verify_checksum=verify_checksum)


def parse_block(raw: memoryview, offset: int, length: int, path: str, *, is_index: bool = False,
                verify_checksum: bool = True) -> Block:
    """`read_block` over the block's stored bytes and trailer `raw`, read at file `offset`."""
    if len(raw) == length + TRAILER_SIZE and length >= 5 and not raw[length] and (
            not verify_checksum or crc32(raw[:length + 1]) == _U4.unpack_from(raw, length + 1)[0]):
        # the common case, uncompressed and intact: the checks below in a few steps
        tail = _U4.unpack_from(raw, length - 5)[0]
        if raw[length - 1] == UNALIGNED:
            len_entries = length - 5 - 4 * tail
            if len_entries > 0 and tail:
                return Block(raw[:length], tail, len_entries, 0, offset, f"{path}.contents", is_index, True)
        elif raw[length - 1] == ALIGNED and tail and not (length - 5) % tail:
            return Block(raw[:length], (length - 5) // tail, length - 5, tail, offset, f"{path}.contents",
                         is_index, True)
    return _checked_block(raw, offset, length, path, is_index, verify_checksum)


def _checked_block(raw: memoryview, offset: int, length: int, path: str, is_index: bool,
                   verify_checksum: bool) -> Block:
    """`read_block` step by step: any block, its refusals located."""
    if len(raw) < length + TRAILER_SIZE:
        raise FormatError("unexpected end of data inside a block", offset=offset + len(raw), path=path)
    compression = raw[length]
    if compression not in (0, 1, 2, 3):
        raise FormatError(f"unknown block compression {compression} (known: 0 none, 1 zstd, 2 lz4, 3 lzo)",
                          offset=offset + length, path=f"{path}.compression")
    stored_crc = _U4.unpack_from(raw, length + 1)[0]
    if verify_checksum:
        actual = crc32(raw[:length + 1])
        if actual != stored_crc:
            raise FormatError(f"block CRC32 mismatch: stored 0x{stored_crc:08x}, computed 0x{actual:08x}",
                              offset=offset + length + 1, path=f"{path}.checksum")
    data: bytes | memoryview = raw[:length]
    # Offsets inside a compressed block cannot be mapped to the file: its errors point at the block.
    base = offset
    if compression:
        data = _decompress(data, Compression(compression), offset, path)
    n = len(data)
    table = n - 5 if not compression else 0
    where = f"{path}.contents"
    exact = not compression
    if n < 5:
        raise _refused(data, exact, base, where, is_index, f"a block of {n} bytes has no room for its 5-byte table",
                       0, "entry_size_or_count")
    aligned, tail = data[n - 1], _U4.unpack_from(data, n - 5)[0]
    if aligned == ALIGNED:
        if tail == 0 or (n - 5) % tail:
            raise _refused(data, exact, base, where, is_index, f"aligned entries of {tail} bytes cannot fill "
                           f"{n - 5} bytes", table, "entry_size_or_count")
        return Block(data, (n - 5) // tail, n - 5, tail, base, where, is_index, exact)
    if aligned == UNALIGNED:
        len_entries = n - 5 - 4 * tail
        if len_entries < 0 or (tail == 0) != (len_entries == 0):
            raise _refused(data, exact, base, where, is_index, f"{tail} entries do not fit a block of {n} bytes",
                           table, "entry_size_or_count")
        return Block(data, tail, len_entries, 0, base, where, is_index, exact)
    raise _refused(data, exact, base, where, is_index, f"unknown block aligned type {aligned} (known: 0 aligned, "
                   "1 unaligned)", n - 1 if exact else 0, "aligned_type")


def _refused(data: bytes | memoryview, exact: bool, base: int, where: str, is_index: bool, message: str, at: int,
             field: str) -> FormatError:
    """A block table the reader refuses: the generated parser's failure where it has one
    (`exact`: uncompressed, offsets map to the file), else this one at `where.field`."""
    generated = contents_error(data, base, where, is_index) if exact else None
    return generated or FormatError(message, offset=base + at, path=f"{where}.{field}")


def contents_error(data: bytes | memoryview, offset: int, path: str, is_index: bool) -> FormatError | None:
    """Where the generated parser first fails reading the contents of the uncompressed block
    `data` at file `offset` (`block.contents` at `path`: its table, then its entries, then
    its entry positions, in the substream of the block's bytes), located in the file; None
    where it reads them all. The same walk in plain Python (the generated parser, in debug
    mode, takes ~0.3 s over the thousands of entries of a 64 KiB block); the tests hold it to
    the generated parser's located errors."""
    n = len(data)
    found = _walk_contents(data, n, is_index)
    if found is None:
        return None
    message, at, field = found
    return FormatError(message, offset=offset + min(at, n), path=f"{path}.{field}")


_EOF = "unexpected end of data"


def _walk_contents(data: bytes | memoryview, n: int, is_index: bool) -> tuple[str, int, str] | None:
    """(message, position, field path) of the generated `block_contents`' first failure."""
    if n < 1:
        return "the block has no room for its aligned type", 0, "aligned_type"
    aligned = data[n - 1]
    if aligned not in (ALIGNED, UNALIGNED):
        return f"invalid block aligned type {aligned}", n - 1, "aligned_type"
    # A position before the block's start fails before the generated parser records the field
    # it was to read: its error names the field read last (below, likewise).
    if n < 5:
        return "the block has no room for its 5-byte table", n - 1, "aligned_type"
    tail = _U4.unpack_from(data, n - 5)[0]
    count = ((0 if tail == 0 else (n - 5) // tail) if aligned == ALIGNED else tail)
    pos = last = 0
    for i in range(count):
        last = pos
        found, pos = _walk_entry(data, pos, n, is_index)
        if found is not None:
            return found[0], found[1], f"entries[{i}].{found[2]}"
    if aligned == UNALIGNED:
        pos = n - 5 - 4 * tail
        if pos < 0:
            return (f"{tail} entry positions do not fit the block", last,
                    f"entries[{count - 1}]" if count else "entries")
        if pos + 4 * tail > n:
            k = (n - pos) // 4
            return _EOF, pos + 4 * k, f"entry_positions[{k}]"
    return None


_Failure = tuple[str, int, str]


def _walk_var_len(data: bytes | memoryview, pos: int, end: int, field: str,
                  long: bool) -> tuple[_Failure | None, int, int]:
    """A generated `paimon_common::var_len_int` (or `var_len_long`) at `pos`, reading before
    `end`: (failure, value, position after it). An int's fifth byte is at most 7 (bits
    28-30), a long's ninth at most 0x7f."""
    longest = 9 if long else 5
    last_max = 0x7F if long else 7
    value = 0
    for k in range(longest):
        name = f"{field}.b{k}"
        if pos + k >= end:
            return (_EOF, pos + k, name), 0, end
        byte = data[pos + k]
        if k == longest - 1 and byte > last_max:
            return (f"invalid last var-len byte {byte}", pos + k, name), 0, end
        value |= (byte & 0x7F) << (7 * k)
        if byte < 0x80:
            break
    return None, value, pos + k + 1


def _walk_entry(data: bytes | memoryview, pos: int, n: int, is_index: bool) -> tuple[_Failure | None, int]:
    """A generated `entry` at `pos`: key length and bytes, value length and value (a
    substream: row ids, or a block handle in the index block); (failure, position after)."""
    found, len_key, pos = _walk_var_len(data, pos, n, "len_key", False)
    if found is not None:
        return found, pos
    if pos + len_key > n:
        return (_EOF, pos, "key"), n
    found, len_value, pos = _walk_var_len(data, pos + len_key, n, "len_value", False)
    if found is not None:
        return found, pos
    if pos + len_value > n:
        return (_EOF, pos, "value"), n
    end = pos + len_value
    if is_index:
        found, _, at = _walk_var_len(data, pos, end, "value.ofs_block", True)
        if found is None:
            found, _, at = _walk_var_len(data, at, end, "value.len_block", False)
        return found or _nothing_after(at, end), end
    found, count, at = _walk_var_len(data, pos, end, "value.num_row_ids", False)
    if found is None and count == 0:     # `no_row_ids`: a byte there is refused, so is its absence
        found = (_EOF if at >= end else "a value with no row ids", at, "value.no_row_ids[0]")
    for j in range(count if found is None else 0):
        found, _, at = _walk_var_len(data, at, end, f"value.row_ids[{j}]", True)
        if found is not None:
            break
    return found or _nothing_after(at, end), end


def _nothing_after(at: int, end: int) -> _Failure | None:
    """A value's `trailing` bytes (after its handle or its last row id): none may be there."""
    return ("bytes after the value's last field", at, "value.trailing[0]") if at < end else None


def search(block: Block, kind: int | None, width: int | None, order: Any, inclusive: bool) -> int | None:
    """The compiled binary search for the block's first key `>= order` (`> order` when not
    inclusive), comparing keys in place (`keys.KEY_*`); None where it cannot answer (no
    compiler, an order it does not compare, an entry that is no key of the type: the caller's
    own search then locates the error)."""
    if kind is None or not _compiled(kind, order):
        return None
    found = _kernels.block_search(block.data, block.len_entries, block.count, block.aligned_size, kind,
                                  width or 0, order, inclusive)
    return found if found >= 0 else None


def find_handle(block: Block, kind: int | None, width: int | None, order: Any) -> tuple[int, int, int] | None:
    """In the index block, compiled: (i, offset, stored size) of the first entry whose key is
    `>= order` and of the data block it names, as `search` and `parse_handle` find and check
    them ((count, 0, 0): every key is below); None where `search` would be."""
    if kind is None or not (type(order) is int and kind != KEY_BYTES and -2**63 <= order < 2**63
                            and _kernels is not None or _compiled(kind, order)):
        return None
    return _kernels.find_handle(block.data, block.len_entries, block.count, block.aligned_size, kind,
                                width or 0, order)


def find_row_ids(block: Block, kind: int | None, width: int | None, order: Any) -> list[int] | None:
    """In a data block, compiled: the row ids of the key whose order is `order` ([] when no key
    has it), found and checked as `search`, `Block.entry` and `row_ids_of` do; None where
    `search` would be, where a value is malformed, or longer than `SHORT_VALUE` bytes (numpy
    decodes those: `decode_row_ids`)."""
    if kind is None or not (type(order) is int and kind != KEY_BYTES and -2**63 <= order < 2**63
                            and _kernels is not None or _compiled(kind, order)):
        return None
    return _kernels.find_row_ids(block.data, block.len_entries, block.count, block.aligned_size, kind,
                                 width or 0, order, SHORT_VALUE)


def lookup_block(raw: bytes | memoryview, length: int, crc: int, kind: int | None, width: int | None,
                 order: Any) -> list[int] | None:
    """A data block as stored (`length` bytes and the trailer), compiled: the row ids of the key
    whose order is `order`, the block checked as `read_block`'s fast path checks it (`crc`: the
    CRC32 of its first `length + 1` bytes, -1 not to check it) and searched as `find_row_ids`
    searches; None where either would decline (`read_block` and the reader's lookup then read
    it step by step, locating any error)."""
    if kind is None or not (type(order) is int and kind != KEY_BYTES and -2**63 <= order < 2**63
                            and _kernels is not None or _compiled(kind, order)):
        return None
    return _kernels.lookup_block(raw, length, crc, kind, width or 0, order, SHORT_VALUE)


def fetch_row_ids(source: Source, index: tuple[bytes | memoryview, int, int, int, int, int], kind: int | None,
                  width: int | None, order: Any, verify_checksum: bool,
                  blocks_end: int) -> list[int] | tuple[int, int, int, bytes, Any] | None:
    """A point lookup's data step from a file opened by path, compiled (`_kernels.btree_lookup`):
    the index block (`index`: a buffer, where the block starts in it, its length, its entries'
    length, entry count and aligned entry size) searched as `find_handle` searches it, then
    the data block read with one `pread` (not counted in `bytes_read`: the caller counts it),
    checked and searched as `lookup_block` does: [] when every key is below `order`, else (i, offset, stored size, the
    bytes read, the row ids or None where `lookup_block` would decline). None (nothing read)
    where `find_handle` would be, or the block does not end by `blocks_end` or where the file's
    kept last bytes begin (the caller's path reads it, checking its handle)."""
    if source._fd < 0 or kind is None or not (type(order) is int and kind != KEY_BYTES and -2**63 <= order < 2**63
                                              and _kernels is not None or _compiled(kind, order)):
        return None
    return _kernels.btree_lookup(source._fd, *index, kind, width or 0, order, SHORT_VALUE,
                                 crc32 if verify_checksum else None, min(blocks_end, source._tail_at))


def _compiled(kind: int, order: Any) -> bool:
    """Whether the kernels can search for `order`, the order of a key of `kind`."""
    if _kernels is None:
        return False
    if kind == KEY_BYTES:
        return type(order) is bytes
    return type(order) is int and -2**63 <= order < 2**63


def _decompress(stored: bytes | memoryview, compression: Any, offset: int, path: str) -> bytes:
    """A compressed block's bytes (`SstFileReader.decompressBlock`): zstd through `zstandard`;
    lz4 and lzo are named and refused (neither Java's default nor anything pypaimon writes)."""
    where = f"{path}.compressed"
    try:
        expected, pos = varlen.read(stored, 0, 5)
    except (IndexError, ValueError) as exc:
        raise FormatError(f"malformed uncompressed length: {exc}", offset=offset,
                          path=f"{where}.len_uncompressed") from exc
    if compression != Compression.zstd:
        raise FormatError(f"{compression.name}-compressed blocks are not supported (none and zstd are)",
                          offset=offset + len(stored), path=f"{path}.compression")
    try:
        import zstandard
    except ImportError as exc:   # pragma: no cover - installed with the test and spark extras
        raise FormatError("a zstd-compressed block needs the zstandard package",
                          offset=offset + len(stored), path=f"{path}.compression") from exc
    try:
        data: bytes = zstandard.ZstdDecompressor().decompress(bytes(stored[pos:]), max_output_size=expected)
    except zstandard.ZstdError as exc:
        raise FormatError(f"corrupt zstd block: {exc}", offset=offset + pos, path=f"{where}.payload") from exc
    if len(data) != expected:
        raise FormatError(f"a zstd block decompressed to {len(data)} bytes, not the {expected} it records",
                          offset=offset, path=f"{where}.len_uncompressed")
    return data


def decode_row_ids(data: bytes | memoryview, starts: np.ndarray, ends: np.ndarray, block: Block,
                   entries: Sequence[int]) -> np.ndarray:
    """The row ids of the values at `starts[j]:ends[j]` of `block` (entry `entries[j]`),
    concatenated as uint64. Each value is a var_len_int count, then that many var_len_long
    ids; one numpy pass over the values' bytes finds every varint's end."""
    if len(starts) == 0:
        return np.zeros(0, np.uint64)
    buf = np.frombuffer(data, dtype=np.uint8)
    lengths = ends - starts
    value_starts = np.zeros(len(starts), np.int64)
    np.cumsum(lengths[:-1], out=value_starts[1:])
    if len(starts) == 1:
        joined = buf[int(starts[0]):int(ends[0])]
    else:                           # the values' bytes, back to back
        joined = buf[np.arange(int(value_starts[-1] + lengths[-1])) + np.repeat(starts - value_starts, lengths)]
    terminal = joined < 0x80
    last = value_starts + lengths - 1
    if not terminal[last].all():
        j = int(np.flatnonzero(~terminal[last])[0])
        raise block.error("a row id runs past the end of its value", int(ends[j]) - 1,
                          f"{block.path}.entries[{entries[j]}].value.row_ids")
    var_ends = np.flatnonzero(terminal)
    var_starts = np.empty_like(var_ends)
    var_starts[0] = 0
    var_starts[1:] = var_ends[:-1] + 1
    sizes = var_ends - var_starts + 1
    longest = int(sizes.max())
    if longest > 9:
        k = int(np.flatnonzero(sizes > 9)[0])
        j = int(np.searchsorted(value_starts, var_starts[k], side="right") - 1)
        raise block.error("a var-len long longer than 9 bytes",
                          int(starts[j] + var_starts[k] - value_starts[j]),
                          f"{block.path}.entries[{entries[j]}].value.row_ids")
    payload = (joined & 0x7F).astype(np.uint64)
    values = payload[var_starts]
    for k in range(1, longest):
        more = np.flatnonzero(sizes > k)
        values[more] |= payload[var_starts[more] + k] << np.uint64(7 * k)
    count_index = np.searchsorted(var_starts, value_starts)
    counts = values[count_index]
    held = np.r_[count_index[1:], len(var_starts)] - count_index - 1
    bad = (counts != held.astype(np.uint64)) | (counts == 0) | (sizes[count_index] > 5)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise block.error(f"the value says {int(counts[j])} row ids but holds {int(held[j])}",
                          int(starts[j]), f"{block.path}.entries[{entries[j]}].value.num_row_ids")
    if len(starts) == 1:
        ids: np.ndarray = values[1:]
        return ids
    keep = np.ones(len(values), bool)
    keep[count_index] = False
    return values[keep]


def row_ids_of(data: bytes | memoryview, start: int, end: int, block: Block, i: int) -> list[int]:
    """One short value's row ids, by the compiled kernel or in Python (either cheaper than
    numpy for a few ids); the Python loop locates what the kernel declines."""
    if _kernels is not None:
        found = _kernels.row_ids(data, start, end)
        if found is not None:
            return found
    where = f"{block.path}.entries[{i}].value"
    try:
        count, pos = varlen.read(data, start, 5)
        ids = []
        for _ in range(count):
            row, pos = varlen.read(data, pos, 9)
            ids.append(row)
    except (IndexError, ValueError) as exc:
        raise block.error(f"malformed row ids: {exc}", start, f"{where}.row_ids") from exc
    if pos != end or count == 0:
        raise block.error(f"the value says {count} row ids but holds {'more' if pos < end else 'fewer'}",
                          start, f"{where}.num_row_ids")
    return ids


def parse_handle(block: Block, i: int) -> tuple[bytes | memoryview, int, int]:
    """Index entry `i`: its key and the handle (offset, stored size) of its data block."""
    key, start, end = block.entry(i)
    value = block.data[start:end]
    try:
        offset, pos = varlen.read(value, 0, 9)
        size, pos = varlen.read(value, pos, 5)
    except (IndexError, ValueError) as exc:
        raise block.error(f"malformed block handle: {exc}", start, f"{block.path}.entries[{i}].value") from exc
    if pos != len(value) or size > _INT_MAX:
        raise block.error("a block handle is a var_len_long offset and a var_len_int size, nothing more",
                          start, f"{block.path}.entries[{i}].value")
    return key, offset, size


def has_signature(data: bytes | memoryview) -> bool:
    """Whether `data` is a btree global index file by its look: the footer's magic at the end."""
    return len(data) >= FOOTER_SIZE and bytes(data[-4:]) == _U4.pack(MAGIC)
