"""The fuzz suite's shared pieces live in fuzzlib.py (importable here: pytest puts this folder
on sys.path), so the standalone soak driver benchmarks/fuzz_soak.py can use them too."""

from __future__ import annotations

import pytest

import fuzzlib


def pytest_report_header(config: pytest.Config) -> list[str]:
    seeds = fuzzlib.all_seeds()
    per_layout = {layout: sum(s.layout == layout for s in seeds) for layout in fuzzlib.LAYOUTS}
    return ["fuzz seeds: " + ", ".join(f"{k} {v}" for k, v in per_layout.items())]
