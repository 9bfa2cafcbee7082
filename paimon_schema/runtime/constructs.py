"""The few Construct pieces the generated codecs (generated/*_codec.py) need beyond Construct's own.

Kaitai expressions become `KsExpr`: Python source over the Construct context `this`, which
Construct's compiler pastes into the code it generates and the interpreter evaluates. Kaitai's
`repeat` becomes `KsRepeat`, which, unlike Construct's `Array`, keeps `_index` and the
elements read so far in the context when compiled too (specs refer to both), and, unlike
`GreedyRange`, lets a truncated last element fail instead of silently dropping it.

Kaitai's positioned instances are lazy: their position may depend on fields read after them
(a block's offset is relative to a mark behind the block table). `KsInstance` therefore parses
into a `Deferred`, and `parse` resolves those once the whole sequence has been read; when
building, every value is already in the context, so it writes at the position like `Pointer`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from construct import Construct, FixedSized, ListContainer, PaddingError, Subconstruct
from construct.core import evaluate, stream_read
from construct.expr import ExprMixin

from paimon_schema.runtime.crc import crc32


#: `-checksum` algorithms of the specs: bytes -> the stored value.
CHECKSUMS: dict[str, Callable[[bytes], int]] = {"crc32": crc32}


class KsSpan:
    """The bytes a `-checksum` covers: from the `Tell` mark `start` to the mark `end` of the same
    struct, read back from the stream (parsed, or built so far), which is left where it was."""

    def __init__(self, start: str, end: str) -> None:
        self.start, self.end = start, end

    def __call__(self, context: Any) -> bytes:
        stream, start, end = context._io, context[self.start], context[self.end]
        here = stream.tell()
        stream.seek(start)
        data = stream.read(end - start)
        stream.seek(here)
        return bytes(data)


def checksum(struct: Construct, field: str) -> Callable[[bytes], int]:
    """The function a generated struct's `-checksum` field computes (readers that parse with
    Kaitai check the stored value with it)."""
    for sub in struct.subcons:
        if sub.name == field:
            return sub.subcon.hashfunc
    raise KeyError(field)


class KsExpr(ExprMixin):
    """A context expression given as Python source over `this` (e.g. ``this['n'] * 2``)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._func = eval(f"lambda this: {source}", {"__builtins__": {"len": len, "all": all}})

    def __call__(self, context: Any, *args: Any) -> Any:
        return self._func(context)

    def __repr__(self) -> str:
        return self.source

    __str__ = __repr__


class Deferred:
    """A positioned instance to read once everything before it in the file is known."""

    __slots__ = ("read",)

    def __init__(self, read: Any) -> None:
        self.read = read


def read_at(stream: Any, context: Any, field: str, pos: int | None, read: Any) -> Any:
    """Read an instance at `pos` (None: its `if` is false) and record it in its context."""
    if pos is None:
        value = None
    else:
        here = stream.tell()
        stream.seek(pos)
        try:
            value = read()
        finally:
            stream.seek(here)
    context[field] = value
    return value


def write_at(stream: Any, pos: int | None, write: Any) -> Any:
    if pos is None:
        return None
    here = stream.tell()
    stream.seek(pos)
    try:
        return write()
    finally:
        stream.seek(here)


def resolve(obj: Any) -> Any:
    """Replace every `Deferred` in a parsed tree by what it reads, outermost first."""
    while isinstance(obj, Deferred):
        obj = obj.read()
    if isinstance(obj, dict):
        # Interpreted parsing leaves the parse stream in each result as `_io`; a build would
        # take it for its own output stream.
        obj.pop("_io", None)
        for key, value in obj.items():
            if isinstance(value, (Deferred, dict, list)) and not key.startswith("_"):
                obj[key] = resolve(value)
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            if isinstance(value, (Deferred, dict, list)):
                obj[i] = resolve(value)
    return obj


