"""An agent's whole CRUD session against a mock learned from read-only recordings: the REST
operations the traces never showed are there, in the service's own envelope and id type."""

from __future__ import annotations

import pytest

from myna.mocks import MockClient
from myna.schemas import learn
from tests.mocks.crud_session import recorded_mock
from tests.schemas.test_complete import read_only


@pytest.fixture
def client() -> MockClient:
    [model] = learn(read_only())
    return MockClient(recorded_mock(model))


def test_list_get_create_update_delete_on_a_resource_only_ever_listed(client: MockClient) -> None:
    listed = client.get("/api/v2/tickets.json")
    assert listed.status == 200
    first = listed.json()["tickets"][0]
    assert client.get(f"/api/v2/tickets/{first['id']}.json").json()["ticket"] == first

    made = client.post("/api/v2/tickets.json", json={"ticket": {"subject": "VPN down"}})
    assert made.status == 201, made.json()
    ticket = made.json()["ticket"]
    assert isinstance(ticket["id"], int)
    assert ticket["status"] == "open"

    changed = client.put(
        f"/api/v2/tickets/{ticket['id']}.json", json={"ticket": {"status": "solved"}}
    )
    assert changed.status == 200, changed.json()
    assert changed.json()["ticket"]["subject"] == "VPN down"
    listed_ids = [t["id"] for t in client.get("/api/v2/tickets.json").json()["tickets"]]
    assert ticket["id"] in listed_ids

    assert client.delete(f"/api/v2/tickets/{ticket['id']}.json").status in (200, 204)
    assert client.get(f"/api/v2/tickets/{ticket['id']}.json").status == 404


def test_a_cors_preflight_is_answered_without_credentials(client: MockClient) -> None:
    preflight = client.request(
        "OPTIONS",
        "/api/v2/tickets.json",
        headers={
            "Origin": "https://agent.example.com",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )

    assert preflight.status == 204
    assert set(preflight.header("Access-Control-Allow-Methods").split(", ")) >= {"GET", "POST"}
    assert preflight.header("Access-Control-Allow-Headers") == "authorization, content-type"
    assert preflight.header("Access-Control-Allow-Origin") == "https://agent.example.com"


def test_head_answers_get_without_a_body(client: MockClient) -> None:
    head = client.request("HEAD", "/api/v2/tickets/1.json")

    assert head.status == 200
    assert head.body == b""
    assert client.request("HEAD", "/api/v2/tickets/999.json").status == 404
