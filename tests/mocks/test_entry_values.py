"""What entering a state sets (`StateMachine.sets_on_entry`), applied by the mock: the pure rule
over literal writes, then through `MockClient` on the ServiceNow-like example model."""

from __future__ import annotations

from typing import Any

import pytest

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.behaviour import Write, entry_values
from myna.mocks.example import INCIDENT, TABLE, servicenow_example
from myna.schemas.model import EntryValues, Resource, StateMachine

USER = ("admin", "secret")
INCIDENTS = f"{TABLE}/incident"
# Closing deactivates an incident and parks it at priority 5; a new one starts at priority 3.
ENTRY_VALUES = {
    "7": EntryValues(values={"active": False, "priority": 5}),
    "1": EntryValues(values={"priority": 3}),
}


def _with_values(values: dict[str, EntryValues] = ENTRY_VALUES) -> Resource:
    machine = INCIDENT.state_machines[0].model_copy(update={"sets_on_entry": values})
    return INCIDENT.model_copy(update={"state_machines": [machine]})


class TestTheRule:
    def test_entering_a_state_gives_its_values(self) -> None:
        write = Write(_with_values(), {"state": "6"}, {"state": "7"}, {"state": "7"})

        assert entry_values(write) == {"active": False, "priority": 5}

    def test_staying_in_a_state_gives_nothing(self) -> None:
        write = Write(_with_values(), {"state": "7"}, {"state": "7"}, {"priority": 2})

        assert entry_values(write) == {}

    def test_a_field_the_request_sets_keeps_the_requests_value(self) -> None:
        write = Write(_with_values(), {"state": "6"}, {"state": "7"}, {"state": "7", "priority": 2})

        assert entry_values(write) == {"active": False}

    def test_a_value_that_moves_another_status_enters_that_state_too(self) -> None:
        """ServiceNow's `state` sets `incident_state`, whose own entry clears the hold reason."""
        state = StateMachine(
            field="state",
            states=["3", "6"],
            sets_on_entry={"6": EntryValues(values={"incident_state": "6"})},
        )
        mirror = StateMachine(
            field="incident_state",
            states=["3", "6"],
            sets_on_entry={"6": EntryValues(values={"hold_reason": "", "state": "9"})},
        )
        # The mirror comes first: it enters only once `state` has moved it.
        resource = INCIDENT.model_copy(update={"state_machines": [mirror, state]})
        before = {"state": "3", "incident_state": "3", "hold_reason": "1"}
        write = Write(resource, before, {**before, "state": "6"}, {"state": "6"})

        # `state` itself was the request's, so the mirror's "9" does not overwrite it.
        assert entry_values(write) == {"incident_state": "6", "hold_reason": ""}


def _client(values: dict[str, EntryValues]) -> MockClient:
    model = servicenow_example()
    model.resources["incident"] = _with_values(values)
    mock = Mock(model, credentials=Credentials.parse([":".join(USER)]), strict=True)
    return MockClient(mock, auth=USER)


@pytest.fixture
def client() -> MockClient:
    return _client(ENTRY_VALUES)


def _record(response: Any) -> dict[str, Any]:
    assert response.status in (200, 201), response.json()
    record: dict[str, Any] = response.json()["result"]
    return record


def _new_incident(client: MockClient) -> str:
    """The item path of a new incident."""
    created = _record(client.post(INCIDENTS, json={"short_description": "Printer on fire"}))
    return f"{INCIDENTS}/{created['sys_id']}"


class TestThroughTheApi:
    def test_a_new_record_gets_its_first_states_values_over_the_plain_default(
        self, client: MockClient
    ) -> None:
        created = _record(client.post(INCIDENTS, json={"short_description": "Printer on fire"}))

        assert (created["state"], created["priority"]) == ("1", "3")

    def test_a_create_that_sets_the_field_keeps_its_own_value(self, client: MockClient) -> None:
        body = {"short_description": "Printer on fire", "priority": 1}

        created = _record(client.post(INCIDENTS, json=body))

        assert created["priority"] == "1"

    def test_closing_sets_the_closed_states_values_and_other_states_change_nothing(
        self, client: MockClient
    ) -> None:
        path = _new_incident(client)
        client.patch(path, json={"priority": 2})

        working = _record(client.patch(path, json={"state": "2"}))
        resolved = _record(
            client.patch(path, json={"state": "6", "close_code": "Solved", "close_notes": "ok"})
        )
        closed = _record(client.patch(path, json={"state": "7"}))

        assert [(r["active"], r["priority"]) for r in (working, resolved)] == [("true", "2")] * 2
        assert (closed["active"], closed["priority"]) == ("false", "5")
        assert _record(client.get(path)) == closed

    def test_a_value_sent_with_the_move_wins_and_later_writes_are_not_overruled(
        self, client: MockClient
    ) -> None:
        path = _new_incident(client)
        client.patch(path, json={"state": "6", "close_code": "Solved", "close_notes": "ok"})

        closed = _record(client.patch(path, json={"state": "7", "priority": 2}))
        edited = _record(client.patch(path, json={"priority": 4}))

        assert (closed["active"], closed["priority"]) == ("false", "2")
        assert (edited["active"], edited["priority"]) == ("false", "4")

    def test_an_action_that_moves_the_state_brings_its_values(self) -> None:
        resolving = EntryValues(values={"close_notes": "Resolved by the resolve action"})
        client = _client({**ENTRY_VALUES, "6": resolving})
        path = _new_incident(client)

        resolved = _record(client.post(f"{path}/resolve", json={"close_code": "Solved"}))

        assert (resolved["state"], resolved["close_notes"]) == (
            "6",
            "Resolved by the resolve action",
        )
