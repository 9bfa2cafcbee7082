"""Planning a table of thousands of files written over hundreds of snapshots
(`forged_history`: appends to many partitions, compactions whose DELETE entries cancel earlier
ADDs, merged manifests): every snapshot's live files are exactly the files the history left
live then, and a partition + file-index filter keeps exactly the files that can match. (Time
and memory at 1k-100k files: `benchmarks/table_plan.py`.)"""

from __future__ import annotations

import gc
import weakref


import pytest
from forged_history import ForgedHistory, day, write_history

from paimon_schema.table import Table
from paimon_schema.table import manifests, merge

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
        def answers(self, datas: list) -> list:
            answers = super().answers(datas)
            calls.extend(answer is not None for answer in answers)
            return answers

    class Declined(quick):                          # type: ignore[misc, valid-type]
        def __call__(self, data: bytes) -> None:
            return None

        def answers(self, datas: list) -> list:
            return [None] * len(datas)

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
    """A cache of each snapshot's folded files grew with every snapshot planned; the budget
    holds it to about two of these snapshots, and a snapshot beyond it is not held at all."""
    table = Table.open(history.root)
    one = manifests.held_bytes(tuple(table.data_files()))
    recent = manifests._RecentDataFiles(2 * one + one // 2)
    monkeypatch.setattr(manifests, "_DATA_FILES", recent)
    snapshots = sorted(history.live_by_snapshot)[-20:]
    gone = weakref.ref(table.plan(snapshots[0]).live_files[0])    # held in read order too
    for snapshot in snapshots[1:]:
        table.plan(snapshot)
        assert recent.held <= recent.budget and len(recent.items) <= 3
    gc.collect()
    assert gone() is None                   # nothing else kept the evicted snapshot's files
    small = manifests._RecentDataFiles(one // 2)
    monkeypatch.setattr(manifests, "_DATA_FILES", small)
    assert len(table.data_files()) == FILES and not small.items
