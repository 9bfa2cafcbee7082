"""The table layer against every Java-written table in ../shared/fixtures: live files from the
manifests, partitions, deletion vectors per data file, file-index containers; plus the hint
fallback, time travel, external paths and the errors for what is not supported."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import shutil
import struct
from pathlib import Path

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import import_oracle
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.layouts.binary_row import decode_binary_row
from paimon_schema.table import indexes
from paimon_schema.table.metadata import DataFile, Table, TableError

TABLES = [
    "append_with_bitmap", "append_with_bitmap_alter_table", "append_with_bitmap_no_embedding",
    "append_with_bitmap_v1", "append_with_bloomfilter", "append_with_bsi",
    "append_with_bsi_bitmap_bloomfilter", "append_with_rangebitmap",
    "append_with_rangebitmap_multi_chunk", "data_evolution_with_index", "pk_09", "pk_btree_e2e",
    "pk_dv_index_in_data_no_external", "pk_dv_index_not_in_data_no_external",
    "pk_table_scan_and_read_dv", "pk_table_with_alter_table", "pk_table_with_dv_cardinality",
    "pk_with_bitmap_dv",
]

#: (table, snapshot or None) -> {data file name prefix: (positions, offset, length, cardinality)}
DVS = {
    ("pk_with_bitmap_dv", None): {"data-bfa36b28": ({0, 4}, 1, 24, 2)},
    ("pk_table_scan_and_read_dv", None): {"data-f19db350": ({0}, 1, 22, 1),
                                          "data-d18e5571": ({4}, 1, 22, 1)},
    ("pk_table_with_dv_cardinality", None): {"data-ed5d7184": ({4, 5}, 1, 24, 2),
                                             "data-3061fa63": ({0}, 1, 22, 1)},
    ("pk_table_with_alter_table", None): {"data-8969384c": ({2, 3, 6}, 1, 26, 3)},
    ("pk_dv_index_in_data_no_external", None): {"data-430fa8f2": ({0}, 1, 22, 1),
                                                "data-4702a34d": ({4}, 1, 22, 1)},
    ("pk_dv_index_not_in_data_no_external", None): {"data-5afbc2a0": ({0}, 1, 22, 1),
                                                    "data-30966d79": ({4}, 1, 22, 1)},
    ("pk_09", None): {"data-6d416200": ({4}, 1, 22, None)},
    ("pk_09", 6): {"data-6d416200": ({4}, 1, 22, None),
                   "data-0f3a001e-ce2f-4f01-bb47-08d9901cb76c-0": ({0}, 31, 22, None),
                   "data-0f3a001e-ce2f-4f01-bb47-08d9901cb76c-1": ({0}, 1, 22, None)},
    ("pk_btree_e2e", 4): {"data-6d915c8e-2c9f-46a7-ad5d-4423f7cc5d59-0": ({9, 19}, 1, 24, 2)},
    ("pk_btree_e2e", None): {},
}

#: table -> {column: index types} of every live data file's container
CONTAINERS = {
    "append_with_bitmap": ("embedded", {"f0": ["bitmap"], "f1": ["bitmap"], "f2": ["bitmap"]}),
    "append_with_bitmap_v1": ("embedded", {"f0": ["bitmap"], "f1": ["bitmap"], "f2": ["bitmap"]}),
    "append_with_bitmap_no_embedding": ("sidecar", {"f0": ["bitmap"], "f1": ["bitmap"], "f2": ["bitmap"]}),
    "append_with_bloomfilter": ("sidecar", {c: ["bloom-filter"] for c in ("f0", "f1", "f2", "f3", "f4")}),
    "append_with_bsi": ("sidecar", {c: ["bsi"] for c in ("f1", "f2", "f4")}),
    "append_with_bsi_bitmap_bloomfilter": ("sidecar", {
        "f0": ["bloom-filter", "bitmap"], "f1": ["bloom-filter", "bitmap", "bsi"],
        "f2": ["bloom-filter", "bitmap", "bsi"], "f3": ["bloom-filter"],
        "f4": ["bloom-filter", "bitmap", "bsi"]}),
    "append_with_rangebitmap": ("sidecar", {c: ["range-bitmap"] for c in ("f0", "f1", "f2", "f3", "f4")}),
    "append_with_rangebitmap_multi_chunk": ("sidecar", {c: ["range-bitmap"] for c in ("f0", "f1", "f2", "f3", "f4")}),
    "data_evolution_with_index": ("embedded", {"f2": ["bitmap"]}),
    "pk_with_bitmap_dv": ("sidecar", {"f0": ["bitmap"], "f1": ["bitmap"], "f2": ["bitmap"]}),
}

#: table -> (number of live files, rows in them, files a batch read reads)
LIVE = {
    "append_with_bitmap": (1, 8, 1), "append_with_bitmap_alter_table": (2, 12, 2),
    "append_with_bitmap_no_embedding": (1, 8, 1), "append_with_bitmap_v1": (1, 8, 1),
    "append_with_bloomfilter": (1, 8, 1), "append_with_bsi": (1, 8, 1),
    "append_with_bsi_bitmap_bloomfilter": (1, 8, 1), "append_with_rangebitmap": (1, 8, 1),
    "append_with_rangebitmap_multi_chunk": (1, 8, 1), "data_evolution_with_index": (3, 10, None),
    "pk_09": (3, 10, 3), "pk_btree_e2e": (3, 2001, 3),
    "pk_dv_index_in_data_no_external": (4, 10, 4), "pk_dv_index_not_in_data_no_external": (4, 10, 4),
    "pk_table_scan_and_read_dv": (6, 16, 4), "pk_table_with_alter_table": (3, 11, 3),
    "pk_table_with_dv_cardinality": (3, 10, 3), "pk_with_bitmap_dv": (1, 8, 1),
}


@pytest.fixture(scope="module")
def tables(shared_fixtures: Path) -> Path:
    return shared_fixtures / "paimon-cpp" / "tables" / "parquet"


def table_dir(tables: Path, name: str) -> Path:
    return tables / f"{name}.db" / name


def _copy(tables: Path, name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(table_dir(tables, name), target)
    return target


@pytest.mark.parametrize("name", TABLES)
def test_live_files_come_from_the_manifests(tables: Path, name: str) -> None:
    table = Table.open(table_dir(tables, name))
    files = table.data_files()
    count, rows, read = LIVE[name]
    assert (len(files), sum(f.row_count for f in files)) == (count, rows)
    for f in files:
        assert Path(f.path).is_file(), f.path
        assert f.format == "parquet"
        assert f.schema_id in (0, 1)
    names = [f.file_name for f in files]
    assert len(names) == len(set(names))
    on_disk = {p.name for p in table_dir(tables, name).rglob("data-*.parquet")}
    if name in ("pk_table_scan_and_read_dv", "pk_09", "pk_btree_e2e"):
        assert set(names) < on_disk          # compacted files stay on disk: never listed
    if read is None:
        with pytest.raises(TableError, match="columns split across files"):
            table.plan()
    else:
        assert len(table.plan().files) == read


@pytest.mark.parametrize("key", sorted(DVS, key=repr), ids=lambda k: f"{k[0]}@{k[1]}")
def test_deletion_vectors_per_data_file(tables: Path, key: tuple) -> None:
    name, snapshot = key
    table = Table.open(table_dir(tables, name))
    found = {}
    for f in table.data_files(snapshot):
        if f.deletion_file is None:
            continue
        found[f.file_name, f.level] = (set(table.deletion_vector(f)), f.deletion_file.offset,
                                       f.deletion_file.length, f.deletion_file.cardinality)
        assert Path(f.deletion_file.path).is_file()
    expected = DVS[key]
    assert len(found) == len(expected)
    for prefix, value in expected.items():
        matches = [v for (file_name, _), v in found.items() if file_name.startswith(prefix)]
        assert matches == [value], prefix


@pytest.mark.parametrize("key", sorted(DVS, key=repr), ids=lambda k: f"{k[0]}@{k[1]}")
def test_deleted_counts_without_decoding_a_vector(tables: Path, key: tuple,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The index manifest's cardinality, or (Paimon 0.9 records none) the count in the
    vector's headers: planning decodes no vector, the read decodes each once."""
    name, snapshot = key
    table = Table.open(table_dir(tables, name))
    files = table.data_files(snapshot)
    expected = {f.path: len(table.deletion_vector(f)) if f.deletion_file else 0 for f in files}
    monkeypatch.setattr(indexes, "read_deletion_vector", lambda *a, **k: pytest.fail("decoded"))
    assert table.deleted_counts(files) == expected


