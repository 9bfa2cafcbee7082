"""Round trips and time of a table read on S3 against the same read from the local disk.

The table: the README pipeline's (`paimon-schema pipeline`), written by Paimon's Java: 200k rows
in 32 Parquet files (2 partitions x 2 buckets), every tenth row deleted (4 deletion-vector
files), a bitmap index on `city` and a bloom filter on `id` (or `--table DIR`, any table). It
is uploaded to moto's S3 API server on loopback (`tests/s3server.py`, the tests' server), whose
request log counts what each read sends; `--latency-ms` delays every answer by that much, as a
real store's round trip would (10-100 ms), since loopback has none.

Each read is `read_arrow` from a fresh process (nothing cached: a first read, planning
included), full and pruned (`--where`, default the pipeline's filter, which the file indexes
and statistics prune), from the local directory and from S3; the time is the best of
`--repeat` runs, measured inside the process around the read. `--python` runs the reads with
another interpreter (another checkout's venv: the numbers before a change).

    python benchmarks/object_store.py [--table DIR] [--latency-ms 20] [--repeat 3]

Measured (the pipeline's table; a 2-core machine shared with other jobs, load 9-18, so times
are rough; before = pyarrow's S3 reads, after = boto3 reads, now in `table/s3.py`):

    requests                   before   after        seconds at 20 ms    before   after
    s3 full (179,998 rows)        283      50        s3 full               5.2     2.9
    s3 pruned (2,249 rows)        123      36        s3 pruned             3.3     2.9

Without latency (loopback as it is) the after reads are no faster (2.6 s against 2.2 s full):
importing boto3 and making its client costs 0.3-2 s once per process, in the timed read here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import s3server  # noqa: E402

WHERE = "city = 'Lima' AND amount < 50"


class _Delayed:
    """WSGI middleware: every answer `seconds` late (a real store's round trip)."""

    def __init__(self, app: Any, seconds: float) -> None:
        self.app, self.seconds = app, seconds

    def __call__(self, environ: dict, start_response: Any) -> Any:
        time.sleep(self.seconds)
        return self.app(environ, start_response)


class DelayedServer(s3server.S3Server):
    def __init__(self, latency: float) -> None:
        super().__init__()
        self.latency = latency

    def _server_entry(self) -> None:
        from moto.server import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        app = s3server._LoggedApp(DomainDispatcherApplication(create_backend_app), self.log)
        self._server = make_server(self._ip_address, self._port, _Delayed(app, self.latency), True,
                                   request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


def child(target: str, where: str | None, endpoint: str | None) -> None:
    """One read in this fresh process; prints {"seconds", "rows"}."""
    import pyarrow.fs as pafs

    from paimon_schema.spark import read_arrow

    filesystem = None
    if endpoint:
        filesystem = pafs.S3FileSystem(access_key=s3server.ACCESS_KEY, secret_key=s3server.SECRET_KEY,
                                       region=s3server.REGION, endpoint_override=endpoint)
    started = time.perf_counter()
    table = read_arrow(target, where, filesystem=filesystem)
    print(json.dumps({"seconds": time.perf_counter() - started, "rows": table.num_rows}))


def _run(python: str, target: str, where: str | None, endpoint: str | None) -> dict:
    command = [python, __file__, "--child", target, "--where", where or ""] \
        + (["--endpoint", endpoint] if endpoint else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _kind(path: str) -> str:
    if path.endswith((".parquet", ".orc")):
        return "data"
    if path.endswith(".index"):
        return "file-index"
    return "dv" if "/index/" in path else "metadata"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, help="a local table (default: Java writes the pipeline's)")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--where", default=WHERE)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the reads")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.where or None, args.endpoint)
        return 0
    with tempfile.TemporaryDirectory(prefix="object-store-") as tmp:
        table = args.table
        if table is None:
            from paimon_schema.selfcheck.pipeline import write_table

            table, _ = write_table(Path(tmp), args.rows)
        server = DelayedServer(args.latency_ms / 1000)
        server.start()
        try:
            server.create_bucket("benchmark")
            uri = server.upload_tree(table, "benchmark", "t")
            print(f"{table} on S3 (moto on loopback, {args.latency_ms:g} ms a request), "
                  f"{args.python}, best of {args.repeat}")
            print(f"{'read':<22}{'rows':>8}{'seconds':>9}{'requests':>10}  by kind")
            for store, target, endpoint in (("local", str(table), None),
                                            ("s3", uri.removeprefix("s3://"), server.endpoint)):
                for label, where in (("full", ""), ("pruned", args.where)):
                    times, rows, counts = [], 0, Counter()
                    for _ in range(args.repeat):
                        server.log.clear()
                        result = _run(args.python, target, where, endpoint)
                        times.append(result["seconds"])
                        rows = result["rows"]
                        counts = Counter(f"{r.method} {_kind(r.path)}" for r in server.log.snapshot())
                    by_kind = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                    print(f"{store + ' ' + label:<22}{rows:>8}{min(times):>9.3f}"
                          f"{sum(counts.values()):>10}  {by_kind}")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
