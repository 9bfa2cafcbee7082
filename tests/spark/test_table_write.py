"""Writing to Java-written tables: `rewrite_file_index` (Python and the Spark job) and
`delete_where`, then Java's own read (Paimon 1.0 through the reference) must return exactly
the expected rows and prune files with our indexes: embedded ones at scan time, sidecars at
read time, and not when `file-index.read.enabled=false` (the control). Our reader agrees.
Racing writers and a writer killed at every step of a commit leave the table as it was."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import paimon_schema as ps
from paimon_schema import col
from paimon_schema.table import commit as table_commit
from paimon_schema.spark import read_arrow
from paimon_schema.table import Table, TableError
from paimon_schema.table.manifests import read_avro

from oracles import import_oracle

FIELDS = [("id", "BIGINT"), ("name", "STRING"), ("score", "DOUBLE"), ("dt", "STRING")]
TYPES = dict(FIELDS)
# bitmap V1: the Paimon 1.0 reader here reads no V2 bitmap (and knows no bsi / range-bitmap)
INDEXES = {"name": "bitmap", "id": "bloom-filter"}
OPTIONS = {"file-index.bitmap.name.version": "1", "file-index.bloom-filter.id.items": "2000",
           "file-index.bloom-filter.id.fpp": "0.001"}
DELETE = "score < 30 OR name = 'n07'"
#: the same indexes as table options, for Java's writer (Paimon 1.0 writes bitmap V1)
JAVA_INDEXES = {"file-index.bitmap.columns": "name", "file-index.bloom-filter.columns": "id",
                "file-index.bloom-filter.id.items": "2000", "file-index.bloom-filter.id.fpp": "0.001"}


def _row(i: int) -> tuple:
    # Names: even suffixes in the first commit, odd in the second, so that min/max
    # statistics of every file span 'n07' but only the second commit's files hold it.
    suffix = (i % 10) * 2 + (0 if i < 600 else 1)
    return ("+I", 2 * i, f"n{suffix:02d}", float(i % 97), "d1" if i < 500 else "d2")


@pytest.fixture(scope="module")
def java_tables(java_reference: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """Two append tables with deletion vectors and no index, written by Java (1000 rows in
    two commits, partition dt): `parted` (bucket -1) and `bucketed` (2 buckets), each with
    vectors Java already deleted; and Java's read of each: {name: sorted rows}."""
    from paimon_schema.selfcheck.reference.java import (decode_rows, delete_positions_request,
                                              read_table_request, run_table_ops,
                                              write_table_request)

    root = tmp_path_factory.mktemp("java-write-base")
    rows = [_row(i) for i in range(1000)]
    options = {"deletion-vectors.enabled": "true"}
    run_table_ops(java_reference, [
        write_table_request(root, "db", "parted", FIELDS, [rows[:600], rows[600:]],
                            partition_keys=["dt"], options=options),
        write_table_request(root, "db", "bucketed", FIELDS, [rows[:600], rows[600:]],
                            partition_keys=["dt"],
                            options={**options, "bucket": 2, "bucket-key": "id"}),
        write_table_request(root, "db", "indexed", FIELDS, [rows[:600], rows[600:]],
                            partition_keys=["dt"], options={**options, **JAVA_INDEXES})])
    requests = []
    for name in ("parted", "bucketed"):
        files = {f.file_name: [p for p in range(f.row_count) if p % 7 == 3]
                 for f in Table.open(root / "db.db" / name).data_files()}
        requests.append(delete_positions_request(root, "db", name, files))
    requests += [read_table_request(root, "db", name) for name in ("parted", "bucketed")]
    responses = run_table_ops(java_reference, requests)
    reads = {name: sorted(r[1:] for r in decode_rows(resp, list(TYPES.values())))
             for name, resp in zip(("parted", "bucketed"), responses[2:])}
    assert all(100 < 1000 - len(r) < 200 for r in reads.values())
    return root, reads


