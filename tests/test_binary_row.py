"""`encode_binary_row` writes the bytes Java wrote: every partition and partition-statistics
row in the fixture tables' manifests decodes and encodes back to the same bytes."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import fastavro
import pytest

from paimon_schema.layouts.binary_row import decode_binary_row, encode_binary_row
from paimon_schema.table.metadata import Table


def test_fixture_partitions_round_trip(shared_fixtures: Path) -> None:
    rows = 0
    for table_dir in sorted((shared_fixtures / "paimon-cpp" / "tables" / "parquet").glob("*.db/*")):
        if not (table_dir / "schema").is_dir():
            continue
        table = Table.open(table_dir)
        schema = table.schema()
        types = [schema.field(k).type for k in schema.partition_keys]
        for manifest in sorted((table_dir / "manifest").glob("manifest-*")):
            with manifest.open("rb") as f:
                for record in fastavro.reader(f):
                    raws = ([record["_PARTITION_STATS"]["_MIN_VALUES"],
                             record["_PARTITION_STATS"]["_MAX_VALUES"]]
                            if "_PARTITION_STATS" in record else [record["_PARTITION"]])
                    for raw in raws:
                        assert encode_binary_row(decode_binary_row(raw, types), types) == raw
                        rows += 1
    assert rows > 100


@pytest.mark.parametrize("value,data_type", [
    (True, "BOOLEAN"), (-7, "TINYINT"), (-300, "SMALLINT"), (2**31 - 1, "INT"),
    (-(2**63), "BIGINT"), (1.5, "FLOAT"), (-0.25, "DOUBLE"), ("", "STRING"),
    ("seven77", "STRING"), ("eight888", "STRING"), ("派蒙 partition", "VARCHAR(20)"),
    (b"\x00\xff" * 9, "BYTES"), (dt.date(2024, 5, 14), "DATE"),
    (decimal.Decimal("-12.345"), "DECIMAL(10, 3)"),
    (decimal.Decimal("123456789012345678901234.5678"), "DECIMAL(38, 4)"),
    (dt.datetime(2024, 5, 14, 1, 2, 3, 456000), "TIMESTAMP(3)"),
    (dt.datetime(1969, 12, 31, 23, 59, 59, 999999), "TIMESTAMP(6)"), (None, "INT"),
])
def test_values_round_trip(value: object, data_type: str) -> None:
    types = ["INT", data_type, "STRING"]
    row = (1, value, "tail-after-variable-part")
    assert decode_binary_row(encode_binary_row(row, types), types) == row
