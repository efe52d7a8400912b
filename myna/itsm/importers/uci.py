"""The UCI "incident management process enriched event log" (Amaral et al., 2018).

Each row is one update of an incident exported from a ServiceNow instance: the incident's fields
as they stood after the update. Rows of an incident are in the log's own order (by sys_mod_count),
which this reader keeps. The "enriched" columns closed_code, resolved_by, resolved_at and
closed_at repeat the incident's final values on every row, so they are read from its last row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from myna.itsm.importers.builder import HistoryBuilder
from myna.itsm.importers.lifecycle import Snapshot, rebuild
from myna.itsm.importers.model import Incident, Resolution, StateChange, stable_sys_id
from myna.itsm.importers.table import Cells, column_index, read_header, rows
from myna.itsm.importers.values import (
    MISSING_CLOSE_CODE,
    HoldReason,
    IncidentState,
    close_code,
    parse_bool,
    parse_datetime,
    parse_int,
    parse_level,
    parse_state,
    priority_of,
)

REQUIRED_COLUMNS = frozenset(
    {"number", "incident_state", "sys_mod_count", "sys_updated_at", "opened_at"}
)

# Columns with no incident field of the same meaning in ServiceNow's base system: a value in one
# is reported (once per distinct value) rather than dropped unremarked.
UNMAPPED_COLUMNS = {"vendor": "the vendor is not an incident field in ServiceNow's base system"}

_INACTIVE = (IncidentState.CLOSED, IncidentState.CANCELED)

NOTIFY = {"do not notify": "1", "send email": "2"}


@dataclass(frozen=True, slots=True)
class _Row:
    line: int
    number: str
    state: IncidentState
    hold_reason: HoldReason | None
    source_state: str
    active: bool | None
    reassignment_count: int | None
    reopen_count: int | None
    mod_count: int | None
    made_sla: bool | None
    caller: str | None
    opened_by: str | None
    opened_at: datetime
    created_by: str | None
    created_at: datetime | None
    updated_by: str | None
    updated_at: datetime
    contact_type: str | None
    location: str | None
    category: str | None
    subcategory: str | None
    symptom: str | None
    cmdb_ci: str | None
    impact: int | None
    urgency: int | None
    priority: int | None
    group: str | None
    assignee: str | None
    knowledge: bool | None
    priority_confirmation: bool | None
    notify: str | None
    problem: str | None
    rfc: str | None
    caused_by: str | None
    close_code: str | None
    resolved_by: str | None
    resolved_at: datetime | None
    closed_at: datetime | None


def read(path: Path, builder: HistoryBuilder) -> dict[str, str]:
    with path.open(newline="", encoding="utf-8-sig") as stream:
        header = read_header(stream, path)
        index = column_index(header)
        by_number: dict[str, list[_Row]] = {}
        for line, cells in rows(stream, header):
            row = _parse(Cells(cells, index, line=line, path=path, report=builder.report), builder)
            by_number.setdefault(row.number, []).append(row)
            builder.report.rows += 1
    for number, events in by_number.items():
        builder.add(_incident(number, events, builder))
    return header.metadata


def _parse(cells: Cells, b: HistoryBuilder) -> _Row:
    line = cells.line
    number = cells.required("number", lambda v: v.strip() if v else None)
    raw_state = cells.raw("incident_state") or ""
    state, _ = cells.attempt("incident_state", parse_state)
    if state is None:
        why = "no ServiceNow state of that name" if raw_state.strip() else "no state"
        b.report.add(line, "incident_state", raw_state, "unmapped", f"{why}; read as In Progress")
        state = (IncidentState.IN_PROGRESS, None)
    category = b.category(cells.text("category"), cells.text("subcategory"))
    group = b.group(cells.text("assignment_group"))
    assignee = b.user(cells.text("assigned_to"), "assignee", line=line, column="assigned_to")
    b.member(group, assignee)
    for column, why in UNMAPPED_COLUMNS.items():
        value = cells.text(column)
        if value is not None:
            b.report.add(line, column, value, "unmapped", f"not imported: {why}")
    notify = cells.text("notify")
    if notify is not None and notify.lower() not in NOTIFY:
        b.report.add(line, "notify", notify, "unmapped", "expected Do Not Notify or Send Email")
    return _Row(
        line=line,
        number=number,
        state=state[0],
        hold_reason=state[1],
        source_state=raw_state.strip(),
        active=cells.optional("active", parse_bool),
        reassignment_count=cells.optional("reassignment_count", parse_int),
        reopen_count=cells.optional("reopen_count", parse_int),
        mod_count=cells.optional("sys_mod_count", parse_int),
        made_sla=cells.optional("made_sla", parse_bool),
        caller=b.user(cells.text("caller_id"), "caller", line=line, column="caller_id"),
        opened_by=b.user(cells.text("opened_by"), "opener", line=line, column="opened_by"),
        opened_at=cells.required("opened_at", parse_datetime),
        created_by=b.user(
            cells.text("sys_created_by"), "creator", line=line, column="sys_created_by"
        ),
        created_at=cells.optional("sys_created_at", parse_datetime),
        updated_by=b.user(
            cells.text("sys_updated_by"), "updater", line=line, column="sys_updated_by"
        ),
        updated_at=cells.required("sys_updated_at", parse_datetime),
        contact_type=cells.text("contact_type"),
        location=b.location(cells.text("location")),
        category=category,
        subcategory=cells.text("subcategory") if category is not None else None,
        symptom=cells.text("u_symptom"),
        cmdb_ci=b.ci(cells.text("cmdb_ci")),
        impact=cells.optional("impact", lambda v: parse_level(v, low=1, high=3)),
        urgency=cells.optional("urgency", lambda v: parse_level(v, low=1, high=3)),
        priority=cells.optional("priority", lambda v: parse_level(v, low=1, high=5)),
        group=group,
        assignee=assignee,
        knowledge=cells.optional("knowledge", parse_bool),
        priority_confirmation=cells.optional("u_priority_confirmation", parse_bool),
        notify=NOTIFY.get(notify.lower()) if notify is not None else None,
        problem=b.problem(cells.text("problem_id"), line=line, column="problem_id"),
        rfc=b.change(cells.text("rfc"), line=line, column="rfc"),
        caused_by=b.change(cells.text("caused_by"), line=line, column="caused_by"),
        close_code=cells.text("closed_code"),
        resolved_by=b.user(cells.text("resolved_by"), "resolver", line=line, column="resolved_by"),
        resolved_at=cells.optional("resolved_at", parse_datetime),
        closed_at=cells.optional("closed_at", parse_datetime),
    )


def _audited(row: _Row) -> dict[str, str]:
    """The fields sys_audit tracks, as stored values (codes and sys_ids), empty when unset."""

    def text(value: object) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(int(value)) if isinstance(value, int) else str(value)

    return {
        "state": text(row.state),
        "hold_reason": text(row.hold_reason),
        "assignment_group": text(row.group),
        "assigned_to": text(row.assignee),
        "impact": text(row.impact),
        "urgency": text(row.urgency),
        "priority": text(_priority(row)),
        "category": text(row.category),
        "subcategory": text(row.subcategory),
        "u_symptom": text(row.symptom),
        "cmdb_ci": text(row.cmdb_ci),
        "location": text(row.location),
        "problem_id": text(row.problem),
        "rfc": text(row.rfc),
        "caused_by": text(row.caused_by),
        "knowledge": text(row.knowledge),
        "u_priority_confirmation": text(row.priority_confirmation),
    }


def _priority(row: _Row) -> int | None:
    if row.impact is not None and row.urgency is not None:
        return priority_of(row.impact, row.urgency)
    return row.priority


def _incident(number: str, events: list[_Row], b: HistoryBuilder) -> Incident:
    first, last = events[0], events[-1]
    report = b.report
    for before, after in pairwise(events):
        if after.updated_at < before.updated_at:
            report.add(
                after.line,
                "sys_updated_at",
                after.updated_at.isoformat(sep=" "),
                "out_of_order",
                "update is earlier than the one before it; kept the log's order",
            )
    for row in events:
        if row.active is not None and row.active != (row.state not in _INACTIVE):
            report.add(
                row.line,
                "active",
                str(row.active).upper(),
                "inconsistent",
                f"active disagrees with state {row.source_state!r}; the state is used",
            )
        derived = _priority(row)
        if row.priority is not None and derived is not None and derived != row.priority:
            report.add(
                row.line,
                "priority",
                str(row.priority),
                "inconsistent",
                f"impact {row.impact} x urgency {row.urgency} gives priority {derived} in "
                "ServiceNow's matrix; the derived priority is used",
            )
    snapshots = [
        Snapshot(
            line=row.line,
            at=row.updated_at,
            state=row.state,
            hold_reason=row.hold_reason,
            source_state=row.source_state,
            group=row.group,
            assignee=row.assignee,
            by=row.updated_by,
            mod_count=row.mod_count if row.mod_count is not None else position,
            fields=_audited(row),
        )
        for position, row in enumerate(events)
    ]
    lifecycle = rebuild(snapshots)
    reopen_count = last.reopen_count if last.reopen_count is not None else len(lifecycle.reopenings)
    if reopen_count != len(lifecycle.reopenings):
        report.add(
            last.line,
            "reopen_count",
            str(reopen_count),
            "inconsistent",
            f"the log shows {len(lifecycle.reopenings)} reopenings; kept the column's count",
        )
    resolution = None
    if last.state in (IncidentState.RESOLVED, IncidentState.CLOSED):
        code, mapped = close_code(last.close_code)
        if last.close_code is not None and not mapped:
            report.add(
                last.line,
                "closed_code",
                last.close_code,
                "kept_verbatim",
                "not one of ServiceNow's close codes (anonymised in the source); kept as is",
            )
        if code is None:
            report.add(last.line, "closed_code", "", "inconsistent", MISSING_CLOSE_CODE)
        resolved_at = last.resolved_at
        if resolved_at is None:
            resolved_at = _last_resolved(lifecycle.state_changes)
            report.add(
                last.line,
                "resolved_at",
                "",
                "inconsistent",
                "resolved without resolved_at; the log's last change to Resolved is used"
                if resolved_at is not None
                else "resolved without resolved_at, and the log shows no change to Resolved",
            )
        closed_at = last.closed_at
        if last.state == IncidentState.CLOSED and closed_at is None:
            closed_at = lifecycle.state_changes[-1].at
            report.add(
                last.line,
                "closed_at",
                "",
                "inconsistent",
                "closed without closed_at; the log's change to Closed is used",
            )
        resolution = Resolution(
            code=code,
            source_code=last.close_code,
            resolved_by=last.resolved_by,
            resolved_at=resolved_at,
            closed_at=closed_at if last.state == IncidentState.CLOSED else None,
        )
    return Incident(
        sys_id=stable_sys_id("incident", number),
        number=b.incident_number(number, line=first.line, column="number"),
        source_key=number,
        line=first.line,
        opened_at=first.opened_at,
        state=last.state,
        hold_reason=last.hold_reason,
        source_state=last.source_state,
        caller=last.caller,
        opened_by=first.opened_by,
        created_at=first.created_at,
        created_by=first.created_by,
        updated_at=last.updated_at,
        updated_by=last.updated_by,
        contact_type=last.contact_type,
        impact=last.impact,
        urgency=last.urgency,
        priority=_priority(last),
        category=last.category,
        subcategory=last.subcategory,
        symptom=last.symptom,
        location=last.location,
        cmdb_ci=last.cmdb_ci,
        assignment_group=last.group,
        assigned_to=last.assignee,
        knowledge=last.knowledge,
        made_sla=last.made_sla,
        problem=last.problem,
        rfc=last.rfc,
        caused_by=last.caused_by,
        reassignment_count=last.reassignment_count
        if last.reassignment_count is not None
        else sum(1 for move in lifecycle.reassignments if move.group_changed and move.from_group),
        reopen_count=reopen_count,
        mod_count=last.mod_count if last.mod_count is not None else len(events) - 1,
        resolution=resolution,
        state_changes=lifecycle.state_changes,
        reassignments=lifecycle.reassignments,
        reopenings=lifecycle.reopenings,
        field_changes=lifecycle.field_changes,
        extra=_extra(last),
    )


def _last_resolved(changes: tuple[StateChange, ...]) -> datetime | None:
    resolved = [change.at for change in changes if change.state == IncidentState.RESOLVED]
    return resolved[-1] if resolved else None


def _extra(row: _Row) -> tuple[tuple[str, str], ...]:
    extra: list[tuple[str, str]] = []
    if row.notify is not None:
        extra.append(("notify", row.notify))
    if row.priority_confirmation is not None:
        extra.append(("u_priority_confirmation", "true" if row.priority_confirmation else "false"))
    return tuple(extra)
