"""`paimon-schema demo`: the quickest end-to-end proof that the library reads and writes what
Paimon does, in two rounds.

1. Paimon's own Java writes a sample of every layout it can; our readers read the files back,
   and the content must be what Java was given.
2. Our writers write every layout over generated columns: deletion vectors (32- and 64-bit), the
   hash index, all four index types (bitmap V1 and V2, bloom filter, BSI, range bitmap) and a
   container holding them. Where the Java jar has a writer, our bytes must be its bytes; where
   it has a reader, Java must read our files as written; our readers must read back what was
   written; and queries over our container (`ps.evaluate`, `ps.top_n`) must agree with the
   truth computed from the columns.

A fresh machine has no Paimon data, so no file is needed. Inputs are pseudo-random with a fixed
seed (the same files on every run), and everything Java does happens in two JVM runs: the first
writes the samples and reads ours, the second writes the container of blobs from the first.

To extend it, add a `Sample` layout with its entry in `CHECKS`, an `OurFile` (our writers), or a
query to `WHERE_QUERIES` / `TOP_N_QUERIES`.
"""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.cli import presenters
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.query.where import parse_where
from paimon_schema.selfcheck.reference import IndexResult as JavaResult
from paimon_schema.selfcheck.reference import (
    JavaError,
    JavaReference,
    Pending,
    ReferenceBatch,
    ReferenceUnavailable,
)
from paimon_schema.values.types import DataType

SEED = 20250501
DUMP_LINES = 8
DUMP_WIDTH = 118
#: Layouts whose files carry a signature: read back with `--layout auto`, which tests detection.
DETECTED = {"dv", "file-index"}


@dataclass(frozen=True)
class Sample:
    """One file Java writes: what it was given and its pending answer."""

    layout: str
    name: str
    given: Any
    java: Pending[Any]

    def data(self) -> bytes:
        """Java's bytes (a DV answer also carries the ranges)."""
        result = self.java.result()
        return result[0] if self.layout == "dv" else result


@dataclass(frozen=True)
class Outcome:
    sample: Sample
    size: int
    dump: list[str]
    problems: list[str]


# -- inputs -------------------------------------------------------------------------------------


def _data_file(rng: np.random.Generator) -> str:
    return f"data-{rng.bytes(16).hex()}-0.parquet"


def _positions(rng: np.random.Generator, count: int, high: int, low: int = 0) -> np.ndarray:
    return np.sort(rng.choice(np.arange(low, high), size=count, replace=False))


def deletion_vector_inputs(rng: np.random.Generator) -> dict[str, dict[str, np.ndarray]]:
    """Java's DV writer input per file: empty, tiny, > 65536 positions, several bins."""
    large = np.concatenate([
        _positions(rng, 50_000, 1 << 20),                       # array containers
        _positions(rng, 10_000, 21 << 16, 20 << 16),            # one bitmap container
        np.arange(3_000_000, 3_020_000),                        # run containers
    ])
    sizes = [1, 10, 1_000, 5_000]
    several = {_data_file(rng): _positions(rng, n, 1_000_000) for n in sizes}
    several[_data_file(rng)] = np.arange(1 << 16, (1 << 16) + 4096)
    several[_data_file(rng)] = np.array([0, 1, 2, 65535, 65536, 2**31 - 1])
    return {
        "dv-empty": {},
        "dv-small": {_data_file(rng): np.array([1, 2, 3, 100])},
        "dv-large": {_data_file(rng): large},
        "dv-several-bins": several,
    }


def hash_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Java's hash-index writer input per file (written as given, duplicates kept)."""
    return {
        "hash-empty": np.array([], dtype=np.int64),
        "hash-edges": np.array([0, -1, 1, 42, 42, 2**31 - 1, -(2**31)]),
        "hash-random": rng.integers(-(2**31), 2**31, 5_000),
    }


def index_columns(rng: np.random.Generator) -> dict[str, tuple[str, list[Any]]]:
    """Columns (data type, row values) to build index blobs of, with nulls and non-ASCII."""
    words = ["Alice", "Bob", "Zoë", "東京", "😀", "", None]
    ids = [None if v < 0 else int(v) for v in rng.integers(-5, 50, 200)]
    names = [words[i] for i in rng.integers(0, len(words), 200)]
    return {"id": ("INT", ids), "名前 😀": ("STRING", names)}


