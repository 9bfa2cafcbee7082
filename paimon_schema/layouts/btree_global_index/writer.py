"""Write a btree global index file as Java's `BTreeIndexWriter` (over `SstFileWriter`) does.

The rows are sorted by key in the column type's order, then by row id; each distinct key
becomes one entry of its row ids; entries fill data blocks until a block's size plus 5 (and
4 per entry when unaligned) exceeds `block_size`, exactly `BlockWriter.memory()`. The bulk of
the work is numpy: ordering, grouping and every row id's var-len bytes; Python touches each
distinct key once. pypaimon 2.1.0's writer gives the same bytes for the same sorted input
(tests/test_btree_global_index.py), with `java_null_bitmap=False` (see the spec's doc).
"""

from __future__ import annotations

import array
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyroaring import BitMap64

from paimon_schema.runtime import varlen
from paimon_schema.runtime.crc import crc32
from paimon_schema.layouts.bitmap_index.javaorder import binary_string_hashes
from paimon_schema.layouts.btree_global_index.bloom import build_bloom
from paimon_schema.layouts.btree_global_index.keys import BTreeKeys, btree_keys, float_orders
from paimon_schema.layouts.btree_global_index.sst import ALIGNED, FOOTER, MAGIC, UNALIGNED, VERSION
from paimon_schema.layouts.column_values import Column, column_values
from paimon_schema.layouts.global_index_meta import SortedIndexFileMeta
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

DEFAULT_BLOCK_SIZE = 64 * 1024     # btree-index.block-size
BLOOM_FPP = 0.05                   # pypaimon's _BLOOM_FILTER_FPP
_U4 = struct.Struct("<I")
_VARINT_1 = [bytes([i]) for i in range(128)]


@dataclass(frozen=True)
class BTreeIndexFile:
    """A written file: its bytes and what the index manifest records of it."""

    data: bytes
    row_count: int                  # rows written, nulls included
    first_key: bytes | None         # least key's bytes, None if every row was null
    last_key: bytes | None
    has_nulls: bool

    @property
    def index_meta(self) -> bytes:
        """The `SortedIndexFileMeta` bytes (the manifest's `_INDEX_META`)."""
        return SortedIndexFileMeta(self.first_key, self.last_key, self.has_nulls).to_bytes()


def write_btree_global_index(data_type: str | DataType, values: Iterable[Any] | Any, *,
                             block_size: int = DEFAULT_BLOCK_SIZE, bloom_filter: bool = False,
                             java_null_bitmap: bool = True) -> BTreeIndexFile:
    """The btree global index of a column: `values` one per row (row id = position; None =
    null), as a list, numpy, pyarrow or pandas column.

    `bloom_filter` adds pypaimon's optional filter (Java's writer never does).
    `java_null_bitmap` run-optimizes the null bitmap as Java does; False keeps pyroaring's
    containers, as pypaimon does. SchemaError for values that do not fit the type, for a type
    the index does not support, and for an empty column (Java refuses to write one).
    """
    keys = btree_keys(data_type)
    if block_size < 1:
        raise SchemaError(f"block_size must be positive, not {block_size}")
    column = column_values(keys.data_type, values)
    if column.num_rows == 0:
        raise SchemaError("a btree global index needs at least one row (Java never writes an empty one)")
    key_bytes, row_ids, group_ends, nulls = _groups(keys, column)
    return _write(key_bytes, row_ids, group_ends, nulls, column.num_rows, block_size, bloom_filter,
                  java_null_bitmap)


