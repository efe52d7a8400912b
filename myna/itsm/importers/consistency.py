"""Is a set of ServiceNow records a consistent world? Findings, not exceptions.

Each check is a small pure generator over the records that yields what it finds wrong; the table
`CHECKS` assembles them and `check_records` runs them all. A seeded world should give no finding;
an import of real data gives the findings its source data carries (an incident resolved without
a close code, say), which the seeding layer can show or repair.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from myna.itsm.importers.values import PRIORITY_MATRIX

Records = Mapping[str, Sequence[Mapping[str, str]]]

# (table, reference field) -> the table the field points into.
REFERENCES: dict[tuple[str, str], str] = {
    **{
        ("incident", field): "sys_user"
        for field in (
            "caller_id",
            "opened_by",
            "assigned_to",
            "resolved_by",
            "closed_by",
            "reopened_by",
        )
    },
    ("incident", "assignment_group"): "sys_user_group",
    ("incident", "location"): "cmn_location",
    ("incident", "cmdb_ci"): "cmdb_ci",
    ("incident", "business_service"): "cmdb_ci",
    ("incident", "problem_id"): "problem",
    ("incident", "rfc"): "change_request",
    ("incident", "caused_by"): "change_request",
    ("incident", "parent_incident"): "incident",
    **{
        (table, field): target
        for table in ("problem", "change_request")
        for field, target in (
            ("assigned_to", "sys_user"),
            ("assignment_group", "sys_user_group"),
            ("cmdb_ci", "cmdb_ci"),
        )
    },
    ("sys_user_grmember", "group"): "sys_user_group",
    ("sys_user_grmember", "user"): "sys_user",
    ("sys_journal_field", "element_id"): "incident",
    ("sys_audit", "documentkey"): "incident",
}
_OPEN = {"1", "2", "3"}
_DONE = {"6", "7"}


@dataclass(frozen=True, slots=True)
class Finding:
    table: str
    sys_id: str
    field: str
    problem: str


Check = Callable[[Records], Iterator[Finding]]


def references_resolve(records: Records) -> Iterator[Finding]:
    ids = {table: {row["sys_id"] for row in rows} for table, rows in records.items()}
    for (table, field), target in REFERENCES.items():
        for row in records.get(table, ()):
            value = row.get(field, "")
            if value and value not in ids.get(target, set()):
                yield Finding(table, row["sys_id"], field, f"{value} is not a {target} record")


def ids_and_numbers_are_unique(records: Records) -> Iterator[Finding]:
    for table, rows in records.items():
        for field in ("sys_id", "number", "user_name"):
            counts = Counter(row[field] for row in rows if row.get(field))
            for value, count in counts.items():
                if count > 1:
                    yield Finding(table, value, field, f"{field} {value} is used {count} times")


def assignees_are_group_members(records: Records) -> Iterator[Finding]:
    members = {(m["group"], m["user"]) for m in records.get("sys_user_grmember", ())}
    for table in ("incident", "problem", "change_request"):
        for row in records.get(table, ()):
            group, user = row.get("assignment_group", ""), row.get("assigned_to", "")
            if group and user and (group, user) not in members:
                yield Finding(table, row["sys_id"], "assigned_to", "not a member of the group")


def incident_states_agree_with_fields(records: Records) -> Iterator[Finding]:
    for row in records.get("incident", ()):
        state, sys_id = row.get("state", ""), row["sys_id"]

        def finding(field: str, problem: str, sys_id: str = sys_id) -> Finding:
            return Finding("incident", sys_id, field, problem)

        if row.get("active") != ("true" if state in _OPEN else "false"):
            yield finding("active", f"active is {row.get('active')!r} in state {state}")
        if state == "3" and not row.get("hold_reason"):
            yield finding("hold_reason", "on hold without a hold reason")
        if state in _DONE:
            for field in ("close_code", "close_notes", "resolved_at"):
                if not row.get(field):
                    yield finding(field, f"state {state} without {field}")
        elif state in _OPEN:
            for field in ("close_code", "resolved_at", "closed_at"):
                if row.get(field):
                    yield finding(field, f"open incident (state {state}) with {field}")
        if state == "7" and not row.get("closed_at"):
            yield finding("closed_at", "closed without closed_at")
        impact, urgency = row.get("impact", ""), row.get("urgency", "")
        if impact and urgency:
            expected = PRIORITY_MATRIX.get((int(impact), int(urgency)))
            if row.get("priority") != str(expected):
                yield finding("priority", f"impact {impact} x urgency {urgency} is {expected}")


CHECKS: dict[str, Check] = {
    "references_resolve": references_resolve,
    "ids_and_numbers_are_unique": ids_and_numbers_are_unique,
    "assignees_are_group_members": assignees_are_group_members,
    "incident_states_agree_with_fields": incident_states_agree_with_fields,
}


def check_records(records: Records) -> list[Finding]:
    """Everything every check finds, in check order."""
    return [finding for check in CHECKS.values() for finding in check(records)]
