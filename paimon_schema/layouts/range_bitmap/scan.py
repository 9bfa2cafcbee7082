"""The range-bitmap index's chunked dictionary (formats/range_bitmap.ksy) as a lookup reads
it: the generated parser (`parse_*`, the specification) and struct/numpy fast paths (`scan_*`,
proven equal in test_fast_lookups.py) that decline wherever the generated parser would fail, so
that it reports the located error.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from paimon_schema.generated.range_bitmap import RangeBitmap
from paimon_schema.layouts.paimon_common import (
    FIXED_SIZES,
    NO_MIN,
    KeyKind,
    raw_key,
    scan_records,
)
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError

Key = int | bytes

# The chunked dictionary as a lookup reads it: generated parser (the specification) and the fast
# path. A lookup reads the dictionary head, ~log2(chunks) chunk headers and one chunk's keys; the
# generated parser costs ~6 ms for the head of 1M INT keys and ~40 ms for one 16 KiB chunk. Each
# `scan_*` returns None exactly where the generated parser fails, which then locates the error.

_DICTIONARY_HEAD = struct.Struct(">iBiii")  # len_header, version, num_chunks, len_offsets, len_chunks
_OFS_NUM_CHUNKS = 5
#: `valid: min` of the `s4`s after a chunk header's first key: code, ofs_keys, num_keys, then
#: len_keys, len_fixed_key (fixed-size keys) or len_offsets, len_keys (strings).
_FIXED_CHUNK_S4S = (0, 0, 0, 0, NO_MIN)
_VARIABLE_CHUNK_S4S = (0, 0, 0, NO_MIN, 0)
#: Where fields start after the first key (version u1, first_key, code, ofs_keys, num_keys).
_AFTER_FIRST_KEY = {"ofs_keys": 5, "num_keys": 9}


@dataclass(frozen=True)
class DictionaryHead:
    """The chunked dictionary's header and chunk offsets, as the generated parser reads them."""

    num_chunks: int
    len_chunks: int
    chunk_offsets: list[int]        # `ofs_chunk` of each chunk
    ofs_chunk_headers: int

    @property
    def ofs_key_region(self) -> int:
        return self.ofs_chunk_headers + self.len_chunks

    def len_chunk_header(self, index: int) -> int:
        """Java slices a chunk header up to the next chunk's offset (the last: `len_chunks`)."""
        end = self.chunk_offsets[index + 1] if index + 1 < self.num_chunks else self.len_chunks
        return end - self.chunk_offsets[index]


@dataclass(frozen=True)
class ChunkHeader:
    """A chunk header as the generated parser reads it (`first_key` as the parser gives it)."""

    first_key: Key
    code: int
    ofs_keys: int
    num_keys: int
    len_key_blob: int


def parse_dictionary_head(dictionary: RangeBitmap.ChunkedDictionary, pos: int) -> DictionaryHead:
    """The generated dictionary (a substream starting at `pos` in the blob) as a
    `DictionaryHead` in blob positions: the reference for the fast path."""
    return DictionaryHead(dictionary.num_chunks, dictionary.len_chunks,
                          [chunk.ofs_chunk for chunk in dictionary.chunks],
                          pos + dictionary.ofs_chunk_headers)


def dictionary_bytes(data: bytes | memoryview, pos: int, size: int) -> memoryview | None:
    """The blob up to the end of the `size`-byte dictionary at `pos` (what the generated
    parser's dictionary substream holds, at blob positions), or None where reading that
    substream fails."""
    if size < 0 or len(data) < pos + size:
        return None
    return memoryview(data)[:pos + size]


def scan_dictionary_head(data: bytes | memoryview, pos: int, size: int) -> DictionaryHead | None:
    """The head of the `size`-byte dictionary at `pos` via struct/numpy, or None exactly where
    the generated parser fails (the chunk count is checked against the dictionary before
    anything is read)."""
    view = dictionary_bytes(data, pos, size)
    if view is None or len(view) < pos + _DICTIONARY_HEAD.size:
        return None
    data = view
    len_header, version, num_chunks, len_offsets, len_chunks = _DICTIONARY_HEAD.unpack_from(data, pos)
    if len_header != 13 or version != 1 or num_chunks < 0 or len_offsets != 4 * num_chunks \
            or len_chunks < 0:
        return None
    pos += _DICTIONARY_HEAD.size
    if num_chunks > (len(data) - pos) // 4:
        return None
    offsets = np.frombuffer(data, ">i4", num_chunks, pos).tolist()
    if num_chunks and min(offsets) < 0:
        return None
    return DictionaryHead(num_chunks, len_chunks, offsets, pos + 4 * num_chunks)


