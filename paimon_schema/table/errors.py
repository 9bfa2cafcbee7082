"""The errors of the table floor: here so that `fileio` (which raises both) and the modules that
read and write tables share them without importing each other."""

from __future__ import annotations

__all__ = ["CommitConflict", "TableError"]


class TableError(ValueError):
    """A table this library cannot read (a feature not supported yet), or metadata that does not
    hold together (a missing snapshot, a deletion vector named twice, ...)."""


class CommitConflict(TableError):
    """Another writer committed the snapshot this commit meant to create (or, from `FileIO`,
    a name that must not be overwritten already exists)."""
