"""Planning a table of thousands of files written over hundreds of snapshots
(`forged_history`: appends to many partitions, compactions whose DELETE entries cancel earlier
ADDs, merged manifests): every snapshot's live files are exactly the files the history left
live then, and a partition + file-index filter keeps exactly the files that can match. (Time
and memory at 1k-100k files: `benchmarks/table_plan.py`.)"""

from __future__ import annotations

import dataclasses
import gc
import tempfile
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from forged_history import ForgedHistory, day, write_history
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import partition_filters

from paimon_schema import FormatError
from paimon_schema.query.sql import parse_sql
from paimon_schema.runtime.avro_blocks import read_fields
from paimon_schema.table import Table, TableError
from paimon_schema.table import bulk_partitions, manifests, merge, plan
from paimon_schema.table.manifest_filter import PartitionFilter
from paimon_schema.table.predicates import partition_verdict

FILES, PARTITIONS = 3_000, 30


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> ForgedHistory:
    return write_history(tmp_path_factory.mktemp("plan") / "t", FILES, partitions=PARTITIONS,
                         track=True)


def test_the_history_is_what_planning_must_fold(history: ForgedHistory) -> None:
    """The forge wrote what makes the fold hard: DELETE entries, compactions, merged bases."""
    table = Table.open(history.root)
    kinds = {s.commit_kind for s in table.snapshots()}
    assert kinds == {"APPEND", "COMPACT"} and history.snapshots > 50
    assert history.entries > 2 * FILES
    latest = table.snapshot()
    assert latest is not None
    deleted = [e for e in table._manifests.entries(latest.base_manifest_list) if e["_KIND"] == 1]
    assert deleted                          # the latest base still holds DELETEs to fold


def test_every_snapshot_lists_its_live_files(history: ForgedHistory) -> None:
    table = Table.open(history.root)
    files = table.data_files()
    assert len(files) == FILES
    assert {f.file_name: f.partition["dt"] for f in files} == \
        {name: f.dt for name, f in history.live.items()}
    assert all(f.path.endswith(f"/dt={f.partition['dt']}/bucket-0/{f.file_name}") for f in files)
    for snapshot in sorted(history.live_by_snapshot)[::17]:
        names = {f.file_name for f in table.data_files(snapshot)}
        assert names == history.live_by_snapshot[snapshot], snapshot


