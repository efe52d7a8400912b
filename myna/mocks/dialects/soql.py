"""Salesforce SOQL (the `q` of `/query` and `/queryAll`) parsed into a `SoqlQuery`.

Supported: `SELECT` of fields, relationship paths (`Account.Name`), `COUNT()`, `COUNT(field)` and
`FIELDS(ALL|STANDARD|CUSTOM)`; `FROM` one object; `WHERE` with `AND`, `OR`, `NOT` and parentheses;
`=`, `!=`, `<>`, `<`, `<=`, `>`, `>=`, `LIKE`, `IN`, `NOT IN`, and `INCLUDES`/`EXCLUDES` on
multi-select picklists; string, number, boolean, null, date and datetime literals and the relative
date literals (`TODAY`, `LAST_N_DAYS:7`, `THIS_QUARTER`...), resolved against an injectable `now`;
`ORDER BY` with `ASC`/`DESC` and `NULLS FIRST`/`NULLS LAST`; `LIMIT`; `OFFSET`. Keywords are
case-insensitive. Everything else Salesforce accepts (subqueries, `GROUP BY`, `TYPEOF`, bind
variables...) is refused with a `QuerySyntaxError` naming it, and `malformed_query_message`
renders that error the way Salesforce words MALFORMED_QUERY.

As in Salesforce, `AND` and `OR` cannot be mixed at one level without parentheses. A relative date
literal is a range of whole days (UTC): `= TODAY` becomes a `between` of the day's first and last
instant, `> TODAY` is after its last, `< TODAY` before its first. Fiscal literals use the calendar
year (the default fiscal year), and weeks start on Sunday (the en_US locale).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final, Literal, NamedTuple, TypeAlias, cast

from myna.mocks.dialects import Dialect, QuerySyntaxError, Statement
from myna.mocks.query import And, Condition, Filter, Not, Operator, Or, Query, SortKey

DIALECT: Final = "soql"


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A selected field or relationship path, as written: `Name`, `Account.Owner.Name`."""

    path: str


@dataclass(frozen=True, slots=True)
class Count:
    """`COUNT()` (field None: the number of matching records) or `COUNT(field)`."""

    field: str | None = None
    alias: str | None = None


@dataclass(frozen=True, slots=True)
class FieldsMacro:
    """`FIELDS(ALL)`, `FIELDS(STANDARD)` or `FIELDS(CUSTOM)`."""

    kind: Literal["ALL", "STANDARD", "CUSTOM"]


SelectItem: TypeAlias = FieldRef | Count | FieldsMacro


@dataclass(frozen=True, slots=True)
class SoqlQuery:
    object_name: str
    select: tuple[SelectItem, ...]
    where: Filter | None = None
    order_by: tuple[SortKey, ...] = ()
    limit: int | None = None
    offset: int = 0

    @property
    def is_count(self) -> bool:
        """`SELECT COUNT() FROM ...`: the answer is `totalSize` with no records."""
        return (
            len(self.select) == 1
            and isinstance(self.select[0], Count)
            and self.select[0].field is None
        )

    @property
    def fields(self) -> tuple[str, ...] | None:
        """The selected field paths, or None when a FIELDS() macro asks for whole records."""
        if any(isinstance(item, FieldsMacro) for item in self.select):
            return None
        return tuple(item.path for item in self.select if isinstance(item, FieldRef))

    def to_query(self) -> Query:
        """What the store is asked for; COUNT() still counts through `total`."""
        return Query(
            where=self.where,
            order_by=self.order_by,
            limit=self.limit,
            offset=self.offset,
            fields=self.fields,
        )


def parse_soql(text: str, *, now: datetime | None = None) -> SoqlQuery:
    """Parse a SOQL query. `now` (default: the current UTC time) anchors relative date literals."""
    parser = Parser(text, tokenize(text), now=now)
    query = parser.select_statement()
    parser.expect_end()
    return query


