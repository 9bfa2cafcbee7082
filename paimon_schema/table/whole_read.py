"""A whole read (`TableScan.to_arrow`) of a plan's Parquet files: the files read side by side,
their rows kept in one pass over all of them.

Why: a table of many small files (the pipeline's 2M rows in 288 files of 7000 rows) spent more
time per file than decoding it when each file was a task of its own (`merge.read_tasks`):
opening the file and its footer, the footer's dictionary check, reading its deletion vector
(one open of the index file per data file), a `take` of its kept rows, a cast per column, in
Python, file after file: 2.3x the CPU of `pyarrow.parquet.read_table` of the same files. Here
each file is one `ParquetFile.read` on a thread of a pool (one thread per CPU; with fewer
files than two per CPU Arrow's threads decode a file's columns side by side), whole row
groups, its footer read once (the run's first decides the dictionary reads), pre-buffered
(reads coalesced) only off the local disk (on it, pre-buffering costs 7-10 % more CPU on the
288 small files). That costs 20-35 % less CPU than a pyarrow dataset scan of the same 288 files
(Arrow's scanner costs per fragment), as much on few large files. The deletion vectors are
read once per index file (decoded on a thread beside the reads, `kept_rows`) and become one
boolean mask over all the rows (a file's row groups without a kept row are not decoded, see
`_rows_read`); the kept rows are taken by position batch by batch (a third cheaper than
`filter` on large batches) or filtered (small batches: a `take` per file of 7000 rows costs
more than the filter of all of them), and cast, on one thread per CPU over slices of the rows.
Partition columns are never decoded: as Paimon reads them (`PartitionUtils`), they are the
partition values of the files, slices of one array of the value per partition.
Measured in `benchmarks/table_read.py`: 0.6-1.0x the CPU time of the bare decode on both few
large and many small files, with and without deletion vectors.

A run of consecutive tasks that read alike (same filesystem, schema and columns; see `_key`)
is read together. Which string columns are read as Arrow dictionaries
(`merge.dictionary_reads`) is decided from the run's first footer (a later file whose pages
fell back to PLAIN is read right, only slower). Every file must have the size its manifest
entry gives (`FileIO.open_input`, the size of the open file: no stat), and its footer must
give the entry's row count and hold every column read. A file that does not, any error,
an ORC file or a file on S3 (read by boto3, one request a file, `fileio.S3FileIO`) send the
run to the per-file path (`merge.read_tasks`), which reads it exactly or raises the error
naming the file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from itertools import groupby

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from paimon_schema.query.masks import arrow_mask
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import ArrowFileIO, filesystem_for
from paimon_schema.table.kept_rows import kept_rows_of
from paimon_schema.table.merge import FileTask, dictionary_reads, read_tasks
from paimon_schema.values.errors import FormatError, SchemaError

__all__ = ["read_whole"]

#: Rows from which the mask and casts go over slices side by side, one per CPU.
SPLIT_ROWS = 1 << 18
#: The rows per batch (on average) from which the kept rows are taken by position.
TAKE_ROWS = 1 << 16
#: The rows of the array of a partition value whose slices make a partition column.
REPEAT_ROWS = 1 << 16
#: What a scan may raise that the per-file path then reports with the file's name.
_SCAN_ERRORS = (pa.ArrowException, OSError, FormatError, SchemaError, TableError)


def read_whole(tasks: Sequence[FileTask], schema: pa.Schema) -> pa.Table:
    """Every task's rows, deletion vectors and index candidates applied, in the table's
    schema (`schema`), in task order."""
    parts = []
    for key, run in groupby(tasks, _key):
        group = list(run)
        table = None if key is None else _scan(group, schema)
        if table is None:
            table = pa.Table.from_batches([b for part in read_tasks(group) for b in part],
                                          schema=schema)
        parts.append(table)
    if not parts:
        return schema.empty_table()
    if not len(schema):
        return _rows_only(sum(part.num_rows for part in parts))
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


def _rows_only(count: int) -> pa.Table:
    """A table of `count` rows and no column (`columns=[]`: a count). Built by selecting no
    column, as pyarrow 19's `concat_tables` and `from_arrays` drop the rows of such tables."""
    return pa.table({"rows": pa.nulls(count)}).select([])


def _key(task: FileTask) -> tuple[pafs.FileSystem, Hashable] | None:
    """What tasks scanned together share; None for a task the scan does not read."""
    fileio = task.fileio
    if task.format != "parquet" or not isinstance(fileio, ArrowFileIO) or fileio.s3 is not None:
        return None
    filesystem, _ = filesystem_for(fileio.filesystem, task.path)
    # partition values vary by file (see `_partition_column`); other constants only fill
    # columns no file of this schema has (see `_evolve`)
    columns = tuple((c.name, c.arrow_type, c.partition, None if c.partition else c.file_column,
                     c.constant if c.file_column is None and not c.partition else None)
                    for c in task.columns)
    return filesystem, (task.schema_id, columns)


