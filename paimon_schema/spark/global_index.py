"""`create_global_index` as a Spark job: the driver plans the row ranges
(`global_index_write.plan_global_index`), one Spark task per row range reads its data files and
writes the index file's bytes (`build_global_index`, through `mapInArrow` over a range whose ids
index the broadcast tasks), and the driver writes the files and commits once
(`commit_global_index`, retried as `create_with_retries` does): the same files, records and
snapshot as the Python function."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from paimon_schema.table.global_index_write import (BuiltIndex, GlobalIndexResult, IndexTask,
                                                    build_global_index, create_with_retries)

__all__ = ["create_global_index"]


def create_global_index(spark: Any, table: Any, column: str, index_type: str,
                        options: Mapping[str, Any] | None = None) -> GlobalIndexResult:
    """`paimon_schema.create_global_index` with one Spark task per row range (the index files
    come back to the driver: a few bytes a row). A conflicting commit is planned again and
    retried as the Python function's: only new row ranges are built again, by another job."""
    def build(tasks: Sequence[IndexTask]) -> list[BuiltIndex]:
        broadcast = spark.sparkContext.broadcast(list(tasks))

        def build_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                ids = batch.column(0).to_pylist()
                built = [build_global_index(broadcast.value[i]) for i in ids]
                yield pa.RecordBatch.from_arrays(
                    [pa.array(ids, pa.int64()), pa.array([b.data for b in built], pa.binary()),
                     pa.array([b.row_count for b in built], pa.int64()),
                     pa.array([b.index_meta for b in built], pa.binary())],
                    names=["id", "data", "row_count", "index_meta"])

        ids = spark.range(0, len(tasks), 1, numPartitions=len(tasks))
        try:
            rows = ids.mapInArrow(build_batches, "id long, data binary, row_count long, index_meta binary").collect()
        finally:
            broadcast.unpersist()
        files: list[BuiltIndex | None] = [None] * len(tasks)
        for row in rows:
            files[row["id"]] = BuiltIndex(bytes(row["data"]), row["row_count"], bytes(row["index_meta"]))
        returned = [f for f in files if f is not None]
        if len(returned) != len(files):
            raise RuntimeError("the Spark job returned no index file for some row ranges")
        return returned

    return create_with_retries(table, column, index_type, options, build)
