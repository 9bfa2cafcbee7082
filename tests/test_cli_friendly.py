"""The command line as a new user meets it: no traceback for a mistake (each leak found when
trying it is driven here, in-process or as a subprocess), one set of layout names, `--version`,
`python -m paimon_schema`, `verify --json`, `--all`, `dump --column/--index/--extract/--html`,
`--hex` into container blobs, and progress lines for the slow first steps."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import paimon_schema as ps
from paimon_schema.cli.main import main

TRACEBACK = "Traceback (most recent call last)"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:           # argparse: --version, --help, bad arguments
        code = exc.code
    captured = capsys.readouterr()
    assert TRACEBACK not in captured.err
    return code, captured.out, captured.err


def python(*args: str, code: str | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, *(["-c", code] if code else []), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


@pytest.fixture
def container(tmp_path: Path) -> tuple[Path, bytes]:
    """A container with a typed bitmap on `city` (30 distinct keys) and a bsi on `n`."""
    city = ps.build_index("bitmap", "STRING", [f"c{i:02d}" for i in range(30)] + [None])
    n = ps.build_index("bsi", "INT", list(range(31)))
    path = tmp_path / "data.parquet.index"
    path.write_bytes(ps.write_file_index({"city": {"bitmap": city}, "n": {"bsi": n}}))
    return path, city


# -- tracebacks that leaked -----------------------------------------------------------------------


def test_diagram_to_a_missing_directory(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "diagram", "deletion-vectors", "-o", "/nonexistent/x.svg")
    assert code == 2 and "cannot write /nonexistent/x.svg" in err


def test_demo_keep_on_a_file(capsys, tmp_path: Path) -> None:
    existing = tmp_path / "file"
    existing.write_text("x")
    code, _, err = run(capsys, "demo", "--keep", str(existing))
    assert code == 2 and "exists and is not a directory" in err


def test_pipeline_rows_are_checked_before_spark_starts(capsys, monkeypatch) -> None:
    from paimon_schema.selfcheck import pipeline

    monkeypatch.setattr(pipeline, "main", lambda argv: pytest.fail("the job must not start"))
    for rows in ("0", "-5", "1", "many"):
        code, _, err = run(capsys, "pipeline", "--rows", rows)
        assert code == 2 and "--rows" in err


def test_pipeline_passes_rows_and_keep(capsys, monkeypatch, tmp_path: Path) -> None:
    from paimon_schema.selfcheck import pipeline

    calls = []
    monkeypatch.setattr(pipeline, "main", lambda argv: calls.append(argv) or 0)
    assert run(capsys, "pipeline", "--rows", "1234", "--keep", str(tmp_path / "w"))[0] == 0
    assert calls == [["--rows", "1234", "--keep", str(tmp_path / "w")]]


@pytest.mark.parametrize("argv", [["pipeline"], ["table", "."]])
def test_core_install_is_told_to_install_the_spark_extra(argv: list[str]) -> None:
    blocked = "import sys; sys.modules.update(pyspark=None, fastavro=None); "
    done = python(code=blocked + f"from paimon_schema.cli.main import main; sys.exit(main({argv!r}))")
    assert done.returncode == 2, done.stderr
    assert TRACEBACK not in done.stderr
    assert "pip install 'paimon-schema[spark]'" in done.stderr


def test_dump_of_a_directory(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "dump", str(tmp_path))
    assert code == 2 and "is a directory" in err
    (tmp_path / "schema").mkdir()
    code, _, err = run(capsys, "dump", str(tmp_path))
    assert code == 2 and f"paimon-schema table {tmp_path}" in err


# -- names, versions, entry points ---------------------------------------------------------------


def test_one_set_of_layout_names(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "layouts")
    names = [line.split()[0] for line in out.split("\n\n")[0].splitlines()]
    assert names == ["file-index", "bitmap", "bloom-filter", "bsi", "range-bitmap",
                     "deletion-vectors", "hash-index", "btree-global-index",
                     "bitmap-global-index"]
    assert out.splitlines()[-1].endswith(": roaring-bitmap, paimon-common, binary-row, sorted-index-meta, index-source-meta")
    assert "(also: dv)" in out
    dv = tmp_path / "dv"
    dv.write_bytes(ps.write_deletion_vectors({"a": [1]})[0])
    for spelling in ("deletion-vectors", "dv", "deletion_vectors"):
        code, out, _ = run(capsys, "dump", "--json", "--layout", spelling, str(dv))
        assert code == 0 and json.loads(out)["layout"] == "deletion-vectors"
        code, out, _ = run(capsys, "diagram", spelling)
        assert code == 0 and "DeletionVectors" in out
    code, _, err = run(capsys, "dump", "--layout", "nope", str(dv))
    assert code == 2 and "unknown layout 'nope'" in err and "deletion-vectors" in err


def test_version_and_python_m() -> None:
    done = python("-m", "paimon_schema", "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"paimon-schema {ps.__version__}"
    done = python("-m", "paimon_schema", "layouts")
    assert done.returncode == 0 and "deletion-vectors" in done.stdout


def test_verify_json(capsys, tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.write_bytes(ps.write_deletion_vectors({"a": [1, 2]})[0])
    bad = tmp_path / "bad"
    bad.write_bytes(good.read_bytes()[:-1])
    code, out, _ = run(capsys, "verify", "--json", str(good), str(bad))
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False
    first, second = doc["files"]
    assert first == {"file": str(good), "ok": True, "layout": "deletion-vectors", "size": 33,
                     "summary": "1 bin, 2 positions", "warnings": [], "details": []}
    assert second["ok"] is False and second["error"]["path"] == "bins[0].checksum"
    assert second["error"]["offset"] == 29 and "only 3 bytes available" in second["error"]["message"]


def test_all_lifts_the_cut(capsys, container) -> None:
    path, city = container
    blob = path.with_name("city.bitmap")
    blob.write_bytes(city)
    cut = run(capsys, "dump", "--layout", "bitmap", "--type", "STRING", str(blob))[1]
    whole = run(capsys, "dump", "--layout", "bitmap", "--type", "STRING", "--all", str(blob))[1]
    assert "… (10 more)" in cut and "… (" not in whole
    assert all(f"'c{i:02d}'" in whole for i in range(30))


# -- dump of one blob: text, extract, hex, html -----------------------------------------------------


def test_column_index_extract(capsys, container, tmp_path: Path) -> None:
    path, city = container
    target = tmp_path / "city.bin"
    code, out, _ = run(capsys, "dump", str(path), "--column", "city", "--index", "bitmap",
                       "--extract", "-o", str(target))
    assert code == 0 and target.read_bytes() == city
    code, out, _ = run(capsys, "dump", str(path), "--column", "city", "--type", "STRING")
    assert code == 0 and "bitmap index (STRING)" in out and "'c00'" in out
    code, _, err = run(capsys, "dump", str(path), "--column", "nope")
    assert code == 2 and "no column 'nope'" in err and "city" in err
    code, _, err = run(capsys, "dump", str(path), "--column", "city", "--index", "bsi")
    assert code == 2 and "no bsi index on 'city'" in err
    code, _, err = run(capsys, "dump", str(path), "--extract")
    assert code == 2 and "--extract needs --column" in err


def test_hex_enters_container_blobs(capsys, container) -> None:
    path, _ = container
    code, out, _ = run(capsys, "dump", "--hex", str(path), "--row-type", "city:STRING,n:INT")
    assert code == 0
    assert "head.columns[0].name.value = 'city'" in out
    assert "head.columns[0].indexes[0].blob.num_rows = 31" in out
    assert "head.columns[1].indexes[0].blob.positive.ebm.cookie" in out
    code, out, _ = run(capsys, "dump", "--hex", str(path))     # bsi needs no type; bitmap does
    assert "head.columns[1].indexes[0].blob.num_rows" in out and "head.columns[0].indexes[0].blob.num_rows" not in out
    code, out, _ = run(capsys, "dump", "--hex", str(path), "--column", "n")   # the blob alone
    assert code == 0 and out.splitlines()[0].startswith("00000000  01") and "num_rows = 31" in out
    code, _, err = run(capsys, "dump", "--hex", str(path), "--column", "city")
    assert code == 2 and "a bitmap blob needs --type" in err


def test_html(capsys, container, tmp_path: Path) -> None:
    path, _ = container
    page = tmp_path / "page.html"
    code, out, _ = run(capsys, "dump", "--html", str(path), "--type", "STRING", "-o", str(page))
    text = page.read_text()
    assert code == 0 and text.startswith("<!DOCTYPE html>") and "blob" in text
    code, out, _ = run(capsys, "dump", "--html", str(path))
    assert code == 0 and out.startswith("<!DOCTYPE html>")


# -- progress -------------------------------------------------------------------------------------


def test_progress_while_the_jar_downloads(monkeypatch, tmp_path: Path, caplog) -> None:
    from paimon_schema.selfcheck.reference import java

    def fake_pip(cmd, **kwargs):
        target = Path(cmd[cmd.index("-d") + 1])
        with zipfile.ZipFile(target / "paimon_python_ali-0.1.1-py3-none-any.whl", "w") as wheel:
            wheel.writestr(java._WHEEL_JAR_MEMBER, b"jar bytes")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(java.subprocess, "run", fake_pip)
    with caplog.at_level(logging.INFO, logger="paimon_schema.progress"):
        jar, _ = java._fetch_jar(tmp_path)
    assert jar.read_bytes() == b"jar bytes"
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("fetching Paimon's Java jar") and messages[0].endswith("…")
    assert "done in" in messages[1]


def test_commands_that_start_java_or_spark_show_progress(capsys, monkeypatch) -> None:
    from paimon_schema.runtime import progress
    from paimon_schema.selfcheck import pipeline

    def job(argv):
        with progress.step("starting Spark"):
            pass
        return 0

    monkeypatch.setattr(pipeline, "main", job)
    code, _, err = run(capsys, "pipeline", "--rows", "10")
    assert code == 0
    assert "paimon-schema: starting Spark …" in err and "paimon-schema: starting Spark: done in" in err
