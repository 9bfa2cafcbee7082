"""Java iteration orders (``paimon_schema.layouts.bitmap_index.javaorder``): check values, the shared fixtures, the
vectorized paths against the step-by-step emulation, and everything against the JVM.

The JVM tests run ONE batch (module fixture) holding thousands of ``java.util.HashMap`` and
fastutil ``IntOpenHashSet`` sequences plus Paimon's own bitmap writer, generated from a fixed
seed: many keys, repeats, and keys engineered to share a bucket (multiples of 64/1024/65536,
longs and strings with equal hash codes, float bit patterns) so that tree bins form, take new
keys, split on resize and untreeify.
"""

from __future__ import annotations

import functools
import math
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paimon_schema.layouts.bitmap_index import javaorder
from paimon_schema.layouts.bitmap_index.javaorder import (
    KINDS,
    JavaHashMap,
    bitmap_key_order,
    double_key,
    float_key,
    hash_function,
    int_open_hash_set_order,
    java_hash_code,
    java_hash_codes,
    java_map_order,
    key_compare,
    string_key_order,
)

NAN = float("nan")

# Two java.lang.Strings with one hashCode (-1313765491, checked with a JVM) whose Java order
# (UTF-16 units: U+FFFF > U+D800) is the reverse of Python's code-point order; found by a
# birthday search. Both are 7 units long,
# so a common prefix or suffix keeps the hashes equal.
SURROGATE_TWINS = ("\uffffbHOWNN", "\U00010000bOKIx")

# BinaryStrings (UTF-8) with one hashCode each pair (924795817, 984982288), found the same way;
# their first differing bytes compare differently signed and unsigned.
BINARY_TWINS = (("éyeosjé", "zqarmlzy"), ("éhnitk", "wétié"))


# ----------------------------------------------------------------------------------------------
# hashCode and compareTo
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("a", 1485273170), ("b", 1905031361), ("ccc", 1430389412), ("é", 2119106806),
])
def test_binary_string_check_values(text: str, expected: int) -> None:
    """Spec A.3: MurmurHashUtils.hashBytes(seed 42) with the per-byte tail."""
    assert java_hash_code(text.encode(), "binary_string") == expected


@pytest.mark.parametrize("value, kind, expected", [
    (-123456789, "int", -123456789),
    (2**31 - 1, "int", 2**31 - 1),
    (-1, "long", 0),
    (1 << 32, "long", 1),
    (-9223372036854775685, "long", -2147483525),
    (1745542802000123, "long", -626951308),
    (True, "boolean", 1231),
    (False, "boolean", 1237),
    (float_key(1.0), "float", 0x3F800000),
    (float_key(-0.0), "float", -(1 << 31)),
    (float_key(NAN), "float", 0x7FC00000),
    (double_key(1.0), "double", 1072693248),
    (double_key(NAN), "double", 2146959360),
    ("Aa", "string", 2112),
    ("BB", "string", 2112),
    ("\U0001F600", "string", 1772899),  # over UTF-16 units, not the code point
    ("Paimon-派蒙", "string", 612357108),
])
def test_hash_codes(value: Any, kind: str, expected: int) -> None:
    assert java_hash_code(value, kind) == expected


def test_float_keys_are_canonical() -> None:
    assert float_key(NAN) == float_key(-NAN) == 0x7FC00000
    assert double_key(-NAN) == 0x7FF8000000000000
    assert float_key(-0.0) == 0x80000000 != float_key(0.0)
    assert float_key(0.1) == 0x3DCCCCCD  # rounded to float32 first, like Java's (float) cast


def test_hash_twins() -> None:
    a, b = SURROGATE_TWINS
    assert java_hash_code(a, "string") == java_hash_code(b, "string") == -1313765491
    assert a < b and key_compare("string")(a, b) > 0
    for pair in BINARY_TWINS:
        x, y = (t.encode() for t in pair)
        assert java_hash_code(x, "binary_string") == java_hash_code(y, "binary_string")
        assert key_compare("binary_string")(x, y) > 0  # unsigned: 0xc3 > ASCII


