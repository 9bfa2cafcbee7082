"""Deletion-vector index files (formats/deletion_vectors.ksy): read and write.

A bin's `(offset, length)` is what Java records in `IndexFileMeta`: `offset` is the position of
the bin's size field, `length` is the size `S` for a 32-bit bin and `S + 8` for a 64-bit bin.
Writing follows `DeletionVectorsIndexFile`: bins in the mapping's order, every bitmap
run-optimized, 64-bit bins with Java's empty gap buckets.

Each bin's CRC is the spec's `-checksum`: the generated codec computes it when writing, and
readers check the stored value with the codec's function. Bins are framed with `struct` and a
64-bit bin's layout is checked by walking its bucket headers (`_scan_*`), so its bitmap is
decoded once, by pyroaring; wherever the walk declines, the generated parser reads the file and
locates the error.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from pyroaring import BitMap, BitMap64

from paimon_schema.generated import deletion_vectors_codec, roaring_bitmap_codec
from paimon_schema.generated.deletion_vectors import DeletionVectors
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.runtime import constructs
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.positions import as_array, fresh_bitmap
from paimon_schema.values.results import plural

Bitmap = DeletionVectors.BinMagic
SIZE_FIELD = 4
CHECKSUM_FIELD = 4
VERSION = int(DeletionVectors.FileVersion.v1)
MAX_POSITION_32 = 2**31 - 1
#: Java's Bitmap64DeletionVector limit (formats/deletion_vectors.ksy `bitmap64`)
MAX_POSITION_64 = 0x7FFF_FFFE_8000_0000
#: Java writes every high key up to the largest; past this many the dense form is refused.
MAX_BUCKETS_64 = 1 << 24

_MAGICS = tuple(int(m).to_bytes(4, "big") for m in Bitmap)
_MAGIC_VALUES = frozenset(int(m) for m in Bitmap)
_FRAME = struct.Struct(">iI")               # len_payload, magic
MAX_NUM_BUCKETS = 0x7FFFFFFF                 # the spec's `valid` bounds of a 64-bit bitmap
MAX_BUCKET_KEY = 0x7FFFFFFE


def has_signature(data: bytes | memoryview) -> bool:
    """Whether `data` is a deletion-vector file by its look: the version byte alone (no bins),
    or followed by a bin whose magic is known."""
    head = bytes(data[:9])
    return head == b"\x01" or (head[:1] == b"\x01" and head[5:9] in _MAGICS)


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

    def __repr__(self) -> str:
        bits = 64 if self.bitmap64 else 32
        return (f"<DeletionVectorBin at {self.offset}, {self.length} bytes, {bits}-bit: "
                f"{plural(len(self.bitmap), 'deleted row')}>")


@dataclass(frozen=True)
class DeletionVectorFile:
    """A parsed deletion-vector index file; `bins` in file order."""

    version: int
    bins: list[DeletionVectorBin]
    warnings: list[str] = field(default_factory=list, compare=False)

    @classmethod
    def parse(cls, data: bytes, *, verify_checksum: bool = True) -> DeletionVectorFile:
        view = memoryview(data)
        frames = _scan_file(view)
        if frames is None:                     # the generated parser locates what is wrong
            parsed = parsing.parse(DeletionVectors, view)
            frames = [(parsing.field_start(parsed, "bins", i), _frame(raw))
                      for i, raw in enumerate(parsed.bins)]
        warnings: list[str] = []
        bins = [_decode_bin(view, start, frame, verify_checksum, f"bins[{i}]", warnings)
                for i, (start, frame) in enumerate(frames)]
        return cls(version=VERSION, bins=bins, warnings=warnings)

    def __repr__(self) -> str:
        deleted = sum(len(b.bitmap) for b in self.bins)
        return (f"<DeletionVectorFile v{self.version}: {plural(len(self.bins), 'bin')}, "
                f"{plural(deleted, 'deleted row')}>")

    def to_bytes(self) -> bytes:
        """The file again, bins in this model's order, each bitmap as Java serializes it."""
        return _codec().build({"version": self.version,
                               "bins": [_bin_model(b.bitmap, b.bitmap64) for b in self.bins]})


