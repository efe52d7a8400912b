"""Lifecycles rebuilt from small literal UCI event logs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from myna.itsm.importers import HoldReason, IncidentState, import_history
from tests.itsm.conftest import UCI_HEADER, uci_row


def _states(path: Path) -> list[tuple[IncidentState, HoldReason | None]]:
    history, _ = import_history(path)
    (incident,) = history.incidents
    return [(change.state, change.hold_reason) for change in incident.state_changes]


def test_a_resolved_incident_that_comes_back_is_one_reopening(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC1", "New", "01-03-2016 09:05", mod=0),
        uci_row("INC1", "Active", "01-03-2016 10:00", mod=1),
        uci_row("INC1", "Resolved", "02-03-2016 10:00", mod=2),
        uci_row("INC1", "Active", "03-03-2016 08:00", mod=3, reopens=1),
        uci_row(
            "INC1", "Resolved", "03-03-2016 09:30", mod=4, reopens=1, resolved_at="03-03-2016 09:30"
        ),
        uci_row(
            "INC1", "Closed", "08-03-2016 10:00", mod=5, reopens=1, resolved_at="03-03-2016 09:30"
        ),
    )
    history, report = import_history(path)
    (incident,) = history.incidents
    assert [r.at.isoformat() for r in incident.reopenings] == ["2016-03-03T08:00:00"]
    assert incident.reopenings[0].from_state is IncidentState.RESOLVED
    assert incident.reopen_count == 1
    assert incident.state is IncidentState.CLOSED
    assert incident.resolution is not None
    assert incident.resolution.resolved_at is not None
    assert incident.resolution.resolved_at.isoformat() == "2016-03-03T09:30:00"
    assert [c.state for c in incident.state_changes] == [
        IncidentState.NEW,
        IncidentState.IN_PROGRESS,
        IncidentState.RESOLVED,
        IncidentState.IN_PROGRESS,
        IncidentState.RESOLVED,
        IncidentState.CLOSED,
    ]
    assert report.count("inconsistent") == 0


def test_a_reopen_count_the_log_does_not_show_is_reported(write_csv: Callable[..., Path]) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC1", "Active", "01-03-2016 10:00", mod=1),
        uci_row("INC1", "Resolved", "02-03-2016 10:00", mod=2, reopens=2),
    )
    _, report = import_history(path)
    (issue,) = [i for i in report.issues if i.column == "reopen_count"]
    assert (issue.kind, issue.value, issue.line) == ("inconsistent", "2", 3)


def test_a_chain_of_groups_is_a_chain_of_reassignments(write_csv: Callable[..., Path]) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC2", "New", "01-03-2016 09:05", mod=0, group="Group 1"),
        uci_row(
            "INC2",
            "Active",
            "01-03-2016 09:30",
            mod=1,
            group="Group 24",
            assignee="Resolver 31",
            reassignments=1,
        ),
        uci_row(
            "INC2",
            "Active",
            "01-03-2016 11:00",
            mod=2,
            group="Group 70",
            assignee="Resolver 89",
            reassignments=2,
        ),
        uci_row(
            "INC2",
            "Active",
            "01-03-2016 11:10",
            mod=3,
            group="Group 70",
            assignee="Resolver 90",
            reassignments=2,
        ),
        uci_row(
            "INC2",
            "Resolved",
            "02-03-2016 10:00",
            mod=4,
            group="Group 70",
            assignee="Resolver 90",
            reassignments=2,
        ),
    )
    history, _ = import_history(path)
    (incident,) = history.incidents
    group_name = {sys_id: group.name for sys_id, group in history.groups.items()}
    user_name = {sys_id: user.name for sys_id, user in history.users.items()}
    moves = [
        (
            group_name.get(m.from_group or ""),
            group_name[m.to_group or ""],
            user_name.get(m.to_user or ""),
        )
        for m in incident.reassignments
    ]
    assert moves == [
        (None, "Group 1", None),
        ("Group 1", "Group 24", "Resolver 31"),
        ("Group 24", "Group 70", "Resolver 89"),
        ("Group 70", "Group 70", "Resolver 90"),
    ]
    assert [group_name[g] for g in incident.groups_over_time] == ["Group 1", "Group 24", "Group 70"]
    assert incident.reassignment_count == 2
    # Every assignee belongs to the group it worked in, and to no other.
    members = {(group_name[g], user_name[u]) for g, u in history.memberships}
    assert members == {
        ("Group 24", "Resolver 31"),
        ("Group 70", "Resolver 89"),
        ("Group 70", "Resolver 90"),
    }


def test_awaiting_states_become_on_hold_with_their_reason(write_csv: Callable[..., Path]) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC3", "Active", "01-03-2016 09:30", mod=1),
        uci_row("INC3", "Awaiting User Info", "01-03-2016 10:00", mod=2),
        uci_row("INC3", "Awaiting User Info", "01-03-2016 12:00", mod=3),
        uci_row("INC3", "Awaiting Vendor", "01-03-2016 13:00", mod=4),
        uci_row("INC3", "Active", "02-03-2016 08:00", mod=5),
    )
    assert _states(path) == [
        (IncidentState.IN_PROGRESS, None),
        (IncidentState.ON_HOLD, HoldReason.AWAITING_CALLER),
        (IncidentState.ON_HOLD, HoldReason.AWAITING_VENDOR),
        (IncidentState.IN_PROGRESS, None),
    ]


def test_an_open_incident_has_no_resolution_even_though_the_log_is_enriched(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC4", "New", "01-03-2016 09:05", mod=0),
        uci_row("INC4", "Active", "01-03-2016 09:30", mod=1),
    )
    history, _ = import_history(path)
    (incident,) = history.incidents
    assert incident.active
    assert incident.resolution is None


def test_updates_out_of_time_order_keep_the_log_order_and_are_reported(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC5", "New", "01-03-2016 11:10", mod=1),
        uci_row("INC5", "New", "01-03-2016 09:52", mod=1),
        uci_row("INC5", "Resolved", "01-03-2016 11:03", mod=2),
    )
    history, report = import_history(path)
    assert [c.state for c in history.incidents[0].state_changes] == [
        IncidentState.NEW,
        IncidentState.RESOLVED,
    ]
    (issue,) = [i for i in report.issues if i.kind == "out_of_order"]
    assert (issue.line, issue.column) == (3, "sys_updated_at")


def test_priority_disagreeing_with_impact_and_urgency_is_derived_and_reported(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        UCI_HEADER, uci_row("INC6", "New", "01-03-2016 09:05", mod=0, priority="1 - Critical")
    )
    history, report = import_history(path)
    assert history.incidents[0].priority == 3
    (issue,) = [i for i in report.issues if i.column == "priority"]
    assert (issue.kind, issue.value) == ("inconsistent", "1")


def test_field_changes_become_audit_entries_with_the_updater(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC7", "New", "01-03-2016 09:05", mod=0, group="Group 1"),
        uci_row("INC7", "Active", "01-03-2016 09:30", mod=1, group="Group 24"),
    )
    history, _ = import_history(path)
    incident = history.incidents[0]
    changed = {c.field: (c.old, c.new) for c in incident.field_changes}
    assert changed["state"] == ("1", "2")
    assert changed["assignment_group"] == (
        next(g for g, v in history.groups.items() if v.name == "Group 1"),
        next(g for g, v in history.groups.items() if v.name == "Group 24"),
    )
    assert {history.users[c.by or ""].name for c in incident.field_changes} == {"Updated by 101"}


def test_people_with_doubled_blanks_in_their_label_are_one_person(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC8", "New", "01-03-2016 09:05", mod=0),
        uci_row("INC9", "New", "01-03-2016 09:05", mod=0).replace("Opened by  8", "Opened by 8"),
    )
    history, _ = import_history(path)
    first, second = history.incidents
    assert first.opened_by == second.opened_by
    assert history.users[first.opened_by or ""].name == "Opened by 8"
