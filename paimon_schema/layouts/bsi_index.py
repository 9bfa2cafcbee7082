"""BSI file indexes (formats/bsi_index.ksy): read, answer predicates, and write.

Answers are those of Java's `BitSliceIndexBitmapFileIndex.Reader` at the newest Paimon
(formats/bsi_index.ksy). Every value is a long (paimon_schema.values.types.internal: days, millis
of the day, epoch millis or micros, unscaled decimals). Rows with a value >= 0 live in the
positive part, rows with a negative value in the negative part as |value|; each part is a
bit-sliced index compared with `BitSliceIndexRoaringBitmap`'s min/max shortcuts, then exactly
(paimon_schema.layouts.bitslice). Nulls never match; `!=` and NOT IN exclude them.

`Long.MIN_VALUE` cannot be stored (the writer rejects |MIN|, which overflows), so since 2.0.0
Java answers a MIN literal as smaller than every stored value: `=` matches nothing, `<` and `<=`
nothing, `>`, `>=` and `!=` every non-null row.

The format is a stream with no offsets, so the whole blob is parsed and decoded on open, as
Java does. Writing follows `BitSliceIndexBitmapFileIndex.Writer`: a part is written only when it
has rows, its min is always 0 (the collector starts at 0) and its slices are the bits of the
stored (absolute) values.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from pyroaring import BitMap

from paimon_schema.generated import bsi_index_codec, roaring_bitmap_codec
from paimon_schema.generated.bsi_index import BsiIndex
from paimon_schema.layouts import bitslice
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.column_values import column_values
from paimon_schema.layouts.roaring_writer import framed_slices
from paimon_schema.runtime import constructs
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values import types
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.positions import fresh_bitmap
from paimon_schema.values.results import REMAIN, FileIndexReader, IndexResult, plural
from paimon_schema.values.types import DataType

SUPPORTED = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP",
             "TIMESTAMP_LTZ", "DECIMAL")
LONG_MIN, LONG_MAX = -2**63, 2**63 - 1


@dataclass(frozen=True)
class BsiPart:
    """One `BitSliceIndexRoaringBitmap`: rows in `ebm` store `min_value` + the bits of the
    slices they are in."""

    min_value: int = 0
    max_value: int = 0
    ebm: BitMap = field(default_factory=BitMap)
    slices: list[BitMap] = field(default_factory=list)

    def eq(self, value: int) -> BitMap:
        if self.min_value == self.max_value == value:
            return BitMap(self.ebm)
        if not self.min_value <= value <= self.max_value:
            return BitMap()
        return bitslice.equal(self.ebm, self.slices, value - self.min_value)

    def lt(self, value: int) -> BitMap:
        return self._compare(value, bitslice.less_than,
                             everything=value > self.max_value, nothing=value <= self.min_value)

    def lte(self, value: int) -> BitMap:
        return self._compare(value, bitslice.less_or_equal,
                             everything=value >= self.max_value, nothing=value < self.min_value)

    def gt(self, value: int) -> BitMap:
        return self._compare(value, bitslice.greater_than,
                             everything=value < self.min_value, nothing=value >= self.max_value)

    def gte(self, value: int) -> BitMap:
        return self._compare(value, bitslice.greater_or_equal,
                             everything=value <= self.min_value, nothing=value > self.max_value)

    def _compare(self, value: int, exact: Callable[[BitMap, list[BitMap], int], BitMap], *,
                 everything: bool, nothing: bool) -> BitMap:
        """Java's `compareUsingMinMax` shortcuts, else the exact comparison on `value - min`."""
        if everything:
            return BitMap(self.ebm)
        if nothing:
            return BitMap()
        return exact(self.ebm, self.slices, value - self.min_value)

    def values(self) -> dict[int, int]:
        """{row: stored value} for every row of `ebm`."""
        stored = dict.fromkeys(self.ebm, self.min_value)
        for i, bitmap in enumerate(self.slices):
            for row in bitmap & self.ebm:
                stored[row] += 1 << i
        return stored


