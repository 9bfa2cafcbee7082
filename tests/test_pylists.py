"""The compiled list pass (`runtime/pylists.c`) types a list exactly as the pure-Python path
does: the same arrays where both take the list, a decline where either declines."""

from __future__ import annotations

import datetime as dt
import enum
import math
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_schema.layouts import column_values as cv
from paimon_schema.values import types
from paimon_schema.values.types import DataType
from tests.oracles import REQUIRE_ORACLES_ENV, oracles_required
from tests.strategies import mostly_null_lists

if cv._pylists is None:
    # Built without a C compiler, the package is correct but slower (lists take numpy's path);
    # CI builds it, so there a missing extension fails.
    reason = "the C extension paimon_schema.runtime._pylists is not built (no C compiler?)"
    if oracles_required():
        pytest.fail(f"{REQUIRE_ORACLES_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


class _Color(enum.IntEnum):
    RED = 1


class _Text(str):
    pass


#: Items of every kind a list may hold: each kind's own values and every near miss
#: (subclasses, numpy scalars, bool for int, ints past int64, NaN as a float or numpy's).
ITEMS = st.one_of(
    st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), st.integers(-2**70, 2**70),
    st.floats(allow_nan=True), st.just(math.nan), st.text(max_size=3), st.binary(max_size=3),
    st.sampled_from([_Color.RED, np.int64(3), np.float64("nan"), np.float64(1.5), _Text("a"),
                     bytearray(b"a"), "\ud800", "", b""]))


def _kinds(kind: str) -> st.SearchStrategy[list[Any]]:
    """Lists mostly of one kind's values (so that both paths often take them), with near
    misses mixed in."""
    own = {"i": st.integers(-2**63, 2**63 - 1), "f": st.one_of(st.floats(), st.integers(-2**63, 2**63 - 1)),
           "b": st.booleans(), "s": st.sampled_from(["a", "b", "é", "a" * 20, "", "中文", "😀", "a\x00b", "\ud800"]),
           "y": st.sampled_from([b"a", b"", b"\xff"])}[kind]
    return st.lists(st.one_of(own, own, own, st.none(), ITEMS), max_size=30)


@pytest.mark.parametrize("root, kind", [("BIGINT", "i"), ("DOUBLE", "f"), ("BOOLEAN", "b")])
@given(data=st.data())
def test_numbers_equal_the_python_path(root: str, kind: str, data: st.DataObject) -> None:
    values = data.draw(_kinds(kind))
    compiled = cv._compiled_numbers(values, kind)
    python = cv._plain_numbers(DataType.parse(root), values)
    if compiled is None or python is None:
        # The compiled pass declines only ints past int64 that numpy's float path takes.
        assert compiled is None and (python is None or kind == "f"), (values, python)
        return
    assert compiled[0].dtype == cv._KIND_DTYPES[kind]
    np.testing.assert_array_equal(compiled[0], python[0].astype(compiled[0].dtype))
    if kind == "i" and len(compiled[0]):       # the extremes found on the way are the array's
        assert compiled[2] == (int(compiled[0].min()), int(compiled[0].max()))
    else:
        assert compiled[2] is None
    assert (compiled[1] is None) == (python[1] is None)
    if python[1] is not None:
        np.testing.assert_array_equal(compiled[1], python[1])


_OWN = {"i": st.integers(-2**63, 2**63 - 1), "f": st.floats(), "b": st.booleans(),
        "S": st.datetimes(), "D": st.dates(), "T": st.times()}