@pytest.mark.parametrize("kind, smaller, larger", [
    ("int", -5, 3),
    ("long", -(2**63), 2**63 - 1),
    ("boolean", False, True),
    ("float", float_key(-1.5), float_key(-0.0)),
    ("float", float_key(-0.0), float_key(0.0)),
    ("float", float_key(float("inf")), float_key(NAN)),
    ("double", double_key(float("-inf")), double_key(-1e300)),
    ("double", double_key(-0.0), double_key(0.0)),
    ("double", double_key(1e300), double_key(NAN)),
    ("string", "\U00010000", "\uffff"),
    ("string", "ab", "abc"),
    ("binary_string", b"a", b"\xff"),
    ("binary_string", b"ab", b"abc"),
])
def test_key_compare(kind: str, smaller: Any, larger: Any) -> None:
    compare = key_compare(kind)
    assert compare(smaller, larger) < 0 < compare(larger, smaller)
    assert compare(smaller, smaller) == 0


_TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from("\uffff\ue000\U0001F600"),
                max_size=12)


@given(
    st.lists(st.integers(-2**31, 2**31 - 1), max_size=50),
    st.lists(st.integers(-2**63, 2**63 - 1), max_size=50),
    st.lists(st.integers(0, 2**32 - 1), max_size=50),
    st.lists(st.integers(0, 2**64 - 1), max_size=50),
    st.lists(_TEXT, max_size=50),
    st.lists(st.binary(max_size=40), max_size=50),
)
def test_vectorized_hash_codes_equal_scalar(ints, longs, floats, doubles, texts, blobs) -> None:
    for kind, keys in [("int", ints), ("long", longs), ("float", floats), ("double", doubles),
                       ("string", texts), ("binary_string", blobs), ("boolean", [True, False])]:
        scalar = hash_function(kind)
        assert java_hash_codes(keys, kind).tolist() == [scalar(k) for k in keys], kind


# ----------------------------------------------------------------------------------------------
# Orders the shared fixtures show (paimon-rust's and paimon-cpp's bitmap files)
# ----------------------------------------------------------------------------------------------


def test_fixture_orders_from_readme() -> None:
    """paimon-rust/paimon-cpp V1 entry orders, from the rows their writers wrote (nulls dropped)."""
    assert bitmap_key_order([-123456789, 42, -123456789], "int") == [42, -123456789]
    assert bitmap_key_order([True, False, True], "boolean") == [False, True]
    floats = [-1.5, 0.0, -0.0, NAN, -1.5, 0.0, -0.0, NAN]
    assert bitmap_key_order([float_key(x) for x in floats], "float") == [
        float_key(x) for x in (NAN, -0.0, 0.0, -1.5)]
    assert bitmap_key_order([double_key(x) for x in floats], "double") == [
        double_key(x) for x in (-0.0, 0.0, NAN, -1.5)]
    micros = [1745542802000123, 1745542902000123, 1745542602000123, -1744877, -1764877,
              1745542802000123, -1724877]
    assert bitmap_key_order(micros, "long") == [
        1745542802000123, -1724877, -1764877, -1744877, 1745542602000123, 1745542902000123]


def _v1_entries(data: bytes, key_size: Callable[[bytes, int], int]) -> list[tuple[bytes, int]]:
    """(key bytes, offset) of a bitmap V1 header, in file order (formats/bitmap_index.ksy `index_v1`)."""
    assert data[0] == 1
    _, count = struct.unpack_from(">ii", data, 1)
    pos = 10 + (4 if data[9] else 0)
    entries = []
    for _ in range(count):
        size = key_size(data, pos)
        key = data[pos:pos + size]
        (offset,) = struct.unpack_from(">i", data, pos + size)
        entries.append((key, offset))
        pos += size + 4
    return entries


def _string_key_size(data: bytes, pos: int) -> int:
    return 4 + struct.unpack_from(">i", data, pos)[0]


