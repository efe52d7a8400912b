"""The BPI Challenge 2014 incident table (Rabobank, HP Service Manager), as published and as the
Kaggle "ITSM dataset" renamed its columns.

One row per incident with its open, reopen, resolved and close times. The table keeps only the
last reopen time, so the resolution a reopening undid is placed at the reopen time (inferred).
Impact and urgency are graded 1..5 and mapped onto ServiceNow's 1..3 (see `FIVE_TO_THREE`);
priority is then derived from ServiceNow's matrix. Assignment groups live in BPIC's separate
activity log, so incidents from this table are unassigned.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from myna.itsm.importers.builder import HistoryBuilder
from myna.itsm.importers.lifecycle import Snapshot, rebuild
from myna.itsm.importers.model import Incident, Resolution, stable_sys_id
from myna.itsm.importers.table import Cells, column_index, read_header, rows
from myna.itsm.importers.values import (
    FIVE_TO_THREE,
    IncidentState,
    close_code,
    parse_datetime,
    parse_int,
    parse_level,
    parse_state,
    priority_of,
)

# The published table's column names (normalised) -> the Kaggle names this reader uses.
ALIASES = {
    "ci_name_(aff)": "ci_name",
    "ci_type_(aff)": "ci_cat",
    "ci_subtype_(aff)": "ci_subcat",
    "service_component_wbs_(aff)": "wbs",
    "km_number": "kb_number",
    "no_reassignments": "no_of_reassignments",
    "no_related_interactions": "no_of_related_interactions",
    "no_related_incidents": "no_of_related_incidents",
    "no_related_changes": "no_of_related_changes",
    "handle_time_(hours)": "handle_time_hrs",
}
COLUMNS = frozenset({"incident_id", "open_time", "closure_code"})

# HPSM CI types -> the CMDB table ServiceNow keeps such items in.
CI_CLASSES = {
    "application": "cmdb_ci_appl",
    "subapplication": "cmdb_ci_appl",
    "applicationcomponent": "cmdb_ci_appl",
    "computer": "cmdb_ci_computer",
    "database": "cmdb_ci_database",
    "hardware": "cmdb_ci_hardware",
    "storage": "cmdb_ci_storage_device",
    "software": "cmdb_ci_spkg",
    "networkcomponents": "cmdb_ci_netgear",
    "displaydevice": "cmdb_ci_display_hardware",
    "officeelectronics": "cmdb_ci_printer",
}

UNMAPPED_COLUMNS = {
    "number_cnt": "a random number the Kaggle copy added",
    "handle_time_hrs": "HPSM's handle time has no ServiceNow field (and Kaggle mangled it)",
    "alert_status": "HPSM's SLA alert status has no ServiceNow field",
    "related_interaction": "interactions are HPSM service-desk records with no table here",
}


def read(path: Path, builder: HistoryBuilder) -> dict[str, str]:
    with path.open(newline="", encoding="utf-8-sig") as stream:
        header = read_header(stream, path)
        index = column_index(header, ALIASES)
        for line, cells in rows(stream, header):
            builder.report.rows += 1
            builder.add(
                _incident(Cells(cells, index, line=line, path=path, report=builder.report), builder)
            )
    return header.metadata


def _grade(cells: Cells, column: str) -> int | None:
    """A 1..5 grade as ServiceNow's 1..3; "NS" (not specified) and the like are reported."""
    grade, error = cells.attempt(column, lambda v: parse_level(v, low=1, high=5))
    raw = (cells.raw(column) or "").strip()
    if grade is None and raw:
        why = error or "not specified"
        cells.report.add(cells.line, column, raw, "unmapped", f"{why}; left empty")
    return FIVE_TO_THREE[grade] if grade is not None else None


def _resolution(
    cells: Cells,
    state: IncidentState,
    code: str | None,
    source_code: str | None,
    resolved_at: datetime | None,
    closed_at: datetime | None,
) -> Resolution | None:
    if state not in (IncidentState.RESOLVED, IncidentState.CLOSED):
        return None
    if resolved_at is None and closed_at is not None:
        # HPSM lets an incident be closed without a separate resolution step.
        resolved_at = closed_at
        cells.report.add(
            cells.line,
            "resolved_time",
            "",
            "inconsistent",
            "closed without a resolved time; the close time is used",
        )
    return Resolution(code, source_code, None, resolved_at, closed_at)


