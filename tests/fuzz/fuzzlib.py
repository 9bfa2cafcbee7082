"""The hostile-bytes fuzz suite's machinery: seeds, byte mutators and the outcome oracle.

Every public parse entry point gets untrusted bytes through `run_target(seed, data)`, which
runs each entry point of the seed's layout on `data`, exercises whatever parsed (lazy readers
fail late: every predicate kind with a few probe values, `items()`, `null_rows`, `values()`,
`top_n`), and returns a list of `Failure`s: an exception other than `ps.FormatError`, or a
`FormatError` whose `offset` is not an int in [0, len(data)] (None only where documented) or
whose `path` is empty.

Shared by tests/fuzz/test_*.py and benchmarks/fuzz_soak.py; nothing here depends on pytest.
"""

from __future__ import annotations

import atexit
import contextlib
import decimal
import io
import math
import os
import random
import re
import shutil
import tempfile
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.cli import main as cli_main
from paimon_schema.layouts import roaring_bitmap as roaring
from paimon_schema.layouts.bitmap_global_index import BitmapGlobalIndexReader, write_bitmap_global_index
from paimon_schema.layouts.btree_global_index import BTreeGlobalIndexReader, write_btree_global_index
from paimon_schema.layouts.registry import INDEX_TYPES

#: The ../shared/fixtures folder beside the checkout (same as tests/conftest.py).
SHARED_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
#: Seeds up to this size get every truncation, 200 flips and 50 overwrites in CI.
MAX_SEED = 64 * 1024

LAYOUTS = ("dv", "hash", "container", "bitmap", "bloom-filter", "bsi", "range-bitmap", "roaring", "btree",
           "bitmap-global-index")
#: The Java-written btree global index files of the sample table (INT keys), listed in the fixtures README under the complete tables.
BTREE_FIXTURES = ("paimon-cpp/tables/parquet/pk_btree_e2e.db/pk_btree_e2e/index/index-1e092fe2-2c76-4682-bfec-50ebecd3957a-0",
                  "paimon-cpp/tables/parquet/pk_btree_e2e.db/pk_btree_e2e/index/index-360cfb9c-6646-44cb-aec5-d156a379b4d2-0",
                  "paimon-cpp/tables/parquet/pk_btree_e2e.db/pk_btree_e2e/index/index-806143e3-9271-4934-9ca5-636a815c46a0-0")


# ----------------------------------------------------------------------------------- seeds


@dataclass(frozen=True)
class Seed:
    """A valid file (or blob) of one layout: the starting point of mutations."""

    name: str
    layout: str
    data: bytes = field(repr=False)
    data_type: str | None = None                          # index blobs
    row_type: tuple[tuple[str, str], ...] = ()            # containers: (column, type)
    ranges: tuple[tuple[int, int], ...] = ()              # DV files: Java's (offset, length)

    @property
    def id(self) -> str:
        return f"{self.layout}:{self.name}"


TYPES_BITMAP_RUST = {
    "java_bigint": "BIGINT", "java_boolean": "BOOLEAN", "java_date": "DATE",
    "java_double": "DOUBLE", "java_float": "FLOAT", "java_int_empty": "INT",
    "java_int_multiblock": "INT", "java_int_singleton_null": "INT", "java_int": "INT",
    "java_smallint": "SMALLINT", "java_string": "STRING", "java_time": "TIME(3)",
    "java_timestamp_micros": "TIMESTAMP(6)", "java_timestamp_millis": "TIMESTAMP(3)",
    "java_tinyint": "TINYINT",
}
TYPES_BITMAP_CPP = {
    "bigint": "BIGINT", "boolean": "BOOLEAN", "date": "DATE", "int_all_null": "INT", "int": "INT",
    "smallint": "SMALLINT", "string_a_b": "STRING", "string_apple_java": "STRING",
    "timestamp9": "TIMESTAMP(9)", "tinyint": "TINYINT",
}
FIXTURE_BLOBS = {  # (index type, path relative to ../shared/fixtures): data type
    ("bloom-filter", "paimon-rust/bloom-filter/java_bigint_items10_fpp0.1.bin"): "BIGINT",
    ("bloom-filter", "paimon-cpp/bloom-filter/double.bin"): "DOUBLE",
    ("bloom-filter", "paimon-cpp/bloom-filter/float.bin"): "FLOAT",
    ("bloom-filter", "paimon-cpp/bloom-filter/integer.bin"): "INT",
    ("bloom-filter", "paimon-cpp/bloom-filter/string.bin"): "STRING",
    ("bloom-filter", "paimon-cpp/bloom-filter/timestamp9.bin"): "TIMESTAMP(9)",
    ("bsi", "paimon-rust/bsi/java_int.bin"): "INT",
    ("bsi", "paimon-cpp/bsi/int_mix.bin"): "INT",
    ("bsi", "paimon-cpp/bsi/int_positive_only.bin"): "INT",
    ("bsi", "paimon-cpp/bsi/int_negative_only.bin"): "INT",
    ("bsi", "paimon-cpp/bsi/null_1_null_2_minus1.bin"): "INT",
    ("bsi", "paimon-cpp/bsi/timestamp9.bin"): "TIMESTAMP(9)",
    ("range-bitmap", "paimon-rust/range-bitmap/java_int_v1.bin"): "INT",
    ("range-bitmap", "paimon-rust/range-bitmap/java_string_v1.bin"): "STRING",
    ("range-bitmap", "paimon-rust/range-bitmap/java_float_v1.bin"): "FLOAT",
    ("range-bitmap", "paimon-cpp/file_index/rangebitmap/rangebitmap.index"): "INT",
}
#: Column types of the containers' data files (the fixture tables' schemas).
_BITMAP_TABLE = {"f0": "STRING", "f1": "INT", "f2": "INT", "f3": "DOUBLE"}
_BSI_TABLE = {"f0": "STRING", "f1": "INT", "f2": "INT", "f3": "DOUBLE", "f4": "TIMESTAMP(9)"}
_RANGE_TABLE = {"f0": "INT", "f1": "BIGINT", "f2": "FLOAT", "f3": "DOUBLE", "f4": "DATE"}


