"""Writing Java-written tables on S3 (the loopback S3 API server, `s3_server`), and commit
retries on S3 and on local disk alike: every write path (`rewrite_file_index` in Python and as
a Spark job, `delete_where`, `paimon-schema table ... index|delete`) on S3, then Java's own read
of the bucket's table (downloaded: the Paimon 1.0 jar here has no S3 filesystem); racing
writers (one winner per snapshot id, the losers retry on the winner's snapshot and lose no
deletion, leave no file behind); retries off; a writer killed at every step on S3."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pytest

import paimon_schema as ps
from paimon_schema.table import Table
from paimon_schema.table import commit as table_commit
from paimon_schema.table.commit import live_index_entries
from paimon_schema.table.manifests import read_avro
from paimon_schema.table.scan import read_arrow

import test_table_write
from s3server import ACCESS_KEY, REGION, SECRET_KEY
from test_table_write import INDEXES, OPTIONS, WRITER, _copy, _deleted, _java, _java_rows, _rows

#: the Java-written tables of test_table_write (a fixture: pytest finds it by this name)
java_tables = test_table_write.java_tables

DELETE = "score < 30 OR name = 'n07'"


class Store:
    """One copy of a Java-written table, on local disk or in a bucket of the S3 server."""

    def __init__(self, kind: str, java_tables: tuple[Path, dict], tmp_path: Path, s3_server: Any,
                 name: str = "parted") -> None:
        self.kind, self.tmp_path, self.server = kind, tmp_path, s3_server
        if kind == "local":
            self.path = str(_copy(java_tables, tmp_path, name))
            return
        root, _ = java_tables
        self.bucket = s3_server.create_bucket(f"write-{uuid.uuid4().hex[:12]}")
        self.prefix = f"warehouse/db.db/{name}"
        s3_server.upload_tree(root / "db.db" / name, self.bucket, self.prefix)
        self.path = f"{self.bucket}/{self.prefix}"

    @property
    def uri(self) -> str:
        return self.path if self.kind == "local" else f"s3://{self.path}"

    def filesystem(self) -> pafs.FileSystem | None:
        if self.kind == "local":
            return None
        return pafs.S3FileSystem(endpoint_override=self.server.endpoint, access_key=ACCESS_KEY,
                                 secret_key=SECRET_KEY, region=REGION)

    def table(self) -> Table:
        return Table.open(self.path, filesystem=self.filesystem())

    def listing(self) -> set[str]:
        """Every file of the table, relative to its directory."""
        if self.kind == "local":
            return {str(p.relative_to(self.path)) for p in Path(self.path).rglob("*") if p.is_file()}
        pages = self.server.client().get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix + "/")
        return {o["Key"][len(self.prefix) + 1:] for page in pages for o in page.get("Contents", [])}

    def local(self) -> Path:
        """The table as a local directory `<warehouse>/db.db/<name>` (downloaded from S3)."""
        if self.kind == "local":
            return Path(self.path)
        target = self.tmp_path / f"download-{uuid.uuid4().hex[:8]}" / "db.db" / Path(self.prefix).name
        client = self.server.client()
        for name in self.listing():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(client.get_object(Bucket=self.bucket,
                                                          Key=f"{self.prefix}/{name}")["Body"].read())
        return target


@pytest.fixture(params=["local", "s3"])
def store(request: Any, java_tables: tuple[Path, dict], tmp_path: Path) -> Store:
    server = request.getfixturevalue("s3_server") if request.param == "s3" else None
    return Store(request.param, java_tables, tmp_path, server)


@pytest.fixture
def s3_store(java_tables: tuple[Path, dict], tmp_path: Path, s3_server: Any) -> Store:
    return Store("s3", java_tables, tmp_path, s3_server)


@pytest.fixture
def aws_environment(s3_server: Any, monkeypatch: Any) -> dict[str, str]:
    """The server's endpoint and credentials as the AWS environment variables."""
    env = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
           "AWS_REGION": REGION, "AWS_ENDPOINT_URL": s3_server.endpoint}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def _java_read(java_reference: Any, local: Path) -> list[tuple]:
    from paimon_schema.selfcheck.reference.java import read_table_request

    return _java_rows(_java(java_reference, [read_table_request(local.parent.parent, "db", local.name)])[0])


