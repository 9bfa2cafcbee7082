"""`read_table`: a Paimon table through Spark's own Parquet scan, deletion vectors applied.

A Python data source cannot hand files to Spark's scan, so the DataFrame is built on the
driver: `plan_read` lists and prunes the live files (manifests, partition values, min/max
statistics, file indexes), and the Parquet files are read by Spark's Parquet scan, one scan per
group of files that share a schema. The rows a file drops (deleted by its deletion vector or,
under a filter, ruled out by its file indexes) are read on the driver and dropped inside the
JVM, with no row moving through Python: `KeepRows`, a Java UDF over the row index
(`jvm_filter`: compiled once against Spark's jars, its payload the files' dropped rows as
RoaringBitmaps keyed by the files' URIs, one for every file of the scan, empty where nothing
drops: a file the filter finds no entry for is an error, never kept). The row index is a column the Parquet reader fills
(Spark's `_tmp_metadata_row_index`, added to the read schema) and the file is the one the scan
is reading in the filter's thread (`InputFileBlockHolder`, what `input_file_name()` reads), so
a row costs a boxed long and a bit test: no `_metadata` struct, no per-row file key (this
replaced the file size, or for files of one size the file name, a string per row: 233 of the
pipeline's 288 files share their size with another). A scan (reader, paths, filter, columns)
is built by one py4j call, `KeepRows.scan`, given the schema Spark would infer, which
`KeepRows.fileSchema` reads from one footer with Spark's own conversion (without the Spark job
`spark.read.parquet` runs to infer it), over a file index handed the files' statuses from the
manifests' sizes (Spark lists more than 32 paths with a Spark job, and stats fewer one by one).
Measured (benchmarks/spark_read.py, 2M rows, a shared 2-core machine at load 8-12): 1.02-1.09x
a plain `spark.read.parquet` of 8 files with 30 % deleted (CPU 0.87-1.19x: Spark's row-index
column, generated with a boxed range per row, and the UDF's boxing; the plain scan's schema
inference job is what read_table spares), 0.39-0.55x of 288 files (the plain scan lists them
and infers a schema; the pipeline's Java-written table too). Where the helper cannot be had (Spark Connect, no
`javac`) the scan is built with PySpark and a broadcast left join on (file size, row // 64)
with a table of 64-bit dropped-row words drops the rows, ~2x slower.
Columns are then evolved to the table's schema by field id with Spark expressions (renamed,
cast, missing, partition values), so Spark can still push a filter into the Parquet scan.

Files in other formats (Spark 4.3 has no `row_index` for ORC) are read with pyarrow inside
Spark tasks (`merge.read_task` under `mapInArrow`).

A table on S3 is scanned by Hadoop's `s3a` filesystem (`s3://` becomes `s3a://`), given the
endpoint and explicit credentials the table was opened with as per-read options (Spark hands a
file source's options to its Hadoop configuration). Where the session has no Hadoop filesystem
for the scheme (PyPI's pyspark has no hadoop-aws), `read_table` fails with one `TableError`
before any scan: the `paimon` source reads the same table without Hadoop.
"""

from __future__ import annotations

import functools
import json
import logging
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from paimon_schema.layouts.roaring_writer import serialize_bitmaps
from paimon_schema.query import sql
from paimon_schema.query.predicate import Predicate
from paimon_schema.spark import jvm_filter
from paimon_schema.spark import predicates as preds
from paimon_schema.table.arrow_types import quote, spark_arrow_schema, spark_ddl, spark_schema_ddl
from paimon_schema.table import predicates as table_predicates
from paimon_schema.table.fileio import FileSystemLike
from paimon_schema.table.merge import FileTask, ReadStats, plan_read, read_task
from paimon_schema.table.errors import TableError
from paimon_schema.table.kept_rows import kept_rows_of
from paimon_schema.table.fileio import ArrowFileIO
from paimon_schema.table.metadata import Table, TableLike
from paimon_schema.table.s3 import filesystem_settings
from paimon_schema.table.schema import TableSchema
from paimon_schema.table.snapshots import TimeTravel

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["read_table"]

log = logging.getLogger("paimon_schema.spark")

