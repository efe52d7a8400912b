"""ServiceNow list exports: CSV (field names or column labels), or JSON as `{"records": [...]}`
(the `?JSON` list export), `{"result": [...]}` (the Table API) or a bare list.

An export is one snapshot per record, so an incident's lifecycle is rebuilt from its timestamp
columns (opened, resolved, closed, last updated) and marked inferred. Reference fields may hold
display values ("Abel Tuter"), raw sys_ids, or, in JSON, `{"value", "display_value", "link"}`
objects; the record's own sys_id is kept when the export has one. The table of each record
(incident, problem, change_request) is read from `sys_class_name` or the number's prefix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from myna.errors import InputError
from myna.itsm.importers.builder import HistoryBuilder, is_sys_id
from myna.itsm.importers.lifecycle import Snapshot, rebuild
from myna.itsm.importers.model import (
    ChangeRequest,
    Incident,
    JournalEntry,
    Problem,
    Resolution,
    stable_sys_id,
)
from myna.itsm.importers.table import column_index, normalise_column, read_header, rows
from myna.itsm.importers.values import (
    CHANGE_STATES,
    MISSING_CLOSE_CODE,
    PROBLEM_STATES,
    SERVICENOW_CATEGORIES,
    HoldReason,
    IncidentState,
    clean,
    close_code,
    is_missing,
    parse_bool,
    parse_datetime,
    parse_hold_reason,
    parse_int,
    parse_level,
    parse_state,
    priority_of,
    stored_choice,
)

# Column labels of a list export made with labels instead of field names -> field names.
LABELS = {
    "opened": "opened_at",
    "caller": "caller_id",
    "updated": "sys_updated_on",
    "updated_by": "sys_updated_by",
    "created": "sys_created_on",
    "created_by": "sys_created_by",
    "resolved": "resolved_at",
    "closed": "closed_at",
    "resolution_code": "close_code",
    "resolution_notes": "close_notes",
    "configuration_item": "cmdb_ci",
    "channel": "contact_type",
    "on_hold_reason": "hold_reason",
    "additional_comments": "comments",
    "problem": "problem_id",
    "change_request": "rfc",
    "caused_by_change": "caused_by",
    "updates": "sys_mod_count",
    "task_type": "sys_class_name",
    "class": "sys_class_name",
    "sys_updated_at": "sys_updated_on",
    "planned_start_date": "start_date",
    "planned_end_date": "end_date",
}
T = TypeVar("T")

COLUMNS = frozenset({"number", "short_description"})

_PREFIX_TABLES = {"INC": "incident", "PRB": "problem", "CHG": "change_request"}
_JOURNAL_HEADER = re.compile(
    r"^(?P<at>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) - (?P<who>.+?) \((?P<kind>[^)]+)\)\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class _Value:
    value: str | None
    display: str | None

    @property
    def label(self) -> str | None:
        return self.display if self.display is not None else self.value

    @property
    def sys_id(self) -> str | None:
        return self.value if self.value is not None and is_sys_id(self.value) else None


@dataclass(frozen=True, slots=True)
class _Record:
    line: int
    """The CSV line, or the entry's index in a JSON export."""
    fields: Mapping[str, _Value]
    from_json: bool = False

    def get(self, name: str) -> _Value:
        return self.fields.get(name, _Value(None, None))

    def text(self, name: str) -> str | None:
        return clean(self.get(name).label)

    def body(self, name: str) -> str | None:
        """A free-text field with its line breaks."""
        return self.get(name).label


def read(path: Path, builder: HistoryBuilder) -> dict[str, str]:
    if path.suffix.lower() == ".json":
        _import(_json_records(path), path, builder)
        return {}
    with path.open(newline="", encoding="utf-8-sig") as stream:
        header = read_header(stream, path)
        index = column_index(header, LABELS)
        records = (
            _Record(line, {name: _cell(cells[at]) for name, at in index.items() if at < len(cells)})
            for line, cells in rows(stream, header)
        )
        _import(records, path, builder)
    return header.metadata


