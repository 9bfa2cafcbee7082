"""`paimon-schema table DIR [files|dv|indexes|query]`: a Paimon table seen through its metadata.

Everything a person would otherwise pass by hand to `dump` and `query` comes from the table:
column types from the schema (a container's `m[k]` takes map `m`'s value type), deletion-vector
ranges and cardinalities from the index manifest, row counts from the data manifests. Each view
is one JSON document (`--json`) and the lines a person reads are made from it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.cli.arguments import EXIT_BAD_FILE, EXIT_OK, EXIT_USAGE
from paimon_schema.cli import presenters
from paimon_schema.layouts.registry import INDEX_TYPES
from paimon_schema.table.errors import TableError
from paimon_schema.table.indexes import in_file_index
from paimon_schema.table.manifests import DataFile
from paimon_schema.table.merge import ReadStats, global_index_pruning
from paimon_schema.table.metadata import Table
from paimon_schema.table.schema import DataField, TableSchema, type_root
from paimon_schema.table.snapshots import Snapshot

# -- pieces -------------------------------------------------------------------------------------


def type_text(raw: str | dict) -> str:
    """A schema type as one line: `INT NOT NULL`, `MAP<STRING, INT>`, `ROW<a INT, b STRING>`."""
    if isinstance(raw, str):
        return raw
    root = type_root(raw)
    nullable = " NOT NULL" if str(raw.get("type", "")).upper().endswith("NOT NULL") else ""
    if root in ("ARRAY", "MULTISET"):
        return f"{root}<{type_text(raw['element'])}>{nullable}"
    if root == "MAP":
        return f"MAP<{type_text(raw['key'])}, {type_text(raw['value'])}>{nullable}"
    if root == "ROW":
        inner = ", ".join(f"{f['name']} {type_text(f['type'])}" for f in raw.get("fields", ()))
        return f"ROW<{inner}>{nullable}"
    return str(raw.get("type", raw))


def column_type(schema: TableSchema, column: str) -> str | None:
    """The data type of a container column in `schema`: the column's own type, or for
    `m[k]` (a map key's index) the value type of map `m`; None when it is not atomic."""
    name, bracket, _ = column.partition("[")
    field = schema.by_name.get(name if bracket else column)
    if field is None:
        return None
    raw: Any = field.type
    if bracket:
        if not isinstance(raw, dict) or type_root(raw) != "MAP":
            return None
        raw = raw.get("value")
    return raw if isinstance(raw, str) and DataField(0, "", raw).atomic_type is not None else None


def _n(count: int, noun: str, plural: str = "") -> str:
    """`1 row`, `4,000 rows`, `2 indexes`."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def _deleted(counts: dict[str, int], f: DataFile) -> int | None:
    """The rows the file's deletion vector deletes (`Table.deleted_counts`), None without one."""
    return None if f.deletion_file is None else counts[f.path]


def _deletion_vector(table: Table, f: DataFile) -> BitMap | BitMap64:
    """The deleted positions of a data file that has a deletion file."""
    bitmap = table.deletion_vector(f)
    assert bitmap is not None, "only None without a deletion file"
    return bitmap


def _table_kind(schema: TableSchema) -> str:
    kind = "primary-key" if schema.primary_keys else "append"
    traits = []
    if schema.deletion_vectors:
        traits.append("deletion vectors")
    if schema.data_evolution:
        traits.append("data evolution")
    bucket = schema.options.get("bucket", "-1")
    if bucket == "-1":
        traits.append("dynamic buckets" if schema.primary_keys else "unaware buckets")
    else:
        traits.append(_n(int(bucket), "bucket") if bucket.lstrip("-").isdigit() else f"bucket {bucket}")
    return f"{kind} table ({', '.join(traits)})"


def _index_options(schema: TableSchema) -> dict[str, list[str]]:
    """{index type: columns} from the `file-index.<type>.columns` options (what a build
    without `--index` builds, not what the files hold)."""
    out: dict[str, list[str]] = {}
    for key, value in schema.options.items():
        if key.startswith("file-index.") and key.endswith(".columns"):
            out[key[len("file-index."):-len(".columns")]] = [c.strip() for c in value.split(",") if c.strip()]
    return out


def _indexes_present(table: Table, files: list[DataFile]) -> tuple[dict[str, dict[str, int]], int]:
    """{index type: {column: data files whose container holds it}} over the live files, and
    how many containers do not parse (`table DIR indexes` names them)."""
    out: dict[str, dict[str, int]] = {}
    unreadable = 0
    for f in files:
        try:
            container = table.file_index(f)
        except ps.FormatError:
            unreadable += 1
            continue
        for e in [] if container is None else container.entries:
            per_column = out.setdefault(e.index_type, {})
            per_column[e.column] = per_column.get(e.column, 0) + 1
    return {t: out[t] for t in sorted(out)}, unreadable


# -- views --------------------------------------------------------------------------------------


def overview(table: Table, snapshot: Snapshot | int | None) -> dict[str, Any]:
    snap = snapshot if isinstance(snapshot, Snapshot) else table.snapshot(snapshot)
    schema = table.schema(None if snap is None else snap.schema_id)
    files = table.data_files(snap) if snap is not None else []
    index_files = table.index_files(snap) if snap is not None else []
    kinds: dict[str, int] = {}
    for ix in index_files:
        kinds[ix.index_type] = kinds.get(ix.index_type, 0) + 1
    counts = table.deleted_counts(files)
    deleted = [counts[f.path] for f in files if f.deletion_file is not None]
    present, unreadable = _indexes_present(table, files)
    return {
        "table": table.path, "kind": _table_kind(schema), "schema_id": schema.id,
        "columns": [{"name": f.name, "type": type_text(f.type)} for f in schema.fields],
        "partition_keys": list(schema.partition_keys), "primary_keys": list(schema.primary_keys),
        "file_indexes": present, "unreadable_file_indexes": unreadable,
        "file_index_options": _index_options(schema),
        "snapshot": None if snap is None else {"id": snap.id, "commit_kind": snap.commit_kind,
                                               "time_millis": snap.time_millis},
        "data_files": len(files), "rows": sum(f.row_count for f in files),
        "files_with_deletion_vectors": len(deleted),
        "rows_deleted": sum(deleted),
        "files_with_file_index": sum(1 for f in files if f.index_stored is not None),
        "index_files": kinds,
    }


def overview_lines(doc: dict[str, Any]) -> Iterator[str]:
    yield f"{doc['table']}: Paimon {doc['kind']}"
    yield f"  schema {doc['schema_id']}: " + ", ".join(f"{c['name']} {c['type']}" for c in doc["columns"])
    keys = [f"partitioned by {', '.join(doc['partition_keys'])}" if doc["partition_keys"] else "",
            f"primary key {', '.join(doc['primary_keys'])}" if doc["primary_keys"] else ""]
    if any(keys):
        yield "  " + "; ".join(k for k in keys if k)
    if doc["file_indexes"]:
        total = doc["data_files"]
        yield "  file indexes: " + "; ".join(
            f"{t} on " + ", ".join(c if n == total else f"{c} ({n} of {_n(total, 'file')})"
                                   for c, n in columns.items())
            for t, columns in doc["file_indexes"].items())
    if doc["unreadable_file_indexes"]:
        n = doc["unreadable_file_indexes"]
        yield (f"  {_n(n, 'file index', 'file indexes')} {'does' if n == 1 else 'do'} not "
               f"parse (see `table DIR indexes`)")
    snap = doc["snapshot"]
    if snap is None:
        yield "  no snapshot: nothing committed yet"
        return
    deleted = doc["rows_deleted"]
    yield (f"  snapshot {snap['id']} ({snap['commit_kind']}): {_n(doc['data_files'], 'data file')}, "
           f"{_n(doc['rows'], 'row')}" + (f", {_n(deleted, 'row')} deleted" if deleted else ""))
    yield (f"  {doc['files_with_deletion_vectors']} with deletion vectors, "
           f"{doc['files_with_file_index']} with a file index"
           + ("".join(f"; {_n(n, t + ' index file')}" for t, n in doc["index_files"].items())))


def files(table: Table, snapshot: Snapshot | int | None) -> dict[str, Any]:
    data_files = table.data_files(snapshot)
    counts = table.deleted_counts(data_files)
    return {"table": table.path, "files": [
        {"partition": f.partition_path, "bucket": f.bucket, "level": f.level, "file": f.file_name,
         "path": f.path, "rows": f.row_count, "deleted": _deleted(counts, f), "size": f.file_size,
         "schema_id": f.schema_id, "file_index": f.index_stored,
         "deletion_vector": None if f.deletion_file is None else f.deletion_file.index_file}
        for f in _sorted(data_files)]}


def _sorted(data_files: list[DataFile]) -> list[DataFile]:
    return sorted(data_files, key=lambda f: (f.partition_path, f.bucket, -f.level, f.file_name))


def files_lines(doc: dict[str, Any]) -> Iterator[str]:
    rows = [(_where(f), str(f["level"]), f["file"], f"{f['rows']:,}",
             "-" if f["deleted"] is None else f"{f['deleted']:,}", f"{f['size']:,}",
             f["file_index"] or "-") for f in doc["files"]]
    yield from _table(("partition/bucket", "level", "file", "rows", "deleted", "bytes", "file index"), rows)
    yield f"{_n(len(rows), 'data file')}, {_n(sum(f['rows'] for f in doc['files']), 'row')}"


def _where(f: dict[str, Any]) -> str:
    return f"{f['partition']}/bucket-{f['bucket']}" if f["partition"] else f"bucket-{f['bucket']}"


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> Iterator[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    numeric = [h in ("level", "rows", "deleted", "bytes") for h in header]
    for row in (header, *rows):
        yield "  ".join(c.rjust(w) if n and row is not header else c.ljust(w)
                        for c, w, n in zip(row, widths, numeric)).rstrip()


def deletion_vectors(table: Table, snapshot: Snapshot | int | None, limit: int | None) -> dict[str, Any]:
    out = []
    for f in _sorted(table.data_files(snapshot)):
        dv = f.deletion_file
        if dv is None:
            continue
        bitmap = _deletion_vector(table, f)
        out.append({"partition": f.partition_path, "bucket": f.bucket, "file": f.file_name,
                    "rows": f.row_count, "index_file": dv.index_file, "offset": dv.offset,
                    "length": dv.length, "bitmap64": isinstance(bitmap, BitMap64),
                    "cardinality": len(bitmap), "manifest_cardinality": dv.cardinality,
                    "positions": presenters.positions_json(bitmap),
                    "_text": presenters.positions_text(bitmap, limit or 1 << 62)})
    return {"table": table.path, "deletion_vectors": out}


def dv_lines(doc: dict[str, Any]) -> Iterator[str]:
    for d in doc["deletion_vectors"]:
        bits = "64-bit" if d["bitmap64"] else "32-bit"
        yield (f"{_where(d)}/{d['file']}: {d['cardinality']:,} of {_n(d['rows'], 'row')} deleted  "
               f"({d['index_file']} at {d['offset']}, {d['length']} bytes, {bits})")
        yield f"  {d['_text']}"
    total = sum(d["cardinality"] for d in doc["deletion_vectors"])
    yield f"{_n(len(doc['deletion_vectors']), 'deletion vector')}, {_n(total, 'row')} deleted"


def indexes(table: Table, snapshot: Snapshot | int | None) -> dict[str, Any]:
    """Every data file's container, each blob opened with its column's type from the schema
    the file was written with."""
    out: list[dict[str, Any]] = []
    for f in _sorted(table.data_files(snapshot)):
        container = table.file_index(f)
        if container is None:
            continue
        schema = table.schema(f.schema_id)
        entries = []
        paths = presenters.entry_paths(container)
        for i, e in enumerate(container.entries):
            data_type = column_type(schema, e.column)
            entry: dict[str, Any] = {"column": e.column, "index_type": e.index_type,
                                     "data_type": data_type,
                                     "size": None if e.blob is None else len(e.blob)}
            if e.blob is None:
                entry["summary"] = "empty (no row has a value)"
            elif e.index_type not in INDEX_TYPES:
                entry["summary"] = f"no reader for index type {e.index_type!r}"
            elif data_type is None:
                field = schema.by_name.get(e.column.partition("[")[0])
                entry["summary"] = (f"no reader for a {type_text(field.type)} column" if field
                                    else f"column {e.column!r} is not in schema {schema.id}")
            else:
                try:
                    opened = presenters.open_blob(e.index_type, e.blob, data_type)
                    entry["summary"] = presenters.LAYOUTS[e.index_type].summary(opened)
                    entry["index"] = presenters.LAYOUTS[e.index_type].json(opened)
                except presenters.UsageError as exc:
                    entry["summary"] = str(exc)
                except ps.FormatError as exc:
                    entry.update(_blob_error(f, e, paths[i], exc))
            entries.append(entry)
        out.append({"partition": f.partition_path, "bucket": f.bucket, "file": f.file_name,
                    "rows": f.row_count, "stored": f.index_stored, "indexes": entries})
    return {"table": table.path, "files": out,
            "global_indexes": [g.as_dict() for g in table.global_indexes(snapshot)],
            "corrupt": sum("error" in e for f in out for e in f["indexes"])}


def _blob_error(f: DataFile, e: ps.IndexEntry, path: str, exc: ps.FormatError) -> dict[str, Any]:
    """A corrupt blob: the file it lies in, the offset in that file (a sidecar; for a
    container embedded in the manifest, in the container) and the offset in the blob."""
    located = in_file_index(exc.within(f"{path}.blob", e.offset), f)
    blob = "" if exc.offset is None else f"; {exc.offset} in the blob"
    at = "" if located.offset is None else f", offset {located.offset}{blob}"
    return {"summary": f"CORRUPT: {exc.reason} ({located.file}: {located.path}{at})",
            "error": {"file": located.file, "offset": located.offset, "blob_offset": exc.offset,
                      "path": located.path, "reason": exc.reason}}


def indexes_lines(doc: dict[str, Any]) -> Iterator[str]:
    for f in doc["files"]:
        yield f"{_where(f)}/{f['file']}: {_n(f['rows'], 'row')}, index {f['stored']}"
        for e in f["indexes"]:
            size = "" if e["size"] is None else f", {_n(e['size'], 'byte')}"
            yield f"  {e['column']!r} {e['index_type']} ({e['data_type'] or '-'}{size}): {e['summary']}"
    corrupt = f"; {_n(doc['corrupt'], 'corrupt index', 'corrupt indexes')}" if doc["corrupt"] else ""
    yield f"{_n(len(doc['files']), 'data file')} with a file index{corrupt}"
    for g in doc["global_indexes"]:
        column = g["column"] if g["column"] is not None else f"field {g['field_id']}"
        first, last = g["row_range"]
        read = "" if g["kind"] == "sorted" else f" ({g['kind']}: listed, not read)"
        yield (f"global {g['index_type']} on {column!r}: rows {first}..{last}, {g['file']}, "
               f"{_n(g['size'], 'byte')}, {_n(g['rows'], 'row')}{read}")
    if doc["global_indexes"]:
        yield f"{_n(len(doc['global_indexes']), 'global index file')}"


def query(table: Table, where: str, snapshot: Snapshot | int | None) -> dict[str, Any]:
    """What the table's metadata says about `where` (Spark SQL) for each data file a read
    reads: skipped by its partition values, skipped or narrowed by its file index (deletion
    vector applied), or read whole."""
    from paimon_schema.query.sql import SqlNotUnderstood, parse_sql
    from paimon_schema.table import predicates as preds
    from paimon_schema.table.arrow_types import arrow_schema

    try:
        predicate = parse_sql(where)
    except SqlNotUnderstood as exc:
        raise presenters.UsageError(f"--where: {exc}") from exc
    plan = table.plan(snapshot)
    preds.check_columns(predicate, plan.schema)
    columns = sorted({leaf.column for leaf in preds.leaves(predicate)})
    preds.to_arrow(predicate, arrow_schema(plan.schema, columns))     # literals fit their columns
    out = []
    counts = table.deleted_counts(plan.files)
    pruning = global_index_pruning(table, plan, predicate, "FAILFAST", ReadStats())
    for f in plan.files:
        record = {"partition": f.partition_path, "bucket": f.bucket, "file": f.file_name,
                  "rows": f.row_count, "deleted": _deleted(counts, f)}
        verdict = preds.partition_verdict(predicate, f.partition)
        if verdict is False:
            record.update(result="skip", by="partition")
        else:
            record.update(_index_verdict(table, plan.schema, f, predicate, verdict))
            if pruning is not None and verdict is None and record["result"] == "remain":
                record.update(_global_verdict(pruning.candidates(f)))
        out.append(record)
    return {"table": table.path, "where": where,
            "snapshot": None if plan.snapshot is None else plan.snapshot.id, "files": out}


def _index_verdict(table: Table, schema: TableSchema, f: DataFile, predicate: Any,
                   verdict: bool | None) -> dict[str, Any]:
    from paimon_schema.table import predicates as preds

    if verdict is True:
        return {"result": "remain", "by": "partition (every row matches)"}
    container = table.file_index(f)
    if container is None:
        return {"result": "remain", "by": "no file index"}
    file_predicate, row_type = preds.for_file(predicate, schema, table.schema(f.schema_id))
    dv = table.deletion_vector(f)
    try:
        result = ps.evaluate(container, file_predicate, row_type, row_count=f.row_count,
                             deletion_vector=dv)
    except ps.FormatError as exc:           # located in the container: the sidecar's offsets
        raise in_file_index(exc, f) from exc
    except ps.SchemaError as exc:           # an index its column's type cannot have
        raise in_file_index(ps.FormatError(str(exc)), f) from exc
    kind = presenters.result_kind(result)
    record: dict[str, Any] = {"result": kind, "by": "file index"}
    if kind == "rows" and result.rows is not None:
        record["candidates"] = presenters.positions_json(result.rows)
        record["_text"] = presenters.positions_text(result.rows)
    return record


def _global_verdict(kept: Any) -> dict[str, Any]:
    """A file the file index keeps whole, narrowed by the global indexes' row ids."""
    if kept is None:
        return {}
    if not kept:
        return {"result": "skip", "by": "global index"}
    return {"result": "rows", "by": "global index", "candidates": presenters.positions_json(kept),
            "_text": presenters.positions_text(kept)}


def query_lines(doc: dict[str, Any]) -> Iterator[str]:
    yield f"{doc['table']} WHERE {doc['where']} (snapshot {doc['snapshot']})"
    skipped = {"partition": 0, "file index": 0, "global index": 0}
    may = total = 0
    for f in doc["files"]:
        total += f["rows"]
        live = f["rows"] - (f["deleted"] or 0)
        name = f"{_where(f)}/{f['file']}"
        if f["result"] == "skip":
            skipped[f["by"]] += 1
            yield f"  {name}: SKIP by {f['by']}"
        elif f["result"] == "rows":
            may += f["candidates"]["cardinality"]
            yield (f"  {name}: ROWS {f['candidates']['cardinality']:,} of {f['rows']:,} "
                   f"{f['_text']}")
        else:
            may += live
            yield f"  {name}: REMAIN ({f['by']}): read {_n(live, 'row')}"
    n = len(doc["files"])
    by_global = f", {skipped['global index']} by global index" if skipped["global index"] else ""
    yield (f"{_n(sum(skipped.values()), 'file')} of {n} skipped "
           f"({skipped['partition']} by partition, {skipped['file index']} by file index{by_global}); "
           f"at most {_n(may, 'row')} of {total:,} can match")


def _pairs(items: list[str], what: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise presenters.UsageError(f"{what} {item!r} is not KEY=VALUE")
        pairs.append((key.strip(), value.strip()))
    return pairs


def build_indexes(table: Table, args: argparse.Namespace) -> dict[str, Any]:
    """`table DIR index`: `ps.rewrite_file_index`, one new snapshot."""
    columns: dict[str, list[str]] = {}
    for column, types in _pairs(args.index, "--index"):
        columns.setdefault(column, []).extend(t.strip() for t in types.split(",") if t.strip())
    result = ps.rewrite_file_index(table, columns or None, dict(_pairs(args.option, "--option")),
                                   args.where, replace=args.replace)
    return {"table": table.path, "action": "index", "snapshot": result.snapshot_id,
            "files": result.files, "embedded": result.embedded,
            "sidecars": list(result.sidecars), "index_bytes": result.index_bytes}


def delete(table: Table, where: str, options: list[str]) -> dict[str, Any]:
    """`table DIR delete --where`: `ps.delete_where`, one new snapshot."""
    result = ps.delete_where(table, where, dict(_pairs(options, "--option")))
    return {"table": table.path, "action": "delete", "snapshot": result.snapshot_id,
            "rows_deleted": result.rows_deleted, "files": result.files,
            "index_files": list(result.index_files)}


def written_lines(doc: dict[str, Any]) -> Iterator[str]:
    if doc["snapshot"] is None:
        yield f"{doc['table']}: nothing to {doc['action']} (no snapshot written)"
    elif doc["action"] == "index":
        yield (f"{doc['table']}: snapshot {doc['snapshot']}: file indexes of "
               f"{_n(doc['files'], 'data file')} rebuilt ({doc['embedded']} embedded in the "
               f"manifest, {_n(len(doc['sidecars']), 'sidecar')}, {_n(doc['index_bytes'], 'byte')})")
    else:
        yield (f"{doc['table']}: snapshot {doc['snapshot']}: {_n(doc['rows_deleted'], 'row')} "
               f"deleted from {_n(doc['files'], 'data file')}")


def public(doc: Any) -> Any:
    """The JSON document without the text-only `_` keys."""
    if isinstance(doc, dict):
        return {k: public(v) for k, v in doc.items() if not k.startswith("_")}
    if isinstance(doc, list):
        return [public(v) for v in doc]
    return doc


def table_root(path: str) -> Path | None:
    """The Paimon table directory holding `path` (a parent with `schema/` and `snapshot/`)."""
    for parent in Path(path).resolve().parents:
        if (parent / "schema").is_dir() and (parent / "snapshot").is_dir():
            return parent
    return None


def data_file_near(path: str) -> tuple[Table, DataFile | None] | None:
    """The table holding `path` and the live data file whose `.index` sidecar it is (None when
    it is another file); None outside a table."""
    root = table_root(path)
    if root is None:
        return None
    table = Table.open(str(root))
    target = str(Path(path).resolve())
    for f in table.data_files():
        if f.index_sidecar is not None and str(Path(f.index_sidecar).resolve()) == target:
            return table, f
    return table, None


def global_index_type_near(path: str) -> str | None:
    """The column type of the global index file `path`, from the latest snapshot of the table
    it lies in; None for any other file."""
    root = table_root(path)
    if root is None:
        return None
    try:
        table = Table.open(str(root))
        target = Path(path).resolve()
        for g in table.global_indexes():
            if g.column is not None and Path(g.path).resolve() == target:
                return column_type(table.schema(), g.column)
    except (TableError, ps.FormatError, ps.SchemaError, OSError):
        return None
    return None


def types_near(path: str) -> dict[str, str]:
    """The column types of a file inside a table directory, for the containers' columns: the
    schema of the data file whose sidecar it is, else the latest schema; {} when the file is in
    no table (or the table does not read)."""
    try:
        near = data_file_near(path)
        if near is None:
            return {}
        table, data_file = near
        schema = table.schema(None if data_file is None else data_file.schema_id)
        columns = [f.name for f in schema.fields]
        data = table.io.read_bytes(str(Path(path).resolve()))
        if data[:8] == presenters.CONTAINER_MAGIC:
            columns += list(ps.FileIndexFile.parse(data).columns)
    except (TableError, ps.FormatError, ps.SchemaError, OSError):
        return {}
    return {c: t for c in columns if (t := column_type(schema, c)) is not None}


def open_table(path: str) -> Table:
    try:
        return Table.open(path)
    except TableError as exc:
        raise presenters.UsageError(str(exc)) from exc


# -- the command --------------------------------------------------------------------------------


def cmd_table(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.view in ("query", "delete") and not args.where:
        print(f"table: {args.view} needs --where CONDITION", file=err)
        return EXIT_USAGE
    if args.where and args.view not in ("query", "delete", "index"):
        print(f"table: --where goes with query, delete or index, not {args.view}", file=err)
        return EXIT_USAGE
    if (args.index or args.replace) and args.view != "index":
        print("table: --index and --replace go with index", file=err)
        return EXIT_USAGE
    if args.option and args.view not in ("index", "delete"):
        print("table: --option goes with index or delete", file=err)
        return EXIT_USAGE
    try:
        table = open_table(args.dir)
        version = None
        if args.snapshot is not None or args.tag is not None or args.as_of is not None:
            if args.view in ("index", "delete"):
                raise presenters.UsageError("--snapshot, --tag and --as-of go with the views; "
                                            "a write always builds on the latest snapshot")
            version = table.travel(args.snapshot, args.tag, args.as_of)
        doc, lines = _view(args, table, version)
    except ps.CommitConflict as exc:          # another writer won the snapshot: nothing written
        print(f"table: {exc} (nothing was written; run it again, or raise "
              f"--option commit.max-retries=N)", file=err)
        return EXIT_BAD_FILE
    except (presenters.UsageError, ps.SchemaError, TableError) as exc:
        print(f"table: {exc}", file=err)
        return EXIT_USAGE
    except ps.FormatError as exc:
        print("\n".join(presenters.format_error_lines(args.dir, exc)), file=err)
        return EXIT_BAD_FILE
    if args.json:
        json.dump(public(doc), out, ensure_ascii=False, default=str)
        out.write("\n")
    else:
        print("\n".join(lines(doc)), file=out)
    return EXIT_BAD_FILE if doc.get("corrupt") else EXIT_OK


Lines = Callable[[dict[str, Any]], Iterator[str]]


def _view(args: argparse.Namespace, table: Table,
          version: Snapshot | None) -> tuple[dict[str, Any], Lines]:
    if args.view == "files":
        return files(table, version), files_lines
    if args.view == "dv":
        return deletion_vectors(table, version, None if args.all else presenters.MAX_RANGES), dv_lines
    if args.view == "indexes":
        return indexes(table, version), indexes_lines
    if args.view == "query":
        return query(table, args.where, version), query_lines
    if args.view == "index":
        return build_indexes(table, args), written_lines
    if args.view == "delete":
        return delete(table, args.where, args.option), written_lines
    return overview(table, version), overview_lines