@pytest.mark.parametrize("kind", sorted(_OWN))
@given(data=st.data())
def test_numbers_of_mostly_null_lists_equal_their_present_items(kind: str, data: st.DataObject) -> None:
    """A long list of mostly None (the pass sets the NULLs aside a block at a time, then types
    the present items only) gives the values of its present items, typed as a list without
    NULLs is (one tight pass), and their validity; an untyped item anywhere declines it. As a
    list and as an object array."""
    values = data.draw(mostly_null_lists(_OWN[kind]))
    present = [v for v in values if v is not None]
    expected = cv._pylists.numbers(present, kind)
    assert expected is not None
    for column in (values, np.array(values + [0], dtype=object)[:-1]):
        found = cv._pylists.numbers(column, kind)
        assert found is not None
        assert found[0] == expected[0] and found[2:] == (expected[2:] if present else (None, None))
        assert (found[1] is None) == (len(present) == len(values))
        if found[1] is not None:
            assert list(found[1]) == [v is not None for v in values]
    if values:
        at = data.draw(st.integers(0, len(values) - 1))
        assert cv._pylists.numbers(values[:at] + [_Text("x")] + values[at + 1:], kind) is None


@pytest.mark.parametrize("root, kind", [("STRING", "s"), ("BYTES", "y")])
@pytest.mark.parametrize("pandas", [False, True], ids=["list", "pandas-missing"])
@given(data=st.data())
def test_codes_equal_the_python_path(root: str, kind: str, pandas: bool, data: st.DataObject) -> None:
    """Short lists of every item, and long ones of mostly NULL (None, and NaN for pandas),
    past the blocks of rows the pass sets NULLs aside in."""
    values = data.draw(_kinds(kind) | mostly_null_lists(st.one_of(
        st.sampled_from(["a", "é", "中文", ""] if kind == "s" else [b"a", b""]), st.just(math.nan), ITEMS)))
    data_type = DataType.parse(root)
    missing = (lambda v: v is None or (isinstance(v, float) and math.isnan(v))) if pandas else None
    compiled = cv._first_occurrence_codes(data_type, values, missing)
    python = cv._dict_codes(data_type, values, missing)
    assert (compiled is None) == (python is None), values
    if compiled is None or python is None:
        return
    assert compiled.strings is not None and python.strings is not None
    np.testing.assert_array_equal(compiled.strings[0], python.strings[0])
    assert compiled.strings[1] == python.strings[1]
    assert (compiled.valid is None) == (python.valid is None)
    if python.valid is not None:
        np.testing.assert_array_equal(compiled.valid, python.valid)


def test_declines_at_the_first_untyped_item() -> None:
    """Exact types only: a subclass, a numpy scalar or an int past int64 is declined, never
    converted (no user `__index__`, `__hash__` or `__eq__` runs inside the C loop)."""
    assert cv._pylists is not None
    for values, kind in [([1, True], "i"), ([1, _Color.RED], "i"), ([1, np.int64(1)], "i"),
                         ([2**63], "i"), ([1.5], "i"), ([1.5, 2**63], "f"), ([1, np.float64(1)], "f"),
                         ([True, 1], "b"), ([None, np.bool_(True)], "b")]:
        assert cv._pylists.numbers(values, kind) is None, values
    for values in (["a", _Text("a")], ["a", b"a"], ["a", math.nan], ["a", 1]):
        assert cv._pylists.codes(values, True, False) is None, values
    assert cv._pylists.codes(["a", np.float64("nan")], True, True) is None
    assert cv._pylists.codes([bytearray(b"a")], False, False) is None


def test_lists_and_object_arrays_only() -> None:
    """A list, or a numpy array of objects read in place (one-dimensional, contiguous); any
    other container is declined, and the callers make it a list first."""
    assert cv._pylists is not None
    objects = np.array([1, None, 3], dtype=object)
    data, valid, low, high = cv._pylists.numbers(objects, "i")
    assert (low, high) == (1, 3)
    assert np.frombuffer(data, np.int64).tolist() == [1, 3] and list(valid) == [1, 0, 1]
    assert cv._pylists.numbers(np.array([], dtype=object), "i") == (bytearray(), None, None, None)
    data, valid, distinct = cv._pylists.codes(np.array(["a", None, "a"], dtype=object)[::1], True, False)
    assert np.frombuffer(data, np.int64).tolist() == [0, 0] and list(valid) == [1, 0, 1] and distinct == ["a"]
    for other in ((1, 2), np.array([1, 2]), np.array([[1], [2]], dtype=object),
                  np.array([1, 2, 3], dtype=object)[::2], "ab", 7):
        assert cv._pylists.numbers(other, "i") is None, other
        assert cv._pylists.codes(other, True, False) is None, other
    with pytest.raises(ValueError, match="kind"):
        cv._pylists.numbers([1], "x")


