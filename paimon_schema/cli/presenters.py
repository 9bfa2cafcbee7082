"""How the command line shows each layout: one `Layout` entry per layout in `LAYOUTS` says how
to parse the bytes, how to show the result to a person and as JSON, a one-line summary and a
full check for `verify`. Index blobs need their column's data type (`--type`); a file-index
container opens its blobs where `--row-type` (or `--type`, for every column) gives the type.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import groupby, islice
from pathlib import Path
from typing import Any

import numpy as np
from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.layouts import file_index, registry
from paimon_schema.layouts.bitmap_global_index import BitmapGlobalIndexReader
from paimon_schema.layouts.btree_global_index import BTreeGlobalIndexReader
from paimon_schema.layouts.registry import INDEX_TYPES, detect
from paimon_schema.values.types import DataType

CONTAINER_MAGIC = file_index.MAGIC.to_bytes(8, "big")
MAX_RANGES = 20
RANGES_CHUNK = 1 << 22  # positions turned into one numpy array at most
MAX_HASHES = 32
MAX_KEYS = 20           # key lines of an index dump before "… (N more)"
#: `--all`: text dumps list every key, range and hash instead of cutting them
SHOW_ALL: ContextVar[bool] = ContextVar("SHOW_ALL", default=False)
SPARK_EXTRA = "pip install 'paimon-schema[spark]'"


class UsageError(Exception):
    """A problem with how the command was called, not with a file's bytes (exit 2)."""


@dataclass(frozen=True)
class Types(Mapping[str, str]):
    """The column types the command line was given: `--type` is an index blob's type, or every
    container column's; `--row-type` gives one per column and wins over `--type`. A row type
    mapping (as `paimon_schema.query` takes one) whose lookups fall back to `--type`."""

    data_type: str | None = None
    row_type: Mapping[str, str] = field(default_factory=dict)

    def of(self, column: str) -> str | None:
        return self.row_type.get(column, self.data_type)

    def __getitem__(self, column: str) -> str:
        data_type = self.of(column)
        if data_type is None:
            raise KeyError(column)
        return data_type

    def __iter__(self) -> Iterator[str]:
        return iter(self.row_type)

    def __len__(self) -> int:
        return len(self.row_type)

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


def _cut(limit: int) -> int | None:
    """How many items a text dump shows: `limit`, or all of them with `--all`."""
    return None if SHOW_ALL.get() else limit


def positions_text(bitmap: BitMap | BitMap64, limit: int | None = MAX_RANGES) -> str:
    """`{1-3, 100}`: inclusive ranges, cut after `limit` of them (None or `--all`: none cut)."""
    limit = None if limit is None else _cut(limit)
    ranges = bitmap_ranges(bitmap)
    if limit is None:
        limit = len(ranges)
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
    if not isinstance(value, (int, np.integer)):   # the keys below are all integers
        return value
    number, root = int(value), data_type.root
    if root == "DECIMAL":
        return str(decimal.Decimal(number).scaleb(-(data_type.scale or 0)))
    try:
        if root == "DATE":
            return (ps.types.EPOCH_DATE + dt.timedelta(days=number)).isoformat()
        if root == "TIME":
            moment = dt.datetime.min + dt.timedelta(milliseconds=number)
            return moment.time().isoformat("milliseconds" if number % 1000 else "seconds")
        if data_type.is_timestamp:
            micros = number * 1000 if (data_type.precision or 0) <= 3 else number
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
    """`  value  {rows}` per key, cut after MAX_KEYS lines (unless `--all`)."""
    limit = _cut(MAX_KEYS)
    for value, rows in islice(pairs, limit):
        yield f"  {value_text(data_type, value)}  {positions_text(rows)}"
    if limit is not None and total > limit:
        yield f"  … ({total - limit} more)"


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
    return ix.reader.set_bits


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
    return r.num_chunks, r.num_slices


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


def entry_paths(fi: ps.FileIndexFile) -> list[str]:
    """Each entry's field path in the container (`columns[i].indexes[j]`), in entry order."""
    seen: dict[int, int] = {}
    paths = []
    for e in fi.entries:
        j = seen.get(e.column_index, 0)
        seen[e.column_index] = j + 1
        paths.append(f"head.columns[{e.column_index}].indexes[{j}]")
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
    paths = entry_paths(fi)
    blobs: dict[int, OpenIndex] = {}
    untyped: list[str] = []
    unknown: list[str] = []
    for i, e in enumerate(fi.entries):
        if e.blob is None:
            continue
        data_type = types.of(e.column)
        if e.index_type not in INDEX_TYPES:
            unknown.append(_blob_name(e))
        elif data_type is None:
            untyped.append(repr(e.column))
        else:
            blobs[i] = _open_entry(e, e.blob, paths[i], data_type)
    unchecked = []
    if untyped:
        unchecked.append(f"no type for {', '.join(dict.fromkeys(untyped))} "
                         f"(pass --row-type or --type)")
    if unknown:
        unchecked.append(f"no reader for {', '.join(unknown)}")
    return Container(fi, paths, blobs, unchecked, bool(types))