def test_high_cardinality_fixture_order(shared_fixtures: Path) -> None:
    """paimon-cpp's high-cardinality files: 10000 STRING keys over 100000 rows; the V1 entries are in HashMap order."""
    from pyroaring import BitMap

    data = (shared_fixtures / "paimon-cpp/file_index/bitmap-index-v1").read_bytes()
    entries = _v1_entries(data, _string_key_size)
    body = 10 + (4 if data[9] else 0) + sum(len(k) + 4 for k, _ in entries)
    ends = sorted(o for _, o in entries if o >= 0)[1:] + [len(data) - body]
    ends_by_start = dict(zip(sorted(o for _, o in entries if o >= 0), ends))
    rows: dict[int, bytes] = {}
    for key, offset in entries:
        text = key[4:]
        if offset < 0:
            rows[-1 - offset] = text
        else:
            bitmap = BitMap.deserialize(data[body + offset:body + ends_by_start[offset]])
            rows.update(dict.fromkeys(bitmap, text))
    assert len(rows) == 100_000 and len(entries) == 10_000
    keys_in_row_order = [rows[r] for r in range(len(rows))]
    assert bitmap_key_order(keys_in_row_order, "binary_string") == [k[4:] for k, _ in entries]


def test_container_type_order() -> None:
    """`FileIndexFormat.Writer`: the four index type names always iterate bloom-filter, bitmap, bsi, range."""
    names = ["range-bitmap", "bsi", "bitmap", "bloom-filter"]
    expected = ["bloom-filter", "bitmap", "bsi", "range-bitmap"]
    assert string_key_order(names, "put") == expected
    assert string_key_order(names, "compute_if_absent") == expected


def test_lazy_resize_needs_the_repeats() -> None:
    """13 keys fit a 16-slot table until computeIfAbsent is called once more (for any key)."""
    keys = [i * 16 + (i % 3) for i in range(13)]
    table: JavaHashMap[int, None] = JavaHashMap(hash_function("int"))
    for key in keys:
        table.compute_if_absent(key, lambda _k: None)
    assert table.capacity() == 16 and table.keys() == bitmap_key_order(keys, "int")
    table.compute_if_absent(keys[5], lambda _k: None)
    assert table.capacity() == 32 and table.keys() == bitmap_key_order(keys + [keys[5]], "int")
    assert bitmap_key_order(keys, "int") != bitmap_key_order(keys + [keys[5]], "int")


# ----------------------------------------------------------------------------------------------
# Sequences: shared by the pure-Python and the JVM tests
# ----------------------------------------------------------------------------------------------


def _length(rng: random.Random) -> int:
    if rng.random() < 0.06:
        return rng.randrange(600, 2500)
    return rng.choice([0, 1, 2, 5, 8, 9, 12, 13, 14, 24, 25, 26, 40, 49, 60, 100, 200, 400])


def _ints(rng: random.Random, n: int) -> list[int]:
    style = rng.randrange(6)
    if style == 0:
        return [rng.randrange(-60, 60) for _ in range(n)]
    if style == 1:
        step = rng.choice([16, 64, 128, 1024, 4096, 65536, 1 << 20])
        return [step * rng.randrange(-400, 400) for _ in range(n)]
    if style == 2:
        return [rng.randrange(-2**31, 2**31) for _ in range(n)]
    if style == 3:  # one crowded bucket lineage among random keys
        return [1024 * rng.randrange(300) if rng.random() < 0.5 else rng.randrange(10**6)
                for _ in range(n)]
    if style == 4:  # distinct keys, then maybe a repeat (computeIfAbsent's lazy resize)
        keys = [rng.randrange(-10**6, 10**6) for _ in range(n)]
        return keys + rng.sample(keys, min(n, rng.randrange(3)))
    return [(rng.randrange(64) << rng.choice([6, 10, 16])) ^ rng.randrange(4) for _ in range(n)]