def _copy(java_tables: tuple[Path, dict], tmp_path: Path, name: str, as_name: str | None = None) -> Path:
    root, _ = java_tables
    target = tmp_path / "db.db" / (as_name or name)
    shutil.copytree(root / "db.db" / name, target)
    return target


def _rows(table: Any) -> list[tuple]:
    return sorted(tuple(r[n] for n, _ in FIELDS) for r in table.to_pylist())


def _deleted(row: tuple) -> bool:
    return row[2] < 30 or row[1] == "n07"


def _java(java_reference: Any, requests: list[dict]) -> list[dict]:
    from paimon_schema.selfcheck.reference.java import run_table_ops

    return run_table_ops(java_reference, requests)


def _java_rows(response: dict) -> list[tuple]:
    from paimon_schema.selfcheck.reference.java import decode_rows

    return sorted(r[1:] for r in decode_rows(response, list(TYPES.values())))


def _scan(path: Path, where: Any, **options: str) -> dict:
    from paimon_schema.selfcheck.reference.java import scan_table_request

    return scan_table_request(path.parent.parent, "db", path.name, where, TYPES, options)


@pytest.mark.parametrize("stored", ["embedded", "sidecar"])
def test_java_reads_and_prunes_with_our_indexes_and_deletes(
        java_tables: tuple[Path, dict], java_reference: Any, tmp_path: Path, stored: str) -> None:
    from paimon_schema.selfcheck.reference.java import read_table_request

    _, reads = java_tables
    path = _copy(java_tables, tmp_path, "parted")
    threshold = "1mb" if stored == "embedded" else "1b"
    result = ps.rewrite_file_index(path, INDEXES, {**OPTIONS,
                                                   "file-index.in-manifest-threshold": threshold})
    files = Table.open(path).data_files()
    assert result.files == len(files) == 3 and result.snapshot_id == 4
    assert {f.index_stored == "embedded" for f in files} == {stored == "embedded"}
    assert len(result.sidecars) == (0 if stored == "embedded" else 3)

    deleted = ps.delete_where(path, DELETE)
    expected = [r for r in reads["parted"] if not _deleted(r)]
    assert deleted.snapshot_id == 5
    assert deleted.rows_deleted == len(reads["parted"]) - len(expected)
    assert _rows(read_arrow(path)) == expected

    responses = _java(java_reference, [
        read_table_request(path.parent.parent, "db", path.name),
        _scan(path, col("name") == "n07"),
        _scan(path, col("name") == "n07", **{"file-index.read.enabled": "false"}),
        _scan(path, col("id") == 501),
        _scan(path, col("id") == 501, **{"file-index.read.enabled": "false"}),
    ])
    assert _java_rows(responses[0]) == expected

    def pruned(response: dict) -> set[str]:
        """The files Java's scan dropped or, when read, its sidecar check ruled out."""
        return set(response["pruned_at_scan"]) | {f["file"] for f in response["files"]
                                                  if f["sidecar_skips"]}

    everything = {f.file_name for f in files}
    second_commit = {f.file_name for f in files if f.row_count == 400}
    d1 = {f.file_name for f in files if f.partition_path == "dt=d1"}
    # 'n07' is inside every file's min/max but only in the second commit's file
    assert pruned(responses[1]) == everything - second_commit
    assert pruned(responses[2]) == set()                     # control: indexes off
    # id 501 lies inside the d1 file's min/max only: statistics prune the others, the bloom
    # filter the d1 file
    assert pruned(responses[3]) == everything
    assert pruned(responses[4]) == everything - d1
    at_scan = set(responses[1]["pruned_at_scan"])          # embedded: the scan prunes
    assert at_scan == (everything - second_commit if stored == "embedded" else set())
    kept = [r for r in _java_rows(responses[1]) if r[1] == "n07"]
    assert kept == [r for r in expected if r[1] == "n07"]


