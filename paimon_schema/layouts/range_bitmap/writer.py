"""Range-bitmap file indexes (formats/range_bitmap.ksy): the writer.

Writing follows `RangeBitmapFileIndex.Writer`: distinct keys get codes in key order, the
dictionary packs them into chunks of at most `chunk-size` key bytes (the first key of a chunk
sits in its header for free), and the bit-sliced index stores each row's code.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from functools import cache
from typing import Any, NamedTuple, cast

import numpy as np

from paimon_schema.generated import range_bitmap_codec
from paimon_schema.layouts.bitmap_index.row_groups import number_rows
from paimon_schema.layouts.column_values import Column, column_values
from paimon_schema.layouts.paimon_common import (
    KEY_DTYPES,
    KeyCodec,
    KeyKind,
    byte_order,
    key_model,
    range_bitmap_keys,
    string_keys,
)
from paimon_schema.layouts.range_bitmap.scan import Key
from paimon_schema.layouts.roaring_writer import column_slices
from paimon_schema.values import options, types
from paimon_schema.values.positions import fresh_bitmap
from paimon_schema.values.types import DataType

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: the codes by hash table or sort
    _kernels = None  # type: ignore[assignment]

#: `KeyFactory.defaultChunkSize`: one key per chunk for the 1- and 2-byte kinds.
DEFAULT_CHUNK_SIZE = {KeyKind.boolean: 0, KeyKind.int8: 0, KeyKind.int16: 0}
CHUNK_SIZE = 16 * 1024
#: Distinct keys in Java's order: a list, or an int64 array for the integer kinds.
Keys = list[Key] | np.ndarray


class Codes(NamedTuple):
    """Each non-null row's code, as the fast writer keeps them: no array of a code per row."""

    inner: np.ndarray            # integers per non-null row: its code, or its index in `table`
    valid: np.ndarray | None     # bool per row; None: no NULL
    table: np.ndarray | None     # int64: the code of `inner - offset`; None: `inner` are codes
    num_rows: int
    offset: int = 0


def _present_codes(codes: np.ndarray) -> Codes:
    """`Codes` of each row's code (-1 for NULL)."""
    valid = codes >= 0
    if valid.all():
        return Codes(codes, None, None, len(codes))
    return Codes(codes[valid], valid, None, len(codes))


def build_range_bitmap(data_type: str | DataType, values: Iterable[Any], *,
                       chunk_size: int | str | None = None) -> bytes:
    """The blob Java's range-bitmap writer writes for `values` (None = null), one row each.

    The fast writer: keys and codes with numpy where the column allows (`_vector_codes`,
    else one row at a time as `write_with_codec`), then every header, chunk and slice table
    with `struct`/numpy. `write_with_codec` is the reference; Hypothesis proves them equal.
    """
    codec = range_bitmap_keys(data_type)
    limit = _chunk_limit(codec, chunk_size)
    column = column_values(codec.data_type, values)
    coded = _vector_codes(codec, column)
    if coded is None:
        row_keys, row_codes = _row_codes(codec, column.python_rows())
        coded = row_keys, _present_codes(row_codes)
    keys, codes = coded
    dictionary = _dictionary_bytes(codec, keys, limit)
    bsi = _bsi_bytes(codes, len(keys))
    bounds = _key_bytes(codec, keys[:1]) + _key_bytes(codec, keys[-1:]) if len(keys) else b""
    header = struct.pack(">bii", 1, codes.num_rows, len(keys)) + bounds + struct.pack(">i", len(dictionary))
    return struct.pack(">i", len(header)) + header + dictionary + bsi


