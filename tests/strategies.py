"""The Hypothesis strategies shared by the tests: values of a Paimon data type, and columns.

`values_for(data_type)` draws non-null values as the writers take them (temporal types as their
raw index-key integers, DECIMAL as numbers): a few small values that repeat, so that keys
collide and predicates hit; the type's edge cases (extremes, -0.0, NaN, infinities, empty and
non-BMP strings); and the whole range of the type. `columns(values)` draws whole columns from
such values: a small pool of keys repeated over the rows, with none, some or only NULLs
(test_strategies.py checks they do draw NaN, -0.0, repeated keys and NULLs);
`shaped_columns()` draws whole columns in the shapes tables hold (sorted, cyclic, clustered,
skewed, ...), for the bulk writers; `sliced_columns()` integer columns whose containers' row
counts, placement, signs and varying bits sit at the edges of the compiled bit slicing;
`mostly_null_lists(items)` long lists of mostly None, for
the compiled passes that set NULLs aside a block of rows at a time; `partition_filters` draws
scan filters over a partition column and others, for planning. `stats_files()` draws data
files with manifest statistics as planning meets them (schema evolution, NULLs, damage) and
`stats_predicates()` filters over their columns; `string_key_sets()` distinct strings whose
order and sizes test the string key writers; `byte_key_lists()` bytes keys whose order tests
the compiled key sort; `manifest_entries()` manifest records as a manifest file holds them.
"""

from __future__ import annotations

import dataclasses

import datetime as dt
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from paimon_schema.layouts.binary_row import encode_binary_row
from paimon_schema.layouts.bitmap_index import build_bitmap_index
from paimon_schema.layouts.btree_global_index import BTreeGlobalIndexReader, write_btree_global_index
from paimon_schema.layouts.file_index import write_file_index
from paimon_schema.layouts.paimon_common import bitmap_keys
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.table.manifests import DataFile
from paimon_schema.table.schema import DataField, TableSchema
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import INTEGER_BOUNDS, DataType

SPECIAL_FLOATS = [0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1.5, -1.5]
#: Characters of 1 to 4 UTF-8 bytes, and NUL (Java's modified UTF-8 writes it on 2 bytes).
ALPHABET = "ab\x00é\u4e16\U0001f600"


def values_for(data_type: str | DataType) -> st.SearchStrategy:
    """Values of `data_type` (never None: mix in `st.none()` for nulls)."""
    dtype = DataType.parse(data_type)
    root = dtype.root
    if root == "BOOLEAN":
        return st.booleans()
    if root in INTEGER_BOUNDS:
        low, high = INTEGER_BOUNDS[root]
        edges = sorted({v for v in (low, high, 0, 1, -1, 1024, 65536, low + 1, high - 1) if low <= v <= high})
        return st.integers(max(low, -5), min(high, 5)) | st.sampled_from(edges) | st.integers(low, high)
    if root == "FLOAT":
        return st.sampled_from(SPECIAL_FLOATS) | st.floats(width=32)
    if root == "DOUBLE":
        return st.sampled_from(SPECIAL_FLOATS) | st.floats()
    if dtype.is_string:
        size = min(dtype.length or 5, 5)
        return st.sampled_from(["", "a", "é", "\U0001f600", "\x00"][:1 + size]) | st.text(ALPHABET, max_size=size)
    if dtype.is_binary:
        size = min(dtype.length or 5, 5)
        return st.binary(max_size=size)
    if root == "DECIMAL":
        assert dtype.precision is not None and dtype.scale is not None
        bound = 10 ** (dtype.precision - dtype.scale) - 1
        return st.integers(-5, 5) | st.integers(-bound, bound)
    raise ValueError(f"no value strategy for {data_type}")


#: The shapes of a column that index builds meet in tables (`shaped_column`).
SHAPES = ("random", "sorted", "cyclic", "clustered", "skewed", "distinct", "mostly_null")


