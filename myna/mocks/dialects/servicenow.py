"""ServiceNow encoded queries (`sysparm_query`) parsed into the filter AST.

An encoded query is a list of terms joined by `^`. A term is a condition `<field><OPERATOR><value>`
(`active=true`, `short_descriptionLIKEdisk`, `stateIN1,2`, `closed_atISEMPTY`), an `OR`-prefixed
condition that is OR-ed with the condition just before it, an `NQ` prefix that starts a new
AND-group OR-ed with the groups before it, or a sort term (`ORDERBYnumber`, `ORDERBYDESCsys_id`).
`^OR` binds tighter than `^`, and `^` tighter than `^NQ`, as ServiceNow documents:
`a^b^ORc^NQd` is `(a AND (b OR c)) OR d`.

Field names are lowercase with underscores and may be dot-walked (`assigned_to.name`); operators
are uppercase, so the first operator found after the field name ends it, and everything after the
operator is the value, `=` and all (`short_description=a=b`). Values stay strings, as the Table API
sends them; the store coerces them against the field's type.

Real ServiceNow silently ignores a term it cannot read and returns every row, which hides mistakes;
the mock instead refuses it with a `QuerySyntaxError` naming the term and its offset. The same goes
for operators the mock does not evaluate (`DYNAMIC`, `SAMEAS`, `RLQUERY`...) and for `javascript:`
values other than `gs.dateGenerate(date, time)`, which is a pure function of its arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from myna.mocks.dialects import Dialect, QuerySyntaxError
from myna.mocks.query import And, Condition, Filter, Operator, Or, SortKey

DIALECT: Final = "servicenow"

# Operator spelling -> AST operator. Several spellings are documented aliases of one operator.
_OPERATORS: Final[dict[str, Operator]] = {
    "=": "=",
    "!=": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
    "IN": "in",
    "NOT IN": "not_in",
    "LIKE": "like",
    "CONTAINS": "like",
    "NOT LIKE": "not_like",
    "NOTLIKE": "not_like",
    "DOES NOT CONTAIN": "not_like",
    "STARTSWITH": "starts_with",
    "ENDSWITH": "ends_with",
    "ISEMPTY": "is_empty",
    "ISNOTEMPTY": "is_not_empty",
    "BETWEEN": "between",
}
# Operators with no value after them; EMPTYSTRING and ANYTHING are rewritten into AST nodes.
_NULLARY: Final = frozenset({"ISEMPTY", "ISNOTEMPTY", "EMPTYSTRING", "ANYTHING"})
# Real ServiceNow operators the mock recognises but does not evaluate: they need the current user,
# other fields of the same record, change history or hierarchy data the filter AST cannot express.
_UNSUPPORTED: Final = frozenset(
    {
        "DYNAMIC",
        "SAMEAS",
        "NSAMEAS",
        "INSTANCEOF",
        "IN_HIERARCHY",
        "IN_HIERARCHY_DYNAMIC",
        "ON",
        "NOTON",
        "DATEPART",
        "RELATIVEGT",
        "RELATIVELT",
        "RELATIVEGE",
        "RELATIVELE",
        "RELATIVEEE",
        "MORETHAN",
        "LESSTHAN",
        "GT_FIELD",
        "LT_FIELD",
        "GT_OR_EQUALS_FIELD",
        "LT_OR_EQUALS_FIELD",
        "VALCHANGES",
        "CHANGESFROM",
        "CHANGESTO",
    }
)
# Whole-term constructs (related-list and join subqueries, text search, grouping) the mock refuses.
_UNSUPPORTED_TERMS: Final = (
    "RLQUERY",
    "ENDRLQUERY",
    "JOIN",
    "SUBQUERY",
    "GROUPBY",
    "123TEXTQUERY321",
)

# Longest spelling first: the regex alternation takes the first alternative that matches, so
# `NOT IN` must be tried before `IN`, `<=` before `<`, `INSTANCEOF` before `IN`.
_ALL_SPELLINGS: Final = sorted({*_OPERATORS, *_NULLARY, *_UNSUPPORTED}, key=len, reverse=True)
# The field is matched lazily, so the operator that starts earliest ends the field name.
_CONDITION: Final = re.compile(
    r"(?P<field>[A-Za-z_][A-Za-z0-9_.]*?)(?P<op>"
    + "|".join(re.escape(spelling) for spelling in _ALL_SPELLINGS)
    + r")(?P<value>.*)",
    re.DOTALL,
)
_FIELD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_DATE_GENERATE: Final = re.compile(
    r"javascript:gs\.dateGenerate\(\s*(?P<q>['\"])(?P<date>[^'\"]*)(?P=q)"
    r"\s*,\s*(?P<r>['\"])(?P<time>[^'\"]*)(?P=r)\s*\)"
)
_JAVASCRIPT: Final = "javascript:"


@dataclass(frozen=True, slots=True)
class _Term:
    text: str
    position: int


def parse_encoded_query(text: str) -> tuple[Filter | None, tuple[SortKey, ...]]:
    """Parse a `sysparm_query` value into a filter (None when it has no conditions) and sort keys.

    Raises `QuerySyntaxError` for a term that is not a condition the mock can evaluate.
    """
    groups: list[list[list[Filter]]] = [[]]
    order_by: list[SortKey] = []
    for term in _split_terms(text):
        body, position = term.text, term.position
        if body.startswith("NQ"):
            groups.append([])
            body, position = body[2:], position + 2
            if not body:
                continue
        if body == "EQ":
            # The list UI appends `^EQ` to mark the end of the conditions; it carries no meaning.
            continue
        if body.startswith("ORDERBYDESC"):
            order_by.append(SortKey(_sort_field(text, body[11:], position + 11), descending=True))
            continue
        if body.startswith("ORDERBY"):
            order_by.append(SortKey(_sort_field(text, body[7:], position + 7)))
            continue
        for construct in _UNSUPPORTED_TERMS:
            if body.startswith(construct):
                raise QuerySyntaxError(
                    f"{construct} queries are not supported by the mock in term {body!r}",
                    dialect=DIALECT,
                    query=text,
                    position=position,
                    term=body,
                )
        group = groups[-1]
        if body.startswith("OR") and group:
            group[-1].append(_condition(text, body[2:], position + 2))
        elif body.startswith("OR"):
            # An OR with nothing before it in its group can only mean a plain condition.
            group.append([_condition(text, body[2:], position + 2)])
        else:
            group.append([_condition(text, body, position)])
    return _assemble(groups), tuple(order_by)


def _split_terms(text: str) -> list[_Term]:
    terms: list[_Term] = []
    start = 0
    for piece in text.split("^"):
        if piece:
            terms.append(_Term(piece, start))
        start += len(piece) + 1
    return terms


def _assemble(groups: list[list[list[Filter]]]) -> Filter | None:
    conjunctions: list[Filter] = []
    for group in groups:
        items = [
            alternatives[0] if len(alternatives) == 1 else Or(tuple(alternatives))
            for alternatives in group
        ]
        if items:
            conjunctions.append(items[0] if len(items) == 1 else And(tuple(items)))
    if not conjunctions:
        return None
    return conjunctions[0] if len(conjunctions) == 1 else Or(tuple(conjunctions))


def _sort_field(query: str, field: str, position: int) -> str:
    if not _FIELD.fullmatch(field):
        raise QuerySyntaxError(
            f"ORDERBY needs a field name, got {field!r}",
            dialect=DIALECT,
            query=query,
            position=position,
            term=field,
        )
    return field


def _condition(query: str, term: str, position: int) -> Filter:
    match = _CONDITION.fullmatch(term)
    if match is None:
        raise QuerySyntaxError(
            f"no field and operator in term {term!r}: expected <field><OPERATOR><value>, "
            f"e.g. active=true or short_descriptionLIKEdisk",
            dialect=DIALECT,
            query=query,
            position=position,
            term=term,
        )
    field, spelling, value = match["field"], match["op"], match["value"]
    op_position = position + match.start("op")
    value_position = position + match.start("value")
    if not _FIELD.fullmatch(field):
        raise QuerySyntaxError(
            f"bad field name {field!r} in term {term!r}",
            dialect=DIALECT,
            query=query,
            position=position,
            term=term,
        )
    if spelling in _UNSUPPORTED:
        raise QuerySyntaxError(
            f"operator {spelling} is not supported by the mock in term {term!r}",
            dialect=DIALECT,
            query=query,
            position=op_position,
            term=term,
        )
    if spelling in _NULLARY:
        if value:
            raise QuerySyntaxError(
                f"operator {spelling} takes no value, got {value!r} in term {term!r}",
                dialect=DIALECT,
                query=query,
                position=value_position,
                term=term,
            )
        if spelling == "EMPTYSTRING":
            return Condition(field, "=", "")
        if spelling == "ANYTHING":
            return Or((Condition(field, "is_empty"), Condition(field, "is_not_empty")))
        return Condition(field, _OPERATORS[spelling])
    op = _OPERATORS[spelling]
    if op in ("in", "not_in"):
        items = value.split(",") if value else []
        return Condition(field, op, tuple(items))
    if op == "between":
        bounds = value.split("@")
        if len(bounds) != 2:
            raise QuerySyntaxError(
                f"BETWEEN needs two values joined by '@' (low@high), got {value!r} "
                f"in term {term!r}",
                dialect=DIALECT,
                query=query,
                position=value_position,
                term=term,
            )
        low = _scalar(query, bounds[0], value_position, term)
        high = _scalar(query, bounds[1], value_position + len(bounds[0]) + 1, term)
        return Condition(field, op, (low, high))
    return Condition(field, op, _scalar(query, value, value_position, term))


def _scalar(query: str, value: str, position: int, term: str) -> str:
    """A literal value, with `javascript:gs.dateGenerate(date, time)` evaluated to a timestamp."""
    if not value.startswith(_JAVASCRIPT):
        return value
    match = _DATE_GENERATE.fullmatch(value)
    if match is None:
        raise QuerySyntaxError(
            f"javascript: values other than gs.dateGenerate('YYYY-MM-DD','HH:MM:SS') are not "
            f"supported by the mock, got {value!r} in term {term!r}",
            dialect=DIALECT,
            query=query,
            position=position,
            term=term,
        )
    # gs.dateGenerate also accepts 'start' and 'end' for the first and last second of the day.
    time = {"start": "00:00:00", "end": "23:59:59"}.get(match["time"], match["time"])
    stamp = f"{match['date']} {time}"
    try:
        datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise QuerySyntaxError(
            f"gs.dateGenerate needs 'YYYY-MM-DD' and 'HH:MM:SS' (or 'start'/'end'), "
            f"got {match['date']!r}, {match['time']!r} in term {term!r}",
            dialect=DIALECT,
            query=query,
            position=position,
            term=term,
        ) from None
    return stamp


def _parse(text: str) -> tuple[Filter | None, tuple[SortKey, ...]]:
    return parse_encoded_query(text)


ENCODED_QUERY: Final = Dialect(
    name=DIALECT,
    title="ServiceNow encoded",
    syntax=(
        "ServiceNow encoded query: conditions field<OP>value joined by ^ (AND), ^OR, ^NQ; "
        "operators = != < <= > >= IN NOT IN LIKE NOT LIKE STARTSWITH ENDSWITH ISEMPTY "
        "ISNOTEMPTY BETWEEN; sort with ORDERBYfield or ORDERBYDESCfield. "
        "Example: active=true^priority<=2^ORDERBYDESCsys_updated_on"
    ),
    filter_parameter="sysparm_query",
    parse_filter=_parse,
    sort_parameters=("sysparm_order_by",),
    fields_parameters=("sysparm_fields",),
)
"""The Table API's list protocol: `sysparm_query` filters and sorts, `sysparm_fields` projects."""
