"""The errors of the table floor, under the names its modules import: they are defined in
`values.errors` (with `FormatError` and `SchemaError`), so that `paimon_schema` exports them
without importing the table floor."""

from __future__ import annotations

from paimon_schema.values.errors import CommitConflict, TableError

__all__ = ["CommitConflict", "TableError"]
