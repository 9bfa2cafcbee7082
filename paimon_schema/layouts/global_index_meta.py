"""The global-index metadata of an index manifest entry (`IndexFileMeta` V4, `_GLOBAL_INDEX`):
the row range and field ids, `_INDEX_META` per index type and the `DEIX` `_SOURCE_META`.

`_GLOBAL_INDEX` is an Avro record (`GlobalIndexMeta`: `_ROW_RANGE_START`, `_ROW_RANGE_END`,
`_INDEX_FIELD_ID`, `_EXTRA_FIELD_IDS`, `_INDEX_META`, `_SOURCE_META`), decoded by fastavro
with the rest of the manifest; its two byte fields are small binary layouts decoded here:

* `_INDEX_META` of the sorted indexes (`btree`, `bitmap`): Java's `SortedIndexFileMeta`, a
  little-endian int32 length and the first key, the same for the last key, a has-nulls byte
  and, since the null-key flags version, a format version byte 1 and a flags byte (bit 0:
  first key is NULL, bit 1: last key is NULL). Older metadata ends after has-nulls, where
  two empty keys with nulls mean an all-null file. Keys are global-index key bytes.
* `_SOURCE_META` of data-evolution tables: Java's `DataEvolutionIndexSourceMeta`, big-endian
  int32 magic 0x44454958 "DEIX", int32 version 1 and int64 id of the snapshot scanned to
  build the index. Primary-key index source metadata has another layout (not decoded here).
* vector and full-text indexes (`lumina`, `lumina-vector-ann`, `full-text`, `es-index`, IVF*,
  DANN, ESM1 …) keep engine-specific `_INDEX_META`; they are recognised by their index type
  and reported as opaque, never parsed.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paimon_schema.values.errors import FormatError

SORTED_INDEX_TYPES = ("btree", "bitmap")
DEIX_MAGIC = 0x44454958
DEIX_VERSION = 1
_DEIX = struct.Struct(">iiq")
_FORMAT_VERSION_WITH_NULL_FLAGS = 1
_FIRST_KEY_IS_NULL, _LAST_KEY_IS_NULL = 1, 2
#: index-type prefixes of the vector and full-text global indexes Paimon and its engines write
OPAQUE_PREFIXES = ("lumina", "full-text", "es-index", "ivf", "dann", "diskann", "hnsw", "esm",
                   "multivalue", "test-vector", "test-fulltext")


def index_kind(index_type: str) -> str:
    """`sorted` (btree, bitmap: files this library reads), `opaque` (vector / full-text /
    multivalue indexes: named and skipped) or `other` (not a global index type we know)."""
    name = index_type.strip().lower()
    if name in SORTED_INDEX_TYPES:
        return "sorted"
    if name.startswith(OPAQUE_PREFIXES):
        return "opaque"
    return "other"


@dataclass(frozen=True)
class SortedIndexFileMeta:
    """A sorted global index file's key range: None keys are NULL (an all-null file)."""

    first_key: bytes | None
    last_key: bytes | None
    has_nulls: bool

    @classmethod
    def parse(cls, data: bytes) -> SortedIndexFileMeta:
        view = memoryview(data)
        first, at = _key(view, 0, "first_key")
        last, at = _key(view, at, "last_key")
        if at >= len(view):
            raise FormatError("no has-nulls byte", offset=at, path="has_nulls")
        has_nulls = view[at] == 1
        at += 1
        first_key: bytes | None = first
        last_key: bytes | None = last
        if len(view) - at >= 2:
            if view[at] == _FORMAT_VERSION_WITH_NULL_FLAGS:
                flags = view[at + 1]
                first_key = None if flags & _FIRST_KEY_IS_NULL else first
                last_key = None if flags & _LAST_KEY_IS_NULL else last
        elif not first and not last and has_nulls:      # legacy all-null metadata
            first_key = last_key = None
        return cls(first_key, last_key, has_nulls)

    def to_bytes(self) -> bytes:
        """Java's bytes (the null-key flags version)."""
        out = bytearray()
        flags = 0
        for key, flag in ((self.first_key, _FIRST_KEY_IS_NULL), (self.last_key, _LAST_KEY_IS_NULL)):
            out += struct.pack("<i", 0 if key is None else len(key)) + (key or b"")
            flags |= flag if key is None else 0
        out += bytes([1 if self.has_nulls else 0, _FORMAT_VERSION_WITH_NULL_FLAGS, flags])
        return bytes(out)


