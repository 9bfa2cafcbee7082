"""`open_index`: the reader of one index blob, by Paimon's index type name."""

from __future__ import annotations

from collections.abc import Callable

from paimon_schema.errors import SchemaError
from paimon_schema.results import FileIndexReader
from paimon_schema.types import DataType

#: index type name -> reader factory `(blob, data_type) -> FileIndexReader`
READERS: dict[str, Callable[[bytes, DataType], FileIndexReader]] = {}


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
