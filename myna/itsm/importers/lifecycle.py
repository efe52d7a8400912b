"""Rebuild an incident's lifecycle from its successive snapshots.

A snapshot is the incident as one source row shows it: one update in an event log, or one
timestamp column of a single-row export. Pure functions; the readers make the snapshots.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from myna.itsm.importers.model import FieldChange, Reassignment, Reopening, StateChange
from myna.itsm.importers.values import HoldReason, IncidentState

_DONE = (IncidentState.RESOLVED, IncidentState.CLOSED)


@dataclass(frozen=True, slots=True)
class Snapshot:
    line: int
    at: datetime
    state: IncidentState
    hold_reason: HoldReason | None
    source_state: str
    group: str | None
    assignee: str | None
    by: str | None
    mod_count: int
    fields: Mapping[str, str] = field(default_factory=dict)
    """Audited fields (ServiceNow names, stored values) as this snapshot shows them."""
    inferred: bool = False


@dataclass(frozen=True, slots=True)
class Lifecycle:
    state_changes: tuple[StateChange, ...]
    reassignments: tuple[Reassignment, ...]
    reopenings: tuple[Reopening, ...]
    field_changes: tuple[FieldChange, ...]


def rebuild(snapshots: Sequence[Snapshot]) -> Lifecycle:
    """The lifecycle the snapshots show, in the order given (the source's own order).

    A state change is any change of state or hold reason; a reopening is leaving Resolved or
    Closed for an open state; a reassignment is any change of assignment group or assignee,
    including the first assignment (from None).
    """
    states: list[StateChange] = []
    moves: list[Reassignment] = []
    reopenings: list[Reopening] = []
    changes: list[FieldChange] = []
    previous: Snapshot | None = None
    for snap in snapshots:
        if previous is None or (snap.state, snap.hold_reason) != (
            previous.state,
            previous.hold_reason,
        ):
            states.append(
                StateChange(
                    at=snap.at,
                    state=snap.state,
                    previous=previous.state if previous is not None else None,
                    hold_reason=snap.hold_reason,
                    by=snap.by,
                    source_state=snap.source_state,
                    line=snap.line,
                    inferred=snap.inferred,
                )
            )
        if previous is not None:
            if previous.state in _DONE and snap.state not in (*_DONE, IncidentState.CANCELED):
                reopenings.append(
                    Reopening(snap.at, previous.state, snap.state, snap.by, snap.line)
                )
            if (snap.group, snap.assignee) != (previous.group, previous.assignee):
                moves.append(
                    Reassignment(
                        at=snap.at,
                        from_group=previous.group,
                        to_group=snap.group,
                        from_user=previous.assignee,
                        to_user=snap.assignee,
                        by=snap.by,
                        line=snap.line,
                    )
                )
            changes.extend(_field_changes(previous, snap))
        elif snap.group is not None or snap.assignee is not None:
            moves.append(
                Reassignment(snap.at, None, snap.group, None, snap.assignee, snap.by, snap.line)
            )
        previous = snap
    return Lifecycle(tuple(states), tuple(moves), tuple(reopenings), tuple(changes))


def _field_changes(before: Snapshot, after: Snapshot) -> list[FieldChange]:
    names = sorted(before.fields.keys() | after.fields.keys())
    return [
        FieldChange(
            at=after.at,
            field=name,
            old=before.fields.get(name, ""),
            new=after.fields.get(name, ""),
            by=after.by,
            mod_count=after.mod_count,
            line=after.line,
        )
        for name in names
        if before.fields.get(name, "") != after.fields.get(name, "")
    ]
