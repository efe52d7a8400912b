"""Query languages the mock understands, each a pure parser into the filter AST in `query`.

A `Dialect` is one language as the runtime meets it: the list parameter that carries a filter in
it (ServiceNow's `sysparm_query`), or a statement that names its own resource (SOQL's `FROM`, for
a model's `query` operations), the service's words and code for a query it cannot read, and how
tools describe it to an agent. A model names its language (`Conventions.query_language`) and the
runtime looks it up in `DIALECTS`, so the runtime names no vendor.

`servicenow` reads `sysparm_query` encoded queries, `soql` reads Salesforce SOQL (and `sosl`, a
small SOSL the CRM back end's search serves). Every parser raises `QuerySyntaxError` and nothing
else on bad input, so the HTTP layer can answer in the service's own error shape (ServiceNow's
400, Salesforce's MALFORMED_QUERY). The built-in dialects are declared as entry points (group
`myna.dialects`, see `myna.mocks.plugins`); `register_dialect` adds one in code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from myna.errors import MockError
from myna.mocks.plugins import PluginRegistry
from myna.mocks.query import Filter, Query, SortKey

__all__ = [
    "DIALECTS",
    "Dialect",
    "FilterParser",
    "QuerySyntaxError",
    "Statement",
    "StatementParser",
    "register_dialect",
]


class QuerySyntaxError(MockError):
    """A query text the mock cannot read: names the dialect, the offending term and its offset.

    `position` is a 0-based character offset into `query`; `line` and `column` are 1-based, the
    way Salesforce reports `ERROR at Row:1:Column:8`. `detail` is the message without context.
    """

    kind = "query_syntax"

    def __init__(
        self, detail: str, *, dialect: str, query: str, position: int, term: str | None = None
    ) -> None:
        self.detail = detail
        self.dialect = dialect
        self.query = query
        self.position = position
        self.term = term
        self.line = query.count("\n", 0, position) + 1
        self.column = position - (query.rfind("\n", 0, position) + 1) + 1
        super().__init__(detail, dialect=dialect, position=position, term=term)


@dataclass(frozen=True, slots=True)
class Statement:
    """A query that names the resource it reads (SOQL's `FROM`). `count_only`: the answer is the
    number of matching records, with none of them (`SELECT COUNT() ...`)."""

    resource: str
    query: Query
    count_only: bool = False


FilterParser = Callable[[str], tuple[Filter | None, tuple[SortKey, ...]]]
"""A list parameter's text -> its filter (None: no conditions) and sort keys."""
StatementParser = Callable[[str, datetime], Statement]
"""A statement's text and the current time (for relative dates) -> the statement."""


def _detail(error: QuerySyntaxError) -> str:
    return error.message


@dataclass(frozen=True, slots=True)
class Dialect:
    """One query language: `name` is what `Conventions.query_language` says.

    `filter_parameter` names the list parameter carrying a filter in this language, read by
    `parse_filter`; `parse_statement` reads a query operation's statement. A dialect with neither
    is one the mock can describe to agents but not evaluate: `title` names it before the word
    "query" ("a SOQL query"), `syntax` summarises it. `sort_parameters`
    and `fields_parameters` are the list parameters the service sorts and projects with besides
    the common `sort` and `fields`. A query the parser refuses is answered with `error_message`
    and `error_code`, in the service's words.
    """

    name: str
    title: str
    syntax: str
    filter_parameter: str | None = None
    parse_filter: FilterParser | None = None
    parse_statement: StatementParser | None = None
    sort_parameters: tuple[str, ...] = ()
    fields_parameters: tuple[str, ...] = ()
    error_message: Callable[[QuerySyntaxError], str] = _detail
    error_code: str | None = None


DIALECTS: PluginRegistry[Dialect] = PluginRegistry("query dialect", "myna.dialects", Dialect)
"""Every query language, by name (declared as entry points, or registered in code)."""


def register_dialect(dialect: Dialect) -> None:
    """Add a query language; a second one with the same name is a mistake and raises."""
    DIALECTS.register(dialect.name, dialect)
