"""Pruning by global indexes is sound, and exact where the indexes cover every row: for random
columns, index row ranges (btree and bitmap files with range-local row ids, covering all or part
of the rows), data files and filters (leaves, AND, OR over two columns), no row the filter
keeps is excluded; with full coverage of every column the filter names, the excluded rows are
exactly the rows the filter drops; a data file's candidates hold every matching row."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_schema import FormatError
from paimon_schema.layouts.bitmap_global_index import write_bitmap_global_index
from paimon_schema.layouts.btree_global_index import write_btree_global_index
from paimon_schema.layouts.global_index_meta import GlobalIndexMeta
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.table import predicates as preds
from paimon_schema.table.arrow_types import arrow_schema
from paimon_schema.table.fileio import LocalFileIO
from paimon_schema.table.global_indexes import GlobalIndexFile, GlobalIndexPruning
from paimon_schema.table.manifests import DataFile
from paimon_schema.table.schema import DataField, TableSchema

SCHEMA = TableSchema(0, (DataField(0, "a", "INT"), DataField(1, "b", "STRING")), (), (), {}, 1)
FUNCTIONS = ["equal", "not_equal", "less_than", "less_or_equal", "greater_than", "greater_or_equal",
             "in_", "not_in", "is_null", "is_not_null", "between"]


def _values(column: str) -> st.SearchStrategy:
    value = st.integers(-3, 3) if column == "a" else st.sampled_from(["", "x", "xy", "y", "é"])
    return st.none() | value


@st.composite
def _leaf(draw: st.DrawFn) -> Predicate:
    column = draw(st.sampled_from(["a", "b"]))
    function = draw(st.sampled_from(FUNCTIONS))
    literal = _values(column).filter(lambda v: v is not None)
    if function in ("is_null", "is_not_null"):
        return Leaf(function, column)
    if function in ("in_", "not_in"):
        return Leaf(function, column, tuple(draw(st.lists(_values(column), min_size=1, max_size=3))))
    if function == "between":
        return Leaf(function, column, (draw(literal), draw(literal)))
    return Leaf(function, column, (draw(literal),))


def _predicates() -> st.SearchStrategy:
    return st.recursive(_leaf(), lambda inner: st.builds(
        lambda kind, children: (And if kind else Or)(tuple(children)),
        st.booleans(), st.lists(inner, min_size=2, max_size=3)), max_leaves=4)


@st.composite
def _cuts(draw: st.DrawFn, rows: int) -> list[tuple[int, int]]:
    """`rows` row ids cut into consecutive inclusive ranges."""
    points = sorted(set(draw(st.lists(st.integers(1, rows - 1), max_size=4)))) if rows > 1 else []
    bounds = [0, *points, rows]
    return [(lo, hi - 1) for lo, hi in zip(bounds, bounds[1:])]


def _index_files(tmp: Path, column: str, values: list[Any], ranges: list[tuple[int, int]],
                 index_type: str) -> list[GlobalIndexFile]:
    field = SCHEMA.field(column)
    out = []
    for lo, hi in ranges:
        local = values[lo:hi + 1]
        data = (write_btree_global_index(str(field.type), local).data if index_type == "btree"
                else write_bitmap_global_index(str(field.type), local))
        path = tmp / f"{index_type}-{column}-{lo}.index"
        path.write_bytes(data)
        meta = GlobalIndexMeta(index_type, lo, hi, field.id, None, None, None)
        out.append(GlobalIndexFile(index_type, "sorted", field.id, column, (lo, hi), path.name,
                                   str(path), len(data), hi - lo + 1, "", meta))
    return out


def _data_file(first: int, rows: int) -> DataFile:
    return DataFile({}, "", 0, -1, f"f{first}", f"f{first}", 0, rows, 0, 0, 0, 0, (), None, None,
                    None, None, first, None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), rows=st.integers(1, 60), full=st.booleans())
def test_pruning_is_sound_and_exact_under_full_coverage(tmp_path: Path, data: st.DataObject, rows: int,
                                                        full: bool) -> None:
    columns = {c: data.draw(st.lists(_values(c), min_size=rows, max_size=rows)) for c in ("a", "b")}
    files = []
    for column in ("a", "b"):
        cuts = data.draw(_cuts(rows))
        covered = cuts if full else [r for r in cuts if data.draw(st.booleans())]
        index_type = data.draw(st.sampled_from(["btree", "bitmap"]))
        files += _index_files(tmp_path, column, columns[column], covered, index_type)
    where = data.draw(_predicates())
    table = pa.table({"a": pa.array(columns["a"], pa.int32()), "b": pa.array(columns["b"], pa.string()),
                      "i": pa.array(range(rows), pa.int64())})
    matching = set(table.filter(preds.to_arrow(where, arrow_schema(SCHEMA, ["a", "b"])))["i"].to_pylist())
    pruning = GlobalIndexPruning.evaluate(LocalFileIO(), SCHEMA, files, where)
    excluded = set() if pruning.excluded is None else set(pruning.excluded)
    assert not excluded & matching                               # sound
    assert excluded <= set(range(rows))
    if full:
        by_type = {(f.column, f.index_type) for f in files}
        answerable = all(
            leaf.function in ("equal", "in_", "not_equal", "not_in", "is_null", "is_not_null")
            or any(t == "btree" for c, t in by_type if c == leaf.column)
            for leaf in preds.leaves(where))
        if answerable:
            assert excluded == set(range(rows)) - matching       # exact
    for lo, hi in data.draw(_cuts(rows)):
        kept = pruning.candidates(_data_file(lo, hi - lo + 1))
        in_file = {r - lo for r in matching if lo <= r <= hi}
        assert kept is None or in_file <= set(kept)


def test_files_without_row_ids_or_unanswered_filters_are_kept(tmp_path: Path) -> None:
    files = _index_files(tmp_path, "a", [1, 2, None, 4], [(0, 3)], "bitmap")
    pruning = GlobalIndexPruning.evaluate(LocalFileIO(), SCHEMA, files, Leaf("less_than", "a", (2,)))
    assert pruning.excluded is None                              # bitmap answers no range
    pruning = GlobalIndexPruning.evaluate(LocalFileIO(), SCHEMA, files, Leaf("equal", "a", (2,)))
    assert pruning.excluded is not None and set(pruning.excluded) == {0, 2, 3}
    no_ids = DataFile({}, "", 0, -1, "f", "f", 0, 4, 0, 0, 0, 0, (), None, None, None, None, None, None)
    assert pruning.candidates(no_ids) is None
    kept = pruning.candidates(_data_file(0, 4))
    assert kept is not None and list(kept) == [1]
    kept = pruning.candidates(_data_file(2, 2))
    assert kept is not None and len(kept) == 0                   # skip: no row left
    assert pruning.candidates(_data_file(4, 10)) is None         # rows the index does not cover


@pytest.mark.parametrize("where", [Leaf("equal", "a", (1.5,)), Leaf("equal", "b", (3,))])
def test_literals_the_column_cannot_hold_answer_nothing(tmp_path: Path, where: Leaf) -> None:
    files = _index_files(tmp_path, "a", [1, 2], [(0, 1)], "btree") + \
        _index_files(tmp_path, "b", ["x", None], [(0, 1)], "bitmap")
    assert GlobalIndexPruning.evaluate(LocalFileIO(), SCHEMA, files, where).excluded is None


def test_index_files_match_columns_by_field_id(tmp_path: Path) -> None:
    """A column renamed after its index was built keeps its index; a new column under the old
    name does not take it."""
    [old] = _index_files(tmp_path, "a", [1, 2, 3], [(0, 2)], "btree")
    renamed = TableSchema(1, (DataField(0, "a2", "INT"), DataField(2, "a", "INT")), (), (), {}, 2)
    files = [replace(old, column="a")]
    assert set(GlobalIndexPruning.evaluate(LocalFileIO(), renamed, files, Leaf("equal", "a2", (2,))).excluded
               or ()) == {0, 2}
    assert GlobalIndexPruning.evaluate(LocalFileIO(), renamed, files, Leaf("equal", "a", (2,))).excluded is None


class _SeekCountingIO(LocalFileIO):
    """A local FileIO whose input files count the seeks to their end (a size lookup)."""

    end_seeks = 0

    def open_input(self, path: str, size: int | None = None) -> Any:
        return _SeekCounting(super().open_input(path, size), self)


class _SeekCounting:
    def __init__(self, inner: Any, io: _SeekCountingIO) -> None:
        self.inner, self.io = inner, io

    def seek(self, offset: int, whence: int = 0) -> int:
        self.io.end_seeks += whence == 2
        return int(self.inner.seek(offset, whence))

    def read(self, length: int) -> bytes:
        return bytes(self.inner.read(length))

    def __enter__(self) -> _SeekCounting:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()


def test_btree_files_are_opened_with_the_size_the_manifest_records(tmp_path: Path) -> None:
    """The reader takes the index file's size from the index manifest (as Java's does): no
    seek to the file's end to find it, the same answer."""
    files = _index_files(tmp_path, "a", [1, 2, None, 4, 2], [(0, 4)], "btree")
    io = _SeekCountingIO()
    pruning = GlobalIndexPruning.evaluate(io, SCHEMA, files, Leaf("equal", "a", (2,)))
    assert pruning.excluded is not None and set(pruning.excluded) == {0, 2, 3}
    assert io.end_seeks == 0
    wrong = [replace(files[0], file_size=files[0].file_size - 1)]       # a footer's magic no longer at the end
    with pytest.raises(FormatError, match="corrupt global index"):
        GlobalIndexPruning.evaluate(io, SCHEMA, wrong, Leaf("equal", "a", (2,)))
