"""Lists in SQL (`sqlquery`): filters, sorts, counts and pages compiled over the query tables
of a world's snapshot layers answer exactly what the Python evaluator answers over every
visible record, on SQLite and PostgreSQL, in any state of the copy-on-write layers."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from myna.mocks import sqlstore
from myna.mocks.evaluate import Context, cell, evaluate
from myna.mocks.query import And, Condition, Filter, Not, Or, Query, SortKey
from myna.mocks.sqlquery import FieldStats, column_stem, query_fields, table_name
from myna.mocks.sqlstore import SqlStore, SqlTransaction
from myna.mocks.store import Record
from myna.schemas.model import FieldSpec, IdFormat, Resource, ServiceModel
from tests.conftest import postgres_schema
from tests.mocks.test_store_keys import play
from tests.mocks.test_store_mount import store_file

FIELDS = ("a", "b", "Mixed Case")
MODEL = ServiceModel(
    name="sqlquery",
    resources={
        "ticket": Resource(
            name="ticket",
            id_field="id",
            id_format=IdFormat(kind="integer"),
            fields={name: FieldSpec(name=name) for name in ("id", *FIELDS)},
        )
    },
)

# Numbers against numeric text, timestamps in several spellings, text that case-folds in
# unusual ways, references, booleans, empty and blank values, and values no column holds
# exactly (past 2**53, infinite), which must leave the query to the evaluator.
SCALARS = st.sampled_from(
    [
        1,
        2,
        -3,
        1.5,
        0,
        "1",
        "1.0",
        "01",
        2.0,
        " 2 ",
        "10",
        "1e3",
        "2024-01-01",
        "2024-01-01T00:00:00Z",
        "2024-01-01 10:00:00",
        "2023-12-31T23:00:00-02:00",
        "abc",
        "ABC",
        "abd",
        "Straße",
        "STRASSE",
        "ǅ",
        "İ",
        "",
        None,
        True,
        False,
        "true",
        {"link": "l", "value": "abc"},
        {"link": "", "value": ""},
        {"value": 2},
        [],
        {},
        [1],
    ]
)
IDS = st.sampled_from([f"r{n}" for n in range(10)])
INEXACT = st.sampled_from([2**60, "1e400", "9007199254740993"])


def records(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={name: values for name in FIELDS})


RECORDS = records(SCALARS)
# Most bases hold every value exactly (SQL answers their queries); some hold values no column
# can hold, which leave the queries to the evaluator.
# A few values that are equal in one sense and not in another, so that sorts meet ties.
TIES = st.sampled_from(
    [1, "1", "1.0", "abc", "ABC", "ss", "ß", "2024-01-01", "2024-01-01T00:00:00Z", None, ""]
)
# Numbers all written in their canonical form (`=` is then one lookup of the text column).
PLAIN = st.sampled_from([1, "1", 2, "2", "10", -3, "-3", "abc", None, "", "2024-01-01"])
BASES = st.sampled_from([SCALARS, TIES, TIES, PLAIN, st.one_of(SCALARS, INEXACT)]).flatmap(
    lambda values: st.dictionaries(IDS, records(values), min_size=2, max_size=8)
)
OPERAND = st.one_of(SCALARS, SCALARS, SCALARS, SCALARS, SCALARS, INEXACT)
STEPS = st.lists(
    st.tuples(st.sampled_from(["put", "put", "delete", "fork", "reset"]), IDS, RECORDS),
    max_size=8,
)
OPS_ONE = st.sampled_from(
    ["=", "!=", "<", "<=", ">", ">=", "like", "not_like", "starts_with", "ends_with"]
)
TEXTS = st.sampled_from(["", "a", "B", "ss", "ß", "20", "2024", "abc", "e"])


def conditions() -> st.SearchStrategy[Condition]:
    fields = st.sampled_from(FIELDS)
    return st.one_of(
        st.builds(Condition, fields, OPS_ONE, OPERAND),
        st.builds(Condition, fields, st.sampled_from(["like", "starts_with", "ends_with"]), TEXTS),
        st.builds(
            Condition, fields, st.sampled_from(["in", "not_in"]), st.lists(OPERAND, max_size=3)
        ),
        st.builds(Condition, fields, st.just("between"), st.tuples(OPERAND, OPERAND)),
        st.builds(Condition, fields, st.sampled_from(["is_empty", "is_not_empty"])),
        st.builds(Condition, fields, st.just("pattern"), st.just("a%")),
    )


FILTERS: st.SearchStrategy[Filter] = st.recursive(
    conditions(),
    lambda inner: st.one_of(
        st.builds(And, st.lists(inner, max_size=3).map(tuple)),
        st.builds(Or, st.lists(inner, max_size=3).map(tuple)),
        st.builds(Not, inner),
    ),
    max_leaves=5,
)
SORTS = st.lists(
    st.builds(SortKey, st.sampled_from(FIELDS), st.booleans(), st.none() | st.booleans()),
    max_size=2,
).map(tuple)


KINDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]


def stores(kind: str, directory: Path) -> Iterator[SqlStore]:
    """One store for every example of a test (each example loads its own base under its own
    names): in memory, in memory on bases mounted from files (`mount_snapshot`), or in a
    PostgreSQL schema of its own."""
    if kind.startswith("sqlite"):
        found = SqlStore(MODEL, "sqlite://")
        if kind == "sqlite":
            yield found
        else:
            with patch.object(found, "load_base", mounting(found, directory)):
                yield found
        found.close()
        return
    with postgres_schema() as url:
        found = SqlStore(MODEL, url)
        yield found
        found.close()


@pytest.fixture(
    scope="module", params=[*KINDS, pytest.param("sqlite-mounted", id="sqlite-mounted")]
)
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqlStore]:
    """Any store, lists answering alike on each."""
    yield from stores(request.param, tmp_path_factory.mktemp("bases"))


@pytest.fixture(scope="module", params=KINDS)
def own_tables(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqlStore]:
    """A store whose query tables are its own database's (a mount's live in its query file)."""
    yield from stores(request.param, tmp_path_factory.mktemp("bases"))


def mounting(store: SqlStore, directory: Path) -> Callable[..., str]:
    """`load_base` into a store file of its own, then mounted in `store` with a query file
    (the root's query tables live there while no layer above it holds rows)."""

    def load_base(records: Iterable[tuple[str, str, Record]], name: str) -> str:
        path = store_file(store.model, directory)
        source = SqlStore(store.model, f"sqlite:///{path}")
        source.load_base(records, name)
        source.close()
        return store.mount_snapshot(path, name, queries=directory / f"{name}.queries")

    return load_base


def exact(value: Any) -> bool:
    if isinstance(value, tuple | list) and not isinstance(value, str):
        return all(exact(item) for item in value)
    return cell(value) is not None


def operands(where: Filter | None) -> list[Any]:
    if where is None:
        return []
    if isinstance(where, Condition):
        return [where.value]
    if isinstance(where, Not):
        return operands(where.part)
    return [value for part in where.parts for value in operands(part)]


def answers(tx: SqlTransaction, query: Query) -> tuple[Any, tuple[list[Record], int]]:
    """What SQL answers (None: it left the query to the evaluator) and the evaluator's answer
    over every visible record."""
    context = Context(model=MODEL, resource="ticket", resolve=tx._walk)
    with patch.object(sqlstore, "_SQL_FROM", 0):
        answered = tx._sql_listed("ticket", query, context)
    records = [record for _, record in tx.all("ticket")]
    return answered, evaluate(records, query, context)


@settings(max_examples=400)
@given(
    base=BASES,
    steps=STEPS,
    where=st.one_of(st.none(), FILTERS, FILTERS),
    order=SORTS,
    offset=st.integers(0, 3),
    limit=st.none() | st.integers(0, 4),
)
def test_sql_answers_what_the_evaluator_answers(
    store: SqlStore,
    base: dict[str, dict[str, Any]],
    steps: list[tuple[str, str, dict[str, Any]]],
    where: Filter | None,
    order: tuple[SortKey, ...],
    offset: int,
    limit: int | None,
) -> None:
    query = Query(where=where, order_by=order, offset=offset, limit=limit)
    records = [{"id": i, **r} for i, r in base.items()]
    held = all(exact(v) for r in records for v in r.values()) and all(
        exact(v) for v in operands(where)
    )
    name = uuid.uuid4().hex
    store.load_base((("ticket", r["id"], r) for r in records), name)
    store.create_world(name, from_snapshot=name)
    world = play(store, steps, start=name)
    with store.transaction(world) as tx:
        answered, expected = answers(tx, query)
    if answered is not None:
        page, total = answered
        assert (list(page), total) == expected
    else:
        # Only a pattern or a value no column holds exactly leaves a query to the evaluator
        # here (a few writes never shadow too many rows).
        written = any(not exact(v) for _, _, r in steps for v in r.values())
        assert query_fields(query) is None or not held or written


def test_a_query_fills_its_columns_once_and_later_ones_read_them(own_tables: SqlStore) -> None:
    store = own_tables
    name = uuid.uuid4().hex
    store.load_base((("ticket", f"r{n}", {"a": n % 7, "b": f"T{n:03}"}) for n in range(300)), name)
    store.create_world(name, from_snapshot=name)
    query = Query(Condition("a", ">=", 5), order_by=(SortKey("b", descending=True),), limit=3)
    with store.transaction(name) as tx:
        first, expected = answers(tx, query)
    assert first is not None
    assert (list(first[0]), first[1]) == expected
    assert [r["b"] for r in first[0]] == ["T299", "T293", "T292"]
    assert first[1] == 85
    known = store._query_tables.known("ticket", ["a", "b"], [name])
    assert known == {"a": FieldStats(ranks=0b1), "b": FieldStats(ranks=0b100)}
    table = table_name(store.prefix, "ticket")
    with store._cursor() as cursor:
        mark = store._sql.mark
        cursor.execute(f"SELECT count(*) FROM {table} WHERE snapshot = {mark}", (name,))
        assert cursor.fetchone()[0] == 300
        cursor.execute(
            f"SELECT {column_stem('a')}_n FROM {table} WHERE snapshot = {mark} "
            "AND record_id = 'r12'",
            (name,),
        )
        assert cursor.fetchone()[0] == 5.0


def test_a_page_larger_than_a_database_integer_lists_every_match(store: SqlStore) -> None:
    """Schemathesis sent `sysparm_limit=27927497908466683904`: SQLite refused the LIMIT
    ("datatype mismatch") and the mock answered a GET with 409."""
    name = uuid.uuid4().hex
    store.load_base((("ticket", f"r{n}", {"a": n % 7, "b": f"T{n:03}"}) for n in range(50)), name)
    store.create_world(name, from_snapshot=name)
    query = Query(Condition("a", "=", 3), order_by=(SortKey("b"),), offset=2, limit=2**70)
    with store.transaction(name) as tx:
        answered, expected = answers(tx, query)
    assert answered is not None
    assert (list(answered[0]), answered[1]) == expected
    assert answered[1] == 7


def test_a_failed_transaction_leaves_no_columns_behind(own_tables: SqlStore) -> None:
    """Columns filled in a transaction that rolls back are not taken as filled."""
    store = own_tables
    name = uuid.uuid4().hex
    store.load_base((("ticket", f"r{n}", {"b": n}) for n in range(20)), name)
    store.create_world(name, from_snapshot=name)
    query = Query(Condition("b", "<", 3), order_by=(SortKey("b"),))

    def failing_request() -> None:
        with store.transaction(name) as tx:
            answers(tx, query)
            raise RuntimeError("the request failed")

    with pytest.raises(RuntimeError):
        failing_request()
    assert store._query_tables.known("ticket", ["b"], [name]) is None
    with store.transaction(name) as tx:
        answered, expected = answers(tx, query)
    assert answered is not None
    assert [r["b"] for r in answered[0]] == [0, 1, 2] == [r["b"] for r in expected[0]]


NUMERIC = st.sampled_from([1, 1.0, "1", "01", "1.0", " 1 ", 2, "2.50", "-3", "1e0", "abc", "ABC"])


@settings(max_examples=150)
@given(
    base=st.sampled_from([PLAIN, TIES]).flatmap(
        lambda values: st.dictionaries(IDS, records(values), min_size=1, max_size=6)
    ),
    op=st.sampled_from(["=", "!=", "in", "not_in", "<", ">="]),
    value=NUMERIC,
    also=NUMERIC,
)
def test_equalities_on_numbers_in_any_spelling(
    store: SqlStore, base: dict[str, dict[str, Any]], op: Any, value: Any, also: Any
) -> None:
    """Numbers spelled several ways against fields whose numbers are all canonical (one
    lookup of the text column) or not (a lookup of the number column too)."""
    operand = (value, also) if op in ("in", "not_in") else value
    query = Query(Condition("a", op, operand), order_by=(SortKey("a"),))
    name = uuid.uuid4().hex
    store.load_base((("ticket", i, {"id": i, **r}) for i, r in base.items()), name)
    store.create_world(name, from_snapshot=name)
    with store.transaction(name) as tx:
        answered, expected = answers(tx, query)
    assert answered is not None
    assert (list(answered[0]), answered[1]) == expected