def _scan(tasks: list[FileTask], schema: pa.Schema) -> pa.Table | None:
    """The run's rows, or None where the per-file path must read it (see the module doc).
    The deletion vectors are decoded on a thread of their own while the other threads decode
    the files; the mask and the casts then go over slices of the rows side by side."""
    names = list(dict.fromkeys(c.file_column for c in tasks[0].columns
                               if c.file_column is not None and not c.partition))
    workers = os.cpu_count() or 1
    pool = _pool()
    try:
        keep = pool.submit(_keep, tasks)
        with tasks[0].fileio.open_input(tasks[0].path, tasks[0].file_size or None) as source:
            first = _open(tasks[0], source, names)
            if first is None:
                return None
            as_dictionary = dictionary_reads(tasks[0], first.schema_arrow, first.metadata, names)
            if as_dictionary:
                first = _open(tasks[0], source, names, as_dictionary, first.metadata)
            # each file decoded on one thread where there are files enough to go round
            use_threads = len(tasks) < 2 * workers
            reads = [pool.submit(_read, task, names, as_dictionary, use_threads,
                                 first if i == 0 else None, keep, i)
                     for i, task in enumerate(tasks)]
            wait(reads)                 # (every read done before the first file closes)
            files = [f for f in (read.result() for read in reads) if f is not None]
        if len(files) != len(tasks):
            return None
        # (pyarrow 19's concat_tables drops the rows of tables without columns)
        tables = [table for table, _ in files]
        table = pa.concat_tables(tables) if names else _rows_only(sum(t.num_rows for t in tables))
        masks, kept = keep.result()
        mask = None if all(m is None for m in masks) else np.concatenate(
            [np.ones(t.num_rows, dtype=bool) if m is None else m if rows is None else m[rows]
             for t, m, (_, rows) in zip(tables, masks, files)])
        bounds = np.linspace(0, table.num_rows, workers + 1 if table.num_rows >= SPLIT_ROWS else 2,
                             dtype=np.int64)
        slices = [(table.slice(lo, hi - lo), None if mask is None else mask[lo:hi])
                  for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
        parts = [pool.submit(_finish, rows, keep_rows, tasks[0]) for rows, keep_rows in slices[1:]]
        indexes = [i for i, c in enumerate(tasks[0].columns) if c.partition]
        partitions = {i: pool.submit(_partition_column, tasks, i, kept) for i in indexes}
        first_part = _finish(*slices[0], tasks[0])        # on this thread meanwhile
        finished = [first_part, *(part.result() for part in parts)]
        if not len(schema):
            return _rows_only(sum(part.num_rows for part in finished))
        columns = pa.concat_tables(finished).columns
        arrays = [partitions[i].result() if i in partitions else columns.pop(0)
                  for i in range(len(schema))]
        return pa.Table.from_arrays(arrays, schema=schema)
    except _SCAN_ERRORS:
        return None


def _open(task: FileTask, source: pa.NativeFile, names: list[str],
          as_dictionary: list[str] | None = None,
          metadata: pq.FileMetaData | None = None) -> pq.ParquetFile | None:
    """The task's Parquet file (`source`), the `as_dictionary` columns read as dictionaries;
    None where its footer (`metadata`, where read already) does not give the entry's row
    count or lacks a column read."""
    reader = pq.ParquetFile(source, metadata=metadata, read_dictionary=as_dictionary or None,
                            pre_buffer=task.fileio.remote)
    present = reader.schema_arrow.names
    if reader.metadata.num_rows != task.row_count or any(name not in present for name in names):
        return None
    return reader


def _read(task: FileTask, names: list[str], as_dictionary: list[str], use_threads: bool,
          first: pq.ParquetFile | None, keep: Future[tuple[list[np.ndarray | None], list[int]]],
          index: int) -> tuple[pa.Table, np.ndarray | None] | None:
    """The columns `names` of the task's file (None: see `_open`), and which of the file's
    rows they are (None: every row; see `_rows_read`); `first` is the file opened already (the
    run's first, whose footer decided `as_dictionary`), `keep` gives the files' masks, the
    task's the `index`th. A file of another size than the manifest's is a TableError
    (`FileIO.open_input`)."""
    if first is not None:
        return _rows_read(first, task, names, use_threads, keep, index)
    with task.fileio.open_input(task.path, task.file_size or None) as source:
        reader = _open(task, source, names, as_dictionary)
        return None if reader is None else _rows_read(reader, task, names, use_threads, keep, index)


def _rows_read(reader: pq.ParquetFile, task: FileTask, names: list[str], use_threads: bool,
               keep: Future[tuple[list[np.ndarray | None], list[int]]],
               index: int) -> tuple[pa.Table, np.ndarray | None]:
    """The file's rows but its row groups of which the read keeps no row (all deleted, or
    none an index candidate), and the positions of the rows read (None: every row). A file
    of one row group is read without waiting for its mask (a plan drops files of which
    indexes rule out every row)."""
    metadata = reader.metadata
    if metadata.num_row_groups > 1 and (task.deletion_file is not None
                                        or task.candidate_rows is not None):
        mask = keep.result()[0][index]
        sizes = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
        ends = np.cumsum(sizes).tolist()
        groups = [g for g, (size, end) in enumerate(zip(sizes, ends))
                  if mask is None or mask[end - size:end].any()]
        if len(groups) < len(sizes):
            rows = np.concatenate([np.arange(ends[g] - sizes[g], ends[g]) for g in groups] or
                                  [np.zeros(0, dtype=np.int64)])
            return reader.read_row_groups(groups, columns=names, use_threads=use_threads), rows
    return reader.read(columns=names, use_threads=use_threads), None


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The threads that decode deletion vectors and filter rows beside the scan, one per CPU,
    started once per process (starting threads per read cost milliseconds on a busy machine)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="paimon-whole-read")
        return _POOL


