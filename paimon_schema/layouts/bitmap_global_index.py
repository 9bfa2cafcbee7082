"""The bitmap global index file (formats/bitmap_global_index.ksy): a lazy reader answering
equal / in / is-null / is-not-null with 64-bit row-id bitmaps, and writers of both versions.

A lookup reads what Java's reader reads: the 48-byte footer, the index block, the one
dictionary block that can hold the key and the key's bitmap, each through `Source.read` (a
file object is read block by block, never whole). A block whose keys have one length (every
numeric column) is decoded by one regular expression, any other by a loop; both decline
whatever the generated parser would reject, and the generated parser then reads the whole
file to report the located `FormatError` (`test_bitmap_global_index.py` proves them equal,
and counts the bytes a lookup reads).

Keys are the column's global-index key bytes (`GlobalKeys`, Java's `KeySerializer`). Version 1
files sort them by those bytes unsigned and are searched that way; version 2 files sort them by
typed value and are searched by it, as Java's reader (apache/paimon#8613 at 1e2a322e) does by
the footer's version. The version-1 writer is byte-identical to pypaimon 2.1.0's
`BitmapIndexWriter` (bitmaps without `runOptimize`), the version-2 writer follows Java's
`SortedBitmapGlobalIndexWriter` (streaming order, bitmaps run-optimized, null and non-null
bitmaps after the dictionary), and `run_optimize=True` makes version 1 Java's
`BitmapGlobalIndexWriter` output. (Checked once against Java's own classes compiled from
apache/paimon at 1e2a322e: 800 random INT/BIGINT/STRING columns, both versions, byte-identical;
no Java jar on PyPI holds that code, so CI cannot run it.) Columns are typed in bulk
(`column_values`) and grouped by the bitmap index's hash kernel; the spec's doc lists where
pypaimon, pypaimon-rust and Java's master disagree.
"""

from __future__ import annotations

import bisect
import re
import decimal
import math
import struct
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, BinaryIO, cast

import numpy as np
from pyroaring import BitMap, BitMap64

from paimon_schema.generated.bitmap_global_index import BitmapGlobalIndex
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.bitmap_index.row_groups import group_rows
from paimon_schema.layouts.column_values import Column, column_values
from paimon_schema.layouts.deletion_vectors import _scan_bitmap64 as scan_bitmap64
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import DataType, float_bits, float_order, internal

FOOTER = struct.Struct(">qiqiqiiiI")
MAGIC = 0x42474958
SERIALIZED_KEY_ORDER = 1
LOGICAL_KEY_ORDER = 2
VERSIONS = (SERIALIZED_KEY_ORDER, LOGICAL_KEY_ORDER)
TRAILER = 5                          # compression type + CRC-32
COMPRESSION_NONE = 0
DEFAULT_BLOCK_SIZE = 16 * 1024       # bitmap-index.dictionary-block-size
FILE_PREFIX = "bitmap"               # bitmap-global-index-<uuid>.index

Source = bytes | bytearray | memoryview | BinaryIO


# ---------------------------------------------------------------------------------------------
# keys


