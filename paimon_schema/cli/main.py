"""`paimon-schema`: dump, verify and query Paimon index files, and a self-check against Java (`demo`).

Arguments and dispatch; how each layout is shown lives in `presenters`.

`query` answers a SQL-ish WHERE clause (or an ORDER BY ... LIMIT) over a container with
`ps.evaluate` / `ps.top_n`; `parse_where` turns the text into a `ps.col` predicate. `table`
(`cli.table`) shows a whole table from its schema and manifests; a file inside a table takes its
column types from there when none are given. Layouts go by the names of `layouts.registry`.

Exit codes: 0 success, 1 a file is malformed (or the demo found a mismatch), 2 a usage problem
(unknown layout, missing or unfit type, malformed WHERE, cannot read the file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.cli import hexdump
from paimon_schema.cli.coverage import check_coverage
from paimon_schema.cli.presenters import (
    INDEX_TYPES,
    LAYOUTS,
    SHOW_ALL,
    SPARK_EXTRA,
    Types,
    UsageError,
    count,
    dump_json,
    dump_layout,
    dump_lines,
    format_error_lines,
    layout_name,
    load,
    positions_json,
    positions_text,
    read_bytes,
    resolve,
    warnings_of,
)
from paimon_schema.layouts import registry
from paimon_schema.layouts.registry import detect
from paimon_schema.query.predicate import Predicate
from paimon_schema.query.where import WhereError, parse_where, sql_column, sql_text
from paimon_schema.values.types import DataType
from paimon_schema.cli.presenters import result_kind
from paimon_schema.cli.arguments import (EXIT_BAD_FILE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE,
                                         directory_argument, rows_argument, warehouse_argument)

MAX_ECHO = 200          # characters of the query echoed under its result



# -- types from the command line ----------------------------------------------------------------


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside parentheses (`DECIMAL(10, 2)` keeps its comma)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_row_type(text: str) -> dict[str, str]:
    """`"a:INT, b:DECIMAL(10, 2), `m[k]`:STRING"` -> {column: type}; UsageError if malformed.

    A name ends at its last colon (types have none); backticks around it are optional."""
    row_type: dict[str, str] = {}
    for part in _split_top_level(text):
        name, colon, data_type = part.rpartition(":")
        name = name.strip()
        if len(name) >= 2 and name[0] == name[-1] == "`":
            name = name[1:-1].replace("``", "`")
        if not colon or not name:
            raise UsageError(f"--row-type: {part.strip()!r} is not COLUMN:TYPE "
                             f"(e.g. --row-type \"a:INT,b:STRING\")")
        if name in row_type:
            raise UsageError(f"--row-type: column {name!r} is given twice")
        row_type[name] = _checked_type(data_type.strip(), f"--row-type {name!r}")
    return row_type


def _checked_type(data_type: str, where: str) -> str:
    try:
        DataType.parse(data_type)
    except ps.SchemaError as exc:
        raise UsageError(f"{where}: {exc}") from exc
    return data_type


def types_of(args: argparse.Namespace) -> Types:
    """`--type` and `--row-type`, checked."""
    data_type = args.type and _checked_type(args.type, "--type")
    row_type = parse_row_type(args.row_type) if args.row_type else {}
    return Types(data_type, row_type)


# -- query --------------------------------------------------------------------------------------


class BadFile(Exception):
    """A FormatError in one named file (exit 1)."""

    def __init__(self, path: str, error: ps.FormatError) -> None:
        super().__init__(str(error))
        self.path = path
        self.error = error


def _parsed(path: str, parse: Callable[[bytes], Any]) -> tuple[bytes, Any]:
    data = read_bytes(path)
    try:
        return data, parse(data)
    except ps.FormatError as exc:
        raise BadFile(path, exc) from exc


def load_container(path: str) -> ps.FileIndexFile:
    def parse(data: bytes) -> ps.FileIndexFile:
        if detect(data) != "file-index":
            raise UsageError("query needs a file-index container (no container magic)")
        return ps.FileIndexFile.parse(data)

    return _parsed(path, parse)[1]


@dataclass(frozen=True)
class DeletionVector:
    path: str
    offset: int
    length: int
    bitmap: BitMap | BitMap64


def _dv_range(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[:,]\s*(\d+)\s*", text)
    if match is None:
        raise UsageError(f"--dv-range {text!r} is not OFFSET:LENGTH (e.g. 1:24)")
    return int(match[1]), int(match[2])


def load_deletion_vector(path: str, dv_range: str | None) -> DeletionVector:
    """The bitmap at `--dv-range` (or the file's only bin) of a deletion-vector file."""
    offset_length = None if dv_range is None else _dv_range(dv_range)
    try:
        data = read_bytes(path)
    except UsageError as exc:               # named: the errors of `query` name its FILE
        raise UsageError(f"--dv {path}: {exc}") from exc
    try:
        if offset_length is not None:
            offset, length = offset_length
            return DeletionVector(path, offset, length, ps.read_deletion_vector(data, offset, length))
        f = ps.DeletionVectorFile.parse(data)
    except ps.FormatError as exc:
        raise BadFile(path, exc) from exc
    if len(f.bins) != 1:
        ranges = ", ".join(f"{b.offset}:{b.length}" for b in f.bins) or "none"
        raise UsageError(f"{path} holds {count(len(f.bins), 'bin')}: pass --dv-range "
                         f"OFFSET:LENGTH (its ranges: {ranges})")
    b = f.bins[0]
    return DeletionVector(path, b.offset, b.length, b.bitmap)


@dataclass(frozen=True)
class QueryRequest:
    """What `query` was asked: a predicate, or an ORDER BY ... LIMIT, plus a deletion vector."""

    predicate: Predicate | None
    order_by: str | None
    limit: int
    descending: bool
    nulls_first: bool
    row_count: int | None
    dv: DeletionVector | None

    def describe(self) -> str:
        if self.predicate is not None:
            return "WHERE " + sql_text(self.predicate)
        return (f"ORDER BY {sql_column(self.order_by or '')} "
                f"{'DESC' if self.descending else 'ASC'} "
                f"NULLS {'FIRST' if self.nulls_first else 'LAST'} LIMIT {self.limit}")


def query_request(args: argparse.Namespace, types: Types) -> QueryRequest:
    """The request, checked: exactly one of --where / --top-n, and a DV needs a row count."""
    if (args.where is None) == (args.top_n is None):
        raise UsageError("pass either --where or --top-n (Paimon pushes TopN down only "
                         "without a filter)")
    if args.top_n is not None and not args.order_by:
        raise UsageError("--top-n needs --order-by COLUMN")
    if args.top_n is None and (args.order_by or args.desc or args.nulls_first):
        raise UsageError("--order-by, --desc and --nulls-first go with --top-n")
    if args.top_n is not None and args.top_n < 0:
        raise UsageError("--top-n must not be negative")
    if args.order_by and types.of(args.order_by) is None:
        raise UsageError(f"no type for column {args.order_by!r}: add it to --row-type")
    if args.dv_range and not args.dv:
        raise UsageError("--dv-range goes with --dv FILE")
    if args.dv and args.row_count is None:
        raise UsageError("--dv needs --row-count N (the data file's row count, from its "
                         "manifest entry; inside its table it is found, or try `paimon-schema "
                         "table DIR query`)")
    try:
        predicate = parse_where(args.where, types) if args.where is not None else None
    except WhereError as exc:
        raise UsageError(f"--where: {exc}") from exc
    dv = load_deletion_vector(args.dv, args.dv_range) if args.dv else None
    return QueryRequest(predicate, args.order_by, args.top_n or 0, args.desc, args.nulls_first,
                        args.row_count, dv)


def run_query(fi: ps.FileIndexFile, request: QueryRequest, types: Types) -> ps.IndexResult:
    row_type = {c: t for c in [*fi.columns, *types.row_type] if (t := types.of(c)) is not None}
    dv = None if request.dv is None else request.dv.bitmap
    if request.predicate is not None:
        return ps.evaluate(fi, request.predicate, row_type, row_count=request.row_count,
                           deletion_vector=dv)
    assert request.order_by is not None     # query_request: --top-n comes with --order-by
    return ps.top_n(fi, request.order_by, request.limit, row_type,
                    ascending=not request.descending, nulls_first=request.nulls_first,
                    row_count=request.row_count, deletion_vector=dv)



def query_lines(path: str, request: QueryRequest, result: ps.IndexResult) -> Iterator[str]:
    kind = result_kind(result)
    if kind == "skip":
        yield f"{path}: SKIP (no row can match: skip the file)"
    elif result.rows is None:       # kind "remain"
        yield f"{path}: REMAIN (the indexes cannot narrow the rows: read the whole file)"
    else:
        of = f" of {request.row_count}" if request.row_count is not None else ""
        yield f"{path}: ROWS {len(result.rows)}{of} {positions_text(result.rows)}"
    described = request.describe()
    yield f"  {described if len(described) <= MAX_ECHO else described[:MAX_ECHO - 1] + '…'}"
    if request.dv is not None:
        dv = request.dv
        kind = "64-bit (bypasses the indexes, as in Java)" if isinstance(dv.bitmap, BitMap64) \
            else "32-bit"
        yield (f"  deletion vector {dv.path} ({dv.offset}, {dv.length}): {kind}, "
               f"{count(len(dv.bitmap), 'deleted row')}")


def query_json(path: str, request: QueryRequest, result: ps.IndexResult) -> dict[str, Any]:
    dv = request.dv
    return {"file": path, "query": request.describe(), "row_count": request.row_count,
            "deletion_vector": None if dv is None else {
                "file": dv.path, "offset": dv.offset, "length": dv.length,
                "positions": positions_json(dv.bitmap)},
            "result": result_kind(result),
            "rows": None if result.rows is None else positions_json(result.rows)}


# -- commands -----------------------------------------------------------------------------------


def cmd_dump(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    token = SHOW_ALL.set(args.all)
    try:
        _check_dump_options(args)
        types = types_for(args, args.file)
        data = read_bytes(args.file)
        name = dump_layout(args.layout) if args.layout != "auto" else None
        if args.column is not None:
            data, name, label = _one_blob(args, data, name)
            types = Types(types.of(args.column), types.row_type)     # the blob's own type
        else:
            label = args.file
        if args.extract:
            return _write_output(args, data, out)
        if args.hex or args.html:
            return _hex_dump(args, label, data, name, types, out)
        layout = resolve(name or "auto", data, types)
        model = layout.parse(data, types)
        if args.json:
            document = json.dumps(dump_json(label, layout, data, model), ensure_ascii=False)
            return _write_output(args, document + "\n", out)
        return _write_output(args, "\n".join(dump_lines(label, layout, data, model)) + "\n", out)
    except (UsageError, ps.SchemaError) as exc:
        print(f"{args.file}: {exc}", file=err)
        return EXIT_USAGE
    except ps.FormatError as exc:       # also a part read only when shown (a V2 block, a bitmap)
        print("\n".join(format_error_lines(args.file, exc)), file=err)
        return EXIT_BAD_FILE
    finally:
        SHOW_ALL.reset(token)


def _check_dump_options(args: argparse.Namespace) -> None:
    if args.index is not None and args.column is None:
        raise UsageError("--index goes with --column COLUMN")
    if args.extract and args.column is None:
        raise UsageError("--extract needs --column COLUMN (and --index TYPE when the column has "
                         "several indexes)")
    if args.extract and (args.json or args.hex or args.html):
        raise UsageError("--extract writes the blob's bytes: no --json, --hex or --html with it")


def _one_blob(args: argparse.Namespace, data: bytes, name: str | None) -> tuple[bytes, str, str]:
    """`--column C [--index T]`: the blob of one index of a container, its layout and a label."""
    if (name or detect(data)) != "file-index":
        raise UsageError("--column needs a file-index container")
    indexes = ps.FileIndexFile.parse(data).columns.get(args.column)
    if indexes is None:
        columns = ps.FileIndexFile.parse(data).columns
        raise UsageError(f"no column {args.column!r} in the container (columns: "
                         f"{', '.join(repr(c) for c in columns) or 'none'})")
    if args.index is None:
        if len(indexes) != 1:
            raise UsageError(f"{args.column!r} has {count(len(indexes), 'index', 'indexes')} "
                             f"({', '.join(indexes)}): pass --index TYPE")
        index_type = next(iter(indexes))
    elif args.index not in indexes:
        raise UsageError(f"no {args.index} index on {args.column!r} (it has: {', '.join(indexes)})")
    else:
        index_type = args.index
    blob = indexes[index_type]
    if blob is None:
        raise UsageError(f"the {index_type} entry of {args.column!r} is empty: it has no blob "
                         f"(no row of the data file has a value)")
    if index_type not in LAYOUTS and not args.extract:
        raise UsageError(f"no reader for index type {index_type!r}; --extract writes its bytes")
    return blob, index_type, f"{args.file} [{args.column!r} {index_type}]"


def _write_output(args: argparse.Namespace, content: str | bytes, out: TextIO) -> int:
    """Text or bytes to `-o FILE`, else to stdout (bytes only when it is not a terminal)."""
    target = getattr(args, "output", None)
    if target is not None:
        try:
            if isinstance(content, bytes):
                Path(target).write_bytes(content)
            else:
                Path(target).write_text(content, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
        return EXIT_OK
    if isinstance(content, bytes):
        buffer = getattr(out, "buffer", None)
        if buffer is None or out.isatty():
            raise UsageError("the blob is binary: pass -o FILE or redirect stdout")
        out.flush()
        buffer.write(content)
        buffer.flush()
    else:
        out.write(content)
    return EXIT_OK


def _hex_dump(args: argparse.Namespace, label: str, data: bytes, name: str | None, types: Types,
              out: TextIO) -> int:
    """Every field with its offset, raw bytes and value, as the generated parser reads it
    (`--html`: the same fields as a page, the bytes beside them)."""
    name = name or detect(data)
    if name is None:
        raise UsageError("cannot tell the layout: pass --layout")
    data_type = types.data_type
    if registry.LAYOUTS[name].keyed and data_type is None:
        raise UsageError(f"a {name} blob needs --type (its column's data type)")
    if name in INDEX_TYPES and data_type is not None:
        _checked_type(data_type, "--type")
    root = registry.parse_generated(name, data, data_type)
    if args.html:
        from paimon_schema.cli import html as hexhtml

        fields = hexdump.fields(root, data, types.of)
        page = hexhtml.render_html(f"{label} ({name})", data, fields, show=hexdump.show_value,
                                   limit=None if args.all else hexhtml.DEFAULT_LIMIT)
        return _write_output(args, page, out)
    lines = hexdump.render(root, data, column_types=types.of)
    return _write_output(args, "".join(line + "\n" for line in lines), out)


def _row_count_near(path: str) -> int | None:
    """The row count of the data file whose sidecar `path` is, from its table's manifests."""
    try:
        from paimon_schema.cli import table as tableview
    except ImportError:
        return None
    try:
        near = tableview.data_file_near(path)
    except (ps.FormatError, ps.SchemaError, ValueError, OSError):
        return None
    return None if near is None or near[1] is None else near[1].row_count


def types_for(args: argparse.Namespace, path: str) -> Types:
    """`--type` / `--row-type`, or else the column types of the table the file lies in (a
    container next to its data file: the schema that data file was written with)."""
    types = types_of(args)
    if types or not Path(path).is_file():
        return types
    try:
        from paimon_schema.cli import table as tableview
    except ImportError:            # no pyarrow / fastavro: types only from the command line
        return types
    data_type = tableview.global_index_type_near(path)
    if data_type is not None:
        return Types(data_type=data_type)
    row_type = tableview.types_near(path)
    return Types(row_type=row_type) if row_type else types


def cmd_layouts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The layouts `dump --layout` and `verify --layout` take, one line each, from the
    checked-in docs; then the pieces embedded in them, which only `diagram` takes."""
    summaries = dict((spec, summary) for spec, summary in _layout_summaries())
    for name in registry.FILES:
        layout = registry.LAYOUTS[name]
        stem = layout.spec.replace("_", "-")
        aliases = [*layout.aliases, *([stem] if stem != name else [])]
        also = f" (also: {', '.join(aliases)})" if aliases else ""
        print(f"{name:18}  {summaries.get(layout.spec, '')}{also}", file=out)
    embedded = [name for name in registry.LAYOUTS if name not in registry.FILES]
    print(f"\nembedded in the layouts above, no file of their own (`diagram` and docs/ show "
          f"them): {', '.join(embedded)}", file=out)
    return EXIT_OK


def _layout_summaries() -> list[tuple[str, str]]:
    index = resources.files("paimon_schema.docs").joinpath("README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(.+?)\]\((\w+)\.md\) \| .+? \| (.+) \|$", index, re.M)
    return [(spec, summary.replace("\\|", "|")) for _title, spec, summary in rows]


def cmd_diagram(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write a layout's diagram (SVG, rendered from its spec when the docs were generated)."""
    try:
        spec = registry.LAYOUTS[layout_name(args.layout)].spec
        svg = resources.files("paimon_schema.docs").joinpath(f"{spec}.svg").read_text(encoding="utf-8")
        _write_output(args, svg, out)
    except UsageError as exc:
        print(f"diagram: {exc}", file=err)
        return EXIT_USAGE
    if args.output is not None:
        print(f"wrote {args.output}", file=out)
    return EXIT_OK


@dataclass
class Verified:
    """What `verify` found in one file."""

    file: str
    code: int
    layout: str | None = None
    size: int | None = None
    summary: str | None = None
    details: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: ps.FormatError | UsageError | None = None

    def lines(self) -> Iterator[str]:
        if isinstance(self.error, ps.FormatError):
            first, location = format_error_lines(self.file, self.error)
            yield f"FAIL {first}\n{location}"
            return
        if self.error is not None:
            yield f"FAIL {self.file}: {self.error}"
            return
        verdict = "OK" if self.code == EXIT_OK else "FAIL"
        yield f"{verdict} {self.file} ({self.layout}: {self.summary}, {count(self.size or 0, 'byte')})"
        yield from self.details
        # what a reader tolerates but Java's writer never writes: the file is not Java's
        yield from (f"FAIL {self.file}: {w}" for w in self.warnings)

    def json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"file": self.file, "ok": self.code == EXIT_OK}
        if isinstance(self.error, ps.FormatError):
            doc["error"] = {"message": self.error.reason, "offset": self.error.offset,
                            "path": self.error.path or None}
        elif self.error is not None:
            doc["error"] = {"message": str(self.error), "offset": None, "path": None}
        else:
            doc.update(layout=self.layout, size=self.size, summary=self.summary,
                       warnings=self.warnings, details=[d.strip() for d in self.details])
        return doc


def verify_one(path: str, layout_name: str, types: Types) -> Verified:
    """Read one file whole: its summary and warnings, or the error that stopped the read."""
    try:
        layout, data, model = load(path, layout_name, types)
        warnings = [*warnings_of(model), *layout.check(model)]
        details = list(layout.details(model))
        check_coverage(layout.name, data, types)
    except UsageError as exc:
        return Verified(path, EXIT_USAGE, error=exc)
    except ps.FormatError as exc:
        return Verified(path, EXIT_BAD_FILE, error=exc)
    code = EXIT_BAD_FILE if warnings else EXIT_OK     # each says Java did not write the file
    return Verified(path, code, layout.name, len(data), layout.summary(model), details, warnings)


def cmd_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        types_of(args)
        if args.layout != "auto":
            dump_layout(args.layout)
    except UsageError as exc:
        print(f"verify: {exc}", file=err)
        return EXIT_USAGE
    results = []
    for path in args.files:
        result = verify_one(path, args.layout, types_for(args, path))
        results.append(result)
        if not args.json:
            print("\n".join(result.lines()), file=out)
    code = max(r.code for r in results)
    if args.json:
        json.dump({"ok": code == EXIT_OK, "files": [r.json() for r in results]}, out,
                  ensure_ascii=False)
        out.write("\n")
    return code


def cmd_query(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        container = load_container(args.file)     # a missing file before a missing type
        types = types_for(args, args.file)
        if args.dv and args.row_count is None:
            args.row_count = _row_count_near(args.file)
        request = query_request(args, types)
        result = run_query(container, request, types)
    except (UsageError, ps.SchemaError) as exc:
        print(f"query: {args.file}: {exc}", file=err)
        return EXIT_USAGE
    except BadFile as exc:
        print("\n".join(format_error_lines(exc.path, exc.error)), file=err)
        return EXIT_BAD_FILE
    except ps.FormatError as exc:       # inside a blob, read while answering
        print("\n".join(format_error_lines(args.file, exc)), file=err)
        return EXIT_BAD_FILE
    if args.json:
        json.dump(query_json(args.file, request, result), out, ensure_ascii=False)
        out.write("\n")
    else:
        print("\n".join(query_lines(args.file, request, result)), file=out)
    return EXIT_OK


def cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from paimon_schema.runtime import progress
    from paimon_schema.selfcheck import demo  # imports the Java harness only when asked

    progress.show_on_stderr()
    return demo.run(keep=args.keep, out=out)


def cmd_pipeline(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        require_spark_extra("pipeline", ("pyarrow", "fastavro", "pyspark"))
    except UsageError as exc:
        print(f"pipeline: {exc}", file=err)
        return EXIT_USAGE
    from paimon_schema.runtime import progress
    from paimon_schema.selfcheck import pipeline  # imports pyspark only when asked

    progress.show_on_stderr()
    argv = ["--rows", str(args.rows)] + (["--keep", str(args.keep)] if args.keep else [])
    return pipeline.main(argv)


def require_spark_extra(command: str, modules: Sequence[str]) -> None:
    """UsageError telling a core-only install what to add, instead of an ImportError."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise UsageError(f"{command} needs {module}, from the spark extra: {SPARK_EXTRA}") from None


TABLE_VIEWS = ("overview", "files", "dv", "indexes", "query")
TABLE_WRITES = ("index", "delete")


def cmd_table(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        require_spark_extra("table", ("pyarrow", "fastavro"))
    except UsageError as exc:
        print(f"table: {exc}", file=err)
        return EXIT_USAGE
    from paimon_schema.cli import table as tableview  # reads manifests: pyarrow, fastavro

    return tableview.cmd_table(args, out, err)


def _layout_argument(text: str) -> str:
    if text == "auto":
        return text
    try:
        return dump_layout(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _type_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--type", metavar="DATA_TYPE",
                   help="column type of an index blob, e.g. INT or VARCHAR(10); for a "
                        "container: the type of every column")
    p.add_argument("--row-type", metavar="COL:TYPE,...",
                   help="column types of a container, e.g. \"a:INT,b:STRING,`m[k]`:INT\"")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="paimon-schema",
                                  description="Read and check Apache Paimon index files and tables.")
    top.add_argument("--version", action="version", version=f"paimon-schema {ps.__version__}")
    sub = top.add_subparsers(dest="command", required=True)

    def layout_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--layout", type=_layout_argument, default="auto", metavar="NAME",
                       help="the file's layout, a name from `paimon-schema layouts` (default: "
                            "recognise it by its signature)")
        _type_options(p)

    dump = sub.add_parser("dump", help="show what a file holds")
    dump.add_argument("file", metavar="FILE")
    layout_options(dump)
    output = dump.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON document")
    output.add_argument("--hex", action="store_true",
                        help="every field with its offset, raw bytes and value (container blobs "
                             "opened where their column's type is known)")
    output.add_argument("--html", action="store_true",
                        help="the --hex fields as a self-contained page, the bytes beside them")
    dump.add_argument("--column", metavar="COLUMN", help="a container: only this column's index")
    dump.add_argument("--index", metavar="TYPE", help="with --column: the index type (bitmap, ...)")
    dump.add_argument("--extract", action="store_true",
                      help="with --column: write the blob's raw bytes (to -o FILE or stdout)")
    dump.add_argument("--all", action="store_true",
                      help="list every key, range and hash (text dumps cut at 20), every byte "
                           "of a --html page")
    dump.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    dump.set_defaults(run=cmd_dump)

    verify = sub.add_parser("verify", help="check that files parse (exit 1 if one does not)")
    layout_options(verify)
    verify.add_argument("files", metavar="FILE", nargs="+")
    verify.add_argument("--json", action="store_true", help="print one JSON document")
    verify.set_defaults(run=cmd_verify)

    query = sub.add_parser("query", help="which rows of a data file can match, from its "
                                         "file-index container")
    query.add_argument("file", metavar="FILE", help="a file-index container")
    _type_options(query)
    query.add_argument("--where", metavar="CONDITION",
                       help="e.g. \"a = 5 AND b IN ('x', 'y') AND NOT c IS NULL\"")
    query.add_argument("--top-n", metavar="K", type=int,
                       help="ORDER BY --order-by LIMIT K (range-bitmap indexes only)")
    query.add_argument("--order-by", metavar="COLUMN")
    query.add_argument("--desc", action="store_true", help="descending order")
    query.add_argument("--nulls-first", action="store_true", help="nulls before values")
    query.add_argument("--dv", metavar="FILE", help="a deletion-vector file to apply")
    query.add_argument("--dv-range", metavar="OFFSET:LENGTH",
                       help="the data file's bin in --dv (needed when it holds several)")
    query.add_argument("--row-count", metavar="N", type=int,
                       help="the data file's row count (needed with --dv; `paimon-schema table "
                            "DIR query` takes it from the manifests)")
    query.add_argument("--json", action="store_true", help="print one JSON document")
    query.set_defaults(run=cmd_query)

    table = sub.add_parser("table", help="a Paimon table: schema, data files, deletion vectors, "
                                         "file indexes, which files a filter reads (needs the "
                                         "spark extra: pyarrow, fastavro)",
                           description="A Paimon table seen through its schema and manifests.")
    table.add_argument("dir", metavar="DIR", help="the table directory (or a pyarrow URI)")
    table.add_argument("view", nargs="?", choices=TABLE_VIEWS + TABLE_WRITES, default="overview",
                       help="overview (default), files, dv (deletion vectors), indexes (file "
                            "indexes), query (with --where); writes, each one new snapshot: "
                            "index (build file indexes), delete (with --where)")
    table.add_argument("--where", metavar="CONDITION",
                       help="a Spark SQL filter, e.g. \"city = 'Lima' AND amount < 50\" (query, "
                            "delete; index: partition columns only)")
    table.add_argument("--index", metavar="COLUMN=TYPE[,TYPE]", action="append", default=[],
                       help="with index: build these (repeatable; default: the table's "
                            "file-index.<type>.columns options)")
    table.add_argument("--option", metavar="KEY=VALUE", action="append", default=[],
                       help="with index or delete: a table option for this write, e.g. "
                            "file-index.bloom-filter.id.fpp=0.001, commit.max-retries=0")
    table.add_argument("--replace", action="store_true",
                       help="with index: drop the index entries it does not rebuild")
    version = table.add_mutually_exclusive_group()
    version.add_argument("--snapshot", metavar="ID", type=int, help="a snapshot id (default: latest)")
    version.add_argument("--tag", metavar="NAME", help="the snapshot a tag holds (tag/tag-NAME)")
    version.add_argument("--as-of", metavar="TIME",
                         help="the latest snapshot committed at or before TIME: epoch "
                              "milliseconds or an ISO timestamp in local time")
    table.add_argument("--json", action="store_true", help="print one JSON document")
    table.add_argument("--all", action="store_true", help="list every deleted position")
    table.set_defaults(run=cmd_table)

    layouts = sub.add_parser("layouts", help="list the layouts `dump` and `verify` read, by the "
                                             "names the commands take")
    layouts.set_defaults(run=cmd_layouts)

    diagram = sub.add_parser("diagram", help="write a layout's diagram as SVG")
    diagram.add_argument("layout", metavar="LAYOUT", help="a layout name, see `layouts`")
    diagram.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    diagram.set_defaults(run=cmd_diagram)

    demo = sub.add_parser("demo", help="have Paimon's Java write samples and read them back")
    demo.add_argument("--keep", metavar="DIR", type=directory_argument,
                      help="write the samples to DIR (kept) instead of a temporary directory")
    demo.set_defaults(run=cmd_demo)

    spark = sub.add_parser("pipeline", help="the Spark pipeline: Java writes a table with deletion "
                                            "vectors and file indexes, Spark reads it filtered "
                                            "through our data sources (needs the spark extra)")
    spark.add_argument("--rows", type=rows_argument, default=200_000,
                       help="rows Java writes (default 200,000)")
    spark.add_argument("--keep", metavar="DIR", type=warehouse_argument,
                       help="write the warehouse into DIR and keep it (the table is "
                            "DIR/demo.db/orders)")
    spark.set_defaults(run=cmd_pipeline)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `paimon-schema` script."""
    args = parser().parse_args(argv)
    try:
        return args.run(args, sys.stdout, sys.stderr)
    except BrokenPipeError:             # `... | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BAD_FILE
    except KeyboardInterrupt:           # Ctrl-C: the commands' `finally`s have cleaned up
        print(f"{args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