def test_dv_files_in_the_data_directory(tables: Path) -> None:
    table = Table.open(table_dir(tables, "pk_dv_index_in_data_no_external"))
    for f in table.data_files():
        if f.deletion_file:
            assert Path(f.deletion_file.path).parent == Path(f.path).parent
    other = Table.open(table_dir(tables, "pk_dv_index_not_in_data_no_external"))
    assert all(Path(f.deletion_file.path).parent.name == "index"
               for f in other.data_files() if f.deletion_file)


def test_index_manifest_keeps_every_index_type(tables: Path) -> None:
    table = Table.open(table_dir(tables, "pk_btree_e2e"))
    kinds = {i.index_type for i in table.index_files()}
    assert {"DELETION_VECTORS", "btree"} <= kinds
    empty = [i for i in table.index_files() if i.index_type == "DELETION_VECTORS"]
    assert [(i.row_count, i.dv_ranges) for i in empty] == [(0, ())]


@pytest.mark.parametrize("name", sorted(CONTAINERS))
def test_file_index_containers(tables: Path, name: str) -> None:
    table = Table.open(table_dir(tables, name))
    stored, columns = CONTAINERS[name]
    for f in table.data_files():
        if name == "pk_with_bitmap_dv" and f.level == 0:
            continue
        assert (f.index_stored == "embedded") == (stored == "embedded")
        if stored == "sidecar":
            assert f.index_stored == f.file_name + ".index"
            assert Path(f.index_sidecar).is_file()
        container = table.file_index(f)
        assert {c: list(types) for c, types in container.columns.items()} == columns