def _key(view: memoryview, at: int, path: str) -> tuple[bytes, int]:
    if at + 4 > len(view):
        raise FormatError(f"no {path} length", offset=at, path=f"len_{path}")
    length = int.from_bytes(view[at:at + 4], "little", signed=True)
    if length < 0 or at + 4 + length > len(view):
        raise FormatError(f"{path} length {length} does not fit in {len(view)} bytes",
                          offset=at, path=f"len_{path}")
    return bytes(view[at + 4:at + 4 + length]), at + 4 + length


@dataclass(frozen=True)
class DataEvolutionSourceMeta:
    """`DEIX` source metadata: the snapshot a data-evolution global index was built from."""

    scan_snapshot_id: int

    @staticmethod
    def is_data_evolution(data: bytes | None) -> bool:
        return data is not None and len(data) >= 4 and int.from_bytes(data[:4], "big") == DEIX_MAGIC

    @classmethod
    def parse(cls, data: bytes) -> DataEvolutionSourceMeta:
        if len(data) != _DEIX.size:
            raise FormatError(f"DEIX source metadata is {_DEIX.size} bytes, not {len(data)}",
                              offset=min(len(data), _DEIX.size), path="scan_snapshot_id")
        magic, version, snapshot = _DEIX.unpack(data)
        if magic != DEIX_MAGIC:
            raise FormatError(f"not DEIX source metadata (magic {magic:#010x})", offset=0, path="magic")
        if version != DEIX_VERSION:
            raise FormatError(f"unsupported DEIX version {version}", offset=4, path="version")
        if snapshot <= 0:
            raise FormatError(f"scan snapshot id {snapshot} is not positive", offset=8,
                              path="scan_snapshot_id")
        return cls(snapshot)

    def to_bytes(self) -> bytes:
        return _DEIX.pack(DEIX_MAGIC, DEIX_VERSION, self.scan_snapshot_id)


@dataclass(frozen=True)
class GlobalIndexMeta:
    """One index file's `_GLOBAL_INDEX` record: rows `[row_range_start, row_range_end]`
    (inclusive, as Java's `Range`) of field `index_field_id`."""

    index_type: str
    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: tuple[int, ...] | None
    index_meta: bytes | None
    source_meta: bytes | None

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> GlobalIndexMeta | None:
        """The global-index metadata of an index manifest record (None for a DV/hash entry)."""
        record = entry.get("_GLOBAL_INDEX")
        if record is None:
            return None
        extra = record.get("_EXTRA_FIELD_IDS")
        return cls(entry["_INDEX_TYPE"], record["_ROW_RANGE_START"], record["_ROW_RANGE_END"],
                   record["_INDEX_FIELD_ID"], None if extra is None else tuple(extra),
                   record.get("_INDEX_META"), record.get("_SOURCE_META"))

    def to_record(self) -> dict[str, Any]:
        """The `_GLOBAL_INDEX` Avro record."""
        return {"_ROW_RANGE_START": self.row_range_start, "_ROW_RANGE_END": self.row_range_end,
                "_INDEX_FIELD_ID": self.index_field_id,
                "_EXTRA_FIELD_IDS": None if self.extra_field_ids is None else list(self.extra_field_ids),
                "_INDEX_META": self.index_meta, "_SOURCE_META": self.source_meta}

    @property
    def kind(self) -> str:
        return index_kind(self.index_type)

    @property
    def sorted_meta(self) -> SortedIndexFileMeta | None:
        """The key range of a btree / bitmap file (None for other index types or no meta)."""
        if self.kind != "sorted" or self.index_meta is None:
            return None
        try:
            return SortedIndexFileMeta.parse(self.index_meta)
        except FormatError as exc:
            raise exc.within("_GLOBAL_INDEX._INDEX_META", 0) from exc

    @property
    def source(self) -> DataEvolutionSourceMeta | None:
        """The DEIX source metadata, when the file was built for a data-evolution table."""
        if not DataEvolutionSourceMeta.is_data_evolution(self.source_meta):
            return None
        assert self.source_meta is not None
        try:
            return DataEvolutionSourceMeta.parse(self.source_meta)
        except FormatError as exc:
            raise exc.within("_GLOBAL_INDEX._SOURCE_META", 0) from exc