def _reachable(table: Table) -> set[str]:
    """Every file the table's snapshots reach (relative paths): snapshot files and the hint,
    schemas, manifest lists, manifests, index manifests, index files, data files and sidecars."""
    names = {"snapshot/LATEST", "snapshot/EARLIEST"}
    names |= {f"schema/{n}" for n in table.io.list(f"{table.path}/schema")}
    last = table.latest_snapshot_id() or 0
    for sid in range(1, last + 1):
        snap = table.snapshot(sid)
        names.add(f"snapshot/snapshot-{sid}")
        for manifest_list in (snap.base_manifest_list, snap.delta_manifest_list):
            names.add(f"manifest/{manifest_list}")
            for meta in read_avro(table.io, f"{table.path}/manifest/{manifest_list}"):
                names.add(f"manifest/{meta['_FILE_NAME']}")
        if snap.index_manifest:
            names.add(f"manifest/{snap.index_manifest}")
            names |= {f"index/{e['_FILE_NAME']}" for e in live_index_entries(table, snap)}
        for f in table.data_files(snap):
            relative = f.path[len(table.path) + 1:]
            names.add(relative)
            if f.index_sidecar:
                names.add(f.index_sidecar[len(table.path) + 1:])
    return names


# ------------------------------------------------------------------------------ every write path

def _spark_index(store: Store, spark: Any) -> object:
    from paimon_schema import spark as ps_spark

    return ps_spark.rewrite_file_index(spark, store.table(), INDEXES, OPTIONS)


WRITES: dict[str, Callable[[Store, Any], object]] = {
    "index": lambda store, _: ps.rewrite_file_index(store.table(), INDEXES, {
        **OPTIONS, "file-index.in-manifest-threshold": "1b"}),
    "delete": lambda store, _: ps.delete_where(store.table(), DELETE),
    "spark-index": _spark_index,
}


@pytest.mark.parametrize("write", ["index", "spark-index", "delete"])
def test_write_paths_on_s3_and_java_reads_the_result(
        s3_store: Store, java_tables: tuple[Path, dict], java_reference: Any, request: Any,
        write: str) -> None:
    _, reads = java_tables
    spark = request.getfixturevalue("spark") if write.startswith("spark") else None
    before = s3_store.listing()
    s3_store.server.log.clear()
    result: Any = WRITES[write](s3_store, spark)
    assert result.snapshot_id == 4
    log = s3_store.server.log.snapshot()
    puts = [r for r in log if r.method == "PUT" and ".paimon-schema-probe-" not in r.path]
    assert [r.status for r in puts if "/snapshot/snapshot-4" in r.path] == [200]
    # one put per new file, the hint replaced; nothing deleted but the probe
    new = s3_store.listing() - before
    assert sorted(r.path for r in puts) == sorted(f"/{s3_store.path}/{n}" for n in new | {"snapshot/LATEST"})
    assert all(".paimon-schema-probe-" in r.path for r in log if r.method == "DELETE")
    table = s3_store.table()
    expected = [r for r in reads["parted"] if not (write == "delete" and _deleted(r))]
    if write != "delete":
        assert all(f.index_stored for f in table.data_files())
        if write == "index":                  # sidecars beside the data files, on S3
            assert len(result.sidecars) == 3 and all(f.index_sidecar for f in table.data_files())
    assert _rows(read_arrow(table)) == expected
    assert s3_store.listing() - before <= _reachable(table)     # nothing but the new snapshot
    assert _java_read(java_reference, s3_store.local()) == expected


