"""Minimal inputs for the parse-side bugs the fuzz suite found, one test each. The first four
are regression tests since commit bb3b908 fixed them; the ones under "Open" were found by the
soak after that fix and fail until the library is fixed (nothing is skipped or xfailed). The
writer-side bugs are in test_writers_adversarial.py, the container round trip in
test_resources.py. Each names the contract it checks:
`ps.FormatError.offset` is an int inside the bytes handed to the function (never past their
end), `path` names the field, and both are relative to the bytes the caller passed.
"""

from __future__ import annotations

import decimal

import pytest

import paimon_schema as ps
from paimon_schema.layouts import roaring_bitmap as roaring

#: Container with one bitmap entry whose ofs_blob (at byte 41) says 256; the file has 90 bytes.
CONTAINER_BLOB_PAST_END = bytes.fromhex(
    "00054e4ed01a35ae000000010000003000000001000263300000000100066269746d6170000001000000002a"
    "0000000002000000010000000100000000010000000700000000000000100000000100000007ffffffffffffffff")
#: paimon-cpp/bitmap/tinyint_v2.bin cut to 44 bytes: its only block's first entry bitmap
#: starts at 66.
BITMAP_V2_CUT = bytes.fromhex(
    "0200000005000000010100000000000000160000000101000000000000000d00000001010000001600000014")
#: paimon-cpp/bitmap/tinyint_v1.bin cut to 19 bytes: the entry's bitmap would start at 41.
BITMAP_V1_CUT = bytes.fromhex("01000000050000000101000000000100000016")
#: Run cookie, 2 containers: an array container whose cardinality field says 100 (200 bytes)
#: but holds 2 bytes, then a run container: its run count "starts" at byte 213 of 21.
ROARING_RUN_AFTER_OVERSIZED = bytes.fromhex("3b3001000200006300010001000100010000000100")
#: An array container {3, 2, 4}: unsorted; pyroaring's validation rejects it.
ROARING_UNSORTED_ARRAY = bytes.fromhex("3a300000010000000000020010000000030002000400")
#: A container whose c0 bitmap blob (at byte 48) has version byte 7.
CONTAINER_BAD_BLOB_VERSION = bytes.fromhex(
    "00054e4ed01a35ae000000010000003000000001000263300000000100066269746d6170000000300000002a"
    "0000000007000000010000000100000000010000000700000000000000100000000100000007ffffffffffffffff")


def raised(call) -> ps.FormatError:
    with pytest.raises(ps.FormatError) as info:
        call()
    return info.value


@pytest.mark.parametrize("call, data", [
    (ps.FileIndexFile.parse, CONTAINER_BLOB_PAST_END),
    (lambda d: ps.evaluate(d, ps.col("c0") == 7, {"c0": "INT"}), CONTAINER_BLOB_PAST_END),
    (lambda d: list(ps.open_index("bitmap", d, "TINYINT").items()), BITMAP_V2_CUT),
], ids=["container blob", "evaluate container blob", "bitmap V2 entry bitmap"])
def test_positioned_read_past_the_end_is_located_inside_the_data(call, data: bytes) -> None:
    """Was: `parsing.located` reported where a positioned instance (`pos:`) would have started,
    e.g. offset 256 in a 90-byte file (a V2 bitmap reads its entries lazily: `items()`)."""
    exc = raised(lambda: call(data))
    assert exc.offset is not None and 0 <= exc.offset <= len(data), (exc.offset, len(data), str(exc))


@pytest.mark.parametrize("call, data", [
    (lambda d: roaring.deserialize(d), ROARING_RUN_AFTER_OVERSIZED),
    (lambda d: ps.open_index("bitmap", d, "TINYINT").equal(1), BITMAP_V1_CUT),
], ids=["run container after an oversized one", "bitmap V1 entry bitmap"])
def test_roaring_header_check_locates_inside_the_data(call, data: bytes) -> None:
    """Was: `roaring.serialized_size`'s `need(n, at, field)` reported `at` even when `at` was
    already past the end (a run container behind containers that claim more bytes than there
    are; a V1 entry whose bitmap offset lies past the end, via `_V1Reader._streamed`)."""
    exc = raised(lambda: call(data))
    assert exc.offset is not None and 0 <= exc.offset <= len(data), (exc.offset, len(data), str(exc))


def test_roaring_validation_error_has_a_path() -> None:
    """Was: when pyroaring's validation rejected the containers, `roaring.deserialize` raised a
    FormatError with `path=""` (so did the "bytes follow the roaring bitmap" error and
    `deserialize64`'s)."""
    exc = raised(lambda: roaring.deserialize(ROARING_UNSORTED_ARRAY))
    assert exc.path, str(exc)


@pytest.mark.parametrize("call", [
    lambda d: ps.evaluate(d, ps.col("c0") == 7, {"c0": "INT"}),
    lambda d: ps.evaluate(ps.FileIndexFile.parse(d), ps.col("c0") == 7, {"c0": "INT"}),
], ids=["bytes", "parsed container"])
def test_evaluate_locates_blob_errors_in_the_container(call) -> None:
    """Was: `evaluate` (and `top_n`) let a blob's FormatError through as `open_index` raised it:
    offset 0, path "version", i.e. the container's magic. The contract: offsets are relative
    to the bytes handed in."""
    exc = raised(lambda: call(CONTAINER_BAD_BLOB_VERSION))
    assert exc.offset == 48 and exc.path.startswith("head.columns[0].indexes[0].blob"), (exc.offset, exc.path)