class BsiIndexReader(FileIndexReader):
    """Java's BSI reader over one blob."""

    def __init__(self, data_type: DataType, num_rows: int, positive: BsiPart,
                 negative: BsiPart) -> None:
        self._data_type = data_type
        self.num_rows = num_rows
        self.positive = positive
        self.negative = negative

    @classmethod
    def open(cls, blob: bytes, data_type: str | DataType) -> BsiIndexReader:
        """Parse and decode the blob; SchemaError for a type the index refuses, FormatError
        for bad bytes."""
        dtype = DataType.parse(data_type)
        if dtype.root not in SUPPORTED:
            raise SchemaError(f"the bsi index does not support {dtype}")
        view = memoryview(blob)
        parsed = parsing.parse(BsiIndex, view)
        positive = _part(view, parsed, "positive")
        negative = _part(view, parsed, "negative")
        for name, part in (("positive", positive), ("negative", negative)):
            if part.ebm and part.ebm.max() >= parsed.num_rows:
                raise FormatError(f"row {part.ebm.max()} has a value but the index has "
                                  f"{parsed.num_rows} rows", path=f"{name}.ebm",
                                  offset=parsing.field_start(getattr(parsed, name), "ebm"))
        if positive.ebm.intersection_cardinality(negative.ebm):
            raise FormatError("a row is both in the positive and the negative part",
                              path="negative.ebm", offset=parsing.field_start(parsed.negative, "ebm"))
        return cls(dtype, parsed.num_rows, positive, negative)

    def __repr__(self) -> str:
        values = len(self.positive.ebm) + len(self.negative.ebm)
        return (f"<BsiIndexReader {self._data_type}: {plural(self.num_rows, 'row')}, "
                f"{self.num_rows - values} null>")

    # -- enumeration ---------------------------------------------------------------------------

    @property
    def non_null_rows(self) -> BitMap:
        return self.positive.ebm | self.negative.ebm

    @property
    def null_rows(self) -> BitMap:
        return self.non_null_rows.flip(0, self.num_rows)

    def values(self) -> dict[int, int]:
        """{row: stored long} for every non-null row, in row order (nulls are absent, so
        the size follows the data, not the row count the header claims)."""
        stored = self.positive.values()
        stored.update((row, -value) for row, value in self.negative.values().items())
        return dict(sorted(stored.items()))

    # -- predicates ----------------------------------------------------------------------------

    def is_null(self) -> IndexResult:
        return IndexResult.of(self.null_rows)

    def is_not_null(self) -> IndexResult:
        return IndexResult.of(self.non_null_rows)

    def equal(self, value: object) -> IndexResult:
        return self.in_([value])

    def not_equal(self, value: object) -> IndexResult:
        return self.not_in([value])

    def in_(self, values: Iterable[object]) -> IndexResult:
        longs = self._longs(values)
        return REMAIN if longs is None else IndexResult.of(self._in(longs))

    def not_in(self, values: Iterable[object]) -> IndexResult:
        longs = self._longs(values)
        return REMAIN if longs is None else IndexResult.of(self.non_null_rows - self._in(longs))

    def less_than(self, value: object) -> IndexResult:
        return self._compare(value, lambda v: BitMap() if v == LONG_MIN else
                             self.negative.gt(-v) if v < 0 else
                             self.positive.lt(v) | self.negative.ebm)

    def less_or_equal(self, value: object) -> IndexResult:
        return self._compare(value, lambda v: BitMap() if v == LONG_MIN else
                             self.negative.gte(-v) if v < 0 else
                             self.positive.lte(v) | self.negative.ebm)

    def greater_than(self, value: object) -> IndexResult:
        return self._compare(value, lambda v: self.non_null_rows if v == LONG_MIN else
                             self.positive.ebm | self.negative.lt(-v) if v < 0 else
                             self.positive.gt(v))

    def greater_or_equal(self, value: object) -> IndexResult:
        return self._compare(value, lambda v: self.non_null_rows if v == LONG_MIN else
                             self.positive.ebm | self.negative.lte(-v) if v < 0 else
                             self.positive.gte(v))

    def _in(self, longs: list[int]) -> BitMap:
        rows = BitMap()
        for v in longs:
            if v != LONG_MIN:
                rows |= self.negative.eq(-v) if v < 0 else self.positive.eq(v)
        return rows

    def _compare(self, value: object, rows: Callable[[int], BitMap]) -> IndexResult:
        longs = self._longs([value])
        return REMAIN if longs is None else IndexResult.of(rows(longs[0]))

    def _longs(self, values: Iterable[object]) -> list[int] | None:
        """The literals as Java's value mapper gives them; None if one is SQL NULL (Java
        unboxes it and throws: never narrow)."""
        longs = []
        for value in values:
            if value is None:
                return None
            internal = _internal_long(self._data_type, value)
            if internal is None or not LONG_MIN <= internal <= LONG_MAX:
                raise SchemaError(f"{value!r} for {self._data_type} does not fit a long "
                                  f"(Java's toUnscaledLong throws)")
            longs.append(internal)
        return longs


