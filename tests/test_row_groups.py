"""The compiled grouping of the bitmap writer equals grouping by a stable sort."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from paimon_schema.layouts.bitmap_index.row_groups import group_rows


@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1]), max_size=3000),
       st.integers(1, 3000), st.data())
@example([], 5, None)
@example([7] * 10, 1, None)
@example([1, 2], 1, None)                        # more keys than the limit: declined
@example(list(range(2000)) * 2, 2000, None)      # the table doubles past 512 keys, twice
def test_group_rows_equals_sorting(keys: list[int], limit: int, data: st.DataObject | None) -> None:
    every_row = data is None or not keys or data.draw(st.booleans())
    rows = np.arange(len(keys), dtype=np.int64)
    if not every_row:                              # ascending rows with gaps, as with NULLs
        assert data is not None
        rows = np.cumsum(np.array(data.draw(st.lists(st.integers(1, 5), min_size=len(keys),
                                                     max_size=len(keys))), np.int64))
    array = np.array(keys, dtype=np.uint64)
    result = group_rows(None if every_row else rows, array, limit)
    distinct = np.unique(array)
    if len(distinct) > limit:
        assert result is None
        return
    assert result is not None
    grouped = np.frombuffer(result.rows, np.uint32)
    assert result.keys.tolist() == distinct.tolist()
    for key, start, count, runs in zip(result.keys.tolist(), result.starts.tolist(), result.counts.tolist(),
                                       result.runs.tolist()):
        expected = rows[array == key]
        assert grouped[start:start + count].tolist() == expected.tolist()
        assert runs == bool((np.diff(expected) == 1).any())
    assert int(result.counts.sum()) == len(keys)


@pytest.mark.parametrize("distinct", [7, 70_000])       # the hash table, and past it the sort
def test_signed_grouping_equals_flipped_keys(distinct: int) -> None:
    """The bitmap writer hands int64 bits to `_group` unflipped (`signed`): the groups, their
    order and their keys equal those of the sign-flipped keys."""
    from paimon_schema.layouts.bitmap_index import writer

    rng = np.random.default_rng(distinct)
    keys = rng.integers(-2**63, 2**63 - 1, distinct, dtype=np.int64)
    values = np.concatenate([keys, keys[rng.integers(0, distinct, 30_000)]])     # every key present
    rng.shuffle(values)
    raw = values.view(np.uint64)
    signed = writer._group(len(values), None, raw, signed=True)
    flipped = writer._group(len(values), None, raw ^ np.uint64(1 << 63))
    assert signed.rows == flipped.rows
    for got, expected in zip(signed[1:], flipped[1:]):
        np.testing.assert_array_equal(got, expected)
    assert (signed.keys ^ np.uint64(1 << 63)).view(np.int64).tolist() == sorted(set(keys.tolist()))
