"""The `servicenow` extension on the shipped ITSM model: each rule accepted and refused.

test_itsm_protocol.py checks PROTOCOL.md clause by clause; these are the other side of those
rules (the write a rule lets through), and the parts of the batch, attachment and OAuth APIs a
client meets when something goes wrong.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.messages import MockRequest
from myna.mocks.sqlstore import SqlStore

TABLE = "/api/now/table"
AGENT = ("itil.agent", "itil-password")
CLIENT = ("integration-client", "integration-secret")


@pytest.fixture(scope="module")
def mock() -> Mock:
    model = builtin_model("itsm")
    credentials = Credentials(users=dict([AGENT, CLIENT]))
    return Mock(model, SqlStore(model, "sqlite://"), credentials=credentials)


@pytest.fixture
def api(mock: Mock, request: pytest.FixtureRequest) -> MockClient:
    world = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:60]
    mock.store.create_world(world)
    return MockClient(mock, auth=AGENT, world=world, base_url="https://example.service-now.com")


def create(api: MockClient, table: str, **values: str) -> dict[str, Any]:
    response = api.post(f"{TABLE}/{table}", json=values)
    assert response.status == 201, response.json()
    result: dict[str, Any] = response.json()["result"]
    return result


def incident(api: MockClient, **values: str) -> dict[str, Any]:
    return create(api, "incident", short_description="mail down", **values)


def test_an_assignee_who_is_a_member_of_the_group_is_accepted(api: MockClient) -> None:
    user = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    group = create(api, "sys_user_group", name="Network")
    create(api, "sys_user_grmember", user=user["sys_id"], group=group["sys_id"])
    response = api.patch(
        f"{TABLE}/incident/{incident(api)['sys_id']}",
        json={"assignment_group": group["sys_id"], "assigned_to": user["sys_id"]},
    )
    assert response.status == 200


def test_an_outsider_is_refused_with_the_names_of_person_and_group(api: MockClient) -> None:
    user = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    member = create(api, "sys_user", user_name="ana.li", first_name="Ana", last_name="Li")
    group = create(api, "sys_user_group", name="Network")
    create(api, "sys_user_grmember", user=member["sys_id"], group=group["sys_id"])
    response = api.post(
        f"{TABLE}/incident",
        json={
            "short_description": "x",
            "assignment_group": group["sys_id"],
            "assigned_to": user["sys_id"],
        },
    )
    assert response.status == 403
    assert response.json()["error"] == {
        "message": "Operation Failed",
        "detail": "Invalid update: Ben Ng is not a member of assignment group Network",
    }


def test_a_group_whose_members_the_world_does_not_hold_is_not_judged(api: MockClient) -> None:
    user = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    group = create(api, "sys_user_group", name="Network")
    response = api.patch(
        f"{TABLE}/incident/{incident(api)['sys_id']}",
        json={"assignment_group": group["sys_id"], "assigned_to": user["sys_id"]},
    )
    assert response.status == 200


def test_resolving_with_the_resolution_fields_is_accepted(api: MockClient) -> None:
    path = f"{TABLE}/incident/{incident(api)['sys_id']}"
    resolved = api.patch(
        path, json={"state": "6", "close_code": "Solution provided", "close_notes": "Reset."}
    )
    assert (resolved.status, resolved.json()["result"]["incident_state"]) == (200, "6")


@pytest.mark.parametrize(
    ("impact", "urgency", "priority"),
    [("1", "1", "1"), ("1", "3", "3"), ("2", "2", "3"), ("3", "3", "5")],
    ids=["1x1", "1x3", "2x2", "3x3"],
)
def test_priority_follows_impact_and_urgency_on_update_too(
    api: MockClient, impact: str, urgency: str, priority: str
) -> None:
    path = f"{TABLE}/incident/{incident(api, impact='2', urgency='3')['sys_id']}"
    updated = api.patch(path, json={"impact": impact, "urgency": urgency}).json()["result"]
    assert updated["priority"] == priority


def test_display_value_all_labels_choices_and_keeps_internal_timestamps(api: MockClient) -> None:
    record = incident(api, impact="1", urgency="1")
    shown = api.get(
        f"{TABLE}/incident/{record['sys_id']}",
        params={"sysparm_display_value": "all", "sysparm_fields": "state,priority,opened_at"},
    ).json()["result"]
    assert shown["state"] == {"display_value": "New", "value": "1"}
    assert shown["priority"] == {"display_value": "1 - Critical", "value": "1"}
    opened = shown["opened_at"]
    assert opened["value"] == opened["display_value_internal"] == record["opened_at"]


def test_the_v1_table_path_and_an_unknown_table_under_it(api: MockClient) -> None:
    record = incident(api)
    assert api.get(f"/api/now/v1/table/incident/{record['sys_id']}").status == 200
    missing = api.get("/api/now/v1/table/no_such_table")
    assert (missing.status, missing.json()["error"]["message"]) == (
        400,
        "Invalid table no_such_table",
    )


def test_a_batch_answers_each_inner_refusal_in_place(api: MockClient) -> None:
    record = incident(api)

    def encoded(value: object) -> str:
        return base64.b64encode(json.dumps(value).encode()).decode()

    requests = [
        {"id": "ok", "method": "PATCH", "url": f"{TABLE}/incident/{record['sys_id']}"}
        | {"body": encoded({"urgency": "1"})},
        {"id": "refused", "method": "PATCH", "url": f"{TABLE}/incident/{record['sys_id']}"}
        | {"body": encoded({"state": "6"})},
        {"id": "gone", "method": "DELETE", "url": f"{TABLE}/incident/{'0' * 32}"},
    ]
    answer = api.post(
        "/api/now/v1/batch", json={"batch_request_id": 7, "rest_requests": requests}
    ).json()
    served = {item["id"]: item for item in answer["serviced_requests"]}
    assert answer["batch_request_id"] == "7"
    assert {key: item["status_code"] for key, item in served.items()} == {
        "ok": 200,
        "refused": 403,
        "gone": 404,
    }
    refusal = json.loads(base64.b64decode(served["refused"]["body"]))
    assert refusal["error"]["message"] == "Operation Failed"


def test_a_batch_unpacks_into_the_requests_it_serves(mock: Mock) -> None:
    """The batch route says what it carries, so a policy can judge each inner request."""
    inner = [
        {"id": "1", "method": "delete", "url": f"{TABLE}/incident/{'a' * 32}?sysparm_x=1"},
        {"id": "2", "method": "POST", "url": "/api/now/v1/batch", "body": _b64({"x": 1})},
    ]
    outer = MockRequest(
        "POST",
        "/api/now/batch",
        headers={"authorization": "Basic eA==", "x-myna-world": "w"},
        body=json.dumps({"rest_requests": inner}).encode(),
    )
    unpacked = mock.extensions.unpack(outer)
    assert [(r.method, r.path, r.query, r.body) for r in unpacked] == [
        ("DELETE", f"{TABLE}/incident/{'a' * 32}", [("sysparm_x", "1")], b""),
        ("POST", "/api/now/v1/batch", [], b'{"x": 1}'),
    ]
    assert all(r.headers["x-myna-world"] == "w" for r in unpacked)
    assert mock.extensions.unpack(MockRequest("GET", f"{TABLE}/incident")) == []


@pytest.mark.parametrize(
    "item",
    [{"method": "GET"}, {"method": "PATCH", "url": f"{TABLE}/incident", "body": "%%not64"}],
    ids=["no-url", "bad-base64"],
)
def test_one_bad_batch_item_serves_none(api: MockClient, item: dict[str, str]) -> None:
    record = incident(api)
    first = {"method": "PATCH", "url": f"{TABLE}/incident/{record['sys_id']}"}
    first["body"] = _b64({"urgency": "1"})
    answer = api.post("/api/now/v1/batch", json={"rest_requests": [first, item]})
    assert answer.status == 400
    assert api.get(f"{TABLE}/incident/{record['sys_id']}").json()["result"]["urgency"] == "3"


def _b64(value: object) -> str:
    return base64.b64encode(json.dumps(value).encode()).decode()


def test_a_batch_without_credentials_is_the_recorded_401(mock: Mock) -> None:
    response = MockClient(mock).post("/api/now/v1/batch", json={"rest_requests": []})
    assert response.status == 401


def test_an_attachment_is_listed_read_and_deleted_with_its_bytes(api: MockClient) -> None:
    record = incident(api)
    uploaded = api.post(
        "/api/now/attachment/file",
        params={"file_name": "a.txt", "table_name": "incident", "table_sys_id": record["sys_id"]},
        content=b"hello",
        headers={"Content-Type": "text/plain"},
    )
    meta = uploaded.json()["result"]
    assert (meta["size_bytes"], meta["content_type"]) == ("5", "text/plain")
    listed = api.get(
        "/api/now/attachment",
        params={"sysparm_query": f"table_name=incident^table_sys_id={record['sys_id']}"},
    )
    assert [row["file_name"] for row in listed.json()["result"]] == ["a.txt"]
    downloaded = api.get(f"/api/now/attachment/{meta['sys_id']}/file")
    assert (downloaded.body, downloaded.header("Content-Type")) == (b"hello", "text/plain")
    assert api.delete(f"/api/now/attachment/{meta['sys_id']}").status == 204
    assert api.get(f"/api/now/attachment/{meta['sys_id']}/file").status == 404


def test_an_upload_to_a_record_that_does_not_exist_is_refused(api: MockClient) -> None:
    response = api.post(
        "/api/now/attachment/file",
        params={"file_name": "a.txt", "table_name": "incident", "table_sys_id": "0" * 32},
        content=b"hello",
    )
    assert response.status == 400


def _token(api: MockClient, **form: str) -> Any:
    return api.post(
        "/oauth_token.do",
        content=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": ""},
    )


def test_client_credentials_get_no_refresh_token(api: MockClient) -> None:
    granted = _token(
        api, grant_type="client_credentials", client_id=CLIENT[0], client_secret=CLIENT[1]
    ).json()
    assert set(granted) == {"access_token", "scope", "token_type", "expires_in"}


def test_a_refreshed_token_authenticates_and_an_unknown_refresh_token_is_refused(
    api: MockClient,
) -> None:
    granted = _token(api, grant_type="password", username=AGENT[0], password=AGENT[1]).json()
    refreshed = _token(api, grant_type="refresh_token", refresh_token=granted["refresh_token"])
    bearer = {"Authorization": f"Bearer {refreshed.json()['access_token']}"}
    assert api.get(f"{TABLE}/incident", headers=bearer).status == 200
    assert _token(api, grant_type="refresh_token", refresh_token="forged").status == 401


def test_resolving_then_closing_stamps_who_and_when_and_deactivates(api: MockClient) -> None:
    agent = create(api, "sys_user", user_name=AGENT[0], first_name="Ida", last_name="Agent")
    opened = incident(api)
    assert opened["opened_by"]["value"] == agent["sys_id"]
    path = f"{TABLE}/incident/{opened['sys_id']}"
    resolution = {"close_code": "Solution provided", "close_notes": "Reset."}
    resolved = api.patch(path, json={"state": "6", **resolution}).json()["result"]
    closed = api.patch(path, json={"state": "7"}).json()["result"]
    assert resolved["resolved_at"] != ""
    assert resolved["resolved_by"]["value"] == closed["closed_by"]["value"] == agent["sys_id"]
    assert (closed["active"], closed["closed_at"] != "") == ("false", True)


def test_a_closed_incident_refuses_every_update_a_resolved_one_accepts(api: MockClient) -> None:
    path = f"{TABLE}/incident/{incident(api)['sys_id']}"
    api.patch(path, json={"state": "6", "close_code": "Solution provided", "close_notes": "x"})
    assert api.patch(path, json={"description": "more detail"}).status == 200
    api.patch(path, json={"state": "7"})
    refused = api.patch(path, json={"description": "after closing"})
    assert (refused.status, refused.json()["error"]["detail"]) == (
        403,
        "ACL Exception Update Failed due to security constraints",
    )


def test_a_change_is_scheduled_by_its_approval_and_not_before(api: MockClient) -> None:
    change = create(api, "change_request", short_description="patch the VPN concentrator")
    path = f"{TABLE}/change_request/{change['sys_id']}"
    for state in ("-4", "-3"):
        assert api.patch(path, json={"state": state}).status == 200
    early = api.patch(path, json={"state": "-2"})
    assert (early.status, early.json()["error"]["detail"]) == (
        403,
        f"Change {change['number']} cannot move to Scheduled: it has not been approved",
    )
    approved = api.patch(path, json={"approval": "approved"}).json()["result"]
    assert (approved["state"], approved["approval"]) == ("-2", "approved")


def test_a_rejected_change_goes_back_to_new(api: MockClient) -> None:
    change = create(api, "change_request", short_description="swap the core switch")
    path = f"{TABLE}/change_request/{change['sys_id']}"
    api.patch(path, json={"state": "-4"})
    assert api.patch(path, json={"state": "-3"}).json()["result"]["approval"] == "requested"
    assert api.patch(path, json={"approval": "rejected"}).json()["result"]["state"] == "-5"


def test_a_reference_into_a_table_the_model_does_not_serve_is_kept(api: MockClient) -> None:
    company = "0" * 31 + "1"
    record = incident(api, company=company)
    shown = api.get(
        f"{TABLE}/incident/{record['sys_id']}",
        params={"sysparm_fields": "company", "sysparm_display_value": "all"},
    ).json()["result"]
    assert shown["company"]["value"] == company


def test_a_reference_to_a_missing_record_of_a_served_table_is_refused(api: MockClient) -> None:
    response = api.post(f"{TABLE}/incident", json={"short_description": "x", "caller_id": "0" * 32})
    assert response.status == 400


# -- SLA timers: the instance's rules (instance.sla_*) on the served mock --------------------

# 2026-03-02 09:00:00 UTC; the clock below moves only when a test moves it.
SLA_START = 1772442000.0
HOLD = {"state": "3", "hold_reason": "1"}
RESOLVE = {"state": "6", "close_code": "Solved (Permanently)", "close_notes": "fixed"}


class Clock:
    """A clock a test advances by hand, so SLA deadlines pass when the test says."""

    def __init__(self) -> None:
        self.now = SLA_START

    def __call__(self) -> float:
        return self.now

    def advance(self, hours: float) -> None:
        self.now += hours * 3600


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed(clock: Clock) -> MockClient:
    model = builtin_model("itsm")
    credentials = Credentials(users=dict([AGENT]))
    mock = Mock(model, SqlStore(model, "sqlite://"), credentials=credentials, clock=clock)
    mock.store.create_world("sla")
    return MockClient(mock, auth=AGENT, world="sla", base_url="https://example.service-now.com")


def slas(api: MockClient, task_id: str) -> list[dict[str, Any]]:
    query = {"sysparm_query": f"task={task_id}^ORDERBYsys_created_on"}
    response = api.get(f"{TABLE}/task_sla", params=query)
    assert response.status == 200
    result: list[dict[str, Any]] = response.json()["result"]
    return result


def patch(api: MockClient, record_id: str, **values: str) -> dict[str, Any]:
    response = api.patch(f"{TABLE}/incident/{record_id}", json=values)
    assert response.status == 200, response.json()
    result: dict[str, Any] = response.json()["result"]
    return result


def test_creating_an_incident_starts_the_sla_of_its_priority(timed: MockClient) -> None:
    created = incident(timed, impact="1", urgency="1")
    (sla,) = slas(timed, created["sys_id"])
    assert sla["stage"] == "in_progress"
    assert sla["has_breached"] == "false"
    assert sla["start_time"] == "2026-03-02 09:00:00"
    assert sla["planned_end_time"] == "2026-03-02 13:00:00"  # priority 1: four hours
    assert sla["time_left"] == "1970-01-01 04:00:00"
    assert created["sla_due"] == "2026-03-02 13:00:00"


def test_on_hold_pauses_the_sla_and_leaving_it_moves_the_deadline(
    timed: MockClient, clock: Clock
) -> None:
    record_id = incident(timed, impact="1", urgency="1")["sys_id"]
    clock.advance(1)
    patch(timed, record_id, **HOLD)
    (paused,) = slas(timed, record_id)
    assert (paused["stage"], paused["pause_time"]) == ("paused", "2026-03-02 10:00:00")
    assert paused["duration"] == "1970-01-01 01:00:00"
    clock.advance(5)  # past the original deadline, but the clock was stopped
    patch(timed, record_id, state="2")
    (resumed,) = slas(timed, record_id)
    assert (resumed["stage"], resumed["pause_time"]) == ("in_progress", "")
    assert resumed["pause_duration"] == "1970-01-01 05:00:00"
    assert resumed["planned_end_time"] == "2026-03-02 18:00:00"
    assert resumed["has_breached"] == "false"


def test_resolving_completes_the_sla_in_time(timed: MockClient, clock: Clock) -> None:
    record_id = incident(timed, impact="1", urgency="1")["sys_id"]
    clock.advance(2)
    patch(timed, record_id, **RESOLVE)
    (sla,) = slas(timed, record_id)
    assert (sla["stage"], sla["active"]) == ("completed", "false")
    assert (sla["end_time"], sla["has_breached"]) == ("2026-03-02 11:00:00", "false")


def test_resolving_straight_from_on_hold_resumes_then_completes(
    timed: MockClient, clock: Clock
) -> None:
    record_id = incident(timed, impact="1", urgency="1")["sys_id"]
    patch(timed, record_id, **HOLD)
    clock.advance(6)
    patch(timed, record_id, **RESOLVE)
    (sla,) = slas(timed, record_id)
    assert (sla["stage"], sla["has_breached"]) == ("completed", "false")
    assert sla["pause_duration"] == "1970-01-01 06:00:00"


def test_a_write_after_the_deadline_marks_the_sla_breached(timed: MockClient, clock: Clock) -> None:
    record_id = incident(timed, impact="1", urgency="1")["sys_id"]
    clock.advance(3)
    patch(timed, record_id, short_description="still down")
    (sla,) = slas(timed, record_id)
    assert (sla["has_breached"], sla["percentage"]) == ("false", "75.00")
    clock.advance(2)
    patch(timed, record_id, short_description="still down, 5h in")
    (sla,) = slas(timed, record_id)
    assert (sla["stage"], sla["has_breached"]) == ("in_progress", "true")
    assert sla["time_left"] == "1970-01-01 00:00:00"
    assert sla["percentage"] == "125.00"


def test_resolving_late_completes_the_sla_breached(timed: MockClient, clock: Clock) -> None:
    record_id = incident(timed, impact="1", urgency="1")["sys_id"]
    clock.advance(4.5)
    patch(timed, record_id, **RESOLVE)
    (sla,) = slas(timed, record_id)
    assert (sla["stage"], sla["has_breached"]) == ("completed", "true")


def test_a_new_priority_cancels_the_sla_and_starts_the_new_one(
    timed: MockClient, clock: Clock
) -> None:
    record_id = incident(timed, impact="3", urgency="3")["sys_id"]
    clock.advance(1)
    updated = patch(timed, record_id, impact="1", urgency="1")
    cancelled, started = slas(timed, record_id)
    assert (cancelled["stage"], cancelled["end_time"]) == ("cancelled", "2026-03-02 10:00:00")
    assert (started["stage"], started["planned_end_time"]) == ("in_progress", "2026-03-02 14:00:00")
    assert updated["sla_due"] == "2026-03-02 14:00:00"


def test_deleting_an_incident_deletes_its_slas(timed: MockClient) -> None:
    record_id = incident(timed)["sys_id"]
    assert timed.delete(f"{TABLE}/incident/{record_id}").status == 204
    assert slas(timed, record_id) == []
