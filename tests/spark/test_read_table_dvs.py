"""`read_table` drops exactly the rows deletion vectors delete, in the JVM: deleted positions at
64-row word boundaries (0, 63, 64, 127, 128, the last row), files without a vector, empty
vectors, files with every row deleted, 64-bit bins, data files of equal size (which the
join fallback tells apart by scanning them separately; the JVM filter knows each row's file
from the scan), and the broadcast-join fallback used where the JVM filter cannot be compiled. Every read equals the construction and the pyarrow read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_schema import spark as ps_spark
from paimon_schema.spark import jvm_filter, native, read_arrow

import forged_tables as forge

N, FILE_ROWS = 800, 200
#: file 0: word boundaries; file 1: nothing deleted; file 2: one row; file 3: every row
DELETED = [0, 63, 64, 127, 128, 199] + [200 + 64] + list(range(600, 800))


def _value(i: int, same_size: bool) -> float:
    return float(i % FILE_ROWS % 7 if same_size else i % 7)


def _data(same_size: bool) -> pa.Table:
    """Four partitions, one file each; with `same_size` of identical content but for the
    partition value, so that the four files have one size and `_metadata.file_size` cannot
    tell them apart (the join fallback then scans them apart)."""
    return pa.table({"k": pa.array([i % FILE_ROWS for i in range(N)], pa.int64()),
                     "v": pa.array([_value(i, same_size) for i in range(N)]),
                     "p": pa.array(["abcd"[i // FILE_ROWS] for i in range(N)])})


def _expected(kept: list[int], same_size: bool) -> list[tuple]:
    return sorted(("abcd"[i // FILE_ROWS], i % FILE_ROWS, _value(i, same_size)) for i in kept)


def _rows(items: Any) -> list[tuple]:
    items = items.to_pylist() if isinstance(items, pa.Table) else [r.asDict() for r in items]
    return sorted((r["p"], r["k"], r["v"]) for r in items)


@pytest.fixture(scope="module", params=["bitmap32", "bitmap64", "empty-vectors"])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> tuple[Path, bool]:
    """(table, whether its files have one size): 32-bit bins in files of one size, 64-bit bins
    in files of distinct sizes, empty vectors in files of one size."""
    same_size = request.param != "bitmap64"
    root = tmp_path_factory.mktemp(request.param) / "t"
    files = forge.write_table(root, _data(same_size), {"k": "BIGINT", "v": "DOUBLE", "p": "STRING"},
                              partition_keys=["p"], file_rows=FILE_ROWS, deleted=DELETED,
                              bitmap64=request.param == "bitmap64",
                              empty_vectors=request.param == "empty-vectors")
    assert len({f.path.stat().st_size for f in files}) == (1 if same_size else len(files))
    return root, same_size


def _plan(df: Any) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_jvm_filter_drops_exactly_the_deleted_rows(spark: Any, table: tuple[Path, bool]) -> None:
    root, same_size = table
    expected = _expected([i for i in range(N) if i not in set(DELETED)], same_size)
    assert _rows(read_arrow(root)) == expected
    df = ps_spark.read_table(spark, root)
    assert _rows(df.collect()) == expected
    plan = _plan(df)
    assert "UDF(_tmp_metadata_row_index" in plan and "BroadcastHashJoin" not in plan
    assert "_metadata" not in plan.replace("_tmp_metadata_row_index", "")
    assert jvm_filter._unavailable is None
    # a filter prunes, the rest is still exact
    assert _rows(ps_spark.read_table(spark, root, "k >= 63 AND k <= 65").collect()) == \
        [r for r in expected if 63 <= r[1] <= 65]


def test_join_fallback_is_exact(spark: Any, table: tuple[Path, bool],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    root, same_size = table
    monkeypatch.setattr(jvm_filter, "_unavailable", "disabled by the test")
    df = ps_spark.read_table(spark, root)
    assert "BroadcastHashJoin" in _plan(df)
    assert _rows(df.collect()) == _expected([i for i in range(N) if i not in set(DELETED)], same_size)


def test_files_of_one_size_go_to_separate_joins(table: tuple[Path, bool]) -> None:
    from paimon_schema.table.merge import plan_read

    root, same_size = table
    tasks = [t for t in plan_read(root).tasks if t.deletion_file is not None]
    groups = native._distinct_sizes(tasks, native._file_sizes(tasks))
    assert len(groups) == (len(tasks) if same_size else 1)
    assert native._distinct_sizes(tasks, {t.path: i for i, t in enumerate(tasks)}) == [tasks]


def test_payload_and_word_table_carry_the_same_rows(table: tuple[Path, bool]) -> None:
    """The join's words and the JVM filter's bitmaps carry the same dropped rows."""
    from pyroaring import BitMap

    from paimon_schema.table.merge import plan_read

    tasks = [t for t in plan_read(table[0]).tasks if t.deletion_file is not None]
    sizes = {t.path: 1000 + i for i, t in enumerate(tasks)}
    dropped = native._dropped_rows(tasks)
    words = native._dropped_words(dropped, sizes).to_pydict()
    from_words: dict[int, set[int]] = {}
    for key, word in zip(words[native.KEY], words[native.DROPPED]):
        size, index = key >> native._WORD_BITS, key & ((1 << native._WORD_BITS) - 1)
        from_words.setdefault(size, set()).update(64 * index + j for j in range(64) if word >> j & 1)
    payload = native._payload(tasks, dropped)
    size_of = {native._uri(t): sizes[t.path] for t in tasks}
    from_payload, pos = {}, 0
    while pos < len(payload):
        key_length = int.from_bytes(payload[pos:pos + 4], "little")
        key = payload[pos + 4:pos + 4 + key_length].decode()
        pos += 4 + key_length
        length = int.from_bytes(payload[pos:pos + 4], "little")
        from_payload[size_of[key]] = set(BitMap.deserialize(payload[pos + 4:pos + 4 + length]))
        pos += 4 + length
    # every file has an entry, an empty bitmap where nothing drops (the words skip those)
    assert set(from_payload) == set(size_of.values())
    assert from_words == {size: rows for size, rows in from_payload.items() if rows}
    assert sorted(p for rows in from_payload.values() for p in rows) == \
        sorted(p % FILE_ROWS for p in DELETED)


def _mask(rows: int, marked: Any) -> np.ndarray:
    mask = np.zeros(rows, bool)
    mask[marked] = True
    return mask


_PAYLOAD_MASKS = {
    "none": np.zeros(0, bool), "no-rows": np.zeros(1000, bool), "one": _mask(1, [0]),
    "array-4096": _mask(70_000, range(4096)),              # a full array container
    "bitmap-4097": _mask(70_000, range(1, 4098)),          # the smallest bitmap container
    "full": np.ones(1 << 16, bool), "full-and-one": np.ones((1 << 16) + 1, bool),
    "sparse-gaps": _mask(300_000, [0, 65_535, 65_536, 200_000, 299_999]),  # an empty container between
    "random-30%": np.random.default_rng(5).random(400_000) < 0.3,
    "every-97th": np.arange(250_000) % 97 == 0,
}


def test_payload_bitmaps_are_portable_roaring() -> None:
    """Every file of a payload has the portable RoaringBitmap (what Java's `RoaringBitmap`
    reads; the Spark tests read every payload through KeepRows) of exactly its masked rows,
    an empty one where it has no mask, in the order of the scan's tasks, whatever container
    shapes the masks make."""
    from types import SimpleNamespace

    from pyroaring import BitMap

    from paimon_schema.table.fileio import LocalFileIO

    io = LocalFileIO()
    names = [*_PAYLOAD_MASKS, "unmasked"]
    tasks = [SimpleNamespace(path=f"/t/{name}.parquet", fileio=io) for name in names]
    dropped = {f"/t/{name}.parquet": mask for name, mask in _PAYLOAD_MASKS.items()}
    payload, pos, seen = native._payload(tasks, dropped), 0, []  # type: ignore[arg-type]
    while pos < len(payload):
        key_length = int.from_bytes(payload[pos:pos + 4], "little")
        key = payload[pos + 4:pos + 4 + key_length].decode()
        pos += 4 + key_length
        length = int.from_bytes(payload[pos:pos + 4], "little")
        name = key.rsplit("/", 1)[1].removesuffix(".parquet")
        bitmap = BitMap.deserialize(payload[pos + 4:pos + 4 + length])
        mask = _PAYLOAD_MASKS.get(name, np.zeros(0, bool))
        assert bitmap == BitMap(np.flatnonzero(mask).tolist()), name
        seen.append(name)
        pos += 4 + length
    assert seen == names