def write_with_codec(data_type: str | DataType, values: Iterable[Any], *,
                     chunk_size: int | str | None = None) -> bytes:
    """The blob through the generated Construct codec, one row at a time: the reference."""
    codec = range_bitmap_keys(data_type)
    limit = _chunk_limit(codec, chunk_size)
    keys, codes = _row_codes(codec, values)
    dictionary = _dictionary_model(codec, keys, limit)
    bsi = _bsi_model(codes, len(keys))
    header: dict[str, Any] = {"version": 1, "num_rows": len(codes), "num_keys": len(keys),
              "min_key": _key(codec, keys[0]) if keys else None,
              "max_key": _key(codec, keys[-1]) if keys else None,
              "len_dictionary": _dictionary_length(dictionary)}
    fixed = 1 + 4 + 4 + 4 + (codec.size(keys[0]) + codec.size(keys[-1]) if keys else 0)
    # Positions the codec reads forward (Kaitai's lazy marks), known once the sizes are.
    dictionary_start = 4 + fixed
    dictionary["chunk_headers_mark"] = {"ofs": 17 + dictionary["len_offsets"]}    # in its substream
    bsi["ebm_mark"] = {"ofs": dictionary_start + header["len_dictionary"] + 4 + bsi["len_header"]}
    model = {"len_header": fixed, "header": header, "dictionary_mark": {"ofs": dictionary_start},
             "dictionary": dictionary, "bsi": bsi}
    return _codec(int(codec.kind)).build(model)


def _chunk_limit(codec: KeyCodec, chunk_size: int | str | None) -> int:
    return options.memory_size(chunk_size) if chunk_size is not None else \
        DEFAULT_CHUNK_SIZE.get(codec.kind, CHUNK_SIZE)


def _row_codes(codec: KeyCodec, values: Iterable[Any]) -> tuple[list[Key], np.ndarray]:
    """(distinct keys in Java's order, each row's code or -1 for null), one row at a time."""
    first_key: dict[Any, Key] = {}          # Java's TreeMap keeps the first key of equal ones
    row_orders: list[Any] = []
    for value in values:
        if value is None:
            row_orders.append(None)
            continue
        key = codec.encode(value)
        order = codec.order(key)
        first_key.setdefault(order, key)
        row_orders.append(order)
    orders = sorted(first_key)
    code_of = {order: code for code, order in enumerate(orders)}
    codes = np.array([-1 if o is None else code_of[o] for o in row_orders], dtype=np.int64)
    return [first_key[o] for o in orders], codes


@cache
def _codec(kind: int) -> Any:
    return range_bitmap_codec.t_range_bitmap(kind).compile()


def _key(codec: KeyCodec, key: Key) -> dict[str, Any]:
    return key_model(codec.kind, key)


def _dictionary_model(codec: KeyCodec, keys: list[Key], limit: int) -> dict[str, Any]:
    """`ChunkedDictionary.Appender`: chunks of consecutive codes (formats/range_bitmap.ksy `chunked_dictionary`)."""
    variable = codec.kind == KeyKind.string
    chunks: list[tuple[int, list[Key]]] = []          # (code of the first key, keys)
    used = 0
    for code, key in enumerate(keys):
        size = codec.size(key)
        if chunks:
            num_others = len(chunks[-1][1]) - 1
            if size <= limit - used and (not variable or 4 <= limit - 4 * num_others):
                chunks[-1][1].append(key)
                used += size
                continue
        chunks.append((code, [key]))
        used = 0
    models, ofs_chunk, ofs_keys = [], 0, 0
    for code, (first, *others) in chunks:
        len_keys = sum(codec.size(k) for k in others)
        header = {"version": 1, "first_key": _key(codec, first), "code": code,
                  "ofs_keys": ofs_keys, "num_keys": len(others),
                  "len_offsets": 4 * len(others) if variable else None, "len_keys": len_keys,
                  "len_fixed_key": None if variable else codec.size(first)}
        blob: dict[str, Any] = {"keys": [_key(codec, k) for k in others]}
        if variable:
            blob["ofs_keys"] = [sum(codec.size(k) for k in others[:i]) for i in range(len(others))]
        models.append({"ofs_chunk": ofs_chunk, "header": header, "keys": blob})
        ofs_chunk += 1 + codec.size(first) + 5 * 4   # code, ofs, num, two lengths
        ofs_keys += len_keys + (4 * len(others) if variable else 0)
    return {"len_header": 13, "version": 1, "num_chunks": len(models),
            "len_offsets": 4 * len(models), "len_chunks": ofs_chunk, "chunks": models,
            "chunk_headers_mark": {}}


def _dictionary_length(dictionary: dict[str, Any]) -> int:
    key_region = sum(c["header"]["len_keys"] + (c["header"]["len_offsets"] or 0)
                     for c in dictionary["chunks"])
    return 4 + 13 + dictionary["len_offsets"] + dictionary["len_chunks"] + key_region


