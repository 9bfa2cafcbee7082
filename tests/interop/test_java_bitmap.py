"""Java writes bitmap indexes over randomized columns; our reader answers every predicate as
Java's reader does, row for row.

The jar (Paimon 1.0-SNAPSHOT) writes V1 only and has no BOOLEAN bitmap, so those are covered by
the fixtures in test_bitmap.py. Two JVM runs for the module: Java writes every blob, then Java
answers every predicate over them. Where the jar's answer is not the newest Java's (`BitmapFileIndex.Reader` on master),
the spec wins and the difference is asserted here; none has been seen so far.
"""

from __future__ import annotations

import random
import struct

import pytest
from pyroaring import BitMap

from paimon_schema.layouts import paimon_common as keys
from paimon_schema.layouts.bitmap_index import BitmapIndexReader
from paimon_schema.values.results import REMAIN, SKIP, IndexResult

SEED = 20261123
RANGES = ("less_than", "less_or_equal", "greater_than", "greater_or_equal")
METHODS = {"equal": "equal", "not_equal": "not_equal", "in": "in_", "not_in": "not_in",
           "is_null": "is_null", "is_not_null": "is_not_null", **{r: r for r in RANGES}}


def _f32(bits: int) -> float:
    return struct.unpack(">f", bits.to_bytes(4, "big"))[0]


def _f64(bits: int) -> float:
    return struct.unpack(">d", bits.to_bytes(8, "big"))[0]


def _integers(bits: int):
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return lambda rng: [(v, v) for v in [low, high, 0, -1, 1, low + 1, high - 1]
                        + [rng.randint(low, high) for _ in range(20)]]


def _floats(rng: random.Random) -> list:
    """FLOAT values (Java value, our value): a signalling NaN reaches Java as raw bits and is
    canonicalized by writeFloat, so it is the same key as Python's NaN."""
    special = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.5, -1.5,
               _f32(0x7F7FFFFF), _f32(0x00000001), _f32(0x80000001)]
    values = [(v, v) for v in special + [_f32(rng.getrandbits(32) & 0x7F7FFFFF) for _ in range(10)]]
    return values + [({"bits": "7f800001"}, float("nan")), ({"bits": "ffc00000"}, float("nan"))]


def _doubles(rng: random.Random) -> list:
    special = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.5, -1.5, 0.1,
               _f64(0x7FEFFFFFFFFFFFFF), _f64(1), _f64(0x8000000000000001)]
    values = [(v, v) for v in special + [rng.uniform(-1e300, 1e300) for _ in range(10)]]
    return values + [({"bits": "7ff0000000000001"}, float("nan"))]


TEXTS = ["", "a", "A", "ab", "é", "派蒙", "Paimon-派蒙", "😀", "a\u0000b", "\uffff", "\U0010ffff",
         "z", "zz", "\U0001F600\U0001F601", "x" * 300]


def _strings(rng: random.Random) -> list:
    def text() -> str:
        return "".join(chr(rng.choice([rng.randint(0x20, 0x7E), rng.randint(0xA0, 0xD7FF),
                                       rng.randint(0xE000, 0xFFFF), rng.randint(0x10000, 0x10FFFF)]))
                       for _ in range(rng.randint(0, 6)))
    return [(t, t) for t in TEXTS + [text() for _ in range(15)]]


