"""WHERE text to predicates and back: `parse_where("a = 5 AND b IN ('x', 'y')", row_type)`.

A small, safe SQL subset (=, <>, !=, <, <=, >, >=, IN, NOT IN, IS [NOT] NULL, BETWEEN, AND, OR,
NOT, parentheses; integers, decimals, 'strings', X'hex', NULL, TRUE/FALSE, DATE/TIME/TIMESTAMP
'iso text'; `quoted` column names such as `m[k]`), typed by the columns' data types so that a
literal that cannot be a value of its column is refused where it stands. NOT is pushed down to
the leaves; `sql_text` prints a predicate back as WHERE text that parses to the same predicate.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import NamedTuple

from paimon_schema import types
from paimon_schema.errors import SchemaError
from paimon_schema.query import And, Leaf, Or, Predicate, col
from paimon_schema.types import INTEGER_RANGES, DataType

MAX_NESTING = 64                # parentheses and NOTs: keeps recursion far from Python's limit
KEYWORDS = frozenset({"AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "TRUE", "FALSE"})
TYPED_LITERALS = frozenset({"DATE", "TIME", "TIMESTAMP"})
COMPARISONS: dict[str, Callable[[col, object], Predicate]] = {
    "=": lambda c, v: c == v, "!=": lambda c, v: c != v, "<>": lambda c, v: c != v,
    "<": lambda c, v: c < v, "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v, ">=": lambda c, v: c >= v,
}
_TOKEN = re.compile(r"""
      (?P<space>\s+)
    | (?P<hex>[xX]'[0-9A-Fa-f]*')
    | (?P<string>'(?:[^']|'')*')
    | (?P<quoted>`(?:[^`]|``)*`)
    | (?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
    | (?P<op><=|>=|<>|!=|[=<>(),])
    | (?P<word>[^\W\d]\w*)
""", re.VERBOSE)


class Token(NamedTuple):
    kind: str           # hex, string, quoted, number, op, word, end
    text: str
    pos: int

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words


class WhereError(SchemaError):
    """A malformed WHERE clause, pointing at the place."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        super().__init__(f"{message}\n    {text}\n    {' ' * pos}^")
        self.pos = pos


def tokenize(text: str) -> list[Token]:
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            what = {"'": "unterminated string", "`": "unterminated quoted name"}.get(text[pos])
            raise WhereError(what or f"unexpected character {text[pos]!r}", text, pos)
        if match.lastgroup != "space":
            tokens.append(Token(match.lastgroup, match.group(), pos))
        pos = match.end()
    return [*tokens, Token("end", "", len(text))]


def coerce_literal(raw: object, data_type: DataType) -> object:
    """A WHERE literal as the Python value the library takes for `data_type`.

    `raw` is what the tokenizer read: None (NULL), bool, int, Decimal, str or bytes (X'..').
    ValueError says what was expected."""
    if raw is None:
        return None
    root = data_type.root
    if root == "BOOLEAN":
        if isinstance(raw, bool):
            return raw
        raise ValueError(f"{data_type} takes TRUE or FALSE")
    if isinstance(raw, bool):
        raise ValueError(f"TRUE/FALSE is not a {data_type} value")
    if root in INTEGER_RANGES:
        if isinstance(raw, decimal.Decimal) and raw == raw.to_integral_value():
            return int(raw)
        if isinstance(raw, int):
            return raw
        raise ValueError(f"{data_type} takes an integer")
    if data_type.is_float:
        if isinstance(raw, (int, decimal.Decimal)):
            return float(raw)
        if isinstance(raw, str) and raw.lower().lstrip("+-") in ("nan", "infinity", "inf"):
            return float(raw)
        raise ValueError(f"{data_type} takes a number (or 'NaN', 'Infinity', '-Infinity')")
    if root == "DECIMAL":
        if isinstance(raw, (int, decimal.Decimal)):
            return decimal.Decimal(raw)
        raise ValueError(f"{data_type} takes a number")
    if data_type.is_string:
        if isinstance(raw, str):
            return raw
        raise ValueError(f"{data_type} takes a 'quoted string'")
    if data_type.is_binary:
        if isinstance(raw, (bytes, str)):
            return raw if isinstance(raw, bytes) else raw.encode("utf-8")
        raise ValueError(f"{data_type} takes X'hex' or a 'string' (its UTF-8 bytes)")
    return _temporal_literal(raw, data_type)


