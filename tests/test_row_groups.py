"""The compiled grouping of the bitmap writer equals grouping by a stable sort."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from paimon_schema.layouts.bitmap_index.row_groups import group_rows


@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1]), max_size=300),
       st.integers(1, 40), st.data())
@example([], 5, None)
@example([7] * 10, 1, None)
@example([1, 2], 1, None)                        # more keys than the limit: declined
def test_group_rows_equals_sorting(keys: list[int], limit: int, data: st.DataObject | None) -> None:
    rows = np.arange(len(keys), dtype=np.int64)
    if data is not None and keys:                  # ascending rows with gaps, as with NULLs
        rows = np.cumsum(np.array(data.draw(st.lists(st.integers(1, 5), min_size=len(keys),
                                                     max_size=len(keys))), np.int64))
    array = np.array(keys, dtype=np.uint64)
    result = group_rows(rows, array, limit)
    distinct = np.unique(array)
    if len(distinct) > limit:
        assert result is None
        return
    grouped, starts, counts, group_keys = result
    assert group_keys.tolist() == distinct.tolist()
    for key, start, count in zip(group_keys.tolist(), starts.tolist(), counts.tolist()):
        assert grouped[start:start + count].tolist() == rows[array == key].tolist()
    assert int(counts.sum()) == len(keys)