def _open_entry(e: ps.IndexEntry, blob: bytes, path: str, data_type: str) -> OpenIndex:
    try:
        with _in_blob(path, e):
            return open_blob(e.index_type, blob, data_type)
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


# -- bitmap global index ------------------------------------------------------------------------


def _global_parse(data: bytes, types: Types) -> BitmapGlobalIndexReader:
    return BitmapGlobalIndexReader.open(data, types.data_type)


def _global_key(ix: BitmapGlobalIndexReader, key: bytes) -> str:
    return key.hex() if ix.key_codec is None else repr(ix.key_codec.decode(key))


def _global_text(ix: BitmapGlobalIndexReader) -> Iterator[str]:
    f = ix.footer
    order = "serialized key order" if ix.version == 1 else "logical key order"
    yield (f"bitmap global index v{ix.version} ({order}), {count(f.num_values, 'key')}, "
           f"null rows {positions_text(ix.is_null())}")
    limit = _cut(MAX_KEYS)
    entries = list(islice(ix.entries(), limit))
    for key, rows in entries:
        yield f"  {_global_key(ix, key)}: {positions_text(rows)}"
    if limit is not None and f.num_values > limit:
        yield f"  … ({f.num_values - limit} more)"


def _global_json(ix: BitmapGlobalIndexReader) -> dict[str, Any]:
    f = ix.footer
    return {"version": ix.version, "num_values": f.num_values, "null_rows": positions_json(ix.is_null()),
            "non_null_rows": positions_json(ix.is_not_null()),
            "keys": [{"key": key.hex(), "rows": positions_json(rows)} for key, rows in ix.entries()]}


def _global_summary(ix: BitmapGlobalIndexReader) -> str:
    return f"version {ix.version}, {count(ix.footer.num_values, 'key')}"


def _global_check(ix: BitmapGlobalIndexReader) -> Iterator[str]:
    ix.verify()
    return iter(())


# -- hash index ---------------------------------------------------------------------------------


def _hash_text(hashes: np.ndarray) -> Iterator[str]:
    yield f"hash index, {count(len(hashes), 'int')}"
    if len(hashes):
        limit = _cut(MAX_HASHES) or len(hashes)
        more = f" … ({len(hashes) - limit} more)" if len(hashes) > limit else ""
        yield "  " + " ".join(map(str, hashes[:limit].tolist())) + more


def _hash_json(hashes: np.ndarray) -> dict[str, Any]:
    return {"count": len(hashes), "hashes": hashes.tolist()}


# -- btree global index -------------------------------------------------------------------------


def _btree_parse(data: bytes, types: Types) -> BTreeGlobalIndexReader:
    return BTreeGlobalIndexReader.open(data, types.data_type or "")


def _btree_key(reader: BTreeGlobalIndexReader, key: bytes) -> str:
    try:
        return repr(reader.keys.decode(key))
    except (ValueError, OverflowError):
        return "0x" + key.hex()


def _btree_text(reader: BTreeGlobalIndexReader) -> Iterator[str]:
    f = reader.footer
    yield (f"btree global index ({reader.keys.data_type}), {count(len(reader.blocks), 'data block')}, "
           f"null bitmap: {'yes' if f.has_null_bitmap else 'no'}, "
           f"bloom filter: {f'{f.len_bloom_filter} bytes' if f.has_bloom_filter else 'no'}")
    limit = _cut(MAX_KEYS)
    for n, (key, rows) in enumerate(reader.entries()):
        if limit is not None and n == limit:
            yield "  … (more keys: --all lists them)"
            break
        yield f"  {_btree_key(reader, key)}: {positions_text(BitMap64(rows.tolist()))}"
    if f.has_null_bitmap:
        yield f"  null: {positions_text(reader.is_null())}"


def _btree_json(reader: BTreeGlobalIndexReader) -> dict[str, Any]:
    f = reader.footer
    return {"data_type": str(reader.keys.data_type),
            "footer": {"bloom_filter": [f.ofs_bloom_filter, f.len_bloom_filter, f.num_expected_entries],
                       "index_block": [f.ofs_index_block, f.len_index_block],
                       "null_bitmap": [f.ofs_null_bitmap, f.len_null_bitmap], "version": f.version},
            "data_blocks": [[b.offset, b.size] for b in reader.blocks],
            "keys": [{"key": _btree_key(reader, key), **positions_json(BitMap64(rows.tolist()))}
                     for key, rows in reader.entries()],
            "null_rows": positions_json(reader.is_null())}


