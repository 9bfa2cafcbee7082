"""Shared test fixtures: the oracles (Java reference, ../shared fixtures) and Hypothesis profiles.

An oracle that cannot run here (no Java, the wheel cannot be fetched, ...) makes its tests skip
with the reason, unless ``PAIMON_SCHEMA_REQUIRE_ORACLES=1``: then they fail, so CI cannot pass
silently without the oracles.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from oracles import oracle_unavailable, require_oracle

settings.register_profile("ci", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("soak", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Java-written files from Paimon's, paimon-rust's and paimon-cpp's test data (never copied here).
SHARED_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


@pytest.fixture(scope="session")
def java_reference():
    """The Java reference (Paimon's own classes), fetched and compiled on first use."""
    from paimon_schema.selfcheck.reference import JavaReference

    return require_oracle(JavaReference.get)


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The ../shared/fixtures folder beside the checkout."""
    if not SHARED_FIXTURES.is_dir():
        oracle_unavailable(f"{SHARED_FIXTURES} does not exist (../shared is not beside the checkout)")
    return SHARED_FIXTURES


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 API server (moto) on 127.0.0.1, started once and stopped with the session."""
    server_module = require_oracle(lambda: __import__("s3server"))
    server = server_module.S3Server()
    server.start()
    yield server
    server.stop()
