"""`paimon-schema`: dump and verify Paimon index files, and a self-check against Java (`demo`).

Every layout the command line knows is one `Layout` entry in `LAYOUTS`: how to parse the bytes,
how to show the result to a person and as JSON, and a one-line summary for `verify`. Layouts of
the contract that have no reader yet are in `LAYOUT_CHOICES` but not in `LAYOUTS`.

Exit codes: 0 success, 1 a file is malformed (or the demo found a mismatch), 2 a usage problem
(unknown layout, no reader yet, cannot read the file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.generated.deletion_vectors import DeletionVectors
from paimon_schema.layouts import file_index

INDEX_TYPES = ("bitmap", "bloom-filter", "bsi", "range-bitmap")
LAYOUT_CHOICES = ("auto", "file-index", *INDEX_TYPES, "dv", "hash")
CONTAINER_MAGIC = file_index.MAGIC.to_bytes(8, "big")
DV_MAGICS = tuple(int(m.value).to_bytes(4, "big") for m in DeletionVectors.BinMagic)
MAX_RANGES = 20
MAX_HASHES = 32

EXIT_OK, EXIT_BAD_FILE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A problem with how the command was called, not with a file's bytes (exit 2)."""


@dataclass(frozen=True)
class Layout:
    """What the command line needs to know about one layout."""

    name: str
    parse: Callable[[bytes, str | None], Any]   # (data, data_type) -> parsed model
    text: Callable[[Any], Iterator[str]]        # human dump, line by line
    json: Callable[[Any], dict[str, Any]]       # JSON fields of the dump
    summary: Callable[[Any], str]               # one line for `verify`
    needs_type: bool = False                    # index blobs: `--type` is required


def count(n: int, noun: str, plural: str = "") -> str:
    """`1 bin`, `2 bins`, `2 entries`."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


# -- sets of positions --------------------------------------------------------------------------


def bitmap_ranges(bitmap: BitMap | BitMap64) -> np.ndarray:
    """The bitmap as sorted, disjoint, half-open `[start, stop)` runs: an (n, 2) uint64 array.

    Vectorised over `to_array()`: deletion vectors hold millions of positions."""
    values = np.asarray(bitmap.to_array()).astype(np.uint64)
    if not len(values):
        return np.empty((0, 2), dtype=np.uint64)
    breaks = np.flatnonzero(np.diff(values) != 1) + 1
    starts = values[np.concatenate(([0], breaks))]
    stops = values[np.concatenate((breaks - 1, [len(values) - 1]))] + 1
    return np.column_stack((starts, stops))


def positions_json(bitmap: BitMap | BitMap64) -> dict[str, Any]:
    """The contract's JSON form of a set of rows or positions."""
    return {"cardinality": len(bitmap), "ranges": bitmap_ranges(bitmap).tolist()}


def positions_text(bitmap: BitMap | BitMap64, limit: int = MAX_RANGES) -> str:
    """`{1-3, 100}`: inclusive ranges, cut after `limit` of them."""
    ranges = bitmap_ranges(bitmap)
    shown = [f"{a}" if b - a == 1 else f"{a}-{b - 1}" for a, b in ranges[:limit].tolist()]
    if len(ranges) > limit:
        shown.append(f"… ({len(ranges) - limit} more)")
    return "{" + ", ".join(shown) + "}"


# -- deletion vectors ---------------------------------------------------------------------------


def _dv_text(f: ps.DeletionVectorFile) -> Iterator[str]:
    yield f"deletion vectors, version {f.version}, {count(len(f.bins), 'bin')}"
    for i, b in enumerate(f.bins):
        kind = "64-bit" if b.bitmap64 else "32-bit"
        yield (f"  bins[{i}]  range ({b.offset}, {b.length})  {kind}  "
               f"cardinality {b.cardinality}  crc32 {b.checksum:08x}  {positions_text(b.bitmap)}")


def _dv_json(f: ps.DeletionVectorFile) -> dict[str, Any]:
    return {"version": f.version, "bins": [
        {"offset": b.offset, "length": b.length, "bitmap64": b.bitmap64,
         "cardinality": b.cardinality, "checksum": b.checksum,
         "positions": positions_json(b.bitmap)}
        for b in f.bins]}