def _equal_hash_bits(rng: random.Random, n: int) -> list[int]:
    """64-bit patterns ``a << 32 | (a ^ h)``: their Long/Double hashCode is ``h``. The few
    ``h`` share their low 10 bits, so unequal hashes meet in the same tree bins too."""
    low = rng.randrange(1024)
    hashes = [low + 1024 * rng.randrange(64) for _ in range(rng.randrange(1, 4))]
    out = []
    for _ in range(n):
        high = rng.randrange(2**32)
        out.append((high << 32) | (high ^ rng.choice(hashes)))
    return out


def _longs(rng: random.Random, n: int) -> list[int]:
    style = rng.randrange(4)
    if style == 0:
        return [rng.randrange(-2**63, 2**63) for _ in range(n)]
    if style == 1:  # equal hashCodes: compareTo decides inside tree bins
        return [v - 2**64 if v >= 2**63 else v for v in _equal_hash_bits(rng, n)]
    if style == 2:
        return [1024 * rng.randrange(-3000, 3000) for _ in range(n)]
    return [rng.randrange(-10**6, 10**6) * 1000 + 123 for _ in range(n)]


def _float_bits(rng: random.Random, n: int, key: Callable[[float], int]) -> list[int]:
    if key is double_key and rng.random() < 0.3:  # equal hashCodes, both signs; no NaN payloads
        return [b for b in _equal_hash_bits(rng, n) if (b >> 52) & 0x7FF != 0x7FF]
    specials = [0.0, -0.0, NAN, 1.5, -1.5, float("inf"), float("-inf")]
    out = []
    for _ in range(n):
        style = rng.randrange(4)
        if style == 0:
            out.append(key(rng.choice(specials)))
        elif style == 1:
            out.append(key(float(rng.randrange(-500, 500))))
        elif style == 2:
            out.append(key(rng.uniform(-1e6, 1e6)))
        else:  # few significant bits: bit patterns that share low bits
            out.append(key(float(rng.randrange(1, 200) * 2.0 ** rng.randrange(-3, 30))))
    return out


_ALPHABET = "abcXYZ09_é派蒙\U0001F600\uffff\ue000"


def _strings(rng: random.Random, n: int) -> list[str]:
    style = rng.randrange(5)
    if style == 0:
        return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(8))) for _ in range(n)]
    if style == 1:  # "Aa"/"BB" blocks: 2**k strings with one hashCode
        k = rng.randrange(2, 8)
        return ["".join(rng.choice(("Aa", "BB")) for _ in range(k)) for _ in range(n)]
    if style == 2:
        k = rng.randrange(2, 6)
        return [rng.choice(["", "x", "col_"]) + "".join(rng.choice(("Aa", "BB", "C#"))
                                                      for _ in range(k)) for _ in range(n)]
    if style == 3:  # equal hashes where UTF-16 order differs from code-point order
        return [rng.choice(("", "Aa", "BB")) + rng.choice(SURROGATE_TWINS)
                + "".join(rng.choice(("Aa", "BB")) for _ in range(rng.randrange(4)))
                for _ in range(n)]
    return [f"data-{rng.randrange(10**4)}-{rng.randrange(3)}.orc" for _ in range(n)]


def _keys(rng: random.Random, java_type: str) -> list[Any]:
    """A key sequence for a Java key type (short/byte are Python kind "int")."""
    n = _length(rng)
    if java_type == "int":
        return _ints(rng, n)
    if java_type == "short":
        return [rng.choice([rng.randrange(-2**15, 2**15), 64 * rng.randrange(-500, 500)])
                for _ in range(n * 4)]
    if java_type == "byte":
        return [rng.randrange(-128, 128) for _ in range(n)]
    if java_type == "long":
        return _longs(rng, n)
    if java_type == "boolean":
        return [rng.random() < 0.5 for _ in range(min(n, 5))]
    if java_type == "float":
        return _float_bits(rng, n, float_key)
    if java_type == "double":
        return _float_bits(rng, n, double_key)
    if java_type == "string":
        return _strings(rng, n)
    if rng.random() < 0.2:
        return [rng.choice(_binary_crowd()) for _ in range(n)]
    return [s.encode() for s in _strings(rng, n)]


