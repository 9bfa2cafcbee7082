"""How fast is a whole table read into Arrow, against the bare Parquet decode and pypaimon?

Targets (issues #5, #12, #19), each ratio measured side by side in one run:

- `read_arrow` (`Table.scan().to_arrow()`) at most 1.2x the bare decode of the same Parquet
  files by `pyarrow.parquet.read_table` (the same columns; its defaults: threads, pre-buffering;
  no deletion vectors applied), and at least 2x faster than pypaimon-rust's read (pypaimon
  2.1.0 with `read.native.enabled`, i.e. pypaimon-rust 0.4.0), on four cases: a table of FEW
  LARGE files and one of MANY SMALL files, each read with its deletion vectors (the latest
  snapshot) and without (the snapshot before the deletes: the same data files, no vectors);
- on the few-large table with deletion vectors, at least 5x faster than pypaimon's own
  `to_arrow` (its default Python read path).

The tables:

- few large files: an append table with `deletion-vectors.enabled` (unaware bucket, Parquet),
  2M rows by default in 8 data files of one commit each (`id` BIGINT, `k` INT and `amount`
  DOUBLE random, `tag` STRING of 5000 distinct values), written by pypaimon 2.1.0 itself; then
  Paimon's Java (the reference harness, `AppendDeletionFileMaintainer`) deletes 30 % of each
  file's rows at random positions, one deletion vector per file. (pypaimon writes it because
  pypaimon 2.1.0 cannot plan the manifests of the harness's Paimon 1.0 jar, and its own delete
  takes data-evolution tables only.) The table carries `source.split.target-size: 1mb`, so that
  pypaimon plans one split per file and reads them on its thread pool;
- many small files: the README pipeline's table (`paimon-schema pipeline --rows 2000000 --keep
  DIR` leaves it in `DIR/demo.db/orders`; `--pipeline` takes it, else Java writes it, which
  takes minutes): 2M rows in 288 Parquet files of 2 partitions x 2 buckets, written and
  compacted by Java, which then deletes every tenth row of each file (10 %). pypaimon plans it
  with one shim: its manifest reader requires `_VALUE_STATS_COLS`, which Paimon 1.0's entries
  lack (absent means null, "stats of every column", as later versions write it).

Before timing, the reads must agree: ours returns as many rows as the positions left
undeleted, and the same rows as pypaimon-rust's read (sorted by `id`, compared column by
column); on the few-large table with deletion vectors also pypaimon's `to_arrow` and Java's
own read (`read_table`, `--no-java-check` skips it).

Timed in interleaved rounds per case, each contender once per round, the garbage collected
before each run, each run from the table directory to a `pyarrow.Table`, planning included:

- ours: `read_arrow(table_dir, snapshot=...)`: the snapshot's data files from a per-process
  cache of its manifests (a first read plans in a few ms), then `whole_read`: the files read
  side by side (each footer read once, strings dictionary-encoded in every page read as
  dictionaries; partition columns from the partition values, as Paimon reads them), each
  deletion-vector index file read once, the vectors one mask applied on one thread per CPU;
  the deletion vectors are read and decoded in every run;
- the bare decode of the same files, the same columns: `pyarrow.parquet.read_table(files,
  columns=..., partitioning=None)`, and the same with ours' option for strings
  (`read_dictionary`, cast back to strings; a fairness check, no target);
- pypaimon-rust: `catalog.get_table`, `copy({"read.native.enabled": "true"})`, plan, read;
  pypaimon's `to_arrow` (native off) only on the few-large table with deletion vectors, in
  `--repeat` rounds of its own beside ours.

A ratio is the median of the rounds' ratios (each round's contenders ran back to back, under
the same load), printed with their range; times are medians, the best in brackets; the
CPU-time ratio (all threads, median over median) says how much work each did, which a shared
machine's other processes disturb less. The machine's load average is printed before and after.

    python benchmarks/table_read.py [--quick] [--rows 2000000] [--files 8] [--deleted 0.3]
                                    [--pipeline TABLE_DIR] [--pipeline-rows 2000000]
                                    [--repeat 9] [--no-java-check] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pypaimon_tables import DATABASE, FIELDS, NAME, write_table
from timing import Rounds, rounds

from paimon_schema.spark import read_arrow
from paimon_schema.table.metadata import Table
from paimon_schema.table.schema import type_root

TARGET = 5.0
DECODE_TARGET = 1.2
NATIVE_TARGET = 2.0


@dataclass(frozen=True)
class Case:
    """One table at one snapshot, as each contender reads it."""

    label: str
    path: Path                  # the table directory
    database: str
    name: str
    snapshot: int
    expected_rows: int

    @property
    def warehouse(self) -> Path:
        return self.path.parent.parent


def build(warehouse: Path, rows: int, files: int, fraction: float, seed: int = 5) -> tuple[Path, int]:
    """pypaimon writes the table (one commit, so one data file, per `files`), Java deletes
    `fraction` of each file's rows at random; returns the table directory and the number of
    positions deleted."""
    from paimon_schema.selfcheck.reference import JavaReference
    from paimon_schema.selfcheck.reference.java import delete_positions_request, run_table_ops

    rng = np.random.default_rng(seed)
    path = write_table(warehouse, rows, files, rng, **{"source.split.target-size": "1mb"})
    deletes = {f.file_name: np.flatnonzero(rng.random(f.row_count) < fraction).tolist()
               for f in Table.open(path).data_files()}
    run_table_ops(JavaReference.get(), [delete_positions_request(warehouse, DATABASE, NAME, deletes)])
    return path, sum(len(p) for p in deletes.values())


def build_pipeline(warehouse: Path, rows: int) -> Path:
    """The README pipeline's table, written by Java (without the pipeline's Java read)."""
    from paimon_schema.selfcheck.pipeline import write_table as write_pipeline_table

    return write_pipeline_table(warehouse, rows, java_read=False)[0]


def cases(path: Path, database: str, name: str, label: str) -> list[Case]:
    """The table at its latest snapshot (with deletion vectors) and at the one before the
    deletes (the same data files, none with a vector)."""
    table = Table.open(path)
    latest = table.latest_snapshot_id()
    assert latest is not None and latest > 1
    with_dvs, without = table.data_files(latest), table.data_files(latest - 1)
    assert all(f.deletion_file for f in with_dvs) and not any(f.deletion_file for f in without)
    assert sorted(f.file_name for f in with_dvs) == sorted(f.file_name for f in without)
    rows = sum(f.row_count for f in without)
    deleted = table.deleted_counts(with_dvs)
    return [Case(f"{label}, deletion vectors", path, database, name, latest,
                 rows - sum(deleted.values())),
            Case(f"{label}, no deletion vectors", path, database, name, latest - 1, rows)]


def lenient_pypaimon_manifests() -> None:
    """Let pypaimon 2.1.0 plan Paimon 1.0's manifests, whose entries lack `_VALUE_STATS_COLS`
    (absent is null: stats of every column, as later versions write it)."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager

    original = ManifestFileManager._get_value_stats_fields

    def value_stats_fields(self: ManifestFileManager, file_dict: dict, file_schema: object) -> list:
        if "_VALUE_STATS_COLS" not in file_dict:
            file_dict = {**file_dict, "_VALUE_STATS_COLS": None}
        return original(self, file_dict, file_schema)

    ManifestFileManager._get_value_stats_fields = value_stats_fields


