"""Spark SQL's spelling of the WHERE grammar: `parse_sql` reads the filter text a user gives a
table read (`read_arrow`, `read_table`) into a predicate, or raises SqlNotUnderstood.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re

from paimon_schema.query.predicate import Predicate
from paimon_schema.query.where import (
    KEYWORDS,
    OPERATORS,
    TYPE_WORDS,
    Dialect,
    Literal,
    LiteralOutOfRange,
    WhereError,
    WhereParser,
)
from paimon_schema.values.types import float32

__all__ = ["SqlNotUnderstood", "parse_sql"]


class SqlNotUnderstood(ValueError):
    """The filter is not a simple comparison tree; Spark still applies it, without pruning."""


class _Spark(Dialect):
    r"""Spark SQL's spelling of the WHERE grammar. Literals stay untyped (`for_file` converts them
    per data file): 5 int, 5L/5S/5Y int, 1.5 and 2BD Decimal, 1e3 and 1.5D float, 1.5F float32,
    DATE 'text' date, TIMESTAMP / TIMESTAMP_NTZ 'text' datetime; `==`, `<=>` and `5 < a` read;
    in 'text', \' and \\ (and \q for q). X'..', TIMESTAMP_LTZ and TIME literals are not read."""

    operators = {**OPERATORS, "==": "equal", "<=>": "null_safe_equal"}
    reserved = KEYWORDS | TYPE_WORDS - {"TIME"}
    prefixes = frozenset({"DATE", "TIMESTAMP", "TIMESTAMP_NTZ"})
    flip = True
    string = r"'(?:[^'\\]|\\.|'')*'"
    word = r"[A-Za-z_][A-Za-z_0-9]*"
    suffix = r"(?:[LlDdFfSsYy]|BD|bd)?"

    def column(self, name: str) -> None:
        if not name:
            raise ValueError("an empty column name")

    def value(self, literal: Literal, column: None) -> object:
        token = literal.token
        if token.kind == "hex":
            raise ValueError("X'..' literals are not read")
        if token.kind == "string" and literal.prefix:
            text = self.unquote(token.text)
            if literal.prefix == "DATE":
                return dt.date.fromisoformat(text)
            stamp = dt.datetime.fromisoformat(text)
            # Spark drops a zone offset from a TIMESTAMP_NTZ literal: wall-clock time stays.
            return stamp.replace(tzinfo=None) if literal.prefix == "TIMESTAMP_NTZ" else stamp
        if token.kind != "number":
            return super().value(literal, column)
        match = re.fullmatch(r"(.+?)(BD|bd|[LlDdFfSsYy])?", token.text)
        assert match is not None                 # the tokenizer only makes such numbers
        digits, suffix = match.groups()
        text, suffix = literal.sign + digits, (suffix or "").upper()
        if suffix == "F":
            return float32(float(text))
        if suffix == "D" or "e" in text.lower():
            return float(text)
        if "." in text or suffix == "BD":
            return decimal.Decimal(text)      # exact: `-1 * Decimal` would round to 28 digits
        return int(text)

    def unquote(self, text: str) -> str:
        return re.sub(r"\\(.)", _unescape, super().unquote(text))


def _unescape(match: re.Match[str]) -> str:
    r"""Spark reads `\x` as x, except the escapes that mean another character (\n, \t, \Z,
    \u00e9, octal \101 ...) or keep the backslash (\%, \_): refused, so never misread."""
    if match[1] in "0123456789bnrtuUZ%_":
        raise ValueError(f"the escape \\{match[1]} is not read")
    return match[1]


def parse_sql(text: str) -> Predicate:
    """A predicate from a Spark SQL boolean expression made of column-vs-literal comparisons
    (`=`, `<>`, `<`, ..., `IN`, `IS [NOT] NULL`, `BETWEEN`) joined by AND / OR / NOT.
    Anything else raises SqlNotUnderstood. Only used to prune: Spark evaluates the text itself.
    An integer literal beyond 64 bits is a SchemaError (LiteralOutOfRange), as in `parse_where`.
    """
    try:
        return WhereParser(text, _Spark()).parse()
    except LiteralOutOfRange:
        raise
    except WhereError as exc:
        raise SqlNotUnderstood(f"{exc.reason} at character {exc.pos}") from None
