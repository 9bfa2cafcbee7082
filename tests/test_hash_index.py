"""Hash index: the numpy reader equals the generated parser, errors included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import paimon_schema as ps
from paimon_schema.layouts.hash_index import parse_hash_index


def _outcome(read, data: bytes):
    try:
        return [int(x) for x in read(data)]
    except ps.FormatError as exc:
        return ("error", exc.path, exc.offset)


@given(st.binary(max_size=512))
@example(b"")
@example(b"\x80\x00\x00\x00\x7f\xff\xff\xff")
@example(b"\x00\x00\x00\x01\x02")
def test_fast_path_equals_generated_parser(data: bytes) -> None:
    assert _outcome(ps.read_hash_index, data) == _outcome(parse_hash_index, data)


@given(st.lists(st.integers(-2**31, 2**31 - 1), max_size=300))
def test_reads_big_endian_int32(values: list[int]) -> None:
    data = b"".join(v.to_bytes(4, "big", signed=True) for v in values)
    result = ps.read_hash_index(data)
    assert result.dtype == np.int32 and result.tolist() == values


def test_partial_trailing_int_is_an_error() -> None:
    with pytest.raises(ps.FormatError) as info:
        ps.read_hash_index(b"\x00" * 9)
    assert (info.value.path, info.value.offset) == ("hashes[2]", 8)
