"""Bitmap file indexes (formats/bitmap_index.ksy): the writer, as `BitmapFileIndex.Writer`.

The layout pass (`bitmap_layout` for any values, `vector_layout` for numpy columns and string
lists) decides everything Java decides, in Java's HashMap order (`javaorder`); `write_layout`
turns it into bytes, `write_with_codec` does the same through the generated Construct codec.
"""

from __future__ import annotations

import array
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple, cast

import numpy as np

from paimon_schema.runtime import collector
from paimon_schema.generated import bitmap_index_codec, roaring_bitmap_codec
from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts.bitmap_index import javaorder
from paimon_schema.layouts.bitmap_index.row_groups import LIMIT, Groups, group_rows
from paimon_schema.layouts.bitmap_index.scan import _HEAD, _S4, Key
from paimon_schema.layouts.column_values import Column, column_values
from paimon_schema.layouts.paimon_common import KeyCodec, KeyKind, key_model
from paimon_schema.layouts.roaring_writer import adjacent, serialize_bitmaps
from paimon_schema.runtime import constructs
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.positions import fresh_bitmap
from paimon_schema.values.types import DataType

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: numpy's flatnonzero
    _kernels = None  # type: ignore[assignment]


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


#: Keys of a layout: numeric kinds' as `KeyCodec.encode` gives them (int64; float kinds' bits
#: as uint64), string kinds' bytes.
Keys = np.ndarray | list[bytes]


@dataclass(frozen=True, eq=False)
class BitmapLayout:
    """Everything `BitmapFileIndex.Writer` decides, before any byte is written: the entries
    as columns (a million keys cost no Python object each), `entries` and `blocks` as tuples
    for the reference writer and the tests."""

    codec: KeyCodec
    version: int
    num_rows: int
    null_offset: int | None          # None: no null rows
    null_length: int                 # V2's nullBitmapLength (18 for a single, unstored row)
    keys: Keys                       # id2bitmap HashMap order (V1 entries; body order), or
                                     # sorted where the order is not observable (`_unordered`)
    offsets: np.ndarray              # int64 per entry: body offset, or -1 - row for a single row
    lengths: np.ndarray              # int64 per entry: serialized length, -1 for a single row
    body: bytes                      # null bitmap (>= 2 rows), then key bitmaps in entry order
    sorted_entries: np.ndarray       # V2: entry indices in Java's key order (V1: empty)
    block_starts: np.ndarray         # V2: where each index block starts in `sorted_entries`

    @property
    def entries(self) -> list[_Entry]:
        keys_ = self.keys.tolist() if isinstance(self.keys, np.ndarray) else self.keys
        return list(map(_Entry._make, zip(keys_, self.offsets.tolist(), self.lengths.tolist())))

    @property
    def blocks(self) -> list[list[_Entry]]:
        entries = self.entries
        ordered = [entries[i] for i in self.sorted_entries.tolist()]
        bounds = [*self.block_starts.tolist(), len(ordered)] if self.version == 2 and ordered else []
        return [ordered[start:end] for start, end in zip(bounds, bounds[1:])]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BitmapLayout):
            return NotImplemented
        return (self.codec, self.version, self.num_rows, self.null_offset, self.null_length, self.body) \
            == (other.codec, other.version, other.num_rows, other.null_offset, other.null_length, other.body) \
            and self.entries == other.entries and self.blocks == other.blocks

    __hash__ = None  # type: ignore[assignment]


def build_bitmap_index(data_type: str | DataType, values: Iterable[object], *, version: int = 2,
                       index_block_size: int = DEFAULT_BLOCK_SIZE) -> bytes:
    """The blob Java's bitmap writer writes for `values` (one per row, None = null)."""
    return write_layout(bitmap_layout(data_type, values, version=version,
                                      index_block_size=index_block_size))


