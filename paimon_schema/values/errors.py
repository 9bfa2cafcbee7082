"""The two ways an input can be wrong: bad bytes (`FormatError`) or bad values (`SchemaError`);
and the two ways a table can refuse (`TableError`, `CommitConflict`), here on the lowest floor so
that `paimon_schema` exports every error without importing the table floor (and pyarrow)."""

from __future__ import annotations


class FormatError(ValueError):
    """Malformed, truncated or inconsistent bytes.

    `offset` is the byte offset (relative to the bytes handed to the function) where the problem
    was found, or None when it is not located in the bytes; `path` names the field by its .ksy
    ids, e.g. ``bins[3].checksum``. `file` names the file the bytes came from where the
    raiser knows it (a table read names the corrupt sidecar or manifest entry).
    """

    file: str | None = None

    def __init__(self, message: str, *, offset: int | None = None, path: str = "") -> None:
        self.reason = message
        self.offset = offset
        self.path = path
        where = []
        if path:
            where.append(path)
        if offset is not None:
            where.append(f"offset {offset}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)

    def within(self, prefix: str, base: int) -> FormatError:
        """The same error seen from an enclosing structure that starts at `base`."""
        path = f"{prefix}.{self.path}" if prefix and self.path else prefix or self.path
        offset = None if self.offset is None else self.offset + base
        return FormatError(self.reason, offset=offset, path=path)


class SchemaError(ValueError):
    """A value that does not fit its column's data type, or writer input Paimon cannot store."""


class TableError(ValueError):
    """A table this library cannot read (a feature not supported yet), or metadata that does not
    hold together (a missing snapshot, a deletion vector named twice, ...)."""


class CommitConflict(TableError):
    """Another writer committed the snapshot this commit meant to create (or, from `FileIO`,
    a name that must not be overwritten already exists)."""