def _import(records: Iterable[_Record], path: Path, builder: HistoryBuilder) -> None:
    for record in records:
        builder.report.rows += 1
        number = record.text("number")
        if number is None:
            builder.report.add(
                record.line, "number", "", "unmapped", "a record without a number; not imported"
            )
            continue
        table = _table_of(record)
        if table == "incident":
            builder.add(_incident(record, path, builder))
        elif table == "problem":
            builder.put_problem(_problem(record, builder))
        elif table == "change_request":
            builder.put_change(_change(record, builder))
        else:
            builder.report.add(
                record.line,
                "number",
                number,
                "unmapped",
                "not an incident, problem or change request (by sys_class_name or number prefix); "
                "record not imported",
            )


def _cell(text: str) -> _Value:
    # Kept with its line breaks: journal columns and descriptions are multi-line; `text()`
    # collapses blanks for single-line fields.
    return _Value(None if is_missing(text) else text.strip(), None)


def _json_records(path: Path) -> Iterator[_Record]:
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as invalid:
        raise InputError(
            f"not valid JSON: {invalid.msg}", file=str(path), line=invalid.lineno
        ) from None
    items: Any = document
    if isinstance(document, dict):
        for key in ("records", "result"):
            if isinstance(document.get(key), list):
                items = document[key]
                break
        else:
            raise InputError(
                'expected a list of records, or an object with a "records" or "result" list',
                file=str(path),
            )
    if not isinstance(items, list):
        raise InputError("expected a list of records", file=str(path))
    for entry, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(
                f"expected a record object, got {type(item).__name__}", file=str(path), entry=entry
            )
        yield _Record(
            entry,
            {
                LABELS.get(normalise_column(k), normalise_column(k)): _json_value(v)
                for k, v in item.items()
            },
            from_json=True,
        )


def _json_value(value: Any) -> _Value:
    if isinstance(value, dict):
        raw = value.get("value")
        display = value.get("display_value")
        return _Value(
            _cell(str(raw)).value if raw is not None else None,
            _cell(str(display)).value if display is not None else None,
        )
    if value is None:
        return _Value(None, None)
    if isinstance(value, bool):
        return _Value("true" if value else "false", None)
    return _cell(str(value))


def _table_of(record: _Record) -> str | None:
    declared = record.text("sys_class_name")
    if declared in ("incident", "problem", "change_request"):
        return declared
    number = record.text("number") or ""
    return _PREFIX_TABLES.get(number[:3].upper())


def _parse(
    record: _Record, name: str, parse: Callable[[str | None], T | None], builder: HistoryBuilder
) -> T | None:
    raw = record.get(name).value
    try:
        return parse(raw)
    except ValueError as invalid:
        assert raw is not None
        builder.report.add(record.line, name, raw, "invalid", f"{invalid}; left empty")
        return None


def _date(record: _Record, name: str, builder: HistoryBuilder) -> datetime | None:
    return _parse(record, name, parse_datetime, builder)


def _user(record: _Record, name: str, role: str, builder: HistoryBuilder) -> str | None:
    field = record.get(name)
    return builder.user(field.label, role, line=record.line, column=name, sys_id=field.sys_id)


def _group(record: _Record, builder: HistoryBuilder) -> str | None:
    field = record.get("assignment_group")
    return builder.group(field.label, sys_id=field.sys_id)


def _ci(record: _Record, builder: HistoryBuilder) -> str | None:
    field = record.get("cmdb_ci")
    return builder.ci(field.label, sys_id=field.sys_id)


def _task(record: _Record, name: str, reference: Callable[..., str | None]) -> str | None:
    field = record.get(name)
    return reference(field.label, line=record.line, column=name, sys_id=field.sys_id)


