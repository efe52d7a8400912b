"""The typed history an import produces: incidents with their lifecycles, and what they refer to.

Every reference entity carries its ServiceNow `sys_id` (32 hex digits derived from its source key,
see `stable_sys_id`), so the history converts to Table API records without a lookup table, and the
same source data always yields the same ids. Times are naive and read as UTC: the exports carry no
zone, and ServiceNow's Table API speaks UTC.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from myna.itsm.importers.values import HoldReason, IncidentState

SourceFormat = Literal["uci_event_log", "bpic2014", "servicenow"]
IssueKind = Literal["unmapped", "invalid", "inconsistent", "out_of_order", "kept_verbatim"]


def stable_sys_id(table: str, key: str) -> str:
    """A sys_id for the record of `table` known in the source as `key`: same input, same id."""
    return hashlib.sha256(f"{table}\x00{key}".encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class User:
    sys_id: str
    key: str
    """The person's identity in the source (a label, user name or sys_id), or its pseudonym."""
    name: str
    user_name: str
    email: str
    first_name: str
    last_name: str
    roles: frozenset[str]
    """How the person appears in the data: caller, assignee, resolver, opener, updater..."""


@dataclass(frozen=True, slots=True)
class Group:
    sys_id: str
    key: str
    name: str


@dataclass(frozen=True, slots=True)
class Location:
    sys_id: str
    key: str
    name: str


@dataclass(frozen=True, slots=True)
class ConfigurationItem:
    sys_id: str
    key: str
    name: str
    ci_class: str
    """The CMDB table the item belongs in (cmdb_ci, cmdb_ci_appl, cmdb_ci_server...)."""
    category: str | None = None
    subcategory: str | None = None


@dataclass(frozen=True, slots=True)
class Category:
    name: str
    subcategories: frozenset[str]


@dataclass(frozen=True, slots=True)
class Problem:
    sys_id: str
    key: str
    number: str
    short_description: str | None = None
    state: str | None = None
    """ServiceNow's stored value of the problem state, when the source gives one."""
    opened_at: datetime | None = None
    closed_at: datetime | None = None
    cmdb_ci: str | None = None
    assignment_group: str | None = None
    assigned_to: str | None = None


@dataclass(frozen=True, slots=True)
class ChangeRequest:
    sys_id: str
    key: str
    number: str
    short_description: str | None = None
    state: str | None = None
    type: str | None = None
    opened_at: datetime | None = None
    closed_at: datetime | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    cmdb_ci: str | None = None
    assignment_group: str | None = None
    assigned_to: str | None = None


@dataclass(frozen=True, slots=True)
class StateChange:
    """The incident entered `state` at `at`; `previous` is None for the opening state."""

    at: datetime
    state: IncidentState
    previous: IncidentState | None
    hold_reason: HoldReason | None
    by: str | None
    """sys_id of the user who made the change, when the source names one."""
    source_state: str
    """The state as the source wrote it ("Awaiting User Info", "Closed", "6")."""
    line: int
    inferred: bool = False
    """True when the source gives only a timestamp column, not an event (exports, BPIC)."""


@dataclass(frozen=True, slots=True)
class Reassignment:
    """The assignment group or assignee changed; None on a side means unassigned."""

    at: datetime
    from_group: str | None
    to_group: str | None
    from_user: str | None
    to_user: str | None
    by: str | None
    line: int

    @property
    def group_changed(self) -> bool:
        return self.from_group != self.to_group


@dataclass(frozen=True, slots=True)
class Reopening:
    at: datetime
    from_state: IncidentState
    to_state: IncidentState
    by: str | None
    line: int


@dataclass(frozen=True, slots=True)
class Resolution:
    code: str | None
    """The close code in ServiceNow's vocabulary, or the source's own when it has no mapping."""
    source_code: str | None
    resolved_by: str | None
    resolved_at: datetime | None
    closed_at: datetime | None
    closed_by: str | None = None
    notes: str | None = None


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field's change as sys_audit records it: ServiceNow field name and stored values."""

    at: datetime
    field: str
    old: str
    new: str
    by: str | None
    mod_count: int
    line: int


@dataclass(frozen=True, slots=True)
class JournalEntry:
    at: datetime
    element: Literal["work_notes", "comments"]
    text: str
    by: str | None
    line: int
    reconstructed: bool
    """True when the text was written by the importer from the event log, not by a person."""


