"""The global-index metadata of an index manifest entry (`IndexFileMeta` V4, `_GLOBAL_INDEX`):
the row range and field ids, `_INDEX_META` per index type and the `DEIX` `_SOURCE_META`.

`_GLOBAL_INDEX` is an Avro record (`GlobalIndexMeta`: `_ROW_RANGE_START`, `_ROW_RANGE_END`,
`_INDEX_FIELD_ID`, `_EXTRA_FIELD_IDS`, `_INDEX_META`, `_SOURCE_META`), decoded by fastavro
with the rest of the manifest; its two byte fields are small binary layouts, each a spec:

* `_INDEX_META` of the sorted indexes (`btree`, `bitmap`): Java's `SortedIndexFileMeta`
  (formats/sorted_index_meta.ksy), the file's first and last key and whether it has NULLs;
* `_SOURCE_META` of data-evolution tables: Java's `DataEvolutionIndexSourceMeta`
  (formats/index_source_meta.ksy, "DEIX"), the snapshot scanned to build the index.
  Primary-key index source metadata has another layout (not decoded here).
* vector and full-text indexes (`lumina`, `lumina-vector-ann`, `full-text`, `es-index`, IVF*,
  DANN, ESM1 …) keep engine-specific `_INDEX_META`; they are recognised by their index type
  and reported as opaque, never parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from paimon_schema.generated import index_source_meta_codec, sorted_index_meta_codec
from paimon_schema.generated.index_source_meta import IndexSourceMeta
from paimon_schema.generated.sorted_index_meta import SortedIndexMeta
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError

SORTED_INDEX_TYPES = ("btree", "bitmap")
DEIX_MAGIC = 0x44454958
DEIX_VERSION = 1
_FORMAT_VERSION_WITH_NULL_FLAGS = 1
_FIRST_KEY_IS_NULL, _LAST_KEY_IS_NULL = 1, 2
#: index-type prefixes of the vector and full-text global indexes Paimon and its engines write
#: (Java's lumina / full-text / es-index / multivalue, pypaimon's ivf-* and diskann, paimon-rust's
#: fm, and the IVF*, DANN, ESM* families of other engines)
OPAQUE_PREFIXES = ("lumina", "full-text", "es-index", "multivalue", "ivf", "dann", "diskann",
                   "hnsw", "esm", "fm", "test-vector", "test-fulltext")


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
        """Decode Java's bytes (formats/sorted_index_meta.ksy); FormatError when malformed."""
        raw = parsing.parse(SortedIndexMeta, data)
        first, last, has_nulls = bytes(raw.first_key), bytes(raw.last_key), raw.has_nulls == 1
        tail = getattr(raw, "null_flags", None)      # the spec's `if`: two bytes after has_nulls
        if tail is None:                     # legacy: two empty keys with nulls = all null
            legacy_null = not first and not last and has_nulls
            return cls(None if legacy_null else first, None if legacy_null else last, has_nulls)
        flags = getattr(tail, "null_key_flags", 0)    # present for format version 1 only
        return cls(None if flags & _FIRST_KEY_IS_NULL else first,
                   None if flags & _LAST_KEY_IS_NULL else last, has_nulls)

    def to_bytes(self) -> bytes:
        """Java's bytes (the null-key flags version)."""
        first, last = self.first_key or b"", self.last_key or b""
        flags = (_FIRST_KEY_IS_NULL if self.first_key is None else 0) \
            | (_LAST_KEY_IS_NULL if self.last_key is None else 0)
        return bytes(sorted_index_meta_codec.sorted_index_meta.build({
            "len_first_key": len(first), "first_key": first, "len_last_key": len(last),
            "last_key": last, "has_nulls": int(self.has_nulls),
            "null_flags": {"format_version": _FORMAT_VERSION_WITH_NULL_FLAGS, "null_key_flags": flags}}))


@dataclass(frozen=True)
class DataEvolutionSourceMeta:
    """`DEIX` source metadata: the snapshot a data-evolution global index was built from."""

    scan_snapshot_id: int

    @staticmethod
    def is_data_evolution(data: bytes | None) -> bool:
        return data is not None and len(data) >= 4 and int.from_bytes(data[:4], "big") == DEIX_MAGIC

    @classmethod
    def parse(cls, data: bytes) -> DataEvolutionSourceMeta:
        """Decode Java's bytes (formats/index_source_meta.ksy); FormatError when malformed,
        also for bytes after the snapshot id, which Java rejects and Kaitai parsers do not check."""
        raw = parsing.parse(IndexSourceMeta, data)
        if len(data) != parsing.field_end(raw, "scan_snapshot_id"):
            start = parsing.field_start(raw, "scan_snapshot_id")
            raise FormatError(f"{len(data) - start - 8} byte(s) after the snapshot id, which Java rejects",
                              offset=start, path="scan_snapshot_id")
        return cls(raw.scan_snapshot_id)

    def to_bytes(self) -> bytes:
        return bytes(index_source_meta_codec.index_source_meta.build(
            {"version": DEIX_VERSION, "scan_snapshot_id": self.scan_snapshot_id}))


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
