"""Forge a big append table's history from Python: thousands of data files over many
partitions and snapshots, for planning at scale (`tests/spark/test_plan_scale.py`,
`benchmarks/table_plan.py`).

Only the metadata is written, as Paimon 1.x writes it (the layout of `forged_tables`): schema,
snapshots, zstd Avro manifest lists and manifests. No data file is written: planning reads the
manifests only, and the manifest entries say all it needs (name, size, row count, value
statistics, the embedded file index). Each data file "holds" `ROWS` rows; its `city` column
takes a few of `CITIES`, which its embedded bitmap index records, and its statistics bound
`id`, `city` and `amount`.

The history is a daily-partitioned table (`dt`) filled commit by commit: each APPEND commit
adds files to the newest partitions (and some late files to older ones), every
`compact_every`-th commit is a COMPACT that replaces files of one older partition by fewer
ones (DELETE + ADD entries), and the manifests are merged as Paimon merges them: each commit
writes one delta manifest, the base list grows by the previous delta, and once it holds
`merge_min_count` manifests the small ones are merged into full manifests of
`manifest_entries` entries (the DELETEs of files in full manifests stay), all of the base
being rewritten once it holds more DELETEs than a full manifest (`_Writer._merged_base`). Partition statistics in the manifest lists bound each manifest's
partitions (Paimon's `_PARTITION_STATS`).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import forged_tables
from forged_tables import MANIFEST, MANIFEST_LIST, binary_row

import paimon_schema as ps

CITIES = ("Berlin", "Cairo", "Delhi", "Lima", "Oslo", "Paris", "Quito", "Rome")
ROWS = 16                       # rows each data file is said to hold
FIELDS = (("id", "BIGINT"), ("city", "STRING"), ("amount", "INT"), ("dt", "STRING"))
FIRST_DAY = dt.date(2024, 1, 1)


@dataclass(frozen=True)
class ForgedDataFile:
    """A data file the history added: its partition (`dt`), name and the cities it holds."""

    dt: str
    name: str
    cities: frozenset[str]
    commit: int


@dataclass
class ForgedHistory:
    """What the forge wrote: the table's root, the live files of the latest snapshot, and (with
    `track=True`) the live file names of every snapshot."""

    root: Path
    live: dict[str, ForgedDataFile]
    snapshots: int
    entries: int                # manifest entries written in all (ADD and DELETE)
    live_by_snapshot: dict[int, frozenset[str]] = field(default_factory=dict)


def day(p: int) -> str:
    """The `dt` value of partition number `p`."""
    return (FIRST_DAY + dt.timedelta(days=p)).isoformat()


class _Variants:
    """The few distinct city sets files take, each with its embedded index and statistics
    (built once: 100k files share a dozen containers)."""

    def __init__(self, rng: random.Random, count: int = 24) -> None:
        self.sets: list[tuple[str, ...]] = []
        while len(self.sets) < count:
            chosen = tuple(sorted(rng.sample(CITIES, rng.randint(1, 3))))
            if chosen not in self.sets:
                self.sets.append(chosen)
        self.index: list[bytes] = []
        for chosen in self.sets:
            column = [chosen[i % len(chosen)] for i in range(ROWS)]
            self.index.append(ps.write_file_index(
                {"city": {"bitmap": ps.build_index("bitmap", "STRING", column)}}))


def write_history(root: Path, files: int, *, partitions: int, appends_per_partition: int = 2,
                  compact_every: int = 5, late: float = 0.1, merge_min_count: int = 30,
                  manifest_entries: int = 8192, seed: int = 0, track: bool = False) -> ForgedHistory:
    """Write the table `root` with `files` live data files in its latest snapshot, over
    `partitions` daily partitions, filled by `appends_per_partition` APPEND commits per
    partition (plus the COMPACT commits); see the module doc."""
    rng = random.Random(seed)
    variants = _Variants(rng)
    root.mkdir(parents=True)
    for sub in ("schema", "snapshot", "manifest"):
        (root / sub).mkdir()
    (root / "schema" / "schema-0").write_text(json.dumps({
        "version": 3, "id": 0,
        "fields": [{"id": i, "name": n, "type": t} for i, (n, t) in enumerate(FIELDS)],
        "highestFieldId": len(FIELDS) - 1, "partitionKeys": ["dt"], "primaryKeys": [],
        "options": {"bucket": "-1", "file.format": "parquet", "file-index.bitmap.columns": "city"},
        "timeMillis": 0}, indent=2))
    writer = _Writer(root, rng, variants, merge_min_count, manifest_entries)
    appends = partitions * appends_per_partition
    compacts = appends // max(1, compact_every - 1)
    # each compaction removes `_COMPACT_IN - _COMPACT_OUT` files; the appends make up for it
    to_add = files + compacts * (_COMPACT_IN - _COMPACT_OUT)
    history = ForgedHistory(root, {}, 0, 0)
    added = 0
    commit = 0
    for a in range(appends):
        newest = a * partitions // appends
        count = (to_add * (a + 1)) // appends - added
        added += count
        new = []
        for _ in range(count):
            p = rng.randrange(newest + 1) if rng.random() < late else newest
            new.append(writer.new_file(day(p), commit))
        commit = writer.commit("APPEND", new, [])
        if (a + 1) % (compact_every - 1) == 0 and compacts:
            compacts -= 1
            commit = writer.compact(newest)
        if track:
            history.live_by_snapshot[commit] = frozenset(writer.live)
    if len(writer.live) != files:         # compactions that found too few files, or more
        extra = len(writer.live) - files
        commit = writer.commit(
            "APPEND", [writer.new_file(day(partitions - 1), commit + 1) for _ in range(-extra)],
            list(writer.live.values())[:max(0, extra)])
        if track:
            history.live_by_snapshot[commit] = frozenset(writer.live)
    history.live = {name: meta for name, (meta, _) in writer.live.items()}
    history.snapshots = commit
    history.entries = writer.entries
    return history


_COMPACT_IN, _COMPACT_OUT = 8, 2


class _Writer:
    """Commits: manifests, manifest lists and snapshots, with Paimon's manifest merging."""

    def __init__(self, root: Path, rng: random.Random, variants: _Variants, merge_min_count: int,
                 manifest_entries: int) -> None:
        self.root = root
        self.rng = rng
        self.variants = variants
        self.merge_min_count = merge_min_count
        self.manifest_entries = manifest_entries
        self.live: dict[str, tuple[ForgedDataFile, dict]] = {}   # name -> (file, ADD entry)
        self.base: list[dict] = []                # manifest-list records of the base
        self.previous_delta: list[dict] = []
        self.contents: dict[str, list[dict]] = {}   # manifest name -> its entries
        self.snapshot = 0
        self.entries = 0
        self.partition_rows: dict[str, bytes] = {}
        self.partition_values: dict[bytes, str] = {}

    def _partition(self, value: str) -> bytes:
        row = self.partition_rows.get(value)
        if row is None:
            row = self.partition_rows[value] = binary_row([value], ["STRING"])
            self.partition_values[row] = value
        return row

    def new_file(self, dt_value: str, commit: int, source: int = 0) -> tuple[ForgedDataFile, dict]:
        v = self.rng.randrange(len(self.variants.sets))
        cities = self.variants.sets[v]
        first = self.rng.randrange(1 << 40)
        amount = self.rng.randrange(1000)
        name = f"data-{uuid.UUID(int=self.rng.getrandbits(128))}-0.parquet"
        entry = {
            "_VERSION": 2, "_KIND": 0, "_PARTITION": self._partition(dt_value), "_BUCKET": 0,
            "_TOTAL_BUCKETS": -1,
            "_FILE": {
                "_FILE_NAME": name, "_FILE_SIZE": 1024 + self.rng.randrange(4096),
                "_ROW_COUNT": ROWS, "_MIN_KEY": b"", "_MAX_KEY": b"",
                "_KEY_STATS": _EMPTY_STATS,
                "_VALUE_STATS": {
                    "_MIN_VALUES": binary_row([first, cities[0], amount], _STATS_TYPES),
                    "_MAX_VALUES": binary_row([first + ROWS - 1, cities[-1], amount + 99], _STATS_TYPES),
                    "_NULL_COUNTS": [0, 0, 0]},
                "_MIN_SEQUENCE_NUMBER": 0, "_MAX_SEQUENCE_NUMBER": ROWS - 1, "_SCHEMA_ID": 0,
                "_LEVEL": 0, "_EXTRA_FILES": [], "_CREATION_TIME": None,
                "_DELETE_ROW_COUNT": 0, "_EMBEDDED_FILE_INDEX": self.variants.index[v],
                "_FILE_SOURCE": source, "_VALUE_STATS_COLS": ["id", "city", "amount"],
                "_EXTERNAL_PATH": None, "_FIRST_ROW_ID": None, "_WRITE_COLS": None}}
        return ForgedDataFile(dt_value, name, frozenset(cities), commit), entry

    def compact(self, newest: int) -> int:
        """Replace `_COMPACT_IN` files of one older partition by `_COMPACT_OUT` new ones."""
        by_day: dict[str, list[tuple[ForgedDataFile, dict]]] = {}
        for item in self.live.values():
            by_day.setdefault(item[0].dt, []).append(item)
        older = [d for d, items in by_day.items() if d < day(newest) and len(items) >= _COMPACT_IN]
        if not older:
            return self.snapshot
        chosen = self.rng.choice(sorted(older))
        removed = self.rng.sample(by_day[chosen], _COMPACT_IN)
        added = [self.new_file(chosen, self.snapshot + 1, source=1) for _ in range(_COMPACT_OUT)]
        return self.commit("COMPACT", added, removed)

    def commit(self, kind: str, added: list[tuple[ForgedDataFile, dict]],
               removed: list[tuple[ForgedDataFile, dict]]) -> int:
        self.snapshot += 1
        self.base = self.base + self.previous_delta
        if len(self.base) >= self.merge_min_count:
            self.base = self._merged_base()
        entries = [dict(entry, _KIND=1) for _, entry in removed] + [entry for _, entry in added]
        for meta, _ in removed:
            del self.live[meta.name]
        for item in added:
            self.live[item[0].name] = item
        delta = self._manifests(entries)
        self.previous_delta = delta
        tag = uuid.UUID(int=self.rng.getrandbits(128))
        lists = []
        for i, records in enumerate((self.base, delta)):
            lists.append(f"manifest-list-{tag}-{i}")
            forged_tables._avro(self.root / "manifest" / lists[-1], MANIFEST_LIST, records)
        (self.root / "snapshot" / f"snapshot-{self.snapshot}").write_text(json.dumps({
            "version": 3, "id": self.snapshot, "schemaId": 0, "baseManifestList": lists[0],
            "deltaManifestList": lists[1], "changelogManifestList": None, "indexManifest": None,
            "commitUser": "forge", "commitIdentifier": self.snapshot, "commitKind": kind,
            "timeMillis": 1_700_000_000_000 + self.snapshot * 1000,
            "totalRecordCount": ROWS * len(self.live), "deltaRecordCount": ROWS * len(added)}))
        (self.root / "snapshot" / "LATEST").write_text(str(self.snapshot))
        (self.root / "snapshot" / "EARLIEST").write_text("1")
        return self.snapshot

    def _merged_base(self) -> list[dict]:
        """Paimon's `ManifestFileMerger` once the base holds `merge_min_count` manifests: each
        run of consecutive small manifests (fewer than `manifest_entries` entries) is merged
        into full ones in place, an ADD and a DELETE of the same file among them cancelling
        out, the full ones kept as they are (their files' DELETEs stay in the base); manifest
        order is kept, as Paimon keeps it (a DELETE never precedes its file's ADD); once the
        base holds more DELETE entries than a full manifest, all of it is rewritten with the
        live files only."""
        deletes = sum(record["_NUM_DELETED_FILES"] for record in self.base)
        if deletes > self.manifest_entries:
            live = [entry for _, entry in self.live.values()]   # as of the last snapshot
            return [record for start in range(0, len(live), self.manifest_entries)
                    for record in self._manifests(live[start:start + self.manifest_entries])]
        out: list[dict] = []
        run: list[dict] = []
        for record in [*self.base, None]:
            if record is not None and len(self.contents[record["_FILE_NAME"]]) < self.manifest_entries:
                run.append(record)
                continue
            out += run if len(run) == 1 else self._merged(run)
            run = []
            if record is not None:
                out.append(record)
        return out

    def _merged(self, small: list[dict]) -> list[dict]:
        """Consecutive small manifests as full ones, ADD and DELETE pairs among them dropped."""
        merged: dict[tuple[str, int], dict] = {}
        for record in small:
            for entry in self.contents[record["_FILE_NAME"]]:
                key = (entry["_FILE"]["_FILE_NAME"], entry["_KIND"])
                if entry["_KIND"] == 1 and (key[0], 0) in merged:
                    del merged[(key[0], 0)]
                else:
                    merged[key] = entry
        entries = list(merged.values())
        return [record for start in range(0, len(entries), self.manifest_entries)
                for record in self._manifests(entries[start:start + self.manifest_entries])]

    def _manifests(self, entries: list[dict]) -> list[dict]:
        if not entries:
            return []
        name = f"manifest-{uuid.UUID(int=self.rng.getrandbits(128))}-0"
        size = forged_tables._avro(self.root / "manifest" / name, MANIFEST, entries)
        self.contents[name] = entries
        self.entries += len(entries)
        values = sorted(self.partition_values[e["_PARTITION"]] for e in entries)
        return [{"_VERSION": 2, "_FILE_NAME": name, "_FILE_SIZE": size,
                 "_NUM_ADDED_FILES": sum(e["_KIND"] == 0 for e in entries),
                 "_NUM_DELETED_FILES": sum(e["_KIND"] == 1 for e in entries),
                 "_PARTITION_STATS": {"_MIN_VALUES": self._partition(values[0]),
                                      "_MAX_VALUES": self._partition(values[-1]),
                                      "_NULL_COUNTS": [0]},
                 "_SCHEMA_ID": 0}]


_STATS_TYPES = ("BIGINT", "STRING", "INT")
_EMPTY_STATS: dict[str, Any] = {"_MIN_VALUES": binary_row([], []), "_MAX_VALUES": binary_row([], []),
                                "_NULL_COUNTS": []}