@functools.cache
def _binary_crowd() -> list[bytes]:
    """Both BINARY_TWINS pairs plus 40 strings in the bucket of each pair at capacity 64."""
    crowd = []
    candidates = [f"mate{i}".encode() for i in range(20000)]
    spreads = java_hash_codes(candidates, "binary_string").view("uint32")
    spreads = (spreads ^ (spreads >> 16)) & 63
    for pair in BINARY_TWINS:
        twins = [t.encode() for t in pair]
        h = java_hash_code(twins[0], "binary_string") & 0xFFFFFFFF
        bucket = (h ^ (h >> 16)) & 63
        crowd += twins + [c for c, b in zip(candidates, spreads.tolist()) if b == bucket][:40]
    return crowd


JAVA_TYPES = ("int", "short", "byte", "long", "boolean", "float", "double", "string",
              "binary_string")
PY_KIND = {"short": "int", "byte": "int"}


def _replay(kind: str, keys: list[Any], methods: list[str]) -> JavaHashMap[Any, None]:
    table: JavaHashMap[Any, None] = JavaHashMap(hash_function(kind), key_compare(kind))
    for key, method in zip(keys, methods):
        if method == "put":
            table.put(key, None)
        else:
            table.compute_if_absent(key, lambda _k: None)
    return table


def _has_tree(table: JavaHashMap[Any, Any]) -> bool:
    return any(bin_.__class__ is not list for bin_ in table._table.values())