def _container_row_type(path: str) -> dict[str, str]:
    if "empty_entry" in path:
        return {"c1": "INT"}
    if "rangebitmap" in path:
        return _RANGE_TABLE
    if "bsi" in path or "bloomfilter" in path:
        return _BSI_TABLE
    return _BITMAP_TABLE


def fixture_seeds(root: Path = SHARED_FIXTURES) -> list[Seed]:
    """Every shared fixture of at most 64 KB, per layout, and the index blobs inside the
    containers (distinct bytes only)."""
    import fixture_catalog as catalog  # tests/ is on sys.path (pytest rootdir, or the soak driver)

    seeds: list[Seed] = []
    if not root.is_dir():
        return seeds
    for rel, bins in catalog.DELETION_VECTORS.items():
        seeds.append(Seed(rel, "dv", (root / rel).read_bytes(),
                          ranges=tuple((o, n) for o, n, _, _ in bins)))
    payload = (root / "paimon-cpp/dv/java_bitmap_dv_payload_1_2_4.bin").read_bytes()
    seeds.append(Seed("paimon-cpp/dv/java_bitmap_dv_payload_1_2_4.bin(framed)", "dv",
                      frame_dv_bin(payload), ranges=((1, len(payload)),)))
    seeds.append(Seed("paimon-cpp/dv/java_bitmap_dv_payload_1_2_4.bin[4:]", "roaring", payload[4:]))
    for rel in catalog.CONTAINERS:
        data = (root / rel).read_bytes()
        if len(data) > MAX_SEED:
            continue
        row_type = _container_row_type(rel)
        seeds.append(Seed(rel, "container", data, row_type=tuple(row_type.items())))
        for entry in ps.FileIndexFile.parse(data).entries:
            if entry.blob is not None and entry.index_type in INDEX_TYPES:
                seeds.append(Seed(f"{rel}#{entry.column}/{entry.index_type}", entry.index_type,
                                  entry.blob, data_type=row_type[entry.column]))
    for stems, folder in ((TYPES_BITMAP_RUST, "paimon-rust/bitmap"), (TYPES_BITMAP_CPP, "paimon-cpp/bitmap")):
        for path in sorted((root / folder).glob("*.bin")):
            stem = path.stem.rsplit("_v", 1)[0]
            seeds.append(Seed(f"{folder}/{path.name}", "bitmap", path.read_bytes(),
                              data_type=stems[stem]))
    for (index_type, rel), data_type in FIXTURE_BLOBS.items():
        seeds.append(Seed(rel, index_type, (root / rel).read_bytes(), data_type=data_type))
    for rel in BTREE_FIXTURES:
        seeds.append(Seed(rel, "btree", (root / rel).read_bytes(), data_type="INT"))
    return _distinct(seeds)


def frame_dv_bin(payload: bytes) -> bytes:
    """A one-bin DV file around `payload` (magic + bitmap), as Java frames it."""
    return (b"\x01" + len(payload).to_bytes(4, "big") + payload
            + zlib.crc32(payload).to_bytes(4, "big"))


