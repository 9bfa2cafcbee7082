"""Commit retries, as Java's `FileStoreCommitImpl`: a writer that loses the race for
`snapshot-N` (`CommitConflict`) reads the new latest snapshot, plans again on it and commits
again, up to `commit.max-retries` times (Paimon's default 10), waiting between attempts as
Java's `RetryWaiter` does: `commit.min-retry-wait` doubled per retry, at most
`commit.max-retry-wait`, plus up to 20% jitter; `commit.timeout` bounds the whole. The options
are the table's, overlaid with the call's; `commit.max-retries = 0` turns retries off (the
first `CommitConflict` surfaces).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from paimon_schema.table.errors import CommitConflict
from paimon_schema.values import options as option_values
from paimon_schema.values.errors import SchemaError

__all__ = ["RetryPolicy", "with_retries"]

T = TypeVar("T")

MAX_RETRIES = "commit.max-retries"
MIN_RETRY_WAIT = "commit.min-retry-wait"
MAX_RETRY_WAIT = "commit.max-retry-wait"
TIMEOUT = "commit.timeout"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a writer retries a conflicting commit (seconds)."""

    max_retries: int = 10
    min_wait: float = 0.010
    max_wait: float = 10.0
    timeout: float | None = None

    @classmethod
    def of(cls, table_options: Mapping[str, str], overrides: Mapping[str, Any] | None = None) -> RetryPolicy:
        """The policy of Paimon's `commit.*` options: the table's, then the call's."""
        merged = {**table_options, **{k: str(v) for k, v in (overrides or {}).items()}}
        policy = cls()
        max_retries = option_values.integer(merged.get(MAX_RETRIES, policy.max_retries), MAX_RETRIES)
        if max_retries < 0:
            raise SchemaError(f"{MAX_RETRIES} cannot be negative: {max_retries}")
        timeout = merged.get(TIMEOUT)
        return cls(max_retries,
                   option_values.duration(merged.get(MIN_RETRY_WAIT, "10 ms"), MIN_RETRY_WAIT),
                   option_values.duration(merged.get(MAX_RETRY_WAIT, "10 s"), MAX_RETRY_WAIT),
                   None if timeout is None else option_values.duration(timeout, TIMEOUT))

    def wait(self, retry: int) -> float:
        """Java's `RetryWaiter.retryWait(retry)`: exponential, capped, with jitter."""
        base = min(self.min_wait * 2 ** retry, self.max_wait)
        return base + random.uniform(0, base * 0.2)


def with_retries(attempt: Callable[[], T], policy: RetryPolicy) -> T:
    """`attempt()` (which plans on the latest snapshot and commits), again after each
    `CommitConflict` until it commits or the policy gives up (then the last conflict, saying
    how many retries it made)."""
    start = time.monotonic()
    retry = 0
    while True:
        try:
            return attempt()
        except CommitConflict as exc:
            if policy.max_retries == 0:
                raise
            out_of_time = policy.timeout is not None and time.monotonic() - start > policy.timeout
            if retry >= policy.max_retries or out_of_time:
                limit = (f"{TIMEOUT} = {policy.timeout:g} s" if out_of_time
                         else f"{MAX_RETRIES} = {policy.max_retries}")
                raise CommitConflict(f"{exc} [gave up after {retry} retries, {limit}]") from None
        time.sleep(policy.wait(retry))
        retry += 1
