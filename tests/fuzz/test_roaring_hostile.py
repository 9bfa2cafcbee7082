"""Hostile roaring payloads never crash the interpreter, and always end as a bitmap or a
FormatError.

`hostile_inputs()` builds portable-format bitmaps that lie in every way the format allows: run
containers with overlapping, unsorted, zero-length-count or overflowing runs (start + length
past 65535), more runs than bytes; unsorted and duplicate array values; bitmap containers whose
cardinality field lies; offsets pointing anywhere (into the header, past the end); duplicate or
descending keys; 65536 containers; every cookie variant (no-run cookie with huge counts,
run cookie with 1..65536 containers, near-miss cookies); and truncations of all of those.

Each decoder runs in a subprocess (roaring_runner.py), all inputs in one process, so a crash
inside CRoaring would show as a signal exit code and the last `#i` line names the input:
  * `paimon_schema.layouts.roaring_bitmap.deserialize` (our header check, then pyroaring's safe path) and the
    same bytes as the bucket of a 64-bit DV bin through `DeletionVectorFile.parse`: every input
    gives a bitmap or a FormatError;
  * `pyroaring.BitMap.deserialize` / `BitMap64.deserialize` alone: to show whether pyroaring's
    own safe path would have sufficed (it exits normally and raises only ValueError; see
    `test_pyroaring_alone_*`).
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from pyroaring import BitMap

RUNNER = Path(__file__).with_name("roaring_runner.py")
NO_RUNS, RUNS = 12346, 12347


def portable(containers: list[tuple[int, str, bytes, int]], *, runs_cookie: bool | None = None,
             offsets: list[int] | None = None, count: int | None = None) -> bytes:
    """A portable bitmap of `containers` = (key, kind 'array'|'bitmap'|'run', payload,
    cardinality field); `offsets` overrides the offset header, `count` the container count."""
    n = len(containers) if count is None else count
    has_runs = any(kind == "run" for _, kind, _, _ in containers) if runs_cookie is None else runs_cookie
    out = bytearray()
    if has_runs:
        out += struct.pack("<HH", RUNS, (n - 1) & 0xFFFF)
        flags = bytearray((n + 7) // 8)
        for i, (_, kind, _, _) in enumerate(containers[:n]):
            if kind == "run":
                flags[i >> 3] |= 1 << (i & 7)
        out += flags
    else:
        out += struct.pack("<II", NO_RUNS, n & 0xFFFFFFFF)
    for key, _, _, card in containers:
        out += struct.pack("<HH", key & 0xFFFF, (card - 1) & 0xFFFF)
    header_end = len(out) + (4 * len(containers) if (not has_runs or n >= 4) else 0)
    if not has_runs or n >= 4:
        if offsets is None:
            offsets, pos = [], header_end
            for _, _, payload, _ in containers:
                offsets.append(pos)
                pos += len(payload)
        for o in offsets:
            out += struct.pack("<I", o & 0xFFFFFFFF)
    for _, _, payload, _ in containers:
        out += payload
    return bytes(out)


def array(values: list[int]) -> bytes:
    return b"".join(struct.pack("<H", v & 0xFFFF) for v in values)


def runs(pairs: list[tuple[int, int]], count: int | None = None) -> bytes:
    """(start, length - 1) pairs, the count field `count` (default: the number of pairs)."""
    return struct.pack("<H", (len(pairs) if count is None else count) & 0xFFFF) + b"".join(
        struct.pack("<HH", s & 0xFFFF, l & 0xFFFF) for s, l in pairs)


def bitmap_words(bits: set[int]) -> bytes:
    words = [0] * 1024
    for b in bits:
        words[b >> 6] |= 1 << (b & 63)
    return b"".join(struct.pack("<Q", w) for w in words)


@cache
def hostile_inputs() -> tuple[bytes, ...]:
    rng = random.Random("paimon-schema roaring hostile")
    cases: list[bytes] = []
    add = cases.append
    # Valid shapes first (the control group), then every kind of lie.
    add(BitMap().serialize())
    add(BitMap([1, 2, 3, 65535, 65536, 1 << 31]).serialize())
    valid_runs = BitMap(range(100, 70000))
    valid_runs.run_optimize()
    add(valid_runs.serialize())
    add(BitMap(range(0, 20000, 3)).serialize())
    # Run containers.
    for pairs in ([(10, 5), (12, 5)], [(100, 1), (50, 1)], [(65535, 1)], [(65000, 1000)],
                  [(0, 65535)], [(0, 65535), (0, 65535)], [(5, 0), (5, 0)], [(1, 0), (0, 0)],
                  [(65535, 65535)], [(30000, 40000)]):
        card = max(1, min(65536, sum(l + 1 for _, l in pairs)))
        add(portable([(0, "run", runs(pairs), card)]))
        add(portable([(0, "run", runs(pairs), card)] * 1 + [(1, "array", array([1]), 1)]))
    add(portable([(0, "run", runs([], count=0), 1)]))                     # zero runs
    add(portable([(0, "run", runs([(1, 1)], count=0xFFFF), 2)]))          # count past the end
    add(portable([(0, "run", runs([(1, 1)] * 3, count=2), 4)]))           # trailing run bytes
    add(portable([(k, "run", runs([(0, 65535)]), 65536) for k in range(5)]))  # with offsets
    # Array containers.
    for values in ([3, 2, 1], [1, 1, 2], [65535, 0], list(range(4096)), list(range(4096))[::-1],
                   [7] * 10, list(range(0, 8194, 2))[:4097]):
        add(portable([(0, "array", array(values), len(values))]))
        add(portable([(0, "array", array(values), max(1, len(values) - 1))]))   # card lies low
        add(portable([(0, "array", array(values), min(65536, len(values) + 1))]))  # lies high
    # Bitmap containers whose cardinality lies (a bitmap container has > 4096 values).
    for true_card, field in ((5000, 5001), (5000, 4097), (4097, 65536), (65536, 5000), (0, 4097),
                             (8, 4097)):
        bits = set(rng.sample(range(65536), true_card))
        add(portable([(0, "bitmap", bitmap_words(bits), field)]))
    # Keys: duplicate, descending, the same key as array and bitmap.
    add(portable([(5, "array", array([1]), 1), (5, "array", array([2]), 1)]))
    add(portable([(9, "array", array([1]), 1), (3, "array", array([2]), 1)]))
    add(portable([(0xFFFF, "array", array([1]), 1), (0, "array", array([2]), 1)]))
    # Offsets pointing anywhere.
    base = [(k, "array", array([k, k + 1]), 2) for k in range(6)]
    honest = portable(base)
    for ofs in ([0] * 6, [4] * 6, [len(honest)] * 6, [2**32 - 1] * 6, [2**31] * 6,
                list(range(6))[::-1], [len(honest) - 2] * 6):
        add(portable(base, offsets=ofs))
        add(portable([(k, "run", runs([(k, 1)]), 2) for k in range(6)], offsets=ofs))
    # Cookies and counts.
    for cookie in (0, 1, NO_RUNS - 1, RUNS + 1, 0x3B30, 0x303A, 0xFFFFFFFF):
        add(struct.pack("<I", cookie) + honest[4:])
    for count in (0, 7, 65535, 65536, 65537, 2**31 - 1, 2**32 - 1):
        add(portable(base, count=count))
    for count in (1, 2, 3, 4, 255, 65536):           # run cookie: count in the high half
        add(portable([(0, "run", runs([(0, 3)]), 4)], count=count))
    # 65536 containers (the most a bitmap may have), one value each; and 65536 run containers.
    add(portable([(k, "array", array([k & 0xFFFF]), 1) for k in range(65536)]))
    add(portable([(k, "run", runs([(0, 9)]), 10) for k in range(65536)]))
    # Random containers: random kinds, values and lies.
    for _ in range(300):
        n = rng.randint(1, 8)
        keys = sorted(rng.sample(range(64), n)) if rng.random() < 0.8 else [rng.randrange(64) for _ in range(n)]
        containers = []
        for key in keys:
            kind = rng.choice(("array", "run", "bitmap"))
            if kind == "array":
                values = [rng.randrange(65536) for _ in range(rng.randint(1, 20))]
                if rng.random() < 0.5:
                    values = sorted(set(values))
                containers.append((key, kind, array(values), len(values) + rng.choice((0, 0, -1, 1))))
            elif kind == "run":
                pairs = [(rng.randrange(65536), rng.randrange(rng.choice((16, 65536))))
                         for _ in range(rng.randint(1, 5))]
                if rng.random() < 0.5:
                    pairs.sort()
                containers.append((key, kind, runs(pairs), rng.randint(1, 65536)))
            else:
                containers.append((key, kind, bitmap_words(set(rng.sample(range(65536), 10))),
                                   rng.randint(4097, 65536)))
        add(portable(containers))
    # Truncations and single-byte damage of a selection.
    for data in list(cases[:60]):
        for cut in sorted({0, 1, 3, 4, 7, 8, len(data) // 2, len(data) - 1}):
            if 0 <= cut < len(data):
                add(data[:cut])
    for data in list(cases[4:40]):
        for _ in range(5):
            out = bytearray(data)
            out[rng.randrange(len(out))] = rng.getrandbits(8)
            add(bytes(out))
    return tuple(cases)


@cache
def run_decoder(mode: str) -> dict:
    """All hostile inputs through one decoder in a fresh interpreter (once per session)."""
    text = "\n".join(d.hex() for d in hostile_inputs()) + "\n"
    proc = subprocess.run([sys.executable, str(RUNNER), mode], input=text, text=True,
                          capture_output=True, timeout=600)
    lines = proc.stdout.splitlines()
    progress = [line for line in lines if line.startswith("#")]
    last = int(progress[-1][1:]) if progress else None
    assert proc.returncode == 0, (
        f"{mode}: the interpreter exited with {proc.returncode} (negative: killed by that "
        f"signal) at input {last}: {hostile_inputs()[last].hex()[:2000] if last is not None else ''}"
        f"\n{proc.stderr[-3000:]}")
    result = json.loads(lines[-1])
    assert len(result["outcomes"]) == len(hostile_inputs())
    return result


@pytest.mark.parametrize("mode", ["ours", "ours64"])
def test_ours_gives_a_bitmap_or_format_error(mode: str) -> None:
    result = run_decoder(mode)
    kinds = Counter(o.split(":")[0] for o in result["outcomes"])
    assert set(kinds) <= {"bitmap", "FormatError"}, kinds
    assert not result["problems"], "\n".join(result["problems"][:20])
    assert kinds["FormatError"] > len(hostile_inputs()) // 2      # the lies are caught


@pytest.mark.parametrize("mode, ours", [("pyroaring", "ours"), ("pyroaring64", "ours64")])
def test_pyroaring_alone_never_crashes_and_agrees(mode: str, ours: str) -> None:
    """pyroaring's safe deserialize on its own: exits normally, raises only ValueError (and
    IndexError for an empty buffer), never returns a bitmap where ours refused one except
    when bytes follow the bitmap or the 64-bit framing differs, and returns the same bitmap
    wherever ours returns one."""
    alone = run_decoder(mode)["outcomes"]
    checked = run_decoder(ours)["outcomes"]
    kinds = Counter(o.split(":")[0] for o in alone)
    assert set(kinds) <= {"bitmap", "ValueError", "IndexError"}, kinds
    for i, (a, b) in enumerate(zip(alone, checked)):
        if b.startswith("bitmap"):
            assert a == b, (i, a, b, hostile_inputs()[i].hex()[:400])
