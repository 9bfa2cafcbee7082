"""Planning's pruning of many files at once (`bulk_stats.stats_skips`, `merge._pruned`) keeps
exactly the files the per-file evaluation keeps (`predicates.partition_verdict`, then
`stats.stats_skip`), on drawn statistics (NULL bounds, unknown null counts, NaN, strings
sharing a prefix longer than the truncation, damaged rows, schema evolution, stats of some
columns) and drawn filters (AND, OR, NOT, comparisons, IN, BETWEEN, IS NULL, on partition and
other columns, literals of the column's kind and of others, as given and as `for_file` makes
them sound); and the C kernel reads the rows as the Python decoder does."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_schema.layouts.binary_row import decode_binary_row, encode_binary_row, row_kinds
from paimon_schema.query.predicate import Leaf, Predicate
from paimon_schema.table import bulk_stats, merge, plan
from paimon_schema.table import predicates as preds
from paimon_schema.table.manifests import DataFile
from paimon_schema.table.schema import TableSchema
from paimon_schema.table.stats import stats_skip
from paimon_schema.values.errors import FormatError
from strategies import (STATS_FIELDS, index_predicates, indexed_files, stat_values, stats_files, stats_predicates,
                        stats_schemas)

_kernels = pytest.importorskip("paimon_schema.runtime._kernels")


def predicate_of(where: Predicate, schemas: dict[int, TableSchema], sound: bool) -> Any:
    """The filter each file's schema is checked with: as `for_file` makes it, or as given."""
    def of(schema_id: int) -> tuple[Predicate, frozenset[str]]:
        predicate = preds.for_file(where, schemas[1], schemas[schema_id])[0] if sound else where
        return predicate, frozenset(leaf.column for leaf in preds.leaves(predicate))
    return of


@settings(max_examples=400, deadline=None)
@given(stats_files(), stats_predicates(), st.booleans())
def test_bulk_verdicts_are_the_per_file_verdicts(case: tuple[dict[int, TableSchema], list[DataFile]],
                                                 where: Predicate, sound: bool) -> None:
    schemas, files = case
    of = predicate_of(where, schemas, sound)
    expected = [stats_skip(f, schemas[f.schema_id], *of(f.schema_id)) for f in files]
    got = bulk_stats.stats_skips(files, [f.value_stats for f in files], [f.schema_id for f in files],
                                 [f.row_count for f in files], of, schemas.__getitem__)
    assert got.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(stats_files(), stats_predicates())
def test_the_plan_keeps_what_each_file_keeps(case: tuple[dict[int, TableSchema], list[DataFile]],
                                             where: Predicate) -> None:
    """`merge._pruned`: partition verdicts per run of files (partitions interleaved here),
    statistics together, the kept files in plan order, the counts of what each step skipped."""
    schemas, files = case
    of = predicate_of(where, schemas, sound=True)
    expected, by_partition, by_stats = [], 0, 0
    for f in files:
        verdict = preds.partition_verdict(where, f.partition)
        if verdict is False:
            by_partition += 1
        elif verdict is None and stats_skip(f, schemas[f.schema_id], *of(f.schema_id)):
            by_stats += 1
        else:
            expected.append(f.file_name)
    tab = SimpleNamespace(schema=schemas.__getitem__)
    read_plan = SimpleNamespace(files=tuple(files), schema=schemas[1], snapshot=None)
    stats = merge.ReadStats()
    kept, rows = merge._pruned(tab, read_plan, where, "FAILFAST", stats)       # type: ignore[arg-type]
    assert [f.file_name for f in kept] == expected
    assert rows == [None] * len(kept)
    assert (stats.files_skipped_by_partition, stats.files_skipped_by_stats) == (by_partition, by_stats)
    assert stats.rows == sum(f.row_count for f in files)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_kernel_reads_rows_as_the_decoder(data: st.DataObject) -> None:
    """A row the Python decoder reads, the kernel reads (each value compared with itself is
    equal, with NULL no bound); a row it refuses (damaged), the kernel calls unusable."""
    types = data.draw(st.lists(st.sampled_from([t for _, _, t, _ in STATS_FIELDS[:9]]),
                               min_size=1, max_size=5))
    values = [data.draw(st.none() | stat_values(t)) for t in types]
    try:
        raw = encode_binary_row(values, types)
    except Exception:                       # a day number beyond int32
        return
    if data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([raw[at] ^ (1 << data.draw(st.integers(0, 7)))]) + raw[at + 1:]
    kinds = row_kinds(types)
    assert kinds is not None
    names = tuple(f"c{i}" for i in range(len(types)))
    try:
        decoded: tuple | None = decode_binary_row(raw, types)
    except (FormatError, ValueError, OverflowError):
        decoded = None
    for i, value in enumerate(decoded or [None] * len(types)):
        literal = bulk_stats._literal(kinds[i], value) if value is not None and value == value \
            else None
        codes = _kernels.stats_bounds([(raw, raw, None, names)], names, kinds.encode(), i, (literal,), 0)
        if decoded is None:
            assert codes == bytes([bulk_stats._UNUSABLE] * 2)
        elif value is None or value != value:       # NULL, NaN: no bound
            assert codes == bytes([bulk_stats._NONE] * 2)
        else:
            assert codes == bytes([bulk_stats._EQUAL] * 2), (types, value)


