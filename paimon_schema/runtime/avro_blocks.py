"""The records of an Avro container file, as fastavro reads them, decoded by the C extension
built from `avro.c` where it can (about 20x fastavro's per-record decode on Paimon manifests).

The container (header, blocks, sync markers; codecs null, deflate and zstandard) is read here
and each block's records are decoded by `_avro.records` with the writer schema compiled once
per distinct schema (fastavro's `block_reader` parses the schema of every file: ~1 ms a
manifest). A schema with something the compiler does not know (recursive types), or a
package built without a C compiler, is read by fastavro's own reader: the same values.
"""

from __future__ import annotations

import functools
import io
import json
import zlib
from collections.abc import Callable, Iterator
from typing import Any, cast

import fastavro
from fastavro.read import LOGICAL_READERS

from paimon_schema.runtime import collector
from paimon_schema.values.errors import FormatError

try:
    from paimon_schema.runtime import _avro
except ImportError:                         # built without a C compiler
    _avro = None  # type: ignore[assignment]

__all__ = ["Gate", "compile_schema", "project", "read_fields", "read_records"]

#: `read_fields`' gate: (slot, judge, seen, excluded).
Gate = tuple[int, Callable[[Any], Any], dict[Any, Any], Any]

(NUL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, RECORD, UNION, ARRAY, MAP, ENUM, FIXED,
 CONVERT) = range(15)
_PRIMITIVES = {"null": NUL, "boolean": BOOLEAN, "int": INT, "long": LONG, "float": FLOAT,
               "double": DOUBLE, "bytes": BYTES, "string": STRING}


class _Unsupported(Exception):
    """A schema the C decoder does not take: fastavro reads the file."""


def compile_schema(schema: Any) -> tuple | None:
    """The writer schema (fastavro's parsed form) as `avro.c` takes it, or None when it holds
    something the decoder does not know."""
    try:
        return _compile(schema, {}, set())
    except _Unsupported:
        return None


def _compile(schema: Any, named: dict[str, tuple], open_names: set[str]) -> tuple:
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return (_PRIMITIVES[schema],)
        if schema in open_names or schema not in named:
            raise _Unsupported(schema)          # recursive, or unknown
        return named[schema]
    if isinstance(schema, list):
        return (UNION, tuple(_compile(branch, named, open_names) for branch in schema))
    if not isinstance(schema, dict):
        raise _Unsupported(schema)
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if logical is not None:
        reader = LOGICAL_READERS.get(f"{kind}-{logical}")
        if reader is not None:
            inner = _compile({k: v for k, v in schema.items() if k != "logicalType"}, named,
                             open_names)
            return (CONVERT, inner, _converter(reader, schema))
    if kind in _PRIMITIVES:
        return (_PRIMITIVES[kind],)
    name = schema.get("name")
    compiled: tuple
    if kind == "record" or kind == "error":
        open_names.add(str(name))
        fields = schema["fields"]
        compiled = (RECORD, tuple(str(f["name"]) for f in fields),
                    tuple(_compile(f["type"], named, open_names) for f in fields))
        open_names.discard(str(name))
    elif kind == "array":
        compiled = (ARRAY, _compile(schema["items"], named, open_names))
    elif kind == "map":
        compiled = (MAP, _compile(schema["values"], named, open_names))
    elif kind == "enum":
        compiled = (ENUM, tuple(str(s) for s in schema["symbols"]))
    elif kind == "fixed":
        if int(schema["size"]) < 0:
            raise _Unsupported("a fixed of negative size")     # fastavro refuses the data
        compiled = (FIXED, int(schema["size"]))
    else:
        raise _Unsupported(kind)
    if name is not None:
        named[name] = compiled
    return compiled


def _converter(reader: Callable[..., Any], schema: dict) -> Callable[[Any], Any]:
    return lambda value: reader(value, schema, schema)


@functools.lru_cache(maxsize=64)
def _compiled(schema_json: bytes) -> tuple | None:
    return compile_schema(fastavro.parse_schema(json.loads(schema_json)))


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _length(raw: bytes, pos: int) -> tuple[int, int]:
    """A length and where its bytes start: within `raw` (a damaged negative one moved the
    header's reading back, forever)."""
    length, start = _varint(raw, pos)
    if length < 0 or start + length > len(raw):
        raise ValueError(f"a header length of {length} at byte {pos}")
    return length, start


