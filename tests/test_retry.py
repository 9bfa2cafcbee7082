"""Commit retries as Java's: Paimon's `commit.*` options (table's, then the call's), the wait
of `RetryWaiter` (doubling, capped, up to 20% jitter), bounded attempts, retries off, timeout.
The writers' retries on real tables are in tests/spark/test_table_write_s3.py."""

from __future__ import annotations

from typing import Any

import pytest

from paimon_schema.table import retry
from paimon_schema.table.errors import CommitConflict
from paimon_schema.table.retry import RetryPolicy, with_retries
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.options import duration


def test_paimon_defaults_and_options() -> None:
    assert RetryPolicy.of({}) == RetryPolicy(10, 0.010, 10.0, None)
    table = {"commit.max-retries": "3", "commit.min-retry-wait": "50 ms", "commit.timeout": "1 min"}
    assert RetryPolicy.of(table) == RetryPolicy(3, 0.05, 10.0, 60.0)
    assert RetryPolicy.of(table, {"commit.max-retries": 0, "commit.max-retry-wait": "2s"}) == \
        RetryPolicy(0, 0.05, 2.0, 60.0)


@pytest.mark.parametrize(("text", "seconds"), [("10", 0.010), ("10 ms", 0.010), ("2s", 2.0),
                                               ("3 seconds", 3.0), ("1 min", 60.0), ("1m", 60.0),
                                               ("2 h", 7200.0), ("1d", 86400.0), ("500 us", 0.0005)])
def test_durations_as_paimon_parses_them(text: str, seconds: float) -> None:
    assert duration(text, "x") == pytest.approx(seconds)


@pytest.mark.parametrize("options", [{"commit.max-retries": "-1"}, {"commit.max-retries": "many"},
                                     {"commit.min-retry-wait": "soon"}, {"commit.timeout": "5 parsecs"}])
def test_bad_options_are_named(options: dict) -> None:
    with pytest.raises(SchemaError, match=next(iter(options))):
        RetryPolicy.of({}, options)


def test_waits_double_up_to_the_cap_with_jitter() -> None:
    policy = RetryPolicy(10, 0.010, 0.100)
    for n, base in [(0, 0.010), (1, 0.020), (2, 0.040), (3, 0.080), (4, 0.100), (9, 0.100)]:
        waits = [policy.wait(n) for _ in range(200)]
        assert base <= min(waits) and max(waits) <= base * 1.2


def _conflicting(times: int) -> tuple[list[int], Any]:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(len(calls))
        if len(calls) <= times:
            raise CommitConflict(f"snapshot {len(calls) + 3} was created by another writer")
        return "committed"

    return calls, attempt


def test_retries_until_it_commits(monkeypatch: Any) -> None:
    slept: list[float] = []
    monkeypatch.setattr(retry.time, "sleep", slept.append)
    calls, attempt = _conflicting(3)
    assert with_retries(attempt, RetryPolicy(3, 0.010, 10.0)) == "committed"
    assert len(calls) == 4 and len(slept) == 3 and slept[0] < slept[1] < slept[2]


def test_gives_up_after_max_retries_and_off_means_off(monkeypatch: Any) -> None:
    monkeypatch.setattr(retry.time, "sleep", lambda _: None)
    calls, attempt = _conflicting(5)
    with pytest.raises(CommitConflict, match=r"snapshot 7 .* \[gave up after 3 retries, "
                                             r"commit.max-retries = 3\]"):
        with_retries(attempt, RetryPolicy(3))
    assert len(calls) == 4
    calls, attempt = _conflicting(5)
    with pytest.raises(CommitConflict, match=r"^snapshot 4 was created by another writer$"):
        with_retries(attempt, RetryPolicy(0))
    assert len(calls) == 1


def test_the_timeout_bounds_the_whole(monkeypatch: Any) -> None:
    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr(retry.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(retry.time, "sleep", lambda _: None)
    calls, attempt = _conflicting(50)
    with pytest.raises(CommitConflict, match=r"commit.timeout = 25 s"):
        with_retries(attempt, RetryPolicy(100, timeout=25.0))
    assert len(calls) == 3
