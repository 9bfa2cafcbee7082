"""File-index containers (formats/file_index.ksy): read and write.

`columns` is what Java's reader sees: duplicate column names merge and a repeated
(column, index type) keeps the last entry. `entries` keeps the file exactly, in order.
Writing follows `FileIndexFormat.Writer`: the head, then the blobs back to back in head order,
each entry pointing at its blob's absolute offset.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from paimon_schema.generated import file_index_codec
from paimon_schema.generated.file_index import FileIndex
from paimon_schema.runtime import javautf
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError, SchemaError

MAGIC = int(FileIndex.Magic.file_index)
EMPTY_INDEX_FLAG = -1
VERSION = int(FileIndex.Version.v1)
#: magic, version, head length, column count and redundant length
FIXED_HEAD = 8 + 4 + 4 + 4 + 4
#: Where the `head` substream (everything after magic, version and head length) starts.
HEAD_START = 8 + 4 + 4


def has_signature(data: bytes | memoryview) -> bool:
    """Whether `data` starts with the container's magic number."""
    return bytes(data[:8]) == MAGIC.to_bytes(8, "big")


@dataclass(frozen=True)
class IndexEntry:
    """One head entry: where the blob of one index of one column lies (`offset` -1: empty)."""

    column_index: int
    column: str
    index_type: str
    offset: int
    length: int
    blob: bytes | None


@dataclass(frozen=True)
class FileIndexFile:
    """A parsed file-index container."""

    columns: dict[str, dict[str, bytes | None]]
    entries: list[IndexEntry]
    head_length: int
    column_names: list[str] = field(default_factory=list)   # head order, repeats kept
    redundant: bytes = b""
    warnings: list[str] = field(default_factory=list, compare=False)

    @classmethod
    def parse(cls, data: bytes) -> FileIndexFile:
        simple = _parse_simple(data)
        if simple is not None:
            return simple
        parsed = parsing.parse(FileIndex, data)
        warnings: list[str] = []
        columns: dict[str, dict[str, bytes | None]] = {}
        entries: list[IndexEntry] = []
        names: list[str] = []
        head = parsed.head
        for i, column in enumerate(head.columns):
            name = _text(column.name.value, parsed, f"head.columns[{i}].name.value",
                         HEAD_START + parsing.field_start(column.name, "value"))
            names.append(name)
            indexes = columns.setdefault(name, {})
            for j, raw in enumerate(column.indexes):
                where = f"head.columns[{i}].indexes[{j}]"
                index_type = _text(raw.index_type.value, parsed, f"{where}.index_type.value",
                                   HEAD_START + parsing.field_start(raw.index_type, "value"))
                if not raw.is_empty and raw.ofs_blob + raw.len_blob > len(data):
                    raise FormatError(f"the blob at {raw.ofs_blob} ({raw.len_blob} bytes) lies past "
                                      f"the end of the {len(data)}-byte container",
                                      offset=HEAD_START + parsing.field_start(raw, "ofs_blob"),
                                      path=f"{where}.ofs_blob")
                blob = None if raw.is_empty else bytes(parsing.read_lazily(raw, "blob", where))
                if raw.is_empty and raw.len_blob != 0:
                    warnings.append(f"{where}: empty entry with length {raw.len_blob} (ignored)")
                if not raw.is_empty and raw.ofs_blob < parsed.len_head:
                    warnings.append(f"{where}: blob at {raw.ofs_blob} lies inside the head")
                if index_type in indexes:
                    warnings.append(f"{where}: repeats {name!r}/{index_type!r}; the last entry wins")
                indexes[index_type] = blob
                entries.append(IndexEntry(i, name, index_type, raw.ofs_blob, raw.len_blob, blob))
        if len(head.head_slack):
            warnings.append(f"{len(head.head_slack)} unused bytes at the end of the head")
        if len(columns) != len(head.columns):
            warnings.append("a column name appears more than once; Java merges its entries")
        return cls(columns=columns, entries=entries, head_length=parsed.len_head, column_names=names,
                   redundant=bytes(head.redundant), warnings=warnings)


    def __repr__(self) -> str:
        def entry(e: IndexEntry) -> str:
            return f"{e.index_type} (empty)" if e.blob is None else f"{e.index_type} ({e.length} bytes)"

        columns = "; ".join(f"{name}: {', '.join(entry(e) for e in self.entries if e.column == name)}"
                            for name in dict.fromkeys(self.column_names))
        return f"<FileIndexFile {columns or 'no columns'}>"

    def to_bytes(self) -> bytes:
        """The container again: its entries in order, at their recorded offsets."""
        columns: list[tuple[str, list[IndexEntry]]] = [(name, []) for name in self.column_names]
        for entry in self.entries:
            columns[entry.column_index][1].append(entry)
        return _build(columns, self.head_length, self.redundant)


