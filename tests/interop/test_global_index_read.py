"""Reads that use global indexes: a data-evolution table written by pypaimon 2.1.0, btree and
bitmap global indexes built by pypaimon, read by `read_arrow` with filters. The rows equal
pypaimon's `to_arrow` with the same filter and pypaimon's unfiltered read filtered exactly;
`ReadStats` counts the files the global indexes skipped. An index covering part of the rows
answers nothing for the rest (pypaimon's default `scalar-index.search-mode=fast` drops those
rows; `full` keeps them, as we do)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from global_index_tables import pypaimon_index, rust_index, write_table

import paimon_schema as ps
from paimon_schema.layouts.bitmap_global_index import BitmapGlobalIndexReader, write_bitmap_global_index
from paimon_schema.table import Table
from paimon_schema.table.global_indexes import GlobalIndexPruning
from paimon_schema.table.scan import read_arrow

ROWS = 300


def _data(rows: int = ROWS, start: int = 0) -> pa.Table:
    ids = range(start, start + rows)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "s": pa.array([f"s{i % 7}" if i % 5 else None for i in ids], pa.string()),
                     "k": pa.array([i // 40 - 3 for i in ids], pa.int32()),
                     "d": pa.array([19960 + i % 20 for i in ids], pa.int32()).cast(pa.date32())})


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    warehouse = tmp_path_factory.mktemp("gi")
    catalog = write_table(warehouse, _data(), batches=3)
    pypaimon_index(catalog, "k", "btree")
    pypaimon_index(catalog, "s", "bitmap")
    pypaimon_index(catalog, "d", "bitmap")
    return catalog, warehouse / "db.db" / "t"


def _pypaimon(table: Any, build: Callable[[Any], Any] | None = None) -> pa.Table:
    read_builder = table.new_read_builder()
    if build is not None:
        read_builder = read_builder.with_filter(build(read_builder.new_predicate_builder()))
    return read_builder.new_read().to_arrow(read_builder.new_scan().plan().splits())


def _rows(table: pa.Table) -> list[dict]:
    return sorted(table.select(["id", "s", "k", "d"]).to_pylist(), key=lambda r: r["id"])


#: (our filter, pypaimon's predicate, pyarrow's exact filter, files the global indexes skip)
CASES = [
    ("k = -3", lambda b: b.equal("k", -3), lambda t: pc.equal(t["k"], -3), 2),
    ("k > 3", lambda b: b.greater_than("k", 3), lambda t: pc.greater(t["k"], 3), 2),
    ("k BETWEEN -1 AND 0", lambda b: b.between("k", -1, 0),
     lambda t: pc.and_(pc.greater_equal(t["k"], -1), pc.less_equal(t["k"], 0)), 1),
    ("s = 's1'", lambda b: b.equal("s", "s1"), lambda t: pc.equal(t["s"], "s1"), 0),
    ("s IS NULL", lambda b: b.is_null("s"), lambda t: pc.is_null(t["s"]), 0),
    ("s IN ('s2', 's3')", lambda b: b.is_in("s", ["s2", "s3"]), lambda t: pc.is_in(t["s"], pa.array(["s2", "s3"])), 0),
    ("k < 0 AND s = 's3'", lambda b: b.and_predicates([b.less_than("k", 0), b.equal("s", "s3")]),
     lambda t: pc.and_(pc.less(t["k"], 0), pc.equal(t["s"], "s3")), 1),
    ("k = -3 OR k = 4", lambda b: b.or_predicates([b.equal("k", -3), b.equal("k", 4)]),
     lambda t: pc.or_(pc.equal(t["k"], -3), pc.equal(t["k"], 4)), 1),
    ("d = DATE'2024-08-27' AND k = 2", lambda b: b.and_predicates([b.equal("d", dt.date(2024, 8, 27)), b.equal("k", 2)]),
     lambda t: pc.and_(pc.equal(t["d"], pa.scalar(19962, pa.int32()).cast(pa.date32())), pc.equal(t["k"], 2)), 2),
    ("k = 99", lambda b: b.equal("k", 99), lambda t: pc.equal(t["k"], 99), 3),
]


@pytest.mark.parametrize(("where", "theirs", "exact", "skipped"), CASES, ids=[c[0] for c in CASES])
def test_reads_with_global_indexes_equal_pypaimon(indexed: tuple[Any, Path], where: str,
                                                  theirs: Callable, exact: Callable, skipped: int) -> None:
    catalog, path = indexed
    table = catalog.get_table("db.t")
    ours, stats = read_arrow(path, where, with_stats=True)
    everything = _pypaimon(table)
    assert _rows(ours) == _rows(everything.filter(exact(everything)))
    assert _rows(ours) == _rows(_pypaimon(table, theirs))
    assert stats.files_skipped_by_global_index == skipped
    assert stats.files_skipped == skipped                    # no statistics, no file indexes
    unfiltered, plain = read_arrow(path, with_stats=True)
    assert _rows(unfiltered) == _rows(everything) and plain.files_skipped == 0


def test_rows_outside_the_index_are_never_dropped(tmp_path: Path) -> None:
    catalog = write_table(tmp_path, _data(), batches=2)
    pypaimon_index(catalog, "k", "btree")
    write_table_append(catalog, _data(100, ROWS))            # rows 300..399: not indexed
    path = tmp_path / "db.db" / "t"
    ours, stats = read_arrow(path, "k = 4", with_stats=True)
    everything = _pypaimon(catalog.get_table("db.t"))
    truth = everything.filter(pc.equal(everything["k"], 4))
    assert _rows(ours) == _rows(truth) and truth.num_rows == 40   # 20 indexed + 20 not indexed
    assert stats.files_skipped_by_global_index == 1
    full = catalog.get_table("db.t").copy({"scalar-index.search-mode": "full"})
    assert _rows(_pypaimon(full, lambda b: b.equal("k", 4))) == _rows(truth)
    fast = _pypaimon(catalog.get_table("db.t"), lambda b: b.equal("k", 4))
    assert fast.num_rows == 20                # pypaimon's default trusts the index for every row


def write_table_append(catalog: Any, data: pa.Table) -> None:
    builder = catalog.get_table("db.t").new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    try:
        write.write_arrow(data)
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()


def test_global_indexes_listed(indexed: tuple[Any, Path]) -> None:
    _, path = indexed
    listed = Table.open(path).global_indexes()
    assert [(g.index_type, g.column, g.row_range, g.kind) for g in listed] == [
        ("bitmap", "s", (0, ROWS - 1), "sorted"), ("btree", "k", (0, ROWS - 1), "sorted"),
        ("bitmap", "d", (0, ROWS - 1), "sorted")]                 # by field id
    assert all(g.file_size == Path(g.path).stat().st_size for g in listed)


def test_corrupt_global_index(indexed: tuple[Any, Path], tmp_path: Path) -> None:
    _, path = indexed
    table = Table.open(path)
    btree = next(g for g in table.global_indexes() if g.index_type == "btree")
    broken = tmp_path / "broken"
    broken.write_bytes(Path(btree.path).read_bytes()[:-3])
    from dataclasses import replace

    files = [replace(btree, path=str(broken))]
    where = ps.col("k") == 1
    with pytest.raises(ps.FormatError, match="corrupt global index"):
        GlobalIndexPruning.evaluate(table.io, table.schema(), files, where)
    pruning = GlobalIndexPruning.evaluate(table.io, table.schema(), files, where, permissive=True)
    assert pruning.excluded is None and pruning.corrupt == [str(broken)]


def test_cli_lists_dumps_and_verifies_global_indexes(indexed: tuple[Any, Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from paimon_schema.cli.main import main

    _, path = indexed
    assert main(["table", str(path), "indexes"]) == 0
    out = capsys.readouterr().out
    assert "global btree on 'k': rows 0..299" in out and "3 global index files" in out
    assert main(["table", str(path), "indexes", "--json"]) == 0
    import json

    listed = json.loads(capsys.readouterr().out)["global_indexes"]
    assert sorted(g["column"] for g in listed) == ["d", "k", "s"]
    assert main(["table", str(path), "query", "--where", "k = -3 AND s = 's1'"]) == 0
    out = capsys.readouterr().out
    assert "SKIP by global index" in out and "ROWS 5 of 100 {1, 8, 22, 29, 36}" in out
    assert "2 files of 3 skipped (0 by partition, 0 by file index, 2 by global index)" in out
    for g in Table.open(path).global_indexes():          # the column type from the manifest
        assert main(["dump", g.path]) == 0
        out = capsys.readouterr().out
        assert ("'s1'" in out) if g.column == "s" else True
        assert main(["dump", "--hex", g.path]) == 0
    capsys.readouterr()


def test_cli_verifies_global_index_files_in_a_table(indexed: tuple[Any, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from paimon_schema.cli.main import main

    _, path = indexed
    codes = {g.index_type: main(["verify", g.path]) for g in Table.open(path).global_indexes()}
    capsys.readouterr()
    assert codes == {"bitmap": 0, "btree": 0}


def test_primary_key_btree_indexes_are_not_used(shared_fixtures: Path) -> None:
    """Java's sample (release 2.0.0): a primary-key table's `pk-btree` global index, whose row
    ids are positions in named data files (its `_SOURCE_META` is no `DEIX`): listed, never used
    to prune; the filtered read equals the unfiltered one filtered."""
    path = shared_fixtures / "paimon-cpp" / "tables" / "parquet" / "pk_btree_e2e.db" / "pk_btree_e2e"
    table = Table.open(path)
    [index] = table.global_indexes()
    assert (index.index_type, index.column, index.meta.source) == ("btree", "score", None)
    everything = read_arrow(path)
    score = everything["score"][0].as_py()
    rows, stats = read_arrow(path, ps.col("score") == score, with_stats=True)
    assert rows.to_pylist() == everything.filter(pc.equal(everything["score"], score)).to_pylist()
    assert stats.files_skipped_by_global_index == 0


def test_misordered_bitmap_files_are_not_used(tmp_path: Path) -> None:
    """pypaimon-rust 0.4.0's bitmap files are version 1 with keys in typed order: a lookup
    misses most numeric keys (Java's too), so the read does not prune with them and returns
    every matching row; pypaimon's files of the same column prune."""
    write_table(tmp_path, _data(), batches=3)
    rust_index(tmp_path, "k", "bitmap")
    path = tmp_path / "db.db" / "t"
    [index] = Table.open(path).global_indexes()
    reader = BitmapGlobalIndexReader.open(Path(index.path).read_bytes(), "INT")
    assert reader.version == 1 and not reader.keys_ascend()
    assert not reader.equal(0)                               # the miss the check guards against
    for k in (-3, 0, 1, 4):
        rows, stats = read_arrow(path, f"k = {k}", with_stats=True)
        assert sorted(rows.column("id").to_pylist()) == [i for i in range(ROWS) if i // 40 - 3 == k]
        assert stats.files_skipped_by_global_index == 0
    ours = BitmapGlobalIndexReader.open(write_bitmap_global_index("INT", [i // 40 - 3 for i in range(ROWS)]), "INT")
    assert ours.keys_ascend() and list(ours.equal(0)) == list(range(120, 160))


def test_table_scan_streams_with_global_index_pruning(indexed: tuple[Any, Path]) -> None:
    """`Table.scan` plans through the same `plan_read`: its files, stats and streamed batches."""
    _, path = indexed
    scan = Table.open(path).scan(where="k = -3 AND s = 's1'")
    assert len(scan.files()) == 1 and scan.stats.files_skipped_by_global_index == 2
    streamed = pa.Table.from_batches(list(scan.to_batches(batch_rows=7)))
    assert sorted(streamed.column("id").to_pylist()) == [i for i in range(40) if i % 7 == 1 and i % 5]
