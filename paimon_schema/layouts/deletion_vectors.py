"""Deletion-vector index files (formats/deletion_vectors.ksy): read.

A bin's `(offset, length)` is what Java records in `IndexFileMeta`: `offset` is the position of
the bin's size field, `length` is the size `S` for a 32-bit bin and `S + 8` for a 64-bit bin.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from pyroaring import BitMap, BitMap64

from paimon_schema import roaring
from paimon_schema.errors import FormatError
from paimon_schema.generated.deletion_vectors import DeletionVectors
from paimon_schema.layouts import parsing

Bitmap = DeletionVectors.BinMagic
SIZE_FIELD = 4
CHECKSUM_FIELD = 4


@dataclass(frozen=True)
class DeletionVectorBin:
    """One data file's deleted positions, where Java's manifest says they are."""

    offset: int
    length: int
    bitmap64: bool
    bitmap: BitMap | BitMap64
    checksum: int

    @property
    def cardinality(self) -> int:
        return len(self.bitmap)


@dataclass(frozen=True)
class DeletionVectorFile:
    """A parsed deletion-vector index file; `bins` in file order."""

    version: int
    bins: list[DeletionVectorBin]
    warnings: list[str] = field(default_factory=list, compare=False)

    @classmethod
    def parse(cls, data: bytes, *, verify_checksum: bool = True) -> "DeletionVectorFile":
        view = memoryview(data)
        parsed = parsing.parse(DeletionVectors, view)
        warnings: list[str] = []
        bins = []
        for i, raw in enumerate(parsed.bins):
            start = parsed._debug["bins"]["arr"][i]["start"]
            bins.append(_decode_bin(view, start, raw, verify_checksum, f"bins[{i}]", warnings))
        return cls(version=int(parsed.version), bins=bins, warnings=warnings)


def read_deletion_vector(data: bytes, offset: int, length: int, *,
                         verify_checksum: bool = True) -> BitMap | BitMap64:
    """Read the bin Java's manifest points at with `(offset, length)`, as Java's
    `DeletionVector.read` does: the magic decides the kind, and the size must agree with
    `length` for that kind."""
    view = memoryview(data)
    if not 0 <= offset < len(view):
        raise FormatError(f"deletion vector offset {offset} is outside the {len(view)}-byte file",
                          offset=None, path="bin")
    raw = parsing.parse(lambda io: DeletionVectors.Bin(io), view, pos=offset, path="bin")
    expected = length - 8 if raw.magic == Bitmap.bitmap64 else length
    if raw.len_payload != expected:
        raise FormatError(f"bin size {raw.len_payload} does not match the recorded length {length} "
                          f"(a {_kind(raw)} bin of this length has size {expected})",
                          offset=offset, path="bin.len_payload")
    return _decode_bin(view, offset, raw, verify_checksum, "bin", []).bitmap


def _kind(raw: DeletionVectors.Bin) -> str:
    return "64-bit" if raw.magic == Bitmap.bitmap64 else "32-bit"


def _decode_bin(view: memoryview, start: int, raw: DeletionVectors.Bin, verify_checksum: bool,
                path: str, warnings: list[str]) -> DeletionVectorBin:
    payload_start = start + SIZE_FIELD
    payload_end = payload_start + raw.len_payload
    if verify_checksum:
        actual = zlib.crc32(view[payload_start:payload_end])
        if actual != raw.checksum:
            raise FormatError(f"checksum mismatch: stored 0x{raw.checksum:08x}, "
                              f"computed 0x{actual:08x} over the bin's magic and bitmap",
                              offset=payload_end, path=f"{path}.checksum")
    bitmap_start = payload_start + 4
    body = view[bitmap_start:payload_end]
    try:
        if raw.magic == Bitmap.bitmap64:
            bitmap: BitMap | BitMap64 = roaring.deserialize64(body)
            length = raw.len_payload + SIZE_FIELD + CHECKSUM_FIELD
        else:
            bitmap, size = roaring.deserialize(body)
            if size != len(body):
                warnings.append(f"{path}: {len(body) - size} unused bytes after the bitmap "
                                f"(Java ignores them)")
            length = raw.len_payload
    except FormatError as exc:
        raise exc.within(f"{path}.bitmap", bitmap_start) from exc
    return DeletionVectorBin(offset=start, length=length, bitmap64=raw.magic == Bitmap.bitmap64,
                             bitmap=bitmap, checksum=raw.checksum)