# -- Open (found by the 100k-per-layout soak after bb3b908) -------------------------------------

#: Bitmap V2 (INT, 72 bytes) whose block entry's bitmap is at body offset 1081314 with
#: len_bitmap 0: the zero-length positioned read past the end succeeds (Kaitai seeks anywhere),
#: then the empty bitmap fails at its offset 0, re-based to 1081386.
BITMAP_V2_EMPTY_BITMAP_PAST_END = bytes.fromhex(
    "020000000200000001000000000100000001000000000010801000000001000000010000000000000000000101"
    "001000000000143a30000001000000000101001000000000000100")
#: Bitmap V2 (INT, 27 bytes): has_null, null bitmap of length 0 at 65599.
BITMAP_V2_EMPTY_NULL_BITMAP_PAST_END = bytes.fromhex("020000000000000000010000000000000000000000000001002500")
#: Container: column c0's bitmap blob has length 0 and ofs_blob 0x01000000 (byte 36); the
#: container parses (an empty blob needs no bytes), evaluate then locates the blob's error at
#: 16777216 + 0.
CONTAINER_EMPTY_BLOB_PAST_END = bytes.fromhex(
    "00054e4ed01a35ae000000010000003000000001000263300000000100066269746d6170010000000000000000000000")
#: Container: column s holds a (valid INT) bsi blob; the table says s is STRING.
CONTAINER_BSI_ON_STRING = bytes.fromhex(
    "00054e4ed01a35ae000000010000002c000000010001730000000100036273690000002c00000040000000000100"
    "0000020101000000000000000000000000000000013a3000000100000000000000100000000000000000013a3000"
    "00010000000000000010000000000000")


@pytest.mark.parametrize("call, data", [
    (lambda d: list(ps.open_index("bitmap", d, "INT").items()), BITMAP_V2_EMPTY_BITMAP_PAST_END),
    (lambda d: ps.open_index("bitmap", d, "INT").null_rows, BITMAP_V2_EMPTY_NULL_BITMAP_PAST_END),
    (lambda d: ps.evaluate(d, ps.col("c0") == 1, {"c0": "INT"}), CONTAINER_EMPTY_BLOB_PAST_END),
], ids=["bitmap V2 entry bitmap", "bitmap V2 null bitmap", "evaluate empty blob"])
def test_zero_length_read_past_the_end_is_located_inside_the_data(call, data: bytes) -> None:
    """Bug: a positioned read of 0 bytes past the end succeeds (ViewReader.seek goes anywhere
    and Kaitai's read_bytes(0) needs nothing), so the empty bitmap/blob fails later and its
    error is re-based to the claimed position: `bitmap._V2Reader._sized` (`within(path, pos)`)
    and `query`'s blob re-basing. Fix: make `parsing.ViewReader.seek` raise EOFError past
    `len(view)` (a positioned instance past the end then fails where bb3b908's clamp locates
    it), or refuse `ofs > len(data)` for zero lengths in `_sized`/`FileIndexFile.parse`."""
    exc = raised(lambda: call(data))
    assert exc.offset is not None and 0 <= exc.offset <= len(data), (exc.offset, len(data), str(exc))


def test_evaluate_reports_an_index_the_column_type_cannot_have_as_format_error() -> None:
    """Bug (or a decision to make): the container (untrusted bytes) claims a `bsi` index on a
    column the table types STRING; `evaluate` lets `open_index`'s SchemaError("the bsi index
    does not support STRING") escape, so a corrupt or hostile container raises something other
    than FormatError. Java's evaluator fails too. Suggested: `query._Readers.of` turns it into
    FormatError at `columns[0].indexes[0].index_type` ("bsi index on a STRING column")."""
    exc = raised(lambda: ps.evaluate(CONTAINER_BSI_ON_STRING, ps.col("s") == "a", {"s": "STRING"}))
    assert exc.path.startswith("head.columns[0].indexes[0]"), (exc.offset, exc.path)


@pytest.mark.parametrize("data, data_type", [
    (bytes.fromhex("02000000050000000101ffffffff00000012000000010001000000000001000e00000001000100"
                   "0001000000000000000f3b3000000100000300010001000300"), "SMALLINT"),
    (bytes.fromhex("020000000400000000010000000000000000000000003b3000000100000300000000000300"), "INT"),
], ids=["entry bitmap of length 0 past the end", "null bitmap past the end"])
def test_sized_bitmap_past_the_end_is_located_inside_the_data(data: bytes, data_type: str) -> None:
    """Found by the soak: a zero-length V2 bitmap read "succeeds" past the end, and its roaring
    error was placed at the bitmap's position (65838 in a 64-byte blob)."""
    def touch() -> None:
        reader = ps.open_index("bitmap", data, data_type)
        reader.equal(1), reader.is_null(), list(reader.items())
    exc = raised(touch)
    assert exc.offset is not None and 0 <= exc.offset <= len(data), (exc.offset, len(data))


@pytest.mark.parametrize("bad", [decimal.Decimal("sNaN"), [1], {1: 2}])
def test_range_bitmap_string_columns_refuse_unhashable_values(bad) -> None:
    """Found by CI's Hypothesis run: the range-bitmap STRING fast path numbered values with a
    dict before checking their type, so an unhashable value raised TypeError."""
    with pytest.raises(ps.SchemaError):
        ps.build_index("range-bitmap", "STRING", [bad])
