"""Java's `VarLengthIntUtils` (`encodeInt` / `encodeLong`, `writeVarLenInt` / `writeVarLenLong`):
unsigned LEB128 of a non-negative value, the lengths, counts and offsets of the btree and bitmap
global indexes (the specs' `var_len_int` / `var_len_long`)."""

from __future__ import annotations

__all__ = ["encode", "read"]


def encode(value: int) -> bytes:
    """The varint of a non-negative `value`."""
    if value < 0x4000:                          # lengths and small offsets: no loop
        return bytes((value,)) if value < 0x80 else bytes((value & 0x7F | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read(data: bytes | memoryview, pos: int, max_bytes: int = 9) -> tuple[int, int]:
    """(value, position after it) of the varint at `pos`: IndexError when it runs past the
    data, ValueError past `max_bytes` bytes (5 for an int, 9 for a non-negative long)."""
    value = data[pos]
    if value < 0x80:                            # one byte: most lengths and counts
        return value, pos + 1
    value = shift = 0
    for i in range(max_bytes):
        b = data[pos + i]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos + i + 1
        shift += 7
    raise ValueError(f"a var-len integer longer than {max_bytes} bytes")
