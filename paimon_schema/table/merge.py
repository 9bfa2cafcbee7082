"""Merge-on-read with pyarrow: the rows Paimon returns for a table, without the JVM.

`plan_read` (on the driver) decides which data files to read and which of their rows can
match a filter: files are pruned by partition values, by the manifests' min/max statistics
(`stats.stats_verdict`; `bulk_stats` answers many files at once), by their file indexes
(`ps.evaluate` with the predicate made sound for SQL, see `predicates.for_file`; the C probe
`QuickEvaluator` first) and, on data-evolution tables, by the snapshot's btree and
bitmap global indexes (`global_indexes`: row ids no row of which can match); what survives becomes one
`FileTask` per file, a small picklable description that a Spark task or a local loop hands to
`read_task`. `read_task` reads the file with pyarrow (Parquet or ORC) batch by batch, drops the
rows the deletion vector deletes (and the rows the indexes ruled out) from each batch in one
Arrow call, and evolves each batch to the table's schema by field id (renamed, dropped, widened
and added columns; partition columns from the partition values, as Paimon reads them, even where
the file stores them: `PartitionUtils.trimPartitionFields`). `scan.TableScan` does both and applies the
exact filter, whole or streaming; a whole read scans the Parquet files of alike tasks together
(`whole_read`) and reads the others with `read_tasks` (files side by side).

Where the time goes in a whole read (`whole_read`; `benchmarks/table_read.py`, 2M rows, CPU
time on a loaded 2-core machine; few large files: 8 files, 30 % deleted; many small files: the
pipeline's 288, 10 % deleted): decoding the files, about 125 / 140 ms with the strings read as
dictionaries; the deletion vectors' mask, 4 / 12 ms; dropping the deleted rows, about 15 /
25 ms; the cast of the kept strings, 18 / 20 ms; planning from the per-process cache of each
snapshot's data files, about 3 ms for 288 files. So 0.6-1.0x the CPU of the bare decode
(`pyarrow.parquet.read_table`), which the dictionaries keep there: string and binary columns
dictionary-encoded in every data page (the footer says so, `parquet_footer`) are read as Arrow
dictionaries, the mask drops rows from their int32 indices, and only the kept rows become
strings, cheaper than pyarrow's dense decode of every row. `read_task` reads whole row groups in
a whole read (Spark tasks keep 64k-row batches; smaller batches cost about 10 % more decode).

Which files: a primary-key table in deletion-vector mode is read as Paimon reads it, from the
levels above 0 (`Table.plan`); its system columns (`_KEY_*`, `_SEQUENCE_NUMBER`,
`_VALUE_KIND`) are never read.

A corrupt file index fails the read with the file's path and the `FormatError`
(`mode="FAILFAST"`, the default); with `mode="PERMISSIVE"` the data file is read unpruned and
named in `ReadStats.corrupt_index_files`.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import operator
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
import pyarrow as pa

from paimon_schema.query.evaluate import evaluate
from paimon_schema.query.masks import arrow_mask
from paimon_schema.query.predicate import Predicate
from paimon_schema.query.quick_evaluate import QuickEvaluator
from paimon_schema.runtime import collector
from paimon_schema.table import predicates as preds
from paimon_schema.table.arrow_types import arrow_schema, arrow_type, to_spark_arrow
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import FileIO, FileSystemLike
from paimon_schema.table.global_indexes import GlobalIndexPruning
from paimon_schema.table.indexes import deletion_bytes
from paimon_schema.table.kept_rows import kept_rows
from paimon_schema.table.manifest_filter import PartitionFilter
from paimon_schema.table.manifests import DataFile, DeletionFile
from paimon_schema.table.metadata import ReadPlan, Table, TableLike
from paimon_schema.table.plan import FileRuns, in_runs, read_permutation
from paimon_schema.table.schema import TableSchema
from paimon_schema.table.parquet_footer import dictionary_columns
from paimon_schema.table.snapshots import Snapshot
from paimon_schema.table.bulk_stats import stats_skips
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.results import IndexResult

try:
    from paimon_schema.runtime import _kernels
except ImportError:                         # built without a C compiler
    _kernels = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from pyroaring import BitMap, BitMap64

__all__ = ["FileTask", "ReadStats", "TableLike", "TaskPlan", "plan_read", "read_task", "read_tasks"]

log = logging.getLogger("paimon_schema.spark")

MODES = ("FAILFAST", "PERMISSIVE")
_UNKNOWN = object()
BATCH_ROWS = 65_536
#: a whole read's batches: whole row groups (up to 4M rows), it holds every row in the end anyway
WHOLE_READ_ROWS = 1 << 22
READABLE_FORMATS = ("parquet", "orc")
READABLE_FORMATS_SET = frozenset(READABLE_FORMATS)
_ROW_COUNT = attrgetter("row_count")
#: `read_arrow`'s workers per CPU on an object store (see `_read_tasks`).
REMOTE_WORKERS_PER_CPU = 4


@dataclass
class ReadStats:
    """What a read skipped. `rows` counts the rows of the files the plan reads (deleted rows
    included; not those of the partitions the filter excludes, which the plan does not list);
    `rows_skipped` the rows of skipped files plus the rows that bitmap results ruled out inside
    read files; `rows_deleted` the rows deletion vectors remove from read files: the
    cardinality the index manifest records, or (Paimon 0.9 and 1.0 snapshot builds record
    none) the deletion vector's own count."""

    files: int = 0
    files_read: int = 0
    files_skipped_by_partition: int = 0
    files_skipped_by_stats: int = 0
    files_skipped_by_index: int = 0
    files_skipped_by_global_index: int = 0
    rows: int = 0
    rows_skipped: int = 0
    rows_deleted: int = 0
    corrupt_index_files: list[str] = field(default_factory=list)
    planning_seconds: float = 0.0

    @property
    def files_skipped(self) -> int:
        return (self.files_skipped_by_partition + self.files_skipped_by_stats
                + self.files_skipped_by_index + self.files_skipped_by_global_index)

    def as_dict(self) -> dict[str, Any]:
        return {"files": self.files, "files_read": self.files_read,
                "files_skipped": self.files_skipped,
                "files_skipped_by_partition": self.files_skipped_by_partition,
                "files_skipped_by_stats": self.files_skipped_by_stats,
                "files_skipped_by_index": self.files_skipped_by_index,
                "files_skipped_by_global_index": self.files_skipped_by_global_index, "rows": self.rows,
                "rows_skipped": self.rows_skipped, "rows_deleted": self.rows_deleted,
                "corrupt_index_files": list(self.corrupt_index_files),
                "planning_seconds": round(self.planning_seconds, 3)}


