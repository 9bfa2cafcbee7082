"""Our readers over indexes an independent writer wrote (pypaimon-rust: bitmap V2 in several
blocks, BSI, range-bitmap in several chunks, bloom): every predicate's rows equal the rows
computed from the data (exact indexes) or contain them (bloom), row for row."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
import rust_writer
from oracles import oracle_unavailable
from pyroaring import BitMap
from truth import holds

import paimon_schema as ps
from paimon_schema.query.predicate import Leaf

ROWS = 3000
TYPES = {"i": "INT", "b": "BIGINT", "s": "STRING", "d": "DOUBLE"}
INDEXES = {
    "bitmap": {c: {"index-block-size": "64b"} for c in ("i", "s", "d")},
    "bloom-filter": {"i": {"items": "100"}, "s": {"items": "200"}, "d": {"items": "50"}},
    "bsi": {"i": {}, "b": {}},
    "range-bitmap": {c: {"chunk-size": "32b"} for c in ("i", "b", "s", "d")},
}
INTS = [-(2**31), 2**31 - 1, 0, -1, 7, -7] + list(range(-40, 40, 3))
LONGS = [-(2**63) + 1, 2**63 - 1, 0, -1] + [n * 10**12 + n for n in range(-30, 30)]
STRINGS = ["", "a", "b", "ab", "é", "名前", "\U0001F600", "z" * 40] + [f"v{n}" for n in range(30)]
DOUBLES = [0.0, -0.0, math.nan, math.inf, -math.inf, -1.5, 1e300, 5e-324] + [n / 4 for n in range(-20, 20)]
VALUES = {"i": INTS, "b": LONGS, "s": STRINGS, "d": DOUBLES}
#: what each index type answers exactly (the rest: REMAIN, or a superset)
EXACT = {"bitmap": {"equal", "in_", "is_null", "is_not_null"},
         "bsi": set(), "range-bitmap": set(), "bloom-filter": set()}
EXACT["bsi"] = EXACT["range-bitmap"] = {"equal", "not_equal", "in_", "not_in", "is_null", "is_not_null",
                                        "less_than", "less_or_equal", "greater_than",
                                        "greater_or_equal", "between"}


def _column(values: list, every: int, stride: int) -> list:
    return [None if k % every == 0 else values[(k * stride) % len(values)] for k in range(ROWS)]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    try:
        rust_writer.require()
    except rust_writer.RustWriterUnavailable as exc:
        oracle_unavailable(f"pypaimon-rust not installed: {exc}")
    data = pa.table({"i": pa.array(_column(INTS, 7, 5), pa.int32()),
                     "b": pa.array(_column(LONGS, 11, 7), pa.int64()),
                     "s": pa.array(_column(STRINGS, 5, 3), pa.string()),
                     "d": pa.array(_column(DOUBLES, 9, 11), pa.float64())})
    files = rust_writer.write_table(data, tmp_path_factory.mktemp("rust") / "warehouse", INDEXES)
    assert files and all(f.container for f in files)
    return files


def _leaves(column: str) -> list[Leaf]:
    probes = VALUES[column][:6] + VALUES[column][-3:]
    leaves = [Leaf("is_null", column), Leaf("is_not_null", column)]
    for v in probes:
        leaves += [Leaf(f, column, (v,)) for f in ("equal", "not_equal", "less_than", "less_or_equal",
                                                    "greater_than", "greater_or_equal")]
    leaves += [Leaf("in_", column, tuple(probes[:3])), Leaf("not_in", column, tuple(probes[2:5])),
               Leaf("between", column, (probes[0], probes[-1]))]
    return leaves


@pytest.mark.parametrize("index_type", sorted(INDEXES))
def test_rust_written_index_answers_the_truth(written, index_type: str) -> None:
    checked = 0
    for file in written:
        container = ps.FileIndexFile.parse(file.container)
        for column in INDEXES[index_type]:
            reader = ps.open_index(index_type, container.columns[column][index_type], TYPES[column])
            values = file.columns[column]
            for leaf in _leaves(column):
                checked += 1
                truth = BitMap(r for r, v in enumerate(values) if holds(leaf, v, TYPES[column]))
                result = leaf.ask(reader)
                if not result.remain:
                    assert not truth, f"{index_type} skipped matching rows for {leaf}"
                    continue
                if result.rows is None:
                    assert leaf.function not in EXACT[index_type], f"{index_type} gave REMAIN for {leaf}"
                    continue
                assert truth <= result.rows, f"{index_type} dropped rows for {leaf}"
                if leaf.function in EXACT[index_type]:
                    assert result.rows == truth, f"{index_type} is not exact for {leaf}"
    assert checked >= 100


def test_rust_written_indexes_are_multi_block_and_multi_chunk(written) -> None:
    from paimon_schema.layouts.bitmap_index import BitmapIndexReader
    from paimon_schema.layouts.range_bitmap import RangeBitmapIndexReader
    container = ps.FileIndexFile.parse(written[0].container)
    bitmap = BitmapIndexReader.open(container.columns["i"]["bitmap"], "INT")
    assert bitmap.version == 2
    ranged = RangeBitmapIndexReader.open(container.columns["s"]["range-bitmap"], "STRING")
    assert ranged.num_keys == len(set(v for v in written[0].columns["s"] if v is not None))
