"""The soak: the CI mutators and the structure-aware ones, mixed and stacked, at least 100,000
executions per layout. Excluded from the default run (`-m 'not soak'` in pyproject).

    pytest -m soak -n auto tests/fuzz                 # pytest-xdist: shards run in parallel
    PAIMON_FUZZ_SOAK_EXECUTIONS=20000 pytest -m soak tests/fuzz     # a shorter soak
    python benchmarks/fuzz_soak.py --executions 100000              # same, own process pool

Each layout is split into SHARDS shards (independent RNG streams) so `-n auto` spreads them
over the cores; each shard fails with every kind of failure it found (count, one example with
its input hex). With HYPOTHESIS_PROFILE=soak the Hypothesis tests of this folder run 20,000
examples each as well.
"""

from __future__ import annotations

import os

import pytest

import fuzzlib
import soakgen

EXECUTIONS = int(os.environ.get("PAIMON_FUZZ_SOAK_EXECUTIONS", "100000"))
SHARDS = 8


@pytest.mark.soak
@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.parametrize("layout", fuzzlib.LAYOUTS)
def test_soak(layout: str, shard: int) -> None:
    count = EXECUTIONS // SHARDS + (1 if shard < EXECUTIONS % SHARDS else 0)
    result = soakgen.run(layout, count, rng_seed=f"shard-{shard}")
    print(result.describe())
    assert result.executions == count
    assert not result.failures, result.describe()
