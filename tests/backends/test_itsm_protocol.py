"""PROTOCOL.md, clause by clause, against the runtime serving the shipped ITSM model (in process).

Each test is one statement of the contract a Table API client relies on. Where the runtime does
not meet it yet the test is a strict `xfail` whose reason says what it does instead: that list is
the runtime's to-do for ServiceNow fidelity, and a fix shows up as an unexpected pass.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import urlencode

import pytest

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.messages import MockResponse
from myna.mocks.sqlstore import SqlStore

TABLE = "/api/now/table"
AGENT = ("itil.agent", "itil-password")
UNKNOWN = "0123456789abcdef0123456789abcdef"
STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


@pytest.fixture(scope="module")
def mock() -> Mock:
    model = builtin_model("itsm")
    return Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users=dict([AGENT])))


@pytest.fixture
def api(mock: Mock, request: pytest.FixtureRequest) -> MockClient:
    world = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:60]
    mock.store.create_world(world)
    return MockClient(mock, auth=AGENT, world=world, base_url="https://example.service-now.com")


def body(response: MockResponse) -> dict[str, object]:
    decoded = json.loads(response.body)
    assert isinstance(decoded, dict)
    return decoded


def create(api: MockClient, table: str = "incident", **values: str) -> dict[str, object]:
    defaults = {"short_description": "printer jam"} if table == "incident" else {}
    response = api.post(f"{TABLE}/{table}", json={**defaults, **values})
    assert response.status == 201, response.body
    result = body(response)["result"]
    assert isinstance(result, dict)
    return result


def header(response: MockResponse, name: str) -> str | None:
    return next((v for k, v in response.headers if k.lower() == name.lower()), None)


# -- §1 authentication -----------------------------------------------------------------------


def test_a_call_without_credentials_gets_the_recorded_401(mock: Mock) -> None:
    response = MockClient(mock).get(f"{TABLE}/incident")
    assert response.status == 401
    assert header(response, "WWW-Authenticate") == 'Basic realm="Service-now"'
    assert body(response) == {
        "error": {
            "message": "User Not Authenticated",
            "detail": "Required to provide Auth information",
        },
        "status": "failure",
    }


def _token(api: MockClient, **form: str) -> MockResponse:
    return api.post(
        "/oauth_token.do",
        content=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": ""},
    )


def test_the_password_grant_answers_like_servicenow(api: MockClient) -> None:
    granted = body(_token(api, grant_type="password", username=AGENT[0], password=AGENT[1]))
    assert set(granted) == {"access_token", "refresh_token", "scope", "token_type", "expires_in"}
    assert (granted["scope"], granted["token_type"]) == ("useraccount", "Bearer")


def test_a_refused_grant_answers_401_access_denied(api: MockClient) -> None:
    refused = _token(api, grant_type="password", username=AGENT[0], password="wrong")
    assert refused.status == 401
    assert body(refused) == {"error_description": "access_denied", "error": "server_error"}


def test_a_refresh_token_buys_a_new_access_token(api: MockClient) -> None:
    granted = body(_token(api, grant_type="password", username=AGENT[0], password=AGENT[1]))
    refreshed = _token(api, grant_type="refresh_token", refresh_token=str(granted["refresh_token"]))
    assert refreshed.status == 200


def test_a_bearer_token_from_the_token_endpoint_authenticates(api: MockClient) -> None:
    granted = body(_token(api, grant_type="password", username=AGENT[0], password=AGENT[1]))
    response = api.get(
        f"{TABLE}/incident", headers={"Authorization": f"Bearer {granted['access_token']}"}
    )
    assert response.status == 200


# -- §2 Table API verbs and records ------------------------------------------------------------


def test_create_answers_201_with_the_record_in_strings(api: MockClient) -> None:
    record = create(api)
    assert re.fullmatch(r"[0-9a-f]{32}", str(record["sys_id"]))
    assert re.fullmatch(r"INC\d{7}", str(record["number"]))
    assert record["sys_mod_count"] == "0"


def test_create_stamps_the_system_fields(api: MockClient) -> None:
    record = create(api)
    assert STAMP.fullmatch(str(record["sys_created_on"]))
    assert record["sys_created_on"] == record["sys_updated_on"]


def test_create_applies_the_insert_business_rules(api: MockClient) -> None:
    record = create(api, impact="1", urgency="1")
    assert (record["active"], record["priority"], record["incident_state"]) == ("true", "1", "1")
    assert STAMP.fullmatch(str(record["opened_at"]))


def test_patch_changes_only_the_fields_sent_and_counts_it(api: MockClient) -> None:
    record = create(api)
    response = api.patch(f"{TABLE}/incident/{record['sys_id']}", json={"urgency": "2"})
    updated = body(response)["result"]
    assert isinstance(updated, dict)
    assert (updated["urgency"], updated["short_description"]) == ("2", "printer jam")
    assert updated["sys_mod_count"] == "1"


def test_put_is_a_partial_update_too(api: MockClient) -> None:
    record = create(api)
    response = api.put(f"{TABLE}/incident/{record['sys_id']}", json={"urgency": "2"})
    updated = body(response)["result"]
    assert isinstance(updated, dict)
    assert updated["short_description"] == "printer jam"


def test_delete_answers_204_and_the_record_is_gone(api: MockClient) -> None:
    record = create(api)
    deleted = api.delete(f"{TABLE}/incident/{record['sys_id']}")
    assert (deleted.status, deleted.body) == (204, b"")
    assert api.get(f"{TABLE}/incident/{record['sys_id']}").status == 404


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
def test_an_unknown_sys_id_answers_the_documented_404(api: MockClient, method: str) -> None:
    response = api.request(
        method, f"{TABLE}/incident/{UNKNOWN}", json={} if method == "PATCH" else None
    )
    assert response.status == 404
    assert body(response) == {
        "error": {
            "message": "No Record found",
            "detail": "Record doesn't exist or ACL restricts the record retrieval",
        },
        "status": "failure",
    }


def test_fields_the_table_does_not_have_are_ignored(api: MockClient) -> None:
    response = api.post(f"{TABLE}/incident", json={"short_description": "x", "u_custom": "y"})
    assert response.status == 201
    assert "u_custom" not in body(response)["result"]  # type: ignore[operator]


def test_an_unknown_table_answers_400_invalid_table(api: MockClient) -> None:
    response = api.get(f"{TABLE}/incidents")
    assert response.status == 400
    assert body(response)["error"] == {"message": "Invalid table incidents", "detail": None}


def test_a_body_that_is_not_json_is_an_exception_while_reading(api: MockClient) -> None:
    response = api.post(
        f"{TABLE}/incident",
        content=b"short_description=x",
        headers={"Content-Type": "application/json"},
    )
    assert response.status == 400
    assert body(response)["error"]["message"] == "Exception while reading request"  # type: ignore[index]


def test_the_versioned_table_path_is_the_same_resource(api: MockClient) -> None:
    record = create(api)
    assert api.get(f"/api/now/v2/table/incident/{record['sys_id']}").status == 200


# -- §2.1 display values and references --------------------------------------------------------


def _caller_rendered(api: MockClient, **params: str) -> object:
    user = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    record = create(api, caller_id=str(user["sys_id"]))
    response = api.get(
        f"{TABLE}/incident/{record['sys_id']}", params={"sysparm_fields": "caller_id", **params}
    )
    result = body(response)["result"]
    assert isinstance(result, dict)
    return result["caller_id"]


def test_a_reference_is_a_link_and_a_value(api: MockClient) -> None:
    caller = _caller_rendered(api)
    assert isinstance(caller, dict)
    assert set(caller) == {"link", "value"}
    assert str(caller["link"]).endswith(f"/api/now/table/sys_user/{caller['value']}")


def test_exclude_reference_link_leaves_the_bare_id(api: MockClient) -> None:
    caller = _caller_rendered(api, sysparm_exclude_reference_link="true")
    assert isinstance(caller, str)


def test_display_value_true_shows_the_referenced_record_s_name(api: MockClient) -> None:
    caller = _caller_rendered(api, sysparm_display_value="true")
    assert isinstance(caller, dict)
    assert caller["display_value"] == "Ben Ng"


def test_display_value_all_gives_both(api: MockClient) -> None:
    caller = _caller_rendered(
        api, sysparm_display_value="all", sysparm_exclude_reference_link="true"
    )
    assert isinstance(caller, dict)
    assert set(caller) == {"display_value", "value"}


def test_dot_walked_fields_are_filled(api: MockClient) -> None:
    user = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    record = create(api, caller_id=str(user["sys_id"]))
    response = api.get(
        f"{TABLE}/incident/{record['sys_id']}",
        params={"sysparm_fields": "number,caller_id.user_name"},
    )
    assert body(response)["result"] == {"number": record["number"], "caller_id.user_name": "ben.ng"}


# -- §2.2-2.4 lists, paging, encoded queries ---------------------------------------------------


def test_a_list_carries_x_total_count_whatever_the_page(api: MockClient) -> None:
    for _ in range(3):
        create(api)
    response = api.get(f"{TABLE}/incident", params={"sysparm_limit": "2", "sysparm_offset": "2"})
    assert header(response, "X-Total-Count") == "3"
    assert len(body(response)["result"]) == 1  # type: ignore[arg-type]


def test_no_link_header_when_one_page_holds_everything(api: MockClient) -> None:
    create(api)
    assert header(api.get(f"{TABLE}/incident", params={"sysparm_limit": "10"}), "Link") is None


def test_suppressing_the_pagination_header_keeps_the_total(api: MockClient) -> None:
    for _ in range(3):
        create(api)
    response = api.get(
        f"{TABLE}/incident",
        params={"sysparm_limit": "1", "sysparm_suppress_pagination_header": "true"},
    )
    assert (header(response, "Link"), header(response, "X-Total-Count")) == (None, "3")


def test_the_link_header_matches_the_recorded_shape(api: MockClient) -> None:
    for _ in range(3):
        create(api)
    response = api.get(f"{TABLE}/incident", params={"sysparm_limit": "1"})
    rels = re.findall(r'sysparm_offset=(-?\d+)>;rel="(\w+)"', header(response, "Link") or "")
    assert rels == [("0", "first"), ("-1", "prev"), ("1", "next"), ("2", "last")]


def test_encoded_queries_filter_order_and_dot_walk(api: MockClient) -> None:
    user = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    for text, urgency in (("mail down", "1"), ("vpn down", "2"), ("mail slow", "3")):
        create(api, short_description=text, urgency=urgency, caller_id=str(user["sys_id"]))
    response = api.get(
        f"{TABLE}/incident",
        params={
            "sysparm_query": "caller_id.user_name=ben.ng^short_descriptionLIKEmail"
            "^ORDERBYDESCurgency",
            "sysparm_fields": "short_description",
        },
    )
    assert body(response)["result"] == [
        {"short_description": "mail slow"},
        {"short_description": "mail down"},
    ]


def test_an_unsupported_query_construct_answers_400(api: MockClient) -> None:
    response = api.get(
        f"{TABLE}/incident",
        params={"sysparm_query": "JOINincident.caller_id=sys_user.sys_id!user_name=x"},
    )
    assert response.status == 400


# -- §2.5 and §5 behaviour ---------------------------------------------------------------------


def test_resolving_without_resolution_fields_is_a_data_policy_403(api: MockClient) -> None:
    record = create(api)
    response = api.patch(f"{TABLE}/incident/{record['sys_id']}", json={"state": "6"})
    assert response.status == 403
    assert body(response)["error"] == {
        "message": "Operation Failed",
        "detail": "Data Policy Exception: \n\tThe following fields are mandatory: "
        "Resolution code, Resolution notes",
    }


def test_a_refused_write_changes_nothing(api: MockClient) -> None:
    record = create(api)
    path = f"{TABLE}/incident/{record['sys_id']}"
    refused = api.patch(path, json={"state": "6", "short_description": "changed"})
    assert refused.status >= 400
    after = body(api.get(path))["result"]
    assert isinstance(after, dict)
    assert (after["short_description"], after["sys_mod_count"]) == ("printer jam", "0")


def test_on_hold_needs_a_reason(api: MockClient) -> None:
    record = create(api)
    path = f"{TABLE}/incident/{record['sys_id']}"
    assert api.patch(path, json={"state": "3"}).status >= 400
    assert api.patch(path, json={"state": "3", "hold_reason": "1"}).status == 200


def test_every_field_change_is_audited(api: MockClient) -> None:
    record = create(api)
    api.patch(f"{TABLE}/incident/{record['sys_id']}", json={"urgency": "2"})
    audit = api.get(
        f"{TABLE}/sys_audit",
        params={
            "sysparm_query": f"documentkey={record['sys_id']}^ORDERBYfieldname",
            "sysparm_fields": "fieldname,oldvalue,newvalue,user",
        },
    )
    # Urgency 3 -> 2 moves the derived priority 5 -> 4: both changes are on record.
    assert body(audit)["result"] == [
        {"fieldname": "priority", "oldvalue": "5", "newvalue": "4", "user": AGENT[0]},
        {"fieldname": "urgency", "oldvalue": "3", "newvalue": "2", "user": AGENT[0]},
    ]


def test_work_notes_land_in_the_journal_and_show_as_its_text(api: MockClient) -> None:
    record = create(api)
    path = f"{TABLE}/incident/{record['sys_id']}"
    api.patch(path, json={"work_notes": "Rebooted the print server."})
    journal = api.get(
        f"{TABLE}/sys_journal_field",
        params={
            "sysparm_query": f"element_id={record['sys_id']}",
            "sysparm_fields": "element,value",
        },
    )
    assert body(journal)["result"] == [
        {"element": "work_notes", "value": "Rebooted the print server."}
    ]
    shown = body(api.get(path, params={"sysparm_display_value": "true"}))["result"]
    assert isinstance(shown, dict)
    assert str(shown["work_notes"]).endswith("(Work notes)\nRebooted the print server.\n\n")
    assert body(api.get(path))["result"]["work_notes"] == ""  # type: ignore[index]


def test_the_assignee_must_be_in_the_assignment_group(api: MockClient) -> None:
    user = create(api, "sys_user", user_name="ben.ng", first_name="Ben", last_name="Ng")
    member = create(api, "sys_user", user_name="ana.li", first_name="Ana", last_name="Li")
    group = create(api, "sys_user_group", name="Network")
    create(api, "sys_user_grmember", user=str(member["sys_id"]), group=str(group["sys_id"]))
    record = create(api)
    response = api.patch(
        f"{TABLE}/incident/{record['sys_id']}",
        json={"assignment_group": group["sys_id"], "assigned_to": user["sys_id"]},
    )
    assert response.status == 403


def test_a_cis_comments_are_a_plain_field_and_write_no_journal(api: MockClient) -> None:
    server = create(api, "cmdb_ci_server", name="win-file-01")
    path = f"{TABLE}/cmdb_ci_server/{server['sys_id']}"
    api.put(path, json={"comments": "Memory upgraded to 32 GB."})
    assert body(api.get(path))["result"]["comments"] == "Memory upgraded to 32 GB."  # type: ignore[index]
    journal = api.get(f"{TABLE}/sys_journal_field", params={"element_id": server["sys_id"]})
    assert body(journal)["result"] == []


def test_closing_a_catalog_request_stamps_who_closed_it_and_when(api: MockClient) -> None:
    agent = create(api, "sys_user", user_name=AGENT[0], first_name="Itil", last_name="Agent")
    request = create(api, "sc_request", short_description="New laptop")
    closed = body(api.patch(f"{TABLE}/sc_request/{request['sys_id']}", json={"state": "3"}))
    result = closed["result"]
    assert isinstance(result, dict)
    assert result["closed_by"]["value"] == agent["sys_id"]
    assert (result["active"], bool(STAMP.fullmatch(result["closed_at"]))) == ("false", True)


def test_an_incidents_sla_is_born_in_the_global_domain(api: MockClient) -> None:
    record = create(api)
    slas = body(api.get(f"{TABLE}/task_sla", params={"task": str(record["sys_id"])}))["result"]
    assert isinstance(slas, list)
    assert [sla["sys_domain"]["value"] for sla in slas] == ["global"]


# -- §2.6 the table hierarchy ----------------------------------------------------------------------


def configuration_items(api: MockClient) -> tuple[str, str, str]:
    """A server, an application and a plain CI: the sys_ids."""
    server = create(api, "cmdb_ci_server", name="lnx-db-01", os="Linux Red Hat")
    application = create(api, "cmdb_ci_appl", name="Payroll", version="2024.2")
    router = create(api, "cmdb_ci", name="rtr-core-01")
    return str(server["sys_id"]), str(application["sys_id"]), str(router["sys_id"])


def names_and_classes(api: MockClient, table: str) -> list[tuple[str, str]]:
    params = {"sysparm_fields": "name,sys_class_name"}
    result = body(api.get(f"{TABLE}/{table}", params=params))["result"]
    assert isinstance(result, list)
    return sorted((row["name"], row["sys_class_name"]) for row in result)


def test_the_parent_class_lists_its_childrens_records_and_a_child_only_its_own(
    api: MockClient,
) -> None:
    configuration_items(api)
    assert names_and_classes(api, "cmdb_ci") == [
        ("Payroll", "cmdb_ci_appl"),
        ("lnx-db-01", "cmdb_ci_server"),
        ("rtr-core-01", "cmdb_ci"),
    ]
    assert names_and_classes(api, "cmdb_ci_server") == [("lnx-db-01", "cmdb_ci_server")]


def test_a_childs_record_is_found_by_sys_id_through_the_parent_class(api: MockClient) -> None:
    server, _, _ = configuration_items(api)
    found = api.get(f"{TABLE}/cmdb_ci/{server}")
    assert found.status == 200
    result = body(found)["result"]
    assert isinstance(result, dict)
    assert (result["name"], result["sys_class_name"]) == ("lnx-db-01", "cmdb_ci_server")
    assert "os" not in result  # the parent table's columns only


def test_a_reference_to_the_parent_class_takes_a_childs_record(api: MockClient) -> None:
    server, _, _ = configuration_items(api)
    record = create(api, cmdb_ci=server)
    walked = api.get(
        f"{TABLE}/incident/{record['sys_id']}", params={"sysparm_fields": "cmdb_ci.name"}
    )
    assert body(walked)["result"] == {"cmdb_ci.name": "lnx-db-01"}


def test_writes_through_either_class_change_the_one_record(api: MockClient) -> None:
    server, application, _ = configuration_items(api)
    api.patch(f"{TABLE}/cmdb_ci/{server}", json={"short_description": "RAID battery new"})
    api.patch(f"{TABLE}/cmdb_ci_server/{server}", json={"operational_status": "3"})
    fields = {"sysparm_fields": "short_description,operational_status,sys_mod_count"}
    expected = {"short_description": "RAID battery new", "operational_status": "3"}
    for table in ("cmdb_ci", "cmdb_ci_server"):
        seen = body(api.get(f"{TABLE}/{table}/{server}", params=fields))["result"]
        assert seen == {**expected, "sys_mod_count": "2"}, table
    assert api.delete(f"{TABLE}/cmdb_ci/{application}").status == 204
    assert api.get(f"{TABLE}/cmdb_ci_appl/{application}").status == 404
    assert api.delete(f"{TABLE}/cmdb_ci_server/{server}").status == 204
    assert api.get(f"{TABLE}/cmdb_ci/{server}").status == 404


# -- §3 batch, §4 attachments ---------------------------------------------------------------------


def test_a_batch_serves_its_requests(api: MockClient) -> None:
    record = create(api)
    encoded = base64.b64encode(json.dumps({"urgency": "1"}).encode()).decode()
    response = api.post(
        "/api/now/v1/batch",
        json={
            "batch_request_id": 1,
            "rest_requests": [
                {
                    "id": "a",
                    "method": "PATCH",
                    "url": f"{TABLE}/incident/{record['sys_id']}",
                    "headers": [{"name": "Content-Type", "value": "application/json"}],
                    "body": encoded,
                }
            ],
        },
    )
    answer = body(response)
    assert answer["batch_request_id"] == "1"
    served = answer["serviced_requests"]
    assert isinstance(served, list)
    assert [item["status_code"] for item in served] == [200]


def test_an_upload_answers_201_with_a_location(api: MockClient) -> None:
    record = create(api)
    response = api.post(
        "/api/now/v1/attachment/file",
        params={"file_name": "a.txt", "table_name": "incident", "table_sys_id": record["sys_id"]},
        content=b"hello",
        headers={"Content-Type": "text/plain"},
    )
    assert response.status == 201
    assert "/api/now/attachment/" in (header(response, "Location") or "")
