"""Bitmap global index against pypaimon 2.1.0: our version-1 writer gives pypaimon's bytes for
the same column, pypaimon's reader reads ours (both versions' lookups agree with ours)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from pypaimon_global_index import pypaimon_reader, pypaimon_write
from strategies import values_for

from paimon_schema.layouts.bitmap_global_index import BitmapGlobalIndexReader, write_bitmap_global_index

TYPES = ["TINYINT", "SMALLINT", "INT", "BIGINT", "BOOLEAN", "FLOAT", "DOUBLE", "STRING",
         "DECIMAL(10, 2)", "DECIMAL(30, 4)", "DATE", "TIMESTAMP(3)", "TIMESTAMP(6)"]


@st.composite
def columns(draw: st.DrawFn) -> tuple[str, list[object], int]:
    data_type = draw(st.sampled_from(TYPES))
    base = "DATE" if data_type == "DATE" else data_type
    strategy = (st.integers(-30000, 30000) if base == "DATE"
                else st.integers(-2**40, 2**40) if base.startswith("TIMESTAMP") else values_for(base))
    values = draw(st.lists(st.none() | strategy, max_size=120))
    block = draw(st.sampled_from([1, 7, 24, 64, 16 * 1024]))
    return data_type, values, block


@settings(max_examples=150, deadline=None)
@given(columns())
def test_version_1_is_pypaimons_bytes(case: tuple[str, list[object], int]) -> None:
    data_type, values, block = case
    # pypaimon packs a NaN's own bits (-nan as ff c0 00 00); Java's floatToIntBits, and we,
    # write the one canonical NaN: the spec's doc records the disagreement.
    values = [math.nan if isinstance(v, float) and math.isnan(v) else v for v in values]
    expected, _ = pypaimon_write(data_type, values, block)
    assert write_bitmap_global_index(data_type, values, dictionary_block_size=block) == expected


@settings(max_examples=80, deadline=None)
@given(columns(), st.sampled_from([1, 2]))
def test_pypaimon_reads_ours(case: tuple[str, list[object], int], version: int) -> None:
    data_type, values, block = case
    data = write_bitmap_global_index(data_type, values, version=version, dictionary_block_size=block)
    if not data:
        return
    ours = BitmapGlobalIndexReader.open(data, data_type)
    assert ours.version == version
    if version == 2:         # pypaimon 2.1.0 knows version 1 only
        return
    theirs = pypaimon_reader(data_type, data)
    assert list(theirs.visit_is_null().results()) == list(ours.is_null())
    assert list(theirs.visit_is_not_null().results()) == list(ours.is_not_null())
    # NaN aside: pypaimon looks up a NaN by its own bits, we (and Java) by the canonical NaN
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    for value in set(present):
        assert list(theirs.visit_equal(value).results()) == list(ours.equal(value)), value
    probe = present[:5]
    assert list(theirs.visit_in(probe).results()) == list(ours.in_(probe))