@dataclass(frozen=True)
class Column:
    """One output column of a task: where it comes from in this data file."""

    name: str
    arrow_type: pa.DataType
    file_column: str | None            # None: not in the file (added later)
    constant: Any = None               # the partition value (of a partition column)
    #: a partition column: `constant` is its value, which every Python read takes (Spark's
    #: `read_table` reads `file_column` where the file stores it, see `spark.native`)
    partition: bool = False


@dataclass(frozen=True, slots=True)
class FileTask:
    """Everything a worker needs to read one data file (picklable). (Slots: a plan makes
    its tasks at once, each slot set directly, `_new_tasks`.)"""

    fileio: FileIO
    path: str
    file_name: str
    format: str
    row_count: int
    columns: tuple[Column, ...]
    deletion_file: DeletionFile | None
    candidate_rows: bytes | None       # serialized BitMap: the rows the indexes kept
    partition_path: str = ""
    bucket: int = 0
    schema_id: int = 0
    file_size: int = 0


@dataclass
class TaskPlan:
    """The outcome of `plan_read`: tasks in the table's file order (`files`: the data file of
    each), the output schema, the snapshot read (None: the table has none)."""

    tasks: list[FileTask]
    schema: pa.Schema
    table_schema: TableSchema
    stats: ReadStats
    files: list[DataFile] = field(default_factory=list)
    snapshot: Snapshot | None = None


def plan_read(table: TableLike, where: Predicate | None = None,
              snapshot: Snapshot | int | None = None, columns: Sequence[str] | None = None,
              mode: str = "FAILFAST", filesystem: FileSystemLike | None = None, *,
              with_filter_columns: bool = False) -> TaskPlan:
    """Which files to read and how, with pruning; see the module doc. The output columns are
    `columns` (default: all), plus with `with_filter_columns` those `where` needs. (The cyclic
    collector is paused: a plan makes objects per file, and with a big table's files in memory
    its full passes took a tenth of a 100k-file plan.)"""
    with collector.paused():
        return _plan_read(table, where, snapshot, columns, mode, filesystem,
                          with_filter_columns=with_filter_columns)


def _plan_read(table: TableLike, where: Predicate | None, snapshot: Snapshot | int | None,
               columns: Sequence[str] | None, mode: str, filesystem: FileSystemLike | None, *,
               with_filter_columns: bool) -> TaskPlan:
    started = time.perf_counter()
    mode = mode.upper()
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    tab = Table.open(table, filesystem)
    # (filtered: the files in manifest order, pruned, then the kept ones sorted: a cold
    # 100k-file plan sorted ~23k files to keep ~6k)
    plan = tab.plan(snapshot, None if where is None else PartitionFilter(where),
                    ordered=where is None, attributes=() if where is None else _CANDIDATE_ATTRIBUTES)
    schema = plan.schema
    if where is not None:
        preds.check_columns(where, schema)
    out_columns = list(columns) if columns is not None else [f.name for f in schema.fields]
    for name in out_columns:
        schema.field(name)
    if where is not None and with_filter_columns:
        out_columns += [c for c in sorted({leaf.column for leaf in preds.leaves(where)})
                        if c not in out_columns]
    stats = ReadStats(files=len(plan.files) + plan.excluded,
                      files_skipped_by_partition=plan.excluded)
    if where is None:
        runs = getattr(plan.files, "runs", None)         # (their runs' sums: no pass over them)
        stats.rows = sum(map(_ROW_COUNT, plan.files)) if runs is None else sum(runs.rows)
        read = list(plan.files)
        rows: list[BitMap | None] = [None] * len(read)
    else:
        read, rows = _pruned(tab, plan, where, mode, stats)
        order = read_permutation(tuple(read))
        read = list(map(read.__getitem__, order))
        if rows.count(None) != len(rows):   # (else the same Nones in any order)
            rows = list(map(rows.__getitem__, order))
    tasks = _tasks(tab, plan, read, rows, out_columns, stats)
    stats.files_read = len(tasks)
    stats.planning_seconds = time.perf_counter() - started
    log.info("paimon read of %s: %s", tab.path, stats.as_dict())
    return TaskPlan(tasks, arrow_schema(schema, out_columns), schema, stats, read, plan.snapshot)


