"""Global indexes of a data-evolution table: listed from a snapshot's index manifest, and used
to prune a read.

A row-tracking table gives every row a row id: a data file holds rows `_FIRST_ROW_ID` ..
`_FIRST_ROW_ID + _ROW_COUNT - 1`. A global index file (`_GLOBAL_INDEX` in the index manifest)
covers the row ids `[_ROW_RANGE_START, _ROW_RANGE_END]` of one column (`_INDEX_FIELD_ID`) and
answers with row ids local to that range (pypaimon's and Java's `OffsetGlobalIndexReader` add
the range start). Files of one type covering the same range (pypaimon splits a large range by
key into several files) are united.

Pruning (`GlobalIndexPruning`) computes the row ids a filter *excludes*: for a leaf on an
indexed column, the covered row ids minus the index's answer; AND unites the children's
exclusions, OR intersects them. Rows outside every covered range are never excluded (an index
over part of the table answers nothing for the rest: pypaimon's default `FAST` search mode
assumes full coverage, this does not). A leaf is only answered where the answer is exact under
Spark SQL semantics (`predicates.for_file` makes literals exact; float columns only answer
equality and nulls, timestamps above microseconds and CHAR columns only nulls); everything else
excludes nothing. A bitmap file whose keys are not in the order its footer declares
(pypaimon-rust 0.4.0 writes version 1 in typed order, where lookups miss keys) answers
nothing. Index files are matched to the filter's columns by field id. Vector and full-text
indexes (and types this library does not read) are listed, never read. So are the sorted
indexes of primary-key tables (their `_SOURCE_META` is not `DEIX`: row ids there are positions
in named data files, Java's `pk-btree` indexes).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from pyroaring import BitMap, BitMap64

from paimon_schema.layouts.bitmap_global_index import BitmapGlobalIndexReader
from paimon_schema.layouts.btree_global_index import BTreeGlobalIndexReader
from paimon_schema.layouts.global_index_meta import GlobalIndexMeta
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.table import predicates as preds
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.manifests import DataFile, IndexFile
from paimon_schema.table.schema import TableSchema
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import DataType

__all__ = ["GlobalIndexFile", "GlobalIndexPruning", "global_index_files"]

log = logging.getLogger("paimon_schema.spark")

#: leaf functions each readable index type answers exactly
_ANSWERS = {
    "bitmap": frozenset({"equal", "in_", "not_equal", "not_in", "is_null", "is_not_null"}),
    "btree": frozenset({"equal", "in_", "not_equal", "not_in", "is_null", "is_not_null",
                        "less_than", "less_or_equal", "greater_than", "greater_or_equal", "between"}),
}
_NULLS = frozenset({"is_null", "is_not_null"})
_EQUALITY = frozenset({"equal", "in_", "is_null", "is_not_null"})


@dataclass(frozen=True)
class GlobalIndexFile:
    """One live global index file of a snapshot: rows `row_range` (first and last row id,
    inclusive) of column `column` (None when the field id is not in the schema)."""

    index_type: str
    kind: str                     # sorted (btree, bitmap), opaque (vector / full-text), other
    field_id: int
    column: str | None
    row_range: tuple[int, int]
    file_name: str
    path: str
    file_size: int
    row_count: int
    partition_path: str
    meta: GlobalIndexMeta

    def as_dict(self) -> dict[str, Any]:
        sorted_meta = self.meta.sorted_meta if self.kind == "sorted" else None
        return {"index_type": self.index_type, "kind": self.kind, "field_id": self.field_id,
                "column": self.column, "row_range": list(self.row_range), "file": self.file_name,
                "size": self.file_size, "rows": self.row_count, "partition": self.partition_path,
                "extra_field_ids": None if self.meta.extra_field_ids is None else list(self.meta.extra_field_ids),
                "has_nulls": None if sorted_meta is None else sorted_meta.has_nulls,
                "source_snapshot": None if self.meta.source is None else self.meta.source.scan_snapshot_id}


def global_index_files(schema: TableSchema, index_files: Iterable[IndexFile]) -> list[GlobalIndexFile]:
    """The global index entries among a snapshot's live index files, in row-range order."""
    by_id = {f.id: f.name for f in schema.fields}
    out = []
    for f in index_files:
        meta = f.global_index
        if meta is None:
            continue
        out.append(GlobalIndexFile(f.index_type, meta.kind, meta.index_field_id,
                                   by_id.get(meta.index_field_id),
                                   (meta.row_range_start, meta.row_range_end), f.file_name, f.path,
                                   f.file_size, f.row_count, f.partition_path, meta))
    return sorted(out, key=lambda g: (g.field_id, g.index_type, g.row_range, g.file_name))


