"""File-index containers (formats/file_index.ksy): read.

`columns` is what Java's reader sees: duplicate column names merge and a repeated
(column, index type) keeps the last entry. `entries` keeps the file exactly, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from paimon_schema import javautf
from paimon_schema.errors import FormatError
from paimon_schema.generated.file_index import FileIndex
from paimon_schema.layouts import parsing

MAGIC = int(FileIndex.Magic.file_index)
EMPTY_INDEX_FLAG = -1


@dataclass(frozen=True)
class IndexEntry:
    """One head entry: where the blob of one index of one column lies (`offset` -1: empty)."""

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
    redundant: bytes = b""
    warnings: list[str] = field(default_factory=list, compare=False)

    @classmethod
    def parse(cls, data: bytes) -> "FileIndexFile":
        parsed = parsing.parse(FileIndex, data)
        warnings: list[str] = []
        columns: dict[str, dict[str, bytes | None]] = {}
        entries: list[IndexEntry] = []
        for i, column in enumerate(parsed.columns):
            name = _text(column.name.value, parsed, f"columns[{i}].name.value",
                         column.name._debug["value"]["start"])
            indexes = columns.setdefault(name, {})
            for j, raw in enumerate(column.indexes):
                where = f"columns[{i}].indexes[{j}]"
                index_type = _text(raw.index_type.value, parsed, f"{where}.index_type.value",
                                   raw.index_type._debug["value"]["start"])
                blob = None if raw.is_empty else bytes(parsing.read_lazily(raw, "blob", where))
                if raw.is_empty and raw.len_blob != 0:
                    warnings.append(f"{where}: empty entry with length {raw.len_blob} (ignored)")
                if not raw.is_empty and raw.ofs_blob < parsed.len_head:
                    warnings.append(f"{where}: blob at {raw.ofs_blob} lies inside the head")
                if index_type in indexes:
                    warnings.append(f"{where}: repeats {name!r}/{index_type!r}; the last entry wins")
                indexes[index_type] = blob
                entries.append(IndexEntry(name, index_type, raw.ofs_blob, raw.len_blob, blob))
        if len(parsed.head_slack):
            warnings.append(f"{len(parsed.head_slack)} unused bytes at the end of the head")
        if len(columns) != len(parsed.columns):
            warnings.append("a column name appears more than once; Java merges its entries")
        return cls(columns=columns, entries=entries, head_length=parsed.len_head,
                   redundant=bytes(parsed.redundant), warnings=warnings)


def _text(raw: bytes, parsed: FileIndex, path: str, offset: int) -> str:
    try:
        return javautf.decode(raw)
    except ValueError as exc:
        raise FormatError(str(exc), offset=offset, path=path) from exc