def test_int64_edges() -> None:
    """Every int64 is read exactly (the digits of an int are read directly up to Python 3.11);
    one past either end is declined."""
    assert cv._pylists is not None
    edges = [0, 1, -1, 2**30 - 1, 2**30, -2**30, 2**60 - 1, 2**60, -2**60, 2**62, 2**63 - 1, -2**63,
             -2**63 + 1]
    data, _, low, high = cv._pylists.numbers(edges, "i")
    assert (low, high) == (-2**63, 2**63 - 1)
    assert np.frombuffer(data, np.int64).tolist() == edges
    doubles, _, low, _ = cv._pylists.numbers(edges, "f")
    assert low is None                                  # extremes: integer kinds only
    assert np.frombuffer(doubles, np.float64).tolist() == [float(v) for v in edges]
    for past in (2**63, -2**63 - 1, 2**64, -2**64, 2**90, -2**90, 2**200):
        assert cv._pylists.numbers([past], "i") is None, past


#: Ints of either sign at every digit count the direct read takes (a 30-bit digit each),
#: around each digit boundary and int64's ends, and one past them.
_SIGNED_INTS = st.builds(lambda sign, bits, offset: sign * (2**bits + offset), st.sampled_from([1, -1]),
                         st.sampled_from([0, 29, 30, 31, 59, 60, 61, 62, 63, 64]), st.integers(-2, 1))


@given(values=st.lists(st.one_of(_SIGNED_INTS, st.integers(-2**63, 2**63 - 1), st.integers(-300, 300)),
                       max_size=40))
def test_ints_of_mixed_signs_read_exactly(values: list[int]) -> None:
    """The sign applied without a branch (a column of keys around zero changes sign at random)
    gives each int64 exactly and declines the list at the first int past int64."""
    assert cv._pylists is not None
    found = cv._pylists.numbers(values, "i")
    if any(not -2**63 <= v < 2**63 for v in values):
        assert found is None
        return
    assert found is not None
    data, valid, low, high = found
    assert valid is None and np.frombuffer(data, np.int64).tolist() == values
    assert (low, high) == ((min(values), max(values)) if values else (None, None))


def test_buffers_are_owned_and_refcounts_balance() -> None:
    """The buffers outlive the list; no reference leaks per item (the distinct strings are
    held once by the returned list, nothing else)."""
    assert cv._pylists is not None
    item = "only-" + str(id(object()))
    before = sys.getrefcount(item)
    for _ in range(100):
        data, valid, distinct = cv._pylists.codes([item, None, item], True, False)
        assert np.frombuffer(data, np.int64).tolist() == [0, 0] and list(valid) == [1, 0, 1] and distinct == [item]
        del data, valid, distinct
    assert sys.getrefcount(item) == before
    values = [1, None, 3]
    data, valid, _, _ = cv._pylists.numbers(values, "i")
    del values
    assert np.frombuffer(data, np.int64).tolist() == [1, 3] and list(valid) == [1, 0, 1]


class _Date(dt.date):
    pass