def _temporal_literal(raw: object, data_type: DataType) -> object:
    """DATE, TIME, TIMESTAMP: ISO text, or the raw index integer (days, millis, epoch ...)."""
    parse, example = {
        "DATE": (dt.date.fromisoformat, "'2024-01-31'"),
        "TIME": (dt.time.fromisoformat, "'12:30:00.250'"),
    }.get(data_type.root, (dt.datetime.fromisoformat, "'2024-01-31 12:30:00'"))
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str):
        try:
            return parse(raw)
        except ValueError:
            pass
    raise ValueError(f"{data_type} takes ISO text such as {example} or the index's integer")


class WhereParser:
    """Recursive descent over the WHERE grammar, building `col` predicates.

    where   := or
    or      := and (OR and)*
    and     := unary (AND unary)*
    unary   := NOT unary | '(' or ')' | leaf
    leaf    := column ( op literal | [NOT] IN '(' literal, ... ')' | IS [NOT] NULL
                      | [NOT] BETWEEN literal AND literal )
    """

    def __init__(self, text: str, row_type: Mapping[str, str | DataType]) -> None:
        self.text = text
        self.row_type = row_type
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    def parse(self) -> Predicate:
        if self.peek().kind == "end":
            raise self.error("empty WHERE clause")
        predicate = self.disjunction()
        if self.peek().kind != "end":
            raise self.error(f"unexpected {self.describe(self.peek())} (missing AND/OR?)")
        return predicate

    # -- tokens ----------------------------------------------------------------------------------

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return token

    def accept(self, *words: str) -> bool:
        if self.peek().is_word(*words):
            self.take()
            return True
        return False

    def expect_op(self, op: str, what: str) -> None:
        token = self.take()
        if token.kind != "op" or token.text != op:
            raise self.error(f"expected {what}, found {self.describe(token)}", token)

    def error(self, message: str, token: Token | None = None) -> WhereError:
        return WhereError(message, self.text, (token or self.peek()).pos)

    @staticmethod
    def describe(token: Token) -> str:
        return "the end" if token.kind == "end" else repr(token.text)

    @contextmanager
    def nested(self) -> Iterator[None]:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"nested more than {MAX_NESTING} deep")
        try:
            yield
        finally:
            self.depth -= 1

    # -- grammar ---------------------------------------------------------------------------------

    def disjunction(self) -> Predicate:
        children = [self.conjunction()]
        while self.accept("OR"):
            children.append(self.conjunction())
        return _joined(Or, children)

    def conjunction(self) -> Predicate:
        children = [self.unary()]
        while self.accept("AND"):
            children.append(self.unary())
        return _joined(And, children)

    def unary(self) -> Predicate:
        if self.accept("NOT"):
            with self.nested():
                return ~self.unary()
        token = self.peek()
        if token.kind == "op" and token.text == "(":
            self.take()
            with self.nested():
                inner = self.disjunction()
            self.expect_op(")", "')'")
            return inner
        return self.leaf()

    def leaf(self) -> Predicate:
        typed = self.column()
        column = col(typed[0])
        token = self.take()
        if token.kind == "op" and token.text in COMPARISONS:
            return COMPARISONS[token.text](column, self.literal(typed))
        if token.is_word("IS"):
            negated = self.accept("NOT")
            if not self.accept("NULL"):
                raise self.error("expected NULL after IS" + (" NOT" if negated else ""))
            return column.is_not_null() if negated else column.is_null()
        negated = token.is_word("NOT")
        if negated:
            token = self.take()
        if token.is_word("IN"):
            values = self.literal_list(typed)
            return column.not_in(values) if negated else column.isin(values)
        if token.is_word("BETWEEN"):
            low = self.literal(typed)
            if not self.accept("AND"):
                raise self.error("expected AND in BETWEEN ... AND ...")
            between = column.between(low, self.literal(typed))
            return ~between if negated else between
        expected = "IN or BETWEEN after NOT" if negated else \
            "an operator (=, <>, <, <=, >, >=, IN, IS NULL, BETWEEN)"
        raise self.error(f"expected {expected}, found {self.describe(token)}", token)

    def column(self) -> tuple[str, DataType]:
        token = self.take()
        if token.kind == "quoted":
            name = token.text[1:-1].replace("``", "`")
        elif token.kind == "word" and token.text.upper() not in KEYWORDS:
            name = token.text
        else:
            raise self.error(f"expected a column name, found {self.describe(token)} "
                             f"(quote unusual names with backticks: `m[k]`)", token)
        data_type = self.row_type.get(name)
        if data_type is None:
            raise self.error(f"no type for column {name!r} in the row type", token)
        return name, DataType.parse(data_type)

    def literal_list(self, column: tuple[str, DataType]) -> list[object]:
        self.expect_op("(", "'(' after IN")
        values = [self.literal(column)]
        while self.peek().kind == "op" and self.peek().text == ",":
            self.take()
            values.append(self.literal(column))
        self.expect_op(")", "',' or ')' in the IN list")
        return values

    def literal(self, column: tuple[str, DataType]) -> object:
        """The next literal as a value of the column's type."""
        name, data_type = column
        token = self.take()
        if token.is_word(*TYPED_LITERALS) and self.peek().kind == "string":
            token = self.take()               # DATE '2024-01-31': the text decides
        try:
            raw = self.raw_literal(token)
            value = coerce_literal(raw, data_type)
            types.internal(data_type, value)          # range and precision checks
        except (ValueError, SchemaError) as exc:
            raise self.error(f"column {name!r}: {exc}", token) from exc
        return value

    def raw_literal(self, token: Token) -> object:
        if token.kind == "string":
            return token.text[1:-1].replace("''", "'")
        if token.kind == "hex":
            digits = token.text[2:-1]
            if len(digits) % 2:
                raise ValueError(f"X'{digits}' needs pairs of hex digits")
            return bytes.fromhex(digits)
        if token.kind == "number":
            return int(token.text) if token.text.lstrip("+-").isdigit() \
                else decimal.Decimal(token.text)
        if token.is_word("NULL"):
            return None
        if token.is_word("TRUE", "FALSE"):
            return token.text.upper() == "TRUE"
        raise self.error(f"expected a literal (a number, 'text', NULL, TRUE or FALSE), "
                         f"found {self.describe(token)}", token)


