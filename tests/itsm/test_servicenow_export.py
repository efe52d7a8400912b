"""ServiceNow list exports: JSON envelopes, display values, journals, problems and changes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from myna.itsm.importers import IncidentState, import_history, to_servicenow_records

INCIDENT = {
    "number": "INC0010002",
    "sys_id": "a" * 32,
    "short_description": "VPN drops every ten minutes",
    "state": "In Progress",
    "impact": "1 - High",
    "urgency": "2 - Medium",
    "priority": "2 - High",
    "caller_id": {"display_value": "Abel Tuter", "value": "b" * 32, "link": "https://x/api"},
    "assignment_group": {"display_value": "Network", "value": "c" * 32},
    "assigned_to": {"display_value": "Beth Anglin", "value": "d" * 32},
    "category": "Network",
    "opened_at": "2026-01-05 09:00:00",
    "sys_updated_on": "2026-01-05 11:00:00",
    "work_notes": "2026-01-05 10:30:00 - Beth Anglin (Work notes)\nAsked Abel Tuter for logs.\n\n"
    "2026-01-05 09:45:00 - Beth Anglin (Work notes)\nLooking into it.",
}
PROBLEM = {"number": "PRB0040001", "short_description": "VPN concentrator flaps", "state": "Assess"}
CHANGE = {
    "number": "CHG0030001",
    "short_description": "Replace VPN concentrator",
    "state": "Scheduled",
    "type": "Normal",
}


@pytest.mark.parametrize(
    "envelope", ["records", "result", None], ids=["list-export", "table-api", "bare"]
)
def test_json_envelopes_all_read(tmp_path: Path, envelope: str | None) -> None:
    items = [INCIDENT, PROBLEM, CHANGE]
    path = tmp_path / "export.json"
    path.write_text(json.dumps({envelope: items} if envelope else items), encoding="utf-8")
    history, report = import_history(path)
    (incident,) = history.incidents
    assert incident.sys_id == "a" * 32
    assert incident.state is IncidentState.IN_PROGRESS
    assert (incident.impact, incident.urgency, incident.priority) == (1, 2, 2)
    assert incident.category == "network"
    assert history.users[incident.caller or ""].name == "Abel Tuter"
    assert incident.caller == "b" * 32
    assert [p.number for p in history.problems.values()] == ["PRB0040001"]
    assert [(c.number, c.state, c.type) for c in history.changes.values()] == [
        ("CHG0030001", "-2", "normal")
    ]
    assert [p.state for p in history.problems.values()] == ["102"]
    assert report.count() == 0


def test_journal_columns_split_into_dated_entries_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "incident.json"
    path.write_text(json.dumps({"records": [INCIDENT]}), encoding="utf-8")
    history, _ = import_history(path)
    journal = history.incidents[0].journal
    assert [(e.at.isoformat(" "), e.text) for e in journal] == [
        ("2026-01-05 09:45:00", "Looking into it."),
        ("2026-01-05 10:30:00", "Asked Abel Tuter for logs."),
    ]
    assert {history.users[e.by or ""].name for e in journal} == {"Beth Anglin"}
    records = to_servicenow_records(history)
    assert [j["value"] for j in records["sys_journal_field"]] == [e.text for e in journal]


def test_an_export_with_column_labels_reads_like_one_with_field_names(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        "Number,Opened,Short description,Caller,Priority,State,Assignment group,Assigned to,"
        "Resolution code,Resolved,Closed",
        "INC0000001,2026-01-05 09:00:00,Printer jammed,Abel Tuter,4 - Low,Closed,Hardware,"
        "Beth Anglin,Solved (Permanently),2026-01-05 10:00:00,2026-01-06 10:00:00",
    )
    history, report = import_history(path)
    (incident,) = history.incidents
    assert incident.state is IncidentState.CLOSED
    assert incident.resolution is not None
    assert (incident.resolution.code, incident.resolution.source_code) == (
        "Solution provided",
        "Solved (Permanently)",
    )
    assert [c.state for c in incident.state_changes] == [
        IncidentState.NEW,
        IncidentState.RESOLVED,
        IncidentState.CLOSED,
    ]
    assert all(c.inferred for c in incident.state_changes)
    assert incident.priority == 4
    assert report.count() == 0


def test_a_record_of_another_table_is_reported_not_dropped(write_csv: Callable[..., Path]) -> None:
    path = write_csv("number,short_description", "RITM0000001,New laptop")
    history, report = import_history(path, format="servicenow")
    assert history.incidents == ()
    (issue,) = report.issues
    assert (issue.line, issue.value, issue.kind) == (2, "RITM0000001", "unmapped")


@pytest.mark.parametrize("problem_first", [True, False], ids=["problem-first", "incident-first"])
def test_incidents_point_at_the_exported_problem_whatever_the_order(
    write_csv: Callable[..., Path], problem_first: bool
) -> None:
    problem = "PRB0040001,Concentrator flaps,2026-01-05 08:00:00,,Assess," + "e" * 32
    incident = "INC0000001,VPN drops,2026-01-05 09:00:00,PRB0040001,In Progress,"
    path = write_csv(
        "number,short_description,opened_at,problem_id,state,sys_id",
        *((problem, incident) if problem_first else (incident, problem)),
    )
    history, report = import_history(path)
    (only,) = history.problems.values()
    assert (only.sys_id, only.number, only.short_description) == (
        "e" * 32,
        "PRB0040001",
        "Concentrator flaps",
    )
    assert history.incidents[0].problem == "e" * 32
    assert report.count() == 0


def test_records_without_number_or_with_unknown_state_are_reported(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        "number,short_description,opened_at,state,sys_class_name",
        ",Orphan,2026-01-05 09:00:00,New,incident",
        "INC0000001,Odd state,2026-01-05 09:00:00,Awaiting Godot,incident",
    )
    history, report = import_history(path)
    (incident,) = history.incidents
    assert incident.state is IncidentState.NEW
    assert [(i.line, i.column, i.value, i.kind) for i in report.issues] == [
        (2, "number", "", "unmapped"),
        (3, "state", "Awaiting Godot", "unmapped"),
    ]
