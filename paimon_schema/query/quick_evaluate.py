"""`evaluate` of an embedded file-index container without parsing it in Python, where it can.

Planning a table evaluates the container of every file its partitions and statistics keep; the
Python path (container, bitmap head, index block, one reader per file) costs ~70 us a file, most
of the plan of a 100k-file table. The C kernel `_avro.probe_bitmap` answers `=` and IN on a
column whose one index is a bitmap V2 (and any leaf of a column without an index, or with one
empty entry) from the bytes, and declines everything the Python readers would read otherwise:
`quick_evaluate` then returns None and the caller evaluates the parsed container, which
answers or raises its located FormatError. Where it answers, the answer is `evaluate`'s
(`tests/test_quick_evaluate.py` holds them equal on random and damaged containers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from pyroaring import BitMap

from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.paimon_common import KeyKind
from paimon_schema.query.evaluate import EMPTY_ENTRY_SKIPS
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.results import REMAIN, SKIP, IndexResult
from paimon_schema.values.types import DataType

try:
    from paimon_schema.runtime import _avro
except ImportError:                         # built without a C compiler
    _avro = None  # type: ignore[assignment]

__all__ = ["QuickEvaluator", "quick_evaluate"]

#: The key widths the kernel compares (0: string keys); booleans and floats it leaves to Python.
_WIDTHS = {KeyKind.string: 0, KeyKind.int8: 1, KeyKind.int16: 2, KeyKind.int32: 4,
           KeyKind.int64: 8}
_NO_INDEX, _EMPTY_ENTRY, _NO_ROWS, _ONE_ROW, _BITMAP = range(5)


class _Decline(Exception):
    """The Python path answers this one."""


def quick_evaluate(data: bytes, predicate: Predicate,
                   row_type: Mapping[str, str | DataType]) -> IndexResult | None:
    """`evaluate(data, predicate, row_type)` (without a deletion vector) from the container's
    bytes, or None where only the Python path can answer (or raise)."""
    if _avro is None or type(data) is not bytes:
        return None
    try:
        return _compile(predicate, row_type)(data)
    except _Decline:
        return None


class QuickEvaluator:
    """`quick_evaluate(data, predicate, row_type)` as a function of `data`, for the containers
    of many files: the predicate is walked and its literals encoded once (`_compile`), and
    each answer is kept by the container's bytes (a table's files often share containers: a
    partition's files with the same few values; the answer depends on the bytes alone). The
    answers' bitmaps are then shared between files: read, never changed."""

    def __init__(self, predicate: Predicate, row_type: Mapping[str, str | DataType]) -> None:
        self._evaluate = _compile(predicate, row_type) if _avro is not None else None
        self._answers: dict[bytes, IndexResult | None] = {}

    def __call__(self, data: bytes | None) -> IndexResult | None:
        if self._evaluate is None or type(data) is not bytes:
            return None
        answer = self._answers.get(data, _UNSET)
        if answer is _UNSET:
            try:
                answer = self._evaluate(data)
            except _Decline:
                answer = None
            self._answers[data] = answer
        return answer  # type: ignore[return-value]


_UNSET = object()
_Step = Callable[[bytes], IndexResult]


def _compile(predicate: Predicate, row_type: Mapping[str, str | DataType]) -> _Step:
    """`evaluate._combine` of the predicate as a function of a container's bytes: every
    child answered, a decline (_Decline) anywhere declines it all (a leaf whose literals the
    kernel cannot probe declines every container)."""
    if isinstance(predicate, (And, Or)):
        if not predicate.children:
            return _declined
        children = [_compile(child, row_type) for child in predicate.children]
        if isinstance(predicate, And):
            def combined(data: bytes) -> IndexResult:
                out = children[0](data)
                for child in children[1:]:
                    out = out & child(data)
                return out
        else:
            def combined(data: bytes) -> IndexResult:
                out = children[0](data)
                for child in children[1:]:
                    out = out | child(data)
                return out
        return combined
    if not isinstance(predicate, Leaf):
        return _declined
    column = predicate.column.encode("utf-8", "surrogatepass")
    function = predicate.function
    if function not in ("equal", "in_"):
        return lambda data: _entries_only(data, column, function)
    try:
        width, probes = _probes(row_type.get(predicate.column), predicate.literals)
    except _Decline:
        return _declined
    if not probes:
        return lambda data: _entries_only(data, column, function, empty_in=True)
    return lambda data: _probed(data, column, width, probes)


def _declined(data: bytes) -> IndexResult:
    raise _Decline


def _probed(data: bytes, column: bytes, width: int, probes: tuple[Any, ...]) -> IndexResult:
    """An `=` or IN leaf with these encoded keys (at least one): the union of the keys'
    rows."""
    found = []
    for key in probes:
        try:
            answer = _avro.probe_bitmap(data, column, width, key)
        except OverflowError:               # an int key beyond 64 bits
            raise _Decline from None
        if answer is None:
            raise _Decline
        kind = answer[0]
        if kind == _NO_INDEX:
            return REMAIN
        if kind == _EMPTY_ENTRY:
            return REMAIN & SKIP            # `equal` and `in_` are among EMPTY_ENTRY_SKIPS
        found.append(_rows(data, answer))
    return REMAIN & IndexResult.of(BitMap.union(*found))


def _entries_only(data: bytes, column: bytes, function: str, empty_in: bool = False) -> IndexResult:
    """A leaf the kernel looks no key up for: REMAIN without an index, the empty entry's
    answer with one empty entry, else declined."""
    answer = _avro.probe_bitmap(data, column, 0, None)
    if answer is None:
        raise _Decline
    if answer[0] == _NO_INDEX:
        return REMAIN
    if answer[0] == _EMPTY_ENTRY and not empty_in:
        return REMAIN & (SKIP if function in EMPTY_ENTRY_SKIPS else REMAIN)
    raise _Decline


def _rows(data: bytes, answer: tuple[int, ...]) -> Any:
    """The rows of one key, as `_V2Reader._entry_rows` reads them; declined where it would
    raise."""
    if answer[0] == _NO_ROWS:
        return BitMap()
    if answer[0] == _ONE_ROW:
        return BitMap([answer[1]])
    _, offset, length, num_rows = answer
    try:
        bitmap, _ = roaring.deserialize(memoryview(data)[offset:offset + length], exact=True)
    except FormatError:
        raise _Decline from None
    if bitmap and bitmap.max() >= num_rows:
        raise _Decline
    return bitmap


def _probes(column_type: str | DataType | None, literals: tuple[Any, ...]) -> tuple[int, tuple[Any, ...]]:
    """(key width, the literals' keys) for the kernel; declined for a literal the Python path
    treats otherwise (None: the null rows), a key kind the kernel does not compare, or a
    literal that does not encode (the Python path raises)."""
    if column_type is None:
        raise _Decline
    try:
        found = _keys(column_type, literals)
    except TypeError:                           # an unhashable literal
        found = None
    if found is None:
        raise _Decline
    return found


@lru_cache(maxsize=256)
def _keys(column_type: str | DataType, literals: tuple[Any, ...]) -> tuple[int, tuple[Any, ...]] | None:
    try:
        codec = keys.bitmap_keys(column_type)
        width = _WIDTHS.get(codec.kind)
        if width is None or any(v is None for v in literals):
            return None
        return width, tuple(codec.encode(v) for v in literals)
    except (SchemaError, ValueError, TypeError, OverflowError):
        return None