def writer_seeds() -> list[Seed]:
    """Files our writers produce, chosen to reach what the fixtures lack: every roaring
    container kind, 64-bit bins with gap buckets, mixed bins, multi-block bitmap V2,
    multi-chunk range-bitmaps, the 64-slice all-null range-bitmap, DECIMAL/BOOLEAN/TINYINT
    columns, map-key and empty container entries, hash files."""
    seeds: list[Seed] = []

    def dv(name: str, vectors: dict, bitmap64: bool = False) -> None:
        data, ranges = ps.write_deletion_vectors(vectors, bitmap64=bitmap64)
        seeds.append(Seed(name, "dv", data, ranges=tuple(ranges.values())))

    dv("writer/empty", {})
    dv("writer/array+run", {"a": [1, 2, 3, 100, 70000], "b": range(1000, 3000), "c": []})
    dv("writer/bitmap-container", {"a": range(0, 10000, 2)})
    dv("writer/64-gaps", {"a": [1, 2**32 + 5, 3 * 2**32 + 7], "b": [0]}, bitmap64=True)
    dv("writer/64-empty", {"a": []}, bitmap64=True)
    d32, r32 = ps.write_deletion_vectors({"a": [5, 6, 7]})
    d64, r64 = ps.write_deletion_vectors({"b": [2**33, 9]}, bitmap64=True)
    seeds.append(Seed("writer/mixed-32-64", "dv", d32 + d64[1:],
                      ranges=(*r32.values(), *((o + len(d32) - 1, n) for o, n in r64.values()))))

    seeds.append(Seed("writer/hash", "hash", ps.write_hash_index([0, 1, -1, 2**31 - 1, -2**31, 42])))
    seeds.append(Seed("writer/hash-empty", "hash", b""))

    def blob(name: str, index_type: str, data_type: str, values: list, **options: Any) -> bytes:
        data = ps.build_index(index_type, data_type, values, **options)
        seeds.append(Seed(f"writer/{name}", index_type, data, data_type=data_type))
        return data

    strings = [None, "a", "bb", "Paimon-派蒙", "a", "", None, "zz", "é", "bb", "x" * 40]
    ints = [5, -3, None, 0, 2, -1, 2**31 - 1, -2**31, 7, 7, None, 100]
    doubles = [1.5, -0.0, 0.0, math.nan, None, math.inf, -1e300, 1.5]
    blob("bitmap-string-v2-blocks", "bitmap", "STRING", strings, index_block_size="64b")
    blob("bitmap-string-v1", "bitmap", "STRING", strings, version=1)
    blob("bitmap-double-v2-blocks", "bitmap", "DOUBLE", doubles, index_block_size="24b")
    blob("bitmap-int-many", "bitmap", "INT", [i % 37 if i % 11 else None for i in range(300)],
         index_block_size="64b")
    blob("bitmap-bigint-v1-singletons", "bitmap", "BIGINT", [2**63 - 1, -2**63, 0, None], version=1)
    blob("bloom-double", "bloom-filter", "DOUBLE", doubles, items=10, fpp=0.05)
    blob("bloom-string", "bloom-filter", "STRING", strings, items=20, fpp=0.01)
    blob("bsi-bigint-wide", "bsi", "BIGINT", [2**62, -2**62, 0, None, 1, -1])
    blob("bsi-decimal", "bsi", "DECIMAL(10, 2)",
         [decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"), decimal.Decimal("0")])
    blob("range-string-chunks", "range-bitmap", "STRING", strings, chunk_size="16b")
    blob("range-int-chunks", "range-bitmap", "INT", ints, chunk_size="8b")
    blob("range-double", "range-bitmap", "DOUBLE", doubles)
    blob("range-decimal", "range-bitmap", "DECIMAL(10, 2)",
         [decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"), decimal.Decimal("0")])
    blob("range-boolean", "range-bitmap", "BOOLEAN", [True, False, None, True])
    blob("range-tinyint", "range-bitmap", "TINYINT", [1, -128, 127, None, 1])
    blob("range-all-null", "range-bitmap", "INT", [None, None, None])

    a_bitmap = ps.build_index("bitmap", "INT", ints)
    row_type = {"a": "INT", "s": "STRING", "m[k1]": "INT", "ü名": "DOUBLE"}
    container = ps.write_file_index({
        "a": {"bloom-filter": ps.build_index("bloom-filter", "INT", ints, items=10),
              "bitmap": a_bitmap, "bsi": ps.build_index("bsi", "INT", ints),
              "range-bitmap": ps.build_index("range-bitmap", "INT", ints, chunk_size="8b")},
        "s": {"bitmap": ps.build_index("bitmap", "STRING", strings, version=1),
              "range-bitmap": ps.build_index("range-bitmap", "STRING", strings)},
        "m[k1]": {"bitmap": None},
        "ü名": {"range-bitmap": ps.build_index("range-bitmap", "DOUBLE", doubles)},
    })
    seeds.append(Seed("writer/container-4types", "container", container,
                      row_type=tuple(row_type.items())))
    seeds.append(Seed("writer/container-empty", "container", ps.write_file_index({}),
                      row_type=tuple(row_type.items())))

    for version in (1, 2):
        seeds.append(Seed(f"writer/global-bitmap-int-v{version}", "bitmap-global-index",
                          write_bitmap_global_index("INT", ints * 3, version=version, dictionary_block_size=24),
                          data_type="INT"))
        seeds.append(Seed(f"writer/global-bitmap-string-v{version}", "bitmap-global-index",
                          write_bitmap_global_index("STRING", strings, version=version), data_type="STRING"))

    def bitmap_seed(name: str, bitmap: BitMap, optimize: bool = True) -> None:
        if optimize:
            bitmap.run_optimize()
        seeds.append(Seed(f"writer/{name}", "roaring", bitmap.serialize()))

    for name, data_type, values, options in [
            ("btree-int-nulls-blocks", "INT", [5, None, -3, 5, 2**31 - 1, None, 0] * 20, {"block_size": 48}),
            ("btree-string-bloom", "STRING", ["", "a", "é", "\U0001f600", None, "ab"] * 8,
             {"block_size": 64, "bloom_filter": True}),
            ("btree-double", "DOUBLE", [1.5, -0.0, 0.0, float("nan"), None, -1e300] * 5, {}),
            ("btree-timestamp9", "TIMESTAMP(9)", [1_700_000_000_123_456, -5, None] * 9, {"block_size": 40}),
            ("btree-decimal-wide", "DECIMAL(25, 3)", [10**20, -1, 0, None] * 9, {"java_null_bitmap": False}),
            ("btree-only-nulls", "BIGINT", [None] * 70, {})]:
        seeds.append(Seed(f"writer/{name}", "btree", write_btree_global_index(data_type, values, **options).data,
                          data_type=data_type))
    bitmap_seed("roaring-empty", BitMap())
    bitmap_seed("roaring-array", BitMap([1, 2, 3, 1000, 65535]), optimize=False)
    bitmap_seed("roaring-runs", BitMap(range(100, 5000)) | BitMap([70000, 70001]))
    bitmap_seed("roaring-runs-5-containers", BitMap(range(0, 5 << 16, 3000)) | BitMap(range(10, 900)))
    bitmap_seed("roaring-bitmap-container", BitMap(range(0, 10000, 2)), optimize=False)
    bitmap_seed("roaring-spread", BitMap([k << 16 for k in range(12)]), optimize=False)
    return seeds


def _distinct(seeds: Iterable[Seed]) -> list[Seed]:
    """One seed per (layout, data type, bytes): byte copies add nothing."""
    seen: set[tuple] = set()
    out = []
    for seed in seeds:
        key = (seed.layout, seed.data_type, seed.row_type, seed.data)
        if key not in seen:
            seen.add(key)
            out.append(seed)
    return out


@cache
def all_seeds() -> tuple[Seed, ...]:
    return tuple(_distinct([*fixture_seeds(), *writer_seeds()]))


def seeds_of(layout: str) -> list[Seed]:
    return [s for s in all_seeds() if s.layout == layout]


# ----------------------------------------------------------------------------------- mutations


@dataclass(frozen=True)
class Mutation:
    """How `data` was derived from its seed, to reproduce a failure."""

    kind: str
    detail: str
    data: bytes = field(repr=False)


def truncations(data: bytes) -> Iterator[Mutation]:
    """Every proper prefix, the empty one included."""
    for n in range(len(data)):
        yield Mutation("truncate", f"data[:{n}]", data[:n])


def bit_flips(data: bytes, rng: random.Random, count: int) -> Iterator[Mutation]:
    """`count` single-bit flips at random bits (every bit when the seed has fewer)."""
    bits = len(data) * 8
    if not bits:
        return
    chosen = range(bits) if bits <= count else rng.sample(range(bits), count)
    for bit in chosen:
        out = bytearray(data)
        out[bit >> 3] ^= 1 << (bit & 7)
        yield Mutation("flip", f"bit {bit} (byte {bit >> 3}, mask 0x{1 << (bit & 7):02x})", bytes(out))


def overwrites(data: bytes, rng: random.Random, count: int) -> Iterator[Mutation]:
    """`count` overwrites of a random range (1..16 bytes, now and then up to a quarter of the
    file) with 0x00, 0xFF or random bytes."""
    if not data:
        return
    for _ in range(count):
        start = rng.randrange(len(data))
        limit = max(1, len(data) // 4) if rng.random() < 0.1 else 16
        length = rng.randint(1, min(limit, len(data) - start))
        fill = rng.choice(("00", "ff", "random"))
        chunk = (bytes([int(fill, 16)]) * length if fill != "random"
                 else bytes(rng.getrandbits(8) for _ in range(length)))
        out = data[:start] + chunk + data[start + length:]
        yield Mutation("overwrite", f"data[{start}:{start + length}] = {fill}", out)


def havoc(data: bytes, rng: random.Random) -> Mutation:
    """One soak mutation: a stack of 1-4 flips, overwrites, truncations, insertions,
    deletions, interesting integers and chunk duplications."""
    out = bytearray(data)
    steps = []
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        if op == 0 and out:
            bit = rng.randrange(len(out) * 8)
            out[bit >> 3] ^= 1 << (bit & 7)
            steps.append(f"flip bit {bit}")
        elif op == 1 and out:
            start = rng.randrange(len(out))
            length = rng.randint(1, min(16, len(out) - start))
            value = rng.choice((0, 0xFF, rng.getrandbits(8)))
            out[start:start + length] = bytes([value]) * length
            steps.append(f"[{start}:{start + length}]={value:02x}")
        elif op == 2:
            cut = rng.randrange(len(out) + 1)
            del out[cut:]
            steps.append(f"truncate {cut}")
        elif op == 3 and out:
            start = rng.randrange(len(out))
            width = rng.choice((1, 2, 4, 8))
            value = rng.choice(INTERESTING[width])
            order = rng.choice(("big", "little"))
            out[start:start + width] = (value % (1 << 8 * width)).to_bytes(width, order)
            steps.append(f"[{start}]={value}/{width}{order[0]}")
        elif op == 4:
            at = rng.randrange(len(out) + 1)
            chunk = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8)))
            out[at:at] = chunk
            steps.append(f"insert {chunk.hex()}@{at}")
        elif op == 5 and out:
            start = rng.randrange(len(out))
            length = rng.randint(1, min(16, len(out) - start))
            del out[start:start + length]
            steps.append(f"delete [{start}:{start + length}]")
        elif op == 6 and out:
            start = rng.randrange(len(out))
            length = rng.randint(1, min(64, len(out) - start))
            at = rng.randrange(len(out) + 1)
            out[at:at] = out[start:start + length]
            steps.append(f"dup [{start}:{start + length}]@{at}")
    return Mutation("havoc", "; ".join(steps), bytes(out))


#: Values a count, length, offset or version field is set to, by field width in bytes.
INTERESTING = {
    1: (0, 1, 2, 0x7F, 0x80, 0xFF),
    2: (0, 1, 0x7FFF, 0x8000, 0xFFFF, 4096, 4097),
    4: (0, 1, -1, 2**31 - 1, -2**31, 2**32 - 1, 65536, 65537, 4096, 4097),
    8: (0, 1, -1, 2**31 - 1, 2**32 - 1, 2**63 - 1, -2**63, 2**64 - 1),
}


def ci_mutations(seed: Seed, flips: int = 200, writes: int = 50) -> Iterator[Mutation]:
    """The CI plan: every truncation, `flips` bit flips and `writes` overwrites, seeded by the
    seed's id (deterministic across runs and machines)."""
    rng = random.Random(f"paimon-schema-fuzz:{seed.id}")
    yield from truncations(seed.data)
    yield from bit_flips(seed.data, rng, flips)
    yield from overwrites(seed.data, rng, writes)


# ----------------------------------------------------------------------------------- the oracle


@dataclass
class Failure:
    seed: Seed
    entry: str
    mutation: str
    data: bytes
    problem: str
    trace: str
    kind: str = ""          # the problem without its particulars: one report per kind

    def describe(self, hex_limit: int = 4096) -> str:
        shown = self.data.hex() if len(self.data) <= hex_limit else (
            self.data[:hex_limit].hex() + f"… ({len(self.data)} bytes; rebuild with the mutation)")
        return (f"{self.entry} on {self.seed.id} [{self.mutation}] ({len(self.data)} bytes): "
                f"{self.problem}\n  input hex: {shown}\n{self.trace}")


class Problem(NamedTuple):
    text: str
    kind: str


#: FormatErrors whose `offset` is None by design: the problem is in an argument, not the bytes.
DOCUMENTED_NONE = ("is outside the",)


def _pattern(path: str) -> str:
    return re.sub(r"\[\d+\]", "[]", path)


def check_outcome(call: Callable[[], Any], data_len: int) -> Problem | None:
    """None when `call()` succeeds or raises a well-formed FormatError; else the problem."""
    try:
        call()
    except ps.FormatError as exc:
        return bad_format_error(exc, data_len)
    except RecursionError:
        return Problem("RecursionError (unbounded recursion on hostile input)", "RecursionError")
    except Exception as exc:     # noqa: BLE001 - the point: nothing else may escape
        kind = f"{type(exc).__name__} escaped"
        if isinstance(exc, MislocatedError):
            kind = "a blob's FormatError in the blob's coordinates"
        elif isinstance(exc.__cause__, ps.FormatError):
            kind += f" ({_pattern(exc.__cause__.path)})"
        else:
            kind += f" ({re.sub(r'[0-9]+', '#', str(exc))[:60]})"
        return Problem(f"{type(exc).__name__} escaped: {exc}", kind)
    return None


def bad_format_error(exc: ps.FormatError, data_len: int) -> Problem | None:
    offset, path = exc.offset, exc.path
    if offset is None:
        if any(text in str(exc) for text in DOCUMENTED_NONE):
            return None
        return Problem(f"FormatError without offset: {exc}", f"no offset ({_pattern(path)})")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= data_len:
        return Problem(f"FormatError offset {offset!r} outside [0, {data_len}]: {exc}",
                       f"offset past the end ({_pattern(path)})")
    if not isinstance(path, str) or not path:
        return Problem(f"FormatError without a field path: {exc}",
                       f"no path ({re.sub(r'[0-9]+', '#', exc.reason)[:60]})")
    return None


def run_target(seed: Seed, data: bytes, mutation: str = "", *, cli_too: bool = False,
               exercise: bool = True) -> list[Failure]:
    """Run every entry point of `seed.layout` on `data` (and exercise what parsed); the
    failures found."""
    failures = []
    for entry, call in entry_points(seed, data, cli_too=cli_too, exercise=exercise):
        problem = check_outcome(call, len(data))
        if problem:
            failures.append(Failure(seed, entry, mutation, data, problem.text, _last_trace(),
                                    f"{entry.split('(')[0]}: {problem.kind}"))
    return failures


_TRACE: list[str] = [""]


def _last_trace() -> str:
    return _TRACE[0]


def _traced(call: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        _TRACE[0] = ""
        try:
            return call()
        except ps.FormatError:
            raise
        except BaseException:
            _TRACE[0] = traceback.format_exc(limit=-8)
            raise
    return run


def entry_points(seed: Seed, data: bytes, *, cli_too: bool = False,
                 exercise: bool = True) -> list[tuple[str, Callable[[], Any]]]:
    """(name, call) for every public parse entry point of the seed's layout on `data`; with
    `exercise`, each parsed value is used as a pipeline would use it."""
    layout = seed.layout
    exercise_dv = _exercise_dv if exercise else _nothing
    exercise_reader = _exercise_reader if exercise else _nothing
    exercise_evaluate = _exercise_evaluate if exercise else _parse_container
    calls: list[tuple[str, Callable[[], Any]]] = []
    if layout == "dv":
        calls.append(("DeletionVectorFile.parse", lambda: exercise_dv(ps.DeletionVectorFile.parse(data))))
        calls.append(("DeletionVectorFile.parse(verify_checksum=False)",
                      lambda: exercise_dv(ps.DeletionVectorFile.parse(data, verify_checksum=False))))
        for offset, length in seed.ranges:
            calls.append((f"read_deletion_vector({offset}, {length})",
                          lambda o=offset, n=length: len(ps.read_deletion_vector(data, o, n))))
            calls.append((f"read_deletion_vector({offset}, {length}, verify_checksum=False)",
                          lambda o=offset, n=length: len(ps.read_deletion_vector(
                              data, o, n, verify_checksum=False))))
    elif layout == "hash":
        calls.append(("read_hash_index", lambda: ps.read_hash_index(data).sum()))
    elif layout == "container":
        row_type = dict(seed.row_type)
        parsed: list[ps.FileIndexFile] = []

        def parse_container() -> None:
            parsed.append(ps.FileIndexFile.parse(data))
            parsed[0].to_bytes()

        calls.append(("FileIndexFile.parse", parse_container))
        def evaluate() -> None:
            try:
                exercise_evaluate(data, row_type, parsed)
            except ps.FormatError as exc:
                if parsed and not exc.path.startswith("head.columns["):
                    raise MislocatedError(
                        f"the container parsed, but evaluate reports a blob's error in the "
                        f"blob's coordinates (offset {exc.offset}, path {exc.path!r}): {exc}") from exc
                raise

        calls.append(("evaluate", evaluate))
    elif layout in INDEX_TYPES:
        calls.append((f"open_index({layout!r}, {seed.data_type!r})",
                      lambda: exercise_reader(ps.open_index(layout, data, seed.data_type),
                                              layout, seed.data_type)))
    elif layout == "roaring":
        calls.append(("roaring.deserialize", lambda: len(roaring.deserialize(data)[0])))
    elif layout == "bitmap-global-index":
        calls.append(("BitmapGlobalIndexReader.verify",
                      lambda: BitmapGlobalIndexReader.open(data, seed.data_type).verify()))
        calls.append(("BitmapGlobalIndexReader.equal/in_", lambda: len(_global_lookups(data, seed.data_type))))
    elif layout == "btree":
        assert seed.data_type is not None
        calls.append((f"BTreeGlobalIndexReader.open(..., {seed.data_type!r})",
                      lambda: _exercise_btree(BTreeGlobalIndexReader.open(data, seed.data_type or ""))
                      if exercise else _read_btree(BTreeGlobalIndexReader.open(data, seed.data_type or ""))))
    else:
        raise ValueError(layout)
    if cli_too and layout in CLI_LAYOUTS:
        calls.append((f"cli verify --layout {CLI_LAYOUTS[layout]}",
                      lambda: run_cli(data, CLI_LAYOUTS[layout])))
    return [(name, _traced(call)) for name, call in calls]


class MislocatedError(AssertionError):
    """A FormatError located relative to something else than the bytes handed in."""


CLI_LAYOUTS = {"dv": "dv", "container": "file-index", "hash": "hash",
               "bitmap-global-index": "bitmap-global-index"}


def _global_lookups(data: bytes, data_type: str | None) -> BitMap64:
    """A lookup of each key of a clean seed's column, without reading the whole file first."""
    reader = BitmapGlobalIndexReader.open(data, data_type)
    probes = [7, -3, 100, None] if data_type == "INT" else ["a", "bb", "zz", None]
    return reader.in_(probes) | reader.equal(probes[0]) | reader.is_null()


def _read_btree(reader: BTreeGlobalIndexReader) -> None:
    """Every block read, as a scan of all rows does (row ids decoded a block at a time)."""
    reader.is_not_null()
    reader.is_null()


def _exercise_btree(reader: BTreeGlobalIndexReader) -> None:
    """Every query a pipeline asks, on probes of the column type and on the file's own keys."""
    keys = list(reader.entries())
    reader.is_null()
    reader.is_not_null()
    data_type = str(reader.keys.data_type)
    own = []
    for key, _ in keys[:2]:
        try:
            own.append(reader.keys.decode(key))
        except (ValueError, OverflowError):
            continue         # a key no Python value holds (a date past year 9999): probes suffice
    for probe in probes(data_type)[:4] + own:
        try:
            reader.equal(probe)
            reader.less_than(probe)
            reader.greater_or_equal(probe)
            reader.isin([probe, None])
        except ps.SchemaError:
            continue         # a probe the type does not take, or a decoded key outside its range
    if reader.keys.data_type.is_string:
        reader.starts_with("a")


def _nothing(*args: Any) -> None:
    pass


def _parse_container(data: bytes, *args: Any) -> None:
    ps.FileIndexFile.parse(data)


def _exercise_dv(f: ps.DeletionVectorFile) -> None:
    for b in f.bins:
        len(b.bitmap), b.offset, b.length, b.cardinality


# -- probes


def probes(data_type: str) -> list[Any]:
    """A few valid query values of the type (raw keys for temporal types)."""
    dtype = ps.types.DataType.parse(data_type)
    root = dtype.root
    if root == "BOOLEAN":
        return [False, True]
    if root == "TINYINT":
        return [0, 1, -128, 127]
    if root == "SMALLINT":
        return [0, 1, -12345, 32767]
    if root in ("INT", "DATE"):
        return [0, 1, -1, 5, 42, 2**31 - 1, -2**31]
    if root == "TIME":
        return [0, 1000, 86399999]
    if root in ("BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ"):
        return [0, 1, -1, 600, 1745542802000123, 2**63 - 1, -2**63]
    if root in ("FLOAT", "DOUBLE"):
        return [0.0, -0.0, 1.5, -1.5, math.nan, math.inf, 3.3]
    if root == "DECIMAL":
        return [decimal.Decimal(0), decimal.Decimal("1.25"), decimal.Decimal("-3.5")]
    if dtype.is_string:
        return ["", "a", "bb", "Paimon-派蒙", "zz"]
    raise ValueError(data_type)


def _exercise_reader(reader: Any, index_type: str, data_type: str) -> None:
    """Every predicate kind with a few probes, and every enumeration the reader has."""
    values = probes(data_type)
    for v in values:
        for method in ("equal", "not_equal", "less_than", "less_or_equal", "greater_than",
                       "greater_or_equal"):
            _check_result(getattr(reader, method)(v))
        _check_result(reader.between(values[0], v))
    for chosen in (values, values[:1], [None, values[-1]], []):
        _check_result(reader.in_(chosen))
        _check_result(reader.not_in(chosen))
    _check_result(reader.equal(None))
    _check_result(reader.is_null())
    _check_result(reader.is_not_null())
    if index_type == "range-bitmap":
        for k in (0, 1, 3, 1000):
            for ascending in (True, False):
                for nulls_first in (True, False):
                    _check_result(reader.top_n(k, ascending=ascending, nulls_first=nulls_first))
        reader.min, reader.max
    if hasattr(reader, "items"):
        for _value, rows in reader.items():
            assert isinstance(rows, BitMap)
    if hasattr(reader, "null_rows"):
        assert isinstance(reader.null_rows, BitMap)
    if hasattr(reader, "values"):
        reader.values()
    if index_type == "bitmap":
        len(reader)
    if index_type == "bloom-filter":
        reader.might_contain(values[0]), reader.num_bits, reader.probes


def _check_result(result: ps.IndexResult) -> None:
    assert isinstance(result, ps.IndexResult), result
    assert result.rows is None or isinstance(result.rows, BitMap), result


def _exercise_evaluate(data: bytes, row_type: dict[str, str],
                      parsed: list[ps.FileIndexFile] | None = None) -> None:
    """`ps.evaluate` (from bytes: it parses the container) on leaves of every indexed column;
    `parsed` holds the container when FileIndexFile.parse already read these bytes."""
    columns = list(row_type)
    leaves = []
    for column in columns:
        values = probes(row_type[column])
        c = ps.col(column)
        leaves += [c == values[1], c != values[0], c < values[-1], c >= values[0],
                   c.isin(values[:3]), c.not_in(values[:2]), c.is_null(), c.is_not_null(),
                   c.between(values[0], values[-1])]
    from paimon_schema.query.predicate import And, Or
    # From bytes (evaluate parses the container), every leaf once: an OR asks them all.
    _check_result(ps.evaluate(data, Or(tuple(leaves)), row_type))
    container = parsed[0] if parsed else ps.FileIndexFile.parse(data)
    _check_result(ps.evaluate(container, And(tuple(leaves[1::2])), row_type))
    _check_result(ps.evaluate(container, ~Or(tuple(leaves[::3])), row_type))
    for column in columns:
        if "range-bitmap" in container.columns.get(column, {}):
            _check_result(ps.top_n(container, column, 2, row_type))


# -- command line


@cache
def _cli_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="paimon-fuzz-cli-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def run_cli(data: bytes, layout: str) -> None:
    """`paimon-schema verify --layout L FILE`: exit 0 or 1 with a FAIL line, never a traceback."""
    path = _cli_dir() / f"input-{os.getpid()}"
    path.write_bytes(data)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli_main.main(["verify", "--layout", layout, str(path)])
    text = out.getvalue()
    if code not in (0, 1):
        raise AssertionError(f"verify exited {code}: {text}")
    if (code == 1) != text.startswith("FAIL"):
        raise AssertionError(f"verify exit {code} does not match its output: {text}")
    if "Traceback" in text:
        raise AssertionError(f"verify printed a traceback: {text}")


def run_plan(seed: Seed, mutations: Iterable[Mutation], *, cli_every: int = 0,
             limit: int = 5) -> tuple[int, list[Failure]]:
    """Run `mutations` of `seed`; (executions, up to `limit` failures of distinct kinds).

    With `cli_every`, every that many-th input also goes through the CLI."""
    failures: list[Failure] = []
    kinds: set[tuple[str, str]] = set()
    count = 0
    for i, m in enumerate(mutations):
        count += 1
        for f in run_target(seed, m.data, f"{m.kind} {m.detail}",
                            cli_too=bool(cli_every) and i % cli_every == 0):
            kind = f.kind
            if kind not in kinds and len(failures) < limit:
                kinds.add(kind)
                failures.append(f)
    return count, failures


def report(failures: list[Failure]) -> str:
    return "\n\n".join(f.describe() for f in failures)
