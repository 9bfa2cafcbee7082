"""A column's values, given as a Python list, a numpy (masked) array, a pyarrow (chunked) array
or a pandas Series, in the one shape the bulk writers take: the internal values of the non-null
rows as a numpy array (or strings numbered by value) and a validity mask.

Every writer has a per-row reference pass over plain Python values (`types.internal` per
value). This module hands a writer typed arrays only where they mean exactly what that pass
would make of the same values, checked in bulk (element types, ranges); anything else becomes
`Column.rows`, plain Python values (`tolist`/`to_pylist`), and the reference pass accepts or
refuses them value by value, with the message naming the value. So every input kind gives the
same bytes and the same errors.

What a value means is what the plain Python value it stands for means:
- NULL is None, a masked numpy entry, NaT in a datetime64 array, an Arrow null, a masked entry
  of a pandas nullable dtype, and what pandas calls missing in an object Series (None, NaN,
  NA, NaT); NaN in a float array (numpy, Arrow, a numpy-backed or nullable float Series) is
  the float NaN, a value Paimon indexes.
- Arrow and numpy temporal arrays are their instants: a TIMESTAMP key is the epoch value in the
  index's unit (millis up to precision 3, else micros), floored like `datetime` arithmetic
  floors; DATE takes days (date32, date64, datetime64[D]); TIME takes time32/time64 as the
  millisecond of the day, floored. Time zones need no conversion: Arrow stores UTC.

pyarrow and pandas are optional: they are imported only when the input is one of their objects.
"""

from __future__ import annotations

import decimal
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count, repeat
from operator import is_not
from typing import Any

import numpy as np

from paimon_schema.values import types
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import DataType

try:
    from paimon_schema.runtime import _pylists
except ImportError:             # built without a C compiler: lists take the pure-Python path
    _pylists = None  # type: ignore[assignment]
try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: numpy sets NULLs aside
    _kernels = None  # type: ignore[assignment]

_INTEGER_BACKED = frozenset(types.INTEGER_BOUNDS)
#: Arrow/numpy time units per second.
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_FINER_THAN_MICROS = frozenset({"ns", "ps", "fs", "as"})


@dataclass(frozen=True)
class Column:
    """One column. Exactly one of `numbers`, `strings` and `rows` is set.

    - `numbers`: the non-null rows' internal values, already checked against the type: int64
      keys of the integer-backed types (days, millis of day, epoch millis or micros) and the
      unscaled int64 of a DECIMAL; float32/float64 (unrounded: FLOAT is rounded by the writer
      as `types.float32` rounds) for FLOAT and DOUBLE; bool for BOOLEAN.
    - `strings`: (one int64 code per non-null row, the UTF-8 (or binary) bytes of each code):
      every code is used and no two codes share bytes.
    - `rows`: one plain Python value per row (None = NULL), for the writers' per-row passes.
    """

    data_type: DataType
    num_rows: int
    valid: np.ndarray | None = None          # bool per row; None: no NULL
    numbers: np.ndarray | None = None
    strings: tuple[np.ndarray, list[bytes]] | None = None
    rows: list[Any] | None = None

    def python_rows(self) -> list[Any]:
        """One plain Python value per row, as the per-row passes take them: `rows`, or the
        internal values (which every type takes as its values, strings decoded again)."""
        if self.rows is not None:
            return self.rows
        if self.numbers is not None:
            present = self.numbers.tolist()
            if self.data_type.root == "DECIMAL":
                assert self.data_type.scale is not None     # a parsed DECIMAL
                present = [decimal.Decimal(v).scaleb(-self.data_type.scale) for v in present]
        else:
            assert self.strings is not None     # exactly one of rows, numbers, strings is set
            codes, encoded = self.strings
            distinct: list[Any] = [v.decode("utf-8") for v in encoded] if self.data_type.is_string \
                else encoded
            present = [distinct[i] for i in codes.tolist()]
        if self.valid is None:
            return present
        rows: list[Any] = [None] * self.num_rows
        for row, value in zip(np.flatnonzero(self.valid).tolist(), present):
            rows[row] = value
        return rows


