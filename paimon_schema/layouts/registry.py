"""The four file indexes by Paimon's type names: `open_index` reads a blob, `build_index`
writes one."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from paimon_schema.layouts.bitmap_index import BitmapIndexReader, build_bitmap_index
from paimon_schema.layouts.bloom_filter import BloomFilterIndexReader, build_bloom_filter
from paimon_schema.layouts.bsi_index import BsiIndexReader, build_bsi
from paimon_schema.layouts.range_bitmap import RangeBitmapIndexReader, build_range_bitmap
from paimon_schema.values import options
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.results import FileIndexReader
from paimon_schema.values.types import DataType

#: index type name -> reader factory `(blob, data_type) -> FileIndexReader`
READERS: dict[str, Callable[[bytes, DataType], FileIndexReader]] = {
    "bitmap": BitmapIndexReader.open,
    "bloom-filter": BloomFilterIndexReader.open,
    "bsi": BsiIndexReader.open,
    "range-bitmap": RangeBitmapIndexReader.open,
}


def open_index(index_type: str, blob: bytes, data_type: str | DataType) -> FileIndexReader:
    """A reader answering predicates over `blob`, exactly as Java's reader of that type does.

    Raises SchemaError for an unknown index type or a data type the index does not support,
    FormatError for malformed bytes.
    """
    dtype = DataType.parse(data_type)
    try:
        factory = READERS[index_type]
    except KeyError:
        raise SchemaError(f"unknown index type {index_type!r} (known: {', '.join(sorted(READERS))})") from None
    return factory(bytes(blob), dtype)


def build_index(index_type: str, data_type: str | DataType, values: Iterable[Any], **opts: Any) -> bytes:
    """The blob Java's writer of `index_type` writes for `values` (one per row, None = null).

    `values`: a list or other iterable of plain Python values, a numpy (masked) array, a
    pyarrow Array/ChunkedArray or a pandas Series, all typed in bulk by
    `layouts.column_values`: the same bytes and the same SchemaErrors from each.
    Options take Paimon's names (`index-block-size`) or Python keywords (`index_block_size`),
    with Paimon's units ("16kb").
    """
    given = options.normalize(index_type, opts)
    if index_type == "bitmap":
        version = options.integer(given.get("version", 2), "version")
        block = given.get("index-block-size", "16kb")
        return build_bitmap_index(data_type, values, version=version,
                                  index_block_size=options.memory_size(block))
    if index_type == "bloom-filter":
        return build_bloom_filter(data_type, values,
                                  items=options.integer(given.get("items", 1_000_000), "items"),
                                  fpp=options.number(given.get("fpp", 0.1), "fpp"))
    if index_type == "bsi":
        return build_bsi(data_type, values)
    return build_range_bitmap(data_type, values, chunk_size=given.get("chunk-size"))
