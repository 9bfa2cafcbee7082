"""The roaring spec and the header check in paimon_schema.layouts.roaring_bitmap read what pyroaring writes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from paimon_schema.generated.roaring_bitmap import RoaringBitmap
from pyroaring import BitMap

from paimon_schema import FormatError
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.runtime import kaitai as parsing

Kind = RoaringBitmap.Container.ContainerKind


@st.composite
def bitmaps(draw) -> BitMap:
    """Bitmaps mixing array, bitmap and run containers, a few or many (past the 16 containers
    the small-bitmap fast path takes)."""
    bitmap = BitMap()
    for key in draw(st.lists(st.integers(0, 40), max_size=20, unique=True)):
        base = key << 16
        shape = draw(st.sampled_from(["sparse", "dense", "runs"]))
        if shape == "sparse":
            bitmap.update(base + v for v in draw(st.sets(st.integers(0, 65535), min_size=1, max_size=50)))
        elif shape == "dense":
            bitmap.update(range(base, base + 65536, draw(st.integers(2, 12))))
        else:
            start = draw(st.integers(0, 60000))
            bitmap.update(range(base + start, base + start + draw(st.integers(1, 5000))))
    if draw(st.booleans()):
        bitmap.run_optimize()
    return bitmap


@given(bitmaps())
def test_generated_parser_reads_pyroaring_serialization(bitmap: BitMap) -> None:
    data = bitmap.serialize()
    parsed = parsing.parse(RoaringBitmap, data)
    assert parsed._io.pos() == len(data)
    assert parsed.num_descriptors == len({v >> 16 for v in bitmap})
    values = set()
    for descriptor, container in zip(parsed.descriptors, parsed.containers):
        base = descriptor.key << 16
        if container.kind == Kind.array:
            lows = [int.from_bytes(container.array_values[i:i + 2], "little")
                    for i in range(0, len(container.array_values), 2)]
        elif container.kind == Kind.bitmap:
            bits = np.unpackbits(np.frombuffer(container.bitmap_words, np.uint8), bitorder="little")
            lows = np.flatnonzero(bits).tolist()
        else:
            lows = []
            for i in range(container.num_runs):
                start = int.from_bytes(container.runs[4 * i:4 * i + 2], "little")
                length = int.from_bytes(container.runs[4 * i + 2:4 * i + 4], "little")
                lows.extend(range(start, start + length + 1))
        assert len(lows) == descriptor.cardinality
        values.update(base + v for v in lows)
    assert values == set(bitmap)


@given(bitmaps(), st.data())
def test_header_check_equals_generated_parser(bitmap: BitMap, data) -> None:
    """The fast header check delimits exactly what the generated parser reads, and both
    refuse the same truncations."""
    raw = bitmap.serialize()
    cut = data.draw(st.integers(0, len(raw)))
    blob = raw[:cut]
    try:
        parsing.parse(RoaringBitmap, blob)
        spec_ok = True
    except FormatError:
        spec_ok = False
    try:
        size = roaring.serialized_size(blob)
        fast_ok = True
    except FormatError:
        fast_ok = False
    assert fast_ok == spec_ok == (cut == len(raw))
    if fast_ok:
        assert size == len(raw)
        decoded, used = roaring.deserialize(raw + b"trailing")
        assert decoded == bitmap and used == len(raw)


@pytest.mark.parametrize("blob, path", [
    (b"", "cookie"),
    (b"\x3a\x30\x00\x00", "num_containers_field"),
    (b"\x3a\x30\x00\x00\x01\x00\x01\x00", "num_containers_field"),
    (b"\x3c\x30\x00\x00\x00\x00\x00\x00", "cookie"),
    (bytes.fromhex("3a300000 02000000 0500 0000 0100 0000".replace(" ", "")), "descriptors[1].key"),
])
def test_bad_headers_are_located(blob: bytes, path: str) -> None:
    with pytest.raises(FormatError) as info:
        roaring.deserialize(blob)
    assert info.value.path == path


def test_invalid_content_is_refused_by_croaring() -> None:
    # Array container {5, 3}: not sorted. The header is fine; CRoaring's validation refuses it.
    blob = bytes.fromhex("3a300000 01000000 0000 0100 10000000 0500 0300".replace(" ", ""))
    with pytest.raises(FormatError, match="invalid roaring bitmap"):
        roaring.deserialize(blob)


@given(bitmaps(), st.data())
def test_one_walk_locates_every_container_whatever_the_stored_offsets_say(bitmap: BitMap, data) -> None:
    """`containers` sizes run containers from the stored offsets when those agree with the
    sizes (every real bitmap) and walks in order otherwise: lying offsets change nothing."""
    raw = bytearray(bitmap.serialize())
    walked = roaring.containers(bytes(raw))
    values = np.array(bitmap.to_array(), dtype=np.int64)
    for key, card, run, start in zip(*walked[:4]):
        chunk = values[values >> 16 == key] & 0xFFFF
        assert len(chunk) == card
        if not run and card <= 4096:                       # an array container: its values
            assert np.frombuffer(raw, "<u2", card, int(start)).tolist() == chunk.tolist()
    assert walked.end == len(raw)
    cookie = int.from_bytes(raw[:4], "little")
    count = (cookie >> 16) + 1 if cookie & 0xFFFF == 12347 else int.from_bytes(raw[4:8], "little")
    has_offsets = cookie & 0xFFFF != 12347 or count >= 4
    if has_offsets and count:
        ofs_at = 4 + (count + 7) // 8 + 4 * count if cookie & 0xFFFF == 12347 else 8 + 4 * count
        i = data.draw(st.integers(0, count - 1))
        raw[ofs_at + 4 * i:ofs_at + 4 * i + 4] = data.draw(st.integers(0, 2**32 - 1)).to_bytes(4, "little")
        lied = roaring.containers(bytes(raw))
        assert lied.end == walked.end
        assert all(np.array_equal(a, b) for a, b in zip(lied[:4], walked[:4]))


@given(bitmaps(), st.data())
def test_small_bitmaps_are_sized_as_the_walk_sizes_them(bitmap: BitMap, data) -> None:
    """`_small_size` (a few containers, struct reads) gives the walk's size, or declines
    (None) whatever the walk refuses: on serializations and damaged copies of them."""
    raw = bytearray(bitmap.serialize())
    for _ in range(data.draw(st.integers(0, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    blob = bytes(raw[:data.draw(st.integers(0, len(raw)))] if data.draw(st.booleans()) else raw)
    small = roaring._small_size(blob, 0)
    try:
        walked = roaring.containers(blob).end
    except FormatError:
        assert small is None
        return
    assert small == walked or (small is None and len(roaring.containers(blob).keys) > roaring.SMALL_CONTAINERS)
