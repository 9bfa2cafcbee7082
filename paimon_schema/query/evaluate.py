"""Predicates over a whole file-index container: which rows of a data file can match.

`evaluate` answers a predicate with every index of every column it touches, the way Paimon's
`FileIndexPredicate` and `FileIndexEvaluator` do, except where Java's combination is wrong:
results are combined so that no matching row is ever dropped.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from functools import reduce
from typing import Any

from pyroaring import BitMap, BitMap64

from paimon_schema.layouts.file_index import FileIndexFile
from paimon_schema.layouts.registry import INDEX_TYPES, open_index
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.positions import as_array, fresh_bitmap
from paimon_schema.values.results import REMAIN, SKIP, FileIndexReader, IndexResult
from paimon_schema.values.types import DataType

MAX_ROWS_32 = 2**31 - 1
#: What Java's `EmptyFileIndexReader` (an entry with offset -1: no related records) answers.
EMPTY_ENTRY_SKIPS = frozenset({"equal", "is_not_null", "less_than", "less_or_equal",
                               "greater_than", "greater_or_equal", "in_", "between"})


def evaluate(file_index: FileIndexFile | bytes, predicate: Predicate,
             row_type: Mapping[str, str | DataType], row_count: int | None = None,
             deletion_vector: Any = None) -> IndexResult:
    """Which rows of one data file can match `predicate`, from its file indexes.

    Every index of a column answers each leaf and the answers are ANDed (Java's
    `FileIndexPredicate`); AND and OR of leaves combine exactly (where Java ORs a bitmap with a
    REMAIN it wrongly ANDs). With a deletion vector (needs `row_count`), deleted rows leave the
    selection as `FileIndexEvaluator` removes them: a 64-bit vector, or a file of more than
    2^31-1 rows, bypasses the indexes (REMAIN).
    """
    container = file_index if isinstance(file_index, FileIndexFile) else FileIndexFile.parse(file_index)
    readers = _Readers(container, row_type)
    result = _combine(predicate, readers)
    return _apply_selection(result, row_count, deletion_vector)


def top_n(file_index: FileIndexFile | bytes, column: str, k: int,
          row_type: Mapping[str, str | DataType], ascending: bool = True,
          nulls_first: bool = False, row_count: int | None = None,
          deletion_vector: Any = None) -> IndexResult:
    """The rows of an ORDER BY `column` LIMIT `k`, from the column's range-bitmap index
    (REMAIN without one), as Paimon's TopN push-down evaluates it. Deleted rows are removed
    before the top k are picked."""
    container = file_index if isinstance(file_index, FileIndexFile) else FileIndexFile.parse(file_index)
    blob = container.columns.get(column, {}).get("range-bitmap")
    if blob is None:
        return REMAIN
    path, offset = _blob_location(container, column, "range-bitmap")
    selection = _selection(row_count, deletion_vector)
    if isinstance(selection, _Bypass):
        return REMAIN
    with _located_in(path, offset):
        reader = open_index("range-bitmap", blob, _data_type(row_type, column))
        return reader.top_n(k, ascending=ascending, nulls_first=nulls_first, within=selection)


# ------------------------------------------------------------------------------- internals

class _Readers:
    """Opens each column's indexes once, only when a predicate first touches the column."""

    def __init__(self, container: FileIndexFile, row_type: Mapping[str, str | DataType]) -> None:
        self.container = container
        self.row_type = row_type
        self._open: dict[str, list[tuple[FileIndexReader | None, str, int]]] = {}

    def of(self, column: str) -> list[tuple[FileIndexReader | None, str, int]]:
        """The column's readers in container order (None stands for an empty entry), each
        with where its blob lies, so that a blob's FormatError is located in the container."""
        if column not in self._open:
            indexes = self.container.columns.get(column, {})
            data_type: DataType | None = None
            opened: list[tuple[FileIndexReader | None, str, int]] = []
            for index_type, blob in indexes.items():
                path, offset = _blob_location(self.container, column, index_type)
                if blob is None:
                    # Java's FileIndexFormat returns its empty reader before it looks at the
                    # type: an empty entry answers even when its index type is unknown.
                    opened.append((None, path, offset))
                    continue
                if index_type not in INDEX_TYPES:
                    continue
                if data_type is None:
                    data_type = _data_type(self.row_type, column)
                try:
                    with _located_in(path, offset):
                        reader = open_index(index_type, blob, data_type)
                except SchemaError as exc:   # the container claims an index the type cannot have
                    raise FormatError(f"a {index_type} index on a {data_type} column: {exc}",
                                      offset=offset, path=path.removesuffix(".blob")) from exc
                opened.append((reader, path, offset))
            self._open[column] = opened
        return self._open[column]