def _finish(table: pa.Table, keep: np.ndarray | None, task: FileTask) -> pa.Table:
    """Rows of the scan without those `keep` drops, as the table's columns (but its
    partition columns). The kept rows of large batches are taken batch by batch, by their
    positions: a third cheaper than `filter` with the mask, which Arrow turns into positions
    per column; batches of small files (under `TAKE_ROWS` rows on average) go in one `filter`,
    which costs less per batch."""
    if keep is not None and table.num_columns and \
            table.num_rows >= TAKE_ROWS * table.column(0).num_chunks:
        batches, at = [], 0
        for batch in table.to_batches():
            rows = np.flatnonzero(keep[at:at + batch.num_rows]).astype(np.uint32)
            at += batch.num_rows
            # (positions inside the batch by construction: Arrow's bounds check is spared)
            batches.append(pc.take(batch, pa.array(rows), boundscheck=False))
        table = pa.Table.from_batches(batches, schema=table.schema)
    elif keep is not None:
        table = table.filter(arrow_mask(keep))
    return _evolve(table, task)


def _partition_column(tasks: list[FileTask], index: int, kept: list[int]) -> pa.ChunkedArray:
    """A partition column from the partition values, as Paimon reads it (`PartitionUtils`:
    never from the file): each file's value repeated over its kept rows (`kept`), for each run
    of files of one value (a plan lists a partition's files together) slices of one array of
    at most `REPEAT_ROWS` copies, which they share (the column costs one such array per
    partition, not a copy per row)."""
    target = tasks[0].columns[index].arrow_type
    chunks = []
    for value, run in groupby(zip([t.columns[index].constant for t in tasks], kept),
                              key=lambda pair: pair[0]):
        count = sum(n for _, n in run)
        copies = _repeated(pa.scalar(value, type=target), min(count, REPEAT_ROWS))
        chunks += [copies.slice(0, min(REPEAT_ROWS, count - at)) for at in range(0, count, REPEAT_ROWS)]
    return pa.chunked_array(chunks, type=target)


def _repeated(value: pa.Scalar, count: int) -> pa.Array:
    """`count` copies of `value`; a string or binary built from its buffers at once (half the
    time of `pyarrow.repeat`, which appends value by value)."""
    if value.is_valid and value.type in (pa.string(), pa.binary()):
        data = value.as_buffer().to_pybytes()
        if (count + 1) * len(data) < 1 << 31:
            offsets = np.arange(count + 1, dtype=np.int32)
            offsets *= len(data)
            return pa.Array.from_buffers(value.type, count, [None, pa.py_buffer(offsets),
                                                             pa.py_buffer(data * count)])
    return pa.repeat(value, count)


def _keep(tasks: list[FileTask]) -> tuple[list[np.ndarray | None], list[int]]:
    """The rows of each file to keep (`kept_rows`; None: every row), and how many."""
    masks = kept_rows_of(tasks)
    return masks, [t.row_count if mask is None else int(np.count_nonzero(mask))
                   for t, mask in zip(tasks, masks)]


def _evolve(table: pa.Table, task: FileTask) -> pa.Table:
    """The scanned columns as the table's columns but the partition columns (`merge.evolve`
    for a run: every file has every column read; the others are null)."""
    n = table.num_rows
    arrays, names = [], []
    for column in task.columns:
        target = column.arrow_type
        if column.partition:
            continue
        if column.file_column is not None:
            array = table.column(column.file_column)
            if array.type != target:
                try:
                    array = array.cast(target)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise TableError(f"{task.path}: column {column.file_column} "
                                     f"({array.type}) does not convert to {column.name} "
                                     f"({target}): {exc}") from exc
        else:
            array = pa.chunked_array([pa.nulls(n, target)])
        arrays.append(array)
        names.append(column.name)
    if not arrays:                      # only partition columns, or none: the rows still count
        return _rows_only(n)
    return pa.Table.from_arrays(arrays, names=names)