def _pruned(tab: Table, plan: ReadPlan, where: Predicate, mode: str,
            stats: ReadStats) -> tuple[list[DataFile], list[BitMap | None]]:
    """The files `where` may match, in plan order, and the rows each one's indexes kept (None:
    every row): by partition values (once per partition), then by statistics (`bulk_stats`,
    the candidates together), then by file indexes (`QuickEvaluator`: each distinct container
    answered once, the files numbered by their container, `_value_codes`, and what each
    number drops found in numpy) and global indexes; `stats` counts what each skipped. A
    100k-file snapshot's `DataFile`s lie scattered in memory and each pass over them cost ~20
    ms of its plan: the runs come from `read_files`' pass, the files of skipped partitions are
    not read again, the candidates' attributes are read in one pass, and every later step is
    a C loop over lists or numpy over numbers, no Python statement per file. A warm plan of
    `benchmarks/table_plan.py`'s 100k-file table (23k candidates, 6k kept): ~620 ms file by
    file; ~35-50 ms with the passes in C; ~17-25 ms numbered (a loaded 2-core machine)."""
    verdicts: dict[int, bool | None] = {}

    def verdict_of(partition: Mapping[str, Any]) -> bool | None:
        """The filter over a partition's values (the files of a partition share its dict)."""
        found = verdicts.get(id(partition), _UNKNOWN)
        if found is _UNKNOWN:
            found = verdicts[id(partition)] = preds.partition_verdict(where, partition)
        return found                                        # type: ignore[return-value]

    file_runs = getattr(plan.files, "runs", None)
    if file_runs is not None and in_runs(plan.files):
        passed = _run_pass(plan.files, file_runs, verdict_of)
    else:                                   # (without runs, or partitions of a file or two)
        passed = _plan_pass(plan.files, verdict_of)
    candidates, schema_ids, candidate_rows = passed.candidates, passed.schema_ids, passed.rows
    whole, runs = passed.whole, passed.runs
    stats.rows = passed.all_rows
    stats.files_skipped_by_partition += passed.skipped
    stats.rows_skipped = passed.skipped_rows
    global_pruning = global_index_pruning(tab, plan, where, mode, stats, row_ids=passed.row_ids)
    for_files: dict[int, tuple[Predicate, dict[str, str], frozenset[str]]] = {}

    def for_file(schema_id: int) -> tuple[Predicate, dict[str, str], frozenset[str]]:
        found = for_files.get(schema_id)
        if found is None:
            predicate, row_type = preds.for_file(where, plan.schema, tab.schema(schema_id))
            found = for_files[schema_id] = (
                predicate, row_type, frozenset(leaf.column for leaf in preds.leaves(predicate)))
        return found

    counts = np.asarray(candidate_rows, dtype=np.int64)
    skips = stats_skips(candidates, passed.values, schema_ids, counts,
                        lambda i: for_file(i)[::2], tab.schema)
    stats.files_skipped_by_stats = int(skips.sum())
    stats.rows_skipped += int(counts[skips].sum())
    left_at = np.flatnonzero(~skips)        # the positions of what is left, among the candidates
    positions: list[int] = left_at.tolist()
    one_schema = schema_ids.count(schema_ids[0]) == len(schema_ids) if schema_ids else True
    left_schemas = ([schema_ids[0]] * len(positions) if one_schema and positions
                    else list(map(schema_ids.__getitem__, positions)))
    evaluators: dict[int, QuickEvaluator | None] = {}
    for schema_id in left_schemas[:1] if one_schema else dict.fromkeys(left_schemas):
        predicate, row_type, _ = for_file(schema_id)
        evaluators[schema_id] = QuickEvaluator(predicate, row_type) if row_type else None
    # each distinct container answered once (`QuickEvaluator`: by its bytes), the files
    # numbered by their container (and schema): the rest is numpy over the numbers
    if len(evaluators) <= 1:
        keys: list[Any] = passed.embedded
        at: list[int] | None = positions
    else:
        keys, at = list(zip(left_schemas, map(passed.embedded.__getitem__, positions))), None
    try:
        codes, firsts = _value_codes(keys, at)
    except TypeError:                       # (an unhashable container: never a manifest's)
        codes, firsts = _value_codes(keys, at, identity=True)
    results: list[IndexResult | None] = []
    for first in firsts:
        schema_id = left_schemas[first]
        evaluator = evaluators[schema_id]
        results.append(None if evaluator is None else evaluator(passed.embedded[positions[first]]))
    # no container, one the kernel declines or a deletion vector: the parsed container
    unanswered = [code for code, result in enumerate(results) if result is None]
    parsed = np.isin(codes, unanswered) if unanswered else np.zeros(len(codes), dtype=bool)
    if passed.deletions.count(None) != len(passed.deletions):
        parsed |= np.fromiter(map(operator.is_not, map(passed.deletions.__getitem__, positions),
                                  itertools.repeat(None)), dtype=bool, count=len(positions))
    if parsed.any():
        codes = codes.copy()
        for k in np.flatnonzero(parsed).tolist():
            schema_id = left_schemas[k]
            codes[k] = len(results)
            results.append(_index_result(tab, candidates[positions[k]], for_file(schema_id)[:2],
                                         mode, stats, evaluators[schema_id]))
    # the files' answers are shared (answers kept by their containers' bytes): each read once
    dropped = np.fromiter((result is not None and not result.remain for result in results),
                          dtype=bool, count=len(results))[codes]
    by_index = int(dropped.sum())
    rows_of = [None if result is None else result.rows for result in results]
    if by_index:
        stats.rows_skipped += int(counts[left_at[dropped]].sum())
        kept_positions: list[int] = left_at[~dropped].tolist()
        kept_codes: list[int] = codes[~dropped].tolist()
    else:
        kept_positions, kept_codes = positions, codes.tolist()
    survivors = list(map(candidates.__getitem__, kept_positions))
    survivor_rows: list[BitMap | None] = list(map(rows_of.__getitem__, kept_codes))
    stats.files_skipped_by_index = by_index
    if global_pruning is not None:
        global_files: list[DataFile] = []
        global_rows: list[BitMap | None] = []
        global_positions: list[int] = []
        for data_file, candidate, place in zip(survivors, survivor_rows, kept_positions):
            global_kept = global_pruning.candidates(data_file)
            if global_kept is not None and not global_kept:
                stats.files_skipped_by_global_index += 1
                stats.rows_skipped += candidate_rows[place]
                continue
            if global_kept is not None:
                candidate = global_kept if candidate is None else candidate & global_kept
            global_files.append(data_file)
            global_rows.append(candidate)
            global_positions.append(place)
        survivors, survivor_rows, kept_positions = global_files, global_rows, global_positions
    if not whole:
        return survivors, survivor_rows
    # the partitions' runs in plan order again: whole ones and the candidates' survivors
    ends = {True: len(whole), False: len(candidates)}
    bounds = []
    for is_whole, start in reversed(runs):
        bounds.append((is_whole, start, ends[is_whole]))
        ends[is_whole] = start
    kept: list[DataFile] = []
    kept_rows: list[BitMap | None] = []
    next_survivor = 0
    for is_whole, start, end in reversed(bounds):
        if is_whole:
            kept += whole[start:end]
            kept_rows += [None] * (end - start)
            continue
        last = bisect.bisect_left(kept_positions, end, next_survivor)
        kept += survivors[next_survivor:last]
        kept_rows += survivor_rows[next_survivor:last]
        next_survivor = last
    return kept, kept_rows