@pytest.mark.parametrize(("view", "credentials"), [("index", "environment"), ("delete", "uri")])
def test_table_cli_writes_on_s3(s3_store: Store, java_tables: tuple[Path, dict],
                                java_reference: Any, request: Any, capsys: Any,
                                view: str, credentials: str) -> None:
    """`paimon-schema table s3://... index|delete`, endpoint and credentials from the AWS
    environment variables or in the URI."""
    from paimon_schema.cli.main import main

    _, reads = java_tables
    uri = s3_store.uri
    if credentials == "environment":
        request.getfixturevalue("aws_environment")
    else:
        host = s3_store.server.endpoint.split("://", 1)[1]
        uri = (f"s3://{ACCESS_KEY}:{SECRET_KEY}@{s3_store.path}?endpoint_override={host}"
               f"&scheme=http&region={REGION}")
    argv = (["index", "--index", "name=bitmap", "--option", "file-index.bitmap.name.version=1"]
            if view == "index" else ["delete", "--where", DELETE])
    assert main(["table", uri, *argv]) == 0, capsys.readouterr().err
    assert "snapshot 4" in capsys.readouterr().out
    table = Table.open(uri)
    expected = [r for r in reads["parted"] if not (view == "delete" and _deleted(r))]
    assert table.latest_snapshot_id() == 4 and _rows(read_arrow(table)) == expected
    assert _java_read(java_reference, s3_store.local()) == expected


# ------------------------------------------------------------------------------ races and retries

def _race_at_snapshot(writers: int) -> Callable[[str], None]:
    """A FAULT_HOOK holding each writer's first attempt at the `snapshot` step until all
    `writers` are there: they all planned on the same snapshot and all try to create the
    next one at once."""
    barrier = threading.Barrier(writers)
    seen = threading.local()

    def hook(step: str) -> None:
        if step == "snapshot" and not getattr(seen, "done", False):
            seen.done = True
            barrier.wait(timeout=60)

    return hook


#: the racing writers: four deletes whose rows overlap, and an index rewrite of every file
RACERS: dict[str, Callable[[tuple], bool]] = {
    "name = 'n01' OR score > 90": lambda r: r[1] == "n01" or r[2] > 90,
    "id > 1500 AND name = 'n05'": lambda r: r[0] > 1500 and r[1] == "n05",
    "score < 10": lambda r: r[2] < 10,
    "dt = 'd2' AND score < 40": lambda r: r[3] == "d2" and r[2] < 40,
}


def test_racing_writers_retry_and_lose_nothing(store: Store, java_tables: tuple[Path, dict],
                                               java_reference: Any, monkeypatch: Any) -> None:
    """Five writers reach the snapshot step at once: one wins snapshot 4, the others get
    CommitConflict, plan again on the winner's snapshot and retry until each has its own
    snapshot (4..8, one winner each); every deletion survives (the rows are Java's read minus
    the union of the predicates), the index rewrite too, and no loser left a file behind."""
    _, reads = java_tables
    before = store.listing()
    monkeypatch.setattr(table_commit, "FAULT_HOOK", _race_at_snapshot(len(RACERS) + 1))
    if store.kind == "s3":
        store.server.log.clear()
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def run(name: str, write: Callable[[], Any]) -> None:
        try:
            results[name] = write()
        except BaseException as exc:      # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(where, lambda w=where: ps.delete_where(store.table(), w)))
               for where in RACERS]
    threads.append(threading.Thread(target=run, args=("index", lambda: ps.rewrite_file_index(
        store.table(), INDEXES, OPTIONS))))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    assert not errors, errors
    assert sorted(r.snapshot_id for r in results.values()) == [4, 5, 6, 7, 8]
    table = store.table()
    assert table.latest_snapshot_id() == 8
    expected = [r for r in reads["parted"] if not any(hit(r) for hit in RACERS.values())]
    assert _rows(read_arrow(table)) == expected
    assert all(f.index_stored for f in table.data_files())
    assert store.listing() - before <= _reachable(table)      # the losers removed theirs
    if store.kind == "s3":           # one winning conditional put per snapshot id, 4 losers at 4
        puts = [r for r in store.server.log.snapshot() if r.method == "PUT" and "/snapshot/snapshot-" in r.path]
        for sid in range(4, 9):
            assert [r.status for r in puts if r.path.endswith(f"/snapshot-{sid}")].count(200) == 1
        assert [r.status for r in puts if r.path.endswith("/snapshot-4")].count(412) == 4
    assert _java_read(java_reference, store.local()) == expected


