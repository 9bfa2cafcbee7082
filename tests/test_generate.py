"""The generator's house rules: every spec field documented, ids equal file names."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("generate", ROOT / "tools" / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)


def test_every_checked_in_spec_is_documented() -> None:
    for name, spec in generate.load_specs().items():
        generate.check_documented(name, spec)


def test_an_undocumented_field_is_refused() -> None:
    spec = {"meta": {"id": "x"}, "doc": "d",
            "seq": [{"id": "a", "type": "u1", "doc": "fine"}],
            "types": {"t": {"doc": "d", "seq": [{"id": "b", "type": "u1"}]}},
            "instances": {"i": {"value": 1}}}
    with pytest.raises(generate.SpecError) as info:
        generate.check_documented("x", spec)
    assert "/types/t/seq/b" in str(info.value) and "/instances/i" in str(info.value)


def test_every_spec_has_a_parser_and_a_codec() -> None:
    specs = {p.stem for p in (ROOT / "formats").glob("*.ksy")}
    modules = {p.stem for p in (ROOT / "generated").glob("*.py")} - {"__init__"}
    assert modules == specs | {f"{s}_codec" for s in specs}
