"""SqlStore writes checked in the statement that writes them: ids a world wrote itself, unique
values held by the world's own records, by the records of a snapshot layered on a root, and by a
concurrent transaction; on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from myna.mocks import sqlstore
from myna.mocks.sqlstore import SqlStore
from myna.mocks.store import ConflictError, UndeclaredWriteError
from tests.mocks.test_store import MODEL  # incidents with a unique number

BASE = [("incident", "a", {"number": "INC001"}), ("incident", "b", {"number": "INC002"})]


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    store = SqlStore(MODEL, store_url)
    store.load_base(BASE, "base")
    store.create_world("w", from_snapshot="base")
    yield store
    store.close()


def numbers(store: SqlStore, world: str) -> dict[str, str]:
    with store.transaction(world) as tx:
        return {record_id: record["number"] for record_id, record in tx.all("incident")}


def test_an_id_the_world_wrote_is_taken_until_the_world_deletes_it(store: SqlStore) -> None:
    with store.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
    with pytest.raises(ConflictError, match="'c' already exists"), store.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC004"})
    assert numbers(store, "w")["c"] == "INC003"

    with store.transaction("w") as tx:
        tx.delete("incident", "c")
        tx.insert("incident", "c", {"number": "INC005"})
        tx.insert("incident", "d", {"number": "INC003"})  # given up with the deleted c
    assert (numbers(store, "w")["c"], numbers(store, "w")["d"]) == ("INC005", "INC003")
    with store.transaction("w") as tx:
        tx.delete("incident", "d")
    with store.transaction("w") as tx:
        tx.insert("incident", "e", {"number": "INC003"})


def test_a_kept_value_stays_held_and_a_changed_one_is_given_up(store: SqlStore) -> None:
    with store.transaction("w") as tx:
        tx.insert("incident", "c", {"number": "INC003"})
    with store.transaction("w") as tx:
        tx.update("incident", "c", {"number": "INC003", "note": "kept"})
    with pytest.raises(ConflictError, match="used by record 'c'"), store.transaction("w") as tx:
        tx.insert("incident", "d", {"number": "INC003"})

    with store.transaction("w") as tx:
        tx.update("incident", "c", {"number": "INC009"})
        tx.insert("incident", "d", {"number": "INC003"})
    with pytest.raises(ConflictError, match="used by record 'c'"), store.transaction("w") as tx:
        tx.update("incident", "a", {"number": "INC009"})
    assert numbers(store, "w") == {"a": "INC001", "b": "INC002", "c": "INC009", "d": "INC003"}


def test_a_fork_of_a_world_with_writes_holds_the_base_values_and_the_writes(
    store: SqlStore,
) -> None:
    with store.transaction("w") as tx:
        tx.update("incident", "a", {"number": "INC100"})
        tx.delete("incident", "b")
        tx.insert("incident", "c", {"number": "INC003"})
    store.fork_world("w", "f")  # layers the writes on the base as a snapshot

    for taken, holder in (("INC100", "a"), ("INC003", "c")):
        with (
            pytest.raises(ConflictError, match=f"used by record '{holder}'"),
            store.transaction("f") as tx,
        ):
            tx.insert("incident", "x", {"number": taken})
    with store.transaction("f") as tx:
        tx.insert("incident", "x", {"number": "INC001"})  # given up by a
        tx.insert("incident", "y", {"number": "INC002"})  # deleted with b
    with pytest.raises(ConflictError, match="used by record 'a'"), store.transaction("w") as tx:
        tx.insert("incident", "x", {"number": "INC100"})


def test_a_second_store_on_the_database_refuses_the_same_values(
    store: SqlStore, store_url: str
) -> None:
    other = SqlStore(MODEL, store_url)
    try:
        for each in (store, other):
            with (
                pytest.raises(ConflictError, match="used by record 'b'"),
                each.transaction("w") as tx,
            ):
                tx.insert("incident", "z", {"number": "INC002"})
    finally:
        other.close()


def test_a_value_a_concurrent_transaction_claimed_is_refused_once_it_commits(
    store: SqlStore,
) -> None:
    refused: list[BaseException] = []

    def second() -> None:
        try:
            with store.transaction("w") as tx:
                tx.insert("incident", "late", {"number": "INC007"})
        except ConflictError as error:
            refused.append(error)

    with store.transaction("w") as tx:
        tx.insert("incident", "early", {"number": "INC007"})
        # The second writer waits for this transaction (the store's lock on SQLite, the row's
        # lock on PostgreSQL) or starts after it: either way it finds the value held.
        racer = threading.Thread(target=second)
        racer.start()
    racer.join(timeout=30)

    assert len(refused) == 1
    assert "used by record 'early'" in str(refused[0])
    assert "late" not in numbers(store, "w")


def test_concurrent_read_modify_writes_from_two_stores_lose_nothing(
    store: SqlStore, store_url: str
) -> None:
    """Each writer reads a counter and writes it back one higher, in two stores on one database
    (two processes): a writing transaction is the world's only writer from its first read."""
    other = SqlStore(MODEL, store_url)
    with store.transaction("w") as tx:
        tx.update("incident", "a", {"number": "INC001", "count": 0})

    def increment(each: SqlStore) -> None:
        for _ in range(25):
            with each.transaction("w") as tx:
                record = tx.get("incident", "a")
                assert record is not None
                tx.update("incident", "a", {**record, "count": record["count"] + 1})

    try:
        writers = [threading.Thread(target=increment, args=(s,)) for s in (store, other) * 4]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=60)
    finally:
        other.close()
    with store.transaction("w", writes=False) as tx:
        assert tx.get("incident", "a") == {"number": "INC001", "count": 8 * 25}