def malformed_query_message(error: QuerySyntaxError) -> str:
    """The `message` of Salesforce's MALFORMED_QUERY error: the line, a caret, row and column."""
    lines = error.query.split("\n")
    line_text = lines[error.line - 1] if error.line <= len(lines) else ""
    caret = " " * (error.column - 1) + "^"
    return (
        f"\n{line_text}\n{caret}\nERROR at Row:{error.line}:Column:{error.column}\n{error.detail}"
    )


# --- tokens ---

TokenKind = Literal["ident", "string", "number", "date", "datetime", "op", "punct", "end"]


class Token(NamedTuple):
    kind: TokenKind
    text: str  # the source text (for strings: the contents, escapes still in place)
    position: int

    def is_keyword(self, *words: str) -> bool:
        return self.kind == "ident" and self.text.upper() in words


_TOKEN: Final = re.compile(
    r"""
    (?P<space>\s+)
    | (?P<datetime>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))
    | (?P<zoneless>\d{4}-\d{2}-\d{2}T[\d:.]*)
    | (?P<date>\d{4}-\d{2}-\d{2}(?![\dT]))
    | (?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?![A-Za-z_]))
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
    | (?P<op>!=|<>|<=|>=|=|<|>)
    | (?P<punct>[(),:])
    | (?P<string>'(?:\\.|[^'\\])*')
    | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)
# Escapes SOQL allows in string literals. In LIKE patterns \% and \_ (and \\) stay escaped so the
# evaluator can tell a literal % from a wildcard; elsewhere they decode to the character.
_ESCAPES: Final = {
    "n": "\n",
    "N": "\n",
    "r": "\r",
    "R": "\r",
    "t": "\t",
    "T": "\t",
    "b": "\b",
    "B": "\b",
    "f": "\f",
    "F": "\f",
    "'": "'",
    '"': '"',
    "\\": "\\",
    "%": "%",
    "_": "_",
}


def tokenize(text: str, start: int = 0, stop: int | None = None) -> list[Token]:
    """Split `text[start:stop]` into tokens with absolute positions, ending with an `end` token.

    String tokens hold the literal's contents with their escapes still in place: `_unescape`
    decodes them for comparisons and `_like_escape` for LIKE patterns.
    """
    stop = len(text) if stop is None else stop
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text, start, stop):
        kind = match.lastgroup
        if kind == "space":
            continue
        position = match.start()
        if kind == "string":
            contents = match.group()[1:-1]
            for escape in _ESCAPED.finditer(contents):
                if escape[1] not in _ESCAPES:
                    where = position + 1 + escape.start()
                    raise _error(text, where, "invalid escape sequence in string literal")
            tokens.append(Token("string", contents, position))
        elif kind == "bad":
            if match.group() == "'":
                raise _error(text, position, "unterminated string literal")
            raise _error(text, position, f"unexpected character {match.group()!r}")
        elif kind == "zoneless":
            raise _error(text, position, f"datetime {match.group()} needs a time zone: Z or +hh:mm")
        else:
            tokens.append(Token(cast(TokenKind, kind), match.group(), position))
    tokens.append(Token("end", "", stop))
    return tokens


_ESCAPED: Final = re.compile(r"\\(.)", re.DOTALL)


def _unescape(raw: str) -> str:
    return _ESCAPED.sub(lambda match: _ESCAPES[match[1]], raw)


def _like_escape(raw: str) -> str:
    """A LIKE pattern: wildcard escapes stay, the others decode."""
    return _ESCAPED.sub(lambda match: match[0] if match[1] in "%_\\" else _ESCAPES[match[1]], raw)


def _error(text: str, position: int, detail: str, term: str | None = None) -> QuerySyntaxError:
    return QuerySyntaxError(detail, dialect=DIALECT, query=text, position=position, term=term)


# --- relative date literals ---

_DAY_START: Final = "T00:00:00"
_DAY_END: Final = "T23:59:59.999999"


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _week_start(day: date) -> date:
    return day - timedelta(days=(day.weekday() + 1) % 7)  # Sunday


def _quarter_start(day: date) -> date:
    return date(day.year, (day.month - 1) // 3 * 3 + 1, 1)


def _span(first: date, after_last: date) -> tuple[date, date]:
    return first, after_last - timedelta(days=1)


def _days(today: date, n: int) -> tuple[date, date]:
    return today + timedelta(days=n), today + timedelta(days=n)


def _weeks(today: date, first: int, count: int) -> tuple[date, date]:
    start = _week_start(today) + timedelta(weeks=first)
    return _span(start, start + timedelta(weeks=count))


def _months(today: date, first: int, count: int) -> tuple[date, date]:
    start = _add_months(today.replace(day=1), first)
    return _span(start, _add_months(start, count))


def _quarters(today: date, first: int, count: int) -> tuple[date, date]:
    start = _add_months(_quarter_start(today), 3 * first)
    return _span(start, _add_months(start, 3 * count))


def _years(today: date, first: int, count: int) -> tuple[date, date]:
    return _span(date(today.year + first, 1, 1), date(today.year + first + count, 1, 1))


_FIXED_LITERALS: Final[dict[str, Callable[[date], tuple[date, date]]]] = {
    "YESTERDAY": lambda t: _days(t, -1),
    "TODAY": lambda t: _days(t, 0),
    "TOMORROW": lambda t: _days(t, 1),
    "LAST_WEEK": lambda t: _weeks(t, -1, 1),
    "THIS_WEEK": lambda t: _weeks(t, 0, 1),
    "NEXT_WEEK": lambda t: _weeks(t, 1, 1),
    "LAST_MONTH": lambda t: _months(t, -1, 1),
    "THIS_MONTH": lambda t: _months(t, 0, 1),
    "NEXT_MONTH": lambda t: _months(t, 1, 1),
    "LAST_90_DAYS": lambda t: (t - timedelta(days=90), t),
    "NEXT_90_DAYS": lambda t: (t + timedelta(days=1), t + timedelta(days=90)),
    "LAST_QUARTER": lambda t: _quarters(t, -1, 1),
    "THIS_QUARTER": lambda t: _quarters(t, 0, 1),
    "NEXT_QUARTER": lambda t: _quarters(t, 1, 1),
    "LAST_YEAR": lambda t: _years(t, -1, 1),
    "THIS_YEAR": lambda t: _years(t, 0, 1),
    "NEXT_YEAR": lambda t: _years(t, 1, 1),
    "LAST_FISCAL_QUARTER": lambda t: _quarters(t, -1, 1),
    "THIS_FISCAL_QUARTER": lambda t: _quarters(t, 0, 1),
    "NEXT_FISCAL_QUARTER": lambda t: _quarters(t, 1, 1),
    "LAST_FISCAL_YEAR": lambda t: _years(t, -1, 1),
    "THIS_FISCAL_YEAR": lambda t: _years(t, 0, 1),
    "NEXT_FISCAL_YEAR": lambda t: _years(t, 1, 1),
}
# LAST_N_DAYS:n includes today and the n days before it; NEXT_N_DAYS:n starts tomorrow. The
# week/month/quarter/year forms cover whole units and exclude the current one.
_N_LITERALS: Final[dict[str, Callable[[date, int], tuple[date, date]]]] = {
    "LAST_N_DAYS": lambda t, n: (t - timedelta(days=n), t),
    "NEXT_N_DAYS": lambda t, n: (t + timedelta(days=1), t + timedelta(days=n)),
    "N_DAYS_AGO": lambda t, n: _days(t, -n),
    "LAST_N_WEEKS": lambda t, n: _weeks(t, -n, n),
    "NEXT_N_WEEKS": lambda t, n: _weeks(t, 1, n),
    "N_WEEKS_AGO": lambda t, n: _weeks(t, -n, 1),
    "LAST_N_MONTHS": lambda t, n: _months(t, -n, n),
    "NEXT_N_MONTHS": lambda t, n: _months(t, 1, n),
    "N_MONTHS_AGO": lambda t, n: _months(t, -n, 1),
    "LAST_N_QUARTERS": lambda t, n: _quarters(t, -n, n),
    "NEXT_N_QUARTERS": lambda t, n: _quarters(t, 1, n),
    "N_QUARTERS_AGO": lambda t, n: _quarters(t, -n, 1),
    "LAST_N_YEARS": lambda t, n: _years(t, -n, n),
    "NEXT_N_YEARS": lambda t, n: _years(t, 1, n),
    "N_YEARS_AGO": lambda t, n: _years(t, -n, 1),
    "LAST_N_FISCAL_QUARTERS": lambda t, n: _quarters(t, -n, n),
    "NEXT_N_FISCAL_QUARTERS": lambda t, n: _quarters(t, 1, n),
    "N_FISCAL_QUARTERS_AGO": lambda t, n: _quarters(t, -n, 1),
    "LAST_N_FISCAL_YEARS": lambda t, n: _years(t, -n, n),
    "NEXT_N_FISCAL_YEARS": lambda t, n: _years(t, 1, n),
    "N_FISCAL_YEARS_AGO": lambda t, n: _years(t, -n, 1),
}


@dataclass(frozen=True, slots=True)
class _DateRange:
    first: date
    last: date

    @property
    def start(self) -> str:
        return self.first.isoformat() + _DAY_START

    @property
    def end(self) -> str:
        return self.last.isoformat() + _DAY_END


# --- the parser ---

_COMPARISONS: Final[dict[str, Operator]] = {
    "=": "=",
    "!=": "!=",
    "<>": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}
_CLAUSE_KEYWORDS: Final = frozenset(
    {"SELECT", "FROM", "WHERE", "ORDER", "BY", "LIMIT", "OFFSET", "AND", "OR", "NOT", "GROUP"}
)
_UNSUPPORTED_CLAUSES: Final = {
    "WITH": "WITH clauses",
    "GROUP": "GROUP BY",
    "HAVING": "HAVING",
    "FOR": "FOR VIEW/REFERENCE/UPDATE",
    "UPDATE": "UPDATE TRACKING/VIEWSTAT",
    "USING": "USING SCOPE",
}


MAX_NESTING: Final = 100
"""How deep NOT and parentheses may nest in a condition (the reader recurses once a level)."""
MAX_INTEGER: Final = 2**63 - 1
MAX_OFFSET: Final = 2000
"""Salesforce's largest OFFSET (beyond it: NUMBER_OUTSIDE_VALID_RANGE)."""


def _in_range(number: str) -> bool:
    """Whether a number's whole part is at most `MAX_INTEGER` (checked on the digits first, as
    Python refuses to convert over 4,300 of them)."""
    whole = number.lstrip("+-").partition(".")[0].lstrip("0")
    return len(whole) <= len(str(MAX_INTEGER)) and int(whole or "0") <= MAX_INTEGER


class Parser:
    """A recursive-descent reader over SOQL tokens; `sosl` reuses its WHERE and ORDER BY parts."""

    def __init__(self, text: str, tokens: list[Token], *, now: datetime | None = None) -> None:
        self.text = text
        self.tokens = tokens
        self.index = 0
        self.depth = 0  # NOT and parentheses around the condition being read
        moment = now or datetime.now(UTC)
        self.today = (moment.astimezone(UTC) if moment.tzinfo else moment).date()

    # token helpers

    @property
    def token(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        if token.kind != "end":
            self.index += 1
        return token

    def error(self, detail: str, token: Token | None = None) -> QuerySyntaxError:
        token = token or self.token
        return _error(self.text, token.position, detail, token.text or None)

    def unexpected(self) -> QuerySyntaxError:
        token = self.token
        if token.kind == "end":
            return self.error("unexpected end of query")
        shown = f"'{token.text}'" if token.kind == "string" else token.text
        return self.error(f"unexpected token: {shown}")

    def keyword(self, *words: str) -> Token:
        if not self.token.is_keyword(*words):
            raise self.unexpected()
        return self.advance()

    def punct(self, char: str) -> Token:
        if self.token.kind != "punct" or self.token.text != char:
            raise self.unexpected()
        return self.advance()

    def at_punct(self, char: str) -> bool:
        return self.token.kind == "punct" and self.token.text == char

    def identifier(self, what: str) -> str:
        token = self.token
        if token.kind != "ident" or token.text.upper() in _CLAUSE_KEYWORDS:
            raise self.error(f"expected {what}, found {token.text or 'end of query'}")
        self.advance()
        return token.text

    def integer(self, what: str) -> int:
        token = self.token
        if token.kind != "number" or not token.text.isdigit():
            raise self.error(
                f"{what} needs a non-negative integer, found {token.text or 'nothing'}"
            )
        if not _in_range(token.text):
            raise self.error(f"{what} is out of range: at most {MAX_INTEGER}")
        self.advance()
        return int(token.text)

    def expect_end(self) -> None:
        if self.token.kind != "end":
            word = self.token.text.upper()
            if self.token.kind == "ident" and word in _UNSUPPORTED_CLAUSES:
                raise self.error(f"{_UNSUPPORTED_CLAUSES[word]} is not supported by the mock")
            raise self.unexpected()

    # statement

    def select_statement(self) -> SoqlQuery:
        self.keyword("SELECT")
        select = self.select_list()
        self.keyword("FROM")
        # Any identifier: standard objects include Group and Order, which are keywords elsewhere.
        token = self.token
        if token.kind != "ident" or "." in token.text:
            raise self.error(f"expected an object name after FROM, found {token.text or 'nothing'}")
        object_name = self.advance().text
        where = self.where_clause()
        order_by = self.order_by_clause()
        limit, offset = self.limit_offset()
        return SoqlQuery(object_name, select, where, order_by, limit, offset)

    def select_list(self) -> tuple[SelectItem, ...]:
        items = [self.select_item()]
        while self.at_punct(","):
            self.advance()
            items.append(self.select_item())
        counts = [item for item in items if isinstance(item, Count) and item.field is None]
        if counts and len(items) > 1:
            raise self.error("COUNT() must be the only item in the SELECT list", self.tokens[0])
        return tuple(items)

    def select_item(self) -> SelectItem:
        token = self.token
        if self.at_punct("("):
            raise self.error("relationship subqueries in SELECT are not supported by the mock")
        if token.is_keyword("TYPEOF"):
            raise self.error("TYPEOF is not supported by the mock")
        path = self.identifier("a field name")
        if not self.at_punct("("):
            return FieldRef(path)
        function = path.upper()
        self.advance()
        if function == "COUNT":
            field = None if self.at_punct(")") else self.identifier("a field name in COUNT()")
            self.punct(")")
            alias = None
            if self.token.kind == "ident" and self.token.text.upper() not in _CLAUSE_KEYWORDS:
                alias = self.advance().text
            return Count(field, alias)
        if function == "FIELDS":
            kind = self.keyword("ALL", "STANDARD", "CUSTOM").text.upper()
            self.punct(")")
            return FieldsMacro(cast(Literal["ALL", "STANDARD", "CUSTOM"], kind))
        raise self.error(f"function {path}() is not supported by the mock", token)

    def where_clause(self) -> Filter | None:
        if not self.token.is_keyword("WHERE"):
            return None
        self.advance()
        return self.condition_expression()

    def order_by_clause(self) -> tuple[SortKey, ...]:
        if not self.token.is_keyword("ORDER"):
            return ()
        self.advance()
        self.keyword("BY")
        keys = [self.sort_key()]
        while self.at_punct(","):
            self.advance()
            keys.append(self.sort_key())
        return tuple(keys)

    def sort_key(self) -> SortKey:
        field = self.identifier("a field name in ORDER BY")
        descending = False
        if self.token.is_keyword("ASC", "DESC"):
            descending = self.advance().text.upper() == "DESC"
        nulls_first = None
        if self.token.is_keyword("NULLS"):
            self.advance()
            nulls_first = self.keyword("FIRST", "LAST").text.upper() == "FIRST"
        return SortKey(field, descending, nulls_first)

    def limit_offset(self) -> tuple[int | None, int]:
        limit = None
        offset = 0
        if self.token.is_keyword("LIMIT"):
            self.advance()
            limit = self.integer("LIMIT")
        if self.token.is_keyword("OFFSET"):
            self.advance()
            token = self.token
            offset = self.integer("OFFSET")
            if offset > MAX_OFFSET:
                raise self.error(f"the maximum OFFSET is {MAX_OFFSET}", token)
        return limit, offset

    # conditions

    def condition_expression(self) -> Filter:
        first = self.unary()
        if not self.token.is_keyword("AND", "OR"):
            return first
        connective = self.token.text.upper()
        parts = [first]
        while self.token.is_keyword("AND", "OR"):
            if self.token.text.upper() != connective:
                raise self.error(
                    f"unexpected token: {self.token.text} (use parentheses to combine AND and OR)"
                )
            self.advance()
            parts.append(self.unary())
        return And(tuple(parts)) if connective == "AND" else Or(tuple(parts))

    def unary(self) -> Filter:
        if not (self.token.is_keyword("NOT") or self.at_punct("(")):
            return self.comparison()
        if self.depth == MAX_NESTING:
            raise self.error(f"conditions nest more than {MAX_NESTING} deep")
        self.depth += 1
        if self.advance().text == "(":
            inner = self.condition_expression()
            self.punct(")")
        else:
            inner = Not(self.unary())
        self.depth -= 1
        return inner

    def comparison(self) -> Filter:
        field_token = self.token
        field = self.identifier("a field name")
        token = self.token
        if token.kind == "op":
            self.advance()
            return self.compare(field, _COMPARISONS[token.text])
        if token.is_keyword("LIKE"):
            self.advance()
            value = self.token
            if value.kind != "string":
                raise self.error("LIKE needs a string literal")
            self.advance()
            return Condition(field, "pattern", _like_escape(value.text))
        if token.is_keyword("IN"):
            self.advance()
            return Condition(field, "in", self.value_list())
        if token.is_keyword("NOT"):
            self.advance()
            self.keyword("IN")
            return Condition(field, "not_in", self.value_list())
        if token.is_keyword("INCLUDES", "EXCLUDES"):
            self.advance()
            included = _includes(field, self.string_list(token.text.upper()))
            return included if token.is_keyword("INCLUDES") else Not(included)
        if token.kind == "end":
            raise self.error(f"expected an operator after {field}", field_token)
        raise self.unexpected()

    def compare(self, field: str, op: Operator) -> Filter:
        token = self.token
        value = self.literal()
        if isinstance(value, _DateRange):
            return _range_condition(field, op, value)
        if value is None:
            if op == "=":
                return Condition(field, "is_empty")
            if op == "!=":
                return Condition(field, "is_not_empty")
            raise self.error(f"null can only be compared with = or !=, not {op}", token)
        return Condition(field, op, value)

    def value_list(self) -> tuple[Any, ...]:
        self.punct("(")
        if self.token.is_keyword("SELECT"):
            raise self.error("semi-join subqueries are not supported by the mock")
        values = [self.list_literal()]
        while self.at_punct(","):
            self.advance()
            values.append(self.list_literal())
        self.punct(")")
        return tuple(values)

    def string_list(self, operator: str) -> tuple[str, ...]:
        self.punct("(")
        values = []
        while True:
            token = self.token
            if token.kind != "string":
                raise self.error(f"{operator} takes a list of string literals")
            values.append(_unescape(self.advance().text))
            if not self.at_punct(","):
                break
            self.advance()
        self.punct(")")
        return tuple(values)

    def list_literal(self) -> Any:
        token = self.token
        value = self.literal()
        if isinstance(value, _DateRange):
            raise self.error("relative date literals are not allowed in an IN list", token)
        return value

    def literal(self) -> Any:
        token = self.token
        if token.kind == "end":
            raise self.error("unexpected end of query")
        if token.kind == "punct" and token.text == ":":
            raise self.error("bind variables are not supported by the mock")
        word = token.text.upper() if token.kind == "ident" else ""
        if token.kind not in ("string", "number", "date", "datetime") and not (
            word in ("TRUE", "FALSE", "NULL") or word in _FIXED_LITERALS or word in _N_LITERALS
        ):
            raise self.error(f"expected a value, found {token.text}")
        self.advance()
        if token.kind == "string":
            return _unescape(token.text)
        if token.kind == "number":
            return self._number(token)
        if token.kind == "date":
            return self._checked(token, lambda: date.fromisoformat(token.text).isoformat())
        if token.kind == "datetime":
            return self._checked(token, lambda: datetime.fromisoformat(token.text).isoformat())
        if word in ("TRUE", "FALSE"):
            return word == "TRUE"
        if word == "NULL":
            return None
        if word in _FIXED_LITERALS:
            return _DateRange(*_FIXED_LITERALS[word](self.today))
        self.punct(":")
        count = self.integer(word)
        try:
            return _DateRange(*_N_LITERALS[word](self.today, count))
        except (OverflowError, ValueError):  # a range outside years 1-9999
            raise self.error(f"{word}:{count} is out of range", token) from None

    def _number(self, token: Token) -> int | float:
        """A number literal whose whole part fits a 64-bit integer (as stores hold them)."""
        if not _in_range(token.text):
            raise self.error(f"number {token.text[:24]} is out of range", token)
        return float(token.text) if "." in token.text else int(token.text)

    def _checked(self, token: Token, convert: Callable[[], str]) -> str:
        try:
            return convert()
        except ValueError:
            raise self.error(f"invalid date or datetime {token.text}", token) from None


def _includes(field: str, values: tuple[str, ...]) -> Filter:
    """INCLUDES on a multi-select picklist, stored as `a;b;c`: any value given (and `a;b` in one
    value means both) is one of the selected items, matched exactly by four LIKE shapes."""
    alternatives: list[Filter] = []
    for value in values:
        items = [item.strip() for item in value.split(";")]
        checks = [_selects(field, item) for item in items]
        alternatives.append(checks[0] if len(checks) == 1 else And(tuple(checks)))
    return alternatives[0] if len(alternatives) == 1 else Or(tuple(alternatives))


def _selects(field: str, item: str) -> Filter:
    escaped = re.sub(r"([%_\\])", r"\\\1", item)
    return Or(
        (
            Condition(field, "pattern", escaped),
            Condition(field, "pattern", f"{escaped};%"),
            Condition(field, "pattern", f"%;{escaped}"),
            Condition(field, "pattern", f"%;{escaped};%"),
        )
    )


def _range_condition(field: str, op: Operator, span: _DateRange) -> Filter:
    if op == "=":
        return Condition(field, "between", (span.start, span.end))
    if op == "!=":
        return Or((Condition(field, "<", span.start), Condition(field, ">", span.end)))
    if op in ("<", ">="):
        return Condition(field, op, span.start)
    return Condition(field, op, span.end)


def _statement(text: str, now: datetime) -> Statement:
    soql = parse_soql(text, now=now)
    return Statement(soql.object_name, soql.to_query(), count_only=soql.is_count)


SOQL: Final = Dialect(
    name=DIALECT,
    title="SOQL",
    syntax=(
        "SOQL: SELECT fields FROM Object [WHERE ...] [ORDER BY ...] [LIMIT n] [OFFSET n]. "
        "Example: SELECT Id, Name FROM Account WHERE Industry = 'Retail' LIMIT 10"
    ),
    parse_statement=_statement,
    error_message=malformed_query_message,
    error_code="MALFORMED_QUERY",
)
"""Salesforce's `/query?q=`: a statement naming its object, refused as MALFORMED_QUERY."""
