"""paimon-schema: Apache Paimon's binary index layouts, read and written from Python.

Every layout is specified once, as a Kaitai Struct spec in `formats/`; the parsers in
`paimon_schema.generated` are compiled from those specs.
"""

from typing import TYPE_CHECKING

from paimon_schema.layouts.deletion_vectors import (
    DeletionVectorBin,
    DeletionVectorFile,
    read_deletion_vector,
    write_deletion_vectors,
)
from paimon_schema.layouts.file_index import FileIndexFile, IndexEntry, write_file_index
from paimon_schema.layouts.hash_index import read_hash_index, write_hash_index
from paimon_schema.layouts.registry import build_index, open_index
from paimon_schema.query.evaluate import evaluate, top_n
from paimon_schema.query.masks import apply_deletion_vector, delete_mask, keep_mask, row_mask
from paimon_schema.query.predicate import col
from paimon_schema.query.where import parse_where
from paimon_schema.values import types
from paimon_schema.values.errors import CommitConflict, FormatError, SchemaError, TableError
from paimon_schema.values.results import IndexResult

if TYPE_CHECKING:       # what `__getattr__` returns, for type checkers
    from paimon_schema.table.delete import delete_where
    from paimon_schema.table.file_index_rewrite import rewrite_file_index
    from paimon_schema.table.global_index_write import create_global_index

#: writers that need the `table` dependencies (pyarrow, fastavro): imported on first use
_WRITERS = {"rewrite_file_index": "paimon_schema.table.file_index_rewrite",
            "delete_where": "paimon_schema.table.delete",
            "create_global_index": "paimon_schema.table.global_index_write"}


def __getattr__(name: str) -> object:
    module = _WRITERS.get(name)
    if module is None:
        raise AttributeError(f"module 'paimon_schema' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "IndexResult",
    "apply_deletion_vector",
    "delete_mask",
    "keep_mask",
    "row_mask",
    "build_index",
    "delete_where",
    "rewrite_file_index",
    "create_global_index",
    "CommitConflict",
    "col",
    "evaluate",
    "open_index",
    "parse_where",
    "top_n",
    "types",
    "DeletionVectorBin",
    "DeletionVectorFile",
    "FileIndexFile",
    "FormatError",
    "IndexEntry",
    "SchemaError",
    "TableError",
    "read_deletion_vector",
    "read_hash_index",
    "write_deletion_vectors",
    "write_file_index",
    "write_hash_index",
]
__version__ = "0.1.0"
