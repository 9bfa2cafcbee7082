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
            lines += [f"### `{enum_name}`", "", "| value | name | meaning |", "|---|---|---|"]
            lines += [f"| `{_number(v)}` | `{_label(n)}`"
                      + (f" (Java: `{n['-orig-id']}`)" if isinstance(n, dict) and "-orig-id" in n else "")
                      + f" | {_cell(_enum_doc(n))} |" for v, n in values.items()] + [""]
    return "\n".join(lines).rstrip() + "\n"


def index(specs: dict[str, dict]) -> str:
    """docs/README.md: one line per layout."""
    lines = ["# Layouts", "",
             "Generated from `formats/*.ksy` by `tools/generate.py`; do not edit. "
             "[Using the specs elsewhere](using_elsewhere.md): other languages, the Kaitai Web IDE, "
             "and the rules every spec follows.", "",
             "| layout | spec | what it is |", "|---|---|---|"]
    for name, spec in specs.items():
        lines.append(f"| [{spec['meta'].get('title', name)}]({name}.md) | "
                     f"[`{name}.ksy`](../formats/{name}.ksy) | {summary(spec)} |")
    return "\n".join(lines) + "\n"


#: What a reader needs to run a target's output (the runtime library each one imports).
RUNTIMES = {
    "construct": "Python `construct` (Kaitai's own Construct target; this repository's codecs come "
                 "from tools/construct_emitter.py instead)",
    "cpp_stl_98": "C++98, kaitai_struct_cpp_stl_runtime (raw pointers)",
    "cpp_stl_11": "C++11 and later (C++14/17 too), kaitai_struct_cpp_stl_runtime (std::unique_ptr)",
    "csharp": "C#, KaitaiStruct.Runtime.CSharp",
    "go": "Go, github.com/kaitai-io/kaitai_struct_go_runtime",
    "graphviz": "diagrams (the ones in these docs)",
    "html": "an HTML description",
    "java": "Java, io.kaitai:kaitai-struct-runtime",
    "javascript": "JavaScript, npm kaitai-struct (the Kaitai Web IDE)",
    "lua": "Lua, kaitai_struct_lua_runtime",
    "nim": "Nim, kaitai_struct_nim_runtime",
    "perl": "Perl, IO::KaitaiStruct",
    "php": "PHP, kaitai-io/kaitai_struct_php_runtime",
    "python": "Python, kaitaistruct (this repository's generated/ parsers)",
    "ruby": "Ruby, kaitai-struct",
    "rust": "Rust, kaitai crate",
}


