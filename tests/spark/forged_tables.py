"""Write small Paimon append tables from Python, for tests that need data Java does not write
on demand: -0.0 and NaN under every index type, corrupt containers, external paths, big
multi-bucket tables with deletion vectors for the benchmarks.

The layout follows the Java-written fixtures byte for byte where readers look: `schema-0`
JSON, `snapshot-1`, a zstd Avro manifest list, manifest and index manifest with the writer
schemas of Paimon 1.x, BinaryRow partitions, Parquet data files, file-index containers
(`ps.write_file_index`, embedded below 500 bytes as Java does, else a `.index` sidecar) and
deletion vectors (`ps.write_deletion_vectors`, one index file per bucket). Only what a reader
needs is filled in (no value statistics, keys or sequence numbers).
"""

from __future__ import annotations

import io
import json
import struct
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

import paimon_schema as ps

_NS = "org.apache.paimon.avro.generated.record"


def _stats(name: str) -> dict:
    return {"type": "record", "name": f"{_NS}_{name}", "fields": [
        {"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"},
        {"name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}],
         "default": None}]}


def _opt(name: str, avro_type: Any) -> dict:
    return {"name": name, "type": ["null", avro_type], "default": None}


MANIFEST = fastavro.parse_schema({"type": "record", "name": _NS, "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"},
    {"name": "_PARTITION", "type": "bytes"}, {"name": "_BUCKET", "type": "int"},
    {"name": "_TOTAL_BUCKETS", "type": "int"},
    {"name": "_FILE", "type": {"type": "record", "name": f"{_NS}__FILE", "fields": [
        {"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"}, {"name": "_MIN_KEY", "type": "bytes"},
        {"name": "_MAX_KEY", "type": "bytes"}, {"name": "_KEY_STATS", "type": _stats("_FILE__KEY_STATS")},
        {"name": "_VALUE_STATS", "type": _stats("_FILE__VALUE_STATS")},
        {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"}, {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_SCHEMA_ID", "type": "long"}, {"name": "_LEVEL", "type": "int"},
        {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
        _opt("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
        _opt("_DELETE_ROW_COUNT", "long"), _opt("_EMBEDDED_FILE_INDEX", "bytes"),
        _opt("_FILE_SOURCE", "int"), _opt("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
        _opt("_EXTERNAL_PATH", "string"), _opt("_FIRST_ROW_ID", "long"),
        _opt("_WRITE_COLS", {"type": "array", "items": "string"})]}}]})

MANIFEST_LIST = fastavro.parse_schema({"type": "record", "name": _NS, "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"}, {"name": "_NUM_ADDED_FILES", "type": "long"},
    {"name": "_NUM_DELETED_FILES", "type": "long"},
    {"name": "_PARTITION_STATS", "type": _stats("_PARTITION_STATS")},
    {"name": "_SCHEMA_ID", "type": "long"}]})