def write_deletion_vectors(vectors: Mapping[str, Any], *, bitmap64: bool = False
                           ) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """Java's deletion-vector index file for `{data file name: deleted positions}`.

    Returns the bytes and, per data file, the `(offset, length)` Java records in its
    `IndexFileMeta`. Positions are at most 2^31-1 (32-bit bins) or 0x7FFFFFFE80000000
    (64-bit bins); anything else raises SchemaError.
    """
    bins, ranges, offset = [], {}, 1
    for name, positions in vectors.items():
        if not isinstance(name, str):
            raise SchemaError(f"data file names must be strings, not {type(name).__name__}")
        model = _bin_model(positions, bitmap64, name)
        bins.append(model)
        ranges[name] = (offset, model["len_payload"] + (SIZE_FIELD + CHECKSUM_FIELD if bitmap64 else 0))
        offset += SIZE_FIELD + model["len_payload"] + CHECKSUM_FIELD
    return _codec().build({"version": VERSION, "bins": bins}), ranges


@cache
def _codec() -> Any:
    return deletion_vectors_codec.deletion_vectors.compile()


@cache
def _checksum() -> Any:
    return constructs.checksum(deletion_vectors_codec.t_bin(), "checksum")


@cache
def _bitmap64_codec() -> Any:
    return deletion_vectors_codec.t_bitmap64().compile()


@cache
def _roaring_codec() -> Any:
    return roaring_bitmap_codec.roaring_bitmap.compile()


def _bin_model(positions: Any, bitmap64: bool, name: str = "") -> dict[str, Any]:
    """The codec model of one bin: size, magic, bitmap and the CRC over magic + bitmap."""
    what = f"position of {name!r}" if name else "position"
    if bitmap64:
        values = as_array(positions, maximum=MAX_POSITION_64, what=what)
        bitmap: Any = _bitmap64_model(values)
        body = _bitmap64_codec().build(bitmap)
        magic = Bitmap.bitmap64
    else:
        values = as_array(positions, maximum=MAX_POSITION_32, what=what)
        bitmap = body = fresh_bitmap(values).serialize()
        magic = Bitmap.bitmap32
    return {"len_payload": 4 + len(body), "magic": int(magic), "bitmap": bitmap}


def _bitmap64_model(values: np.ndarray) -> dict[str, Any]:
    """Buckets 0..highest key, empty ones included, as `Bitmap64DeletionVector` writes them."""
    highs = (values >> np.uint64(32)).astype(np.int64)
    num_buckets = int(highs[-1]) + 1 if values.size else 0
    if num_buckets > MAX_BUCKETS_64:
        raise SchemaError(f"positions up to {int(values[-1])} need {num_buckets} buckets in Java's "
                          f"dense 64-bit form; refusing more than {MAX_BUCKETS_64}")
    lows = values & np.uint64(0xFFFFFFFF)
    bounds = np.searchsorted(highs, np.arange(num_buckets + 1))
    buckets = [{"key": key,
                "bitmap": constructs.parse(_roaring_codec(),
                                           fresh_bitmap(lows[bounds[key]:bounds[key + 1]]).serialize())}
               for key in range(num_buckets)]
    return {"num_buckets": num_buckets, "buckets": buckets, "trailing": b""}


def read_deletion_vector(data: bytes, offset: int, length: int, *,
                         verify_checksum: bool = True) -> BitMap | BitMap64:
    """Read the bin Java's manifest points at with `(offset, length)`, as Java's
    `DeletionVector.read` does: the magic decides the kind, and the size must agree with
    `length` for that kind."""
    view = memoryview(data)
    raw = _recorded_bin(view, offset, length)
    return _decode_bin(view, offset, raw, verify_checksum, "bin", []).bitmap


def deletion_vector_cardinality(data: bytes, offset: int, length: int) -> int:
    """How many positions the bin `read_deletion_vector` reads deletes, from its containers'
    headers, no value decoded and the checksum not checked (a read decoding the bin checks it):
    the count Paimon before 1.0 did not record in the index manifest."""
    view = memoryview(data)
    raw = _recorded_bin(view, offset, length)
    body = view[offset + SIZE_FIELD + 4:offset + SIZE_FIELD + raw.len_payload]
    try:
        if raw.magic != Bitmap.bitmap64:
            return int(roaring.containers(body).cardinalities.sum())
        total, at = 0, 8                # (bucket count, then each bucket's key and bitmap)
        for _ in range(int.from_bytes(body[:8], "little")):
            bucket = roaring.containers(body, at + 4)
            total += int(bucket.cardinalities.sum())
            at = bucket.end
        return total
    except FormatError as exc:
        raise exc.within("bin.bitmap", offset + SIZE_FIELD + 4) from exc


