"""`paimon-schema`: dump, verify and query Paimon index files, and a self-check against Java (`demo`).

Every layout the command line knows is one `Layout` entry in `LAYOUTS`: how to parse the bytes,
how to show the result to a person and as JSON, a one-line summary and a full check for
`verify`. Index blobs need their column's data type (`--type`); a file-index container opens its
blobs where `--row-type` (or `--type`, for every column) gives the type.

`query` answers a SQL-ish WHERE clause (or an ORDER BY ... LIMIT) over a container with
`ps.evaluate` / `ps.top_n`; `parse_where` turns the text into a `ps.col` predicate.

Exit codes: 0 success, 1 a file is malformed (or the demo found a mismatch), 2 a usage problem
(unknown layout, missing or unfit type, malformed WHERE, cannot read the file).
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib import resources
from dataclasses import dataclass, field
from itertools import groupby, islice
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema import hexdump
from paimon_schema.generated.deletion_vectors import DeletionVectors
from paimon_schema.indexes import READERS
from paimon_schema.layouts import file_index
from paimon_schema.query import Predicate
from paimon_schema.types import DataType
from paimon_schema.where import WhereError, parse_where, sql_column, sql_text

INDEX_TYPES = ("bitmap", "bloom-filter", "bsi", "range-bitmap")
LAYOUT_CHOICES = ("auto", "file-index", *INDEX_TYPES, "dv", "hash")
CONTAINER_MAGIC = file_index.MAGIC.to_bytes(8, "big")
DV_MAGICS = tuple(int(m.value).to_bytes(4, "big") for m in DeletionVectors.BinMagic)
MAX_RANGES = 20
RANGES_CHUNK = 1 << 22  # positions turned into one numpy array at most
MAX_HASHES = 32
MAX_KEYS = 20           # key lines of an index dump before "… (N more)"
MAX_ECHO = 200          # characters of the query echoed under its result

EXIT_OK, EXIT_BAD_FILE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A problem with how the command was called, not with a file's bytes (exit 2)."""


@dataclass(frozen=True)
class Types:
    """The column types the command line was given: `--type` is an index blob's type, or every
    container column's; `--row-type` gives one per column and wins over `--type`."""

    data_type: str | None = None
    row_type: Mapping[str, str] = field(default_factory=dict)

    def of(self, column: str) -> str | None:
        return self.row_type.get(column, self.data_type)

    get = of        # a row type, as paimon_schema.where reads it

    def __bool__(self) -> bool:
        return bool(self.data_type or self.row_type)


@dataclass(frozen=True)
class Layout:
    """What the command line needs to know about one layout."""

    name: str
    parse: Callable[[bytes, Types], Any]            # (data, types) -> parsed model
    text: Callable[[Any], Iterator[str]]            # human dump, line by line
    json: Callable[[Any], dict[str, Any]]           # JSON fields of the dump
    summary: Callable[[Any], str]                   # one line for `verify`
    # `verify`: read everything the model holds; raise FormatError, or yield warnings
    check: Callable[[Any], Iterator[str]] = lambda model: iter(())
    # `verify`: indented lines under the OK line (the blobs of a container)
    details: Callable[[Any], Iterator[str]] = lambda model: iter(())
    needs_type: bool = False                        # index blobs: `--type` is required


