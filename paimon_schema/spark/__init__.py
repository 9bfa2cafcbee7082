"""Spark glue: Paimon tables and their index files as Spark DataFrames, merge-on-read included.

`register(spark)` adds the Python data sources `paimon`, `paimon-deletion-vectors` and
`paimon-file-index`; `read_table(spark, table_dir, where)` reads a table's live Parquet files
with Spark's own scan and drops deleted rows with broadcast deletion vectors. `read_arrow`
(`paimon_schema.table.read_arrow`, kept here for older callers) is the same merge-on-read in
pyarrow alone; `rewrite_file_index(spark, table_dir, ...)` builds file indexes for a table's
data files in Spark tasks and commits them, `create_global_index(spark, table_dir, column, type)`
a btree/bitmap global index, one Spark task per row range (no Spark needed; pyspark is imported
only by the Spark functions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from paimon_schema.query.predicate import Predicate
from paimon_schema.table.fileio import FileSystemLike
from paimon_schema.table.merge import ReadStats
from paimon_schema.table.metadata import TableLike
from paimon_schema.table.scan import read_arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from paimon_schema.table.file_index_rewrite import RewriteResult
    from paimon_schema.table.global_index_write import GlobalIndexResult

__all__ = ["QUIET_LOGGING", "ReadStats", "create_global_index", "read_arrow", "read_table", "register",
           "rewrite_file_index"]

#: `spark.driver.extraJavaOptions` for a session whose stderr shows errors only: Spark's log4j
#: configured to ERROR before the JVM logs anything (its startup lines and WARNs come before a
#: `setLogLevel` could act; `register` comes later still). With
#: `spark.ui.showConsoleProgress=false`, the README's session prints nothing on stderr.
QUIET_LOGGING = "-Dlog4j2.configurationFile=" + \
    Path(__file__).with_name("log4j2-quiet.properties").as_uri()


def register(spark: SparkSession, *, hide_tracebacks: bool | None = None) -> None:
    """Register the data sources `paimon`, `paimon-deletion-vectors`, `paimon-file-index`;
    see `sources.register` (errors read as our messages, not Python tracebacks)."""
    from paimon_schema.spark.sources import register as _register

    _register(spark, hide_tracebacks=hide_tracebacks)


@overload
def read_table(spark: SparkSession, table_dir: TableLike, where: Predicate | str | None = ..., *,
               snapshot: int | None = ..., columns: Sequence[str] | None = ...,
               with_stats: Literal[False] = ..., mode: str = ...,
               filesystem: FileSystemLike | None = ...,
               options: Mapping[str, str] | None = ...) -> DataFrame: ...


@overload
def read_table(spark: SparkSession, table_dir: TableLike, where: Predicate | str | None = ..., *,
               snapshot: int | None = ..., columns: Sequence[str] | None = ...,
               with_stats: Literal[True], mode: str = ...,
               filesystem: FileSystemLike | None = ...,
               options: Mapping[str, str] | None = ...) -> tuple[DataFrame, ReadStats]: ...


def read_table(spark: SparkSession, table_dir: TableLike, where: Predicate | str | None = None, *,
               snapshot: int | None = None, columns: Sequence[str] | None = None,
               with_stats: bool = False, mode: str = "FAILFAST",
               filesystem: FileSystemLike | None = None,
               options: Mapping[str, str] | None = None) -> DataFrame | tuple[DataFrame, ReadStats]:
    """The table's rows through Spark's native Parquet scan; see `native.read_table`
    (`options`: Paimon's time-travel options, `scan.snapshot-id`, `scan.tag-name`,
    `scan.timestamp-millis`)."""
    from paimon_schema.spark.native import read_table as _read_table

    df, stats = _read_table(spark, table_dir, where, snapshot=snapshot, columns=columns,
                            mode=mode, filesystem=filesystem, options=options)
    return (df, stats) if with_stats else df


def rewrite_file_index(spark: SparkSession, table_dir: TableLike,
                       columns: Mapping[str, str | Sequence[str]] | None = None,
                       options: Mapping[str, str] | None = None,
                       where: Predicate | str | None = None, *, replace: bool = False) -> RewriteResult:
    """`paimon_schema.rewrite_file_index` as a Spark job, one task per data file; see
    `write.rewrite_file_index`."""
    from paimon_schema.spark.write import rewrite_file_index as _rewrite

    return _rewrite(spark, table_dir, columns, options, where, replace=replace)


def create_global_index(spark: SparkSession, table_dir: TableLike, column: str, index_type: str,
                        options: Mapping[str, str] | None = None) -> GlobalIndexResult:
    """`paimon_schema.create_global_index` as a Spark job, one task per row range; see
    `global_index.create_global_index`."""
    from paimon_schema.spark.global_index import create_global_index as _create

    return _create(spark, table_dir, column, index_type, options)