class KsSized(FixedSized):
    """A Kaitai `size:` field with a type: its substream counts positions from its own start, as
    Kaitai's substreams and compiled `FixedSized` do (Construct's interpreted `FixedSized` reads
    through a stream that reports the enclosing stream's positions, so a position mark inside,
    e.g. range_bitmap's `chunk_headers_mark`, would differ between the two)."""

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        length = evaluate(self.length, context)
        if length < 0:
            raise PaddingError("length cannot be negative", path=path)
        return self.subcon._parsereport(io.BytesIO(stream_read(stream, length, path)), context, path)


class KsIfStream(Subconstruct):
    """A Kaitai `if` that asks the stream (`_io.size - _io.pos >= 2`: an optional tail). Parsing
    tests the condition; building cannot (the stream is still being written), so it writes the
    value when the model has one and nothing when it is None."""

    def __init__(self, cond: KsExpr, subcon: Construct) -> None:
        super().__init__(subcon)
        self.cond = cond
        self.flagbuildnone = True

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        return self.subcon._parsereport(stream, context, path) if self.cond(context) else None

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        return None if obj is None else self.subcon._build(obj, stream, context, path)

    def _sizeof(self, context: Any, path: str) -> int:
        from construct import SizeofError
        raise SizeofError("a field present by what the stream holds has no static size", path=path)

    def _emitparse(self, code: Any) -> str:
        return f"(({self.subcon._compileparse(code)}) if ({self.cond}) else None)"

    def _emitbuild(self, code: Any) -> str:
        return f"(None if obj is None else ({self.subcon._compilebuild(code)}))"


class KsInstance(Subconstruct):
    """A Kaitai `pos` instance (with its optional `if`, and `io`: the stream it is read from when
    not its struct's own, e.g. the root stream from inside a sized substream): deferred when
    parsing."""

    def __init__(self, field: str, pos: KsExpr, subcon: Construct, cond: KsExpr | None = None,
                 io: KsExpr | None = None, trailer: bool = False) -> None:
        super().__init__(subcon)
        self.field = field
        self.pos = pos
        self.cond = cond
        self.io = io
        self.trailer = trailer       # at `_io.size - N`: built last, by `KsTrailer`
        self.flagbuildnone = True    # a model may leave out a view of bytes other fields write

    def _where(self, context: Any) -> int | None:
        return None if self.cond is not None and not self.cond(context) else self.pos(context)

    def _stream(self, stream: Any, context: Any) -> Any:
        return stream if self.io is None else self.io(context)

    def _parse(self, stream: Any, context: Any, path: str) -> Deferred:
        stream = self._stream(stream, context)
        return Deferred(lambda: read_at(stream, context, self.field, self._where(context),
                                        lambda: self.subcon._parsereport(stream, context, path)))

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        if obj is None or self.trailer:
            return obj
        stream = self._stream(stream, context)
        return write_at(stream, self._where(context),
                        lambda: self.subcon._build(obj, stream, context, path))

    def _sizeof(self, context: Any, path: str) -> int:
        return 0

    def _emitparse(self, code: Any) -> str:
        code.append("from paimon_schema.runtime.constructs import Deferred, read_at")
        where = self._emit_where()
        sub = self.subcon._compileparse(code)
        if self.io is None:
            return f"Deferred(lambda: read_at(io, this, {self.field!r}, {where}, lambda: ({sub})))"
        return (f"(lambda io: Deferred(lambda: read_at(io, this, {self.field!r}, {where}, "
                f"lambda: ({sub}))))({self.io})")

    def _emitbuild(self, code: Any) -> str:
        if self.trailer:
            return "obj"
        code.append("from paimon_schema.runtime.constructs import write_at")
        build = f"write_at(io, {self._emit_where()}, lambda: ({self.subcon._compilebuild(code)}))"
        build = build if self.io is None else f"(lambda io: {build})({self.io})"
        return f"(None if obj is None else {build})"

    def _emit_where(self) -> str:
        return str(self.pos) if self.cond is None else f"(({self.pos}) if ({self.cond}) else None)"