def _incident(record: _Record, path: Path, b: HistoryBuilder) -> Incident:
    line = record.line
    number = record.text("number")
    assert number is not None
    opened_at = _date(record, "opened_at", b) or _date(record, "sys_created_on", b)
    if opened_at is None:
        raise InputError(
            "an incident needs opened_at (or sys_created_on) to place its lifecycle",
            file=str(path),
            line=None if record.from_json else line,
            entry=line if record.from_json else None,
            field="opened_at",
            number=number,
        )
    state_field = "state" if record.get("state").value is not None else "incident_state"
    raw_state = record.get(state_field).label or ""
    try:
        parsed_state = parse_state(raw_state)
    except ValueError:
        parsed_state = None
    state, hold = parsed_state if parsed_state is not None else (IncidentState.NEW, None)
    if parsed_state is None:
        why = "no ServiceNow state of that name" if raw_state else "no state"
        b.report.add(line, state_field, raw_state, "unmapped", f"{why}; read as New")
    hold = _parse(record, "hold_reason", parse_hold_reason, b) or hold
    group = _group(record, b)
    assignee = _user(record, "assigned_to", "assignee", b)
    b.member(group, assignee)
    updated_by = _user(record, "sys_updated_by", "updater", b)
    resolved_at = _date(record, "resolved_at", b)
    closed_at = _date(record, "closed_at", b)
    updated_at = _date(record, "sys_updated_on", b) or opened_at
    impact = _parse(record, "impact", lambda v: parse_level(v, low=1, high=3), b)
    urgency = _parse(record, "urgency", lambda v: parse_level(v, low=1, high=3), b)
    source_priority = _parse(record, "priority", lambda v: parse_level(v, low=1, high=5), b)
    priority = priority_of(impact, urgency) if impact and urgency else source_priority
    if source_priority is not None and priority != source_priority:
        b.report.add(
            line,
            "priority",
            str(source_priority),
            "inconsistent",
            f"impact {impact} x urgency {urgency} gives priority {priority} in ServiceNow's "
            "matrix; the derived priority is used",
        )
    category = record.text("category")
    if category is not None:
        category = SERVICENOW_CATEGORIES.get(category.lower(), category)
    category = b.category(category, record.text("subcategory"))
    snapshots = _inferred_snapshots(
        record,
        opened_at,
        state,
        hold,
        raw_state,
        resolved_at,
        closed_at,
        updated_at,
        group,
        assignee,
        updated_by,
    )
    lifecycle = rebuild(snapshots)
    resolution = None
    if state in (IncidentState.RESOLVED, IncidentState.CLOSED) or resolved_at is not None:
        source_code = record.text("close_code")
        code, known = close_code(source_code)
        if source_code is not None and not known:
            b.report.add(
                line,
                "close_code",
                source_code,
                "kept_verbatim",
                "not one of ServiceNow's close codes; kept as is",
            )
        if code is None:
            b.report.add(line, "close_code", "", "inconsistent", MISSING_CLOSE_CODE)
        resolution = Resolution(
            code=code,
            source_code=source_code,
            resolved_by=_user(record, "resolved_by", "resolver", b),
            resolved_at=resolved_at,
            closed_at=closed_at,
            closed_by=_user(record, "closed_by", "closer", b),
            notes=record.body("close_notes"),
        )
    sys_id = record.get("sys_id").sys_id or stable_sys_id("incident", number)
    return Incident(
        sys_id=sys_id,
        number=b.incident_number(number, line=line, column="number"),
        source_key=number,
        line=line,
        opened_at=opened_at,
        state=state,
        hold_reason=hold if state == IncidentState.ON_HOLD else None,
        source_state=raw_state,
        short_description=record.text("short_description"),
        description=record.body("description"),
        caller=_user(record, "caller_id", "caller", b),
        opened_by=_user(record, "opened_by", "opener", b),
        created_at=_date(record, "sys_created_on", b),
        created_by=_user(record, "sys_created_by", "creator", b),
        updated_at=updated_at,
        updated_by=updated_by,
        contact_type=record.text("contact_type"),
        impact=impact,
        urgency=urgency,
        priority=priority,
        category=category,
        subcategory=record.text("subcategory") if category is not None else None,
        location=b.location(record.get("location").label, sys_id=record.get("location").sys_id),
        cmdb_ci=_ci(record, b),
        assignment_group=group,
        assigned_to=assignee,
        knowledge=_parse(record, "knowledge", parse_bool, b),
        made_sla=_parse(record, "made_sla", parse_bool, b),
        problem=_task(record, "problem_id", b.problem),
        rfc=_task(record, "rfc", b.change),
        caused_by=_task(record, "caused_by", b.change),
        parent_incident=record.get("parent_incident").value,
        reassignment_count=_parse(record, "reassignment_count", parse_int, b) or 0,
        reopen_count=_parse(record, "reopen_count", parse_int, b) or 0,
        mod_count=_parse(record, "sys_mod_count", parse_int, b) or 0,
        resolution=resolution,
        state_changes=lifecycle.state_changes,
        reassignments=lifecycle.reassignments,
        reopenings=lifecycle.reopenings,
        journal=_journal(record, updated_at, updated_by, b),
    )


