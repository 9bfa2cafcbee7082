"""Index options by Paimon's names and units (`MemorySize.parse`): `index-block-size="16kb"`.

Python keywords may spell them with underscores (`index_block_size`); values may be given as
Paimon writes them in table options (strings) or as Python numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from paimon_schema.values.errors import SchemaError

_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
          "m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
          "gibibytes": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40}
_SIZE = re.compile(r"\s*(\d+)\s*([a-zA-Z]*)\s*")

def memory_size(value: object) -> int:
    """Paimon's `MemorySize.parse`: a number and a binary unit, e.g. "16kb" = 16384."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise SchemaError(f"a memory size cannot be negative: {value}")
        return value
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if match is None or match[2].lower() not in _UNITS:
        raise SchemaError(f"not a memory size: {value!r} (e.g. '16kb', '1 mb', 4096)")
    return int(match[1]) * _UNITS[match[2].lower()]


def normalize(index_type: str, known: tuple[str, ...], options: Mapping[str, Any]) -> dict[str, Any]:
    """Options keyed by Paimon's names; SchemaError for one not `known` to the index type."""
    result = {}
    for key, value in options.items():
        name = key.replace("_", "-")
        if name not in known:
            accepted = ", ".join(known) or "none"
            raise SchemaError(f"{index_type} takes no option {key!r} (it takes: {accepted})")
        result[name] = value
    return result


def integer(value: object, name: str) -> int:
    """An int option given as an int or a decimal string."""
    if isinstance(value, bool):
        raise SchemaError(f"{name} must be an integer, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    raise SchemaError(f"{name} must be an integer, not {value!r}")


def number(value: object, name: str) -> float:
    """A double option given as a number or a string."""
    if isinstance(value, bool):
        raise SchemaError(f"{name} must be a number, not {value!r}")
    try:
        return float(value)  # type: ignore[arg-type]    # anything float() takes
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"{name} must be a number, not {value!r}") from exc


_DURATION_UNITS = {"ns": 1e-9, "nano": 1e-9, "nanos": 1e-9, "nanosecond": 1e-9, "nanoseconds": 1e-9,
                   "us": 1e-6, "micro": 1e-6, "micros": 1e-6, "microsecond": 1e-6,
                   "microseconds": 1e-6, "": 1e-3, "ms": 1e-3, "milli": 1e-3, "millis": 1e-3,
                   "millisecond": 1e-3, "milliseconds": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0,
                   "second": 1.0, "seconds": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
                   "minutes": 60.0, "h": 3600.0, "hour": 3600.0, "hours": 3600.0, "d": 86400.0,
                   "day": 86400.0, "days": 86400.0}


def duration(value: object, name: str) -> float:
    """Paimon's `TimeUtils.parseDuration` in seconds: a number and a unit ("10 ms", "10s",
    "1 min"; a bare number is milliseconds, as in Paimon)."""
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if match is None or match[2].lower() not in _DURATION_UNITS:
        raise SchemaError(f"{name} must be a duration, not {value!r} (e.g. '10 ms', '10 s', '1 min')")
    return int(match[1]) * _DURATION_UNITS[match[2].lower()]