def _value_codes(keys: list[Any], positions: list[int] | None = None,
                 identity: bool = False) -> tuple[NDArray[np.int32], list[int]]:
    """Each key's number (of `keys[p]` for p in `positions`, or of every key) among the
    distinct keys in first-seen order, and where each number first occurs: keys equal (or,
    with `identity`, the same object) share a number. One pass in C where built."""
    if _kernels is not None:
        raw, firsts = _kernels.value_codes(keys, positions, identity)
        return np.frombuffer(raw, dtype=np.int32), firsts
    picked = keys if positions is None else list(map(keys.__getitem__, positions))
    seen = list(map(id, picked)) if identity else picked
    first_of = dict(zip(reversed(seen), range(len(seen) - 1, -1, -1)))   # (the first wins)
    firsts = sorted(first_of.values())
    numbers = dict(zip(map(seen.__getitem__, firsts), range(len(firsts))))
    return np.fromiter(map(numbers.__getitem__, seen), dtype=np.int32, count=len(seen)), firsts


class _Passed(NamedTuple):
    """What the pass over a plan's files found: the files of partitions of unknown verdict
    (candidates) with their statistics, schema ids, row counts, embedded indexes and deletion
    files; the files of partitions that match whole; the runs of partitions not skipped
    (whole?, the run's first index in its list); the rows of all files; the files and rows of
    skipped partitions; whether a file has a row id."""

    candidates: list[DataFile]
    values: list[Any]
    schema_ids: list[int]
    rows: list[int]
    embedded: list[bytes | None]
    deletions: list[DeletionFile | None]
    whole: list[DataFile]
    runs: list[tuple[bool, int]]
    all_rows: int
    skipped: int
    skipped_rows: int
    row_ids: bool


_CANDIDATE_ATTRIBUTES = ("value_stats", "schema_id", "row_count", "embedded_index", "deletion_file")