def test_containers_follow_schema_evolution(tables: Path) -> None:
    table = Table.open(table_dir(tables, "append_with_bitmap_alter_table"))
    by_schema = {f.schema_id: set(table.file_index(f).columns) for f in table.data_files()}
    assert by_schema == {0: {"f0", "f1", "f2"}, 1: {"f1", "f4", "f5"}}
    assert [f.name for f in table.schema().fields] == ["f1", "f4", "f3", "f5"]
    assert table.schema().by_name["f4"].id == table.schema(0).by_name["f0"].id == 0


def test_partitions_are_decoded(tables: Path) -> None:
    table = Table.open(table_dir(tables, "pk_table_with_alter_table"))
    partitions = {(f.partition_path, tuple(f.partition.items())) for f in table.data_files()}
    assert partitions == {("key0=1/key1=1", (("key0", 1), ("key1", 1))),
                          ("key0=0/key1=1", (("key0", 0), ("key1", 1)))}
    scan = Table.open(table_dir(tables, "pk_table_scan_and_read_dv"))
    assert {f.partition["f1"] for f in scan.data_files()} == {10, 20}
    assert {f.bucket for f in scan.data_files()} == {0, 1}


def test_time_travel(tables: Path) -> None:
    table = Table.open(table_dir(tables, "pk_table_scan_and_read_dv"))
    assert table.latest_snapshot_id() == 6
    assert len(table.data_files(1)) == 3 and all(f.level == 0 for f in table.data_files(1))
    assert table.plan(1).files == ()                       # DV mode reads no level-0 file
    assert sum(f.row_count for f in table.plan(2).files) == 9
    with pytest.raises(TableError, match="snapshot 99 does not exist .*snapshots 1..6"):
        table.snapshot(99)


