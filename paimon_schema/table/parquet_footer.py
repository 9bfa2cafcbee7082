"""Which columns of a Parquet file are dictionary-encoded in every data page.

Why: pyarrow decodes a dictionary-encoded string column into a dense string array value by
value, which costs more than reading the column as an Arrow dictionary, taking the rows a
deletion vector keeps from its int32 indices and casting only those rows to strings (a 2M-row
read of the benchmark table: about 12 % less CPU with 30 % of the rows deleted). But a column
chunk whose writer fell back to PLAIN pages (a dictionary grown past the writer's page limit,
which happens on high-cardinality strings) read as a dictionary makes pyarrow hash every plain
value into a new dictionary: about 3x slower than the dense read. The footer's page encoding
statistics (`ColumnMetaData.encoding_stats`, written by parquet-mr since 1.9 and by
parquet-cpp) say which it is; pyarrow does not expose them, so they are read from the footer's
Thrift bytes, re-serialized by pyarrow from the metadata it already parsed (no extra I/O).

Only the fields on the way are decoded (row groups -> column chunks -> metadata -> path and
encoding stats); everything else is skipped by the Thrift compact protocol's type tags. A
footer without encoding statistics, or anything unexpected in it, answers "none": the caller
then reads the dense way, which is always correct.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["dictionary_columns"]

# Thrift compact protocol type tags
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
# parquet.thrift
_DATA_PAGE, _DATA_PAGE_V2 = 0, 3
_PLAIN_DICTIONARY, _RLE_DICTIONARY = 2, 8
_FILE_ROW_GROUPS, _ROW_GROUP_COLUMNS, _CHUNK_META = 4, 1, 3
_META_PATH, _META_ENCODING_STATS = 3, 13
_STATS_PAGE_TYPE, _STATS_ENCODING = 1, 2


class _Compact:
    """A cursor over Thrift compact-protocol bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def varint(self) -> int:
        data, pos, shift, value = self.data, self.pos, 0, 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.pos = pos
                return value
            shift += 7

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def fields(self) -> Iterator[tuple[int, int]]:
        """(field id, type tag) of each field of the struct at the cursor, up to its stop byte;
        the caller reads or `skip`s each value before asking for the next field."""
        field_id = 0
        while True:
            header = self.data[self.pos]
            self.pos += 1
            if header == 0:
                return
            delta = header >> 4
            field_id = field_id + delta if delta else self.zigzag()
            yield field_id, header & 0x0F

    def list_header(self) -> tuple[int, int]:
        header = self.data[self.pos]
        self.pos += 1
        size = header >> 4
        return (self.varint() if size == 15 else size), header & 0x0F

    def binary(self) -> bytes:
        size = self.varint()
        start = self.pos
        self.pos += size
        return self.data[start:self.pos]

    def skip(self, tag: int, *, element: bool = False) -> None:
        if tag in (_TRUE, _FALSE):
            self.pos += 1 if element else 0         # a field's boolean is in its type tag
        elif tag == _BYTE:
            self.pos += 1
        elif tag in (_I16, _I32, _I64):
            self.varint()
        elif tag == _DOUBLE:
            self.pos += 8
        elif tag == _BINARY:
            size = self.varint()
            self.pos += size
        elif tag in (_LIST, _SET):
            size, element_tag = self.list_header()
            for _ in range(size):
                self.skip(element_tag, element=True)
        elif tag == _MAP:
            size = self.varint()
            if size:
                types = self.data[self.pos]
                self.pos += 1
                for _ in range(size):
                    self.skip(types >> 4, element=True)
                    self.skip(types & 0x0F, element=True)
        elif tag == _STRUCT:
            for _, field_tag in self.fields():
                self.skip(field_tag)
        else:
            raise ValueError(f"unknown Thrift compact type {tag}")


def _footer_bytes(metadata: pq.FileMetaData) -> bytes:
    """The Thrift `FileMetaData` of the footer, as pyarrow serializes what it parsed."""
    sink = pa.BufferOutputStream()
    metadata.write_metadata_file(sink)        # PAR1, FileMetaData, its length, PAR1
    data = sink.getvalue().to_pybytes()
    size = int.from_bytes(data[-8:-4], "little")
    return data[-8 - size:-8]


def _chunk(reader: _Compact) -> tuple[str | None, bool]:
    """A ColumnChunk: its dotted path and whether its encoding stats show only dictionary
    data pages (False without stats)."""
    path: str | None = None
    only_dictionary = False
    for field_id, tag in reader.fields():
        if field_id != _CHUNK_META or tag != _STRUCT:
            reader.skip(tag)
            continue
        for meta_id, meta_tag in reader.fields():
            if meta_id == _META_PATH and meta_tag == _LIST:
                size, _ = reader.list_header()
                path = ".".join(reader.binary().decode() for _ in range(size))
            elif meta_id == _META_ENCODING_STATS and meta_tag == _LIST:
                size, _ = reader.list_header()
                only_dictionary = size > 0
                for _ in range(size):
                    page_type = encoding = None
                    for stats_id, stats_tag in reader.fields():
                        if stats_tag == _I32 and stats_id in (_STATS_PAGE_TYPE, _STATS_ENCODING):
                            value = reader.zigzag()
                            if stats_id == _STATS_PAGE_TYPE:
                                page_type = value
                            else:
                                encoding = value
                        else:
                            reader.skip(stats_tag)
                    if page_type in (_DATA_PAGE, _DATA_PAGE_V2) and encoding not in (
                            _PLAIN_DICTIONARY, _RLE_DICTIONARY):
                        only_dictionary = False
            else:
                reader.skip(meta_tag)
    return path, only_dictionary


def dictionary_columns(metadata: pq.FileMetaData) -> frozenset[str]:
    """The columns (dotted paths) whose data pages are all dictionary-encoded in every row
    group, per the footer's page encoding statistics; empty when the footer has none."""
    if metadata.num_row_groups == 0:
        return frozenset()
    try:
        reader = _Compact(_footer_bytes(metadata))
        verdicts: dict[str, bool] = {}
        for field_id, tag in reader.fields():
            if field_id != _FILE_ROW_GROUPS or tag != _LIST:
                reader.skip(tag)
                continue
            groups, _ = reader.list_header()
            for _ in range(groups):
                for group_id, group_tag in reader.fields():
                    if group_id != _ROW_GROUP_COLUMNS or group_tag != _LIST:
                        reader.skip(group_tag)
                        continue
                    chunks, _ = reader.list_header()
                    for _ in range(chunks):
                        path, only_dictionary = _chunk(reader)
                        if path is not None:
                            verdicts[path] = verdicts.get(path, True) and only_dictionary
    except (IndexError, ValueError, UnicodeDecodeError, RecursionError, pa.ArrowException):
        return frozenset()                    # unexpected bytes: read the dense way
    return frozenset(path for path, ok in verdicts.items() if ok)
