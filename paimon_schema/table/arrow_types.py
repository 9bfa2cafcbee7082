"""Paimon column types as Arrow and Spark types.

Two Arrow flavours: `arrow_type` is faithful to Paimon (TIMESTAMP(9) keeps nanoseconds; it is
what `read_arrow` returns), `spark_arrow_type` is what Spark exchanges with Python (timestamps in
microseconds; TIMESTAMP is Spark's TIMESTAMP_NTZ, TIMESTAMP WITH LOCAL TIME ZONE its
TIMESTAMP, i.e. UTC instants). `to_spark_arrow` converts an array between the two, flooring
nanoseconds as Spark's own Parquet reader does for INT96.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from paimon_schema.table.metadata import TableError, TableSchema, type_root
from paimon_schema.values.types import DataType

__all__ = ["arrow_schema", "arrow_type", "spark_arrow_schema", "spark_arrow_type", "spark_ddl",
           "to_spark_arrow"]

_SIMPLE = {
    "BOOLEAN": (pa.bool_(), "BOOLEAN"), "TINYINT": (pa.int8(), "TINYINT"),
    "SMALLINT": (pa.int16(), "SMALLINT"), "INT": (pa.int32(), "INT"),
    "BIGINT": (pa.int64(), "BIGINT"), "FLOAT": (pa.float32(), "FLOAT"),
    "DOUBLE": (pa.float64(), "DOUBLE"), "DATE": (pa.date32(), "DATE"),
    "CHAR": (pa.string(), "STRING"), "VARCHAR": (pa.string(), "STRING"),
    "BINARY": (pa.binary(), "BINARY"), "VARBINARY": (pa.binary(), "BINARY"),
}


def _unit(precision: int) -> str:
    return "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def arrow_type(raw: str | dict, *, spark: bool = False) -> pa.DataType:
    """The Arrow type of a Paimon type (`spark=True`: as Spark exchanges it)."""
    root = type_root(raw)
    if root in ("ARRAY", "MULTISET", "MAP", "ROW"):
        return _nested(raw, spark)
    if root in ("VARIANT", "BLOB") or not isinstance(raw, str):
        raise TableError(f"columns of type {root} are not supported")
    dtype = DataType.parse(raw)
    if dtype.root in _SIMPLE:
        return _SIMPLE[dtype.root][0]
    if dtype.root == "DECIMAL":
        return pa.decimal128(dtype.precision, dtype.scale)
    if dtype.root == "TIME":
        if spark:
            raise TableError("TIME columns are not supported by the Spark sources")
        return pa.time32("ms")
    if dtype.is_timestamp:
        assert dtype.precision is not None                 # DataType.parse gives every TIMESTAMP one
        unit = "us" if spark else _unit(dtype.precision)
        return pa.timestamp(unit, tz="UTC" if dtype.root == "TIMESTAMP_LTZ" else None)
    raise TableError(f"columns of type {raw} are not supported")


def spark_arrow_type(raw: str | dict) -> pa.DataType:
    return arrow_type(raw, spark=True)


def _nested(raw: Any, spark: bool) -> pa.DataType:
    if not isinstance(raw, dict):
        raise TableError(f"cannot read the nested type {raw!r} (expected a JSON object)")
    root = type_root(raw)
    if root == "ARRAY":
        return pa.list_(arrow_type(raw["element"], spark=spark))
    if root == "MULTISET":
        return pa.map_(arrow_type(raw["element"], spark=spark), pa.int32())
    if root == "MAP":
        return pa.map_(arrow_type(raw["key"], spark=spark), arrow_type(raw["value"], spark=spark))
    return pa.struct([pa.field(f["name"], arrow_type(f["type"], spark=spark)) for f in raw["fields"]])


def spark_ddl(raw: str | dict) -> str:
    """The Spark SQL type of a Paimon type."""
    root = type_root(raw)
    if isinstance(raw, dict):
        if root == "ARRAY":
            return f"ARRAY<{spark_ddl(raw['element'])}>"
        if root == "MULTISET":
            return f"MAP<{spark_ddl(raw['element'])}, INT>"
        if root == "MAP":
            return f"MAP<{spark_ddl(raw['key'])}, {spark_ddl(raw['value'])}>"
        if root == "ROW":
            return "STRUCT<" + ", ".join(f"{quote(f['name'])}: {spark_ddl(f['type'])}"
                                         for f in raw["fields"]) + ">"
    arrow_type(raw, spark=True)                       # rejects what Spark cannot take
    assert isinstance(raw, str)                       # arrow_type refuses other atomic types
    dtype = DataType.parse(raw)
    if dtype.root in _SIMPLE:
        return _SIMPLE[dtype.root][1]
    if dtype.root == "DECIMAL":
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    return "TIMESTAMP" if dtype.root == "TIMESTAMP_LTZ" else "TIMESTAMP_NTZ"


def quote(name: str) -> str:
    """A column name as a Spark SQL identifier: backquoted, inner backquotes doubled."""
    return "`" + name.replace("`", "``") + "`"


def arrow_schema(schema: TableSchema, columns: list[str] | None = None, *, spark: bool = False) -> pa.Schema:
    """The Arrow schema of a table's columns (every field nullable: Paimon's NOT NULL is not
    promised across schema evolution, and Spark rejects a non-null Arrow field it declared
    nullable)."""
    fields = schema.fields if columns is None else [schema.field(c) for c in columns]
    return pa.schema([pa.field(f.name, arrow_type(f.type, spark=spark)) for f in fields])


def spark_arrow_schema(schema: TableSchema, columns: list[str] | None = None) -> pa.Schema:
    return arrow_schema(schema, columns, spark=True)


def spark_schema_ddl(schema: TableSchema, columns: list[str] | None = None) -> str:
    fields = schema.fields if columns is None else [schema.field(c) for c in columns]
    return ", ".join(f"{quote(f.name)} {spark_ddl(f.type)}" for f in fields)


def to_spark_arrow(array: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array:
    """`array` as Spark's Arrow type `target`: nanoseconds floored to microseconds (Spark's
    INT96 rule; pyarrow's cast would truncate toward zero), time zones dropped or set without
    moving the instant."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.type == target:
        return array
    if pa.types.is_timestamp(array.type) and pa.types.is_timestamp(target) \
            and array.type.unit == "ns" and target.unit != "ns":
        ints = array.cast(pa.int64())
        factor = 1000 if target.unit == "us" else 1_000_000
        floored = np.floor_divide(ints.fill_null(0).to_numpy(), factor)
        mask = ints.is_null().to_numpy(zero_copy_only=False) if ints.null_count else None
        return pa.array(floored, type=pa.int64(), mask=mask).cast(target)
    return array.cast(target)
