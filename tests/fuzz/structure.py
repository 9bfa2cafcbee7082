"""Structure-aware mutation: where a seed's integer fields are, from the generated parsers.

The parsers in `generated/` are compiled in Kaitai's debug mode (paimon_schema/runtime/
kaitai.py): every object records in `_debug` where each field started and ended in its
stream. `int_fields(seed)` parses a seed, reads every lazy instance, and walks the object tree
adding up substream starts, so every integer field (counts, lengths, offsets, versions, keys,
cardinalities, roaring descriptors, ...) comes out with its absolute byte range, byte order and
signedness, each checked against the bytes it was read from.

`set_field` writes a value into a field; `fix_dv_checksums` recomputes every DV bin's CRC so
damage reaches the roaring payload; `var_len_fields` finds the bitmap global index's varints
(damaged with tests/leb128.py) and `fix_global_bitmap_checksums` recomputes its block CRCs; `replace_blob` swaps one blob of a container and rewrites a
consistent head so damage reaches the index readers.
"""

from __future__ import annotations

import inspect
import re
import zlib
from dataclasses import dataclass
from functools import cache
from typing import Any

import leb128
from fuzzlib import Seed
from kaitaistruct import KaitaiStruct
from paimon_schema.generated.bitmap_global_index import BitmapGlobalIndex
from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.generated.bloom_filter import BloomFilter
from paimon_schema.generated.bsi_index import BsiIndex
from paimon_schema.generated.btree_global_index import BtreeGlobalIndex
from paimon_schema.layouts.bitmap_global_index import blocks as global_blocks
from paimon_schema.layouts.btree_global_index import sst
from paimon_schema.generated.deletion_vectors import DeletionVectors
from paimon_schema.generated.file_index import FileIndex
from paimon_schema.generated.hash_index import HashIndex
from paimon_schema.generated.range_bitmap import RangeBitmap
from paimon_schema.generated.roaring_bitmap import RoaringBitmap

import paimon_schema as ps
from paimon_schema.layouts.paimon_common import bitmap_keys, range_bitmap_keys
from paimon_schema.layouts.registry import INDEX_TYPES
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.runtime import varlen


@dataclass(frozen=True)
class IntField:
    path: str
    start: int          # absolute byte offset in the seed
    width: int          # 1, 2, 4 or 8 bytes
    order: str          # "big" | "little"
    signed: bool
    value: int


def _parser(seed: Seed) -> Any:
    layout = seed.layout
    if layout == "dv":
        return DeletionVectors
    if layout == "container":
        return FileIndex
    if layout == "bitmap":
        kind = bitmap_keys(seed.data_type).kind
        return lambda io: BitmapIndex(kind, io)
    if layout == "range-bitmap":
        kind = range_bitmap_keys(seed.data_type).kind
        return lambda io: RangeBitmap(kind, io)
    return {"bloom-filter": BloomFilter, "bsi": BsiIndex, "roaring": RoaringBitmap,
            "hash": HashIndex, "btree": BtreeGlobalIndex, "bitmap-global-index": BitmapGlobalIndex}[layout]


@cache
def int_fields(seed: Seed) -> tuple[IntField, ...]:
    """Every integer field of the seed, by absolute position (instances included)."""
    root = parsing.parse(_parser(seed), seed.data)
    root._fetch_instances()
    found: dict[int, IntField] = {}
    _walk(root, "", 0, {id(root._io): 0}, seed.data, found)
    if seed.layout == "dv":       # a 32-bit bin's bitmap is kept as bytes: parse it as roaring
        for i, raw in enumerate(root.bins):
            if raw.magic == DeletionVectors.BinMagic.bitmap32:
                start = root._debug["bins"]["arr"][i]["start"] + 8
                bitmap = parsing.parse(RoaringBitmap, seed.data[start:start + raw.len_payload - 4])
                bitmap._fetch_instances()
                _walk(bitmap, f"bins[{i}].bitmap", start, {id(bitmap._io): start}, seed.data, found)
    return tuple(sorted(found.values(), key=lambda f: f.start))


