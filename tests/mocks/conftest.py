"""Mocks of the hand-written ServiceNow-like model (`myna.mocks.example`) for the runtime tests:
two known users in the default world's base, Basic credentials, a fixed clock and a seed."""

from __future__ import annotations

import pytest

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.example import INCIDENT, SYS_USER, TABLE, servicenow_example
from myna.mocks.sqlstore import SqlStore

USER = ("admin", "secret")
ADMIN_TOKEN = "admin-token-for-tests"
ALICE = "a" * 32
BOB = "b" * 32
FIXED_NOW = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


def users_snapshot(store: SqlStore) -> str:
    users = [
        ("sys_user", ALICE, {"sys_id": ALICE, "user_name": "alice", "name": "Alice Adams"}),
        ("sys_user", BOB, {"sys_id": BOB, "user_name": "bob", "name": "Bob Brown"}),
    ]
    return store.load_base(iter(users), "users")


def build_mock(*, strict: bool = True) -> Mock:
    model = servicenow_example()
    store = SqlStore(model, "sqlite://")
    store.create_world("default", from_snapshot=users_snapshot(store))
    return Mock(
        model,
        store,
        credentials=Credentials.parse([f"{USER[0]}:{USER[1]}", "agent-token"]),
        admin_token=ADMIN_TOKEN,
        strict=strict,
        clock=lambda: FIXED_NOW,
        seed=7,
    )


@pytest.fixture
def mock() -> Mock:
    return build_mock()


@pytest.fixture
def client(mock: Mock) -> MockClient:
    return MockClient(mock, auth=USER)


@pytest.fixture
def admin(mock: Mock) -> MockClient:
    return MockClient(mock, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


@pytest.fixture
def incident(client: MockClient) -> dict[str, object]:
    response = client.post(
        f"{TABLE}/incident",
        json={"short_description": "Printer on fire", "caller_id": ALICE},
    )
    assert response.status == 201, response.json()
    record: dict[str, object] = response.json()["result"]
    return record


__all__ = ["ADMIN_TOKEN", "ALICE", "BOB", "INCIDENT", "SYS_USER", "TABLE", "USER", "build_mock"]
