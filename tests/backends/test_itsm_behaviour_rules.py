"""Every behaviour rule issue #5 lists for the ITSM back end, served: each test shows the rule
accepting a write that keeps it and refusing (or correcting) one that breaks it, through the
runtime serving the shipped model, as an agent calling the Table API meets it.

The SLA timers have their own module (test_itsm_sla*.py); the rules here are the record rules.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.messages import MockResponse
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import EntryValues, Evidence, ServiceModel, StateMachine

TABLE = "/api/now/table"
AGENT = ("itil.agent", "itil-password")
RESOLUTION = {"close_code": "Solved (Permanently)", "close_notes": "Replaced the toner."}
NOWHERE = "0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def mock() -> Mock:
    model = builtin_model("itsm")
    return Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users=dict([AGENT])))


@pytest.fixture
def api(mock: Mock) -> MockClient:
    world = f"rules-{uuid.uuid4().hex[:12]}"
    mock.store.create_world(world)
    return MockClient(mock, auth=AGENT, world=world, base_url="https://example.service-now.com")


def result(response: MockResponse) -> Any:
    return json.loads(response.body)["result"]


def error(response: MockResponse) -> str:
    return str(json.loads(response.body)["error"]["detail"])


def create(api: MockClient, table: str, **values: str) -> dict[str, Any]:
    response = api.post(f"{TABLE}/{table}", json=values)
    assert response.status == 201, response.body
    record = result(response)
    assert isinstance(record, dict)
    return record


def incident(api: MockClient, **values: str) -> str:
    """A new incident's item path."""
    record = create(api, "incident", short_description="printer jam", **values)
    return f"{TABLE}/incident/{record['sys_id']}"


def test_the_incident_state_model_allows_its_transitions_and_refuses_others(
    api: MockClient,
) -> None:
    path = incident(api)
    assert api.patch(path, json={"state": "2"}).status == 200  # New -> In Progress
    # In Progress -> Closed skips Resolved, even with the resolution the data policy wants.
    skipped = api.patch(path, json={"state": "7", **RESOLUTION})
    assert skipped.status == 400
    assert error(skipped) == "incident.state cannot change from 2 (In Progress) to 7 (Closed)"


def test_resolving_needs_a_resolution_code_and_notes(api: MockClient) -> None:
    path = incident(api)
    refused = api.patch(path, json={"state": "6", "close_code": RESOLUTION["close_code"]})
    assert (refused.status, error(refused)) == (
        403,
        "Data Policy Exception: \n\tThe following fields are mandatory: Resolution notes",
    )
    resolved = result(api.patch(path, json={"state": "6", **RESOLUTION}))
    assert (resolved["state"], resolved["incident_state"]) == ("6", "6")
    assert resolved["resolved_at"] != ""


def test_on_hold_needs_a_hold_reason(api: MockClient) -> None:
    path = incident(api)
    assert api.patch(path, json={"state": "3"}).status == 403
    assert result(api.patch(path, json={"state": "3", "hold_reason": "1"}))["state"] == "3"


def test_a_resolved_incident_reopens_but_a_closed_one_is_read_only(api: MockClient) -> None:
    path = incident(api)
    api.patch(path, json={"state": "6", **RESOLUTION})
    reopened = result(api.patch(path, json={"state": "2"}))
    assert (reopened["state"], reopened["reopen_count"], reopened["resolved_at"]) == ("2", "1", "")
    api.patch(path, json={"state": "6", **RESOLUTION})
    closed = result(api.patch(path, json={"state": "7"}))
    assert (closed["state"], closed["active"]) == ("7", "false")
    for change in ({"state": "2"}, {"work_notes": "one more thing"}):
        refused = api.patch(path, json=change)
        assert (refused.status, error(refused)) == (
            403,
            "ACL Exception Update Failed due to security constraints",
        )


@pytest.mark.parametrize(
    ("impact", "urgency", "priority"),
    [("1", "1", "1"), ("1", "2", "2"), ("2", "2", "3"), ("3", "2", "4"), ("3", "3", "5")],
)
def test_priority_is_derived_from_impact_and_urgency_whatever_the_client_sends(
    api: MockClient, impact: str, urgency: str, priority: str
) -> None:
    # A priority sent beside them is overruled, as the platform's lookup rule overrules it.
    path = incident(api, impact=impact, urgency=urgency, priority="1" if priority != "1" else "5")
    assert result(api.get(path))["priority"] == priority


def test_the_assignee_must_be_a_member_of_the_assignment_group(api: MockClient) -> None:
    member = create(api, "sys_user", user_name="ana.li", first_name="Ana", last_name="Li")
    outsider = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    group = create(api, "sys_user_group", name="Network")
    create(api, "sys_user_grmember", user=member["sys_id"], group=group["sys_id"])
    path = incident(api)
    refused = api.patch(
        path, json={"assignment_group": group["sys_id"], "assigned_to": outsider["sys_id"]}
    )
    assert refused.status == 403
    assigned = result(
        api.patch(path, json={"assignment_group": group["sys_id"], "assigned_to": member["sys_id"]})
    )
    assert assigned["assigned_to"]["value"] == member["sys_id"]


