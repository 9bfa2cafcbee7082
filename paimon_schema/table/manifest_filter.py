"""A scan's filter applied to the manifests themselves: a manifest list names each manifest
with the minimum, maximum and null count of every partition column over its entries
(`_PARTITION_STATS`, Java's `ManifestFileMeta.partitionStats`), so a manifest none of whose
partitions can match is not read at all, as Java's `ManifestsReader` skips it by its
`PartitionPredicate`. A daily-partitioned table filtered to a few days reads a few manifests
of hundreds.

Conservative throughout: a manifest is skipped only when the statistics prove that no
partition in it matches (`stats.stats_verdict` over bounds that are exact here: partition
statistics are never truncated), never on missing, null or undecodable statistics; an entry
is dropped only when its partition's values answer False (`predicates.partition_verdict`, the
verdict the plan itself prunes partitions by).
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

from paimon_schema.layouts.binary_row import row_decoder
from paimon_schema.query.predicate import Predicate
from paimon_schema.table.bulk_partitions import FALSE, UNDECIDED, judge_program, partition_verdicts
from paimon_schema.table.partitions import partition_of
from paimon_schema.table.predicates import leaves, partition_verdict
from paimon_schema.table.schema import TableSchema
from paimon_schema.table.stats import ColumnStats, _bound, stats_verdict
from paimon_schema.values.errors import FormatError, SchemaError
from paimon_schema.values.types import DataType

try:
    from paimon_schema.runtime import _kernels
except ImportError:                         # built without a C compiler
    _kernels = None  # type: ignore[assignment]

__all__ = ["PartitionFilter"]


class PartitionFilter:
    """What `where` says of partitions (`manifests.PartitionFilter`); verdicts are kept per
    schema and partition BinaryRow (a table has far fewer partitions than entries)."""

    def __init__(self, where: Predicate) -> None:
        self.where = where
        self.key: Hashable | None
        try:
            hash(where)
            self.key = ("partitions", where)
        except TypeError:
            self.key = None
        self._verdicts: dict[tuple[int, bytes], bool] = {}
        self._decoders: dict[int, tuple[TableSchema, Callable[[bytes], tuple[Any, ...]], tuple[str, ...]]] = {}
        self._judges: dict[int, tuple[TableSchema, Callable[[bytes], int] | None]] = {}

    def useful(self, schema: TableSchema) -> bool:
        """Whether the filter names a partition column of `schema` (else it cannot skip)."""
        return any(leaf.column in schema.partition_keys for leaf in leaves(self.where))

    def partition(self, raw: bytes, schema: TableSchema) -> bool:
        """False when no row of the partition `raw` (a BinaryRow) can match."""
        key = (id(schema), raw)
        verdict = self._verdicts.get(key)
        if verdict is None:
            try:
                values = self._values(raw, schema)
            except (FormatError, SchemaError, ValueError):
                return True                     # the fold's own reading will say what is wrong
            verdict = self._verdicts[key] = partition_verdict(self.where, values) is not False
        return verdict

    def partitions(self, raws: list[bytes], schema: TableSchema) -> list[bool]:
        """`partition` of each of `raws`, judged together where the C kernels read them
        (`bulk_partitions`: a plan meets ~1000 partitions of a 100k-file table)."""
        codes = partition_verdicts(self.where, raws, schema.partition_keys, schema.partition_types)
        if codes is None:
            return [self.partition(raw, schema) for raw in raws]
        out = list(map(FALSE.__ne__, codes.tolist()))
        for at in np.flatnonzero(codes == UNDECIDED).tolist():
            out[at] = self.partition(raws[at], schema)
        self._verdicts.update(zip(zip(itertools.repeat(id(schema)), raws), out))
        return out

    def judge(self, schema: TableSchema) -> Callable[[bytes], int] | None:
        """One partition's `bulk_partitions` code (`FALSE`: `partition` is False), judged in C
        (`_kernels.partition_judge`): the manifest decoder's gate, which asks as it meets each
        partition; None where the kernel does not judge this filter."""
        found = self._judges.get(id(schema))
        if found is None or found[0] is not schema:
            program = judge_program(self.where, schema.partition_keys, schema.partition_types)
            found = self._judges[id(schema)] = (
                schema, None if program is None else functools.partial(_kernels.partition_judge, *program))
        return found[1]

    def _values(self, raw: bytes, schema: TableSchema) -> dict[str, Any]:
        """The partition's {column: value}: `partition_of`'s, without its path (a merged
        manifest names a thousand partitions), but where the path would fail (bytes)."""
        found = self._decoders.get(id(schema))
        if found is None or found[0] is not schema:
            types = schema.partition_types
            found = self._decoders[id(schema)] = (
                schema, row_decoder(types) if types else lambda _: (), tuple(schema.partition_keys))
        values = found[1](raw)
        if any(isinstance(value, bytes) for value in values):
            return partition_of(raw, schema)[0]
        return dict(zip(found[2], values))

    def manifest(self, meta: Mapping[str, Any], schema: TableSchema) -> bool:
        """False when the manifest's partition statistics prove that none of its entries'
        partitions can match (Java's `ManifestsReader.filterManifestFileMeta`)."""
        stats = meta.get("_PARTITION_STATS")
        keys = schema.partition_keys
        if not keys or not isinstance(stats, Mapping):
            return True
        low, high, nulls = stats.get("_MIN_VALUES"), stats.get("_MAX_VALUES"), stats.get("_NULL_COUNTS")
        if not isinstance(low, bytes) or not isinstance(high, bytes) or not low or not high:
            return True
        types = [DataType.parse(t) for t in schema.partition_types]
        try:
            decode = row_decoder(types)
            lows, highs = decode(low), decode(high)
        except (FormatError, SchemaError, ValueError, OverflowError):
            return True
        if len(lows) != len(keys) or len(highs) != len(keys):
            return True
        if not isinstance(nulls, list) or len(nulls) != len(keys) \
                or not all(isinstance(n, int) for n in nulls):
            nulls = [None] * len(keys)
        # the null counts count entries (Java tests them against added + deleted files)
        added, deleted = meta.get("_NUM_ADDED_FILES"), meta.get("_NUM_DELETED_FILES")
        entries = added + deleted if isinstance(added, int) and isinstance(deleted, int) \
            and added >= 0 and deleted >= 0 else sys.maxsize
        columns = {}
        for name, dtype, lo, hi, null_count in zip(keys, types, lows, highs, nulls):
            columns[name] = ColumnStats(_bound(lo, dtype, "full", None, upper=False),
                                        _bound(hi, dtype, "full", None, upper=True),
                                        null_count, entries, dtype.is_float)
        return stats_verdict(self.where, columns) is not False