def column_values(data_type: DataType, values: Any) -> Column:
    """`values` (one per row) as a `Column` of `data_type`; SchemaError for an input that is
    not a column at all (a scalar, a nested Arrow type, a 2-d array)."""
    if isinstance(values, np.ndarray):
        return _numpy(data_type, values)
    module = type(values).__module__.partition(".")[0]
    if module == "pyarrow":
        return _arrow(data_type, values)
    if module == "pandas":
        return _pandas(data_type, values)
    if isinstance(values, (str, bytes, bytearray, memoryview, dict, set, frozenset)) \
            or not hasattr(values, "__iter__"):
        raise SchemaError(f"a column's values must be a sequence, one value per row (list, "
                          f"numpy array, pyarrow array, pandas Series), not {type(values).__name__}")
    return _plain(data_type, values if isinstance(values, list) else list(values))


def _as_list(values: list | np.ndarray) -> list:
    """A list, or an object array's items as one."""
    return values if isinstance(values, list) else values.tolist()


# ---------------------------------------------------------------------------------------------
# Plain Python values


def _plain(data_type: DataType, values: list | np.ndarray) -> Column:
    """A list (or a numpy array of objects): typed in bulk when every non-null value has
    exactly the type the kind wants (`bool` is an `int` subclass, so exact types keep booleans
    out of integer columns): in one pass in C (`runtime/pylists.c`) where it is built, else
    with numpy."""
    if data_type.is_string or data_type.is_binary:
        coded = _first_occurrence_codes(data_type, values)
        return coded if coded is not None else Column(data_type, len(values), rows=_as_list(values))
    kind = _PLAIN_KINDS.get(data_type.root)
    if _pylists is not None and data_type.root in _TEMPORAL_KINDS \
            and not isinstance(next((v for v in values if v is not None), 0), int):
        kind = _TEMPORAL_KINDS[data_type.root]      # dates, times, datetimes (not days or millis)
    typed = None if kind is None else _compiled_numbers(values, kind) if _pylists is not None \
        else _plain_numbers(data_type, _as_list(values))
    if typed is None:
        return Column(data_type, len(values), rows=_as_list(values))
    array, valid, extremes = typed
    if kind == "S":
        keys = _rescale(array, _PER_SECOND["us"], _key_units(data_type))
        assert keys is not None                     # coarser units: never overflows
        array, extremes = keys, None
    return _checked(data_type, array, valid, len(values), lambda: _as_list(values), extremes)


#: What a list's values must be, per type root (as `_pylists.numbers` spells it): exact ints
#: within int64 ('i'); exact floats, or ints within int64 ('f'); exact booleans ('b').
_PLAIN_KINDS = {**{root: "i" for root in _INTEGER_BACKED}, "DECIMAL": "i", "FLOAT": "f", "DOUBLE": "f",
                "BOOLEAN": "b"}
#: Lists of `datetime` objects, typed in C from their fields: dates as epoch days ('D'), times
#: as the millisecond of the day ('T'), naive datetimes as epoch micros ('S').
_TEMPORAL_KINDS = {"DATE": "D", "TIME": "T", "TIMESTAMP": "S", "TIMESTAMP_LTZ": "S"}
_KIND_DTYPES = {"i": np.dtype(np.int64), "f": np.dtype(np.float64), "b": np.dtype(bool),
                "D": np.dtype(np.int64), "T": np.dtype(np.int64), "S": np.dtype(np.int64)}


#: (the non-null values, the validity mask or None, their least and greatest value or None)
_Typed = tuple[np.ndarray, "np.ndarray | None", "tuple[int, int] | None"]


def _compiled_numbers(values: list | np.ndarray, kind: str) -> _Typed | None:
    """`_pylists.numbers` as numpy arrays (views of its buffers), with the extremes it found
    on the way for integer kinds (so the range check needs no pass of its own)."""
    assert _pylists is not None
    typed = _pylists.numbers(values, kind)
    if typed is None:
        return None
    data, valid, low, high = typed
    return (np.frombuffer(data, _KIND_DTYPES[kind]), None if valid is None else np.frombuffer(valid, bool),
            None if low is None or high is None else (low, high))


def _plain_numbers(data_type: DataType, values: list) -> _Typed | None:
    """`_compiled_numbers` in Python and numpy (no extremes), None where a value is not
    exactly of the kind's types."""
    seen = set(map(type, values))
    has_null = type(None) in seen
    seen.discard(type(None))
    if not seen <= _PLAIN_TYPES[data_type.root]:
        return None
    valid = None
    non_null = values
    if has_null:
        valid = np.fromiter(map(is_not, values, repeat(None)), bool, len(values))
        non_null = [v for v in values if v is not None]
    dtype = bool if data_type.root == "BOOLEAN" else float if float in seen else np.int64
    try:
        array = np.fromiter(non_null, dtype, len(non_null))   # the types are checked: no casts
    except OverflowError:                    # an int past int64: the reference pass says which
        return None
    return array, valid, None


