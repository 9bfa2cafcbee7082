"""The shared strategies draw the cases the property tests rely on: NaN and -0.0 among the
floats, keys that repeat in a column, NULL cells (a strategy that lost them would make every
test that uses it pass for the wrong reason)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from strategies import columns, values_for

SEARCH = settings(max_examples=5_000, database=None, phases=[Phase.generate],   # no shrinking
                  suppress_health_check=list(HealthCheck))
COLUMNS = columns({t: values_for(t) for t in ("INT", "DOUBLE", "FLOAT", "STRING")})


def is_nan(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


def is_negative_zero(v: object) -> bool:
    return isinstance(v, float) and v == 0 and math.copysign(1, v) < 0


@pytest.mark.parametrize("data_type", ["DOUBLE", "FLOAT"])
def test_float_values_include_nan_and_negative_zero(data_type: str) -> None:
    find(values_for(data_type), is_nan, settings=SEARCH)
    find(values_for(data_type), is_negative_zero, settings=SEARCH)


@pytest.mark.parametrize("name, condition", [
    ("NaN", lambda c: any(is_nan(v) for v in c[1])),
    ("-0.0", lambda c: any(is_negative_zero(v) for v in c[1])),
    ("a repeated key", lambda c: len([v for v in c[1] if v is not None])
     > len({repr(v) for v in c[1] if v is not None})),
    ("NULL and a value", lambda c: None in c[1] and any(v is not None for v in c[1])),
    ("only NULLs", lambda c: len(c[1]) > 1 and all(v is None for v in c[1])),
    ("no NULL", lambda c: len(c[1]) > 1 and None not in c[1]),
])
def test_columns_draw(name: str, condition) -> None:
    find(COLUMNS, condition, settings=SEARCH)


def test_columns_with_distinct_edges_and_runs() -> None:
    strategy = columns({"INT": values_for("INT")}, max_pool=60, max_rows=300, runs=True,
                       distinct_edges=(13, 25, 49))
    find(strategy, lambda c: len({v for v in c[1] if v is not None}) == 25, settings=SEARCH)
    find(strategy, lambda c: len(c[1]) >= 17 and len(set(c[1][:17])) == 1 and c[1][0] is not None,
         settings=SEARCH)
