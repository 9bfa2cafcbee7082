"""The specs as others run them: JavaScript parsers generated from formats/ (the pinned compiler,
the pinned npm `kaitai-struct` runtime, in node) read every fixture and writer seed, and their
trees agree field by field with our Python parsers' trees.

Two ways of parsing:

* the Kaitai Web IDE's: JavaScript in debug mode, `_read()` called by the caller, no parameters,
  so parameterized layouts are opened through their generated wrappers in formats/webide/;
* a JavaScript program's: release mode, the key kind passed as the parameter.

Every sequence field and every instance is compared (tools/js_tree.js walks the JavaScript
objects, `py_tree` below the Python ones the same way; bytes by length and SHA-1). JavaScript
numbers are doubles, so an 8-byte integer may come out inexact: the only differences allowed
are in the fields `-js-exact` marks in the specs (docs/using_elsewhere.md lists them), and
there the `shown-by` instances must agree exactly and hold the Python value.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import fastavro
import pytest
from kaitaistruct import KaitaiStream, KaitaiStruct

import fixture_catalog as catalog
import paimon_schema as ps
from oracles import oracle_unavailable
from paimon_schema.layouts.paimon_common import KeyKind, bitmap_keys, range_bitmap_keys
from paimon_schema.runtime.kaitai import PARSE_ERRORS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
import fuzzlib  # noqa: E402  (the fixture and writer seeds the fuzzers start from)

_gen = importlib.util.spec_from_file_location("generate", ROOT / "tools" / "generate.py")
generate = importlib.util.module_from_spec(_gen)
_gen.loader.exec_module(generate)

SPECS = {"dv": "deletion_vectors", "hash": "hash_index", "container": "file_index",
         "bitmap": "bitmap_index", "bloom-filter": "bloom_filter", "bsi": "bsi_index",
         "range-bitmap": "range_bitmap", "roaring": "roaring_bitmap", "binary-row": "binary_row",
         "btree": "btree_global_index", "bitmap-global-index": "bitmap_global_index"}
KEYS = {"bitmap": bitmap_keys, "range-bitmap": range_bitmap_keys}
#: paimon-cpp's high-cardinality STRING bitmaps (10000 keys), above the fuzzers' size cap.
LARGE_BITMAPS = ("paimon-cpp/file_index/bitmap-index-v1", "paimon-cpp/file_index/bitmap-index-v2")


def camel(name: str, upper: bool = False) -> str:
    """Kaitai's JavaScript (lower) or class (upper) camel case of a .ksy id."""
    text = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)
    return text[:1].upper() + text[1:] if upper else text


@dataclass(frozen=True)
class Job:
    name: str
    spec: str
    kind: KeyKind | None
    data: bytes


def _partitions(root: Path) -> Iterator[bytes]:
    """Every serialized BinaryRow of the fixture tables' manifests (partitions and their stats)."""
    for manifest in sorted(root.glob(f"{catalog.TABLES}/*.db/*/manifest/manifest-*")):
        with manifest.open("rb") as f:
            for record in fastavro.reader(f):
                if "_PARTITION" in record:
                    yield record["_PARTITION"]
                if "_PARTITION_STATS" in record:
                    yield record["_PARTITION_STATS"]["_MIN_VALUES"]
                    yield record["_PARTITION_STATS"]["_MAX_VALUES"]


def jobs(root: Path) -> list[Job]:
    """Every fixture the layout tests use (the fuzzers' fixture seeds, every catalogued
    container whatever its size and the blobs inside, the manifests' BinaryRows, the large
    bitmaps) and the writer seeds; distinct (spec, key kind, bytes) only."""
    seeds = [*fuzzlib.fixture_seeds(root), *fuzzlib.writer_seeds()]
    for rel in catalog.CONTAINERS:
        data = (root / rel).read_bytes()
        seeds.append(fuzzlib.Seed(rel, "container", data))
        row_type = fuzzlib._container_row_type(rel)
        for entry in ps.FileIndexFile.parse(data).entries:
            if entry.blob is not None and entry.index_type in SPECS:
                seeds.append(fuzzlib.Seed(f"{rel}#{entry.column}/{entry.index_type}", entry.index_type,
                                          entry.blob, data_type=row_type[entry.column]))
    seeds += [fuzzlib.Seed(f"manifest BinaryRow {i}", "binary-row", raw)
              for i, raw in enumerate(dict.fromkeys(_partitions(root)))]
    seeds += [fuzzlib.Seed(rel, "bitmap", (root / rel).read_bytes(), data_type="STRING")
              for rel in LARGE_BITMAPS]
    out: dict[tuple[str, Any, bytes], Job] = {}
    for seed in seeds:
        kind = KEYS[seed.layout](seed.data_type).kind if seed.layout in KEYS else None
        key = (SPECS[seed.layout], kind, seed.data)
        out.setdefault(key, Job(seed.name, SPECS[seed.layout], kind, seed.data))
    return list(out.values())


