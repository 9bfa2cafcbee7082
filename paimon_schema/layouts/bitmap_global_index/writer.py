"""The writers: version 1 as pypaimon 2.1.0's `BitmapIndexWriter` (or, run-optimized, Java's
`BitmapGlobalIndexWriter`), version 2 as Java's `SortedBitmapGlobalIndexWriter`. Columns are
typed in bulk (`column_values`) and grouped by the bitmap index's hash kernel."""

from __future__ import annotations

import math
import struct
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyroaring import BitMap, BitMap64

from paimon_schema.runtime import varlen
from paimon_schema.runtime.crc import crc32
from paimon_schema.layouts.bitmap_global_index.blocks import (COMPRESSION_NONE, FOOTER, LOGICAL_KEY_ORDER, MAGIC,
                                                              SERIALIZED_KEY_ORDER, VERSIONS)
from paimon_schema.layouts.bitmap_global_index.keys import GlobalKeys
from paimon_schema.layouts.bitmap_index.row_groups import group_rows
from paimon_schema.layouts.column_values import Column, column_values
from paimon_schema.layouts.global_index_meta import SortedIndexFileMeta
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

DEFAULT_BLOCK_SIZE = 16 * 1024       # bitmap-index.dictionary-block-size


@dataclass(frozen=True)
class BitmapIndexFile:
    """A written file: its bytes and what the index manifest records of it."""

    data: bytes
    row_count: int                  # rows written, nulls included
    meta: SortedIndexFileMeta       # typed least and greatest key, whether there are nulls

    @property
    def index_meta(self) -> bytes:
        """The manifest's `_INDEX_META` bytes."""
        return self.meta.to_bytes()


def write_bitmap_global_index(data_type: str | DataType, values: Iterable[object], *,
                              version: int = SERIALIZED_KEY_ORDER,
                              dictionary_block_size: int = DEFAULT_BLOCK_SIZE,
                              run_optimize: bool | None = None) -> bytes:
    """The file for `values` (row id = position, None = NULL); b"" for an empty column (every
    writer writes no file). See `build_bitmap_global_index`."""
    built = build_bitmap_global_index(data_type, values, version=version,
                                      dictionary_block_size=dictionary_block_size, run_optimize=run_optimize)
    return b"" if built is None else built.data


def build_bitmap_global_index(data_type: str | DataType, values: Iterable[object], *,
                              version: int = SERIALIZED_KEY_ORDER,
                              dictionary_block_size: int = DEFAULT_BLOCK_SIZE,
                              run_optimize: bool | None = None) -> BitmapIndexFile | None:
    """The file for `values` (row id = position, None = NULL) with its manifest metadata, or
    None for an empty column: version 1 as pypaimon 2.1.0's `BitmapIndexWriter` writes it,
    version 2 as Java's `SortedBitmapGlobalIndexWriter`. `run_optimize` (default: for version 2
    only) runs Roaring's `runOptimize` on every bitmap as Java's writers do; with it, version 1
    is Java's `BitmapGlobalIndexWriter` output."""
    if version not in VERSIONS:
        raise SchemaError(f"bitmap global index version must be 1 or 2, not {version!r}")
    if dictionary_block_size <= 0:
        raise SchemaError("bitmap-index.dictionary-block-size must be positive")
    keys = GlobalKeys.of(data_type)
    column = column_values(keys.data_type, values)
    if column.num_rows == 0:
        return None
    grouped = _grouped_numbers(keys, column) if column.numbers is not None and \
        keys.data_type.root not in ("FLOAT", "DOUBLE") else \
        _grouped_strings(column) if column.strings is not None else None
    groups, nulls = grouped if grouped is not None else _grouped_rows(keys, column.python_rows())
    typed = sorted(groups, key=keys.order)
    order = sorted(groups) if version == SERIALIZED_KEY_ORDER else typed
    optimize = version == LOGICAL_KEY_ORDER if run_optimize is None else run_optimize
    data = _layout([(k, groups[k]) for k in order], nulls, column.num_rows, version, dictionary_block_size,
                   optimize)
    meta = SortedIndexFileMeta(typed[0] if typed else None, typed[-1] if typed else None, len(nulls) > 0)
    return BitmapIndexFile(data, column.num_rows, meta)


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
        entry = varlen.encode(len(key)) + key + varlen.encode(ofs) + varlen.encode(length)
        if block and len(varlen.encode(len(block) + 1)) + block_size_now + len(entry) > block_size:
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
    index = _append_block(out, [varlen.encode(len(k)) + k + varlen.encode(o) + varlen.encode(n) for k, o, n in refs])
    out += FOOTER.pack(*heads[0], *heads[1], *index, len(groups), version, MAGIC)
    return bytes(out)


def _append(out: bytearray, data: bytes) -> tuple[int, int]:
    offset = len(out)
    out += data
    return offset, len(data)


def _append_block(out: bytearray, entries: list[bytes]) -> tuple[int, int]:
    payload = varlen.encode(len(entries)) + b"".join(entries)
    offset, length = _append(out, payload)
    out.append(COMPRESSION_NONE)
    out += struct.pack("<I", crc32(payload + bytes([COMPRESSION_NONE])))
    return offset, length
