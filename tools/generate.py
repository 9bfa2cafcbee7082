"""Turn formats/*.ksy into generated/, docs/ and formats/webide/: the single source of truth
becomes code, pages and Web IDE wrappers.

    python tools/generate.py           regenerate generated/, docs/ and formats/webide/
    python tools/generate.py --check   regenerate into a temp dir; fail, naming the files, on drift

Every spec in formats/ (and every wrapper) must also follow the rules below, checked on each
run; docs/using_elsewhere.md states them for readers and for whoever adds a spec:

1. every spec, type, field, param and instance has a `doc`; `meta.id` equals the file name;
2. every enum value is `{id, doc}`: a reader of the spec sees what each value means;
3. it compiles for every target of the pinned compiler (cpp_stl in both the C++98 and the
   C++11 modes) with no error and no warning, Kaitai's naming style warnings included
   (a count used as a bare `repeat-expr` is named `num_<field>`, a bare `size` `len_<field>`),
   and no `switch-on` mixes signed and unsigned integers or integers and other types (the
   compilers would type the field `int` or `Object` without a word);
4. a top-level param has an enum type, so that tools that cannot pass parameters (the Kaitai
   Web IDE) get one wrapper spec per value, generated into formats/webide/;
5. every 8-byte integer field says, in `-js-exact`, how a JavaScript reader (whose numbers are
   doubles) sees its exact value: `shown-by: [instances]` of the same type (e.g. `hi`, `lo`
   halves) or `because: <why it stays below 2^53>`;
6. it cites only what a reader of the repository can follow (no "§" into documents outside it).

Two targets per spec, `generated/<id>.py` and `generated/<id>_codec.py`.

Kaitai's Python parsers come from the npm package kaitai-struct-compiler (pinned in
tools/package-lock.json, installed into tools/node_modules on first use) through tools/ksc.js.
They are generated in Kaitai's debug mode: every object records where each of its fields
starts, which is how paimon_schema reports the offset and .ksy path of a malformed byte.

Construct codecs (the build half) come from our own emitter, tools/construct_emitter.py,
because Kaitai's `construct` target cannot compile these specs.

docs/ holds one page per spec (tools/docs.py) and its diagram: Kaitai's graphviz target,
rendered to SVG by the pinned WebAssembly Graphviz (`@viz-js/viz`, tools/render_svg.js).
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs  # noqa: E402
from construct_emitter import EmitError, emit_all  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "formats"
GENERATED = ROOT / "generated"
DOCS = ROOT / "docs"
WEBIDE = FORMATS / "webide"
#: output folder -> the file patterns it owns
OUTPUTS = {GENERATED: ("*.py",), DOCS: ("*.md", "*.svg", "__init__.py"), WEBIDE: ("*.ksy",)}
TOOLS = ROOT / "tools"
NODE_MODULES = TOOLS / "node_modules"
PYTHON_PACKAGE = "paimon_schema.generated"
KAITAI_BANNER = "# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild\n"


class SpecError(Exception):
    """A spec breaks one of the rules in this module's docstring."""


RULES_PAGE = "docs/using_elsewhere.md"
#: Kaitai's 8-byte integer types, which a JavaScript parser reads into doubles.
INT64_TYPES = {f"{sign}8{end}" for sign in "us" for end in ("", "be", "le")}


def ensure_compiler() -> None:
    """Install the pinned compiler with `npm ci` unless the lockfile's install is present."""
    lock = TOOLS / "package-lock.json"
    stamp = NODE_MODULES / ".lock-sha256"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("tools/generate.py needs Node.js and npm (to install kaitai-struct-compiler)")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=TOOLS, check=True)
    stamp.write_text(digest)


