"""Floor 4, Paimon tables: `metadata` reads snapshots, schemas and manifests (`Table`),
`merge` is the pyarrow merge-on-read, `predicates` turns a filter into what each data file's
indexes, partitions and Arrow can answer, `arrow_types` maps Paimon types to Arrow and Spark."""

from paimon_schema.table.metadata import Table, TableError

__all__ = ["Table", "TableError"]