def test_unusable_and_foreign_statistics() -> None:
    """None, null counts of another arity, other names, statistics that are not bytes."""
    names = ("a",)
    row = encode_binary_row([5], ["INT"])
    stats = [None, (row, row, (0, 0), names), (row, row, None, tuple(["a"])), (row, bytearray(row), None, names),
             (row, b"", (1,), names), "odd"]
    codes = _kernels.stats_bounds(stats, names, b"i", 0, (4,), 0)
    assert list(codes) == [4, 4, 4, 4, 5, 5, 6, 6, 2, 3, 6, 6]
    with pytest.raises(TypeError):
        _kernels.stats_bounds(stats, names, b"i", 0, ("4",), 0)


def test_a_truncated_maximum_is_no_bound() -> None:
    """`truncate(N)`: a maximum of N code points (bytes, for BYTES) or more may have been cut."""
    names = ("s", "v")
    row = encode_binary_row(["éé\U0001f600", b"abc"], ["STRING", "BYTES"])
    stats = [(row, row, None, names)]
    assert _kernels.stats_bounds(stats, names, b"sy", 0, ("é".encode(),), 3) == bytes([2, 3])
    assert _kernels.stats_bounds(stats, names, b"sy", 0, ("é".encode(),), 4) == bytes([2, 2])
    assert _kernels.stats_bounds(stats, names, b"sy", 1, (b"abc",), 3) == bytes([1, 3])
    assert _kernels.stats_bounds(stats, names, b"sy", 1, (b"abc",), 4) == bytes([1, 1])


def test_leaves_without_bounds_still_skip_what_python_skips() -> None:
    """`x IN (NULL)` on a column kept without bounds (stats mode `counts`) is never true."""
    schema = stats_schemas({"metadata.stats-mode": "counts"})[1]
    names = ("k",)
    row = encode_binary_row([3], ["BIGINT"])
    files = [DataFile({"p": "a"}, "p=a", 0, 1, "f.parquet", "/f.parquet", 1, 2, 0, 1, 0, 0, (), None,
                      None, None, 0, None, None, value_stats=(row, row, (0,), names))]
    predicate = Leaf("in_", "k", (None,))
    columns = frozenset({"k"})
    assert stats_skip(files[0], schema, predicate, columns)
    assert bulk_stats.stats_skips(files, [files[0].value_stats], [1], [2], lambda _: (predicate, columns),
                                  lambda _: schema).tolist() == [True]


@settings(max_examples=200, deadline=None)
@given(stats_files(), stats_predicates(), st.booleans())
def test_the_runs_read_files_finds_prune_as_one_pass(case: tuple[dict[int, TableSchema], list[DataFile]],
                                                     where: Predicate, grouped: bool) -> None:
    """`read_files`' pass (C `read_pass`) finds the runs of files sharing a partition; pruning
    from them (`_run_pass`) passes what one pass over every file passes (`_plan_pass`), with
    the files in read order (partitions together) or interleaved."""
    schemas, files = case
    if grouped:
        files = sorted(files, key=lambda f: f.partition_path)
    read = plan.read_files("t", schemas[1], tuple(files))
    assert isinstance(read, plan.ReadFiles) and read.runs is not None and read == tuple(files)
    for bucket in (0, -2):                  # (every drawn file is in bucket 0)
        assert _kernels.read_pass(read, bucket)[:2] == plan._read_flags(read, bucket)

    def verdict(partition: Any) -> bool | None:
        return preds.partition_verdict(where, partition)

    assert merge._run_pass(read, read.runs, verdict) == merge._plan_pass(read, verdict)
    # the candidates' attributes read in the runs' pass, as a plan asks for them
    with_columns = plan.read_files("t", schemas[1], tuple(files), merge._CANDIDATE_ATTRIBUTES)
    assert isinstance(with_columns, plan.ReadFiles) and with_columns.runs is not None
    assert merge._run_pass(with_columns, with_columns.runs, verdict) == merge._plan_pass(read, verdict)


@settings(max_examples=60, deadline=None)
@given(stats_files(), stats_predicates())
def test_without_the_c_extension_the_plan_prunes_the_same(
        case: tuple[dict[int, TableSchema], list[DataFile]], where: Predicate) -> None:
    """An install without a compiler takes the Python passes: the same files, the same counts."""
    schemas, files = case
    files = sorted(files, key=lambda f: f.partition_path)

    def pruned() -> tuple[list[str], dict]:
        read = plan.read_files("t", schemas[1], tuple(files))
        stats = merge.ReadStats()
        kept, _ = merge._pruned(SimpleNamespace(schema=schemas.__getitem__),    # type: ignore[arg-type]
                                SimpleNamespace(files=read, schema=schemas[1], snapshot=None),
                                where, "FAILFAST", stats)
        return [f.file_name for f in kept], stats.as_dict()

    compiled = pruned()
    with pytest.MonkeyPatch.context() as patch:
        for module in (bulk_stats, merge, plan):
            patch.setattr(module, "_kernels", None)
        assert pruned() == compiled


