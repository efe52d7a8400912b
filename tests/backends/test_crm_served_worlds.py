"""Worlds of the mock `myna serve crm` runs (the reference world), forked per test as replay
forks one per attempt: a world changes only by what a client writes, ids are never handed out
twice, and a reset world starts over."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import count
from typing import Any

import pytest

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.cli import served_mock
from myna.mocks.query import Query
from myna.mocks.runtime import DEFAULT_WORLD
from myna.mocks.sqlstore import SqlStore

DATA = "/services/data/v59.0"
TOKEN = "myna-token"
ADMIN_TOKEN = "crm-served-admin"
ADMINISTRATOR = "System Administrator"
SALES_REP = ("maya.chen@acme.example", "maya-password")
_WORLDS = count()


@pytest.fixture(scope="module")
def mock() -> Iterator[Mock]:
    credentials = Credentials(users=dict([SALES_REP]), tokens=frozenset({TOKEN}))
    # Forks as replay makes them, in process: the worlds are open to the shared credentials.
    served = served_mock("crm", admin_token=ADMIN_TOKEN, credentials=credentials, open_worlds=True)
    yield served
    assert isinstance(served.store, SqlStore)
    served.store.close()


@pytest.fixture
def world(mock: Mock) -> str:
    name = f"attempt-{next(_WORLDS)}"
    mock.store.fork_world(DEFAULT_WORLD, name)
    return name


def client(mock: Mock, world: str, token: str = TOKEN) -> MockClient:
    return MockClient(
        mock,
        headers={"Authorization": f"Bearer {token}"},
        world=world,
        base_url="https://acme.my.salesforce.com",
    )


def query(api: MockClient, soql: str, **headers: str) -> dict[str, Any]:
    answer = api.get(f"{DATA}/query/", params={"q": soql}, headers=headers)
    assert answer.status == 200, answer.body
    found: dict[str, Any] = json.loads(answer.body)
    return found


def seeded(mock: Mock, name: str) -> list[dict[str, Any]]:
    """The records of the world every attempt forks, by Id."""
    with mock.store.transaction(DEFAULT_WORLD) as tx:
        records, _ = tx.list(name, Query())
    return sorted(records, key=lambda record: str(record["Id"]))


# -- a read leaves the world as it was -----------------------------------------------------------


def test_reading_a_fresh_world_writes_nothing(mock: Mock, world: str) -> None:
    api = client(mock, world)
    assert api.get(f"{DATA}/sobjects/Account/describe").status == 200
    assert api.get(f"{DATA}/sobjects").status == 200
    account = query(api, "SELECT Id FROM Account LIMIT 1")["records"][0]["Id"]
    assert api.get(f"{DATA}/sobjects/Account/{account}").status == 200
    assert api.get(f"{DATA}/limits").status == 200
    assert mock.store.diff(world) == []


def test_an_access_review_counts_only_the_org_s_own_users(mock: Mock, world: str) -> None:
    api = client(mock, world)
    users = query(api, "SELECT Username FROM User")["records"]
    assert sorted(user["Username"] for user in users) == sorted(
        user["Username"] for user in seeded(mock, "User")
    )
    admins = query(
        api,
        "SELECT Id FROM PermissionSetAssignment "
        "WHERE PermissionSet.Profile.Name = 'System Administrator'",
    )
    assert admins["totalSize"] == sum(
        1 for user in seeded(mock, "User") if user["ProfileId"] == _profile(mock, ADMINISTRATOR)
    )


def _profile(mock: Mock, name: str) -> str:
    """The seeded profile named `name` (an org has one of each name)."""
    (found,) = [row["Id"] for row in seeded(mock, "Profile") if row["Name"] == name]
    return str(found)


def test_a_token_caller_acts_as_the_org_s_first_active_administrator(
    mock: Mock, world: str
) -> None:
    api = client(mock, world)
    created = api.post(f"{DATA}/sobjects/Account/", json={"Name": "Globex"})
    assert created.status == 201, created.body
    account = json.loads(api.get(f"{DATA}/sobjects/Account/{json.loads(created.body)['id']}").body)
    administrator = next(
        user
        for user in seeded(mock, "User")
        if user["IsActive"] and user["ProfileId"] == _profile(mock, ADMINISTRATOR)
    )
    assert account["CreatedById"] == account["OwnerId"] == administrator["Id"]
    assert {change.resource for change in mock.store.diff(world)} == {"Account"}


def test_a_caller_named_as_a_user_acts_as_that_user(mock: Mock, world: str) -> None:
    username, password = SALES_REP
    granted = client(mock, world).post(
        "/services/oauth2/token",
        content=f"grant_type=password&username={username}&password={password}".encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert granted.status == 200, granted.body
    api = client(mock, world, json.loads(granted.body)["access_token"])
    created = api.post(f"{DATA}/sobjects/Task/", json={"Subject": "Call back"})
    assert created.status == 201, created.body
    task = json.loads(api.get(f"{DATA}/sobjects/Task/{json.loads(created.body)['id']}").body)
    user = next(row for row in seeded(mock, "User") if row["Username"] == username)
    assert task["CreatedById"] == user["Id"]


# -- ids ------------------------------------------------------------------------------------------


def test_an_id_is_never_handed_out_twice_even_after_its_record_is_deleted(
    mock: Mock, world: str
) -> None:
    api = client(mock, world)
    groups = [row["Id"] for row in seeded(mock, "Group")]
    last = groups[-1]
    assert api.delete(f"{DATA}/sobjects/Group/{last}").status == 204
    created = api.post(f"{DATA}/sobjects/Group/", json={"Name": "Renewals", "Type": "Regular"})
    assert created.status == 201, created.body
    new_id = json.loads(created.body)["id"]
    assert new_id not in groups
    assert new_id[:15] > max(group[:15] for group in groups)


def test_two_forks_of_one_world_mint_the_same_ids(mock: Mock) -> None:
    minted = []
    for _ in range(2):
        name = f"attempt-{next(_WORLDS)}"
        mock.store.fork_world(DEFAULT_WORLD, name)
        created = client(mock, name).post(
            f"{DATA}/sobjects/Lead/", json={"LastName": "Ng", "Company": "Initech"}
        )
        minted.append(json.loads(created.body)["id"])
    assert minted[0] == minted[1]


# -- query cursors -------------------------------------------------------------------------------


def test_a_reset_world_cannot_page_through_the_previous_attempt_s_results(
    mock: Mock, world: str
) -> None:
    api = client(mock, world)
    first = query(api, "SELECT Id FROM Lead", **{"Sforce-Query-Options": "batchSize=200"})
    assert first["done"] is False
    admin = MockClient(mock, headers={"X-Myna-Admin-Token": ADMIN_TOKEN})
    assert admin.post(f"/_myna/admin/worlds/{world}/reset").status == 200
    stale = api.get(first["nextRecordsUrl"])
    assert (stale.status, json.loads(stale.body)[0]["errorCode"]) == (
        400,
        "INVALID_QUERY_LOCATOR",
    )


def test_a_cursor_pages_on_while_its_world_lives(mock: Mock, world: str) -> None:
    api = client(mock, world)
    first = query(api, "SELECT Id FROM Lead", **{"Sforce-Query-Options": "batchSize=200"})
    rest = json.loads(api.get(first["nextRecordsUrl"]).body)
    assert rest["done"] is True
    assert len(first["records"]) + len(rest["records"]) == first["totalSize"]


# -- access objects ------------------------------------------------------------------------------


def test_a_permission_set_a_profile_owns_is_not_assigned_to_anyone_else(
    mock: Mock, world: str
) -> None:
    api = client(mock, world)
    standard = _profile(mock, "Standard User")
    owned = next(row["Id"] for row in seeded(mock, "PermissionSet") if row["ProfileId"] == standard)
    administrator = next(row["Id"] for row in seeded(mock, "User") if row["ProfileId"] != standard)
    response = api.post(
        f"{DATA}/sobjects/PermissionSetAssignment/",
        json={"PermissionSetId": owned, "AssigneeId": administrator},
    )
    assert response.status == 400, response.body
    (entry,) = json.loads(response.body)
    assert (entry["errorCode"], entry["fields"]) == (
        "INVALID_CROSS_REFERENCE_KEY",
        ["PermissionSetId"],
    )
    assert mock.store.diff(world) == []