def _parse_simple(data: bytes) -> FileIndexFile | None:
    """The container as `parse` reads it when nothing in it is unusual (ASCII names, each
    (column, index type) once, blobs after the head and inside the container, no slack, so no
    warning); else None, and the generated parser reads it and locates what is wrong. Planning
    a table parses one container per data file: this takes ~5 us, the parser ~400."""
    if not isinstance(data, bytes) or len(data) < FIXED_HEAD:
        return None
    magic, version, head_length = _FIXED.unpack_from(data, 0)
    if magic != MAGIC or version != VERSION or not 24 <= head_length <= len(data):
        return None
    end, pos = head_length, HEAD_START
    (column_count,) = _INT.unpack_from(data, pos)
    pos += 4
    if column_count < 0:
        return None
    columns: dict[str, dict[str, bytes | None]] = {}
    entries: list[IndexEntry] = []
    names: list[str] = []
    for i in range(column_count):
        name, pos = _ascii(data, pos, end)
        if name is None or name in columns or pos + 4 > end:
            return None
        (index_count,) = _INT.unpack_from(data, pos)
        pos += 4
        if index_count < 0:
            return None
        indexes: dict[str, bytes | None] = {}
        for _ in range(index_count):
            index_type, pos = _ascii(data, pos, end)
            if index_type is None or index_type in indexes or pos + 8 > end:
                return None
            offset, length = _TWO_INTS.unpack_from(data, pos)
            pos += 8
            if offset == EMPTY_INDEX_FLAG and length == 0:
                blob = None
            elif offset < head_length or length < 0 or offset + length > len(data):
                return None
            else:
                blob = data[offset:offset + length]
            indexes[index_type] = blob
            entries.append(IndexEntry(i, name, index_type, offset, length, blob))
        columns[name] = indexes
        names.append(name)
    if pos + 4 > end:
        return None
    (redundant_length,) = _INT.unpack_from(data, pos)
    pos += 4
    if redundant_length < 0 or pos + redundant_length != end:
        return None
    return FileIndexFile(columns=columns, entries=entries, head_length=head_length,
                         column_names=names, redundant=data[pos:end], warnings=[])


_FIXED = struct.Struct(">qii")
_INT = struct.Struct(">i")
_TWO_INTS = struct.Struct(">ii")


def _ascii(data: bytes, pos: int, end: int) -> tuple[str | None, int]:
    """A `writeUTF` string that is plain ASCII without NUL (which modified UTF-8 writes as
    itself), and the position after it; None for anything else or past `end`."""
    if pos + 2 > end:
        return None, pos
    length = int.from_bytes(data[pos:pos + 2], "big")
    pos += 2
    raw = data[pos:pos + length]
    if pos + length > end or not raw.isascii() or b"\x00" in raw:
        return None, pos
    return raw.decode("ascii"), pos + length


def write_file_index(columns: Mapping[str, Mapping[str, bytes | None]]) -> bytes:
    """Java's container for `{column: {index type: blob or None}}`, in the order given.

    None writes an empty index entry (EMPTY_INDEX_FLAG), as Java's map-key writer does for a
    key that never received a row.
    """
    if not isinstance(columns, Mapping):
        raise SchemaError(f"columns must map column names to {{index type: blob}}, "
                          f"not {type(columns).__name__}")
    layout: list[tuple[str, list[IndexEntry]]] = []
    head = FIXED_HEAD
    names: set[bytes] = set()
    for name, indexes in columns.items():
        if not isinstance(indexes, Mapping):
            raise SchemaError(f"column {name!r} must map index types to blobs, "
                              f"not {type(indexes).__name__}")
        encoded = _encoded(name, "column name")
        _unique(encoded, names, f"column name {name!r}")
        head += 2 + len(encoded) + 4
        types: set[bytes] = set()
        for index_type in indexes:
            encoded_type = _encoded(index_type, "index type")
            _unique(encoded_type, types, f"index type {index_type!r} of column {name!r}")
            head += 2 + len(encoded_type) + 8
    offset = head
    for column_index, (name, indexes) in enumerate(columns.items()):
        entries = []
        for index_type, blob in indexes.items():
            if blob is not None and not isinstance(blob, (bytes, bytearray, memoryview)):
                raise SchemaError(f"the {index_type!r} blob of {name!r} must be bytes or None")
            if blob is None:
                entries.append(IndexEntry(column_index, name, index_type, EMPTY_INDEX_FLAG, 0, None))
            else:
                entries.append(IndexEntry(column_index, name, index_type, offset, len(blob), bytes(blob)))
                offset += len(blob)
        layout.append((name, entries))
    if offset > 2**31 - 1:
        raise SchemaError(f"a container of {offset} bytes does not fit Java's int offsets")
    return _build(layout, head, b"")


@cache
def _codec() -> Any:
    return file_index_codec.file_index.compile()


def _build(columns: list[tuple[str, list[IndexEntry]]], head_length: int, redundant: bytes) -> bytes:
    def utf(text: str) -> dict[str, Any]:
        value = javautf.encode(text)
        return {"len_value": len(value), "value": value}

    model = {
        "magic": MAGIC, "version": VERSION, "len_head": head_length, "head": {
            "num_columns": len(columns),
            "columns": [{"name": utf(name), "num_indexes": len(entries),
                         "indexes": [{"index_type": utf(e.index_type), "ofs_blob": e.offset,
                                      "len_blob": e.length, "blob": e.blob} for e in entries]}
                        for name, entries in columns],
            "len_redundant": len(redundant), "redundant": redundant, "head_slack": b""},
    }
    return _codec().build(model)


def _unique(encoded: bytes, seen: set[bytes], what: str) -> None:
    """Refuse two names Java reads as one (e.g. a supplementary character and its surrogate
    pair encode alike): its reader would merge them and lose a blob."""
    if encoded in seen:
        raise SchemaError(f"{what} repeats an earlier one once encoded as modified UTF-8")
    seen.add(encoded)


def _encoded(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise SchemaError(f"a {what} must be a string, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:   # surrogates: Java would read back another string
        raise SchemaError(f"{what} {text[:40]!r} holds surrogate code points; "
                          f"pass the characters themselves") from exc
    try:
        return javautf.encode(text)
    except ValueError as exc:
        raise SchemaError(f"{what} {text[:40]!r}…: {exc}") from exc


def _text(raw: bytes, parsed: FileIndex, path: str, offset: int) -> str:
    try:
        return javautf.decode(raw)
    except ValueError as exc:
        raise FormatError(str(exc), offset=offset, path=path) from exc
