"""`verify`'s byte accounting: every byte of a file is read by exactly one field of its spec.

The generated parser of the file's layout records where each field lies (the walk of the hex
dump, `hexdump.fields`), with a container's blobs and a deletion-vector bin's bitmap opened and
walked too; bytes a spec reads whole and then parses again (a B-tree block's stored bytes and
its entries) are a container of the fields inside them, as an opened blob is. Java's writers
leave no byte unread and read none twice, so bytes that no field reads (a gap, garbage after
the end, the rest of a blob read as the wrong layout) and bytes that two fields read (blobs
whose lengths make them overlap, a blob inside the head) mean the file is not what Java
wrote: a FormatError at the first such byte.
"""

from __future__ import annotations

from paimon_schema.cli import hexdump
from paimon_schema.cli.presenters import Types, count
from paimon_schema.layouts.registry import parse_generated
from paimon_schema.values.errors import FormatError


def check_coverage(layout: str, data: bytes, types: Types) -> None:
    """FormatError at the first byte of `data` that no field of `layout` reads, or that two
    fields read. Container blobs are opened with their columns' `types` (a keyed blob without
    its type counts as read whole); an opened blob's own fields must tile the blob."""
    root = parse_generated(layout, data, types.data_type)
    fields = sorted((f for f in hexdump.fields(root, data, types.of)
                     if f.offset is not None and f.size > 0),
                    key=lambda f: (f.offset or 0, -f.size))
    _tile(fields, 0, len(data), f"the {layout}", "")


def _inside(field: hexdump.Field, outer: hexdump.Field) -> bool:
    """Whether `field` is read again inside `outer`: an opened blob's fields, or fields of the
    struct holding raw bytes that the spec parses again, within those bytes."""
    assert field.offset is not None and outer.offset is not None
    if not outer.offset <= field.offset or field.offset + field.size > outer.offset + outer.size:
        return False
    owner = outer.path if outer.opened else outer.path.rpartition(".")[0]
    return not owner or field.path.startswith(owner + ".")     # "": the root reads it all


def _tile(fields: list[hexdump.Field], begin: int, end: int, what: str, within: str) -> None:
    """`fields` (sorted by offset, larger first) must read every byte of [begin, end) once;
    then the fields inside each container must read its bytes once."""
    items: list[tuple[hexdump.Field, list[hexdump.Field]]] = []
    for f in fields:
        if items and _inside(f, items[-1][0]):
            items[-1][1].append(f)
        else:
            items.append((f, []))
    at, last = begin, ""
    for f, _ in items:
        assert f.offset is not None         # `check_coverage` keeps fields that have one
        if f.offset > at:
            raise FormatError(f"{count(f.offset - at, 'byte')} before {f.path} read by no field "
                              f"(a gap after {last or 'the start of ' + what})", offset=at,
                              path=f.path)
        if f.offset < at:
            raise FormatError(f"{f.path} overlaps {last}: "
                              f"{count(min(at, f.offset + f.size) - f.offset, 'byte')} read twice",
                              offset=f.offset, path=f.path)
        at, last = f.offset + f.size, f.path
    if at < end:
        raise FormatError(f"{count(end - at, 'byte')} at the end of {what} (after "
                          f"{last or 'nothing'}) read by no field", offset=at, path=within)
    for f, inner in items:
        if inner:
            assert f.offset is not None
            _tile(inner, f.offset, f.offset + f.size, f.path, f.path)
