"""Mounted roots (`SqlStore.mount_snapshot`): a world on a root read from a store file where it
lies answers every read, list, write, fork, reset and diff exactly as the same world on the root
loaded into its own database, and the process holds only the root's ids."""

from __future__ import annotations

import hashlib
import shutil
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest.mock import patch

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from myna.mocks import sqlstore
from myna.mocks.query import Condition, Query, SortKey
from myna.mocks.sqlstore import SqlStore
from myna.mocks.store import ConflictError, NotFoundError, Record
from myna.schemas.model import ServiceModel
from tests.mocks.test_store_keys import IDS, RECORDS, STEPS, VALUES, model, play


def store_file(schema: ServiceModel, directory: Path) -> Path:
    """A new SQLite file holding a store's tables, empty. Copied from a file whose tables were
    made once per directory and model: a store's tables made anew cost a synced write per
    statement, which made up most of a Hypothesis example here."""
    digest = hashlib.sha256(schema.model_dump_json().encode()).hexdigest()[:16]
    template = directory / f"template-{digest}.db"
    if not template.exists():
        SqlStore(schema, f"sqlite:///{template}").close()
    path = directory / f"{uuid.uuid4().hex}.db"
    shutil.copyfile(template, path)
    return path


def mounted(
    schema: ServiceModel, records: list[tuple[str, str, Record]], name: str, directory: Path
) -> SqlStore:
    """An in-memory store on root `name` of a store file holding the records."""
    path = store_file(schema, directory)
    source = SqlStore(schema, f"sqlite:///{path}")
    source.load_base(records, name, sequences={"ticket.n": 7})
    source.close()
    store = SqlStore(schema, "sqlite://")
    store.mount_snapshot(path, name)
    return store


def loaded(schema: ServiceModel, records: list[tuple[str, str, Record]], name: str) -> SqlStore:
    store = SqlStore(schema, "sqlite://")
    store.load_base(records, name, sequences={"ticket.n": 7})
    return store


def seen(store: SqlStore, world: str, query: Query) -> Any:
    """What a world shows: every record, a list, one record, a counter and its diff."""
    with patch.object(sqlstore, "_SQL_FROM", 0), store.transaction(world) as tx:
        shown = (
            list(tx.all("ticket")),
            tx.list("ticket", query),
            tx.get("ticket", "r1"),
            tx.next_sequence("ticket.n", 1),
        )
    return shown, store.diff(world)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.dictionaries(IDS, RECORDS, max_size=5),
    steps=STEPS,
    field=st.sampled_from(["owner", "n", "note"]),
    value=VALUES,
    descending=st.none() | st.booleans(),
)
def test_a_world_on_a_mounted_root_answers_as_on_a_loaded_one(
    tmp_path: Path,
    base: dict[str, dict[str, Any]],
    steps: list[tuple[str, str, dict[str, Any]]],
    field: str,
    value: Any,
    descending: bool | None,
) -> None:
    """Both stores run the same steps (writes, forks that layer snapshots on the root, resets)
    and lists take the SQL path, the narrowed one and the scan alike."""
    records = [("ticket", i, {"id": i, **r}) for i, r in base.items()]
    order = () if descending is None else (SortKey("note", descending=descending),)
    query = Query(where=Condition(field, "=", value), order_by=order, limit=3)
    answers = []
    for store in (loaded(model(), records, "base"), mounted(model(), records, "base", tmp_path)):
        store.create_world("w0", from_snapshot="base")
        answers.append(seen(store, play(store, steps), query))
        store.close()
    assert answers[0] == answers[1]


def test_a_mounted_root_keeps_ids_not_records_in_memory(tmp_path: Path) -> None:
    records = [("ticket", f"r{n}", {"id": f"r{n}", "owner": f"o{n % 3}"}) for n in range(50)]
    store = mounted(model(), records, "base", tmp_path)
    store.create_world("w", from_snapshot="base")
    with store.transaction("w") as tx:
        assert tx.list("ticket", Query(limit=2))[1] == 50
        layer = tx._base()
    assert layer is not None
    assert not any(isinstance(rows, dict) for rows in layer.rows.values())
    assert sum(len(parsed) for parsed in layer.parsed.values()) == 2
    store.close()


def test_a_query_file_keeps_the_columns_a_mount_filled_for_later_mounts(tmp_path: Path) -> None:
    records = [("ticket", f"r{n}", {"id": f"r{n}", "owner": f"o{n % 3}"}) for n in range(30)]
    path = tmp_path / "base.db"
    source = SqlStore(model(), f"sqlite:///{path}")
    source.load_base(records, "base")
    source.close()
    query = Query(where=Condition("owner", "=", "o1"), order_by=(SortKey("id"),), limit=4)
    answers = []
    for reads_records in (True, False):
        store = SqlStore(model(), "sqlite://")
        store.mount_snapshot(path, "base", queries=tmp_path / "base.queries")
        store.create_world("w", from_snapshot="base")
        with ExitStack() as stack:
            stack.enter_context(patch.object(sqlstore, "_SQL_FROM", 0))
            if not reads_records:
                unread = patch.object(sqlstore._Mount, "texts", side_effect=AssertionError)
                stack.enter_context(unread)
            with store.transaction("w") as tx:
                answers.append(tx.list("ticket", query))
        store.close()
    ids = [f"r{n}" for n in range(30) if n % 3 == 1]
    assert answers[0] == answers[1]
    assert [r["id"] for r in answers[0][0]] == sorted(ids)[:4]
    assert answers[0][1] == len(ids)


def test_a_mount_refuses_what_is_not_a_root_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "base.db"
    source = SqlStore(model(), f"sqlite:///{path}")
    source.load_base([("ticket", "r1", {"id": "r1"})], "base")
    source.create_world("w", from_snapshot="base")
    with source.transaction("w") as tx:
        tx.insert("ticket", "r2", {"id": "r2"})
    source.snapshot("w", "layered")
    source.close()
    store = SqlStore(model(), "sqlite://")
    for name in ("missing", "layered"):
        with pytest.raises(NotFoundError):
            store.mount_snapshot(path, name)
    store.mount_snapshot(path, "base")
    with pytest.raises(ConflictError):
        store.mount_snapshot(path, "base")
    store.close()


def test_a_shared_database_copies_what_it_cannot_mount(tmp_path: Path) -> None:
    """Other processes on a shared database could not read this process's mount."""
    records = [("ticket", "r1", {"id": "r1", "owner": "ann"})]
    source = SqlStore(model(), f"sqlite:///{tmp_path / 'base.db'}")
    source.load_base(records, "base")
    source.close()
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    mounting = SqlStore(model(), shared)
    mounting.mount_snapshot(tmp_path / "base.db", "base")
    mounting.close()
    (tmp_path / "base.db").unlink()
    other = SqlStore(model(), shared)
    other.create_world("w", from_snapshot="base")
    with other.transaction("w") as tx:
        assert tx.get("ticket", "r1") == {"id": "r1", "owner": "ann"}
    other.close()
