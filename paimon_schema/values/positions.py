"""Row positions from whatever a caller has: pyroaring bitmaps, numpy arrays, iterables of ints.

Bitmaps that Paimon writes must be built value by value and run-optimized, so that CRoaring
picks the containers Java's `runOptimize()` picks (formats/roaring_bitmap.ksy); these helpers always do.
"""

from __future__ import annotations

import array
from collections.abc import Iterable

import numpy as np
from pyroaring import AbstractBitMap, AbstractBitMap64, BitMap

from paimon_schema.values.errors import SchemaError


def as_array(positions: object, *, maximum: int, what: str = "position") -> np.ndarray:
    """Sorted unique positions as uint64, each in [0, maximum]; SchemaError otherwise."""
    if isinstance(positions, (AbstractBitMap, AbstractBitMap64)):
        values = np.asarray(positions.to_array(), dtype=np.int64)
    elif isinstance(positions, np.ndarray):
        if positions.dtype.kind not in "iu":
            raise SchemaError(f"{what}s must be integers, not {positions.dtype}")
        values = positions.astype(np.int64).ravel()
    elif isinstance(positions, Iterable) and not isinstance(positions, (str, bytes)):
        items = list(positions)
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                   for v in items):
            raise SchemaError(f"{what}s must be integers")
        try:
            values = np.array(items, dtype=np.int64)
        except OverflowError as exc:
            raise SchemaError(f"a {what} is out of range (0..{maximum})") from exc
    else:
        raise SchemaError(f"{what}s must be an iterable of integers, not {type(positions).__name__}")
    if values.size and (values.min() < 0 or values.max() > maximum):
        bad = values[(values < 0) | (values > maximum)][0]
        raise SchemaError(f"{what} {int(bad)} is out of range (0..{maximum})")
    return np.unique(values).astype(np.uint64)


def fresh_bitmap(values: np.ndarray) -> BitMap:
    """A 32-bit bitmap built value by value and run-optimized, as Java serializes it."""
    bitmap = BitMap(array.array("I", values.astype(np.uint32).tobytes()))
    bitmap.run_optimize()
    return bitmap
