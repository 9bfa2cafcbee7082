"""Structure-aware mutations driven by Hypothesis: the generated Kaitai parser (debug mode)
says where every count, length, offset, version, key and roaring descriptor of a seed is
(fuzz/structure.py); Hypothesis sets one to three of them to 0, -1, huge (2^31-1, 2^32-1,
2^63-1 as the width allows), off by one, doubled, pointers into the header or past the end.

* DV files: every bin's CRC is recomputed after mutating (zlib.crc32 over magic + bitmap), so
  the damage reaches the roaring payload instead of stopping at the checksum; a second
  strategy flips and overwrites raw payload bytes and then fixes the CRCs.
* Containers: half of the examples mutate a blob structurally (with its own parser, the
  column's type from the seed) and rewrite the container with a consistent head, so the damage
  reaches the index readers through `ps.evaluate`; the other half mutate the head itself.

Outcomes as in test_mutations.py. Each bug found has an `@example` (the minimal inputs of
test_found_bugs.py; fixed in bb3b908, kept as regressions).
"""

from __future__ import annotations

import random

from hypothesis import example, given
from hypothesis import strategies as st

import fuzzlib
import structure
import test_found_bugs
from fuzzlib import Seed


def _seeds(layout: str) -> list[Seed]:
    return [s for s in fuzzlib.all_seeds() if s.layout == layout and structure.int_fields(s)]


@st.composite
def field_mutation(draw, seed: Seed) -> tuple[bytes, str]:
    """The seed with 1-3 integer fields set to interesting values."""
    data = seed.data
    fields = structure.int_fields(seed)
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        field = draw(st.sampled_from(fields))
        value = draw(st.sampled_from(structure.candidates(field, len(data)))
                     | st.integers(0, (1 << 8 * field.width) - 1))
        data = structure.set_field(data, field, value)
        steps.append(f"{field.path}@{field.start}={value}")
    return data, "; ".join(steps)


@st.composite
def cases(draw, layout: str) -> tuple[Seed, bytes, str]:
    """(seed, mutated bytes, what was done)."""
    seed = draw(st.sampled_from(_seeds(layout)))
    if layout == "container" and draw(st.booleans()):
        blobs = structure.container_blobs(seed)
        if blobs:
            entry, blob_seed = draw(st.sampled_from(blobs))
            blob, steps = draw(field_mutation(blob_seed))
            return seed, structure.replace_blob(seed, entry, blob), f"entry {entry} blob: {steps}"
    data, steps = draw(field_mutation(seed))
    if layout == "dv":
        data = structure.fix_dv_checksums(data)
        steps += "; CRCs recomputed"
    if layout == "btree" and draw(st.booleans()):
        data = structure.fix_btree_checksums(data)
        steps += "; CRCs recomputed"
    return seed, data, steps


@st.composite
def dv_payload_damage(draw) -> tuple[Seed, bytes, str]:
    """Raw flips and overwrites anywhere after the version byte, then valid CRCs again."""
    seed = draw(st.sampled_from([s for s in fuzzlib.seeds_of("dv") if len(s.data) > 9]))
    rng = random.Random(draw(st.integers(0, 2**32)))
    out = bytearray(seed.data)
    for _ in range(draw(st.integers(1, 4))):
        at = rng.randrange(9, len(out))
        out[at] = rng.choice((0, 0xFF, rng.getrandbits(8), out[at] ^ (1 << rng.randrange(8))))
    return seed, structure.fix_dv_checksums(bytes(out)), f"payload damage (rng {rng.random()})"


def check(case: tuple[Seed, bytes, str]) -> None:
    seed, data, steps = case
    failures = fuzzlib.run_target(seed, data, steps)
    assert not failures, fuzzlib.report(failures)


def _example(layout: str, hex_data: str, data_type: str | None = None, **extra) -> tuple:
    """An @example case from a failing input found by this suite (minimal, in test_found_bugs)."""
    return (Seed(f"example/{layout}", layout, bytes.fromhex(hex_data), data_type=data_type, **extra),
            bytes.fromhex(hex_data), "found by the fuzz suite")


