"""The `paimon-schema` command line, called in-process: dump, verify, query, demo.

Files are copies of Java-written fixtures (../shared/fixtures), corrupted where a test needs it;
column types of the fixture tables are those of their schemas (schema/schema-0 in each table).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from fixture_catalog import CONTAINERS, DELETION_VECTORS, TABLES
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap, BitMap64

import paimon_schema as ps
from paimon_schema.cli.main import Types, main
from paimon_schema.cli.presenters import bitmap_ranges
from paimon_schema.layouts import registry
from paimon_schema.query.predicate import Or
from paimon_schema.query.where import WhereError, parse_where, sql_text

DV_32 = "paimon/dv/dvindex-32"                        # bins {2,3} at (1, 24) and {1} at (33, 22)
CONTAINER_3COL = "paimon-cpp/file-index/bitmap_3col_container.bin"
CONTAINER_EMPTY_ENTRY = "paimon-cpp/file-index/java_empty_entry_container.bin"
BITMAP_INT_V2 = "paimon-rust/bitmap/java_int_v2.bin"  # -123456789 {0,3}, 42 {1}, nulls {2,4}
RANGE_INT = "paimon-rust/range-bitmap/java_int_v1.bin"  # [1, 3, 5, 7, 9, null, null, 10]
BSI_INT = "paimon-rust/bsi/java_int.bin"              # [null, -5, -2, 0, 3, 8, null]
BLOOM_BIGINT = "paimon-rust/bloom-filter/java_bigint_items10_fpp0.1.bin"   # {-1, 0, 1, 42}
PK_DV = f"{TABLES}/pk_with_bitmap_dv.db/pk_with_bitmap_dv"
PK_SIDECAR = f"{PK_DV}/bucket-0/data-bfa36b28-40e7-4026-893b-d23116973174-0.parquet.index"
PK_DV_FILE = f"{PK_DV}/index/index-daed25d2-8e68-45ba-aaad-ff342666ef27-0"   # deletes {0, 4}
RANGE_SIDECAR = next(p for p in CONTAINERS if "append_with_rangebitmap.db" in p)
MIXED_SIDECAR = next(p for p in CONTAINERS if "append_with_bsi_bitmap_bloomfilter" in p)

#: Column types of the fixture tables' sidecars (README section 6), by table directory.
BITMAP_TABLE = "f0:STRING,f1:INT,f2:INT,f3:DOUBLE"
WIDE_TABLE = "f0:STRING,f1:INT,f2:INT,f3:DOUBLE,f4:TIMESTAMP(9)"
ROW_TYPES = {
    "bitmap_3col_container": BITMAP_TABLE, "append_with_bitmap_no_embedding": BITMAP_TABLE,
    "pk_with_bitmap_dv": BITMAP_TABLE, "append_with_bloomfilter": WIDE_TABLE,
    "append_with_bsi": WIDE_TABLE,
    "append_with_rangebitmap": "f0:INT,f1:BIGINT,f2:FLOAT,f3:DOUBLE,f4:DATE",
}


def row_type_of(relpath: str) -> str | None:
    """The row type of a catalogued container (None: its only entry is an empty one)."""
    return next((t for table, t in ROW_TYPES.items() if table in relpath), None)


@pytest.fixture
def copy(shared_fixtures: Path, tmp_path: Path):
    """Copy a fixture into tmp_path, optionally changed by `mutate(bytearray)`."""

    def make(relpath: str, mutate=None, name: str = "file") -> str:
        data = bytearray((shared_fixtures / relpath).read_bytes())
        if mutate:
            mutate(data)
        path = tmp_path / name
        path.write_bytes(data)
        return str(path)

    return make


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- ranges -------------------------------------------------------------------------------------


def _naive_ranges(values: list[int]) -> list[list[int]]:
    ranges: list[list[int]] = []
    for v in values:
        if ranges and ranges[-1][1] == v:
            ranges[-1][1] = v + 1
        else:
            ranges.append([v, v + 1])
    return ranges


@pytest.mark.parametrize("bitmap", [
    BitMap(),
    BitMap([0]),
    BitMap([1, 2, 3, 100, 2**32 - 1]),
    BitMap(np.random.default_rng(7).integers(0, 5_000, 3_000).tolist()),
    BitMap64([5, 2**40, 2**40 + 1, 2**62]),
])
def test_bitmap_ranges_are_half_open_runs(bitmap, monkeypatch) -> None:
    expected = _naive_ranges(list(bitmap))
    assert bitmap_ranges(bitmap).tolist() == expected
    for chunk in (1, 7, 64):             # through the gaps, or slice by slice
        monkeypatch.setattr("paimon_schema.cli.presenters.RANGES_CHUNK", chunk)
        assert bitmap_ranges(bitmap).tolist() == expected


def test_a_dense_bitmap_of_two_billion_rows_is_read_through_its_gaps() -> None:
    rows = BitMap()
    rows.add_range(0, 2**31 - 1)
    rows.discard(5)
    assert bitmap_ranges(rows).tolist() == [[0, 5], [6, 2**31 - 1]]


# -- dump ---------------------------------------------------------------------------------------


def test_dump_detects_a_deletion_vector_file(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", copy(DV_32))
    assert code == 0
    assert "deletion vectors, version 1, 2 bins (63 bytes)" in out
    assert "bins[0]  range (1, 24)  32-bit  cardinality 2" in out and out.count("{2-3}") == 1
    assert "bins[1]  range (33, 22)  32-bit  cardinality 1" in out and "{1}" in out


def test_dump_detects_a_container(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", copy(CONTAINER_3COL))
    assert code == 0
    assert "file-index container, head 96 bytes, 3 columns, 3 entries (377 bytes)" in out
    assert "'f0': bitmap  at 96, 131 bytes" in out
    assert "'f2': bitmap  at 301, 76 bytes" in out


def test_dump_json_of_a_deletion_vector_file(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", "--json", copy(DV_32))
    doc = json.loads(out)
    assert code == 0 and doc["layout"] == "deletion-vectors" and doc["size"] == 63 and doc["version"] == 1
    assert [(b["offset"], b["length"], b["bitmap64"]) for b in doc["bins"]] == [
        (1, 24, False), (33, 22, False)]
    assert [b["positions"] for b in doc["bins"]] == [
        {"cardinality": 2, "ranges": [[2, 4]]}, {"cardinality": 1, "ranges": [[1, 2]]}]
    assert doc["warnings"] == []


def test_dump_json_of_a_container_with_an_empty_entry(capsys, copy) -> None:
    code, out, _ = run(capsys, "dump", "--json", copy(CONTAINER_EMPTY_ENTRY))
    doc = json.loads(out)
    assert code == 0 and doc["layout"] == "file-index" and doc["head_length"] == 47
    assert doc["columns"] == [{"name": "c1", "indexes": [
        {"type": "empty", "offset": -1, "length": 0, "blob_size": None}]}]


def test_dump_of_a_hash_index_needs_the_layout(capsys, tmp_path: Path) -> None:
    path = tmp_path / "hash"
    path.write_bytes(struct.pack(">4i", 7, -1, 2**31 - 1, 7))
    code, _, err = run(capsys, "dump", str(path))
    assert code == 2 and "--layout" in err
    code, out, _ = run(capsys, "dump", "--layout", "hash", str(path))
    assert code == 0 and "hash index, 4 ints (16 bytes)" in out and "7 -1 2147483647 7" in out
    code, out, _ = run(capsys, "dump", "--layout", "hash", "--json", str(path))
    assert json.loads(out)["hashes"] == [7, -1, 2**31 - 1, 7]




# -- verify -------------------------------------------------------------------------------------


def test_verify_every_catalogued_fixture(capsys, shared_fixtures: Path) -> None:
    files = [str(shared_fixtures / p) for p in [*DELETION_VECTORS, *CONTAINERS]]
    code, out, _ = run(capsys, "verify", *files)
    assert code == 0
    assert out.count("OK ") == len(files) and "FAIL" not in out


def _flip_second_magic(data: bytearray) -> None:
    data[37] ^= 0xFF


@pytest.mark.parametrize("mutate, location", [
    (_flip_second_magic, "offset=37 path=bins[1].magic"),
    (lambda d: d.__delitem__(slice(-3, None)), "offset=59 path=bins[1].checksum"),
    (lambda d: d.__setitem__(20, d[20] ^ 1), "offset=29 path=bins[0].checksum"),
])
def test_verify_locates_a_corrupted_file(capsys, copy, mutate, location: str) -> None:
    good, bad = copy(DV_32, name="good"), copy(DV_32, mutate, name="bad")
    code, out, _ = run(capsys, "verify", good, bad)
    assert code == 1
    assert f"OK {good} (deletion-vectors: 2 bins, 3 positions, 63 bytes)" in out
    assert f"FAIL {bad}: " in out and location in out


def test_verify_with_an_explicit_layout(capsys, copy) -> None:
    bad = copy(DV_32, lambda d: d.__setitem__(5, d[5] ^ 0xFF))   # no longer recognisable
    assert run(capsys, "verify", bad)[0] == 2
    code, out, _ = run(capsys, "verify", "--layout", "dv", bad)
    assert code == 1 and "offset=5 path=bins[0].magic" in out


def test_verify_fails_on_what_java_does_not_write(capsys, copy) -> None:
    def add_head_slack(data: bytearray) -> None:         # len_head + 2, two bytes of slack
        head = struct.unpack_from(">i", data, 12)[0]
        struct.pack_into(">i", data, 12, head + 2)
        data[head:head] = b"\0\0"

    path = copy(CONTAINER_EMPTY_ENTRY, add_head_slack)
    code, out, _ = run(capsys, "verify", path)      # readable, but Java writes no slack: exit 1
    assert code == 1 and out.startswith(f"FAIL {path} (file-index: ")
    assert f"FAIL {path}: 2 unused bytes at the end of the head" in out.splitlines()


def test_verify_a_truncated_hash_index(capsys, tmp_path: Path) -> None:
    path = tmp_path / "hash"
    path.write_bytes(struct.pack(">2i", 1, 2)[:-1])
    code, out, _ = run(capsys, "verify", "--layout", "hash", str(path))
    assert code == 1 and "offset=4 path=hashes[1]" in out


def test_an_unreadable_file_is_a_usage_error(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "verify", str(tmp_path / "missing"))
    assert code == 2 and "cannot read" in out


# -- index blobs --------------------------------------------------------------------------------


def test_dump_a_bitmap_blob(capsys, shared_fixtures: Path) -> None:
    blob = str(shared_fixtures / BITMAP_INT_V2)
    code, out, _ = run(capsys, "dump", "--layout", "bitmap", "--type", "INT", blob)
    assert code == 0
    assert "bitmap index (INT), V2, 5 rows, 2 keys, null rows {2, 4} (102 bytes)" in out
    assert "\n  -123456789  {0, 3}\n  42  {1}\n" in out
    code, out, _ = run(capsys, "dump", "--layout", "bitmap", "--type", "INT", "--json", blob)
    doc = json.loads(out)
    assert (doc["layout"], doc["index_type"], doc["data_type"], doc["version"]) == (
        "bitmap", "bitmap", "INT", 2)
    assert doc["null_rows"] == {"cardinality": 2, "ranges": [[2, 3], [4, 5]]}
    assert doc["keys"] == [
        {"value": -123456789, "rows": {"cardinality": 2, "ranges": [[0, 1], [3, 4]]}},
        {"value": 42, "rows": {"cardinality": 1, "ranges": [[1, 2]]}}]


def test_dump_a_range_bitmap_blob(capsys, shared_fixtures: Path) -> None:
    blob = str(shared_fixtures / RANGE_INT)
    code, out, _ = run(capsys, "dump", "--layout", "range-bitmap", "--type", "INT", blob)
    assert code == 0
    assert ("range-bitmap index (INT), 8 rows, 6 keys, 1 chunk, 3 slices, min 1, max 10, "
            "null rows {5-6} (210 bytes)") in out
    assert "\n  5  {2}\n" in out and "\n  10  {7}" in out
    doc = json.loads(run(capsys, "dump", "--layout", "range-bitmap", "--type", "INT", "--json",
                         blob)[1])
    assert (doc["num_keys"], doc["num_chunks"], doc["num_slices"], doc["min"], doc["max"]) == (
        6, 1, 3, 1, 10)
    assert [k["value"] for k in doc["keys"]] == [1, 3, 5, 7, 9, 10]


def test_dump_a_bsi_blob(capsys, shared_fixtures: Path) -> None:
    blob = str(shared_fixtures / BSI_INT)
    code, out, _ = run(capsys, "dump", "--layout", "bsi", "--type", "INT", blob)
    assert code == 0
    assert "bsi index (INT), 7 rows, values -5 .. 8, null rows {0, 6} (207 bytes)" in out
    assert "positive part: min 0, max 8, 4 slices, rows {3-5}" in out
    assert "negative part: min 0, max 5, 3 slices, rows {1-2}" in out
    assert "\n  -5  {1}\n  -2  {2}\n  0  {3}\n  3  {4}\n  8  {5}" in out
    doc = json.loads(run(capsys, "dump", "--layout", "bsi", "--type", "INT", "--json", blob)[1])
    assert doc["negative"] == {"min": 0, "max": 5, "num_slices": 3,
                               "rows": {"cardinality": 2, "ranges": [[1, 3]]}}
    assert [v["value"] for v in doc["values"]] == [-5, -2, 0, 3, 8]


def test_dump_a_bloom_filter_blob(capsys, shared_fixtures: Path) -> None:
    blob = str(shared_fixtures / BLOOM_BIGINT)
    code, out, _ = run(capsys, "dump", "--layout", "bloom-filter", "--type", "BIGINT", blob)
    assert code == 0 and "bloom-filter index (BIGINT), k 3, 48 bits, 9 set (18.8%)" in out
    doc = json.loads(run(capsys, "dump", "--layout", "bloom-filter", "--type", "BIGINT",
                         "--json", blob)[1])
    assert (doc["num_hash_functions"], doc["num_bits"], doc["set_bits"]) == (3, 48, 9)


def test_a_long_dump_is_abbreviated(capsys, tmp_path: Path) -> None:
    path = tmp_path / "blob"                    # 30 keys; key 0 in 50 separate ranges
    path.write_bytes(ps.build_index("bitmap", "INT", [0, 1] * 50 + list(range(2, 30))))
    code, out, _ = run(capsys, "dump", "--layout", "bitmap", "--type", "INT", str(path))
    assert code == 0 and "\n  … (10 more)" in out and out.count("\n  ") == 21
    assert "  0  {0, 2, 4," in out and "… (30 more)}" in out


@pytest.mark.parametrize("blob, layout, data_type", [
    (BITMAP_INT_V2, "bitmap", "INT"), (RANGE_INT, "range-bitmap", "INT"), (BSI_INT, "bsi", "INT"),
    (BLOOM_BIGINT, "bloom-filter", "BIGINT"),
    ("paimon-cpp/file_index/bitmap-index-v1", "bitmap", "STRING"),
    ("paimon-rust/bitmap/java_float_v2.bin", "bitmap", "FLOAT"),
    ("paimon-cpp/bsi/timestamp9.bin", "bsi", "TIMESTAMP(9)"),
])
def test_verify_index_blobs(capsys, shared_fixtures: Path, blob: str, layout: str,
                            data_type: str) -> None:
    code, out, _ = run(capsys, "verify", "--layout", layout, "--type", data_type,
                       str(shared_fixtures / blob))
    assert code == 0 and out.startswith("OK ") and f"({layout}: " in out and "WARN" not in out


def test_an_index_blob_needs_a_fitting_type(capsys, shared_fixtures: Path) -> None:
    blob = str(shared_fixtures / BSI_INT)
    code, _, err = run(capsys, "dump", "--layout", "bsi", blob)
    assert code == 2 and "--layout bsi needs --type DATA_TYPE" in err
    code, _, err = run(capsys, "dump", "--layout", "bsi", "--type", "STRING", blob)
    assert code == 2 and "bsi index does not support STRING" in err
    code, _, err = run(capsys, "dump", "--layout", "bsi", "--type", "INTEGR", blob)
    assert code == 2 and "--type: " in err and "Traceback" not in err


def test_verify_a_corrupted_bitmap_blob(capsys, copy) -> None:
    bad = copy(BITMAP_INT_V2, lambda d: d.__delitem__(slice(-5, None)))
    code, out, _ = run(capsys, "verify", "--layout", "bitmap", "--type", "INT", bad)
    assert code == 1 and f"FAIL {bad}: " in out and "path=index." in out


# -- containers with types ----------------------------------------------------------------------


def test_verify_opens_every_blob_of_the_catalogued_containers(capsys,
                                                              shared_fixtures: Path) -> None:
    for relpath, (_, entries) in CONTAINERS.items():
        row_type = row_type_of(relpath)
        options = ["--row-type", row_type] if row_type else []
        code, out, _ = run(capsys, "verify", *options, str(shared_fixtures / relpath))
        blobs = [e for e in entries if e[1] != "empty"]
        assert code == 0 and "WARN" not in out, (relpath, out)
        assert out.count("\n   '") == len(blobs), (relpath, out)


def test_verify_without_types_says_blobs_were_not_checked(capsys, shared_fixtures: Path) -> None:
    code, out, _ = run(capsys, "verify", str(shared_fixtures / CONTAINER_3COL))
    assert code == 0 and "index blobs not checked: pass --row-type" in out
    code, out, _ = run(capsys, "verify", "--row-type", "f0:STRING",
                       str(shared_fixtures / CONTAINER_3COL))
    assert code == 0 and "'f0' bitmap: V1, 8 rows, 5 keys, 0 null rows" in out
    assert "not checked: no type for 'f1', 'f2'" in out


def test_verify_locates_a_corrupted_blob_in_its_container(capsys, copy) -> None:
    def corrupt_f1(data: bytearray) -> None:        # f1's V1 bitmap blob: 74 bytes at 227
        data[227 + 60:227 + 74] = b"\xff" * 14

    bad = copy(CONTAINER_3COL, corrupt_f1)
    code, out, _ = run(capsys, "verify", "--type", "INT", "--row-type", "f0:STRING", bad)
    assert code == 1 and f"FAIL {bad}: " in out
    assert "path=head.columns[1].indexes[0].blob.index." in out
    offset = int(out.split("offset=")[1].split()[0])
    assert 227 <= offset < 227 + 74


def test_dump_a_container_with_its_blobs(capsys, shared_fixtures: Path) -> None:
    sidecar = str(shared_fixtures / MIXED_SIDECAR)
    code, out, _ = run(capsys, "dump", "--row-type", WIDE_TABLE, sidecar)
    assert code == 0
    assert "\n  'f1': bloom-filter  at 599524, 599071 bytes; bitmap  at 1198595" in out
    assert "\n    bitmap index (STRING), V2, 8 rows, 5 keys, no null rows\n" in out
    assert "\n      'Alice'  {0, 7}\n" in out
    assert "\n    bsi index (INT), 8 rows, values -3 .. 2, null rows {7}\n" in out
    assert "\n      2025-04-25 01:00:02.000123  {0, 6}\n" in out   # TIMESTAMP(9) keys, in micros
    code, out, _ = run(capsys, "dump", "--row-type", WIDE_TABLE, "--json", sidecar)
    f2 = json.loads(out)["columns"][2]
    assert [i["type"] for i in f2["indexes"]] == ["bloom-filter", "bitmap", "bsi"]
    assert f2["indexes"][2]["index"]["values"][0] == {
        "value": -3, "rows": {"cardinality": 1, "ranges": [[1, 2]]}}
    assert f2["indexes"][0]["index"]["num_hash_functions"] == 3


def test_dump_shows_dates_and_floats_readably(capsys, shared_fixtures: Path) -> None:
    code, out, _ = run(capsys, "dump", "--row-type", ROW_TYPES["append_with_rangebitmap"],
                       str(shared_fixtures / RANGE_SIDECAR))
    assert code == 0 and "min 2024-01-03, max 2024-01-17" in out and "min 1.1, max 6.6" in out


@pytest.mark.parametrize("row_type, message", [
    ("f0", "is not COLUMN:TYPE"),
    ("f0:INT,f0:INT", "column 'f0' is given twice"),
    ("f0:NOPE", "unsupported data type 'NOPE'"),
    (":INT", "is not COLUMN:TYPE"),
])
def test_a_malformed_row_type_is_a_usage_error(capsys, shared_fixtures: Path, row_type: str,
                                               message: str) -> None:
    code, _, err = run(capsys, "verify", "--row-type", row_type,
                       str(shared_fixtures / CONTAINER_3COL))
    assert code == 2 and message in err


def test_row_types_keep_commas_in_parentheses() -> None:
    from paimon_schema.cli.main import parse_row_type

    assert parse_row_type("a:DECIMAL(10, 2), `m[k]`:STRING, x:y:INT") == {
        "a": "DECIMAL(10, 2)", "m[k]": "STRING", "x:y": "INT"}


# -- WHERE --------------------------------------------------------------------------------------

TYPES = Types(row_type={"a": "INT", "b": "STRING", "c": "DOUBLE", "d": "DATE", "ok": "BOOLEAN",
                        "t": "TIMESTAMP(3)", "m[k]": "BIGINT", "p": "DECIMAL(5, 2)",
                        "bin": "BYTES", "名前": "STRING"})
a, b = ps.col("a"), ps.col("b")


@pytest.mark.parametrize("where, expected", [
    ("a = 5", a == 5),
    ("a <> 5", a != 5),
    ("a != -5", a != -5),
    ("a = - 5", a == -5),
    ("a < 5 AND a >= 1", (a < 5) & (a >= 1)),
    ("a <= 5 OR a > 9", (a <= 5) | (a > 9)),
    ("a IN (1, 2, 3)", a.isin([1, 2, 3])),
    ("a NOT IN (1)", a.not_in([1])),
    ("b IS NULL", b.is_null()),
    ("b IS NOT NULL", b.is_not_null()),
    ("a BETWEEN 1 AND 5", a.between(1, 5)),
    ("a NOT BETWEEN 1 AND 5", (a < 1) | (a > 5)),
    ("NOT a = 5", a != 5),
    ("NOT (a = 5 OR b = 'x')", (a != 5) & (b != "x")),
    ("NOT (a BETWEEN 1 AND 5 AND b = 'x')", Or((a < 1, a > 5, b != "x"))),   # one flat OR
    ("not not a = 5", a == 5),
    ("a = 1 AND b = 'x' OR a = 2", ((a == 1) & (b == "x")) | (a == 2)),
    ("a = 1 AND (b = 'x' OR a = 2)", (a == 1) & ((b == "x") | (a == 2))),
    ("b = 'it''s'", b == "it's"),
    ("b = ''", b == ""),
    ("b IN ('東京', '😀')", b.isin(["東京", "😀"])),
    ("a = NULL", a == None),                                # noqa: E711  Java's NULL literal
    ("c = 1.5e3", ps.col("c") == 1500.0),
    ("c = '-Infinity'", ps.col("c") == float("-inf")),
    ("d >= DATE '2024-01-31'", ps.col("d") >= dt.date(2024, 1, 31)),
    ("d < '2024-02-01'", ps.col("d") < dt.date(2024, 2, 1)),
    ("t = TIMESTAMP '2024-01-31 12:00:00.5'", ps.col("t") == dt.datetime(2024, 1, 31, 12, 0, 0,
                                                                            500000)),
    ("ok = TRUE", ps.col("ok") == True),                    # noqa: E712
    ("`m[k]` = 9007199254740993", ps.col("m[k]") == 9007199254740993),
    ("p = 1.25", ps.col("p") == decimal.Decimal("1.25")),
    ("bin = X'00ff'", ps.col("bin") == b"\x00\xff"),
    ("名前 = 'x'", ps.col("名前") == "x"),
])
def test_where_builds_the_predicate(where: str, expected) -> None:
    got = parse_where(where, TYPES)
    assert got == expected
    assert parse_where(sql_text(got), TYPES) == got


def test_where_reads_nan_and_keeps_names_case_sensitive() -> None:
    nan = parse_where("c = 'NaN'", TYPES)
    assert nan.function == "equal" and nan.literals[0] != nan.literals[0]
    assert sql_text(nan) == "c = 'NaN'"
    with pytest.raises(WhereError, match="no type for column 'A'"):
        parse_where("A = 1", TYPES)


@pytest.mark.parametrize("where, message", [
    ("", "empty WHERE clause"),
    ("a =", "expected a literal"),
    ("a = 1 b = 2", "unexpected 'b' (missing AND/OR?)"),
    ("(a = 1", "expected ')'"),
    ("a = 1)", "unexpected ')'"),
    ("b = 'open", "unterminated string"),
    ("`m[k] = 1", "unterminated quoted name"),
    ("a = 1 ; DROP TABLE t", "unexpected character ';'"),
    ("a == 1", "expected a literal"),
    ("a = 'x'", "column 'a': INT takes an integer"),
    ("a = 1.5", "INT takes an integer"),
    ("a = 3000000000", "out of range for a 32-bit integer"),
    ("b = 5", "STRING takes a 'quoted string'"),
    ("d = '2024-13-01'", "DATE takes ISO text"),
    ("ok = 1", "BOOLEAN takes TRUE or FALSE"),
    ("a = TRUE", "TRUE/FALSE is not a INT value"),
    ("p = 12345.5", "more digits than DECIMAL precision"),
    ("bin = X'0'", "X'0' needs pairs of hex digits"),
    ("a IN ()", "expected a literal"),
    ("a IN (1 2)", "expected ',' or ')' in the IN list"),
    ("a BETWEEN 1", "expected AND in BETWEEN"),
    ("a IS 5", "expected NULL after IS"),
    ("a NOT 5", "expected IN or BETWEEN after NOT"),
    ("a LIKE 'x'", "expected an operator"),
    ("AND = 1", "expected a column name"),
    ("5 = a", "expected a column name"),
    ("zz = 1", "no type for column 'zz'"),
    ("(" * 200 + "a = 1" + ")" * 200, "nested more than 64 deep"),
    ("NOT " * 200 + "a = 1", "nested more than 64 deep"),
])
def test_a_malformed_where_is_a_usage_error(capsys, shared_fixtures: Path, where: str,
                                            message: str) -> None:
    with pytest.raises(WhereError) as caught:
        parse_where(where, TYPES)
    assert message in str(caught.value)
    code, out, err = run(capsys, "query", str(shared_fixtures / CONTAINER_3COL),
                         "--row-type", ",".join(f"`{c}`:{t}" for c, t in TYPES.row_type.items()),
                         "--where", where)
    assert code == 2 and out == "" and message in err and "Traceback" not in err
    assert err.rstrip().endswith("^")                     # points at the place


def test_a_long_where_parses_flat() -> None:
    predicate = parse_where(" AND ".join(["a = 1"] * 3000), TYPES)
    assert len(predicate.children) == 3000


WHERE_WORDS = ["a", "b", "`m[k]`", "d", "=", "<>", "<", ">=", "(", ")", ",", "AND", "OR", "NOT",
               "IN", "IS", "NULL", "BETWEEN", "TRUE", "1", "-2.5", "'x'", "'it''s'", "DATE",
               "'2024-01-01'", "X'0f'", "'", "`", ";"]


@given(st.lists(st.sampled_from(WHERE_WORDS), max_size=14).map(" ".join) | st.text(max_size=30))
def test_where_never_raises_anything_but_a_where_error(where: str) -> None:
    try:
        predicate = parse_where(where, TYPES)
    except WhereError:
        return
    if "NaN" not in where:
        assert parse_where(sql_text(predicate), TYPES) == predicate


# -- query --------------------------------------------------------------------------------------


def query(capsys, relpath: str, shared_fixtures: Path, *args: str,
          row_type: str = BITMAP_TABLE) -> tuple[int, str, str]:
    return run(capsys, "query", str(shared_fixtures / relpath), "--row-type", row_type, *args)


@pytest.mark.parametrize("where, answer", [
    ("f0 = 'Alice'", "ROWS 2 {0, 7}"),
    ("f1 = 10 AND f2 = 1", "ROWS 3 {0-1, 5}"),
    ("f0 IN ('Bob', 'Lucy') OR f2 IS NULL", "ROWS 4 {1, 4-5, 7}"),
    ("NOT (f1 = 10)", "ROWS 3 {4, 6-7}"),
    ("f2 <> 1", "ROWS 4 {2-3, 6-7}"),              # the bitmap's != keeps the null row 7
    ("f0 = 'Nobody'", "SKIP (no row can match: skip the file)"),
    ("f1 > 10", "REMAIN (the indexes cannot narrow the rows: read the whole file)"),
    ("f3 = 1.5", "REMAIN"),                         # no index on f3
])
def test_query_a_container(capsys, shared_fixtures: Path, where: str, answer: str) -> None:
    code, out, _ = query(capsys, CONTAINER_3COL, shared_fixtures, "--where", where)
    assert code == 0 and f"bitmap_3col_container.bin: {answer}" in out


def test_query_json_and_the_echoed_predicate(capsys, shared_fixtures: Path) -> None:
    code, out, _ = query(capsys, MIXED_SIDECAR, shared_fixtures, "--where",
                         "NOT (f1 < 100 OR f4 IS NULL)", row_type=WIDE_TABLE)
    assert code == 0 and "  WHERE f1 >= 100 AND f4 IS NOT NULL" in out
    code, out, _ = query(capsys, MIXED_SIDECAR, shared_fixtures, "--where",
                         "f4 BETWEEN '2025-01-01' AND '2026-01-01'", "--json",
                         row_type=WIDE_TABLE)
    doc = json.loads(out)
    assert code == 0 and doc["result"] == "rows"
    assert doc["rows"] == {"cardinality": 4, "ranges": [[0, 3], [6, 7]]}
    assert doc["query"] == ("WHERE f4 BETWEEN TIMESTAMP '2025-01-01 00:00:00' AND "
                            "TIMESTAMP '2026-01-01 00:00:00'")


def test_query_with_a_deletion_vector(capsys, shared_fixtures: Path) -> None:
    dv = str(shared_fixtures / PK_DV_FILE)
    for dv_range in ([], ["--dv-range", "1:24"]):
        code, out, _ = query(capsys, PK_SIDECAR, shared_fixtures, "--where", "f1 = 10",
                             "--dv", dv, *dv_range, "--row-count", "8")
        assert code == 0 and "ROWS 4 of 8 {1-3, 5}" in out       # {0-3, 5} less {0, 4}
        assert "32-bit, 2 deleted rows" in out
    code, out, _ = query(capsys, PK_SIDECAR, shared_fixtures, "--where", "f1 = 10", "--json",
                         "--dv", dv, "--row-count", "8")
    doc = json.loads(out)
    assert doc["deletion_vector"]["positions"] == {"cardinality": 2,
                                                   "ranges": [[0, 1], [4, 5]]}


@pytest.mark.parametrize("args, answer", [
    (["--order-by", "f0"], "ROWS 3 {1-3}"),
    (["--order-by", "f0", "--desc"], "ROWS 3 {0, 4, 7}"),
    (["--order-by", "f0", "--nulls-first"], "ROWS 3 {1, 5-6}"),
    (["--order-by", "f4", "--desc"], "ROWS 3 {0, 4, 7}"),          # DATE
])
def test_query_top_n(capsys, shared_fixtures: Path, args: list[str], answer: str) -> None:
    code, out, _ = query(capsys, RANGE_SIDECAR, shared_fixtures, "--top-n", "3", *args,
                         row_type=ROW_TYPES["append_with_rangebitmap"])
    assert code == 0 and answer in out, out
    assert "ORDER BY" in out


@pytest.mark.parametrize("args, message", [
    ([], "pass either --where or --top-n"),
    (["--where", "f1 = 1", "--top-n", "3"], "pass either --where or --top-n"),
    (["--top-n", "3"], "--top-n needs --order-by"),
    (["--where", "f1 = 1", "--desc"], "go with --top-n"),
    (["--where", "f1 = 1", "--dv-range", "1:24"], "--dv-range goes with --dv"),
    (["--where", "f1 = 1", "--dv", "x"], "--dv needs --row-count"),
    (["--where", "f1 = 1", "--dv", "x", "--row-count", "8", "--dv-range", "one"],
     "is not OFFSET:LENGTH"),
])
def test_query_usage_errors(capsys, shared_fixtures: Path, args: list[str], message: str) -> None:
    code, _, err = query(capsys, CONTAINER_3COL, shared_fixtures, *args)
    assert code == 2 and message in err


def test_query_a_dv_file_with_several_bins_needs_the_range(capsys,
                                                           shared_fixtures: Path) -> None:
    code, _, err = query(capsys, CONTAINER_3COL, shared_fixtures, "--where", "f1 = 10",
                         "--dv", str(shared_fixtures / DV_32), "--row-count", "8")
    assert code == 2 and "holds 2 bins: pass --dv-range OFFSET:LENGTH (its ranges: 1:24, 33:22)" \
        in err


def test_query_needs_a_container(capsys, shared_fixtures: Path, copy) -> None:
    code, _, err = query(capsys, DV_32, shared_fixtures, "--where", "f1 = 1")
    assert code == 2 and "query needs a file-index container" in err
    code, out, _ = query(capsys, CONTAINER_3COL, shared_fixtures, "--where", "f1 = 10",
                         row_type="f1:INT")              # only the columns asked about
    assert code == 0 and "ROWS 5 {0-3, 5}" in out
    bad = copy(CONTAINER_3COL, lambda d: d.__delitem__(slice(100, None)))
    code, _, err = run(capsys, "query", bad, "--row-type", BITMAP_TABLE, "--where", "f1 = 1")
    assert code == 1 and "offset=" in err


# -- demo ---------------------------------------------------------------------------------------


def test_demo_end_to_end(capsys, java_reference, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "demo", "--keep", str(tmp_path))
    assert code == 0, out
    assert "MISMATCH" not in out and out.count(" 0 mismatched") == 3
    assert (tmp_path / "dv-large").stat().st_size > 65536
    kept = {p.name for p in tmp_path.iterdir()}
    assert {"dv-empty", "hash-edges", "container-indexes"} <= kept
    assert {"ours-container", "ours-dv-large-64", "ours-qty.bsi", "ours-day.range-bitmap"} <= kept
    # our files are Java's where the jar writes them, and Java reads them
    assert "file-index    ours-container" in out and "ours-city.bitmap-v1" in out
    code, out, _ = run(capsys, "verify", "--row-type", "id:BIGINT,city:STRING,qty:INT,day:DATE",
                       str(tmp_path / "ours-container"))
    assert code == 0 and out.count("\n   '") == 12 and "WARN" not in out


def test_demo_without_java_says_why(capsys, monkeypatch) -> None:
    from paimon_schema.selfcheck.reference import JavaReference, ReferenceUnavailable

    def unavailable() -> JavaReference:
        raise ReferenceUnavailable("'java' not found on PATH")

    monkeypatch.setattr(JavaReference, "get", unavailable)
    code, out, _ = run(capsys, "demo")
    assert code == 1 and "'java' not found on PATH" in out


def test_pipeline_runs_the_spark_job(capsys, monkeypatch) -> None:
    """`paimon-schema pipeline` is the README's main job (run whole in tests/spark)."""
    from paimon_schema.selfcheck import pipeline

    calls = []
    monkeypatch.setattr(pipeline, "main", lambda argv: calls.append(argv) or 1)
    code, _, _ = run(capsys, "pipeline", "--rows", "1234")
    assert code == 1 and calls == [["--rows", "1234"]]