def _other_writer_first(store: Store, every_time: bool) -> tuple[list[Any], Callable[[str], None]]:
    """A FAULT_HOOK with which another writer commits (a delete of one name) just before our
    writer creates its snapshot: once, or before every attempt."""
    names = iter(["n01", "n03", "n05", "n09", "n11", "n13"])
    done: list[Any] = []

    def hook(step: str) -> None:
        if step == "snapshot" and (every_time or not done) and threading.current_thread().name != "other":
            thread = threading.Thread(target=lambda: done.append(
                ps.delete_where(store.table(), f"name = '{next(names)}'")), name="other")
            thread.start()
            thread.join()

    return done, hook


def test_a_lost_commit_is_retried_on_the_winners_snapshot(store: Store, monkeypatch: Any) -> None:
    """The retry merges with the winner's vectors and reads no data file again."""
    from paimon_schema.table import delete as table_delete

    read: list[str] = []
    batches = table_delete._file_batches

    def counted(task: Any, rows: int) -> Any:
        read.append(task.file_name)
        return batches(task, rows)

    monkeypatch.setattr(table_delete, "_file_batches", counted)
    done, hook = _other_writer_first(store, every_time=False)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", hook)
    result = ps.delete_where(store.table(), "score < 30")
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    assert done[0].snapshot_id == 4 and result.snapshot_id == 5
    assert sorted(Counter(read).values()) == [2, 2, 2]     # by the winner, and by us once
    rows = _rows(read_arrow(store.table()))
    assert rows and not [r for r in rows if r[1] == "n01" or r[2] < 30]


def test_an_index_rewrite_retried_builds_each_file_once(store: Store, monkeypatch: Any) -> None:
    """The winner deleted rows (the data files are unchanged): the retry reuses the containers
    it built; the winner's deletion and the indexes are both in the table."""
    from paimon_schema.table import file_index_rewrite

    built: list[str] = []
    build = file_index_rewrite.build_container
    monkeypatch.setattr(file_index_rewrite, "build_container",
                        lambda task: built.append(task.file_name) or build(task))
    done, hook = _other_writer_first(store, every_time=False)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", hook)
    result = ps.rewrite_file_index(store.table(), INDEXES, OPTIONS)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    assert (done[0].snapshot_id, result.snapshot_id) == (4, 5)
    assert sorted(built) == sorted(set(built)) and len(built) == result.files == 3
    table = store.table()
    assert all(f.index_stored for f in table.data_files())
    assert not [r for r in _rows(read_arrow(table)) if r[1] == "n01"]


def test_the_spark_job_retries_on_the_winners_snapshot(s3_store: Store, spark: Any,
                                                       monkeypatch: Any) -> None:
    from paimon_schema import spark as ps_spark

    done, hook = _other_writer_first(s3_store, every_time=False)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", hook)
    result = ps_spark.rewrite_file_index(spark, s3_store.table(), INDEXES, OPTIONS)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    assert (done[0].snapshot_id, result.snapshot_id) == (4, 5)
    table = s3_store.table()
    assert all(f.index_stored for f in table.data_files())
    assert not [r for r in _rows(read_arrow(table)) if r[1] == "n01"]


def test_retries_off_surface_the_conflict_and_leave_nothing(store: Store, monkeypatch: Any) -> None:
    before = store.listing()
    done, hook = _other_writer_first(store, every_time=False)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", hook)
    with pytest.raises(ps.CommitConflict, match="snapshot 4 was created by another writer"):
        ps.rewrite_file_index(store.table(), INDEXES, {**OPTIONS, "commit.max-retries": "0",
                                                       "file-index.in-manifest-threshold": "1b"})
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    table = store.table()
    assert table.latest_snapshot_id() == 4 and not any(f.index_stored for f in table.data_files())
    assert store.listing() - before <= _reachable(table)      # only the winner's files are new


