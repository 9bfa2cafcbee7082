"""zlib's CRC32, which deletion-vector bins, btree and bitmap global index block trailers and
null bitmaps carry: ISA-L's (`isal`: carry-less multiplication, ~1 us for a 64 KiB block against
zlib 1.2's 15-35 us, which dominated a cold btree point lookup and a large vector's read), the
same values as `zlib.crc32`."""

from __future__ import annotations

from isal.isal_zlib import crc32

__all__ = ["crc32"]
