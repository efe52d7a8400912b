"""Indexed lookups (`store_keys`): a list call filtering `field = value` on a field an extension
looks records up by reads only the records holding the value's keys, and answers exactly what a
scan with the Python evaluator answers, in any state of the copy-on-write layers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from myna.mocks.evaluate import Context, equality_keys, evaluate
from myna.mocks.extensions import EXTENSIONS, Extension, register_extension
from myna.mocks.query import And, Condition, Filter, Query, SortKey
from myna.mocks.sqlstore import SqlStore, SqlTransaction
from myna.mocks.store import Record
from myna.mocks.store_keys import indexed_fields, narrowing
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


def scanned(tx: SqlTransaction, query: Query) -> list[Record]:
    """What the Python evaluator answers over every visible record (the reference)."""
    records = [record for _, record in tx.all("ticket")]
    return evaluate(records, query, Context(model=tx._store.model, resource="ticket"))[0]


def play(store: SqlStore, steps: list[tuple[str, str, dict[str, Any]]]) -> str:
    """Run the steps from world `w0`; the name of the world they end in."""
    world = "w0"
    for number, (what, record_id, values) in enumerate(steps):
        if what == "fork":
            store.fork_world(world, f"w{number + 1}")
            world = f"w{number + 1}"
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
    field=st.sampled_from(["owner", "n"]),
    value=VALUES,
    also=st.booleans(),
    descending=st.none() | st.booleans(),
)
def test_an_indexed_lookup_answers_what_a_scan_answers(
    base: dict[str, dict[str, Any]],
    steps: list[tuple[str, str, dict[str, Any]]],
    field: str,
    value: Any,
    also: bool,
    descending: bool | None,
) -> None:
    store = SqlStore(model(), "sqlite://")
    store.load_base(((("ticket", i, {"id": i, **r})) for i, r in base.items()), "base")
    store.create_world("w0", from_snapshot="base")
    world = play(store, steps)
    where: Filter = Condition(field, "=", value)
    if also:
        where = And((Condition("note", "!=", "b"), where))
    order = () if descending is None else (SortKey("note", descending=descending),)
    query = Query(where=where, order_by=order)
    with store.transaction(world) as tx:
        assert tx.list("ticket", query)[0] == scanned(tx, query)
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


def test_an_empty_value_has_no_key_and_is_not_narrowed() -> None:
    assert equality_keys("") == equality_keys(None) == ()
    assert narrowing(Condition("owner", "=", ""), ("owner",)) is None


def test_narrowing_takes_an_indexed_conjunct_and_nothing_else() -> None:
    owner = Condition("owner", "=", "a")
    assert narrowing(And((Condition("note", "=", "x"), owner)), ("owner",)) == ("owner", ("s:a",))
    assert narrowing(Condition("owner", "!=", "a"), ("owner",)) is None
    assert narrowing(Condition("note", "=", "a"), ("owner",)) is None


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