def test_a_transaction_opened_to_read_refuses_to_write_on_a_shared_database(
    store_url: str,
) -> None:
    """PostgreSQL, and a SQLite file other processes may share: a read-only transaction holds
    no lock on the world (readers run side by side), so it must not write."""
    store = SqlStore(MODEL, store_url)
    store.load_base(BASE, "base")
    store.create_world("w", from_snapshot="base")
    try:
        for write in (
            lambda tx: tx.update("incident", "a", {"number": "INC009"}),
            lambda tx: tx.insert("incident", "c", {"number": "INC003"}),
            lambda tx: tx.delete("incident", "b"),
            lambda tx: tx.next_sequence("incident.number", 1),
        ):
            with pytest.raises(UndeclaredWriteError), store.transaction("w", writes=False) as tx:
                write(tx)
        assert numbers(store, "w") == {"a": "INC001", "b": "INC002"}
    finally:
        store.close()


def test_the_in_memory_store_keeps_working_once_it_moves_out_of_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The move happens near 512 MiB; here after 1 MiB, looked at after every 64 KiB written.
    monkeypatch.setattr(sqlstore, "_MEMDB_SPILL_BYTES", 1 << 20)
    monkeypatch.setattr(sqlstore, "_GROWTH_CHECK_BYTES", 64 << 10)
    store = SqlStore(MODEL, "sqlite://")
    note = "x" * 2000
    try:
        store.load_base(
            (("incident", f"r{i}", {"number": f"N{i}", "note": note}) for i in range(1000)),
            "big",
        )
        store.create_world("w", from_snapshot="big")
        assert not store._memdb  # moved to a temporary database
        for i in range(1000):
            with store.transaction("w") as tx:
                tx.insert("incident", f"n{i}", {"number": f"M{i}", "note": note})
        with pytest.raises(ConflictError), store.transaction("w") as tx:
            tx.insert("incident", "late", {"number": "M1"})
        held = numbers(store, "w")
        assert len(held) == 2000
        assert "late" not in held
        assert (held["r999"], held["n999"]) == ("N999", "M999")
    finally:
        store.close()


def test_an_in_memory_transaction_that_reads_first_still_rolls_back_whole() -> None:
    # The in-memory store begins a transaction at its first write; what it read before stays
    # what it writes against, and a refusal undoes every write.
    store = SqlStore(MODEL, "sqlite://")
    try:
        store.load_base(BASE, "base")
        store.create_world("w", from_snapshot="base")

        def request() -> None:
            with store.transaction("w") as tx:
                assert tx.get("incident", "a") == {"number": "INC001"}
                tx.update("incident", "a", {"number": "INC009"})
                tx.next_sequence("incident.number", 1)
                tx.insert("incident", "c", {"number": "INC002"})  # b holds it

        with pytest.raises(ConflictError):
            request()
        with store.transaction("w") as tx:
            assert tx.get("incident", "a") == {"number": "INC001"}
            assert tx.next_sequence("incident.number", 1) == 1
        assert store.diff("w") == []
    finally:
        store.close()