def _run_pass(files: Sequence[DataFile], file_runs: FileRuns,
              verdict: Callable[[Mapping[str, Any]], bool | None]) -> _Passed:
    """`_plan_pass` from the partitions' runs `read_files` found: a verdict per partition (a
    partition's runs numbered by its dict, `_value_codes`), the runs' places and counts in
    numpy, the files of skipped runs never read again (a pass over a big snapshot's scattered
    files costs) and the kept ones picked in C loops (a loop over a 100k-file plan's ~1,000
    runs, a slice each, cost ~3 ms)."""
    partitions = file_runs.partitions
    codes, firsts = _value_codes(partitions, identity=True)
    answers = [verdict(partitions[k]) for k in firsts]
    kinds = np.array([0 if answer is False else 1 if answer else 2 for answer in answers],
                     dtype=np.int8)[codes]         # of each run: skipped, whole, candidates
    bounds: NDArray[np.int64] = np.asarray([*file_runs.starts, len(files)], dtype=np.int64)
    lengths = bounds[1:] - bounds[:-1]
    rows = np.asarray(file_runs.rows, dtype=np.int64)
    skipped_runs, whole_runs = kinds == 0, kinds == 1
    in_whole = np.where(whole_runs, lengths, 0)
    in_candidates = np.where(kinds == 2, lengths, 0)
    places = np.where(whole_runs, np.cumsum(in_whole) - in_whole,
                      np.cumsum(in_candidates) - in_candidates)
    runs = list(zip(whole_runs[~skipped_runs].tolist(), places[~skipped_runs].tolist()))
    read = len(file_runs.columns) == len(_CANDIDATE_ATTRIBUTES)    # (with the runs)
    if skipped_runs.any() or whole_runs.any():
        of_file = np.repeat(kinds, lengths)
        chosen: list[int] = np.flatnonzero(of_file == 2).tolist()
        candidates = list(map(files.__getitem__, chosen))
        whole = list(map(files.__getitem__, np.flatnonzero(of_file == 1).tolist()))
        columns = (tuple(list(map(of_all.__getitem__, chosen)) for of_all in file_runs.columns)
                   if read else _attributes(candidates, _CANDIDATE_ATTRIBUTES))
    else:
        candidates, whole = list(files), []
        columns = (tuple(list(of_all) for of_all in file_runs.columns) if read
                   else _attributes(candidates, _CANDIDATE_ATTRIBUTES))
    values, schema_ids, counts, embedded, deletions = columns
    return _Passed(candidates, values, schema_ids, counts, embedded, deletions, whole, runs,
                   int(rows.sum()), int(lengths[skipped_runs].sum()), int(rows[skipped_runs].sum()),
                   file_runs.row_ids)


def _attributes(objects: list[Any], names: tuple[str, ...]) -> tuple[list[Any], ...]:
    """Each attribute's list over `objects`, in one pass where the C extension is built."""
    if _kernels is None:
        return tuple(list(map(attrgetter(name), objects)) for name in names)
    return _kernels.attributes(objects, names)


def _plan_pass(files: Sequence[DataFile], verdict: Callable[[Mapping[str, Any]], bool | None]
               ) -> _Passed:
    """One pass over every file (where `read_files` found no runs)."""
    candidates: list[DataFile] = []
    whole: list[DataFile] = []
    runs: list[tuple[bool, int]] = []
    rows = skipped = skipped_rows = 0
    row_ids = False
    last: object = _UNKNOWN
    answer: bool | None = None
    for data_file in files:
        count = data_file.row_count
        rows += count
        if data_file.first_row_id is not None:
            row_ids = True
        partition = data_file.partition
        if partition is not last:
            last = partition
            answer = verdict(partition)
            if answer is not False:
                runs.append((answer is True, len(whole) if answer else len(candidates)))
        if answer is None:
            candidates.append(data_file)
        elif answer:
            whole.append(data_file)
        else:
            skipped += 1
            skipped_rows += count
    values, schema_ids, counts, embedded, deletions = _attributes(candidates, _CANDIDATE_ATTRIBUTES)
    return _Passed(candidates, values, schema_ids, counts, embedded, deletions, whole, runs, rows,
                   skipped, skipped_rows, row_ids)


def global_index_pruning(tab: Table, plan: ReadPlan, where: Predicate, mode: str,
                         stats: ReadStats, *, row_ids: bool | None = None) -> GlobalIndexPruning | None:
    """The row ids the snapshot's btree/bitmap global indexes exclude (None without any);
    `row_ids`: whether a file of the plan has row ids (when the caller knows)."""
    if plan.snapshot is None:
        return None
    if row_ids is None:
        row_ids = any(f.first_row_id is not None for f in plan.files)
    if not row_ids:
        return None
    files = tab.global_indexes(plan.snapshot)
    if not files:
        return None
    pruning = GlobalIndexPruning.evaluate(tab.io, plan.schema, files, where,
                                          permissive=mode == "PERMISSIVE")
    stats.corrupt_index_files += pruning.corrupt
    return pruning


def _index_result(tab: Table, data_file: DataFile, for_file: tuple[Predicate, dict[str, str]],
                  mode: str, stats: ReadStats, evaluator: QuickEvaluator | None) -> IndexResult | None:
    """`ps.evaluate` over the file's container, or None when the file has none (or, in
    PERMISSIVE mode, a corrupt one); `for_file` is the filter and row type `for_file` made
    for the file's schema, `evaluator` the plan's `QuickEvaluator` of them (None without a
    row type), which answers first where it can."""
    embedded = data_file.embedded_index
    if embedded is None and data_file.index_sidecar is None:
        return None
    predicate, row_type = for_file
    if not row_type:
        return None
    if embedded is not None and data_file.deletion_file is None and evaluator is not None:
        quick = evaluator(embedded)
        if quick is not None:               # (else the parsed container answers or raises)
            return quick
    where_text = data_file.index_sidecar or f"the manifest entry of {data_file.path}"
    try:
        container = tab.file_index(data_file)
        if container is None:               # not reached: the data file has an index
            return None
        dv = tab.deletion_vector(data_file) if data_file.deletion_file else None
        return evaluate(container, predicate, row_type, row_count=data_file.row_count,
                        deletion_vector=dv)
    except (FormatError, SchemaError) as exc:
        # (A SchemaError here is a container giving a column an index its type cannot have:
        # the literals were checked by `for_file`.)
        if mode == "PERMISSIVE":
            log.warning("corrupt file index %s, reading %s unpruned: %s", where_text,
                        data_file.path, exc)
            stats.corrupt_index_files.append(where_text)
            return None
        error = FormatError(f"corrupt file index {where_text} (data file {data_file.path}): "
                            f"{getattr(exc, 'reason', exc)}",
                            offset=getattr(exc, "offset", None), path=getattr(exc, "path", ""))
        error.file = where_text
        raise error from exc