def _part(view: memoryview, parsed: BsiIndex, name: str) -> BsiPart:
    """Decode the `positive` or `negative` part (an absent one is empty, as in Java)."""
    raw: Any = getattr(parsed, name, None)
    if raw is None:
        return BsiPart()
    if raw.max_value < raw.min_value:
        raise FormatError(f"max {raw.max_value} is below min {raw.min_value}",
                          offset=parsing.field_start(raw, "max_value"), path=f"{name}.max_value")
    expected = (raw.max_value - raw.min_value).bit_length()
    if raw.num_slices != expected:
        raise FormatError(f"{raw.num_slices} slices, but values up to {raw.max_value} need "
                          f"{expected}", offset=parsing.field_start(raw, "num_slices"),
                          path=f"{name}.num_slices")
    spans = parsing.spans(raw)
    ebm = _bitmap(view, spans["ebm"], f"{name}.ebm")
    slices = [_bitmap(view, span, f"{name}.slices[{i}]") for i, span in enumerate(spans["slices"].items)]
    return BsiPart(raw.min_value, raw.max_value, ebm, slices)


def _bitmap(view: memoryview, span: parsing.Span, path: str) -> BitMap:
    """The bitmap the generated parser delimited at `span`, decoded by pyroaring."""
    assert span.start is not None and span.end is not None
    try:
        bitmap, _ = roaring.deserialize(view[:span.end], span.start, exact=True)
    except FormatError as exc:
        raise exc.within(path, 0) from exc
    return bitmap


def build_bsi(data_type: str | DataType, values: Any) -> bytes:
    """The blob Java's BSI writer writes for `values` (None = null), one row each: typed
    columns (`column_values`) in bulk, anything else value by value; the bytes straight from
    `struct` and the compiled slicing, each part (its existence bitmap and slices) from one
    pass over the column, framed in place (`framed_slices`; `write_with_codec`, the generated
    codec's over pyroaring, is the reference)."""
    num_rows, present, valid = _present_longs(data_type, values)
    low, high = (int(present.min()), int(present.max())) if len(present) else (0, -1)
    parts = [b"\x00", b"\x00"]            # has_positive, has_negative = 0: no row of that sign
    for at, sign, maximum in ((0, 1, high), (1, -1, -low)):
        if (high >= 0 if sign > 0 else low < 0):
            parts[at] = _PART_HEAD.pack(1, 1, 0, maximum)
    head = _HEAD.pack(1, num_rows)
    if high >= 0 and low < 0:               # both signs: two passes, the second part appended
        positive = framed_slices(present, valid, sign=1, prefix=head + parts[0], suffix=b"")
        return positive + framed_slices(present, valid, sign=-1, prefix=parts[1], suffix=b"")
    if high >= 0:
        return framed_slices(present, valid, sign=1, prefix=head + parts[0], suffix=parts[1])
    if low < 0:
        return framed_slices(present, valid, sign=-1, prefix=head + parts[0] + parts[1], suffix=b"")
    return head + parts[0] + parts[1]


