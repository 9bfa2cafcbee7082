"""Ctrl-C during a long command (`pipeline`, `table DIR index`) is one line on stderr and exit
130, after the command's own cleanup: SIGINT is sent to a subprocess while it is busy (a
patched step announces itself on stdout, then sleeps)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

import forged_tables as forge

#: Runs `paimon-schema ARGV` with `TARGET` replaced by a step that says "busy" and sleeps.
SCRIPT = """
import sys, time, importlib
module, name = sys.argv[1].rsplit(".", 1)
def busy(*args, **kwargs):
    print("busy", args[0] if args else "", flush=True)
    time.sleep(60)
setattr(importlib.import_module(module), name, busy)
from paimon_schema.cli.main import main
raise SystemExit(main(sys.argv[2:]))
"""


def interrupted(target: str, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout's busy line and stderr of the command, SIGINT sent while busy."""
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, target, *argv], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        while line and not line.startswith("busy"):
            line = proc.stdout.readline()
        assert line.startswith("busy"), proc.communicate(timeout=60)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, line, err


def test_ctrl_c_during_table_index(tmp_path: Path) -> None:
    root = tmp_path / "t"
    forge.write_table(root, pa.table({"id": pa.array(range(50), pa.int64())}), {"id": "BIGINT"})
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    code, _, err = interrupted("paimon_schema.table.file_index_rewrite.build_container",
                               "table", str(root), "index", "--index", "id=bitmap")
    assert (code, err) == (130, "table: interrupted\n")
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before      # nothing written


def test_ctrl_c_during_the_pipeline() -> None:
    code, line, err = interrupted("paimon_schema.selfcheck.pipeline.write_table", "pipeline",
                                  "--rows", "10")
    assert code == 130 and "Traceback" not in err
    assert err.splitlines()[-1] == "pipeline: interrupted"
    assert [e for e in err.splitlines() if not e.startswith("paimon-schema: ")] == \
        ["pipeline: interrupted"]                 # besides the progress line of the step begun
    warehouse = Path(line.split()[1])
    assert warehouse.name.startswith("paimon-schema-pipeline-") and not warehouse.exists()