@dataclass
class GlobalIndexPruning:
    """The row ids a filter excludes by the global indexes of one snapshot (see the module
    doc); `excluded` is None when no index answers any leaf. `corrupt` names the index files
    that failed to read in PERMISSIVE mode (their column's index type then answers nothing)."""

    excluded: BitMap64 | None
    corrupt: list[str] = field(default_factory=list)

    @classmethod
    def evaluate(cls, io: FileIO, schema: TableSchema, files: Sequence[GlobalIndexFile],
                 where: Predicate, *, permissive: bool = False) -> GlobalIndexPruning:
        usable = [f for f in files if f.index_type in _ANSWERS
                  and not f.meta.extra_field_ids and not schema.primary_keys
                  and (f.meta.source_meta is None or f.meta.source is not None)]
        if not usable:
            return cls(None)
        evaluator = _Evaluator(io, schema, usable, permissive)
        predicate, _ = preds.for_file(where, schema, schema)
        return cls(evaluator.excluded(predicate), evaluator.corrupt)

    def candidates(self, data_file: DataFile) -> BitMap | None:
        """The positions of the data file that may match (a 32-bit bitmap; empty: skip the
        file), or None when the indexes exclude none of its rows."""
        first = data_file.first_row_id
        if self.excluded is None or first is None or data_file.row_count == 0:
            return None
        end = first + data_file.row_count
        dropped = self.excluded.range_cardinality(first, end)
        if dropped == 0:
            return None
        if dropped == data_file.row_count:
            return BitMap()
        window = BitMap64()
        window.add_range(first, end)
        window -= self.excluded
        kept = np.frombuffer(window.to_array(), dtype=np.uint64) - np.uint64(first)
        return BitMap(kept.astype(np.uint32))