def _dv_summary(f: ps.DeletionVectorFile) -> str:
    return (f"{count(len(f.bins), 'bin')}, "
            f"{count(sum(b.cardinality for b in f.bins), 'position')}")


# -- file-index container -----------------------------------------------------------------------


def _by_column(fi: ps.FileIndexFile) -> Iterator[tuple[str, list[ps.IndexEntry]]]:
    """The head's entries in file order, grouped by column (duplicates stay visible)."""
    for column, entries in groupby(fi.entries, key=lambda e: e.column):
        yield column, list(entries)


def _entry_text(e: ps.IndexEntry) -> str:
    if e.blob is None:
        return f"{e.index_type}  empty (offset {e.offset}, length {e.length})"
    return f"{e.index_type}  at {e.offset}, {count(len(e.blob), 'byte')}"


def _container_text(fi: ps.FileIndexFile) -> Iterator[str]:
    yield (f"file-index container, head {fi.head_length} bytes, "
           f"{count(len(fi.columns), 'column')}, {count(len(fi.entries), 'entry', 'entries')}")
    for column, entries in _by_column(fi):
        yield f"  {column!r}: " + "; ".join(_entry_text(e) for e in entries)


def _container_json(fi: ps.FileIndexFile) -> dict[str, Any]:
    return {"head_length": fi.head_length, "redundant": fi.redundant.hex(), "columns": [
        {"name": column, "indexes": [
            {"type": e.index_type, "offset": e.offset, "length": e.length,
             "blob_size": None if e.blob is None else len(e.blob)}
            for e in entries]}
        for column, entries in _by_column(fi)]}


def _container_summary(fi: ps.FileIndexFile) -> str:
    return f"{count(len(fi.columns), 'column')}, {count(len(fi.entries), 'entry', 'entries')}"


# -- hash index ---------------------------------------------------------------------------------


def _hash_text(hashes: np.ndarray) -> Iterator[str]:
    yield f"hash index, {count(len(hashes), 'int')}"
    if len(hashes):
        more = f" … ({len(hashes) - MAX_HASHES} more)" if len(hashes) > MAX_HASHES else ""
        yield "  " + " ".join(map(str, hashes[:MAX_HASHES].tolist())) + more


def _hash_json(hashes: np.ndarray) -> dict[str, Any]:
    return {"count": len(hashes), "hashes": hashes.tolist()}


LAYOUTS: dict[str, Layout] = {
    "dv": Layout("dv", lambda data, _: ps.DeletionVectorFile.parse(data),
                 _dv_text, _dv_json, _dv_summary),
    "file-index": Layout("file-index", lambda data, _: ps.FileIndexFile.parse(data),
                         _container_text, _container_json, _container_summary),
    "hash": Layout("hash", lambda data, _: ps.read_hash_index(data),
                   _hash_text, _hash_json, lambda h: count(len(h), "int")),
}


# -- choosing a layout --------------------------------------------------------------------------


def detect(data: bytes) -> str | None:
    """The layout of a file that carries a signature, or None (hash index, index blobs)."""
    if data[:8] == CONTAINER_MAGIC:
        return "file-index"
    if data == b"\x01" or (data[:1] == b"\x01" and data[5:9] in DV_MAGICS):
        return "dv"
    return None


def resolve(name: str, data: bytes, data_type: str | None) -> Layout:
    """The `Layout` for `--layout name` (detected for `auto`), or a UsageError saying why not."""
    if name == "auto":
        detected = detect(data)
        if detected is None:
            raise UsageError("cannot tell the layout: no file-index magic, not a deletion-vector "
                             "file; pass --layout (a hash index has no header: --layout hash; "
                             "an index blob needs --layout TYPE --type DATA_TYPE)")
        name = detected
    layout = LAYOUTS.get(name)
    if layout is None:
        raise UsageError(f"the {name} reader is not available yet "
                         f"(available: {', '.join(sorted(LAYOUTS))})")
    if layout.needs_type and not data_type:
        raise UsageError(f"--layout {name} needs --type DATA_TYPE (e.g. --type INT)")
    return layout