def opaque_container(rng: np.random.Generator) -> dict[str, dict[str, bytes | None]]:
    """A container of arbitrary blobs: the container layout does not look inside them."""
    return {
        "a": {"bloom-filter": rng.bytes(300), "bitmap": rng.bytes(17)},
        "b": {"bsi": b""},
        "m[key]": {"bitmap": None},
        "Zoë ☃": {"range-bitmap": rng.bytes(1_000)},
    }


# -- Java ---------------------------------------------------------------------------------------


def queue_samples(b: ReferenceBatch, rng: np.random.Generator) -> list[Sample]:
    """Every sample that needs nothing from Java first."""
    samples = [Sample("dv", name, given, b.write_deletion_vectors(given))
               for name, given in deletion_vector_inputs(rng).items()]
    samples += [Sample("hash", name, given, b.write_hash_index(given))
                for name, given in hash_inputs(rng).items()]
    samples += [Sample("file-index", name, given, b.write_container(given))
                for name, given in {"container-empty": {},
                                    "container-opaque": opaque_container(rng)}.items()]
    return samples


def queue_blobs(b: ReferenceBatch,
                rng: np.random.Generator) -> dict[str, dict[str, Pending[bytes]]]:
    """Java-built index blobs per column, in the order Java's writer lists index types."""
    return {
        column: {
            "bloom-filter": b.build_index("bloom-filter", data_type, values, items=200, fpp=0.01),
            "bitmap": b.build_index("bitmap", data_type, values, version=1),
        }
        for column, (data_type, values) in index_columns(rng).items()
    }


def queue_index_container(b: ReferenceBatch,
                          blobs: Mapping[str, Mapping[str, Pending[bytes]]]) -> Sample:
    """A container of the Java-built blobs, plus an empty entry (a map key never written)."""
    given: dict[str, dict[str, bytes | None]] = {
        column: {t: p.result() for t, p in pending.items()} for column, pending in blobs.items()}
    given["m[k1]"] = {"bitmap": None}
    return Sample("file-index", "container-indexes", given, b.write_container(given))


# -- checks -------------------------------------------------------------------------------------


def check_dv(sample: Sample, data: bytes, model: ps.DeletionVectorFile) -> Iterator[str]:
    """Bins equal the input, in order, and where Java's ranges say they are."""
    _, ranges = sample.java.result()
    given = {name: BitMap(positions.tolist()) for name, positions in sample.given.items()}
    if [r.name for r in ranges] != list(given):
        yield f"Java's ranges name {[r.name for r in ranges]}, expected {list(given)}"
    if len(model.bins) != len(given):
        yield f"{presenters.count(len(model.bins), 'bin')}, expected {len(given)}"
    for i, (b, r, expected) in enumerate(zip(model.bins, ranges, given.values())):
        if b.bitmap != expected:
            yield (f"bins[{i}]: {presenters.count(b.cardinality, 'position')} differ from the "
                   f"{len(expected)} given")
        if (b.offset, b.length) != (r.offset, r.length):
            yield f"bins[{i}]: range ({b.offset}, {b.length}), Java's ({r.offset}, {r.length})"
        if ps.read_deletion_vector(data, r.offset, r.length) != expected:
            yield f"read_deletion_vector at Java's range ({r.offset}, {r.length}) differs"
        if r.cardinality not in (None, len(expected)):
            yield f"bins[{i}]: Java recorded cardinality {r.cardinality}, expected {len(expected)}"


def check_hash(sample: Sample, data: bytes, model: np.ndarray) -> Iterator[str]:
    if not np.array_equal(model, sample.given):
        yield f"{presenters.count(len(model), 'int')} differ from the {len(sample.given)} given"


def check_container(sample: Sample, data: bytes, model: presenters.Container) -> Iterator[str]:
    """Same columns, index types and blobs, in the given order."""
    yield from _same_columns(sample.given, model)


def _same_columns(given: Mapping[str, Mapping[str, bytes | None]], model: presenters.Container
                  ) -> Iterator[str]:
    def ordered(columns: Mapping[str, Mapping[str, bytes | None]]) -> list[Any]:
        return [(c, list(indexes.items())) for c, indexes in columns.items()]

    if ordered(model.file.columns) != ordered(given):
        yield "columns, index types or blobs differ from what was given"


CHECKS: dict[str, Callable[[Sample, bytes, Any], Iterator[str]]] = {
    "dv": check_dv,
    "hash": check_hash,
    "file-index": check_container,
}


# -- reading back -------------------------------------------------------------------------------


