"""The one list of layouts: every formats/*.ksy file, by the one name every command takes.

The names are Paimon's own where it has one (the index types `bitmap`, `bloom-filter`, `bsi`,
`range-bitmap`) and the spec's name in kebab case otherwise; older spellings (`dv`, `hash`, the
spec file stems) are aliases. `open_index` and `build_index` read it for the four file indexes,
the command line for its layout names, choices, presenters and auto-detection, and the hex dump
for the generated parser of each layout. A new layout is added here once and everything that
lists layouts follows (test_house.py checks the CLI has a presenter for each file of its own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kaitaistruct import KaitaiStream, KaitaiStruct

from paimon_schema.generated.binary_row import BinaryRow
from paimon_schema.generated.bitmap_global_index import BitmapGlobalIndex
from paimon_schema.generated.bitmap_index import BitmapIndex
from paimon_schema.generated.bloom_filter import BloomFilter
from paimon_schema.generated.bsi_index import BsiIndex
from paimon_schema.generated.btree_global_index import BtreeGlobalIndex
from paimon_schema.generated.deletion_vectors import DeletionVectors
from paimon_schema.generated.file_index import FileIndex
from paimon_schema.generated.hash_index import HashIndex
from paimon_schema.generated.index_source_meta import IndexSourceMeta
from paimon_schema.generated.paimon_common import PaimonCommon
from paimon_schema.generated.range_bitmap import RangeBitmap
from paimon_schema.generated.roaring_bitmap import RoaringBitmap
from paimon_schema.generated.sorted_index_meta import SortedIndexMeta
from paimon_schema.layouts import bitmap_global_index, btree_global_index, deletion_vectors, file_index, paimon_common
from paimon_schema.layouts.bitmap_index import BitmapIndexReader, build_bitmap_index
from paimon_schema.layouts.bloom_filter import BloomFilterIndexReader, build_bloom_filter
from paimon_schema.layouts.bsi_index import BsiIndexReader, build_bsi
from paimon_schema.layouts.range_bitmap import RangeBitmapIndexReader, build_range_bitmap
from paimon_schema.runtime import kaitai
from paimon_schema.values import options
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.results import FileIndexReader
from paimon_schema.values.types import DataType

Parser = Callable[[KaitaiStream], KaitaiStruct]


@dataclass(frozen=True)
class Layout:
    """One layout: its spec, its generated parser and, for a file index, its reader and writer."""

    name: str                                            # the name every command takes
    spec: str                                            # formats/<spec>.ksy, docs/<spec>.md and .svg
    root: type[KaitaiStruct]                             # the generated parser's root class
    keys: Callable[[DataType], paimon_common.KeyCodec] | None = None   # keyed by the column type
    aliases: tuple[str, ...] = ()                        # other accepted spellings
    embedded: bool = False                               # only ever inside other files
    open: Callable[[bytes, DataType], FileIndexReader] | None = None      # file indexes only
    build: Callable[[DataType | str, Iterable[Any], Mapping[str, Any]], bytes] | None = None
    options: tuple[str, ...] = ()                        # `build_index` options, Paimon's names
    signature: Callable[[bytes], bool] | None = None     # files that say what they are

    @property
    def is_index(self) -> bool:
        return self.open is not None

    @property
    def keyed(self) -> bool:
        """Whether the key encoding depends on the column type (the parser needs it)."""
        return self.keys is not None

    def parser(self, data_type: DataType | None) -> Parser:
        """The generated parser; a keyed layout's needs its column's data type."""
        if self.keys is None:
            return self.root
        if data_type is None:
            raise SchemaError(f"a {self.name} blob needs its column's data type")
        kind = int(self.keys(data_type).kind)
        root = self.root
        return lambda io: root(kind, io)


def _build_bitmap(data_type: DataType | str, values: Iterable[Any], given: Mapping[str, Any]) -> bytes:
    return build_bitmap_index(data_type, values,
                              version=options.integer(given.get("version", 2), "version"),
                              index_block_size=options.memory_size(given.get("index-block-size", "16kb")))


def _build_bloom(data_type: DataType | str, values: Iterable[Any], given: Mapping[str, Any]) -> bytes:
    return build_bloom_filter(data_type, values,
                              items=options.integer(given.get("items", 1_000_000), "items"),
                              fpp=options.number(given.get("fpp", 0.1), "fpp"))


#: Every layout by name, in the order the command line lists them.
LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in [
    Layout("file-index", "file_index", FileIndex, aliases=("container",), signature=file_index.has_signature),
    Layout("bitmap", "bitmap_index", BitmapIndex, keys=paimon_common.bitmap_keys,
           open=BitmapIndexReader.open, build=_build_bitmap, options=("version", "index-block-size")),
    Layout("bloom-filter", "bloom_filter", BloomFilter, aliases=("bloom",), open=BloomFilterIndexReader.open,
           build=_build_bloom, options=("items", "fpp")),
    Layout("bsi", "bsi_index", BsiIndex, open=BsiIndexReader.open,
           build=lambda data_type, values, given: build_bsi(data_type, values)),
    Layout("range-bitmap", "range_bitmap", RangeBitmap, keys=paimon_common.range_bitmap_keys,
           open=RangeBitmapIndexReader.open,
           build=lambda data_type, values, given: build_range_bitmap(data_type, values,
                                                                     chunk_size=given.get("chunk-size")),
           options=("chunk-size",)),
    Layout("deletion-vectors", "deletion_vectors", DeletionVectors, aliases=("dv",),
           signature=deletion_vectors.has_signature),
    Layout("hash-index", "hash_index", HashIndex, aliases=("hash",)),
    Layout("btree-global-index", "btree_global_index", BtreeGlobalIndex, aliases=("btree",),
           signature=btree_global_index.has_signature),
    Layout("bitmap-global-index", "bitmap_global_index", BitmapGlobalIndex, aliases=("bgix",),
           signature=bitmap_global_index.has_signature),
    Layout("roaring-bitmap", "roaring_bitmap", RoaringBitmap, aliases=("roaring",), embedded=True),
    Layout("paimon-common", "paimon_common", PaimonCommon, embedded=True),
    Layout("binary-row", "binary_row", BinaryRow, embedded=True),
    Layout("sorted-index-meta", "sorted_index_meta", SortedIndexMeta, embedded=True),   # in manifests
    Layout("index-source-meta", "index_source_meta", IndexSourceMeta, embedded=True),
]}

#: The layouts that are files (or index blobs) of their own: what `dump` and `verify` read.
FILES: tuple[str, ...] = tuple(name for name, layout in LAYOUTS.items() if not layout.embedded)

#: The file indexes, by the index type names of Paimon's containers.
INDEX_TYPES: tuple[str, ...] = tuple(name for name, layout in LAYOUTS.items() if layout.is_index)


def find(name: str) -> Layout | None:
    """The layout called `name` in any accepted spelling (any case, `_` for `-`, an alias or
    the spec's file stem), or None."""
    key = name.strip().lower().replace("_", "-")
    return LAYOUTS.get(key) or next((layout for layout in LAYOUTS.values()
                                     if key in layout.aliases or key == layout.spec.replace("_", "-")),
                                    None)


def index_layout(index_type: str) -> Layout:
    """The file index named `index_type`; SchemaError for another name."""
    layout = LAYOUTS.get(index_type)
    if layout is None or not layout.is_index:
        raise SchemaError(f"unknown index type {index_type!r} (known: {', '.join(sorted(INDEX_TYPES))})")
    return layout


def open_index(index_type: str, blob: bytes, data_type: str | DataType) -> FileIndexReader:
    """A reader answering predicates over `blob`, exactly as Java's reader of that type does.

    Raises SchemaError for an unknown index type or a data type the index does not support,
    FormatError for malformed bytes.
    """
    dtype = DataType.parse(data_type)
    layout = index_layout(index_type)
    assert layout.open is not None
    return layout.open(bytes(blob), dtype)


def build_index(index_type: str, data_type: str | DataType, values: Iterable[Any], **opts: Any) -> bytes:
    """The blob Java's writer of `index_type` writes for `values` (one per row, None = null).

    `values`: a list or other iterable of plain Python values, a numpy (masked) array, a
    pyarrow Array/ChunkedArray or a pandas Series, all typed in bulk by
    `layouts.column_values`: the same bytes and the same SchemaErrors from each.
    Options take Paimon's names (`index-block-size`) or Python keywords (`index_block_size`),
    with Paimon's units ("16kb").
    """
    layout = index_layout(index_type)
    assert layout.build is not None
    return layout.build(data_type, values, options.normalize(index_type, layout.options, opts))


def detect(data: bytes) -> str | None:
    """The layout of a file that carries a signature, or None (hash index, index blobs)."""
    return next((name for name, layout in LAYOUTS.items()
                 if layout.signature is not None and layout.signature(data)), None)


def parse_generated(name: str, data: bytes | memoryview, data_type: str | DataType | None = None
                    ) -> KaitaiStruct:
    """`data` parsed by the generated parser of layout `name`, in any spelling `find` takes (a
    keyed index blob needs its column's data type, which decides the key encoding; SchemaError
    without it or for an unknown name)."""
    layout = find(name)
    if layout is None:
        raise SchemaError(f"unknown layout {name!r} (known: {', '.join(LAYOUTS)})")
    dtype = DataType.parse(data_type) if layout.keyed and data_type is not None else None
    return kaitai.parse(layout.parser(dtype), data)
