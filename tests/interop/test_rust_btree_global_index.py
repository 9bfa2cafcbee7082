"""pypaimon-rust 0.4.0 as a second oracle of the btree global index: its
`CALL sys.create_global_index(..., index_type => 'btree')` over a data-evolution table writes
the file our writer writes for the same column (its null bitmap keeps pyroaring's
containers, as pypaimon's does: `java_null_bitmap=False`; and it keeps a NaN's bits where
Java's `floatToIntBits` writes one NaN: the spec's doc records both)."""

from __future__ import annotations

import decimal
import math
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import import_oracle
from strategies import values_for

from paimon_schema.layouts.btree_global_index import BTreeGlobalIndexReader, write_btree_global_index
from paimon_schema.values.types import float_bits

ARROW = {"INT": pa.int32(), "BIGINT": pa.int64(), "SMALLINT": pa.int16(), "STRING": pa.string(),
         "DOUBLE": pa.float64(), "DATE": pa.date32(), "TIMESTAMP(6)": pa.timestamp("us"),
         "DECIMAL(10, 2)": pa.decimal128(10, 2), "DECIMAL(30, 2)": pa.decimal128(30, 2)}


def rust_btree(data_type: str, values: list[Any], block_size: int) -> bytes:
    """The btree file pypaimon-rust builds over one column holding `values` (row id = position)."""
    import_oracle("pypaimon_rust")
    from pypaimon_rust.datafusion import SQLContext

    with tempfile.TemporaryDirectory(prefix="rust-btree-") as warehouse:
        ctx = SQLContext()
        ctx.register_catalog("p", {"warehouse": warehouse})
        ctx.set_current_catalog("p")
        ctx.sql("CREATE DATABASE IF NOT EXISTS db")
        ctx.set_current_database("db")
        ctx.sql(f"CREATE TABLE t (k {data_type}) WITH ('row-tracking.enabled'='true', "
                f"'data-evolution.enabled'='true', 'btree-index.block-size'='{block_size}b')")
        ctx.register_batch("src", pa.record_batch({"k": pa.array(values, ARROW[data_type])}))
        ctx.sql("INSERT INTO t (k) SELECT k FROM src")
        ctx.sql("CALL sys.create_global_index(table => 'db.t', index_column => 'k', index_type => 'btree')")
        (path,) = (Path(warehouse) / "db.db" / "t" / "index").glob("btree-global-index-*.index")
        return path.read_bytes()


def _decimal_values(data_type: str) -> st.SearchStrategy:
    return values_for(data_type).map(lambda v: decimal.Decimal(v).scaleb(-2))


@pytest.mark.parametrize("data_type", sorted(ARROW))
@given(data=st.data(), block_size=st.sampled_from([16, 100, 65536]))
@settings(max_examples=10, deadline=None)
def test_pypaimon_rust_writes_our_bytes(data_type: str, data: st.DataObject, block_size: int) -> None:
    values_of = _decimal_values(data_type) if data_type.startswith("DECIMAL") else values_for(data_type)
    if data_type == "TIMESTAMP(6)":          # Arrow's microseconds: the int64 range
        values_of = st.integers(-2**62, 2**62) | st.integers(-5, 5)
    if data_type == "DOUBLE":                # pypaimon-rust keeps a NaN's bits, Java canonicalizes
        values_of = values_of.filter(lambda v: not math.isnan(v) or float_bits(v, 64, False) == 0x7FF8000000000000)
    values = data.draw(st.lists(st.none() | values_of, min_size=1, max_size=120))
    if data_type == "DATE":
        values = [v if v is None or -2**31 < v < 2**31 else 0 for v in values]
    theirs = rust_btree(data_type, values, block_size)
    ours = write_btree_global_index(data_type, values, block_size=block_size, java_null_bitmap=False)
    assert ours.data == theirs
    assert BTreeGlobalIndexReader.open(theirs, data_type).is_null() == \
        BTreeGlobalIndexReader.open(ours.data, data_type).is_null()