def read_back(sample: Sample, directory: Path) -> Outcome:
    """Write Java's bytes to a file, read it with our reader, compare with the input."""
    try:
        data = sample.data()
    except JavaError as exc:
        return Outcome(sample, 0, [], [f"Java failed: {exc}"])
    path = directory / sample.name
    path.write_bytes(data)
    try:
        layout, data, model = presenters.load(str(path), "auto" if sample.layout in DETECTED
                                       else sample.layout, presenters.Types())
        problems = [] if layout.name == presenters.layout_name(sample.layout) else [f"detected as {layout.name}"]
        problems += CHECKS[sample.layout](sample, data, model)
    except (presenters.UsageError, ps.FormatError) as exc:
        return Outcome(sample, len(data), [], [f"our reader failed: {exc}"])
    problems += [f"warning: {w}" for w in presenters.warnings_of(model)]
    return Outcome(sample, len(data), _short(presenters.dump_lines(sample.name, layout, data, model)),
                   problems)


def _short(lines: Iterator[str]) -> list[str]:
    kept = [line if len(line) <= DUMP_WIDTH else line[:DUMP_WIDTH - 1] + "…" for line in lines]
    return kept if len(kept) <= DUMP_LINES else kept[:DUMP_LINES - 1] + ["  …"]


def report(outcomes: list[Outcome], out: TextIO) -> None:
    width = max(len(o.sample.name) for o in outcomes)
    print(f"{'layout':<11} {'file':<{width}} {'bytes':>8}  result", file=out)
    for o in outcomes:
        result = "ok" if not o.problems else "MISMATCH: " + "; ".join(o.problems)
        print(f"{o.sample.layout:<11} {o.sample.name:<{width}} {o.size:>8}  {result}", file=out)


# -- round 2: our writers -----------------------------------------------------------------------

OUR_ROWS = 1000
ROW_TYPE = {"id": "BIGINT", "city": "STRING", "qty": "INT", "day": "DATE", "m[k1]": "INT"}
CITIES = ["Berlin", "Zürich", "東京", "São Paulo", "", "Lagos", "😀"]
BLOOM = {"items": OUR_ROWS, "fpp": 0.01}
#: The container's indexes per column, with their options (bitmap V1 on two columns, V2 on two).
OUR_INDEXES: dict[str, dict[str, dict[str, Any]]] = {
    "id": {"bloom-filter": BLOOM, "bitmap": {"version": 1}, "bsi": {}, "range-bitmap": {}},
    "city": {"bitmap": {"version": 1}, "bloom-filter": BLOOM},
    "qty": {"bitmap": {}, "bsi": {}, "range-bitmap": {}},
    "day": {"bitmap": {"index_block_size": "256b"}, "range-bitmap": {"chunk_size": "64b"},
            "bloom-filter": BLOOM},
}
#: What the jar writes (so our bytes must be its bytes): built for every column.
JAVA_WRITES: dict[str, dict[str, Any]] = {"bitmap": {"version": 1}, "bloom-filter": BLOOM}
#: A value per column that no row holds.
ABSENT = {"id": 10**15 + 7, "city": "Atlantis", "qty": 999, "day": dt.date(1999, 1, 1)}

Problems = Callable[[], Iterable[str]]


@dataclass(frozen=True)
class OurFile:
    """A file our writers wrote, and its three checks (None: the jar cannot do that one)."""

    layout: str
    name: str
    data: bytes
    same_as_java: Problems | None       # our bytes are the bytes Java writes for the same input
    java_reads: Problems | None         # Java reads our bytes as what was written
    reads_back: Problems                # our reader reads back what was written


def generated_columns(rng: np.random.Generator) -> dict[str, list[Any]]:
    """Row values (None = null): a wide BIGINT, a STRING with non-ASCII and '', a small INT
    range with many repeats, DATEs over four months, and a map key never written."""
    def with_nulls(values: Iterable[Any], share: float) -> list[Any]:
        return [None if drop else v for v, drop in zip(values, rng.random(OUR_ROWS) < share)]

    start = dt.date(2024, 1, 1)
    return {
        "id": with_nulls(map(int, rng.integers(-10**6, 10**12, OUR_ROWS)), 0.05),
        "city": with_nulls((CITIES[i] for i in rng.integers(0, len(CITIES), OUR_ROWS)), 0.08),
        "qty": with_nulls(map(int, rng.integers(-20, 21, OUR_ROWS)), 0.1),
        "day": with_nulls((start + dt.timedelta(days=int(d))
                           for d in rng.integers(0, 120, OUR_ROWS)), 0.05),
        "m[k1]": [None] * OUR_ROWS,
    }