def test_work_notes_and_comments_land_in_the_journal_and_a_refused_write_adds_none(
    api: MockClient,
) -> None:
    path = incident(api)
    sys_id = path.rsplit("/", 1)[1]
    api.patch(path, json={"work_notes": "Rebooted the print server.", "comments": "On it."})
    # Refused (resolving without notes): its work note must not reach the journal.
    api.patch(path, json={"state": "6", "work_notes": "Should not be kept."})
    journal = api.get(
        f"{TABLE}/sys_journal_field",
        params={
            "sysparm_query": f"element_id={sys_id}^ORDERBYelement",
            "sysparm_fields": "element,value",
        },
    )
    assert result(journal) == [
        {"element": "comments", "value": "On it."},
        {"element": "work_notes", "value": "Rebooted the print server."},
    ]


def test_every_field_change_is_audited_and_a_refused_one_is_not(api: MockClient) -> None:
    path = incident(api)
    sys_id = path.rsplit("/", 1)[1]
    api.patch(path, json={"short_description": "toner low"})
    api.patch(path, json={"state": "6", "short_description": "refused"})
    audit = api.get(
        f"{TABLE}/sys_audit",
        params={
            "sysparm_query": f"documentkey={sys_id}",
            "sysparm_fields": "fieldname,oldvalue,newvalue",
        },
    )
    assert result(audit) == [
        {"fieldname": "short_description", "oldvalue": "printer jam", "newvalue": "toner low"}
    ]


def test_a_change_is_scheduled_only_once_approved(api: MockClient) -> None:
    change = create(api, "change_request", short_description="Upgrade the core switch")
    path = f"{TABLE}/change_request/{change['sys_id']}"
    refused = api.patch(path, json={"state": "-2"})
    assert (refused.status, error(refused)) == (
        403,
        f"Change {change['number']} cannot move to Scheduled: it has not been approved",
    )
    api.patch(path, json={"state": "-4"})  # Assess
    authorizing = result(api.patch(path, json={"state": "-3"}))
    assert authorizing["approval"] == "requested"
    approved = result(api.patch(path, json={"approval": "approved"}))
    assert (approved["state"], approved["approval"]) == ("-2", "approved")


def test_a_rejected_change_goes_back_to_new(api: MockClient) -> None:
    change = create(api, "change_request", short_description="Retire the old VPN")
    path = f"{TABLE}/change_request/{change['sys_id']}"
    api.patch(path, json={"state": "-4"})
    api.patch(path, json={"state": "-3"})
    assert result(api.patch(path, json={"approval": "rejected"}))["state"] == "-5"


def test_an_incident_links_to_an_existing_problem_only(api: MockClient) -> None:
    problem = create(api, "problem", short_description="Print server memory leak")
    refused = api.post(
        f"{TABLE}/incident", json={"short_description": "printer jam", "problem_id": NOWHERE}
    )
    assert refused.status == 400
    assert (
        error(refused) == f"incident.problem_id refers to problem {NOWHERE}, which does not exist"
    )
    path = incident(api, problem_id=problem["sys_id"])
    linked = api.get(
        f"{TABLE}/incident",
        params={"sysparm_query": f"problem_id={problem['sys_id']}", "sysparm_fields": "sys_id"},
    )
    assert result(linked) == [{"sys_id": path.rsplit("/", 1)[1]}]


def test_a_record_created_without_a_mandatory_field_is_a_data_policy_refusal(
    api: MockClient,
) -> None:
    refused = api.post(f"{TABLE}/change_task", json={"short_description": "Back up the config"})
    assert (refused.status, error(refused)) == (
        403,
        "Data Policy Exception: \n\tThe following fields are mandatory: Change request",
    )
    change = create(api, "change_request", short_description="Upgrade the core switch")
    task = create(
        api, "change_task", short_description="Back up the config", change_request=change["sys_id"]
    )
    assert task["change_request"]["value"] == change["sys_id"]


def edited_api(edit: Callable[[ServiceModel], None]) -> MockClient:
    """A client of the shipped model after `edit`, as a reviewer editing model.yaml makes it."""
    model = builtin_model("itsm").model_copy(deep=True)
    edit(model)
    mock = Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users=dict([AGENT])))
    mock.store.create_world("edited")
    return MockClient(mock, auth=AGENT, world="edited", base_url="https://example.service-now.com")


def machine(model: ServiceModel, resource: str, field: str) -> StateMachine:
    return next(m for m in model.resources[resource].state_machines if m.field == field)


