"""Hex-annotated dumps: every field of a parsed file with its offset, raw bytes and value.

The generated parsers record where each field starts and ends (Kaitai debug positions), so a
dump walks the parsed tree in file order, the way a reviewer checks a file against its .ksy.
Positioned instances (bitmaps, blocks, blobs) are read and listed where they lie in the file;
derived values are shown without bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from kaitaistruct import KaitaiStruct

from paimon_schema.runtime import kaitai

MAX_SHOWN_BYTES = 16


@dataclass(frozen=True)
class Field:
    """One leaf field: where it is, its bytes and its value."""

    offset: int | None
    size: int
    path: str
    value: Any


def fields(root: KaitaiStruct, data: bytes | memoryview) -> list[Field]:
    """Every leaf field of a parsed object in file order; a derived value follows the field
    read just before it."""
    keyed, last = [], -1
    for i, f in enumerate(_walk(root, 0, "", data)):
        last = f.offset if f.offset is not None else last
        keyed.append(((last, f.offset is None, i), f))
    return [f for _, f in sorted(keyed, key=lambda kv: kv[0])]


def render(root: KaitaiStruct, data: bytes | memoryview, *, width: int = MAX_SHOWN_BYTES) -> Iterator[str]:
    """Lines of `offset  hex bytes  path = value`, one per field."""
    view = memoryview(data)
    for f in fields(root, data):
        where = f"{f.offset:08x}" if f.offset is not None else " " * 8
        raw = bytes(view[f.offset:f.offset + min(f.size, width)]) if f.offset is not None else b""
        shown = " ".join(f"{b:02x}" for b in raw) + (" …" if f.size > width else "")
        yield f"{where}  {shown:<{3 * width + 1}}  {f.path} = {_show(f.value, f.size)}"


def _walk(obj: KaitaiStruct, base: int, prefix: str, data: Any) -> Iterator[Field]:
    read = kaitai.spans(obj)
    for name in list(getattr(obj, "SEQ_FIELDS", [])):
        if name in read:
            yield from _field(obj, name, getattr(obj, name, None), read[name], base, prefix, data)
    for name in _instances(type(obj)):
        try:
            value = getattr(obj, name)
        except Exception:       # a dump shows what reads; `verify` reports what does not
            continue
        span = kaitai.spans(obj).get(name)
        if span is not None:
            yield from _field(obj, name, value, span, base, prefix, data)
        elif value is not None and not isinstance(value, (KaitaiStruct, list)):   # derived: no bytes
            yield Field(None, 0, f"{prefix}{name}", value)


def _field(obj: Any, name: str, value: Any, span: kaitai.Span, base: int, prefix: str,
           data: Any) -> Iterator[Field]:
    path = f"{prefix}{name}"
    if isinstance(value, list):
        for i, (item, item_span) in enumerate(zip(value, span.items)):
            yield from _one(obj, item, item_span, base, f"{path}[{i}]", data)
        return
    yield from _one(obj, value, span, base, path, data)


def _one(owner: Any, value: Any, span: kaitai.Span, base: int, path: str, data: Any) -> Iterator[Field]:
    start = span.start
    if isinstance(value, KaitaiStruct):
        child_base = base if start is None or not kaitai.in_substream(value, owner) else base + start
        yield from _walk(value, child_base, f"{path}.", data)
        return
    end = span.end if span.end is not None else start
    offset = None if start is None else base + start
    yield Field(offset, 0 if start is None or end is None else end - start, path, value)


def _instances(cls: type) -> list[str]:
    names = []
    for klass in reversed(cls.__mro__):
        for name, member in vars(klass).items():
            if isinstance(member, property) and not name.startswith("_"):
                names.append(name)
    return list(dict.fromkeys(names))


def _show(value: Any, size: int) -> str:
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