def _joined(kind: type[And] | type[Or], children: list[Predicate]) -> Predicate:
    """One flat AND (OR) node: a nested one of the same kind is spliced in, so that equal
    conditions give equal predicates and `sql_text` parses back to the same predicate."""
    flat: list[Predicate] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else (child,))
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def parse_where(text: str, row_type: Mapping[str, str | DataType]) -> Predicate:
    """A WHERE clause as a `col` predicate, literals typed by `row_type`; WhereError if not."""
    return WhereParser(text, row_type).parse()


SQL_OPERATORS = {"equal": "=", "not_equal": "<>", "less_than": "<", "less_or_equal": "<=",
                 "greater_than": ">", "greater_or_equal": ">="}


def sql_column(name: str) -> str:
    if re.fullmatch(r"[^\W\d]\w*", name) and name.upper() not in KEYWORDS:
        return name
    return "`" + name.replace("`", "``") + "`"


def sql_literal(value: object) -> str:
    """A value as a WHERE literal that parses back to it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, float) and not math.isfinite(value):
        return "'NaN'" if math.isnan(value) else ("'Infinity'" if value > 0 else "'-Infinity'")
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(' ')}'"
    for kind, cls in (("DATE", dt.date), ("TIME", dt.time)):
        if isinstance(value, cls):
            return f"{kind} '{value.isoformat()}'"
    return str(value)


def sql_text(predicate: Predicate) -> str:
    """The predicate as WHERE text, NOT already pushed down to the leaves."""
    if isinstance(predicate, (And, Or)):
        joiner = " AND " if isinstance(predicate, And) else " OR "
        return joiner.join(f"({sql_text(c)})" if isinstance(c, Or) and isinstance(predicate, And)
                           else sql_text(c) for c in predicate.children)
    assert isinstance(predicate, Leaf)
    column, f, values = sql_column(predicate.column), predicate.function, predicate.literals
    if f in SQL_OPERATORS:
        return f"{column} {SQL_OPERATORS[f]} {sql_literal(values[0])}"
    if f in ("in_", "not_in"):
        listed = ", ".join(map(sql_literal, values))
        return f"{column} {'IN' if f == 'in_' else 'NOT IN'} ({listed})"
    if f == "between":
        return f"{column} BETWEEN {sql_literal(values[0])} AND {sql_literal(values[1])}"
    return f"{column} {'IS NULL' if f == 'is_null' else 'IS NOT NULL'}"
