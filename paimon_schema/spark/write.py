"""Spark jobs that write to a Paimon table: `rewrite_file_index` builds each data file's
file-index container in its own Spark task (`mapInArrow` over a range whose ids index the
broadcast tasks) and commits once, on the driver, exactly as the Python function does."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from paimon_schema.query.predicate import Predicate
from paimon_schema.table.file_index_rewrite import (RewriteResult, build_container, commit_rewrite,
                                       plan_rewrite)

from paimon_schema.table.metadata import TableLike

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["rewrite_file_index"]


def rewrite_file_index(spark: SparkSession, table: TableLike,
                       columns: Mapping[str, str | Sequence[str]] | None = None,
                       options: Mapping[str, Any] | None = None,
                       where: Predicate | str | None = None, *, replace: bool = False) -> RewriteResult:
    """`paimon_schema.table.file_index_rewrite.rewrite_file_index` with one Spark task per data file: the
    executors read the files and build the containers, the driver collects them (the
    containers only, a few KB to a few MB each), writes sidecars and commits."""
    plan = plan_rewrite(table, columns, options, where, replace=replace)
    tasks = [item.task for item in plan.items]
    if not tasks:
        return commit_rewrite(plan, [])
    broadcast = spark.sparkContext.broadcast(tasks)

    def build(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids = batch.column(0).to_pylist()
            containers = [build_container(broadcast.value[i]) for i in ids]
            yield pa.RecordBatch.from_arrays([pa.array(ids, pa.int64()),
                                              pa.array(containers, pa.binary())],
                                             names=["id", "container"])

    ids = spark.range(0, len(tasks), 1, numPartitions=len(tasks))
    try:
        rows = ids.mapInArrow(build, "id long, container binary").collect()
    finally:
        broadcast.unpersist()
    containers: list[bytes | None] = [None] * len(tasks)
    for row in rows:
        containers[row["id"]] = bytes(row["container"])
    returned = [c for c in containers if c is not None]
    if len(returned) != len(containers):
        raise RuntimeError("the Spark job returned no container for some data files")
    return commit_rewrite(plan, returned)
