"""The in-process client: the dispatcher's HTTP semantics without sockets."""

from __future__ import annotations

import time

import orjson

from myna.mocks import Mock, MockClient
from tests.mocks.conftest import ADMIN_TOKEN, TABLE, USER

INCIDENTS = f"{TABLE}/incident"


def test_json_is_what_the_body_bytes_say(client: MockClient, incident: dict[str, object]) -> None:
    response = client.get(f"{INCIDENTS}/{incident['sys_id']}")

    assert response.json() == orjson.loads(response.body)
    assert response.header("content-type") == "application/json"


def test_params_accept_pairs_and_booleans(client: MockClient, incident: dict[str, object]) -> None:
    by_pairs = client.get(INCIDENTS, params=[("active", True), ("sysparm_limit", 5)])

    assert by_pairs.header("X-Total-Count") == "1"


def test_a_world_client_prefixes_every_path(mock: Mock) -> None:
    admin = MockClient(mock, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    admin.post("/_myna/admin/worlds", json={"id": "w1"})
    in_world = MockClient(mock, auth=USER, world="w1")

    in_world.post(INCIDENTS, json={"short_description": "x"})

    assert in_world.get(INCIDENTS).header("X-Total-Count") == "1"
    assert MockClient(mock, auth=USER).get(INCIDENTS).header("X-Total-Count") == "0"


def test_injected_latency_is_waited_for(mock: Mock, admin: MockClient, client: MockClient) -> None:
    admin.put(
        "/_myna/admin/worlds/default/faults",
        json={"latency": {"distribution": "fixed", "mean_ms": 30}},
    )

    started = time.perf_counter()
    client.get(INCIDENTS)

    assert time.perf_counter() - started >= 0.03


def test_mutating_a_returned_payload_does_not_change_the_call_log(
    admin: MockClient, client: MockClient
) -> None:
    payload = client.post(INCIDENTS, json={"short_description": "original"}).json()
    payload["result"]["short_description"] = "tampered"

    lines = admin.get("/_myna/admin/worlds/default/calls").body.decode().splitlines()

    logged = orjson.loads(lines[1])["response_body"]["value"]
    assert logged["result"]["short_description"] == "original"