class KsTrailer(Subconstruct):
    """Builds the `KsInstance` `field` placed at `_io.size - N` (a footer) at the end of what
    its struct's other fields and instances wrote: its position is the file's size, known
    only once the body is built. The struct's last member, unnamed; parsing reads nothing
    (the `KsInstance` reads the trailer)."""

    def __init__(self, field: str, subcon: Construct) -> None:
        super().__init__(subcon)
        self.field = field
        self.flagbuildnone = True

    def _parse(self, stream: Any, context: Any, path: str) -> None:
        return None

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        value = context.get(self.field)
        if value is None:
            return None
        return write_at(stream, stream.seek(0, io.SEEK_END), lambda: self.subcon._build(value, stream, context, path))

    def _sizeof(self, context: Any, path: str) -> int:
        return 0

    def _emitparse(self, code: Any) -> str:
        return "None"

    def _emitbuild(self, code: Any) -> str:
        code.append("from paimon_schema.runtime.constructs import write_at")
        code.append("import io as _io_module")
        value = f"this.get({self.field!r})"
        build = (f"(lambda obj: None if obj is None else write_at(io, io.seek(0, _io_module.SEEK_END), "
                 f"lambda: ({self.subcon._compilebuild(code)})))({value})")
        return build


def parse(codec: Construct, data: bytes) -> Any:
    """Parse `data` with a generated codec, positioned instances included."""
    return resolve(codec.parse(data))


def repeat(context: Any, field: str, stream: Any, count: int | None, element: Any) -> ListContainer:
    """Read `count` elements (until the end of the stream when None) with `element(i)`."""
    items = ListContainer()
    context[field] = items
    i = 0
    while (i < count) if count is not None else not _at_end(stream):
        context["_index"] = i
        items.append(element(i))
        i += 1
    return items


def _at_end(stream: Any) -> bool:
    here = stream.tell()
    end = stream.seek(0, 2)
    stream.seek(here)
    return here >= end


class KsRepeat(Subconstruct):
    """Kaitai's `repeat: expr` (count given) or `repeat: eos` (count None) of a field."""

    def __init__(self, field: str, count: KsExpr | int | None, subcon: Construct) -> None:
        super().__init__(subcon)
        self.field = field
        self.count = count

    def _count(self, context: Any) -> int | None:
        return self.count(context) if callable(self.count) else self.count

    def _parse(self, stream: Any, context: Any, path: str) -> ListContainer:
        return repeat(context, self.field, stream, self._count(context),
                      lambda i: self.subcon._parsereport(stream, context, f"{path} -> [{i}]"))

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> ListContainer:
        count = self._count(context)
        items = list(obj)
        if count is not None and len(items) != count:
            from construct import RangeError
            raise RangeError(f"{self.field}: expected {count} elements, got {len(items)}", path=path)
        context[self.field] = items         # the whole model: elements may look ahead
        built = ListContainer()
        for i, item in enumerate(items):
            context["_index"] = i
            built.append(self.subcon._build(item, stream, context, f"{path} -> [{i}]"))
        return built

    def _sizeof(self, context: Any, path: str) -> int:
        from construct import SizeofError
        raise SizeofError("repeated fields have no static size", path=path)

    def _emitparse(self, code: Any) -> str:
        code.append("from paimon_schema.runtime.constructs import repeat")
        sub = self.subcon._compileparse(code)
        return f"repeat(this, {self.field!r}, io, {self.count}, lambda i: ({sub}))"

    def _emitbuild(self, code: Any) -> str:
        code.append("from paimon_schema.runtime.constructs import repeat_build")
        sub = self.subcon._compilebuild(code)
        return f"repeat_build(this, {self.field!r}, {self.count}, obj, lambda obj: ({sub}))"


def repeat_build(context: Any, field: str, count: int | None, objs: Any, element: Any) -> ListContainer:
    """Compiled counterpart of `KsRepeat._build`."""
    items = list(objs)
    if count is not None and len(items) != count:
        raise ValueError(f"{field}: expected {count} elements, got {len(items)}")
    context[field] = items                  # the whole model: elements may look ahead
    built = ListContainer()
    for i, item in enumerate(items):
        context["_index"] = i
        built.append(element(item))
    return built


__all__ = ["Deferred", "KsExpr", "KsInstance", "KsRepeat", "KsTrailer", "parse", "read_at", "repeat",
           "repeat_build", "resolve", "write_at"]
