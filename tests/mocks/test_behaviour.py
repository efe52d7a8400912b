"""The service's rules: pure checks over literal writes, then the same rules through the API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from myna.mocks import MockClient
from myna.mocks.behaviour import (
    Violation,
    Write,
    check_read_only,
    check_references,
    check_required_on_entry,
    check_transitions,
)
from tests.mocks.conftest import ALICE, INCIDENT, TABLE

INCIDENTS = f"{TABLE}/incident"


def _write(before: Mapping[str, Any] | None, after: Mapping[str, Any], **sent: Any) -> Write:
    return Write(INCIDENT, before, after, sent or dict(after))


class TestTransitions:
    @pytest.mark.parametrize(
        ("source", "target"),
        [("1", "2"), ("2", "6"), ("6", "7"), ("6", "2"), ("2", "2")],
        ids=["start-work", "resolve", "close", "reopen-resolved", "unchanged"],
    )
    def test_observed_transitions_pass(self, source: str, target: str) -> None:
        assert list(check_transitions(_write({"state": source}, {"state": target}))) == []

    def test_an_unobserved_transition_is_refused_with_labels(self) -> None:
        [violation] = check_transitions(_write({"state": "1"}, {"state": "7"}))

        assert violation == Violation(
            "transition", "state", "state cannot change from 1 (New) to 7 (Closed)", 400
        )

    def test_a_refused_transition_keeps_the_services_status_and_message(self) -> None:
        [violation] = check_transitions(_write({"state": "7"}, {"state": "2"}))

        assert (violation.status, violation.message) == (403, "Closed incidents cannot be reopened")

    def test_records_start_in_an_initial_state(self) -> None:
        [violation] = check_transitions(_write(None, {"state": "6"}))

        assert violation.kind == "initial_state"
        assert list(check_transitions(_write(None, {"state": "1"}))) == []

    def test_an_unenforced_machine_allows_anything(self) -> None:
        lax = INCIDENT.model_copy(
            update={
                "state_machines": [INCIDENT.state_machines[0].model_copy(update={"enforce": False})]
            }
        )

        assert list(check_transitions(Write(lax, {"state": "1"}, {"state": "7"}, {}))) == []


def test_entering_a_state_requires_its_fields() -> None:
    violations = list(
        check_required_on_entry(_write({"state": "2"}, {"state": "6", "close_code": "x"}))
    )

    assert [(v.kind, v.field) for v in violations] == [("required_on_entry", "close_notes")]


def test_fields_required_on_entry_are_not_rechecked_while_staying() -> None:
    assert list(check_required_on_entry(_write({"state": "6"}, {"state": "6"}))) == []


def test_refused_read_only_fields_are_violations() -> None:
    write = _write(None, {"sla_due": "x"})

    assert [v.field for v in check_read_only(write, frozenset({"sla_due"}))] == ["sla_due"]


def test_references_must_exist_in_the_world() -> None:
    existing = {("sys_user", ALICE)}
    write = _write(None, {"caller_id": ALICE, "assigned_to": "nobody"})

    violations = list(
        check_references(
            write,
            {name: spec.reference for name, spec in INCIDENT.fields.items() if spec.reference},
            lambda resource, record_id: (resource, record_id) in existing,
        )
    )

    assert [v.field for v in violations] == ["assigned_to"]


def test_empty_references_are_allowed() -> None:
    write = _write(None, {"caller_id": ""})
    references = {"caller_id": INCIDENT.fields["caller_id"].reference}

    assert list(check_references(write, references, lambda *_: False)) == []  # type: ignore[arg-type]


class TestThroughTheApi:
    def test_walking_the_life_cycle(self, client: MockClient, incident: dict[str, object]) -> None:
        path = f"{INCIDENTS}/{incident['sys_id']}"

        assert client.patch(path, json={"state": "2"}).status == 200
        resolved = client.patch(
            path, json={"state": "6", "close_code": "Solved", "close_notes": "rebooted"}
        )
        assert resolved.status == 200
        assert client.patch(path, json={"state": "7"}).status == 200
        reopened = client.patch(path, json={"state": "2"})
        assert reopened.status == 403
        assert reopened.json()["error"]["message"] == "Closed incidents cannot be reopened"
        assert client.get(path).json()["result"]["state"] == "7"

    def test_ignored_read_only_fields_are_dropped(
        self, client: MockClient, incident: dict[str, object]
    ) -> None:
        path = f"{INCIDENTS}/{incident['sys_id']}"

        response = client.patch(path, json={"number": "INC9999999", "sys_mod_count": 99})

        assert response.status == 200
        assert response.json()["result"]["number"] == incident["number"]
        assert response.json()["result"]["sys_mod_count"] == "1"

    def test_duplicate_unique_values_are_409(self, client: MockClient) -> None:
        users = f"{TABLE}/sys_user"

        response = client.post(users, json={"user_name": "alice"})

        assert response.status == 409
        assert response.json()["status"] == "failure"

    def test_a_reference_accepts_the_link_value_object(self, client: MockClient) -> None:
        response = client.post(
            INCIDENTS, json={"short_description": "x", "caller_id": {"value": ALICE}}
        )

        assert response.status == 201
        assert response.json()["result"]["caller_id"]["value"] == ALICE

    def test_an_action_obeys_the_state_machine(
        self, client: MockClient, incident: dict[str, object]
    ) -> None:
        path = f"{INCIDENTS}/{incident['sys_id']}"
        client.patch(path, json={"state": "2"})
        client.patch(path, json={"state": "6", "close_code": "a", "close_notes": "b"})
        client.patch(path, json={"state": "7"})

        response = client.post(f"{path}/resolve", json={"close_code": "again"})

        assert response.status == 400
        assert "7 (Closed) to 6 (Resolved)" in response.json()["error"]["message"]
