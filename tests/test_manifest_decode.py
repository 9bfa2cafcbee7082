"""A decoded manifest (`table.manifests._Decoded`): each entry's kind and fold key, each ADD's
values until its file is made, and the memory estimate, made in one pass by `avro.c`'s
`entries`, are what the Python comprehensions make without the C extension, on every
Java-written manifest of the fixture tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracles import oracle_unavailable

from paimon_schema.runtime.avro_blocks import read_fields
from paimon_schema.table import manifests
from paimon_schema.table.manifests import _ENTRY_FIELDS, _SHARED_SLOTS, _Decoded


def _parts(decoded: _Decoded) -> tuple:
    return decoded.kinds, decoded.keys, decoded.rows, decoded.size, decoded.files


def test_entries_in_c_are_the_comprehensions(shared_fixtures: Path) -> None:
    if manifests._avro is None:         # Python against itself proves nothing (CI fails)
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    files = [p for p in sorted(shared_fixtures.rglob("manifest/manifest-*")) if p.is_file()]
    assert len(files) > 50
    adds = 0
    for path in files:
        rows = read_fields(path.read_bytes(), str(path), _ENTRY_FIELDS, _SHARED_SLOTS)
        compiled = _parts(_Decoded(str(path), rows))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(manifests, "_avro", None)
            assert _parts(_Decoded(str(path), rows)) == compiled, path
        adds += sum(row is not None for row in compiled[2])
    assert adds > 50


def test_entries_of_unusual_rows_are_the_comprehensions() -> None:
    """Extra files as a tuple, empty or missing; kinds that are no ADD; values of other types."""
    if manifests._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    base = [0, b"p", 1, -1, "f.parquet", 10, 5, 0, 0, 1, 2, ("x.index",), b"idx", None, None,
            None, None, None, b"min", b"max", (0,), ("a",)]
    rows = [tuple(base), tuple(base[:11] + [()] + base[12:]), tuple(base[:11] + [None] + base[12:]),
            tuple([1] + base[1:]), tuple([None] + base[1:4] + [None] + base[5:12] + [None] + base[13:]),
            tuple([True] + base[1:18] + ["s", 3] + base[20:])]
    compiled = _parts(_Decoded("m", rows))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifests, "_avro", None)
        assert _parts(_Decoded("m", rows)) == compiled
    assert compiled[0] == [0, 0, 0, 1, None, True]
    assert [k[4] for k in compiled[1]] == [("x.index",), (), (), ("x.index",), ("x.index",), ("x.index",)]
    assert [r is not None for r in compiled[2]] == [True, True, True, False, False, False]


def test_listings_without_the_c_extension_are_the_same(shared_fixtures: Path) -> None:
    """Every snapshot's live files of every fixture table, listed with the C decoder and without it (fastavro's
    records projected in Python, the comprehensions): the same files, deletion vectors and
    statistics."""
    from paimon_schema.runtime import avro_blocks
    from paimon_schema.table import Table

    if manifests._avro is None:
        oracle_unavailable("the C extension paimon_schema.runtime._avro is not built")
    roots = sorted({p.parent.parent for p in shared_fixtures.rglob("snapshot/LATEST")})
    assert len(roots) > 10

    def listings() -> list:
        with pytest.MonkeyPatch.context() as patch:     # nothing from an earlier plan's cache
            patch.setattr(manifests, "_DATA_FILES", manifests._RecentDataFiles(1 << 30))
            out = []
            for root in roots:
                table = Table.open(root)
                out += [table.data_files(snapshot) for snapshot in table.snapshots()]
            return out

    compiled = listings()
    assert sum(map(len, compiled)) > 100
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifests, "_avro", None)
        patch.setattr(avro_blocks, "_avro", None)
        assert listings() == compiled
