"""The mock's API as a client sees it: ServiceNow's shapes, CRUD semantics, paging, auth."""

from __future__ import annotations

import pytest

from myna.mocks import Mock, MockClient
from tests.mocks.conftest import ADMIN_TOKEN, ALICE, BOB, TABLE, USER

INCIDENTS = f"{TABLE}/incident"


def _count(client: MockClient) -> int:
    return int(client.get(INCIDENTS).header("X-Total-Count") or "-1")


def test_create_answers_201_in_the_services_own_shape(client: MockClient) -> None:
    response = client.post(
        INCIDENTS, json={"short_description": "Printer on fire", "caller_id": ALICE, "priority": 2}
    )

    assert response.status == 201
    record = response.json()["result"]
    assert len(record["sys_id"]) == 32
    assert record["number"] == "INC0010001"
    assert record["state"] == "1"  # the state machine's initial state
    assert record["priority"] == "2"  # numbers travel as strings
    assert record["active"] == "true"  # defaults apply, booleans as strings
    assert record["description"] == ""  # empty values are ""
    assert record["caller_id"] == {
        "link": f"http://localhost{TABLE}/sys_user/{ALICE}",
        "value": ALICE,
    }
    assert record["sys_created_on"] == record["sys_updated_on"] == "2023-11-14 22:13:20"
    assert record["sys_created_by"] == "admin"
    assert record["sys_mod_count"] == "0"
    assert response.header("Location") == f"http://localhost{INCIDENTS}/{record['sys_id']}"


def test_numbers_follow_the_learned_sequence(client: MockClient) -> None:
    numbers = [
        client.post(INCIDENTS, json={"short_description": f"n{i}"}).json()["result"]["number"]
        for i in range(3)
    ]

    assert numbers == ["INC0010001", "INC0010002", "INC0010003"]


def test_get_returns_what_create_returned(client: MockClient, incident: dict[str, object]) -> None:
    response = client.get(f"{INCIDENTS}/{incident['sys_id']}")

    assert response.status == 200
    assert response.json() == {"result": incident}


def test_get_of_a_missing_record_is_the_services_404(client: MockClient) -> None:
    response = client.get(f"{INCIDENTS}/{'0' * 32}")

    assert response.status == 404
    assert response.json()["status"] == "failure"
    assert response.json()["error"]["message"] == "No Record found"


def test_patch_merges_and_counts_modifications(
    client: MockClient, incident: dict[str, object]
) -> None:
    response = client.patch(
        f"{INCIDENTS}/{incident['sys_id']}", json={"description": "smoke", "assigned_to": BOB}
    )

    assert response.status == 200
    record = response.json()["result"]
    assert record["short_description"] == "Printer on fire"
    assert record["description"] == "smoke"
    assert record["assigned_to"]["value"] == BOB
    assert record["sys_mod_count"] == "1"
    assert record["number"] == incident["number"]


def test_put_replaces_client_fields_and_keeps_server_fields(
    client: MockClient, incident: dict[str, object]
) -> None:
    response = client.put(f"{INCIDENTS}/{incident['sys_id']}", json={"short_description": "new"})

    record = response.json()["result"]
    assert response.status == 200
    assert record["short_description"] == "new"
    assert record["caller_id"] == ""  # not sent, so gone
    assert record["number"] == incident["number"]
    assert record["sys_created_on"] == incident["sys_created_on"]
    assert record["sys_mod_count"] == "1"


def test_delete_answers_204_then_the_record_is_gone(
    client: MockClient, incident: dict[str, object]
) -> None:
    path = f"{INCIDENTS}/{incident['sys_id']}"

    assert client.delete(path).status == 204
    assert client.get(path).status == 404
    assert client.delete(path).status == 404


def test_custom_action_applies_its_effects(client: MockClient, incident: dict[str, object]) -> None:
    response = client.post(
        f"{INCIDENTS}/{incident['sys_id']}/resolve",
        json={"close_code": "Solved (Permanently)", "close_notes": "Replaced the fuser"},
    )

    assert response.status == 200
    record = response.json()["result"]
    assert (record["state"], record["close_code"]) == ("6", "Solved (Permanently)")


