"""Evaluate the filter language of `myna.mocks.query` over records held in memory.

Every store answers list calls with this one evaluator, so every query dialect (ServiceNow encoded
queries, SOQL, plain `?field=value`) gets the same semantics:

- Values are compared by what they hold, not how they travel: when both sides parse as numbers
  they compare numerically, when both parse as timestamps chronologically (ServiceNow sends
  `"42"` and `"2024-01-01 10:00:00"` as strings), otherwise as case-insensitive text (ServiceNow
  and Salesforce both compare text case-insensitively).
- A reference value (`{"link": ..., "value": id}` or a bare id) compares by its id; a dot-walked
  field (`assigned_to.name`) follows `FieldSpec.reference` to the target record.
- The negative operators are exact complements of the positive ones (`!=` is `not =`), so a
  missing value satisfies `!=`, `not_in`, `not_like` and `is_not_empty` is false for it.
- Sorting puts numbers before timestamps before text, and missing values last when ascending
  (first when descending), like PostgreSQL's NULLs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from myna.mocks.query import And, Condition, Filter, Or, Query, SortKey
from myna.mocks.store import Record
from myna.schemas.model import ServiceModel

Resolver = Callable[[str, str], Record | None]
"""Looks up one record by (resource, id) in the same state the records come from."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""The value of a field a record does not have (distinct from an explicit null)."""

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}")

# Ranks of the total order used for comparing and sorting mixed values.
_NUMBER_RANK = 0
_TIME_RANK = 1
_TEXT_RANK = 2
_EMPTY_RANK = 3


@dataclass(frozen=True, slots=True)
class Context:
    """What dot-walking needs: the model's references and a way to fetch the target record."""

    model: ServiceModel | None = None
    resource: str | None = None
    resolve: Resolver | None = None


def evaluate(
    records: Iterable[Record], query: Query, context: Context | None = None
) -> tuple[list[Record], int]:
    """The page of `records` that `query` asks for, and the count of matches before paging.

    The returned records are the input objects themselves (projected copies when `query.fields`
    is set); callers that hand them out must copy shared ones.
    """
    context = context or Context()
    where = query.where
    matched = [r for r in records if where is None or matches(r, where, context)]
    total = len(matched)
    if query.order_by:
        matched = sort_records(matched, query.order_by, context)
    end = None if query.limit is None else query.offset + max(query.limit, 0)
    page = matched[query.offset : end]
    if query.fields is not None:
        page = [project(record, query.fields, context) for record in page]
    return page, total


def matches(record: Record, where: Filter, context: Context) -> bool:
    """Whether `record` satisfies the filter."""
    if isinstance(where, Condition):
        return _condition(record, where, context)
    if isinstance(where, And):
        return all(matches(record, part, context) for part in where.parts)
    if isinstance(where, Or):
        return any(matches(record, part, context) for part in where.parts)
    return not matches(record, where.part, context)


def sort_records(
    records: Sequence[Record], order_by: Sequence[SortKey], context: Context
) -> list[Record]:
    """Records ordered by the keys, stable for ties (the input order breaks them)."""
    ordered = list(records)
    # Stable sorts applied from the least to the most significant key give a multi-key order
    # with a direction per key.
    for key in reversed(order_by):
        ordered.sort(key=_sort_key_of(key, context), reverse=key.descending)
    return ordered


def _sort_key_of(
    key: SortKey, context: Context
) -> Callable[[Record], tuple[int, tuple[int, Any, str]]]:
    nulls_first = key.descending if key.nulls_first is None else key.nulls_first
    # Under a reversed sort the largest flag comes first, so the flag that puts empty values
    # first depends on the direction.
    empty_flag = int(nulls_first == key.descending)

    def of(record: Record) -> tuple[int, tuple[int, Any, str]]:
        typed = sort_key(field_value(record, key.field, context))
        return (empty_flag if typed[0] == _EMPTY_RANK else 1 - empty_flag), typed

    return of


def project(record: Record, fields: Sequence[str], context: Context) -> Record:
    """A copy of the record with only `fields`; dot-walked names become keys of their own."""
    projected: Record = {}
    for name in fields:
        value = field_value(record, name, context)
        if value is not MISSING:
            projected[name] = value
    return projected


def field_value(record: Record, path: str, context: Context) -> Any:
    """The value at `path`, following references for dot-walked names; `MISSING` if absent."""
    if path in record or "." not in path:
        return record.get(path, MISSING)
    head, _, rest = path.partition(".")
    value = record.get(head, MISSING)
    if value is MISSING or value is None:
        return MISSING
    target = _reference_target(context, head)
    if target is not None and context.resolve is not None:
        target_id = reference_id(value)
        if target_id is None:
            return MISSING
        linked = context.resolve(target, target_id)
        if linked is None:
            return MISSING
        return field_value(
            linked, rest, Context(model=context.model, resource=target, resolve=context.resolve)
        )
    if isinstance(value, dict):
        return field_value(value, rest, Context(model=context.model, resolve=context.resolve))
    return MISSING


def reference_id(value: Any) -> str | None:
    """The target id a reference value holds: a bare id, `{link, value}` or `{id: ...}`."""
    if isinstance(value, dict):
        for key in ("value", "id", "Id", "sys_id"):
            if key in value:
                return reference_id(value[key])
        return None
    if value is None or value == "" or isinstance(value, bool):
        return None
    return str(value)


