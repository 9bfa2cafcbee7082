"""The benchmarks' deletion-vector append table, written by pypaimon 2.1.0 itself.

`id` BIGINT (0..rows), `k` INT and `amount` DOUBLE random, `tag` STRING of 5000 distinct values;
unaware bucket, Parquet, `deletion-vectors.enabled`; one commit (so one data file) per slice
of `rows / files` rows. Written by pypaimon because pypaimon 2.1.0 cannot read the manifests of
the reference harness's Paimon 1.0 jar (they lack `_VALUE_STATS_COLS`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

DATABASE, NAME = "bench", "t"
FIELDS = [("id", "BIGINT"), ("k", "INT"), ("amount", "DOUBLE"), ("tag", "STRING")]


def write_table(warehouse: Path, rows: int, files: int, rng: np.random.Generator,
                **options: str) -> Path:
    """Write the table under `warehouse` (extra table `options` beside the fixed ones) and
    return its directory."""
    from pypaimon import CatalogFactory, Schema

    tags = pa.array([f"tag-{i:04d}" for i in range(5000)])
    data = pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                     "k": pa.array(rng.integers(0, 1_000_000, rows, dtype=np.int32)),
                     "amount": pa.array(rng.random(rows) * 1000),
                     "tag": tags.take(pa.array(rng.integers(0, len(tags), rows)))})
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DATABASE, True)
    table_options = {"bucket": "-1", "deletion-vectors.enabled": "true", "file.format": "parquet",
                     **options}
    catalog.create_table(f"{DATABASE}.{NAME}",
                         Schema.from_pyarrow_schema(data.schema, options=table_options), False)
    table = catalog.get_table(f"{DATABASE}.{NAME}")
    bounds = np.linspace(0, rows, files + 1).astype(int)
    for start, stop in zip(bounds[:-1], bounds[1:]):
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        try:
            write.write_arrow(data.slice(start, stop - start))
            commit.commit(write.prepare_commit())
        finally:
            write.close()
            commit.close()
    return warehouse / f"{DATABASE}.db" / NAME
