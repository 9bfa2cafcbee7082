"""`create_global_index` as a Spark job: the driver plans the row ranges
(`global_index_write.plan_global_index`), one Spark task per row range reads its data files and
writes the index file's bytes (`build_global_index`, through `mapInArrow` over a range whose ids
index the broadcast tasks), and the driver writes the files and commits once
(`commit_global_index`): the same files, records and snapshot as the Python function."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from paimon_schema.table.global_index_write import (BuiltIndex, GlobalIndexResult, build_global_index,
                                                    commit_global_index, plan_global_index)

__all__ = ["create_global_index"]


def create_global_index(spark: Any, table: Any, column: str, index_type: str,
                        options: Mapping[str, Any] | None = None) -> GlobalIndexResult:
    """`paimon_schema.create_global_index` with one Spark task per row range (the index files
    come back to the driver: a few bytes a row)."""
    plan = plan_global_index(table, column, index_type, options)
    if not plan.tasks:
        return commit_global_index(plan, [])
    broadcast = spark.sparkContext.broadcast(plan.tasks)

    def build(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids = batch.column(0).to_pylist()
            built = [build_global_index(broadcast.value[i]) for i in ids]
            yield pa.RecordBatch.from_arrays(
                [pa.array(ids, pa.int64()), pa.array([b.data for b in built], pa.binary()),
                 pa.array([b.row_count for b in built], pa.int64()),
                 pa.array([b.index_meta for b in built], pa.binary())],
                names=["id", "data", "row_count", "index_meta"])

    ids = spark.range(0, len(plan.tasks), 1, numPartitions=len(plan.tasks))
    try:
        rows = ids.mapInArrow(build, "id long, data binary, row_count long, index_meta binary").collect()
    finally:
        broadcast.unpersist()
    built: list[BuiltIndex | None] = [None] * len(plan.tasks)
    for row in rows:
        built[row["id"]] = BuiltIndex(bytes(row["data"]), row["row_count"], bytes(row["index_meta"]))
    returned = [b for b in built if b is not None]
    if len(returned) != len(built):
        raise RuntimeError("the Spark job returned no index file for some row ranges")
    return commit_global_index(plan, returned)