def load(path: str, layout_name: str, data_type: str | None) -> tuple[Layout, bytes, Any]:
    """Read and parse one file: (layout, bytes, model); FormatError or UsageError otherwise."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror or exc}") from exc
    layout = resolve(layout_name, data, data_type)
    return layout, data, layout.parse(data, data_type)


def warnings_of(model: Any) -> list[str]:
    return list(getattr(model, "warnings", []))


def dump_lines(path: str, layout: Layout, data: bytes, model: Any) -> Iterator[str]:
    """The human dump: a header naming the file, the layout's lines, then any warnings."""
    lines = layout.text(model)
    yield f"{path}: {next(lines)} ({count(len(data), 'byte')})"
    yield from lines
    yield from (f"  warning: {w}" for w in warnings_of(model))


def dump_json(path: str, layout: Layout, data: bytes, model: Any) -> dict[str, Any]:
    return {"file": path, "layout": layout.name, "size": len(data), **layout.json(model),
            "warnings": warnings_of(model)}


def format_error_lines(path: str, exc: ps.FormatError) -> list[str]:
    """`<file>: <message>` and the location spelled out for scripts."""
    offset = "-" if exc.offset is None else exc.offset
    return [f"{path}: {exc}", f"    offset={offset} path={exc.path or '-'}"]


# -- commands -----------------------------------------------------------------------------------


def cmd_dump(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        layout, data, model = load(args.file, args.layout, args.type)
    except UsageError as exc:
        print(f"{args.file}: {exc}", file=err)
        return EXIT_USAGE
    except ps.FormatError as exc:
        print("\n".join(format_error_lines(args.file, exc)), file=err)
        return EXIT_BAD_FILE
    if args.json:
        json.dump(dump_json(args.file, layout, data, model), out, ensure_ascii=False)
        out.write("\n")
    else:
        print("\n".join(dump_lines(args.file, layout, data, model)), file=out)
    return EXIT_OK


def verify_one(path: str, layout_name: str, data_type: str | None, out: TextIO) -> int:
    """Print `OK`/`WARN` or `FAIL` lines for one file; return its exit code."""
    try:
        layout, data, model = load(path, layout_name, data_type)
    except UsageError as exc:
        print(f"FAIL {path}: {exc}", file=out)
        return EXIT_USAGE
    except ps.FormatError as exc:
        first, location = format_error_lines(path, exc)
        print(f"FAIL {first}\n{location}", file=out)
        return EXIT_BAD_FILE
    print(f"OK {path} ({layout.name}: {layout.summary(model)}, {count(len(data), 'byte')})",
          file=out)
    for warning in warnings_of(model):
        print(f"WARN {path}: {warning}", file=out)
    return EXIT_OK


def cmd_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    return max(verify_one(path, args.layout, args.type, out) for path in args.files)


def cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from paimon_schema import demo  # imports the Java harness only when asked

    return demo.run(keep=args.keep, out=out)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="paimon-schema",
                                  description="Read and check Apache Paimon index files.")
    sub = top.add_subparsers(dest="command", required=True)

    def layout_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--layout", choices=LAYOUT_CHOICES, default="auto",
                       help="the file's layout (default: recognise it by its signature)")
        p.add_argument("--type", metavar="DATA_TYPE",
                       help="column type of an index blob, e.g. INT or VARCHAR(10)")

    dump = sub.add_parser("dump", help="show what a file holds")
    dump.add_argument("file", metavar="FILE")
    layout_options(dump)
    dump.add_argument("--json", action="store_true", help="print one JSON document")
    dump.set_defaults(run=cmd_dump)

    verify = sub.add_parser("verify", help="check that files parse (exit 1 if one does not)")
    layout_options(verify)
    verify.add_argument("files", metavar="FILE", nargs="+")
    verify.set_defaults(run=cmd_verify)

    demo = sub.add_parser("demo", help="have Paimon's Java write samples and read them back")
    demo.add_argument("--keep", metavar="DIR", type=Path,
                      help="write the samples to DIR (kept) instead of a temporary directory")
    demo.set_defaults(run=cmd_demo)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `paimon-schema` script."""
    args = parser().parse_args(argv)
    return args.run(args, sys.stdout, sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
