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


def _spec(**extra: object) -> dict:
    return {"meta": {"id": "x", "endian": "be"}, "doc": "d",
            "seq": [{"id": "a", "type": "u1", "doc": "d"}], **extra}


@pytest.mark.parametrize("spec, complaint", [
    (_spec(enums={"e": {1: "one"}}), "/enums/e/1"),
    (_spec(seq=[{"id": "n", "type": "s8be", "doc": "d"}]), "`n` needs `-js-exact"),
    (_spec(seq=[{"id": "n", "type": "u8", "doc": "d", "-js-exact": {"shown-by": ["hi"]}}]), "not ['hi']"),
    (_spec(params=[{"id": "k", "type": "u1", "doc": "d"}]), "top-level param `k` needs an enum"),
    (_spec(seq=[{"id": "v", "doc": "d", "type": {"switch-on": "1", "cases": {"1": "s4", "2": "u4"}}}]),
     "`v` switches between ['s4', 'u4']"),
    (_spec(seq=[{"id": "v", "doc": "d", "type": {"switch-on": "1", "cases": {"1": "s4", "2": "t"}}}]),
     "`v` switches between ['s4', 't']"),
])
def test_the_spec_rules_name_the_place_and_the_rule(spec: dict, complaint: str) -> None:
    with pytest.raises(generate.SpecError) as info:
        generate.check_spec("x", spec, "")
    assert "formats/x.ksy" in str(info.value) and complaint in str(info.value)
    assert "docs/using_elsewhere.md" in str(info.value)


def test_a_citation_outside_the_repository_is_refused() -> None:
    with pytest.raises(generate.SpecError, match="line 2"):
        generate.check_spec("x", _spec(), "meta:\n  doc: see spec §2.4\n")


def test_every_checked_in_spec_follows_the_rules() -> None:
    for name, spec in generate.load_specs().items():
        generate.check_spec(name, spec, (generate.FORMATS / f"{name}.ksy").read_text(encoding="utf-8"))


def test_compiler_warnings_fail_the_check(tmp_path: Path) -> None:
    """Kaitai's style check: a bare count not named `num_<field>` is a warning, and a warning
    fails like an error, naming target, spec and message."""
    spec = tmp_path / "x.ksy"
    spec.write_text("meta:\n  id: x\ndoc: d\nseq:\n  - id: count\n    type: u1\n    doc: d\n"
                    "  - id: items\n    type: u1\n    repeat: expr\n    repeat-expr: count\n    doc: d\n")
    with pytest.raises(generate.SpecError) as info:
        generate.check_all_targets([spec])
    assert "x.ksy: warning" in str(info.value) and "num_items" in str(info.value)
    assert "rule 3" in str(info.value)


def test_a_parameterized_spec_gets_a_wrapper_per_enum_value() -> None:
    specs = generate.load_specs()
    wrappers = generate.wrappers(specs)
    kinds = specs["paimon_common"]["enums"]["key_kind"]
    assert {f"{name}_{v['id']}.ksy" for name in ("bitmap_index", "range_bitmap")
            for v in kinds.values()} == set(wrappers)
    assert "type: bitmap_index(paimon_common::key_kind::int64)" in wrappers["bitmap_index_int64.ksy"]