def _walk(obj: KaitaiStruct, path: str, base: int, bases: dict[int, int], data: bytes,
          found: dict[int, IntField]) -> None:
    for name, info in list(obj._debug.items()):
        value = obj.__dict__.get(name)
        attr = name[3:] if name.startswith("_m_") else name
        if "arr" in info and isinstance(value, list):
            items = [(f"{attr}[{i}]", span.get("start"), span.get("end"), value[i])
                     for i, span in enumerate(info["arr"]) if i < len(value)]
        else:
            items = [(attr, info.get("start"), info.get("end"), value)]
        for sub, start, end, item in items:
            if start is None or end is None:
                continue
            where = f"{path}.{sub}" if path else sub
            if isinstance(item, KaitaiStruct):
                io_key = id(item._io)
                if io_key not in bases:
                    bases[io_key] = base + start
                _walk(item, where, bases[io_key], bases, data, found)
            elif isinstance(item, int) and end - start in (1, 2, 4, 8):
                raw = data[base + start:base + end]
                for signed, order in _read_kinds(type(obj)).get((attr, end - start), ()):
                    if int.from_bytes(raw, order, signed=signed) == int(item):   # the walk is right
                        found.setdefault(base + start, IntField(where, base + start, end - start,
                                                                order, signed, int(item)))
                        break


_READ = re.compile(r"self\.(?:_m_)?(\w+)(?:\.append\(| = )(?:KaitaiStream\.resolve_enum\([\w.]+, )?"
                   r"self\._io\.read_([us])(\d)(be|le)?\(")


@cache
def _read_kinds(cls: type) -> dict[tuple[str, int], list[tuple[bool, str]]]:
    """(field, width) -> the (signed, byte order) the generated `_read` and instances read it
    with (a switch may read one field name several ways: the walk keeps the one the bytes
    confirm)."""
    sources = [cls._read] + [p.fget for p in vars(cls).values() if isinstance(p, property)]
    kinds: dict[tuple[str, int], set[tuple[bool, str]]] = {}
    for source in sources:
        for name, sign, width, order in _READ.findall(inspect.getsource(source)):
            kinds.setdefault((name, int(width)), set()).add(
                (sign == "s", "little" if order == "le" else "big"))
    return {key: sorted(v) for key, v in kinds.items()}