ROW = "__paimon_row"
#: The column Spark's Parquet reader fills with row indexes when the read schema has it
#: (`ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME`, also behind `_metadata.row_index`);
#: files holding a column of that name are read with pyarrow where they lose rows.
ROW_INDEX_COLUMN = "_tmp_metadata_row_index"
#: A Paimon TIMESTAMP (no time zone) that Spark reads as an instant (Parquet INT96): the same
#: microseconds as TIMESTAMP_NTZ, whatever the session time zone.
_INSTANT_TO_NTZ = ("TIMESTAMP_NTZ'1970-01-01 00:00:00' + make_dt_interval(0, 0, 0, "
                   "CAST(CAST(unix_micros({}) AS DECIMAL(20, 0)) / 1000000 AS DECIMAL(18, 6)))")


def read_table(spark: SparkSession, table_dir: TableLike, where: Predicate | str | None = None, *,
               snapshot: int | None = None, columns: Sequence[str] | None = None,
               mode: str = "FAILFAST", filesystem: FileSystemLike | None = None,
               options: Mapping[str, str] | None = None) -> tuple[DataFrame, ReadStats]:
    """The table's rows as a Spark DataFrame, and what pruning skipped.

    `where` is a `ps.col` predicate or a Spark SQL boolean expression; Spark applies it
    exactly, and the comparisons it is made of (column vs literal, AND / OR / NOT, IN,
    BETWEEN, IS NULL) prune files and rows first. A string Spark understands but the pruner
    does not is applied without pruning. A literal that does not compare with its column
    (`amount < 'x'`) is a SchemaError naming both, as in `read_arrow`, before Spark runs.
    `snapshot`, or Paimon's options in `options` (`scan.snapshot-id`, `scan.tag-name`,
    `scan.timestamp-millis`, `scan.timestamp`), pick the version read.
    """
    predicate = _predicate(where)
    table = Table.open(table_dir, filesystem)
    travel = TimeTravel.from_options(dict(options or {}))
    if snapshot is not None:
        if travel.snapshot not in (None, snapshot):
            raise TableError(f"snapshot={snapshot} and scan.snapshot-id={travel.snapshot} differ")
        travel = travel._replace(snapshot=snapshot).checked()
    snap = None if travel == TimeTravel() else travel.resolve(table.io, table.path)
    plan = plan_read(table, predicate, snap, mode=mode)
    if predicate is not None:       # a literal that does not compare: SchemaError, as read_arrow
        table_predicates.to_arrow(predicate, plan.schema)
    read_options = {**_READ_OPTIONS, **_hadoop_options(spark, table,
                                                       [t for t in plan.tasks if t.format == "parquet"])}
    ddl = spark_schema_ddl(plan.table_schema)
    groups: dict[tuple[Any, ...], list[FileTask]] = {}
    others = []
    for task in plan.tasks:
        if task.format == "parquet":
            key = (task.schema_id, tuple(c.file_column for c in task.columns))
            groups.setdefault(key, []).append(task)
        else:
            others.append(task)
    frames = [frame for tasks in groups.values()
              for frame in _parquet_frames(spark, tasks, plan.table_schema, read_options)]
    if others:
        frames.append(_pyarrow_frame(spark, others, spark_arrow_schema(plan.table_schema), ddl))
    df = functools.reduce(lambda a, b: a.unionByName(b), frames) if frames \
        else spark.createDataFrame([], ddl)
    if where is not None:
        df = df.where(where if isinstance(where, str) else preds.to_spark_column(where))
    if columns is not None:
        df = df.select(*[quote(c) for c in columns])
    log.info("read_table %s: %s", table.path, plan.stats.as_dict())
    return df, plan.stats


def _predicate(where: Predicate | str | None) -> Predicate | None:
    if where is None or isinstance(where, Predicate):
        return where
    try:
        return sql.parse_sql(where)
    except sql.SqlNotUnderstood as exc:
        log.warning("filter %r not used for pruning (%s); Spark applies it", where, exc)
        return None


#: Spark's Parquet reader options of every read_table scan.
_READ_OPTIONS = {"int96RebaseMode": "CORRECTED", "datetimeRebaseMode": "CORRECTED"}
#: Hadoop's name of a pyarrow filesystem's scheme.
_HADOOP_SCHEMES = {"s3": "s3a"}


