"""World isolation as a property: any sequence of writes, forks, resets and snapshots leaves
every world exactly where a naive copy-everything implementation would."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import settings
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from myna.mocks.query import Query
from myna.mocks.sqlstore import SqlStore
from myna.mocks.store import ConflictError, NotFoundError
from myna.schemas.model import IdFormat, Resource, ServiceModel

MODEL = ServiceModel(
    name="worlds",
    resources={
        "ticket": Resource(
            name="ticket", id_field="id", id_format=IdFormat(kind="opaque"), unique=["number"]
        )
    },
)

State = dict[str, dict[str, Any]]  # record id -> record, for the one resource
RECORD_IDS = st.sampled_from(["a", "b", "c", "d", "e"])
NUMBERS = st.sampled_from(["N1", "N2", "N3", "N4", "N5", "N6"])
WORLD_NAMES = st.sampled_from(["w0", "w1", "w2", "w3"])


def taken(state: State, record_id: str, number: str) -> bool:
    return any(r["number"] == number for i, r in state.items() if i != record_id)


class WorldsMachine(RuleBasedStateMachine):
    """The store against a reference that copies whole states on every fork and snapshot."""

    url = "sqlite://"

    def __init__(self) -> None:
        super().__init__()
        self.store = SqlStore(MODEL, self.url, prefix=f"w{uuid.uuid4().hex[:8]}_")
        # Every record ever written carries a distinct `v`, so states compare by sorting on it.
        base: State = {"a": {"number": "N1", "v": -1}, "b": {"number": "N2", "v": -2}}
        self.store.load_base([("ticket", i, r) for i, r in base.items()], "base")
        self.snapshots: dict[str, State] = {"base": base}
        self.origin: dict[str, State] = {"w0": base}
        self.worlds: dict[str, State] = {"w0": copy.deepcopy(base)}
        self.store.create_world("w0", from_snapshot="base")
        self.counter = 0

    def teardown(self) -> None:
        self.store.drop()

    def _pick(self, data: st.DataObject) -> str:
        return data.draw(st.sampled_from(sorted(self.worlds)))

    @rule(data=st.data(), record_id=RECORD_IDS, number=NUMBERS)
    def insert(self, data: st.DataObject, record_id: str, number: str) -> None:
        world = self._pick(data)
        state = self.worlds[world]
        record = {"number": number, "v": self.counter}
        self.counter += 1
        if record_id in state or taken(state, record_id, number):
            try:
                with self.store.transaction(world) as tx:
                    tx.insert("ticket", record_id, record)
            except ConflictError:
                return
            raise AssertionError(f"insert of {record_id} {number} in {world} was accepted")
        with self.store.transaction(world) as tx:
            tx.insert("ticket", record_id, record)
        state[record_id] = record

    @rule(data=st.data(), record_id=RECORD_IDS, number=NUMBERS)
    def update(self, data: st.DataObject, record_id: str, number: str) -> None:
        world = self._pick(data)
        state = self.worlds[world]
        record = {"number": number, "v": self.counter}
        self.counter += 1
        expected: type[Exception] | None = None
        if record_id not in state:
            expected = NotFoundError
        elif taken(state, record_id, number):
            expected = ConflictError
        if expected is not None:
            try:
                with self.store.transaction(world) as tx:
                    tx.update("ticket", record_id, record)
            except expected:
                return
            raise AssertionError(f"update of {record_id} in {world} was accepted")
        with self.store.transaction(world) as tx:
            tx.update("ticket", record_id, record)
        state[record_id] = record

    @rule(data=st.data(), record_id=RECORD_IDS)
    def delete(self, data: st.DataObject, record_id: str) -> None:
        world = self._pick(data)
        state = self.worlds[world]
        if record_id not in state:
            try:
                with self.store.transaction(world) as tx:
                    tx.delete("ticket", record_id)
            except NotFoundError:
                return
            raise AssertionError(f"delete of absent {record_id} in {world} was accepted")
        with self.store.transaction(world) as tx:
            tx.delete("ticket", record_id)
        del state[record_id]

    @precondition(lambda self: len(self.worlds) < 4)
    @rule(data=st.data(), new=WORLD_NAMES)
    def fork(self, data: st.DataObject, new: str) -> None:
        if new in self.worlds:
            return
        source = self._pick(data)
        self.store.fork_world(source, new)
        self.origin[new] = copy.deepcopy(self.worlds[source])
        self.worlds[new] = copy.deepcopy(self.worlds[source])

    @rule(data=st.data())
    def reset(self, data: st.DataObject) -> None:
        world = self._pick(data)
        self.store.reset_world(world)
        self.worlds[world] = copy.deepcopy(self.origin[world])

    @precondition(lambda self: len(self.worlds) < 4)
    @rule(data=st.data(), new=WORLD_NAMES)
    def snapshot_then_create(self, data: st.DataObject, new: str) -> None:
        if new in self.worlds:
            return
        world = self._pick(data)
        snapshot = self.store.snapshot(world)
        self.snapshots[snapshot] = copy.deepcopy(self.worlds[world])
        self.store.create_world(new, from_snapshot=snapshot)
        self.origin[new] = copy.deepcopy(self.worlds[world])
        self.worlds[new] = copy.deepcopy(self.worlds[world])

    @precondition(lambda self: len(self.worlds) > 1)
    @rule(data=st.data())
    def delete_world(self, data: st.DataObject) -> None:
        world = self._pick(data)
        self.store.delete_world(world)
        del self.worlds[world]
        del self.origin[world]

    @invariant()
    def every_world_holds_its_own_state(self) -> None:
        for world, state in self.worlds.items():
            with self.store.transaction(world) as tx:
                records, total = tx.list("ticket", Query())
                assert total == len(state)
                assert sorted(records, key=lambda r: r["v"]) == sorted(
                    state.values(), key=lambda r: r["v"]
                )
                assert all(tx.get("ticket", i) == r for i, r in state.items())

    @invariant()
    def diffs_match_the_reference(self) -> None:
        for world, state in self.worlds.items():
            origin = self.origin[world]
            expected = {
                i: (origin.get(i), state.get(i))
                for i in origin.keys() | state.keys()
                if origin.get(i) != state.get(i)
            }
            got = {c.record_id: (c.before, c.after) for c in self.store.diff(world)}
            assert got == expected
            against_base = {c.record_id: c.after for c in self.store.diff(world, against="base")}
            base = self.snapshots["base"]
            changed = {i for i in base.keys() | state.keys() if base.get(i) != state.get(i)}
            assert set(against_base) == changed


TestWorlds = WorldsMachine.TestCase
TestWorlds.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)


@pytest.mark.postgres
def test_worlds_on_postgresql(postgres_url: str) -> None:
    """The same property on PostgreSQL, with fewer examples (each one creates its tables)."""
    machine = type("PostgresWorlds", (WorldsMachine,), {"url": postgres_url})
    run_state_machine_as_test(
        machine, settings=settings(max_examples=4, stateful_step_count=20, deadline=None)
    )


def test_write_and_fork_pairs_store_each_write_a_logarithmic_number_of_times(
    store_url: str,
) -> None:
    """A world that writes and is forked, again and again (a training loop checkpointing an
    episode), stores O(n log n) rows over n pairs: a fork freezes what was written since the
    last one instead of every write the world ever made (n^2 / 2 = 32,896 rows here)."""
    store = SqlStore(MODEL, store_url)
    store.load_base([("ticket", "a", {"number": "N0"})], "base")
    store.create_world("w", from_snapshot="base")
    pairs = 256
    try:
        for n in range(pairs):
            with store.transaction("w") as tx:
                tx.insert("ticket", f"t{n}", {"number": f"N{n + 1}"})
            store.fork_world("w", f"f{n}")
        with store._cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {store.prefix}layer")
            stored_rows = cursor.fetchone()[0] - 1  # the base's one row
        for n in (0, 1, 100, pairs - 1):
            with store.transaction(f"f{n}", writes=False) as tx:
                assert [i for i, _ in tx.all("ticket")] == ["a"] + [f"t{k}" for k in range(n + 1)]
        assert stored_rows <= pairs * 9  # log2(256) + 1 copies of each row at most
        store.reset_world("w")
        with store.transaction("w", writes=False) as tx:
            assert [i for i, _ in tx.all("ticket")] == ["a"]
    finally:
        store.drop()


def test_a_fork_keeps_every_record_in_its_place(store_url: str) -> None:
    store = SqlStore(MODEL, store_url)
    store.load_base([("ticket", i, {"number": i}) for i in "abc"], "base")
    store.create_world("w", from_snapshot="base")

    def order(world: str) -> list[str]:
        with store.transaction(world, writes=False) as tx:
            records, _ = tx.list("ticket", Query())
        return [str(record["number"]) for record in records]

    try:
        with store.transaction("w") as tx:
            tx.update("ticket", "a", {"number": "a2"})
            tx.insert("ticket", "d", {"number": "d"})
        assert order("w") == ["a2", "b", "c", "d"]
        store.fork_world("w", "f")
        with store.transaction("f") as tx:
            tx.update("ticket", "b", {"number": "b2"})
        store.fork_world("f", "g")
        assert (order("w"), order("f"), order("g")) == (
            ["a2", "b", "c", "d"],
            ["a2", "b2", "c", "d"],
            ["a2", "b2", "c", "d"],
        )
    finally:
        store.drop()