class TestList:
    @pytest.fixture(autouse=True)
    def _five_incidents(self, client: MockClient) -> None:
        for index in range(5):
            body = {"short_description": f"disk {index}", "priority": index % 2 + 1}
            assert client.post(INCIDENTS, json=body).status == 201

    def test_pages_with_link_and_total_count_headers(self, client: MockClient) -> None:
        response = client.get(INCIDENTS, params={"sysparm_limit": 2, "sysparm_offset": 2})

        assert [r["number"] for r in response.json()["result"]] == ["INC0010003", "INC0010004"]
        assert response.header("X-Total-Count") == "5"
        link = response.header("Link") or ""
        base = f"http://localhost{INCIDENTS}?sysparm_limit=2"
        assert f'<{base}&sysparm_offset=0>;rel="first"' in link
        assert f'<{base}&sysparm_offset=0>;rel="prev"' in link
        assert f'<{base}&sysparm_offset=4>;rel="next"' in link
        assert f'<{base}&sysparm_offset=4>;rel="last"' in link

    def test_filters_by_plain_field_parameters(self, client: MockClient) -> None:
        response = client.get(INCIDENTS, params={"priority": "2"})

        assert {r["priority"] for r in response.json()["result"]} == {"2"}
        assert response.header("X-Total-Count") == "2"

    def test_filters_and_sorts_with_an_encoded_query(self, client: MockClient) -> None:
        response = client.get(INCIDENTS, params={"sysparm_query": "priority=1^ORDERBYDESCnumber"})

        numbers = [r["number"] for r in response.json()["result"]]
        assert numbers == ["INC0010005", "INC0010003", "INC0010001"]

    def test_projects_fields(self, client: MockClient) -> None:
        response = client.get(
            INCIDENTS, params={"sysparm_fields": "number,state", "sysparm_limit": 1}
        )

        assert response.json()["result"] == [{"number": "INC0010001", "state": "1"}]


class TestAuth:
    def test_missing_credentials_get_the_services_401(self, mock: Mock) -> None:
        response = MockClient(mock).get(INCIDENTS)

        assert response.status == 401
        assert response.header("WWW-Authenticate") == 'Basic realm="Service-now"'
        assert response.json() == {
            "error": {
                "message": "User Not Authenticated",
                "detail": "Required to provide Auth information",
            },
            "status": "failure",
        }

    @pytest.mark.parametrize(
        "headers",
        [
            {"Authorization": "Basic YWRtaW46d3Jvbmc="},  # admin:wrong
            {"Authorization": "Basic !!!not-base64"},
            {"Authorization": "Bearer not-a-token"},
            {"Authorization": f"Bearer {ADMIN_TOKEN}"},
        ],
        ids=["wrong-password", "garbled", "unknown-token", "admin-token"],
    )
    def test_wrong_credentials_get_401(self, mock: Mock, headers: dict[str, str]) -> None:
        assert MockClient(mock, headers=headers).get(INCIDENTS).status == 401

    def test_a_configured_token_is_accepted(self, mock: Mock) -> None:
        client = MockClient(mock, headers={"Authorization": "Bearer agent-token"})

        assert client.get(INCIDENTS).status == 200


def test_unknown_route_is_a_404_in_the_services_shape(client: MockClient) -> None:
    response = client.get("/api/now/table/no_such_table")

    assert response.status == 404
    assert response.json()["status"] == "failure"


def test_wrong_method_is_a_405_naming_the_allowed_ones(client: MockClient) -> None:
    response = client.post(f"{INCIDENTS}/{'0' * 32}", json={})

    assert response.status == 405
    assert response.header("Allow") == "DELETE, GET, PATCH, PUT"


def test_openapi_document_describes_the_served_operations(mock: Mock) -> None:
    document = MockClient(mock).get("/openapi.json").json()

    assert document["openapi"].startswith("3.1")
    create = document["paths"][INCIDENTS]["post"]
    schema = create["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["short_description"]
    assert schema["additionalProperties"] is False
    assert "201" in create["responses"]


def test_credentials_work_through_the_user_tuple(mock: Mock) -> None:
    assert MockClient(mock, auth=USER).get(INCIDENTS).status == 200
