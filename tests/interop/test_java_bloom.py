"""Java writes bloom filters over randomized columns of every type its bloom index supports; for
every probe our reader answers exactly what Java's `BloomFilterFileIndex.Reader` answers.

Two JVM batches for the module: Java writes every blob, then Java answers every predicate.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from paimon_schema.layouts.bloom_filter import BloomFilterIndexReader
from paimon_schema.values.results import FileIndexReader, IndexResult

SEED = 20261123
CASES_PER_TYPE = 6
PROBES = 40

Value = object     # what Java's harness takes (timestamps: {"millis", "nanos"})


def _strings(rng: random.Random) -> str:
    alphabet = ["a", "b", "Z", "0", " ", "é", "ß", "名", "前", "\u0000", "\U0001F600", "\U00010348"]
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 2, 5, 30])))


def _float(rng: random.Random) -> float:
    return rng.choice([0.0, -0.0, math.nan, math.inf, -math.inf, 1e-45, -1.5, 1e30,
                       rng.uniform(-1e6, 1e6), float(rng.randint(-3, 3))])


def _int(bits: int) -> Callable[[random.Random], int]:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return lambda rng: rng.choice([low, high, 0, -1, 1, rng.randint(low, high), rng.randint(-50, 50)])


def _timestamp(rng: random.Random) -> dict[str, int]:
    millis = rng.choice([0, -1, 1745542802000, rng.randint(-10**14, 10**14), rng.randint(-5, 5)])
    return {"millis": millis, "nanos": rng.choice([0, 999_999, 123_001, rng.randint(0, 999_999)])}


#: Paimon type -> a random non-null value, as the Java harness takes it.
GENERATORS: dict[str, Callable[[random.Random], Value]] = {
    "TINYINT": _int(8), "SMALLINT": _int(16), "INT": _int(32), "BIGINT": _int(64),
    "FLOAT": _float, "DOUBLE": _float,
    "STRING": _strings, "CHAR(5)": _strings, "VARCHAR(20)": _strings,
    "DATE": _int(32),
    "TIME": lambda rng: rng.choice([0, 86_399_999, rng.randint(0, 86_399_999)]),
    "TIMESTAMP(3)": _timestamp, "TIMESTAMP(6)": _timestamp, "TIMESTAMP(9)": _timestamp,
    "TIMESTAMP_LTZ(3)": _timestamp, "TIMESTAMP_LTZ(6)": _timestamp,
    "BYTES": lambda rng: rng.randbytes(rng.choice([0, 1, 8, 33])),
}


def ours(data_type: str, value: Value) -> object:
    """The same value for our reader: timestamps become their index key (millis or micros)."""
    if isinstance(value, dict):
        precision = int(data_type.rstrip(")").rpartition("(")[2])
        return value["millis"] if precision <= 3 else value["millis"] * 1000 + value["nanos"] // 1000
    return value


@dataclass
class Case:
    data_type: str
    values: list[Value]
    options: dict[str, object]
    predicates: list[tuple]


def _case(rng: random.Random, data_type: str, index: int) -> Case:
    generate = GENERATORS[data_type]
    rows = [0, 1, 5, 60, 300, 40][index % 6]
    distinct = [generate(rng) for _ in range(rng.randint(1, 12))]
    values = [None if rng.random() < 0.15 else rng.choice(distinct) for _ in range(rows)]
    options = {"items": rng.choice([0, 1, 10, 100, 1000]), "fpp": rng.choice([0.5, 0.1, 0.01, 0.001])}
    if index == 5:
        options = {}      # defaults: 4792536 bits
    others = [generate(rng) for _ in range(PROBES)]
    members = [v for v in values if v is not None]
    predicates = [("equal", v) for v in distinct + others + [None]]
    predicates += [("in", rng.sample(members + others, min(3, len(members + others))))
                   for _ in range(8)]
    predicates += [("in", [others[0], None]), ("not_equal", distinct[0]), ("not_in", others[:2]),
                   ("is_null",), ("is_not_null",), ("less_than", distinct[0]),
                   ("less_or_equal", distinct[0]), ("greater_than", distinct[0]),
                   ("greater_or_equal", distinct[0])]
    return Case(data_type, values, options, predicates)


def _cases() -> list[Case]:
    rng = random.Random(SEED)
    return [_case(rng, t, i) for t in GENERATORS for i in range(CASES_PER_TYPE)]


def _answer(reader: FileIndexReader, data_type: str, predicate: tuple) -> IndexResult:
    kind, *args = predicate
    method = getattr(reader, {"in": "in_"}.get(kind, kind))
    if kind in ("in", "not_in"):
        return method([ours(data_type, v) for v in args[0]])
    return method(*(ours(data_type, a) for a in args))


#: Hand-made headers: k of 128..255 is read by Java as negative (nothing tested).
CRAFTED = [bytes.fromhex(h) for h in ("00000080 ff00", "000000c8 0000", "000000ff 0000000000",
                                      "00000001 00", "00000002 ffffffff")]


@pytest.fixture(scope="module")
def java_answers(java_reference):
    cases = _cases()
    with java_reference.batch() as batch:
        written = [batch.build_index("bloom-filter", c.data_type, c.values, **c.options) for c in cases]
    blobs = [w.result() for w in written]
    crafted = [("INT", blob, [("equal", v) for v in range(-20, 20)] + [("in", [1, 2])])
               for blob in CRAFTED]
    with java_reference.batch() as batch:
        queried = [batch.query_index("bloom-filter", c.data_type, blob, c.predicates)
                   for c, blob in zip(cases, blobs)]
        crafted_answers = [batch.query_index("bloom-filter", t, blob, predicates)
                           for t, blob, predicates in crafted]
        empty_bitset = batch.query_index("bloom-filter", "INT", bytes.fromhex("00000003"), [("equal", 1)])
    return ([(c, blob, q.result()) for c, blob, q in zip(cases, blobs, queried)]
            + [(Case(t, [], {}, predicates), blob, a.result())
               for (t, blob, predicates), a in zip(crafted, crafted_answers)],
            empty_bitset)


def test_every_type_is_covered(java_answers) -> None:
    assert {c.data_type for c, _, _ in java_answers[0]} >= set(GENERATORS)


def test_answers_match_java(java_answers) -> None:
    mismatches = []
    skips = 0
    for case, blob, expected in java_answers[0]:
        reader = BloomFilterIndexReader.open(blob, case.data_type)
        for predicate, java in zip(case.predicates, expected, strict=True):
            assert java.kind in ("remain", "skip")
            got = _answer(reader, case.data_type, predicate)
            skips += not got.remain
            if (got.remain, got.rows) != (java.kind == "remain", None):
                mismatches.append((case.data_type, case.options, predicate, java.kind, got))
    assert mismatches == []
    assert skips > 500       # the filters do prove absences, not just REMAIN everywhere


def test_members_always_remain(java_answers) -> None:
    for case, blob, _ in java_answers[0]:
        reader = BloomFilterIndexReader.open(blob, case.data_type)
        assert all(reader.might_contain(ours(case.data_type, v)) for v in case.values)


def test_empty_bitset_is_javas_division_by_zero(java_answers) -> None:
    """Java accepts a 4-byte blob, then throws on the first probe; we refuse it up front."""
    assert java_answers[1].error.startswith("java.lang.ArithmeticException")
