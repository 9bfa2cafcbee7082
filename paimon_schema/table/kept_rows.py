"""Which rows of a data file a read keeps: those its deletion vector does not delete and,
where the file indexes pruned the file, among their candidate rows. One rule for every read
path: the per-file read (`merge.read_task`), the whole read (`whole_read`) and Spark's
`read_table` (`spark.native`, which ships the dropped rows to the JVM)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from pyroaring import BitMap, BitMap64

from paimon_schema.query.masks import keep_mask, row_mask
from paimon_schema.table.fileio import FileIO
from paimon_schema.table.indexes import deletion_vectors
from paimon_schema.table.manifests import DeletionFile

__all__ = ["FileRows", "kept_rows", "kept_rows_of"]


class FileRows(Protocol):
    """What the rule reads of a read's task (`merge.FileTask`, which imports this module)."""

    @property
    def fileio(self) -> FileIO: ...
    @property
    def row_count(self) -> int: ...
    @property
    def deletion_file(self) -> DeletionFile | None: ...
    @property
    def candidate_rows(self) -> bytes | None: ...


def kept_rows(task: FileRows, dv: BitMap | BitMap64 | None) -> np.ndarray | None:
    """Mask over the task's rows, True for each row the read keeps, given `dv` (its deletion
    vector, read); None when the read keeps every row without looking (no vector, no
    candidates). A vector naming a row past the file's rows raises `SchemaError`."""
    if task.candidate_rows is None:
        return None if dv is None else keep_mask(dv, task.row_count)
    keep = row_mask(BitMap.deserialize(task.candidate_rows), task.row_count)
    if dv is not None:
        keep &= keep_mask(dv, task.row_count)
    return keep


def kept_rows_of(tasks: Sequence[FileRows]) -> list[np.ndarray | None]:
    """`kept_rows` of each task, their deletion vectors read together (each index file once:
    the data files of a bucket share one; the tasks share the first one's filesystem)."""
    if all(t.deletion_file is None and t.candidate_rows is None for t in tasks):
        return [None] * len(tasks)
    vectors = deletion_vectors(tasks[0].fileio, [t.deletion_file for t in tasks])
    return [kept_rows(task, dv) for task, dv in zip(tasks, vectors)]
