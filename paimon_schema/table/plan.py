"""What a batch read of a snapshot reads (`Table.plan` puts it into a `ReadPlan`): which of
the live files Paimon reads (levels > 0 of a primary-key table in deletion-vector mode, never
the postponed bucket), in which order, or a `TableError` for tables whose rows cannot be read
file by file (a primary-key table without deletion vectors, columns of a data-evolution table
split across files)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from paimon_schema.table.errors import TableError
from paimon_schema.table.manifests import BULK_SORTS, DataFile
from paimon_schema.table.partitions import POSTPONE_BUCKET
from paimon_schema.table.schema import TableSchema

try:
    from paimon_schema.runtime import _kernels
except ImportError:                         # built without a C compiler
    _kernels = None  # type: ignore[assignment]

__all__ = ["FileRuns", "ReadFiles", "in_runs", "read_files", "read_order", "read_permutation"]

#: A pass by the files' partition runs pays where a run holds this many files on average.
RUN_FILES = 8


@dataclass(frozen=True)
class FileRuns:
    """The runs of a read's files that share a partition dict (a snapshot's files of one
    partition share it, and read order keeps them together): each run's first index, its
    partition and the sum of its files' row counts; whether any file has a row id; and the
    attributes `read_files` was asked for, a list of each over every file (read in the same
    pass: pruning then slices the candidates' from them)."""

    starts: list[int]
    partitions: list[Mapping[str, Any]]
    rows: list[int]
    row_ids: bool
    columns: tuple[list[Any], ...] = ()


class ReadFiles(tuple[DataFile, ...]):
    """The files a read reads (a tuple of `DataFile`), with their `runs` when the pass that
    chose them found them (None without the C extension)."""

    runs: FileRuns | None = None


def read_files(root: str, schema: TableSchema, live: Iterable[DataFile],
               attributes: tuple[str, ...] = ()) -> tuple[DataFile, ...]:
    """Of a snapshot's live files (in read order), those a batch read reads; `schema` is the
    one the read uses, `root` names the table in errors. One pass over the files, in C where
    built, which also finds their partitions' runs for pruning (`ReadFiles.runs`) and reads
    the `attributes` pruning asks of each file (`FileRuns.columns`): a 100k-file snapshot's
    files lie scattered in memory, and each pass over them cost ~20 ms of a plan."""
    if schema.primary_keys and not schema.deletion_vectors:
        raise TableError(
            f"{root} is a primary-key table without deletion vectors: its rows need "
            f"Paimon's LSM merge of every level, which paimon-schema does not do yet "
            f"(enable 'deletion-vectors.enabled' and compact, or read it with Paimon)")
    files = live if isinstance(live, tuple) else tuple(live)
    if _kernels is None:
        postponed, split = _read_flags(files, POSTPONE_BUCKET)
        runs = None
    else:
        postponed, split, row_ids, starts, partitions, rows, columns = _kernels.read_pass(
            files, POSTPONE_BUCKET, attributes)
        runs = FileRuns(starts, partitions, rows, row_ids, columns)
    if postponed:
        files = tuple(f for f in files if f.bucket != POSTPONE_BUCKET)
    if schema.primary_keys:
        files = tuple(f for f in files if f.level > 0)   # Paimon's DV-mode batch read
    if split and (postponed or schema.primary_keys):        # (of the files read only)
        split = any(f.first_row_id is not None and f.write_cols for f in files)
    if schema.data_evolution or split:
        _check_no_split_columns(files, schema)
    read = ReadFiles(files)
    if runs is not None and not (postponed or schema.primary_keys):
        read.runs = runs                                    # (else the runs of other files)
    return read


def in_runs(files: tuple[DataFile, ...]) -> bool:
    """Whether `read_files` found the files' partition runs, long enough for pruning to
    take a verdict per run (`RUN_FILES`)."""
    runs = getattr(files, "runs", None)
    return runs is not None and len(runs.starts) * RUN_FILES <= len(files)


def _read_flags(files: tuple[DataFile, ...], postpone_bucket: int) -> tuple[bool, bool]:
    """`_kernels.read_pass`'s flags without the C extension: whether a file is postponed,
    whether a file has write columns and a row id."""
    postponed = split = False
    for f in files:
        if f.bucket == postpone_bucket:
            postponed = True
        if f.write_cols and f.first_row_id is not None:
            split = True
    return postponed, split


def read_order(data_file: DataFile) -> tuple:
    """The order a read visits files in: partition, bucket, row id, highest level first,
    sequence number."""
    f = data_file
    return (f.partition_path, f.bucket, f.first_row_id or 0, -f.level, f.min_sequence_number,
            f.file_name)


def _read_sorted(files: tuple[DataFile, ...]) -> tuple[DataFile, ...]:
    """`tuple(sorted(files, key=read_order))`, in C where built (`read_sorted`: a cold
    100k-file plan sorts ~23k files, ~15 ms by key tuples)."""
    done = None if _kernels is None else _kernels.read_sorted(files)
    return tuple(sorted(files, key=read_order)) if done is None else done


BULK_SORTS[read_order] = _read_sorted


def read_permutation(files: tuple[DataFile, ...]) -> list[int]:
    """The positions of `files` in read order (`read_order`; ties in their order), in C
    where built (`read_positions`)."""
    done = None if _kernels is None else _kernels.read_positions(files)
    return sorted(range(len(files)), key=lambda i: read_order(files[i])) if done is None else done


def _check_no_split_columns(files: Iterable[DataFile], schema: TableSchema) -> None:
    """A data-evolution table may write some columns of a row range into another file; such
    rows can only be read by merging files, which is not supported here."""
    ranges = sorted((f.first_row_id, f.first_row_id + f.row_count, f.file_name)
                    for f in files if f.first_row_id is not None)
    for (_, hi, name), (lo2, hi2, name2) in zip(ranges, ranges[1:]):
        if lo2 < hi:
            raise TableError(
                f"data-evolution table: rows {lo2}..{min(hi, hi2) - 1} have columns in both "
                f"{name} and {name2}; reading columns split across files is not supported yet")
