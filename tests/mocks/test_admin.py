"""The admin API: worlds (isolated, forked, reset, snapshotted, diffed), seeding, call logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import myna.traces
from myna.mocks import Mock, MockClient
from myna.traces.reading import read
from tests.mocks.conftest import ADMIN_TOKEN, TABLE, USER

INCIDENTS = f"{TABLE}/incident"
ADMIN = "/_myna/admin"
TRACE_SCHEMA = Path(myna.traces.__file__).with_name("trace.schema.json")


def _total(client: MockClient) -> int:
    return int(client.get(INCIDENTS).header("X-Total-Count") or "-1")


def _new_world(admin: MockClient, **body: str) -> str:
    response = admin.post(f"{ADMIN}/worlds", json=body)
    assert response.status == 201, response.json()
    world: str = response.json()["id"]
    return world


class TestAccess:
    def test_the_admin_token_is_required(self, mock: Mock) -> None:
        response = MockClient(mock, auth=USER).get(f"{ADMIN}/worlds")

        assert response.status == 401
        assert response.json()["error"]["kind"] == "unauthorized"

    def test_the_admin_token_also_works_as_a_header(self, mock: Mock) -> None:
        client = MockClient(mock, headers={"X-Myna-Admin-Token": ADMIN_TOKEN})

        assert client.get(f"{ADMIN}/worlds").status == 200

    def test_unknown_admin_routes_are_404(self, admin: MockClient) -> None:
        assert admin.get(f"{ADMIN}/nothing").status == 404


class TestWorlds:
    def test_worlds_are_isolated(self, mock: Mock, admin: MockClient, client: MockClient) -> None:
        world = _new_world(admin, id="episode-1")
        in_world = MockClient(mock, auth=USER, world=world)

        in_world.post(INCIDENTS, json={"short_description": "only here"})

        assert _total(in_world) == 1
        assert _total(client) == 0
        by_header = client.get(INCIDENTS, headers={"X-Myna-World": world})
        assert by_header.header("X-Total-Count") == "1"

    def test_each_world_has_its_own_sequences(self, mock: Mock, admin: MockClient) -> None:
        first = MockClient(mock, auth=USER, world=_new_world(admin))
        second = MockClient(mock, auth=USER, world=_new_world(admin))

        numbers = [
            c.post(INCIDENTS, json={"short_description": "x"}).json()["result"]["number"]
            for c in (first, second)
        ]

        assert numbers == ["INC0010001", "INC0010001"]

    def test_forks_of_one_snapshot_mint_the_same_ids_in_the_same_order(
        self, mock: Mock, admin: MockClient
    ) -> None:
        def created_ids() -> list[str]:
            world = MockClient(mock, auth=USER, world=_new_world(admin, fork_of="default"))
            return [
                world.post(INCIDENTS, json={"short_description": text}).json()["result"]["sys_id"]
                for text in ("first", "second")
            ]

        rerun_one, rerun_two = created_ids(), created_ids()

        assert rerun_one == rerun_two
        assert len(set(rerun_one)) == 2

    def test_fork_copies_state_and_then_diverges(
        self, mock: Mock, admin: MockClient, client: MockClient
    ) -> None:
        client.post(INCIDENTS, json={"short_description": "before the fork"})
        fork = MockClient(mock, auth=USER, world=_new_world(admin, id="fork", fork_of="default"))

        fork.post(INCIDENTS, json={"short_description": "after the fork"})

        assert (_total(client), _total(fork)) == (1, 2)

    def test_reset_returns_a_world_to_its_base(self, mock: Mock, admin: MockClient) -> None:
        world = _new_world(admin, fork_of="default")
        in_world = MockClient(mock, auth=USER, world=world)
        in_world.post(INCIDENTS, json={"short_description": "x"})

        assert admin.post(f"{ADMIN}/worlds/{world}/reset").status == 200

        assert _total(in_world) == 0

    def test_snapshot_then_world_from_it(
        self, mock: Mock, admin: MockClient, client: MockClient
    ) -> None:
        client.post(INCIDENTS, json={"short_description": "kept"})
        snapshot = admin.post(f"{ADMIN}/worlds/default/snapshot", json={"name": "s1"}).json()
        world = _new_world(admin, from_snapshot=snapshot["snapshot"])

        assert _total(MockClient(mock, auth=USER, world=world)) == 1

    def test_diff_lists_record_changes(self, admin: MockClient, client: MockClient) -> None:
        created = client.post(INCIDENTS, json={"short_description": "x"}).json()["result"]

        changes = admin.get(f"{ADMIN}/worlds/default/diff").json()["changes"]

        assert [(c["resource"], c["record_id"], c["kind"]) for c in changes] == [
            ("incident", created["sys_id"], "created")
        ]
        assert changes[0]["after"]["short_description"] == "x"

    def test_deleted_worlds_answer_404(self, mock: Mock, admin: MockClient) -> None:
        world = _new_world(admin)

        assert admin.delete(f"{ADMIN}/worlds/{world}").status == 204

        assert MockClient(mock, auth=USER, world=world).get(INCIDENTS).status == 404
        assert admin.get(f"{ADMIN}/worlds/{world}").status == 404

    @pytest.mark.parametrize(
        "body",
        [{"id": "../etc"}, {"id": ""}, {"colour": "red"}, {"fork_of": "a", "from_snapshot": "b"}],
        ids=["path-id", "empty-id", "unknown-field", "both-sources"],
    )
    def test_bad_world_requests_are_400(self, admin: MockClient, body: dict[str, str]) -> None:
        assert admin.post(f"{ADMIN}/worlds", json=body).status == 400

    def test_duplicate_world_is_409_and_missing_source_404(self, admin: MockClient) -> None:
        assert admin.post(f"{ADMIN}/worlds", json={"id": "default"}).status == 409
        assert admin.post(f"{ADMIN}/worlds", json={"fork_of": "nowhere"}).status == 404


def test_seeding_creates_a_world_with_generated_records(mock: Mock, admin: MockClient) -> None:
    response = admin.post(f"{ADMIN}/seed", json={"seed": 3, "records": 5, "world": "seeded"})

    assert response.status == 201
    seeded = MockClient(mock, auth=USER, world="seeded")
    listing = seeded.get(INCIDENTS)
    assert listing.status == 200
    assert listing.header("X-Total-Count") == "5"


class TestCallLog:
    def test_calls_export_as_canonical_trace_jsonl(
        self, admin: MockClient, client: MockClient
    ) -> None:
        client.post(INCIDENTS, json={"short_description": "logged"})
        client.get(f"{INCIDENTS}/{'0' * 32}")

        response = admin.get(f"{ADMIN}/worlds/default/calls")

        lines = [json.loads(line) for line in response.body.decode().splitlines()]
        validator = Draft202012Validator(json.loads(TRACE_SCHEMA.read_text()))
        for line in lines:
            validator.validate(line)
        assert [line["type"] for line in lines] == ["session", "exchange", "exchange"]
        created, missing = lines[1], lines[2]
        assert (created["method"], created["status"]) == ("POST", 201)
        assert created["request_body"]["value"] == {"short_description": "logged"}
        assert missing["status"] == 404
        assert ["authorization", "[REDACTED]"] in created["request_headers"]

    def test_the_export_reads_back_as_traces(
        self, admin: MockClient, client: MockClient, tmp_path: Path
    ) -> None:
        client.post(INCIDENTS, json={"short_description": "round trip"})
        exported = tmp_path / "calls.jsonl"
        exported.write_bytes(admin.get(f"{ADMIN}/worlds/default/calls").body)

        [session] = list(read(exported))

        [exchange] = session.exchanges
        assert (exchange.method, exchange.path, exchange.status) == ("POST", INCIDENTS, 201)
        assert exchange.response_body.value["result"]["short_description"] == "round trip"

    def test_admin_calls_are_not_logged_and_logs_clear(
        self, admin: MockClient, client: MockClient
    ) -> None:
        client.get(INCIDENTS)
        admin.get(f"{ADMIN}/worlds")

        assert admin.delete(f"{ADMIN}/worlds/default/calls").status == 204
        lines = admin.get(f"{ADMIN}/worlds/default/calls").body.decode().splitlines()
        assert len(lines) == 1  # only the session header