def _hadoop_options(spark: Any, table: Table, tasks: list[FileTask]) -> dict[str, str]:
    """The Hadoop settings a scan of the files needs (s3a: the table's endpoint and explicit
    credentials, for its buckets only), after checking that the session has a Hadoop
    filesystem for their scheme; TableError naming what to add, or the `paimon` source."""
    schemes = {_uri(t).split("://", 1)[0] for t in tasks} - {"file"}
    jvm = getattr(spark, "_jvm", None)
    for scheme in sorted(schemes):
        if jvm is None:                 # Spark Connect: the server's filesystems are its own
            break
        try:
            jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(
                scheme, spark._jsc.hadoopConfiguration())
        except Exception as exc:  # noqa: BLE001 - py4j raises the JVM's error as Py4JJavaError
            reason = str(getattr(exc, "java_exception", exc)).splitlines()[0]
            jar = " (the hadoop-aws jar and its AWS SDK bundle, of the session's Hadoop " \
                  "version, e.g. spark.jars.packages=org.apache.hadoop:hadoop-aws:<version>)" \
                if scheme == "s3a" else ""
            raise TableError(f"read_table cannot scan {table.io.uri(table.path)}: "
                             f"this Spark session has no Hadoop filesystem for {scheme}://"
                             f"{jar} ({reason}); spark.read.format(\"paimon\").load(<Table.uri>) "
                             f"reads it without Hadoop") from None
    if "s3a" not in schemes or not isinstance(table.io, ArrowFileIO) \
            or not isinstance(table.io.filesystem, pafs.S3FileSystem):
        return {}
    o = filesystem_settings(table.io.filesystem)
    endpoint = o.get("endpoint_override") or ""
    secure = not endpoint.startswith("http://") and (o.get("scheme") or "https") == "https"
    settings = {"endpoint": endpoint, "endpoint.region": o.get("region") or "",
                "access.key": o.get("access_key") or "", "secret.key": o.get("secret_key") or "",
                "session.token": o.get("session_token") or "",
                "path.style.access": "true" if endpoint else "",
                "connection.ssl.enabled": "" if secure else "false"}
    buckets = sorted({_uri(t).split("://", 1)[1].split("/", 1)[0] for t in tasks})
    return {f"fs.s3a.bucket.{bucket}.{key}": value for bucket in buckets
            for key, value in settings.items() if value}


def _parquet_frames(spark: Any, tasks: list[FileTask], table_schema: TableSchema,
                    options: dict[str, str]) -> list[Any]:
    """Scans of files that share a schema: the files that lose rows (deletion vectors, index
    candidates) apart from the others, which are a plain scan; and one scan per partition when
    the files do not store a partition column (its value then becomes a literal). With the
    `KeepRows` helper a scan is one py4j call, and its schema is read from the first file's
    footer the way Spark infers it (not by the Spark job `spark.read.parquet` runs)."""
    jvm = jvm_filter.helper(spark)
    uris = [_uri(t) for t in tasks]
    schema = jvm.file_schema(spark, uris[0]) if jvm is not None else None
    reader = spark.read.options(**options)
    raw: Any = None
    if schema is None:
        raw = reader.parquet(*uris)
        schema = raw.schema.json()
    stored = {f["name"]: f["type"] if isinstance(f["type"], str) else f["type"]["type"]
              for f in json.loads(schema)["fields"]}
    parts: dict[tuple[Any, ...], list[FileTask]] = {}
    for task in tasks:
        constants = tuple(c.constant for c in task.columns if c.file_column not in stored)
        masked = task.deletion_file is not None or task.candidate_rows is not None
        parts.setdefault((constants, masked), []).append(task)

    def scan(group: list[FileTask]) -> Any:       # (without the helper: raw is inferred)
        return raw if len(group) == len(tasks) else \
            reader.schema(raw.schema).parquet(*[_uri(t) for t in group])

    frames = []
    for (_, masked), part in parts.items():
        columns = _columns(part[0], stored, table_schema)
        dropped = _dropped_rows(part) if masked else {}
        if dropped and ROW_INDEX_COLUMN in stored:     # Spark gives no row index beside it
            frames.append(_pyarrow_frame(spark, part, spark_arrow_schema(table_schema),
                                         spark_schema_ddl(table_schema)))
        elif jvm is not None:
            frames.append(_helper_scan(spark, jvm, schema, part, columns, dropped, options))
        elif not dropped:               # nothing dropped: a plain scan
            frames.append(scan(part).select(*_as_columns(columns)))
        else:
            sizes = _file_sizes(part)
            for group in _distinct_sizes(part, sizes):
                lost = {t.path: dropped[t.path] for t in group if t.path in dropped}
                frames.append(_dropped_join(scan(group), columns,
                                            spark.createDataFrame(_dropped_words(lost, sizes)))
                              if lost else scan(group).select(*_as_columns(columns)))
    return frames


