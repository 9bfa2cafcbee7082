"""`paimon-schema`: dump, verify and query Paimon index files, and a self-check against Java (`demo`).

Arguments and dispatch; how each layout is shown lives in `presenters`.

`query` answers a SQL-ish WHERE clause (or an ORDER BY ... LIMIT) over a container with
`ps.evaluate` / `ps.top_n`; `parse_where` turns the text into a `ps.col` predicate.

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
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.cli import hexdump
from paimon_schema.cli.presenters import (
    INDEX_TYPES,
    Types,
    UsageError,
    count,
    dump_json,
    dump_lines,
    format_error_lines,
    load,
    positions_json,
    positions_text,
    read_bytes,
    result_kind,
    warnings_of,
)
from paimon_schema.layouts import registry
from paimon_schema.query.predicate import Predicate
from paimon_schema.query.where import WhereError, parse_where, sql_column, sql_text
from paimon_schema.values.types import DataType

LAYOUT_CHOICES = ("auto", *registry.LAYOUTS)
MAX_ECHO = 200          # characters of the query echoed under its result

EXIT_OK, EXIT_BAD_FILE, EXIT_USAGE = 0, 1, 2


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
        if registry.detect(data) != "file-index":
            raise UsageError(f"{path}: query needs a file-index container (no container magic)")
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
    if dv_range is not None:
        offset, length = _dv_range(dv_range)
        _, bitmap = _parsed(path, lambda data: ps.read_deletion_vector(data, offset, length))
        return DeletionVector(path, offset, length, bitmap)
    _, f = _parsed(path, ps.DeletionVectorFile.parse)
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
                         "manifest entry)")
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
    return ps.top_n(fi, request.order_by, request.limit, row_type,
                    ascending=not request.descending, nulls_first=request.nulls_first,
                    row_count=request.row_count, deletion_vector=dv)


def query_lines(path: str, request: QueryRequest, result: ps.IndexResult) -> Iterator[str]:
    kind = result_kind(result)
    if kind == "skip":
        yield f"{path}: SKIP (no row can match: skip the file)"
    elif kind == "remain":
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
    try:
        if args.hex:
            return _hex_dump(args, out)
        layout, data, model = load(args.file, args.layout, types_of(args))
        if args.json:
            json.dump(dump_json(args.file, layout, data, model), out, ensure_ascii=False)
            out.write("\n")
        else:
            print("\n".join(dump_lines(args.file, layout, data, model)), file=out)
    except (UsageError, ps.SchemaError) as exc:
        print(f"{args.file}: {exc}", file=err)
        return EXIT_USAGE
    except ps.FormatError as exc:       # also a part read only when shown (a V2 block, a bitmap)
        print("\n".join(format_error_lines(args.file, exc)), file=err)
        return EXIT_BAD_FILE
    return EXIT_OK


def _hex_dump(args: argparse.Namespace, out: TextIO) -> int:
    """Every field with its offset, raw bytes and value, as the generated parser reads it."""
    data = read_bytes(args.file)
    name = registry.detect(data) if args.layout == "auto" else args.layout
    if name is None:
        raise UsageError("cannot tell the layout: pass --layout")
    types = types_of(args)
    if name in INDEX_TYPES and types.data_type is None:
        raise UsageError(f"a {name} blob needs --type (its column's data type)")
    for line in hexdump.render(registry.parse_generated(name, data, types.data_type), data):
        print(line, file=out)
    return EXIT_OK


def cmd_layouts(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The specs, one line each, from the checked-in docs."""
    for name, summary in _layout_summaries():
        print(f"{name:18}  {summary}", file=out)
    return EXIT_OK


def _layout_summaries() -> list[tuple[str, str]]:
    index = resources.files("paimon_schema.docs").joinpath("README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(.+?)\]\((\w+)\.md\) \| .+? \| (.+) \|$", index, re.M)
    return [(spec, summary.replace("\\|", "|")) for _title, spec, summary in rows]