class _Evaluator:
    def __init__(self, io: FileIO, schema: TableSchema, files: list[GlobalIndexFile],
                 permissive: bool) -> None:
        self.io = io
        self.schema = schema
        self.permissive = permissive
        self.corrupt: list[str] = []
        self.by_field: dict[tuple[int, str], list[GlobalIndexFile]] = {}
        for f in files:                   # by field id: the read's schema may name it otherwise
            self.by_field.setdefault((f.field_id, f.index_type), []).append(f)

    def excluded(self, predicate: Predicate) -> BitMap64 | None:
        """Row ids proven not to match; None: none proven (an empty set, cheaply)."""
        if isinstance(predicate, And):
            out: BitMap64 | None = None
            for child in predicate.children:
                got = self.excluded(child)
                if got is not None:
                    out = got if out is None else out | got
            return out
        if isinstance(predicate, Or):
            common: BitMap64 | None = None
            for child in predicate.children:
                got = self.excluded(child)
                if got is None:
                    return None
                common = got if common is None else common & got
            return common
        assert isinstance(predicate, Leaf)
        return self._leaf(predicate)

    def _leaf(self, leaf: Leaf) -> BitMap64 | None:
        if leaf.column == preds.REMAIN_COLUMN:
            return None
        field = self.schema.field(leaf.column)
        dtype = field.atomic_type
        if dtype is None or not _answerable(leaf.function, dtype):
            return None
        out: BitMap64 | None = None
        for index_type, answers in _ANSWERS.items():
            files = self.by_field.get((field.id, index_type))
            if not files or leaf.function not in answers:
                continue
            got = self._answer(leaf, dtype, index_type, files)
            if got is not None:
                out = got if out is None else out | got
        return out

    def _answer(self, leaf: Leaf, dtype: DataType, index_type: str,
                files: list[GlobalIndexFile]) -> BitMap64 | None:
        covered, matching = BitMap64(), BitMap64()
        for f in files:
            start, end = f.row_range
            try:
                local = self._ask(f, leaf, dtype)
            except SchemaError:
                return None           # a literal this index's keys do not hold: no answer
            except _Misordered:
                log.warning("global index %s: keys not in the order its version declares "
                            "(pypaimon-rust 0.4.0's bitmap files), not used", f.path)
                return None
            except FormatError as exc:
                if not self.permissive:
                    raise FormatError(f"corrupt global index {f.path} ({index_type} on "
                                      f"{f.column}): {exc.reason}", offset=exc.offset,
                                      path=exc.path) from exc
                log.warning("corrupt global index %s, not used: %s", f.path, exc)
                self.corrupt.append(f.path)
                return None
            covered.add_range(start, end + 1)
            if start:
                local = local.shift(start)
            matching |= local
        return covered - matching

    def _ask(self, f: GlobalIndexFile, leaf: Leaf, dtype: DataType) -> BitMap64:
        with self.io.open_input(f.path) as source:
            handle = cast(Any, source)
            if f.index_type == "btree":
                btree = BTreeGlobalIndexReader.open(handle, dtype, size=f.file_size)    # no seek to the end
                return _btree_answer(btree, leaf)
            bitmap = BitmapGlobalIndexReader.open(handle, dtype)
            if not _keys_ascend(f, bitmap):
                raise _Misordered
            return _bitmap_answer(bitmap, leaf)


class _Misordered(Exception):
    """A bitmap file whose lookups would miss keys."""


#: (path, size) -> whether the bitmap file's keys ascend (index files are never rewritten)
_ASCENDING: dict[tuple[str, int], bool] = {}


def _keys_ascend(f: GlobalIndexFile, reader: BitmapGlobalIndexReader) -> bool:
    key = (f.path, f.file_size)
    if key not in _ASCENDING:
        if len(_ASCENDING) > 10_000:
            _ASCENDING.clear()
        _ASCENDING[key] = reader.keys_ascend()
    return _ASCENDING[key]


def _answerable(function: str, dtype: DataType) -> bool:
    """Whether the index's keys answer `function` exactly as Spark compares this type."""
    if function in _NULLS:
        return True
    if dtype.root == "CHAR" or (dtype.is_timestamp and (dtype.precision or 0) > 6):
        return False              # blank padding / keys finer than the values Spark compares
    if dtype.is_float:
        return function in _EQUALITY   # NaN and -0.0 order apart from Spark's comparisons
    return True


def _bitmap_answer(reader: BitmapGlobalIndexReader, leaf: Leaf) -> BitMap64:
    values = leaf.literals
    function = leaf.function
    if function == "equal":
        return reader.equal(values[0])
    if function == "in_":
        return reader.in_(values)
    if function == "is_null":
        return reader.is_null()
    if function == "is_not_null":
        return reader.is_not_null()
    if any(v is None for v in values):
        return BitMap64()         # `<> NULL`, `NOT IN (.., NULL)`: never true
    return reader.is_not_null() - (reader.equal(values[0]) if function == "not_equal" else reader.in_(values))


def _btree_answer(reader: BTreeGlobalIndexReader, leaf: Leaf) -> BitMap64:
    values = leaf.literals
    function = leaf.function
    if function == "in_":
        return reader.isin(values)
    if function == "is_null":
        return reader.is_null()
    if function == "is_not_null":
        return reader.is_not_null()
    if any(v is None for v in values):
        return BitMap64()         # a comparison with NULL is never true
    if function == "not_equal":
        return reader.is_not_null() - reader.equal(values[0])
    if function == "not_in":
        return reader.is_not_null() - reader.isin(values)
    if function == "between":
        return reader.between(values[0], values[1])
    ask = getattr(reader, function)
    return cast(BitMap64, ask(values[0]))
