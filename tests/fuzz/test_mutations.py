"""Every public parse entry point on mutated real files: nothing but a located FormatError escapes.

Seeds are the shared fixtures of at most 64 KB (every layout that has one; index blobs also
taken out of the fixture containers) plus files our writers produce (fuzzlib.writer_seeds).
Per seed, deterministically: every truncation, 200 single-bit flips (every bit of a smaller
seed) and 50 byte-range overwrites with 0x00, 0xFF or random bytes. Each input goes through
every entry point of its layout (fuzzlib.entry_points), parsed values are exercised (lazy
readers fail late), and DV files, containers and hash files also through
`paimon-schema verify` (every 10th input: the CLI costs 4 ms a call and runs the same parse).

The outcome must be a successful parse, or a `ps.FormatError` with an int `offset` in
[0, len(data)] and a non-empty `path`; a failure names the entry point, the mutation and the
input hex.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fuzzlib
from fuzzlib import Seed

SEEDS = fuzzlib.all_seeds()


#: Every this many-th input also goes through `paimon-schema verify` (4 ms a call).
CLI_EVERY = 10


@pytest.mark.parametrize("seed", SEEDS, ids=[s.id for s in SEEDS])
def test_mutations(seed: Seed) -> None:
    assert not fuzzlib.run_target(seed, seed.data, "unmutated", cli_too=True), "the seed itself fails"
    count, failures = fuzzlib.run_plan(seed, fuzzlib.ci_mutations(seed), cli_every=CLI_EVERY)
    assert count >= len(seed.data) + min(200, 8 * len(seed.data)) + (50 if seed.data else 0)
    assert not failures, f"{len(failures)} kind(s) of failure:\n\n" + fuzzlib.report(failures)


def test_every_layout_has_seeds(shared_fixtures: Path) -> None:
    """Fixture seeds for every layout Paimon has real files of; writer seeds for the rest."""
    fixture = {s.layout for s in fuzzlib.fixture_seeds(shared_fixtures)}
    assert fixture >= {"dv", "container", "bitmap", "bloom-filter", "bsi", "range-bitmap", "roaring", "btree"}
    assert {s.layout for s in SEEDS} == set(fuzzlib.LAYOUTS)
    assert all(len(s.data) <= fuzzlib.MAX_SEED for s in SEEDS)


def test_mutators_are_deterministic() -> None:
    seed = next(s for s in SEEDS if s.layout == "dv" and len(s.data) > 20)
    first = [m.data for m in fuzzlib.ci_mutations(seed)]
    assert first == [m.data for m in fuzzlib.ci_mutations(seed)]
    flips = [m for m in first if len(m) == len(seed.data) and m != seed.data]
    assert len(flips) >= 200