def test_incident_state_follows_state_as_the_model_says(api: MockClient) -> None:
    path = incident(api)
    assert result(api.get(path))["incident_state"] == "1"
    assert result(api.patch(path, json={"state": "3", "hold_reason": "1"}))["incident_state"] == "3"

    def unpinned(model: ServiceModel) -> None:
        machine(model, "incident", "state").sets_on_entry.clear()

    edited = edited_api(unpinned)
    record = create(edited, "incident", short_description="printer jam")
    # Without the fact, nothing moves incident_state past the value it is created with.
    moved = edited.patch(f"{TABLE}/incident/{record['sys_id']}", json={"state": "2"})
    assert result(moved)["incident_state"] == record["incident_state"]


def test_what_entering_an_incident_state_sets_is_the_model_s_to_change() -> None:
    note = "Resolved by the service desk"

    def pinned(model: ServiceModel) -> None:
        machine(model, "incident", "incident_state").sets_on_entry["6"] = EntryValues(
            values={"description": note}, evidence=Evidence(pinned=True)
        )

    edited = edited_api(pinned)
    path = f"{TABLE}/incident/{create(edited, 'incident', short_description='jam')['sys_id']}"
    resolved = result(edited.patch(path, json={"state": "6", **RESOLUTION}))
    assert (resolved["incident_state"], resolved["description"]) == ("6", note)


def test_a_closed_change_is_inactive_because_the_model_says_so(api: MockClient) -> None:
    def closing_keeps_it_active(model: ServiceModel) -> None:
        entries = machine(model, "change_request", "state").sets_on_entry
        entries["4"] = EntryValues(values={}, evidence=Evidence(pinned=True))

    for client, active in ((api, "false"), (edited_api(closing_keeps_it_active), "true")):
        change = create(client, "change_request", short_description="Retire the old VPN")
        canceled = client.patch(f"{TABLE}/change_request/{change['sys_id']}", json={"state": "4"})
        assert (result(canceled)["state"], result(canceled)["active"]) == ("4", active)


@pytest.mark.parametrize(("state", "label"), [("4", "Closed Incomplete"), ("7", "Closed Skipped")])
def test_a_catalog_request_and_its_item_close_incomplete_or_skipped(
    api: MockClient, state: str, label: str
) -> None:
    request = create(api, "sc_request", short_description="New laptop")
    item = create(api, "sc_req_item", short_description="Laptop", request=request["sys_id"])
    closed_item = result(api.patch(f"{TABLE}/sc_req_item/{item['sys_id']}", json={"state": state}))
    assert (closed_item["state"], closed_item["active"], closed_item["stage"]) == (
        state,
        "false",
        "complete",
    )
    path = f"{TABLE}/sc_request/{request['sys_id']}"
    closed = result(api.patch(path, json={"state": state}, params={"sysparm_display_value": "all"}))
    assert closed["state"] == {"display_value": label, "value": state}
    assert closed["active"]["value"] == "false"
    assert closed["closed_at"]["value"] != ""
    assert closed["request_state"]["value"] == "closed_incomplete"
    # Reopened (the task reopener), it is active again.
    assert result(api.patch(path, json={"state": "2"}))["active"] == "true"


def test_a_catalog_request_has_no_state_outside_the_task_states(api: MockClient) -> None:
    request = create(api, "sc_request", short_description="New laptop")
    refused = api.patch(f"{TABLE}/sc_request/{request['sys_id']}", json={"state": "6"})
    assert refused.status == 400
    assert error(refused) == "sc_request.state has no state 6"


@pytest.mark.parametrize(
    ("table", "values"),
    [
        ("incident", {"caller_id": ""}),
        ("problem", {}),
        ("sc_request", {}),
        ("cmdb_ci_server", {"ip_address": "10.0.0.7"}),
        ("sys_user", {"first_name": "Ana"}),
    ],
)
def test_no_data_policy_makes_a_description_or_name_mandatory(
    api: MockClient, table: str, values: dict[str, str]
) -> None:
    created = api.post(f"{TABLE}/{table}", json=values)
    assert created.status == 201, created.body


def test_a_value_a_column_does_not_take_is_refused_naming_table_and_column(
    api: MockClient,
) -> None:
    path = incident(api)
    refused = api.patch(path, json={"impact": {"a": 1}})
    assert refused.status == 400
    assert json.loads(refused.body) == {
        "error": {
            "message": "Invalid value for incident.impact",
            "detail": "incident.impact: {'a': 1} is not a value this column takes",
        },
        "status": "failure",
    }
    # A bad query parameter keeps its own words: it is no column.
    listed = api.get(f"{TABLE}/incident", params={"sysparm_limit": "-1"})
    assert listed.status == 400
    assert "incident." not in error(listed)