@pytest.mark.parametrize("threshold", [None, "1mb"])
def test_containers_equal_javas_writer(java_tables: tuple[Path, dict], tmp_path: Path,
                                       threshold: str | None) -> None:
    """Indexes added afterwards are the bytes Java's writer puts there when the options are
    set from the start (same rows, same files), embedded or in sidecars alike."""
    root, _ = java_tables
    path = _copy(java_tables, tmp_path, "parted")
    extra = {"file-index.in-manifest-threshold": threshold} if threshold else {}
    ps.rewrite_file_index(path, None, {**JAVA_INDEXES, "file-index.bitmap.name.version": "1",
                                       **extra})

    def containers(table_dir: Path) -> list[tuple]:
        table = Table.open(table_dir)
        return sorted((f.partition_path, f.row_count, f.index_stored == "embedded",
                       table.file_index_bytes(f)) for f in table.data_files())

    ours, java = containers(path), containers(root / "db.db" / "indexed")
    assert [c[:2] for c in ours] == [c[:2] for c in java]
    assert [c[3] for c in ours] == [c[3] for c in java]
    if threshold is None:
        assert [c[2] for c in ours] == [c[2] for c in java]
    else:
        assert all(c[2] for c in ours)


def test_delete_where_equals_javas_deletion_of_the_same_rows(
        java_tables: tuple[Path, dict], java_reference: Any, tmp_path: Path) -> None:
    """Bucketed table (one vector file per bucket): our vectors equal the ones Paimon's
    AppendDeletionFileMaintainer writes when told the same complete positions."""
    from paimon_schema.selfcheck.reference.java import delete_positions_request, read_table_request

    _, reads = java_tables
    ours = _copy(java_tables, tmp_path, "bucketed")
    theirs = _copy(java_tables, tmp_path, "bucketed", "bucketed_java")
    first = ps.delete_where(ours, col("name") == "n07")
    second = ps.delete_where(ours, "score < 30")          # merges with the first
    again = ps.delete_where(ours, "score < 30")           # nothing new: no commit
    assert again.snapshot_id is None and again.rows_deleted == 0
    assert second.snapshot_id == first.snapshot_id + 1
    table = Table.open(ours)
    vectors = {f.file_name: sorted(table.deletion_vector(f) or ()) for f in table.data_files()}
    dv_files = [i for i in table.index_files() if i.index_type == "DELETION_VECTORS"]
    assert len({(i.partition_path, i.bucket) for i in dv_files}) == len(dv_files)
    for index in dv_files:
        assert index.row_count == len(index.dv_ranges)
        for name, _offset, _length, cardinality in index.dv_ranges:
            assert cardinality == len(vectors[name])
    responses = _java(java_reference, [
        delete_positions_request(theirs.parent.parent, "db", theirs.name, vectors),
        read_table_request(ours.parent.parent, "db", ours.name),
        read_table_request(theirs.parent.parent, "db", theirs.name)])
    expected = [r for r in reads["bucketed"] if not _deleted(r)]
    assert _java_rows(responses[1]) == _java_rows(responses[2]) == expected
    java_table = Table.open(theirs)
    assert {f.file_name: sorted(java_table.deletion_vector(f) or ())
            for f in java_table.data_files()} == vectors
    assert _rows(read_arrow(ours)) == expected


def test_spark_job_equals_python(java_tables: tuple[Path, dict], spark: Any, tmp_path: Path) -> None:
    from paimon_schema import spark as ps_spark

    python_path = _copy(java_tables, tmp_path, "bucketed")
    spark_path = _copy(java_tables, tmp_path, "bucketed", "bucketed_spark")
    python = ps.rewrite_file_index(python_path, INDEXES, OPTIONS)
    job = ps_spark.rewrite_file_index(spark, str(spark_path), INDEXES, OPTIONS)
    assert (job.files, job.embedded, len(job.sidecars), job.index_bytes) == \
        (python.files, python.embedded, len(python.sidecars), python.index_bytes)

    def containers(path: Path) -> dict:
        table = Table.open(path)
        return {f.file_name: (f.index_stored, table.file_index_bytes(f)) for f in table.data_files()}

    assert containers(spark_path) == containers(python_path)
    assert _rows(read_arrow(spark_path)) == _rows(read_arrow(python_path))


