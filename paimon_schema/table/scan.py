"""`TableScan`: one read of a table, the shape Python's table readers share (pyiceberg's
`table.scan(...)`): it says what it will read (`files()`, `stats`, `schema`, `snapshot`) and
hands the rows over whole (`to_arrow`, `to_pandas`, `to_polars`, `to_duckdb`) or streaming
(`to_batches`). Planning is `merge.plan_read` (partition values, min/max statistics and file
indexes prune files and rows), reading is `merge.read_task` (merge-on-read, schema evolution);
this module only decides how the batches flow.

A whole read reads the files side by side (`whole_read`: a thread per CPU, each
deletion-vector index file read once, one mask) and holds every row. A streaming read visits the files in order, one
64k-row batch at a time (pyarrow reads a Parquet file row group by row group, an ORC file
stripe by stripe), so it holds a few row groups, not the table: on the 2M-row pipeline table
(288 files) it adds 2 MiB to the process's peak RSS where the whole read adds 76 MiB
(`benchmarks/table_scan_memory.py`).

`read_arrow(table, where)` is the one-call form kept from before the scans.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import pyarrow as pa
import pyarrow.compute as pc

from paimon_schema.query.predicate import Predicate
from paimon_schema.query.sql import parse_sql
from paimon_schema.table import predicates as preds
from paimon_schema.table.manifests import DataFile
from paimon_schema.table.fileio import FileSystemLike
from paimon_schema.table.merge import BATCH_ROWS, ReadStats, TableLike, TaskPlan, plan_read, read_task
from paimon_schema.table.snapshots import Snapshot
from paimon_schema.table.whole_read import read_whole

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import polars as pl

__all__ = ["TableScan", "read_arrow"]


class TableScan:
    """A read of a table: `Table.open(path).scan(where, columns, snapshot=, tag=, as_of=)`.

    Nothing is read until asked: the plan (manifests, pruning) is made once, on the first of
    `files()`, `stats`, `schema`, `snapshot` or a read, and each read reads the files again.
    `where` is a `ps.col` predicate or a Spark SQL string of simple comparisons (with Spark's
    semantics, exactly); `columns` selects output columns (the filter may use others).
    """

    def __init__(self, table: TableLike, where: Predicate | str | None = None,
                 columns: Sequence[str] | None = None, snapshot: Snapshot | int | None = None,
                 *, mode: str = "FAILFAST", filesystem: FileSystemLike | None = None) -> None:
        self.table = table
        self.where: Predicate | None = parse_sql(where) if isinstance(where, str) else where
        self.columns = None if columns is None else list(columns)
        self._snapshot = snapshot
        self._mode = mode
        self._filesystem = filesystem
        self._plan: TaskPlan | None = None
        self._filter: pc.Expression | None = None

    def __repr__(self) -> str:
        where = "" if self.where is None else f" where {self.where}"
        return f"<TableScan of {self.table}{where}>"

    def _planned(self) -> TaskPlan:
        if self._plan is None:
            plan = plan_read(self.table, self.where, self._snapshot, self.columns, self._mode,
                             self._filesystem, with_filter_columns=True)
            # a literal that does not compare with its column fails here, before any read
            self._filter = None if self.where is None else preds.to_arrow(self.where, plan.schema)
            self._plan = plan
        return self._plan

    # ----------------------------------------------------------------- what it reads

    @property
    def snapshot(self) -> Snapshot | None:
        """The snapshot read (None: the table has no commit yet)."""
        return self._planned().snapshot

    @property
    def stats(self) -> ReadStats:
        """What pruning skipped: files by partition, statistics and index, rows ruled out,
        rows deletion vectors remove (see `merge.ReadStats`)."""
        return self._planned().stats

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the rows (the selected columns of the snapshot's schema)."""
        plan = self._planned()
        return pa.schema([plan.schema.field(name) for name in self._out_columns(plan)])

    def files(self) -> list[DataFile]:
        """The data files the read reads, in read order, after pruning (each with its deletion
        vector)."""
        return list(self._planned().files)

    def _out_columns(self, plan: TaskPlan) -> list[str]:
        return list(self.columns) if self.columns is not None \
            else [f.name for f in plan.table_schema.fields]

    # ----------------------------------------------------------------- the rows

    def to_arrow(self) -> pa.Table:
        """Every row as one `pyarrow.Table` (the files read side by side, `whole_read`)."""
        plan = self._planned()
        result = read_whole(plan.tasks, plan.schema)
        if self._filter is not None:
            result = result.filter(self._filter)
        return result.select(self._out_columns(plan))

    def to_batches(self, batch_rows: int = BATCH_ROWS) -> pa.RecordBatchReader:
        """The rows as a `pyarrow.RecordBatchReader` that reads as it is consumed: file after
        file, at most `batch_rows` rows a batch, so memory holds a few row groups (files are
        opened lazily; a reader consumed once)."""
        plan = self._planned()
        return pa.RecordBatchReader.from_batches(self.schema, self._stream(plan, batch_rows))

    def _stream(self, plan: TaskPlan, batch_rows: int) -> Iterator[pa.RecordBatch]:
        out = self._out_columns(plan)
        for task in plan.tasks:
            for batch in read_task(task, batch_rows=batch_rows):
                if self._filter is None:
                    if batch.num_rows:
                        yield batch.select(out)
                    continue
                # (a Table: pyarrow 19's RecordBatch.filter fails when no row is left)
                kept = pa.Table.from_batches([batch]).filter(self._filter).select(out)
                yield from (b for b in kept.to_batches() if b.num_rows)

    def to_pandas(self, **kwargs: Any) -> pd.DataFrame:
        """The rows as a pandas DataFrame (`pyarrow.Table.to_pandas(**kwargs)`)."""
        return self.to_arrow().to_pandas(**kwargs)

    def to_polars(self) -> pl.DataFrame:
        """The rows as a polars DataFrame (needs polars)."""
        polars = _optional("polars", "to_polars")
        frame: pl.DataFrame = polars.from_arrow(self.to_arrow())
        return frame

    def to_duckdb(self, con: duckdb.DuckDBPyConnection | None = None,
                  name: str = "paimon") -> duckdb.DuckDBPyConnection:
        """The rows registered as the view `name` of a DuckDB connection (a new in-memory one
        by default), which is returned: `scan.to_duckdb(con, "orders").sql("SELECT ...")`.
        The rows are read once into Arrow and queried in place (needs duckdb)."""
        duckdb_module = _optional("duckdb", "to_duckdb")
        con = duckdb_module.connect() if con is None else con
        con.register(name, self.to_arrow())
        return con


