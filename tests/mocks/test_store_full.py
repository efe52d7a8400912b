"""A full database answers 503 in the service's shape (the admin API in its own), writes nothing
of the refused request, and serves again once there is room. SQLite's `max_page_count` stands
in for a full disk: SQLite answers both with SQLITE_FULL."""

from __future__ import annotations

from pathlib import Path

import psycopg.errors

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.example import TABLE, servicenow_example
from myna.mocks.sqlstore import SqlStore, _full
from myna.mocks.store import StoreFullError
from tests.mocks.conftest import ADMIN_TOKEN, USER

INCIDENTS = f"{TABLE}/incident"


def _fill(store: SqlStore, extra_pages: int) -> None:
    driver = store._sqlite_driver
    pages = driver.execute("PRAGMA page_count").fetchone()[0]
    driver.execute(f"PRAGMA max_page_count = {pages + extra_pages}")


def test_a_full_database_answers_503_and_serves_again_once_there_is_room(tmp_path: Path) -> None:
    model = servicenow_example()
    store = SqlStore(model, f"sqlite:///{tmp_path / 'full.db'}")
    mock = Mock(
        model, store, credentials=Credentials.parse([":".join(USER)]), admin_token=ADMIN_TOKEN
    )
    client = MockClient(mock, auth=USER)
    admin = MockClient(mock, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    try:
        _fill(store, 2)
        statuses = []
        for n in range(200):
            response = client.post(
                INCIDENTS, json={"short_description": f"n{n}", "description": "x" * 4000}
            )
            statuses.append(response.status)
            if response.status != 201:
                break
        assert statuses[-1] == 503, statuses
        assert response.json()["status"] == "failure"
        assert "full" in response.json()["error"]["message"]
        written = statuses.count(201)
        assert int(client.get(INCIDENTS).header("X-Total-Count") or -1) == written

        forked = admin.post("/_myna/admin/worlds", json={"id": "copy", "fork_of": "default"})
        assert forked.status == 503
        assert forked.json()["error"]["kind"] == "store_full"

        _fill(store, 1000)
        assert client.post(INCIDENTS, json={"short_description": "room again"}).status == 201
        assert (
            admin.post("/_myna/admin/worlds", json={"id": "copy", "fork_of": "default"}).status
            == 201
        )
    finally:
        store.close()


def test_postgresql_out_of_room_is_the_same_error() -> None:
    store = SqlStore(servicenow_example(), "sqlite://")
    try:
        full = _full(
            store, psycopg.errors.DiskFull("could not extend file: No space left on device")
        )
        assert isinstance(full, StoreFullError)
        assert "No space left" in full.message
        assert _full(store, psycopg.errors.UniqueViolation("duplicate key")) is None
    finally:
        store.close()