def _hashmap_cases(seed: int, count: int) -> list[tuple[str, list[Any], list[str] | str]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        java_type = rng.choice(JAVA_TYPES)
        keys = _keys(rng, java_type)
        mode = rng.choice(["put", "compute_if_absent", "compute_if_absent", "mixed"])
        methods: list[str] | str = mode if mode != "mixed" else [
            rng.choice(["put", "compute_if_absent"]) for _ in keys]
        cases.append((java_type, keys, methods))
    # A few big ones: many resizes with tree bins forming and splitting at large capacities.
    big = random.Random(seed + 1)
    cases.append(("int", [1024 * big.randrange(5000) if big.random() < 0.3
                          else big.randrange(-2**31, 2**31) for _ in range(20000)],
                  "compute_if_absent"))
    cases.append(("long", _longs(big, 8000), "put"))
    cases.append(("string", [s + str(i % 5000) for i, s in enumerate(_strings(big, 10000))],
                  "compute_if_absent"))
    return cases


def _as_methods(methods: list[str] | str, keys: list[Any]) -> list[str]:
    return [methods] * len(keys) if isinstance(methods, str) else methods


def test_bulk_order_equals_step_by_step_emulation() -> None:
    """java_map_order (sort + exact replay of crowded lineages) == JavaHashMap call by call."""
    trees = 0
    for java_type, keys, methods in _hashmap_cases(seed=7, count=500):
        kind = PY_KIND.get(java_type, java_type)
        for method in (("put", "compute_if_absent") if isinstance(methods, str) else ()):
            table = _replay(kind, keys, [method] * len(keys))
            trees += _has_tree(table)
            assert java_map_order(keys, kind, method) == table.keys(), (java_type, method, keys)
    assert trees > 60  # the corpus does build tree bins


@given(st.lists(st.integers(-3, 3).map(lambda i: i * 4096) | st.integers(-2**31, 2**31 - 1),
                max_size=300),
       st.sampled_from(["put", "compute_if_absent"]))
def test_bulk_order_property(keys: list[int], method: str) -> None:
    table = _replay("int", keys, [method] * len(keys))
    assert java_map_order(keys, "int", method) == table.keys()
    assert len(table) == len(set(keys)) and all(k in table for k in keys)


def test_compiled_tree_bin_replay_equals_python() -> None:
    """`java_map_replay` (kernels.c) orders crowded buckets as the Python `JavaHashMap` does:
    doubles of short mantissas (Double.hashCode xors the halves of their bits: tree bins that
    split and untreeify), with -0.0, NaN and the infinities among them, and every kind."""
    if javaorder._kernels is None:
        pytest.skip("the C extension paimon_schema.runtime._kernels is not built")
    doubles = [double_key(v) for v in [k * 0.5 - 1.25 for k in range(20_000)]
               + [-0.0, NAN, math.inf, -math.inf, 5e-324, -5e-324]]
    rng = random.Random(3)
    cases = [("double", doubles), ("double", rng.sample(doubles, 3000)),
             ("float", [float_key(k * 0.25 - 3.0) for k in range(5000)] + [float_key(-0.0)]),
             ("long", [k << 32 for k in range(-3000, 3000)]), ("int", [k << 16 for k in range(-3000, 3000)]),
             *[(PY_KIND.get(t, t), _keys(rng, t)) for t in JAVA_TYPES for _ in range(20)]]
    trees = 0
    for kind, keys in cases:
        for method in ("put", "compute_if_absent"):
            compiled = java_map_order(keys, kind, method)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(javaorder, "_kernels", None)
                assert java_map_order(keys, kind, method) == compiled, (kind, method)
            table = _replay(kind, keys, [method] * len(keys))
            trees += _has_tree(table)
            assert compiled == table.keys(), (kind, method)
    assert trees > 10


def test_map_api() -> None:
    table: JavaHashMap[str, int] = JavaHashMap(hash_function("string"), key_compare("string"))
    assert table.compute_if_absent("b", len) == 1
    assert table.compute_if_absent("b", lambda _k: 99) == 1
    table.put("a", 5)
    table.put("a", 6)
    assert table["a"] == 6 and "a" in table and "z" not in table and len(table) == 2
    assert list(table) == table.keys() == ["a", "b"] and table.items() == [("a", 6), ("b", 1)]
    assert table.capacity() == 16


def test_equal_compare_for_different_keys_is_refused() -> None:
    """Java would fall back to identity hash codes, which nothing can reproduce."""
    table: JavaHashMap[int, None] = JavaHashMap(lambda _k: 7, lambda _a, _b: 0)
    with pytest.raises(ValueError, match="identity"):
        for key in range(70):
            table.put(key, None)


def test_int_open_hash_set_basics() -> None:
    assert int_open_hash_set_order([]) == []
    assert int_open_hash_set_order([5, 0, 3, 5, 0])[0] == 0
    assert sorted(int_open_hash_set_order(range(-500, 500), expected=0)) == list(range(-500, 500))


def test_unknown_kind() -> None:
    with pytest.raises(ValueError):
        java_hash_code(1, "decimal")
    with pytest.raises(ValueError):
        java_map_order([1], "int", "merge")
    assert set(KINDS) == set(PY_KIND.get(t, t) for t in JAVA_TYPES)


# ----------------------------------------------------------------------------------------------
# Against the JVM: one batch for the whole module
# ----------------------------------------------------------------------------------------------


def _int_set_cases(seed: int, count: int) -> list[tuple[list[int], int]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        n = rng.choice([0, 1, 2, 3, 7, 12, 13, 24, 25, 100, 500, 3000])
        style = rng.randrange(4)
        if style == 0:
            values = [rng.randrange(-2**31, 2**31) for _ in range(n)]
        elif style == 1:
            values = [rng.randrange(-40, 40) for _ in range(n)]
        elif style == 2:
            values = [rng.randrange(2**31) << rng.randrange(20) & 0x7FFFFFFF for _ in range(n)]
        else:
            values = [0] * rng.randrange(3) + [rng.randrange(-2**31, 2**31) for _ in range(n)]
            rng.shuffle(values)
        cases.append((values, rng.choice([0, 1, 2, 3, 5, 16, 16, 16, 100, 1000, 12345])))
    return cases


# Paimon's bitmap writer (this jar writes V1): SQL type, java key type, key size in the header.
# (This jar's V1 writer cannot serialize BOOLEAN keys: it casts them to Byte.)
_BITMAP_TYPES = {
    "INT": ("int", lambda data, pos: 4),
    "SMALLINT": ("short", lambda data, pos: 2),
    "BIGINT": ("long", lambda data, pos: 8),
    "FLOAT": ("float", lambda data, pos: 4),
    "DOUBLE": ("double", lambda data, pos: 8),
    "STRING": ("binary_string", _string_key_size),
}


def _decode_v1_key(sql_type: str, raw: bytes) -> Any:
    if sql_type == "STRING":
        return raw[4:]
    if sql_type in ("FLOAT", "DOUBLE"):
        return int.from_bytes(raw, "big")
    return int.from_bytes(raw, "big", signed=True)


def _bitmap_cases(seed: int) -> list[tuple[str, list[Any]]]:
    rng = random.Random(seed)
    cases = []
    for sql_type, (java_type, _) in _BITMAP_TYPES.items():
        for _ in range(4):
            keys = _keys(rng, java_type)
            cases.append((sql_type, [None if rng.random() < 0.05 else k for k in keys]))
    return cases


def _row_value(sql_type: str, key: Any) -> Any:
    """The writer's row value for a key in javaorder's representation."""
    if key is None or sql_type in ("INT", "SMALLINT", "BIGINT"):
        return key
    if sql_type in ("FLOAT", "DOUBLE"):
        return {"bits": f"{key:x}"}
    return key.decode()


@pytest.fixture(scope="module")
def jvm(java_reference) -> dict[str, list[tuple[Any, Any]]]:
    """Every JVM answer of this module: (case, Java's order) per kind of request."""
    maps = _hashmap_cases(seed=2024, count=3000)
    sets = _int_set_cases(seed=99, count=400)
    bitmaps = _bitmap_cases(seed=5)
    with java_reference.batch() as batch:
        map_orders = [batch.hashmap_order(t, keys, methods) for t, keys, methods in maps]
        set_orders = [batch.int_open_hash_set_order(v, e) for v, e in sets]
        blobs = [batch.build_index("bitmap", t, [_row_value(t, k) for k in keys])
                 for t, keys in bitmaps]
    return {
        "maps": [(case, p.result()) for case, p in zip(maps, map_orders)],
        "sets": [(case, p.result()) for case, p in zip(sets, set_orders)],
        "bitmaps": [(case, p.result()) for case, p in zip(bitmaps, blobs)],
    }


def test_hashmap_order_matches_jvm(jvm) -> None:
    trees = 0
    for (java_type, keys, methods), java_order in jvm["maps"]:
        kind = PY_KIND.get(java_type, java_type)
        table = _replay(kind, keys, _as_methods(methods, keys))
        trees += _has_tree(table)
        assert table.keys() == java_order, (java_type, methods, keys)
        if isinstance(methods, str):
            assert java_map_order(keys, kind, methods) == java_order, (java_type, methods, keys)
    assert len(jvm["maps"]) > 3000 and trees > 300


def test_int_open_hash_set_order_matches_jvm(jvm) -> None:
    for (values, expected), java_order in jvm["sets"]:
        assert int_open_hash_set_order(values, expected) == java_order, (expected, values)


def test_paimon_bitmap_writer_order_matches_jvm(jvm) -> None:
    """Paimon's own BitmapFileIndex writer lists the V1 entries in id2bitmap order."""
    for (sql_type, keys), blob in jvm["bitmaps"]:
        entries = _v1_entries(blob, _BITMAP_TYPES[sql_type][1])
        kind = PY_KIND.get(_BITMAP_TYPES[sql_type][0], _BITMAP_TYPES[sql_type][0])
        expected = bitmap_key_order([k for k in keys if k is not None], kind)
        assert [_decode_v1_key(sql_type, raw) for raw, _ in entries] == expected, (sql_type, keys)