def _columns(task: FileTask, stored: dict[str, str], table_schema: TableSchema) -> list[Any]:
    """The table's columns over a file's columns, as Spark SQL (`selectExpr`) strings; a
    partition value the file does not store is a Column (`F.lit` of the Python value)."""
    from pyspark.sql import functions as F

    columns: list[Any] = []
    for column in task.columns:
        ddl = spark_ddl(table_schema.field(column.name).type)
        if column.file_column in stored:
            if stored[column.file_column] == "timestamp" and ddl == "TIMESTAMP_NTZ":
                value = _INSTANT_TO_NTZ.format(quote(column.file_column))
            else:
                value = f"CAST({quote(column.file_column)} AS {ddl})"
        elif column.constant is None:
            value = f"CAST(NULL AS {ddl})"
        else:
            columns.append(F.lit(column.constant).cast(ddl).alias(column.name))
            continue
        columns.append(f"{value} AS {quote(column.name)}")
    return columns


def _as_columns(columns: list[Any]) -> list[Any]:
    from pyspark.sql import functions as F

    return [F.expr(c) if isinstance(c, str) else c for c in columns]


def _helper_scan(spark: Any, jvm: jvm_filter.Helper, schema: str, tasks: list[FileTask],
                 columns: list[Any], dropped: dict[str, np.ndarray], options: dict[str, str]) -> Any:
    """The files' scan without their dropped rows, built by `KeepRows.scan`: the filter tells
    a row's file by the file Spark's scan is reading (its URI, the payload's key), and the files
    are not listed where the manifests give every size (Paimon's readers trust them too).
    Where no file drops a row the scan is a plain one (no filter to miss a file)."""
    sql = all(isinstance(c, str) for c in columns)
    sizes = [t.file_size for t in tasks]
    frame = jvm.scan(spark, schema, [_uri(t) for t in tasks], options, columns if sql else [],
                     _payload(tasks, dropped) if dropped else b"",
                     sizes if all(size > 0 for size in sizes) else [])
    return frame if sql else frame.select(*_as_columns(columns))


#: A (file, 64-row word) pair as one long: the file's size (mod 2^37) above bit 26, the word
#: below, so files of up to 2^32 rows; files of one scan have distinct sizes mod 2^37.
_WORD_BITS = 26
_SIZE_MASK = (1 << 37) - 1
_MAX_ROWS = 1 << (_WORD_BITS + 6)
KEY, DROPPED = "__paimon_word", "__paimon_dropped"


def _dropped_join(raw: Any, columns: list[Any], words: Any) -> Any:
    """The scan without the dropped rows where the JVM filter cannot be had: a broadcast left
    join of each row's (file, row // 64) with the table of non-zero dropped-row words, then a
    bit test on `_metadata.row_index % 64`; the two numbers pack into one long so Spark probes
    its long-keyed hash map."""
    from pyspark.sql import functions as F

    key = F.expr(f"shiftleft(_metadata.file_size & {_SIZE_MASK}, {_WORD_BITS}) "
                 f"| shiftright(_metadata.row_index, 6)")
    scanned = raw.select(*_as_columns(columns), key.alias(KEY), F.col("_metadata.row_index").alias(ROW))
    joined = scanned.join(F.broadcast(words), KEY, "left")
    keep = F.expr(f"{DROPPED} IS NULL OR (shiftrightunsigned({DROPPED}, CAST({ROW} & 63 AS INT)) & 1) = 0")
    return joined.where(keep).drop(KEY, ROW, DROPPED)


def _file_sizes(tasks: list[FileTask]) -> dict[str, int]:
    """{path: size in bytes} as the filesystem says, which is what Spark's `file_size` is (the
    manifest's `_FILE_SIZE` is what the writer said)."""
    sizes = {}
    for task in tasks:
        try:
            sizes[task.path] = task.fileio.size(task.path)
        except TableError:
            raise TableError(f"data file {task.path} does not exist") from None
    return sizes