def write_with_codec(data_type: str | DataType, values: Any) -> bytes:
    """`build_bsi` through the generated Construct codec: the reference."""
    num_rows, array, present = _longs(data_type, values)
    positive = present & (array >= 0)
    negative = present & (array < 0)
    model = {"version": 1, "num_rows": num_rows,
             "has_positive": int(positive.any()), "positive": _part_model(array, positive, 1),
             "has_negative": int(negative.any()), "negative": _part_model(array, negative, -1)}
    return _codec().build(model)


_HEAD = struct.Struct(">Bi")              # version, num_rows
_PART_HEAD = struct.Struct(">BBqq")       # has_<part> = 1, version, min_value, max_value
_S4 = struct.Struct(">i")


def _longs(data_type: str | DataType, values: Any) -> tuple[int, np.ndarray, np.ndarray]:
    """(num_rows, each row's long (0 for NULL), the non-null rows); SchemaError for a type the
    BSI does not take or a value that does not fit."""
    num_rows, present, valid = _present_longs(data_type, values)
    if valid is None:
        return num_rows, present.astype(np.int64), np.ones(num_rows, bool)
    array = np.zeros(num_rows, np.int64)
    array[valid] = present
    return num_rows, array, valid


def _present_longs(data_type: str | DataType, values: Any) -> tuple[int, np.ndarray, np.ndarray | None]:
    """(num_rows, the non-null rows' longs (signed integers), the non-null rows (None: every
    row)); SchemaError for a type the BSI does not take or a value that does not fit."""
    dtype = DataType.parse(data_type)
    if dtype.root not in SUPPORTED:
        raise SchemaError(f"the bsi index does not support {dtype}")
    column = column_values(dtype, values)
    if column.numbers is not None:
        if column.numbers.size and int(column.numbers.min()) == LONG_MIN:
            _refuse_long_min(LONG_MIN)
        return column.num_rows, column.numbers, column.valid
    longs, nulls = [], []
    for value in column.python_rows():
        internal = _internal_long(dtype, value)
        if internal is not None and not LONG_MIN < internal <= LONG_MAX:
            _refuse_long_min(value)
        nulls.append(internal is None)
        if internal is not None:
            longs.append(internal)
    return len(nulls), np.array(longs, dtype=np.int64), ~np.array(nulls, dtype=bool)


def _internal_long(data_type: DataType, value: object) -> int | None:
    """`types.internal` of a value of a `SUPPORTED` type: an int (None for NULL)."""
    internal = types.internal(data_type, value)
    if internal is None or isinstance(internal, int):
        return internal
    raise SchemaError(f"{value!r} for {data_type} is not an integer")


def _refuse_long_min(value: object) -> None:
    raise SchemaError(f"{value!r} does not fit the long a BSI stores (Java refuses "
                      f"Long.MIN_VALUE, whose absolute value overflows)")


@cache
def _codec() -> Any:
    return bsi_index_codec.bsi_index.compile()


@cache
def _roaring_codec() -> Any:
    return roaring_bitmap_codec.roaring_bitmap.compile()


def _part_rows(values: np.ndarray, rows: np.ndarray, sign: int) -> tuple[np.ndarray, list[np.ndarray], int]:
    """One part (`BitSliceIndexRoaringBitmap.Appender`), stored values `sign * value`: its
    rows, each slice's rows, the largest stored value."""
    positions = np.flatnonzero(rows).astype(np.uint64)
    stored = (values[rows] * sign).astype(np.uint64)
    maximum = int(stored.max())
    slices = [positions[(stored >> np.uint64(i)) & np.uint64(1) == 1]
              for i in range(maximum.bit_length())]
    return positions, slices, maximum


def _part_model(values: np.ndarray, rows: np.ndarray, sign: int) -> dict[str, Any] | None:
    if not rows.any():
        return None
    positions, slices, maximum = _part_rows(values, rows, sign)
    return {"start": {}, "version": 1, "min_value": 0, "max_value": maximum,
            "ebm": _roaring_model(positions), "num_slices": len(slices),
            "slices": [_roaring_model(s) for s in slices]}


def _roaring_model(positions: np.ndarray) -> Any:
    return constructs.parse(_roaring_codec(), fresh_bitmap(positions).serialize())