def shaped_column(shape: str, rows: int, distinct: int, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A column of `rows` int64 keys in `[0, distinct)` laid out as `shape`, and its validity
    (None: no NULL): random; sorted (each key's rows one run); cyclic (row i = i % distinct:
    each key's rows spread over every container); clustered (runs of random length and key);
    skewed (Zipf); distinct (a permutation of the rows); mostly_null (random, 90 % NULL)."""
    rng = np.random.default_rng(seed)
    distinct = max(1, distinct)
    valid = None
    if shape == "sorted":
        keys = np.sort(rng.integers(0, distinct, rows))
    elif shape == "cyclic":
        keys = np.arange(rows) % distinct
    elif shape == "clustered":
        lengths = rng.integers(1, 2 * max(1, rows // max(1, distinct)) + 2, rows + 1)
        ends = np.cumsum(lengths)
        runs = int(np.searchsorted(ends, rows)) + 1
        keys = np.repeat(rng.integers(0, distinct, runs), lengths[:runs])[:rows]
    elif shape == "skewed":
        keys = (rng.zipf(1.3, rows) - 1) % distinct
    elif shape == "distinct":
        keys = rng.permutation(rows)
    else:
        keys = rng.integers(0, distinct, rows)
        if shape == "mostly_null":
            valid = rng.random(rows) >= 0.9
    return keys.astype(np.int64), valid


def shaped_columns(max_rows: int = 200_000) -> st.SearchStrategy:
    """(shape, keys, validity) of `shaped_column`, rows and distinct keys drawn: small, and
    past a roaring container (65536 rows), with keys dense enough for bitmap and run containers."""
    return st.builds(lambda shape, rows, distinct, seed: (shape, *shaped_column(shape, rows, distinct, seed)),
                     st.sampled_from(SHAPES),
                     st.integers(0, 300) | st.integers(60_000, max_rows),
                     st.sampled_from([1, 2, 3, 10, 100, 1000]) | st.integers(1, 100_000),
                     st.integers(0, 2**32 - 1))


#: Non-null rows of a container (65536 rows) at the compiled bit slicing's edges: none, one,
#: an array container's limit (4096) +- 1, the row-list limit (an eighth: 8192) +- 1, all.
CONTAINER_FILLS = (0, 1, 2, 4095, 4096, 4097, 8191, 8192, 8193, 16384, 65535, 65536)


@st.composite
def sliced_columns(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, validity or None) for a bit-sliced index: one to three containers of rows (the
    last one full or short), each with a drawn count of non-null rows (`CONTAINER_FILLS`)
    at random rows or in one run, its values of one sign or both; values of 1 to 63 bits
    (so 1 to 8 bytes of them vary), random, sorted or a few repeated, in the narrowest
    integer dtype that holds them or a wider one."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    containers = draw(st.integers(1, 3))
    last = draw(st.sampled_from([65536, 1, 17, 40_001, 40_010]))
    nullable = draw(st.booleans())
    valid_parts, sign_parts = [], []
    for c in range(containers):
        span = 65536 if c < containers - 1 else last
        fill = min(span, draw(st.sampled_from(CONTAINER_FILLS))) if nullable else span
        rows = np.zeros(span, bool)
        if draw(st.booleans()):
            first = int(rng.integers(0, span - fill + 1))
            rows[first:first + fill] = True
        else:
            rows[rng.choice(span, fill, replace=False)] = True
        valid_parts.append(rows)
        signs = draw(st.sampled_from(["positive", "negative", "both"]))
        sign_parts.append(np.full(fill, 1) if signs == "positive" else np.full(fill, -1) if signs == "negative"
                          else rng.choice([-1, 1], fill))
    valid = np.concatenate(valid_parts)
    bits = draw(st.integers(1, 63))
    count = int(valid.sum())
    layout = draw(st.sampled_from(["random", "sorted", "few"]))
    if layout == "few":
        magnitudes = rng.integers(0, 2**bits, 5, dtype=np.int64)[rng.integers(0, 5, count)]
    else:
        magnitudes = rng.integers(0, 2**bits, count, dtype=np.int64)
        if layout == "sorted":
            magnitudes.sort()
    values = magnitudes * np.concatenate(sign_parts).astype(np.int64)
    dtype = draw(st.sampled_from([d for d in (np.int8, np.int16, np.int32, np.int64)
                                  if bits < 8 * np.dtype(d).itemsize]))
    return values.astype(dtype), valid if nullable else None


def string_key_sets(max_keys: int = 120) -> st.SearchStrategy[list[str]]:
    """Distinct strings as string index keys stress them: sharing long prefixes (an 8-byte
    prefix ties), empty, non-ASCII, NUL inside and at the end, one a prefix of another, and
    some longer than a small index block."""
    prefixes = st.lists(st.text(ALPHABET, max_size=14), min_size=1, max_size=4)
    return prefixes.flatmap(lambda heads: st.lists(
        st.builds(str.__add__, st.sampled_from(heads), st.text(ALPHABET, max_size=5)) | st.just("")
        | st.text(ALPHABET, min_size=20, max_size=40), max_size=max_keys, unique=True))


def byte_key_lists(max_keys: int = 400) -> st.SearchStrategy[list[bytes]]:
    """Bytes keys (some equal) as the compiled sort (`kernels.c` v2_sort) meets them: a few
    heads of 0 to 600 bytes (long prefixes every key of a run shares), tails of a few bytes
    among NUL, 0x7F, 0x80 and 0xFF, so that dozens of keys tie on 8 bytes, keys end inside and
    at the edges of 8-byte windows and one key is a prefix of others."""
    head = st.integers(0, 600).flatmap(lambda size: st.binary(min_size=size, max_size=size)) \
        | st.sampled_from([b"", b"value-", b"\xff" * 8, b"\x00" * 7])
    tail = st.lists(st.sampled_from([0x00, 0x01, 0x41, 0x7F, 0x80, 0xFF]), max_size=10).map(bytes)
    return st.lists(head, min_size=1, max_size=4).flatmap(lambda heads: st.lists(
        st.builds(bytes.__add__, st.sampled_from(heads), tail), max_size=max_keys))


_LONGS = st.integers(-2**63, 2**63 - 1)
_INTS = st.integers(-2**31, 2**31 - 1)


@st.composite
def manifest_entries(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The records of a manifest (`table.commit.MANIFEST_ENTRY_SCHEMA`) as a fold meets them:
    ADDs and DELETEs (and kinds no writer writes) of files named from a small pool, so that
    names, partitions, statistics and column lists repeat (one object each when decoded);
    extra files none or some; every optional field absent or present; text beyond ASCII."""
    names = draw(st.lists(st.text(max_size=12).map(lambda t: f"data-{t}.parquet"), min_size=1, max_size=5))
    partitions = draw(st.lists(st.binary(max_size=24), min_size=1, max_size=3))
    stats = draw(st.lists(st.binary(max_size=16), min_size=1, max_size=3))
    columns = draw(st.lists(st.lists(st.text(max_size=4), max_size=3), min_size=1, max_size=3))

    unusual = draw(st.booleans())           # kinds, buckets and levels no writer writes

    def optional(values: st.SearchStrategy) -> Any:
        return draw(st.none() | values)

    records = []
    for _ in range(draw(st.integers(0, 40))):
        records.append({
            "_VERSION": 2, "_KIND": draw(st.sampled_from([0, 0, 1]) | _INTS if unusual else st.sampled_from([0, 0, 1])),
            "_PARTITION": draw(st.sampled_from(partitions)),
            "_BUCKET": draw(st.integers(-1, 3) | _INTS if unusual else st.integers(-1, 3)),
            "_TOTAL_BUCKETS": draw(st.integers(-1, 4)),
            "_FILE": {
                "_FILE_NAME": draw(st.sampled_from(names)), "_FILE_SIZE": draw(_LONGS),
                "_ROW_COUNT": draw(st.integers(0, 10**6) | _LONGS), "_MIN_KEY": b"", "_MAX_KEY": b"",
                "_KEY_STATS": {"_MIN_VALUES": b"", "_MAX_VALUES": b"", "_NULL_COUNTS": None},
                "_VALUE_STATS": {"_MIN_VALUES": draw(st.sampled_from(stats)),
                                 "_MAX_VALUES": draw(st.sampled_from(stats)),
                                 "_NULL_COUNTS": optional(st.lists(st.none() | _LONGS, max_size=4))},
                "_MIN_SEQUENCE_NUMBER": draw(_LONGS), "_MAX_SEQUENCE_NUMBER": draw(_LONGS),
                "_SCHEMA_ID": draw(st.integers(0, 2)), "_LEVEL": draw(st.integers(0, 5) | _INTS if unusual else st.integers(0, 5)),
                "_EXTRA_FILES": draw(st.lists(st.sampled_from([*names, "x.index"]), max_size=2)),
                "_CREATION_TIME": optional(st.integers(0, 2**41)), "_DELETE_ROW_COUNT": optional(_LONGS),
                "_EMBEDDED_FILE_INDEX": optional(st.binary(max_size=20)), "_FILE_SOURCE": optional(st.integers(0, 1)),
                "_VALUE_STATS_COLS": optional(st.sampled_from(columns)),
                "_EXTERNAL_PATH": optional(st.text(max_size=10).map(lambda t: f"s3://b/{t}")),
                "_FIRST_ROW_ID": optional(_LONGS), "_WRITE_COLS": optional(st.sampled_from(columns))}})
    return records


def mostly_null_lists(items: st.SearchStrategy, max_rows: int = 12_000) -> st.SearchStrategy[list]:
    """Lists of up to `max_rows` items (past the compiled passes' blocks of 4096 rows), half to
    all of them None, the others drawn from a small pool of `items`, at random rows."""
    return st.builds(_mostly_null, st.lists(items, min_size=1, max_size=6), st.integers(0, max_rows),
                     st.floats(0.5, 1.0), st.integers(0, 2**32 - 1))


def _mostly_null(pool: list, rows: int, null_share: float, seed: int) -> list:
    rng = np.random.default_rng(seed)
    picks, nulls = rng.integers(0, len(pool), rows).tolist(), (rng.random(rows) < null_share).tolist()
    return [None if null else pool[pick] for pick, null in zip(picks, nulls)]


@st.composite
def columns(draw: st.DrawFn, values: Mapping[str, st.SearchStrategy], *, max_pool: int = 12,
            max_rows: int = 60, runs: bool = False, distinct_edges: Sequence[int] = ()
            ) -> tuple[str, list, list]:
    """(data type, column, pool): a column of one of the types `values` maps to a strategy,
    its cells drawn from a pool of at most `max_pool` values (so keys repeat), with no NULLs,
    some or only NULLs, at most `max_rows` rows. `runs` sometimes repeats each row 3 or 17
    times (run containers); `distinct_edges` sometimes gives a column of exactly that many
    distinct keys then repeats (a hash table's pending resize in Java's writers)."""
    data_type = draw(st.sampled_from(sorted(values)))
    if distinct_edges and data_type != "BOOLEAN" and draw(st.integers(0, 4)) == 0:
        distinct = draw(st.lists(values[data_type], min_size=min(distinct_edges),
                                 max_size=max(distinct_edges), unique_by=repr))
        size = max((n for n in distinct_edges if n <= len(distinct)), default=0)
        if size:
            pool = distinct[:size]
            return data_type, pool + draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3)), pool
    pool = draw(st.lists(values[data_type], min_size=1,
                         max_size=draw(st.sampled_from(sorted({min(3, max_pool), max_pool})))))
    nulls = draw(st.sampled_from(["none", "some", "some", "all"]))
    cells = {"none": st.sampled_from(pool), "some": st.none() | st.sampled_from(pool),
             "all": st.none()}[nulls]
    column = draw(st.lists(cells, max_size=draw(st.sampled_from(sorted({5, max_rows // 4, max_rows})))))
    if runs and column and draw(st.booleans()):
        column = [v for v in column for _ in range(draw(st.sampled_from([1, 3, 17])))]
    return data_type, column, pool


def pairs(column: tuple[str, list, list]) -> tuple[str, list]:
    """(data type, column) of a `columns` draw, for tests that need no pool."""
    return column[0], column[1]


#: The column types the global-index tests draw (every key serializer of Java's `KeySerializer`).
GLOBAL_INDEX_TYPES = ["TINYINT", "SMALLINT", "INT", "BIGINT", "BOOLEAN", "FLOAT", "DOUBLE", "STRING",
                      "DECIMAL(10, 2)", "DECIMAL(30, 4)", "DATE", "TIMESTAMP(3)", "TIMESTAMP(6)"]


@st.composite
def global_index_columns(draw: st.DrawFn, types: list[str] = GLOBAL_INDEX_TYPES,
                         max_size: int = 120, min_size: int = 0) -> tuple[str, list]:
    """(data type, one value per row with NULLs): DATE as days and TIMESTAMP as raw keys."""
    data_type = draw(st.sampled_from(types))
    root = DataType.parse(data_type).root
    values = (st.integers(-30000, 30000) if root == "DATE"
              else st.integers(-2**40, 2**40) if root in ("TIMESTAMP", "TIMESTAMP_LTZ") else values_for(data_type))
    return data_type, draw(st.lists(st.none() | values, min_size=min_size, max_size=max_size))


#: What `damaged_btree_files` writes over a byte: the edges of counts, lengths and varints.
HOSTILE_BYTES = (0, 1, 2, 5, 0x7F, 0x80, 0xFF)


@st.composite
def damaged_btree_files(draw: st.DrawFn, types: Sequence[str] = ("INT", "STRING", "BIGINT")) -> tuple[str, bytes]:
    """(data type, bytes) of a btree global index file from our writer (a drawn column with
    NULLs, block size, bloom filter or not), then up to three bytes of its footer, its blocks
    (entries, tables, compression bytes) or its null bitmap's framing (bucket count and first
    key) set to hostile values, and every block's and the null bitmap's CRC32 fixed: the damage
    reaches what the checksums guard (the fast paths and the generated parser then read it)."""
    data_type, values = draw(global_index_columns(list(types), max_size=80, min_size=1))
    written = write_btree_global_index(data_type, values, block_size=draw(st.sampled_from([1, 24, 64, 4096])),
                                       bloom_filter=draw(st.booleans())).data
    clean = BTreeGlobalIndexReader.open(written, data_type)
    f = clean.footer
    blocks = [(b.offset, b.size) for b in clean.blocks] + [(f.ofs_index_block, f.len_index_block)]
    regions = [(len(written) - 52, 52)] + [(offset, size + 1) for offset, size in blocks]
    if f.has_null_bitmap:
        regions.append((f.ofs_null_bitmap, 12))
    data = bytearray(written)
    for _ in range(draw(st.integers(0, 3))):
        start, length = draw(st.sampled_from(regions))
        at = start + draw(st.integers(0, length - 1))
        data[at] = draw(st.sampled_from(HOSTILE_BYTES + (data[at] ^ 1,)))
    for offset, size in blocks:
        data[offset + size + 1:offset + size + 5] = zlib.crc32(bytes(data[offset:offset + size + 1])).to_bytes(4, "little")
    if f.has_null_bitmap:
        end = f.ofs_null_bitmap + f.len_null_bitmap
        data[end:end + 4] = zlib.crc32(bytes(data[f.ofs_null_bitmap:end])).to_bytes(4, "little")
    return data_type, bytes(data)


#: The btree footer's fields (`sst.FOOTER`, "<QIQQIQIII"): (offset in the footer, width in bytes).
BTREE_FOOTER_FIELDS = ((0, 8), (8, 4), (12, 8), (20, 8), (28, 4), (32, 8), (40, 4), (44, 4), (48, 4))


@st.composite
def hostile_btree_footers(draw: st.DrawFn, types: Sequence[str] = ("INT", "STRING")) -> tuple[str, bytes]:
    """(data type, bytes) of a btree global index file from our writer whose footer has up to
    three fields (offsets, lengths, counts, version, magic) set to the edges a reader must
    bounds-check: 0, 1, 4, 5, the file's size and the footer's offset and their neighbours, the
    index block's length, 2^31 - 1, and the largest values of the field's width (an offset plus
    a length past 2^64). The rest of the file is intact (or cut to its last bytes)."""
    data_type, values = draw(global_index_columns(list(types), max_size=60, min_size=1))
    written = write_btree_global_index(data_type, values, block_size=draw(st.sampled_from([1, 64, 4096])),
                                       bloom_filter=draw(st.booleans())).data
    data = bytearray(written)
    size = len(data)
    base = size - 52
    len_index = int.from_bytes(data[base + 28:base + 32], "little")
    for _ in range(draw(st.integers(1, 3))):
        at, width = draw(st.sampled_from(BTREE_FOOTER_FIELDS))
        top = 2 ** (8 * width)
        edges = [0, 1, 4, 5, size, base, base - 1, base - 4, base - 5, base - len_index - 5, len_index,
                 2**31 - 1, top - 1, top - 2, top - 5, top - base, top - len_index]
        value = draw(st.sampled_from(edges) | st.integers(0, top - 1)) % top
        data[base + at:base + at + width] = value.to_bytes(width, "little")
    if draw(st.booleans()):
        data = data[-draw(st.integers(0, min(size, 120))):] if draw(st.booleans()) else data
    return data_type, bytes(data)


#: The column types of `file_index_containers`: the key kinds `query.quick_evaluate` compares
#: in C, and two it leaves to Python.
CONTAINER_TYPES = ("TINYINT", "SMALLINT", "INT", "DATE", "BIGINT", "TIMESTAMP(3)", "STRING",
                   "VARCHAR(10)", "BOOLEAN", "DOUBLE")


@st.composite
def file_index_containers(draw: st.DrawFn) -> tuple[bytes, dict[str, str], list]:
    """(container bytes, row type, the indexed column's pool) of a file-index container as
    planning meets them: the column `c` with a bitmap V1 or V2 index (index blocks from one
    entry to one block) and sometimes a second index or an empty entry, or only an empty entry;
    sometimes another indexed column `d`; the row type also names an unindexed column `u`."""
    data_type, column, pool = draw(columns({t: values_for(t) for t in CONTAINER_TYPES},
                                           max_pool=30, max_rows=80))
    codec = bitmap_keys(data_type)
    entry = 8 + max(codec.size(codec.encode(v)) for v in pool)
    version = draw(st.sampled_from([2, 2, 2, 1]))
    block_size = draw(st.sampled_from([4 + entry, 4 + 2 * entry, 3 + 3 * entry, 100, 16384]))
    blob = build_bitmap_index(data_type, column, version=version, index_block_size=block_size)
    shape = draw(st.sampled_from(["bitmap", "bitmap", "bitmap", "empty", "bitmap+empty",
                                  "bitmap+other"]))
    indexes: dict[str, bytes | None] = {
        "bitmap": {"bitmap": blob}, "empty": {"bitmap": None},
        "bitmap+empty": {"bitmap": blob, "bloom-filter": None},
        "bitmap+other": {"bitmap": blob, "unknown-kind": b"\x00\x01"}}[shape]
    layout: dict[str, dict[str, bytes | None]] = {"c": indexes}
    if draw(st.booleans()):
        layout["d"] = {"bitmap": build_bitmap_index("INT", [1, 2, None, 2])}
        if draw(st.booleans()):
            layout = {"d": layout.pop("d"), "c": indexes}
    row_type = {"c": data_type, "d": "INT", "u": "STRING"}
    return write_file_index(layout), row_type, pool


_PARTITION_FUNCTIONS = ("equal", "not_equal", "less_than", "less_or_equal", "greater_than",
                        "greater_or_equal", "in_", "not_in", "between", "is_null", "is_not_null")


@st.composite
def partition_filters(draw: st.DrawFn, column: str, values: Sequence[Any],
                      others: Mapping[str, Sequence[Any]], depth: int = 2) -> Predicate:
    """A filter over a partition column (literals among and around `values`, NULL among
    them) and other columns (`others`: {column: literals}), under And/Or `depth` deep: what
    a plan skips manifests and partitions by."""
    if depth > 0 and draw(st.booleans()):
        children = tuple(draw(st.lists(partition_filters(column, values, others, depth - 1),
                                       min_size=1, max_size=3)))
        return And(children) if draw(st.booleans()) else Or(children)
    name = draw(st.sampled_from([column, *others]) if others and draw(st.integers(0, 3)) == 0
                else st.just(column))
    pool = list(values) if name == column else list(others[name])
    literal = st.sampled_from(pool) if pool else st.none()
    if name == column and pool and isinstance(pool[0], str):
        literal = literal | st.sampled_from(pool).map(lambda v: v[:-1]) | st.just(pool[-1] + "z")
    function = draw(st.sampled_from(_PARTITION_FUNCTIONS))
    if function in ("is_null", "is_not_null"):
        return Leaf(function, name)
    if function in ("in_", "not_in"):
        return Leaf(function, name, tuple(draw(st.lists(literal | st.none(), min_size=1, max_size=3))))
    if function == "between":
        return Leaf(function, name, (draw(literal), draw(literal)))
    return Leaf(function, name, (draw(literal),))


# ------------------------------------------------------------------------------ statistics

#: The columns `stats_files` writes statistics of: (field id, name, type now, (name, type) in
#: schema 0 or None where the column was added later). `k` widened from INT, `s` renamed from
#: `s_old`; TIMESTAMP and DECIMAL rows are the ones only Python reads.
STATS_FIELDS = [
    (0, "k", "BIGINT", ("k", "INT")), (1, "s", "STRING", ("s_old", "STRING")),
    (2, "d", "DOUBLE", ("d", "DOUBLE")), (3, "f", "FLOAT", ("f", "FLOAT")),
    (4, "b", "BOOLEAN", ("b", "BOOLEAN")), (5, "v", "BYTES", ("v", "BYTES")),
    (6, "c", "CHAR(5)", ("c", "CHAR(5)")), (7, "dt", "DATE", ("dt", "DATE")),
    (8, "n", "SMALLINT", None), (9, "p", "STRING", ("p", "STRING")),
    (10, "ts", "TIMESTAMP(3)", ("ts", "TIMESTAMP(3)")), (11, "x", "DECIMAL(10, 2)", ("x", "DECIMAL(10, 2)")),
]
STATS_MODES = ["full", "truncate(16)", "truncate(3)", "counts", "none", " Truncate( 2 ) "]
#: Strings sharing prefixes longer and shorter than what `truncate(N)` keeps.
PREFIXED = st.sampled_from(["", "a", "ab", "b", "p" * 15, "p" * 16, "p" * 16 + "a", "p" * 17 + "b",
                            "é", "\U0001f600", "a\x00"]) | st.text(ALPHABET, max_size=20)


def stat_values(data_type: str) -> st.SearchStrategy:
    """Values a statistics row holds for `data_type` (dates also as day numbers, some beyond
    any date: a row that does not decode)."""
    root = DataType.parse(data_type).root
    if root == "DATE":
        return st.dates() | st.integers(-3_000_000, 3_000_000)
    if root == "TIMESTAMP":
        return st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2100, 1, 1)).map(
            lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
    if root == "CHAR":
        return st.text(ALPHABET, max_size=5)
    if data_type == "STRING":
        return PREFIXED
    if root == "BINARY" or data_type == "BYTES":
        return st.binary(max_size=20)
    return values_for(data_type)


def _literals(data_type: str) -> st.SearchStrategy:
    """Literals a filter compares `data_type` with: of its kind, as users write them (dates as
    ISO strings too), sometimes of another kind or NULL."""
    root = DataType.parse(data_type).root
    if root == "DATE":
        own = st.dates() | st.dates().map(str)
    elif root == "TIMESTAMP":
        own = st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2100, 1, 1))
    elif root == "DECIMAL":
        own = st.decimals(-10**8, 10**8, places=2)
    else:
        own = stat_values(data_type)
    other = st.sampled_from([1, 0, -1.5, "a", b"a", True, float("nan"), dt.date(2024, 1, 1), None])
    return own | own | own | other


@st.composite
def stats_leaves(draw: st.DrawFn) -> Leaf:
    """A comparison, IN, BETWEEN or IS NULL of a column of `STATS_FIELDS` (partition column
    `p` among them)."""
    _, name, data_type, _ = draw(st.sampled_from(STATS_FIELDS))
    function = draw(st.sampled_from(["equal", "not_equal", "less_than", "less_or_equal",
                                     "greater_than", "greater_or_equal", "in_", "not_in",
                                     "between", "is_null", "is_not_null"]))
    literal = _literals(data_type)
    if function in ("is_null", "is_not_null"):
        return Leaf(function, name)
    if function in ("in_", "not_in"):
        return Leaf(function, name, tuple(draw(st.lists(literal, max_size=3))))
    if function == "between":
        return Leaf(function, name, (draw(literal), draw(literal)))
    return Leaf(function, name, (draw(literal),))


def stats_predicates() -> st.SearchStrategy[Predicate]:
    """Filters over `STATS_FIELDS`: leaves under AND, OR and NOT (pushed to the leaves)."""
    return st.recursive(stats_leaves(), lambda children: (
        st.lists(children, max_size=3).map(lambda c: And(tuple(c)))
        | st.lists(children, min_size=1, max_size=3).map(lambda c: Or(tuple(c)))
        | children.map(lambda c: ~c)), max_leaves=6)


#: Partition column types `partition_batches` draws (the kernel reads all but TIMESTAMP).
PARTITION_TYPES = ["INT", "BIGINT", "SMALLINT", "STRING", "CHAR(5)", "DATE", "BOOLEAN", "DOUBLE",
                   "BYTES", "TIMESTAMP(3)"]


@st.composite
def partition_batches(draw: st.DrawFn) -> tuple[TableSchema, list[bytes], Predicate]:
    """A schema partitioned by 1-3 columns of `PARTITION_TYPES`, partition BinaryRows of it
    (NULLs, repeated values, some damaged, empty or of another arity) and a filter over its
    partition columns and a data column `z` (`stats_leaves`' functions and literals)."""
    types = draw(st.lists(st.sampled_from(PARTITION_TYPES), min_size=1, max_size=3))
    keys = tuple(f"p{i}" for i in range(len(types)))
    fields = tuple(DataField(i, k, t) for i, (k, t) in enumerate(zip(keys, types)))
    schema = TableSchema(0, (*fields, DataField(len(keys), "z", "INT")), keys, (), {}, len(keys))
    pools = [draw(st.lists(stat_values(t), min_size=1, max_size=4)) for t in types]
    raws = []
    for _ in range(draw(st.integers(0, 12))):
        values = [draw(st.none() | st.sampled_from(pool)) for pool in pools]
        try:
            raw = encode_binary_row(values, types)
        except Exception:                   # a day number beyond int32
            continue
        damage = draw(st.integers(0, 9))
        if damage == 0 and raw:
            at = draw(st.integers(0, len(raw) - 1))
            raw = raw[:at] + bytes([raw[at] ^ (1 << draw(st.integers(0, 7)))]) + raw[at + 1:]
        elif damage == 1:
            raw = draw(st.sampled_from([b"", raw[:-3], encode_binary_row([1], ["INT"])]))
        raws.append(raw)

    def leaf(column: int) -> st.SearchStrategy[Leaf]:
        name, data_type = (keys[column], types[column]) if column < len(keys) else ("z", "INT")
        literal = st.sampled_from(pools[column]) | _literals(data_type) if column < len(keys) \
            else _literals(data_type)
        return st.sampled_from(_PARTITION_FUNCTIONS).flatmap(lambda function: (
            st.just(Leaf(function, name)) if function in ("is_null", "is_not_null")
            else st.lists(literal, max_size=3).map(lambda ls: Leaf(function, name, tuple(ls)))
            if function in ("in_", "not_in")
            else st.tuples(literal, literal).map(lambda ls: Leaf(function, name, ls))
            if function == "between"
            else literal.map(lambda v: Leaf(function, name, (v,)))))

    leaves = st.integers(0, len(keys)).flatmap(leaf)
    where = draw(st.recursive(leaves, lambda children: (
        st.lists(children, max_size=3).map(lambda c: And(tuple(c)))
        | st.lists(children, max_size=3).map(lambda c: Or(tuple(c)))), max_leaves=5))
    return schema, list(dict.fromkeys(raws)), where


def stats_schemas(options: dict[str, str]) -> dict[int, TableSchema]:
    """Schema 0 and the current schema 1 of `STATS_FIELDS`, partitioned by `p`."""
    now = tuple(DataField(i, name, data_type) for i, name, data_type, _ in STATS_FIELDS)
    old = tuple(DataField(i, *before) for i, _, _, before in STATS_FIELDS if before is not None)
    return {0: TableSchema(0, old, ("p",), (), options, 11), 1: TableSchema(1, now, ("p",), (), options, 11)}


@st.composite
def stats_files(draw: st.DrawFn) -> tuple[dict[int, TableSchema], list[DataFile]]:
    """(the schemas by id, data files) with value statistics as manifests hold them: under
    schema 0 or 1, of all columns (names None, or the write columns), of shared tuples of some
    columns (one with types only Python reads, one naming an unknown column, none, one an
    equal tuple that is not the shared one), NULL bounds, null counts unknown or of another arity,
    missing or damaged rows (a flipped byte: lengths, arity, UTF-8, dates), none at all; files
    of a few partitions, sharing their partition dict as a snapshot's files do."""
    options = {}
    mode = draw(st.sampled_from([None, *STATS_MODES]))
    if mode is not None:
        options["metadata.stats-mode"] = mode
    for column in draw(st.lists(st.sampled_from(["s", "s_old", "d", "k"]), max_size=2)):
        options[f"fields.{column}.stats-mode"] = draw(st.sampled_from(STATS_MODES))
    schemas = stats_schemas(options)
    shared = {}
    for schema_id, schema in schemas.items():
        names = tuple(f.name for f in schema.fields)
        shared[schema_id] = [None, names, tuple(n for n in names if n in ("k", "s", "s_old", "d", "p")),
                             tuple(n for n in names if n in ("f", "b", "v", "c", "dt", "n")),
                             ("k", "ts", "x"), ("k", "zz"), (),
                             tuple(n for n in names if n in ("s", "s_old", "d"))]
    partitions = [{"p": "a"}, {"p": "b"}, {"p": None}, {"p": "p" * 20}]
    files = []
    for i in range(draw(st.integers(1, 14))):
        schema_id = draw(st.sampled_from([1, 1, 1, 0]))
        schema = schemas[schema_id]
        choice = draw(st.integers(0, len(shared[schema_id])))
        names = shared[schema_id][choice] if choice < len(shared[schema_id]) \
            else tuple(shared[schema_id][2])                    # equal, not the shared tuple
        write_cols = None
        if names is None and draw(st.integers(0, 4)) == 0:
            write_cols = tuple(draw(st.lists(st.sampled_from(shared[schema_id][1]), min_size=1,
                                             max_size=4, unique=True)))
        resolved = names or write_cols or tuple(f.name for f in schema.fields)
        types = [schema.by_name[n].type if n in schema.by_name else "INT" for n in resolved]

        def row() -> bytes | None:
            values = [draw(st.none() | stat_values(t)) for t in types]   # type: ignore[arg-type]
            try:
                raw = encode_binary_row(values, types)
            except SchemaError:
                return None
            damage = draw(st.sampled_from(["none"] * 6 + ["empty", "missing", "flip", "cut"]))
            if damage == "empty":
                return b""
            if damage == "missing":
                return None
            if damage == "flip":
                at = draw(st.integers(0, len(raw) - 1))
                return raw[:at] + bytes([raw[at] ^ (1 << draw(st.integers(0, 7)))]) + raw[at + 1:]
            if damage == "cut":
                return raw[:draw(st.integers(0, len(raw) - 1))]
            return raw

        minimum, maximum = row(), row()
        nulls = draw(st.sampled_from(["known", "known", "known", "none", "arity"]))
        null_counts = None if nulls == "none" else tuple(
            draw(st.none() | st.integers(0, 6)) for _ in range(len(resolved) + (nulls == "arity")))
        stats = None if draw(st.integers(0, 9)) == 0 else (minimum or b"", maximum or b"",
                                                            null_counts, names)
        partition = draw(st.sampled_from(partitions))
        files.append(DataFile(
            partition=partition, partition_path=f"p={partition['p']}", bucket=0, total_buckets=1,
            file_name=f"data-{i}.parquet", path=f"/t/p={partition['p']}/bucket-0/data-{i}.parquet",
            file_size=100, row_count=draw(st.integers(0, 6)), level=0, schema_id=schema_id,
            min_sequence_number=0, max_sequence_number=0, extra_files=(), embedded_index=None,
            external_path=None, delete_row_count=None, file_source=0, first_row_id=None,
            write_cols=write_cols, value_stats=stats))
    return schemas, files


@st.composite
def read_order_files(draw: st.DrawFn) -> list[DataFile]:
    """Data files whose `plan.read_order` keys often tie (few partitions, buckets, levels,
    sequence numbers, names; row ids None or not), now and then a number beyond 64 bits or
    of another type (a sort in C declines those)."""
    files = []
    odd = draw(st.sampled_from([None] * 8 + [2**64, -2**63 - 1, True, 1.5]))
    for i in range(draw(st.integers(0, 40))):
        path = draw(st.sampled_from(["dt=1", "dt=2", "dt=10", "", "dt=\u00e9"]))
        files.append(DataFile(
            partition={}, partition_path=path, bucket=draw(st.integers(-2, 2)), total_buckets=1,
            file_name=draw(st.sampled_from(["a", "b", "c", "\u00e9", f"data-{i}"])),
            path=f"/t/{path}/{i}", file_size=1, row_count=1, level=draw(st.integers(0, 3)),
            schema_id=0, min_sequence_number=draw(st.integers(-1, 2)), max_sequence_number=0,
            extra_files=(), embedded_index=None, external_path=None, delete_row_count=None,
            file_source=0, first_row_id=draw(st.none() | st.integers(0, 2)), write_cols=None))
    if files and odd is not None:
        at = draw(st.integers(0, len(files) - 1))
        field = draw(st.sampled_from(["bucket", "level", "min_sequence_number", "first_row_id"]))
        files[at] = dataclasses.replace(files[at], **{field: odd})
    return files


@st.composite
def coded_keys(draw: st.DrawFn) -> tuple[list[Any], list[int] | None, bool]:
    """(keys, positions or None, identity) for `merge._value_codes`: keys from a small pool
    (runs of one object, equal objects that are not the same, None), positions that repeat,
    jump back and count from the end; with `identity`, unhashable dicts among them."""
    identity = draw(st.booleans())
    pool: list[Any] = [None, b"a", b"ab", bytes(b"ab"[:1]) + b"b", 1, 1.0, "x", (1, b"a")]
    if identity:
        pool += [{}, {"p": 1}, [1]]
    keys: list[Any] = []
    for _ in range(draw(st.integers(0, 12))):
        key = draw(st.sampled_from(pool))
        keys += [key] * draw(st.integers(1, 4))
    positions = None
    if keys and draw(st.booleans()):
        positions = draw(st.lists(st.integers(-len(keys), len(keys) - 1), max_size=30))
    return keys, positions, identity


@st.composite
def file_paths(draw: st.DrawFn) -> list[str]:
    """Paths in runs of a directory, as a plan's files come (directories revisited, of one
    or several string kinds, nested, empty, a root, no slash at all, a
    `file:` URI, a name with a `?`; never an empty name)."""
    directories = ["/t/dt=1/bucket-0", "/t/dt=1/bucket-1", "/t/dt=\u00e9/bucket-0",
                   "/t/dt=\U0001f600/bucket-0", "file:/t/x", "file:///t/y", "", "rel",
                   "/t/dt=1/bucket-0/sub"]
    names = ["a.parquet", "\u00e9.orc", "\U0001f600", "b", "q?x"]
    paths: list[str] = []
    for _ in range(draw(st.integers(0, 10))):
        directory = draw(st.sampled_from(directories + [None]))
        for _ in range(draw(st.integers(1, 4))):
            name = draw(st.sampled_from(names))
            paths.append(name if directory is None else f"{directory}/{name}")
    return paths


@st.composite
def indexed_files(draw: st.DrawFn) -> tuple[dict[int, TableSchema], list[DataFile]]:
    """`stats_files` whose files embed file-index containers as a plan meets them: a few
    containers (bitmap V1 or V2 on `k` or `s`, of as many rows as the file, an empty entry),
    each shared by several files as one bytes object, or an equal copy (another object), or
    damaged (a flipped byte, cut short); some files without one."""
    schemas, files = draw(stats_files())
    containers: list[tuple[bytes, int]] = []
    for _ in range(draw(st.integers(1, 3))):
        column = draw(st.sampled_from(["k", "s"]))
        pool = [1, 2, 3, None] if column == "k" else ["a", "b", "p" * 17, None]
        values = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6))
        data_type = "BIGINT" if column == "k" else "STRING"
        blob = build_bitmap_index(data_type, values, version=draw(st.sampled_from([1, 2])))
        shape = draw(st.sampled_from([{"bitmap": blob}, {"bitmap": blob}, {"bitmap": None}]))
        containers.append((write_file_index({column: shape}), len(values)))
    out = []
    for data_file in files:
        kind = draw(st.sampled_from(["shared", "shared", "shared", "copy", "none", "damaged"]))
        if kind == "none":
            out.append(data_file)
            continue
        data, rows = draw(st.sampled_from(containers))
        if kind == "copy":
            data = bytes(bytearray(data))
        elif kind == "damaged":
            at = draw(st.integers(0, len(data) - 1))
            data = draw(st.sampled_from([data[:at], data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1:]]))
        out.append(dataclasses.replace(data_file, embedded_index=data, row_count=rows))
    return schemas, out


def index_predicates() -> st.SearchStrategy[Predicate]:
    """Filters an `indexed_files` container answers (`=` and IN on `k` or `s`, literals in its
    pools and not), alone or with a `stats_predicates` filter under AND or OR."""
    leaf = (st.sampled_from([1, 2, 3, 4]).map(lambda v: Leaf("equal", "k", (v,)))
            | st.lists(st.sampled_from(["a", "b", "p" * 17, "c"]), min_size=1, max_size=2).map(
                lambda values: Leaf("in_", "s", tuple(values))))
    return st.one_of(leaf, stats_predicates(),
                     st.tuples(leaf, stats_predicates()).map(lambda pair: And(pair)),
                     st.tuples(leaf, stats_predicates()).map(lambda pair: Or(pair)))