#: What a reader may raise on bytes it cannot read: in the demo, a mismatch to report.
READ_ERRORS = (JavaError, ps.FormatError, ps.SchemaError, presenters.UsageError)


def _run(check: Problems) -> list[str]:
    """A check's problems; a reader (Java's or ours) failing on our bytes is one."""
    try:
        return list(check())
    except READ_ERRORS as exc:
        return [f"failed: {exc}"]


def _bytes_equal(ours: bytes, java: Callable[[], bytes]) -> Iterator[str]:
    theirs = java()
    if ours != theirs:
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                     min(len(ours), len(theirs)))
        yield (f"{presenters.count(len(ours), 'byte')} differ from Java's {len(theirs)} (first at "
               f"byte {first})")


def _equal(what: str, got: Callable[[], Any], expected: Any) -> Iterator[str]:
    if got() != expected:
        yield f"{what} differs from what was written"


# -- deletion vectors and hash indexes: the inputs Java wrote in round 1


def our_deletion_vectors(b: ReferenceBatch, samples: Sequence[Sample]) -> list[OurFile]:
    """Our 32-bit file of each DV sample (Java's bytes, Java reads it) and a 64-bit one (the
    1.0 jar has no 64-bit deletion vectors)."""
    files = []
    for sample in (s for s in samples if s.layout == "dv"):
        given = {name: BitMap(p.tolist()) for name, p in sample.given.items()}
        data, ranges = ps.write_deletion_vectors(sample.given)
        java = b.read_deletion_vectors(data, ranges)
        files.append(OurFile(
            "dv 32-bit", f"ours-{sample.name}", data, partial(_bytes_equal, data, sample.data),
            partial(_equal, "Java's reading", partial(_bitmaps, java), given),
            partial(_dv_reads_back, data, ranges, given)))
        data64, ranges64 = ps.write_deletion_vectors(sample.given, bitmap64=True)
        files.append(OurFile("dv 64-bit", f"ours-{sample.name}-64", data64, None, None,
                             partial(_dv_reads_back, data64, ranges64, given)))
    return files


def _bitmaps(java: Pending[dict[str, list[int]]]) -> dict[str, BitMap]:
    return {name: BitMap(positions) for name, positions in java.result().items()}


def _dv_reads_back(data: bytes, ranges: Mapping[str, tuple[int, int]],
                   given: Mapping[str, BitMap]) -> Iterator[str]:
    bins = ps.DeletionVectorFile.parse(data).bins
    if [(b.offset, b.length) for b in bins] != list(ranges.values()):
        yield "the bins are not where the returned ranges say"
    if [BitMap(b.bitmap) for b in bins] != list(given.values()):
        yield "the bins hold other positions"


def _hash_index_list(data: bytes) -> list[int]:
    return ps.read_hash_index(data).tolist()


def our_hash_indexes(b: ReferenceBatch, samples: Sequence[Sample]) -> list[OurFile]:
    files = []
    for sample in (s for s in samples if s.layout == "hash"):
        data = ps.write_hash_index(sample.given)
        expected = sample.given.tolist()
        java = b.read_hash_index(data)
        files.append(OurFile(
            "hash", f"ours-{sample.name}", data, partial(_bytes_equal, data, sample.data),
            partial(_equal, "Java's reading", java.result, expected),
            partial(_equal, "our reading", partial(_hash_index_list, data), expected)))
    return files


# -- index blobs


def _truth_keys(data_type: str, values: Sequence[Any]) -> tuple[dict[Any, BitMap], BitMap]:
    """{index key: rows} and the null rows of a column (keys as `ps.types.internal` gives)."""
    dtype = DataType.parse(data_type)
    rows: dict[Any, list[int]] = {}
    for row, value in enumerate(values):
        rows.setdefault(None if value is None else ps.types.internal(dtype, value), []).append(row)
    nulls = BitMap(rows.pop(None, []))
    return {key: BitMap(r) for key, r in rows.items()}, nulls


def _blob_reads_back(index_type: str, data_type: str, blob: bytes,
                     values: Sequence[Any]) -> Iterator[str]:
    """Our reader holds exactly the column: keys and rows (bloom: every value passes), then
    `verify`'s full check."""
    ix = presenters.open_blob(index_type, blob, data_type)
    keys, nulls = _truth_keys(data_type, values)
    reader = ix.reader
    if index_type == "bloom-filter":
        if not all(reader.might_contain(v) for v in values):
            yield "a written value does not pass the filter"
    elif index_type == "bsi":
        stored: dict[Any, list[int]] = {}
        for row, value in reader.values().items():
            stored.setdefault(value, []).append(row)
        if {k: BitMap(r) for k, r in stored.items()} != keys or reader.null_rows != nulls:
            yield "values or null rows differ from the column"
    else:
        found = {ps.types.internal(ix.data_type, v): rows for v, rows in reader.items()}
        if found != keys or reader.null_rows != nulls:
            yield "keys, rows or null rows differ from the column"
    yield from presenters.LAYOUTS[index_type].check(ix)