def _optional(module: str, method: str) -> Any:
    """An optional dependency, or ImportError saying which method needs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"TableScan.{method} needs {module} (pip install {module})") from exc


@overload
def read_arrow(table: TableLike, where: Predicate | str | None = ...,
               snapshot: int | None = ..., columns: Sequence[str] | None = ..., *,
               mode: str = ..., with_stats: Literal[False] = ...,
               filesystem: FileSystemLike | None = ...) -> pa.Table: ...


@overload
def read_arrow(table: TableLike, where: Predicate | str | None = ...,
               snapshot: int | None = ..., columns: Sequence[str] | None = ..., *,
               mode: str = ..., with_stats: Literal[True],
               filesystem: FileSystemLike | None = ...) -> tuple[pa.Table, ReadStats]: ...


def read_arrow(table: TableLike, where: Predicate | str | None = None,
               snapshot: int | None = None, columns: Sequence[str] | None = None, *,
               mode: str = "FAILFAST", with_stats: bool = False,
               filesystem: FileSystemLike | None = None) -> pa.Table | tuple[pa.Table, ReadStats]:
    """`TableScan(table, where, columns, snapshot).to_arrow()`: the table's rows as a
    `pyarrow.Table`; `with_stats=True` (kept for older callers; the scan's `stats` is the new
    way) answers `(rows, ReadStats)`."""
    scan = TableScan(table, where, columns, snapshot, mode=mode, filesystem=filesystem)
    rows = scan.to_arrow()
    return (rows, scan.stats) if with_stats else rows

