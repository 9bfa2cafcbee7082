"""Progress of slow first steps (fetching the Java jar, compiling the harness, starting Spark).

They are logged on the `paimon_schema.progress` logger; the command line shows them on stderr
(`show_on_stderr`), a library user sees them only if their logging says so.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("paimon_schema.progress")


@contextmanager
def step(what: str) -> Iterator[None]:
    """Log `what …` before the step and `what: done in N s` (or `failed`) after it."""
    log.info("%s …", what)
    started = time.perf_counter()
    try:
        yield
    except KeyboardInterrupt:           # the command line says "interrupted", once
        raise
    except BaseException:
        log.info("%s: failed after %.1f s", what, time.perf_counter() - started)
        raise
    log.info("%s: done in %.1f s", what, time.perf_counter() - started)


class _Stderr(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a line is logged (it may be replaced later)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("paimon-schema: %(message)s"))

    @property
    def stream(self):                           # noqa: ANN201 - logging's attribute
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:            # noqa: ANN001 - set by StreamHandler.__init__
        pass


def show_on_stderr() -> None:
    """Print progress lines on stderr (once, however often called)."""
    if not any(isinstance(h, _Stderr) for h in log.handlers):
        log.addHandler(_Stderr())
    log.setLevel(logging.INFO)