def count(n: int, noun: str, plural: str = "") -> str:
    """`1 bin`, `2 bins`, `2 entries`."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


# -- sets of positions --------------------------------------------------------------------------


def bitmap_ranges(bitmap: BitMap | BitMap64) -> np.ndarray:
    """The bitmap as sorted, disjoint, half-open `[start, stop)` runs: an (n, 2) uint64 array.

    Vectorised over `to_array()`: deletion vectors hold millions of positions. Past
    RANGES_CHUNK positions memory stays bounded: a dense bitmap (`<>` over two billion rows)
    is read through its few gaps, any other slice by slice."""
    size = len(bitmap)
    if size <= RANGES_CHUNK:
        return _runs(bitmap.to_array())
    low, high = bitmap.min(), bitmap.max() + 1
    if high - low - size <= RANGES_CHUNK:
        gaps = _runs(bitmap.flip(low, high).to_array())
        return np.column_stack((np.concatenate(([low], gaps[:, 1])),
                                np.concatenate((gaps[:, 0], [high])))).astype(np.uint64)
    return _rejoined([_runs(bitmap[i:i + RANGES_CHUNK].to_array())
                    for i in range(0, size, RANGES_CHUNK)])


def _runs(positions: Iterable[int]) -> np.ndarray:
    values = np.asarray(positions).astype(np.uint64)
    if not len(values):
        return np.empty((0, 2), dtype=np.uint64)
    breaks = np.flatnonzero(np.diff(values) != 1) + 1
    starts = values[np.concatenate(([0], breaks))]
    stops = values[np.concatenate((breaks - 1, [len(values) - 1]))] + 1
    return np.column_stack((starts, stops))


def _rejoined(pieces: list[np.ndarray]) -> np.ndarray:
    """Runs of consecutive slices, a run cut at a slice border joined again."""
    runs = np.concatenate(pieces)
    cut = runs[1:, 0] == runs[:-1, 1]
    return np.column_stack((runs[np.concatenate(([True], ~cut)), 0],
                            runs[np.concatenate((~cut, [True])), 1]))


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


def _nulls_text(rows: BitMap) -> str:
    return f"null rows {positions_text(rows)}" if rows else "no null rows"


# -- values -------------------------------------------------------------------------------------


def value_json(data_type: DataType, value: object) -> object:
    """A key (or a BSI's stored long) as JSON a person can read: ISO text for temporal types,
    decimal text for DECIMAL (stored unscaled), FLOAT at float32 precision, non-finite floats
    as text. Raw integers stay where the ISO form does not exist (out of datetime's range)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return float(str(np.float32(value))) if data_type.root == "FLOAT" else value
    root = data_type.root
    if root == "DECIMAL":
        return str(decimal.Decimal(value).scaleb(-(data_type.scale or 0)))
    try:
        if root == "DATE":
            return (ps.types.EPOCH_DATE + dt.timedelta(days=value)).isoformat()
        if root == "TIME":
            moment = dt.datetime.min + dt.timedelta(milliseconds=value)
            return moment.time().isoformat("milliseconds" if value % 1000 else "seconds")
        if data_type.is_timestamp:
            micros = value * 1000 if (data_type.precision or 0) <= 3 else value
            moment = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)
            spec = "seconds" if micros % 1_000_000 == 0 else \
                "milliseconds" if (data_type.precision or 0) <= 3 else "microseconds"
            return moment.isoformat(" ", spec)
    except (OverflowError, ValueError):
        return value
    return value


def value_text(data_type: DataType, value: object) -> str:
    """A key for a person: strings quoted (an empty one stays visible), the rest as in JSON."""
    return repr(value) if isinstance(value, str) else str(value_json(data_type, value))


def _value_rows_text(data_type: DataType, pairs: Iterable[tuple[object, BitMap]],
                     total: int) -> Iterator[str]:
    """`  value  {rows}` per key, cut after MAX_KEYS lines."""
    for value, rows in islice(pairs, MAX_KEYS):
        yield f"  {value_text(data_type, value)}  {positions_text(rows)}"
    if total > MAX_KEYS:
        yield f"  … ({total - MAX_KEYS} more)"


def _value_rows_json(data_type: DataType,
                     pairs: Iterable[tuple[object, BitMap]]) -> list[dict[str, Any]]:
    return [{"value": value_json(data_type, value), "rows": positions_json(rows)}
            for value, rows in pairs]


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


# -- index blobs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenIndex:
    """An opened index blob, with the type its keys are shown in."""

    index_type: str
    data_type: DataType
    reader: Any


def open_blob(index_type: str, blob: bytes, data_type: str) -> OpenIndex:
    """`ps.open_index`; a type the index does not support is a usage problem."""
    try:
        dtype = DataType.parse(data_type)
        return OpenIndex(index_type, dtype, ps.open_index(index_type, blob, dtype))
    except ps.SchemaError as exc:
        raise UsageError(str(exc)) from exc


def _header(ix: OpenIndex, *facts: str) -> str:
    return f"{ix.index_type} index ({ix.data_type}), " + ", ".join(facts)


def _bitmap_text(ix: OpenIndex) -> Iterator[str]:
    r = ix.reader
    yield _header(ix, f"V{r.version}", count(r.num_rows, "row"), count(len(r), "key"),
                  _nulls_text(r.null_rows))
    yield from _value_rows_text(ix.data_type, r.items(), len(r))


def _bitmap_json(ix: OpenIndex) -> dict[str, Any]:
    r = ix.reader
    return {"version": r.version, "num_rows": r.num_rows, "num_keys": len(r),
            "null_rows": positions_json(r.null_rows),
            "keys": _value_rows_json(ix.data_type, r.items())}


def _bitmap_summary(ix: OpenIndex) -> str:
    r = ix.reader
    return (f"V{r.version}, {count(r.num_rows, 'row')}, {count(len(r), 'key')}, "
            f"{count(len(r.null_rows), 'null row')}")


def _bitmap_check(ix: OpenIndex) -> Iterator[str]:
    """Every block and bitmap read; each row must have exactly one key or be null."""
    r = ix.reader
    rows = [bitmap for _, bitmap in r.items()] + [r.null_rows]
    covered = BitMap.union(*rows)
    shared = sum(map(len, rows)) - len(covered)
    if shared:
        yield f"{count(shared, 'row')} belong to more than one key (or to a key and null)"
    if len(covered) != r.num_rows:
        yield f"{count(r.num_rows - len(covered), 'row')} have neither a key nor null"


def _bloom_set_bits(ix: OpenIndex) -> int:
    # The reader has no public accessor for its bit set yet.
    return int(np.unpackbits(np.frombuffer(ix.reader._bitset, dtype=np.uint8)).sum())


def _bloom_facts(ix: OpenIndex) -> tuple[int, int, int, float]:
    """(k, bits, bits set, false-positive rate as Java's reader probes)."""
    r = ix.reader
    bits, set_bits = r.num_bits, _bloom_set_bits(ix)
    return r.num_hash_functions, bits, set_bits, (set_bits / bits) ** r.probes   # bits >= 8


def _bloom_text(ix: OpenIndex) -> Iterator[str]:
    k, bits, set_bits, fpp = _bloom_facts(ix)
    yield _header(ix, f"k {k}", f"{bits} bits", f"{set_bits} set ({set_bits / bits:.1%})",
                  f"false-positive rate ≈ {fpp:.2g}")


def _bloom_json(ix: OpenIndex) -> dict[str, Any]:
    k, bits, set_bits, fpp = _bloom_facts(ix)
    return {"num_hash_functions": k, "num_bits": bits, "set_bits": set_bits,
            "fill_ratio": set_bits / bits, "false_positive_rate": fpp}


def _bloom_summary(ix: OpenIndex) -> str:
    k, bits, set_bits, _ = _bloom_facts(ix)
    return f"k {k}, {bits} bits, {set_bits} set"


def _bloom_check(ix: OpenIndex) -> Iterator[str]:
    r = ix.reader
    if r.probes != r.num_hash_functions:
        yield (f"k {r.num_hash_functions} >= 128 reads as negative in Java: no bit is tested, "
               f"every value passes")


def _bsi_by_value(ix: OpenIndex) -> list[tuple[int, BitMap]]:
    """(value, rows) for every distinct stored value, ascending."""
    by_value: dict[int, list[int]] = {}
    for row, value in ix.reader.values().items():
        by_value.setdefault(value, []).append(row)
    return [(value, BitMap(rows)) for value, rows in sorted(by_value.items())]


def _bsi_part_text(name: str, part: Any) -> str:
    if not part.ebm:
        return f"  {name} part: none"
    return (f"  {name} part: min {part.min_value}, max {part.max_value}, "
            f"{count(len(part.slices), 'slice')}, rows {positions_text(part.ebm)}")


def _bsi_text(ix: OpenIndex) -> Iterator[str]:
    r = ix.reader
    values = _bsi_by_value(ix)
    span = (f"values {value_text(ix.data_type, values[0][0])} .. "
            f"{value_text(ix.data_type, values[-1][0])}") if values else "no values"
    yield _header(ix, count(r.num_rows, "row"), span, _nulls_text(r.null_rows))
    yield _bsi_part_text("positive", r.positive)
    yield _bsi_part_text("negative", r.negative)
    yield from _value_rows_text(ix.data_type, values, len(values))


def _bsi_part_json(part: Any) -> dict[str, Any] | None:
    if not part.ebm:
        return None
    return {"min": part.min_value, "max": part.max_value, "num_slices": len(part.slices),
            "rows": positions_json(part.ebm)}


def _bsi_json(ix: OpenIndex) -> dict[str, Any]:
    r = ix.reader
    return {"num_rows": r.num_rows, "null_rows": positions_json(r.null_rows),
            "positive": _bsi_part_json(r.positive), "negative": _bsi_part_json(r.negative),
            "values": _value_rows_json(ix.data_type, _bsi_by_value(ix))}


def _bsi_summary(ix: OpenIndex) -> str:
    r = ix.reader
    return (f"{count(r.num_rows, 'row')}, {count(len(set(r.values().values())), 'distinct value')}"
            f", {count(len(r.null_rows), 'null row')}")


def _range_shape(ix: OpenIndex) -> tuple[int, int]:
    """(dictionary chunks, BSI slices)."""
    # The reader has no public accessors for these yet.
    r = ix.reader
    return r._dictionary.num_chunks, r._bsi.num_slices


def _range_text(ix: OpenIndex) -> Iterator[str]:
    r = ix.reader
    chunks, slices = _range_shape(ix)
    span = (f"min {value_text(ix.data_type, r.min)}, max {value_text(ix.data_type, r.max)}"
            if r.num_keys > 0 else "no keys")
    yield _header(ix, count(r.num_rows, "row"), count(r.num_keys, "key"),
                  count(chunks, "chunk"), count(slices, "slice"), span, _nulls_text(r.null_rows))
    yield from _value_rows_text(ix.data_type, r.items(), r.num_keys)


def _range_json(ix: OpenIndex) -> dict[str, Any]:
    r = ix.reader
    chunks, slices = _range_shape(ix)
    return {"num_rows": r.num_rows, "num_keys": r.num_keys, "num_chunks": chunks,
            "num_slices": slices, "min": value_json(ix.data_type, r.min),
            "max": value_json(ix.data_type, r.max), "null_rows": positions_json(r.null_rows),
            "keys": _value_rows_json(ix.data_type, r.items())}


def _range_summary(ix: OpenIndex) -> str:
    r = ix.reader
    chunks, _ = _range_shape(ix)
    return (f"{count(r.num_rows, 'row')}, {count(r.num_keys, 'key')} in "
            f"{count(chunks, 'chunk')}, {count(len(r.null_rows), 'null row')}")


def _range_check(ix: OpenIndex) -> Iterator[str]:
    """Every chunk and slice read; codes, min and max must agree with the dictionary."""
    r = ix.reader
    items = list(r.items())
    if len(items) != max(r.num_keys, 0):
        yield f"the dictionary holds {count(len(items), 'key')}, the header says {r.num_keys}"
    if items and (items[0][0], items[-1][0]) != (r.min, r.max):
        yield (f"the header's min/max ({r.min!r}, {r.max!r}) are not the dictionary's first "
               f"and last keys ({items[0][0]!r}, {items[-1][0]!r}); Java's shortcuts use them")
    unused = sum(not rows for _, rows in items)
    if unused:
        yield f"{count(unused, 'key')} of the dictionary have no rows"
    coded = BitMap.union(BitMap(), *(rows for _, rows in items))
    stray = len(BitMap().flip(0, r.num_rows) - r.null_rows - coded)
    if stray:
        yield f"{count(stray, 'row')} carry codes beyond the dictionary"


def _index_layout(name: str, text: Callable[[OpenIndex], Iterator[str]],
                  to_json: Callable[[OpenIndex], dict[str, Any]],
                  summary: Callable[[OpenIndex], str],
                  check: Callable[[OpenIndex], Iterator[str]]) -> Layout:
    def parse(data: bytes, types: Types) -> OpenIndex:
        return open_blob(name, data, types.data_type or "")

    def json_fields(ix: OpenIndex) -> dict[str, Any]:
        return {"index_type": ix.index_type, "data_type": str(ix.data_type), **to_json(ix)}

    return Layout(name, parse, text, json_fields, summary, check, needs_type=True)


# -- file-index container -----------------------------------------------------------------------


@dataclass(frozen=True)
class Container:
    """A parsed container and its blobs, opened where the column's type is known."""

    file: ps.FileIndexFile
    paths: list[str]                    # each entry's field path, `columns[i].indexes[j]`
    blobs: dict[int, OpenIndex]         # by position in `file.entries`
    unchecked: list[str]                # why the other blobs were not opened
    typed: bool                         # whether any type was given

    @property
    def warnings(self) -> list[str]:
        return self.file.warnings


def _entry_paths(fi: ps.FileIndexFile) -> list[str]:
    seen: dict[int, int] = {}
    paths = []
    for e in fi.entries:
        j = seen.get(e.column_index, 0)
        seen[e.column_index] = j + 1
        paths.append(f"columns[{e.column_index}].indexes[{j}]")
    return paths


def _blob_name(e: ps.IndexEntry) -> str:
    return f"{e.column!r} {e.index_type}"


@contextmanager
def _in_blob(path: str, e: ps.IndexEntry) -> Iterator[None]:
    """A FormatError inside a blob, located in the container (offset and field path)."""
    try:
        yield
    except ps.FormatError as exc:
        raise exc.within(f"{path}.blob", e.offset) from exc


def parse_container(data: bytes, types: Types) -> Container:
    """The container, each blob opened with its column's type (errors located in the file)."""
    fi = ps.FileIndexFile.parse(data)
    paths = _entry_paths(fi)
    blobs: dict[int, OpenIndex] = {}
    untyped: list[str] = []
    unknown: list[str] = []
    for i, e in enumerate(fi.entries):
        if e.blob is None:
            continue
        data_type = types.of(e.column)
        if e.index_type not in READERS:
            unknown.append(_blob_name(e))
        elif data_type is None:
            untyped.append(repr(e.column))
        else:
            blobs[i] = _open_entry(e, paths[i], data_type)
    unchecked = []
    if untyped:
        unchecked.append(f"no type for {', '.join(dict.fromkeys(untyped))} "
                         f"(pass --row-type or --type)")
    if unknown:
        unchecked.append(f"no reader for {', '.join(unknown)}")
    return Container(fi, paths, blobs, unchecked, bool(types))


def _open_entry(e: ps.IndexEntry, path: str, data_type: str) -> OpenIndex:
    try:
        with _in_blob(path, e):
            return open_blob(e.index_type, e.blob, data_type)
    except UsageError as exc:
        raise UsageError(f"{_blob_name(e)}: {exc}") from exc


def _by_column(fi: ps.FileIndexFile) -> Iterator[tuple[str, list[tuple[int, ps.IndexEntry]]]]:
    """The head's entries (with their positions) in file order, grouped by column
    (duplicates stay visible)."""
    for column, entries in groupby(enumerate(fi.entries), key=lambda ie: ie[1].column):
        yield column, list(entries)


def _entry_text(e: ps.IndexEntry) -> str:
    if e.blob is None:
        return f"{e.index_type}  empty (offset {e.offset}, length {e.length})"
    return f"{e.index_type}  at {e.offset}, {count(len(e.blob), 'byte')}"


def _container_text(c: Container) -> Iterator[str]:
    fi = c.file
    yield (f"file-index container, head {fi.head_length} bytes, "
           f"{count(len(fi.columns), 'column')}, {count(len(fi.entries), 'entry', 'entries')}")
    for column, entries in _by_column(fi):
        yield f"  {column!r}: " + "; ".join(_entry_text(e) for _, e in entries)
        for i, e in entries:
            if i in c.blobs:
                with _in_blob(c.paths[i], e):
                    yield from ("    " + line for line in LAYOUTS[e.index_type].text(c.blobs[i]))


def _container_json(c: Container) -> dict[str, Any]:
    fi = c.file

    def entry(i: int, e: ps.IndexEntry) -> dict[str, Any]:
        fields = {"type": e.index_type, "offset": e.offset, "length": e.length,
                  "blob_size": None if e.blob is None else len(e.blob)}
        if i in c.blobs:
            with _in_blob(c.paths[i], e):
                fields["index"] = LAYOUTS[e.index_type].json(c.blobs[i])
        return fields

    return {"head_length": fi.head_length, "redundant": fi.redundant.hex(), "columns": [
        {"name": column, "indexes": [entry(i, e) for i, e in entries]}
        for column, entries in _by_column(fi)]}


def _container_summary(c: Container) -> str:
    fi = c.file
    return f"{count(len(fi.columns), 'column')}, {count(len(fi.entries), 'entry', 'entries')}"


def _container_check(c: Container) -> Iterator[str]:
    """Every opened blob read in full; its warnings and errors located in the container."""
    for i, ix in c.blobs.items():
        e, path = c.file.entries[i], c.paths[i]
        with _in_blob(path, e):
            warnings = list(LAYOUTS[ix.index_type].check(ix))
        yield from (f"{path} ({_blob_name(e)}): {w}" for w in warnings)


def _container_details(c: Container) -> Iterator[str]:
    for i, ix in c.blobs.items():
        e = c.file.entries[i]
        yield f"   {_blob_name(e)}: {LAYOUTS[ix.index_type].summary(ix)}"
    if c.unchecked and not c.typed:
        yield "   index blobs not checked: pass --row-type (or --type for every column)"
    elif c.unchecked:
        yield from (f"   not checked: {reason}" for reason in c.unchecked)


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
    "file-index": Layout("file-index", parse_container, _container_text, _container_json,
                         _container_summary, _container_check, _container_details),
    "hash": Layout("hash", lambda data, _: ps.read_hash_index(data),
                   _hash_text, _hash_json, lambda h: count(len(h), "int")),
    "bitmap": _index_layout("bitmap", _bitmap_text, _bitmap_json, _bitmap_summary,
                            _bitmap_check),
    "bloom-filter": _index_layout("bloom-filter", _bloom_text, _bloom_json, _bloom_summary,
                                  _bloom_check),
    "bsi": _index_layout("bsi", _bsi_text, _bsi_json, _bsi_summary,
                         lambda ix: iter(())),     # decoded in full when opened
    "range-bitmap": _index_layout("range-bitmap", _range_text, _range_json, _range_summary,
                                  _range_check),
}


