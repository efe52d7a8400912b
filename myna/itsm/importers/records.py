"""An imported history as ServiceNow Table API records, table by table.

Records are plain dicts of ServiceNow field names to string values, as the Table API stores and
sends them (`sysparm_display_value=false`): choices as their stored values ("2", not "In
Progress"), references as sys_ids, date-times as `YYYY-MM-DD HH:MM:SS`, booleans as "true" and
"false", and "" for empty. The seeding layer loads them as a world.

Where the source lacks what ServiceNow requires, the conversion fills it and says so in the value:
a short description built from the symptom and category, close notes naming the close code, and
work notes for holds, reassignments and reopenings reconstructed from the event log (prefixed
"[imported]"). Problems and changes known only as references get ServiceNow's insert defaults
(problem state 101 New, change state -5 New).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from myna.itsm.importers.model import (
    Incident,
    IncidentHistory,
    JournalEntry,
    stable_sys_id,
)
from myna.itsm.importers.values import HoldReason, IncidentState, format_datetime

Record = dict[str, str]

TABLES = (
    "incident",
    "problem",
    "change_request",
    "sys_user",
    "sys_user_group",
    "sys_user_grmember",
    "cmn_location",
    "cmdb_ci",
    "sys_journal_field",
    "sys_audit",
)
IMPORTER = "myna.import"
"""sys_created_by of records the source does not attribute to anyone."""


def _flag(value: bool | None) -> str:
    return "" if value is None else ("true" if value else "false")


def _int(value: int | None) -> str:
    return "" if value is None else str(int(value))


def to_servicenow_records(
    history: IncidentHistory, *, custom_fields: bool = True
) -> dict[str, list[Record]]:
    """Every table's records for `history`; each table key is present, possibly empty.

    `custom_fields=False` leaves out the instance-specific `u_*` fields (UCI's `u_symptom`,
    `u_priority_confirmation`, BPIC's `u_kb_number`), for a back end that only knows the base
    system's dictionary; the symptom still shows in the short description.
    """
    context = _Context.of(history)
    out = {table: list(build(history, context)) for table, build in _BUILDERS.items()}
    if not custom_fields:
        for table in ("incident", "problem", "change_request"):
            out[table] = [
                {name: value for name, value in row.items() if not name.startswith("u_")}
                for row in out[table]
            ]
    return {table: out[table] for table in TABLES}


@dataclass(frozen=True, slots=True)
class _Context:
    created: str
    """sys_created_on of reference records: the history's first opening, so output is stable."""
    user_names: dict[str, str]
    names: dict[str, str]
    linked: dict[str, list[Incident]]

    @classmethod
    def of(cls, history: IncidentHistory) -> _Context:
        epoch = min((i.opened_at for i in history.incidents), default=datetime(2000, 1, 1))
        names = {sys_id: user.name for sys_id, user in history.users.items()}
        names.update({sys_id: group.name for sys_id, group in history.groups.items()})
        return cls(
            created=format_datetime(epoch),
            user_names={sys_id: user.user_name for sys_id, user in history.users.items()},
            names=names,
            linked=_linked_incidents(history),
        )

    def user_name(self, sys_id: str | None) -> str:
        return self.user_names.get(sys_id or "", IMPORTER)


def _users(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for user in history.users.values():
        yield {
            "sys_id": user.sys_id,
            "user_name": user.user_name,
            "name": user.name,
            "first_name": user.first_name,
            "last_name": user.last_name,
            "email": user.email,
            "active": "true",
            **_system(c.created, IMPORTER, 0),
        }


def _groups(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for group in history.groups.values():
        yield {
            "sys_id": group.sys_id,
            "name": group.name,
            "active": "true",
            **_system(c.created, IMPORTER, 0),
        }


def _memberships(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for group_id, user_id in sorted(history.memberships):
        yield {
            "sys_id": stable_sys_id("sys_user_grmember", f"{group_id}:{user_id}"),
            "group": group_id,
            "user": user_id,
            **_system(c.created, IMPORTER, 0),
        }


def _locations(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for location in history.locations.values():
        yield {"sys_id": location.sys_id, "name": location.name, **_system(c.created, IMPORTER, 0)}


def _cis(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for ci in history.cis.values():
        yield {
            "sys_id": ci.sys_id,
            "name": ci.name,
            "sys_class_name": ci.ci_class,
            "category": ci.category or "",
            "subcategory": ci.subcategory or "",
            "operational_status": "1",
            **_system(c.created, IMPORTER, 0),
        }


def _problems(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for problem in history.problems.values():
        linked = c.linked.get(problem.sys_id, [])
        opened = format_datetime(problem.opened_at or (linked[0].opened_at if linked else None))
        opened = opened or c.created
        yield {
            "sys_id": problem.sys_id,
            "number": problem.number,
            "short_description": problem.short_description
            or _problem_description(problem.number, linked),
            "state": problem.state or "101",
            "opened_at": opened,
            "closed_at": format_datetime(problem.closed_at),
            "cmdb_ci": problem.cmdb_ci or "",
            "assignment_group": problem.assignment_group or "",
            "assigned_to": problem.assigned_to or "",
            "correlation_id": problem.key if problem.key != problem.number else "",
            "active": "false" if problem.closed_at else "true",
            **_system(opened, IMPORTER, 0),
        }


def _changes(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for change in history.changes.values():
        linked = c.linked.get(change.sys_id, [])
        opened = format_datetime(change.opened_at or (linked[0].opened_at if linked else None))
        opened = opened or c.created
        yield {
            "sys_id": change.sys_id,
            "number": change.number,
            "short_description": change.short_description
            or f"Change {change.number} (referenced by imported incidents)",
            "state": change.state or "-5",
            "type": change.type or "normal",
            "opened_at": opened,
            "closed_at": format_datetime(change.closed_at),
            "start_date": format_datetime(change.start_date),
            "end_date": format_datetime(change.end_date),
            "cmdb_ci": change.cmdb_ci or "",
            "assignment_group": change.assignment_group or "",
            "assigned_to": change.assigned_to or "",
            "correlation_id": change.key if change.key != change.number else "",
            "active": "false" if change.closed_at else "true",
            **_system(opened, IMPORTER, 0),
        }


def _incidents(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for incident in history.incidents:
        yield _incident(incident, c)


def _journal_fields(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for incident in history.incidents:
        for position, entry in enumerate(_journal(incident, c.names)):
            yield {
                "sys_id": stable_sys_id("sys_journal_field", f"{incident.sys_id}:{position}"),
                "name": "incident",
                "element_id": incident.sys_id,
                "element": entry.element,
                "value": entry.text,
                "sys_created_on": format_datetime(entry.at),
                "sys_created_by": c.user_name(entry.by),
            }


def _audit(history: IncidentHistory, c: _Context) -> Iterator[Record]:
    for incident in history.incidents:
        for position, update in enumerate(incident.field_changes):
            yield {
                "sys_id": stable_sys_id("sys_audit", f"{incident.sys_id}:{position}"),
                "tablename": "incident",
                "documentkey": incident.sys_id,
                "fieldname": update.field,
                "oldvalue": update.old,
                "newvalue": update.new,
                "user": c.user_name(update.by),
                "record_checkpoint": str(update.mod_count),
                "reason": "",
                "sys_created_on": format_datetime(update.at),
                "sys_created_by": c.user_name(update.by),
            }


_BUILDERS: dict[str, Callable[[IncidentHistory, _Context], Iterator[Record]]] = {
    "incident": _incidents,
    "problem": _problems,
    "change_request": _changes,
    "sys_user": _users,
    "sys_user_group": _groups,
    "sys_user_grmember": _memberships,
    "cmn_location": _locations,
    "cmdb_ci": _cis,
    "sys_journal_field": _journal_fields,
    "sys_audit": _audit,
}


def _system(created: str, by: str, mod_count: int) -> Record:
    return {
        "sys_created_on": created,
        "sys_created_by": by,
        "sys_updated_on": created,
        "sys_updated_by": by,
        "sys_mod_count": str(mod_count),
    }


def _linked_incidents(history: IncidentHistory) -> dict[str, list[Incident]]:
    linked: dict[str, list[Incident]] = {}
    for incident in history.incidents:
        for target in {incident.problem, incident.rfc, incident.caused_by} - {None}:
            assert target is not None
            linked.setdefault(target, []).append(incident)
    for incidents in linked.values():
        incidents.sort(key=lambda incident: incident.opened_at)
    return linked


def _problem_description(number: str, incidents: list[Incident]) -> str:
    symptoms = sorted({i.symptom or i.category or "" for i in incidents} - {""})
    about = f": {', '.join(symptoms[:3])}" if symptoms else ""
    return f"Problem {number} behind {len(incidents)} imported incident(s){about}"


def _short_description(incident: Incident) -> str:
    if incident.short_description:
        return incident.short_description
    topic = " / ".join(part for part in (incident.category, incident.subcategory) if part)
    if incident.symptom and topic:
        return f"{incident.symptom} ({topic})"
    return incident.symptom or topic or f"Imported incident {incident.source_key}"


def _incident(incident: Incident, c: _Context) -> Record:
    resolution = incident.resolution
    done = incident.state in (IncidentState.RESOLVED, IncidentState.CLOSED)
    last_reopen = incident.reopenings[-1] if incident.reopenings else None
    notes = ""
    if resolution is not None:
        notes = resolution.notes or (
            f"[imported] Resolved with close code {resolution.code}." if resolution.code else ""
        )
    record: Record = {
        "sys_id": incident.sys_id,
        "number": incident.number,
        "sys_class_name": "incident",
        "short_description": _short_description(incident),
        "description": incident.description or "",
        "state": _int(incident.state),
        "incident_state": _int(incident.state),
        "hold_reason": _int(incident.hold_reason)
        if incident.state == IncidentState.ON_HOLD
        else "",
        "impact": _int(incident.impact),
        "urgency": _int(incident.urgency),
        "priority": _int(incident.priority),
        "category": incident.category or "",
        "subcategory": incident.subcategory or "",
        "u_symptom": incident.symptom or "",
        "caller_id": incident.caller or "",
        "opened_by": incident.opened_by or "",
        "opened_at": format_datetime(incident.opened_at),
        "contact_type": (incident.contact_type or "").lower(),
        "location": incident.location or "",
        "cmdb_ci": incident.cmdb_ci or "",
        "business_service": incident.business_service or "",
        "assignment_group": incident.assignment_group or "",
        "assigned_to": incident.assigned_to or "",
        "active": _flag(incident.active),
        "knowledge": _flag(incident.knowledge),
        "made_sla": _flag(incident.made_sla),
        "problem_id": incident.problem or "",
        "rfc": incident.rfc or "",
        "caused_by": incident.caused_by or "",
        "parent_incident": incident.parent_incident or "",
        "reassignment_count": str(incident.reassignment_count),
        "reopen_count": str(incident.reopen_count),
        "reopened_time": format_datetime(last_reopen.at) if last_reopen else "",
        "reopened_by": (last_reopen.by or "") if last_reopen else "",
        "close_code": (resolution.code or "") if resolution and done else "",
        "close_notes": notes if done else "",
        "resolved_by": (resolution.resolved_by or "") if resolution and done else "",
        "resolved_at": format_datetime(resolution.resolved_at) if resolution and done else "",
        "closed_at": format_datetime(resolution.closed_at)
        if resolution and incident.state == IncidentState.CLOSED
        else "",
        "closed_by": (resolution.closed_by or "")
        if resolution and incident.state == IncidentState.CLOSED
        else "",
        "correlation_id": incident.source_key if incident.source_key != incident.number else "",
        "sys_created_on": format_datetime(incident.created_at or incident.opened_at),
        "sys_created_by": c.user_name(incident.created_by or incident.opened_by),
        "sys_updated_on": format_datetime(incident.updated_at or incident.opened_at),
        "sys_updated_by": c.user_name(incident.updated_by),
        "sys_mod_count": str(incident.mod_count),
    }
    record.update(dict(incident.extra))
    return record


def _journal(incident: Incident, names: dict[str, str]) -> Iterable[JournalEntry]:
    """The incident's own journal, then work notes reconstructed from its lifecycle events."""
    yield from incident.journal

    def name(sys_id: str | None) -> str:
        return names.get(sys_id or "", "(none)")

    for change in incident.state_changes:
        if change.state == IncidentState.ON_HOLD and not change.inferred:
            reason = (
                HoldReason(change.hold_reason).label if change.hold_reason else "no reason given"
            )
            yield _note(change.at, f"[imported] Placed on hold: {reason}.", change.by, change.line)
    for move in incident.reassignments:
        if move.from_group is not None and move.group_changed:
            text = f"[imported] Reassigned from {name(move.from_group)} to {name(move.to_group)}."
            yield _note(move.at, text, move.by, move.line)
    for reopening in incident.reopenings:
        text = f"[imported] Reopened from {reopening.from_state.label}."
        yield _note(reopening.at, text, reopening.by, reopening.line)


def _note(at: datetime, text: str, by: str | None, line: int) -> JournalEntry:
    return JournalEntry(at, "work_notes", text, by, line, reconstructed=True)