def candidates(field: IntField, data_len: int) -> list[int]:
    """What a count, length, offset or version is set to: 0, -1, huge, off by one, pointers
    into the header and past the end."""
    bits = 8 * field.width
    top = (1 << (bits - 1)) - 1 if field.signed else (1 << bits) - 1
    values = [0, -1, 1, field.value - 1, field.value + 1, field.value * 2, field.value // 2,
              data_len, data_len + 1, data_len - 1, data_len - field.start, field.start,
              field.start - 1, 4, 8, 12, 16, 255, 256, 4096, 4097, 65535, 65536, 65537,
              top, top - 1, top // 2 + 1]
    values += [v for v in (2**31 - 1, 2**31, 2**32 - 1, 2**63 - 1, 2**64 - 1, -2**31, -2**63)
               if v.bit_length() <= bits]
    return sorted({v % (1 << bits) for v in values})


def set_field(data: bytes, field: IntField, value: int) -> bytes:
    """`data` with `field` holding `value` (taken modulo the field's width)."""
    raw = (value % (1 << 8 * field.width)).to_bytes(field.width, field.order)
    return data[:field.start] + raw + data[field.start + field.width:]


def fix_dv_checksums(data: bytes) -> bytes:
    """Recompute the CRC of every bin whose framing fits: zlib.crc32 over magic + bitmap."""
    out = bytearray(data)
    pos = 1
    while pos + 8 <= len(out):
        size = int.from_bytes(out[pos:pos + 4], "big", signed=True)
        end = pos + 4 + size
        if size < 4 or end + 4 > len(out):
            break
        out[end:end + 4] = zlib.crc32(bytes(out[pos + 4:end])).to_bytes(4, "big")
        pos = end + 4
    return bytes(out)


def fix_btree_checksums(data: bytes) -> bytes:
    """Recompute the CRC32 of the null bitmap, the index block and every data block it names,
    wherever the footer and the index entries still locate them inside the file."""
    out = bytearray(data)
    try:
        footer = sst.read_footer(sst.Source(data))
    except ps.FormatError:
        return data
    spans = [(footer.ofs_index_block, footer.len_index_block)]
    try:
        index = sst.read_block(sst.Source(data), *spans[0], "index_block", is_index=True,
                               verify_checksum=False)
        spans += [sst.parse_handle(index, i)[1:] for i in range(len(index))]
    except ps.FormatError:
        pass
    for offset, size in spans:
        if offset + size + 5 <= len(out):
            out[offset + size + 1:offset + size + 5] = zlib.crc32(bytes(out[offset:offset + size + 1])).to_bytes(4, "little")
    if footer.has_null_bitmap and footer.ofs_null_bitmap + footer.len_null_bitmap + 4 <= len(out):
        end = footer.ofs_null_bitmap + footer.len_null_bitmap
        out[end:end + 4] = zlib.crc32(bytes(out[footer.ofs_null_bitmap:end])).to_bytes(4, "little")
    return bytes(out)


@dataclass(frozen=True)
class VarLenField:
    """A LEB128 varint (`var_len_int` / `var_len_long` of bitmap_global_index.ksy) and where
    its bytes are."""

    path: str           # the varint object's path (its `b0` without the `.b0`)
    start: int          # absolute byte offset in the seed
    width: int          # bytes of its encoding
    value: int


def var_len_fields(seed: Seed) -> tuple[VarLenField, ...]:
    """Every varint of the seed (found by its first byte `b0` among the integer fields)."""
    found = []
    for field in int_fields(seed):
        if field.path.endswith(".b0"):
            value, end = varlen.read(seed.data, field.start)
            found.append(VarLenField(field.path.removesuffix(".b0"), field.start, end - field.start, value))
    return tuple(found)


def fix_global_bitmap_checksums(data: bytes) -> bytes:
    """Recompute the trailer CRC of the index block and of every dictionary block it names,
    wherever the footer and the index block's entries still locate them inside the file."""
    try:
        footer = global_blocks.read_footer(global_blocks.Reads(data))
    except ps.FormatError:
        return data
    out = leb128.fix_block_crcs(data, [(footer.ofs_index_block, footer.len_index_block)])
    index = global_blocks.read_block(global_blocks.Reads(out), footer.ofs_index_block,
                                     footer.len_index_block)
    return out if index is None else \
        leb128.fix_block_crcs(out, [(index.offset(i), index.length(i)) for i in range(len(index.keys))])


def container_blobs(seed: Seed) -> list[tuple[int, Seed]]:
    """(entry index, the blob as a seed of its index type) for each readable blob."""
    row_type = dict(seed.row_type)
    return [(i, Seed(f"{seed.name}#{e.column}/{e.index_type}", e.index_type, e.blob,
                     data_type=row_type[e.column]))
            for i, e in enumerate(ps.FileIndexFile.parse(seed.data).entries)
            if e.blob is not None and e.index_type in INDEX_TYPES and e.column in row_type]


def replace_blob(seed: Seed, entry: int, blob: bytes) -> bytes:
    """The container with entry `entry`'s blob replaced and a consistent head (Java's writer)."""
    columns: dict[str, dict[str, bytes | None]] = {}
    for i, e in enumerate(ps.FileIndexFile.parse(seed.data).entries):
        columns.setdefault(e.column, {})[e.index_type] = blob if i == entry else e.blob
    return ps.write_file_index(columns)