# The inputs of tests/fuzz/test_found_bugs.py (which explains each bug; all fixed in bb3b908).
# Bug 1: a positioned read past the end reports the position it was asked to read at.
V2_ENTRY_PAST_END = _example("bitmap", test_found_bugs.BITMAP_V2_CUT.hex(), "TINYINT")
CONTAINER_BLOB_PAST_END = _example("container", test_found_bugs.CONTAINER_BLOB_PAST_END.hex(),
                                   row_type=(("c0", "INT"),))
# Bug 2: roaring.serialized_size reports a position past the end.
V1_ENTRY_PAST_END = _example("bitmap", test_found_bugs.BITMAP_V1_CUT.hex(), "TINYINT")
ROARING_RUN_PAST_END = _example("roaring", test_found_bugs.ROARING_RUN_AFTER_OVERSIZED.hex())
# Bug 3: pyroaring's validation failure comes out with an empty `path`.
ROARING_UNSORTED = _example("roaring", test_found_bugs.ROARING_UNSORTED_ARRAY.hex())
# Bug 4: evaluate reports a blob's error in the blob's coordinates.
CONTAINER_BAD_BLOB = _example("container", test_found_bugs.CONTAINER_BAD_BLOB_VERSION.hex(),
                              row_type=(("c0", "INT"),))
# Open (found by the soak after bb3b908): zero-length reads past the end; a bsi on STRING.
V2_EMPTY_BITMAP = _example("bitmap", test_found_bugs.BITMAP_V2_EMPTY_BITMAP_PAST_END.hex(), "INT")
V2_EMPTY_NULL_BITMAP = _example("bitmap", test_found_bugs.BITMAP_V2_EMPTY_NULL_BITMAP_PAST_END.hex(),
                                "INT")
CONTAINER_EMPTY_BLOB = _example("container", test_found_bugs.CONTAINER_EMPTY_BLOB_PAST_END.hex(),
                                row_type=(("c0", "INT"),))
CONTAINER_BSI_ON_STRING = _example("container", test_found_bugs.CONTAINER_BSI_ON_STRING.hex(),
                                   row_type=(("s", "STRING"),))


@given(cases("dv") | dv_payload_damage())
def test_dv(case) -> None:
    check(case)


@given(cases("container"))
@example(CONTAINER_BLOB_PAST_END)
@example(CONTAINER_BAD_BLOB)
@example(CONTAINER_EMPTY_BLOB)
@example(CONTAINER_BSI_ON_STRING)
def test_container(case) -> None:
    check(case)


@given(cases("bitmap"))
@example(V1_ENTRY_PAST_END)
@example(V2_ENTRY_PAST_END)
@example(V2_EMPTY_BITMAP)
@example(V2_EMPTY_NULL_BITMAP)
def test_bitmap(case) -> None:
    check(case)


@given(cases("bloom-filter"))
def test_bloom_filter(case) -> None:
    check(case)


@given(cases("bsi"))
def test_bsi(case) -> None:
    check(case)


@given(cases("range-bitmap"))
def test_range_bitmap(case) -> None:
    check(case)


@given(cases("roaring"))
@example(ROARING_RUN_PAST_END)
@example(ROARING_UNSORTED)
def test_roaring(case) -> None:
    check(case)


@given(cases("hash"))
def test_hash(case) -> None:
    check(case)

# Found by the soak (fixed with it): an entry whose key runs past the entries sent the bulk
# value-span scan to read past the block (an IndexError, not a FormatError).
BTREE_KEY_PAST_ENTRIES = _example("btree", (
    "00090800060c12181e242a0161090801070d13191f6b2bfe61620908db0b11171d23292f02c3a9090802080e141a2026"
    "2c000000000b0000001700000024000000040000000100aa34495304f09f9880090803090f151b21272d0f0000000000"
    "66076fb20100000000000000000000003a30000001000000000007001000000004000a00100016001c00220028002e00"
    "e6a93117ade1568f02c3a902004604f09f9880024b1400000000060000000200000001005545fcb39400000000000000"
    "04000000050000000000000098000000000000001b00000064000000000000002c0000000100000049544250"), "STRING")


@given(cases("btree"))
@example(BTREE_KEY_PAST_ENTRIES)
def test_btree(case) -> None:
    check(case)