def load_specs() -> dict[str, dict]:
    specs = {}
    for path in sorted(FORMATS.glob("*.ksy")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        if spec["meta"]["id"] != path.stem:
            raise SpecError(f"{path.name}: meta.id {spec['meta']['id']!r} must equal the file name")
        specs[path.stem] = spec
    return specs


def check_documented(name: str, spec: dict) -> None:
    """Fail on a spec, type, field, instance or param without a `doc`: the specs are the docs."""
    missing: list[str] = []
    if "doc" not in spec:
        missing.append("/")

    def visit(type_spec: dict, where: str) -> None:
        for kind in ("seq", "params"):
            for field in type_spec.get(kind, []):
                if "doc" not in field:
                    missing.append(f"{where}/{kind}/{field.get('id')}")
        for inst_id, inst in (type_spec.get("instances") or {}).items():
            if "doc" not in inst:
                missing.append(f"{where}/instances/{inst_id}")
        for type_id, sub in (type_spec.get("types") or {}).items():
            if "doc" not in sub:
                missing.append(f"{where}/types/{type_id}")
            visit(sub, f"{where}/types/{type_id}")

    visit(spec, "")
    if missing:
        raise SpecError(f"formats/{name}.ksy: no `doc` on " + ", ".join(missing))


def _types(spec: dict, where: str = ""):
    """(path, type spec) of the spec's top level and every nested type."""
    yield where or "/", spec
    for type_id, sub in (spec.get("types") or {}).items():
        yield from _types(sub, f"{where}/types/{type_id}")


def check_enums_documented(name: str, spec: dict) -> None:
    """Fail on an enum value given as a bare name: each one needs `{id: ..., doc: ...}`."""
    missing = [f"{where}/enums/{enum}/{value}"
               for where, type_spec in _types(spec)
               for enum, values in (type_spec.get("enums") or {}).items()
               for value, label in values.items()
               if not (isinstance(label, dict) and "id" in label and "doc" in label)]
    if missing:
        raise SpecError(f"formats/{name}.ksy: enum values need `{{id: ..., doc: ...}}` (rule 2 of "
                        f"{RULES_PAGE}): " + ", ".join(missing))


def int64_fields(spec: dict) -> list[tuple[str, str, dict]]:
    """(type path, field id, field) of every 8-byte integer field or parse instance, switch
    cases included."""
    found = []
    for where, type_spec in _types(spec):
        members = [(a.get("id", "?"), a) for a in type_spec.get("seq", [])]
        members += [(i, inst) for i, inst in (type_spec.get("instances") or {}).items() if "value" not in inst]
        for field_id, attr in members:
            typ = attr.get("type")
            types = set(typ["cases"].values()) if isinstance(typ, dict) else {typ}
            if types & INT64_TYPES:
                found.append((where, field_id, attr))
    return found


def check_js_exact(name: str, spec: dict) -> None:
    """Fail on an 8-byte integer field that does not say how JavaScript sees its exact value."""
    problems = []
    for where, field_id, attr in int64_fields(spec):
        exact = attr.get("-js-exact")
        type_spec = dict(_types(spec))[where]
        instances = type_spec.get("instances") or {}
        if not isinstance(exact, dict) or not (set(exact) == {"shown-by"} or set(exact) == {"because"}):
            problems.append(f"{where}: `{field_id}` needs `-js-exact: {{shown-by: [instances]}}` or "
                            f"`{{because: ...}}`")
        elif "shown-by" in exact and not all(i in instances for i in exact["shown-by"]):
            problems.append(f"{where}: `{field_id}`: -js-exact shown-by names instances of its own "
                            f"type, not {exact['shown-by']}")
    if problems:
        raise SpecError(f"formats/{name}.ksy: a JavaScript parser reads 8-byte integers into doubles "
                        f"(rule 5 of {RULES_PAGE}): " + "; ".join(problems))


def check_switches(name: str, spec: dict) -> None:
    """Fail on a `switch-on` whose cases mix signed and unsigned integers, or integers with other
    types: the compiler types the field as the cases' common type, which is a 32-bit `int`
    (C++, Java, C#: an 8-byte value truncated) or `Object`/nothing at all (C++ fails)."""
    problems = []
    for where, type_spec in _types(spec):
        members = [(a.get("id", "?"), a) for a in type_spec.get("seq", [])]
        members += list((type_spec.get("instances") or {}).items())
        for field_id, attr in members:
            typ = attr.get("type")
            if not isinstance(typ, dict):
                continue
            kinds = {("int", t[0]) if re.fullmatch(r"[us][1248](be|le)?", t) else ("other", t)
                     for t in typ["cases"].values()}
            ints = {k for k in kinds if k[0] == "int"}
            if len({sign for _, sign in ints}) > 1 or (ints and len(kinds) > len(ints)):
                problems.append(f"{where}: `{field_id}` switches between {sorted(set(typ['cases'].values()))}")
    if problems:
        raise SpecError(f"formats/{name}.ksy: a switch mixes signed and unsigned integers or integers "
                        f"and other types; split it into one field per kind (rule 3 of {RULES_PAGE}): "
                        + "; ".join(problems))


def check_citations(name: str, text: str) -> None:
    """Fail on a "§" citation: the specs cite their own files, Paimon's docs and Java classes."""
    lines = [str(i) for i, line in enumerate(text.splitlines(), 1) if "§" in line]
    if lines:
        raise SpecError(f"formats/{name}.ksy, line {', '.join(lines)}: cite a spec file, Paimon's "
                        f"docs or a Java class, not a section of a document outside the repository "
                        f"(rule 6 of {RULES_PAGE})")


def check_spec(name: str, spec: dict, text: str) -> None:
    """Every rule that needs only the spec itself (the compiler checks the rest)."""
    check_documented(name, spec)
    check_enums_documented(name, spec)
    check_js_exact(name, spec)
    check_switches(name, spec)
    check_citations(name, text)
    for param in spec.get("params") or []:
        if "enum" not in param:
            raise SpecError(f"formats/{name}.ksy: top-level param `{param.get('id')}` needs an enum "
                            f"type: the Kaitai Web IDE cannot pass parameters, so each value gets a "
                            f"wrapper spec in formats/webide/ (rule 4 of {RULES_PAGE})")


def compile_kaitai(names: list[str], lang: str = "python") -> dict[str, str]:
    """Compile the specs with ksc (one Node process) and return {file name: source}."""
    return compile_files([FORMATS / f"{n}.ksy" for n in names], lang, debug=lang == "python")


def compile_files(files: list[Path], lang: str, debug: bool) -> dict[str, str]:
    """Compile .ksy files for one target (debug mode: field positions, `_read()` called by the
    caller, as the Web IDE does); {file name: source}."""
    ensure_compiler()
    result = _node("ksc.js", [lang, PYTHON_PACKAGE, "0", "1" if debug else "0", *map(str, files)])
    _raise_problems({lang: result})
    return result["files"]


def targets() -> list[str]:
    """Every language of the pinned compiler, cpp_stl split into its C++98 and C++11 modes."""
    ensure_compiler()
    langs = _node("ksc.js", ["--languages", PYTHON_PACKAGE, "0", "0"])
    return sorted(x for lang in langs for x in
                  (("cpp_stl_98", "cpp_stl_11") if lang == "cpp_stl" else (lang,)))


def check_all_targets(files: list[Path]) -> dict[str, int]:
    """Compile `files` for every target (rule 3); {target: files written} when all are clean."""
    ensure_compiler()
    langs = targets()
    results = _node("ksc.js", [",".join(langs), PYTHON_PACKAGE, "0", "0", *map(str, files)])
    _raise_problems(results)
    return {lang: len(results[lang]["files"]) for lang in langs}


def _raise_problems(results: dict[str, dict]) -> None:
    problems = [f"  {lang}: {Path(p['spec']).name}: {p['severity']}: {' '.join(p['message'].split())}"
                for lang, result in results.items() for p in result["problems"]]
    if problems:
        raise SpecError("kaitai-struct-compiler: every spec must compile for every target with no "
                        f"error and no warning (rule 3 of {RULES_PAGE}):\n" + "\n".join(problems))


def _node(script: str, args: list[str], stdin: str | None = None) -> dict[str, str]:
    proc = subprocess.run(["node", str(TOOLS / script), *args], input=stdin,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SpecError(f"tools/{script} failed:\n" + proc.stderr)
    return json.loads(proc.stdout)


class _BlockDumper(yaml.SafeDumper):
    """YAML as the specs are written: multi-line strings as `|` blocks."""


_BlockDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def _imported(specs: dict[str, dict], names: list[str]) -> list[str]:
    """`names` and every spec they import, directly or not."""
    found: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo += specs[name]["meta"].get("imports", [])
    return sorted(found)


def wrappers(specs: dict[str, dict]) -> dict[str, str]:
    """formats/webide/: for a spec whose top level takes params (rule 4), one wrapper spec per
    combination of their enum values, passing them; {file name: YAML text}."""
    out = {}
    for name, spec in specs.items():
        params = spec.get("params") or []
        if not params:
            continue
        choices: list[list[tuple[str, str, str, str]]] = []    # (param, enum ref, value id, doc)
        for param in params:
            enum_ref = param["enum"]
            owner, _, enum = enum_ref.rpartition("::")
            values = (specs[owner] if owner else spec)["enums"][enum]
            choices.append([(param["id"], enum_ref if owner else f"{name}::{enum}", v["id"], v["doc"])
                            for v in values.values()])
        for combo in itertools.product(*choices):
            wrapper_id = "_".join([name, *(value for _, _, value, _ in combo)])
            args = ", ".join(f"{ref}::{value}" for _, ref, value, _ in combo)
            owners = sorted({ref.split("::")[0] for _, ref, _, _ in combo} | {name})
            needed = _imported(specs, owners)
            chosen = "; ".join(f"`{param}` = `{value}` ({' '.join(doc.split())})"
                               for param, _, value, doc in combo)
            meta = {"id": wrapper_id, "title": f"{spec['meta'].get('title', name)}, "
                    + ", ".join(value for _, _, value, _ in combo),
                    **{k: spec["meta"][k] for k in ("application", "license", "ks-version")
                       if k in spec["meta"]},
                    "imports": [f"../{o}" for o in owners]}
            doc = textwrap.fill(
                f"`{name}` with {chosen}, as a top-level type without parameters: the Kaitai Web "
                f"IDE cannot pass parameters to a top-level type (kaitai_struct_webide#202). Open "
                f"this file in the Web IDE together with the specs it imports, "
                + ", ".join(f"{o}.ksy" for o in needed)
                + ", placed one folder up, as in the repository (formats/ and formats/webide/).",
                width=96) + "\n"
            wrapper = {"meta": meta, "doc": doc,
                       "seq": [{"id": name, "type": f"{name}({args})",
                                "doc": f"The whole file, read by `{name}` with {args}."}]}
            out[f"{wrapper_id}.ksy"] = (
                f"# Generated by tools/generate.py from formats/{name}.ksy; do not edit.\n"
                + yaml.dump(wrapper, Dumper=_BlockDumper, sort_keys=False, width=100, allow_unicode=True))
    return out


def render_docs(specs: dict[str, dict], out_dir: Path, wrapper_specs: dict[str, dict],
                compiled: dict[str, int]) -> None:
    """docs/: a page and a diagram per spec, an index, and the page on using the specs elsewhere."""
    out_dir.mkdir(parents=True, exist_ok=True)
    diagrams = _node("render_svg.js", [], json.dumps(compile_kaitai(list(specs), "graphviz")))
    for name, spec in specs.items():
        (out_dir / f"{name}.md").write_text(docs.page(name, spec, specs), encoding="utf-8")
        (out_dir / f"{name}.svg").write_text(diagrams[f"{name}.svg"], encoding="utf-8")
    (out_dir / "README.md").write_text(docs.index(specs), encoding="utf-8")
    (out_dir / "using_elsewhere.md").write_text(
        docs.elsewhere(specs, wrapper_specs, compiled, int64_fields), encoding="utf-8")
    (out_dir / "__init__.py").write_text(
        '"""Layout pages and diagrams generated from formats/*.ksy, shipped as package data."""\n',
        encoding="utf-8")


def render(root: Path) -> None:
    """Everything the specs produce, under `root`/generated, `root`/docs and
    `root`/formats/webide; fails on a spec that breaks a rule."""
    specs = load_specs()
    for name, spec in specs.items():
        check_spec(name, spec, (FORMATS / f"{name}.ksy").read_text(encoding="utf-8"))
    webide = root / "formats" / WEBIDE.name
    webide.mkdir(parents=True, exist_ok=True)
    wrapper_texts = wrappers(specs)
    wrapper_specs = {}
    for file_name, text in wrapper_texts.items():
        (webide / file_name).write_text(text, encoding="utf-8")
        wrapper_specs[file_name.removesuffix(".ksy")] = yaml.safe_load(text)
        check_spec(f"webide/{file_name.removesuffix('.ksy')}", wrapper_specs[file_name.removesuffix(".ksy")], text)
    with tempfile.TemporaryDirectory() as tmp:      # the wrappers import ../<spec>
        for path in FORMATS.glob("*.ksy"):
            shutil.copyfile(path, Path(tmp) / path.name)
        shutil.copytree(webide, Path(tmp) / WEBIDE.name)
        compiled = check_all_targets(sorted(Path(tmp).glob("*.ksy"))
                                     + sorted((Path(tmp) / WEBIDE.name).glob("*.ksy")))
    render_docs(specs, root / DOCS.name, wrapper_specs, compiled)
    out_dir = root / GENERATED.name
    sources = compile_kaitai(list(specs))
    out_dir.mkdir(parents=True, exist_ok=True)
    for file_name, source in sorted(sources.items()):
        stem = file_name.removesuffix(".py")
        if stem not in specs:
            raise SpecError(f"compiler emitted {file_name} for no spec in formats/")
        if not source.startswith(KAITAI_BANNER):
            raise SpecError(f"unexpected compiler banner in {file_name}")
        header = (f"# Generated by tools/generate.py from formats/{stem}.ksy "
                  f"(kaitai-struct-compiler 0.11.0, Python, read-only, debug positions).\n"
                  f"# Do not edit: change the spec and regenerate.\n")
        (out_dir / file_name).write_text(header + source[len(KAITAI_BANNER):], encoding="utf-8")
    try:
        codecs = emit_all(specs)
    except EmitError as exc:
        raise SpecError(f"construct emitter: {exc}") from exc
    for file_name, source in sorted(codecs.items()):
        stem = file_name.removesuffix("_codec.py")
        header = (f"# Generated by tools/generate.py from formats/{stem}.ksy "
                  f"(tools/construct_emitter.py, Construct 2.10 codec).\n"
                  f"# Do not edit: change the spec and regenerate.\n")
        (out_dir / file_name).write_text(header + source, encoding="utf-8")
    (out_dir / "__init__.py").write_text(
        '"""Code generated from formats/*.ksy by tools/generate.py; never edited by hand."""\n',
        encoding="utf-8",
    )


def _owned(folder: Path, patterns: tuple[str, ...]) -> set[str]:
    return {p.name for pattern in patterns for p in folder.glob(pattern)} if folder.exists() else set()


def drift(expected_root: Path) -> list[str]:
    problems = []
    for folder, patterns in OUTPUTS.items():
        where = folder.relative_to(ROOT).as_posix()
        expected, actual = expected_root / where, folder
        want, have = _owned(expected, patterns), _owned(actual, patterns)
        problems += [f"missing: {where}/{n}" for n in sorted(want - have)]
        problems += [f"not produced by any spec: {where}/{n}" for n in sorted(have - want)]
        problems += [f"differs from its spec: {where}/{n}" for n in sorted(want & have)
                     if not filecmp.cmp(expected / n, actual / n, shallow=False)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="fail if generated/, docs/ or formats/webide/ is not exactly what "
                             "formats/ produces")
    args = parser.parse_args(argv)
    try:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                render(Path(tmp))
                problems = drift(Path(tmp))
            if problems:
                print("generated/, docs/ or formats/webide/ is out of date (run python tools/generate.py):",
                      file=sys.stderr)
                print("\n".join("  " + p for p in problems), file=sys.stderr)
                return 1
            print("generated/, docs/ and formats/webide/ match formats/")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            render(Path(tmp))
            for folder, patterns in OUTPUTS.items():
                fresh_dir = Path(tmp) / folder.relative_to(ROOT)
                folder.mkdir(exist_ok=True)
                for stale in _owned(folder, patterns):
                    (folder / stale).unlink()
                for fresh in _owned(fresh_dir, patterns):
                    shutil.copyfile(fresh_dir / fresh, folder / fresh)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote generated/, docs/ and formats/webide/ from {len(list(FORMATS.glob('*.ksy')))} specs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