def parse_chunk_header(chunk: RangeBitmap.Chunk, path: str = "") -> ChunkHeader:
    """A chunk's header through the generated parser: the reference for the fast path."""
    header = _instance(chunk, "header", path)
    return ChunkHeader(raw_key(header.first_key), header.code, header.ofs_keys, header.num_keys,
                       header.len_key_blob)


def scan_chunk_header(data: bytes | memoryview, kind: KeyKind, pos: int,
                      size: int) -> ChunkHeader | None:
    """The `size`-byte chunk header at `pos` via struct, or None exactly where the generated
    parser fails; `data` ends where the dictionary ends (`dictionary_bytes`)."""
    if size < 1 or pos + size > len(data) or data[pos] != 1:
        return None
    variable = kind == KeyKind.string
    records = scan_records(bytes(data[pos + 1:pos + size]), kind, 0, 1,
                           _VARIABLE_CHUNK_S4S if variable else _FIXED_CHUNK_S4S)
    if records is None:
        return None
    (first_key,), columns, _ = records
    code, ofs_keys, num_keys, fourth, fifth = (column[0] for column in columns)
    if variable:
        len_offsets, len_keys = fourth, fifth
        if len_offsets != 4 * num_keys:
            return None
        return ChunkHeader(first_key, code, ofs_keys, num_keys, len_offsets + len_keys)
    len_keys, len_fixed_key = fourth, fifth
    if len_fixed_key != FIXED_SIZES[kind] or len_fixed_key * num_keys != len_keys:
        return None
    return ChunkHeader(first_key, code, ofs_keys, num_keys, len_keys)


@dataclass(frozen=True)
class ChunkKeys:
    """A chunk's key blob (the keys after its first one), exactly as the generated parser
    reads it: keys as `paimon_common::key` gives them (float bits, string bytes)."""

    keys: list[Key]
    ofs_keys: list[int]         # strings: each key's stored offset; fixed-size keys have none


def parse_chunk_keys(chunk: RangeBitmap.Chunk, path: str = "") -> ChunkKeys:
    """A chunk's key blob through the generated parser: slow, the reference for the fast path."""
    blob = _instance(chunk, "keys", path)
    return ChunkKeys([raw_key(k) for k in blob.keys],
                     list(blob.ofs_keys) if isinstance(blob, RangeBitmap.VariableKeys) else [])


def scan_chunk_keys(data: bytes | memoryview, kind: KeyKind, pos: int, size: int,
                    count: int) -> ChunkKeys | None:
    """The key blob of `size` bytes at `pos` holding `count` keys (the chunk header's
    `len_key_blob` and `num_keys`) via struct/numpy, or None exactly where the generated parser
    fails; `data` ends where the dictionary ends (`dictionary_bytes`). Hostile sizes and counts
    are checked against the data before anything is read."""
    if min(pos, size, count) < 0 or (size and pos + size > len(data)):
        return None                 # (Kaitai reads 0 bytes anywhere, even past the end)
    blob = bytes(data[pos:pos + size])          # the substream the generated parser reads
    ofs_keys: list[int] = []
    if kind == KeyKind.string:
        if 4 * count > size:
            return None
        ofs_keys = np.frombuffer(blob, ">i4", count).tolist()
        if count and min(ofs_keys) < 0:
            return None
    records = scan_records(blob, kind, 4 * len(ofs_keys), count, ())
    return None if records is None else ChunkKeys(records[0], ofs_keys)


def _instance(owner: Any, attribute: str, path: str = "") -> Any:
    """A positioned instance of a generated object, failures located. Kaitai keeps a
    half-read instance after a failure; drop it so that asking again fails again."""
    try:
        return parsing.read_lazily(owner, attribute, path)
    except FormatError:
        owner.__dict__.pop(f"_m_{attribute}", None)
        raise