def bitmap_layout(data_type: str | DataType, values: Iterable[object], *, version: int = 2,
                  index_block_size: int = DEFAULT_BLOCK_SIZE) -> BitmapLayout:
    """The layout pass: rows per key, Java's HashMap order, single-row offsets, body offsets
    and, for V2, the sorted entries packed into blocks of at most `index_block_size` bytes.

    Columns `column_values` types (any input kind) go through the vectorized pass
    (`vector_layout`); everything else, and every column it declines (an entry larger than a
    block), through the per-row pass `row_layout`, the reference, which also reports the
    errors. Hypothesis proves the two give equal layouts.
    """
    column = column_values(_bitmap_codec(data_type, version).data_type, values)
    layout = vector_layout(data_type, column, version=version, index_block_size=index_block_size)
    if layout is not None:
        return layout
    return row_layout(data_type, column.python_rows(), version=version,
                      index_block_size=index_block_size)


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
    if _unordered(version, np.array([len(r) for r in rows.values()], np.int64)):
        order = sorted(order, key=codec.order)

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
    key_list = [e.key for e in entries]
    sorted_entries = np.array(sorted(range(len(entries)), key=lambda i: codec.order(key_list[i])), np.int64) \
        if version == 2 else np.zeros(0, np.int64)
    block_starts = _pack_blocks(codec, [key_list[i] for i in sorted_entries.tolist()], index_block_size)
    offsets = np.array([e.offset for e in entries], np.int64)
    lengths = np.array([e.length for e in entries], np.int64)
    return BitmapLayout(codec, version, len(row_keys), null_offset, null_length, _key_array(codec, key_list),
                        offsets, lengths, b"".join(body), sorted_entries, block_starts)


def _key_array(codec: KeyCodec, keys_: list[Key]) -> Keys:
    """Keys as a layout holds them (`Keys`)."""
    if codec.kind == KeyKind.string:
        return keys.string_keys(keys_)
    return np.array(keys_, dtype=np.uint64 if codec.kind in (KeyKind.float32, KeyKind.float64) else np.int64)


def _pack_blocks(codec: KeyCodec, sorted_keys: list[Key], limit: int) -> np.ndarray:
    """`BitmapIndexBlock.tryAdd` over the keys in Java's order: where each block starts. A
    block counts 4 bytes plus `8 + key size` per entry and closes when the next entry would
    pass `limit` (formats/bitmap_index.ksy `index_block`); SchemaError for a key no block can hold."""
    needed = 8 + np.fromiter(map(codec.size, sorted_keys), np.int64, len(sorted_keys))
    starts = _block_starts(needed, limit)
    if starts is None:
        key = sorted_keys[int(np.argmax(needed))]
        raise SchemaError(f"index-block-size {limit} cannot hold the key "
                          f"{codec.decode(key)!r} ({4 + 8 + codec.size(key)} bytes); Java fails too")
    return starts


