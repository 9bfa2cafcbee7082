"""`encode_binary_row` writes the bytes Java wrote: every partition and partition-statistics
row in the fixture tables' manifests decodes and encodes back to the same bytes."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import fastavro
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from strategies import values_for

from paimon_schema.generated import binary_row_codec
from paimon_schema.layouts.binary_row import decode_binary_row, encode_binary_row
from paimon_schema.runtime import constructs
from paimon_schema.table.metadata import Table
from paimon_schema.values.errors import FormatError, SchemaError


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


PARTITION_TYPES = ["BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING",
                   "VARCHAR(10)", "BYTES", "DATE", "DECIMAL(10, 3)", "DECIMAL(38, 4)",
                   "TIMESTAMP(3)", "TIMESTAMP(6)", "CHAR(5)", "BINARY(4)", "VARBINARY(8)"]


@st.composite
def typed_rows(draw: st.DrawFn) -> tuple[list[str], list[object]]:
    types = draw(st.lists(st.sampled_from(PARTITION_TYPES), max_size=12))
    # dates and timestamps as Python objects: a raw key such as Long.MIN_VALUE millis is
    # writable but has no datetime to decode to (test_timestamp_past_datetime_is_a_format_error)
    temporal = ("DATE", "TIMESTAMP(3)", "TIMESTAMP(6)")
    return types, [draw(st.none() | values_for(t).filter(lambda v: t not in temporal or not isinstance(v, int)))
                   for t in types]


@settings(max_examples=300, deadline=None)
@given(typed_rows())
def test_encoded_rows_are_what_the_spec_reads(case: tuple[list[str], list[object]]) -> None:
    """Any row: the generated parser and codec read back exactly the encoded bytes, and decoding
    then encoding again gives the same bytes (nothing lost or re-interpreted)."""
    types, values = case
    try:
        data = encode_binary_row(values, types)
    except SchemaError:         # values_for also draws what a type refuses (a DECIMAL past its precision)
        reject()
    codec = binary_row_codec.binary_row
    assert codec.build(constructs.parse(codec, data)) == data
    assert encode_binary_row(decode_binary_row(data, types), types) == data


def test_timestamp_past_datetime_is_a_format_error() -> None:
    """Found by the property above: a slot of Long.MIN_VALUE millis raised OverflowError."""
    data = encode_binary_row([-(2**63)], ["TIMESTAMP(3)"])
    with pytest.raises(FormatError) as error:
        decode_binary_row(data, ["TIMESTAMP(3)"])
    assert error.value.path == "slots[0]"


def _same(a: object, b: object) -> bool:
    """Equal values, NaN equal to NaN (and -0.0 told from 0.0)."""
    return repr(a) == repr(b)


@settings(max_examples=300, deadline=None)
@given(typed_rows(), st.data())
def test_plain_rows_decode_as_the_generated_parser_decodes_them(
        case: tuple[list[str], list[object]], data: st.DataObject) -> None:
    """`_decode_simple` (plain numbers, dates, strings, bytes) reads what the parser reads, and
    declines (None) whatever the parser refuses or it does not take: also on damaged bytes."""
    from paimon_schema.layouts.binary_row import _decode_simple, row_decoder

    types, values = case
    try:
        row = bytearray(encode_binary_row(values, types))
    except SchemaError:
        reject()
    for _ in range(data.draw(st.integers(0, 3))):
        if row:
            row[data.draw(st.integers(0, len(row) - 1))] = data.draw(st.integers(0, 255))
    row = row[:data.draw(st.integers(0, len(row)))] if data.draw(st.booleans()) else row
    fast = _decode_simple(bytes(row), types)
    try:
        slow = decode_binary_row(row, types)        # a bytearray: the generated parser's path
    except FormatError:
        assert fast is None
        return
    simple = all(t.split("(")[0] not in ("DECIMAL", "TIMESTAMP") for t in types)
    assert fast is None if not simple else _same(fast, slow)
    assert _same(row_decoder(types)(bytes(row)), slow)       # the statistics' entry point