def _probes(column: str, values: Sequence[Any]) -> list[tuple[str, str, tuple[Any, ...]]]:
    """(Java's predicate kind, our reader's method, arguments) asked of a blob Java reads:
    present and absent values, lists, nulls."""
    present = list(dict.fromkeys(v for v in values if v is not None))[:3]
    absent = ABSENT[column]
    probes: list[tuple[str, str, tuple[Any, ...]]] = [("equal", "equal", (v,)) for v in [*present, absent]]
    probes += [("not_equal", "not_equal", (present[0],)),
               ("in", "in_", ([present[1], absent],)), ("not_in", "not_in", (present[:2],)),
               ("is_null", "is_null", ()), ("is_not_null", "is_not_null", ())]
    return probes


def _same_answer(ours: ps.IndexResult, java: JavaResult) -> bool:
    if java.kind == "bitmap":
        return ours.rows is not None and ours.rows == BitMap(java.rows)
    if java.kind == "skip":
        return not ours.remain
    return ours.remain and ours.rows is None


def _java_answers(index_type: str, data_type: str, blob: bytes,
                  probes: list[tuple[str, str, tuple[Any, ...]]],
                  java: Pending[list[JavaResult]]) -> Iterator[str]:
    """Java's reader answers every probe of our blob as our reader does."""
    reader = ps.open_index(index_type, blob, data_type)
    for (kind, method, args), theirs in zip(probes, java.result(), strict=True):
        ours = getattr(reader, method)(*args)
        if not _same_answer(ours, theirs):
            yield f"{kind}{args}: Java answers {theirs.kind} {theirs.rows}, we answer {ours}"


def our_blob(b: ReferenceBatch, column: str, index_type: str, options: Mapping[str, Any],
             values: Sequence[Any]) -> OurFile:
    """One index blob: compared with Java's and queried in Java where the jar has the type."""
    data_type = ROW_TYPE[column]
    blob = ps.build_index(index_type, data_type, values, **options)
    version = options.get("version", 2)
    layout = f"bitmap V{version}" if index_type == "bitmap" else index_type
    name = f"ours-{column}.{layout.replace(' ', '-').lower()}"
    same = reads = None
    if JAVA_WRITES.get(index_type) == dict(options):
        java_blob = b.build_index(index_type, data_type, values, **options)
        probes = _probes(column, values)
        answers = b.query_index(index_type, data_type, blob,
                                [(kind, *args) for kind, _, args in probes])
        same = partial(_bytes_equal, blob, java_blob.result)
        reads = partial(_java_answers, index_type, data_type, blob, probes, answers)
    return OurFile(layout, name, blob, same, reads,
                   partial(_blob_reads_back, index_type, data_type, blob, values))


def our_blobs(b: ReferenceBatch, columns: Mapping[str, list[Any]]
              ) -> tuple[list[OurFile], dict[str, dict[str, bytes | None]]]:
    """Every blob of the container, and beside it what the jar writes for every column; and
    the container's {column: {index type: blob}} (with an empty entry for a map key)."""
    files: list[OurFile] = []
    container: dict[str, dict[str, bytes | None]] = {}
    for column, indexes in OUR_INDEXES.items():
        for index_type, options in indexes.items():
            files.append(our_blob(b, column, index_type, options, columns[column]))
            container.setdefault(column, {})[index_type] = files[-1].data
        files += [our_blob(b, column, index_type, options, columns[column])
                  for index_type, options in JAVA_WRITES.items()
                  if indexes.get(index_type) != options]
    container["m[k1]"] = {"bitmap": None}
    return files, container


# -- the container


def our_container(b: ReferenceBatch, columns: Mapping[str, dict[str, bytes | None]]) -> OurFile:
    data = ps.write_file_index(columns)
    java_bytes = b.write_container(columns)
    java_read = b.read_container(data)
    return OurFile("file-index", "ours-container", data,
                   partial(_bytes_equal, data, java_bytes.result),
                   partial(_equal, "Java's reading", java_read.result, columns),
                   partial(_container_reads_back, data, columns))


