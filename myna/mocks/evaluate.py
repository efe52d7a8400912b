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

import heapq
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple

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
# Longer digit strings compare as floats: Python refuses to convert over 4,300 digits to an int.
_INTEGER = re.compile(r"[+-]?\d{1,4000}")
_DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}")
_EPOCH = datetime(1970, 1, 1)

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
    if where is None:
        matched = records if isinstance(records, list) else list(records)
    else:
        test = compile_filter(where, context)
        matched = [record for record in records if test(record)]
    total = len(matched)
    end = None if query.limit is None else query.offset + max(query.limit, 0)
    if len(query.order_by) == 1 and end is not None and end * 4 < total:
        # A first page needs only the leading records: a bounded heap, not a full sort
        # (`nsmallest` is documented to equal `sorted(...)[:n]`, so ties keep input order).
        key = query.order_by[0]
        pick = heapq.nlargest if key.descending else heapq.nsmallest
        matched = pick(end, matched, key=_sort_key_of(key, context))
    elif query.order_by:
        matched = sort_records(matched, query.order_by, context)
    page = matched[query.offset : end]
    if query.fields is not None:
        page = [project(record, query.fields, context) for record in page]
    return page, total


def matches(record: Record, where: Filter, context: Context) -> bool:
    """Whether `record` satisfies the filter."""
    return compile_filter(where, context)(record)


def compile_filter(where: Filter, context: Context) -> Callable[[Record], bool]:
    """The filter as one function of a record, each condition's value prepared once (a list
    call tests every record of a resource)."""
    if isinstance(where, Condition):
        return _compile_condition(where, context)
    if isinstance(where, And):
        conjuncts = tuple(compile_filter(part, context) for part in where.parts)
        return lambda record: all(part(record) for part in conjuncts)
    if isinstance(where, Or):
        disjuncts = tuple(compile_filter(part, context) for part in where.parts)
        return lambda record: any(part(record) for part in disjuncts)
    inner = compile_filter(where.part, context)
    return lambda record: not inner(record)


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


def _sort_key_of(key: SortKey, context: Context) -> Callable[[Record], tuple[int, int, Any, str]]:
    nulls_first = key.descending if key.nulls_first is None else key.nulls_first
    # Under a reversed sort the largest flag comes first, so the flag that puts empty values
    # first depends on the direction.
    empty_flag = int(nulls_first == key.descending)
    get = getter(key.field, context)

    def of(record: Record) -> tuple[int, int, Any, str]:
        rank, typed, tiebreak = sort_key(get(record))
        return (empty_flag if rank == _EMPTY_RANK else 1 - empty_flag), rank, typed, tiebreak

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


def equality_keys(value: Any) -> tuple[str, ...]:
    """Index keys of a value under `=`: two values share a key exactly when `=` calls them
    equal. Every non-empty value has its case-folded text, which is what `=` compares across
    kinds (and within text); a number or timestamp also has its canonical form, which `=`
    compares within its kind (`"1.0"` and `1`). An empty value has none: `=` never matches it.
    Stores index records by these keys (`myna.mocks.store_keys`)."""
    rank, typed = _typed(value)
    if rank == _EMPTY_RANK:
        return ()
    text = "s:" + _text(value).casefold()
    if rank == _NUMBER_RANK:
        return text, "n:" + canonical_number(typed)
    if rank == _TIME_RANK:
        return text, "t:" + repr(typed)
    return (text,)


class Cell(NamedTuple):
    """A value as the evaluator compares and sorts it, in columns SQL can hold exactly
    (`myna.mocks.sqlquery`): its rank (number, timestamp, text, empty), whether `is_empty`
    holds, its number or seconds (ranks 0 and 1, else 0), its case-folded text and original
    text (rank 2, else ""), and the case-folded text every rank compares as across ranks."""

    rank: int
    blank: bool
    number: float
    key: str
    raw: str
    text: str


_EXACT_INTEGER = 2**53


def cell(value: Any) -> Cell | None:
    """The value's `Cell`; None when a double or a database's text cannot hold it exactly
    (integers past 2**53, infinities, NUL characters, lone surrogates)."""
    if isinstance(value, str):
        return _text_cell(value)
    return _cell(value)


def _cell(value: Any) -> Cell | None:
    rank, typed = _typed(value)
    if rank == _EMPTY_RANK:
        return _EMPTY_CELL
    if rank == _TEXT_RANK:
        if not _storable(typed):
            return None
        key = typed.casefold()
        # Only a list or an object of text rank is empty (`[]`, `{}`).
        blank = not isinstance(value, str) and _is_empty(value)
        return Cell(rank, blank, 0.0, key, typed, key)
    if abs(typed) > _EXACT_INTEGER if isinstance(typed, int) else not math.isfinite(typed):
        return None
    text = str(_scalar(value))
    if not _storable(text):
        return None
    return Cell(rank, False, float(typed), "", "", text.casefold())


_EMPTY_CELL = Cell(_EMPTY_RANK, True, 0.0, "", "", "")
# A field's values repeat (states, flags, references): a column fills from the cache.
_text_cell = lru_cache(maxsize=65536)(_cell)


def _storable(text: str) -> bool:
    if text.isascii():
        return "\x00" not in text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def canonical_number(number: int | float) -> str:
    """The text of a number that equal numbers share (`1`, `1.0`: "1")."""
    if isinstance(number, float) and math.isfinite(number) and number.is_integer():
        return str(int(number))
    return repr(number) if isinstance(number, float) else str(number)


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