def _recorded_bin(view: memoryview, offset: int, length: int) -> _Frame:
    """The frame of the bin at `offset`, checked against the `length` the manifest records
    for it, as Java's `DeletionVector.read` does: the magic decides the kind, and the size must
    agree with `length` for that kind."""
    if not 0 <= offset < len(view):
        raise FormatError(f"deletion vector offset {offset} is outside the {len(view)}-byte file",
                          offset=None, path="bin")
    raw = _scan_bin(view, offset)
    if raw is None:
        raw = _frame(parsing.parse(lambda io: DeletionVectors.Bin(io), view, pos=offset, path="bin"))
    expected = length - 8 if raw.magic == Bitmap.bitmap64 else length
    if raw.len_payload != expected:
        raise FormatError(f"bin size {raw.len_payload} does not match the recorded length {length} "
                          f"(a {_kind(raw)} bin of this length has size {expected})",
                          offset=offset, path="bin.len_payload")
    return raw


class _Frame(NamedTuple):
    """A bin's size, magic and stored checksum."""

    len_payload: int
    magic: int
    checksum: int


def _frame(raw: DeletionVectors.Bin) -> _Frame:
    return _Frame(raw.len_payload, int(raw.magic), raw.checksum)


def _scan_file(view: memoryview) -> list[tuple[int, _Frame]] | None:
    """Every bin's start and frame via struct, or None where the generated parser would fail."""
    if len(view) < 1 or view[0] != VERSION:
        return None
    frames, pos = [], 1
    while pos < len(view):
        frame = _scan_bin(view, pos)
        if frame is None:
            return None
        frames.append((pos, frame))
        pos += SIZE_FIELD + frame.len_payload + CHECKSUM_FIELD
    return frames


def _scan_bin(view: memoryview, start: int) -> _Frame | None:
    """The bin at `start` framed via struct (a 64-bit bitmap's layout checked too), or None
    where the generated parser would fail."""
    if start < 0 or start + 8 > len(view):
        return None
    len_payload, magic = _FRAME.unpack_from(view, start)
    stop = start + SIZE_FIELD + len_payload
    if len_payload < 4 or magic not in _MAGIC_VALUES or stop + CHECKSUM_FIELD > len(view):
        return None
    if magic == Bitmap.bitmap64 and not scan_bitmap64(view[start + 8:stop]):
        return None
    return _Frame(len_payload, magic, int.from_bytes(view[stop:stop + 4], "big"))


def scan_bitmap64(body: memoryview) -> bool:
    """Whether `body` is a 64-bit bitmap as the spec's `bitmap64` reads it: a bucket count in
    bounds, keys ascending in bounds, each bucket a well-formed roaring header with its
    containers inside, nothing after the last. Header walks only: no value is decoded."""
    if len(body) < 8:
        return False
    num_buckets = int.from_bytes(body[:8], "little")
    if num_buckets > MAX_NUM_BUCKETS:
        return False
    at, previous = 8, -1
    for _ in range(num_buckets):
        if at + 4 > len(body):
            return False
        key = int.from_bytes(body[at:at + 4], "little")
        if not previous < key <= MAX_BUCKET_KEY:
            return False
        try:
            at = roaring.containers(body, at + 4).end
        except FormatError:
            return False
        previous = key
    return at == len(body)


def _kind(raw: _Frame) -> str:
    return "64-bit" if raw.magic == Bitmap.bitmap64 else "32-bit"


def _decode_bin(view: memoryview, start: int, raw: _Frame, verify_checksum: bool,
                path: str, warnings: list[str]) -> DeletionVectorBin:
    payload_start = start + SIZE_FIELD
    payload_end = payload_start + raw.len_payload
    if verify_checksum:
        actual = _checksum()(view[payload_start:payload_end])
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