def _distinct_sizes(tasks: list[FileTask], sizes: dict[str, int]) -> list[list[FileTask]]:
    """The tasks in groups whose files have distinct sizes mod 2^37 (the n-th file of a size
    goes into group n): nearly always one group."""
    groups: list[list[FileTask]] = []
    seen: list[set[int]] = []
    for task in tasks:
        size = sizes[task.path] & _SIZE_MASK
        slot = next((i for i, used in enumerate(seen) if size not in used), len(groups))
        if slot == len(groups):
            groups.append([])
            seen.append(set())
        groups[slot].append(task)
        seen[slot].add(size)
    return groups


def _dropped_rows(tasks: list[FileTask]) -> dict[str, np.ndarray]:
    """{path: mask of the rows dropped} of the files that drop rows: deleted by the deletion
    vector, or not candidates of the file indexes (read on the driver, shipped to the filter)."""
    for task in tasks:
        if task.row_count > _MAX_ROWS:
            raise TableError(f"{task.path} has {task.row_count} rows; read_table reads files of "
                             f"up to {_MAX_ROWS} rows (use read_arrow or the paimon source)")
    return {task.path: ~keep for task, keep in zip(tasks, kept_rows_of(tasks))
            if keep is not None and not keep.all()}


def _payload(tasks: list[FileTask], dropped: dict[str, np.ndarray]) -> bytes:
    """`KeepRows`' payload: (key length, the file's URI, bitmap length, portable RoaringBitmap
    of the dropped rows) for every file of the scan, an empty bitmap where nothing drops (the
    filter refuses a file it has no entry for rather than keep its rows), lengths as
    little-endian int32. All bitmaps come from the index writers' one serializer, in one call
    (no bitmap object per file)."""
    rows = [np.flatnonzero(dropped[task.path]).astype(np.uint32) if task.path in dropped
            else np.zeros(0, np.uint32) for task in tasks]
    counts = np.fromiter(map(len, rows), np.int64, len(rows))
    blob, lengths = serialize_bitmaps(np.concatenate(rows) if rows else np.zeros(0, np.uint32), counts)
    parts, offset = [], 0
    for task, length in zip(tasks, lengths.tolist()):
        key = _uri(task).encode()
        parts += [struct.pack("<i", len(key)), key, struct.pack("<i", length), blob[offset:offset + length]]
        offset += length
    return b"".join(parts)


def _dropped_words(dropped: dict[str, np.ndarray], sizes: dict[str, int]) -> pa.Table:
    """The join's (key, dropped bits) of every non-zero 64-row word: bit j of a word is row
    64 * word + j."""
    keys, words = [], []
    for path, mask in dropped.items():
        padded = np.zeros(-(-len(mask) // 64) * 64, dtype=bool)
        padded[:len(mask)] = mask
        packed = np.packbits(padded, bitorder="little").view("<u8")
        nonzero = np.flatnonzero(packed)
        high = np.uint64((sizes[path] & _SIZE_MASK) << _WORD_BITS)
        keys.append((nonzero.astype(np.uint64) | high).view(np.int64))
        words.append(packed[nonzero].view(np.int64))
    return pa.table({KEY: pa.array(np.concatenate(keys), pa.int64()),
                     DROPPED: pa.array(np.concatenate(words), pa.int64())})


def _uri(task: FileTask) -> str:
    """The file's URI as Hadoop names it (`s3a://` for `s3://`)."""
    uri = task.fileio.uri(task.path)
    scheme, sep, rest = uri.partition("://")
    return f"{_HADOOP_SCHEMES.get(scheme, scheme)}{sep}{rest}"


def _pyarrow_frame(spark: Any, tasks: list[FileTask], schema: pa.Schema, ddl: str) -> Any:
    """Files Spark cannot scan with row positions, read by pyarrow inside Spark tasks: one
    task per file, driven by a range whose ids index the broadcast tasks."""
    broadcast = spark.sparkContext.broadcast(tasks)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                yield from read_task(broadcast.value[i], spark_types=schema)

    ids = spark.range(0, len(tasks), 1, numPartitions=max(1, len(tasks)))
    return ids.mapInArrow(read, ddl)