def _incident(cells: Cells, b: HistoryBuilder) -> Incident:
    line = cells.line
    key = cells.required("incident_id", lambda v: v.strip() if v else None)
    opened_at = cells.required("open_time", parse_datetime)
    reopened_at = cells.optional("reopen_time", parse_datetime)
    resolved_at = cells.optional("resolved_time", parse_datetime)
    closed_at = cells.optional("close_time", parse_datetime)
    raw_status = (cells.raw("status") or "Closed").strip()
    parsed, _ = cells.attempt("status", parse_state)
    state = parsed[0] if parsed is not None else IncidentState.CLOSED
    if parsed is None:
        b.report.add(line, "status", raw_status, "unmapped", "unknown status; read as Closed")
    for column, why in UNMAPPED_COLUMNS.items():
        if cells.text(column) is not None:
            b.report.add(line, column, "(any value)", "unmapped", f"column not imported: {why}")
    impact, urgency = _grade(cells, "impact"), _grade(cells, "urgency")
    ci_cat = cells.text("ci_cat")
    ci_class = CI_CLASSES.get((ci_cat or "").lower().replace(" ", ""), "cmdb_ci")
    if ci_cat is not None and ci_class == "cmdb_ci":
        b.report.add(
            line, "ci_cat", ci_cat, "kept_verbatim", "unknown CI type; filed under cmdb_ci"
        )
    ci = b.ci(
        cells.text("ci_name"),
        ci_class=ci_class,
        category=ci_cat,
        subcategory=cells.text("ci_subcat"),
    )
    service = b.ci(cells.text("wbs"), ci_class="cmdb_ci_service")
    related_change = cells.text("related_change")
    rfc = None
    if related_change is not None and related_change.startswith("#"):
        b.report.add(
            line,
            "related_change",
            related_change,
            "unmapped",
            "several changes, listed only in BPIC's change table",
        )
    else:
        rfc = b.change(related_change, line=line, column="related_change")

    def snap(at: datetime, to: IncidentState, label: str) -> Snapshot:
        return Snapshot(line, at, to, None, label, None, None, None, 0, inferred=True)

    points = [snap(opened_at, IncidentState.NEW, "Open")]
    if reopened_at is not None:
        points += [
            snap(reopened_at, IncidentState.RESOLVED, "Resolved"),
            snap(reopened_at, IncidentState.IN_PROGRESS, "Reopened"),
        ]
    if resolved_at is not None:
        points.append(snap(resolved_at, IncidentState.RESOLVED, "Resolved"))
    if closed_at is not None and state == IncidentState.CLOSED:
        points.append(snap(closed_at, IncidentState.CLOSED, raw_status))
    lifecycle = rebuild(points)
    source_code = cells.text("closure_code")
    code, known = close_code(source_code)
    if source_code is not None and not known:
        b.report.add(
            line,
            "closure_code",
            source_code,
            "kept_verbatim",
            "no ServiceNow close code for it; kept as is",
        )
    kb = cells.text("kb_number")
    return Incident(
        sys_id=stable_sys_id("incident", key),
        number=b.incident_number(key, line=line, column="incident_id"),
        source_key=key,
        line=line,
        opened_at=opened_at,
        state=state,
        source_state=raw_status,
        created_at=opened_at,
        updated_at=max(p.at for p in points),
        impact=impact,
        urgency=urgency,
        priority=priority_of(impact, urgency) if impact and urgency else None,
        category=b.category(cells.text("category"), None),
        cmdb_ci=ci,
        business_service=service,
        knowledge=kb is not None,
        rfc=rfc,
        reassignment_count=cells.optional("no_of_reassignments", parse_int) or 0,
        reopen_count=len(lifecycle.reopenings),
        resolution=_resolution(cells, state, code, source_code, resolved_at, closed_at),
        state_changes=lifecycle.state_changes,
        reopenings=lifecycle.reopenings,
        extra=(("u_kb_number", kb),) if kb is not None else (),
    )
