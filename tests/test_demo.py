"""The demo's own oracle, without Java: the truth it compares queries with, its verdicts, and
that a problem in one of our files turns into a MISMATCH and a non-zero count."""

from __future__ import annotations

import io

from pyroaring import BitMap

import paimon_schema as ps
from paimon_schema.cli import presenters
from paimon_schema.query.where import parse_where
from paimon_schema.selfcheck import demo
from paimon_schema.values.results import REMAIN, SKIP

COLUMNS = {"a": [1, None, 3, 1, 5], "b": ["x", "y", None, "x", "z"]}
TYPES = presenters.Types(row_type={"a": "INT", "b": "STRING"})


def rows(where: str) -> BitMap:
    return demo.truth(parse_where(where, TYPES), COLUMNS)


def test_truth_follows_sql_null_rules() -> None:
    assert rows("a = 1") == BitMap([0, 3])
    assert rows("a <> 1") == BitMap([2, 4])                 # the null row never matches
    assert rows("NOT (a = 1)") == BitMap([2, 4])
    assert rows("NOT a BETWEEN 2 AND 4") == BitMap([0, 3, 4])
    assert rows("a IS NULL OR b IS NULL") == BitMap([1, 2])
    assert rows("a NOT IN (1, 3) AND b >= 'y'") == BitMap([4])


def test_verdicts_never_forgive_a_dropped_row() -> None:
    live, matching = BitMap(range(5)), BitMap([0, 3])
    assert demo._verdict(ps.IndexResult.of(BitMap([0, 3])), matching, live, True) == "exact"
    assert demo._verdict(ps.IndexResult.of(BitMap([0, 1, 3])), matching, live, False) == \
        "superset (+1)"
    assert demo._verdict(REMAIN, matching, live, False) == "superset (+3)"
    assert demo._verdict(REMAIN, matching, live, True).startswith("MISMATCH: 3 rows too many")
    assert demo._verdict(SKIP, matching, live, False) == "MISMATCH: 2 matching rows dropped"
    assert demo._verdict(SKIP, BitMap(), live, True) == "exact"


def test_top_n_order_puts_nulls_where_asked() -> None:
    values = COLUMNS["a"]
    assert demo._ordered(values, range(5), descending=False, nulls_first=True) == \
        [None, 1, 1, 3, 5]
    assert demo._ordered(values, range(5), descending=True, nulls_first=False) == \
        [5, 3, 1, 1, None]


def test_a_problem_in_our_file_is_a_mismatch() -> None:
    def broken() -> list[str]:
        return ["differs"]

    files = [demo.OurFile("hash", "ours-good", b"", None, None, lambda: []),
             demo.OurFile("hash", "ours-bad", b"", broken, None, lambda: [])]
    out = io.StringIO()
    assert demo.report_ours(files, out) == 1
    text = out.getvalue()
    assert "MISMATCH" in text and "  ours-bad: = Java: differs" in text and "—" in text
