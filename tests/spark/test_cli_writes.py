"""`paimon-schema table DIR index|delete`: the table writers (`ps.rewrite_file_index`,
`ps.delete_where`) behind one command each, on a forged append table; what they write is
checked against Java in test_table_write.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa

import forged_tables as forge
from paimon_schema.cli.main import main


def test_table_writes_from_the_command_line(tmp_path: Path, capsys: Any) -> None:
    """Index one partition, delete rows, query: each a snapshot; mistakes are one line."""
    n = 200
    data = pa.table({"id": pa.array(range(n), pa.int64()), "city": ["Lima", "Oslo"] * (n // 2),
                     "day": ["2024-05-01"] * (n // 2) + ["2024-05-02"] * (n // 2)})
    root = tmp_path / "t"
    forge.write_table(root, data, {"id": "BIGINT", "city": "STRING", "day": "STRING"},
                      partition_keys=["day"], deleted=[0])
    assert main(["table", str(root), "index", "--index", "city=bitmap", "--index", "id=bloom-filter",
                 "--option", "file-index.bloom-filter.id.items=1000", "--where", "day = '2024-05-01'"]) == 0
    out = capsys.readouterr().out
    assert f"{root}: snapshot 2: file indexes of 1 data file rebuilt" in out
    assert main(["table", str(root), "delete", "--where", "city = 'Oslo'", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["snapshot"], doc["rows_deleted"], doc["files"]) == (3, n // 2, 2)
    assert main(["table", str(root), "query", "--where", "city = 'Oslo'", "--json"]) == 0
    files = json.loads(capsys.readouterr().out)["files"]
    assert [f["result"] for f in files] == ["skip", "remain"]      # indexed + all Oslo deleted
    for argv, message in [(["delete"], "delete needs --where"),
                          (["files", "--index", "a=bitmap"], "go with index"),
                          (["index", "--index", "city"], "'city' is not KEY=VALUE"),
                          (["index"], "no index to build"),
                          (["index", "--index", "city=bitmap", "--where", "city = 'x'"],
                           "may only name partition columns (day), not city")]:
        code = main(["table", str(root), *argv])
        err = capsys.readouterr().err
        assert code == 2 and message in err and "Traceback" not in err, (argv, err)


def test_overview_lists_the_indexes_present_and_counts_read_well(tmp_path: Path,
                                                                capsys: Any) -> None:
    """After `index`, the overview shows the indexes the files hold (not the table's
    `file-index.*.columns` options); one sidecar is "1 sidecar"."""
    data = pa.table({"id": pa.array(range(100), pa.int64()), "city": ["Lima", "Oslo"] * 50,
                     "day": ["2024-05-01"] * 50 + ["2024-05-02"] * 50})
    root = tmp_path / "t"
    forge.write_table(root, data, {"id": "BIGINT", "city": "STRING", "day": "STRING"},
                      partition_keys=["day"], options={"file-index.bloom-filter.columns": "id"})
    assert main(["table", str(root)]) == 0
    assert "file indexes" not in capsys.readouterr().out          # configured, not built
    assert main(["table", str(root), "index", "--index", "city=bitmap", "--where",
                 "day = '2024-05-01'", "--option", "file-index.in-manifest-threshold=1"]) == 0
    written = capsys.readouterr().out
    assert "file indexes of 1 data file rebuilt (0 embedded in the manifest, 1 sidecar, " in written
    assert main(["table", str(root)]) == 0
    assert "  file indexes: bitmap on city (1 of 2 files)" in capsys.readouterr().out.splitlines()
    assert main(["table", str(root), "index"]) == 0                # the option: id, every file
    capsys.readouterr()
    assert main(["table", str(root), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["file_indexes"] == {"bitmap": {"city": 1}, "bloom-filter": {"id": 2}}
    assert doc["file_index_options"] == {"bloom-filter": ["id"]}
    assert main(["table", str(root)]) == 0
    out = capsys.readouterr().out
    assert "  file indexes: bitmap on city (1 of 2 files); bloom-filter on id" in out.splitlines()
    assert not re.search(r"\b1 [a-z]+s\b", written + out), (written, out)