def _header(raw: bytes) -> tuple[dict[str, bytes], bytes, int]:
    """The container's metadata, its sync marker and where its blocks start."""
    if raw[:4] != b"Obj\x01":
        raise ValueError("no Avro magic")
    meta: dict[str, bytes] = {}
    pos = 4
    while True:
        count, pos = _varint(raw, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = _varint(raw, pos)
        for _ in range(count):
            length, pos = _length(raw, pos)
            key = raw[pos:pos + length].decode()
            pos += length
            length, pos = _length(raw, pos)
            meta[key] = raw[pos:pos + length]
            pos += length
    sync = raw[pos:pos + 16]
    if len(sync) != 16:
        raise ValueError("truncated header")
    return meta, sync, pos + 16


#: A decompressed block's limit: a few damaged bytes may claim gigabytes. Avro writers close
#: a block at ~64 KB (Java's `DataFileWriter` sync interval; fastavro's 16 KB).
_MAX_BLOCK = 64 << 20


def _inflate(data: bytes) -> bytes:
    inflater = zlib.decompressobj(-15)
    out = inflater.decompress(data, _MAX_BLOCK + 1)
    if len(out) > _MAX_BLOCK or inflater.unconsumed_tail:
        raise ValueError(f"a deflate block inflates past {_MAX_BLOCK >> 20} MiB")
    return out


def _unzstd(decompressor: Any, data: bytes) -> bytes:
    import zstandard

    size = zstandard.frame_content_size(data)
    if 0 <= size <= _MAX_BLOCK:             # the frame says its size (Java's writers do):
        out: bytes = decompressor.decompress(data)  # one buffer, a third of the streamed read's time
        return out
    with decompressor.stream_reader(data) as reader:
        out = reader.read(_MAX_BLOCK + 1)
    if len(out) > _MAX_BLOCK:
        raise ValueError(f"a zstandard block decompresses past {_MAX_BLOCK >> 20} MiB")
    return out


def _decompressor(codec: bytes) -> Callable[[bytes], bytes] | None:
    """The codec's decompression of a block, for the blocks of one file (one zstandard
    context for them all: making one is half a small block's decompression)."""
    if codec in (b"", b"null"):
        return bytes
    if codec == b"deflate":
        return _inflate
    if codec == b"zstandard":
        import zstandard

        return functools.partial(_unzstd, zstandard.ZstdDecompressor())
    return None                              # snappy, bzip2, xz, ...: fastavro reads them


def read_records(raw: bytes, path: str) -> list[dict]:
    """The records of the Avro file `raw` (named `path` in errors); FormatError for bytes
    that are no Avro file, or records that do not decode."""
    try:
        meta, sync, pos = _header(raw)
        schema = _compiled(meta["avro.schema"]) if _avro is not None else None
        decompress = _decompressor(meta.get("avro.codec", b"null"))
        if schema is None or decompress is None:
            return _fastavro_records(raw, path)
        out: list[dict] = []
        with collector.paused():
            for start, count, data in _blocks(raw, pos, sync, decompress, path):
                try:
                    out += _avro.records(data, count, schema)
                except ValueError as exc:
                    if len(exc.args) != 3:
                        raise
                    raise _located(path, start, *exc.args) from None
        return out
    except FormatError:
        raise
    except Exception as exc:        # fastavro, zlib, zstandard raise many types on bad input
        raise _unreadable(path, exc) from exc


def _fastavro_records(raw: bytes, path: str) -> list[dict]:
    """The records as fastavro's reader reads them, each block's count held to its bytes:
    fastavro reads a block's count of records and moves on, so a damaged count (lowered, or
    negative) silently dropped records, files from a listing, where `avro.c` refuses them."""
    out: list[dict] = []
    for block in fastavro.block_reader(io.BytesIO(raw)):
        if block.num_records < 0:
            raise _refused(path, block.offset, "has a negative record count")
        # (fastavro types a datum as any Avro value; the callers' files hold records)
        out += [cast(dict, r) for r in block if r is not None]
        data = block.bytes_     # type: ignore[attr-defined]  # (the block's bytes, in both fastavro builds)
        if data.tell() != len(data.getbuffer()):
            raise _refused(path, block.offset, "has bytes after its records")
    return out


def _refused(path: str, start: int, what: str) -> FormatError:
    """The block at byte `start` refused as a whole."""
    return _unreadable(path, f"the block at byte {start} {what}", offset=start)


def read_fields(raw: bytes, path: str, wanted: tuple[tuple[str, ...], ...],
                shared: tuple[int, ...] = (), gate: Gate | None = None) -> list[tuple]:
    """Of each record of the Avro file `raw`, the values at the field paths `wanted` (names
    from the top record down through nested records: `("_FILE", "_FILE_NAME")`) as one flat
    tuple; None where the writer's schema has no such field, or where a record on the path
    is null; arrays as tuples. The same values as `read_records` projected (`project`), at a
    fraction of the cost where `avro.c` decodes the file (the other fields are walked over,
    not built); errors as `read_records`' (a skipped string's UTF-8 and a skipped logical
    type's conversion aside: never read, never checked). The values of the `wanted` paths
    numbered in `shared` repeat from record to record: equal ones may be one object.

    A `gate` (slot, judge, seen, excluded), where `avro.c` decodes: `wanted[slot]` is a
    top-level field, `judge` answers each distinct value of it once (`seen`: value -> its
    answer, filled here), and a record whose value it answers `excluded` for keeps only its
    values up to that slot, the later ones None (walked over: a plan skips the manifest
    entries of partitions its filter excludes). `seen` stays empty where Python decodes."""
    try:
        meta, sync, pos = _header(raw)
        schema = _compiled(meta["avro.schema"]) if _avro is not None else None
        program = None if schema is None else _program(schema, wanted, shared)
        decompress = _decompressor(meta.get("avro.codec", b"null"))
    except Exception as exc:
        raise _unreadable(path, exc) from exc
    if program is None or decompress is None:
        return [project(record, wanted) for record in read_records(raw, path)]
    try:
        with collector.paused():
            return _avro.pick(_blocks(raw, pos, sync, decompress, path), program, gate)
    except FormatError:
        raise
    except ValueError as exc:
        if len(exc.args) != 4:
            raise _unreadable(path, exc) from exc
        reason, offset, where, start = exc.args
        raise _located(path, start, reason, offset, where) from None
    except Exception as exc:        # zlib, zstandard, a logical type's conversion
        raise _unreadable(path, exc) from exc


def project(record: Any, wanted: tuple[tuple[str, ...], ...]) -> tuple:
    """`read_fields`' tuple of one record as `read_records` reads it."""
    out = []
    for names in wanted:
        value = record
        for name in names:
            value = value.get(name) if isinstance(value, dict) else None
        out.append(_tuples(value))
    return tuple(out)


def _tuples(value: Any) -> Any:
    """`value` with its arrays as tuples, as `read_fields` reads them."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=64)
def _program(schema: tuple, wanted: tuple[tuple[str, ...], ...], shared: tuple[int, ...]) -> Any:
    """`avro.c`'s compiled `pick` of the `wanted` paths, None where Python projects."""
    picks = _picks(schema, wanted)
    return None if picks is None else _avro.program(schema, picks, len(wanted), shared)


@functools.lru_cache(maxsize=64)
def _picks(schema: tuple, wanted: tuple[tuple[str, ...], ...]) -> tuple | None:
    """`avro.c`'s picks of the `wanted` paths in a compiled RECORD schema (see `pick`), or
    None when a path goes through something else than records (a union: Python projects)."""
    if schema[0] != RECORD:
        return None
    tree: dict[str, Any] = {}
    for slot, names in enumerate(wanted):
        node = tree
        for name in names[:-1]:
            child = node.setdefault(name, {})
            if not isinstance(child, dict):
                return None                   # a path that is also a leaf
            node = child
        if names[-1] in node:
            return None
        node[names[-1]] = slot

    def build(compiled: tuple, node: dict[str, Any]) -> tuple | None:
        names, types = compiled[1], compiled[2]
        picks: list[Any] = []
        for name, type_ in zip(names, types):
            pick = node.get(name)
            if isinstance(pick, dict):
                if type_[0] != RECORD:
                    return None
                pick = build(type_, pick)
                if pick is None:
                    return None
            picks.append(pick)
        return tuple(picks)

    return build(schema, tree)


def _blocks(raw: bytes, pos: int, sync: bytes, decompress: Callable[[bytes], bytes], path: str
            ) -> Iterator[tuple[int, int, bytes]]:
    """Each block's start, record count and decompressed bytes."""
    while pos < len(raw):
        start = pos
        count, pos = _varint(raw, pos)
        size, pos = _varint(raw, pos)
        if count < 0 or size < 0 or pos + size + 16 > len(raw):
            raise _refused(path, start, "is truncated")
        data = decompress(raw[pos:pos + size])
        pos += size
        if raw[pos:pos + 16] != sync:
            raise _refused(path, start, "does not end in the sync marker")
        pos += 16
        yield start, count, data


def _located(path: str, start: int, reason: str, offset: int, where: list) -> FormatError:
    """`avro.c`'s failure in the block at byte `start`: (reason, offset in the block's records,
    field path innermost first)."""
    fields = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in reversed(where))
    return _unreadable(path, f"{reason} at byte {offset} of the records of the block at byte {start}",
                       offset=start, fields=fields.replace(".[", "["))


def _unreadable(path: str, reason: object, *, offset: int | None = None, fields: str = "") -> FormatError:
    """The Avro file `path` refused: `reason`, at byte `offset` of the file, in the record
    fields `fields` (the file named by `FormatError.file`, the fields by its `path`)."""
    error = FormatError(f"{path} is not a readable Avro file: {reason}", offset=offset, path=fields)
    error.file = path
    return error