def _inferred_snapshots(
    record: _Record,
    opened_at: datetime,
    state: IncidentState,
    hold: HoldReason | None,
    raw_state: str,
    resolved_at: datetime | None,
    closed_at: datetime | None,
    updated_at: datetime,
    group: str | None,
    assignee: str | None,
    updated_by: str | None,
) -> list[Snapshot]:
    """New when opened, Resolved and Closed when their columns say, and the current state as of
    the last update if it is none of those: all an export can tell about the past."""

    def snap(at: datetime, to: IncidentState, reason: HoldReason | None, label: str) -> Snapshot:
        return Snapshot(record.line, at, to, reason, label, group, assignee, None, 0, inferred=True)

    points = [snap(opened_at, IncidentState.NEW, None, "New")]
    if resolved_at is not None and state in (IncidentState.RESOLVED, IncidentState.CLOSED):
        points.append(snap(resolved_at, IncidentState.RESOLVED, None, "Resolved"))
    if closed_at is not None and state == IncidentState.CLOSED:
        points.append(snap(closed_at, IncidentState.CLOSED, None, "Closed"))
    if (points[-1].state, points[-1].hold_reason) != (state, hold):
        points.append(snap(max(updated_at, points[-1].at), state, hold, raw_state))
    points.sort(key=lambda point: point.at)
    return points


def _journal(
    record: _Record, updated_at: datetime, updated_by: str | None, b: HistoryBuilder
) -> tuple[JournalEntry, ...]:
    entries: list[JournalEntry] = []
    for element in ("work_notes", "comments"):
        text = record.get(element).label
        if not text:
            continue
        for at, who, body in _split_journal(text):
            author = (
                b.user(who, "journal_author", line=record.line, column=element)
                if who
                else updated_by
            )
            entries.append(
                JournalEntry(
                    at=at or updated_at,
                    element=element,
                    text=body,
                    by=author,
                    line=record.line,
                    reconstructed=False,
                )
            )
    entries.sort(key=lambda entry: entry.at)
    return tuple(entries)


def _split_journal(text: str) -> list[tuple[datetime | None, str | None, str]]:
    """A journal column as exported: entries headed "YYYY-MM-DD HH:MM:SS - Who (Work notes)"."""
    headers = list(_JOURNAL_HEADER.finditer(text))
    if not headers:
        return [(None, None, text.strip())]
    entries = []
    for position, header in enumerate(headers):
        end = headers[position + 1].start() if position + 1 < len(headers) else len(text)
        body = text[header.end() : end].strip()
        entries.append((parse_datetime(header["at"]), header["who"].strip(), body))
    return entries


def _problem(record: _Record, b: HistoryBuilder) -> Problem:
    number = record.text("number")
    assert number is not None
    state, known = stored_choice(record.get("state").label, PROBLEM_STATES)
    if not known and state is not None:
        b.report.add(
            record.line, "state", state, "kept_verbatim", "unknown problem state; kept as is"
        )
    return Problem(
        sys_id=record.get("sys_id").sys_id or stable_sys_id("problem", number.casefold()),
        key=number,
        number=number,
        short_description=record.text("short_description"),
        state=state,
        opened_at=_date(record, "opened_at", b),
        closed_at=_date(record, "closed_at", b),
        cmdb_ci=_ci(record, b),
        assignment_group=_group(record, b),
        assigned_to=_user(record, "assigned_to", "assignee", b),
    )


def _change(record: _Record, b: HistoryBuilder) -> ChangeRequest:
    number = record.text("number")
    assert number is not None
    state, known = stored_choice(record.get("state").label, CHANGE_STATES)
    if not known and state is not None:
        b.report.add(
            record.line, "state", state, "kept_verbatim", "unknown change state; kept as is"
        )
    group = _group(record, b)
    assignee = _user(record, "assigned_to", "assignee", b)
    b.member(group, assignee)
    change_type = record.text("type")
    return ChangeRequest(
        sys_id=record.get("sys_id").sys_id or stable_sys_id("change_request", number.casefold()),
        key=number,
        number=number,
        short_description=record.text("short_description"),
        state=state,
        type=change_type.lower() if change_type else None,
        opened_at=_date(record, "opened_at", b),
        closed_at=_date(record, "closed_at", b),
        start_date=_date(record, "start_date", b),
        end_date=_date(record, "end_date", b),
        cmdb_ci=_ci(record, b),
        assignment_group=group,
        assigned_to=assignee,
    )
