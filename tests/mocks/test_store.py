"""SqlStore: records, worlds, snapshots, diffs and sequences, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from myna.errors import MockError
from myna.mocks.query import Condition, Query, SortKey
from myna.mocks.sqlstore import SqlStore
from myna.mocks.store import ConflictError, NotFoundError, RecordChange
from myna.schemas.model import FieldSpec, IdFormat, Reference, Resource, ServiceModel

MODEL = ServiceModel(
    name="itsm",
    resources={
        "incident": Resource(
            name="incident",
            id_field="sys_id",
            id_format=IdFormat(kind="hex32"),
            unique=["number"],
            fields={
                "number": FieldSpec(name="number"),
                "caller": FieldSpec(
                    name="caller", reference=Reference(resource="user", style="link_value")
                ),
            },
        ),
        "user": Resource(name="user", id_field="id", id_format=IdFormat(kind="integer")),
    },
)

BASE = [
    ("user", "1", {"id": "1", "name": "Ann"}),
    ("user", "2", {"id": "2", "name": "Bob"}),
    ("incident", "a", {"number": "INC001", "priority": "2", "caller": {"link": "l", "value": "1"}}),
    (
        "incident",
        "b",
        {"number": "INC002", "priority": "10", "caller": {"link": "l", "value": "2"}},
    ),
]


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    store = SqlStore(MODEL, store_url)
    yield store
    store.close()


@pytest.fixture
def seeded(store: SqlStore) -> SqlStore:
    """A store with the BASE snapshot and a world `w` on it."""
    store.load_base(BASE, "base", sequences={"incident.number": 2})
    store.create_world("w", from_snapshot="base")
    return store


def ids(store: SqlStore, world: str, resource: str = "incident") -> list[str]:
    with store.transaction(world) as tx:
        records, _ = tx.list(resource, Query())
    return [r["number"] if resource == "incident" else r["id"] for r in records]


def test_reads_the_base_snapshot_through_a_world(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        assert tx.get("incident", "a") == BASE[2][2]
        assert tx.get("incident", "zzz") is None
        assert tx.list("incident", Query()) == ([BASE[2][2], BASE[3][2]], 2)


def test_writes_read_back_and_list_after_base_records(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
        tx.update("incident", "a", {"number": "INC001", "priority": "1"})
        tx.delete("incident", "b")
    with seeded.transaction("w") as tx:
        assert tx.get("incident", "a") == {"number": "INC001", "priority": "1"}
        assert tx.get("incident", "b") is None
    assert ids(seeded, "w") == ["INC001", "INC003"]


def test_returned_records_are_the_callers_own_copies(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.get("incident", "a")["caller"]["value"] = "mutated"  # type: ignore[index]
        tx.list("incident", Query())[0][0]["number"] = "mutated"
    with seeded.transaction("w") as tx:
        assert tx.get("incident", "a") == BASE[2][2]


def test_list_filters_sorts_pages_and_dot_walks_references(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        by_caller, total = tx.list("incident", Query(where=Condition("caller.name", "=", "bob")))
        assert [r["number"] for r in by_caller] == ["INC002"]
        assert total == 1
        # "10" > "2" as numbers, though not as text.
        numeric, total = tx.list(
            "incident", Query(order_by=(SortKey("priority", descending=True),), limit=1)
        )
        assert [r["number"] for r in numeric] == ["INC002"]
        assert total == 2


def test_a_dot_walk_sees_writes_made_earlier_in_the_transaction(seeded: SqlStore) -> None:
    by_bob = Query(where=Condition("caller.name", "=", "Bob"))
    with seeded.transaction("w") as tx:
        assert tx.list("incident", by_bob)[1] == 1
        tx.update("user", "1", {"id": "1", "name": "Bob"})
        assert tx.list("incident", by_bob)[1] == 2


@pytest.mark.parametrize(
    ("operation", "error"),
    [
        pytest.param(lambda tx: tx.insert("incident", "a", {}), ConflictError, id="insert-taken"),
        pytest.param(lambda tx: tx.update("incident", "x", {}), NotFoundError, id="update-absent"),
        pytest.param(lambda tx: tx.delete("incident", "x"), NotFoundError, id="delete-absent"),
    ],
)
def test_writes_that_do_not_fit_the_state_are_refused(
    seeded: SqlStore, operation: object, error: type[MockError]
) -> None:
    with pytest.raises(error), seeded.transaction("w") as tx:
        operation(tx)  # type: ignore[operator]


def test_a_deleted_id_can_be_created_again(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.delete("incident", "a")
        tx.insert("incident", "a", {"number": "INC009"})
        assert tx.get("incident", "a") == {"number": "INC009"}


def test_unique_fields_are_unique_across_base_and_overlay(seeded: SqlStore) -> None:
    taken = r"field number: value 'INC001' is already used by record 'a'"
    with pytest.raises(ConflictError, match=taken), seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC001"})
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
    with (
        pytest.raises(ConflictError, match="already used by record 'c'"),
        seeded.transaction("w") as tx,
    ):
        tx.update("incident", "b", {"number": "INC003"})
    with seeded.transaction("w") as tx:
        # Keeping one's own value is fine; a value a base record gave up is free again.
        tx.update("incident", "c", {"number": "INC003", "priority": "1"})
        tx.update("incident", "a", {"number": "INC100"})
        tx.insert("incident", "d", {"number": "INC001"})
        tx.delete("incident", "b")
        tx.insert("incident", "e", {"number": "INC002"})


def test_a_failed_transaction_writes_nothing(seeded: SqlStore) -> None:
    def request() -> None:
        with seeded.transaction("w") as tx:
            tx.insert("incident", "c", {"number": "INC003"})
            tx.next_sequence("incident.number", 1)
            tx.update("incident", "a", {"number": "INC003"})

    with pytest.raises(ConflictError):
        request()
    with seeded.transaction("w") as tx:
        assert tx.get("incident", "c") is None
        assert tx.next_sequence("incident.number", 1) == 3
    assert seeded.diff("w") == []


def test_a_write_in_one_world_is_invisible_in_another(seeded: SqlStore) -> None:
    seeded.create_world("other", from_snapshot="base")
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
        tx.delete("incident", "a")
    assert ids(seeded, "w") == ["INC002", "INC003"]
    assert ids(seeded, "other") == ["INC001", "INC002"]


def test_a_fork_starts_from_the_source_state_then_diverges(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
    seeded.fork_world("w", "fork")
    with seeded.transaction("w") as tx:
        tx.insert("incident", "d", {"number": "INC004"})
    with seeded.transaction("fork") as tx:
        tx.delete("incident", "c")
    assert ids(seeded, "w") == ["INC001", "INC002", "INC003", "INC004"]
    assert ids(seeded, "fork") == ["INC001", "INC002"]
    seeded.reset_world("fork")
    assert ids(seeded, "fork") == ["INC001", "INC002", "INC003"]
    seeded.reset_world("w")
    assert ids(seeded, "w") == ["INC001", "INC002"]


def test_a_fork_of_a_fork_keeps_every_generation(seeded: SqlStore) -> None:
    world = "w"
    for generation in range(5):
        with seeded.transaction(world) as tx:
            tx.insert("incident", f"g{generation}", {"number": f"G{generation}"})
            if generation == 2:
                tx.delete("incident", "a")
        seeded.fork_world(world, f"f{generation}")
        world = f"f{generation}"
    assert ids(seeded, world) == ["INC002", "G0", "G1", "G2", "G3", "G4"]
    # f0 holds what it was forked with (G0) plus its own write (G1).
    assert ids(seeded, "f0") == ["INC001", "INC002", "G0", "G1"]


def test_snapshot_freezes_the_state_and_leaves_the_world_as_it_is(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.update("incident", "a", {"number": "INC001", "priority": "1"})
    frozen = seeded.snapshot("w", "after-update")
    assert frozen == "after-update"
    with seeded.transaction("w") as tx:
        tx.delete("incident", "a")
    seeded.create_world("replay", from_snapshot=frozen)
    with seeded.transaction("replay") as tx:
        assert tx.get("incident", "a") == {"number": "INC001", "priority": "1"}
    with seeded.transaction("w") as tx:
        assert tx.get("incident", "a") is None
    seeded.reset_world("w")
    with seeded.transaction("w") as tx:
        assert tx.get("incident", "a") == BASE[2][2]


def test_diff_lists_record_level_changes_against_the_base(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
        tx.update("incident", "a", {"number": "INC001"})
        tx.delete("incident", "b")
        tx.update("user", "1", BASE[0][2])  # written back unchanged: no change
        tx.insert("user", "9", {"id": "9"})
        tx.delete("user", "9")  # created and deleted: no change
    assert seeded.diff("w") == [
        RecordChange("incident", "a", "updated", BASE[2][2], {"number": "INC001"}),
        RecordChange("incident", "b", "deleted", BASE[3][2], None),
        RecordChange("incident", "c", "created", None, {"number": "INC003"}),
    ]


def test_diff_against_another_snapshot(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
    middle = seeded.snapshot("w")
    seeded.fork_world("w", "fork")
    with seeded.transaction("fork") as tx:
        tx.delete("incident", "c")
        tx.delete("incident", "a")
    assert [(c.record_id, c.kind) for c in seeded.diff("fork", against=middle)] == [
        ("a", "deleted"),
        ("c", "deleted"),
    ]
    assert [(c.record_id, c.kind) for c in seeded.diff("fork", against="base")] == [
        ("a", "deleted")
    ]
    assert [(c.record_id, c.kind) for c in seeded.diff("w", against="base")] == [("c", "created")]


def test_sequences_are_per_world_and_continue_the_base(seeded: SqlStore) -> None:
    seeded.create_world("other", from_snapshot="base")
    with seeded.transaction("w") as tx:
        assert [tx.next_sequence("incident.number", 1) for _ in range(2)] == [3, 4]
        assert tx.next_sequence("user.id", 100) == 100
    seeded.fork_world("w", "fork")
    with seeded.transaction("other") as tx:
        assert tx.next_sequence("incident.number", 1) == 3
    with seeded.transaction("fork") as tx:
        assert tx.next_sequence("incident.number", 1) == 5
    seeded.reset_world("w")
    with seeded.transaction("w") as tx:
        assert tx.next_sequence("incident.number", 1) == 3


@pytest.mark.parametrize(
    "operation",
    [
        pytest.param(lambda tx: tx.get("incident", "a"), id="get"),
        pytest.param(lambda tx: tx.list("incident", Query()), id="list"),
        pytest.param(lambda tx: tx.insert("incident", "z", {}), id="insert"),
        pytest.param(lambda tx: tx.next_sequence("n", 1), id="sequence"),
    ],
)
def test_every_first_call_in_an_unknown_world_is_refused(
    seeded: SqlStore, operation: object
) -> None:
    with pytest.raises(NotFoundError, match="world nope"), seeded.transaction("nope") as tx:
        operation(tx)  # type: ignore[operator]
    assert [info.id for info in seeded.worlds()] == ["w"]


def test_world_management_errors_name_the_world(seeded: SqlStore) -> None:
    with pytest.raises(ConflictError, match="world w"):
        seeded.create_world("w")
    assert seeded.create_world("w", exist_ok=True).base_snapshot == "base"
    with pytest.raises(NotFoundError, match="snapshot nope"):
        seeded.create_world("x", from_snapshot="nope")
    with pytest.raises(NotFoundError, match="world nope"), seeded.transaction("nope") as tx:
        tx.get("incident", "a")
    with pytest.raises(ConflictError, match="world w"):
        seeded.fork_world("w", "w")
    with pytest.raises(ConflictError, match="snapshot base"):
        seeded.snapshot("w", "base")
    seeded.delete_world("w")
    with pytest.raises(NotFoundError, match="world w"):
        seeded.reset_world("w")
    assert [info.id for info in seeded.worlds()] == []


def test_load_base_refuses_duplicate_ids_and_unique_values(store: SqlStore) -> None:
    with pytest.raises(ConflictError, match="resource incident, record_id a"):
        store.load_base([("incident", "a", {}), ("incident", "a", {})], "dup")
    with pytest.raises(ConflictError, match=r"field number: .* records 'a' and 'b'"):
        store.load_base(
            [("incident", "a", {"number": "1"}), ("incident", "b", {"number": "1"})], "dup"
        )
    # The failed loads left no snapshot behind, so the name is still free.
    assert store.load_base([], "dup") == "dup"


def test_two_stores_on_one_database_see_the_same_worlds(seeded: SqlStore) -> None:
    other = SqlStore(MODEL, seeded.url)
    try:
        with other.transaction("w") as tx:
            tx.insert("incident", "c", {"number": "INC003"})
        assert ids(seeded, "w") == ["INC001", "INC002", "INC003"]
        seeded.reset_world("w")
        assert ids(other, "w") == ["INC001", "INC002"]
    finally:
        other.close()


def test_an_empty_world_has_no_base(store: SqlStore) -> None:
    info = store.create_world("empty")
    assert info.base_snapshot is None
    with store.transaction("empty") as tx:
        tx.insert("user", "1", {"id": "1"})
    snapshot = store.snapshot("empty")
    store.create_world("copy", from_snapshot=snapshot)
    assert ids(store, "copy", "user") == ["1"]


def test_table_prefixes_are_plain_identifiers() -> None:
    with pytest.raises(MockError, match="prefix"):
        SqlStore(MODEL, prefix="x; DROP TABLE")


def test_large_loads_and_snapshots_keep_every_record(store: SqlStore) -> None:
    many = [("user", str(i), {"id": str(i)}) for i in range(250)]
    store.load_base(many, "many")
    store.create_world("w", from_snapshot="many")
    with store.transaction("w") as tx:
        for i in range(250, 400):
            tx.insert("user", str(i), {"id": str(i)})
    store.create_world("copy", from_snapshot=store.snapshot("w"))
    assert ids(store, "copy", "user") == [str(i) for i in range(400)]


def test_concurrent_requests_draw_distinct_sequence_values(seeded: SqlStore) -> None:
    def draw(_: int) -> int:
        with seeded.transaction("w") as tx:
            return tx.next_sequence("ticket", 1)

    with ThreadPoolExecutor(max_workers=4) as pool:
        drawn = list(pool.map(draw, range(60)))
    assert sorted(drawn) == list(range(1, 61))


def test_forks_of_an_unchanged_world_share_one_snapshot(seeded: SqlStore) -> None:
    assert seeded.fork_world("w", "clean").base_snapshot == "base"
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
    first = seeded.fork_world("w", "f1").base_snapshot
    assert seeded.fork_world("w", "f2").base_snapshot == first
    with seeded.transaction("w") as tx:
        tx.next_sequence("incident.number", 1)  # a counter step is a write too
    third = seeded.fork_world("w", "f3").base_snapshot
    assert third not in (first, "base")
    with seeded.transaction("w") as tx:
        tx.delete("incident", "c")
    assert seeded.fork_world("w", "f4").base_snapshot not in (first, third)
    assert ids(seeded, "f2") == ["INC001", "INC002", "INC003"]
    assert ids(seeded, "f4") == ["INC001", "INC002"]


def test_snapshots_are_listed_and_deleted_once_nothing_builds_on_them(seeded: SqlStore) -> None:
    with seeded.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
    seeded.snapshot("w", "after")
    assert [(s.id, s.parent) for s in seeded.snapshots()] == [
        ("after", "base"),
        ("base", None),
    ]
    with pytest.raises(NotFoundError, match="snapshot nope"):
        seeded.delete_snapshot("nope")
    with pytest.raises(ConflictError, match="build on it: after, w"):
        seeded.delete_snapshot("base")
    seeded.create_world("replay", from_snapshot="after")
    # w reads from the snapshot it took, with its writes frozen there.
    with pytest.raises(ConflictError, match="build on it: replay, w"):
        seeded.delete_snapshot("after")
    seeded.delete_world("replay")
    seeded.reset_world("w")
    seeded.delete_snapshot("after")
    assert [s.id for s in seeded.snapshots()] == ["base"]
    with pytest.raises(NotFoundError, match="snapshot after"):
        seeded.create_world("again", from_snapshot="after")


def test_a_store_call_inside_a_transaction_is_refused_clearly() -> None:
    # SQLite serialises transactions on one connection; PostgreSQL gives each call its own.
    store = SqlStore(MODEL)
    store.create_world("w")

    def nested() -> None:
        with store.transaction("w") as tx:
            tx.get("user", "1")
            store.worlds()

    with pytest.raises(MockError, match="inside an open transaction"):
        nested()
    with store.transaction("w") as tx:  # the refused call left the store usable
        assert tx.get("user", "1") is None
    store.close()
