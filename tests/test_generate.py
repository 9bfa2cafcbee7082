"""The generator's house rules: every spec field documented, ids equal file names."""

from __future__ import annotations

import importlib.util
import sys
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


@pytest.mark.parametrize("attr, complaint", [
    ({"id": "f", "type": "f4"}, "type f4 is not supported"),
    ({"id": "f", "type": "strz"}, "type strz is not supported"),
    ({"id": "f", "size-eos": True, "type": "t"}, "size-eos with a type is not supported"),
    ({"id": "f", "type": "u1", "repeat": "until", "repeat-until": "_ == 0"}, "repeat: until is not supported"),
    ({"id": "f", "type": "nowhere"}, "unknown type 'nowhere'"),
])
def test_the_construct_emitter_names_spec_and_field_it_cannot_translate(attr: dict, complaint: str) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import construct_emitter

    spec = {"meta": {"id": "x", "endian": "be"}, "doc": "d", "seq": [attr],
            "types": {"t": {"doc": "d", "seq": [{"id": "a", "type": "u1", "doc": "d"}]}}}
    with pytest.raises(construct_emitter.EmitError) as info:
        construct_emitter.emit_all({"x": spec})
    assert "formats/x.ksy" in str(info.value) and "/seq/f" in str(info.value)
    assert complaint in str(info.value)