def test_latest_hint_is_checked(tables: Path, tmp_path: Path) -> None:
    path = _copy(tables, "pk_table_scan_and_read_dv", tmp_path)
    hint = path / "snapshot" / "LATEST"
    hint.write_text("2")                                   # stale: snapshot-3 exists
    assert Table.open(path).latest_snapshot_id() == 6
    hint.write_text("garbage")
    assert Table.open(path).latest_snapshot_id() == 6
    hint.unlink()
    assert Table.open(path).latest_snapshot_id() == 6
    for snapshot in (path / "snapshot").glob("snapshot-*"):
        snapshot.unlink()
    assert Table.open(path).plan().files == ()


def _rewrite_avro(path: Path, change) -> None:
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        schema, records = reader.writer_schema, [change(r) for r in reader]
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, records, codec="zstandard")
    path.write_bytes(buffer.getvalue())


def test_external_data_paths(tables: Path, tmp_path: Path) -> None:
    path = _copy(tables, "append_with_bitmap_no_embedding", tmp_path)
    external = tmp_path / "elsewhere"
    shutil.copytree(table_dir(tables, "append_with_bitmap_no_embedding").parent / "external-path", external)
    name = next((path / "bucket-0").glob("*.parquet")).name
    shutil.rmtree(path / "bucket-0")

    def point_outside(record: dict) -> dict:
        record["_FILE"]["_EXTERNAL_PATH"] = f"file:{external}/bucket-0/{name}"
        return record

    for manifest in (path / "manifest").glob("manifest-[0-9a-f]*"):
        _rewrite_avro(manifest, point_outside)
    table = Table.open(path)
    [f] = table.data_files()
    assert f.external_path and Path(table.filesystem_for(f.path)[1]).is_file()
    assert table.filesystem_for(f.index_sidecar)[1] == f"{external}/bucket-0/{name}.index"
    assert set(table.file_index(f).columns) == {"f0", "f1", "f2"}


def test_primary_key_table_without_deletion_vectors_is_refused(tables: Path, tmp_path: Path) -> None:
    path = _copy(tables, "pk_table_with_dv_cardinality", tmp_path)
    schema_file = path / "schema" / "schema-0"
    schema = json.loads(schema_file.read_text())
    del schema["options"]["deletion-vectors.enabled"]
    schema_file.write_text(json.dumps(schema))
    table = Table.open(path)
    assert len(table.data_files()) == 3
    with pytest.raises(TableError, match="primary-key table without deletion vectors"):
        table.plan()


def test_unreadable_metadata(tables: Path, tmp_path: Path) -> None:
    with pytest.raises(TableError, match="not a Paimon table: it has no schema/ directory"):
        Table.open(tmp_path)
    with pytest.raises(TableError, match="missing does not exist"):
        Table.open(tmp_path / "missing")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(TableError, match="f.txt is a file, not a Paimon table directory"):
        Table.open(tmp_path / "f.txt")
    path = _copy(tables, "append_with_bitmap", tmp_path)
    manifest = next((path / "manifest").glob("manifest-[0-9a-f]*"))
    manifest.write_bytes(manifest.read_bytes()[:40])
    with pytest.raises(ps.FormatError, match="is not a readable Avro file") as info:
        Table.open(path).data_files()
    assert manifest.name in str(info.value)


def test_corrupt_sidecar_names_its_path(tables: Path, tmp_path: Path) -> None:
    path = _copy(tables, "append_with_bitmap_no_embedding", tmp_path)
    table = Table.open(path)
    [f] = table.data_files()
    Path(f.index_sidecar).write_bytes(b"\x00" * 40)
    with pytest.raises(ps.FormatError, match=f.file_name):
        table.file_index(f)