@dataclass(frozen=True, slots=True)
class Incident:
    """One incident: its fields as last seen, and its lifecycle.

    References (caller, assignment_group, cmdb_ci, problem...) are sys_ids into the history's
    entity maps; categories are names into `IncidentHistory.categories`. Impact and urgency are on
    ServiceNow's 1..3 scale, priority on 1..5 and, when both are known, from the default matrix.
    """

    sys_id: str
    number: str
    source_key: str
    """The incident's id in the source (INC0000045, IM0000004...)."""
    line: int
    """The first source line that mentions the incident."""
    opened_at: datetime
    state: IncidentState
    hold_reason: HoldReason | None = None
    source_state: str | None = None
    short_description: str | None = None
    description: str | None = None
    caller: str | None = None
    opened_by: str | None = None
    created_at: datetime | None = None
    created_by: str | None = None
    updated_at: datetime | None = None
    updated_by: str | None = None
    contact_type: str | None = None
    impact: int | None = None
    urgency: int | None = None
    priority: int | None = None
    category: str | None = None
    subcategory: str | None = None
    symptom: str | None = None
    location: str | None = None
    cmdb_ci: str | None = None
    business_service: str | None = None
    assignment_group: str | None = None
    assigned_to: str | None = None
    knowledge: bool | None = None
    made_sla: bool | None = None
    problem: str | None = None
    rfc: str | None = None
    caused_by: str | None = None
    parent_incident: str | None = None
    reassignment_count: int = 0
    reopen_count: int = 0
    mod_count: int = 0
    resolution: Resolution | None = None
    state_changes: tuple[StateChange, ...] = ()
    reassignments: tuple[Reassignment, ...] = ()
    reopenings: tuple[Reopening, ...] = ()
    field_changes: tuple[FieldChange, ...] = ()
    journal: tuple[JournalEntry, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()
    """Further fields as (ServiceNow field name, stored value): notify, u_* custom fields."""

    @property
    def active(self) -> bool:
        return self.state not in (
            IncidentState.RESOLVED,
            IncidentState.CLOSED,
            IncidentState.CANCELED,
        )

    @property
    def groups_over_time(self) -> tuple[str, ...]:
        """Every assignment group the incident passed through, in order (a return counts again)."""
        seen: list[str] = []
        for group in (r.to_group for r in self.reassignments):
            if group is not None and (not seen or seen[-1] != group):
                seen.append(group)
        if self.assignment_group is not None and (not seen or seen[-1] != self.assignment_group):
            seen.append(self.assignment_group)
        return tuple(seen)


@dataclass(frozen=True, slots=True)
class IncidentHistory:
    source: str
    format: SourceFormat
    incidents: tuple[Incident, ...]
    users: dict[str, User]
    groups: dict[str, Group]
    locations: dict[str, Location]
    cis: dict[str, ConfigurationItem]
    categories: dict[str, Category]
    problems: dict[str, Problem]
    changes: dict[str, ChangeRequest]
    memberships: frozenset[tuple[str, str]]
    """(group sys_id, user sys_id) pairs: every assignee is a member of the groups it worked in."""
    metadata: dict[str, str] = field(default_factory=dict)
    pseudonymised: bool = False

    @property
    def synthetic(self) -> bool:
        return self.metadata.get("synthetic", "").lower() == "true"


@dataclass(frozen=True, slots=True)
class ImportIssue:
    """A value the import could not map as it stands; the first occurrence, with a count."""

    line: int
    """The CSV line, or the entry's index in a JSON export."""
    column: str
    value: str
    kind: IssueKind
    reason: str
    count: int = 1
    file: str = ""
    """The file the first occurrence is in (an import of a directory reads several)."""


@dataclass(slots=True)
class ImportReport:
    """What an import read, and everything it could not map. Nothing is dropped silently."""

    source: str
    format: SourceFormat
    rows: int = 0
    incidents: int = 0
    issues: list[ImportIssue] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """The files read, in order; issues name the one they were found in."""
    _index: dict[tuple[str, str, str, str], int] = field(default_factory=dict, repr=False)

    def add(self, line: int, column: str, value: str, kind: IssueKind, reason: str) -> None:
        """Record one issue; repeats of the same column, value and reason in the same file only
        count up."""
        file = self.files[-1] if self.files else self.source
        key = (file, column, value, reason)
        position = self._index.get(key)
        if position is None:
            self._index[key] = len(self.issues)
            self.issues.append(ImportIssue(line, column, value, kind, reason, 1, file))
            return
        first = self.issues[position]
        self.issues[position] = replace(first, count=first.count + 1)

    def count(self, kind: IssueKind | None = None) -> int:
        return sum(issue.count for issue in self.issues if kind is None or issue.kind == kind)

    def by_kind(self) -> dict[IssueKind, int]:
        """How many values each kind of issue affected, for a one-line summary."""
        totals: dict[IssueKind, int] = {}
        for issue in self.issues:
            totals[issue.kind] = totals.get(issue.kind, 0) + issue.count
        return totals
