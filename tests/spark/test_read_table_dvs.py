"""`read_table` drops exactly the rows deletion vectors delete, in the JVM: deleted positions at
64-row word boundaries (0, 63, 64, 127, 128, the last row), files without a vector, empty
vectors, files with every row deleted, 64-bit bins, data files of equal size (which the JVM
filter tells apart by scanning them separately), and the broadcast-join fallback used where
the JVM filter cannot be compiled. Every read equals the construction and the pyarrow read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_schema import spark as ps_spark
from paimon_schema.spark import jvm_filter, native, read_arrow

import forged_tables as forge

N, FILE_ROWS = 800, 200
#: file 0: word boundaries; file 1: nothing deleted; file 2: one row; file 3: every row
DELETED = [0, 63, 64, 127, 128, 199] + [200 + 64] + list(range(600, 800))


def _data() -> pa.Table:
    """Four partitions, one file each, of identical content but for the partition value (so
    the four files have one size: `_metadata.file_size` cannot tell them apart)."""
    return pa.table({"k": pa.array([i % FILE_ROWS for i in range(N)], pa.int64()),
                     "v": pa.array([float(i % FILE_ROWS % 7) for i in range(N)]),
                     "p": pa.array(["abcd"[i // FILE_ROWS] for i in range(N)])})


def _expected(kept: list[int]) -> list[tuple]:
    return sorted(("abcd"[i // FILE_ROWS], i % FILE_ROWS, float(i % FILE_ROWS % 7)) for i in kept)


def _rows(items: Any) -> list[tuple]:
    items = items.to_pylist() if isinstance(items, pa.Table) else [r.asDict() for r in items]
    return sorted((r["p"], r["k"], r["v"]) for r in items)


@pytest.fixture(scope="module", params=["bitmap32", "bitmap64", "empty-vectors"])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp(request.param) / "t"
    files = forge.write_table(root, _data(), {"k": "BIGINT", "v": "DOUBLE", "p": "STRING"},
                              partition_keys=["p"], file_rows=FILE_ROWS, deleted=DELETED,
                              bitmap64=request.param == "bitmap64",
                              empty_vectors=request.param == "empty-vectors")
    assert len({f.path.stat().st_size for f in files}) == 1
    return root


def _plan(df: Any) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_jvm_filter_drops_exactly_the_deleted_rows(spark: Any, table: Path) -> None:
    expected = _expected([i for i in range(N) if i not in set(DELETED)])
    assert _rows(read_arrow(table)) == expected
    df = ps_spark.read_table(spark, table)
    assert _rows(df.collect()) == expected
    assert "UDF" in _plan(df) and "BroadcastHashJoin" not in _plan(df)
    assert jvm_filter._unavailable is None
    # a filter prunes, the rest is still exact
    assert _rows(ps_spark.read_table(spark, table, "k >= 63 AND k <= 65").collect()) == \
        [r for r in expected if 63 <= r[1] <= 65]


def test_join_fallback_is_exact(spark: Any, table: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jvm_filter, "_unavailable", "disabled by the test")
    df = ps_spark.read_table(spark, table)
    assert "BroadcastHashJoin" in _plan(df)
    assert _rows(df.collect()) == _expected([i for i in range(N) if i not in set(DELETED)])


def test_files_of_one_size_go_to_separate_scans(table: Path) -> None:
    from paimon_schema.table.merge import plan_read

    tasks = [t for t in plan_read(table).tasks if t.deletion_file is not None]
    sizes = native._file_sizes(tasks)
    groups = native._distinct_sizes(tasks, sizes)
    assert len(groups) == len(tasks) and all(len(g) == 1 for g in groups)
    assert native._distinct_sizes(tasks, {t.path: i for i, t in enumerate(tasks)}) == [tasks]


def test_payload_round_trips_through_the_word_table(table: Path) -> None:
    """The join's words and the JVM filter's bitmaps carry the same dropped rows."""
    from pyroaring import BitMap

    from paimon_schema.table.merge import plan_read

    tasks = [t for t in plan_read(table).tasks if t.deletion_file is not None]
    sizes = {t.path: 1000 + i for i, t in enumerate(tasks)}
    dropped = native._dropped_rows(tasks)
    words = native._dropped_words(dropped, sizes).to_pydict()
    from_words = {}
    for key, word in zip(words[native.KEY], words[native.DROPPED]):
        size, index = key >> native._WORD_BITS, key & ((1 << native._WORD_BITS) - 1)
        from_words.setdefault(size, set()).update(64 * index + j for j in range(64) if word >> j & 1)
    payload = native._payload(dropped, sizes)
    from_payload, pos = {}, 0
    while pos < len(payload):
        size, length = int.from_bytes(payload[pos:pos + 8], "little"), int.from_bytes(payload[pos + 8:pos + 12], "little")
        from_payload[size] = set(BitMap.deserialize(payload[pos + 12:pos + 12 + length]))
        pos += 12 + length
    assert from_words == from_payload
    assert sorted(p for rows in from_payload.values() for p in rows) == \
        sorted(p % FILE_ROWS for p in DELETED)