_PLAIN_TYPES: dict[str, set[type]] = {
    **{root: {int} for root in _INTEGER_BACKED}, "DECIMAL": {int},
    "FLOAT": {int, float}, "DOUBLE": {int, float}, "BOOLEAN": {bool}}


def _first_occurrence_codes(data_type: DataType, values: list | np.ndarray,
                            missing: Callable[[Any], Any] | None = None) -> Column | None:
    """Strings (or bytes) numbered by first occurrence, each distinct one checked and encoded
    once; None for anything else (unhashable values, other types, a lone surrogate): the
    reference pass refuses it by name. NULL is None, and whatever `missing` says is missing
    (pandas: None, NaN, NA, NaT). In one pass in C (`runtime/pylists.c`) for exact strs or bytes,
    None and (with `missing`) NaN; else with a Python dict."""
    if _pylists is not None:
        numbered = _pylists.codes(values, data_type.is_string, missing is not None)
        if numbered is not None:
            data, valid, distinct = numbered
            encoded = _encoded(distinct, data_type.is_string)
            if encoded is None:
                return None
            return Column(data_type, len(values), valid=None if valid is None else np.frombuffer(valid, bool),
                          strings=(np.frombuffer(data, np.int64), encoded))
    return _dict_codes(data_type, _as_list(values), missing)


def _encoded(distinct: list, exact: bool | None = None) -> list[bytes] | None:
    """The UTF-8 bytes of each distinct str (bytes as they are); None for a lone surrogate.
    `exact`: all are exact strs (True) or bytes (False), as `_pylists.codes` checked: no
    check each (a million distinct strings: a third of the time)."""
    try:
        if exact is not None:
            return list(map(str.encode, distinct)) if exact else distinct
        return [v if isinstance(v, bytes) else v.encode("utf-8") for v in distinct]
    except UnicodeEncodeError:
        return None


def _dict_codes(data_type: DataType, values: list, missing: Callable[[Any], Any] | None) -> Column | None:
    """`_first_occurrence_codes` with a Python dict (Python's `==` on `str` is equality of the
    UTF-8 bytes, and no other built-in type equals a `str` or `bytes`, so checking the distinct
    values' types checks every row's)."""
    code_of: defaultdict[Any, int] = defaultdict(count().__next__)
    try:
        codes = np.fromiter(map(code_of.__getitem__, values), np.int64, len(values))
    except TypeError:
        return None
    distinct = list(code_of)
    null = np.fromiter((v is None or (missing is not None and missing(v) is True) for v in distinct),
                       bool, len(distinct))
    kept = [v for v, is_null in zip(distinct, null.tolist()) if not is_null]
    if not set(map(type, kept)) <= {str if data_type.is_string else bytes}:
        return None
    encoded = _encoded(kept)
    if encoded is None:
        return None
    if not null.any():
        return Column(data_type, len(values), strings=(codes, encoded))
    valid = ~null[codes]
    renumbered = np.cumsum(~null) - 1              # close the gaps the NULLs left
    return Column(data_type, len(values), valid=valid, strings=(renumbered[codes[valid]], encoded))


# ---------------------------------------------------------------------------------------------
# Typed arrays


def _checked(data_type: DataType, array: np.ndarray, valid: np.ndarray | None, num_rows: int,
             rows: Any, extremes: tuple[int, int] | None = None) -> Column:
    """`array` (the non-null values, numpy; `extremes`: its least and greatest value, if
    known) as `numbers` if they fit `data_type` exactly as the reference pass would take their
    plain Python values; else `rows()`, for that pass."""
    numbers = _numbers(data_type, array, extremes)
    if numbers is None:
        return Column(data_type, num_rows, rows=rows())
    return Column(data_type, num_rows, valid=valid, numbers=numbers)


