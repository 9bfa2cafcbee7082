"""The Python data sources (Spark 4 Data Source API): `paimon`, `paimon-deletion-vectors`,
`paimon-file-index`.

Planning (`partitions()`) reads the manifests in Spark's planner worker; a partition is a
group of data files of about Paimon's split target size, at least one per CPU (`paimon`, see
`splits`), one data file (`paimon-file-index`) or one deletion-vector index file, so the work
spreads over executors. Readers yield Arrow record batches, never rows: the fastest a reader can
yield in Spark 4.3, whose Python worker checks a batch's schema and streams it on untouched. The
JVM still makes rows of them: a Python scan is row-based there (`PythonScan.columnarSupportMode`
is UNSUPPORTED, `PythonPartitionReaderFactory` keeps the row-only defaults of
`supportColumnarReads`), and `MapInBatchEvaluatorFactory` projects every Arrow row into an
UnsafeRow. That JVM side alone costs about Spark's whole vectorized Parquet scan of the same
rows (JFR of 8 large files: the Arrow row accessors, the projection, per-row scan metrics), so
on few large files `paimon` stays above a plain `spark.read.parquet` (1.1-1.7x) while it is
below on many small ones (the plain scan lists and infers a schema; `read_table` is the fast
path for large files). Every source travels in
time with Paimon's own options: `scan.snapshot-id` (or `snapshot`), `scan.tag-name`,
`scan.timestamp-millis` (the latest snapshot at or before it) or `scan.timestamp`; `paimon` also
takes `mode` (`FAILFAST` / `PERMISSIVE`, for corrupt file indexes).

Filter pushdown (`spark.sql.python.filterPushdown.enabled`, Spark 4.1+): `paimon` uses the
pushed filters to prune files and rows with the file indexes, and hands every filter back, so
Spark still evaluates them exactly.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray
from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from paimon_schema.layouts.bitmap_index.reader import BitmapIndexReader
from paimon_schema.layouts.bsi_index import BsiIndexReader
from paimon_schema.layouts.range_bitmap.reader import RangeBitmapIndexReader
from paimon_schema.layouts.registry import INDEX_TYPES, open_index
from paimon_schema.query.predicate import Predicate
from paimon_schema.spark import predicates as preds
from paimon_schema.table.arrow_types import spark_arrow_schema, spark_schema_ddl
from paimon_schema.table.merge import FileTask, plan_read, read_task
from paimon_schema.table.errors import TableError
from paimon_schema.table.fileio import LocalFileIO
from paimon_schema.table.manifests import DeletionFile
from paimon_schema.table.metadata import Table
from paimon_schema.table.schema import TableSchema, type_root
from paimon_schema.table.snapshots import Snapshot, TimeTravel
from paimon_schema.values.errors import FormatError
from paimon_schema.values.options import memory_size

__all__ = ["DeletionVectorsSource", "FileIndexSource", "PaimonSource", "register"]

log = logging.getLogger("paimon_schema.spark")


HIDE_TRACEBACK = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"


def register(spark: SparkSession, *, hide_tracebacks: bool | None = None) -> None:
    """Register the three sources, and turn on Python data source filter pushdown (Spark 4.1+;
    off by default): sources that do not push filters hand them all back, as before.

    `paimon` splits a read into at least the session's default parallelism (the cluster's
    cores: the planner has no SparkContext to ask, so the value is taken here and travels with
    the registered class, which cloudpickle pickles by value).

    A bad path or bad bytes fail when the source is loaded or planned, with our message; Spark
    prints the Python traceback before it unless its `hideTraceback` option is on, so
    `hide_tracebacks` (default: on, unless the session already sets that option) turns it on.
    """
    paimon = type("PaimonSource", (PaimonSource,),
                  {"min_partitions": _default_parallelism(spark), "__doc__": PaimonSource.__doc__,
                   "__qualname__": "PaimonSource.of_session"})
    for source in (paimon, DeletionVectorsSource, FileIndexSource):
        spark.dataSource.register(source)
    try:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    except Exception:  # noqa: BLE001 - Spark 4.0 has no such setting: nothing is pushed there
        log.info("this Spark has no Python data source filter pushdown")
    if hide_tracebacks is None:
        hide_tracebacks = spark.conf.get(HIDE_TRACEBACK, None) is None
    if hide_tracebacks:
        spark.conf.set(HIDE_TRACEBACK, "true")


def _default_parallelism(spark: Any) -> int | None:
    """The session's default parallelism; None where it cannot be had."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext: ask its conf
        value = spark.conf.get("spark.default.parallelism", None)
        return int(value) if value else None


