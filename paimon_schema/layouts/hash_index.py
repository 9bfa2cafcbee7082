"""Dynamic-bucket hash index files (formats/hash_index.ksy): read and write.

The file is a bare array of big-endian int32, so reading and writing are numpy one-liners; the
generated parser and codec (one Python call per int) are their specification, and
test_hash_index.py proves they agree, errors included.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from paimon_schema.generated import hash_index_codec
from paimon_schema.generated.hash_index import HashIndex
from paimon_schema.runtime import kaitai as parsing
from paimon_schema.values.errors import FormatError, SchemaError


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


def write_hash_index(hashes: Iterable[int] | np.ndarray) -> bytes:
    """The file for `hashes`, in the order given, duplicates kept; SchemaError past int32."""
    try:
        values = np.asarray(hashes if isinstance(hashes, np.ndarray) else list(hashes))
    except (TypeError, ValueError) as exc:
        raise SchemaError("hashes must be a flat sequence of integers") from exc
    if values.size == 0:
        return b""
    if values.dtype.kind not in "iu" or values.dtype == np.bool_:
        raise SchemaError(f"hashes must be integers, not {values.dtype}")
    if values.min() < -2**31 or values.max() > 2**31 - 1:
        raise SchemaError("a hash is out of the int32 range")
    return values.astype(">i4").tobytes()


def build_hash_index(hashes: list[int]) -> bytes:
    """The file through the generated codec: slow, the reference for the fast path."""
    return hash_index_codec.hash_index.build({"hashes": hashes})