# -- specs as documentation ---------------------------------------------------------------------


def test_layouts_lists_every_spec(capsys, tmp_path: Path) -> None:
    """The files `dump --layout` takes, one a line; the embedded pieces on the last line."""
    code, out, _ = run(capsys, "layouts")
    assert code == 0
    files, embedded = out.split("\n\n")
    names = [line.split()[0] for line in files.splitlines()]
    pieces = embedded.strip().rpartition(": ")[2].split(", ")
    specs = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "formats").glob("*.ksy"))
    assert sorted(registry.LAYOUTS[n].spec for n in names + pieces) == specs    # one name per spec
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    for name in names:          # each is a layout dump reads (exit 1: an empty file is bad bytes)
        code, _, err = run(capsys, "dump", "--layout", name, "--type", "INT", str(empty))
        assert code in (0, 1) and "not a file of its own" not in err, (name, err)
    for name in pieces:
        assert run(capsys, "diagram", name)[0] == 0


def test_diagram_writes_the_checked_in_svg(capsys, tmp_path: Path) -> None:
    target = tmp_path / "dv.svg"
    code, out, _ = run(capsys, "diagram", "deletion_vectors", "-o", str(target))
    assert code == 0 and target.read_text().lstrip().startswith("<?xml")
    assert "DeletionVectors" in target.read_text()
    code, _, err = run(capsys, "diagram", "nope")
    assert code == 2 and "unknown layout" in err