def _num_slices(num_keys: int) -> int:
    return max((num_keys - 1).bit_length(), 1) if num_keys else 64   # Java's n-1 = -1 quirk


def _slice_rows(codes: np.ndarray, present: np.ndarray, i: int) -> np.ndarray:
    return np.flatnonzero(present & ((codes >> i) & 1 == 1)) if i < 63 else np.zeros(0, np.int64)


def _bsi_model(codes: np.ndarray, num_keys: int) -> dict[str, Any]:
    """`BitSliceIndexBitmap.Appender`: slice i holds the rows whose code has bit i set."""
    num_slices = _num_slices(num_keys)
    present = codes >= 0
    ebm = fresh_bitmap(np.flatnonzero(present)).serialize()
    slices, offset = [], 0
    for i in range(num_slices):
        bitmap = fresh_bitmap(_slice_rows(codes, present, i)).serialize()
        slices.append({"ofs_bitmap": offset, "len_bitmap": len(bitmap), "bitmap": bitmap})
        offset += len(bitmap)
    header = {"version": 1, "num_slices": num_slices, "len_ebm": len(ebm),
              "len_indexes": 8 * num_slices, "slices": slices}
    return {"len_header": 10 + 8 * num_slices, "header": header, "ebm_mark": {}, "ebm": ebm}


# ---------------------------------------------------------------------------------------------
# The fast writer's parts

def _vector_codes(codec: KeyCodec, column: Any) -> tuple[Keys, Codes] | None:
    """`_row_codes` with numpy for typed columns (`column_values`, which `column` is made
    into if it is not one); None where it declines (then `_row_codes` goes row by row and
    reports any error)."""
    if not isinstance(column, Column):
        column = column_values(codec.data_type, column)
    if column.strings is not None:
        return _string_codes(column.strings, column.valid, column.num_rows)
    if column.numbers is None:
        return None
    return _array_codes(codec, column.numbers, column.valid)


def _array_codes(codec: KeyCodec, array: np.ndarray, valid: np.ndarray | None
                 ) -> tuple[Keys, Codes] | None:
    """Codes of the non-null values in `array` (`valid` marks the non-null rows; None: all);
    integer keys stay an int64 array (a million keys as Python ints cost more than the sort)."""
    kind, letter = codec.kind, array.dtype.kind
    num_rows = len(array) if valid is None else len(valid)
    keys_: Keys
    table = None
    if not len(array):
        keys_, inner = [], np.zeros(0, np.int64)
    elif kind == KeyKind.string:
        return None
    elif kind == KeyKind.boolean:
        if letter != "b":
            return None
        distinct, inner = np.unique(array.astype(np.int64), return_inverse=True)
        keys_ = distinct.tolist()
    elif kind in (KeyKind.float32, KeyKind.float64):
        if letter != "f":
            return None
        keys_, inner = _float_codes(codec, array)
    else:
        if letter not in "iu":
            return None
        low, high = types.INTEGER_BOUNDS.get(codec.data_type.root, (types.INT64_MIN, types.INT64_MAX))
        least, most = int(array.min()), int(array.max())
        if least < low or most > high:
            return None
        if letter == "i" and _kernels is not None and most - least < max(len(array), 1 << 16):
            keys_, table = _span_codes(array, least, most)
            return keys_, Codes(array, valid, table, num_rows, least)
        keys_, inner, table = _unique_codes(array.astype(np.int64, copy=False))
    return keys_, Codes(inner.ravel(), valid, table, num_rows)


