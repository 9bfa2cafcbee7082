"""Damaging the bitmap global index's LEB128 varints in place, for the tests that set its
counts and lengths to hostile values (test_bitmap_global_index.py, fuzz/test_robustness.py)."""

from __future__ import annotations

import zlib

from paimon_schema.layouts.bitmap_global_index import TRAILER


def set_var_len(data: bytes, at: int, width: int, value: int) -> bytes:
    """`data` with the `width`-byte varint at `at` holding `value`: encoded in at least that
    width (a shorter value padded with continuation bytes, as LEB128 allows), a longer one
    overwriting the bytes after it, so that nothing moves."""
    groups = [(value >> 7 * i) & 0x7F for i in range(max(width, -(-value.bit_length() // 7), 1))]
    raw = bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])
    return data[:at] + raw + data[at + len(raw):]


def fix_block_crcs(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """The trailer CRC of each block (offset, payload length) inside `data` recomputed (over
    the payload and the compression byte), so that damage inside gets past the trailer."""
    out = bytearray(data)
    for offset, length in spans:
        if 0 <= offset and 0 <= length and offset + length + TRAILER <= len(out):
            out[offset + length + 1:offset + length + 5] = zlib.crc32(out[offset:offset + length + 1]).to_bytes(4, "little")
    return bytes(out)
