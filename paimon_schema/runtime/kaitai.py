"""Run a generated Kaitai parser and turn any failure into a located `FormatError`.

The parsers in `generated/` are compiled in Kaitai's debug mode: every object records, in
`_debug`, where each field started (and ended, once read), in the order the fields were
reached. After a failure the last recorded field of each object is the one being read, so
walking those from the root gives the .ksy field path, and adding up where each substream
started gives the absolute offset.
"""

from __future__ import annotations

import inspect
import struct
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar
from collections.abc import Callable

from kaitaistruct import KaitaiStream, KaitaiStruct, KaitaiStructError, ValidationFailedError

from paimon_schema.values.errors import FormatError

T = TypeVar("T", bound=KaitaiStruct)

#: What a generated parser raises on bad input (never a bug in our code: those propagate).
PARSE_ERRORS = (KaitaiStructError, EOFError, ValueError, IndexError, ZeroDivisionError,
                OverflowError, struct.error)


class ViewReader:
    """A read-only file over a buffer whose `read` returns memoryview slices, not copies.

    Kaitai reads every sized field with `read(n)`; over `BytesIO` that copies, which for a
    multi-megabyte deletion vector costs more than checking and decoding it. Fields of type
    bytes therefore come out of the generated parsers as memoryviews.
    """

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._view = memoryview(data).cast("B")
        self._pos = 0

    def read(self, n: int = -1) -> memoryview:
        end = len(self._view) if n is None or n < 0 else min(self._pos + n, len(self._view))
        start, self._pos = self._pos, max(end, self._pos)
        return self._view[start:end]

    def seek(self, pos: int, whence: int = 0) -> int:
        base = (0, self._pos, len(self._view))[whence]
        self._pos = max(base + pos, 0)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True


def stream(data: bytes | bytearray | memoryview, pos: int = 0) -> KaitaiStream:
    io = KaitaiStream(ViewReader(data))
    if pos:
        io.seek(pos)
    return io


def parse(make: Callable[[KaitaiStream], T], data: bytes | bytearray | memoryview,
          *, pos: int = 0, path: str = "") -> T:
    """Build a generated object with `make(io)` on `data` at `pos`, read it, locate failures."""
    io = stream(data, pos)
    obj = make(io)
    try:
        obj._read()
    except PARSE_ERRORS as exc:
        raise located(obj, exc, path) from exc
    return obj


def read_region(data: bytes | bytearray | memoryview, pos: int, size: int, path: str) -> None:
    """Fail as a generated sized instance (`pos:` and `size:`) at `path` fails when its `size`
    bytes at `pos` cannot be read (a negative size, or past the end); do nothing otherwise."""
    try:
        stream(data, pos).read_bytes(size)
    except PARSE_ERRORS as exc:
        raise FormatError(_describe(exc), offset=min(pos, len(data)), path=path) from exc


def read_lazily(obj: Any, attribute: str, path: str = "") -> Any:
    """Read a positioned instance of an already parsed object, locating failures.

    A failed instance is forgotten: Kaitai caches a typed instance before reading it, and
    asking again would return the half-read object.
    """
    try:
        return getattr(obj, attribute)
    except PARSE_ERRORS as exc:
        error = located(obj, exc, path)
        obj.__dict__.pop(f"_m_{attribute}", None)
        raise error from exc



@dataclass(frozen=True)
class Span:
    """Where a field of a parsed object lies in that object's stream: `start`, `end` (None until
    read to its end) and, for a repeated field, one Span per element read."""

    start: int | None
    end: int | None
    items: tuple[Span, ...] = ()


def spans(obj: Any) -> dict[str, Span]:
    """The fields of a parsed object read so far, in reading order: sequence fields by id,
    positioned instances by name. The generated parsers are compiled in debug mode and record
    these; this is the one place that reads the record."""
    return {name[3:] if name.startswith("_m_") else name: _span(info)
            for name, info in obj._debug.items()}


def field_start(obj: Any, name: str, index: int | None = None) -> int:
    """Where field `name` (its element `index`, for a repeated field) of a parsed object starts
    in the object's stream; the field must have been read."""
    info = _info(obj, name)
    start = (info if index is None else info["arr"][index])["start"]
    return int(start)


def field_end(obj: Any, name: str) -> int:
    """Where field `name` of a parsed object ends in the object's stream (read to its end)."""
    return int(_info(obj, name)["end"])


def reads_root_stream(cls: type, name: str) -> bool:
    """Whether instance `name` of a generated class is read from the root's stream (`io:
    _root._io`, e.g. a container's blob from inside its head substream): its positions are then
    offsets in the whole file, not in the object's own stream. The generated property says so
    in its source, the only place the compiler records it."""
    prop = getattr(cls, name, None)
    return isinstance(prop, property) and prop.fget is not None and _root_stream_source(prop.fget)


