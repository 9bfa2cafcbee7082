"""`verify`'s byte accounting: every byte of a file is read by exactly one field of its spec.

The generated parser of the file's layout records where each field lies (the walk of the hex
dump, `hexdump.fields`), with a container's blobs and a deletion-vector bin's bitmap opened and
walked too. Java's writers leave no byte unread and read none twice, so bytes that no field
reads (a gap, garbage after the end, the rest of a blob read as the wrong layout) and bytes
that two fields read (blobs whose lengths make them overlap, a blob inside the head) mean the
file is not what Java wrote: a FormatError at the first such byte.
"""

from __future__ import annotations

from paimon_schema.cli import hexdump
from paimon_schema.cli.presenters import Types, count
from paimon_schema.layouts.registry import parse_generated
from paimon_schema.values.errors import FormatError


def check_coverage(layout: str, data: bytes, types: Types) -> None:
    """FormatError at the first byte of `data` that no field of `layout` reads, or that two
    fields read. Container blobs are opened with their columns' `types` (a keyed blob without
    its type counts as read whole)."""
    root = parse_generated(layout, data, types.data_type)
    spans = sorted((f.offset, f.offset + f.size, f.path)
                   for f in hexdump.fields(root, data, types.of)
                   if f.offset is not None and f.size > 0 and not f.opened)
    end, last = 0, ""
    for start, stop, path in spans:
        if start > end:
            raise FormatError(f"{count(start - end, 'byte')} before {path} read by no field "
                              f"(a gap after {last or 'the start'})", offset=end, path=path)
        if start < end:
            raise FormatError(f"{path} overlaps {last}: {count(min(end, stop) - start, 'byte')} "
                              f"read twice", offset=start, path=path)
        end, last = stop, path
    if end < len(data):
        raise FormatError(f"{count(len(data) - end, 'byte')} after the end of the {layout} "
                          f"(after {last or 'nothing'}) read by no field", offset=end)