def _numbers(data_type: DataType, array: np.ndarray, extremes: tuple[int, int] | None = None) -> np.ndarray | None:
    root, letter = data_type.root, array.dtype.kind
    if root == "BOOLEAN":
        return array if letter == "b" else None
    if root in ("FLOAT", "DOUBLE"):
        if letter == "f":
            return array if array.dtype.itemsize >= 4 else array.astype(np.float32)
        if letter in "iu":
            return array.astype(np.float64)        # float(int) rounds as the cast does
        return None
    if letter not in "iu":
        return None
    if root == "DECIMAL":
        return _unscaled(data_type, array, extremes)
    if root not in _INTEGER_BACKED:
        return None
    low, high = types.INTEGER_BOUNDS[root]
    limits = np.iinfo(array.dtype)
    if len(array) and (limits.min < low or limits.max > high):     # the dtype may not fit
        least, greatest = _extremes(array, extremes)
        if least < low or greatest > high:
            return None
    return array.astype(np.int64, copy=False)


def _extremes(array: np.ndarray, known: tuple[int, int] | None) -> tuple[int, int]:
    """The least and greatest value of a non-empty integer array."""
    return known if known is not None else (int(array.min()), int(array.max()))


def _unscaled(data_type: DataType, array: np.ndarray, extremes: tuple[int, int] | None = None
              ) -> np.ndarray | None:
    """Integers as a DECIMAL's unscaled int64 (`v * 10**s`), where none passes the precision
    or int64."""
    assert data_type.precision is not None      # a parsed DECIMAL
    scale = 10 ** (data_type.scale or 0)
    bound = min(10 ** data_type.precision - 1, types.INT64_MAX) // scale
    if len(array):
        least, greatest = _extremes(array, extremes)
        if least < -bound or greatest > bound:
            return None
    return array.astype(np.int64) * np.int64(scale)


