"""What a batch read of a snapshot reads (`Table.plan` puts it into a `ReadPlan`): which of
the live files Paimon reads (levels > 0 of a primary-key table in deletion-vector mode, never
the postponed bucket), in which order, or a `TableError` for tables whose rows cannot be read
file by file (a primary-key table without deletion vectors, columns of a data-evolution table
split across files)."""

from __future__ import annotations

from collections.abc import Iterable

from paimon_schema.table.errors import TableError
from paimon_schema.table.manifests import DataFile
from paimon_schema.table.partitions import POSTPONE_BUCKET
from paimon_schema.table.schema import TableSchema

__all__ = ["read_files", "read_order"]


def read_files(root: str, schema: TableSchema, live: Iterable[DataFile]) -> tuple[DataFile, ...]:
    """Of a snapshot's live files (in read order), those a batch read reads; `schema` is the
    one the read uses, `root` names the table in errors. (One pass over the files, which
    returns `live` itself when it is a tuple all read: a 100k-file snapshot's files are
    scattered in memory, each pass over them cost ~10 ms of a plan.)"""
    if schema.primary_keys and not schema.deletion_vectors:
        raise TableError(
            f"{root} is a primary-key table without deletion vectors: its rows need "
            f"Paimon's LSM merge of every level, which paimon-schema does not do yet "
            f"(enable 'deletion-vectors.enabled' and compact, or read it with Paimon)")
    files = live if isinstance(live, tuple) else tuple(live)
    postponed = split = False
    for f in files:
        if f.bucket == POSTPONE_BUCKET:
            postponed = True
        if f.write_cols and f.first_row_id is not None:
            split = True
    if postponed:
        files = tuple(f for f in files if f.bucket != POSTPONE_BUCKET)
    if schema.primary_keys:
        files = tuple(f for f in files if f.level > 0)   # Paimon's DV-mode batch read
    if split and (postponed or schema.primary_keys):        # (of the files read only)
        split = any(f.first_row_id is not None and f.write_cols for f in files)
    if schema.data_evolution or split:
        _check_no_split_columns(files, schema)
    return files


def read_order(data_file: DataFile) -> tuple:
    """The order a read visits files in: partition, bucket, row id, highest level first,
    sequence number."""
    f = data_file
    return (f.partition_path, f.bucket, f.first_row_id or 0, -f.level, f.min_sequence_number,
            f.file_name)


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