def _path(options: Any) -> str:
    path = options.get("path")
    if not path:
        raise TableError("load(path) needs the table directory")
    return str(path)


def _travel(options: Any) -> TimeTravel:
    """The version the options ask for (Paimon's `scan.*` names, or `snapshot`)."""
    return TimeTravel.from_options(dict(options))


def _snapshot(table: Table, travel: TimeTravel) -> Snapshot | None:
    """The snapshot to read: the one asked for, or None for the latest."""
    return None if travel == TimeTravel() else travel.resolve(table.io, table.path)


def _flag(options: Any, key: str) -> bool:
    return str(options.get(key, "false")).strip().lower() == "true"


def _table_or_file(path: str) -> Table | None:
    """The table at `path`, or None when `path` is a file (a bare index file); TableError for
    a path that does not exist or a directory that is not a Paimon table."""
    try:
        return Table.open(path)
    except TableError:
        if LocalFileIO().exists(_local(path)):
            return None
        raise


def _local(path: str) -> str:
    return path if "://" in path or path.startswith("file:") else os.path.abspath(path)


def _schema_of(table: Table, travel: TimeTravel) -> TableSchema:
    """The schema a read returns: the snapshot's when one is asked for, else the latest."""
    snap = _snapshot(table, travel)
    return table.schema(None if snap is None else snap.schema_id)


@dataclass
class _Partition(InputPartition):
    """One unit of work: a file task, or a list of items of the metadata sources."""

    value: Any


# ------------------------------------------------------------------------------ paimon

class PaimonSource(DataSource):
    """`spark.read.format("paimon").load(table_dir)`: the table's rows, deletion vectors applied."""

    #: The fewest Spark partitions of a read while there are files: the session's default
    #: parallelism (set by `register`), else this machine's CPUs.
    min_partitions: int | None = None

    @classmethod
    def name(cls) -> str:
        return "paimon"

    def schema(self) -> str:
        table = Table.open(_path(self.options))
        return spark_schema_ddl(_schema_of(table, _travel(self.options)))

    def reader(self, schema: StructType) -> DataSourceReader:
        return _PaimonReader(_path(self.options), _travel(self.options),
                             str(self.options.get("mode", "FAILFAST")), self.min_partitions)