def test_retries_are_bounded(store: Store, monkeypatch: Any) -> None:
    done, hook = _other_writer_first(store, every_time=True)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", hook)
    with pytest.raises(ps.CommitConflict, match=r"gave up after 2 retries, commit.max-retries = 2"):
        ps.delete_where(store.table(), "score < 30", {"commit.max-retries": 2,
                                                      "commit.min-retry-wait": "1 ms"})
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    assert [d.snapshot_id for d in done] == [4, 5, 6]
    assert store.table().latest_snapshot_id() == 6


@pytest.mark.parametrize("retries", ["default", "off"])
def test_the_table_cli_retries_unless_told_not_to(store: Store, monkeypatch: Any, capsys: Any,
                                                  retries: str) -> None:
    from paimon_schema.cli.main import main

    done, hook = _other_writer_first(store, every_time=False)
    monkeypatch.setattr(table_commit, "FAULT_HOOK", hook)
    if store.kind == "s3":
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        monkeypatch.setenv("AWS_ENDPOINT_URL", store.server.endpoint)
    option = ["--option", "commit.max-retries=0"] if retries == "off" else []
    code = main(["table", store.uri, "delete", "--where", "score < 30", *option])
    monkeypatch.setattr(table_commit, "FAULT_HOOK", None)
    out, err = capsys.readouterr()
    assert done[0].snapshot_id == 4
    if retries == "off":
        assert code == 1 and "snapshot 4 was created by another writer" in err
        assert "--option commit.max-retries=N" in err and store.table().latest_snapshot_id() == 4
    else:
        assert code == 0 and "snapshot 5" in out and store.table().latest_snapshot_id() == 5


# ------------------------------------------------------------------------------ killed writers

def _state(table: Table) -> tuple:
    return (table.latest_snapshot_id(),
            sorted((f.file_name, f.index_stored, f.deletion_file and f.deletion_file.cardinality)
                   for f in table.data_files()),
            _rows(read_arrow(table)))


@pytest.mark.parametrize("operation", ["index", "delete"])
def test_writer_killed_at_every_step_on_s3(java_tables: tuple[Path, dict], java_reference: Any,
                                           s3_server: Any, aws_environment: dict, tmp_path: Path,
                                           operation: str) -> None:
    """The writer process (endpoint and credentials from the environment) killed before each
    step of its commit: the table on S3 reads as before (after, once the snapshot exists), for
    our reader and for Java."""
    import os

    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, **aws_environment}
    first = Store("s3", java_tables, tmp_path, s3_server)
    before = _state(first.table())
    done = subprocess.run([sys.executable, str(script), first.uri, operation, "-"],
                          capture_output=True, text=True, env=env, check=True)
    steps = done.stdout.strip().split(",")
    assert steps[-3:] == ["snapshot-temp", "snapshot", "latest"] and len(steps) >= 6
    after = _state(first.table())
    assert after != before
    requests, expected = [], []
    from paimon_schema.selfcheck.reference.java import read_table_request

    for step in steps:
        killed = Store("s3", java_tables, tmp_path, s3_server)
        listing = killed.listing()
        run = subprocess.run([sys.executable, str(script), killed.uri, operation, step],
                             capture_output=True, text=True, env=env)
        assert run.returncode == -signal.SIGKILL, run.stderr
        want = after if step == "latest" else before
        assert _state(killed.table())[1:] == want[1:], step
        if step != "latest":          # left only unreferenced files (orphan-file cleanup's)
            assert killed.table().latest_snapshot_id() == before[0]
            assert all(not n.startswith("snapshot/") for n in killed.listing() - listing), step
        local = killed.local()
        requests.append(read_table_request(local.parent.parent, "db", local.name))
        expected.append(want[2])
    for response, rows, step in zip(_java(java_reference, requests), expected, steps):
        assert _java_rows(response) == rows, step
