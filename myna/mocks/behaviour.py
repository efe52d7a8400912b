"""The service's rules, as small pure checks that yield violations.

Each check looks at one kind of rule (state transitions, fields required on entering a state,
read-only fields, reference integrity) and yields a `Violation` per broken rule; the
dispatcher runs the table of checks over a write and refuses it on the first violation. Checks that
need the world (does the referenced record exist?) receive a lookup function instead of the
store, so they stay pure and testable with a dict. Uniqueness is the store's job: it keeps an index
of unique values per world, and its `ConflictError` becomes the service's 409.

One rule writes instead of checking: `entry_values` gives the values a state's entry sets, which
the dispatcher applies before the checks run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from myna.schemas.model import Reference, Resource, StateMachine

ViolationKind = Literal[
    "transition", "required_on_entry", "read_only", "reference", "initial_state"
]

Record = Mapping[str, Any]
Exists = Callable[[str, str], bool]
"""exists(resource, record_id): is there such a record in the world?"""


@dataclass(frozen=True, slots=True)
class Violation:
    kind: ViolationKind
    field: str
    message: str
    status: int = 400


@dataclass(frozen=True, slots=True)
class Write:
    """A write about to happen: the record before (None on create), after, and the request body."""

    resource: Resource
    before: Record | None
    after: Record
    sent: Record


def is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def check_transitions(write: Write) -> Iterator[Violation]:
    """A status field may only move along transitions the service was seen to accept."""
    for machine in write.resource.state_machines:
        if not machine.enforce:
            continue
        target = _state(write.after, machine)
        source = _state(write.before, machine) if write.before is not None else None
        if target is None or (write.before is not None and source == target):
            continue
        yield from _transition_violations(machine, source, target)


def _transition_violations(
    machine: StateMachine, source: str | None, target: str
) -> Iterator[Violation]:
    for refused in machine.refused:
        if refused.source == source and refused.target == target:
            message = refused.message or _transition_message(machine, source, target)
            yield Violation("transition", machine.field, message, refused.status)
            return
    if source is None:
        if machine.initial and target not in machine.initial:
            allowed = ", ".join(_label(machine, state) for state in machine.initial)
            yield Violation(
                "initial_state",
                machine.field,
                f"{machine.field} cannot start as {_label(machine, target)}; "
                f"new records start as {allowed}",
            )
        return
    if target not in machine.states:
        yield Violation(
            "transition", machine.field, f"{machine.field} has no state {_label(machine, target)}"
        )
        return
    if not any(t.source == source and t.target == target for t in machine.transitions):
        yield Violation(
            "transition",
            machine.field,
            _transition_message(machine, source, target),
            machine.refusal_status or 400,
        )


def _transition_message(machine: StateMachine, source: str | None, target: str) -> str:
    origin = "creation" if source is None else _label(machine, source)
    return f"{machine.field} cannot change from {origin} to {_label(machine, target)}"


def _label(machine: StateMachine, state: str) -> str:
    label = machine.labels.get(state)
    return f"{state} ({label})" if label else state


def _state(record: Record | None, machine: StateMachine) -> str | None:
    if record is None:
        return None
    value = record.get(machine.field)
    return None if is_empty(value) else str(value)


def check_required_on_entry(write: Write) -> Iterator[Violation]:
    """Entering a state may require fields (a Resolved incident has its resolution code)."""
    for machine in write.resource.state_machines:
        if not machine.enforce:
            continue
        target = _entered(write.before, write.after, machine)
        if target is None:
            continue
        missing = [
            name
            for name in machine.required_on_entry.get(target, [])
            if is_empty(write.after.get(name))
        ]
        for name in missing:
            yield Violation(
                "required_on_entry",
                name,
                f"{name} is required when {machine.field} becomes {_label(machine, target)}",
                machine.refusal_status or 400,
            )


def entry_values(write: Write) -> dict[str, Any]:
    """The values the service writes into a record that enters a state (`sets_on_entry`), for
    the fields the request did not set itself.

    The client's own value wins over the state's: a mock user who sends `Probability: 80` with
    `StageName: Negotiation/Review` expects 80 back, as Salesforce gives, and nothing a mock does
    should silently discard what a request asked for. Fields the service does not let clients
    write never reach `sent` (they are dropped or refused first), so for those (`IsClosed`,
    `IsWon`) the state's value always holds. A value one machine sets may move another machine's
    field (`state` sets `incident_state`), which then applies its own entry values as well.
    """
    machines = [machine for machine in write.resource.state_machines if machine.sets_on_entry]
    values: dict[str, Any] = {}
    while machines:
        current = {**write.after, **values} if values else write.after
        entered = [
            (machine, target)
            for machine in machines
            if (target := _entered(write.before, current, machine)) is not None
        ]
        if not entered:
            break
        for machine, target in entered:
            machines.remove(machine)
            entry = machine.sets_on_entry.get(target)
            if entry is None:
                continue
            for name, value in entry.values.items():
                if name not in write.sent and name not in values:
                    values[name] = value
    return values


def callers_entered(write: Write) -> list[str]:
    """The references the service fills with whoever called, for the states this write moves
    the record into (`callers_on_entry`), that the request did not set itself."""
    names: list[str] = []
    for machine in write.resource.state_machines:
        if not machine.callers_on_entry:
            continue
        target = _entered(write.before, write.after, machine)
        for name in machine.callers_on_entry.get(target or "", ()):
            if name not in write.sent and name not in names:
                names.append(name)
    return names


def _entered(before: Record | None, after: Record, machine: StateMachine) -> str | None:
    """The state `after` enters (None: it stays where `before` was, or has none)."""
    target = _state(after, machine)
    if target is None or (before is not None and _state(before, machine) == target):
        return None
    return target


def check_read_only(write: Write, refused: frozenset[str]) -> Iterator[Violation]:
    """Fields the service refused to let clients set (the ignored ones are dropped earlier)."""
    for name in write.sent:
        if name in refused:
            yield Violation("read_only", name, f"{name} is read-only", 400)


def check_references(
    write: Write, references: Mapping[str, Reference], exists: Exists
) -> Iterator[Violation]:
    """A reference must point at a record that exists in the same world. A write naming a
    record that does not exist is answered 409: the request is well formed (it fits every
    schema the mock publishes) and conflicts with what the world holds now, which the client
    can change (create the record first), as with a value another record holds uniquely.
    Not 404, which would tell a client that the record its path names is gone."""
    for name, reference in references.items():
        if name not in write.sent:
            continue
        value = write.after.get(name)
        if is_empty(value):
            continue
        if not exists(reference.resource, str(value)):
            yield Violation(
                "reference",
                name,
                f"{name} refers to {reference.resource} {value}, which does not exist",
                409,
            )
