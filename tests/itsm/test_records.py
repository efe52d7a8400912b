"""The ServiceNow-shaped records a history converts to."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from myna.itsm.importers import TABLES, import_history, stable_sys_id, to_servicenow_records
from tests.itsm.conftest import UCI_HEADER, uci_row

DATETIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


def _history(write_csv: Callable[..., Path]) -> Path:
    return write_csv(
        UCI_HEADER,
        uci_row("INC0000001", "New", "01-03-2016 09:05", mod=0),
        uci_row(
            "INC0000001",
            "Active",
            "01-03-2016 09:30",
            mod=1,
            group="Group 24",
            assignee="Resolver 31",
        ),
        uci_row(
            "INC0000001",
            "Awaiting User Info",
            "01-03-2016 10:00",
            mod=2,
            group="Group 24",
            assignee="Resolver 31",
        ),
        uci_row(
            "INC0000001",
            "Resolved",
            "02-03-2016 10:00",
            mod=3,
            group="Group 24",
            assignee="Resolver 31",
        ),
        uci_row(
            "INC0000001",
            "Active",
            "02-03-2016 12:00",
            mod=4,
            group="Group 24",
            assignee="Resolver 31",
            reopens=1,
        ),
    )


def test_every_table_is_present_and_every_value_is_a_string(write_csv: Callable[..., Path]) -> None:
    history, _ = import_history(_history(write_csv))
    records = to_servicenow_records(history)
    assert tuple(records) == TABLES
    for rows in records.values():
        for row in rows:
            assert all(isinstance(value, str) for value in row.values())
            assert re.fullmatch(r"[0-9a-f]{32}", row["sys_id"])
            for name in ("sys_created_on", "opened_at", "resolved_at"):
                assert row.get(name, "") == "" or DATETIME.fullmatch(row[name])


def test_the_incident_record_carries_state_codes_and_references(
    write_csv: Callable[..., Path],
) -> None:
    history, _ = import_history(_history(write_csv))
    records = to_servicenow_records(history)
    (incident,) = records["incident"]
    group = next(g for g in records["sys_user_group"] if g["name"] == "Group 24")
    user = next(u for u in records["sys_user"] if u["name"] == "Resolver 31")
    assert incident["number"] == "INC0000001"
    assert incident["sys_id"] == stable_sys_id("incident", "INC0000001")
    assert (incident["state"], incident["active"], incident["reopen_count"]) == ("2", "true", "1")
    assert (incident["assignment_group"], incident["assigned_to"]) == (
        group["sys_id"],
        user["sys_id"],
    )
    assert incident["reopened_time"] == "2016-03-02 12:00:00"
    # An incident that is open again carries no resolution.
    assert (incident["close_code"], incident["resolved_at"]) == ("", "")
    assert records["sys_user_grmember"] == [
        {
            "sys_id": stable_sys_id("sys_user_grmember", f"{group['sys_id']}:{user['sys_id']}"),
            "group": group["sys_id"],
            "user": user["sys_id"],
            "sys_created_on": "2016-03-01 09:00:00",
            "sys_created_by": "myna.import",
            "sys_updated_on": "2016-03-01 09:00:00",
            "sys_updated_by": "myna.import",
            "sys_mod_count": "0",
        }
    ]


def test_holds_reassignments_and_reopenings_become_work_notes(
    write_csv: Callable[..., Path],
) -> None:
    history, _ = import_history(_history(write_csv))
    notes = [
        (n["sys_created_on"], n["value"])
        for n in to_servicenow_records(history)["sys_journal_field"]
    ]
    assert notes == [
        ("2016-03-01 10:00:00", "[imported] Placed on hold: Awaiting Caller."),
        ("2016-03-01 09:30:00", "[imported] Reassigned from Group 1 to Group 24."),
        ("2016-03-02 12:00:00", "[imported] Reopened from Resolved."),
    ]


def test_audit_rows_follow_the_state_through_the_log(write_csv: Callable[..., Path]) -> None:
    history, _ = import_history(_history(write_csv))
    audit = to_servicenow_records(history)["sys_audit"]
    states = [
        (a["oldvalue"], a["newvalue"], a["record_checkpoint"])
        for a in audit
        if a["fieldname"] == "state"
    ]
    assert states == [("1", "2", "1"), ("2", "3", "2"), ("3", "6", "3"), ("6", "2", "4")]
    assert {a["user"] for a in audit if a["fieldname"] == "state"} == {
        "updated.by.101",
        "updated.by.102",
        "updated.by.103",
        "updated.by.104",
    }


def test_conversion_is_deterministic(write_csv: Callable[..., Path]) -> None:
    path = _history(write_csv)
    assert to_servicenow_records(import_history(path)[0]) == to_servicenow_records(
        import_history(path)[0]
    )


def test_custom_fields_can_be_left_out_for_a_base_system_back_end(
    write_csv: Callable[..., Path],
) -> None:
    history, _ = import_history(_history(write_csv))
    (full,) = to_servicenow_records(history)["incident"]
    (base,) = to_servicenow_records(history, custom_fields=False)["incident"]
    assert {name for name in full if name.startswith("u_")} == {
        "u_symptom",
        "u_priority_confirmation",
    }
    assert set(full) - set(base) == {"u_symptom", "u_priority_confirmation"}
    assert base["short_description"] == "Symptom 72 (Category 55 / Subcategory 170)"
