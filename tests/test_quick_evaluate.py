"""`quick_evaluate` (the C probe of an embedded file index, for planning) against `evaluate`:
wherever it answers, it answers exactly what the Python readers answer, on valid and on damaged
containers (where `evaluate` raises, it must decline); and on the containers planning meets it
does answer."""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import paimon_schema as ps
from paimon_schema.layouts.bitmap_index.scan import block_size, read_v2_block, scan_v2_head
from paimon_schema.layouts.file_index import FileIndexFile
from paimon_schema.layouts.paimon_common import bitmap_keys
from paimon_schema.query.evaluate import evaluate
from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.query.quick_evaluate import QuickEvaluator, quick_evaluate
from strategies import file_index_containers, values_for

HOSTILE_S4 = [0, 1, -1, -2, 4, 13, 2**31 - 1, -2**31, 2**24]


def outcome(data: bytes, predicate: Predicate, row_type: dict[str, str]) -> Any:
    """`evaluate`'s answer, or the exception it raises (type and message)."""
    try:
        return evaluate(data, predicate, row_type)
    except (ps.FormatError, ps.SchemaError, TypeError) as exc:
        return (type(exc).__name__, str(exc))


@st.composite
def predicates(draw: st.DrawFn, row_type: dict[str, str], pool: list) -> Predicate:
    """Leaves on the indexed columns and the unindexed one (=, IN with the pool's values and
    others, comparisons, IS NULL), combined by AND and OR."""
    column = draw(st.sampled_from(["c", "c", "c", "d", "u"]))
    values = values_for(row_type[column])
    literal = (st.sampled_from(pool) | values) if column == "c" else values
    function = draw(st.sampled_from(["equal", "equal", "in_", "greater_or_equal", "is_null",
                                     "not_equal"]))
    if function == "in_":
        leaf: Predicate = Leaf("in_", column, tuple(draw(st.lists(literal | st.none(), max_size=3))))
    elif function == "is_null":
        leaf = Leaf("is_null", column)
    else:
        leaf = Leaf(function, column, (draw(literal),))
    if draw(st.integers(0, 2)) == 0:
        other = draw(predicates(row_type, pool))
        return (And if draw(st.booleans()) else Or)((leaf, other))
    return leaf


def hot_span(data: bytes, data_type: str) -> tuple[int, int]:
    """Where the head and index blocks of the bitmap on `c` lie in the container (the bytes a
    lookup parses before any bitmap), or the whole head without one."""
    parsed = FileIndexFile.parse(data)
    for entry in parsed.entries:
        if entry.column == "c" and entry.index_type == "bitmap" and entry.blob is not None:
            if entry.blob[:1] != b"\x02":
                return entry.offset, entry.offset + min(entry.length, 80)
            head = scan_v2_head(entry.blob, bitmap_keys(data_type).kind)
            return entry.offset, entry.offset + (entry.length if head is None else head.ofs_body)
    return 0, parsed.head_length


@st.composite
def damaged(draw: st.DrawFn, data: bytes, data_type: str) -> bytes:
    """`data` with 1-3 mutations (bit flip, byte, hostile s4, truncation), mostly where a
    lookup parses the bitmap."""
    out = bytearray(data)
    low, high = hot_span(data, data_type)
    for _ in range(draw(st.integers(1, 3))):
        if not out:
            break
        anywhere = st.integers(0, len(out) - 1)
        hot = st.integers(min(low, len(out) - 1), min(high, len(out)) - 1) if low < len(out) else anywhere
        at = draw(hot | hot | hot | anywhere)
        kind = draw(st.sampled_from(["flip", "byte", "s4", "s4", "truncate"]))
        if kind == "flip":
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte":
            out[at] = draw(st.integers(0, 255))
        elif kind == "s4":
            value = draw(st.sampled_from(HOSTILE_S4) | st.integers(-2**31, 2**31 - 1))
            out[at:at + 4] = struct.pack(">i", value)[:len(out) - at]
        else:
            del out[at:]
    return bytes(out)


def check(data: bytes, predicate: Predicate, row_type: dict[str, str]) -> bool:
    """Whether the quick path answered; where it did, it answered as `evaluate`. Planning's
    `QuickEvaluator` (compiled once, answers kept by the bytes) answers as `quick_evaluate`,
    the second time from what it kept."""
    quick = quick_evaluate(data, predicate, row_type)
    evaluator = QuickEvaluator(predicate, row_type)
    assert evaluator(data) == quick and evaluator(bytes(bytearray(data))) == quick
    if quick is not None:
        assert quick == outcome(data, predicate, row_type), (predicate, quick)
    return quick is not None


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_answers_as_the_python_readers(data: st.DataObject) -> None:
    container, row_type, pool = data.draw(file_index_containers())
    check(container, data.draw(predicates(row_type, pool)), row_type)