def test_rewrite_keeps_other_indexes_and_never_overwrites_a_sidecar(
        java_tables: tuple[Path, dict], tmp_path: Path) -> None:
    path = _copy(java_tables, tmp_path, "parted")
    ps.rewrite_file_index(path, {"id": "bloom-filter"}, OPTIONS)
    table = Table.open(path)
    before = {f.file_name: table.file_index_bytes(f) for f in table.data_files()}
    sidecars = {f.file_name: f.index_sidecar for f in table.data_files()}
    ps.rewrite_file_index(path, {"name": "bitmap", "id": ["bsi", "range-bitmap"],
                                 "score": "range-bitmap"})
    table = Table.open(path)
    for f in table.data_files():
        container = table.file_index(f)
        assert set(container.columns) == {"id", "name", "score"}
        assert set(container.columns["id"]) == {"bloom-filter", "bsi", "range-bitmap"}
        old = ps.FileIndexFile.parse(before[f.file_name])
        assert container.columns["id"]["bloom-filter"] == old.columns["id"]["bloom-filter"]
        assert f.index_sidecar != sidecars[f.file_name]              # a new name
        assert f.index_sidecar.endswith("-1.index")
        assert Path(sidecars[f.file_name]).read_bytes() == before[f.file_name]
    # the older snapshot still reads its own sidecars
    assert {f.file_name: table.file_index_bytes(f) for f in table.data_files(4)} == before
    result, stats = read_arrow(path, "score > 1000 OR name = 'n07x'", with_stats=True)
    assert result.num_rows == 0 and stats.files_skipped_by_index == 3
    Path(table.data_files()[0].index_sidecar).write_bytes(b"not a file index")
    with pytest.raises(ps.FormatError, match="is corrupt .*replace=True"):
        ps.rewrite_file_index(path, {"name": "bitmap"})
    replaced = ps.rewrite_file_index(path, {"name": "bitmap"}, replace=True)
    table = Table.open(path)
    assert all(set(table.file_index(f).columns) == {"name"} for f in table.data_files())
    assert replaced.snapshot_id == 6


def test_manifests_merge_after_merge_min_count(java_tables: tuple[Path, dict],
                                               java_reference: Any, tmp_path: Path) -> None:
    """Many commits do not pile up manifests: at `manifest.merge-min-count` the live files
    are merged into one manifest, as Java's commit does; Java still reads the table."""
    import json

    from paimon_schema.selfcheck.reference.java import read_table_request

    _, reads = java_tables
    path = _copy(java_tables, tmp_path, "parted")
    schema_file = path / "schema" / "schema-0"           # as ALTER TABLE ... SET would
    schema = json.loads(schema_file.read_text())
    schema["options"]["manifest.merge-min-count"] = "4"
    schema_file.write_text(json.dumps(schema))
    counts = []
    for i in range(4):
        ps.rewrite_file_index(path, {"name": "bitmap"}, OPTIONS, replace=i % 2 == 0)
        table = Table.open(path)
        snapshot = table.snapshot()
        counts.append(len(read_avro(table.io, f"{table.path}/manifest/{snapshot.base_manifest_list}")))
    assert counts == [2, 3, 1, 2]          # 2 from Java, +1 per commit, merged at 4
    assert len(Table.open(path).data_files()) == 3
    (response,) = _java(java_reference, [read_table_request(path.parent.parent, "db", path.name)])
    assert _java_rows(response) == reads["parted"] == _rows(read_arrow(path))


