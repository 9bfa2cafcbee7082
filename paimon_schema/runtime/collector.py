"""The cyclic garbage collector paused while many containers are built at once."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused"]


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block: every 700 new containers (dicts, lists, tuples, tree
    nodes) start a collection, whose full passes walk every live object; building millions
    of them (a manifest's records with a big plan in memory: 3/4 of the decode; Java's
    HashMap order replayed over millions of nodes) would cost more than the work itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
