"""A table's schema files (`schema/schema-N`): the columns with their ids and types, partition
and primary keys, options; and reading the JSON documents and numbered files that schemas and
snapshots share."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, overload

from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import DataType

__all__ = ["DataField", "TableSchema", "latest_schema_id", "load_schema", "numbered", "read_json", "type_root"]


@dataclass(frozen=True)
class DataField:
    """One column of a schema: `type` is the schema file's type (a string for atomic types,
    a JSON object for ARRAY / MAP / MULTISET / ROW)."""

    id: int
    name: str
    type: str | dict
    description: str | None = None

    @property
    def atomic_type(self) -> DataType | None:
        """The type as `paimon_schema.values.types.DataType`, or None for nested or other types
        (VARIANT, BLOB, ...) that no file index supports."""
        if not isinstance(self.type, str):
            return None
        try:
            return DataType.parse(self.type)
        except SchemaError:
            return None


def type_root(raw: str | dict) -> str:
    """The type's name without parameters or nullability: `INT`, `DECIMAL`, `ROW`, ..."""
    text = raw if isinstance(raw, str) else raw.get("type", "")
    match = re.match(r"\s*([A-Za-z_]+)", text)
    if match is None:
        raise TableError(f"unreadable data type {raw!r}")
    return match.group(1).upper()


@dataclass(frozen=True)
class TableSchema:
    """`schema/schema-N`: fields with their ids, partition and primary keys, options."""

    id: int
    fields: tuple[DataField, ...]
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: Mapping[str, str]
    highest_field_id: int

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> TableSchema:
        fields = tuple(DataField(f["id"], f["name"], f["type"], f.get("description"))
                       for f in document["fields"])
        return cls(int(document["id"]), fields, tuple(document.get("partitionKeys") or ()),
                   tuple(document.get("primaryKeys") or ()),
                   dict(document.get("options") or {}),
                   int(document.get("highestFieldId", max((f.id for f in fields), default=-1))))

    @cached_property
    def by_id(self) -> dict[int, DataField]:
        return {f.id: f for f in self.fields}

    @cached_property
    def by_name(self) -> dict[str, DataField]:
        return {f.name: f for f in self.fields}

    def field(self, name: str) -> DataField:
        try:
            return self.by_name[name]
        except KeyError:
            raise SchemaError(f"no column {name!r} in schema {self.id} "
                              f"(columns: {', '.join(f.name for f in self.fields)})") from None

    @overload
    def option(self, key: str, default: str) -> str: ...

    @overload
    def option(self, key: str, default: None = None) -> str | None: ...

    def option(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    @cached_property
    def partition_types(self) -> list[str]:
        """The partition keys' types, as BinaryRow reads and writes them (atomic types only:
        Paimon partitions by atomic columns)."""
        types = []
        for key in self.partition_keys:
            raw = self.field(key).type
            if not isinstance(raw, str):
                raise TableError(f"partition key {key!r} has the nested type {type_root(raw)}")
            types.append(raw)
        return types

    def flag(self, key: str) -> bool:
        return str(self.options.get(key, "false")).strip().lower() == "true"

    @property
    def deletion_vectors(self) -> bool:
        return self.flag("deletion-vectors.enabled")

    @property
    def data_evolution(self) -> bool:
        return self.flag("data-evolution.enabled")


def read_json(io: FileIO, path: str) -> dict:
    """A JSON document of the table (schema, snapshot, tag); FormatError when it is not JSON."""
    raw = io.read_bytes(path)
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise FormatError(f"{path} is not JSON: {exc}", offset=None, path=path) from exc


def numbered(io: FileIO, directory: str, prefix: str) -> list[int]:
    """The numbers N of the files `<prefix>N` in `directory` (`schema-N`, `snapshot-N`)."""
    return [int(n[len(prefix):]) for n in io.list(directory)
            if n.startswith(prefix) and n[len(prefix):].isdigit()]


def latest_schema_id(io: FileIO, root: str) -> int:
    """The id of the table's latest schema (the highest `schema/schema-N`)."""
    ids = numbered(io, posixpath.join(root, "schema"), "schema-")
    if not ids:
        raise TableError(f"{root} has no schema file")
    return max(ids)


def load_schema(io: FileIO, root: str, schema_id: int) -> TableSchema:
    """The schema `schema/schema-N` of the table at `root`."""
    path = posixpath.join(root, "schema", f"schema-{schema_id}")
    try:
        return TableSchema.from_json(read_json(io, path))
    except KeyError as exc:
        raise FormatError(f"{path} lacks {exc}", path=path) from exc