def _timestamps(rng: random.Random) -> list:
    """TIMESTAMP(9): Java gets (millis, nanos of the milli); the key is the micros (formats/paimon_common.ksy `key_kind`), so
    timestamps in one microsecond are one key."""
    values = []
    for millis in [0, -1, 1745542802000, -1745] + [rng.randint(-2**50, 2**50) for _ in range(8)]:
        for nanos in {0, 999999, rng.randint(0, 999999), rng.randint(0, 999) * 1000 + 1}:
            values.append(({"millis": millis, "nanos": nanos}, millis * 1000 + nanos // 1000))
    return values


def _listed(fixed: list[int], low: int, high: int):
    """Integers for a temporal type: edge values, then random ones in [low, high]."""
    return lambda rng: [(v, v) for v in fixed + [rng.randint(low, high) for _ in range(15)]]


POOLS = {
    "TINYINT": _integers(8), "SMALLINT": _integers(16), "INT": _integers(32),
    "BIGINT": _integers(64), "FLOAT": _floats, "DOUBLE": _doubles,
    "STRING": _strings, "VARCHAR(10)": _strings, "CHAR(4)": _strings,
    "DATE": _listed([0, -1, -719162, 2932896], -10**6, 10**6),
    "TIME": _listed([0, 86399999], 0, 86399999),
    "TIMESTAMP(3)": _integers(64),
    "TIMESTAMP(6)": _listed([0, -1, 2**62, -2**62], -2**62, 2**62),   # Java's toMicros overflows beyond
    "TIMESTAMP(9)": _timestamps,
    "TIMESTAMP_LTZ(3)": _integers(64),
    "TIMESTAMP_LTZ(6)": _listed([1, -2], -2**62, 2**62),
}


def _column(rng: random.Random, pool: list, shape: str) -> list:
    """(Java value, our value) per row; None for a null row."""
    if shape == "empty":
        return []
    if shape == "all-null":
        return [None] * rng.randint(1, 5)
    if shape == "singletons":
        return rng.sample(pool, min(len(pool), 8)) + [None]
    if shape == "big":                    # > 65536 rows: several roaring containers per key
        few = rng.sample(pool, 4)
        return [None if rng.random() < 0.05 else rng.choice(few) for _ in range(70_000)]
    chosen = rng.sample(pool, rng.randint(1, min(len(pool), 12)))
    null_rate = rng.choice([0.0, 0.1, 0.4])
    return [None if rng.random() < null_rate else rng.choice(chosen) for _ in range(rng.randint(1, 300))]


def _cases() -> list[tuple[str, list, list]]:
    """(data type, column, the type's whole value pool) for every case."""
    rng = random.Random(SEED)
    cases = []
    for data_type, pool_of in POOLS.items():
        pool = pool_of(rng)
        for shape in ["mixed", "mixed", "singletons"]:
            cases.append((data_type, _column(rng, pool, shape), pool))
    for data_type, shape in [("INT", "empty"), ("STRING", "all-null"), ("DOUBLE", "all-null"),
                             ("INT", "big"), ("STRING", "big")]:
        pool = POOLS[data_type](rng)
        cases.append((data_type, _column(rng, pool, shape), pool))
    return cases


def _predicates(rng: random.Random, column: list, pool: list) -> list[tuple]:
    """(kind, Java argument, our argument) for every predicate kind; values absent from the
    column and NULL literals included."""
    present = [v for v in dict.fromkeys(map(repr, (c for c in column if c is not None)))]
    by_repr = {repr(c): c for c in column if c is not None}
    values = [by_repr[r] for r in present]
    absent = [p for p in pool if repr(p) not in by_repr]
    probes = rng.sample(values, min(len(values), 10)) + rng.sample(absent, min(len(absent), 4))
    preds: list[tuple] = [("is_null", None, None), ("is_not_null", None, None),
                          ("equal", None, None), ("not_equal", None, None)]
    for java, ours in probes:
        preds += [("equal", java, ours), ("not_equal", java, ours)]
    for size in (0, 1, 3, 6):
        chosen = rng.sample(probes, min(size, len(probes)))
        if rng.random() < 0.3:
            chosen.append((None, None))
        for kind in ("in", "not_in"):
            preds.append((kind, [j for j, _ in chosen], [o for _, o in chosen]))
    if probes:
        java, ours = probes[0]
        preds += [(r, java, ours) for r in RANGES]
    return preds


def _java_result(result) -> IndexResult:
    if result.kind == "bitmap":
        return IndexResult.of(BitMap(result.rows))
    return REMAIN if result.kind == "remain" else SKIP


@pytest.fixture(scope="module")
def java_answers(java_reference):
    """Per case: (data type, column, predicates, Java's blob, Java's answers)."""
    cases = _cases()
    rng = random.Random(SEED + 1)
    with java_reference.batch() as batch:
        blobs = [batch.build_index("bitmap", t, [None if c is None else c[0] for c in column], version=1)
                 for t, column, _ in cases]
    predicates = [_predicates(rng, column, pool) for _, column, pool in cases]
    with java_reference.batch() as batch:
        answers = [batch.query_index("bitmap", t, blob.result(),
                                     [(kind,) if kind in ("is_null", "is_not_null") else (kind, java)
                                      for kind, java, _ in preds])
                   for (t, _, _), blob, preds in zip(cases, blobs, predicates)]
    return [(t, column, preds, blob.result(), [_java_result(r) for r in answer.result()])
            for (t, column, _), preds, blob, answer in zip(cases, predicates, blobs, answers)]


def test_cases_cover_what_the_brief_asks(java_answers):
    types = {t for t, *_ in java_answers}
    assert types == set(POOLS)
    assert any(len(column) > 65536 for _, column, *_ in java_answers)
    assert any(len(column) == 0 for _, column, *_ in java_answers)
    kinds = {kind for _, _, preds, *_ in java_answers for kind, *_ in preds}
    assert kinds == set(METHODS)


def test_content_is_the_column(java_answers):
    """Our decoded content of Java's blob is the column Java was given."""
    for data_type, column, _, blob, _ in java_answers:
        codec = keys.bitmap_keys(data_type)
        reader = BitmapIndexReader.open(blob, data_type)
        assert reader.version == 1 and reader.num_rows == len(column)
        expected: dict = {}
        for row, cell in enumerate(column):
            if cell is not None:
                expected.setdefault(codec.encode(cell[1]), BitMap()).add(row)
        got = {codec.encode(value): rows for value, rows in reader.items()}
        assert got == expected, data_type
        assert reader.null_rows == BitMap(r for r, c in enumerate(column) if c is None)


def test_answers_equal_javas(java_answers):
    checked = 0
    for data_type, _, preds, blob, answers in java_answers:
        reader = BitmapIndexReader.open(blob, data_type)
        for (kind, _, ours), java in zip(preds, answers, strict=True):
            method = getattr(reader, METHODS[kind])
            result = method() if kind in ("is_null", "is_not_null") else method(ours)
            if kind in RANGES:
                assert result == REMAIN
            assert result == java, (data_type, kind, ours)
            checked += 1
    assert checked > 1000
