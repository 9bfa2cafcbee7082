"""Every deletion-vector file and file-index container under ../shared/fixtures is checked."""

from __future__ import annotations

from pathlib import Path

from fixture_catalog import CONTAINERS, DELETION_VECTORS, discover


def test_every_dv_and_container_fixture_is_catalogued(shared_fixtures: Path) -> None:
    found = discover(shared_fixtures)
    catalogued = {**{p: "dv" for p in DELETION_VECTORS}, **{p: "container" for p in CONTAINERS}}
    unchecked = sorted(f"{kind}: {p}" for p, kind in found.items() if catalogued.get(p) != kind)
    assert not unchecked, "fixtures no test checks (add them to tests/fixture_catalog.py):\n" + "\n".join(unchecked)
    missing = sorted(set(catalogued) - set(found))
    assert not missing, f"catalogued fixtures that are gone: {missing}"