def _container_reads_back(data: bytes, columns: Mapping[str, Mapping[str, bytes | None]]
                          ) -> Iterator[str]:
    """Same columns, index types and blobs in order; every blob opened and checked."""
    model = presenters.parse_container(data, presenters.Types(row_type=ROW_TYPE))
    yield from _same_columns(columns, model)
    yield from presenters.LAYOUTS["file-index"].check(model)


def write_ours(directory: Path, files: Sequence[OurFile]) -> None:
    for f in files:
        (directory / f.name).write_bytes(f.data)


def report_ours(files: Sequence[OurFile], out: TextIO) -> int:
    """The table of our files; returns how many have a problem."""
    width = max(len(f.name) for f in files)
    print(f"{'our writer':<13} {'file':<{width}} {'bytes':>7}  {'= Java':<8} {'Java reads':<11}"
          " we read", file=out)
    problems: list[str] = []
    failed = 0
    for f in files:
        cells, found = [], []
        for what, check in (("= Java", f.same_as_java), ("Java reads", f.java_reads),
                            ("we read", f.reads_back)):
            these = [] if check is None else _run(check)
            cells.append("—" if check is None else "MISMATCH" if these else "ok")
            found += [f"  {f.name}: {what}: {p}" for p in these]
        print(f"{f.layout:<13} {f.name:<{width}} {len(f.data):>7}  {cells[0]:<8} {cells[1]:<11}"
              f" {cells[2]}", file=out)
        problems += found
        failed += bool(found)
    print("(—: the Java 1.0 jar has no such writer or reader: no 64-bit DV, bitmap V2, BSI or "
          "range bitmap)", *problems, "", sep="\n", file=out)
    return failed


# -- round 2: queries over our container ---------------------------------------------------------

#: (WHERE text, whether the container's indexes answer it exactly rather than a superset)
WHERE_QUERIES = [
    ("qty = 7", True),
    ("qty <> 7", True),                                    # bitmap keeps nulls, BSI drops them
    ("qty BETWEEN -3 AND 4 AND city = 'Zürich'", True),
    ("city IN ('東京', '😀') OR day >= DATE '2024-04-01'", True),
    ("NOT (qty IN (1, 2, 3) OR city IS NULL)", True),
    ("id > 500000000000 AND qty IS NULL", True),
    ("city < 'M'", False),                                 # no index orders strings: REMAIN
    ("city = 'Atlantis'", True),                           # absent: SKIP
    ("`m[k1]` = 1", True),                                 # an empty entry: SKIP
]
#: (column, k, descending, nulls first): ORDER BY ... LIMIT k over the range-bitmap indexes
TOP_N_QUERIES = [("day", 10, True, False), ("qty", 120, False, True)]
#: every DELETED_EVERY-th row is deleted for the queries run again with a deletion vector
DELETED_EVERY = 9


@dataclass(frozen=True)
class QueryRow:
    text: str
    matching: int
    answer: str
    verdict: str

    @property
    def failed(self) -> bool:
        return self.verdict.startswith("MISMATCH")


LEAF_TESTS: dict[str, Callable[..., bool]] = {
    "equal": lambda v, x: v == x, "not_equal": lambda v, x: v != x,
    "less_than": lambda v, x: v < x, "less_or_equal": lambda v, x: v <= x,
    "greater_than": lambda v, x: v > x, "greater_or_equal": lambda v, x: v >= x,
    "in_": lambda v, *xs: v in xs, "not_in": lambda v, *xs: v not in xs,
    "between": lambda v, low, high: low <= v <= high,
}


def truth(predicate: Predicate, columns: Mapping[str, Sequence[Any]]) -> BitMap:
    """The rows that match, by SQL's rules: a comparison with NULL is never true (NOT is
    already pushed down to the leaves, so a leaf deciding alone is exact)."""
    if isinstance(predicate, (And, Or)):
        parts = [truth(c, columns) for c in predicate.children]
        return BitMap.intersection(*parts) if isinstance(predicate, And) else BitMap.union(*parts)
    assert isinstance(predicate, Leaf)
    values = columns[predicate.column]
    if predicate.function in ("is_null", "is_not_null"):
        want_null = predicate.function == "is_null"
        return BitMap(r for r, v in enumerate(values) if (v is None) == want_null)
    test = LEAF_TESTS[predicate.function]
    return BitMap(r for r, v in enumerate(values)
                  if v is not None and test(v, *predicate.literals))


