"""Paimon data types, and how a Python value becomes the key an index stores (spec section 0.5).

Values follow the API contract: plain Python (`int`, `bool`, `float`, `Decimal`, `str`,
`bytes`, `date`, `time`, `datetime`; naive datetimes are UTC wall clock), or for temporal types
the raw index integer. A value that does not fit its type raises `SchemaError`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from dataclasses import dataclass

import numpy as np

from paimon_schema.values.errors import SchemaError

INTEGER_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
ALIASES = {"INTEGER": "INT", "BYTES": "VARBINARY", "TIMESTAMP_LTZ": "TIMESTAMP_LTZ",
           "DEC": "DECIMAL", "NUMERIC": "DECIMAL"}
MAX_LENGTH = 2**31 - 1
DEFAULTS = {"DECIMAL": (10, 0), "TIMESTAMP": (6, None), "TIMESTAMP_LTZ": (6, None),
            "TIME": (0, None)}
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
EPOCH_DATE = dt.date(1970, 1, 1)
MILLIS_PER_DAY = 86_400_000
#: (min, max) of the internal integer of every integer-backed type (TIME: a millisecond of the
#: day), what the bulk writers check numpy arrays against before trusting them.
INTEGER_BOUNDS = {**{root: (-2**(bits - 1), 2**(bits - 1) - 1) for root, bits in INTEGER_RANGES.items()},
                  "DATE": (-2**31, 2**31 - 1), "TIME": (0, MILLIS_PER_DAY - 1),
                  "TIMESTAMP": (-2**63, 2**63 - 1), "TIMESTAMP_LTZ": (-2**63, 2**63 - 1)}
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1

_TYPE = re.compile(
    r"^\s*(?P<name>[A-Za-z_]+)\s*(?:\(\s*(?P<a>\d+)\s*(?:,\s*(?P<b>\d+)\s*)?\))?"
    r"\s*(?P<ltz>WITH\s+LOCAL\s+TIME\s+ZONE)?\s*(?:WITHOUT\s+TIME\s+ZONE)?\s*(?:NOT\s+NULL)?\s*$",
    re.IGNORECASE)


#: The types parsed so far, by their text: schemas name the same few types again and again, and
#: planning a table parses each file's (~10 us a parse).
_PARSED: dict[str, DataType] = {}


@dataclass(frozen=True)
class DataType:
    """A Paimon atomic type: `root` is the canonical name, the numbers are its parameters."""

    root: str
    precision: int | None = None   # DECIMAL p, TIME p, TIMESTAMP p
    scale: int | None = None       # DECIMAL s
    length: int | None = None      # CHAR / VARCHAR / BINARY / VARBINARY n

    @classmethod
    def parse(cls, text: str | DataType) -> DataType:
        if isinstance(text, DataType):
            return text
        parsed = _PARSED.get(text) if isinstance(text, str) else None
        if parsed is None:
            parsed = cls._parse(text)
            if len(_PARSED) >= 4096:        # (a bound, for programs that make up types)
                _PARSED.clear()
            _PARSED[text] = parsed
        return parsed

    @classmethod
    def _parse(cls, text: str) -> DataType:
        match = _TYPE.match(text) if isinstance(text, str) else None
        if match is None:
            raise SchemaError(f"not a Paimon data type: {text!r}")
        name = match["name"].upper()
        name = ALIASES.get(name, name)
        a = int(match["a"]) if match["a"] else None
        b = int(match["b"]) if match["b"] else None
        if match["ltz"]:
            if name != "TIMESTAMP":
                raise SchemaError(f"only TIMESTAMP takes WITH LOCAL TIME ZONE: {text!r}")
            name = "TIMESTAMP_LTZ"
        if name in INTEGER_RANGES or name in ("BOOLEAN", "FLOAT", "DOUBLE", "DATE"):
            if a is not None:
                raise SchemaError(f"{name} takes no parameters: {text!r}")
            return cls(name)
        if name == "STRING":
            return cls("VARCHAR", length=MAX_LENGTH)
        if name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            if b is not None:
                raise SchemaError(f"{name} takes one length: {text!r}")
            default = MAX_LENGTH if match["name"].upper() == "BYTES" else 1
            return cls(name, length=a if a is not None else default)
        if name == "DECIMAL":
            p, s = (a, b or 0) if a is not None else DEFAULTS["DECIMAL"]
            assert p is not None and s is not None
            if not 1 <= p <= 38 or not 0 <= s <= p:
                raise SchemaError(f"DECIMAL({p}, {s}) is out of range: {text!r}")
            return cls(name, precision=p, scale=s)
        if name in ("TIME", "TIMESTAMP", "TIMESTAMP_LTZ"):
            p = a if a is not None else DEFAULTS[name][0]
            if b is not None or not 0 <= p <= 9:
                raise SchemaError(f"bad precision for {name}: {text!r}")
            return cls(name, precision=p)
        raise SchemaError(f"unsupported data type {text!r}")

    def __str__(self) -> str:
        if self.root == "VARCHAR" and self.length == MAX_LENGTH:
            return "STRING"
        if self.root == "VARBINARY" and self.length == MAX_LENGTH:
            return "BYTES"
        if self.root == "TIMESTAMP_LTZ":
            return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"
        if self.root == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.length is not None:
            return f"{self.root}({self.length})"
        if self.precision is not None:
            return f"{self.root}({self.precision})"
        return self.root

    @property
    def is_string(self) -> bool:
        return self.root in ("CHAR", "VARCHAR")

    @property
    def is_binary(self) -> bool:
        return self.root in ("BINARY", "VARBINARY")

    @property
    def is_timestamp(self) -> bool:
        return self.root in ("TIMESTAMP", "TIMESTAMP_LTZ")

    @property
    def is_float(self) -> bool:
        return self.root in ("FLOAT", "DOUBLE")


class _Where:
    """`value!r for data_type` of an error message, formatted only when one is raised (the
    format, a dataclass `repr`, cost more than the conversion of a valid value)."""

    __slots__ = ("value", "data_type")

    def __init__(self, value: object, data_type: DataType) -> None:
        self.value = value
        self.data_type = data_type

    def __format__(self, spec: str) -> str:
        return format(f"{self.value!r} for {self.data_type}", spec)

    def __str__(self) -> str:
        return f"{self}"


def internal(data_type: DataType, value: object) -> object:
    """Paimon's internal value for a Python value (None stays None).

    Integers, dates (days), times (millis of day) and timestamps give `int` (timestamps: epoch
    millis if precision <= 3, else micros, as every index stores them); floats give `float`
    (FLOAT rounded to float32); decimals their unscaled `int`; strings their UTF-8 `bytes`.
    """
    if value is None:
        return None
    root = data_type.root
    where = _Where(value, data_type)        # formatted only for an error
    if root in INTEGER_RANGES:
        return _integer(value, INTEGER_RANGES[root], where)
    if root == "BOOLEAN":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise SchemaError(f"not a boolean: {where}")
    if root in ("FLOAT", "DOUBLE"):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise SchemaError(f"not a number: {where}")
        try:
            number = float(value)
        except OverflowError as exc:
            raise SchemaError(f"too large for {data_type}: {where}") from exc
        return float32(number) if root == "FLOAT" else number
    if root == "DECIMAL":
        return _unscaled(value, data_type, where)
    if data_type.is_string:
        if not isinstance(value, str):
            raise SchemaError(f"not a string: {where}")
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise SchemaError(f"string is not valid Unicode (lone surrogate): {where}") from exc
    if data_type.is_binary:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise SchemaError(f"not bytes: {where}")
    if root == "DATE":
        if isinstance(value, dt.datetime) or not isinstance(value, (dt.date, int, np.integer)) \
                or isinstance(value, bool):
            raise SchemaError(f"not a date (datetime.date or days since 1970-01-01): {where}")
        days = (value - EPOCH_DATE).days if isinstance(value, dt.date) else int(value)
        return _integer(days, 32, where)
    if root == "TIME":
        if isinstance(value, dt.time):
            return (value.hour * 3600 + value.minute * 60 + value.second) * 1000 + value.microsecond // 1000
        millis = _integer(value, 32, where)
        if not 0 <= millis < MILLIS_PER_DAY:
            raise SchemaError(f"not a millisecond of the day: {where}")
        return millis
    if data_type.is_timestamp:
        return _timestamp_key(value, data_type.precision or 0, where)
    raise SchemaError(f"unsupported data type {data_type}")


def float32(value: float) -> float:
    """Java's `(float)` cast: round to the nearest float32 (overflow gives infinity)."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def float_bits(value: float, width: int, canonical: bool) -> int:
    """IEEE bits as an unsigned int; `canonical` maps every NaN to Java's one NaN."""
    if canonical and math.isnan(value):
        return 0x7FC00000 if width == 32 else 0x7FF8000000000000
    fmt = ">f" if width == 32 else ">d"
    unsigned = ">I" if width == 32 else ">Q"
    return struct.unpack(unsigned, struct.pack(fmt, value))[0]


