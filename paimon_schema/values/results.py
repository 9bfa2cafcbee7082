"""What an index answers about one predicate, and the answers every reader starts from.

Java's `FileIndexResult` has three kinds: REMAIN (keep the file; rows unknown), SKIP (no row
can match) and a bitmap of candidate rows. Here they are one value: `remain` says whether the
file must be read, `rows` is the candidate bitmap or None when the index cannot narrow rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce

from pyroaring import BitMap


@dataclass(frozen=True)
class IndexResult:
    remain: bool
    rows: BitMap | None = None

    @classmethod
    def of(cls, rows: BitMap) -> IndexResult:
        """A row-level answer; an empty bitmap means the file can be skipped."""
        return cls(remain=len(rows) > 0, rows=rows)

    def __and__(self, other: IndexResult) -> IndexResult:
        if not self.remain:
            return self
        if not other.remain:
            return other
        if self.rows is None:
            return other
        if other.rows is None:
            return self
        return IndexResult.of(self.rows & other.rows)

    def __or__(self, other: IndexResult) -> IndexResult:
        if not self.remain:
            return other
        if not other.remain:
            return self
        if self.rows is None or other.rows is None:
            return REMAIN
        return IndexResult.of(self.rows | other.rows)

    def __repr__(self) -> str:
        if self.rows is None:
            return "IndexResult.REMAIN" if self.remain else "IndexResult.SKIP"
        return f"IndexResult(rows={self.rows!r})"


def plural(count: int, noun: str) -> str:
    """`1 row`, `2 rows`: counts in readable reprs."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


REMAIN = IndexResult(remain=True)
SKIP = IndexResult(remain=False)


class FileIndexReader:
    """Java's `FileIndexReader` defaults: an index answers nothing unless it says otherwise.

    Values are plain Python values of the column's type (see paimon_schema.values.types); None is
    SQL NULL, as Java's predicate literals.
    """

    def equal(self, value: object) -> IndexResult:
        return REMAIN

    def not_equal(self, value: object) -> IndexResult:
        return REMAIN

    def in_(self, values: Iterable[object]) -> IndexResult:
        """Java folds `visitEqual` with OR."""
        results = [self.equal(v) for v in values]
        return reduce(lambda a, b: a | b, results) if results else SKIP

    def not_in(self, values: Iterable[object]) -> IndexResult:
        """Java folds `visitNotEqual` with AND."""
        results = [self.not_equal(v) for v in values]
        return reduce(lambda a, b: a & b, results) if results else REMAIN

    def is_null(self) -> IndexResult:
        return REMAIN

    def is_not_null(self) -> IndexResult:
        return REMAIN

    def less_than(self, value: object) -> IndexResult:
        return REMAIN

    def less_or_equal(self, value: object) -> IndexResult:
        return REMAIN

    def greater_than(self, value: object) -> IndexResult:
        return REMAIN

    def greater_or_equal(self, value: object) -> IndexResult:
        return REMAIN

    def between(self, low: object, high: object) -> IndexResult:
        return self.greater_or_equal(low) & self.less_or_equal(high)

    def top_n(self, k: int, ascending: bool = True, nulls_first: bool = False,
              within: BitMap | None = None) -> IndexResult:
        """ORDER BY this column LIMIT k, among the rows `within` (all rows when None)."""
        return REMAIN