def _answer(result: ps.IndexResult) -> str:
    if not result.remain:
        return "SKIP"
    return "REMAIN" if result.rows is None else presenters.count(len(result.rows), "row")


def _verdict(result: ps.IndexResult, matching: BitMap, live: BitMap, exact: bool) -> str:
    """Never a dropped matching row; exact where the indexes can be."""
    rows = BitMap() if not result.remain else live if result.rows is None else result.rows
    dropped = len(matching - rows)
    if dropped:
        return f"MISMATCH: {presenters.count(dropped, 'matching row')} dropped"
    extra = len(rows - matching)
    if not extra:
        return "exact"
    return f"MISMATCH: {presenters.count(extra, 'row')} too many" if exact else f"superset (+{extra})"


def where_row(fi: ps.FileIndexFile, columns: Mapping[str, Sequence[Any]], where: str,
              exact: bool, deleted: BitMap | None) -> QueryRow:
    predicate = parse_where(where, ROW_TYPE)
    live = BitMap(range(OUR_ROWS)) - (deleted or BitMap())
    matching = truth(predicate, columns) & live
    result = ps.evaluate(fi, predicate, ROW_TYPE, row_count=OUR_ROWS, deletion_vector=deleted)
    text = where + ("  [with DV]" if deleted is not None else "")
    return QueryRow(text, len(matching), _answer(result), _verdict(result, matching, live, exact))


def _ordered(values: Sequence[Any], rows: Iterable[int], descending: bool,
             nulls_first: bool) -> list[Any]:
    """The rows' values in ORDER BY order."""
    chosen = [values[r] for r in rows]
    present = sorted((v for v in chosen if v is not None), reverse=descending)
    nulls = [None] * (len(chosen) - len(present))
    return nulls + present if nulls_first else present + nulls


def top_n_row(fi: ps.FileIndexFile, columns: Mapping[str, Sequence[Any]], column: str, k: int,
              descending: bool, nulls_first: bool, deleted: BitMap | None) -> QueryRow:
    """A top-n answer is right when its rows' values are the first k values in order (which
    of several tied rows it keeps is Java's choice)."""
    live = BitMap(range(OUR_ROWS)) - (deleted or BitMap())
    values = columns[column]
    result = ps.top_n(fi, column, k, ROW_TYPE, ascending=not descending, nulls_first=nulls_first,
                      row_count=OUR_ROWS, deletion_vector=deleted)
    expected = _ordered(values, live, descending, nulls_first)[:k]
    got = _ordered(values, result.rows or [], descending, nulls_first)
    verdict = "exact" if result.rows is not None and got == expected and result.rows <= live \
        else "MISMATCH: other rows than the first k in order"
    text = (f"ORDER BY {column} {'DESC' if descending else 'ASC'} "
            f"NULLS {'FIRST' if nulls_first else 'LAST'} LIMIT {k}"
            + ("  [with DV]" if deleted is not None else ""))
    return QueryRow(text, len(expected), _answer(result), verdict)


def our_deletion_vector(columns: Mapping[str, Sequence[Any]]) -> BitMap:
    """Every DELETED_EVERY-th row, through our writer and reader of a 32-bit DV file."""
    data, ranges = ps.write_deletion_vectors(
        {"data-ours-0.parquet": range(0, OUR_ROWS, DELETED_EVERY)})
    deleted = ps.read_deletion_vector(data, *ranges["data-ours-0.parquet"])
    assert isinstance(deleted, BitMap), "a 32-bit DV file reads as a BitMap"
    return deleted


def run_queries(container: bytes, columns: Mapping[str, Sequence[Any]]) -> list[QueryRow]:
    """The WHERE queries, the first two again with a deletion vector, the top-n queries and
    the first again with the deletion vector."""
    fi = ps.FileIndexFile.parse(container)
    deleted = our_deletion_vector(columns)
    cases = [(w, partial(where_row, fi, columns, w, exact, None)) for w, exact in WHERE_QUERIES]
    cases += [(w, partial(where_row, fi, columns, w, exact, deleted))
              for w, exact in WHERE_QUERIES[:2]]
    cases += [(f"top-n {q}", partial(top_n_row, fi, columns, *q, None)) for q in TOP_N_QUERIES]
    cases.append((f"top-n {TOP_N_QUERIES[0]}",
                  partial(top_n_row, fi, columns, *TOP_N_QUERIES[0], deleted)))
    return [_guarded(text, make) for text, make in cases]


def _guarded(text: str, make: Callable[[], QueryRow]) -> QueryRow:
    try:
        return make()
    except READ_ERRORS as exc:
        return QueryRow(text, 0, "error", f"MISMATCH: {exc}")


