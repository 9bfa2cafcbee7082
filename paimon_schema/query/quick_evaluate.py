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

from collections.abc import Mapping
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

__all__ = ["quick_evaluate"]

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
        return _result(data, predicate, row_type)
    except _Decline:
        return None


def _result(data: bytes, predicate: Predicate, row_type: Mapping[str, str | DataType]) -> IndexResult:
    """`evaluate._combine`: every child answered (a decline anywhere declines it all)."""
    if isinstance(predicate, (And, Or)) and not predicate.children:
        raise _Decline                      # (the Python path fails on it)
    if isinstance(predicate, And):
        results = [_result(data, child, row_type) for child in predicate.children]
        out = results[0]
        for result in results[1:]:
            out = out & result
        return out
    if isinstance(predicate, Or):
        results = [_result(data, child, row_type) for child in predicate.children]
        out = results[0]
        for result in results[1:]:
            out = out | result
        return out
    if not isinstance(predicate, Leaf):
        raise _Decline
    column = predicate.column.encode("utf-8", "surrogatepass")
    if predicate.function not in ("equal", "in_"):
        return _entries_only(data, column, predicate.function)
    width, probes = _probes(row_type.get(predicate.column), predicate.literals)
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
    if not found:
        # an empty IN list: the Python readers answer without reading a key
        return _entries_only(data, column, predicate.function, empty_in=True)
    rows = BitMap.union(*found)
    return REMAIN & IndexResult.of(rows)


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
