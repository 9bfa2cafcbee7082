"""The README's Python snippets run as written, in order: the layout snippet as is, the table
snippets (reading, then writing; the writing one uses the reading one's `spark`) in a directory
holding a table at the path they name (`warehouse/demo.db/orders`, forged here with the
pipeline's columns, partitions, a bitmap index on `city` and deletion vectors); the S3 snippet
with that table in the bucket it names on the loopback S3 server, whose endpoint and
credentials it takes from the AWS environment variables set here."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa

import forged_tables as forge
from oracles import import_oracle

README = Path(__file__).resolve().parents[2] / "README.md"


def snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def run(code: str, where: Path, namespace: dict | None = None) -> str:
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(where)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(README), "exec"),
                 {"__name__": "__readme__"} if namespace is None else namespace)
    finally:
        os.chdir(cwd)
    return out.getvalue()


def test_readme_has_the_snippets() -> None:
    assert len(snippets()) == 4


def test_layout_snippet(tmp_path: Path) -> None:
    printed = run(snippets()[0], tmp_path).splitlines()
    assert printed == ["1 26 False 3", "BitMap([0, 2])", "IndexResult(rows=BitMap([0]))", "1"]


CITIES = ["Oslo", "Lima", "Pune", "Kyiv"]


def forge_orders(root: Path, n: int) -> Path:
    """The pipeline's table, forged: `<root>/warehouse/demo.db/orders`, `n` rows, every tenth deleted."""
    data = pa.table({"id": pa.array(range(n), pa.int64()),
                     "city": [CITIES[i * len(CITIES) // n] for i in range(n)],
                     "amount": pa.array([float(i % 97) for i in range(n)]),
                     "day": ["2024-05-01" if i < n // 2 else "2024-05-02" for i in range(n)]})
    path = root / "warehouse" / "demo.db" / "orders"
    forge.write_table(path, data, {"id": "BIGINT", "city": "STRING", "amount": "DOUBLE", "day": "STRING"},
                      partition_keys=["day"], bucket_of=[i % 2 for i in range(n)],
                      indexes={"city": {"bitmap": {}}}, deleted=range(0, n, 10))
    return path


def test_table_snippets(spark: Any, tmp_path: Path) -> None:
    cities = CITIES
    n = 400
    forge_orders(tmp_path, n)
    namespace = {"__name__": "__readme__"}
    printed = run(snippets()[1], tmp_path, namespace).splitlines()
    expected = sum(1 for i in range(n) if i % 10 and cities[i * len(cities) // n] == "Lima"
                   and i % 97 < 50)
    files = [line for line in printed if line.startswith("{'day'")]
    assert len(files) == 4
    assert printed[len(files)] == f"{expected} 2 of 4 files pruned"
    assert printed[len(files) + 1] == "[1] []"              # the forged table: one snapshot, no tag
    below = sum(1 for i in range(n) if i % 10 and i % 97 < 50)
    assert printed[-1] == f"{below} 0"
    # writing: indexes rebuilt, then rows deleted; Java's semantics are tested in test_table_write
    printed = run(snippets()[2], tmp_path, namespace).splitlines()
    from paimon_schema.spark import read_arrow

    table = tmp_path / "warehouse" / "demo.db" / "orders"
    kept = [i for i in range(n) if i % 10 and not (i % 97 < 30 or cities[i * len(cities) // n] == "Oslo")]
    assert sorted(read_arrow(table).column("id").to_pylist()) == kept
    assert printed == [f"{n - n // 10 - len(kept)} rows deleted in snapshot 5"]



def test_s3_snippet(s3_server: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from s3server import ACCESS_KEY, REGION, SECRET_KEY

    n = 400
    local = forge_orders(tmp_path / "local", n)
    s3_server.create_bucket("demo-bucket")
    s3_server.upload_tree(local, "demo-bucket", "warehouse/demo.db/orders")
    for name, value in {"AWS_ENDPOINT_URL": s3_server.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                        "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": REGION}.items():
        monkeypatch.setenv(name, value)
    printed = run(snippets()[3], tmp_path).splitlines()
    kept = sum(1 for i in range(n) if i % 10 and CITIES[i * len(CITIES) // n] != "Oslo")
    assert printed == [f"{kept} rows left after snapshot 3"]


def test_the_spark_snippet_prints_nothing_on_stderr(tmp_path: Path) -> None:
    """Run alone, with its own JVM (the session fixture's would be reused, and its stderr is
    not this test's): no Spark log lines, no progress bars. The one line left is the JVM's own
    notice of the incubator module Spark 4 adds, which no option silences."""
    import_oracle("pyspark")
    forge_orders(tmp_path, 400)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-c", snippets()[1]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    below = sum(1 for i in range(400) if i % 10 and i % 97 < 50)
    assert done.stdout.splitlines()[-1] == f"{below} 0"
    assert [line for line in done.stderr.splitlines()
            if line != "WARNING: Using incubator modules: jdk.incubator.vector"] == []
