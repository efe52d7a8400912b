"""A small SOSL (Salesforce's `/search?q=`), parsed into a `SoslQuery`, and its term matcher.

`FIND {term} [IN ALL|NAME|EMAIL|PHONE FIELDS] [RETURNING Object[(field, ... [WHERE ...]
[ORDER BY ...] [LIMIT n] [OFFSET n])], ...] [LIMIT n]`. The WHERE, ORDER BY and LIMIT inside a
RETURNING item are SOQL and parse with the SOQL parser. The term is words and "quoted phrases"
joined by whitespace or `AND` (all must match), `OR` (either side) and `AND NOT`, with `*` (any
run of characters) and `?` (one character) wildcards; a backslash escapes a reserved character.
`match_term` compiles it into a predicate over text, so every store searches the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal, cast

from myna.mocks.dialects import QuerySyntaxError
from myna.mocks.dialects.soql import Parser, tokenize
from myna.mocks.query import Filter, SortKey

DIALECT: Final = "sosl"
SearchScope = Literal["ALL", "NAME", "EMAIL", "PHONE", "SIDEBAR"]


@dataclass(frozen=True, slots=True)
class SoslReturning:
    """One object of the RETURNING clause and what to fetch of it."""

    object_name: str
    fields: tuple[str, ...] = ()
    where: Filter | None = None
    order_by: tuple[SortKey, ...] = ()
    limit: int | None = None
    offset: int = 0


@dataclass(frozen=True, slots=True)
class SoslQuery:
    term: str  # with escapes decoded
    scope: SearchScope = "ALL"
    returning: tuple[SoslReturning, ...] = ()  # empty: every searchable object
    limit: int | None = None


_RESERVED: Final = set("?&|!{}[]()^~*:\\\"'+-")


def parse_sosl(text: str, *, now: datetime | None = None) -> SoslQuery:
    """Parse a SOSL search. `now` anchors relative date literals in RETURNING ... WHERE."""
    match = re.match(r"\s*FIND\s*", text, re.IGNORECASE)
    if match is None:
        raise _error(text, len(text) - len(text.lstrip()), "a SOSL search starts with FIND")
    term, after = _term(text, match.end())
    if not term.strip():
        raise _error(text, match.end(), "the search term is empty")
    parser = Parser(text, tokenize(text, after), now=now)
    scope: SearchScope = "ALL"
    if parser.token.is_keyword("IN"):
        parser.advance()
        word = parser.keyword("ALL", "NAME", "EMAIL", "PHONE", "SIDEBAR").text.upper()
        scope = cast(SearchScope, word)
        parser.keyword("FIELDS")
    returning: list[SoslReturning] = []
    if parser.token.is_keyword("RETURNING"):
        parser.advance()
        returning.append(_returning(parser))
        while parser.at_punct(","):
            parser.advance()
            returning.append(_returning(parser))
    limit = None
    if parser.token.is_keyword("LIMIT"):
        parser.advance()
        limit = parser.integer("LIMIT")
    parser.expect_end()
    match_term(term, query=text, position=match.end() + 1)
    return SoslQuery(term, scope, tuple(returning), limit)


def _term(text: str, start: int) -> tuple[str, int]:
    """The search term in `{...}` (REST) or `'...'` (Apex) at `start`, and where it ends."""
    if start >= len(text) or text[start] not in "{'":
        raise _error(text, start, "expected the search term in braces: FIND {term}")
    closing = "}" if text[start] == "{" else "'"
    out: list[str] = []
    position = start + 1
    while position < len(text):
        char = text[position]
        if char == "\\" and position + 1 < len(text):
            # Keep the escape: the term matcher needs to tell a literal * from a wildcard.
            out.append(text[position : position + 2])
            position += 2
            continue
        if char == closing:
            return "".join(out), position + 1
        out.append(char)
        position += 1
    raise _error(text, start, f"the search term is not closed with {closing}")


def _returning(parser: Parser) -> SoslReturning:
    name = parser.identifier("an object name in RETURNING")
    if not parser.at_punct("("):
        return SoslReturning(name)
    parser.advance()
    fields = [parser.identifier("a field name")]
    while parser.at_punct(","):
        parser.advance()
        fields.append(parser.identifier("a field name"))
    where = parser.where_clause()
    order_by = parser.order_by_clause()
    limit, offset = parser.limit_offset()
    parser.punct(")")
    return SoslReturning(name, tuple(fields), where, order_by, limit, offset)


def _error(text: str, position: int, detail: str) -> QuerySyntaxError:
    return QuerySyntaxError(detail, dialect=DIALECT, query=text, position=position)


# --- the search term ---

_TERM_TOKEN: Final = re.compile(r'\s*(?:"(?P<phrase>(?:\\.|[^"\\])*)"|(?P<word>(?:\\.|[^\s"\\])+))')


def match_term(term: str, *, query: str = "", position: int = 0) -> Callable[[str], bool]:
    """A case-insensitive predicate telling whether a text matches a SOSL search term."""
    groups: list[list[tuple[bool, re.Pattern[str]]]] = [[]]
    negate = False
    index = 0
    while index < len(term):
        found = _TERM_TOKEN.match(term, index)
        if found is None:
            if term[index:].strip():
                raise _error(
                    query or term, position + index, "unterminated phrase or escape in search term"
                )
            break
        index = found.end()
        word = found["word"]
        if word in ("OR", "AND", "NOT") and found["phrase"] is None:
            if word == "OR":
                groups.append([])
                negate = False
            elif word == "NOT":
                negate = True
            continue
        raw = " ".join(found["phrase"].split()) if found["phrase"] is not None else word
        bad = next((c for c in _unescaped(raw) if c in "()[]{}&|!^~:+"), None)
        if bad is not None:
            raise _error(
                query or term,
                position + found.start("phrase" if found["phrase"] is not None else "word"),
                f"reserved character {bad!r} in search term; escape it with a backslash",
            )
        groups[-1].append((negate, _term_pattern(raw)))
        negate = False
    alternatives = [group for group in groups if group]
    if not alternatives:
        raise _error(query or term, position, "the search term has no words")

    def matches(text: str) -> bool:
        return any(
            all((pattern.search(text) is None) == negated for negated, pattern in group)
            for group in alternatives
        )

    return matches


def _unescaped(raw: str) -> str:
    """The characters of `raw` that are not escaped by a backslash."""
    return re.sub(r"\\.", "", raw)


def _term_pattern(raw: str) -> re.Pattern[str]:
    parts: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            parts.append(re.escape(raw[index + 1]))
            index += 2
            continue
        if char == "*":
            parts.append(r"\w*")
        elif char == "?":
            parts.append(r"\w")
        elif char.isspace():
            parts.append(r"\s+")
        else:
            parts.append(re.escape(char))
        index += 1
    return re.compile(r"(?<!\w)" + "".join(parts) + r"(?!\w)", re.IGNORECASE)
