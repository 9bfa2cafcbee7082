"""A table's snapshots (`snapshot/snapshot-N`): the entrance to each committed version, and
finding the latest one."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.schema import numbered, read_json
from paimon_schema.values.errors import FormatError

__all__ = ["Snapshot", "latest_snapshot_id", "load_snapshot"]


@dataclass(frozen=True)
class Snapshot:
    """`snapshot/snapshot-N`: the entrance to one committed version of the table."""

    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    index_manifest: str | None
    commit_kind: str
    time_millis: int
    total_record_count: int | None

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Snapshot:
        return cls(int(document["id"]), int(document["schemaId"]), document["baseManifestList"],
                   document["deltaManifestList"], document.get("indexManifest"),
                   document.get("commitKind", ""), int(document.get("timeMillis", 0)),
                   document.get("totalRecordCount"))


def latest_snapshot_id(io: FileIO, root: str) -> int | None:
    """The `LATEST` hint when the snapshot it names exists and has no successor (Paimon
    writes the hint after the snapshot, so it may lag); else the highest snapshot file."""
    directory = posixpath.join(root, "snapshot")
    try:
        candidate: int | None = int(io.read_bytes(posixpath.join(directory, "LATEST")).decode().strip())
    except (TableError, ValueError):
        candidate = None
    if candidate is not None:
        if (io.exists(posixpath.join(directory, f"snapshot-{candidate}"))
                and not io.exists(posixpath.join(directory, f"snapshot-{candidate + 1}"))):
            return candidate
    ids = numbered(io, directory, "snapshot-")
    return max(ids) if ids else None


def load_snapshot(io: FileIO, root: str, snapshot_id: int) -> Snapshot:
    """A snapshot by id; TableError naming the snapshots there are when it does not exist."""
    path = posixpath.join(root, "snapshot", f"snapshot-{int(snapshot_id)}")
    try:
        document = read_json(io, path)      # (no existence check first: one request less)
    except TableError:
        if io.exists(path):
            raise
        ids = sorted(numbered(io, posixpath.join(root, "snapshot"), "snapshot-"))
        have = f"snapshots {ids[0]}..{ids[-1]}" if ids else "no snapshots"
        raise TableError(f"snapshot {snapshot_id} does not exist in {root} ({have})") from None
    try:
        return Snapshot.from_json(document)
    except KeyError as exc:
        raise FormatError(f"{path} lacks {exc}", path=path) from exc