@dataclass(frozen=True)
class GlobalKeys:
    """Java's global-index `KeySerializer` for one column type: value <-> key bytes, and the
    typed order of version-2 files (`order` of the bytes, `value_order` of a value)."""

    data_type: DataType

    @classmethod
    def of(cls, data_type: str | DataType) -> GlobalKeys:
        dtype = DataType.parse(data_type)
        if dtype.is_binary:
            raise SchemaError(f"{dtype} is not supported by global indexes (Java's KeySerializer)")
        return cls(dtype)

    def encode(self, value: object) -> bytes:
        """The key bytes of a Python value (SchemaError if it does not fit the type)."""
        return self.encode_internal(internal(self.data_type, value))

    def encode_internal(self, item: object) -> bytes:
        """The key bytes of an internal value (`types.internal`: days, unscaled, UTF-8 ...)."""
        dtype, root = self.data_type, self.data_type.root
        if root == "TINYINT":
            return struct.pack("<b", item)
        if root == "SMALLINT":
            return struct.pack("<h", item)
        if root in ("INT", "DATE", "TIME"):
            return struct.pack("<i", item)
        if root == "BIGINT":
            return struct.pack("<q", item)
        if root == "BOOLEAN":
            return b"\x01" if item else b"\x00"
        if root == "FLOAT":
            return struct.pack("<I", float_bits(cast(float, item), 32, True))
        if root == "DOUBLE":
            return struct.pack("<Q", float_bits(cast(float, item), 64, True))
        if root == "DECIMAL":
            unscaled = cast(int, item)
            if (dtype.precision or 0) <= 18:
                return struct.pack("<q", unscaled)
            magnitude = unscaled if unscaled >= 0 else ~unscaled
            return unscaled.to_bytes(magnitude.bit_length() // 8 + 1, "big", signed=True)
        if dtype.is_timestamp:
            key = cast(int, item)
            if (dtype.precision or 0) <= 3:
                return struct.pack("<q", key)
            millis, micros = divmod(key, 1000)
            return struct.pack("<q", millis) + var_len(micros * 1000)
        return cast(bytes, item)                     # CHAR / VARCHAR: UTF-8

    def decode(self, key: bytes) -> object:
        """The value of key bytes (DATE as days, TIME as millis, TIMESTAMP as its raw key)."""
        dtype, root = self.data_type, self.data_type.root
        if dtype.is_string:
            return key.decode("utf-8", errors="replace")
        if root == "BOOLEAN":
            return key == b"\x01"
        if root in ("FLOAT", "DOUBLE"):
            return struct.unpack("<f" if root == "FLOAT" else "<d", key)[0]
        if root == "DECIMAL":
            unscaled = (int.from_bytes(key, "big", signed=True) if (dtype.precision or 0) > 18
                        else int.from_bytes(key, "little", signed=True))
            return decimal.Decimal(unscaled).scaleb(-(dtype.scale or 0))
        if dtype.is_timestamp:
            millis, nanos = self.order(key)
            return millis if (dtype.precision or 0) <= 3 else millis * 1000 + nanos // 1000
        return self.order(key)

    def order(self, key: bytes) -> Any:
        """A sort key of key bytes in the column's typed order (Java's comparator)."""
        root = self.data_type.root
        if self.data_type.is_string:
            return key
        if root == "FLOAT":
            return float_order(int.from_bytes(key, "little"), 32)
        if root == "DOUBLE":
            return float_order(int.from_bytes(key, "little"), 64)
        if root == "DECIMAL" and (self.data_type.precision or 0) > 18:
            return int.from_bytes(key, "big", signed=True)
        if self.data_type.is_timestamp and len(key) > 8:
            nanos, _ = read_var_len(key, 8)
            return (int.from_bytes(key[:8], "little", signed=True), nanos)
        if self.data_type.is_timestamp:
            return (int.from_bytes(key[:8], "little", signed=True), 0)
        return int.from_bytes(key, "little", signed=root != "BOOLEAN")


def var_len(value: int) -> bytes:
    """`VarLengthIntUtils.encodeInt/encodeLong`: unsigned LEB128 of a non-negative value."""
    if value < 0x4000:                          # lengths and small offsets: no loop
        return bytes((value,)) if value < 0x80 else bytes((value & 0x7F | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_var_len(data: bytes | memoryview, pos: int, groups: int = 9) -> tuple[int, int]:
    """Decode a varint of at most `groups` bytes at `pos`: (value, position after it).
    IndexError past the end, ValueError for a longer one (the fast scans decline both)."""
    value = shift = 0
    for _ in range(groups):
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise ValueError("varint too long")


# ---------------------------------------------------------------------------------------------
# reading


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
    """One decoded index or dictionary block: keys in file order, with the varint bytes of
    their offsets and lengths (decoded when asked: a lookup needs one of each)."""

    keys: list[bytes]
    raw_offsets: list[bytes]
    raw_lengths: list[bytes]

    def offset(self, j: int) -> int:
        return read_var_len(self.raw_offsets[j], 0)[0]

    def length(self, j: int) -> int:
        return read_var_len(self.raw_lengths[j], 0)[0]

    def reordered(self, order: list[int]) -> Block:
        return Block([self.keys[i] for i in order], [self.raw_offsets[i] for i in order],
                     [self.raw_lengths[i] for i in order])


class _Reads:
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


@dataclass
class BitmapGlobalIndexReader:
    """One bitmap global index file, read lazily; every answer is a fresh `BitMap64`."""

    key_codec: GlobalKeys | None          # None: structure only (dump, verify), no lookups
    footer: Footer
    _reads: _Reads
    _blocks: Block | None = None
    _first_orders: list[Any] | None = None
    _dictionaries: dict[int, Block] = field(default_factory=dict)

    @classmethod
    def open(cls, source: Source, data_type: str | DataType | None) -> BitmapGlobalIndexReader:
        """Read the footer of `source` (bytes, or a seekable binary file); without the
        column's data type only the structure can be read (`entries`, `verify`)."""
        reads = _Reads(source)
        return cls(None if data_type is None else GlobalKeys.of(data_type), _read_footer(reads), reads)

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
                              offset=len_minus_footer(self._reads.size) + 36, path="footer.num_values")
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
        entries = [self.keys.order(k) for k in block.keys] if logical else block.keys
        # Java scans the block to the first key not below the target: the same answer as a
        # binary search in a sorted block, and Java's answer in one that is not
        j = next((j for j, here in enumerate(entries) if here >= target), None)
        if j is None or entries[j] != target:
            return None
        return block.offset(j), block.length(j), f"{i}.{j}"

    def _index(self) -> Block:
        if self._blocks is None:
            f = self.footer
            block = _read_block(self._reads, f.ofs_index_block, f.len_index_block)
            if block is None:
                _locate(self._reads, lambda root: parsing.read_lazily(root, "index_block"))
                raise _checksum_error(self._reads, f.ofs_index_block, f.len_index_block, "index_block")
            if self.version == SERIALIZED_KEY_ORDER:      # Java sorts a version-1 index block
                block = block.reordered(sorted(range(len(block.keys)), key=block.keys.__getitem__))
            self._blocks = block
        return self._blocks

    def _dictionary(self, i: int) -> Block:
        block = self._dictionaries.get(i)
        if block is None:
            blocks = self._index()
            block = _read_block(self._reads, blocks.offset(i), blocks.length(i))
            if block is None:
                ofs = blocks.offset(i)
                _locate(self._reads, lambda root: _dictionary_block_at(root, ofs))
                raise _checksum_error(self._reads, ofs, blocks.length(i),
                                      f"index_block.dictionary_blocks[{self._file_index(i)}].block")
            self._dictionaries[i] = block
        return block

    def _file_index(self, i: int) -> int:
        """The file position of sorted dictionary block `i` (a version-1 index is sorted)."""
        offsets = [ref.ofs_block.value for ref in parsing.parse(BitmapGlobalIndex, self._reads.whole())
                   .index_block.dictionary_blocks]
        return offsets.index(self._index().offset(i))

    def _bitmap(self, offset: int, length: int, where: str) -> BitMap64:
        data = self._reads.read(offset, length)
        if data is None or not scan_bitmap64(memoryview(data)):
            _locate(self._reads, lambda root: _bitmap_at(root, where, offset))
            raise _unlocated("bitmap", offset)
        return roaring.deserialize64(data)


def len_minus_footer(size: int) -> int:
    """Where the footer starts in a file of `size` bytes."""
    return size - FOOTER.size


def _read_footer(reads: _Reads) -> Footer:
    if reads.size < FOOTER.size:
        raise FormatError(f"{reads.size} bytes: shorter than the {FOOTER.size}-byte footer",
                          offset=0, path="footer")
    data = reads.read(reads.size - FOOTER.size, FOOTER.size)
    assert data is not None
    fields = FOOTER.unpack(data)
    if fields[8] != MAGIC or fields[7] not in VERSIONS or min(fields[:7]) < 0:
        _locate(reads, lambda root: parsing.read_lazily(root, "footer"))
        raise _unlocated("footer", reads.size - FOOTER.size)
    return Footer(*fields[:8])


def _read_block(reads: _Reads, offset: int, length: int) -> Block | None:
    """A block as the spec reads it, or None where the generated parser would fail."""
    data = reads.read(offset, length + TRAILER)
    if data is None:
        return None
    buf = bytes(data)
    if buf[length] != COMPRESSION_NONE or int.from_bytes(buf[length + 1:], "little") != zlib.crc32(buf[:length + 1]):
        return None
    try:
        count, at = read_var_len(buf, 0, 5)
    except (IndexError, ValueError):
        return None
    if count > 0x7FFFFFFF or at > length:
        return None
    return _uniform_entries(buf, at, length, count) or _entries(buf, at, length, count)


_VAR_INT = rb"(?:[\x80-\xff]{0,3}[\x00-\x7f]|[\x80-\xff]{4}[\x00-\x07])"    # var_len_int
_VAR_LONG = rb"[\x80-\xff]{0,8}[\x00-\x7f]"                                 # var_len_long


@cache
def _entry_pattern(width: int) -> re.Pattern[bytes]:
    """One entry whose key is `width` (< 128) bytes long: its length byte, key, offset, length."""
    return re.compile(re.escape(bytes((width,))) + rb"(.{%d})(%s)(%s)" % (width, _VAR_LONG, _VAR_INT),
                      re.DOTALL)


def _uniform_entries(buf: bytes, at: int, length: int, count: int) -> Block | None:
    """The entries of a block whose keys all have one length (every numeric column), matched by
    one regular expression; None when they do not cover the payload exactly."""
    if count == 0 or buf[at] >= 0x80:
        return None
    width = buf[at]
    found = _entry_pattern(width).findall(buf, at, length)
    # disjoint matches whose sizes add up to the payload cover it: they are its entries
    if len(found) != count or sum(len(o) + len(n) for _, o, n in found) != length - at - count * (1 + width):
        return None
    return Block([k for k, _, _ in found], [o for _, o, _ in found], [n for _, _, n in found])


def _entries(buf: bytes, at: int, length: int, count: int) -> Block | None:
    """The entries of any block, one at a time."""
    keys: list[bytes] = []
    offsets: list[bytes] = []
    lengths: list[bytes] = []
    try:
        for _ in range(count):
            n, at = read_var_len(buf, at, 5)
            if n > 0x7FFFFFFF or at + n > length:
                return None
            keys.append(buf[at:at + n])
            ofs, end = read_var_len(buf, at + n, 9)
            offsets.append(buf[at + n:end])
            size, at = read_var_len(buf, end, 5)
            if size > 0x7FFFFFFF:
                return None
            lengths.append(buf[end:at])
    except (IndexError, ValueError):
        return None
    return Block(keys, offsets, lengths) if at == length else None


def _locate(reads: _Reads, reach: Callable[[Any], Any]) -> None:
    """Parse the whole file with the generated parser up to what `reach` asks for; the
    located FormatError of whatever is wrong propagates."""
    root = parsing.parse(BitmapGlobalIndex, reads.whole())
    reach(root)


def _dictionary_block_at(root: Any, offset: int) -> None:
    index = parsing.read_lazily(root, "index_block", "")
    for i, ref in enumerate(index.dictionary_blocks):
        if ref.ofs_block.value == offset:
            parsing.read_lazily(ref, "block", f"index_block.dictionary_blocks[{i}]")


def _bitmap_at(root: Any, where: str, offset: int) -> None:
    if where in ("null_rows", "non_null_rows"):
        parsing.read_lazily(root, where)
        return
    i, j = (int(part) for part in where.split("."))
    index = parsing.read_lazily(root, "index_block")
    prefix = f"index_block.dictionary_blocks[{i}]"
    block = parsing.read_lazily(index.dictionary_blocks[i], "block", prefix)
    parsing.read_lazily(block.entries[j], "bitmap", f"{prefix}.block.entries[{j}]")


def _checksum_error(reads: _Reads, offset: int, length: int, path: str) -> FormatError:
    """The generated parser accepts a block the fast path declined: Kaitai does not compute
    checksums, so it is the trailer's CRC-32 (the generated codec checks it too)."""
    data = reads.read(offset, length + TRAILER)
    assert data is not None
    stored = int.from_bytes(data[length + 1:], "little")
    computed = zlib.crc32(data[:length + 1])
    if stored != computed:
        return FormatError(f"CRC-32 mismatch: stored {stored:#010x}, computed {computed:#010x}",
                           offset=offset + length + 1, path=f"{path}.checksum")
    return _unlocated(path, offset)


def _unlocated(what: str, offset: int) -> FormatError:
    """The fast path declined bytes the generated parser accepts: a disagreement to report."""
    return FormatError(f"malformed {what}", offset=offset, path=what.replace(" ", "_"))


# ---------------------------------------------------------------------------------------------
# writing


def write_bitmap_global_index(data_type: str | DataType, values: Iterable[object], *,
                              version: int = SERIALIZED_KEY_ORDER,
                              dictionary_block_size: int = DEFAULT_BLOCK_SIZE,
                              run_optimize: bool | None = None) -> bytes:
    """The file for `values` (row id = position, None = NULL): version 1 as pypaimon 2.1.0's
    `BitmapIndexWriter` writes it, version 2 as Java's `SortedBitmapGlobalIndexWriter`.
    `run_optimize` (default: for version 2 only) runs Roaring's `runOptimize` on every bitmap
    as Java's writers do; with it, version 1 is Java's `BitmapGlobalIndexWriter` output.
    An empty column gives b"" (every writer writes no file)."""
    if version not in VERSIONS:
        raise SchemaError(f"bitmap global index version must be 1 or 2, not {version!r}")
    if dictionary_block_size <= 0:
        raise SchemaError("bitmap-index.dictionary-block-size must be positive")
    keys = GlobalKeys.of(data_type)
    column = column_values(keys.data_type, values)
    if column.num_rows == 0:
        return b""
    grouped = _grouped_numbers(keys, column) if column.numbers is not None and \
        keys.data_type.root not in ("FLOAT", "DOUBLE") else \
        _grouped_strings(column) if column.strings is not None else None
    groups, nulls = grouped if grouped is not None else _grouped_rows(keys, column.python_rows())
    count = column.num_rows
    order = sorted(groups) if version == SERIALIZED_KEY_ORDER else sorted(groups, key=keys.order)
    optimize = version == LOGICAL_KEY_ORDER if run_optimize is None else run_optimize
    return _layout([(k, groups[k]) for k in order], nulls, count, version, dictionary_block_size, optimize)


#: one key's rows, ascending: int64 numbers, or the 32-bit rows of the hash kernel
Rows = np.ndarray | array
#: {key bytes: its rows}, and the NULL rows
Groups = tuple[dict[bytes, Rows], np.ndarray]


def _present_rows(column: Column) -> np.ndarray:
    return np.arange(column.num_rows) if column.valid is None else np.flatnonzero(column.valid)


def _nulls(column: Column) -> np.ndarray:
    return np.zeros(0, dtype=np.int64) if column.valid is None else np.flatnonzero(~column.valid)


def _split(codes: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct codes, ascending, and the rows of each (a stable sort keeps them ascending)."""
    if len(codes) == 0:
        return codes, []
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return ordered[starts], np.split(rows[order], starts[1:])


def _grouped_numbers(keys: GlobalKeys, column: Column) -> Groups:
    """Integer-backed internal values (and booleans) grouped in bulk, each distinct value
    encoded once: by the bitmap index's hash-table kernel while there are few distinct values,
    by a stable sort beyond."""
    numbers = column.numbers
    assert numbers is not None
    few = group_rows(None if column.valid is None else np.flatnonzero(column.valid),
                     numbers.astype(np.int64).view(np.uint64)) if len(numbers) else None
    if few is None:
        distinct, rows = _split(numbers, _present_rows(column))
        by_key: dict[bytes, Rows] = {keys.encode_internal(v): r for v, r in zip(distinct.tolist(), rows)}
        return by_key, _nulls(column)
    values = few.keys.view(np.int64).tolist()
    if numbers.dtype == np.bool_:
        values = [bool(v) for v in values]
    grouped: dict[bytes, Rows] = {keys.encode_internal(v): few.rows[start:start + n]
                                  for v, start, n in zip(values, few.starts.tolist(), few.counts.tolist())}
    return grouped, _nulls(column)


def _grouped_strings(column: Column) -> Groups:
    assert column.strings is not None
    codes, encoded = column.strings
    distinct, rows = _split(codes, _present_rows(column))
    by_key: dict[bytes, Rows] = {encoded[c]: r for c, r in zip(distinct.tolist(), rows)}
    return by_key, _nulls(column)


def _grouped_rows(keys: GlobalKeys, values: list[Any]) -> Groups:
    """Plain Python values grouped by value (and type: True is not 1, -0.0 not 0.0), each group
    encoded once; values that encode alike (NaNs, 1 and np.int64(1)) merge."""
    by_value: dict[Any, list[int]] = {}
    for row, value in enumerate(values):
        group = (type(value), value, math.copysign(1.0, value)) if isinstance(value, float) \
            else (type(value), value)
        rows_of = by_value.get(group)
        if rows_of is None:
            by_value[group] = [row]
        else:
            rows_of.append(row)
    nulls = np.array(by_value.pop((type(None), None), []), dtype=np.int64)
    groups: dict[bytes, Rows] = {}
    for group, rows in by_value.items():
        key = keys.encode(group[1])
        found = groups.get(key)
        groups[key] = np.array(rows, dtype=np.int64) if found is None else \
            np.sort(np.concatenate([np.asarray(found, dtype=np.int64), np.array(rows, dtype=np.int64)]))
    return groups, nulls


_ONE_BUCKET_ZERO = (1).to_bytes(8, "little") + bytes(4)     # bucket count 1, high key 0
_EMPTY_64 = bytes(8)


def _bitmap_bytes(rows: Rows, optimize: bool) -> bytes:
    """`RoaringNavigableMap64` bytes of ascending rows: one bucket (key 0) of a 32-bit bitmap
    built from an `array('I')` (pyroaring's fast constructor) while every row fits 32 bits;
    pyroaring's `BitMap64` (pypaimon's) otherwise. Both make the same containers."""
    if len(rows) == 0:
        return _EMPTY_64
    if isinstance(rows, array) or rows[-1] < 2**32:
        small = BitMap(rows if isinstance(rows, array) else array("I", rows.astype(np.uint32).tobytes()),
                       optimize=False)
        if optimize:
            small.run_optimize()
        return _ONE_BUCKET_ZERO + small.serialize()
    bitmap = BitMap64(np.asarray(rows, dtype=np.uint64), optimize=False)
    if optimize:
        bitmap.run_optimize()
    return bitmap.serialize()


def _layout(groups: list[tuple[bytes, Rows]], nulls: np.ndarray, num_rows: int, version: int,
            block_size: int, optimize: bool) -> bytes:
    out = bytearray()
    null_rows = _bitmap_bytes(nulls, optimize)
    non_null = np.ones(num_rows, dtype=bool)
    non_null[nulls] = False
    non_null_rows = _bitmap_bytes(np.flatnonzero(non_null), optimize)
    heads: list[tuple[int, int]] = []
    if version == SERIALIZED_KEY_ORDER:
        heads.append(_append(out, null_rows))
        heads.append(_append(out, non_null_rows))
    refs: list[tuple[bytes, int, int]] = []
    block: list[bytes] = []
    block_size_now = 0
    first = b""
    for key, rows in groups:
        ofs, length = _append(out, _bitmap_bytes(rows, optimize))
        entry = var_len(len(key)) + key + var_len(ofs) + var_len(length)
        if block and len(var_len(len(block) + 1)) + block_size_now + len(entry) > block_size:
            refs.append((first, *_append_block(out, block)))
            block, block_size_now = [], 0
        if not block:
            first = key
        block.append(entry)
        block_size_now += len(entry)
    if block:
        refs.append((first, *_append_block(out, block)))
    if version == LOGICAL_KEY_ORDER:
        heads.append(_append(out, null_rows))
        heads.append(_append(out, non_null_rows))
    index = _append_block(out, [var_len(len(k)) + k + var_len(o) + var_len(n) for k, o, n in refs])
    out += FOOTER.pack(*heads[0], *heads[1], *index, len(groups), version, MAGIC)
    return bytes(out)


def _append(out: bytearray, data: bytes) -> tuple[int, int]:
    offset = len(out)
    out += data
    return offset, len(data)


def _append_block(out: bytearray, entries: list[bytes]) -> tuple[int, int]:
    payload = var_len(len(entries)) + b"".join(entries)
    offset, length = _append(out, payload)
    out.append(COMPRESSION_NONE)
    out += struct.pack("<I", zlib.crc32(payload + bytes([COMPRESSION_NONE])))
    return offset, length
