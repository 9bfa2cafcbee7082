"""WHERE text to predicates and back: `parse_where("a = 5 AND b IN ('x', 'y')", row_type)`.

A small, safe SQL subset (=, <>, !=, <, <=, >, >=, IN, NOT IN, IS [NOT] NULL, BETWEEN, AND, OR,
NOT, parentheses; integers, decimals, 'strings', X'hex', NULL, TRUE/FALSE, DATE/TIME/TIMESTAMP
'iso text'; `quoted` column names such as `m[k]`), typed by the columns' data types so that a
literal that cannot be a value of its column is refused where it stands. NOT is pushed down to
the leaves; `sql_text` prints a predicate back as WHERE text that parses to the same predicate.

The tokenizer and grammar are shared with `spark.predicates.parse_sql` through a `Dialect`:
what differs between the two texts (operators, string escapes, number suffixes, reserved words,
`5 < a`, how a literal becomes a value) is said there, so the two cannot drift apart.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar, NamedTuple

from paimon_schema.query.predicate import And, Leaf, Or, Predicate
from paimon_schema.values import types
from paimon_schema.values.errors import SchemaError
from paimon_schema.values.types import INTEGER_RANGES, DataType

MAX_NESTING = 64                # parentheses and NOTs: keeps recursion far from Python's limit
KEYWORDS = frozenset({"AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "TRUE", "FALSE"})
#: The words before a typed literal (DATE '2024-01-31') in either dialect.
TYPE_WORDS = frozenset({"DATE", "TIME", "TIMESTAMP", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ"})
#: Comparison operator -> Leaf function.
OPERATORS = {"=": "equal", "!=": "not_equal", "<>": "not_equal", "<": "less_than",
             "<=": "less_or_equal", ">": "greater_than", ">=": "greater_or_equal"}
#: The function of `literal op column` read as `column op' literal`.
FLIPPED = {"equal": "equal", "not_equal": "not_equal", "null_safe_equal": "null_safe_equal",
           "less_than": "greater_than", "greater_than": "less_than",
           "less_or_equal": "greater_or_equal", "greater_or_equal": "less_or_equal"}


class Token(NamedTuple):
    kind: str           # hex, string, quoted, number, op, word, end
    text: str
    pos: int

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words

    def is_op(self, *ops: str) -> bool:
        return self.kind == "op" and self.text in ops


class Literal(NamedTuple):
    """A literal as written, for the dialect to turn into a value of its column."""

    token: Token        # string, hex, number or word (NULL, TRUE, FALSE)
    sign: str = ""      # "+" or "-" before a number
    prefix: str = ""    # the word before a 'text' literal (DATE, TIMESTAMP ...), upper case


class WhereError(SchemaError):
    """A malformed WHERE clause, pointing at the place."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        super().__init__(f"{message}\n    {text}\n    {' ' * pos}^")
        self.reason = message
        self.pos = pos


class LiteralOutOfRange(WhereError):
    """An integer literal beyond 64 bits: refused in every dialect (not a text a dialect
    fails to understand), with the message `query FILE` gives for a BIGINT column."""


#: The one rule for integer literals, whatever reads them (`query FILE`, table reads, deletes).
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def check_integer(value: object) -> None:
    """SchemaError unless an integer literal fits a 64-bit integer (the widest column)."""
    if isinstance(value, int) and not isinstance(value, bool) \
            and not INT64_MIN <= value <= INT64_MAX:
        raise SchemaError(f"out of range for a 64-bit integer: {value}")


class Dialect:
    """What differs between the WHERE texts the one grammar reads. This base class is the typed
    WHERE syntax; a subclass says how a literal becomes a value (`column`, `value`)."""

    operators: ClassVar[Mapping[str, str]] = OPERATORS   # comparison text -> Leaf function
    reserved: ClassVar[frozenset[str]] = KEYWORDS        # words that are never column names
    prefixes: ClassVar[frozenset[str]] = frozenset({"DATE", "TIME", "TIMESTAMP"})  # DATE 'text'
    flip: ClassVar[bool] = False                         # read `5 < a` as `a > 5`
    string: ClassVar[str] = r"'(?:[^']|'')*'"             # regexes of a string literal, a plain
    word: ClassVar[str] = r"[^\W\d]\w*"                  # word (name or keyword) and what may
    suffix: ClassVar[str] = ""                           # follow a number (Spark's 5L)

    def column(self, name: str) -> Any:
        """What `value` needs to know of the column; ValueError refuses the name."""
        return None

    def value(self, literal: Literal, column: Any) -> object:
        """The literal's value for the column; ValueError refuses it. This one: None (NULL), bool,
        int, Decimal, str or bytes (X'..') as written."""
        token = literal.token
        if token.kind == "string":
            return self.unquote(token.text)
        if token.kind == "hex":
            digits = token.text[2:-1]
            if len(digits) % 2:
                raise ValueError(f"X'{digits}' needs pairs of hex digits")
            return bytes.fromhex(digits)
        if token.kind == "number":
            text = literal.sign + token.text
            return int(text) if token.text.isdigit() else decimal.Decimal(text)
        return None if token.is_word("NULL") else token.is_word("TRUE")

    def unquote(self, text: str) -> str:
        return text[1:-1].replace("''", "'")

    def tokenize(self, text: str) -> list[Token]:
        pattern = _token_pattern(frozenset(self.operators), self.string, self.word, self.suffix)
        tokens, pos = [], 0
        while pos < len(text):
            match = pattern.match(text, pos)
            if match is None:
                what = {"'": "unterminated string", "`": "unterminated quoted name"}.get(text[pos])
                raise WhereError(what or f"unexpected character {text[pos]!r}", text, pos)
            if match.lastgroup != "space":
                tokens.append(Token(match.lastgroup or "", match.group(), pos))
            pos = match.end()
        return [*tokens, Token("end", "", len(text))]


