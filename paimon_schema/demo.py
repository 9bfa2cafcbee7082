"""`paimon-schema demo`: Paimon's own Java writes a sample of every layout it can, our readers
read the files back, and the content must be what Java was given.

A fresh machine has no Paimon data, so this is the quickest end-to-end proof that the library
reads what Paimon writes. Inputs are pseudo-random with a fixed seed (the same files on every
run), and everything Java does happens in two JVM runs: the samples, then the one container
that holds blobs from the first run.

To extend it (queries, our writers, Spark), add a `Sample` layout with its entry in `CHECKS`, or
more checks to an existing entry.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema import cli
from paimon_schema.reference import (
    JavaError,
    JavaReference,
    Pending,
    ReferenceBatch,
    ReferenceUnavailable,
)

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
        yield f"{len(model.bins)} bins, expected {len(given)}"
    for i, (b, r, expected) in enumerate(zip(model.bins, ranges, given.values())):
        if b.bitmap != expected:
            yield f"bins[{i}]: {b.cardinality} positions differ from the {len(expected)} given"
        if (b.offset, b.length) != (r.offset, r.length):
            yield f"bins[{i}]: range ({b.offset}, {b.length}), Java's ({r.offset}, {r.length})"
        if ps.read_deletion_vector(data, r.offset, r.length) != expected:
            yield f"read_deletion_vector at Java's range ({r.offset}, {r.length}) differs"
        if r.cardinality not in (None, len(expected)):
            yield f"bins[{i}]: Java recorded cardinality {r.cardinality}, expected {len(expected)}"


def check_hash(sample: Sample, data: bytes, model: np.ndarray) -> Iterator[str]:
    if not np.array_equal(model, sample.given):
        yield f"{len(model)} ints differ from the {len(sample.given)} given"


def check_container(sample: Sample, data: bytes, model: ps.FileIndexFile) -> Iterator[str]:
    """Same columns, index types and blobs, in the given order."""
    def ordered(columns: Mapping[str, Mapping[str, bytes | None]]) -> list[Any]:
        return [(c, list(indexes.items())) for c, indexes in columns.items()]

    if ordered(model.columns) != ordered(sample.given):
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
        layout, data, model = cli.load(str(path), "auto" if sample.layout in DETECTED
                                       else sample.layout, None)
        problems = [] if layout.name == sample.layout else [f"detected as {layout.name}"]
        problems += CHECKS[sample.layout](sample, data, model)
    except (cli.UsageError, ps.FormatError) as exc:
        return Outcome(sample, len(data), [], [f"our reader failed: {exc}"])
    problems += [f"warning: {w}" for w in cli.warnings_of(model)]
    return Outcome(sample, len(data), _short(cli.dump_lines(sample.name, layout, data, model)),
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


# -- the command --------------------------------------------------------------------------------


def run(keep: Path | None = None, out: TextIO | None = None) -> int:
    """Run the demo; 0 when every file reads back as written, 1 otherwise."""
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
        with ref.batch() as second:
            samples.append(queue_index_container(second, blobs))
    except (RuntimeError, JavaError) as exc:
        print(f"demo: the Java reference failed: {exc}", file=out)
        return 1
    java_seconds = time.monotonic() - started
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        outcomes = [read_back(s, keep) for s in samples]
    else:
        with tempfile.TemporaryDirectory(prefix="paimon-schema-demo-") as tmp:
            outcomes = [read_back(s, Path(tmp)) for s in samples]
    for o in outcomes:
        print("\n".join(o.dump), file=out)
    print(file=out)
    report(outcomes, out)
    failed = sum(bool(o.problems) for o in outcomes)
    java = info.result()
    where = f"; files kept in {keep}" if keep is not None else ""
    print(f"\ndemo: {len(outcomes)} files written by Paimon {java['paimon_version']} "
          f"(Java {java['java_version']}), read back by paimon_schema {ps.__version__}: "
          f"{len(outcomes) - failed} ok, {failed} mismatched; "
          f"{time.monotonic() - started:.1f} s ({java_seconds:.1f} s in Java){where}", file=out)
    return 1 if failed else 0