def _groups(keys: BTreeKeys, column: Column) -> tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys' bytes in key order, row ids sorted by (key, row id), end of each key's
    run in them, null row ids)."""
    valid = np.ones(column.num_rows, bool) if column.valid is None else column.valid
    rows = np.flatnonzero(valid).astype(np.uint64)
    nulls = np.flatnonzero(~valid).astype(np.uint64)
    root = keys.data_type.root
    if column.numbers is not None and root not in ("FLOAT", "DOUBLE"):
        numbers = column.numbers.astype(np.int64)
        if keys.width is None:          # TIMESTAMP(p > 3): millis + nanos, ordered as micros
            return _generic(keys, numbers.tolist(), rows, nulls)
        order = np.argsort(numbers, kind="stable")
        sorted_keys = numbers[order]
        ends = _run_ends(sorted_keys)
        distinct = sorted_keys[ends - 1]
        fmt = {1: "<i1", 2: "<i2", 4: "<i4", 8: "<i8"}[keys.width]
        blob = distinct.astype(fmt).tobytes()
        w = keys.width
        return [blob[i:i + w] for i in range(0, len(blob), w)], rows[order], ends, nulls
    if column.numbers is not None and root in ("FLOAT", "DOUBLE"):
        width = 4 if root == "FLOAT" else 8
        with np.errstate(over="ignore"):     # FLOAT rounds as Java's (float) cast: overflow is infinity
            floats = column.numbers.astype(np.float32 if width == 4 else np.float64)
        bits = floats.view(np.uint32 if width == 4 else np.uint64).astype(np.uint64)
        bits[np.isnan(floats)] = 0x7FC00000 if width == 4 else 0x7FF8000000000000   # floatToIntBits
        order_key = float_orders(bits, width)
        order = np.argsort(order_key, kind="stable")
        ends = _run_ends(order_key[order])
        distinct_bits = bits[order][ends - 1]
        blob = distinct_bits.astype("<u4" if width == 4 else "<u8").tobytes()
        return [blob[i:i + width] for i in range(0, len(blob), width)], rows[order], ends, nulls
    if column.strings is not None and keys.data_type.is_string:
        codes, encoded = column.strings
        ranking = sorted(range(len(encoded)), key=encoded.__getitem__)
        rank = np.empty(len(encoded), np.int64)
        rank[ranking] = np.arange(len(encoded))
        order_key = rank[codes]
        order = np.argsort(order_key, kind="stable")
        ends = _run_ends(order_key[order])
        return [encoded[i] for i in ranking], rows[order], ends, nulls
    return _generic(keys, column.python_rows(), None, None)


def _generic(keys: BTreeKeys, present: list[Any], rows: np.ndarray | None, nulls: np.ndarray | None
             ) -> tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray]:
    """The per-value path: `present` are the non-null internal values of `rows` or, when
    `rows` is None, every row's plain Python value (None = null)."""
    if rows is None:
        null_rows = [i for i, v in enumerate(present) if v is None]
        pairs = [(keys.order(v), i, keys.encode(v)) for i, v in enumerate(present) if v is not None]
        nulls = np.array(null_rows, np.uint64)
    else:
        pairs = [(keys.order_internal(v), int(r), keys.encode_internal(v)) for v, r in zip(present, rows.tolist())]
    assert nulls is not None
    pairs.sort(key=lambda p: (p[0], p[1]))
    distinct: list[bytes] = []
    ends: list[int] = []
    previous = object()
    for n, (order, _, key) in enumerate(pairs):
        if order != previous:
            if distinct:
                ends.append(n)
            distinct.append(key)
            previous = order
    if pairs:
        ends.append(len(pairs))
    return distinct, np.array([p[1] for p in pairs], np.uint64), np.array(ends, np.int64), nulls


def _run_ends(sorted_keys: np.ndarray) -> np.ndarray:
    """End (exclusive) of each run of equal values."""
    if len(sorted_keys) == 0:
        return np.zeros(0, np.int64)
    return np.r_[np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1, len(sorted_keys)].astype(np.int64)