# -- choosing a layout --------------------------------------------------------------------------


def detect(data: bytes) -> str | None:
    """The layout of a file that carries a signature, or None (hash index, index blobs)."""
    if data[:8] == CONTAINER_MAGIC:
        return "file-index"
    if data == b"\x01" or (data[:1] == b"\x01" and data[5:9] in DV_MAGICS):
        return "dv"
    return None


def resolve(name: str, data: bytes, types: Types) -> Layout:
    """The `Layout` for `--layout name` (detected for `auto`), or a UsageError saying why not."""
    if name == "auto":
        detected = detect(data)
        if detected is None:
            raise UsageError("cannot tell the layout: no file-index magic, not a deletion-vector "
                             "file; pass --layout (a hash index has no header: --layout hash; "
                             "an index blob needs --layout TYPE --type DATA_TYPE)")
        name = detected
    layout = LAYOUTS[name]
    if layout.needs_type and not types.data_type:
        raise UsageError(f"--layout {name} needs --type DATA_TYPE (e.g. --type INT)")
    return layout


def read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror or exc}") from exc


def load(path: str, layout_name: str, types: Types) -> tuple[Layout, bytes, Any]:
    """Read and parse one file: (layout, bytes, model); FormatError or UsageError otherwise."""
    data = read_bytes(path)
    layout = resolve(layout_name, data, types)
    return layout, data, layout.parse(data, types)


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


def result_kind(result: ps.IndexResult) -> str:
    return "skip" if not result.remain else "remain" if result.rows is None else "rows"


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
    name = detect(data) if args.layout == "auto" else args.layout
    if name is None:
        raise UsageError("cannot tell the layout: pass --layout")
    types = types_of(args)
    if name in INDEX_TYPES and types.data_type is None:
        raise UsageError(f"a {name} blob needs --type (its column's data type)")
    for line in hexdump.render(hexdump.parse_layout(name, data, types.data_type), data):
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
    from paimon_schema import demo  # imports the Java harness only when asked

    return demo.run(keep=args.keep, out=out)


def cmd_pipeline(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from paimon_schema.spark import pipeline  # imports pyspark only when asked

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
