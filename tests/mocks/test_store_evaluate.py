"""The filter evaluator: operator semantics, dot-walking, sorting and paging."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import given

from myna.mocks.evaluate import MISSING, Context, evaluate, field_value, getter, matches
from myna.mocks.query import And, Condition, Filter, Not, Operator, Or, Query, SortKey
from myna.mocks.store import Record
from myna.schemas.model import FieldSpec, IdFormat, Reference, Resource, ServiceModel


@pytest.mark.parametrize(
    ("value", "op", "expected", "result"),
    [
        pytest.param("10", ">", "9", True, id="numeric-strings-compare-as-numbers"),
        pytest.param("10", ">", 9, True, id="numeric-string-against-number"),
        pytest.param("abc", ">", "abd", False, id="text-compares-as-text"),
        pytest.param("2024-01-02 00:00:00", ">", "2024-01-01T23:59:59Z", True, id="timestamps"),
        pytest.param("2024-01-01", "=", "2024-01-01T00:00:00", True, id="date-equals-midnight"),
        pytest.param("Open", "=", "open", True, id="text-equality-ignores-case"),
        pytest.param({"link": "x", "value": "abc"}, "=", "abc", True, id="reference-by-id"),
        pytest.param(True, "=", "true", True, id="boolean-as-string"),
        pytest.param("", "=", "", True, id="empty-equals-empty"),
        pytest.param(None, "!=", "x", True, id="missing-is-not-equal"),
        pytest.param(None, "<", "5", False, id="missing-never-orders"),
        pytest.param("3", "in", ("1", "3"), True, id="in"),
        pytest.param("3", "not_in", ("1", "2"), True, id="not-in"),
        pytest.param("Email server down", "like", "SERVER", True, id="like-substring"),
        pytest.param(None, "not_like", "x", True, id="not-like-missing"),
        pytest.param("Email server", "pattern", "email%", True, id="pattern-percent"),
        pytest.param("a_c", "pattern", r"a\_c", True, id="pattern-escaped-underscore"),
        pytest.param("abc", "pattern", r"a\_c", False, id="pattern-escape-is-literal"),
        pytest.param("INC001", "starts_with", "inc", True, id="starts-with"),
        pytest.param("INC001", "ends_with", "01", True, id="ends-with"),
        pytest.param("", "is_empty", None, True, id="empty-string-is-empty"),
        pytest.param({"link": "", "value": ""}, "is_empty", None, True, id="empty-reference"),
        pytest.param("0", "is_not_empty", None, True, id="zero-is-not-empty"),
        pytest.param("5", "between", ("1", "10"), True, id="between-numbers"),
        pytest.param("10", "between", ("1", "5"), False, id="outside-between"),
    ],
)
def test_operator(value: Any, op: Operator, expected: Any, result: bool) -> None:
    record = {} if value is None else {"f": value}
    assert matches(record, Condition("f", op, expected), Context()) is result


MODEL = ServiceModel(
    name="m",
    resources={
        "incident": Resource(
            name="incident",
            id_field="sys_id",
            id_format=IdFormat(kind="hex32"),
            fields={
                "caller": FieldSpec(name="caller", reference=Reference(resource="user")),
                "group": FieldSpec(name="group", reference=Reference(resource="group")),
            },
        ),
        "user": Resource(
            name="user",
            id_field="id",
            id_format=IdFormat(kind="integer"),
            fields={"manager": FieldSpec(name="manager", reference=Reference(resource="user"))},
        ),
        "group": Resource(name="group", id_field="id", id_format=IdFormat(kind="integer")),
    },
)
USERS = {"1": {"name": "Ann", "manager": "2"}, "2": {"name": "Bob"}}


def resolve(resource: str, record_id: str) -> Record | None:
    return USERS.get(record_id) if resource == "user" else None


CONTEXT = Context(model=MODEL, resource="incident", resolve=resolve)


@pytest.mark.parametrize(
    ("record", "field", "expected"),
    [
        pytest.param({"caller": "1"}, "caller.name", "Ann", id="bare-id"),
        pytest.param({"caller": {"link": "u", "value": "1"}}, "caller.name", "Ann", id="link"),
        pytest.param({"caller": "1"}, "caller.manager.name", "Bob", id="two-hops"),
        pytest.param({"x": {"y": "deep"}}, "x.y", "deep", id="nested-object"),
        pytest.param({"caller.name": "Zed"}, "caller.name", "Zed", id="literal-dotted-key"),
    ],
)
def test_dot_walked_fields_follow_references(record: Record, field: str, expected: str) -> None:
    assert matches(record, Condition(field, "=", expected), CONTEXT)
    assert getter(field, CONTEXT)(record) == field_value(record, field, CONTEXT) == expected


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({"caller": "404"}, id="dangling"),
        pytest.param({"caller": ""}, id="empty"),
        pytest.param({"group": "1"}, id="unresolvable-resource"),
        pytest.param({}, id="absent"),
    ],
)
def test_a_walk_that_finds_nothing_is_empty(record: Record) -> None:
    assert matches(record, Condition("caller.name", "is_empty"), CONTEXT)
    assert getter("caller.name", CONTEXT)(record) is MISSING


def test_projection_keeps_dot_walked_names_as_keys() -> None:
    page, _ = evaluate([{"caller": "1", "n": 1}], Query(fields=("n", "caller.name")), CONTEXT)
    assert page == [{"n": 1, "caller.name": "Ann"}]


def test_sort_orders_numbers_then_times_then_text_then_missing() -> None:
    records = [{"v": "b"}, {}, {"v": "10"}, {"v": "2024-01-01"}, {"v": 9}, {"v": "A"}]
    ascending, _ = evaluate(records, Query(order_by=(SortKey("v"),)))
    assert [r.get("v") for r in ascending] == [9, "10", "2024-01-01", "A", "b", None]
    descending, _ = evaluate(records, Query(order_by=(SortKey("v", descending=True),)))
    assert [r.get("v") for r in descending] == [None, "b", "A", "2024-01-01", "10", 9]
    nulls_last, _ = evaluate(
        records, Query(order_by=(SortKey("v", descending=True, nulls_first=False),))
    )
    assert [r.get("v") for r in nulls_last][-1] is None


# --- properties against a naive reference over a small domain ---------------------------------

FIELDS = ("a", "b")
VALUES = st.one_of(
    st.integers(-5, 5),
    st.integers(-5, 5).map(str),
    st.sampled_from(["x", "X", "y", "xy", ""]),
    st.none(),
)
RECORDS = st.lists(
    st.fixed_dictionaries({}, optional={name: VALUES for name in FIELDS}), max_size=12
)
SIMPLE_OPS: tuple[Operator, ...] = ("=", "!=", "<", "<=", ">", ">=", "like", "is_empty")
CONDITIONS = st.builds(
    Condition, st.sampled_from(FIELDS), st.sampled_from(SIMPLE_OPS), VALUES.filter(bool)
)
FILTERS: st.SearchStrategy[Filter] = st.recursive(
    CONDITIONS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda parts: And(tuple(parts))),
        st.lists(inner, min_size=1, max_size=3).map(lambda parts: Or(tuple(parts))),
        inner.map(Not),
    ),
    max_leaves=6,
)


def naive_value(value: Any) -> tuple[str, Any] | None:
    """The reference's reading of a value: empty, a number, or lower-case text."""
    if value is None or value == "":
        return None
    if isinstance(value, int) or value.lstrip("-").isdigit():
        return ("n", int(value))
    return ("s", value.lower())