def varints(values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Every value's `writeVarLenLong` bytes, concatenated, and the end of each."""
    v = values.astype(np.uint64)
    sizes = np.ones(len(v), np.int64)
    for k in range(1, 10):
        sizes += v >= np.uint64(1 << (7 * k))
    ends = np.cumsum(sizes)
    out = np.empty(int(ends[-1]) if len(ends) else 0, np.uint8)
    starts = ends - sizes
    for k in range(int(sizes.max()) if len(sizes) else 0):
        at = np.flatnonzero(sizes > k)
        byte = (v[at] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = sizes[at] > k + 1
        out[starts[at] + k] = (byte | (more.astype(np.uint64) << np.uint64(7))).astype(np.uint8)
    return out.tobytes(), ends


def _write(key_bytes: list[bytes], row_ids: np.ndarray, group_ends: np.ndarray, nulls: np.ndarray,
           row_count: int, block_size: int, bloom_filter: bool, java_null_bitmap: bool) -> BTreeIndexFile:
    ids_blob, id_ends = varints(row_ids)
    out = bytearray()
    index_entries: list[bytes] = []
    block = _BlockWriter()
    group_starts = np.r_[0, group_ends[:-1]] if len(group_ends) else group_ends
    byte_starts = np.r_[0, id_ends[:-1]] if len(id_ends) else id_ends
    first_bytes = byte_starts[group_starts].tolist() if len(group_ends) else []
    last_bytes = id_ends[group_ends - 1].tolist() if len(group_ends) else []
    counts = (group_ends - group_starts).tolist()
    last_key = b""
    for key, count, lo, hi in zip(key_bytes, counts, first_bytes, last_bytes):
        count_bytes = _VARINT_1[count] if count < 128 else varlen.encode(count)
        value_len = len(count_bytes) + hi - lo
        len_key = len(key)
        block.add(b"".join((_VARINT_1[len_key] if len_key < 128 else varlen.encode(len_key), key,
                            _VARINT_1[value_len] if value_len < 128 else varlen.encode(value_len),
                            count_bytes, ids_blob[lo:hi])))
        last_key = key
        if block.memory() > block_size:
            index_entries.append(_handle_entry(last_key, *_write_block(out, block)))
    if block.size():
        index_entries.append(_handle_entry(last_key, *_write_block(out, block)))
    null_handle = (0, 0)
    if len(nulls):
        bitmap = BitMap64()     # filled by `update`: the constructor picks run containers itself
        bitmap.update(array.array("Q", nulls.astype(np.uint64).tobytes()))
        if java_null_bitmap:
            bitmap.run_optimize()
        serialized = bitmap.serialize()
        null_handle = (len(out), len(serialized))
        out += serialized + _U4.pack(crc32(serialized))
    bloom_handle = (0, 0, 0)
    if bloom_filter and key_bytes:
        bits = build_bloom(binary_string_hashes(key_bytes).tolist(), BLOOM_FPP)
        bloom_handle = (len(out), len(bits), len(key_bytes))
        out += bits
    index = _BlockWriter()
    for entry in index_entries:
        index.add(entry)
    index_handle = _write_block(out, index)
    out += FOOTER.pack(*bloom_handle, *index_handle, *null_handle, VERSION, MAGIC)
    return BTreeIndexFile(bytes(out), row_count, key_bytes[0] if key_bytes else None,
                          key_bytes[-1] if key_bytes else None, bool(len(nulls)))


class _BlockWriter:
    """`BlockWriter`: entries, then all their sizes if equal (aligned) or their starts."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.entries: list[bytes] = []
        self.length = 0
        self.aligned_size = 0
        self.aligned = True

    def add(self, entry: bytes) -> None:
        self.entries.append(entry)
        self.length += len(entry)
        if self.aligned:
            if self.aligned_size == 0:
                self.aligned_size = len(entry)
            else:
                self.aligned = self.aligned_size == len(entry)

    def size(self) -> int:
        return len(self.entries)

    def memory(self) -> int:
        return self.length + 5 + (0 if self.aligned else 4 * len(self.entries))

    def finish(self) -> bytes:
        body = b"".join(self.entries)
        if self.entries and self.aligned:
            return body + _U4.pack(self.aligned_size) + bytes([ALIGNED])
        sizes = np.fromiter((len(e) for e in self.entries), np.int64, len(self.entries))
        starts = (np.cumsum(sizes) - sizes).astype("<u4").tobytes()
        return body + starts + _U4.pack(len(self.entries)) + bytes([UNALIGNED])


def _write_block(out: bytearray, block: _BlockWriter) -> tuple[int, int]:
    """Append a finished block and its trailer (uncompressed, CRC32); its handle."""
    data = block.finish()
    offset = len(out)
    out += data
    out.append(0)
    out += _U4.pack(crc32(data + b"\x00"))
    block.reset()
    return offset, len(data)


def _handle_entry(last_key: bytes, offset: int, size: int) -> bytes:
    value = varlen.encode(offset) + varlen.encode(size)
    return varlen.encode(len(last_key)) + last_key + varlen.encode(len(value)) + value
