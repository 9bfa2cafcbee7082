"""Write docs/: one Markdown page per .ksy (its story, field tables, enums, references) and
the diagram Kaitai's graphviz target draws of it, rendered to SVG by the pinned Graphviz build.

The pages are generated from the specs alone, so a reader of the checked-in docs sees exactly
what the specs say; tools/generate.py --check fails when they drift.
"""

from __future__ import annotations

import re
from typing import Any

PRIMITIVE_SIZES = {"u1": 1, "s1": 1, "u2": 2, "s2": 2, "u4": 4, "s4": 4, "u8": 8, "s8": 8,
                   "f4": 4, "f8": 8}


def page(name: str, spec: dict[str, Any], all_specs: dict[str, dict]) -> str:
    """The Markdown page of one spec."""
    meta = spec["meta"]
    lines = [f"# {meta.get('title', name)}", "",
             f"Spec: [`formats/{name}.ksy`](../formats/{name}.ksy) · endianness: "
             f"{'big' if meta.get('endian', 'be') == 'be' else 'little'}-endian"
             + (f" · imports: {', '.join(f'[`{i}`]({i}.md)' for i in meta.get('imports', []))}"
                if meta.get("imports") else ""), "",
             spec.get("doc", "").strip(), ""]
    refs = spec.get("doc-ref") or []
    if isinstance(refs, str):
        refs = [refs]
    if refs:
        lines += ["References:", ""] + [f"- <{r}>" for r in refs] + [""]
    lines += [f"![{name} diagram]({name}.svg)", ""]
    lines += _type_section(spec, name, "the whole layout", level=2)
    for type_name, type_spec in _nested_types(spec):
        lines += _type_section(type_spec, type_name, None, level=2)
    enums = list(_enums(spec))
    if enums:
        lines += ["## Enums", ""]
        for enum_name, values in enums:
            lines += [f"### `{enum_name}`", "", "| value | name |", "|---|---|"]
            lines += [f"| `{_number(v)}` | `{_label(n)}` |" for v, n in values.items()] + [""]
    return "\n".join(lines).rstrip() + "\n"


def index(specs: dict[str, dict]) -> str:
    """docs/README.md: one line per layout."""
    lines = ["# Layouts", "",
             "Generated from `formats/*.ksy` by `tools/generate.py`; do not edit.", "",
             "| layout | spec | what it is |", "|---|---|---|"]
    for name, spec in specs.items():
        lines.append(f"| [{spec['meta'].get('title', name)}]({name}.md) | "
                     f"[`{name}.ksy`](../formats/{name}.ksy) | {summary(spec)} |")
    return "\n".join(lines) + "\n"


def summary(spec: dict[str, Any]) -> str:
    """The first sentence of a spec's doc."""
    text = " ".join(spec.get("doc", "").split())
    match = re.match(r"(.+?\.)(\s|$)", text)
    return (match.group(1) if match else text).replace("|", "\\|")


def _nested_types(spec: dict[str, Any], prefix: str = ""):
    for name, sub in (spec.get("types") or {}).items():
        yield prefix + name, sub
        yield from _nested_types(sub, prefix + name + "::")


def _enums(spec: dict[str, Any], prefix: str = ""):
    for name, values in (spec.get("enums") or {}).items():
        yield prefix + name, values
    for name, sub in (spec.get("types") or {}).items():
        yield from _enums(sub, prefix + name + "::")


def _type_section(spec: dict[str, Any], name: str, what: str | None, level: int) -> list[str]:
    hashes = "#" * level
    title = f"{hashes} `{name}`" + (f" ({what})" if what else "")
    lines = [title, ""]
    if what is None and spec.get("doc"):
        lines += [spec["doc"].strip(), ""]
    params = spec.get("params") or []
    if params:
        lines += ["Parameters: " + ", ".join(f"`{p['id']}` ({p.get('type', '?')}): {_cell(p.get('doc', ''))}"
                                             for p in params), ""]
    seq = spec.get("seq") or []
    if seq:
        lines += ["| field | type | size | condition / check | meaning |", "|---|---|---|---|---|"]
        lines += [_row(attr) for attr in seq] + [""]
    instances = spec.get("instances") or {}
    if instances:
        lines += ["| derived / positioned | how | meaning |", "|---|---|---|"]
        for inst_name, inst in instances.items():
            how = f"`= {_cell(str(inst['value']))}`" if "value" in inst else \
                f"at `{_cell(str(inst.get('pos')))}`" + (f", {_type(inst)}" if _type(inst) else "") + \
                (f", `{_cell(str(inst['size']))}` bytes" if "size" in inst else "") + \
                (f", if `{_cell(str(inst['if']))}`" if "if" in inst else "")
            lines.append(f"| `{inst_name}` | {how} | {_cell(inst.get('doc', ''))} |")
        lines.append("")
    return lines


def _row(attr: dict[str, Any]) -> str:
    conditions = []
    if "if" in attr:
        conditions.append(f"if `{_cell(str(attr['if']))}`")
    if "valid" in attr:
        conditions.append(f"valid: `{_cell(_valid(attr['valid']))}`")
    if "repeat" in attr:
        count = attr.get("repeat-expr", "until the end")
        conditions.append(f"repeated {'× `' + _cell(str(count)) + '`' if attr['repeat'] == 'expr' else count}")
    return (f"| `{attr['id']}` | {_type(attr) or 'bytes'} | {_size(attr)} | {'; '.join(conditions)} | "
            f"{_cell(attr.get('doc', ''))} |")


def _type(attr: dict[str, Any]) -> str:
    typ = attr.get("type")
    if typ is None:
        return ""
    if isinstance(typ, dict):
        cases = ", ".join(f"{_cell(str(k))} → `{_cell(str(v))}`" for k, v in typ["cases"].items())
        return f"switch on `{_cell(str(typ['switch-on']))}`: {cases}"
    enum = f" → enum `{attr['enum']}`" if "enum" in attr else ""
    return f"`{_cell(typ)}`{enum}"


def _size(attr: dict[str, Any]) -> str:
    if "size" in attr:
        return f"`{_cell(str(attr['size']))}`"
    if attr.get("size-eos"):
        return "to the end"
    typ = attr.get("type")
    if isinstance(typ, str):
        base = re.sub(r"(be|le)$", "", typ)
        if base in PRIMITIVE_SIZES:
            return str(PRIMITIVE_SIZES[base])
    return "varies"


def _valid(valid: Any) -> str:
    if not isinstance(valid, dict):
        return f"== {valid}"
    parts = []
    for rule, operand in valid.items():
        if rule == "any-of":
            parts.append("one of " + ", ".join(str(o) for o in operand))
        elif rule == "expr":
            parts.append(str(operand).strip())
        else:
            parts.append(f"{ {'min': '>=', 'max': '<=', 'eq': '=='}.get(rule, rule)} {operand}")
    return "; ".join(parts)


def _number(value: Any) -> str:
    return f"{value} (0x{value:x})" if isinstance(value, int) and value > 255 else str(value)


def _label(name: Any) -> str:
    return name["id"] if isinstance(name, dict) else str(name)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
