"""zlib's CRC32, which Paimon's block trailers and null bitmaps carry: the compiled kernel's
(`kernels.c`: carry-less multiplication where the CPU has it, 5-15x zlib 1.2 on a 64 KiB
block, which dominated a cold btree point lookup), else `zlib.crc32` (same answers)."""

from __future__ import annotations

try:
    from paimon_schema.runtime._kernels import crc32
except ImportError:  # pragma: no cover - built without a C compiler
    from zlib import crc32

__all__ = ["crc32"]