#: The `DataFile` attributes a task takes, read in one pass (`_attributes`).
_TASK_OFFSETS: tuple[int, ...] = () if _kernels is None else _kernels.slot_offsets(
    FileTask, tuple(f.name for f in fields(FileTask)))
_TASK_ATTRIBUTES = ("file_name", "path", "partition", "partition_path", "bucket", "schema_id",
                    "write_cols", "row_count", "file_size", "deletion_file")


def _tasks(tab: Table, plan: ReadPlan, files: list[DataFile], candidates: list[BitMap | None],
           out_columns: list[str], stats: ReadStats) -> list[FileTask]:
    """Each file's task, in order, with the rows its indexes kept (`candidates`, None: every
    row). Made together, not file by file (a 100k-file plan keeps ~6k files: ~8 us a task
    made one at a time): the files' attributes read in one pass, the files numbered by their
    partition, schema and write columns (`_value_codes`), the files of a number sharing their
    columns (types parsed once per schema, `Column`s once per partition value), files sharing
    an index answer its serialized bitmap, paths resolved by directory (`_resolved`) and the
    tasks made at once (`slotted_rows`). A file of a format this library does not read fails
    here (a file the filter prunes is never read)."""
    (names, paths, partitions, partition_paths, buckets, schema_ids, write_cols, counts, sizes,
     deletions) = _attributes(files, _TASK_ATTRIBUTES)
    without_deletions = deletions.count(None) == len(deletions)
    deleted = tab.deleted_counts(
        [] if without_deletions else [f for f, d in zip(files, deletions) if d is not None])
    if all(map(str.endswith, names, itertools.repeat(".parquet"))):
        formats = ["parquet"] * len(names)
    else:
        formats = ["parquet" if name.endswith(".parquet") else name.rsplit(".", 1)[-1].lower()
                   for name in names]
    if not READABLE_FORMATS_SET.issuperset(formats):
        k = next(k for k, name in enumerate(formats) if name not in READABLE_FORMATS_SET)
        raise TableError(f"{paths[k]}: {formats[k]} data files are not supported "
                         f"(only {', '.join(READABLE_FORMATS)})")
    if files and schema_ids.count(schema_ids[0]) == len(files) and write_cols.count(None) == len(files):
        codes, firsts = _value_codes(partitions, identity=True)
    else:
        codes, firsts = _value_codes(list(zip(map(id, partitions), schema_ids, write_cols)))
    known: dict[tuple[Any, ...], tuple[Column, ...]] = {}
    shared: dict[Any, Any] = {}
    numbered: list[tuple[Column, ...]] = []
    for k in firsts:                        # (each partition's first file)
        partition, write = partitions[k], write_cols[k]
        key = (schema_ids[k], write and tuple(write), tuple(map(partition.get, out_columns)))
        found = known.get(key)
        if found is None:
            found = known[key] = _columns(tab, plan, schema_ids[k], write, partition,
                                          out_columns, shared)
        numbered.append(found)
    columns = list(map(numbered.__getitem__, codes.tolist()))
    counted = ([0] * len(files) if without_deletions else
               [0 if deletion is None else deleted[path] for deletion, path in zip(deletions, paths)])
    stats.rows_deleted += sum(counted)
    rows: list[bytes | None] = [None] * len(files)
    if candidates.count(None) != len(candidates):   # (files share the answers of shared containers)
        numbers, answered = _value_codes(candidates, identity=True)
        distinct = [candidates[k] for k in answered]
        serialized = [None if candidate is None else candidate.serialize() for candidate in distinct]
        rows = list(map(serialized.__getitem__, numbers.tolist()))
        sizes_of = np.array([-1 if candidate is None else len(candidate) for candidate in distinct],
                            dtype=np.int64)[numbers]
        with_rows = sizes_of >= 0
        left = np.asarray(counts, dtype=np.int64) - sizes_of
        if not without_deletions:
            left -= np.asarray(counted, dtype=np.int64)
        stats.rows_skipped += int(np.maximum(left[with_rows], 0).sum())
    fileios, inner = _resolved(tab.io, paths)
    return _new_tasks((fileios, inner, names, formats, counts, columns, deletions, rows,
                       partition_paths, buckets, schema_ids, sizes))


