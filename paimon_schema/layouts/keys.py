"""Index keys: which encoding (`paimon_common::key_kind`) a column's type uses, how a query
value becomes a key as the generated parsers return it, and how keys sort in Java."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paimon_schema import types
from paimon_schema.errors import SchemaError
from paimon_schema.generated.paimon_common import PaimonCommon
from paimon_schema.types import DataType

KeyKind = PaimonCommon.KeyKind

_KINDS = {"BOOLEAN": KeyKind.boolean, "TINYINT": KeyKind.int8, "SMALLINT": KeyKind.int16,
          "INT": KeyKind.int32, "DATE": KeyKind.int32, "TIME": KeyKind.int32,
          "BIGINT": KeyKind.int64, "TIMESTAMP": KeyKind.int64, "TIMESTAMP_LTZ": KeyKind.int64,
          "FLOAT": KeyKind.float32, "DOUBLE": KeyKind.float64,
          "CHAR": KeyKind.string, "VARCHAR": KeyKind.string}
_FIXED_SIZE = {KeyKind.boolean: 1, KeyKind.int8: 1, KeyKind.int16: 2, KeyKind.int32: 4,
               KeyKind.int64: 8, KeyKind.float32: 4, KeyKind.float64: 8}


@dataclass(frozen=True)
class KeyCodec:
    """Keys of one column in one index type.

    A key is what the generated parser returns for `paimon_common::key`: an int (booleans as
    0/1, floats as their unsigned IEEE bits) or the UTF-8 bytes of a string.
    """

    data_type: DataType
    kind: KeyKind
    canonical_nan: bool     # DataOutput (bitmap) canonicalizes NaN; ByteBuffer (range-bitmap) does not

    def encode(self, value: object) -> int | bytes:
        """The key of a non-null query value; SchemaError if it does not fit the type."""
        internal = types.internal(self.data_type, value)
        if self.kind == KeyKind.boolean:
            return int(internal)
        if self.kind in (KeyKind.float32, KeyKind.float64):
            return types.float_bits(internal, 32 if self.kind == KeyKind.float32 else 64,
                                    self.canonical_nan)
        return internal

    def order(self, key: int | bytes) -> int | bytes:
        """A Python-comparable stand-in sorting keys as Java's comparator does."""
        if self.kind == KeyKind.float32:
            return types.float_order(key, 32)
        if self.kind == KeyKind.float64:
            return types.float_order(key, 64)
        return key

    def decode(self, key: int | bytes) -> object:
        """A readable value for a stored key (raw integers for temporal types)."""
        if self.kind == KeyKind.boolean:
            return key != 0
        if self.kind in (KeyKind.float32, KeyKind.float64):
            return types.bits_to_float(key, 32 if self.kind == KeyKind.float32 else 64)
        if self.kind == KeyKind.string:
            return bytes(key).decode("utf-8", errors="backslashreplace")
        return key

    def size(self, key: int | bytes) -> int:
        """Encoded size of a key (Java's `measure`)."""
        return 4 + len(key) if self.kind == KeyKind.string else _FIXED_SIZE[self.kind]


def bitmap_keys(data_type: str | DataType) -> KeyCodec:
    """Key codec of the bitmap index; SchemaError for types Java's bitmap index refuses."""
    dtype = DataType.parse(data_type)
    kind = _KINDS.get(dtype.root)
    if kind is None:
        raise SchemaError(f"the bitmap index does not support {dtype}")
    return KeyCodec(dtype, kind, canonical_nan=True)


def range_bitmap_keys(data_type: str | DataType) -> KeyCodec:
    """Key codec of the range-bitmap index (adds DECIMAL(p <= 18); TIMESTAMP only up to p 6)."""
    dtype = DataType.parse(data_type)
    if dtype.root == "DECIMAL" and (dtype.precision or 0) <= 18:
        return KeyCodec(dtype, KeyKind.int64, canonical_nan=False)
    if dtype.is_timestamp and (dtype.precision or 0) > 6:
        raise SchemaError(f"the range-bitmap index does not support {dtype} (precision above 6)")
    kind = _KINDS.get(dtype.root)
    if kind is None:
        raise SchemaError(f"the range-bitmap index does not support {dtype}")
    return KeyCodec(dtype, kind, canonical_nan=False)


_PLAIN_TYPES = {KeyKind.boolean: bool, KeyKind.float32: float, KeyKind.float64: float}
_PLAIN_DTYPES = {bool: np.bool_, float: np.float64, int: np.int64}


def plain_array(codec: KeyCodec, values: list) -> tuple[np.ndarray, np.ndarray | None] | None:
    """A list of plain Python values (ints, floats or bools as the kind wants; None for NULL)
    as a numpy array of the non-null ones and a validity mask (None without nulls); None to
    decline, leaving the caller's checked per-row pass to refuse what does not fit."""
    seen = set(map(type, values))
    has_null = type(None) in seen
    seen.discard(type(None))
    expected = _PLAIN_TYPES.get(codec.kind, int)
    if not seen <= {expected}:
        return None
    valid = None
    if has_null:
        valid = np.fromiter((v is not None for v in values), bool, len(values))
        values = [v for v in values if v is not None]
    try:
        return np.array(values, dtype=_PLAIN_DTYPES[expected]), valid
    except OverflowError:
        return None