def test_where_selects_partitions(java_tables: tuple[Path, dict], tmp_path: Path) -> None:
    path = _copy(java_tables, tmp_path, "parted")
    result = ps.rewrite_file_index(path, {"name": "bitmap"}, where="dt = 'd2'")
    assert result.files == 2
    files = Table.open(path).data_files()
    assert {f.partition_path for f in files if f.index_stored} == {"dt=d2"}
    with pytest.raises(ps.SchemaError, match="partition columns"):
        ps.rewrite_file_index(path, {"name": "bitmap"}, where="name = 'x'")


# ------------------------------------------------------------------------------ bad input

def _state(path: Path) -> tuple:
    """Everything a reader sees: the latest snapshot, its files and rows."""
    table = Table.open(path)
    return (table.latest_snapshot_id(),
            sorted((f.file_name, f.index_stored, f.deletion_file and f.deletion_file.cardinality)
                   for f in table.data_files()),
            _rows(read_arrow(path)))


def test_refusals_name_the_problem_and_change_nothing(java_tables: tuple[Path, dict],
                                                      tmp_path: Path, shared_fixtures: Path) -> None:
    path = _copy(java_tables, tmp_path, "parted")
    before = _state(path)
    listing = sorted(p.relative_to(path) for p in path.rglob("*"))
    with pytest.raises(TableError, match="not a Paimon table"):
        ps.rewrite_file_index(tmp_path, INDEXES)
    with pytest.raises(ps.SchemaError, match="'name'.*bsi|bsi.*STRING|STRING.*bsi"):
        ps.rewrite_file_index(path, {"name": "bsi"})
    with pytest.raises(ps.SchemaError, match="no column 'nope'"):
        ps.rewrite_file_index(path, {"nope": "bitmap"})
    with pytest.raises(ps.SchemaError, match="unknown index type 'hash'"):
        ps.rewrite_file_index(path, {"id": "hash"})
    with pytest.raises(ps.SchemaError, match="no index to build"):
        ps.rewrite_file_index(path)
    with pytest.raises(ps.SchemaError, match="no column 'nope'"):
        ps.delete_where(path, "nope = 1")
    fsspec: Any = import_oracle("fsspec")
    with pytest.raises(TableError, match="atomic create"):
        ps.delete_where(Table.open(path, fsspec.filesystem("file")), DELETE)
    assert _state(path) == before
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == listing
    broken = _copy(java_tables, tmp_path, "parted", "broken")
    Path(Table.open(broken).data_files()[0].path).write_bytes(b"not parquet")
    listing = sorted(p.relative_to(broken) for p in broken.rglob("*"))
    for call in (lambda: ps.rewrite_file_index(broken, INDEXES, OPTIONS),
                 lambda: ps.delete_where(broken, DELETE)):
        with pytest.raises(TableError, match="data file .* cannot be read|the manifest says the file has"):
            call()
    assert sorted(p.relative_to(broken) for p in broken.rglob("*")) == listing

    tables = shared_fixtures / "paimon-cpp" / "tables" / "parquet"
    for name, call, message in [
        ("pk_with_bitmap_dv", lambda p: ps.rewrite_file_index(p, {"f0": "bitmap"}), "primary-key table"),
        ("pk_with_bitmap_dv", lambda p: ps.delete_where(p, "f1 = 10"), "primary-key table"),
        ("data_evolution_with_index", lambda p: ps.delete_where(p, "f2 = 12"), "data-evolution"),
        ("append_with_bitmap", lambda p: ps.delete_where(p, "f1 = 10"), "deletion-vectors.enabled"),
    ]:
        copy = tmp_path / "fixtures" / name
        if not copy.exists():
            shutil.copytree(tables / f"{name}.db" / name, copy)
        listing = sorted(p.relative_to(copy) for p in copy.rglob("*"))
        with pytest.raises(TableError, match=message):
            call(copy)
        assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == listing


