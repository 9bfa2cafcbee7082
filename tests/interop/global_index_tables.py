"""Data-evolution tables with global indexes built by pypaimon 2.1.0 (`create_global_index`)
and by pypaimon-rust 0.4.0 (`CALL sys.create_global_index`), read back from the files on disk:
each index manifest record with its index file's bytes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
from oracles import import_oracle

OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "file.format": "parquet"}


@dataclass(frozen=True)
class IndexFile:
    """One index manifest record and the bytes of the file it names."""

    record: dict[str, Any]
    data: bytes


def write_table(warehouse: Path, data: pa.Table, batches: int = 2) -> Any:
    """A new data-evolution append table `db.t` holding `data`, committed in `batches` appends."""
    import_oracle("pypaimon")
    from pypaimon import CatalogFactory, Schema

    catalog = CatalogFactory.create({"warehouse": str(warehouse.resolve())})
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(data.schema, options=OPTIONS), False)
    step = -(-data.num_rows // batches)
    for start in range(0, data.num_rows, step):
        builder = catalog.get_table("db.t").new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        try:
            write.write_arrow(data.slice(start, step))
            commit.commit(write.prepare_commit())
        finally:
            write.close()
            commit.close()
    return catalog


def pypaimon_index(catalog: Any, column: str, index_type: str, options: dict[str, str] | None = None) -> None:
    from pypaimon.globalindex.create_global_index import create_global_index

    create_global_index(catalog.get_table("db.t"), column, index_type, options=options)


def rust_index(warehouse: Path, column: str, index_type: str) -> None:
    import_oracle("pypaimon_rust")
    from pypaimon_rust.datafusion import SQLContext

    context = SQLContext()
    context.register_catalog("paimon", {"warehouse": str(warehouse.resolve())}, "db")
    context.set_current_catalog("paimon")
    context.sql(f"CALL sys.create_global_index(table => 'db.t', index_column => '{column}', "
                f"index_type => '{index_type}')")


def index_files(warehouse: Path) -> list[IndexFile]:
    """Every global-index record of the table's index manifests (deduplicated by file name)."""
    table = warehouse / "db.db" / "t"
    seen: dict[str, IndexFile] = {}
    for manifest in sorted((table / "manifest").glob("index-manifest-*")):
        with manifest.open("rb") as f:
            for record in fastavro.reader(f):
                if record.get("_GLOBAL_INDEX") is not None:
                    seen[record["_FILE_NAME"]] = IndexFile(
                        record, (table / "index" / record["_FILE_NAME"]).read_bytes())
    return list(seen.values())
