"""Spark glue: Paimon tables and their index files as Spark DataFrames, merge-on-read included.

`register(spark)` adds the Python data sources `paimon`, `paimon-deletion-vectors` and
`paimon-file-index`; `read_table(spark, table_dir, where)` reads a table's live Parquet files
with Spark's own scan and drops deleted rows with broadcast deletion vectors. `read_arrow` is
the same merge-on-read in pyarrow alone; `rewrite_file_index(spark, table_dir, ...)` builds
file indexes for a table's data files in Spark tasks and commits them (no Spark needed; pyspark is imported only by the
Spark functions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paimon_schema.table.merge import ReadStats, read_arrow

__all__ = ["QUIET_LOGGING", "ReadStats", "read_arrow", "read_table", "register",
           "rewrite_file_index"]

#: `spark.driver.extraJavaOptions` for a session whose stderr shows errors only: Spark's log4j
#: configured to ERROR before the JVM logs anything (its startup lines and WARNs come before a
#: `setLogLevel` could act; `register` comes later still). With
#: `spark.ui.showConsoleProgress=false`, the README's session prints nothing on stderr.
QUIET_LOGGING = "-Dlog4j2.configurationFile=" + \
    Path(__file__).with_name("log4j2-quiet.properties").as_uri()


def register(spark: Any, *, hide_tracebacks: bool | None = None) -> None:
    """Register the data sources `paimon`, `paimon-deletion-vectors`, `paimon-file-index`;
    see `sources.register` (errors read as our messages, not Python tracebacks)."""
    from paimon_schema.spark.sources import register as _register

    _register(spark, hide_tracebacks=hide_tracebacks)


def read_table(spark: Any, table_dir: Any, where: Any = None, **kwargs: Any) -> Any:
    """The table's rows through Spark's native Parquet scan; see `native.read_table`."""
    from paimon_schema.spark.native import read_table as _read_table

    return _read_table(spark, table_dir, where, **kwargs)


def rewrite_file_index(spark: Any, table_dir: Any, columns: Any = None, options: Any = None,
                       where: Any = None, **kwargs: Any) -> Any:
    """`paimon_schema.rewrite_file_index` as a Spark job, one task per data file; see
    `write.rewrite_file_index`."""
    from paimon_schema.spark.write import rewrite_file_index as _rewrite

    return _rewrite(spark, table_dir, columns, options, where, **kwargs)
