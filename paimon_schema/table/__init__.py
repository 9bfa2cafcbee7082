"""Floor 4, Paimon tables: `metadata` holds `Table`, which composes `fileio` (every byte of a
table goes through a `FileIO`; on S3 `s3_reads` makes each read one request), `schema`,
`snapshots`, `partitions`, `manifests`, `indexes` and `plan`; `Table.scan` makes a
`scan.TableScan` (files, statistics, Arrow / pandas / polars / DuckDB, streaming batches;
`read_arrow` in one call), `merge` is the pyarrow merge-on-read, `predicates` turns a filter into
what each data file's indexes, partitions and Arrow can answer, `arrow_types` maps Paimon types
to Arrow and Spark. Writing: `commit` publishes a snapshot (manifests, `binary_row` partitions,
atomic create; `retry` retries a lost race as Java does), `file_index_rewrite` adds file indexes
to data files, `delete` deletes rows as deletion vectors, `global_index_write` builds btree/bitmap
global indexes (`global_indexes` lists them and prunes reads with them). `s3` holds the S3 writes of `S3FileIO`."""

from paimon_schema.table.delete import delete_where
from paimon_schema.table.errors import CommitConflict, TableError
from paimon_schema.table.file_index_rewrite import rewrite_file_index
from paimon_schema.table.fileio import S3FileIO
from paimon_schema.table.global_index_write import create_global_index
from paimon_schema.table.merge import ReadStats
from paimon_schema.table.metadata import Table
from paimon_schema.table.scan import TableScan, read_arrow
from paimon_schema.table.snapshots import Snapshot

__all__ = ["CommitConflict", "ReadStats", "S3FileIO", "Snapshot", "Table", "TableError", "TableScan",
           "create_global_index", "delete_where", "read_arrow", "rewrite_file_index"]
