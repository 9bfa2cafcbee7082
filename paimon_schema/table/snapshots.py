"""A table's snapshots (`snapshot/snapshot-N`): the entrance to each committed version, finding
the latest one, and time travel as Paimon defines it (`TimeTravelUtil`): a snapshot id, a tag
(`tag/tag-NAME`, a copy of the snapshot's JSON that outlives the snapshot's expiry) or a
timestamp (the latest snapshot committed at or before it, `timeMillis`)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
import datetime as dt
from dataclasses import dataclass
from typing import Any, NamedTuple

from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.schema import numbered, read_json
from paimon_schema.values.errors import FormatError

__all__ = ["TIME_TRAVEL_OPTIONS", "Snapshot", "TimeTravel", "earlier_or_equal", "latest_snapshot_id",
           "load_snapshot", "load_tag", "snapshot_ids", "tag_names", "time_millis"]

#: Paimon's scan options that pick the version a batch read reads (`CoreOptions`).
TIME_TRAVEL_OPTIONS = ("scan.snapshot-id", "scan.tag-name", "scan.timestamp-millis",
                       "scan.timestamp")


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
    if not io.exists(path):
        ids = sorted(numbered(io, posixpath.join(root, "snapshot"), "snapshot-"))
        have = f"snapshots {ids[0]}..{ids[-1]}" if ids else "no snapshots"
        raise TableError(f"snapshot {snapshot_id} does not exist in {root} ({have})")
    try:
        return Snapshot.from_json(read_json(io, path))
    except KeyError as exc:
        raise FormatError(f"{path} lacks {exc}", path=path) from exc


def snapshot_ids(io: FileIO, root: str) -> list[int]:
    """The ids of the snapshot files there are, ascending (expired ones are gone)."""
    return sorted(numbered(io, posixpath.join(root, "snapshot"), "snapshot-"))


def tag_names(io: FileIO, root: str) -> list[str]:
    """The names of the table's tags (`tag/tag-NAME`), sorted."""
    return sorted(n[len("tag-"):] for n in io.list(posixpath.join(root, "tag"))
                  if n.startswith("tag-") and len(n) > len("tag-"))


def load_tag(io: FileIO, root: str, name: str) -> Snapshot:
    """The snapshot a tag holds: Paimon writes the snapshot's JSON (plus `tagCreateTime`,
    `tagTimeRetained`) to `tag/tag-NAME`, so a tag reads even after its snapshot expired."""
    path = posixpath.join(root, "tag", f"tag-{name}")
    if not io.exists(path):
        names = tag_names(io, root)
        have = f"tags {', '.join(names)}" if names else "no tags"
        raise TableError(f"tag {name!r} does not exist in {root} ({have})")
    try:
        return Snapshot.from_json(read_json(io, path))
    except KeyError as exc:
        raise FormatError(f"{path} lacks {exc}", path=path) from exc


def earlier_or_equal(io: FileIO, root: str, millis: int) -> Snapshot:
    """The latest snapshot committed at or before `millis` (Paimon's
    `SnapshotManager.earlierOrEqualTimeMills`: a binary search, commit times rise with ids);
    TableError when every snapshot is later."""
    ids = snapshot_ids(io, root)
    found: Snapshot | None = None
    low, high = 0, len(ids) - 1
    while low <= high:
        mid = (low + high) // 2
        snap = load_snapshot(io, root, ids[mid])
        if snap.time_millis <= millis:
            found, low = snap, mid + 1
        else:
            high = mid - 1
    if found is None:
        earliest = "none" if not ids else str(load_snapshot(io, root, ids[0]).time_millis)
        raise TableError(f"{root} has no snapshot earlier than or equal to timestamp {millis} "
                         f"(the earliest snapshot's timestamp is {earliest})")
    return found


def time_millis(moment: int | dt.datetime | str) -> int:
    """Epoch milliseconds of a time-travel moment: an int is already milliseconds; a datetime
    or an ISO string without a time zone is local time, as Paimon reads `scan.timestamp`."""
    if isinstance(moment, str):
        text = moment.strip()
        if text.lstrip("-").isdigit():
            return int(text)
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError as exc:
            raise TableError(f"{moment!r} is neither epoch milliseconds nor an ISO timestamp "
                             f"(2024-05-01 12:00:00)") from exc
    if isinstance(moment, dt.datetime):
        return int(moment.timestamp() * 1000)
    if isinstance(moment, bool) or not isinstance(moment, int):
        raise TableError(f"a time-travel moment is epoch milliseconds or a datetime, not {moment!r}")
    return moment


class TimeTravel(NamedTuple):
    """Which version a read reads: at most one of a snapshot id, a tag name, a moment."""

    snapshot: int | None = None
    tag: str | None = None
    as_of: int | dt.datetime | str | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> TimeTravel:
        """From Paimon's option names (`scan.snapshot-id`, `scan.tag-name`,
        `scan.timestamp-millis`, `scan.timestamp`), and `snapshot` (the older spelling of the
        Spark sources); empty values count as unset."""
        given = {key: str(value).strip() for key, value in options.items()
                 if key in (*TIME_TRAVEL_OPTIONS, "snapshot") and value not in (None, "")}
        snapshot = given.get("scan.snapshot-id", given.get("snapshot"))
        if "scan.snapshot-id" in given and "snapshot" in given:
            raise TableError("give scan.snapshot-id or snapshot, not both")
        try:
            snapshot_id = None if snapshot is None else int(snapshot)
            millis = given.get("scan.timestamp-millis")
            as_of: int | str | None = None if millis is None else int(millis)
        except ValueError as exc:
            raise TableError(f"time travel: {exc}") from exc
        if "scan.timestamp" in given:
            if as_of is not None:
                raise TableError("give scan.timestamp-millis or scan.timestamp, not both")
            as_of = given["scan.timestamp"]
        return cls(snapshot_id, given.get("scan.tag-name"), as_of).checked()

    def checked(self) -> TimeTravel:
        """Itself, or TableError when more than one version is asked for (as Paimon refuses)."""
        if sum(v is not None for v in self) > 1:
            raise TableError("time travel takes one of a snapshot id, a tag or a timestamp "
                             f"(scan.snapshot-id, scan.tag-name, scan.timestamp-millis), not {self}")
        return self

    def resolve(self, io: FileIO, root: str) -> Snapshot | None:
        """The snapshot to read: the one asked for, else the latest (None: no commit yet)."""
        self.checked()
        if self.snapshot is not None:
            return load_snapshot(io, root, self.snapshot)
        if self.tag is not None:
            return load_tag(io, root, self.tag)
        if self.as_of is not None:
            return earlier_or_equal(io, root, time_millis(self.as_of))
        latest = latest_snapshot_id(io, root)
        return None if latest is None else load_snapshot(io, root, latest)