@pytest.mark.parametrize("data_type", ["DATE", "TIME", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP_LTZ(0)"])
@given(data=st.data())
def test_temporal_lists_equal_the_reference(data_type: str, data: st.DataObject) -> None:
    """Dates, times and naive datetimes read from their fields in C give each value's internal
    key (`types.internal`); a subclass, an aware datetime or another type takes the per-row
    pass."""
    parsed = DataType.parse(data_type)
    own = {"DATE": st.dates(), "TIME": st.times(), "TIMESTAMP": st.datetimes(),
           "TIMESTAMP_LTZ": st.datetimes()}[parsed.root]
    misses = st.sampled_from([dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), _Date(2020, 1, 1),
                              dt.date(2020, 1, 1), dt.time(1, tzinfo=dt.timezone.utc), "2020-01-01"])
    values = data.draw(st.lists(st.one_of(own, own, own, st.none(), misses), max_size=20))
    column = cv.column_values(parsed, values)
    if column.numbers is not None:
        expected = [types.internal(parsed, v) for v in values if v is not None]
        assert column.numbers.tolist() == expected
        assert (column.valid is None) == (None not in values)
    else:
        assert column.rows == values
        assert any(v is not None and type(v) is not {"DATE": dt.date, "TIME": dt.time}.get(parsed.root, dt.datetime)
                   or (isinstance(v, dt.datetime) and v.tzinfo is not None) for v in values)


@pytest.mark.parametrize("data_type", ["TIMESTAMP(3)", "TIMESTAMP(6)"])
@given(data=st.data())
def test_datetimes_sharing_days_equal_the_reference(data_type: str, data: st.DataObject) -> None:
    """Datetimes on a few days (the pass keeps the last day's epoch days: most rows reuse
    it), days coming back after others, pre-1970 and the calendar's ends, microseconds, with
    and without NULLs (the tight loop and the block loop): each value's internal key."""
    parsed = DataType.parse(data_type)
    days = data.draw(st.lists(st.dates() | st.sampled_from([dt.date(1, 1, 1), dt.date(9999, 12, 31),
                                                            dt.date(1969, 12, 31), dt.date(1970, 1, 1)]),
                              min_size=1, max_size=3))
    moments = st.builds(dt.datetime.combine, st.sampled_from(days), st.times())
    values = data.draw(st.lists(moments, max_size=40) | st.lists(st.none() | moments, max_size=40)
                       | mostly_null_lists(moments, max_rows=6000))
    column = cv.column_values(parsed, values)
    assert column.numbers is not None
    assert column.numbers.tolist() == [types.internal(parsed, v) for v in values if v is not None]


def test_temporal_lists_are_typed_in_bulk() -> None:
    for data_type, values in [("DATE", [dt.date(1, 1, 1), None, dt.date(9999, 12, 31), dt.date(1969, 12, 31)]),
                              ("TIME", [dt.time(23, 59, 59, 999_999), dt.time(0)]),
                              ("TIMESTAMP(3)", [dt.datetime(1969, 12, 31, 23, 59, 59, 999_999), dt.datetime(9999, 12, 31)]),
                              ("TIMESTAMP(9)", [dt.datetime(1, 1, 1), None])]:
        column = cv.column_values(DataType.parse(data_type), values)
        assert column.numbers is not None, data_type
        assert column.numbers.tolist() == [types.internal(DataType.parse(data_type), v) for v in values if v is not None]


def test_many_distinct_strings_of_every_width() -> None:
    """Past the table's first 1024 slots and 16 KiB of key bytes: every string of every PEP 393
    width (and bytes) numbered as the dict path numbers them."""
    rng = np.random.default_rng(5)
    alphabet = ["a", "é", "ÿ", "中", "😀", "\x00", "Z"]
    pool = ["".join(rng.choice(alphabet, size=int(n)).tolist()) for n in rng.integers(0, 12, 30_000)]
    values: list[Any] = [pool[i] for i in rng.integers(0, len(pool), 100_000).tolist()]
    values[::7] = [None] * len(values[::7])
    for data_type, column in (("STRING", values), ("BYTES", [None if v is None else v.encode() for v in values])):
        parsed = DataType.parse(data_type)
        compiled = cv._first_occurrence_codes(parsed, column)
        python = cv._dict_codes(parsed, column, None)
        assert compiled is not None and python is not None and compiled.strings is not None \
            and python.strings is not None
        np.testing.assert_array_equal(compiled.strings[0], python.strings[0])
        assert compiled.strings[1] == python.strings[1]
        np.testing.assert_array_equal(compiled.valid, python.valid)