@functools.cache
def _token_pattern(operators: frozenset[str], string: str, word: str, suffix: str
                   ) -> re.Pattern[str]:
    ops = "|".join(re.escape(op) for op in sorted(operators, key=len, reverse=True))
    return re.compile(rf"""
          (?P<space>\s+)
        | (?P<hex>[xX]'[0-9A-Fa-f]*')
        | (?P<string>{string})
        | (?P<quoted>`(?:[^`]|``)*`)
        | (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?{suffix})
        | (?P<op>{ops}|[-+(),])
        | (?P<word>{word})
    """, re.VERBOSE)


class Typed(Dialect):
    """The typed WHERE of `parse_where`: literals become values of the column's data type."""

    def __init__(self, row_type: Mapping[str, str | DataType]) -> None:
        self.row_type = row_type

    def column(self, name: str) -> DataType:
        data_type = self.row_type.get(name)
        if data_type is None:
            raise ValueError(f"no type for column {name!r} in the row type")
        return DataType.parse(data_type)

    def value(self, literal: Literal, column: DataType) -> object:
        value = coerce_literal(super().value(literal, column), column)
        types.internal(column, value)           # range and precision checks
        return value


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
    """Recursive descent over the WHERE grammar of a dialect, building `Leaf` predicates.

    where   := or
    or      := and (OR and)*
    and     := unary (AND unary)*
    unary   := NOT unary | '(' or ')' | leaf
    leaf    := column ( op literal | [NOT] IN '(' literal, ... ')' | IS [NOT] NULL
                      | [NOT] BETWEEN literal AND literal )
             | literal op column                    (dialects that flip)
    literal := [+|-] number | 'text' | X'hex' | NULL | TRUE | FALSE | prefix 'text'
    """

    def __init__(self, text: str, dialect: Dialect) -> None:
        self.text = text
        self.dialect = dialect
        self.tokens = dialect.tokenize(text)
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
        if not token.is_op(op):
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
                return _flat(~self.unary())
        if self.peek().is_op("("):
            self.take()
            with self.nested():
                inner = self.disjunction()
            self.expect_op(")", "')'")
            return inner
        return self.leaf()

    def leaf(self) -> Predicate:
        if self.dialect.flip and not self.is_column(self.peek()):
            return self.flipped()
        name, column = self.column()
        token = self.take()
        if token.kind == "op" and token.text in self.dialect.operators:
            return _comparison(self.dialect.operators[token.text], name, self.operand(name, column))
        if token.is_word("IS"):
            negated = self.accept("NOT")
            if not self.accept("NULL"):
                raise self.error("expected NULL after IS" + (" NOT" if negated else ""))
            return Leaf("is_not_null" if negated else "is_null", name)
        negated = token.is_word("NOT")
        if negated:
            token = self.take()
        if token.is_word("IN"):
            self.expect_op("(", "'(' after IN")
            values = [self.operand(name, column)]
            while self.peek().is_op(","):
                self.take()
                values.append(self.operand(name, column))
            self.expect_op(")", "',' or ')' in the IN list")
            return Leaf("not_in" if negated else "in_", name, tuple(values))
        if token.is_word("BETWEEN"):
            low = self.operand(name, column)
            if not self.accept("AND"):
                raise self.error("expected AND in BETWEEN ... AND ...")
            between = Leaf("between", name, (low, self.operand(name, column)))
            return _flat(~between) if negated else between
        expected = "IN or BETWEEN after NOT" if negated else \
            "an operator (=, <>, <, <=, >, >=, IN, IS NULL, BETWEEN)"
        raise self.error(f"expected {expected}, found {self.describe(token)}", token)

    def flipped(self) -> Predicate:
        """`literal op column`, which a dialect with `flip` reads as `column op' literal`."""
        literal = self.literal()
        token = self.take()
        if token.kind != "op" or token.text not in self.dialect.operators:
            raise self.error(f"expected a comparison operator, found {self.describe(token)}",
                             token)
        name, column = self.column()
        function = FLIPPED[self.dialect.operators[token.text]]
        return _comparison(function, name, self.value(name, column, literal))

    def is_column(self, token: Token) -> bool:
        return token.kind == "quoted" or \
            token.kind == "word" and token.text.upper() not in self.dialect.reserved

    def column(self) -> tuple[str, Any]:
        token = self.take()
        if not self.is_column(token):
            raise self.error(f"expected a column name, found {self.describe(token)} "
                             f"(quote unusual names with backticks: `m[k]`)", token)
        name = token.text[1:-1].replace("``", "`") if token.kind == "quoted" else token.text
        try:
            return name, self.dialect.column(name)
        except ValueError as exc:
            raise self.error(str(exc), token) from exc

    def literal(self) -> Literal:
        """The next literal as written; the dialect's `value` gives its value once its column
        is known (after the operator in `5 < a`)."""
        token = self.take()
        if token.is_op("+", "-"):
            number = self.take()
            if number.kind != "number":
                raise self.error(f"expected a number after {token.text!r}, found "
                                 f"{self.describe(number)}", number)
            return Literal(number, token.text)
        if token.is_word(*self.dialect.prefixes) and self.peek().kind == "string":
            return Literal(self.take(), prefix=token.text.upper())
        if token.kind in ("string", "hex", "number") or token.is_word("NULL", "TRUE", "FALSE"):
            return Literal(token)
        raise self.error(f"expected a literal (a number, 'text', NULL, TRUE or FALSE), "
                         f"found {self.describe(token)}", token)

    def operand(self, name: str, column: Any) -> object:
        return self.value(name, column, self.literal())

    def value(self, name: str, column: Any, literal: Literal) -> object:
        """The dialect's value of the literal; an integer that no column can hold is refused
        here, for every dialect (a typed DECIMAL column has turned it into a Decimal)."""
        try:
            value = self.dialect.value(literal, column)
        except ValueError as exc:
            raise self.error(f"column {name!r}: {exc}", literal.token) from exc
        try:
            check_integer(value)
        except SchemaError as exc:
            raise LiteralOutOfRange(f"column {name!r}: {exc}", self.text,
                                    literal.token.pos) from exc
        return value