def _resolved(io: FileIO, paths: list[str]) -> tuple[list[FileIO], list[str]]:
    """`io.resolve` of each path. A plan's files share a few bucket directories, and a path
    resolves as its directory does (`fileio.filesystem_for` maps a prefix: a scheme, `file:`),
    so one file of each directory is resolved and the others follow from it (but names with
    a `?`, which a URI's query would cut: each resolved); where every directory resolves to
    itself on one FileIO (a table's own files), the paths are their inner paths."""
    def located(directory: str, name: str) -> tuple[FileIO, str] | None:
        """Where the directory's files resolve (FileIO, prefix), None where not by prefix."""
        fileio, resolved = io.resolve(f"{directory}/{name}")
        return (fileio, resolved[:-len(name)]) if directory and resolved.endswith("/" + name) else None

    directories_of = _path_directories(paths)
    if directories_of is not None:          # (no `?` in any path)
        places = {directory: located(directory, paths[k].rpartition("/")[2])   # (its last file)
                  for directory, k in directories_of.items()}
        same = {id(place[0]): place[0] for directory, place in places.items()
                if place is not None and place[1] == directory + "/"}
        if len(same) == 1 and all(place is not None and place[1] == directory + "/"
                                  for directory, place in places.items()):
            return [*same.values()] * len(paths), list(paths)
    split = list(map(str.rpartition, paths, itertools.repeat("/")))
    directories: dict[str, tuple[FileIO, str] | None] = {}
    for directory, _, name in dict(zip(map(operator.itemgetter(0), split), split)).values():
        if "?" not in name:
            directories[directory] = located(directory, name)
    fileios: list[FileIO] = []
    inner: list[str] = []
    for path, (directory, _, name) in zip(paths, split):
        place = directories.get(directory)
        if place is None or "?" in name:
            fileio, resolved = io.resolve(path)
        else:
            fileio, resolved = place[0], place[1] + name
        fileios.append(fileio)
        inner.append(resolved)
    return fileios, inner


def _path_directories(paths: list[str]) -> dict[str, int] | None:
    """Each path's directory (`rpartition("/")[0]`), first seen first, with its last path's
    index; None where a path holds a `?`. One pass in C where built, no string made for a
    path in the previous one's directory."""
    if _kernels is not None:
        return _kernels.path_directories(paths)
    if "?" in "".join(paths):
        return None
    return dict(zip([path.rpartition("/")[0] for path in paths], range(len(paths))))


def _new_tasks(columns: tuple[list[Any], ...]) -> list[FileTask]:
    """`FileTask(*row)` for each row of `columns` (one list per field), in C where built
    (untracked by the cyclic collector there: a task refers to nothing that refers back)."""
    if _kernels is None:
        return [FileTask(*row) for row in zip(*columns)]
    return _kernels.slotted_rows(FileTask, _TASK_OFFSETS, columns)


def _columns(tab: Table, plan: ReadPlan, schema_id: int, write_cols: Any, partition: Mapping[str, Any],
             out_columns: list[str], shared: dict[Any, Any]) -> tuple[Column, ...]:
    """The output columns of files of this schema, write columns and partition; `shared`
    keeps what such files share (the types, the `Column` of each column that is not a
    partition's: one object for all partitions, a new one only for a partition's values)."""
    key = ("layout", schema_id, write_cols)
    layout = shared.get(key)
    if layout is None:
        file_schema = tab.schema(schema_id)
        written = None if write_cols is None else set(write_cols)
        layout = shared[key] = []
        for name in out_columns:
            current = plan.schema.field(name)
            old = file_schema.by_id.get(current.id)
            if old is not None and written is not None and old.name not in written:
                old = None              # a data-evolution file holds only its write columns
            layout.append(Column(name, arrow_type(current.type), None if old is None else old.name))
        shared[key, "plain"] = tuple(layout)
    plain: tuple[Column, ...] = shared[key, "plain"]
    inside = [i for i, column in enumerate(layout) if column.name in partition]
    if not inside:
        return plain
    columns = list(plain)
    for i in inside:                        # (a partition column: its value)
        column = layout[i]
        columns[i] = Column(column.name, column.arrow_type, column.file_column,
                            partition[column.name], True)
    return tuple(columns)


# ------------------------------------------------------------------------------ reading

def read_task(task: FileTask, *, spark_types: pa.Schema | None = None,
              batch_rows: int = BATCH_ROWS, use_threads: bool = True) -> Iterator[pa.RecordBatch]:
    """The task's rows, deletion vector applied, as batches in the output schema (or, with
    `spark_types`, converted to the Arrow types Spark exchanges). `use_threads`: Parquet
    columns decode on Arrow's thread pool."""
    keep = kept_rows(task, read_deletion_file(task.fileio, task.deletion_file))
    offset = 0
    for batch in _file_batches(task, batch_rows, use_threads):
        n = batch.num_rows
        if keep is not None and offset + n > task.row_count:
            raise TableError(f"{task.path} has more rows than its manifest entry's {task.row_count}")
        if keep is not None:
            batch = batch.filter(arrow_mask(keep[offset:offset + n]))
        offset += n
        yield evolve(batch, task, spark_types)
    if offset != task.row_count:
        raise TableError(f"{task.path} has {offset} rows, its manifest entry says {task.row_count}")


def read_deletion_file(fileio: FileIO, deletion: DeletionFile | None) -> BitMap | BitMap64 | None:
    """The deleted positions a `DeletionFile` points at (None without one)."""
    if deletion is None:
        return None
    from paimon_schema.layouts.deletion_vectors import read_deletion_vector

    chunk = deletion_bytes(fileio, deletion)
    try:
        return read_deletion_vector(chunk, 0, deletion.length)
    except FormatError as exc:
        raise FormatError(f"deletion vector in {deletion.path} at offset {deletion.offset}: "
                          f"{exc.reason}", offset=exc.offset, path=exc.path) from exc


