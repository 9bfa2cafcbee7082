"""The generated Construct codecs: every fixture round-trips byte for byte (interpreted and
compiled), and the codec decodes exactly what the Kaitai parser decodes."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

import pytest
from fixture_catalog import CONTAINERS, DELETION_VECTORS
from kaitaistruct import KaitaiStruct
from paimon_schema.generated.paimon_common import PaimonCommon

from paimon_schema.runtime import constructs
from paimon_schema.runtime import kaitai as parsing

K = PaimonCommon.KeyKind
KINDS = [("boolean", K.boolean), ("tinyint", K.int8), ("smallint", K.int16), ("timestamp", K.int64),
         ("bigint", K.int64), ("double", K.float64), ("float", K.float32), ("string", K.string),
         ("date", K.int32), ("time", K.int32), ("int", K.int32)]


def _kind(stem: str) -> int:
    stem = stem.removeprefix("java_")
    return next(int(kind) for prefix, kind in KINDS if stem.startswith(prefix))


def _blobs(root: Path) -> list[tuple[str, str, int | None]]:
    """(relative path, spec, key kind) of every single-layout fixture."""
    found = [(p, "deletion_vectors", None) for p in DELETION_VECTORS]
    found += [(p, "file_index", None) for p in CONTAINERS]
    for pattern, spec in [("paimon-rust/bitmap/*", "bitmap_index"), ("paimon-cpp/bitmap/*", "bitmap_index"),
                          ("paimon-rust/range-bitmap/*", "range_bitmap"),
                          ("paimon-rust/bsi/*", "bsi_index"), ("paimon-cpp/bsi/*", "bsi_index"),
                          ("paimon-rust/bloom-filter/*", "bloom_filter"), ("paimon-cpp/bloom-filter/*", "bloom_filter")]:
        for path in sorted(root.glob(pattern)):
            kind = _kind(path.name) if spec in ("bitmap_index", "range_bitmap") else None
            found.append((path.relative_to(root).as_posix(), spec, kind))
    found += [("paimon-cpp/file_index/bitmap-index-v1", "bitmap_index", int(K.string)),
              ("paimon-cpp/file_index/bitmap-index-v2", "bitmap_index", int(K.string)),
              ("paimon-cpp/file_index/rangebitmap/rangebitmap.index", "range_bitmap", int(K.int32))]
    return found


ROOT = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
CASES = _blobs(ROOT) if ROOT.is_dir() else []


@cache
def _codec(spec: str, kind: int | None, compiled: bool):
    module = importlib.import_module(f"paimon_schema.generated.{spec}_codec")
    codec = getattr(module, f"t_{spec}")(*([] if kind is None else [kind]))
    return codec.compile() if compiled else codec


def _kaitai(spec: str, kind: int | None, data: bytes):
    module = importlib.import_module(f"paimon_schema.generated.{spec}")
    cls = getattr(module, "".join(part.title() for part in spec.split("_")))
    return parsing.parse(lambda io: cls(io) if kind is None else cls(kind, io), data)


@pytest.mark.parametrize("relpath, spec, kind", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("compiled", [False, True], ids=["interpreted", "compiled"])
def test_fixture_round_trips_through_the_codec(shared_fixtures: Path, relpath: str, spec: str,
                                                kind: int | None, compiled: bool) -> None:
    data = (shared_fixtures / relpath).read_bytes()
    codec = _codec(spec, kind, compiled)
    model = constructs.parse(codec, data)
    assert codec.build(model) == data


def _same(construct_value, kaitai_value, path: str) -> None:
    if isinstance(kaitai_value, KaitaiStruct):
        for key, value in construct_value.items():
            if not key.startswith("_"):
                _same(value, getattr(kaitai_value, key, None), f"{path}.{key}")
    elif isinstance(kaitai_value, list):
        assert len(construct_value) == len(kaitai_value), path
        for i, (a, b) in enumerate(zip(construct_value, kaitai_value)):
            _same(a, b, f"{path}[{i}]")
    elif isinstance(kaitai_value, (bytes, memoryview)):
        assert bytes(construct_value) == bytes(kaitai_value), path
    else:
        assert construct_value == kaitai_value, path


@pytest.mark.parametrize("relpath, spec, kind", CASES, ids=[c[0] for c in CASES])
def test_codec_decodes_what_the_kaitai_parser_decodes(shared_fixtures: Path, relpath: str, spec: str,
                                                      kind: int | None) -> None:
    data = (shared_fixtures / relpath).read_bytes()
    _same(constructs.parse(_codec(spec, kind, True), data), _kaitai(spec, kind, data), spec)


@pytest.mark.parametrize("spec", ["file_index", "deletion_vectors", "hash_index", "bloom_filter",
                                  "bsi_index", "roaring_bitmap", "bitmap_index", "range_bitmap"])
def test_every_codec_compiles(spec: str) -> None:
    module = importlib.import_module(f"paimon_schema.generated.{spec}_codec")
    root = getattr(module, f"t_{spec}")
    codec = root(int(K.int32)) if spec in ("bitmap_index", "range_bitmap") else root()
    assert codec.compile() is not None
