"""Dynamic-bucket hash index files (formats/hash_index.ksy): read.

The file is a bare array of big-endian int32, so the reader is `numpy.frombuffer`; the
generated parser (one Python call per int) is its specification, and test_hash_index.py proves
the two agree, errors included.
"""

from __future__ import annotations

import numpy as np

from paimon_schema.errors import FormatError
from paimon_schema.generated.hash_index import HashIndex
from paimon_schema.layouts import parsing


def read_hash_index(data: bytes) -> np.ndarray:
    """The hash codes in file order, as a numpy int32 array."""
    whole = len(data) - len(data) % 4
    if whole != len(data):
        raise FormatError(f"unexpected end of data: {len(data) % 4} bytes of a partial hash "
                          f"(the file size must be a multiple of 4)",
                          offset=whole, path=f"hashes[{whole // 4}]")
    return np.frombuffer(data, dtype=">i4").astype(np.int32)


def parse_hash_index(data: bytes) -> list[int]:
    """The hash codes through the generated parser: slow, the reference for the fast path."""
    return parsing.parse(HashIndex, data).hashes