def _compress(array: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """`array[valid]` (one-dimensional, numbers): by the compiled loop, which has no branch
    per row (numpy's mispredicts at every change of validity: ~3 ms a million rows)."""
    if _kernels is None or array.dtype.itemsize not in (1, 2, 4, 8) or array.dtype.kind not in "biuf":
        return array[valid]
    array = np.ascontiguousarray(array)
    kept = _kernels.compress(array, array.dtype.itemsize, np.ascontiguousarray(valid, bool))
    return np.frombuffer(kept, array.dtype)


def _numpy(data_type: DataType, values: np.ndarray, valid: np.ndarray | None = None) -> Column:
    """A numpy array (a masked array's mask marks NULLs, as its `tolist` does)."""
    if values.ndim != 1:
        raise SchemaError(f"a column's values must be one-dimensional, not a {values.ndim}-d array")
    num_rows = len(values)
    if isinstance(values, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(values)
        values = values.data
        if mask.any():
            valid = ~mask if valid is None else valid & ~mask
    letter = values.dtype.kind
    if letter in "biuf":
        array = values if valid is None else _compress(values, valid)
        return _checked(data_type, array, valid, num_rows, lambda: _python_rows(values, valid))
    if letter == "M":
        return _datetime64(data_type, values, valid)
    if letter == "m":                   # `tolist` would make nanoseconds plain ints: keep them
        return Column(data_type, num_rows, rows=list(values))      # numpy scalars, refused
    if letter == "O" and valid is None:
        return _plain(data_type, values)
    rows = values.tolist()
    if valid is not None:
        rows = [v if ok else None for v, ok in zip(rows, valid.tolist())]
    return _plain(data_type, rows)


def _python_rows(values: np.ndarray, valid: np.ndarray | None) -> list:
    rows = values.tolist()
    if valid is None:
        return rows
    return [v if ok else None for v, ok in zip(rows, valid.tolist())]


def _datetime64(data_type: DataType, values: np.ndarray, valid: np.ndarray | None) -> Column:
    """datetime64: NaT is NULL; a DATE takes day units, a TIMESTAMP any unit."""
    unit, step = np.datetime_data(values.dtype)
    raw = values.view(np.int64)
    not_nat = raw != np.iinfo(np.int64).min
    valid = not_nat if valid is None else valid & not_nat
    if valid.all():
        valid = None
    array = raw if valid is None else _compress(raw, valid)

    def rows() -> list:                 # dates or datetimes, never plain ints (nanoseconds)
        if unit == "D":
            return _python_rows(values, valid)
        micros = values.astype("datetime64[us]")
        if unit not in _FINER_THAN_MICROS and (unit, step) != ("us", 1):
            # numpy wraps a value past int64 microseconds silently: a round trip finds it
            if ((micros.astype(values.dtype) != values) & ~np.isnat(values)).any():
                raise SchemaError(f"a {values.dtype} value lies beyond the int64 microseconds "
                                  f"a timestamp holds")
        return _python_rows(micros, valid)

    if data_type.root == "DATE" and unit == "D" and step == 1:
        return _checked(data_type, array, valid, len(values), rows)
    if data_type.is_timestamp and unit in _PER_SECOND:
        units = _times(array.astype(np.int64, copy=False), step)
        keys = None if units is None else _rescale(units, _PER_SECOND[unit], _key_units(data_type))
        if keys is not None:
            return _checked(data_type, keys, valid, len(values), rows)
    return Column(data_type, len(values), rows=rows())


def _key_units(data_type: DataType) -> int:
    """Units per second of a TIMESTAMP's index key."""
    return 1_000 if (data_type.precision or 0) <= 3 else 1_000_000


def _rescale(raw: np.ndarray, per_second: int, wanted: int) -> np.ndarray | None:
    """Integers in units of 1/per_second as units of 1/wanted, floored; None on int64 overflow."""
    raw = raw.astype(np.int64, copy=False)
    if per_second == wanted:                    # the index's unit already: no pass
        return raw
    if per_second > wanted:
        return raw // np.int64(per_second // wanted)
    return _times(raw, wanted // per_second)


def _times(raw: np.ndarray, factor: int) -> np.ndarray | None:
    """`raw * factor` (int64), None where it would overflow: numpy wraps silently."""
    if factor == 1:
        return raw
    if len(raw) and (int(raw.min()) < types.INT64_MIN // factor or int(raw.max()) > types.INT64_MAX // factor):
        return None
    return raw * np.int64(factor)


# ---------------------------------------------------------------------------------------------
# pyarrow


def _arrow(data_type: DataType, values: Any) -> Column:
    """A pyarrow Array or ChunkedArray."""
    pa = sys.modules["pyarrow"]
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if not isinstance(values, pa.Array):
        raise SchemaError(f"a column's values must be a pyarrow Array or ChunkedArray, "
                          f"not {type(values).__name__}")
    arrow_type = values.type
    if pa.types.is_dictionary(arrow_type):
        values = values.dictionary_decode()
        arrow_type = values.type
    if pa.types.is_null(arrow_type):
        return Column(data_type, len(values), rows=[None] * len(values))
    if pa.types.is_nested(arrow_type):
        raise SchemaError(f"unsupported Arrow type {arrow_type} for a column of type {data_type}")
    valid = _arrow_validity(values) if values.null_count else None

    def rows() -> list:
        try:
            return values.to_pylist()
        except (OverflowError, ValueError) as exc:      # a temporal value past Python's range
            raise SchemaError(f"a {arrow_type} value out of range: {exc}") from exc

    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type):
        return _checked(data_type, _arrow_fixed(values, np.dtype(arrow_type.to_pandas_dtype()), valid), valid,
                        len(values), rows)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
            or pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type) \
            or pa.types.is_fixed_size_binary(arrow_type) or _is_view(pa, arrow_type):
        wanted = data_type.is_string if _is_text(pa, arrow_type) else data_type.is_binary
        if not wanted:
            return Column(data_type, len(values), rows=rows())
        return _arrow_strings(data_type, values, valid, len(values), rows)
    if pa.types.is_boolean(arrow_type):
        present = values.drop_null() if valid is not None else values
        return _checked(data_type, present.to_numpy(zero_copy_only=False), valid, len(values), rows)
    if pa.types.is_date32(arrow_type) or pa.types.is_date64(arrow_type):
        if data_type.root != "DATE":
            return Column(data_type, len(values), rows=rows())
        raw = _arrow_fixed(values, np.dtype(np.int32 if pa.types.is_date32(arrow_type) else np.int64), valid)
        days = raw if pa.types.is_date32(arrow_type) else raw // 86_400_000
        return _checked(data_type, days, valid, len(values), rows)
    if pa.types.is_timestamp(arrow_type) and data_type.is_timestamp:
        keys = _rescale(_arrow_fixed(values, np.dtype(np.int64), valid), _PER_SECOND[arrow_type.unit],
                        _key_units(data_type))
        return _checked(data_type, keys, valid, len(values), rows) if keys is not None \
            else Column(data_type, len(values), rows=rows())
    if (pa.types.is_time32(arrow_type) or pa.types.is_time64(arrow_type)) \
            and data_type.root == "TIME":
        raw = _arrow_fixed(values, np.dtype(np.int32 if pa.types.is_time32(arrow_type) else np.int64), valid)
        millis = _rescale(raw, _PER_SECOND[arrow_type.unit], 1_000)
        return _checked(data_type, millis, valid, len(values), rows) if millis is not None \
            else Column(data_type, len(values), rows=rows())
    if pa.types.is_decimal128(arrow_type) and data_type.root == "DECIMAL":
        unscaled = _arrow_unscaled(data_type, values.drop_null() if valid is not None else values,
                                   arrow_type.scale)
        if unscaled is not None:
            return Column(data_type, len(values), valid=valid, numbers=unscaled)
    return Column(data_type, len(values), rows=rows())


def _arrow_fixed(values: Any, dtype: np.dtype, valid: np.ndarray | None) -> np.ndarray:
    """The non-null values of an Arrow array of fixed-width numbers (integers, floats, dates,
    times, timestamps) straight from its data buffer (`dtype` as wide as its values), NULLs
    set aside by one compiled pass (`_compress`), not by Arrow's filter."""
    data = np.frombuffer(values.buffers()[1], dtype, len(values), values.offset * dtype.itemsize)
    return data if valid is None else _compress(data, valid)


def _arrow_validity(values: Any) -> np.ndarray:
    """The rows that are not null (bool): the validity bitmap unpacked, or Arrow's `is_valid`
    for an array without one."""
    bitmap = values.buffers()[0]
    if bitmap is None:
        return values.is_valid().to_numpy(zero_copy_only=False)
    bits = np.unpackbits(np.frombuffer(bitmap, np.uint8), count=values.offset + len(values), bitorder="little")
    return bits[values.offset:].view(bool)


def _arrow_unscaled(data_type: DataType, present: Any, scale: int) -> np.ndarray | None:
    """decimal128 values (16-byte little-endian two's complement, `scale`) as the unscaled
    int64 of `data_type`; None where one needs rounding, passes int64 or the precision."""
    assert data_type.precision is not None      # a parsed DECIMAL
    shift = (data_type.scale or 0) - scale
    if shift < 0:
        return None
    words = np.frombuffer(present.buffers()[1], dtype="<i8").reshape(-1, 2)
    words = words[present.offset:present.offset + len(present)]
    low, high = words[:, 0], words[:, 1]
    if not np.array_equal(high, low >> np.int64(63)):
        return None
    factor = 10 ** shift
    bound = min(10 ** data_type.precision - 1, types.INT64_MAX) // factor
    if len(low) and (int(low.min()) < -bound or int(low.max()) > bound):
        return None
    return low * np.int64(factor)


def _is_view(pa: Any, arrow_type: Any) -> bool:
    return any(getattr(pa.types, name, lambda _: False)(arrow_type)
               for name in ("is_string_view", "is_binary_view"))


def _is_text(pa: Any, arrow_type: Any) -> bool:
    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) \
        or getattr(pa.types, "is_string_view", lambda _: False)(arrow_type)


def _arrow_strings(data_type: DataType, values: Any, valid: np.ndarray | None, num_rows: int, rows: Any) -> Column:
    """Arrow's hash table numbers the distinct values (of the non-null rows: Arrow encodes an
    array with nulls several times slower); each distinct value's bytes are sliced from the
    dictionary's buffers (Arrow strings are UTF-8 already, checked once by Arrow; views as
    their large type), else decoded and encoded again (`to_pylist` and `encode` give back its
    bytes, or fail as the reference pass would on the same values)."""
    pa = sys.modules["pyarrow"]
    if _is_view(pa, values.type):       # Arrow filters no views: as their large type
        values = values.cast(pa.large_string() if _is_text(pa, values.type) else pa.large_binary())
    encoded = (values.drop_null() if valid is not None else values).dictionary_encode()
    dictionary = _dictionary_bytes(pa, encoded.dictionary)
    if dictionary is None:
        try:
            dictionary = encoded.dictionary.to_pylist()
        except UnicodeDecodeError as exc:       # Arrow checks UTF-8 only when asked to
            raise SchemaError(f"string is not valid UTF-8: {exc.object[:40]!r} for {data_type}") from exc
        if dictionary and isinstance(dictionary[0], str):
            try:
                dictionary = [v.encode("utf-8") for v in dictionary]
            except UnicodeEncodeError:
                return Column(data_type, num_rows, rows=rows())
    indices = encoded.indices
    codes = _arrow_fixed(indices, np.dtype(indices.type.to_pandas_dtype()), None).astype(np.int64)
    return Column(data_type, num_rows, valid=valid, strings=(codes, dictionary))


def _dictionary_bytes(pa: Any, dictionary: Any) -> list[bytes] | None:
    """Each value of a string or binary (large or not) Arrow array as bytes, sliced from one
    copy of its data by its offsets (no str each); None for other types, and for a string
    array that is not valid UTF-8 (the per-value path says which value)."""
    arrow_type = dictionary.type
    width: np.dtype
    if pa.types.is_string(arrow_type) or pa.types.is_binary(arrow_type):
        width = np.dtype(np.int32)
    elif pa.types.is_large_string(arrow_type) or pa.types.is_large_binary(arrow_type):
        width = np.dtype(np.int64)
    else:
        return None
    if not len(dictionary):
        return []
    if _is_text(pa, arrow_type):
        try:
            dictionary.validate(full=True)
        except pa.ArrowInvalid:
            return None
    _, offsets, data = dictionary.buffers()
    bounds = np.frombuffer(offsets, width, len(dictionary) + 1, dictionary.offset * width.itemsize).tolist()
    blob = data.to_pybytes() if data is not None else b""
    return [blob[start:end] for start, end in zip(bounds, bounds[1:])]


# ---------------------------------------------------------------------------------------------
# pandas


def _pandas(data_type: DataType, values: Any) -> Column:
    """A pandas Series or Index: numpy-backed ones as their numpy array (NaN is a float, NaT a
    NULL), nullable extension dtypes through Arrow (their mask is NULL), categoricals by
    category, object ones as Python values with what pandas calls missing (None, NaN, NA, NaT)
    as NULL."""
    pd = sys.modules["pandas"]
    if isinstance(values, pd.DataFrame) or not isinstance(values, (pd.Series, pd.Index)):
        raise SchemaError(f"a column's values must be a pandas Series or Index, "
                          f"not {type(values).__name__}")
    dtype = values.dtype
    if isinstance(dtype, np.dtype) and dtype.kind != "O":
        return _numpy(data_type, values.to_numpy())
    if isinstance(values.array, (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)):
        mask = values.array._mask          # nullable numbers: their values and mask, as Arrow takes them
        data = values.array._data.view()
        data.flags.writeable = False       # the Series' own memory: never written through
        return _numpy(data_type, data, ~mask if mask.any() else None)
    if not isinstance(dtype, np.dtype) and hasattr(values.array, "__arrow_array__"):
        try:
            import pyarrow as pa
        except ImportError:
            pass
        else:
            return _arrow(data_type, pa.array(values.array))
    if isinstance(dtype, pd.CategoricalDtype):
        codes = values.array.codes
        categories = _pandas(data_type, pd.Series(values.array.categories))
        if categories.rows is None and categories.valid is None:
            return _categorical(data_type, codes, categories)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return _numpy(data_type, values.array.tz_convert("UTC").tz_localize(None).to_numpy())
    if data_type.is_string or data_type.is_binary:      # NA found among the distinct values
        coded = _first_occurrence_codes(data_type, values.to_numpy(dtype=object), pd.isna)
        if coded is not None:
            return coded
    return _plain(data_type, values.to_numpy(dtype=object, na_value=None).tolist())


def _categorical(data_type: DataType, codes: np.ndarray, categories: Column) -> Column:
    """Categories typed once, then each row's code (-1 = NULL) picks its category."""
    valid = codes >= 0
    has_null = not valid.all()
    present = codes[valid] if has_null else codes
    if categories.numbers is not None:
        return Column(data_type, len(codes), valid=valid if has_null else None,
                      numbers=categories.numbers[present])
    assert categories.strings is not None   # exactly one of rows, numbers, strings is set
    codes_, distinct = categories.strings
    used, inner = np.unique(codes_[present], return_inverse=True)
    return Column(data_type, len(codes), valid=valid if has_null else None,
                  strings=(inner.astype(np.int64).ravel(), [distinct[i] for i in used.tolist()]))
