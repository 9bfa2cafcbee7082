"""`bulk_partitions`: the partition verdicts of a batch, judged by the C kernels, are the ones
`PartitionFilter.partition` gives partition by partition, with and without the C extension."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from paimon_schema.layouts.binary_row import encode_binary_row
from paimon_schema.query.predicate import Leaf, Predicate
from paimon_schema.table import bulk_partitions
from paimon_schema.table import predicates as preds
from paimon_schema.table.bulk_partitions import (FALSE, MAYBE, TRUE, UNDECIDED, judge_program,
                                                 partition_verdicts)
from paimon_schema.table.manifest_filter import PartitionFilter
from paimon_schema.table.schema import DataField, TableSchema
from paimon_schema.values.errors import FormatError, SchemaError
from strategies import partition_batches

pytest.importorskip("paimon_schema.runtime._kernels")

_CODES = {False: FALSE, True: TRUE, None: MAYBE}


def _one_by_one(where: Predicate, raws: list[bytes], schema: TableSchema) -> list[bool] | type:
    try:
        return [PartitionFilter(where).partition(raw, schema) for raw in raws]
    except Exception as exc:
        return type(exc)


def _together(where: Predicate, raws: list[bytes], schema: TableSchema) -> list[bool] | type:
    try:
        return PartitionFilter(where).partitions(raws, schema)
    except Exception as exc:
        return type(exc)


@settings(max_examples=600, deadline=None)
@given(partition_batches())
def test_bulk_verdicts_are_the_partition_verdicts(case: tuple[TableSchema, list[bytes], Predicate]) -> None:
    """Each row the kernel judges gets `partition_verdict`'s three-valued answer; a row the
    Python decoder refuses is left to Python."""
    schema, raws, where = case
    codes = partition_verdicts(where, raws, schema.partition_keys, schema.partition_types)
    if codes is None:
        return
    assert len(codes) == len(raws)
    for raw, code in zip(raws, codes.tolist()):
        try:
            values = PartitionFilter(where)._values(raw, schema)
        except (FormatError, SchemaError, ValueError):
            assert code == UNDECIDED
            continue
        if code != UNDECIDED:
            assert code == _CODES[preds.partition_verdict(where, values)], (raw, values)


@settings(max_examples=400, deadline=None)
@given(partition_batches())
def test_a_batch_is_judged_as_each_partition(case: tuple[TableSchema, list[bytes], Predicate]) -> None:
    """`partitions` answers what `partition` answers of each (or raises what it raises), with
    and without the C extension."""
    schema, raws, where = case
    expected = _one_by_one(where, raws, schema)
    assert _together(where, raws, schema) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bulk_partitions, "_kernels", None)
        assert _together(where, raws, schema) == expected


@settings(max_examples=600, deadline=None)
@given(partition_batches())
def test_one_row_is_judged_as_in_a_batch(case: tuple[TableSchema, list[bytes], Predicate]) -> None:
    """`_kernels.partition_judge`, the manifest decoder's gate, answers each row the batch's
    code (the batch's UNDECIDED rows: UNDECIDED too), and judges exactly the filters the batch
    judges."""
    schema, raws, where = case
    program = judge_program(where, schema.partition_keys, schema.partition_types)
    codes = partition_verdicts(where, [*raws, b"\x00\x00\x00\x01"], schema.partition_keys,
                               schema.partition_types)
    assert (program is None) == (codes is None)
    if program is None or codes is None:
        return
    judge = PartitionFilter(where).judge(schema)
    assert judge is not None
    for raw, code in zip([*raws, b"\x00\x00\x00\x01"], codes.tolist()):
        assert judge(raw) == code, raw
    assert judge(None) == UNDECIDED                 # type: ignore[arg-type]


def test_the_kernel_refuses_a_malformed_program() -> None:
    """A program the compiler would not write is an error, not a verdict."""
    from paimon_schema.runtime import _kernels

    raw = encode_binary_row([7], ["INT"])
    for program in [(9,), (), (3, 5, 0, 1), (3, 0, 0, "7"), (6, 0, 1), (0, (3, 0))]:
        with pytest.raises((ValueError, TypeError)):
            _kernels.partition_judge(b"i", program, raw)
    assert _kernels.partition_judge(b"i", (3, 0, 2, 2**80), raw) == TRUE       # 7 < 2**80
    assert _kernels.partition_judge(b"i", (3, 0, 0, 2**80), raw) == FALSE
    with pytest.raises(ValueError):
        _kernels.partition_judge(b"y", (2, MAYBE), raw)


def test_the_kernel_judges_a_plain_filter() -> None:
    """A date and city filter over string partitions (the forged tables') is judged in bulk,
    NULLs and rows it cannot read aside."""
    types = ["STRING", "STRING"]
    schema = TableSchema(0, (DataField(0, "dt", "STRING"), DataField(1, "city", "STRING")),
                         ("dt", "city"), (), {}, 1)
    raws = [encode_binary_row(v, types) for v in
            (["2024-01-02", "Lima"], ["2024-01-01", "Lima"], ["2024-01-03", None], ["2024-01-03", "Oslo"])]
    where = Leaf("greater_or_equal", "dt", ("2024-01-02",)) & Leaf("equal", "city", ("Lima",))
    codes = partition_verdicts(where, [*raws, b"\x00"], schema.partition_keys, schema.partition_types)
    assert codes is not None and codes.tolist() == [TRUE, FALSE, FALSE, FALSE, UNDECIDED]
    assert PartitionFilter(where).partitions([*raws, b"\x00"], schema) == [True, False, False, False, True]


def test_nan_is_not_null() -> None:
    """A NaN partition value is no bound to the kernel, as NULL is, but not NULL: a float
    column's leaves are Python's."""
    schema = TableSchema(0, (DataField(0, "x", "DOUBLE"),), ("x",), (), {}, 0)
    raws = [encode_binary_row([float("nan")], ["DOUBLE"]), encode_binary_row([None], ["DOUBLE"])]
    where = Leaf("is_null", "x")
    assert partition_verdicts(where, raws, schema.partition_keys, schema.partition_types) is None
    assert PartitionFilter(where).partitions(raws, schema) == [False, True]
