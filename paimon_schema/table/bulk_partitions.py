"""The partition verdicts of many partitions at once: for each partition BinaryRow, what
`predicates.partition_verdict` answers of its decoded values (True, False or None).

A cold plan of a 100k-file table judged the ~1000 distinct partitions of the manifests it read
one by one: each row decoded into Python values and a call tree per partition, ~10 us each.
Here the C kernel `_kernels.stats_bounds` reads one partition column of every row in place and
compares it with a literal (a partition row is its own minimum), and the filter's tree becomes
numpy operations over the codes, in SQL's three values. What it does not read exactly as Python
compares (a float or binary column, a literal of another kind than the column's, a function or
tree shape of its own) leaves the whole call to the caller, and a row the kernel calls unusable
(it would not decode as the fast decoder reads it) is left to the caller row by row.
`tests/test_bulk_partitions.py` holds both equal on drawn partitions and filters.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import cast

import numpy as np
from numpy.typing import NDArray

from paimon_schema.layouts.binary_row import row_kinds
from paimon_schema.query.predicate import And, Leaf, Or, Predicate

try:
    from paimon_schema.runtime import _kernels
except ImportError:                         # built without a C compiler
    _kernels = None  # type: ignore[assignment]

__all__ = ["FALSE", "MAYBE", "TRUE", "UNDECIDED", "judge_program", "partition_verdicts"]

_LESS, _EQUAL, _GREATER, _NONE, _UNUSABLE = range(5)
#: Verdict codes: False, True, None (`partition_verdict`'s), and rows left to the caller.
FALSE, TRUE, MAYBE, UNDECIDED = range(4)
_EPOCH = dt.date(1970, 1, 1)
_NAMES = object()                           # the statistics names `stats_bounds` matches
_COMPARISONS = {"equal", "not_equal", "less_than", "less_or_equal", "greater_than",
                "greater_or_equal"}
#: `judge_program`'s node tags and comparisons, as `_kernels.partition_judge` reads them.
_AND, _OR, _CONSTANT, _COMPARE, _NULL_TEST, _IN, _BETWEEN = range(7)
_HOW = {"equal": 0, "not_equal": 1, "less_than": 2, "less_or_equal": 3, "greater_than": 4,
        "greater_or_equal": 5}

Codes = NDArray[np.uint8]


class _Python(Exception):
    """The filter asks what only `partition_verdict` answers."""


def partition_verdicts(predicate: Predicate, raws: Sequence[bytes], keys: Sequence[str],
                       types: Sequence[str]) -> Codes | None:
    """For each partition row of `raws` (columns `keys` of `types`), `partition_verdict` of
    its values as a code (`FALSE`, `TRUE`, `MAYBE`: False, True, None; or `UNDECIDED`: a row to judge in
    Python); None when Python must judge them all (no C extension, a filter it does not read)."""
    if _kernels is None or not raws:
        return None
    kinds = row_kinds(types)
    if not kinds or "y" in kinds or len(set(keys)) != len(keys):
        return None                         # (binary values: `partition_of` reads them)
    items = [(raw, None, None, _NAMES) if type(raw) is bytes and raw else None for raw in raws]
    judge = _Judge(items, kinds, dict(zip(keys, range(len(keys)))))
    try:
        verdicts = judge.verdict(predicate).copy()
    except _Python:
        return None
    verdicts[judge.unusable] = UNDECIDED
    return verdicts


def judge_program(predicate: Predicate, keys: Sequence[str], types: Sequence[str]
                  ) -> tuple[bytes, tuple] | None:
    """`partition_verdicts` of one row at a time, for `_kernels.partition_judge`: the columns'
    kind letters and the filter as a tree of tuples (the kernel judges each partition as the
    manifest decoder meets it: the numpy form costs ~50 us a call). None where
    `partition_verdicts` leaves the rows to Python; the same codes otherwise
    (`tests/test_bulk_partitions.py`)."""
    if _kernels is None:
        return None
    kinds = row_kinds(types)
    if not kinds or "y" in kinds or len(set(keys)) != len(keys):
        return None
    try:
        return kinds.encode(), _program(predicate, kinds, dict(zip(keys, range(len(keys)))))
    except _Python:
        return None


def _program(predicate: Predicate, kinds: str, positions: dict[str, int]) -> tuple:
    """The tree of `predicate` as `_Judge.verdict` and `_Judge._leaf` judge it."""
    if isinstance(predicate, (And, Or)):
        return (_AND if isinstance(predicate, And) else _OR,
                *(_program(child, kinds, positions) for child in predicate.children))
    if not isinstance(predicate, Leaf):
        raise _Python
    position = positions.get(predicate.column)
    if position is None:
        return (_CONSTANT, MAYBE)
    function, literals, kind = predicate.function, predicate.literals, kinds[position]
    if kind in "fd":
        raise _Python
    if function in ("is_null", "is_not_null"):
        return (_NULL_TEST, position, function == "is_null")
    if function in ("in_", "not_in"):
        present = tuple(_literal(kind, value) for value in literals if value is not None)
        if function == "not_in" and len(present) < len(literals):
            return (_CONSTANT, FALSE)
        return (_IN, position, function == "not_in", present)
    if function == "between":
        if len(literals) != 2 or None in literals:
            raise _Python
        return (_BETWEEN, position, _literal(kind, literals[0]), _literal(kind, literals[1]))
    if function not in _COMPARISONS or not literals:
        raise _Python
    if literals[0] is None:
        return (_CONSTANT, FALSE)
    return (_COMPARE, position, _HOW[function], _literal(kind, literals[0]))


class _Judge:
    """The kernel's codes of one batch of partition rows, column by column."""

    def __init__(self, items: list, kinds: str, positions: dict[str, int]) -> None:
        self.items, self.kinds, self.positions = items, kinds, positions
        self.encoded = kinds.encode()
        present = self._codes(0, None)
        self.unusable = present > _NONE     # (None items: unusable too)
        self._nulls: dict[int, NDArray[np.bool_]] = {0: present == _NONE}

    def _codes(self, position: int, literal: int | bytes | None) -> Codes:
        raw = _kernels.stats_bounds(self.items, _NAMES, self.encoded, position, (literal,), 0)
        return np.frombuffer(raw, dtype=np.uint8)[0::2]

    def _null(self, position: int) -> NDArray[np.bool_]:
        nulls = self._nulls.get(position)
        if nulls is None:
            nulls = self._nulls[position] = self._codes(position, None) == _NONE
        return nulls

    def verdict(self, predicate: Predicate) -> Codes:
        """The predicate's verdict code of each row (rows the kernel cannot read: any)."""
        n = len(self.items)
        if isinstance(predicate, (And, Or)):
            verdicts = [self.verdict(c) for c in predicate.children]
            deciding, other = (FALSE, TRUE) if isinstance(predicate, And) else (TRUE, FALSE)
            out = np.full(n, other, dtype=np.uint8)
            for child in verdicts:          # (`deciding` wins, then any `MAYBE`)
                out[(child == MAYBE) & (out == other)] = MAYBE
            for child in verdicts:
                out[child == deciding] = deciding
            return out
        if not isinstance(predicate, Leaf):
            raise _Python
        position = self.positions.get(predicate.column)
        if position is None:
            return np.full(n, MAYBE, dtype=np.uint8)
        held = self._leaf(predicate, position)
        return np.where(held, TRUE, FALSE).astype(np.uint8)

    def _leaf(self, leaf: Leaf, position: int) -> NDArray[np.bool_]:
        """Whether the leaf holds for each row's value (`predicates._evaluate_value`)."""
        function, literals = leaf.function, leaf.literals
        kind = self.kinds[position]
        if kind in "fd":                    # (NaN: the kernel's no bound, as NULL is;
            raise _Python                   # Python's own order)
        null = self._null(position)
        if function == "is_null":
            return null
        if function == "is_not_null":
            return ~null

        def code(value: object) -> Codes:
            return self._codes(position, _literal(kind, value))

        if function in ("in_", "not_in"):
            present = [v for v in literals if v is not None]
            hits = np.zeros(len(self.items), dtype=bool)
            for value in present:
                hits |= code(value) == _EQUAL
            if function == "in_":
                return hits & ~null
            if len(present) < len(literals):
                return np.zeros(len(self.items), dtype=bool)
            return ~hits & ~null
        if function == "between":
            if len(literals) != 2 or None in literals:
                raise _Python
            return (code(literals[0]) != _LESS) & (code(literals[1]) != _GREATER) & ~null
        if function not in _COMPARISONS or not literals:
            raise _Python
        if literals[0] is None:
            return np.zeros(len(self.items), dtype=bool)
        c = code(literals[0])
        held = {"equal": c == _EQUAL, "not_equal": c != _EQUAL, "less_than": c == _LESS,
                "less_or_equal": c != _GREATER, "greater_than": c == _GREATER,
                "greater_or_equal": c != _LESS}[function]
        return held & ~null


def _literal(kind: str, value: object) -> int | bytes:
    """The literal as `stats_bounds` compares it with a column of `kind` (`predicates._compare`'s
    order); `_Python` for one of another kind (Python raises or converts)."""
    t = type(value)
    if kind == "?" and t is bool:
        return 1 if value else 0
    if kind in "bhiq" and t is int:
        return cast(int, value)
    if kind == "D" and t is dt.date:
        return (cast(dt.date, value) - _EPOCH).days
    if kind == "s" and t is str:
        try:
            return cast(str, value).encode("utf-8")
        except UnicodeEncodeError:
            raise _Python from None
    raise _Python
