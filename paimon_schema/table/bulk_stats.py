"""The statistics verdict of many data files at once: for each file, whether its manifest
min/max/null counts prove that no row matches the filter, exactly as `stats.stats_skip`
answers file by file.

A plan of a 100k-file table asked `stats_skip` of the ~23k files its partitions kept: two
BinaryRows decoded into Python values and a call tree per file, about a third of a warm plan.
Here the files that share a schema and stats columns (a table's files share the column names'
tuple, `manifests._value_stats`) are answered together: the C kernel `_kernels.stats_bounds`
reads one column of each file's minimum and maximum in place and compares it with a literal
(one code per bound: below, equal, above, no bound; or the file's statistics unusable), and the
filter's tree becomes numpy operations over those codes. What the kernel does not read (rows
with other column types, a literal of another kind than the column's, statistics that are not
bytes) is answered by `stats_skip`, file by file, as is everything when the C extension is not
built; `tests/test_bulk_stats.py` holds both equal on drawn files and filters.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from paimon_schema.layouts.binary_row import row_kinds
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.table.manifests import DataFile
from paimon_schema.table.predicates import REMAIN_COLUMN
from paimon_schema.table.schema import TableSchema
from paimon_schema.table.stats import _mode, _truncation, stats_skip

try:
    from paimon_schema.runtime import _kernels
except ImportError:                         # built without a C compiler
    _kernels = None  # type: ignore[assignment]

__all__ = ["stats_skips"]

_LESS, _EQUAL, _GREATER, _NONE, _UNUSABLE, _OTHER, _PYTHON = range(7)
_UNKNOWN_NULLS = np.iinfo(np.int64).min
#: The functions a column all NULL in the file excludes (`stats._excludes`).
_NULL_REJECTING = frozenset({"equal", "not_equal", "less_than", "less_or_equal", "greater_than",
                             "greater_or_equal", "in_", "not_in", "between"})
_EPOCH = dt.date(1970, 1, 1)
_WRITE_COLS = attrgetter("write_cols")
_NO_NAMES = object()                        # matches no file's names (`stats_bounds`)

Bools = NDArray[np.bool_]


class _PerFile(Exception):
    """This group of files is answered by `stats_skip`, file by file."""


def stats_skips(files: Sequence[DataFile], values: list[Any], schema_ids: list[int],
                rows: Sequence[int] | NDArray[np.int64],
                predicate_of: Callable[[int], tuple[Predicate, frozenset[str]]],
                schema_of: Callable[[int], TableSchema]) -> Bools:
    """For each file, `stats_skip(file, schema_of(id), *predicate_of(id))` with `id` its
    schema id; `values`, `schema_ids` and `rows` are the files' `value_stats`, schema ids and
    row counts (read with the files, in the plan's pass)."""
    n = len(files)
    skips = np.zeros(n, dtype=bool)
    if n == 0:
        return skips
    if _kernels is None:
        for i, data_file in enumerate(files):
            skips[i] = stats_skip(data_file, schema_of(data_file.schema_id),
                                  *predicate_of(data_file.schema_id))
        return skips
    counts = np.asarray(rows, dtype=np.int64)
    if schema_ids.count(schema_ids[0]) == n:
        groups: dict[int, list[int]] | None = None
    else:
        groups = {}
        for i, schema_id in enumerate(schema_ids):
            groups.setdefault(schema_id, []).append(i)
    for schema_id, members in ([(schema_ids[0], None)] if groups is None else groups.items()):
        predicate, columns = predicate_of(schema_id)
        schema = schema_of(schema_id)
        if members is None:
            skips[:] = _schema_skips(files, values, counts, schema, predicate, columns)
        else:
            picked = np.asarray(members)
            skips[picked] = _schema_skips([files[i] for i in members], [values[i] for i in members],
                                          counts[picked], schema, predicate, columns)
    return skips


def _schema_skips(files: Sequence[DataFile], values: list[Any], rows: NDArray[np.int64],
                  schema: TableSchema, predicate: Predicate, columns: frozenset[str]) -> Bools:
    """`stats_skips` of files of one schema: a round per tuple of stats column names (the
    first remaining file's), the kernel telling which files have other names."""
    skips = np.zeros(len(files), dtype=bool)
    todo = np.arange(len(files))
    while todo.size:
        if todo.size == len(files):
            sub_files, sub_values = files, values
        else:
            picked = todo.tolist()
            sub_files, sub_values = [files[i] for i in picked], [values[i] for i in picked]
        first = sub_values[0]
        names = first[3] if type(first) is tuple and len(first) == 4 else _NO_NAMES
        group = _Group(sub_files, sub_values, rows[todo], schema, columns, names)
        try:
            verdicts, other = group.skips(predicate)
        except _PerFile:
            verdicts, other = group.per_file(predicate)
        skips[todo] = verdicts
        todo = todo[other]
    return skips


class _Group:
    """Files of one schema, the ones whose stats column names are `names` answered."""

    def __init__(self, files: Sequence[DataFile], values: list[Any], rows: NDArray[np.int64],
                 schema: TableSchema, columns: frozenset[str], names: Any) -> None:
        self.files, self.values, self.rows, self.schema = files, values, rows, schema
        self.columns = columns
        self.names = names
        self.resolved = names
        if names is None:                   # all columns: the file's write columns, or the schema's
            if _WRITE_COLS(files[0]) is not None or \
                    list(map(_WRITE_COLS, files)).count(None) != len(files):
                self.resolved = _NO_NAMES
            else:
                self.resolved = tuple(f.name for f in schema.fields)
        self.kinds: str | None = None
        self.wanted: dict[str, tuple[int, Any, str, int | None]] = {}
        if self.resolved is not _NO_NAMES:
            self._layout()
        self._nulls: dict[int, NDArray[np.int64]] = {}
        #: each file's first code of the first `_codes` pass (`_first_codes` without a pass)
        self._classes: NDArray[np.uint8] | None = None

    def _layout(self) -> None:
        """The row's kind letters and, of each column the filter reads, (position, type,
        stats mode, truncation); no kinds where `stats._layout` has no layout."""
        types = []
        for name in self.resolved:
            field = self.schema.by_name.get(name)
            dtype = None if field is None else field.atomic_type
            if dtype is None:
                return
            types.append(dtype)
        self.kinds = row_kinds(types) or ""     # "": types the kernel does not read
        for i, (name, dtype) in enumerate(zip(self.resolved, types)):
            if name in self.columns:
                mode = _mode(self.schema, name)
                self.wanted[name] = (i, dtype, mode, _truncation(mode))

    def _codes(self, position: int, literals: tuple[Any, ...], limit: int) -> NDArray[np.uint8]:
        """Each literal's codes of each file (literals, files, minimum / maximum): one pass
        over the files' statistics for all of them (an IN list's values)."""
        assert self.kinds
        raw = _kernels.stats_bounds(self.values, self.names, self.kinds.encode(), position,
                                    literals, limit)
        codes = np.frombuffer(raw, dtype=np.uint8).reshape(len(literals), -1, 2)
        if self._classes is None:           # (a file's codes are < 4 where its statistics
            self._classes = codes[0, :, 0]  # are usable, whatever the column or literal)
        return codes

    def _matching(self) -> tuple[Bools, Bools]:
        """(files of these names, files of other names)."""
        kinds = self.kinds or "q" * max(1, len(self.resolved) if isinstance(self.resolved, tuple) else 1)
        other = self._first_codes(kinds.encode(), 0) == _OTHER
        return ~other, other

    def per_file(self, predicate: Predicate) -> tuple[Bools, Bools]:
        """`stats_skip` of each file of these names."""
        mine, other = self._matching()
        skips = np.zeros(len(self.files), dtype=bool)
        for i in np.flatnonzero(mine).tolist():
            skips[i] = stats_skip(self.files[i], self.schema, predicate, self.columns)
        return skips, other

    def skips(self, predicate: Predicate) -> tuple[Bools, Bools]:
        """(which files of these names the statistics skip, which files have other names)."""
        none = np.zeros(len(self.files), dtype=bool)
        if self.names is _NO_NAMES:         # (the first file has no statistics tuple)
            codes = self._first_codes(b"q", 0)
            python = codes == _PYTHON       # (the others: no statistics, nothing skipped)
            skips = none.copy()
            for i in np.flatnonzero(python).tolist():
                skips[i] = stats_skip(self.files[i], self.schema, predicate, self.columns)
            return skips, codes == _OTHER
        if self.resolved is _NO_NAMES or self.kinds == "":
            raise _PerFile
        if self.kinds is None or not self.wanted:
            mine, other = self._matching()  # `file_stats` answers {}: nothing is skipped
            return none, other
        excluded = self._excluded(predicate)   # (then which files it may answer: a pass less
        codes = self._classes if self._classes is not None \
            else self._first_codes(self.kinds.encode(), next(iter(self.wanted.values()))[0])
        if (codes == _PYTHON).any():          # where it compared a literal)
            raise _PerFile
        return (none if excluded is None else excluded & (codes <= _NONE)), codes == _OTHER

    def _first_codes(self, kinds: bytes, position: int) -> NDArray[np.uint8]:
        """Each file's first code against no literal: < 4 usable statistics, else 4-6."""
        raw = _kernels.stats_bounds(self.values, self.names, kinds, position, (None,), 0)
        return np.frombuffer(raw, dtype=np.uint8)[0::2]

    # ----------------------------------------------------------------- the filter's tree

    def _excluded(self, predicate: Predicate) -> Bools | None:
        """`stats_verdict(predicate) is False` of each file (None: of none)."""
        if isinstance(predicate, And):
            out = None
            for child in predicate.children:
                excluded = self._excluded(child)
                if excluded is not None:
                    out = excluded if out is None else out | excluded
            return out
        if isinstance(predicate, Or):
            out = np.ones(len(self.files), dtype=bool)
            for child in predicate.children:
                excluded = self._excluded(child)
                if excluded is None:
                    return None
                out &= excluded
            return out
        if not isinstance(predicate, Leaf) or predicate.column == REMAIN_COLUMN:
            return None
        column = self.wanted.get(predicate.column)
        return None if column is None else self._leaf(predicate, *column)

    def _nulls_of(self, position: int) -> NDArray[np.int64]:
        nulls = self._nulls.get(position)
        if nulls is None:
            nulls = self._nulls[position] = np.frombuffer(
                _kernels.stats_nulls(self.values, position), dtype=np.int64)
        return nulls

    def _leaf(self, leaf: Leaf, position: int, dtype: Any, mode: str,
              limit: int | None) -> Bools | None:
        """`stats._excludes` of the leaf for each file (None: of none)."""
        function, values = leaf.function, leaf.literals
        nulls = self._nulls_of(position)
        if function == "is_null":
            return nulls == 0
        all_null = (nulls != _UNKNOWN_NULLS) & (nulls >= self.rows)
        if function == "is_not_null":
            return all_null
        if function not in _NULL_REJECTING:
            return None
        if any(v is None for v in values) and function != "in_":
            return all_null
        assert self.kinds
        kind = self.kinds[position]
        bounded = mode not in ("none", "counts") and dtype.root != "CHAR" \
            and (not (dtype.is_string or dtype.is_binary) or limit is not None or mode == "full")
        upper = limit if limit is not None and (dtype.is_string or dtype.is_binary) else 0
        unbounded = np.full(len(self.files), _NONE, dtype=np.uint8)

        def codes_each(values: list[Any]) -> list[tuple[NDArray[np.uint8], NDArray[np.uint8]]]:
            """Each file's (minimum, maximum) against each value (no bounds: never compared)."""
            if not bounded:
                return [(unbounded, unbounded)] * len(values)
            both = self._codes(position, tuple(_literal(kind, value) for value in values), upper)
            return [(of_value[:, 0], of_value[:, 1]) for of_value in both]

        def codes(value: Any) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
            return codes_each([value])[0]

        def outside(low: NDArray[np.uint8], high: NDArray[np.uint8]) -> Bools:
            return (low == _GREATER) | (high == _LESS)

        excluded: Bools | None
        if function == "equal":
            excluded = outside(*codes(values[0]))
        elif function == "in_":
            excluded = np.ones(len(self.files), dtype=bool)
            present = [value for value in values if value is not None]
            for low, high in codes_each(present) if present else []:
                excluded &= outside(low, high)
        elif function == "between":
            if len(values) != 2:            # (Python's unpacking fails: no verdict)
                return all_null
            (_, high), (low, _) = codes_each(list(values))
            excluded = (high == _LESS) | (low == _GREATER)
        elif function == "less_than":
            low = codes(values[0])[0]
            excluded = (low == _EQUAL) | (low == _GREATER)
        elif function == "less_or_equal":
            excluded = codes(values[0])[0] == _GREATER
        elif dtype.is_float:                # NaN rows may match what follows
            excluded = None
        elif function == "greater_than":
            high = codes(values[0])[1]
            excluded = (high == _LESS) | (high == _EQUAL)
        elif function == "greater_or_equal":
            excluded = codes(values[0])[1] == _LESS
        elif function == "not_equal":
            low, high = codes(values[0])
            excluded = (low == _EQUAL) & (high == _EQUAL)
        else:
            excluded = None
        return all_null if excluded is None else all_null | excluded


def _literal(kind: str, value: Any) -> int | float | bytes:
    """The literal as `stats_bounds` compares it with a column of `kind`; _PerFile for one of
    another kind (`predicates._compare` raises or converts: Python answers it)."""
    t = type(value)
    if kind == "?" and t is bool:
        return int(value)
    if kind in "bhiq" and t is int:
        return value
    if kind in "fd" and t is float:
        return value
    if kind == "D" and t is dt.date:
        return (value - _EPOCH).days
    if kind == "s" and t is str:
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            raise _PerFile from None
    if kind == "y" and t is bytes:
        return value
    raise _PerFile