def test_racing_writers_one_wins_the_other_conflicts(java_tables: tuple[Path, dict],
                                                     tmp_path: Path, monkeypatch: Any) -> None:
    path = _copy(java_tables, tmp_path, "parted")
    raced: list[Any] = []

    def race(step: str) -> None:
        if step == "snapshot" and not raced:     # the other writer commits in between
            raced.append(None)
            raced[0] = ps.delete_where(path, "name = 'n03'")

    monkeypatch.setattr(table_commit, "FAULT_HOOK", race)
    listing_before = set(path.rglob("*"))
    with pytest.raises(ps.CommitConflict, match="snapshot 4 was created by another writer"):
        ps.rewrite_file_index(path, INDEXES, {**OPTIONS, "commit.max-retries": "0"})   # no retry
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    assert raced[0].snapshot_id == 4
    winner = set(path.rglob("*")) - listing_before
    table = Table.open(path)
    assert table.latest_snapshot_id() == 4 and not any(f.index_stored for f in table.data_files())
    # the loser left nothing behind: every new file is the winner's
    kinds = sorted(p.name.split("-")[0] if p.name != "snapshot-4" else p.name for p in winner)
    assert kinds == ["index", "index", "manifest", "manifest", "snapshot-4"], winner
    assert all(p.name.startswith("manifest-list-") for p in winner if p.name.startswith("manifest"))


def test_concurrent_writers_lose_no_update(java_tables: tuple[Path, dict], tmp_path: Path) -> None:
    """Four threads delete different rows at once, each retrying on CommitConflict: every
    snapshot id is taken exactly once and no deletion is lost."""
    import threading

    _, reads = java_tables
    path = _copy(java_tables, tmp_path, "parted")
    names = ["n01", "n02", "n05", "n12"]
    barrier = threading.Barrier(len(names))
    outcome: dict[str, tuple[int, int]] = {}

    def writer(name: str) -> None:
        barrier.wait()
        conflicts = 0
        while True:
            try:
                result = ps.delete_where(path, col("name") == name)
                outcome[name] = (result.snapshot_id, conflicts)
                return
            except ps.CommitConflict:
                conflicts += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(sid for sid, _ in outcome.values()) == [4, 5, 6, 7]
    assert _rows(read_arrow(path)) == [r for r in reads["parted"] if r[1] not in names]
    assert not list((path / "snapshot").glob(".*"))       # no temporary file left behind


WRITER = textwrap.dedent("""
    import os, signal, sys
    import paimon_schema as ps
    from paimon_schema.table import commit as table_commit
    path, operation, kill_at = sys.argv[1:]
    steps = []
    def hook(step):
        steps.append(step)
        if step == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    table_commit.FAULT_HOOK = hook
    if operation == "index":
        ps.rewrite_file_index(path, {"name": "bitmap", "id": "bloom-filter"},
                              {"file-index.bitmap.name.version": "1",
                               "file-index.in-manifest-threshold": "1b"})
    else:
        ps.delete_where(path, "score < 30 OR name = 'n07'")
    print(",".join(steps))
""")


@pytest.mark.parametrize("operation", ["index", "delete"])
def test_writer_killed_at_every_step(java_tables: tuple[Path, dict], java_reference: Any,
                                     tmp_path: Path, operation: str) -> None:
    from paimon_schema.selfcheck.reference.java import read_table_request

    source = _copy(java_tables, tmp_path, "parted", "source")
    before = _state(source)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    done = subprocess.run([sys.executable, str(script), str(source), operation, "-"],
                          capture_output=True, text=True, check=True)
    steps = done.stdout.strip().split(",")
    assert steps[-3:] == ["snapshot-temp", "snapshot", "latest"] and len(steps) >= 6
    after = _state(source)
    assert after != before
    requests, expected = [], []
    for i, step in enumerate(steps):
        path = _copy(java_tables, tmp_path, "parted", f"killed_{i}")
        run = subprocess.run([sys.executable, str(script), str(path), operation, step],
                             capture_output=True, text=True)
        assert run.returncode == -signal.SIGKILL, run.stderr
        # killed before the snapshot exists: as before; killed after: the whole commit
        want = after if step == "latest" else before
        state = _state(path)
        assert state[1:] == want[1:], step
        requests.append(read_table_request(path.parent.parent, "db", path.name))
        expected.append(want[2])
    for response, rows, step in zip(_java(java_reference, requests), expected, steps):
        assert _java_rows(response) == rows, step