def _compile_condition(condition: Condition, context: Context) -> Callable[[Record], bool]:
    test = _COMPILERS[condition.op](condition.value)
    get = getter(condition.field, context)
    return lambda record: test(get(record))


def getter(path: str, context: Context) -> Callable[[Record], Any]:
    """`field_value` for one path, with the references along it looked up in the model once."""
    if "." not in path:
        return lambda record: record.get(path, MISSING)
    segments = path.split(".")
    # (segment, the rest of the path after it, the resource it references or None)
    steps: list[tuple[str, str, str | None]] = []
    resource = context.resource
    for index, segment in enumerate(segments[:-1]):
        target = _reference_target(Context(context.model, resource), segment)
        steps.append((segment, ".".join(segments[index + 1 :]), target))
        resource = target
    last = segments[-1]
    resolve = context.resolve

    def get(record: Record) -> Any:
        if path in record:
            return record[path]
        current = record
        for segment, rest, target in steps:
            value = current.get(segment, MISSING)
            if value is MISSING or value is None:
                return MISSING
            if target is not None and resolve is not None:
                target_id = reference_id(value)
                linked = None if target_id is None else resolve(target, target_id)
                if linked is None:
                    return MISSING
                current = linked
            elif isinstance(value, dict):
                current = value
            else:
                return MISSING
            if rest in current:
                return current[rest]
        return current.get(last, MISSING)

    return get


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
            # Seconds since the epoch (UTC): compares like the datetime, several times faster.
            return _TIME_RANK, (moment - _EPOCH).total_seconds()
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


@dataclass(frozen=True, slots=True)
class _Operand:
    """A condition's value, classified once: its rank, its comparable form (case-folded
    text), and its case-folded text form for comparisons across ranks."""

    rank: int
    typed: Any
    text: str


def _operand(value: Any) -> _Operand:
    rank, typed = _typed(value)
    if rank == _TEXT_RANK:
        typed = typed.casefold()
    return _Operand(rank, typed, _text(value).casefold())


def _pair(value: Any, operand: _Operand) -> tuple[Any, Any] | None:
    """The record's value and the operand in one comparable domain, or None when either is
    empty."""
    rank, typed = _typed(value)
    if rank == _EMPTY_RANK or operand.rank == _EMPTY_RANK:
        return None
    if rank == operand.rank:
        return (typed.casefold() if rank == _TEXT_RANK else typed), operand.typed
    return _text(value).casefold(), operand.text


Test = Callable[[Any], bool]


def _is_empty(value: Any) -> bool:
    scalar = _scalar(value)
    return scalar is MISSING or scalar is None or scalar == "" or scalar == [] or scalar == {}


def _equal_to(expected: Any) -> Test:
    if expected is None or expected == "":
        return _is_empty
    operand = _operand(expected)

    def test(value: Any) -> bool:
        pair = _pair(value, operand)
        return pair is not None and bool(pair[0] == pair[1])

    return test


def _ordered(check: Callable[[Any, Any], bool]) -> Callable[[Any], Test]:
    def compile_(expected: Any) -> Test:
        operand = _operand(expected)

        def test(value: Any) -> bool:
            pair = _pair(value, operand)
            return pair is not None and check(*pair)

        return test

    return compile_


def _in(expected: Any) -> Test:
    options = [expected] if isinstance(expected, str) else list(expected or ())
    tests = [_equal_to(option) for option in options]
    return lambda value: any(test(value) for test in tests)


def _text_test(check: Callable[[str, str], bool]) -> Callable[[Any], Test]:
    """A test on the case-folded text of a non-empty value."""

    def compile_(expected: Any) -> Test:
        needle = _text(expected).casefold()

        def test(value: Any) -> bool:
            return _typed(value)[0] != _EMPTY_RANK and check(_text(value).casefold(), needle)

        return test

    return compile_


def _pattern(expected: Any) -> Test:
    regex = _like_pattern(_text(expected))

    def test(value: Any) -> bool:
        return _typed(value)[0] != _EMPTY_RANK and regex.fullmatch(_text(value)) is not None

    return test


def _between(expected: Any) -> Test:
    low, high = expected
    at_least = _ordered(lambda a, b: bool(a >= b))(low)
    at_most = _ordered(lambda a, b: bool(a <= b))(high)
    return lambda value: at_least(value) and at_most(value)


def _negate(compile_: Callable[[Any], Test]) -> Callable[[Any], Test]:
    def negated(expected: Any) -> Test:
        test = compile_(expected)
        return lambda value: not test(value)

    return negated


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


_COMPILERS: dict[str, Callable[[Any], Test]] = {
    "=": _equal_to,
    "!=": _negate(_equal_to),
    "<": _ordered(lambda a, b: bool(a < b)),
    "<=": _ordered(lambda a, b: bool(a <= b)),
    ">": _ordered(lambda a, b: bool(a > b)),
    ">=": _ordered(lambda a, b: bool(a >= b)),
    "in": _in,
    "not_in": _negate(_in),
    "like": _text_test(lambda text, needle: needle in text),
    "not_like": _negate(_text_test(lambda text, needle: needle in text)),
    "pattern": _pattern,
    "starts_with": _text_test(lambda text, needle: text.startswith(needle)),
    "ends_with": _text_test(lambda text, needle: text.endswith(needle)),
    "is_empty": lambda _expected: _is_empty,
    "is_not_empty": lambda _expected: lambda value: not _is_empty(value),
    "between": _between,
}
