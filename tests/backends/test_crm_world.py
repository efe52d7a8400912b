"""The consistent CRM world shipped as seed files: reproduced from the reference org, and served
by the `salesforce` extension with every platform rule holding in it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import as_file, files
from typing import Any

import pytest

from myna.backends import builtin_model
from myna.backends.crm.corpus import initial_records
from myna.backends.crm.instance import ADMIN
from myna.backends.crm.objects import STAGES
from myna.backends.crm.world import reference_world, seed_files
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.seed import read_files, seed_from_files
from myna.mocks.sqlstore import SqlStore

SHIPPED = files("myna.backends.crm").joinpath("reference_world")
DATA = "/services/data/v59.0"
SESSION = "00D5g000004ExAmE!AQ0AQworld"


@pytest.fixture(scope="module")
def api() -> MockClient:
    model = builtin_model("crm")
    store = SqlStore(model, "sqlite://")
    with as_file(SHIPPED) as directory:
        snapshot = seed_from_files(model, store, directory)
    store.create_world("reference", from_snapshot=snapshot)
    mock = Mock(model, store, credentials=Credentials(tokens=frozenset({SESSION})))
    return MockClient(mock, headers={"Authorization": f"Bearer {SESSION}"}, world="reference")


def records(api: MockClient, soql: str, endpoint: str = "query") -> list[dict[str, Any]]:
    answer = api.get(f"{DATA}/{endpoint}/", params={"q": soql})
    assert answer.status == 200, answer.body
    found: list[dict[str, Any]] = json.loads(answer.body)["records"]
    return found


def test_regenerating_the_world_reproduces_the_shipped_seed_files() -> None:
    written = seed_files(reference_world())
    shipped = {
        item.name: item.read_text(encoding="utf-8")
        for item in SHIPPED.iterdir()
        if item.name.endswith(".jsonl")
    }
    assert written == shipped, (
        "regenerate: python -m myna.backends.crm.world -o myna/backends/crm/reference_world"
    )


def test_every_opportunity_carries_its_stage_s_flags(api: MockClient) -> None:
    deals = records(api, "SELECT StageName, IsClosed, IsWon FROM Opportunity")
    assert {deal["IsClosed"] for deal in deals} == {True, False}
    for deal in deals:
        stage = deal["StageName"]
        assert stage in STAGES
        assert (deal["IsClosed"], deal["IsWon"]) == (
            stage.startswith("Closed"),
            stage == "Closed Won",
        )


def test_every_reference_names_a_record_of_the_world(api: MockClient) -> None:
    for soql, relationship in (
        ("SELECT Account.Name FROM Contact WHERE AccountId != null", "Account"),
        ("SELECT Account.Name FROM Opportunity WHERE AccountId != null", "Account"),
        ("SELECT Opportunity.Name FROM OpportunityLineItem", "Opportunity"),
        ("SELECT Owner.Name FROM Case", "Owner"),
    ):
        for record in records(api, soql):
            assert record[relationship] is not None, (soql, record)


def test_a_closed_case_has_a_reason_and_an_escalated_one_its_flag(api: MockClient) -> None:
    cases = records(api, "SELECT Status, Reason, IsClosed, IsEscalated FROM Case")
    assert any(case["Status"] == "Closed" for case in cases)
    for case in cases:
        assert case["IsClosed"] == (case["Status"] == "Closed")
        if case["Status"] == "Closed":
            assert case["Reason"] is not None
        if case["Status"] == "Escalated":
            assert case["IsEscalated"] is True


def test_a_converted_lead_points_at_what_it_became_and_refuses_edits(api: MockClient) -> None:
    (lead,) = records(
        api, "SELECT Id, ConvertedAccount.Name, Company FROM Lead WHERE IsConverted = true"
    )
    assert lead["ConvertedAccount"]["Name"] == lead["Company"]
    refused = api.patch(f"{DATA}/sobjects/Lead/{lead['Id']}", json={"Title": "CTO"})
    assert json.loads(refused.body)[0]["errorCode"] == "CANNOT_UPDATE_CONVERTED_LEAD"


def test_the_recycle_bin_is_seen_by_query_all_only(api: MockClient) -> None:
    soql = "SELECT Id FROM Lead WHERE IsDeleted = true"
    assert records(api, soql) == []
    assert records(api, soql, "queryAll") != []


def test_every_access_reference_names_a_record_of_the_world(api: MockClient) -> None:
    for soql, relationships in (
        ("SELECT Profile.Name, UserRole.Name, UserRoleId FROM User", ("Profile",)),
        ("SELECT Group.DeveloperName FROM GroupMember", ("Group",)),
        ("SELECT Assignee.Username, PermissionSet.Label FROM PermissionSetAssignment", ()),
        ("SELECT Profile.Name FROM PermissionSet WHERE IsOwnedByProfile = true", ("Profile",)),
        ("SELECT Related.Name FROM Group WHERE RelatedId != null", ("Related",)),
    ):
        for record in records(api, soql):
            for relationship in relationships or ("Assignee", "PermissionSet"):
                assert record[relationship] is not None, (soql, record)
            if record.get("UserRoleId") is not None:
                assert record["UserRole"] is not None, record
    roles = {role["Id"] for role in records(api, "SELECT Id FROM UserRole")}
    for role in records(api, "SELECT ParentRoleId FROM UserRole WHERE ParentRoleId != null"):
        assert role["ParentRoleId"] in roles


def test_every_role_has_its_two_sharing_groups(api: MockClient) -> None:
    groups = records(api, "SELECT RelatedId, Type FROM Group WHERE RelatedId != null")
    kinds: dict[str, list[str]] = {}
    for group in groups:
        kinds.setdefault(group["RelatedId"], []).append(group["Type"])
    roles = records(api, "SELECT Id FROM UserRole")
    assert len(roles) >= 5
    assert {role["Id"]: sorted(kinds[role["Id"]]) for role in roles} == {
        role["Id"]: ["Role", "RoleAndSubordinates"] for role in roles
    }


def test_every_user_holds_its_profile_through_the_profile_s_permission_set(
    api: MockClient,
) -> None:
    owned = {
        permission_set["ProfileId"]: permission_set["Id"]
        for permission_set in records(
            api, "SELECT Id, ProfileId FROM PermissionSet WHERE IsOwnedByProfile = true"
        )
    }
    assignments = records(
        api,
        "SELECT AssigneeId, PermissionSetId FROM PermissionSetAssignment "
        "WHERE PermissionSet.IsOwnedByProfile = true",
    )
    held = {assignment["AssigneeId"]: assignment["PermissionSetId"] for assignment in assignments}
    assert len(held) == len(assignments)
    users = records(api, "SELECT Id, ProfileId FROM User")
    assert {user["Id"]: owned[user["ProfileId"]] for user in users} == held


def test_a_profile_s_permissions_are_those_of_the_set_it_owns(api: MockClient) -> None:
    fields = "PermissionsApiEnabled, PermissionsModifyAllData, PermissionsConvertLeads"
    profiles = {
        profile["Id"]: profile
        for profile in records(api, f"SELECT Id, Name, {fields} FROM Profile")
    }
    sets = records(
        api, f"SELECT ProfileId, {fields} FROM PermissionSet WHERE IsOwnedByProfile = true"
    )
    assert len(sets) == len(profiles)
    for permission_set in sets:
        profile = profiles[permission_set["ProfileId"]]
        for name in fields.split(", "):
            assert permission_set[name] == profile[name], (profile["Name"], name)
    granted = {
        profile["Name"]: profile["PermissionsModifyAllData"] for profile in profiles.values()
    }
    assert (granted["System Administrator"], granted["Standard User"]) == (True, False)


def shipped_records() -> dict[str, list[dict[str, Any]]]:
    """The reference world as `myna serve crm` reads it: the shipped seed files."""
    with as_file(SHIPPED) as directory:
        loaded = read_files(builtin_model("crm"), directory)
    found: dict[str, list[dict[str, Any]]] = {}
    for name, _, record in loaded.records:
        found.setdefault(name, []).append(dict(record))
    return found


@pytest.mark.parametrize(
    "seed",
    [
        pytest.param(shipped_records, id="reference-world"),
        pytest.param(initial_records, id="before-the-corpus"),
    ],
)
def test_the_org_has_one_profile_of_each_name_and_every_user_s_profile_exists(
    seed: Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]],
) -> None:
    # An access review looks profiles up by Name and counts who holds each: a second profile
    # of a standard name (one nobody holds) is an org no live Salesforce org looks like.
    records = seed()
    names = Counter(profile["Name"] for profile in records["Profile"])
    assert [name for name, seen in names.items() if seen > 1] == []
    assert {"System Administrator", "Standard User", "Read Only"} <= set(names)
    profiles = {profile["Id"]: profile["Name"] for profile in records["Profile"]}
    users = sorted(records["User"], key=lambda user: str(user["Id"]))
    assert [user["Username"] for user in users if user["ProfileId"] not in profiles] == []
    # The org's first user, who made the System Administrator profile, holds it.
    assert (users[0]["Username"], profiles[users[0]["ProfileId"]]) == (
        ADMIN[0],
        "System Administrator",
    )


def test_an_access_review_finds_one_administrator_profile_held_by_the_administrators(
    api: MockClient,
) -> None:
    (profile,) = records(api, "SELECT Id FROM Profile WHERE Name = 'System Administrator'")
    holders = records(api, f"SELECT Username FROM User WHERE ProfileId = '{profile['Id']}'")
    assert sorted(user["Username"] for user in holders) == sorted([ADMIN[0], "admin@acme.example"])
