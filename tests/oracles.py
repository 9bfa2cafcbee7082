"""Oracles that may be missing here (Java, ../shared fixtures, pypaimon-rust): skip with the
reason, or fail when ``PAIMON_SCHEMA_REQUIRE_ORACLES=1`` (CI), so CI cannot pass silently."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NoReturn, TypeVar

import pytest

T = TypeVar("T")

REQUIRE_ORACLES_ENV = "PAIMON_SCHEMA_REQUIRE_ORACLES"


def oracles_required() -> bool:
    """True when ``PAIMON_SCHEMA_REQUIRE_ORACLES=1``."""
    return os.environ.get(REQUIRE_ORACLES_ENV, "").strip() == "1"


def oracle_unavailable(reason: str) -> NoReturn:
    """Skip the test with ``reason``, or fail it when oracles are required."""
    if oracles_required():
        pytest.fail(f"oracle required ({REQUIRE_ORACLES_ENV}=1) but unavailable: {reason}",
                    pytrace=False)
    pytest.skip(f"oracle unavailable: {reason}")


def require_oracle(factory: Callable[[], T]) -> T:
    """Build an oracle; turn its unavailability into a skip (or a failure, see above)."""
    from paimon_schema.selfcheck.reference import ReferenceUnavailable

    try:
        return factory()
    except ReferenceUnavailable as exc:
        oracle_unavailable(str(exc))


def import_oracle(module: str) -> object:
    """`pytest.importorskip` that fails instead of skipping when oracles are required."""
    try:
        return __import__(module)
    except ImportError as exc:
        oracle_unavailable(f"cannot import {module}: {exc}")