def _btree_summary(reader: BTreeGlobalIndexReader) -> str:
    keys = rows = 0
    for _, ids in reader.entries():
        keys, rows = keys + 1, rows + len(ids)
    return (f"{count(keys, 'key')}, {count(rows, 'row')} in {count(len(reader.blocks), 'data block')}, "
            f"{count(len(reader.is_null()), 'null row')}")


def _btree_check(reader: BTreeGlobalIndexReader) -> Iterator[str]:
    """Every block and entry read (CRCs, order, row ids), and the null bitmap."""
    seen = BitMap64(reader.is_null())
    for _, ids in reader.entries():
        rows = BitMap64(ids.tolist())
        if len(rows) != len(ids) or seen.intersection_cardinality(rows):
            yield "a row id is listed twice (under one key, two keys, or a key and null)"
            return
        seen |= rows


LAYOUTS: dict[str, Layout] = {
    "deletion-vectors": Layout("deletion-vectors", lambda data, _: ps.DeletionVectorFile.parse(data),
                               _dv_text, _dv_json, _dv_summary),
    "file-index": Layout("file-index", parse_container, _container_text, _container_json,
                         _container_summary, _container_check, _container_details),
    "hash-index": Layout("hash-index", lambda data, _: ps.read_hash_index(data),
                         _hash_text, _hash_json, lambda h: count(len(h), "int")),
    "bitmap-global-index": Layout("bitmap-global-index", _global_parse, _global_text, _global_json,
                                  _global_summary, _global_check),
    "bitmap": _index_layout("bitmap", _bitmap_text, _bitmap_json, _bitmap_summary,
                            _bitmap_check),
    "bloom-filter": _index_layout("bloom-filter", _bloom_text, _bloom_json, _bloom_summary,
                                  _bloom_check),
    "bsi": _index_layout("bsi", _bsi_text, _bsi_json, _bsi_summary,
                         lambda ix: iter(())),     # decoded in full when opened
    "range-bitmap": _index_layout("range-bitmap", _range_text, _range_json, _range_summary,
                                  _range_check),
    "btree-global-index": Layout("btree-global-index", _btree_parse, _btree_text, _btree_json,
                                 _btree_summary, _btree_check, needs_type=True),
}


# -- choosing a layout --------------------------------------------------------------------------


def resolve(name: str, data: bytes, types: Types) -> Layout:
    """The `Layout` for `--layout name` (detected for `auto`), or a UsageError saying why not."""
    if name == "auto":
        detected = detect(data)
        if detected is None:
            raise UsageError("cannot tell the layout: no file-index magic, not a deletion-vector "
                             "file; pass --layout (a hash index has no header: --layout "
                             "hash-index; an index blob needs --layout TYPE --type DATA_TYPE)")
        name = detected
    name = dump_layout(name)
    layout = LAYOUTS[name]
    if layout.needs_type and not types.data_type:
        raise UsageError(f"--layout {name} needs --type DATA_TYPE (e.g. --type INT)")
    return layout


def layout_name(text: str) -> str:
    """A layout in any accepted spelling -> its canonical name; UsageError naming them all."""
    layout = registry.find(text)
    if layout is None:
        raise UsageError(f"unknown layout {text!r} (one of: {', '.join(registry.LAYOUTS)}; "
                         f"see `paimon-schema layouts`)")
    return layout.name


def dump_layout(text: str) -> str:
    """A layout `dump` and `verify` read (not the shared pieces, which are no file)."""
    name = layout_name(text)
    if registry.LAYOUTS[name].embedded:
        raise UsageError(f"{name} is not a file of its own (it is embedded in the others): "
                         f"pass one of {', '.join(registry.FILES)}")
    return name


def read_bytes(path: str) -> bytes:
    target = Path(path)
    if target.is_dir():
        if (target / "schema").is_dir():
            raise UsageError(f"is a Paimon table directory: try `paimon-schema table {path}`")
        raise UsageError("is a directory, not a file")
    try:
        return target.read_bytes()
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


def result_kind(result: ps.IndexResult) -> str:
    """What a query answered: `skip` (no row matches), `remain` (cannot tell) or `rows`."""
    return "skip" if not result.remain else "remain" if result.rows is None else "rows"


def format_error_lines(path: str, exc: ps.FormatError) -> list[str]:
    """`<file>: <message>` and the location spelled out for scripts. The file is the one the
    error names (`exc.file`: a sidecar or deletion-vector file inside the table `path`),
    whose offsets these are."""
    offset = "-" if exc.offset is None else exc.offset
    file = exc.file or path
    first = str(exc) if exc.file and exc.file in str(exc) else f"{file}: {exc}"
    return [first, f"    offset={offset} path={exc.path or '-'} file={file}"]