def naive_condition(record: Record, condition: Condition) -> bool:
    left = naive_value(record.get(condition.field))
    right = naive_value(condition.value)
    if condition.op == "is_empty":
        return left is None
    if condition.op == "like":
        return left is not None and str(condition.value).lower() in str(left[1]).lower()
    if condition.op == "!=":
        return not naive_condition(record, Condition(condition.field, "=", condition.value))
    if left is None or right is None:
        return False
    if left[0] != right[0]:
        left, right = ("s", str(left[1]).lower()), ("s", str(right[1]).lower())
    a, b = left[1], right[1]
    return {"=": a == b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[condition.op]


def naive_matches(record: Record, where: Filter) -> bool:
    if isinstance(where, Condition):
        return naive_condition(record, where)
    if isinstance(where, And):
        return all(naive_matches(record, part) for part in where.parts)
    if isinstance(where, Or):
        return any(naive_matches(record, part) for part in where.parts)
    return not naive_matches(record, where.part)


@given(records=RECORDS, where=FILTERS)
def test_filters_agree_with_the_naive_reference(records: list[Record], where: Filter) -> None:
    expected = [r for r in records if naive_matches(r, where)]
    page, total = evaluate(records, Query(where=where))
    assert page == expected
    assert total == len(expected)


@given(records=RECORDS, where=FILTERS)
def test_not_is_the_complement(records: list[Record], where: Filter) -> None:
    numbered = [{**record, "i": i} for i, record in enumerate(records)]
    kept, _ = evaluate(numbered, Query(where=where))
    dropped, _ = evaluate(numbered, Query(where=Not(where)))
    assert sorted(r["i"] for r in kept + dropped) == list(range(len(records)))


@given(
    records=RECORDS,
    field=st.sampled_from(FIELDS),
    descending=st.booleans(),
    offset=st.integers(0, 15),
    limit=st.none() | st.integers(0, 15),
)
def test_sorting_and_paging_agree_with_the_naive_reference(
    records: list[Record], field: str, descending: bool, offset: int, limit: int | None
) -> None:
    def key(record: Record) -> tuple[int, Any]:
        value = naive_value(record.get(field))
        if value is None:
            return (2, 0)
        return (0, value[1]) if value[0] == "n" else (1, value[1])

    ordered = sorted(records, key=key, reverse=descending)
    end = None if limit is None else offset + limit
    page, total = evaluate(
        records,
        Query(order_by=(SortKey(field, descending),), offset=offset, limit=limit),
    )
    assert [key(r) for r in page] == [key(r) for r in ordered[offset:end]]
    assert total == len(records)
