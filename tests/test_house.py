"""The house rules of issue 13, checked on the source: imports flow down the floors, only
layouts/ import generated/, only runtime/ reads Kaitai's private `_debug`, and the library never
imports the self-check wing (the CLI only inside its `demo`/`pipeline` subcommands)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from oracles import oracle_unavailable

import paimon_schema
import paimon_schema as ps
from paimon_schema.cli import hexdump, presenters
from paimon_schema.layouts import registry

PACKAGE = Path(paimon_schema.__file__).parent

#: Floor of each subpackage; a module may import its own floor and the ones below.
FLOORS = {"values": 1, "runtime": 2, "generated": 2.5, "layouts": 3, "query": 4, "table": 4.5,
          "": 4.8, "spark": 5, "cli": 5, "selfcheck": 6, "docs": 0}


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        out.append((".".join(("paimon_schema", *rel.parts)).removesuffix(".__init__"), path))
    return out


def _floor(module: str) -> float:
    parts = module.split(".")
    return FLOORS[parts[1] if len(parts) > 1 and parts[1] in FLOORS else ""]


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported paimon_schema module, imported at module level) for every import statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f)}
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["paimon_schema.selfcheck.reference"]   # relative: only reference/__init__ uses it
        found += [(n, id(node) not in nested) for n in names if n.split(".")[0] == "paimon_schema"
                  and (n.count(".") == 0 or n.split(".")[1] in FLOORS)]
    return found


MODULES = _modules()


@pytest.mark.parametrize("module, path", MODULES, ids=[m for m, _ in MODULES])
def test_imports_flow_down_the_floors(module: str, path: Path) -> None:
    if module.startswith("paimon_schema.generated") or module == "paimon_schema.__main__":
        return
    for imported, _ in _imports(path):
        if imported == "paimon_schema":
            assert _floor(module) >= 5, f"{module} imports the package root"
            continue
        if module == "paimon_schema.cli.main" and imported.startswith("paimon_schema.selfcheck"):
            continue
        assert _floor(imported) <= _floor(module), f"{module} imports {imported} from a higher floor"


def test_no_two_modules_import_each_other() -> None:
    """A circle of two (even through an import inside a function) means neither module can be
    read, tested or moved without the other: what they share belongs in a third module. (A
    package and its own modules do not count: importing a module imports its package.)"""
    paths = dict(MODULES)
    imports = {module: {name for name, _ in _imports(path) if name in paths
                        and not module.startswith(name + ".") and not name.startswith(module + ".")
                        and name != module}
               for module, path in MODULES}
    circles = sorted({tuple(sorted((a, b))) for a, targets in imports.items() for b in targets
                      if a in imports.get(b, ())})
    assert not circles, f"modules importing each other: {circles}"



# -- the one layout registry ----------------------------------------------------------------------

def test_every_spec_written_on_its_own_is_one_registered_layout() -> None:
    specs = {p.stem for p in (Path(__file__).parents[1] / "formats").glob("*.ksy")}
    embedded = {"roaring_bitmap", "paimon_common", "binary_row",   # only ever inside other files
                "sorted_index_meta", "index_source_meta"}
    assert sorted(layout.spec for layout in registry.LAYOUTS.values()) == sorted(specs)
    assert {layout.spec for layout in registry.LAYOUTS.values() if layout.embedded} == embedded
    assert sorted(registry.FILES) == sorted(presenters.LAYOUTS)     # the CLI shows every file


@pytest.mark.parametrize("index_type", registry.INDEX_TYPES)
def test_each_index_builds_opens_and_hex_dumps_through_the_registry(index_type: str) -> None:
    values = [3, None, 1, 3, 2]
    blob = ps.build_index(index_type, "INT", values)
    result = ps.open_index(index_type, blob, "INT").equal(3)
    assert result.remain and (result.rows is None or list(result.rows) == [0, 3])  # bloom: REMAIN
    parsed = registry.parse_generated(index_type, blob, "INT")
    assert any(line for line in hexdump.render(parsed, blob))
    assert registry.detect(blob) is None


def test_files_with_a_signature_are_detected() -> None:
    dv, _ = ps.write_deletion_vectors({"a": [1, 2]})
    container = ps.write_file_index({"c": {"bsi": ps.build_index("bsi", "INT", [1])}})
    assert registry.detect(dv) == "deletion-vectors" and registry.detect(b"\x01") == "deletion-vectors"
    assert registry.detect(container) == "file-index"
    assert registry.detect(ps.write_hash_index([1, 2])) is None


def test_every_spelling_finds_one_layout() -> None:
    for spelling, name in [("dv", "deletion-vectors"), ("Deletion_Vectors", "deletion-vectors"),
                           ("hash", "hash-index"), ("container", "file-index"), ("bitmap_index", "bitmap"),
                           ("bsi-index", "bsi"), ("roaring", "roaring-bitmap"), ("bloom", "bloom-filter")]:
        found = registry.find(spelling)
        assert found is not None and found.name == name, spelling
    assert registry.find("nope") is None
    assert registry.LAYOUTS["roaring-bitmap"].embedded and "roaring-bitmap" not in registry.FILES
    with pytest.raises(ps.SchemaError, match="unknown layout 'nope'"):
        registry.parse_generated("nope", b"")
    with pytest.raises(ps.SchemaError, match="needs its column's data type"):
        registry.parse_generated("bitmap", ps.build_index("bitmap", "INT", [1]))


def test_unknown_index_types_and_options_are_refused_by_name() -> None:
    with pytest.raises(ps.SchemaError, match="unknown index type 'zonemap' \\(known: bitmap, "
                                             "bloom-filter, bsi, range-bitmap\\)"):
        ps.build_index("zonemap", "INT", [1])
    with pytest.raises(ps.SchemaError, match="unknown index type"):
        ps.open_index("dv", b"\x01", "INT")
    with pytest.raises(ps.SchemaError, match="bsi takes no option 'fpp'"):
        ps.build_index("bsi", "INT", [1], fpp=0.1)


@pytest.mark.parametrize("module, path", MODULES, ids=[m for m, _ in MODULES])
def test_only_layouts_import_generated_code(module: str, path: Path) -> None:
    if module.startswith(("paimon_schema.layouts", "paimon_schema.generated")):
        return
    bad = [i for i, _ in _imports(path) if i.startswith("paimon_schema.generated")]
    assert not bad, f"{module} imports {bad}: go through layouts/"


def test_the_self_check_wing_is_reached_only_inside_cli_subcommands() -> None:
    for module, path in MODULES:
        if module.startswith("paimon_schema.selfcheck"):
            bad = [i for i, _ in _imports(path) if i.startswith("paimon_schema.cli.main")]
            assert not bad, f"{module} imports the CLI's main module: an import circle"
            continue
        for imported, top_level in _imports(path):
            if imported.startswith("paimon_schema.selfcheck"):
                assert module == "paimon_schema.cli.main" and not top_level, \
                    f"{module} imports {imported}"


def test_only_the_runtime_reads_kaitai_debug_spans() -> None:
    readers = sorted(m for m, path in MODULES if "_debug" in path.read_text(encoding="utf-8")
                     and not m.startswith(("paimon_schema.runtime", "paimon_schema.generated")))
    assert readers == []


def test_the_wheel_lists_every_package() -> None:
    """pyproject's explicit package list names every package directory (a missing one installs
    from a checkout but not from the wheel)."""
    import tomllib

    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    listed = set(project["tool"]["setuptools"]["packages"]) - {"paimon_schema.generated", "paimon_schema.docs"}
    on_disk = {".".join(p.parent.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py")}
    assert listed == on_disk


@pytest.mark.parametrize("source", sorted((PACKAGE / "runtime").glob("*.c")), ids=lambda p: p.name)
def test_the_c_extensions_compile_without_warnings(source: Path, tmp_path: Path) -> None:
    """`-Wall -Wextra` at the build's `-O3` (where gcc finds maybe-uninitialized reads): a
    warning there has been a value read that nothing checked."""
    import shutil
    import subprocess
    import sysconfig

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        oracle_unavailable("no C compiler (cc) on PATH")
    done = subprocess.run([compiler, "-O3", "-fwrapv", "-Wall", "-Wextra", "-Werror", "-I", sysconfig.get_paths()["include"],
                           "-c", "-o", str(tmp_path / "out.o"), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