def bits_to_float(bits: int, width: int) -> float:
    fmt = (">I", ">f") if width == 32 else (">Q", ">d")
    return struct.unpack(fmt[1], struct.pack(fmt[0], bits))[0]


def float_order(bits: int, width: int) -> int:
    """An int that sorts float bit patterns as Java's `Float/Double.compareTo` does:
    -inf < ... < -0.0 < 0.0 < ... < +inf < NaN (all NaNs equal)."""
    sign = 1 << (width - 1)
    exponent_all = (0xFF << 23) if width == 32 else (0x7FF << 52)
    magnitude = bits & (sign - 1)
    if magnitude & exponent_all == exponent_all and magnitude != exponent_all:
        return sign                                 # NaN, above +inf
    return -magnitude - 1 if bits & sign else magnitude


def _integer(value: object, bits: int, where: object) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise SchemaError(f"not an integer: {where}")
    number = int(value)
    if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
        raise SchemaError(f"out of range for a {bits}-bit integer: {where}")
    return number


def _unscaled(value: object, data_type: DataType, where: object) -> int:
    assert data_type.precision is not None and data_type.scale is not None   # a parsed DECIMAL
    if isinstance(value, (bool, float)) or not isinstance(value, (int, decimal.Decimal, str)):
        raise SchemaError(f"not a decimal (decimal.Decimal, int or str): {where}")
    try:
        number = decimal.Decimal(value)
        scaled = number.quantize(decimal.Decimal(1).scaleb(-data_type.scale),
                                 rounding=decimal.ROUND_HALF_UP,
                                 context=decimal.Context(prec=80))
    except (decimal.InvalidOperation, ValueError) as exc:
        raise SchemaError(f"not a decimal: {where}") from exc
    if not scaled.is_finite():
        raise SchemaError(f"not a finite decimal: {where}")
    unscaled = int(scaled.scaleb(data_type.scale))
    if len(str(abs(unscaled))) > data_type.precision:
        raise SchemaError(f"more digits than DECIMAL precision {data_type.precision}: {where}")
    return unscaled


def _timestamp_key(value: object, precision: int, where: object) -> int:
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        delta = moment - EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        key = micros // 1000 if precision <= 3 else micros
        return _integer(key, 64, where)
    if isinstance(value, dt.date):
        raise SchemaError(f"a date is not a timestamp: {where}")
    return _integer(value, 64, where)