# -- the Python side, walked as tools/js_tree.js walks the JavaScript objects

def dump(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)           # enums as their numbers, as in JavaScript
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"bytes": len(value), "sha1": hashlib.sha1(bytes(value)).hexdigest()}
    if isinstance(value, list):
        return [dump(v) for v in value]
    if isinstance(value, KaitaiStruct):
        return struct(value)
    raise TypeError(f"no JSON form for {type(value).__name__}")


def struct(obj: KaitaiStruct) -> dict[str, Any]:
    out: dict[str, Any] = {"_type": type(obj).__name__}
    for name, value in list(vars(obj).items()):
        if not name.startswith("_"):
            out[camel(name)] = dump(value)
    for name, attr in type(obj).__dict__.items():
        if isinstance(attr, property) and not name.startswith("_"):
            try:
                out[camel(name)] = dump(getattr(obj, name))
            except PARSE_ERRORS as exc:
                out[camel(name)] = {"error": type(exc).__name__}
    return out


def py_tree(job: Job) -> dict[str, Any]:
    module = importlib.import_module(f"paimon_schema.generated.{job.spec}")
    cls = getattr(module, camel(job.spec, upper=True))
    io = KaitaiStream(BytesIO(job.data))
    obj = cls(io) if job.kind is None else cls(job.kind, io)
    try:
        obj._read()
    except PARSE_ERRORS as exc:
        return {"error": type(exc).__name__}
    return struct(obj)


# -- comparing

def _int64_fields() -> dict[tuple[str, str], tuple[dict, bool]]:
    """(class name, JavaScript field name) -> (its `-js-exact`, signed?) for every 8-byte field."""
    fields = {}
    for name, spec in generate.load_specs().items():
        for where, field_id, attr in generate.int64_fields(spec):
            owner = camel(name if where == "/" else where.rsplit("/", 1)[1], upper=True)
            typ = attr["type"]
            types = set(typ["cases"].values()) if isinstance(typ, dict) else {typ}
            fields[owner, camel(field_id)] = (attr["-js-exact"], any(t.startswith("s8") for t in types))
    return fields


INT64 = _int64_fields()


@dataclass
class Comparison:
    differences: list[str]
    int64_inexact: list[str]        # allowed: fields marked `-js-exact: shown-by`, checked below


def compare(py: Any, js: Any, where: str = "", owner: str = "", result: Comparison | None = None) -> Comparison:
    result = result or Comparison([], [])
    if isinstance(py, dict) and isinstance(js, dict):
        if ("error" in py) != ("error" in js) or (py.keys() == {"error"}) != (js.keys() == {"error"}):
            result.differences.append(f"{where}: Python {py.get('error', 'parses')}, "
                                      f"JavaScript {js.get('error', 'parses')}")
            return result
        owner = py.get("_type", owner)
        for key in sorted(set(py) | set(js)):
            if key not in py or key not in js:
                result.differences.append(f"{where}.{key}: only in {'Python' if key in py else 'JavaScript'}")
                continue
            exact = INT64.get((owner, key))
            if exact and "shown-by" in exact[0] and py.get(camel(exact[0]["shown-by"][0])) is not None:
                _check_halves(py, key, exact, f"{where}.{key}", result)
                if py[key] != js[key]:
                    result.int64_inexact.append(f"{where}.{key}: Python {py[key]}, JavaScript {js[key]}")
                continue
            compare(py[key], js[key], f"{where}.{key}", owner, result)
    elif isinstance(py, list) and isinstance(js, list) and len(py) == len(js):
        for i, (p, j) in enumerate(zip(py, js)):
            compare(p, j, f"{where}[{i}]", owner, result)
    elif py != js or type(py) is not type(js):
        result.differences.append(f"{where}: Python {py!r}, JavaScript {js!r}")
    return result


