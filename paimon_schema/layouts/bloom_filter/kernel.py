"""The bloom filter's bulk kernels: the compiled loops (`runtime/kernels.c`), or numpy.

A bloom filter sets `k` pseudo-random bits per value. numpy has no scatter-OR that tolerates
repeated positions, so its form (`numpy_add`) writes a byte per bit into an array too large
for the cache and packs it: 4-5x slower than Java's loop. The C loop writes straight into the
packed bit set (about 1 MiB for a million items, cache-resident); numpy's form serves a
package built without a C compiler, and the tests prove the two equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paimon_schema.layouts.bloom_filter.hashing import xxh64

try:
    from paimon_schema.runtime import _kernels
except ImportError:             # built without a C compiler: numpy's form
    _kernels = None  # type: ignore[assignment]

#: Values per numpy chunk: k positions of 8 bytes each stay in tens of megabytes.
_CHUNK = 1 << 20


def add_longs(bitset: np.ndarray, keys: np.ndarray, k: int, num_bits: int) -> None:
    """Add every key of an int64 array, hashed with Thomas Wang's mix (numeric columns)."""
    _add(bitset, keys, True, k, num_bits)


def add_hashes(bitset: np.ndarray, hashes: np.ndarray, k: int, num_bits: int) -> None:
    """Add values already hashed to signed 64-bit `FastHash` values (strings, floats)."""
    _add(bitset, hashes, False, k, num_bits)


def xxh64_each(items: list[bytes]) -> np.ndarray:
    """`hashing.xxh64` of each item (int64): in one compiled loop, or a call each."""
    if _kernels is not None:
        return np.frombuffer(_kernels.xxh64_each(items), np.int64)
    return np.fromiter(map(xxh64, items), np.int64, len(items))


def add_strings(bitset: np.ndarray, text: bool, values: Any, k: int, num_bits: int) -> bool:
    """Add every non-null value of a column of strings (`text`) or binaries given as a list, a
    numpy array of objects, a pyarrow string/binary (Chunked)Array or a pandas Series of
    objects, hashed straight from the str, bytes or Arrow buffers: no numbering of the distinct
    values, no bytes object each. False where the column is none of these, or a value is not
    exactly a str (or bytes), or no compiled loop: `column_values` then types it, into the
    bit set cleared again."""
    if _kernels is None:
        return False
    module = type(values).__module__.partition(".")[0]
    if module == "pyarrow":
        hashes = _arrow_hashes(text, values)
        if hashes is not None:
            add_hashes(bitset, hashes, k, num_bits)
        return hashes is not None
    kind = "s" if text else "y"
    if module == "pandas" and getattr(values, "dtype", None) == np.dtype(object):
        # the Series' own array (no copy), with NaN as NULL; pandas' other missing values (NA,
        # NaT) as None only if there are any (the conversion is a pass of its own)
        return (_add_items(bitset, kind, values.to_numpy(dtype=object), k, num_bits, nan_is_null=True) is not None
                or _add_items(bitset, kind, values.to_numpy(dtype=object, na_value=None), k, num_bits) is not None)
    items = _items(values)
    return items is not None and _add_items(bitset, kind, items, k, num_bits) is not None


def add_ints(bitset: np.ndarray, values: Any, k: int, num_bits: int) -> tuple[int, int] | None:
    """Add every non-null value of a list (or numpy array of objects) of exact ints within
    int64 (NULL: None), hashed with Thomas Wang's mix in the same pass: no typed column, no
    validity. Their least and greatest value ((0, 0) if none), which the caller checks against
    the column type's range; None where a value is anything else, the first 4096 rows hold no
    NULL (typed in bulk, such a column is added faster), or no compiled loop (the bit set
    cleared again)."""
    items = _items(values)
    added = None if items is None else _add_items(bitset, "i", items, k, num_bits)
    if added is None:
        return None
    _, low, high = added
    return (0, 0) if low is None or high is None else (low, high)