class _PaimonReader(DataSourceReader):
    def __init__(self, path: str, travel: TimeTravel, mode: str, min_partitions: int | None) -> None:
        self.path = path
        self.travel = travel
        self.mode = mode
        self.min_partitions = min_partitions
        self.where: Predicate | None = None

    def pushFilters(self, filters: list[Filter]) -> list[Filter]:
        """Prune with what maps to predicates; hand every filter back to Spark."""
        self.where = preds.from_spark_filters(filters)
        return list(filters)

    def partitions(self) -> Sequence[InputPartition]:
        """The splits; each decodes its files on one thread where the splits are at least the
        cluster's cores (they then run side by side, each beside the JVM thread that takes its
        rows: Arrow's pool on top only adds threads to the CPUs), else on Arrow's pool."""
        table = Table.open(self.path)
        plan = plan_read(table, self.where, _snapshot(table, self.travel), mode=self.mode)
        schema = spark_arrow_schema(plan.table_schema)
        groups = splits(plan.tasks, plan.table_schema, self.min_partitions)
        threads = len(groups) < (self.min_partitions or os.cpu_count() or 1)
        return [_Partition((tasks, schema, threads)) for tasks in groups] or [_Partition(None)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        tasks, schema, threads = partition.value
        for task in tasks:
            yield from read_task(task, spark_types=schema, use_threads=threads)


def splits(tasks: Sequence[FileTask], schema: TableSchema,
           min_partitions: int | None = None) -> list[list[FileTask]]:
    """The file tasks in Spark partitions: as many as the files' bytes need at Paimon's
    `source.split.target-size` (default 128 MB), at least `min_partitions` (the cluster's
    default parallelism; default: this machine's CPUs) and a whole number of times it (no
    last wave of tasks on part of the cores) while there are files; files go to the lightest
    partition, heaviest first, a file weighing at least `source.split.open-file-cost` (4 MB).
    A Spark task of a Python data source costs tens of milliseconds whatever it reads
    (measured: 20 empty partitions cost more than a plain Parquet scan of 2M rows), so one
    task per file made small tables slow, and so did counting the open cost into the number
    of tasks (the pipeline's 288 files of 17 KB: 9 tasks on 2 cores instead of 2, ~20 % more
    time and CPU): it balances the partitions, it does not add any."""
    if not tasks:
        return []
    target = memory_size(schema.option("source.split.target-size", "128mb"))
    open_cost = memory_size(schema.option("source.split.open-file-cost", "4mb"))
    weights = [max(t.file_size, open_cost) for t in tasks]
    cores = max(1, min_partitions or os.cpu_count() or 1)
    count = -(-max(-(-sum(t.file_size for t in tasks) // max(1, target)), 1) // cores) * cores
    bins: list[list[FileTask]] = [[] for _ in range(min(len(tasks), count))]
    loads = [0] * len(bins)
    for weight, task in sorted(zip(weights, tasks), key=lambda wt: -wt[0]):
        lightest = loads.index(min(loads))
        bins[lightest].append(task)
        loads[lightest] += weight
    return bins


# ------------------------------------------------------------------------------ deletion vectors

_DV_SCHEMA = pa.schema([("partition", pa.string()), ("bucket", pa.int32()),
                        ("data_file", pa.string()), ("index_file", pa.string()),
                        ("offset", pa.int64()), ("length", pa.int64()),
                        ("cardinality", pa.int64()), ("bitmap64", pa.bool_())])
_DV_DDL = ("`partition` STRING, bucket INT, data_file STRING, index_file STRING, `offset` BIGINT, "
           "length BIGINT, cardinality BIGINT, bitmap64 BOOLEAN")


class DeletionVectorsSource(DataSource):
    """`spark.read.format("paimon-deletion-vectors").load(table_dir or dv_file)`: one row per
    data file with a deletion vector (for a bare index file: per bin); `explode=true` adds
    `position`, one row per deleted row."""

    @classmethod
    def name(cls) -> str:
        return "paimon-deletion-vectors"

    def schema(self) -> str:
        _table_or_file(_path(self.options))          # a bad path fails at load(), not in a task
        return _DV_DDL + (", position BIGINT" if _flag(self.options, "explode") else "")

    def reader(self, schema: StructType) -> DataSourceReader:
        return _DeletionVectorsReader(_path(self.options), _travel(self.options),
                                      _flag(self.options, "explode"))


class _DeletionVectorsReader(DataSourceReader):
    def __init__(self, path: str, travel: TimeTravel, explode: bool) -> None:
        self.path, self.travel, self.explode = path, travel, explode

    def partitions(self) -> Sequence[InputPartition]:
        table = _table_or_file(self.path)
        if table is None:                                 # a bare deletion-vector file,
            data = _read_any(self.path)                   # checked here: bad bytes fail
            try:                                          # while planning, not in a task
                import paimon_schema as ps

                ps.DeletionVectorFile.parse(data)
            except FormatError as exc:
                raise FormatError(f"{self.path} is not a deletion-vector file: {exc.reason}",
                                  offset=exc.offset, path=exc.path) from None
            return [_Partition(("file", self.path))]
        by_index: dict[str, list[tuple[str, int, str, DeletionFile]]] = {}
        for f in table.data_files(_snapshot(table, self.travel)):
            if f.deletion_file is not None:
                by_index.setdefault(f.deletion_file.path, []).append(
                    (f.partition_path, f.bucket, f.file_name, f.deletion_file))
        return [_Partition(("table", table, items)) for items in by_index.values()] or [_Partition(None)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        import paimon_schema as ps

        if partition.value[0] == "file":
            data = _read_any(partition.value[1])
            parsed = ps.DeletionVectorFile.parse(data)
            name = partition.value[1].rstrip("/").rsplit("/", 1)[-1]
            items = [(None, None, None, name, b.offset, b.length, b.bitmap64, b.bitmap) for b in parsed.bins]
        else:
            _, table, entries = partition.value
            data = table.read_bytes(entries[0][3].path)
            items = []
            for partition_path, bucket, file_name, dv in entries:
                try:
                    bitmap = ps.read_deletion_vector(data, dv.offset, dv.length)
                except FormatError as exc:
                    raise FormatError(f"{dv.path}: deletion vector of {file_name}: {exc.reason}",
                                      offset=exc.offset, path=exc.path) from exc
                items.append((partition_path, bucket, file_name, dv.index_file, dv.offset,
                              dv.length, _is_64(bitmap), bitmap))
        yield self._batch(items)

    def _batch(self, items: list[tuple[Any, ...]]) -> pa.RecordBatch:
        columns: dict[str, list[Any]] = {name: [] for name in _DV_SCHEMA.names}
        positions: list[NDArray[np.int64]] = []
        for partition_path, bucket, file_name, index_file, offset, length, is64, bitmap in items:
            repeat = 1
            if self.explode:
                values = np.asarray(bitmap.to_array(), dtype=np.int64)
                positions.append(values)
                repeat = len(values)
            for name, value in zip(_DV_SCHEMA.names, (partition_path, bucket, file_name, index_file,
                                                       offset, length, len(bitmap), is64)):
                columns[name].extend([value] * repeat)
        arrays = [pa.array(columns[f.name], f.type) for f in _DV_SCHEMA]
        schema = _DV_SCHEMA
        if self.explode:
            arrays.append(pa.array(np.concatenate(positions) if positions else [], pa.int64()))
            schema = schema.append(pa.field("position", pa.int64()))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _is_64(bitmap: Any) -> bool:
    from pyroaring import BitMap64

    return isinstance(bitmap, BitMap64)


def _read_any(path: str) -> bytes:
    """A file by local path or URI."""
    return LocalFileIO().read_bytes(_local(path))


# ------------------------------------------------------------------------------ file index

_FI_SCHEMA = pa.schema([("partition", pa.string()), ("bucket", pa.int32()),
                        ("data_file", pa.string()), ("column", pa.string()),
                        ("index_type", pa.string()), ("stored", pa.string()),
                        ("size", pa.int64()), ("row_count", pa.int32()),
                        ("distinct_values", pa.int32()), ("null_count", pa.int32())])
_FI_DDL = ("`partition` STRING, bucket INT, data_file STRING, `column` STRING, index_type STRING, "
           "stored STRING, size BIGINT, row_count INT, distinct_values INT, null_count INT")
_VALUES_TYPE = pa.list_(pa.struct([("value", pa.string()), ("rows", pa.list_(pa.int32()))]))


class FileIndexSource(DataSource):
    """`spark.read.format("paimon-file-index").load(table_dir)`: one row per data file x column
    x index type with the decoded summary; `values=true` adds `values`, each value's rows
    (bitmap, range-bitmap and BSI indexes)."""

    @classmethod
    def name(cls) -> str:
        return "paimon-file-index"

    def schema(self) -> str:
        Table.open(_path(self.options))               # a bad path fails at load(), not in a task
        extra = ", `values` ARRAY<STRUCT<value: STRING, rows: ARRAY<INT>>>" if _flag(self.options, "values") else ""
        return _FI_DDL + extra

    def reader(self, schema: StructType) -> DataSourceReader:
        return _FileIndexReader(_path(self.options), _travel(self.options),
                                _flag(self.options, "values"))


class _FileIndexReader(DataSourceReader):
    def __init__(self, path: str, travel: TimeTravel, values: bool) -> None:
        self.path, self.travel, self.values = path, travel, values

    def partitions(self) -> Sequence[InputPartition]:
        table = Table.open(self.path)
        files = [f for f in table.data_files(_snapshot(table, self.travel))
                 if f.embedded_index is not None or f.index_sidecar is not None]
        return [_Partition((table, f)) for f in files] or [_Partition(None)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        table, data_file = partition.value
        container = table.file_index(data_file)
        file_schema = table.schema(data_file.schema_id)
        records = []
        for column, indexes in container.columns.items():
            for index_type, blob in indexes.items():
                summary = _summary(index_type, blob, _column_type(file_schema, column), self.values)
                records.append((data_file.partition_path, data_file.bucket, data_file.file_name,
                                column, index_type, data_file.index_stored,
                                0 if blob is None else len(blob), *summary))
        schema = _FI_SCHEMA.append(pa.field("values", _VALUES_TYPE)) if self.values else _FI_SCHEMA
        columns = list(zip(*records)) if records else [() for _ in schema]
        yield pa.RecordBatch.from_arrays([pa.array(list(values), field.type)
                                          for values, field in zip(columns, schema)], schema=schema)


def _column_type(schema: TableSchema, column: str) -> Any:
    """The data type of a container column (`m[k]` is the value type of map `m`)."""
    name, _, key = column.partition("[")
    field = schema.by_name.get(name)
    if field is None:
        return None
    if key:
        return field.type.get("value") if isinstance(field.type, dict) and type_root(field.type) == "MAP" else None
    return field.type


def _summary(index_type: str, blob: bytes | None, data_type: Any, values: bool) -> tuple[Any, ...]:
    """(row_count, distinct_values, null_count[, values]) of one index; None where the index
    does not record it (a bloom filter records none of them)."""
    empty = (None, None, None) + ((None,) if values else ())
    if blob is None or data_type is None or index_type not in INDEX_TYPES:
        return empty
    reader = open_index(index_type, blob, data_type)
    pairs: list[tuple[Any, list[int]]]
    if isinstance(reader, BsiIndexReader):
        nulls = len(reader.null_rows)
        summary: tuple[int | None, int | None, int] = (reader.num_rows, None, nulls)
        pairs = _group(reader.values()) if values else []
    elif isinstance(reader, (BitmapIndexReader, RangeBitmapIndexReader)):
        nulls = len(reader.null_rows)
        distinct = len(reader) if isinstance(reader, BitmapIndexReader) else reader.num_keys
        summary = (reader.num_rows, distinct, nulls)
        pairs = [(v, list(rows)) for v, rows in reader.items()] if values else []
    else:   # a bloom filter records none of them
        return empty
    if not values:
        return summary
    rows = [{"value": None if v is None else str(v), "rows": r} for v, r in pairs]
    if nulls:
        rows.append({"value": None, "rows": list(reader.null_rows)})
    return summary + (rows,)


def _group(stored: dict[int, int]) -> list[tuple[int, list[int]]]:
    out: dict[int, list[int]] = {}
    for row, value in stored.items():
        out.setdefault(value, []).append(row)
    return sorted(out.items())