def _file_batches(task: FileTask, batch_rows: int,
                  use_threads: bool = True) -> Iterator[pa.RecordBatch]:
    wanted = [c.file_column for c in task.columns if c.file_column is not None and not c.partition]
    with task.fileio.open_input(task.path, task.file_size or None) as source:
        if task.format == "parquet":
            import pyarrow.parquet as pq

            reader = pq.ParquetFile(source, pre_buffer=task.fileio.remote)
            present = set(reader.schema_arrow.names)
            names = list(dict.fromkeys(c for c in wanted if c in present))
            if reader.metadata.num_rows == 0:
                return
            as_dictionary = dictionary_reads(task, reader.schema_arrow, reader.metadata, names)
            if as_dictionary:
                reader = pq.ParquetFile(source, metadata=reader.metadata,
                                        read_dictionary=as_dictionary, pre_buffer=task.fileio.remote)
            yield from reader.iter_batches(batch_size=batch_rows, columns=names,
                                           use_threads=use_threads)
        elif task.format == "orc":
            import pyarrow.orc as orc

            reader = orc.ORCFile(source)
            present = set(reader.schema.names)
            names = list(dict.fromkeys(c for c in wanted if c in present))
            for stripe in range(reader.nstripes):
                data = reader.read_stripe(stripe, columns=names)
                yield from (data.to_batches() if isinstance(data, pa.Table) else [data])
        else:
            raise TableError(f"{task.path}: {task.format} data files are not supported")


_DENSE_STRINGS = (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())


def dictionary_reads(task: FileTask, schema: pa.Schema, metadata: Any, names: list[str]) -> list[str]:
    """The string and binary columns to read as Arrow dictionaries: those dictionary-encoded
    in every data page (`parquet_footer`). Their rows are then dropped from the int32 indices
    and only the kept rows become strings, in `evolve`'s cast: cheaper than pyarrow's own
    dense decode of every row (see `parquet_footer` for the measurements and the PLAIN
    fallback it guards against)."""
    targets = {c.file_column: c.arrow_type for c in task.columns if c.file_column is not None}
    if metadata.num_row_groups == 0:
        return []
    first = metadata.row_group(0)
    chunks = {first.column(i).path_in_schema: first.column(i) for i in range(first.num_columns)}
    candidates = [name for name in names
                  if schema.field(name).type in _DENSE_STRINGS
                  and targets.get(name) in _DENSE_STRINGS
                  and name in chunks and chunks[name].has_dictionary_page]
    if not candidates:
        return []
    encoded = dictionary_columns(metadata)
    return [name for name in candidates if name in encoded]


def evolve(batch: pa.RecordBatch, task: FileTask, spark_types: pa.Schema | None = None) -> pa.RecordBatch:
    """A batch of the data file as a batch of the table: columns by field id, cast to the
    current types, nulls for columns the file does not have, partition columns from the
    partition values (as Paimon reads them, `PartitionUtils`: never from the file)."""
    n = batch.num_rows
    names = batch.schema.names
    arrays, fields = [], []
    for i, column in enumerate(task.columns):
        target = column.arrow_type
        if column.file_column is not None and not column.partition and column.file_column in names:
            array = batch.column(names.index(column.file_column))
            if array.type != target:
                try:
                    array = array.cast(target)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise TableError(f"{task.path}: column {column.file_column} "
                                     f"({array.type}) does not convert to {column.name} "
                                     f"({target}): {exc}") from exc
        elif column.constant is not None:
            array = pa.nulls(n, target).fill_null(pa.scalar(column.constant, type=target))
        else:
            array = pa.nulls(n, target)
        if spark_types is not None:
            target = spark_types.field(i).type
            array = to_spark_arrow(array, target)
        arrays.append(array)
        fields.append(pa.field(column.name, target))
    if not arrays:                      # no column asked for: the rows still count
        return batch.select([])
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


# ------------------------------------------------------------------------------ the whole read

def read_tasks(tasks: Sequence[FileTask]) -> list[list[pa.RecordBatch]]:
    """Each task's batches (`read_task`, whole row groups), in task order. Files are read on a
    thread pool (one worker per CPU, at most one per file): Parquet/ORC decode and the
    deletion-vector masks run in Arrow and numpy, which release the GIL, so files decode side by
    side. With two files or more per worker, each file decodes on its worker's thread alone
    (Arrow's pool besides would put twice as many threads on the CPUs: 2-6 % more CPU time
    on the benchmark's 2-core machine); with fewer, Arrow's pool decodes a file's columns side
    by side. A failing task raises its error as a serial read would (the first failing task in
    order). Off the local disk a file waits on its round trips more than on a CPU: 4 workers
    per CPU keep the requests of several files in flight."""
    cpus = os.cpu_count() or 1
    use_threads = len(tasks) < 2 * min(len(tasks), cpus)
    workers = min(len(tasks), cpus * (REMOTE_WORKERS_PER_CPU if tasks and tasks[0].fileio.remote else 1))

    def read(task: FileTask) -> list[pa.RecordBatch]:
        return list(read_task(task, batch_rows=WHOLE_READ_ROWS, use_threads=use_threads))

    if workers <= 1:
        return [read(task) for task in tasks]
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(workers, thread_name_prefix="paimon-read")
    try:
        return list(pool.map(read, tasks))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)     # after a failure: no further files