def _check_halves(py: dict, key: str, exact: tuple[dict, bool], where: str, result: Comparison) -> None:
    """The `shown-by` instances of an 8-byte field hold its value: (high, low) u4 instances,
    or one u4 array of (low, high) per element of a repeated field."""
    shown, signed = exact[0]["shown-by"], exact[1]

    def joined(hi: int, lo: int) -> int:
        value = hi << 32 | lo
        return value - (1 << 64) if signed and value >= 1 << 63 else value

    names = [camel(n) for n in shown]
    if len(names) == 2:
        expected: Any = joined(py[names[0]], py[names[1]])
    else:
        halves = py[names[0]]
        expected = [joined(halves[2 * i + 1], halves[2 * i]) for i in range(len(halves) // 2)]
    if expected != py[key]:
        result.differences.append(f"{where}: {shown} give {expected}, the field {py[key]}")


# -- running node

@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None or shutil.which("npm") is None:
        oracle_unavailable("node and npm are needed to run the generated JavaScript parsers")
    return path


@pytest.fixture(scope="module")
def all_jobs(shared_fixtures: Path) -> list[Job]:
    return jobs(shared_fixtures)


def run_js(node: str, job_list: list[Job], webide: bool) -> list[dict]:
    """The JavaScript tree (or error) of each job, parsed as the Web IDE or as a program does."""
    files = sorted(generate.FORMATS.glob("*.ksy")) + (sorted(generate.WEBIDE.glob("*.ksy")) if webide else [])
    sources = generate.compile_files(files, "javascript", debug=webide)
    with tempfile.TemporaryDirectory() as tmp:
        for file_name, source in sources.items():
            (Path(tmp) / file_name).write_text(source, encoding="utf-8")
        requests = []
        for i, job in enumerate(job_list):
            (Path(tmp) / f"job{i}.bin").write_bytes(job.data)
            module = camel(job.spec, upper=True)
            args: list[int] = []
            if job.kind is not None and webide:     # the wrapper of the key kind
                module += camel(job.kind.name, upper=True)
            elif job.kind is not None:
                args = [int(job.kind)]
            requests.append({"id": i, "module": module, "class": module, "args": args,
                             "file": str(Path(tmp) / f"job{i}.bin"), "debug": webide})
        proc = subprocess.run([node, str(generate.TOOLS / "js_tree.js"), tmp], input=json.dumps(requests),
                              capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    trees: list[dict] = [{} for _ in job_list]
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        tree = record["tree"] if "tree" in record else {"error": record["error"]}
        job = job_list[record["id"]]
        if webide and job.kind is not None and "error" not in tree:
            tree = tree[camel(job.spec)]            # the wrapper's one field holds the layout
        trees[record["id"]] = tree
    return trees


def agreement(node: str, job_list: list[Job], webide: bool) -> tuple[int, list[str], list[str]]:
    """(jobs that agree, differences, inexact 8-byte numbers) of one way of parsing."""
    js = run_js(node, job_list, webide)
    agreed, differences, inexact = 0, [], []
    for job, tree in zip(job_list, js, strict=True):
        result = compare(py_tree(job), tree)
        differences += [f"{job.name} ({job.spec}): {d}" for d in result.differences]
        inexact += [f"{job.name} ({job.spec}): {d}" for d in result.int64_inexact]
        agreed += not result.differences
    return agreed, differences, inexact


@pytest.mark.parametrize("webide", [True, False], ids=["web-ide-debug-wrappers", "program-release-params"])
def test_javascript_trees_agree_with_python(node: str, all_jobs: list[Job], webide: bool) -> None:
    agreed, differences, inexact = agreement(node, all_jobs, webide)
    assert len(all_jobs) >= 140 and {j.spec for j in all_jobs} == set(SPECS.values())
    assert not differences, f"{len(differences)} differences:\n" + "\n".join(differences[:40])
    assert agreed == len(all_jobs)
    # The inexact numbers are there (writer seeds hold int64 keys beyond 2^53): the check of
    # their halves above is not vacuous.
    assert inexact, "no 8-byte value beyond JavaScript's precision: the halves went unchecked"


def test_a_disagreement_is_reported() -> None:
    py = {"_type": "Key", "kind": 5, "intValue": -(2**32) + 1, "hi": 0xFFFFFFFF, "lo": 1}
    assert compare(py, {**py, "intValue": 1}).int64_inexact
    assert compare(py, {**py, "lo": 2}).differences          # a half differs
    assert compare({**py, "lo": 2}, {**py, "lo": 2}).differences   # the halves do not give the value
    assert compare({"_type": "X", "n": 1}, {"_type": "X", "n": 2}).differences
    assert compare({"_type": "X", "n": 1}, {"error": "EOFError"}).differences