INDEX_MANIFEST = fastavro.parse_schema({"type": "record", "name": _NS, "fields": [
    {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"},
    {"name": "_PARTITION", "type": "bytes"}, {"name": "_BUCKET", "type": "int"},
    {"name": "_INDEX_TYPE", "type": "string"}, {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"}, {"name": "_ROW_COUNT", "type": "long"},
    _opt("_DELETIONS_VECTORS_RANGES", {"type": "array", "items": ["null", {
        "type": "record", "name": f"{_NS}__DELETIONS_VECTORS_RANGES", "fields": [
            {"name": "f0", "type": "string"}, {"name": "f1", "type": "int"},
            {"name": "f2", "type": "int"}, _opt("_CARDINALITY", "long")]}]}),
    _opt("_EXTERNAL_PATH", "string")]})


def binary_row(values: Sequence[Any], types: Sequence[str]) -> bytes:
    """A serialized BinaryRow of INT / BIGINT / STRING values (None = null)."""
    arity = len(values)
    bitset = bytearray(((arity + 63 + 8) // 64) * 8)
    fixed = bytearray(8 * arity)
    variable = bytearray()
    base = len(bitset) + len(fixed)
    for i, (value, kind) in enumerate(zip(values, types)):
        if value is None:
            bit = i + 8
            bitset[bit >> 3] |= 1 << (bit & 7)
        elif kind in ("INT", "DATE"):
            struct.pack_into("<i", fixed, 8 * i, value)
        elif kind == "BIGINT":
            struct.pack_into("<q", fixed, 8 * i, value)
        else:
            raw = value.encode()
            if len(raw) <= 7:
                fixed[8 * i:8 * i + len(raw)] = raw
                fixed[8 * i + 7] = 0x80 | len(raw)
            else:
                struct.pack_into("<q", fixed, 8 * i, (base + len(variable)) << 32 | len(raw))
                variable += raw + bytes(-len(raw) % 8)
    return struct.pack(">i", arity) + bytes(bitset) + bytes(fixed) + bytes(variable)


def _avro(path: Path, schema: Any, records: list[dict]) -> int:
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, records, codec="zstandard")
    path.write_bytes(buffer.getvalue())
    return len(buffer.getvalue())


@dataclass(frozen=True)
class ForgedFile:
    """One data file the forge wrote: where, and which of the input rows it holds."""

    path: Path
    partition: tuple
    bucket: int
    rows: list[int]                 # input row numbers, in file order
    deleted: list[int]              # positions in the file the deletion vector deletes
    index_stored: str | None


def write_table(root: Path, data: pa.Table, types: Mapping[str, str], *,
                partition_keys: Sequence[str] = (), bucket_of: Sequence[int] | None = None,
                file_rows: int = 1 << 30, indexes: Mapping[str, Mapping[str, Mapping[str, Any]]] = {},
                deleted: Sequence[int] = (), threshold: int = 500, options: Mapping[str, str] = {},
                external_dir: Path | None = None, row_group_rows: int | None = None,
                file_format: str = "parquet", bitmap64: bool = False,
                empty_vectors: bool = False, value_stats: bool = False,
                parquet_options: Mapping[str, Any] = {}) -> list[ForgedFile]:
    """Write `data` as the append table `root` (one snapshot). `types` gives each column's
    Paimon type; `bucket_of` a bucket per row (default: all in bucket 0); `indexes`
    `{column: {index type: options}}`; `deleted` the input row numbers to delete with
    deletion vectors; `external_dir` puts the data files there (`_EXTERNAL_PATH`);
    `file_format` is `parquet` or `orc`; `bitmap64` writes 64-bit deletion-vector bins;
    `empty_vectors` gives the files without deleted rows an empty deletion vector;
    `value_stats` records min/max/null counts of the INT, BIGINT and STRING columns;
    `parquet_options` go to `pyarrow.parquet.write_table` (dictionary limits, ...)."""
    root.mkdir(parents=True)
    for sub in ("schema", "snapshot", "manifest", "index"):
        (root / sub).mkdir()
    names = data.column_names
    fields = [{"id": i, "name": n, "type": types[n]} for i, n in enumerate(names)]
    buckets = sorted(set(bucket_of)) if bucket_of is not None else [0]
    table_options = {"bucket": str(len(buckets)) if bucket_of is not None else "-1",
                     "file.format": file_format, **options}
    for index_type in {t for per in indexes.values() for t in per}:
        table_options[f"file-index.{index_type}.columns"] = ",".join(
            c for c, per in indexes.items() if index_type in per)
    if deleted:
        table_options["deletion-vectors.enabled"] = "true"
    (root / "schema" / "schema-0").write_text(json.dumps({
        "version": 3, "id": 0, "fields": fields, "highestFieldId": len(fields) - 1,
        "partitionKeys": list(partition_keys), "primaryKeys": [], "options": table_options,
        "timeMillis": 0}, indent=2))

    deleted_rows = set(deleted)
    columns = data.to_pydict()
    groups: dict[tuple, list[int]] = {}
    for row in range(data.num_rows):
        key = (tuple(columns[k][row] for k in partition_keys),
               bucket_of[row] if bucket_of is not None else 0)
        groups.setdefault(key, []).append(row)
    partition_types = [types[k].split()[0].upper() for k in partition_keys]
    entries, forged, dv_inputs = [], [], {}
    for (partition, bucket), rows in sorted(groups.items(), key=repr):
        part_path = "/".join(f"{k}={v}" for k, v in zip(partition_keys, partition))
        directory = (external_dir or root) / part_path / f"bucket-{bucket}"
        directory.mkdir(parents=True, exist_ok=True)
        prefix = uuid.uuid4()
        for n, start in enumerate(range(0, len(rows), file_rows)):
            chunk = rows[start:start + file_rows]
            name = f"data-{prefix}-{n}.{file_format}"
            table = data.take(pa.array(chunk))
            if file_format == "orc":
                import pyarrow.orc as orc

                orc.write_table(table, directory / name)
            else:
                pq.write_table(table, directory / name, row_group_size=row_group_rows,
                               **parquet_options)
            container = _container(table, types, indexes)
            stored, extra = None, []
            if container is not None and len(container) > threshold:
                (directory / f"{name}.index").write_bytes(container)
                stored, extra = f"{name}.index", [f"{name}.index"]
            elif container is not None:
                stored = "embedded"
            positions = [i for i, row in enumerate(chunk) if row in deleted_rows]
            if positions or (empty_vectors and deleted):
                dv_inputs.setdefault((partition, bucket), {})[name] = positions
            forged.append(ForgedFile(directory / name, partition, bucket, chunk, positions, stored))
            entries.append({
                "_VERSION": 2, "_KIND": 0, "_PARTITION": binary_row(partition, partition_types),
                "_BUCKET": bucket, "_TOTAL_BUCKETS": len(buckets) if bucket_of is not None else -1,
                "_FILE": {
                    "_FILE_NAME": name, "_FILE_SIZE": (directory / name).stat().st_size,
                    "_ROW_COUNT": len(chunk), "_MIN_KEY": b"", "_MAX_KEY": b"",
                    "_KEY_STATS": _empty_stats(),
                    "_VALUE_STATS": _value_stats(table, types)[0] if value_stats else _empty_stats(),
                    "_MIN_SEQUENCE_NUMBER": 0, "_MAX_SEQUENCE_NUMBER": 0, "_SCHEMA_ID": 0,
                    "_LEVEL": 0, "_EXTRA_FILES": extra, "_CREATION_TIME": None,
                    "_DELETE_ROW_COUNT": 0,
                    "_EMBEDDED_FILE_INDEX": container if stored == "embedded" else None,
                    "_FILE_SOURCE": 0,
                    "_VALUE_STATS_COLS": _value_stats(table, types)[1] if value_stats else [],
                    "_EXTERNAL_PATH": f"file:{directory / name}" if external_dir else None,
                    "_FIRST_ROW_ID": None, "_WRITE_COLS": None}})
    tag = uuid.uuid4()
    manifest = f"manifest-{tag}-0"
    size = _avro(root / "manifest" / manifest, MANIFEST, entries)
    lists = []
    for i, records in enumerate(([{
            "_VERSION": 2, "_FILE_NAME": manifest, "_FILE_SIZE": size,
            "_NUM_ADDED_FILES": len(entries), "_NUM_DELETED_FILES": 0,
            "_PARTITION_STATS": _empty_stats(), "_SCHEMA_ID": 0}], [])):
        lists.append(f"manifest-list-{tag}-{i}")
        _avro(root / "manifest" / lists[-1], MANIFEST_LIST, records)
    index_manifest = None
    if dv_inputs:
        index_entries = []
        for n, ((partition, bucket), files) in enumerate(sorted(dv_inputs.items(), key=repr)):
            data_bytes, ranges = ps.write_deletion_vectors(files, bitmap64=bitmap64)
            name = f"index-{tag}-{n}"
            (root / "index" / name).write_bytes(data_bytes)
            index_entries.append({
                "_VERSION": 1, "_KIND": 0, "_PARTITION": binary_row(partition, partition_types),
                "_BUCKET": bucket, "_INDEX_TYPE": "DELETION_VECTORS", "_FILE_NAME": name,
                "_FILE_SIZE": len(data_bytes), "_ROW_COUNT": len(files),
                "_DELETIONS_VECTORS_RANGES": [
                    {"f0": f, "f1": ranges[f][0], "f2": ranges[f][1], "_CARDINALITY": len(p)}
                    for f, p in files.items()],
                "_EXTERNAL_PATH": None})
        index_manifest = f"index-manifest-{tag}-0"
        _avro(root / "manifest" / index_manifest, INDEX_MANIFEST, index_entries)
    (root / "snapshot" / "snapshot-1").write_text(json.dumps({
        "version": 3, "id": 1, "schemaId": 0, "baseManifestList": lists[1],
        "deltaManifestList": lists[0], "changelogManifestList": None,
        "indexManifest": index_manifest, "commitUser": "forge", "commitIdentifier": 1,
        "commitKind": "APPEND", "timeMillis": 0, "totalRecordCount": data.num_rows,
        "deltaRecordCount": data.num_rows}, indent=2))
    (root / "snapshot" / "LATEST").write_text("1")
    (root / "snapshot" / "EARLIEST").write_text("1")
    return forged


def _value_stats(table: pa.Table, types: Mapping[str, str]) -> tuple[dict, list[str]]:
    """Paimon's `_VALUE_STATS` of the INT, BIGINT and STRING columns, and their names."""
    import pyarrow.compute as pc

    kinds = {n: types[n].split()[0].upper() for n in table.column_names}
    names = [n for n in table.column_names if kinds[n] in ("INT", "BIGINT", "STRING")]
    bounds = [pc.min_max(table.column(n)) for n in names]
    row_types = [kinds[n] for n in names]
    return ({"_MIN_VALUES": binary_row([b["min"].as_py() for b in bounds], row_types),
             "_MAX_VALUES": binary_row([b["max"].as_py() for b in bounds], row_types),
             "_NULL_COUNTS": [table.column(n).null_count for n in names]}, names)


def _empty_stats() -> dict:
    return {"_MIN_VALUES": binary_row([], []), "_MAX_VALUES": binary_row([], []), "_NULL_COUNTS": []}


def _container(table: pa.Table, types: Mapping[str, str],
               indexes: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> bytes | None:
    if not indexes:
        return None
    columns = {}
    for column, per_type in indexes.items():
        values = table.column(column).to_pylist()
        columns[column] = {t: ps.build_index(t, types[column], values, **opts) for t, opts in per_type.items()}
    return ps.write_file_index(columns)
