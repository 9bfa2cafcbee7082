"""An independent writer oracle: pypaimon 2.1.0 driving pypaimon-rust 0.4.0's Rust writer.

With `write.native.enabled`, pypaimon hands Arrow batches to the Rust writer, which writes
bitmap V2, bloom-filter, BSI and range-bitmap file indexes (no Java, none of our code). The
table is a data-evolution append table (`row-tracking.enabled`, `data-evolution.enabled`).

Where the bytes land: one file-index container per data file. As in Java, a container no
larger than `file-index.in-manifest-threshold` (500 B by default) is embedded in the manifest
entry (`_FILE._EMBEDDED_FILE_INDEX`); a larger one is a sidecar `<data file>.index` beside the
data file, named in `_FILE._EXTRA_FILES`. Both are read here from the files on disk (manifests
with fastavro), not from pypaimon's in-memory metadata.

Pitfalls:
- Index options are per column, `file-index.<type>.<column>.<option>`; a type-wide
  `file-index.bitmap.index-block-size` is an invalid option for the Rust writer.
- When the Rust writer refuses the table (an invalid option, a non-parquet format, ...),
  pypaimon silently falls back to its Python writer, which writes no file index at all; the
  reason is only logged at DEBUG. `write_table` turns that into an error with the reason.
- The warehouse must be an absolute local path.
- pypaimon 2.1.0 declares `pyarrow<20`; it runs with newer pyarrow too.
- Appends never produce deletion vectors, so no DV file comes out of this writer.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

REQUIREMENTS = {"pypaimon": "2.1.0", "pypaimon-rust": "0.4.0"}
ADDED = 0          # manifest entry kind

#: {index type: {column: {option: value}}}, e.g. {"bitmap": {"i": {"index-block-size": "64b"}}}
IndexOptions = Mapping[str, Mapping[str, Mapping[str, str]]]


class RustWriterUnavailable(RuntimeError):
    """pypaimon / pypaimon-rust are missing here, or are not the pinned versions."""


@dataclass(frozen=True)
class WrittenFile:
    """One data file the Rust writer wrote, with its file-index container."""

    data_file: Path
    row_count: int
    container: bytes | None       # None when the file has no index
    stored: str                   # "embedded", or the sidecar's file name
    columns: dict[str, list]      # the file's column values, in row order


def require() -> None:
    """Raise RustWriterUnavailable unless the pinned packages are importable."""
    for name, version in REQUIREMENTS.items():
        try:
            found = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            raise RustWriterUnavailable(f"{name}=={version} is not installed") from None
        if found != version:
            raise RustWriterUnavailable(f"{name} {found} is installed, the oracle needs {version}")
    try:
        importlib.import_module("pypaimon_rust.datafusion")
    except ImportError as exc:
        raise RustWriterUnavailable(f"pypaimon_rust does not import: {exc}") from exc


def table_options(indexes: IndexOptions) -> dict[str, str]:
    """The table options of a data-evolution append table with these file indexes."""
    options = {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
               "write.native.enabled": "true", "file.format": "parquet"}
    for index_type, columns in indexes.items():
        options[f"file-index.{index_type}.columns"] = ",".join(columns)
        for column, column_options in columns.items():
            for key, value in column_options.items():
                options[f"file-index.{index_type}.{column}.{key}"] = str(value)
    return options


def write_table(data: pa.Table, warehouse: Path, indexes: IndexOptions,
                options: Mapping[str, str] | None = None, name: str = "t") -> list[WrittenFile]:
    """Write `data` once with the Rust writer into a new table `oracle.<name>` of `warehouse`;
    return its data files in row-id order. `options` adds table options (e.g.
    `file-index.in-manifest-threshold`)."""
    require()
    from pypaimon import CatalogFactory, Schema
    from pypaimon.write.native_write import NativeTableWrite

    catalog = CatalogFactory.create({"warehouse": str(Path(warehouse).resolve())})
    catalog.create_database("oracle", True)
    schema = Schema.from_pyarrow_schema(data.schema, options={**table_options(indexes), **(options or {})})
    catalog.create_table(f"oracle.{name}", schema, False)
    table = catalog.get_table(f"oracle.{name}")
    builder = table.new_batch_write_builder()
    with _fallback_reasons() as reasons:
        write = builder.new_write()
    if not isinstance(write, NativeTableWrite):
        raise RuntimeError(f"pypaimon fell back to its Python writer, which writes no file index: "
                           f"{'; '.join(reasons) or 'no reason logged'}")
    commit = builder.new_commit()
    try:
        write.write_arrow(data)
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()
    return _data_files(Path(table.table_path), data.column_names)


def _data_files(table_dir: Path, columns: list[str]) -> list[WrittenFile]:
    entries = [entry for manifest in sorted((table_dir / "manifest").glob("manifest-*"))
               if not manifest.name.startswith("manifest-list-")
               for entry in _records(manifest) if entry["_KIND"] == ADDED]
    entries.sort(key=lambda e: e["_FILE"]["_FIRST_ROW_ID"])
    return [_written(table_dir / f"bucket-{e['_BUCKET']}", e["_FILE"], columns) for e in entries]


def _records(manifest: Path) -> list[dict]:
    with manifest.open("rb") as f:
        return list(fastavro.reader(f))


def _written(bucket_dir: Path, meta: dict, columns: list[str]) -> WrittenFile:
    data_file = bucket_dir / meta["_FILE_NAME"]
    sidecars = [name for name in meta["_EXTRA_FILES"] if name.endswith(".index")]
    if meta["_EMBEDDED_FILE_INDEX"] is not None:
        container, stored = meta["_EMBEDDED_FILE_INDEX"], "embedded"
    elif sidecars:
        container, stored = (bucket_dir / sidecars[0]).read_bytes(), sidecars[0]
    else:
        container, stored = None, ""
    values = pq.read_table(data_file, columns=columns).to_pydict()
    return WrittenFile(data_file, meta["_ROW_COUNT"], container, stored, values)


@contextmanager
def _fallback_reasons() -> Iterator[list[str]]:
    """Collect what pypaimon logs (at DEBUG only) when it gives up on the Rust writer."""
    reasons: list[str] = []
    logger = logging.getLogger("pypaimon.write.write_builder")

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            reasons.append(record.getMessage())

    handler, level = Collect(logging.DEBUG), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield reasons
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
