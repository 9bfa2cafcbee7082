"""Helpers of the Spark and merge-on-read tests: the fixture tables, pypaimon-rust's read of a
table (the oracle: an independent reader that reads Java-written tables unchanged), polars SQL
as the oracle of filter semantics, and order-insensitive row comparison."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, NoReturn

import pyarrow as pa
import pytest

FIXTURE_TABLES = [
    "append_with_bitmap", "append_with_bitmap_alter_table", "append_with_bitmap_no_embedding",
    "append_with_bitmap_v1", "append_with_bloomfilter", "append_with_bsi",
    "append_with_bsi_bitmap_bloomfilter", "append_with_rangebitmap",
    "append_with_rangebitmap_multi_chunk", "pk_09", "pk_btree_e2e",
    "pk_dv_index_in_data_no_external", "pk_dv_index_not_in_data_no_external",
    "pk_table_scan_and_read_dv", "pk_table_with_alter_table", "pk_table_with_dv_cardinality",
    "pk_with_bitmap_dv",
]


def oracle_unavailable(reason: str) -> NoReturn:
    """As tests/conftest.py's: skip, or fail with PAIMON_SCHEMA_REQUIRE_ORACLES=1."""
    if os.environ.get("PAIMON_SCHEMA_REQUIRE_ORACLES", "").strip() == "1":
        pytest.fail(f"oracle required but unavailable: {reason}", pytrace=False)
    pytest.skip(f"oracle unavailable: {reason}")


def fixture_table(root: Path, name: str) -> Path:
    return root / f"{name}.db" / name


def rust_read(table_dir: Path, snapshot: int | None = None) -> pa.Table:
    """pypaimon-rust's read of a table laid out as `<warehouse>/<db>.db/<table>`."""
    try:
        import pypaimon_rust.datafusion as native
    except ImportError as exc:
        oracle_unavailable(f"pypaimon-rust does not import: {exc}")
    table_dir = Path(table_dir)
    catalog = native.PaimonCatalog({"warehouse": str(table_dir.parent.parent)})
    table = catalog.get_table(f"{table_dir.parent.name[:-3]}.{table_dir.name}")
    options = {"scan.snapshot-id": str(snapshot)} if snapshot is not None else None
    builder = table.new_read_builder(options)
    batches = builder.new_read().read(builder.new_scan().plan().splits())
    return pa.Table.from_batches(batches)


def sql_filter(table: pa.Table, where: str) -> pa.Table:
    """`SELECT * WHERE <where>` by polars (Spark's NULL, NaN and ±0 semantics). FLOAT columns
    are widened to DOUBLE first: Spark compares them with a decimal or double literal in
    double, polars would round the literal to float32."""
    polars = pytest.importorskip("polars")
    widened = pa.schema([f.with_type(pa.float64()) if f.type == pa.float32() else f
                         for f in table.schema])
    frame = polars.from_arrow(table.cast(widened))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)    # polars' string-to-date cast
        return polars.SQLContext(t=frame).execute(f"SELECT * FROM t WHERE {where}").collect().to_arrow()


def rows(table: Any) -> list[str]:
    """Order-insensitive comparable rows of a pyarrow Table or a list of Spark Rows."""
    if isinstance(table, pa.Table):
        items = table.to_pylist()
    else:
        items = [r.asDict(recursive=True) for r in table]
    return sorted(repr(sorted(item.items())) for item in items)