@cache
def _root_stream_source(getter: Callable[[Any], Any]) -> bool:
    return "io = self._root._io" in inspect.getsource(getter)


def in_substream(child: Any, owner: Any) -> bool:
    """Whether a parsed child object reads its own substream (a sized or positioned field), so
    that its spans count from its own start rather than its owner's."""
    return child._io is not owner._io


def on_top_stream(child: Any, owner: Any) -> bool:
    """Whether a parsed child object reads the stream of its owner's top object (`io: _root._io`
    without a size), so that its spans count from the top's start."""
    return child._io is _top_io(owner)


def _info(obj: Any, name: str) -> dict[str, Any]:
    debug = obj._debug
    info = debug.get(name)
    return info if info is not None else debug[f"_m_{name}"]


def _span(info: dict[str, Any]) -> Span:
    return Span(info.get("start"), info.get("end"), tuple(_span(a) for a in info.get("arr", ())))

def located(root: Any, exc: BaseException, prefix: str = "") -> FormatError:
    """A FormatError for `exc`, raised somewhere while `root` (the top object or any object
    inside it, substreams included) was being read; the offset is in the top object's stream."""
    parts, offset = _failing_field(root)
    path = ".".join(p for p in [prefix, *parts] if p)
    if offset is not None:      # a positioned field pointing past the end fails at the end
        offset = min(offset, _top_io(root).size())
    return FormatError(_describe(exc), offset=offset, path=path)


def _failing_field(obj: Any) -> tuple[list[str], int | None]:
    parts: list[str] = []
    base = _stream_base(obj)
    offset: int | None = None
    while obj is not None and getattr(obj, "_debug", None):
        name, info = next(reversed(obj._debug.items()))
        attr = name[3:] if name.startswith("_m_") else name
        start = info.get("start")
        child = getattr(obj, name, None)
        if "arr" in info and info["arr"]:
            index = len(info["arr"]) - 1
            start = info["arr"][index]["start"]
            child = child[index] if isinstance(child, list) and len(child) > index else None
            parts.append(f"{attr}[{index}]")
        else:
            parts.append(attr)
        at = 0 if reads_root_stream(type(obj), attr) else base     # where `start` counts from
        if start is not None:
            offset = at + start
        if child is None or not hasattr(child, "_debug") or "end" in info:
            break
        if child._io is not obj._io and start is not None:      # a substream, or the top's
            base = 0 if child._io is _top_io(obj) else at + start
        obj = child
    return parts, offset


def _stream_base(obj: Any) -> int:
    """Where the stream `obj` reads starts in its top object's stream: the starts of the sized
    fields that made each enclosing substream, added up."""
    base = 0
    while obj._io is not _top_io(obj) and obj._parent is not None:
        parent = obj._parent
        name, start = _held_at(parent, obj)
        if obj._io is not parent._io and start is not None:
            if reads_root_stream(type(parent), name):
                return base + start
            base += start
        obj = parent
    return base


def _top_io(obj: Any) -> KaitaiStream:
    """The stream of `obj`'s top object (types imported from another spec have no `_root`)."""
    return (obj._root or obj)._io


def _held_at(parent: Any, child: Any) -> tuple[str, int | None]:
    """The field of `parent` holding `child` and where it starts in `parent`'s stream."""
    for name, info in parent._debug.items():
        value = parent.__dict__.get(name)
        if value is child:
            return name[3:] if name.startswith("_m_") else name, info.get("start")
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is child and i < len(info.get("arr", ())):
                    return name[3:] if name.startswith("_m_") else name, info["arr"][i]["start"]
    return "", None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return f"unexpected end of data: {exc}"
    if isinstance(exc, ValidationFailedError):
        actual = getattr(exc, "actual", None)
        kind = type(exc).__name__.removeprefix("Validation").removesuffix("Error")
        rule = {"NotEqual": f"expected {getattr(exc, 'expected', '?')}",
                "LessThan": f"must be at least {getattr(exc, 'min', '?')}",
                "GreaterThan": f"must be at most {getattr(exc, 'max', '?')}",
                "NotAnyOf": "not one of the allowed values",
                "Expr": "fails the spec's check"}.get(kind, kind)
        return f"invalid value {_show(actual)}: {rule}"
    return f"{type(exc).__name__}: {exc}"


def _show(value: Any) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value)
        return value[:16].hex() + ("…" if len(value) > 16 else "")
    if hasattr(value, "name") and hasattr(value, "value"):
        return f"{value.value} ({value.name})"
    if isinstance(value, int) and value > 9:
        return f"{value} (0x{value:x})"
    return repr(value)
