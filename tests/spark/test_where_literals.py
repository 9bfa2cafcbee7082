"""An integer literal beyond 64 bits is one SchemaError with one message on every path that
reads a WHERE text (`query FILE`, `table DIR query|delete`, `read_arrow`, `delete_where`,
`read_table`) or takes a `ps.col` predicate, never an OverflowError from pyarrow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import forged_tables as forge
import paimon_schema as ps
from paimon_schema import spark as ps_spark
from paimon_schema.cli.main import main
from paimon_schema.table import Table

MESSAGE = "out of range for a 64-bit integer"
WHERES = ["id = 99999999999999999999999", "id = 9223372036854775808",
          "id IN (1, -9223372036854775809)", "9223372036854775808 > id OR city = 'Lima'"]


@pytest.fixture
def table(tmp_path: Path) -> Path:
    data = pa.table({"id": pa.array(range(20), pa.int64()), "city": ["Lima", "Oslo"] * 10})
    root = tmp_path / "t"
    forge.write_table(root, data, {"id": "BIGINT", "city": "STRING"}, deleted=[0],
                      options={"deletion-vectors.enabled": "true"})
    return root


@pytest.mark.parametrize("where", WHERES)
def test_the_cli_refuses_the_literal_in_one_line(table: Path, where: str, capsys: Any) -> None:
    for view in ("query", "delete"):
        code = main(["table", str(table), view, "--where", where])
        err = capsys.readouterr().err
        assert code == 2 and MESSAGE in err and "Traceback" not in err, (view, err)
    assert len(list((table / "snapshot").glob("snapshot-*"))) == 1      # nothing deleted


@pytest.mark.parametrize("where", WHERES)
def test_the_api_refuses_the_literal_as_a_schema_error(table: Path, where: str) -> None:
    for call in (lambda: ps_spark.read_arrow(Table.open(str(table)), where),
                 lambda: Table.open(str(table)).scan(where).to_arrow(),
                 lambda: ps.delete_where(str(table), where)):
        with pytest.raises(ps.SchemaError, match=MESSAGE):
            call()
    with pytest.raises(ps.SchemaError, match=MESSAGE):
        ps_spark.read_arrow(Table.open(str(table)), ps.col("id") == 2**64)


def test_the_edges_of_64_bits_still_read(table: Path) -> None:
    t = Table.open(str(table))
    assert ps_spark.read_arrow(t, "id > -9223372036854775808 AND id < 9223372036854775807") \
        .num_rows == 19


def test_query_file_says_the_same(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "c.index"
    path.write_bytes(ps.write_file_index({"id": {"bloom-filter": ps.build_index(
        "bloom-filter", "BIGINT", [1, 2, 3])}}))
    code = main(["query", str(path), "--where", "id = 9223372036854775808", "--row-type", "id:BIGINT"])
    assert code == 2 and MESSAGE in capsys.readouterr().err


def test_read_table_refuses_it_before_spark_runs(spark: Any, table: Path) -> None:
    with pytest.raises(ps.SchemaError, match=MESSAGE):
        ps_spark.read_table(spark, str(table), "id = 99999999999999999999999")


def test_read_table_refuses_what_read_arrow_refuses(spark: Any, tmp_path: Path) -> None:
    """Our SchemaError naming the column and the literal, not Spark's CAST_INVALID_INPUT."""
    root = tmp_path / "t"
    forge.write_table(root, pa.table({"amount": pa.array([1.0, 60.0]), "city": ["Lima", "Oslo"]}),
                      {"amount": "DOUBLE", "city": "STRING"})
    cases = {"amount < 'x'": r"amount < 'x': column 'amount' is double, and 'x' \(a string\)",
             "city = 5": r"city = 5: column 'city' is string, and 5 \(a number\)"}
    for where, message in cases.items():
        for read in (ps_spark.read_arrow, lambda path, w: ps_spark.read_table(spark, path, w)):
            with pytest.raises(ps.SchemaError, match=message):
                read(str(root), where)
    assert ps_spark.read_table(spark, str(root), "amount < 50").count() == 1