def test_a_partition_and_index_filter_keeps_the_files_that_can_match(history: ForgedHistory) -> None:
    first = day(PARTITIONS * 3 // 4)
    scan = Table.open(history.root).scan(f"dt >= '{first}' AND city = 'Lima'")
    expected = {name for name, f in history.live.items() if f.dt >= first and "Lima" in f.cities}
    assert {f.file_name for f in scan.files()} == expected
    stats = scan.stats
    assert stats.files == FILES and stats.files_read == len(expected)
    assert stats.files_skipped_by_partition > FILES // 2
    assert stats.files_skipped_by_stats > 0 and stats.files_skipped_by_index > 0


def test_the_c_probe_plans_what_the_python_readers_plan(
        history: ForgedHistory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`QuickEvaluator` (the C probe of each embedded index, answers kept by the container's
    bytes) answers the plan's index filter for every file, and the plan is the one the Python
    readers make, file for file and row for row."""
    first = day(PARTITIONS * 3 // 4)
    filters = [f"dt >= '{first}' AND city = 'Lima'", "city IN ('Lima', 'Oslo') OR id < 5",
               f"city = 'Nowhere' AND dt >= '{first}'"]
    calls: list[bool] = []
    quick = merge.QuickEvaluator

    class Counted(quick):                           # type: ignore[misc, valid-type]
        def __call__(self, data: bytes | None) -> Any:
            answer = super().__call__(data)
            calls.append(answer is not None)
            return answer

    class Declined(quick):                          # type: ignore[misc, valid-type]
        def __call__(self, data: bytes | None) -> None:
            return None

    def plan(where: str) -> tuple[list, list, dict]:
        scan = Table.open(history.root).scan(where)
        tasks = scan._planned().tasks
        return [f.file_name for f in scan.files()], [t.candidate_rows for t in tasks], \
            scan.stats.as_dict() | {"planning_seconds": 0}

    monkeypatch.setattr(merge, "QuickEvaluator", Counted)
    probed = [plan(where) for where in filters]
    assert calls and all(calls)
    monkeypatch.setattr(merge, "QuickEvaluator", Declined)
    assert probed == [plan(where) for where in filters]


def test_planning_every_snapshot_keeps_the_cache_within_its_budget(
        history: ForgedHistory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache of each snapshot's folded files grew with every snapshot planned; decoded
    manifests are cached instead (shared by the snapshots that name them, a folded snapshot
    charged its references only), always within the budget, and nothing is held beyond it."""
    table = Table.open(history.root)
    one = manifests.held_bytes(tuple(table.data_files()))
    recent = manifests._RecentDataFiles(2 * one + one // 2)
    monkeypatch.setattr(manifests, "_DATA_FILES", recent)
    snapshots = sorted(history.live_by_snapshot)[-20:]
    for snapshot in snapshots:
        assert {f.file_name for f in table.plan(snapshot).live_files} == \
            history.live_by_snapshot[snapshot]
        assert recent.held <= recent.budget
    latest = table.plan(snapshots[-1]).live_files
    assert table.plan(snapshots[-1]).live_files is latest       # held, in read order
    small = manifests._RecentDataFiles(one // 4)
    monkeypatch.setattr(manifests, "_DATA_FILES", small)
    for snapshot in snapshots[-3:]:
        assert {f.file_name for f in table.data_files(snapshot)} == history.live_by_snapshot[snapshot]
        assert small.held <= small.budget
    none = manifests._RecentDataFiles(1000)
    monkeypatch.setattr(manifests, "_DATA_FILES", none)
    gone = weakref.ref(table.plan(snapshots[0]).live_files[0])
    gc.collect()
    assert gone() is None and not none.items     # nothing kept what the budget cannot hold


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_filtered_listing_is_the_fold_of_the_partitions_it_may_match(
        data: st.DataObject, tmp_path: Path) -> None:
    """Skipping manifests by their partition statistics and entries by their partition lists
    exactly the unskipped fold's files whose partition the filter may match, and counts the
    others: drawn histories (small full manifests, so that merged ones span partitions and
    hold DELETEs) and drawn filters over `dt` (and other columns, which skip nothing)."""
    partitions = data.draw(st.integers(2, 12))
    root = Path(tempfile.mkdtemp(dir=tmp_path)) / "t"
    write_history(root, data.draw(st.integers(partitions, 8 * partitions)), partitions=partitions,
                  compact_every=data.draw(st.integers(2, 6)), merge_min_count=data.draw(st.integers(2, 8)),
                  manifest_entries=data.draw(st.integers(4, 64)), seed=data.draw(st.integers(0, 99)))
    table = Table.open(root)
    snap = table.snapshot(data.draw(st.integers(1, table.latest_snapshot_id() or 1)))
    assert snap is not None
    where = data.draw(partition_filters("dt", [day(p) for p in range(partitions)],
                                        {"city": ["Lima", "Rome"], "id": [1, 5]}))
    everything = table._manifests.listing(snap)
    listing = table._manifests.listing(snap, partitions=PartitionFilter(where))
    expected = [f for f in everything.files if partition_verdict(where, f.partition) is not False]
    assert list(listing.files) == expected
    assert listing.excluded == len(everything.files) - len(expected)
    for kernels in (None, manifests._kernels):     # folded in Python, and in C, from no cache
        with planned_with(kernels):
            again_everything = Table.open(root)._manifests.listing(snap)
            again = Table.open(root)._manifests.listing(snap, partitions=PartitionFilter(where))
        assert again_everything == everything and again == listing
    again = table._manifests.listing(snap, plan.read_order, PartitionFilter(where))   # held
    assert sorted(f.file_name for f in again.files) == sorted(f.file_name for f in expected)
    assert again.excluded == listing.excluded


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_manifest_decoded_for_one_filter_serves_any_other(data: st.DataObject, tmp_path: Path) -> None:
    """A filtered plan decodes the entries of the partitions its filter excludes no further
    than their partition (the decoder's gate); a later plan of the cached manifests that keeps
    any of them, by another filter or none, decodes them then: each listing, in turn, is the
    one planned from an empty cache."""
    partitions = data.draw(st.integers(2, 10))
    root = Path(tempfile.mkdtemp(dir=tmp_path)) / "t"
    write_history(root, data.draw(st.integers(partitions, 8 * partitions)), partitions=partitions,
                  compact_every=data.draw(st.integers(2, 6)), merge_min_count=data.draw(st.integers(2, 8)),
                  manifest_entries=data.draw(st.integers(4, 64)), seed=data.draw(st.integers(0, 99)))
    snapshot = data.draw(st.integers(1, Table.open(root).latest_snapshot_id() or 1))
    first = f"dt >= '{day(data.draw(st.integers(1, partitions - 1)))}'"     # (it excludes some)
    filters = [first, *data.draw(st.lists(st.none() | partition_filters(
        "dt", [day(p) for p in range(partitions)], {"city": ["Lima", "Rome"], "id": [1, 5]}),
        max_size=3)), None]

    def listing(table: Table, where: Any) -> manifests.Listing:
        if isinstance(where, str):
            where = parse_sql(where)
        return table._manifests.listing(table.snapshot(snapshot),
                                        partitions=None if where is None else PartitionFilter(where))

    with planned_with(manifests._kernels):
        table = Table.open(root)
        for where in filters:
            with mock.patch.object(manifests, "_DATA_FILES", manifests._RecentDataFiles(1 << 40)):
                expected = listing(Table.open(root), where)
            assert listing(table, where) == expected


def test_a_filtered_plan_decodes_only_the_partitions_it_keeps(history: ForgedHistory) -> None:
    """The forged table's merged manifests hold every partition: a plan of its last quarter
    of days leaves the others' entries at their partition, and the unfiltered listing after
    it decodes them in full (the files of a plan from an empty cache)."""
    where = f"dt >= '{day(PARTITIONS * 3 // 4)}'"

    def sizes() -> dict[str, int]:
        return {v[0].path: v[0].size for v in manifests._DATA_FILES.items.values()
                if isinstance(v[0], manifests._Decoded)}

    with planned_with(manifests._kernels):
        expected = Table.open(history.root).data_files()
        expected_sizes = sizes()
    with planned_with(manifests._kernels):
        table = Table.open(history.root)
        kept = table.scan(where).files()
        decoded = [v[0] for v in manifests._DATA_FILES.items.values() if isinstance(v[0], manifests._Decoded)]
        gated = {p for d in decoded for p in d.gated}
        assert gated and all(f.partition["dt"] >= day(PARTITIONS * 3 // 4) for f in kept)
        assert sum(1 for d in decoded for key, row in zip(d.keys, d.rows)
                   if key[0] in gated and row is not None and row[4] is None) > 100
        assert table.data_files() == expected
        assert not any(d.gated for d in decoded)
        assert sizes() == expected_sizes            # (charged as a full decode is)


def test_plans_on_threads_share_gated_manifests(history: ForgedHistory) -> None:
    """Plans of several filters (and none) on threads, from one cache: each lists what it
    lists alone, a gated manifest completed once, under a lock (one that a plan without a
    filter decoded beside it, its own decode not held, stays gated until a plan needs it)."""
    from concurrent.futures import ThreadPoolExecutor

    filters = [f"dt >= '{day(PARTITIONS * 3 // 4)}'", f"dt < '{day(PARTITIONS // 4)}'", None,
               f"dt = '{day(PARTITIONS // 2)}' OR city = 'Lima'"]
    expected = {}
    for where in filters:
        with planned_with(manifests._kernels):
            expected[where] = Table.open(history.root).scan(where).files()
    with planned_with(manifests._kernels), ThreadPoolExecutor(4) as pool:
        planned = list(pool.map(lambda where: (where, Table.open(history.root).scan(where).files()),
                                filters * 3))
        assert all(files == expected[where] for where, files in planned)
        everything = f"dt >= '{day(0)}'"       # (a filter of its own: no listing held for it)
        assert Table.open(history.root).scan(everything).files() == expected[None]
        assert not any(v[0].gated for v in manifests._DATA_FILES.items.values()
                       if isinstance(v[0], manifests._Decoded))


def test_a_planned_table_is_freed_by_refcounting(history: ForgedHistory) -> None:
    """No cycle holds a `Table` once planned (its manifests once looked schemas up through a
    bound method of it): the collector's next pass need not find it."""
    gc.disable()
    try:
        table = Table.open(history.root)
        gone = weakref.ref(table)
        table.scan(f"dt >= '{day(PARTITIONS // 2)}'").files()
        table.data_files()
        del table
        assert gone() is None
    finally:
        gc.enable()


def test_the_cache_charges_about_what_it_holds(history: ForgedHistory,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget bounds memory only if the charges are near what decoded manifests and
    folded snapshots hold (charged too high, a 100k-file table's manifests missed the
    budget and every plan decoded them all again)."""
    table = Table.open(history.root)
    table.data_files(1)                     # imports, first calls
    recent = manifests._RecentDataFiles(1 << 40)
    monkeypatch.setattr(manifests, "_DATA_FILES", recent)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        files = table.data_files()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(files) == FILES and 0.9 * held < recent.held < 1.1 * held


@contextmanager
def planned_with(kernels: Any) -> Iterator[None]:
    """Plans made with `kernels` (None: the Python paths) and an empty cache of their own."""
    with mock.patch.object(manifests, "_kernels", kernels), mock.patch.object(merge, "_kernels", kernels), \
            mock.patch.object(plan, "_kernels", kernels), mock.patch.object(bulk_partitions, "_kernels", kernels), \
            mock.patch.object(manifests, "_DATA_FILES", manifests._RecentDataFiles(1 << 40)):
        yield


@pytest.mark.parametrize("where", [f"dt >= '{day(PARTITIONS * 3 // 4)}' AND city = 'Lima'",
                                   "city IN ('Lima', 'Oslo') OR id < 5", None])
def test_the_c_fold_sort_and_tasks_plan_what_python_plans(history: ForgedHistory, where: str | None) -> None:
    """The fold (`fold_into`, `live_files`), the read order (`read_sorted`) and the tasks
    (`slotted_rows`) made in C are the Python paths' files, order, tasks and counts."""
    def planned(kernels: Any) -> tuple[list, list, list, dict]:
        with planned_with(kernels):
            table = Table.open(history.root)
            scan = table.scan(where)
            tasks = [dataclasses.replace(t, fileio=None) for t in scan._planned().tasks]
            return table.data_files(), scan.files(), tasks, scan.stats.as_dict() | {"planning_seconds": 0}

    assert planned(None) == planned(manifests._kernels)
    with planned_with(manifests._kernels):      # C's files and tasks: freed by refcounting alone
        scan = Table.open(history.root).scan(where)
        assert not any(map(gc.is_tracked, scan._planned().tasks + scan.files()))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_filtered_plan_keeps_in_c_what_it_keeps_in_python(data: st.DataObject, tmp_path: Path) -> None:
    """A filtered plan prunes the files in manifest order and sorts the ones it keeps
    (`read_positions`), the cache's lists untracked (`untrack_containers`) and each file's
    statistics' tuples found from the last file's (`live_files`): the files, their order, the
    tasks and the counts of the Python paths, on drawn histories and filters, the filters also
    over the statistics' and the bitmap index's columns."""
    partitions = data.draw(st.integers(2, 10))
    root = Path(tempfile.mkdtemp(dir=tmp_path)) / "t"
    write_history(root, data.draw(st.integers(partitions, 8 * partitions)), partitions=partitions,
                  compact_every=data.draw(st.integers(2, 6)), merge_min_count=data.draw(st.integers(2, 8)),
                  manifest_entries=data.draw(st.integers(4, 64)), seed=data.draw(st.integers(0, 99)))
    latest = Table.open(root).latest_snapshot_id() or 1
    snapshot = data.draw(st.integers(1, latest))
    where = data.draw(partition_filters("dt", [day(p) for p in range(partitions)],
                                        {"city": ["Lima", "Rome", "Oslo"], "id": [1, 5, 40]}))

    def planned(kernels: Any) -> tuple[list, list, dict]:
        with planned_with(kernels):
            scan = Table.open(root).scan(where, snapshot=snapshot)
            tasks = [dataclasses.replace(t, fileio=None) for t in scan._planned().tasks]
            return scan.files(), tasks, scan.stats.as_dict() | {"planning_seconds": 0}

    files, tasks, counts = planned(manifests._kernels)
    assert (files, tasks, counts) == planned(None)
    assert files == sorted(files, key=plan.read_order)


def test_a_plan_in_manifest_order_keeps_partitions_in_runs(history: ForgedHistory) -> None:
    """`Table.plan(ordered=False)` lists the files in manifest order only where a partition
    filter prunes and the partitions come in runs there (else in read order: a filter of no
    partition column lists every file, which its manifests scatter); the same files either
    way."""
    from paimon_schema.query.sql import parse_sql

    table = Table.open(history.root)
    for where in (f"dt >= '{day(PARTITIONS * 3 // 4)}' AND city = 'Lima'", "city = 'Lima'"):
        ordered = table.plan(None, PartitionFilter(parse_sql(where)))
        planned = table.plan(None, PartitionFilter(parse_sql(where)), ordered=False)
        assert sorted(planned.files, key=plan.read_order) == list(ordered.files)
        assert plan.in_runs(planned.files) or list(planned.files) == list(ordered.files)
        if where.startswith("city"):
            assert list(planned.files) == list(ordered.files)


def test_the_cache_holds_its_lists_untracked(history: ForgedHistory,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """What a plan leaves in the cache, the decoded manifests' lists and the snapshot's files,
    is not tracked by the collector (its first pass after a cold plan walked every item), and
    goes by refcounting alone once the cache lets it go."""
    from paimon_schema.runtime import _kernels

    recent = manifests._RecentDataFiles(1 << 40)
    monkeypatch.setattr(manifests, "_DATA_FILES", recent)
    table = Table.open(history.root)
    files = table.data_files()
    held = [value for value, _, _ in recent.items.values()]
    decoded = [value for value in held if isinstance(value, manifests._Decoded)]
    assert decoded and not any(gc.is_tracked(part) for d in decoded
                               for part in (d.kinds, d.keys, d.rows, d.files))
    listings = [value[0] for value in held if isinstance(value, tuple)]
    assert listings and not any(gc.is_tracked(listing.files) for listing in listings)
    gone = weakref.ref(files[0])
    del files, held, decoded, listings
    monkeypatch.setattr(manifests, "_DATA_FILES", manifests._RecentDataFiles(1 << 40))
    recent.items.clear()
    assert gone() is None
    with pytest.raises(TypeError, match="no list, tuple or dict"):
        _kernels.untrack_containers(([], object()))


def _forged(change: Callable[[list[tuple]], list[tuple]]) -> Callable[..., Any]:
    """`Manifests._decoded` with each manifest's rows changed by `change` first."""
    def decoded(self: manifests.Manifests, name: str, schema_id: int, schema: Any, *gate: Any) -> tuple:
        path = self._manifest(name)
        rows = read_fields(self.io.read_bytes(path), path, manifests._ENTRY_FIELDS)
        return ("forged", name), manifests._Decoded(path, change(rows))
    return decoded


def _first_add(change: Callable[[tuple], list[tuple]]) -> Callable[[list[tuple]], list[tuple]]:
    def changed(rows: list[tuple]) -> list[tuple]:
        at = next(i for i, row in enumerate(rows) if row[0] == manifests.ADD)
        return rows[:at] + change(rows[at]) + rows[at + 1:]
    return changed


@pytest.mark.parametrize(("change", "error", "match"), [
    (_first_add(lambda row: [row, row]), TableError, "adds data-.* twice"),
    (_first_add(lambda row: [(manifests.DELETE, *row[1:]), row]), TableError, "or after deleting it"),
    (_first_add(lambda row: [(7, *row[1:])]), FormatError, "kind 7 is neither ADD nor DELETE"),
    (_first_add(lambda row: [row[:5] + (None,) + row[6:]]), FormatError, "without _FILE._FILE_SIZE"),
    (_first_add(lambda row: [row[:1] + (None,) + row[2:]]), FormatError, "without _PARTITION"),
])
def test_a_manifest_that_cannot_fold_fails_alike_in_c_and_python(
        history: ForgedHistory, change: Callable, error: type, match: str) -> None:
    for kernels in (None, manifests._kernels):
        with planned_with(kernels), mock.patch.object(manifests.Manifests, "_decoded", _forged(change)), \
                pytest.raises(error, match=match):
            Table.open(history.root).data_files()


@pytest.mark.parametrize("change", [
    lambda row: row[:13] + ("",) + row[14:],                        # an empty external path
    lambda row: row[:13] + ("s3://elsewhere/f.parquet",) + row[14:],  # an external path
    lambda row: row[:17] + (["id", "city"],) + row[18:],            # write columns as a list
    lambda row: row[:18] + (None, None, None) + row[21:],           # no statistics
    lambda row: row[:18] + (b"", None, [1, None], ["id"]),          # empty, missing bounds; lists
    lambda row: row[:3] + (None,) + row[4:],                        # no total buckets
    lambda row: row[:4] + (row[4].encode(),) + row[5:],             # another type (Python's)
])
def test_unusual_entries_make_the_same_files_in_c_and_python(history: ForgedHistory,
                                                             change: Callable[[tuple], tuple]) -> None:
    def listed(kernels: Any) -> list:
        every = _forged(lambda rows: list(map(change, rows)))    # (DELETEs too: the same keys)
        with planned_with(kernels), mock.patch.object(manifests.Manifests, "_decoded", every):
            return Table.open(history.root).data_files()

    files = listed(None)
    assert files == listed(manifests._kernels) and len(files) == FILES