def test_pypaimon_table_indexed_and_deleted(java_reference: Any, tmp_path: Path) -> None:
    """The user of the issue: pypaimon writes a table (no file index); we index and delete;
    pypaimon, Java and our reader then read the same rows, and the index prunes."""
    import numpy as np
    import pyarrow as pa

    from paimon_schema.selfcheck.reference.java import read_table_request

    pypaimon: Any = import_oracle("pypaimon")
    rng = np.random.default_rng(3)
    data = pa.table({"id": pa.array(np.arange(6000, dtype=np.int64)),
                     "k": pa.array(rng.integers(0, 1000, 6000, dtype=np.int32)),
                     "tag": pa.array([f"t{i % 300}" for i in range(6000)])})
    catalog = pypaimon.CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("py", True)
    catalog.create_table("py.t", pypaimon.Schema.from_pyarrow_schema(
        data.schema, options={"bucket": "-1", "deletion-vectors.enabled": "true"}), False)
    table = catalog.get_table("py.t")
    for start in (0, 2000, 4000):
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(data.slice(start, 2000))
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()
    path = tmp_path / "py.db" / "t"
    ps.rewrite_file_index(path, {"tag": "bitmap", "id": "bloom-filter"},
                          {"file-index.bitmap.tag.version": "1"})
    deleted = ps.delete_where(path, "k < 100 OR tag = 't7'")
    expected = sorted(r["id"] for r in data.to_pylist() if not (r["k"] < 100 or r["tag"] == "t7"))
    assert deleted.rows_deleted == 6000 - len(expected)
    builder = catalog.get_table("py.t").new_read_builder()
    theirs = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    assert sorted(theirs.column("id").to_pylist()) == expected
    assert sorted(read_arrow(path).column("id").to_pylist()) == expected
    (java,) = _java(java_reference, [read_table_request(tmp_path, "py", "t")])
    assert sorted(r[1] for r in java["rows"]) == expected
    _, stats = read_arrow(path, "tag = 't7x'", with_stats=True)
    assert stats.files_skipped_by_index == 3


def test_bitmap64_tables_get_64_bit_vectors(java_tables: tuple[Path, dict], tmp_path: Path) -> None:
    """With `deletion-vectors.bitmap64` the vectors are written as 64-bit bins (the range
    length counts the size field and CRC, as newer Paimon records it), old 32-bit vectors
    converted. (The Paimon 1.0 jar here predates 64-bit bins and cannot be the oracle.)"""
    import json

    _, reads = java_tables
    path = _copy(java_tables, tmp_path, "parted")
    schema_file = path / "schema" / "schema-0"
    schema = json.loads(schema_file.read_text())
    schema["options"]["deletion-vectors.bitmap64"] = "true"
    schema_file.write_text(json.dumps(schema))
    ps.delete_where(path, DELETE)
    assert _rows(read_arrow(path)) == [r for r in reads["parted"] if not _deleted(r)]
    table = Table.open(path)
    for f in table.data_files():
        vector = table.deletion_vector(f)
        dv = ps.DeletionVectorFile.parse(Path(f.deletion_file.path).read_bytes())
        (match,) = [b for b in dv.bins if b.offset == f.deletion_file.offset]
        assert match.bitmap64 and f.deletion_file.length == match.length
        assert f.deletion_file.cardinality == len(vector) > 0