@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_declines_damage_the_python_readers_report(data: st.DataObject) -> None:
    container, row_type, pool = data.draw(file_index_containers())
    check(data.draw(damaged(container, row_type["c"])), data.draw(predicates(row_type, pool)), row_type)


@given(file_index_containers(), st.data())
def test_answers_what_planning_asks(case: tuple[bytes, dict[str, str], list], data: st.DataObject) -> None:
    """An = or IN of the pool's values on a lone bitmap V2 of a string or integer column, ANDed
    with a range on an unindexed column: the kernel answers (not only declines)."""
    container, row_type, pool = case
    literal = data.draw(st.sampled_from(pool).filter(lambda v: v is not None))
    predicate = And((Leaf("greater_or_equal", "u", ("a",)), Leaf("equal", "c", (literal,))))
    answered = check(container, predicate, row_type)
    indexes = FileIndexFile.parse(container).columns["c"]
    lone_v2 = list(indexes) == ["bitmap"] and indexes["bitmap"] is not None \
        and indexes["bitmap"][:1] == b"\x02"
    if lone_v2 and row_type["c"] not in ("BOOLEAN", "DOUBLE"):
        assert answered


def s4_fields(blob: bytes, data_type: str) -> list[int]:
    """Where every `s4` of a V2 blob's head, secondary index and index blocks lies."""
    codec = bitmap_keys(data_type)
    head = scan_v2_head(blob, codec.kind)
    assert head is not None
    fields = [1, 5] + ([10, 14] if head.has_null else []) + [head.ofs_num_blocks]
    pos = head.ofs_num_blocks + 4
    for key in head.first_keys:
        pos += codec.size(key)
        fields.append(pos)
        pos += 4
    fields.append(pos)
    for i, offset in enumerate(head.block_offsets):
        start = head.ofs_index_blocks + offset
        block = read_v2_block(blob, codec.kind, start, block_size(head, i))
        fields.append(start)
        pos = start + 4
        for key in block.keys:
            pos += codec.size(key)
            fields += [pos, pos + 4]
            pos += 8
    return fields


@settings(max_examples=1500, deadline=None)
@given(file_index_containers(), st.data())
def test_declines_each_damaged_field_the_python_readers_report(
        case: tuple[bytes, dict[str, str], list], data: st.DataObject) -> None:
    """One `s4` of the probed bitmap's head, secondary index or index blocks set to a hostile
    or a nearby value: an = of a key the column holds answers as the Python readers do."""
    container, row_type, pool = case
    entry = next((e for e in FileIndexFile.parse(container).entries
                  if e.column == "c" and e.index_type == "bitmap" and e.blob is not None), None)
    keys = [v for v in pool if v is not None]
    if entry is None or entry.blob[:1] != b"\x02" or not keys:
        return
    at = entry.offset + data.draw(st.sampled_from(s4_fields(entry.blob, row_type["c"])))
    (old,) = struct.unpack_from(">i", container, at)
    new = data.draw(st.sampled_from(HOSTILE_S4) | st.integers(-3, 3).map(lambda d: old + d)
                    | st.integers(-2**31, 2**31 - 1))
    if not -2**31 <= new < 2**31:
        return
    damaged_container = container[:at] + struct.pack(">i", new) + container[at + 4:]
    check(damaged_container, Leaf("equal", "c", (data.draw(st.sampled_from(keys)),)), row_type)


def test_a_header_of_many_columns_is_left_to_the_python_readers() -> None:
    """The probe's repeated-name check compares each name with the earlier ones, so a header
    of more than 256 columns is declined (no quadratic walk of a hostile header) and left to
    the Python readers; up to 256 it answers as they do."""
    from paimon_schema.layouts.bitmap_index import build_bitmap_index
    from paimon_schema.layouts.file_index import write_file_index
    from paimon_schema.runtime import _avro

    blob = build_bitmap_index("INT", [1, 2, None, 2], version=2)
    for columns, declined in ((256, False), (257, True)):
        container = write_file_index({f"c{i}": {"bitmap": blob} for i in range(columns)})
        answer = _avro.probe_bitmap(container, b"c0", 4, 2)
        assert (answer is None) == declined, columns
        assert check(container, Leaf("equal", "c0", (2,)), {"c0": "INT"}) is not declined, columns
