"""Narrowed lists (`store_keys`): a list call filtering `field = value` reads only the records
holding the value's keys (the base's from its layers' indexes, the world's own from its keys
when an extension looks the field up), and answers exactly what a scan with the Python
evaluator answers, in any state of the copy-on-write layers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from unittest.mock import patch

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from myna.mocks import sqlstore
from myna.mocks.evaluate import Context, equality_keys, evaluate, matches
from myna.mocks.extensions import EXTENSIONS, Extension, register_extension
from myna.mocks.query import And, Condition, Filter, Query, SortKey
from myna.mocks.sqlstore import SqlStore, SqlTransaction
from myna.mocks.store import Record
from myna.mocks.store_keys import equalities, indexed_fields
from myna.schemas.model import FieldSpec, IdFormat, Resource, ServiceModel

if "store-keys-test" not in EXTENSIONS:
    register_extension(
        Extension(
            name="store-keys-test",
            lookups=frozenset({("ticket", "owner"), ("ticket", "n"), ("nowhere", "x")}),
        )
    )


def model(*, indexed: bool = True) -> ServiceModel:
    fields = {name: FieldSpec(name=name) for name in ("id", "owner", "n", "note")}
    return ServiceModel(
        name="keys",
        resources={
            "ticket": Resource(
                name="ticket", id_field="id", id_format=IdFormat(kind="integer"), fields=fields
            )
        },
        extensions=["store-keys-test"] if indexed else [],
    )


VALUES = st.sampled_from(
    [
        "a",
        "A",
        "b",
        "1",
        "1.0",
        1,
        "2024-01-01",
        "2024-01-01T00:00:00Z",
        "",
        None,
        True,
        {"link": "l", "value": "a"},
    ]
)
IDS = st.sampled_from(["r1", "r2", "r3", "r4", "r5"])
RECORDS = st.fixed_dictionaries({"owner": VALUES, "n": VALUES}, optional={"note": VALUES})
# (what, record id, record): a write, a fork (the world goes on in the fork) or a reset.
STEPS = st.lists(
    st.tuples(st.sampled_from(["put", "put", "delete", "fork", "reset"]), IDS, RECORDS),
    max_size=12,
)


def scanned(tx: SqlTransaction, query: Query) -> tuple[list[Record], int]:
    """What the Python evaluator answers over every visible record (the reference)."""
    records = [record for _, record in tx.all("ticket")]
    return evaluate(records, query, Context(model=tx._store.model, resource="ticket"))


def play(store: SqlStore, steps: list[tuple[str, str, dict[str, Any]]], start: str = "w0") -> str:
    """Run the steps from world `start`; the name of the world they end in."""
    world = start
    for number, (what, record_id, values) in enumerate(steps):
        if what == "fork":
            store.fork_world(world, f"{start}.{number + 1}")
            world = f"{start}.{number + 1}"
        elif what == "reset":
            store.reset_world(world)
        else:
            with store.transaction(world) as tx:
                if tx.get("ticket", record_id) is not None:
                    record = {"id": record_id, **values}
                    if what == "delete":
                        tx.delete("ticket", record_id)
                    else:
                        tx.update("ticket", record_id, record)
                elif what == "put":
                    tx.insert("ticket", record_id, {"id": record_id, **values})
    return world


@settings(max_examples=300)
@given(
    base=st.dictionaries(IDS, RECORDS, max_size=4),
    steps=STEPS,
    field=st.sampled_from(["owner", "n", "note"]),
    value=VALUES,
    also=st.sampled_from([None, Condition("note", "!=", "b"), Condition("n", "=", "a")]),
    descending=st.none() | st.booleans(),
    selective=st.sampled_from([0, 4]),
)
def test_a_narrowed_list_answers_what_a_scan_answers(
    base: dict[str, dict[str, Any]],
    steps: list[tuple[str, str, dict[str, Any]]],
    field: str,
    value: Any,
    also: Condition | None,
    descending: bool | None,
    selective: int,
) -> None:
    """`owner` and `n` are looked up by the extension (the world's rows have keys), `note` is
    not; `selective` 0 narrows whatever the base holds."""
    store = SqlStore(model(), "sqlite://")
    store.load_base(((("ticket", i, {"id": i, **r})) for i, r in base.items()), "base")
    store.create_world("w0", from_snapshot="base")
    world = play(store, steps)
    where: Filter = Condition(field, "=", value)
    if also is not None:
        where = And((also, where))
    order = () if descending is None else (SortKey("note", descending=descending),)
    query = Query(where=where, order_by=order)
    with patch.object(sqlstore, "_SELECTIVE", selective), store.transaction(world) as tx:
        assert tx.list("ticket", query) == scanned(tx, query)
    store.close()


@given(
    base=st.dictionaries(IDS, RECORDS, max_size=5),
    steps=STEPS,
    offset=st.integers(0, 3),
    limit=st.none() | st.integers(0, 3),
    fields=st.none() | st.just(("id", "note")),
)
def test_a_plain_page_answers_what_a_scan_answers(
    base: dict[str, dict[str, Any]],
    steps: list[tuple[str, str, dict[str, Any]]],
    offset: int,
    limit: int | None,
    fields: tuple[str, ...] | None,
) -> None:
    """A page without filter or sort reads only its records when the world has no rows of its
    own (after a fork, its base is a chain of layers)."""
    store = SqlStore(model(), "sqlite://")
    store.load_base(((("ticket", i, {"id": i, **r})) for i, r in base.items()), "base")
    store.create_world("w0", from_snapshot="base")
    world = play(store, steps)
    query = Query(limit=limit, offset=offset, fields=fields)
    with store.transaction(world) as tx:
        assert tx.list("ticket", query) == scanned(tx, query)
    store.close()


@pytest.mark.parametrize(
    ("value", "other"),
    [
        pytest.param("Open", "open", id="text-ignores-case"),
        pytest.param("1", 1.0, id="numbers-by-value"),
        pytest.param("2024-01-01", "2024-01-01T00:00:00", id="times-by-moment"),
        pytest.param({"link": "l", "value": "x1"}, "x1", id="reference-by-id"),
        pytest.param(True, "TRUE", id="boolean-as-text"),
    ],
)
def test_values_that_compare_equal_share_a_key(value: Any, other: Any) -> None:
    assert set(equality_keys(value)) & set(equality_keys(other))


def test_an_empty_value_has_no_key_and_does_not_narrow() -> None:
    assert equality_keys("") == equality_keys(None) == ()
    assert equalities(Condition("owner", "=", "")) == []


def test_equalities_are_the_conjuncts_field_equals_value_on_plain_fields() -> None:
    where = And(
        (
            Condition("note", "=", "X"),
            Condition("owner", "!=", "a"),
            Condition("caller.name", "=", "a"),
            Condition("n", "=", 1),
        )
    )
    assert equalities(where) == [("note", ("s:x",)), ("n", ("s:1", "n:1"))]
    assert equalities(Condition("owner", "like", "a")) == []


def test_indexed_fields_are_the_extensions_lookups_of_served_resources() -> None:
    assert indexed_fields(model()) == {"ticket": ("n", "owner")}
    assert indexed_fields(model(indexed=False)) == {}


@pytest.fixture
def keyed(store_url: str) -> Iterator[SqlStore]:
    store = SqlStore(model(), store_url)
    store.load_base([("ticket", "t1", {"id": "t1", "owner": "ann"})], "base")
    store.create_world("w", from_snapshot="base")
    store.create_world("v", from_snapshot="base")
    yield store
    store.close()


def owned_by(store: SqlStore, world: str, owner: str) -> list[str]:
    with store.transaction(world) as tx:
        found, _ = tx.list("ticket", Query(where=Condition("owner", "=", owner)))
    return [record["id"] for record in found]


def test_a_world_finds_its_own_writes_and_no_other_worlds(keyed: SqlStore) -> None:
    with keyed.transaction("w") as tx:
        tx.insert("ticket", "t2", {"id": "t2", "owner": "Ann"})
        tx.update("ticket", "t1", {"id": "t1", "owner": "bob"})
    assert owned_by(keyed, "w", "ann") == ["t2"]
    assert owned_by(keyed, "w", "bob") == ["t1"]
    assert owned_by(keyed, "v", "ann") == ["t1"]
    keyed.fork_world("w", "w2")
    assert owned_by(keyed, "w2", "ann") == ["t2"]
    keyed.reset_world("w")
    assert owned_by(keyed, "w", "ann") == ["t1"]
    assert owned_by(keyed, "w", "bob") == []


def test_a_store_that_starts_indexing_keys_rows_written_before(store_url: str) -> None:
    """Another process (or an older Myna) wrote without the index: the first store that indexes
    the field gives those rows their keys."""
    plain = SqlStore(model(indexed=False), store_url)
    plain.create_world("w")
    with plain.transaction("w") as tx:
        tx.insert("ticket", "t1", {"id": "t1", "owner": "ann"})
    plain.close()
    indexing = SqlStore(model(), store_url)
    assert owned_by(indexing, "w", "ann") == ["t1"]
    indexing.close()


SCALARS = st.one_of(
    st.sampled_from(
        [
            "1",
            "1.0",
            "01",
            "+1",
            "1e0",
            "1E0",
            "inf",
            "2024-01-01",
            "2024-01-01T00:00:00",
            "2024-01-01 00:00:00",
            "2024-01-01T00:00:00Z",
            "2024-01-01t00:00:00",
            "2024-01-01T01:00:00+01:00",
            "true",
            "TRUE",
            "Open",
            "open",
            "ǅ",
            "ǆ",
            "ß",
            "ss",
        ]
    ),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-3, max_value=3),
    st.booleans(),
    st.text(alphabet="aAbB1 .:-", max_size=4),
)
VALUES_ANY = st.one_of(SCALARS, st.builds(lambda v: {"link": "l", "value": v}, SCALARS))


@given(value=VALUES_ANY, other=VALUES_ANY)
def test_two_values_share_a_key_exactly_when_equality_matches(value: Any, other: Any) -> None:
    """What lets a store skip testing a candidate found by its keys for a filter of
    equalities alone."""
    shared = bool(set(equality_keys(value)) & set(equality_keys(other)))
    if equality_keys(other):
        assert shared == matches({"f": value}, Condition("f", "=", other), Context())