def _block_starts(needed: np.ndarray, limit: int) -> np.ndarray | None:
    """Where each block starts, entries of `needed` bytes packed greedily into blocks of
    `limit` bytes with a 4-byte head; None where an entry fits no block."""
    if not len(needed):
        return np.zeros(0, np.int64)
    if int(needed.max()) + 4 > limit:
        return None
    if int(needed.min()) == int(needed.max()):         # fixed-size keys: a block holds as many
        return np.arange(0, len(needed), (limit - 4) // int(needed[0]), dtype=np.int64)
    ends = np.cumsum(needed)
    starts, start = [], 0
    while start < len(needed):
        starts.append(start)
        base = int(ends[start - 1]) if start else 0
        start = int(np.searchsorted(ends, base + limit - 4, side="right"))
    return np.array(starts, np.int64)


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


class _Nulls(NamedTuple):
    """A column's null rows, as the layout takes them."""

    bitmap: bytes           # serialized (run-optimized, portable)
    total: int
    first: int              # the first null row


class _Column(NamedTuple):
    """A column as the vectorized pass sees it."""

    num_rows: int
    rows: np.ndarray | None     # int64: the non-null rows, ascending; None: every row
    grouping: np.ndarray        # uint64 per non-null row: equal iff the keys are equal
    strings: list[bytes] | None  # string kinds: the key of each code (`grouping`)
    signed: bool = False        # `grouping` holds int64 bits, not yet sign-flipped (see `_group`)
    nulls: _Nulls | None = None  # the null rows' bitmap; None: none


def vector_layout(data_type: str | DataType, values: Any, *, version: int = 2,
                  index_block_size: int = DEFAULT_BLOCK_SIZE) -> BitmapLayout | None:
    """The layout pass over whole columns (numpy), equal to `row_layout`; None where it
    declines the column (see `bitmap_layout`)."""
    codec = _bitmap_codec(data_type, version)
    if not isinstance(values, Column):
        values = column_values(codec.data_type, values)
    with collector.paused():      # millions of entry tuples: full collections would cost seconds
        return _vector_layout(codec, values, version, index_block_size)


def _vector_layout(codec: KeyCodec, values: Column, version: int, index_block_size: int) -> BitmapLayout | None:
    column = _column(codec, values)
    if column is None:
        return None
    num_rows, rows, grouping, strings, signed, nulls = column
    groups = _group(num_rows, rows, grouping, signed)
    starts, counts, group_keys = groups.starts, groups.counts, groups.keys
    first_rows = np.frombuffer(groups.rows, np.uint32)[starts].astype(np.int64)

    body: list[bytes] = []
    null_offset, null_length = None, 0
    if nulls is not None:
        null_length = len(nulls.bitmap)
        if nulls.total == 1:
            null_offset = -1 - nulls.first
        else:
            null_offset = 0
            body.append(nulls.bitmap)

    # Java's order: the distinct keys in order of first occurrence, then the HashMap. V2 lists
    # its entries sorted; the HashMap order shows only in the body, so a V2 index whose keys
    # all hold one row (no bitmap stored) takes the sorted order (`_unordered`).
    kind = codec.kind
    java_keys = _gather(strings, group_keys) if strings is not None else []
    unordered = _unordered(version, counts)
    if unordered:
        order = _java_sorted(kind, group_keys, java_keys if strings is not None else None)
    else:
        arrival = _arrival(num_rows, first_rows)
        last_row = num_rows - 1 if rows is None else int(rows[-1]) if len(rows) else -1
        trailing = last_row >= 0 and int(first_rows.max()) != last_row
        arrived = _gather(java_keys, arrival) if strings is not None else _hash_input(kind, group_keys)[arrival]
        order = arrival[javaorder.bitmap_distinct_order(arrived, _JAVA_KINDS[kind], trailing)]

    cursor = len(body[0]) if body else 0
    counts_o = counts[order]
    lengths = np.full(len(order), -1, np.int64)
    stored = np.flatnonzero(counts_o > 1)
    stored_starts, stored_counts = starts[order[stored]], counts_o[stored]
    serialized, lengths[stored] = serialize_bitmaps(groups.rows, stored_counts, stored_starts,
                                                    groups.runs[order[stored]])
    body.append(serialized)
    ends = cursor + np.cumsum(np.where(lengths > 0, lengths, 0))
    offsets = np.where(lengths > 0, ends - lengths, -1 - first_rows[order])
    ordered_keys: Keys = [java_keys[i] for i in order.tolist()] if strings is not None \
        else _hash_input(kind, group_keys[order])

    sorted_entries = block_starts = np.zeros(0, np.int64)
    if version == 2 and len(order):
        if unordered:
            sorted_entries = np.arange(len(order), dtype=np.int64)
        else:
            position = np.empty(len(order), np.int64)
            position[order] = np.arange(len(order))
            sorted_entries = position[_java_sorted(kind, group_keys, java_keys if strings is not None else None)]
        found = _string_block_starts(cast(list[bytes], ordered_keys), sorted_entries, index_block_size) \
            if strings is not None else _block_starts(np.full(len(order), 8 + codec.size(0), np.int64),
                                                      index_block_size)
        if found is None:
            return None
        block_starts = found
    return BitmapLayout(codec, version, num_rows, null_offset, null_length, ordered_keys, offsets, lengths,
                        b"".join(body), sorted_entries, block_starts)


def _gather(items: list[bytes], indices: np.ndarray) -> list[bytes]:
    """`items` at `indices`; `items` itself where the indices are 0, 1, ... (strings numbered
    by first occurrence: their groups and arrival order are the codes' order), sparing a
    million-item list."""
    if len(indices) == len(items) and (not len(indices) or (int(indices[0]) == 0 and int(indices[-1]) == len(items) - 1
                                                            and bool((np.diff(indices) == 1).all()))):
        return items
    return [items[i] for i in indices.tolist()]


def _string_block_starts(ordered_keys: list[bytes], sorted_entries: np.ndarray, limit: int) -> np.ndarray | None:
    """`_block_starts` of string entries (`12 + key length` bytes each), compiled where it can
    be (`kernels.c` v2_block_starts: no length taken per key in Python)."""
    if _kernels is not None:
        found = _kernels.v2_block_starts(ordered_keys, sorted_entries, limit)
        return None if found is None else np.frombuffer(found, np.int64)
    lengths = np.fromiter(map(len, ordered_keys), np.int64, len(ordered_keys))
    return _block_starts(12 + lengths[sorted_entries], limit)


def _unordered(version: int, counts: np.ndarray) -> bool:
    """Whether the layout's entries take Java's sorted key order rather than its HashMap
    order: in V2, where no key holds two rows, no bitmap is stored and the HashMap order,
    which decides only the body's order, is not observable (and not worth computing)."""
    return version == 2 and (not len(counts) or int(counts.max()) == 1)


def _column(codec: KeyCodec, values: Column) -> _Column | None:
    """Grouping keys of a typed column (`column_values`); None to decline."""
    if values.strings is not None:
        return _string_column(values.strings, values.valid, values.num_rows)
    if values.numbers is None:
        return None
    return _array_column(codec, values.numbers, values.num_rows, values.valid)


def _array_column(codec: KeyCodec, array: np.ndarray, num_rows: int,
                  valid: np.ndarray | None) -> _Column | None:
    """`array` holds the non-null values, checked against the type (`Column.numbers`); `valid`
    marks the non-null rows (None: all)."""
    if num_rows >= 2**31:
        return None
    rows, nulls = _split(valid)
    kind, letter = codec.kind, array.dtype.kind
    if not len(array):
        return _Column(num_rows, rows, np.zeros(0, np.uint64), [] if kind == KeyKind.string else None, nulls=nulls)
    if kind == KeyKind.string:
        return None
    if kind == KeyKind.boolean:
        return _Column(num_rows, rows, array.astype(np.uint64), None, nulls=nulls) if letter == "b" else None
    if kind in (KeyKind.float32, KeyKind.float64):
        if letter != "f":
            return None
        with np.errstate(over="ignore"):
            if kind == KeyKind.float32:
                bits = array.astype(np.float32).view(np.uint32).astype(np.uint64)
            else:
                bits = array.astype(np.float64).view(np.uint64).copy()
        bits[np.isnan(array)] = _CANONICAL_NAN[kind]
        return _Column(num_rows, rows, bits, None, nulls=nulls)
    if letter not in "iu":
        return None
    return _Column(num_rows, rows, array.astype(np.int64, copy=False).view(np.uint64), None, signed=True,
                   nulls=nulls)


def _string_column(strings: tuple[np.ndarray, list[bytes]], valid: np.ndarray | None, num_rows: int
                   ) -> _Column:
    """Strings by code (`Column.strings`: each code one distinct value)."""
    codes, encoded = strings
    rows, nulls = _split(valid)
    return _Column(num_rows, rows, codes.astype(np.uint64), encoded, nulls=nulls)


def _split(valid: np.ndarray | None) -> tuple[np.ndarray | None, _Nulls | None]:
    """The non-null rows (int64, ascending; None: every row) and the null rows' bitmap (None:
    no NULL). Compiled: one branch-free pass listing the non-null rows (`kernels.c`
    split_rows) and the bitmap straight from the validity bytes (`mask_bitmap`), the null
    rows never listed; else numpy's lists and `serialize_bitmaps`."""
    if valid is None:
        return None, None
    if _kernels is None:
        missing = np.flatnonzero(~valid).astype(np.uint32)
        if not len(missing):
            return np.flatnonzero(valid), None
        bitmap, _ = serialize_bitmaps(missing, np.array([len(missing)]))
        return np.flatnonzero(valid), _Nulls(bitmap, len(missing), int(missing[0]))
    flags = np.ascontiguousarray(valid, bool)
    present, _ = _kernels.split_rows(flags, False)
    nulls = _Nulls(*_kernels.mask_bitmap(flags))
    return np.frombuffer(present, np.int64), nulls if nulls.total else None


def _group(num_rows: int, rows: np.ndarray | None, grouping: np.ndarray, signed: bool = False) -> Groups:
    """The non-null rows (`rows`; None: every row) grouped by key, groups in ascending
    grouping-key order: by the compiled hash table (`row_groups`) while the keys are few, else
    by sorting. `signed`: `grouping` holds int64 bits, whose order is their signed order with
    the sign bit flipped; the hash table needs only equality, so the flip is paid on the few
    distinct keys (a pass over a million rows saved), the sort pays it on every row. Keys too
    wide for the packed sort (floats' bits) take the hash table up to an eighth of the rows'
    count: the unstable argsort, a rank and a packed sort cost three times as much."""
    row_bits = max(1, (num_rows - 1).bit_length())
    limit = LIMIT
    if len(grouping) and not signed \
            and (int(grouping.max()) - int(grouping.min())).bit_length() + row_bits > 64:
        limit = max(LIMIT, len(grouping) // 8)
    few = group_rows(rows, grouping, limit) if len(grouping) else None
    if few is not None:
        if not signed:
            return few
        order = np.argsort(few.keys.view(np.int64), kind="stable")
        return Groups(few.rows, few.starts[order], few.counts[order], few.keys[order] ^ _SIGN, few.runs[order])
    if not len(grouping):
        empty = np.zeros(0, np.int64)
        return Groups(array.array("I"), empty, empty, np.zeros(0, np.uint64), np.zeros(0, bool))
    if _kernels is not None:        # the packed array built, and split once sorted, in C
        found = _kernels.pack_rows(np.ascontiguousarray(grouping, np.uint64),
                                   None if rows is None else np.ascontiguousarray(rows, np.int64),
                                   int(_SIGN) if signed else 0, row_bits)
        if found is not None:
            packed = np.frombuffer(found[0], np.uint64)
            packed.sort()
            return _split_packed(packed, row_bits, found[1])
    if signed:
        grouping = grouping ^ _SIGN
    if rows is None:
        rows = np.arange(num_rows, dtype=np.int64)
    low = int(grouping.min())
    if (int(grouping.max()) - low).bit_length() + row_bits <= 64:
        packed = ((grouping - np.uint64(low)) << np.uint64(row_bits)) | rows.astype(np.uint64)
        packed.sort()
        grouped = (packed & np.uint64((1 << row_bits) - 1)).astype(np.uint32)
        sorted_keys = packed >> np.uint64(row_bits)
    else:
        # numpy's unstable argsort (SIMD) and, where keys repeat, a packed sort of (rank of
        # the key, row) to put each group's rows in order: a stable argsort is 10x slower
        order = np.argsort(grouping)
        sorted_keys = grouping[order]
        low = 0
        new_key = sorted_keys[1:] != sorted_keys[:-1]
        if new_key.all():           # every key one row: no adjacent rows in any group
            grouped = rows[order].astype(np.uint32)
            starts = np.arange(len(rows), dtype=np.int64)
            return Groups(array.array("I", grouped.tobytes()), starts, np.ones(len(rows), np.int64), sorted_keys,
                          np.zeros(len(rows), bool))
        rank = np.empty(len(order), np.uint64)
        rank[order] = np.concatenate(([0], np.cumsum(new_key, dtype=np.uint64)))
        packed = (rank << np.uint64(row_bits)) | rows.astype(np.uint64)
        packed.sort()
        if _kernels is not None:
            ranked = _split_packed(packed, row_bits, 0)
            return ranked._replace(keys=sorted_keys[ranked.starts])
        grouped = (packed & np.uint64((1 << row_bits) - 1)).astype(np.uint32)
    starts = np.concatenate(([0], np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1))
    counts = np.diff(np.append(starts, len(rows)))
    return Groups(array.array("I", grouped.tobytes()), starts, counts, sorted_keys[starts] + np.uint64(low),
                  adjacent(grouped, starts, counts))


def _split_packed(packed: np.ndarray, row_bits: int, low: int) -> Groups:
    """Groups of sorted `key - low << row_bits | row` (distinct items), split in one compiled
    pass (`kernels.c` split_packed)."""
    assert _kernels is not None
    grouped = array.array("I", [0]) * len(packed)
    keys_, starts, counts, runs = _kernels.split_packed(packed, row_bits, grouped)
    return Groups(grouped, np.frombuffer(starts, np.int64), np.frombuffer(counts, np.int64),
                  np.frombuffer(keys_, np.uint64) + np.uint64(low), np.frombuffer(runs, bool))


def _arrival(num_rows: int, first_rows: np.ndarray) -> np.ndarray:
    """The groups in order of their first rows (distinct, below `num_rows` < 2**31): numpy's
    SIMD sort of up to an eighth of the rows' count (a null-heavy or low-cardinality column),
    else a scatter over the rows (int32: half the memory), not a sort of a million groups."""
    if len(first_rows) * 8 < num_rows:
        return np.argsort(first_rows)
    slots = np.full(num_rows, -1, np.int32)
    slots[first_rows] = np.arange(len(first_rows), dtype=np.int32)
    return slots[slots >= 0].astype(np.int64)


def _hash_input(kind: KeyKind, group_keys: np.ndarray) -> np.ndarray:
    """The keys as javaorder takes them and `KeyCodec.encode` gives them: signed integers,
    booleans 0/1, float bits."""
    if kind in (KeyKind.boolean, KeyKind.float32, KeyKind.float64):
        return group_keys
    return (group_keys ^ _SIGN).view(np.int64)


def _java_sorted(kind: KeyKind, group_keys: np.ndarray, group_strings: list[bytes] | None) -> np.ndarray:
    """Group indices in the order of Java's comparator (formats/bitmap_index.ksy, V2);
    `group_strings`: string kinds' key of each group."""
    if group_strings is not None:
        return keys.byte_order(group_strings)
    if kind in (KeyKind.float32, KeyKind.float64):
        # Canonical NaN is the largest positive pattern: -inf ... -0.0 < 0.0 ... +inf < NaN.
        sign = np.uint64(1 << (31 if kind == KeyKind.float32 else 63))
        magnitude = (group_keys & (sign - np.uint64(1))).view(np.int64)
        return np.argsort(np.where(group_keys & sign, -magnitude - 1, magnitude), kind="stable")
    return np.arange(len(group_keys), dtype=np.int64)    # groups ascend by signed value


# ---------------------------------------------------------------------------------------------
# Bytes


def _records(codec: KeyCodec, keys_: Keys, *columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Records `key, column0 (i32), column1 (i32), ...` back to back, with numpy: (bytes as
    uint8, size of each record)."""
    count = len(keys_)
    if codec.kind != KeyKind.string:
        table = _record_table(codec, keys_, *columns)
        return table.view(np.uint8), np.full(count, table.dtype.itemsize, np.int64)
    if _kernels is not None:       # each key read once (a million keys lie all over the heap)
        records, found = _kernels.string_records(keys_ if isinstance(keys_, list) else list(keys_),
                                                 tuple(np.ascontiguousarray(c, np.int64) for c in columns))
        return np.frombuffer(records, np.uint8), 4 + np.frombuffer(found, np.int64) + 4 * len(columns)
    strings = keys.string_keys(list(keys_))
    lengths = np.fromiter(map(len, strings), np.int64, count)
    sizes = 4 + lengths + 4 * len(columns)
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), np.uint8)
    spread = starts[:, None] + np.arange(4)

    def put(at: np.ndarray, values: np.ndarray) -> None:
        out[at[:, None] + np.arange(4)] = np.asarray(values, np.int64).astype(">i4").view(np.uint8).reshape(-1, 4)

    out[spread] = lengths.astype(">i4").view(np.uint8).reshape(-1, 4)
    text = np.frombuffer(b"".join(strings), np.uint8)
    key_starts = np.cumsum(lengths) - lengths
    out[np.repeat(starts + 4 - key_starts, lengths) + np.arange(len(text))] = text
    for i, column in enumerate(columns):
        put(starts + 4 + lengths + 4 * i, column)
    return out, sizes


def _record_table(codec: KeyCodec, keys_: Keys, *columns: np.ndarray) -> np.ndarray:
    """Fixed-size records `key, column0 (i32), ...` as a structured array."""
    dtype = np.dtype([("key", keys.KEY_DTYPES[codec.kind])] + [(f"c{i}", ">i4") for i in range(len(columns))])
    table = np.empty(len(keys_), dtype)
    table["key"] = keys_
    for i, column in enumerate(columns):
        table[f"c{i}"] = column
    return table


def _take(keys_: Keys, indices: np.ndarray) -> Keys:
    return keys_[indices] if isinstance(keys_, np.ndarray) else [keys_[i] for i in indices.tolist()]


def write_layout(layout: BitmapLayout) -> bytes:
    """The blob for a layout, with numpy records: the fast path, proven equal to
    `write_with_codec`."""
    codec = layout.codec
    head = _HEAD.pack(layout.version, layout.num_rows, len(layout.keys),
                      layout.null_offset is not None)
    if layout.null_offset is not None:
        head += _S4.pack(layout.null_offset)
    if layout.version == 1:
        index, _ = _records(codec, layout.keys, layout.offsets)
        return b"".join((head, index.data, layout.body))
    order = layout.sorted_entries
    bounds = np.append(layout.block_starts, len(order))
    counts = np.diff(bounds)
    if codec.kind != KeyKind.string:
        blocks, heads = _fixed_blocks(codec, layout, counts)
        secondary: Any = _records(codec, _take(layout.keys, order[layout.block_starts]), heads)[0].data
    else:
        blocks, secondary = _blocks(codec, layout, bounds)
    null_length = _S4.pack(layout.null_length) if layout.null_offset is not None else b""
    return b"".join((head, null_length, _S4.pack(len(counts)), secondary, _S4.pack(len(blocks)), blocks,
                     layout.body))


def _blocks(codec: KeyCodec, layout: BitmapLayout, bounds: np.ndarray) -> tuple[bytearray, Any]:
    """V2's index blocks of string keys (each its entry count, then its records `key, offset,
    length` in sorted order) and their index (`first key, block offset`): one compiled pass
    where it can be (`kernels.c` v2_blocks), else numpy records copied block by block."""
    order = layout.sorted_entries
    if _kernels is not None:
        return _kernels.v2_blocks(keys.string_keys(list(layout.keys)), np.ascontiguousarray(order, np.int64),
                                  np.ascontiguousarray(bounds[:-1], np.int64),
                                  np.ascontiguousarray(layout.offsets, np.int64),
                                  np.ascontiguousarray(layout.lengths, np.int64))
    records, sizes = _records(codec, _take(layout.keys, order), layout.offsets[order], layout.lengths[order])
    ends = np.concatenate(([0], np.cumsum(sizes)))
    record_bytes = ends[bounds[1:]] - ends[bounds[:-1]]
    heads = np.concatenate(([0], np.cumsum(4 + record_bytes)))
    blocks = bytearray(int(heads[-1]))
    view = memoryview(records.tobytes())
    for at, count, first, size in zip(heads[:-1].tolist(), np.diff(bounds).tolist(), ends[bounds[:-1]].tolist(),
                                      record_bytes.tolist()):
        blocks[at:at + 4] = _S4.pack(count)
        blocks[at + 4:at + 4 + size] = view[first:first + size]
    secondary, _ = _records(codec, _take(layout.keys, order[layout.block_starts]), heads[:-1])
    return blocks, secondary.data


def _fixed_blocks(codec: KeyCodec, layout: BitmapLayout, counts: np.ndarray) -> tuple[bytearray, np.ndarray]:
    """`_blocks` for fixed-size keys, whose blocks all hold as many entries but the last: the
    full blocks are one structured array (count, then records) filled field by field straight
    from the sorted entries, with no per-block copy."""
    order = layout.sorted_entries
    record = np.dtype([("key", keys.KEY_DTYPES[codec.kind]), ("offset", ">i4"), ("length", ">i4")])
    heads = np.concatenate(([0], np.cumsum(4 + counts * record.itemsize)))
    blocks = bytearray(int(heads[-1]))
    start = 0
    for per, number in _block_runs(counts):           # the full blocks, then the last one
        block = np.dtype([("count", ">i4"), ("entries", record, (per,))])
        at = int(heads[start])
        table = np.frombuffer(blocks, block, number, at)
        table["count"] = per
        entries = order[int(layout.block_starts[start]):][:per * number].reshape(number, per)
        table["entries"]["key"] = layout.keys[entries]
        table["entries"]["offset"] = layout.offsets[entries]
        table["entries"]["length"] = layout.lengths[entries]
        start += number
    return blocks, heads[:-1]


def _block_runs(counts: np.ndarray) -> list[tuple[int, int]]:
    """(entries per block, blocks) of consecutive blocks of equal size."""
    if not len(counts):
        return []
    changes = np.flatnonzero(counts[1:] != counts[:-1]) + 1
    starts = np.concatenate(([0], changes))
    sizes = np.diff(np.append(starts, len(counts)))
    return list(zip(counts[starts].tolist(), sizes.tolist()))


def write_with_codec(layout: BitmapLayout) -> bytes:
    """The blob for a layout through the generated Construct codec: the reference writer."""
    codec = layout.codec
    has_null = layout.null_offset is not None
    head_size = _HEAD.size + (4 if has_null else 0)

    def key(k: Key) -> dict:
        return key_model(codec.kind, k)

    def body_bitmap(offset: int, length: int) -> bytes:
        return layout.body[offset:offset + length]

    if layout.version == 1:
        body_start = head_size + sum(codec.size(e.key) + 4 for e in layout.entries)
        index = {"entries": [{"key": key(e.key), "ofs_bitmap": e.offset,
                              "bitmap": _roaring_model(body_bitmap(e.offset, e.length))
                              if e.offset >= 0 else None} for e in layout.entries],
                 "body_mark": {"ofs": body_start},
                 "null_bitmap": _roaring_model(body_bitmap(0, layout.null_length))
                 if layout.null_offset is not None and layout.null_offset >= 0 else None}
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
                 if layout.null_offset is not None and layout.null_offset >= 0 else None}
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
