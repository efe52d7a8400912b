"""A small filter language every query dialect compiles to and every store evaluates.

ServiceNow encoded queries, SOQL WHERE clauses and plain `?field=value` filters all parse into
these nodes, so the store needs one evaluator. Field names may be dot-walked through references
(`assigned_to.name`); the store resolves them.

Condition values are JSON scalars (str, int, float, bool), or tuples of them for `in`, `not_in`
and `between`; the dialects write dates and timestamps as ISO 8601 strings (SOQL date literals
such as TODAY become `between` bounds `YYYY-MM-DDT00:00:00` .. `YYYY-MM-DDT23:59:59.999999`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Operator = Literal[
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "in",
    "not_in",
    "like",  # substring, case-insensitive (ServiceNow LIKE)
    "not_like",
    "pattern",  # SQL LIKE pattern with % and _ (SOQL LIKE); a backslash escapes the next character
    "starts_with",
    "ends_with",
    "is_empty",
    "is_not_empty",
    "between",  # value is a (low, high) pair, inclusive
]


@dataclass(frozen=True, slots=True)
class Condition:
    field: str
    op: Operator
    value: Any = None


@dataclass(frozen=True, slots=True)
class And:
    parts: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Or:
    parts: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Not:
    part: Filter


Filter: TypeAlias = Condition | And | Or | Not


@dataclass(frozen=True, slots=True)
class SortKey:
    field: str
    descending: bool = False
    # SOQL's NULLS FIRST / NULLS LAST; None leaves the store's default for the direction.
    nulls_first: bool | None = None


@dataclass(frozen=True, slots=True)
class Query:
    """What a list call asks the store for."""

    where: Filter | None = None
    order_by: tuple[SortKey, ...] = ()
    limit: int | None = None
    offset: int = 0
    fields: tuple[str, ...] | None = field(default=None)
