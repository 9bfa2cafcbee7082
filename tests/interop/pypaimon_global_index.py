"""pypaimon 2.1.0's bitmap global index writer and reader, driven in memory (no table)."""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

from oracles import import_oracle


class MemoryFileIO:
    """The few FileIO calls pypaimon's bitmap writer and reader make, over a dict of bytes."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def check_or_mkdirs(self, path: str) -> None:
        del path

    def new_output_stream(self, path: str) -> io.BytesIO:
        files = self.files

        class Output(io.BytesIO):
            def close(self) -> None:
                files[path] = self.getvalue()
                super().close()

        return Output()

    def new_input_stream(self, path: str) -> io.BytesIO:
        return io.BytesIO(self.files[path])

    def delete_quietly(self, path: str) -> None:
        self.files.pop(path, None)


def serializer(data_type: str) -> Any:
    import_oracle("pypaimon")
    from pypaimon.globalindex.key_serializer import create_serializer
    from pypaimon.schema.data_types import AtomicType

    return create_serializer(AtomicType(data_type))


def pypaimon_write(data_type: str, values: Iterable[Any], block_size: int) -> tuple[bytes, bytes | None]:
    """(file bytes, manifest meta) as pypaimon's `BitmapIndexWriter` writes them; b"" for no rows."""
    from pypaimon.globalindex.bitmap.bitmap_index_writer import BitmapIndexWriter

    fs = MemoryFileIO()
    writer = BitmapIndexWriter(fs, "/index", serializer(data_type), dictionary_block_size=block_size)
    for row, value in enumerate(values):
        writer.write(value, row)
    entries = writer.finish()
    if not entries:
        return b"", None
    return fs.files[f"/index/{writer.file_name}"], entries[0].meta


def pypaimon_reader(data_type: str, data: bytes) -> Any:
    """pypaimon's `BitmapIndexReader` over `data`."""
    from pypaimon.globalindex.bitmap.bitmap_index_reader import BitmapIndexReader
    from pypaimon.globalindex.global_index_meta import GlobalIndexIOMeta

    fs = MemoryFileIO()
    fs.files["/index/f.index"] = data
    meta = GlobalIndexIOMeta(file_name="f.index", file_size=len(data), metadata=b"")
    return BitmapIndexReader(serializer(data_type), fs, "/index", meta)