def sort_key(value: Any) -> tuple[int, Any, str]:
    """A key that totally orders any JSON values: numbers, then timestamps, then text, then
    missing ones."""
    rank, typed = _typed(value)
    if rank == _TEXT_RANK:
        return rank, typed.casefold(), typed
    if rank == _EMPTY_RANK:
        return rank, 0, ""
    return rank, typed, ""


def _reference_target(context: Context, field: str) -> str | None:
    if context.model is None or context.resource is None:
        return None
    resource = context.model.resources.get(context.resource)
    if resource is None:
        return None
    spec = resource.fields.get(field)
    if spec is None or spec.reference is None:
        return None
    return spec.reference.resource


def _condition(record: Record, condition: Condition, context: Context) -> bool:
    value = field_value(record, condition.field, context)
    test = _TESTS[condition.op]
    return test(value, condition.value)


def _scalar(value: Any) -> Any:
    """What a value compares as: a reference's id, otherwise the value itself."""
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value


def _typed(value: Any) -> tuple[int, Any]:
    value = _scalar(value)
    if value is MISSING or value is None or value == "":
        return _EMPTY_RANK, None
    if isinstance(value, bool):
        return _TEXT_RANK, "true" if value else "false"
    if isinstance(value, int | float):
        return _NUMBER_RANK, value
    if isinstance(value, str):
        return _classify(value)
    return _TEXT_RANK, json.dumps(value, sort_keys=True, separators=(",", ":"))


@lru_cache(maxsize=65536)
def _classify(text: str) -> tuple[int, Any]:
    stripped = text.strip()
    if _NUMBER.fullmatch(stripped):
        if _INTEGER.fullmatch(stripped):
            return _NUMBER_RANK, int(stripped)
        return _NUMBER_RANK, float(stripped)
    if _DATE_START.match(stripped):
        moment = _parse_time(stripped)
        if moment is not None:
            return _TIME_RANK, moment
    return _TEXT_RANK, text


def _parse_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def _text(value: Any) -> str:
    rank, typed = _typed(value)
    if rank == _EMPTY_RANK:
        return ""
    if rank == _TEXT_RANK:
        return str(typed)
    return str(_scalar(value))


def _pair(left: Any, right: Any) -> tuple[Any, Any] | None:
    """Both values in one comparable domain, or None when either is empty."""
    left_rank, left_typed = _typed(left)
    right_rank, right_typed = _typed(right)
    if _EMPTY_RANK in (left_rank, right_rank):
        return None
    if left_rank == right_rank:
        if left_rank == _TEXT_RANK:
            return left_typed.casefold(), right_typed.casefold()
        return left_typed, right_typed
    return _text(left).casefold(), _text(right).casefold()


def _equal(value: Any, expected: Any) -> bool:
    if expected is None or expected == "":
        return _is_empty(value, None)
    pair = _pair(value, expected)
    return pair is not None and bool(pair[0] == pair[1])


def _ordered(check: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def test(value: Any, expected: Any) -> bool:
        pair = _pair(value, expected)
        return pair is not None and check(*pair)

    return test


def _in(value: Any, expected: Any) -> bool:
    options = [expected] if isinstance(expected, str) else list(expected or ())
    return any(_equal(value, option) for option in options)


def _like(value: Any, expected: Any) -> bool:
    if _typed(value)[0] == _EMPTY_RANK:
        return False
    return _text(expected).casefold() in _text(value).casefold()


@lru_cache(maxsize=1024)
def _like_pattern(pattern: str) -> re.Pattern[str]:
    """A SQL LIKE pattern as a regular expression: `%` any run, `_` one character, and a
    backslash makes the next character literal."""
    parts: list[str] = []
    escaped = False
    for ch in pattern:
        if escaped:
            parts.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            parts.append("." if ch == "_" else ".*" if ch == "%" else re.escape(ch))
    if escaped:
        parts.append(re.escape("\\"))
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def _pattern(value: Any, expected: Any) -> bool:
    if _typed(value)[0] == _EMPTY_RANK:
        return False
    return _like_pattern(_text(expected)).fullmatch(_text(value)) is not None


def _starts_with(value: Any, expected: Any) -> bool:
    if _typed(value)[0] == _EMPTY_RANK:
        return False
    return _text(value).casefold().startswith(_text(expected).casefold())


def _ends_with(value: Any, expected: Any) -> bool:
    if _typed(value)[0] == _EMPTY_RANK:
        return False
    return _text(value).casefold().endswith(_text(expected).casefold())


def _is_empty(value: Any, _expected: Any) -> bool:
    scalar = _scalar(value)
    return scalar is MISSING or scalar is None or scalar == "" or scalar == [] or scalar == {}


def _between(value: Any, expected: Any) -> bool:
    low, high = expected
    low_pair = _pair(value, low)
    high_pair = _pair(value, high)
    return (
        low_pair is not None
        and high_pair is not None
        and bool(low_pair[0] >= low_pair[1])
        and bool(high_pair[0] <= high_pair[1])
    )


def _negate(test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda value, expected: not test(value, expected)


_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "=": _equal,
    "!=": _negate(_equal),
    "<": _ordered(lambda a, b: bool(a < b)),
    "<=": _ordered(lambda a, b: bool(a <= b)),
    ">": _ordered(lambda a, b: bool(a > b)),
    ">=": _ordered(lambda a, b: bool(a >= b)),
    "in": _in,
    "not_in": _negate(_in),
    "like": _like,
    "not_like": _negate(_like),
    "pattern": _pattern,
    "starts_with": _starts_with,
    "ends_with": _ends_with,
    "is_empty": _is_empty,
    "is_not_empty": _negate(_is_empty),
    "between": _between,
}