def report_queries(rows: Sequence[QueryRow], out: TextIO) -> None:
    width = max(len(r.text) for r in rows)
    print(f"{'query over ours-container (' + str(OUR_ROWS) + ' rows)':<{width}}  "
          f"{'matching':>8}  {'index answer':<12}  verdict", file=out)
    for r in rows:
        print(f"{r.text:<{width}}  {r.matching:>8}  {r.answer:<12}  {r.verdict}", file=out)
    print(f"([with DV]: every {DELETED_EVERY}th row deleted by our 32-bit deletion vector)",
          file=out)


# -- the command --------------------------------------------------------------------------------


@dataclass
class Round2:
    """Everything of round 2 that needs no Java: the columns and our container's blobs."""

    columns: dict[str, list[Any]]
    files: list[OurFile]
    container: bytes


def queue_ours(b: ReferenceBatch, samples: Sequence[Sample],
               columns: dict[str, list[Any]]) -> Round2:
    """Write every layout with our writers, queueing what Java should write and read."""
    blobs, container_columns = our_blobs(b, columns)
    container = our_container(b, container_columns)
    files = [*our_deletion_vectors(b, samples), *our_hash_indexes(b, samples), *blobs, container]
    return Round2(columns, files, container.data)


def show_container(data: bytes, out: TextIO) -> None:
    """Our container as `verify --row-type` sees it: one line per blob."""
    layout = presenters.LAYOUTS["file-index"]
    model = layout.parse(data, presenters.Types(row_type=ROW_TYPE))
    print(f"ours-container: {layout.summary(model)} ({presenters.count(len(data), 'byte')})", file=out)
    print("\n".join(layout.details(model)), file=out)


def run(keep: Path | None = None, out: TextIO | None = None) -> int:
    """Run the demo; 0 when every file reads back as written and every query agrees, else 1."""
    out = out or sys.stdout
    started = time.monotonic()
    try:
        ref = JavaReference.get()
    except ReferenceUnavailable as exc:
        print(f"demo: the Java reference is unavailable, so there is nothing to compare with: "
              f"{exc}", file=out)
        return 1
    rng = np.random.default_rng(SEED)
    try:
        with ref.batch() as first:
            info = first.info()
            samples = queue_samples(first, rng)
            blobs = queue_blobs(first, rng)
            ours = queue_ours(first, samples, generated_columns(np.random.default_rng(SEED + 1)))
        with ref.batch() as second:
            samples.append(queue_index_container(second, blobs))
    except (RuntimeError, JavaError) as exc:
        print(f"demo: the Java reference failed: {exc}", file=out)
        return 1
    java_seconds = time.monotonic() - started
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        outcomes = [read_back(s, keep) for s in samples]
        write_ours(keep, ours.files)
    else:
        with tempfile.TemporaryDirectory(prefix="paimon-schema-demo-") as tmp:
            outcomes = [read_back(s, Path(tmp)) for s in samples]
    for o in outcomes:
        print("\n".join(o.dump), file=out)
    print("\nRound 1: Paimon's Java wrote these files, our readers read them back.", file=out)
    report(outcomes, out)
    print(f"\nRound 2: our writers, {OUR_ROWS} generated rows of "
          f"{', '.join(f'{c} {t}' for c, t in ROW_TYPE.items())}.", file=out)
    show_container(ours.container, out)
    print(file=out)
    ours_failed = report_ours(ours.files, out)
    queries = run_queries(ours.container, ours.columns)
    report_queries(queries, out)
    failed = sum(bool(o.problems) for o in outcomes)
    queries_failed = sum(q.failed for q in queries)
    java = info.result()
    where = f"; files kept in {keep}" if keep is not None else ""
    print(f"\ndemo: {presenters.count(len(outcomes), 'file')} written by Paimon {java['paimon_version']} "
          f"(Java {java['java_version']}), read back by paimon_schema {ps.__version__}: "
          f"{len(outcomes) - failed} ok, {failed} mismatched; {presenters.count(len(ours.files), 'file')} of ours: "
          f"{len(ours.files) - ours_failed} ok, {ours_failed} mismatched; "
          f"{presenters.count(len(queries), 'query', 'queries')}: "
          f"{len(queries) - queries_failed} ok, {queries_failed} mismatched; "
          f"{time.monotonic() - started:.1f} s ({java_seconds:.1f} s in Java){where}", file=out)
    return 1 if failed or ours_failed or queries_failed else 0