def _comparison(function: str, name: str, value: object) -> Predicate:
    if function == "null_safe_equal":
        return null_safe_equal(name, value)
    return Leaf(function, name, (value,))


def null_safe_equal(name: str, value: object) -> Predicate:
    """Spark's `a <=> v`. It is never NULL, so `a = v AND a IS NOT NULL` rather than `a = v`:
    NOT of it must keep the NULL rows (`a <> v OR a IS NULL`)."""
    if value is None:
        return Leaf("is_null", name)
    return And((Leaf("equal", name, (value,)), Leaf("is_not_null", name)))


def _joined(kind: type[And] | type[Or], children: list[Predicate]) -> Predicate:
    """One flat AND (OR) node: a nested one of the same kind is spliced in, so that equal
    conditions give equal predicates and `sql_text` parses back to the same predicate."""
    flat: list[Predicate] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else (child,))
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def _flat(predicate: Predicate) -> Predicate:
    """The predicate with every AND (OR) flat: NOT of a BETWEEN inside an AND gives an OR
    inside the OR that NOT made of the AND."""
    if isinstance(predicate, Leaf):
        return predicate
    assert isinstance(predicate, (And, Or))
    return _joined(type(predicate), [_flat(c) for c in predicate.children])


def parse_where(text: str, row_type: Mapping[str, str | DataType]) -> Predicate:
    """A WHERE clause as a `col` predicate, literals typed by `row_type`; WhereError if not."""
    return WhereParser(text, Typed(row_type)).parse()


SQL_OPERATORS = {"equal": "=", "not_equal": "<>", "less_than": "<", "less_or_equal": "<=",
                 "greater_than": ">", "greater_or_equal": ">="}


def sql_column(name: str) -> str:
    """A column name as WHERE text: bare only if both dialects read it as a name (an ASCII word,
    not a keyword nor a literal's type word), otherwise `quoted`."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", name) and name.upper() not in KEYWORDS | TYPE_WORDS:
        return name
    return "`" + name.replace("`", "``") + "`"


def sql_literal(value: object) -> str:
    """A value as a WHERE literal that parses back to it (and that Spark SQL reads alike, but
    for 'NaN' / 'Infinity', TIME, X'..' and backslashes in strings)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return format(value, "f")           # not 1E-7: Spark SQL reads that as a DOUBLE
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
