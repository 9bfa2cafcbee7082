"""Our 64-bit deletion-vector bins, read by an independent reader: pyiceberg's.

A Paimon 64-bit bin (formats/deletion_vectors.ksy `bitmap64`) is framed exactly as Iceberg's "deletion-vector-v1" Puffin blob:
the length of magic + vector (4 bytes, big-endian), the magic D1 D33964, the vector as a
portable 64-bit roaring bitmap, and the CRC-32 of magic + vector (big-endian). So each bin we
write, cut out at the `(offset, length)` we record for it, is put as a blob into a minimal
Puffin file (the Puffin spec: magic "PFA1", the blobs, then the footer: magic, the footer
payload JSON with each blob's metadata, its size as a 4-byte little-endian int, 4 flag bytes,
magic) and read back with pyiceberg's `PuffinFile` and `deletion_vectors_from_puffin_file`,
positions past 2^32 included: Java's dense gap buckets (empty 32-bit bitmaps for the high keys
in between) are what Iceberg's reader expects too.

pyiceberg checks neither the magic nor the CRC (it strips the framing by the length prefix),
so both are checked here with zlib, and the blob's length field against the blob.

Positions are taken from the 32-bit bitmaps pyiceberg's deserializer returns per high key
(`DeletionVector._bitmaps`), not from `DeletionVector.to_vector()`: in pyiceberg 0.12.0 that
one builds one untyped pyarrow chunk per high key and fails on any empty one ("Invalid null
value"; "cannot construct ChunkedArray from empty vector" for an empty DV), i.e. on every gap
bucket Java (and Iceberg's Java writer, whose format this is) writes. That is a pyiceberg bug
in the conversion, not in the reading.
"""

from __future__ import annotations

import json
import random
import zlib
from functools import cache

import pytest

import paimon_schema as ps
from oracles import oracle_unavailable

try:
    from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
    from pyiceberg.table.puffin import MAGIC_BYTES, PuffinFile
except ImportError as exc:          # pragma: no cover - depends on the environment
    PuffinFile = None
    IMPORT_ERROR = str(exc)

SEED = 20261125
HIGH = 1 << 32
MAGIC = bytes.fromhex("d1d33964")


@cache
def _mappings() -> list[dict[str, list[int]]]:
    rng = random.Random(SEED)
    cases = [
        {"empty.parquet": []},
        {"small.parquet": [1, 2, 3, 100]},
        {"one-past-2^32.parquet": [2 * HIGH + 5]},                      # buckets 0 and 1 empty
        {"edges.parquet": [0, HIGH - 1, HIGH, HIGH + 1, 5 * HIGH + 65535, 5 * HIGH + 65536]},
        {"runs.parquet": list(range(1000, 9000)) + list(range(3 * HIGH, 3 * HIGH + 70_000))},
        {"dense.parquet": rng.sample(range(300_000), 100_000)},        # several containers
        {"bitmap-containers.parquet": list(range(0, 140_000, 2)) + [7 * HIGH + 3]},
    ]
    for i in range(8):
        positions = set()
        for _ in range(rng.randint(1, 4)):
            high = rng.choice([0, 1, 2, 3, 9, 31])
            positions.update(high * HIGH + rng.randrange(HIGH) for _ in range(rng.choice([1, 50, 5000])))
        cases.append({f"random-{i}-{j}.parquet": sorted(rng.sample(sorted(positions), max(1, len(positions) // (j + 1))))
                      for j in range(rng.randint(1, 3))})
    return cases


def _puffin(blobs: list[tuple[str, bytes, int]]) -> bytes:
    """A Puffin file with one deletion-vector-v1 blob per (data file, bin, cardinality)."""
    out = bytearray(MAGIC_BYTES)
    metadata = []
    for name, blob, cardinality in blobs:
        metadata.append({"type": "deletion-vector-v1", "fields": [], "snapshot-id": -1,
                         "sequence-number": -1, "offset": len(out), "length": len(blob),
                         "properties": {"referenced-data-file": name, "cardinality": str(cardinality)}})
        out += blob
    payload = json.dumps({"blobs": metadata, "properties": {"created-by": "paimon-schema tests"}}).encode()
    out += MAGIC_BYTES + payload + len(payload).to_bytes(4, "little") + bytes(4) + MAGIC_BYTES
    return bytes(out)


@pytest.fixture(scope="module")
def iceberg():
    if PuffinFile is None:
        oracle_unavailable(f"pyiceberg not installed: {IMPORT_ERROR}")


@pytest.mark.parametrize("case", range(len(_mappings())))
def test_pyiceberg_reads_our_64_bit_bins(iceberg, case: int) -> None:
    mapping = _mappings()[case]
    data, ranges = ps.write_deletion_vectors(mapping, bitmap64=True)
    blobs = []
    for name, positions in mapping.items():
        offset, length = ranges[name]
        blob = data[offset:offset + length]
        size = int.from_bytes(blob[:4], "big")
        assert size == length - 8 and blob[4:8] == MAGIC
        assert int.from_bytes(blob[-4:], "big") == zlib.crc32(blob[4:-4])
        blobs.append((name, blob, len(set(positions))))
    vectors = deletion_vectors_from_puffin_file(PuffinFile(_puffin(blobs)))
    read = {dv.referenced_data_file: _positions(dv) for dv in vectors}
    assert read == {name: sorted(set(positions)) for name, positions in mapping.items()}


def _positions(vector) -> list[int]:
    """The positions pyiceberg read: 32-bit bitmap i holds the low halves of high key i."""
    return [(high << 32) | low for high, bitmap in enumerate(vector._bitmaps) for low in bitmap]


def test_gap_buckets_are_written_and_read(iceberg) -> None:
    """A single position in high key 3: Java writes keys 0..3 (three empty bitmaps), and
    Iceberg's reader takes them as the gaps they are."""
    data, ranges = ps.write_deletion_vectors({"f": [3 * HIGH + 9]}, bitmap64=True)
    offset, length = ranges["f"]
    blob = data[offset:offset + length]
    assert int.from_bytes(blob[8:16], "little") == 4          # bitmap count, gaps included
    vectors = deletion_vectors_from_puffin_file(PuffinFile(_puffin([("f", blob, 1)])))
    assert [_positions(dv) for dv in vectors] == [[3 * HIGH + 9]]
    assert [len(b) for b in vectors[0]._bitmaps] == [0, 0, 0, 1]


def test_pyiceberg_to_vector_fails_on_gap_buckets(iceberg) -> None:
    """The pyiceberg bug the docstring describes: when it is fixed, read through `to_vector`."""
    data, ranges = ps.write_deletion_vectors({"f": [3 * HIGH + 9], "g": [5]}, bitmap64=True)
    blobs = [(n, data[o:o + n_], 1) for n, (o, n_) in ranges.items()]
    vectors = {dv.referenced_data_file: dv for dv in deletion_vectors_from_puffin_file(PuffinFile(_puffin(blobs)))}
    assert vectors["g"].to_vector().to_pylist() == [5]
    with pytest.raises(Exception, match="null"):
        vectors["f"].to_vector()


def test_cases_cross_2_to_the_32(iceberg) -> None:
    columns = [positions for m in _mappings() for positions in m.values()]
    assert any(p >= 2 * HIGH for positions in columns for p in positions)
    assert any(len(positions) > 65536 for positions in columns)
    assert any(not positions for positions in columns)
