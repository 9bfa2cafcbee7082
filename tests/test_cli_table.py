"""`paimon-schema table DIR [files|dv|indexes|query]`: types, deletion-vector ranges and row counts
come from the table's schema and manifests (the Java-written fixture tables), and what is not a
table, or not supported, is said in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import paimon_schema as ps
from fixture_catalog import TABLES
from paimon_schema.cli.main import main

PK_DV = f"{TABLES}/pk_with_bitmap_dv.db/pk_with_bitmap_dv"       # 1 file, 8 rows, DV {0, 4}
DATA = "data-bfa36b28-40e7-4026-893b-d23116973174-0.parquet"
PARTITIONED = f"{TABLES}/pk_09.db/pk_09"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def pk_dv(shared_fixtures: Path) -> str:
    return str(shared_fixtures / PK_DV)


def test_overview(capsys, pk_dv: str) -> None:
    code, out, _ = run(capsys, "table", pk_dv)
    assert code == 0
    assert out.splitlines()[:5] == [
        f"{pk_dv}: Paimon primary-key table (deletion vectors, 1 bucket)",
        "  schema 0: key INT NOT NULL, f0 STRING, f1 INT, f2 INT, f3 DOUBLE",
        "  primary key key",
        "  file indexes: bitmap on f0, f1, f2",
        "  snapshot 4 (COMPACT): 1 data file, 8 rows, 2 rows deleted"]
    doc = json.loads(run(capsys, "table", pk_dv, "--json")[1])
    assert doc["rows"] == 8 and doc["rows_deleted"] == 2 and doc["index_files"] == {"DELETION_VECTORS": 1}
    assert doc["columns"][0] == {"name": "key", "type": "INT NOT NULL"}


def test_files_and_deletion_vectors_from_the_manifests(capsys, pk_dv: str) -> None:
    code, out, _ = run(capsys, "table", pk_dv, "files")
    assert code == 0 and DATA in out and out.splitlines()[-1] == "1 data file, 8 rows"
    doc = json.loads(run(capsys, "table", pk_dv, "dv", "--json")[1])
    [dv] = doc["deletion_vectors"]
    assert (dv["file"], dv["rows"], dv["offset"], dv["length"], dv["cardinality"], dv["bitmap64"]) == \
        (DATA, 8, 1, 24, 2, False)
    assert dv["positions"] == {"cardinality": 2, "ranges": [[0, 1], [4, 5]]}
    code, out, _ = run(capsys, "table", pk_dv, "dv")
    assert "2 of 8 rows deleted" in out and "  {0, 4}" in out.splitlines()


def test_indexes_typed_by_the_schema(capsys, pk_dv: str) -> None:
    code, out, _ = run(capsys, "table", pk_dv, "indexes")
    assert code == 0
    assert "  'f0' bitmap (STRING, 176 bytes): V2, 8 rows, 5 keys, 0 null rows" in out.splitlines()
    doc = json.loads(run(capsys, "table", pk_dv, "indexes", "--json")[1])
    f2 = next(e for e in doc["files"][0]["indexes"] if e["column"] == "f2")
    assert f2["data_type"] == "INT" and f2["index"]["index_type"] == "bitmap"


def test_query_uses_row_counts_and_deletion_vectors(capsys, pk_dv: str, shared_fixtures: Path) -> None:
    code, out, _ = run(capsys, "table", pk_dv, "query", "--where", "f0 = 'Alice' OR f1 = 1")
    assert code == 0 and f"bucket-0/{DATA}: ROWS 1 of 8 {{7}}" in out
    doc = json.loads(run(capsys, "table", pk_dv, "query", "--where", "f2 IS NULL", "--json")[1])
    assert doc["files"][0]["result"] in ("rows", "skip")
    # partition pruning on a partitioned table
    table = str(shared_fixtures / PARTITIONED)
    doc = json.loads(run(capsys, "table", table, "query", "--where", "f1 = -1", "--json")[1])
    assert doc["files"] and all(f["result"] == "skip" and f["by"] == "partition" for f in doc["files"])


def test_bad_tables_and_bad_requests_say_what(capsys, tmp_path: Path, pk_dv: str,
                                              shared_fixtures: Path) -> None:
    cases = [
        (["table", str(tmp_path)], "is not a Paimon table: it has no schema/ directory"),
        (["table", str(tmp_path / "nope")], "does not exist"),
        (["table", pk_dv, "query"], "query needs --where"),
        (["table", pk_dv, "files", "--where", "f1 = 1"], "--where goes with query, delete or index"),
        (["table", pk_dv, "query", "--where", "f1 = 'x'"], "column 'f1' is int32, and 'x' (a string)"),
        (["table", pk_dv, "query", "--where", "nope = 1"], "no column 'nope'"),
        (["table", pk_dv, "query", "--where", "f1 LIKE 'x'"], "--where:"),
        (["table", pk_dv, "--snapshot", "99"], "snapshot 99 does not exist"),
    ]
    for argv, message in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2 and message in err and "Traceback" not in err, (argv, err)
    name = "pk_table_with_dv_cardinality"
    pk_no_dv = tmp_path / name
    shutil.copytree(shared_fixtures / TABLES / f"{name}.db" / name, pk_no_dv)
    schema_file = pk_no_dv / "schema" / "schema-0"
    schema = json.loads(schema_file.read_text())
    del schema["options"]["deletion-vectors.enabled"]
    schema_file.write_text(json.dumps(schema))
    code, _, err = run(capsys, "table", str(pk_no_dv), "query", "--where", "f1 = 1")
    assert code == 2 and "is a primary-key table without deletion vectors" in err
    assert run(capsys, "table", str(pk_no_dv), "files")[0] == 0      # its files still list


def test_files_inside_a_table_take_its_column_types(capsys, pk_dv: str) -> None:
    """`dump`, `--hex` and `verify` of a sidecar need no --row-type inside its table: the types
    come from the schema its data file was written with."""
    sidecar = f"{pk_dv}/bucket-0/{DATA}.index"
    code, out, _ = run(capsys, "dump", "--hex", sidecar)
    assert code == 0
    assert "head.columns[0].name.value = 'f0'" in out
    assert "head.columns[0].indexes[0].blob.num_rows = 8" in out          # the STRING bitmap, opened
    code, out, _ = run(capsys, "dump", sidecar)
    assert code == 0 and "bitmap index (STRING)" in out
    code, out, _ = run(capsys, "verify", sidecar)
    assert code == 0 and "not checked" not in out and "'f2' bitmap:" in out
    code, out, _ = run(capsys, "dump", sidecar, "--column", "f1", "--json")
    assert code == 0 and json.loads(out)["data_type"] == "INT"
    code, _, err = run(capsys, "dump", pk_dv)
    assert code == 2 and f"try `paimon-schema table {pk_dv}`" in err


def test_an_unsupported_column_type_is_named(capsys, tmp_path: Path, shared_fixtures: Path) -> None:
    table = tmp_path / "t"
    shutil.copytree(shared_fixtures / PK_DV, table)
    schema_file = table / "schema" / "schema-0"
    schema = json.loads(schema_file.read_text())
    next(f for f in schema["fields"] if f["name"] == "f1")["type"] = "VARIANT"
    schema_file.write_text(json.dumps(schema))
    code, out, _ = run(capsys, "table", str(table))
    assert code == 0 and "f1 VARIANT" in out
    code, out, _ = run(capsys, "table", str(table), "indexes")
    assert code == 0 and "  'f1' bitmap (-, 102 bytes): no reader for a VARIANT column" in out
    code, _, err = run(capsys, "table", str(table), "query", "--where", "f1 = 1")
    assert code == 2 and err.strip() == "table: columns of type VARIANT are not supported"


def test_query_of_a_sidecar_takes_types_and_row_count_from_its_table(capsys, pk_dv: str) -> None:
    sidecar = f"{pk_dv}/bucket-0/{DATA}.index"
    dv = f"{pk_dv}/index/index-daed25d2-8e68-45ba-aaad-ff342666ef27-0"
    code, out, _ = run(capsys, "query", sidecar, "--where", "f2 IS NULL", "--dv", dv)
    assert code == 0 and out.splitlines()[0].endswith(": ROWS 1 of 8 {7}")


SIDECAR = "bucket-0/data-bfa36b28-40e7-4026-893b-d23116973174-0.parquet.index"   # f1's blob at 272


@pytest.fixture
def corrupt_blob(tmp_path: Path, pk_dv: str) -> tuple[Path, Path]:
    """A copy of the table whose sidecar has f1's bitmap version byte (file offset 272)
    spoiled: the container parses, the blob does not."""
    table = tmp_path / "t"
    shutil.copytree(pk_dv, table)
    sidecar = table / SIDECAR
    data = bytearray(sidecar.read_bytes())
    data[272] ^= 0x55
    sidecar.write_bytes(bytes(data))
    return table, sidecar


def test_a_corrupt_blob_is_named_by_its_file_and_file_offset(capsys, corrupt_blob) -> None:
    table, sidecar = corrupt_blob
    code, out, err = run(capsys, "table", str(table), "query", "--where", "f1 = 10")
    assert code == 1 and "Traceback" not in err
    first, location = err.splitlines()
    assert str(sidecar) in first and "head.columns[1].indexes[0].blob.version, offset 272" in first
    assert location == f"    offset=272 path=head.columns[1].indexes[0].blob.version file={sidecar}"
    code, out, _ = run(capsys, "table", str(table), "indexes")
    assert code == 1 and out.splitlines()[-1].endswith("; 1 corrupt index")
    assert (f"CORRUPT: invalid value 87 (0x57): not one of the allowed values ({sidecar}: "
            f"head.columns[1].indexes[0].blob.version, offset 272; 0 in the blob)") in out
    doc = json.loads(run(capsys, "table", str(table), "indexes", "--json")[1])
    [error] = [e["error"] for e in doc["files"][0]["indexes"] if "error" in e]
    assert (error["file"], error["offset"], error["blob_offset"]) == (str(sidecar), 272, 0)


def test_the_api_names_the_file_with_file_offsets(corrupt_blob) -> None:
    from paimon_schema.table import Table
    from paimon_schema.table import read_arrow

    table, sidecar = corrupt_blob
    t = Table.open(str(table))
    [f] = t.data_files()
    with pytest.raises(ps.FormatError) as caught:      # a blob inside the sidecar
        read_arrow(t, "f1 = 10")
    assert (caught.value.file, caught.value.offset) == (str(sidecar), 272)
    assert str(sidecar) in str(caught.value)
    # a deletion vector's bin: the error names the vector file, offsets in that file
    dv = Path(f.deletion_file.path)
    data = bytearray(dv.read_bytes())
    data[f.deletion_file.offset + 4] ^= 0x55                  # the bin's magic
    dv.write_bytes(bytes(data))
    with pytest.raises(ps.FormatError) as caught:
        t.deletion_vector(f)
    assert caught.value.file == str(dv) and str(dv) in str(caught.value)
    assert (caught.value.offset, caught.value.path) == (f.deletion_file.offset + 4, "bin.magic")