def cmd_diagram(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write a layout's diagram (SVG, rendered from its spec when the docs were generated)."""
    names = [name for name, _ in _layout_summaries()]
    if args.layout not in names:
        print(f"diagram: unknown layout {args.layout!r} (one of: {', '.join(names)})", file=err)
        return EXIT_USAGE
    svg = resources.files("paimon_schema.docs").joinpath(f"{args.layout}.svg").read_text(encoding="utf-8")
    if args.output is None:
        out.write(svg)
    else:
        Path(args.output).write_text(svg, encoding="utf-8")
        print(f"wrote {args.output}", file=out)
    return EXIT_OK


def verify_one(path: str, layout_name: str, types: Types, out: TextIO) -> int:
    """Print `OK`/`WARN` or `FAIL` lines for one file; return its exit code."""
    try:
        layout, data, model = load(path, layout_name, types)
        warnings = [*warnings_of(model), *layout.check(model)]
    except UsageError as exc:
        print(f"FAIL {path}: {exc}", file=out)
        return EXIT_USAGE
    except ps.FormatError as exc:
        first, location = format_error_lines(path, exc)
        print(f"FAIL {first}\n{location}", file=out)
        return EXIT_BAD_FILE
    print(f"OK {path} ({layout.name}: {layout.summary(model)}, {count(len(data), 'byte')})",
          file=out)
    for line in layout.details(model):
        print(line, file=out)
    for warning in warnings:
        print(f"WARN {path}: {warning}", file=out)
    return EXIT_OK


def cmd_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        types = types_of(args)
    except UsageError as exc:
        print(f"verify: {exc}", file=err)
        return EXIT_USAGE
    return max(verify_one(path, args.layout, types, out) for path in args.files)


def cmd_query(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        types = types_of(args)
        request = query_request(args, types)
        result = run_query(load_container(args.file), request, types)
    except (UsageError, ps.SchemaError) as exc:
        print(f"query: {exc}", file=err)
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
    from paimon_schema.selfcheck import demo  # imports the Java harness only when asked

    return demo.run(keep=args.keep, out=out)


def cmd_pipeline(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from paimon_schema.selfcheck import pipeline  # imports pyspark only when asked

    return pipeline.main(["--rows", str(args.rows)])


def _type_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--type", metavar="DATA_TYPE",
                   help="column type of an index blob, e.g. INT or VARCHAR(10); for a "
                        "container: the type of every column")
    p.add_argument("--row-type", metavar="COL:TYPE,...",
                   help="column types of a container, e.g. \"a:INT,b:STRING,`m[k]`:INT\"")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="paimon-schema",
                                  description="Read and check Apache Paimon index files.")
    sub = top.add_subparsers(dest="command", required=True)

    def layout_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--layout", choices=LAYOUT_CHOICES, default="auto",
                       help="the file's layout (default: recognise it by its signature)")
        _type_options(p)

    dump = sub.add_parser("dump", help="show what a file holds")
    dump.add_argument("file", metavar="FILE")
    layout_options(dump)
    output = dump.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON document")
    output.add_argument("--hex", action="store_true",
                        help="every field with its offset, raw bytes and value")
    dump.set_defaults(run=cmd_dump)

    verify = sub.add_parser("verify", help="check that files parse (exit 1 if one does not)")
    layout_options(verify)
    verify.add_argument("files", metavar="FILE", nargs="+")
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
                       help="the data file's row count (needed with --dv)")
    query.add_argument("--json", action="store_true", help="print one JSON document")
    query.set_defaults(run=cmd_query)

    layouts = sub.add_parser("layouts", help="list the layout specs")
    layouts.set_defaults(run=cmd_layouts)

    diagram = sub.add_parser("diagram", help="write a layout's diagram as SVG")
    diagram.add_argument("layout", metavar="LAYOUT", help="a spec name, see `layouts`")
    diagram.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    diagram.set_defaults(run=cmd_diagram)

    demo = sub.add_parser("demo", help="have Paimon's Java write samples and read them back")
    demo.add_argument("--keep", metavar="DIR", type=Path,
                      help="write the samples to DIR (kept) instead of a temporary directory")
    demo.set_defaults(run=cmd_demo)

    spark = sub.add_parser("pipeline", help="the Spark pipeline: Java writes a table with deletion "
                                            "vectors and file indexes, Spark reads it filtered "
                                            "through our data sources (needs the spark extra)")
    spark.add_argument("--rows", type=int, default=200_000, help="rows Java writes (default 200,000)")
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


if __name__ == "__main__":
    raise SystemExit(main())
