"""Floor 4, Paimon tables: `metadata` holds `Table`, which composes `fileio` (every byte of a
table goes through a `FileIO`; on S3 `s3_reads` makes each read one request), `schema`,
`snapshots`, `partitions`, `manifests`, `indexes` and `plan`; `merge` is the pyarrow
merge-on-read, `predicates` turns a filter into what each data file's indexes, partitions and
Arrow can answer, `arrow_types` maps Paimon types to Arrow and Spark. Writing: `commit`
publishes a snapshot (manifests, `binary_row` partitions, atomic create), `file_index_rewrite`
adds file indexes to data files, `delete` deletes rows as deletion vectors."""

from paimon_schema.table.delete import delete_where
from paimon_schema.table.errors import CommitConflict, TableError
from paimon_schema.table.file_index_rewrite import rewrite_file_index
from paimon_schema.table.metadata import Table

__all__ = ["CommitConflict", "Table", "TableError", "delete_where", "rewrite_file_index"]
