"""Hex-annotated dumps: every field of a parsed file with its offset, raw bytes and value.

The generated parsers record where each field starts and ends (Kaitai debug positions), so a
dump walks the parsed tree in file order, the way a reviewer checks a file against its .ksy.
Positioned instances (bitmaps, blocks, blobs) are read and listed where they lie in the file;
derived values are shown without bytes.

Bytes the specs leave opaque are opened where their layout is known: a container's blobs (their
index type is in the head; bitmap and range-bitmap keys need the column's type, `column_types`),
a 32-bit deletion-vector bin's RoaringBitmap; strings (Java's modified UTF-8, UTF-8 keys) show
as text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from kaitaistruct import KaitaiStruct

from paimon_schema.runtime import kaitai

MAX_SHOWN_BYTES = 16
MAX_SHOWN_VALUES = 16     # positions listed for a roaring container


@dataclass(frozen=True)
class Field:
    """One leaf field: where it is, its bytes and its value."""

    offset: int | None
    size: int
    path: str
    value: Any
    opened: bool = False    # its bytes are shown again, field by field, by the fields after it


class Text(str):
    """A value described in words (shown without quotes), not a string the file holds."""


#: column name -> its data type (None: unknown), to open a container's typed blobs
ColumnTypes = Callable[[str], "str | None"]


def fields(root: KaitaiStruct, data: bytes | memoryview,
           column_types: ColumnTypes | None = None) -> list[Field]:
    """Every leaf field of a parsed object in file order; a derived value follows the field
    read just before it. An opened blob is a leaf and, after it, its own fields."""
    keyed, last = [], -1
    types = column_types or (lambda column: None)
    for i, f in enumerate(_walk(root, 0, 0, "", data, types)):
        last = f.offset if f.offset is not None else last
        # at one offset: empty fields, then each field before the fields inside it
        keyed.append(((last, f.offset is None, f.size > 0, i), f))
    return [f for _, f in sorted(keyed, key=lambda kv: kv[0])]


def render(root: KaitaiStruct, data: bytes | memoryview, *, width: int = MAX_SHOWN_BYTES,
           column_types: ColumnTypes | None = None) -> Iterator[str]:
    """Lines of `offset  hex bytes  path = value`, one per field."""
    view = memoryview(data)
    for f in fields(root, data, column_types):
        where = f"{f.offset:08x}" if f.offset is not None else " " * 8
        raw = bytes(view[f.offset:f.offset + min(f.size, width)]) if f.offset is not None else b""
        shown = " ".join(f"{b:02x}" for b in raw) + (" …" if f.size > width else "")
        yield f"{where}  {shown:<{3 * width + 1}}  {f.path} = {show_value(f.value, f.size)}"


def _walk(obj: KaitaiStruct, top: int, base: int, prefix: str, data: Any,
          types: ColumnTypes) -> Iterator[Field]:
    """`obj`'s fields; `base` is where its stream starts in the file, `top` where the stream of
    the parse it belongs to (an opened blob's) starts."""
    read = kaitai.spans(obj)
    own: list[tuple[int, int]] = []         # bytes of this object's own numbers
    for name in list(getattr(obj, "SEQ_FIELDS", [])):
        if name in read:
            for f in _field(obj, name, getattr(obj, name, None), read[name], top, base, prefix, data,
                              types):
                if f.offset is not None and f.path.count(".") == prefix.count(".") and isinstance(f.value, int):
                    own.append((f.offset, f.offset + f.size))
                yield f
    for name in _instances(type(obj)):
        try:
            value = getattr(obj, name)
        except Exception:       # a dump shows what reads; `verify` reports what does not
            continue
        span = kaitai.spans(obj).get(name)
        if span is not None:
            at = top if kaitai.reads_root_stream(type(obj), name) else base
            if _rereads(value, span, at, own):
                continue
            yield from _field(obj, name, value, span, top, at, prefix, data, types)
        elif value is not None and not isinstance(value, (KaitaiStruct, list)):   # derived: no bytes
            yield Field(None, 0, f"{prefix}{name}", value)


def _rereads(value: Any, span: kaitai.Span, base: int, own: list[tuple[int, int]]) -> bool:
    """Whether an instance only shows numbers of the object's own fields again (the exact
    32-bit halves of an 8-byte number, for JavaScript readers): every byte is listed once."""
    numbers = value if isinstance(value, list) else [value]
    spans = span.items if isinstance(value, list) else (span,)
    if not numbers or not all(isinstance(n, int) for n in numbers):
        return False
    return all(s.start is not None and s.end is not None
               and any(lo <= base + s.start and base + s.end <= hi for lo, hi in own) for s in spans)


def _field(obj: Any, name: str, value: Any, span: kaitai.Span, top: int, base: int, prefix: str,
           data: Any, types: ColumnTypes) -> Iterator[Field]:
    path = f"{prefix}{name}"
    if isinstance(value, list):
        for i, (item, item_span) in enumerate(zip(value, span.items)):
            yield from _one(obj, name, item, item_span, top, base, f"{path}[{i}]", data, types)
        return
    yield from _one(obj, name, value, span, top, base, path, data, types)


def _one(owner: Any, name: str, value: Any, span: kaitai.Span, top: int, base: int, path: str,
         data: Any, types: ColumnTypes) -> Iterator[Field]:
    start = span.start
    if isinstance(value, KaitaiStruct):
        child_base = base if start is None or not kaitai.in_substream(value, owner) \
            else top if kaitai.on_top_stream(value, owner) else base + start
        yield from _walk(value, top, child_base, f"{path}.", data, types)
        return
    end = span.end if span.end is not None else start
    offset = None if start is None else base + start
    inner = _opened(owner, name, value, types) if offset is not None else None
    if isinstance(inner, str):
        value = inner
    opened = isinstance(inner, KaitaiStruct)
    yield Field(offset, 0 if start is None or end is None else end - start, path, value, opened)
    if opened and offset is not None:       # only bytes at a known offset are opened
        yield from _walk(inner, offset, offset, f"{path}.", data, types)


def _opened(owner: Any, name: str, value: Any, types: ColumnTypes) -> KaitaiStruct | str | None:
    """What opaque bytes hold, when the layout says: text, or a parsed blob (None: leave the
    bytes as they are; a blob that does not parse is left to `verify` to report)."""
    from paimon_schema.layouts.registry import LAYOUTS, parse_generated
    from paimon_schema.runtime import javautf

    common, roaring = LAYOUTS["paimon-common"].root, LAYOUTS["roaring-bitmap"].root
    dv, container = LAYOUTS["deletion-vectors"].root, LAYOUTS["file-index"].root
    if not isinstance(value, (bytes, bytearray, memoryview)):
        return None
    raw = bytes(value)
    try:
        if isinstance(owner, common.JavaUtf) and name == "value":
            return javautf.decode(raw)
        if isinstance(owner, common.Utf8Key) and name == "value":
            return raw.decode("utf-8")
        if isinstance(owner, roaring.Container):
            return _container_values(owner, name, raw)
        if isinstance(owner, dv.Bin) and owner.magic == dv.BinMagic.bitmap32:
            return parse_generated("roaring-bitmap", raw)
        if isinstance(owner, container.IndexEntry) and name == "blob":
            index_type = javautf.decode(bytes(owner.index_type.value))
            column = javautf.decode(bytes(owner._parent.name.value))
            layout = LAYOUTS.get(index_type)
            if layout is not None and layout.is_index and (not layout.keyed or types(column) is not None):
                return parse_generated(index_type, raw, types(column))
    except Exception:       # noqa: BLE001 - shown as bytes; `verify` says what is wrong
        return None
    return None


def _container_values(container: Any, name: str, raw: bytes) -> str | None:
    """A roaring container's positions (its key's high bits joined to the stored low bits)."""
    import struct

    parent = container._parent
    high = next(parent.descriptors[i].key for i, c in enumerate(parent.containers) if c is container) << 16
    if name == "array_values":
        shown = [str(high | v) for v in struct.unpack(f"<{len(raw) // 2}H", raw)]
    elif name == "runs":
        pairs = struct.unpack(f"<{len(raw) // 2}H", raw)
        shown = [f"{high | s}-{high | s + n}" if n else str(high | s)
                 for s, n in zip(pairs[::2], pairs[1::2])]
    elif name == "bitmap_words":
        return Text(f"{int.from_bytes(raw, 'little').bit_count()} positions set")
    else:
        return None
    cut = shown[:MAX_SHOWN_VALUES] + ([f"… ({len(shown) - MAX_SHOWN_VALUES} more)"]
                                      if len(shown) > MAX_SHOWN_VALUES else [])
    return Text("positions " + ", ".join(cut))


def _instances(cls: type) -> list[str]:
    names = []
    for klass in reversed(cls.__mro__):
        for name, member in vars(klass).items():
            if isinstance(member, property) and not name.startswith("_"):
                names.append(name)
    return list(dict.fromkeys(names))


def show_value(value: Any, size: int) -> str:
    """A field's value for a person: enums by number and name, short bytes as hex, numbers
    above 9 also in hex, text (`Text`) as it is, other strings quoted."""
    if isinstance(value, Text):
        return str(value)
    if isinstance(value, Enum):
        return f"{int(value.value)} ({value.name})"
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return f"{len(raw)} bytes" if len(raw) > MAX_SHOWN_BYTES else (raw.hex() or "(empty)")
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) and value > 9:
        return f"{value} (0x{value:x})"
    return repr(value)
