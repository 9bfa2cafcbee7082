"""Turn formats/*.ksy into generated/ and docs/: the single source of truth becomes code and pages.

    python tools/generate.py           regenerate generated/ and docs/
    python tools/generate.py --check   regenerate into a temp dir; fail, naming the files, on drift

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
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs  # noqa: E402
from construct_emitter import EmitError, emit_all  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "formats"
GENERATED = ROOT / "generated"
DOCS = ROOT / "docs"
#: output folder -> the file patterns it owns
OUTPUTS = {GENERATED: ("*.py",), DOCS: ("*.md", "*.svg", "__init__.py")}
TOOLS = ROOT / "tools"
NODE_MODULES = TOOLS / "node_modules"
PYTHON_PACKAGE = "paimon_schema.generated"
KAITAI_BANNER = "# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild\n"


class SpecError(Exception):
    """A spec breaks one of the house rules (every field documented, id = file name, ...)."""


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


def compile_kaitai(names: list[str], lang: str = "python") -> dict[str, str]:
    """Compile the specs with ksc (one Node process) and return {file name: source}."""
    ensure_compiler()
    files = [str(FORMATS / f"{n}.ksy") for n in names]
    return _node("ksc.js", [lang, PYTHON_PACKAGE, "0", "1" if lang == "python" else "0", *files])


def _node(script: str, args: list[str], stdin: str | None = None) -> dict[str, str]:
    proc = subprocess.run(["node", str(TOOLS / script), *args], input=stdin,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SpecError(f"tools/{script} failed:\n" + proc.stderr)
    return json.loads(proc.stdout)


def render_docs(specs: dict[str, dict], out_dir: Path) -> None:
    """docs/: a page and a diagram per spec, and an index."""
    out_dir.mkdir(parents=True, exist_ok=True)
    diagrams = _node("render_svg.js", [], json.dumps(compile_kaitai(list(specs), "graphviz")))
    for name, spec in specs.items():
        (out_dir / f"{name}.md").write_text(docs.page(name, spec, specs), encoding="utf-8")
        (out_dir / f"{name}.svg").write_text(diagrams[f"{name}.svg"], encoding="utf-8")
    (out_dir / "README.md").write_text(docs.index(specs), encoding="utf-8")
    (out_dir / "__init__.py").write_text(
        '"""Layout pages and diagrams generated from formats/*.ksy, shipped as package data."""\n',
        encoding="utf-8")


def render(root: Path) -> None:
    """Everything the specs produce, under `root`/generated and `root`/docs."""
    specs = load_specs()
    for name, spec in specs.items():
        check_documented(name, spec)
    render_docs(specs, root / DOCS.name)
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


def _owned(folder: Path) -> set[str]:
    patterns = OUTPUTS[DOCS if folder.name == DOCS.name else GENERATED]
    return {p.name for pattern in patterns for p in folder.glob(pattern)} if folder.exists() else set()


def drift(expected_root: Path) -> list[str]:
    problems = []
    for folder in OUTPUTS:
        expected, actual = expected_root / folder.name, folder
        want, have = _owned(expected), _owned(actual)
        where = folder.name
        problems += [f"missing: {where}/{n}" for n in sorted(want - have)]
        problems += [f"not produced by any spec: {where}/{n}" for n in sorted(have - want)]
        problems += [f"differs from its spec: {where}/{n}" for n in sorted(want & have)
                     if not filecmp.cmp(expected / n, actual / n, shallow=False)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="fail if generated/ or docs/ is not exactly what formats/ produces")
    args = parser.parse_args(argv)
    try:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                render(Path(tmp))
                problems = drift(Path(tmp))
            if problems:
                print("generated/ or docs/ is out of date (run python tools/generate.py):",
                      file=sys.stderr)
                print("\n".join("  " + p for p in problems), file=sys.stderr)
                return 1
            print("generated/ and docs/ match formats/")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            render(Path(tmp))
            for folder in OUTPUTS:
                folder.mkdir(exist_ok=True)
                for stale in _owned(folder):
                    (folder / stale).unlink()
                for fresh in _owned(Path(tmp) / folder.name):
                    shutil.copyfile(Path(tmp) / folder.name / fresh, folder / fresh)
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote generated/ and docs/ from {len(list(FORMATS.glob('*.ksy')))} specs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
