"""Java's var-len integers (`runtime/varlen.py`), shared by the btree and bitmap global indexes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_schema.runtime import varlen


@given(st.integers(0, 2**63 - 1), st.binary(max_size=4))
def test_read_inverts_encode(value: int, tail: bytes) -> None:
    data = b"\x01" + varlen.encode(value) + tail
    assert varlen.read(data, 1) == (value, len(data) - len(tail))


@given(st.integers(0, 2**63 - 1))
def test_encoding_is_leb128(value: int) -> None:
    raw = varlen.encode(value)
    assert all(b & 0x80 for b in raw[:-1]) and raw[-1] < 0x80
    assert sum((b & 0x7F) << 7 * i for i, b in enumerate(raw)) == value


def test_too_long_and_cut_off_are_refused() -> None:
    with pytest.raises(ValueError, match="longer than 5"):
        varlen.read(b"\x80" * 5 + b"\x01", 0, 5)
    with pytest.raises(IndexError):
        varlen.read(b"\x80\x80", 0)