def test_in_with_a_null_literal_selects_no_row_of_a_partition_it_misses() -> None:
    """`dt IN (NULL)` is NULL for a known `dt`, never TRUE: the partition verdict says False, as
    the manifests' partition statistics do (the two disagreed: a filtered listing kept
    partitions whose manifests it skipped)."""
    assert preds.partition_verdict(Leaf("in_", "dt", (None,)), {"dt": "2024-01-01"}) is False
    assert preds.partition_verdict(Leaf("in_", "dt", (None, "2024-01-01")), {"dt": "2024-01-01"}) is True
    assert preds.partition_verdict(Leaf("not_in", "dt", (None, "x")), {"dt": "2024-01-01"}) is False
    assert preds.partition_verdict(Leaf("in_", "dt", (None,)), {"dt": None}) is False


@settings(max_examples=150, deadline=None)
@given(indexed_files(), index_predicates(), st.sampled_from(["FAILFAST", "PERMISSIVE"]))
def test_index_answers_prune_the_same_without_the_c_extensions(
        case: tuple[dict[int, TableSchema], list[DataFile]], where: Predicate, mode: str) -> None:
    """`merge._pruned` numbers the files by their containers (`_value_codes`), answers each
    distinct container once and drops what each number drops: the same files, kept rows,
    counts and errors as without the C extension (Python passes, `_kernels`) and as with every
    container parsed (no C probe, `_avro`), on shared, copied, damaged and missing containers."""
    from paimon_schema.query import quick_evaluate
    from paimon_schema.table import indexes

    schemas, files = case
    files = sorted(files, key=lambda f: f.partition_path)
    tab = SimpleNamespace(schema=schemas.__getitem__, file_index=lambda f: indexes.file_index(None, f))

    def pruned() -> Any:
        read = plan.read_files("t", schemas[1], tuple(files), merge._CANDIDATE_ATTRIBUTES)
        stats = merge.ReadStats()
        try:
            kept, rows = merge._pruned(tab, SimpleNamespace(files=read, schema=schemas[1], snapshot=None),  # type: ignore[arg-type]
                                       where, mode, stats)
        except Exception as exc:            # (compared, not hidden: the same error on every path)
            return type(exc), str(exc)
        return ([f.file_name for f in kept], [None if r is None else list(r) for r in rows],
                stats.as_dict())

    compiled = pruned()
    for modules, attribute in (((bulk_stats, merge, plan), "_kernels"), ((quick_evaluate,), "_avro")):
        with pytest.MonkeyPatch.context() as patch:
            for module in modules:
                patch.setattr(module, attribute, None)
            assert pruned() == compiled


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_codes_of_many_literals_are_each_literals_codes(data: st.DataObject) -> None:
    """`stats_bounds` of an IN list's literals: in one pass over the files' statistics, the
    codes literal after literal as it answers each alone (rows of every kind the
    kernel reads, NULL values, damaged rows, empty and missing bounds, foreign and odd
    statistics, truncated maxima)."""
    types = data.draw(st.lists(st.sampled_from([t for _, _, t, _ in STATS_FIELDS[:9]]),
                               min_size=1, max_size=4))
    kinds = row_kinds(types)
    assert kinds is not None
    names = tuple(f"c{i}" for i in range(len(types)))

    def row() -> bytes | None:
        try:
            raw = encode_binary_row([data.draw(st.none() | stat_values(t)) for t in types], types)
        except Exception:                   # a day number beyond int32
            return None
        damage = data.draw(st.sampled_from(["none"] * 4 + ["empty", "missing", "flip"]))
        if damage == "flip":
            at = data.draw(st.integers(0, len(raw) - 1))
            return raw[:at] + bytes([raw[at] ^ (1 << data.draw(st.integers(0, 7)))]) + raw[at + 1:]
        return {"none": raw, "empty": b"", "missing": None}[damage]

    stats: list[Any] = [(row(), row(), data.draw(st.none() | st.just((0,) * len(types))), names)
                        for _ in range(data.draw(st.integers(0, 8)))]
    stats += [None, "odd", (b"", b"", None, tuple(names)), (b"", b"", (1,) * (len(types) + 1), names)]
    field = data.draw(st.integers(0, len(kinds) - 1))
    kind = kinds[field]
    literal = (st.integers(-2**70, 2**70) if kind in "?bhiqD" else st.floats() if kind in "fd"
               else st.binary(max_size=20) | st.text(max_size=8).map(str.encode))
    literals = tuple(data.draw(st.lists(st.none() | literal, max_size=4)))
    limit = data.draw(st.sampled_from([0, 0, 2, 16]))
    expected = b"".join(_kernels.stats_bounds(stats, names, kinds.encode(), field, (literal,), limit)
                        for literal in literals)
    assert _kernels.stats_bounds(stats, names, kinds.encode(), field, literals, limit) == expected
    with pytest.raises(TypeError):
        _kernels.stats_bounds(stats, names, kinds.encode(), field, (1.5 if kind in "sy" else "x",), limit)