def test_fsspec_filesystem(tables: Path) -> None:
    fsspec = import_oracle("fsspec")
    table = Table.open(str(table_dir(tables, "pk_with_bitmap_dv")), fsspec.filesystem("file"))
    [f] = table.data_files()
    assert table.deletion_vector(f) == BitMap([0, 4])


# ------------------------------------------------------------------------------ BinaryRow

def _row(arity: int, fixed: list[bytes], variable: bytes = b"", nulls: tuple[int, ...] = ()) -> bytes:
    bitset = bytearray(((arity + 63 + 8) // 64) * 8)
    for i in nulls:
        bitset[(i + 8) >> 3] |= 1 << ((i + 8) & 7)
    return struct.pack(">i", arity) + bytes(bitset) + b"".join(fixed) + variable


def test_binary_row_fixed_values() -> None:
    data = bytes.fromhex("00000001" "0000000000000000" "0a00000000000000")
    assert decode_binary_row(data, ["INT"]) == (10,)
    row = _row(6, [struct.pack("<q", -5), struct.pack("<i", 19739) + bytes(4), b"\x01" + bytes(7),
                   struct.pack("<d", -0.5), struct.pack("<q", 12345), bytes(8)], nulls=(5,))
    assert decode_binary_row(row, ["BIGINT", "DATE", "BOOLEAN", "DOUBLE", "DECIMAL(10, 2)", "INT"]) == (
        -5, dt.date(2024, 1, 17), True, -0.5, decimal.Decimal("123.45"), None)


def test_binary_row_strings_inline_and_in_the_variable_part() -> None:
    inline = b"Alice\x00\x00\x85"
    long_text = b"Two roads diverged"
    base = 8 + 16                                     # bitset + two slots
    pointer = struct.pack("<q", base << 32 | len(long_text))
    row = _row(2, [inline, pointer], long_text + bytes(-len(long_text) % 8))
    assert decode_binary_row(row, ["STRING", "VARCHAR(100)"]) == ("Alice", "Two roads diverged")


def test_binary_row_timestamps() -> None:
    millis = 1_700_000_000_123
    base = 8 + 16
    row = _row(2, [struct.pack("<q", millis), struct.pack("<q", base << 32 | 456_000)],
               struct.pack("<q", millis))
    assert decode_binary_row(row, ["TIMESTAMP(3)", "TIMESTAMP(6)"]) == (
        dt.datetime(2023, 11, 14, 22, 13, 20, 123000), dt.datetime(2023, 11, 14, 22, 13, 20, 123456))


def test_binary_row_errors() -> None:
    with pytest.raises(ps.FormatError, match="2 fields"):
        decode_binary_row(_row(2, [bytes(8), bytes(8)]), ["INT"])
    with pytest.raises(ps.FormatError, match="past the row"):
        decode_binary_row(_row(1, [struct.pack("<q", 100 << 32 | 5)]), ["STRING"])
    with pytest.raises(ps.FormatError):
        decode_binary_row(b"\x00\x00", [])


def test_data_file_helpers() -> None:
    f = DataFile({}, "", 0, 1, "data-x-0.orc", "/t/bucket-0/data-x-0.orc", 1, 1, 0, 0, 0, 0,
                 ("data-x-0.orc.index", "other.index"), None, None, None, 0, None, None)
    assert f.format == "orc"
    with pytest.raises(TableError, match="2 file-index sidecars"):
        f.index_sidecar


def test_hash_index_entries(tables: Path, tmp_path: Path) -> None:
    """A dynamic-bucket table's HASH index files come out of the index manifest like DVs do."""
    path = _copy(tables, "pk_table_with_dv_cardinality", tmp_path)
    snapshot = json.loads((path / "snapshot" / "snapshot-4").read_text())
    manifest = path / "manifest" / snapshot["indexManifest"]
    (path / "index" / "index-hash-0").write_bytes(ps.write_hash_index([7, -3, 12]))

    with manifest.open("rb") as f:
        reader = fastavro.reader(f)
        schema, records = reader.writer_schema, list(reader)
    records.append({**records[0], "_INDEX_TYPE": "HASH", "_FILE_NAME": "index-hash-0",
                    "_FILE_SIZE": 12, "_ROW_COUNT": 3, "_DELETIONS_VECTORS_RANGES": None})
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, records, codec="zstandard")
    manifest.write_bytes(buffer.getvalue())
    table = Table.open(path)
    [hashes] = [i for i in table.index_files() if i.index_type == "HASH"]
    assert (hashes.partition, hashes.bucket, hashes.row_count) == ({"f1": 10}, records[0]["_BUCKET"], 3)
    assert table.hash_index(hashes).tolist() == [7, -3, 12]
    assert len([f for f in table.data_files() if f.deletion_file]) == 2


def test_binary_row_structure_errors_are_located_by_the_spec() -> None:
    """formats/binary_row.ksy frames the row: a truncated slot or a negative arity is located."""
    row = _row(2, [struct.pack("<q", 1), struct.pack("<q", 2)])
    with pytest.raises(ps.FormatError) as info:
        decode_binary_row(row[:-3], ["BIGINT", "BIGINT"])
    assert info.value.path == "slots[1]" and info.value.offset == len(row) - 8
    with pytest.raises(ps.FormatError) as info:
        decode_binary_row(struct.pack(">i", -1), [])
    assert info.value.path == "num_slots"


def test_recent_data_files_hold_a_bounded_number_of_bytes() -> None:
    from paimon_schema.table.manifests import _RecentDataFiles, held_bytes

    f = DataFile({}, "", 0, 1, "data-x-0.orc", "/t/bucket-0/data-x-0.orc", 1, 1, 0, 0, 0, 0,
                 (), None, None, None, 0, None, None)
    one = held_bytes((f,))
    assert held_bytes((f, f)) == 2 * one > len(f.path)
    recent = _RecentDataFiles(3 * one)
    recent.put(("a",), (f, f), 2 * one)
    assert recent.get(("a",)) == (f, f)
    recent.put(("b",), (f,), one)
    recent.get(("a",))                                   # a is now the most recent
    recent.put(("c",), (f, f), 2 * one)                  # 5 files: b goes, then still 4: a goes
    assert recent.get(("a",)) is None and recent.get(("b",)) is None
    assert recent.get(("c",)) == (f, f) and recent.held == 2 * one
    recent.put(("d",), (f,) * 4, 4 * one)                # more than the budget alone: not held
    assert recent.get(("d",)) is None and recent.held == 2 * one


def test_a_folded_snapshot_goes_with_the_manifests_it_needs() -> None:
    """A snapshot's files are its manifests' objects, charged as references: once a manifest
    it needs is evicted, the snapshot goes too (else it would keep uncounted files alive)."""
    from paimon_schema.table.manifests import _RecentDataFiles

    recent = _RecentDataFiles(100)
    recent.put(("m1",), "one", 40)
    recent.put(("m2",), "two", 40)
    recent.put(("s",), "folded", 10, (("m1",), ("m2",)))
    recent.put(("x",), "other", 10, (("gone",),))        # needs what is not held: not held
    assert recent.get(("x",)) is None and recent.held == 90
    assert recent.get(("s",)) == "folded"                # m1, m2, s now the most recent
    recent.put(("m3",), "three", 40)                     # m1 evicted: s goes with it
    assert recent.get(("m1",)) is None and recent.get(("s",)) is None
    assert recent.get(("m2",)) == "two" and recent.held == 80


@given(st.text(st.characters(max_codepoint=0x250), max_size=12))
def test_partition_names_escape_as_hive_does(text: str) -> None:
    """`escapePathName`: each character of Hive's set as `%XX`, the others as they are (the
    names that need none returned whole)."""
    from paimon_schema.table.partitions import _ESCAPED, _escape

    assert _escape(text) == "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)
