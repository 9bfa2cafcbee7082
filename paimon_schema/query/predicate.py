"""Predicates over the columns of a data file: `ps.col("a") == 5`, combined with `&`, `|`, `~`.

Negation is pushed down to the leaves when `~` is applied (De Morgan: `~(a == v)` is
`a != v`), never computed as a set complement of a result: a REMAIN inside it would turn into
a wrong skip.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from paimon_schema.values.results import FileIndexReader, IndexResult

#: leaf function -> its negation (Java's `LeafFunction.negate`)
NEGATION = {
    "equal": "not_equal", "not_equal": "equal",
    "less_than": "greater_or_equal", "greater_or_equal": "less_than",
    "less_or_equal": "greater_than", "greater_than": "less_or_equal",
    "in_": "not_in", "not_in": "in_",
    "is_null": "is_not_null", "is_not_null": "is_null",
}


class Predicate:
    """A predicate over the columns of one data file; combine with `&`, `|`, `~`."""

    def __and__(self, other: Predicate) -> Predicate:
        return And((self, other))

    def __or__(self, other: Predicate) -> Predicate:
        return Or((self, other))

    def __invert__(self) -> Predicate:
        raise NotImplementedError

    def columns(self) -> set[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class Leaf(Predicate):
    """One comparison of one column: `function` is a FileIndexReader method name."""

    function: str
    column: str
    literals: tuple[Any, ...] = ()

    def __invert__(self) -> Predicate:
        if self.function == "between":
            low, high = self.literals
            return Leaf("less_than", self.column, (low,)) | Leaf("greater_than", self.column, (high,))
        return Leaf(NEGATION[self.function], self.column, self.literals)

    def columns(self) -> set[str]:
        return {self.column}

    def ask(self, reader: FileIndexReader) -> IndexResult:
        if self.function in ("in_", "not_in"):
            return getattr(reader, self.function)(list(self.literals))
        return getattr(reader, self.function)(*self.literals)

    def __repr__(self) -> str:
        args = ", ".join(repr(v) for v in self.literals)
        return f"col({self.column!r}).{self.function}({args})"


@dataclass(frozen=True)
class And(Predicate):
    children: tuple[Predicate, ...]

    def __invert__(self) -> Predicate:
        return Or(tuple(~c for c in self.children))

    def columns(self) -> set[str]:
        return set().union(*(c.columns() for c in self.children))


@dataclass(frozen=True)
class Or(Predicate):
    children: tuple[Predicate, ...]

    def __invert__(self) -> Predicate:
        return And(tuple(~c for c in self.children))

    def columns(self) -> set[str]:
        return set().union(*(c.columns() for c in self.children))


class col:
    """A column of the data file, as the container names it (`m[k1]` for a map key)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, value: object) -> Leaf:          # type: ignore[override]
        return Leaf("equal", self.name, (value,))

    def __ne__(self, value: object) -> Leaf:          # type: ignore[override]
        return Leaf("not_equal", self.name, (value,))

    def __lt__(self, value: object) -> Leaf:
        return Leaf("less_than", self.name, (value,))

    def __le__(self, value: object) -> Leaf:
        return Leaf("less_or_equal", self.name, (value,))

    def __gt__(self, value: object) -> Leaf:
        return Leaf("greater_than", self.name, (value,))

    def __ge__(self, value: object) -> Leaf:
        return Leaf("greater_or_equal", self.name, (value,))

    __hash__ = None   # type: ignore[assignment]

    def isin(self, values: Iterable[object]) -> Leaf:
        return Leaf("in_", self.name, tuple(values))

    def not_in(self, values: Iterable[object]) -> Leaf:
        return Leaf("not_in", self.name, tuple(values))

    def is_null(self) -> Leaf:
        return Leaf("is_null", self.name)

    def is_not_null(self) -> Leaf:
        return Leaf("is_not_null", self.name)

    def between(self, low: object, high: object) -> Leaf:
        return Leaf("between", self.name, (low, high))