def _span_codes(array: np.ndarray, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (int64, ascending) of signed integers spanning fewer integers than
    there are rows (or 65536), and each value's code as a table over `low .. high`: which
    values occur by one compiled pass (`kernels.c` value_presence), their codes by a running
    count over the span. No sort of the column, no hash per row; the slices take the table."""
    present = np.frombuffer(_kernels.value_presence(np.ascontiguousarray(array), array.dtype.itemsize, low,
                                                    high - low + 1), bool)
    return np.flatnonzero(present) + low, np.cumsum(present, dtype=np.int64) - 1


def _unique_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """`np.unique(values, return_inverse=True)` of int64 values, the inverse as (inner, table):
    each value's code is `table[inner]` (None: `inner`). With few distinct values, as the
    bitmap writer groups them (the compiled hash table numbers the rows' keys in order of
    first occurrence: no sort of the column, only of its distinct keys, whose ranks are the
    table); else by one sort of `value - min` and the row packed in a uint64 (SIMD), where
    the span leaves room for the rows: numpy's unique argsorts, twice the time for a million
    rows."""
    count = len(values)
    numbered = number_rows(values.view(np.uint64)) if count else None
    if numbered is not None:
        codes, distinct = numbered
        signed = distinct.view(np.int64)
        order = np.argsort(signed)
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        return signed[order], codes, rank
    low = int(values.min())
    row_bits = max(1, (count - 1).bit_length())
    if (int(values.max()) - low).bit_length() + row_bits > 64:
        distinct, inverse = np.unique(values, return_inverse=True)
        return distinct, inverse, None
    packed = ((values.view(np.uint64) - np.uint64(low % 2**64)) << np.uint64(row_bits)) \
        | np.arange(count, dtype=np.uint64)
    packed.sort()
    ordered = packed >> np.uint64(row_bits)
    first = np.empty(count, bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    codes = np.empty(count, np.int64)
    codes[(packed & np.uint64((1 << row_bits) - 1)).astype(np.int64)] = np.cumsum(first) - 1
    return (ordered[first] + np.uint64(low % 2**64)).view(np.int64), codes, None


def _float_codes(codec: KeyCodec, array: np.ndarray) -> tuple[list[Key], np.ndarray]:
    """Float keys are raw bits (formats/paimon_common.ksy `key`) ordered by `compareTo` (-0.0 < 0.0, every NaN one key
    after +inf); of equal keys the TreeMap keeps the first, which matters for NaN payloads."""
    width = 32 if codec.kind == KeyKind.float32 else 64
    with np.errstate(over="ignore"):
        floats = array.astype(np.float32 if width == 32 else np.float64)
    bits = floats.view(np.uint32 if width == 32 else np.uint64).astype(np.uint64)
    sign = np.uint64(1 << (width - 1))
    magnitude = (bits & (sign - np.uint64(1))).view(np.int64)
    nan = np.isnan(array)
    order = np.where(nan, np.iinfo(np.int64).max, np.where(bits & sign, -magnitude - 1, magnitude))
    distinct, first, inner = np.unique(order, return_index=True, return_inverse=True)
    keys_ = bits[first].tolist()
    if nan.any():       # the first NaN as `KeyCodec.encode` gives it (a Python float's bits)
        keys_[-1] = codec.encode(array[first[-1]])
    return keys_, inner


def _string_codes(strings: tuple[np.ndarray, list[bytes]], valid: np.ndarray | None, num_rows: int
                  ) -> tuple[list[Key], Codes]:
    """Strings by code (`Column.strings`), then by rank of their bytes (the table). Compiled,
    the sorted keys come with their order (`kernels.c` sorted_keys): gathered in Python, a
    million keys lying all over the heap took 0.15 s."""
    inner, encoded = strings
    keys_: list[Key]
    if _kernels is not None:
        order, sorted_ = _kernels.sorted_keys(encoded)
        ranked, keys_ = np.frombuffer(order, np.int64), cast(list[Key], sorted_)
    else:
        ranked = byte_order(encoded)
        keys_ = [encoded[i] for i in ranked.tolist()]
    rank = np.empty(len(encoded), np.int64)
    rank[ranked] = np.arange(len(ranked))
    return keys_, Codes(inner, valid, rank, num_rows)


def _key_bytes(codec: KeyCodec, keys_: Keys) -> bytes:
    """Keys encoded back to back (formats/paimon_common.ksy `key`)."""
    if codec.kind == KeyKind.string:
        return _string_records(string_keys(list(keys_)))[0].tobytes()
    return np.array(keys_, dtype=KEY_DTYPES[codec.kind].replace(">", "=")).astype(KEY_DTYPES[codec.kind]).tobytes()


def _dictionary_bytes(codec: KeyCodec, keys_: Keys, limit: int) -> bytes:
    """`_dictionary_model` as bytes (formats/range_bitmap.ksy `chunked_dictionary`), with numpy for fixed-size keys."""
    count_ = len(keys_)
    if codec.kind != KeyKind.string:
        size = codec.size(0)
        firsts = np.arange(0, count_, 1 + max(limit, 0) // size, dtype=np.int64)
        others = np.diff(np.append(firsts, count_)) - 1
        header = np.dtype([("version", "u1"), ("key", KEY_DTYPES[codec.kind]), ("code", ">i4"),
                           ("ofs_keys", ">i4"), ("num_keys", ">i4"), ("len_keys", ">i4"),
                           ("len_fixed", ">i4")])
        key_array = np.array(keys_, dtype=KEY_DTYPES[codec.kind].replace(">", "="))
        chunks = np.empty(len(firsts), header)
        chunks["version"] = 1
        chunks["key"] = key_array[firsts] if count_ else np.zeros(0)
        chunks["code"] = firsts
        chunks["ofs_keys"] = (np.cumsum(others) - others) * size
        chunks["num_keys"] = others
        chunks["len_keys"] = others * size
        chunks["len_fixed"] = size
        rest = np.ones(count_, bool)
        rest[firsts] = False
        key_region = key_array[rest].astype(KEY_DTYPES[codec.kind]).tobytes() if count_ else b""
        offsets = (np.arange(len(firsts), dtype=np.int64) * header.itemsize).astype(">i4")
        chunk_bytes = chunks.tobytes()
    else:
        strings = string_keys(list(keys_))
        records, sizes = _string_records(strings)
        firsts = _string_chunk_starts(sizes - 4, limit)
        starts = np.cumsum(sizes) - sizes
        ends = np.append(firsts[1:], count_)
        others = ends - firsts - 1
        record_bytes = np.append(starts, len(records))[ends] - starts[firsts] - sizes[firsts]
        blob_sizes = 4 * others + record_bytes
        heads, head_sizes = _string_records([strings[i] for i in firsts.tolist()], b"\x01",
                                            firsts, np.cumsum(blob_sizes) - blob_sizes, others,
                                            4 * others, record_bytes)
        offsets = (np.cumsum(head_sizes) - head_sizes).astype(">i4")
        chunk_bytes = heads.tobytes()
        # Each chunk's blob: its other keys' offsets (from its first other key), then their
        # records, which are contiguous in `records`.
        rest = np.ones(count_, bool)
        rest[firsts] = False
        chunk_of = np.repeat(np.arange(len(firsts)), ends - firsts)[rest]
        base = (starts[firsts] + sizes[firsts])[chunk_of]
        if len(firsts) * 16 <= count_:       # chunks of many keys: two slices each, joined
            key_region = _joined_blobs((starts[rest] - base).astype(">i4").tobytes(), records.data, others,
                                       starts[firsts] + sizes[firsts], record_bytes)
        else:
            key_region = _scattered_blobs(records, starts, sizes, firsts, rest, chunk_of, base, others,
                                          blob_sizes)
    body = struct.pack(">biii", 1, len(offsets), 4 * len(offsets), len(chunk_bytes))
    return struct.pack(">i", 13) + body + offsets.tobytes() + chunk_bytes + key_region


def _joined_blobs(relative: bytes, records: memoryview, others: np.ndarray, record_starts: np.ndarray,
                  record_bytes: np.ndarray) -> bytes:
    """The chunks' blobs (`_dictionary_bytes`) joined from slices: each chunk's `others`
    offsets (`relative`, big-endian int32, chunk after chunk), then its `record_bytes` bytes
    of `records` from `record_starts`. A few thousand slices where the byte-wise scatter
    indexed every byte of a million keys."""
    offsets, records = memoryview(relative), memoryview(records).cast("B")
    parts = []
    at = 0
    for length, start, size in zip((4 * others).tolist(), record_starts.tolist(), record_bytes.tolist()):
        parts.append(offsets[at:at + length])
        parts.append(records[start:start + size])
        at += length
    return b"".join(parts)


def _scattered_blobs(records: np.ndarray, starts: np.ndarray, sizes: np.ndarray, firsts: np.ndarray,
                     rest: np.ndarray, chunk_of: np.ndarray, base: np.ndarray, others: np.ndarray,
                     blob_sizes: np.ndarray) -> bytes:
    """`_joined_blobs` by one byte-wise scatter, for chunks of few keys each."""
    blob_starts = np.cumsum(blob_sizes) - blob_sizes
    region = np.empty(int(blob_sizes.sum()), np.uint8)
    position = np.flatnonzero(rest) - firsts[chunk_of] - 1           # among the chunk's others
    at = blob_starts[chunk_of] + 4 * position
    region[at[:, None] + np.arange(4)] = (starts[rest] - base).astype(">i4").view(np.uint8).reshape(-1, 4)
    source = _ranges(starts[rest], sizes[rest])
    target = _ranges(blob_starts[chunk_of] + 4 * others[chunk_of] + starts[rest] - base, sizes[rest])
    region[target] = records[source]
    return region.tobytes()


def _string_chunk_starts(lengths: np.ndarray, limit: int) -> np.ndarray:
    """The first key of each chunk, of keys of `lengths` bytes (int64): after its free first
    key a chunk takes keys while their encoded sizes fit `limit` and their 4-byte offsets do
    too (formats/range_bitmap.ksy `chunked_dictionary`)."""
    most = max(limit, 0) // 4
    if not len(lengths) or not most:
        return np.arange(len(lengths), dtype=np.int64)
    ends = np.cumsum(4 + lengths)
    firsts, start = [], 0
    while start < len(lengths):
        firsts.append(start)
        stop = int(np.searchsorted(ends, ends[start] + limit, side="right"))   # keys before stop fit
        start = max(start + 1, min(stop, start + 1 + most))
    return np.array(firsts, np.int64)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices `starts[0] .. starts[0] + counts[0] - 1, starts[1] ...` (int64)."""
    if not len(counts):
        return np.zeros(0, np.int64)
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(starts - (ends - counts), counts)


def _string_records(keys_: list[bytes], prefix: bytes = b"", *columns: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Records `prefix, i32 length, key bytes, i32 columns...` back to back: (bytes as uint8,
    size of each record). Without a prefix by the compiled pass (`kernels.c` string_records),
    else with numpy."""
    count_ = len(keys_)
    if _kernels is not None and not prefix and len(columns) <= 4:     # each key read once, in C
        records, found = _kernels.string_records(keys_ if isinstance(keys_, list) else list(keys_),
                                                 tuple(np.ascontiguousarray(c, np.int64) for c in columns))
        return np.frombuffer(records, np.uint8), 4 + np.frombuffer(found, np.int64) + 4 * len(columns)
    lengths = np.fromiter(map(len, keys_), np.int64, count_)
    head = len(prefix) + 4
    sizes = head + lengths + 4 * len(columns)
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), np.uint8)
    if prefix:
        out[starts[:, None] + np.arange(len(prefix))] = np.frombuffer(prefix, np.uint8)
    out[(starts + len(prefix))[:, None] + np.arange(4)] = lengths.astype(">i4").view(np.uint8).reshape(-1, 4)
    out[_ranges(starts + head, lengths)] = np.frombuffer(b"".join(keys_), np.uint8)
    for i, column in enumerate(columns):
        at = starts + head + lengths + 4 * i
        out[at[:, None] + np.arange(4)] = np.asarray(column, np.int64).astype(">i4").view(np.uint8).reshape(-1, 4)
    return out, sizes


def _bsi_bytes(codes: Codes, num_keys: int) -> bytes:
    """`_bsi_model` as bytes (formats/range_bitmap.ksy `bit_sliced_index`): the existence
    bitmap and slices from one pass over the codes (`column_slices`)."""
    num_slices = _num_slices(num_keys)
    ebm, slices, lengths, _ = column_slices(codes.inner, codes.valid, table=codes.table, offset=codes.offset,
                                            count=num_slices)
    table = np.empty((num_slices, 2), ">i4")
    table[:, 0] = np.cumsum(lengths) - lengths
    table[:, 1] = lengths
    head = struct.pack(">ibbii", 10 + 8 * num_slices, 1, num_slices, len(ebm), 8 * num_slices)
    return head + table.tobytes() + ebm + slices
