"""Time travel as Paimon defines it, on tables Java writes at test time with several snapshots
and tags Java creates (`FileStoreTable.createTag`): a snapshot id, a tag, a timestamp (the
latest snapshot committed at or before it). `Table.scan`, the `paimon` Spark source and
`read_table` (with Paimon's option names) and `paimon-schema table --tag/--as-of` read what
Java's own read with the same option reads; a tag outlives its snapshot's expiry. Also: the
deletion counts of a table whose index manifest records no cardinality (Java's
`AppendDeletionFileMaintainer` here records none) come from the vectors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import paimon_schema as ps
from paimon_schema.cli.main import main
from paimon_schema.table import Table
from paimon_schema.table.snapshots import TimeTravel

FIELDS = [("id", "BIGINT"), ("name", "STRING"), ("score", "DOUBLE"), ("dt", "STRING")]
TYPES = [t for _, t in FIELDS]
N = 3_000


def _row(kind: str, i: int, score: float | None = None) -> tuple:
    return (kind, i, f"n{i % 20}", float(i % 97) if score is None else score,
            "d1" if i % 2 else "d2")


@pytest.fixture(scope="module")
def travel(java_reference: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two Java tables with several snapshots and tags, and Java's read of each version:
    {"root", "cases": [(table, options)], "reads": {case index: rows}, "deleted": {file: n}}."""
    from paimon_schema.selfcheck.reference.java import (
        create_tag_request,
        decode_rows,
        delete_positions_request,
        read_table_request,
        run_table_ops,
        write_table_request,
    )

    root = tmp_path_factory.mktemp("java-travel")
    third = N // 3
    inserts = [_row("+I", i) for i in range(N)]
    run_table_ops(java_reference, [
        write_table_request(root, "db", "append", FIELDS,
                            [inserts[:third], inserts[third:2 * third], inserts[2 * third:]],
                            partition_keys=["dt"],
                            options={"bucket": 2, "bucket-key": "id",
                                     "deletion-vectors.enabled": "true",
                                     "file-index.bitmap.columns": "name"}),
        write_table_request(root, "db", "pk", FIELDS,
                            [inserts, [_row("+U", i, -1.0) for i in range(0, N, 10)],
                             [_row("-D", i) for i in range(3, N, 7)]],
                            primary_keys=["dt", "id"], partition_keys=["dt"],
                            options={"bucket": 2, "deletion-vectors.enabled": "true",
                                     "commit.force-compact": "true"}),
    ])
    append = Table.open(root / "db.db" / "append")
    deleted = {f.file_name: [p for p in range(f.row_count) if p % 3 == 0] for f in append.data_files()}
    pk_ids = [s.id for s in Table.open(root / "db.db" / "pk").snapshots()]
    run_table_ops(java_reference, [
        create_tag_request(root, "db", "append", "first", 1),
        create_tag_request(root, "db", "append", "before-delete", 3),
        delete_positions_request(root, "db", "append", deleted),     # snapshot 4
        create_tag_request(root, "db", "pk", "middle", pk_ids[len(pk_ids) // 2]),
    ])
    cases: list[tuple[str, dict[str, Any]]] = [
        ("append", {}), ("append", {"scan.snapshot-id": 2}), ("append", {"scan.tag-name": "first"}),
        ("append", {"scan.tag-name": "before-delete"}), ("pk", {"scan.tag-name": "middle"}),
        ("pk", {"scan.snapshot-id": pk_ids[1]}),
    ]
    for name in ("append", "pk"):           # a moment between two commits, and one at a commit
        snaps = Table.open(root / "db.db" / name).snapshots()
        for a, b in zip(snaps, snaps[1:]):
            if b.time_millis - a.time_millis >= 2:
                cases.append((name, {"scan.timestamp-millis": (a.time_millis + b.time_millis) // 2}))
                cases.append((name, {"scan.timestamp-millis": b.time_millis}))
                break
    responses = run_table_ops(java_reference,
                              [read_table_request(root, "db", name, options=options)
                               for name, options in cases])
    reads = {i: sorted(row[1:] for row in decode_rows(r, TYPES)) for i, r in enumerate(responses)}
    return {"root": root, "cases": cases, "reads": reads,
            "deleted": {name: len(p) for name, p in deleted.items()}}


def _rows(table: Any) -> list[tuple]:
    items = table.to_pylist() if hasattr(table, "to_pylist") else [r.asDict() for r in table]
    return sorted(tuple(item[name] for name, _ in FIELDS) for item in items)


def test_the_tables_have_what_the_tests_need(travel: dict[str, Any]) -> None:
    root, cases = travel["root"], travel["cases"]
    append = Table.open(root / "db.db" / "append")
    assert [s.id for s in append.snapshots()] == [1, 2, 3, 4]
    assert {name: s.id for name, s in append.tags().items()} == {"before-delete": 3, "first": 1}
    # Paimon's tag file is the snapshot's JSON plus the tag's own fields
    tag = json.loads((root / "db.db" / "append" / "tag" / "tag-first").read_text())
    snapshot = json.loads((root / "db.db" / "append" / "snapshot" / "snapshot-1").read_text())
    assert {k: v for k, v in tag.items() if k in snapshot} == snapshot
    assert sum("scan.timestamp-millis" in options for _, options in cases) == 4
    reads = travel["reads"]
    assert len({tuple(map(tuple, rows)) for rows in reads.values()}) >= 6   # the versions differ


@pytest.mark.parametrize("case", range(10))
def test_scan_equals_java(travel: dict[str, Any], case: int) -> None:
    name, options = travel["cases"][case]
    table = Table.open(travel["root"] / "db.db" / name)
    version = TimeTravel.from_options(options)
    scan = table.scan(snapshot=version.snapshot, tag=version.tag, as_of=version.as_of)
    assert _rows(scan.to_arrow()) == travel["reads"][case]
    assert _rows(scan.to_batches().read_all()) == travel["reads"][case]
    if version.snapshot is not None:
        assert scan.snapshot is not None and scan.snapshot.id == version.snapshot


def test_spark_sources_equal_java(spark: Any, travel: dict[str, Any]) -> None:
    from paimon_schema import spark as ps_spark

    ps_spark.register(spark)
    for case, (name, options) in enumerate(travel["cases"]):
        path = str(travel["root"] / "db.db" / name)
        text = {k: str(v) for k, v in options.items()}
        assert _rows(spark.read.format("paimon").options(**text).load(path).collect()) \
            == travel["reads"][case], (name, options)
        assert _rows(ps_spark.read_table(spark, path, options=text).collect()) \
            == travel["reads"][case], (name, options)
    path = str(travel["root"] / "db.db" / "append")
    before = spark.read.format("paimon-deletion-vectors").option("scan.tag-name", "before-delete")
    assert before.load(path).count() == 0
    after = spark.read.format("paimon-deletion-vectors").option("scan.snapshot-id", "4").load(path)
    assert after.count() == len(travel["deleted"])
    indexed = spark.read.format("paimon-file-index").option("scan.tag-name", "first").load(path)
    assert indexed.count() == len(Table.open(path).scan(tag="first").files())


def test_a_tag_outlives_its_snapshot(travel: dict[str, Any], tmp_path: Path) -> None:
    """Snapshot expiry removes snapshot-N; the tag's copy of it still reads (as Java read it)."""
    path = tmp_path / "append"
    shutil.copytree(travel["root"] / "db.db" / "append", path)
    (path / "snapshot" / "snapshot-1").unlink()
    (path / "snapshot" / "EARLIEST").unlink(missing_ok=True)
    case = travel["cases"].index(("append", {"scan.tag-name": "first"}))
    table = Table.open(path)
    assert _rows(table.scan(tag="first").to_arrow()) == travel["reads"][case]
    with pytest.raises(ps.TableError, match=r"snapshot 1 does not exist .*snapshots 2\.\.4"):
        table.scan(snapshot=1)
    with pytest.raises(ps.TableError, match="no snapshot earlier than or equal to"):
        table.scan(as_of=table.snapshots()[0].time_millis - 1)
    with pytest.raises(ps.TableError, match=r"tag 'nope' does not exist .*before-delete, first"):
        table.scan(tag="nope")


def test_one_version_at_a_time(travel: dict[str, Any]) -> None:
    table = Table.open(travel["root"] / "db.db" / "append")
    with pytest.raises(ps.TableError, match="one of a snapshot id, a tag or a timestamp"):
        table.scan(snapshot=1, tag="first")
    with pytest.raises(ps.TableError, match="one of"):
        TimeTravel.from_options({"scan.snapshot-id": "1", "scan.timestamp-millis": "5"})
    assert TimeTravel.from_options({"snapshot": "2", "scan.tag-name": ""}) == TimeTravel(2)


def test_cli_tag_and_as_of(travel: dict[str, Any], capsys: Any) -> None:
    path = str(travel["root"] / "db.db" / "append")
    table = Table.open(path)
    assert main(["table", path, "--tag", "first", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["snapshot"]["id"] == 1 and doc["rows"] == N // 3
    moment = table.snapshots()[2].time_millis
    assert main(["table", path, "files", "--as-of", str(moment), "--json"]) == 0
    files = json.loads(capsys.readouterr().out)["files"]
    assert {f["file"] for f in files} == {f.file_name for f in table.data_files(3)}
    assert main(["table", path, "query", "--where", "name = 'n3'", "--tag", "before-delete",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["snapshot"] == 3
    assert main(["table", path, "--tag", "nope"]) == 2
    assert "tag 'nope' does not exist" in capsys.readouterr().err
    assert main(["table", path, "delete", "--where", "id = 1", "--tag", "first"]) == 2
    assert "a write always builds on the latest snapshot" in capsys.readouterr().err


def test_rows_deleted_without_manifest_cardinality(travel: dict[str, Any], capsys: Any) -> None:
    """This Java (1.0-SNAPSHOT) records no cardinality in the index manifest: the counts come
    from the vectors, in `ReadStats.rows_deleted`, `table files` and `table query`."""
    path = str(travel["root"] / "db.db" / "append")
    table = Table.open(path)
    files = table.data_files()
    assert all(f.deletion_file is not None and f.deletion_file.cardinality is None for f in files)
    total = sum(travel["deleted"].values())
    scan = table.scan()
    assert scan.to_arrow().num_rows == N - total
    assert scan.stats.rows_deleted == total
    assert main(["table", path, "files", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {f["file"]: f["deleted"] for f in doc["files"]} == travel["deleted"]
    assert main(["table", path, "files"]) == 0
    assert " - " not in capsys.readouterr().out
    assert main(["table", path, "query", "--where", "name = 'n3'", "--json"]) == 0
    queried = json.loads(capsys.readouterr().out)["files"]
    assert {f["file"]: f["deleted"] for f in queried} == travel["deleted"]


def test_pypaimon_tags_and_times(tmp_path: Path) -> None:
    """pypaimon 2.1.0 writes three commits and tags two of them (its own `create_tag`); our
    scans equal pypaimon's own reads with the same `scan.*` options."""
    import pyarrow as pa
    from oracles import import_oracle

    pypaimon: Any = import_oracle("pypaimon")
    data = pa.table({"id": pa.array(range(3000), pa.int64()),
                     "tag": pa.array([f"t{i % 30}" for i in range(3000)])})
    catalog = pypaimon.CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("py", True)
    catalog.create_table("py.t", pypaimon.Schema.from_pyarrow_schema(
        data.schema, options={"bucket": "-1", "deletion-vectors.enabled": "true"}), False)
    table = catalog.get_table("py.t")
    for start in (0, 1000, 2000):
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(data.slice(start, 1000))
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()
    catalog.create_tag("py.t", "one", 1)
    catalog.create_tag("py.t", "two", 2)
    ours = Table.open(tmp_path / "py.db" / "t")
    assert {name: s.id for name, s in ours.tags().items()} == {"one": 1, "two": 2}
    snaps = ours.snapshots()
    cases = [{"scan.tag-name": "one"}, {"scan.tag-name": "two"}, {"scan.snapshot-id": "2"},
             {"scan.timestamp-millis": str(snaps[1].time_millis)}]
    for options, count in zip(cases, [1000, 2000, 2000, 2000]):
        theirs = catalog.get_table("py.t").copy(options)
        builder = theirs.new_read_builder()
        expected = builder.new_read().to_arrow(builder.new_scan().plan().splits())
        version = TimeTravel.from_options(options)
        got = ours.scan(snapshot=version.snapshot, tag=version.tag, as_of=version.as_of).to_arrow()
        assert sorted(got.column("id").to_pylist()) == sorted(expected.column("id").to_pylist()), options
        assert got.num_rows == count