def _blob_location(container: FileIndexFile, column: str, index_type: str) -> tuple[str, int]:
    """Path and offset of the entry Java reads for (column, index type): the last one."""
    for k in reversed(range(len(container.entries))):
        entry = container.entries[k]
        if entry.column == column and entry.index_type == index_type:
            j = sum(1 for e in container.entries[:k] if e.column_index == entry.column_index)
            return f"head.columns[{entry.column_index}].indexes[{j}].blob", max(entry.offset, 0)
    return "", 0


class _located_in:
    """A FormatError raised inside, located at the blob `path` at `offset` of the container
    (a class, not a generator: it wraps every leaf of every file a plan evaluates)."""

    __slots__ = ("path", "offset")

    def __init__(self, path: str, offset: int) -> None:
        self.path = path
        self.offset = offset

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 traceback: Any) -> None:
        if isinstance(exc, FormatError):
            raise exc.within(self.path, self.offset) from exc


def _data_type(row_type: Mapping[str, str | DataType], column: str) -> DataType:
    try:
        return DataType.parse(row_type[column])
    except KeyError:
        raise SchemaError(f"row_type has no type for indexed column {column!r}") from None


def _combine(predicate: Predicate, readers: _Readers) -> IndexResult:
    """The indexes' answer to `predicate`: an AND of no children holds for every row, an OR of
    none for no row (its own answer: SKIP)."""
    if isinstance(predicate, And):
        return reduce(operator.and_, (_combine(c, readers) for c in predicate.children), REMAIN)
    if isinstance(predicate, Or):
        return reduce(operator.or_, (_combine(c, readers) for c in predicate.children), SKIP)
    if not isinstance(predicate, Leaf):
        raise TypeError(f"not a predicate: {predicate!r}")
    result = REMAIN
    for reader, path, offset in readers.of(predicate.column):
        if reader is None:
            answer = SKIP if predicate.function in EMPTY_ENTRY_SKIPS else REMAIN
        else:
            with _located_in(path, offset):          # lazy reads fail while answering
                answer = predicate.ask(reader)
        result = result & answer
        if not result.remain:
            break
    return result


class _Bypass:
    """The indexes cannot be used for this file (Java's evaluator bypasses them)."""


_BYPASS = _Bypass()


def _selection(row_count: int | None, deletion_vector: Any) -> BitMap | None | _Bypass:
    """The rows left after the deletion vector, or None without one."""
    if deletion_vector is None:
        return None
    if row_count is None:
        raise SchemaError("a deletion vector needs the data file's row_count")
    if isinstance(deletion_vector, BitMap64) or row_count > MAX_ROWS_32:
        return _BYPASS
    deleted = deletion_vector if isinstance(deletion_vector, BitMap) else \
        fresh_bitmap(as_array(deletion_vector, maximum=MAX_ROWS_32))
    return BitMap(range(row_count)) - deleted


def _apply_selection(result: IndexResult, row_count: int | None, deletion_vector: Any) -> IndexResult:
    selection = _selection(row_count, deletion_vector)
    if selection is None:
        return result
    if isinstance(selection, _Bypass):
        return REMAIN
    if not result.remain:
        return result
    return IndexResult.of(selection if result.rows is None else result.rows & selection)
