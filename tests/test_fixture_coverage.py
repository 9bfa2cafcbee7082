"""Every deletion-vector file and file-index container under ../shared/fixtures is checked."""

from __future__ import annotations

from pathlib import Path

from fixture_catalog import CONTAINERS, DELETION_VECTORS, discover


def test_every_dv_and_container_fixture_is_catalogued(shared_fixtures: Path) -> None:
    found = discover(shared_fixtures)
    catalogued = {**{p: "dv" for p in DELETION_VECTORS}, **{p: "container" for p in CONTAINERS}}
    unchecked = sorted(f"{kind}: {p}" for p, kind in found.items() if catalogued.get(p) != kind)
    assert not unchecked, "fixtures no test checks (add them to tests/fixture_catalog.py):\n" + "\n".join(unchecked)
    missing = sorted(set(catalogued) - set(found))
    assert not missing, f"catalogued fixtures that are gone: {missing}"


INDEX_BLOB_FOLDERS = ["paimon-rust/bitmap", "paimon-rust/bloom-filter", "paimon-rust/bsi",
                      "paimon-rust/range-bitmap", "paimon-cpp/bitmap", "paimon-cpp/bloom-filter",
                      "paimon-cpp/bsi", "paimon-cpp/file_index"]
CONTENT_TESTS = ["test_bitmap.py", "test_bloom.py", "test_bsi.py", "test_range_bitmap.py"]


def test_every_index_blob_fixture_has_a_content_test(shared_fixtures: Path) -> None:
    """Each standalone index blob is named (by its stem, without _v1/_v2) in a content test."""
    here = Path(__file__).parent
    sources = "".join((here / name).read_text(encoding="utf-8") for name in CONTENT_TESTS)
    unchecked = []
    for folder in INDEX_BLOB_FOLDERS:
        for path in sorted((shared_fixtures / folder).rglob("*")):
            if path.is_file():
                stem = path.stem.removesuffix("_v1").removesuffix("_v2").removeprefix("java_")
                if stem not in sources:
                    unchecked.append(path.relative_to(shared_fixtures).as_posix())
    assert not unchecked, f"index blobs no content test names: {unchecked}"