def pypaimon_reader(case: Case, native: bool = False) -> Callable[[], pa.Table]:
    """pypaimon's end-to-end read: table from the catalog, plan, `to_arrow` of every split."""
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"warehouse": str(case.warehouse)})
    options = {"scan.snapshot-id": str(case.snapshot)}
    if native:
        options["read.native.enabled"] = "true"

    def run() -> pa.Table:
        table = catalog.get_table(f"{case.database}.{case.name}").copy(options)
        builder = table.new_read_builder()
        return builder.new_read().to_arrow(builder.new_scan().plan().splits())

    return run


def java_read(warehouse: Path) -> pa.Table:
    """Paimon's own batch read of the few-large table, from the Java reference, as Arrow."""
    from paimon_schema.selfcheck.reference import JavaReference
    from paimon_schema.selfcheck.reference.java import read_table_request, run_table_ops

    (response,) = run_table_ops(JavaReference.get(), [read_table_request(warehouse, DATABASE, NAME)])
    assert response["fields"] == [n for n, _ in FIELDS], response["fields"]
    rows = response["rows"]
    assert all(r[0] == "+I" for r in rows)
    bits = np.array([int(r[3]["bits"], 16) for r in rows], dtype=np.uint64)
    return pa.table({"id": pa.array([r[1] for r in rows], pa.int64()),
                     "k": pa.array([r[2] for r in rows], pa.int32()),
                     "amount": pa.array(bits.view(np.float64)),
                     "tag": pa.array([r[4] for r in rows], pa.string())})