def add_doubles(bitset: np.ndarray, values: Any, k: int, num_bits: int) -> bool:
    """Add every non-null value of a list (or numpy array of objects) of exact floats, or exact
    ints within int64 taken as the nearest double (NULL: None; NaN is a value), hashed as
    `FastHash` hashes a DOUBLE in the same pass. False where a value is anything else or no
    compiled loop (the bit set cleared again)."""
    items = _items(values)
    return items is not None and _add_items(bitset, "d", items, k, num_bits) is not None


def _items(values: Any) -> list | np.ndarray | None:
    """A list, or a one-dimensional numpy array of objects made contiguous, for
    `bloom_add_items`; None for anything else or no compiled loop."""
    if _kernels is None:
        return None
    if isinstance(values, list):
        return values
    if isinstance(values, np.ndarray) and values.dtype == np.dtype(object) and values.ndim == 1:
        return np.ascontiguousarray(values)
    return None


def _add_items(bitset: np.ndarray, kind: str, values: list | np.ndarray, k: int, num_bits: int,
               nan_is_null: bool = False) -> tuple[int, int | None, int | None] | None:
    """`_kernels.bloom_add_items`: one compiled pass over the items in place; declined, the
    bits it set are cleared."""
    assert _kernels is not None
    added = _kernels.bloom_add_items(bitset, values, kind, nan_is_null, k, num_bits)
    if added is None:
        bitset[:] = 0
    return added


def _arrow_hashes(text: bool, values: Any) -> np.ndarray | None:
    """XXH64 of each non-null value of a pyarrow string/binary (large or not) Array or
    ChunkedArray, straight from its buffers; None for any other array."""
    import pyarrow as pa

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    wanted = (pa.string(), pa.large_string()) if text else (pa.binary(), pa.large_binary())
    if not isinstance(values, (pa.Array, pa.ChunkedArray)) or values.type not in wanted:
        return None
    width = 8 if values.type in (pa.large_string(), pa.large_binary()) else 4
    out = []
    for chunk in chunks:
        if not len(chunk):
            continue
        validity, offsets, data = chunk.buffers()
        out.append(np.frombuffer(_kernels.xxh64_offsets(offsets, width, data if data is not None else b"",
                                                        chunk.offset, len(chunk),
                                                        validity if chunk.null_count else None), np.int64))
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _add(bitset: np.ndarray, values: np.ndarray, mix: bool, k: int, num_bits: int) -> None:
    values = np.ascontiguousarray(values, np.int64)
    if _kernels is not None:
        _kernels.bloom_add(bitset, values, mix, k, num_bits)
    else:
        numpy_add(bitset, values, mix, k, num_bits)


def numpy_add(bitset: np.ndarray, values: np.ndarray, mix: bool, k: int, num_bits: int) -> None:
    """`BloomFilter64.addHash` for every value in numpy: bit `(h1 + i*h2 as int32, complemented
    if negative) % numBits` for i in 1..k, `h1`, `h2` the hash's low and high halves."""
    if not 0 < num_bits < 2**32 or len(bitset) * 8 < num_bits:
        raise ValueError(f"num_bits {num_bits} does not fit the bit set of {len(bitset)} bytes")
    flags = np.zeros(len(bitset) * 8, bool)
    for base in range(0, len(values), _CHUNK):
        hashes = np.asarray(values[base:base + _CHUNK], np.int64)
        if mix:
            hashes = wang64(hashes)
        h1 = hashes.astype(np.int32)
        h2 = (hashes >> 32).astype(np.int32)
        for i in range(1, k + 1):
            combined = h1 + np.int32(i) * h2                      # wrapping like Java's int
            dividend = np.where(combined >= 0, combined, ~combined).astype(np.int64)
            flags[dividend % num_bits] = True
    bitset |= np.packbits(flags, bitorder="little")


def wang64(keys: np.ndarray) -> np.ndarray:
    """`hashing.wang64` over an int64 array (wrapping; `>>` on int64 is arithmetic)."""
    with np.errstate(over="ignore"):
        k = ~keys + (keys << 21)
        k ^= k >> 24
        k = k + (k << 3) + (k << 8)
        k ^= k >> 14
        k = k + (k << 2) + (k << 4)
        k ^= k >> 28
        return k + (k << 31)