def test_hex_dump_shows_offsets_bytes_and_values(capsys, shared_fixtures: Path) -> None:
    code, out, _ = run(capsys, "dump", "--hex", str(shared_fixtures / "paimon/dv/dvindex-32"))
    assert code == 0
    assert "00000001  00 00 00 18" in out and "bins[0].len_payload = 24" in out
    assert "bins[1].checksum" in out
    blob = str(shared_fixtures / "paimon-rust/bitmap/java_int_v2.bin")
    code, out, _ = run(capsys, "dump", "--hex", "--layout", "bitmap", "--type", "INT", blob)
    assert code == 0 and "index.blocks[0].block.entries[1].key.int_value = 42" in out
    code, _, err = run(capsys, "dump", "--hex", "--layout", "bitmap", blob)
    assert code == 2 and "--type" in err
    code, _, err = run(capsys, "dump", "--hex", "--layout", "bitmap", "--type", "BYTES", blob)
    assert code == 2


def test_hex_dump_of_a_corrupt_file_is_located(capsys, tmp_path: Path, shared_fixtures: Path) -> None:
    bad = tmp_path / "bad"
    data = bytearray((shared_fixtures / "paimon/dv/dvindex-32").read_bytes())
    data[5] ^= 0xFF
    bad.write_bytes(bytes(data))
    code, _, err = run(capsys, "dump", "--hex", "--layout", "dv", str(bad))
    assert code == 1 and "bins[0].magic" in err


def test_query_errors_name_the_file_and_a_missing_file_comes_first(capsys, tmp_path: Path,
                                                                   shared_fixtures: Path) -> None:
    missing = str(tmp_path / "missing.index")
    code, _, err = run(capsys, "query", missing, "--where", "a = 1")     # and no --row-type
    assert code == 2 and err.startswith(f"query: {missing}: cannot read") and "type" not in err
    container = str(shared_fixtures / CONTAINER_3COL)
    for args in (["--where", "a = 1"], ["--where", "f1 = 1", "--row-type", "f1:INT", "--top-n", "1"],
                 ["--where", "f1 = 1", "--row-type", "f1:INT", "--dv", missing, "--row-count", "8"]):
        code, _, err = run(capsys, "query", container, *args)
        assert code == 2 and err.startswith(f"query: {container}: "), (args, err)
    assert f"--dv {missing}: cannot read" in err