def elsewhere(specs: dict[str, dict], wrappers: dict[str, dict], compiled: dict[str, int],
              int64_fields: Any) -> str:
    """docs/using_elsewhere.md: targets, Web IDE wrappers, the JavaScript 64-bit caveat, rules."""
    lines = ["# Using the specs elsewhere", "",
             "Generated from `formats/` by `tools/generate.py`; do not edit.", "",
             "The specs in [`formats/`](../formats/) are plain Kaitai Struct 0.11 specs: compile them "
             "for your language with `kaitai-struct-compiler`, or open them in the Kaitai Web IDE "
             "next to a file. `tools/generate.py --check` (run by CI) compiles every spec and every "
             "Web IDE wrapper with the pinned compiler (`tools/package-lock.json`) for every target "
             "below and fails on any error or warning.", "",
             "## Targets", "",
             "| target | for | specs + wrappers compiled | errors | warnings |", "|---|---|---|---|---|"]
    for lang, files in compiled.items():
        lines.append(f"| `{lang}` | {RUNTIMES.get(lang, '')} | {len(specs) + len(wrappers)} "
                     f"({files} files) | 0 | 0 |")
    lines += ["", "`cpp_stl_98` and `cpp_stl_11` are the JVM compiler's `--cpp-standard 98` and `11`; "
              "the C++11 output is what C++14/17 code uses.", "",
              "## Opening a layout in the Kaitai Web IDE", "",
              "The Web IDE cannot pass parameters to a top-level type "
              "(kaitai_struct_webide#202). Layouts that need one get a generated wrapper per value in "
              "[`formats/webide/`](../formats/webide/): upload the wrapper into a folder named "
              "`webide`, and the specs it imports into the folder above it (as in this repository), "
              "then open the wrapper next to the file.", "",
              "| file | open | load with it |", "|---|---|---|"]
    plain = [n for n, s in specs.items() if not s.get("params") and n != "paimon_common"]
    what = {"file_index": "a file-index container (`*.index` beside a data file, or an embedded one)",
            "deletion_vectors": "a deletion-vector index file (`index/index-…`)",
            "hash_index": "a dynamic-bucket hash index file",
            "roaring_bitmap": "a portable 32-bit RoaringBitmap",
            "bloom_filter": "a bloom-filter blob", "bsi_index": "a BSI blob",
            "bitmap_index": "a bitmap blob", "range_bitmap": "a range-bitmap blob",
            "binary_row": "a serialized BinaryRow (a manifest's `_PARTITION`)"}
    for name in plain:
        lines.append(f"| {what.get(name, summary(specs[name]))} | [`{name}.ksy`](../formats/{name}.ksy) | "
                     + (", ".join(f"`{i}.ksy`" for i in specs[name]["meta"].get("imports", [])) or "—")
                     + " |")
    for wrapper_id, wrapper in wrappers.items():
        imports = ", ".join(f"`{i}`" for i in re.findall(r"\w+\.ksy", wrapper["doc"]))
        layout = wrapper["seq"][0]["id"]
        kinds = "; ".join(f"{types} (`{value}`)" for value, types in
                          re.findall(r"= `(\w+)` \(([^:]+):", " ".join(wrapper["doc"].split())))
        lines.append(f"| {what.get(layout, layout)} of a {_cell(kinds)} column "
                     f"| [`webide/{wrapper_id}.ksy`](../formats/webide/{wrapper_id}.ksy) | {imports} |")
    lines += ["", "Index blobs inside a container: open the container with `file_index.ksy`; each "
              "entry's `blob` instance shows the blob's bytes; save them and open them with the "
              "blob's spec (the key kind follows the column's type, see "
              "[paimon_common](paimon_common.md)).", "",
              "## JavaScript and 8-byte integers", "",
              "The JavaScript runtime keeps numbers as doubles: an 8-byte integer is exact only up "
              "to 2^53, and `readS8be`/`readS8le` misread some negative values by 2^32. The Web IDE "
              "uses that runtime. Every 8-byte integer field of the specs is listed here with where "
              "its exact value shows; tests/interop/test_kaitai_js.py parses every fixture with the "
              "generated JavaScript parsers (as the Web IDE does, and as a program does) and "
              "checks exactly this, field by field, against the Python parsers.", "",
              "| spec | type | field | exact value |", "|---|---|---|---|"]
    for name, spec in specs.items():
        for where, field_id, attr in int64_fields(spec):
            exact = attr["-js-exact"]
            how = ("in " + ", ".join(f"`{i}`" for i in exact["shown-by"])) if "shown-by" in exact \
                else f"the number itself: {_cell(exact['because'])}"
            lines.append(f"| [{name}]({name}.md) | `{where}` | `{field_id}` | {how} |")
    lines += ["", "## Rules for a spec", "",
              "`tools/generate.py` applies these to every `formats/*.ksy` (a new spec too) and names "
              "the spec, the place and the rule when one is broken:", "",
              "1. every spec, type, field, param and instance has a `doc`; `meta.id` equals the file "
              "name;",
              "2. every enum value is written `{id: ..., doc: ...}`;",
              "3. it compiles for every target above with no error and no warning; Kaitai's style "
              "warnings count: a count used as a bare `repeat-expr` is named `num_<field>` and a "
              "bare `size` `len_<field>` (use `other.size` or an expression when one count serves "
              "several fields); no `valid: expr` (the Nim target cannot compile it: use `valid: "
              "<value>`, `min`/`max` or `any-of`); no `switch-on` mixing integer types of another "
              "signedness or a user type (C++, Java and C# would type it `int` or `Object`);",
              "4. a top-level param has an enum type: the Web IDE cannot pass parameters, so "
              "each value gets a wrapper in `formats/webide/`;",
              "5. every 8-byte integer field has `-js-exact`: `shown-by: [instances]` of its type "
              "that hold its exact value (e.g. `hi`/`lo` halves read with `pos`), or `because: <why "
              "it stays below 2^53>`;",
              "6. it cites the spec files, Paimon's docs or Java classes, never a section (§) of a "
              "document outside the repository;",
              "7. Java names: a field or type named differently from its Java counterpart carries "
              "`-orig-id` with the Java name.",
              "",
              "A length-prefixed region is read as a substream of its declared size (`size:`), so "
              "that a damaged count inside it costs at most the region; tests/fuzz/test_robustness.py "
              "sets every length and count field of every layout to 0, 1, 0x7fffffff and "
              "0xffffffff and bounds each parse's time and memory."]
    return "\n".join(lines).rstrip() + "\n"


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
    if "-orig-id" in spec:
        lines += [f"Java: `{spec['-orig-id']}`.", ""]
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
    java = f" (Java: `{attr['-orig-id']}`)" if "-orig-id" in attr else ""
    return (f"| `{attr['id']}`{java} | {_type(attr) or 'bytes'} | {_size(attr)} | {'; '.join(conditions)} | "
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


def _enum_doc(name: Any) -> str:
    return name.get("doc", "") if isinstance(name, dict) else ""


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
