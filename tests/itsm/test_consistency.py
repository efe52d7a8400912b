"""The world-consistency checks over ServiceNow records."""

from __future__ import annotations

import csv
from collections import Counter

import pytest

from myna.itsm import synthetic
from myna.itsm.importers import import_history, to_servicenow_records
from myna.itsm.importers.consistency import Finding, check_records
from tests.itsm.conftest import corpus_file


def _world() -> dict[str, list[dict[str, str]]]:
    return {
        "incident": [
            {
                "sys_id": "i1",
                "number": "INC0000001",
                "state": "2",
                "active": "true",
                "impact": "2",
                "urgency": "2",
                "priority": "3",
                "assignment_group": "g1",
                "assigned_to": "u1",
                "caller_id": "u2",
            }
        ],
        "sys_user": [{"sys_id": "u1", "user_name": "a"}, {"sys_id": "u2", "user_name": "b"}],
        "sys_user_group": [{"sys_id": "g1", "name": "Network"}],
        "sys_user_grmember": [{"sys_id": "m1", "group": "g1", "user": "u1"}],
    }


def test_a_consistent_world_has_no_findings() -> None:
    assert check_records(_world()) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"caller_id": "u9"}, ("caller_id", "u9 is not a sys_user record")),
        ({"assigned_to": "u2"}, ("assigned_to", "not a member of the group")),
        ({"priority": "1"}, ("priority", "impact 2 x urgency 2 is 3")),
        ({"state": "3", "active": "true"}, ("hold_reason", "on hold without a hold reason")),
        ({"active": "false"}, ("active", "active is 'false' in state 2")),
        ({"close_code": "Duplicate"}, ("close_code", "open incident (state 2) with close_code")),
    ],
    ids=["dangling-reference", "non-member", "priority", "hold-reason", "active", "open-closed"],
)
def test_each_inconsistency_is_one_finding_naming_the_field(
    change: dict[str, str], expected: tuple[str, str]
) -> None:
    world = _world()
    world["incident"][0].update(change)
    assert check_records(world) == [Finding("incident", "i1", *expected)]


def test_a_closed_incident_needs_its_resolution_fields() -> None:
    world = _world()
    world["incident"][0].update({"state": "7", "active": "false"})
    assert {f.field for f in check_records(world)} == {
        "close_code",
        "close_notes",
        "resolved_at",
        "closed_at",
    }


def test_duplicate_ids_are_found() -> None:
    world = _world()
    world["sys_user"].append({"sys_id": "u1", "user_name": "c"})
    assert check_records(world) == [
        Finding("sys_user", "u1", "sys_id", "sys_id u1 is used 2 times")
    ]


def test_the_shipped_synthetic_export_is_a_consistent_world() -> None:
    history, _ = import_history(synthetic.default_export())
    assert check_records(to_servicenow_records(history)) == []


@pytest.mark.corpus
def test_the_uci_sample_is_consistent_but_for_incidents_closed_without_a_close_code() -> None:
    path = corpus_file("uci_incident_event_log/incident_event_log_first5998.csv")
    with path.open(newline="") as stream:
        last = {row["number"]: row for row in csv.DictReader(stream)}
    without_code = {
        n for n, r in last.items() if r["incident_state"] == "Closed" and r["closed_code"] == "?"
    }
    history, _ = import_history(path)
    findings = check_records(to_servicenow_records(history))
    numbers = {r["sys_id"]: r["number"] for r in to_servicenow_records(history)["incident"]}
    assert Counter(f.field for f in findings) == {
        "close_code": len(without_code),
        "close_notes": len(without_code),
    }
    assert {numbers[f.sys_id] for f in findings} == without_code