def dictionary_decode(files: list[str], columns: list[str], strings: list[str]) -> pa.Table:
    """The bare decode with the option our read uses for strings (`read_dictionary`), cast
    back to strings: what the baseline would cost if it took the same shortcut."""
    table = pq.read_table(files, columns=columns, read_dictionary=strings, partitioning=None)
    for name in strings:
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, table.column(i).cast(pa.string()))
    return table


def same_rows(a: pa.Table, b: pa.Table) -> bool:
    """Equal rows in any order (`id` is unique), compared column by column in `a`'s types."""
    if a.num_rows != b.num_rows or a.column_names != b.column_names:
        return False
    a = a.sort_by("id").combine_chunks()
    b = b.cast(a.schema).sort_by("id").combine_chunks()
    return all(a.column(i).equals(b.column(i)) for i in range(a.num_columns))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def line(label: str, timed: Rounds, name: str) -> str:
    return f"    {label:44s} {timed.median(name) * 1e3:7.1f} ms ({timed.best(name) * 1e3:6.1f})"


def load() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def bench_case(case: Case, args: argparse.Namespace, *, with_pypaimon: bool = False,
               java_check: bool = False) -> bool:
    """Check, time and print one case; whether its targets are met."""
    table = Table.open(case.path)
    data_files = table.data_files(case.snapshot)
    schema = table.schema()
    columns = [f.name for f in schema.fields]
    strings = [f.name for f in schema.fields if type_root(f.type) in ("STRING", "VARCHAR", "CHAR")]
    parquet_files = [f.path for f in data_files]
    size = sum(f.file_size for f in data_files)
    print(f"\n{case.label}: {case.expected_rows:,} rows to read from {len(data_files)} Parquet files "
          f"({size / 2**20:.1f} MiB), snapshot {case.snapshot}; {load()}")

    ours_run = lambda: read_arrow(case.path, snapshot=case.snapshot)  # noqa: E731
    native_run = pypaimon_reader(case, native=True)
    decode_run = lambda: pq.read_table(parquet_files, columns=columns, partitioning=None)  # noqa: E731

    # Same answers before timing anything (these runs double as warm-up).
    ours, native = ours_run(), native_run()
    checks = {"ours has the undeleted rows": ours.num_rows == case.expected_rows,
              "pypaimon-rust equals ours": same_rows(ours, native)}
    theirs_run = pypaimon_reader(case) if with_pypaimon else None
    if theirs_run is not None:
        checks["pypaimon to_arrow equals ours"] = same_rows(ours, theirs_run())
    if java_check:
        checks["Java's read equals ours"] = same_rows(ours, java_read(case.warehouse))
    for name, ok in checks.items():
        print(f"  check: {name}: {verdict(ok)}")
    if not all(checks.values()):
        return False

    timed = rounds({"decode": decode_run, "ours": ours_run,
                    "decode_dict": lambda: dictionary_decode(parquet_files, columns, strings),
                    "native": native_run}, args.repeat)
    decode_ratio = timed.ratio("ours", "decode")
    native_ratio = timed.ratio("native", "ours")
    print(f"  {args.repeat} interleaved rounds: median (best) times; ratios: the median of the "
          f"rounds' [range]")
    print(line("ours  read_arrow", timed, "ours"))
    print(line("pyarrow.parquet.read_table, no DVs applied", timed, "decode")
          + f"   ours {decode_ratio:4.2f}x its time [{timed.spread('ours', 'decode')}] "
          f"(<= {DECODE_TARGET}x) {verdict(decode_ratio <= DECODE_TARGET)}; "
          f"CPU time {timed.cpu_ratio('ours', 'decode'):4.2f}x")
    print(line("  the same, strings read as dictionaries", timed, "decode_dict")
          + f"   ours {timed.ratio('ours', 'decode_dict'):4.2f}x its time "
          f"[{timed.spread('ours', 'decode_dict')}]; CPU time "
          f"{timed.cpu_ratio('ours', 'decode_dict'):4.2f}x (a fairness check, no target)")
    print(line("pypaimon-rust (read.native.enabled)", timed, "native")
          + f"   ours {native_ratio:4.2f}x faster [{timed.spread('native', 'ours')}] "
          f"(>= {NATIVE_TARGET:.0f}x) {verdict(native_ratio >= NATIVE_TARGET)}; "
          f"CPU time {timed.cpu_ratio('native', 'ours'):4.2f}x")
    ok = decode_ratio <= DECODE_TARGET and native_ratio >= NATIVE_TARGET
    if theirs_run is not None:
        slow = rounds({"ours": ours_run, "pypaimon": theirs_run}, max(3, args.repeat // 3))
        ratio = slow.ratio("pypaimon", "ours")
        print(line("pypaimon 2.1.0 to_arrow", slow, "pypaimon")
              + f"   ours {ratio:5.1f}x faster [{slow.spread('pypaimon', 'ours')}] "
              f"(>= {TARGET:.0f}x) {verdict(ratio >= TARGET)}")
        ok = ok and ratio >= TARGET
    return ok


def bench(warehouse: Path, args: argparse.Namespace) -> bool:
    started = time.perf_counter()
    path, deleted = build(warehouse, args.rows, args.files, args.deleted)
    print(f"few large files: {args.rows:,} rows in {args.files} files, {deleted:,} deleted "
          f"({deleted / args.rows:.1%}) by {args.files} deletion vectors; written in "
          f"{time.perf_counter() - started:.1f} s")
    if args.pipeline is not None:
        pipeline = args.pipeline.resolve()
    else:
        started = time.perf_counter()
        pipeline = build_pipeline(warehouse / "pipeline", args.pipeline_rows)
        print(f"many small files: the pipeline's table, {args.pipeline_rows:,} rows, written by "
              f"Java in {time.perf_counter() - started:.1f} s")
    lenient_pypaimon_manifests()
    few = cases(path, DATABASE, NAME, "few large files")
    many = cases(pipeline, pipeline.parent.name.removesuffix(".db"), pipeline.name,
                 "many small files")
    results = [bench_case(few[0], args, with_pypaimon=True, java_check=not args.no_java_check),
               bench_case(few[1], args), bench_case(many[0], args), bench_case(many[1], args)]
    print(f"\nafter the runs: {load()}")
    return all(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="500k rows in the few-large table, 5 rounds")
    parser.add_argument("--rows", type=int, default=None, help="rows of the few-large table (default 2M)")
    parser.add_argument("--files", type=int, default=8, help="its data files (one commit each)")
    parser.add_argument("--deleted", type=float, default=0.3, help="share of its rows deleted")
    parser.add_argument("--pipeline", type=Path, default=None,
                        help="the many-small-files table: a kept pipeline table "
                             "(DIR/demo.db/orders of `paimon-schema pipeline --keep DIR`)")
    parser.add_argument("--pipeline-rows", type=int, default=2_000_000,
                        help="rows of the pipeline table Java writes without --pipeline")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per case")
    parser.add_argument("--no-java-check", action="store_true",
                        help="skip comparing with Java's read (about 15 s at 2M rows)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the warehouse here (must not exist) and keep it")
    args = parser.parse_args()
    args.rows = args.rows or (500_000 if args.quick else 2_000_000)
    args.repeat = args.repeat or (5 if args.quick else 9)

    from importlib.metadata import version
    print(f"pyarrow {pa.__version__}, pypaimon {version('pypaimon')}, "
          f"pypaimon-rust {version('pypaimon-rust')}, {os.cpu_count()} CPUs; {load()}")
    started = time.perf_counter()
    if args.keep is not None:
        args.keep.mkdir(parents=True)
        ok = bench(args.keep.resolve(), args)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            ok = bench(Path(tmp).resolve(), args)
    print(f"\ntargets: <= {DECODE_TARGET}x the bare decode and >= {NATIVE_TARGET:.0f}x "
          f"pypaimon-rust in every case, >= {TARGET:.0f}x pypaimon's to_arrow: {verdict(ok)}   "
          f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
