"""Behaviour: state machines of status-like fields, and the roles of fields.

The learner replays a service's exchanges in order and keeps, per entity, the last record it saw.
Whenever a record of the same entity comes back different, that is a `Change` (with the write
operation that caused it, if one came in between); a write the service refused is a `Refusal`.
The functions here turn those observations, plus the per-field counts of `Shape`, into
`StateMachine`s and `FieldSpec` roles.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from myna.schemas.entry_values import Entry, callers_on_entry, sets_on_entry
from myna.schemas.evidence import Tally
from myna.schemas.model import RefusedTransition, StateMachine, Transition
from myna.schemas.shape import Shape
from myna.schemas.values import spells_int

STATE_NAMES = re.compile(
    r"(?i)^(?:state|status|stage(?:_?name)?|phase|[a-z_]*_state|[a-z_]*_status|[a-z]*State|[a-z]*Status)$"
)
MAX_STATES = 24
FIELD_EVIDENCE = 256
"""Changes examined per state for field-level facts (set or changed on entry, immutable):
enough to be sure, and it keeps long traces from paying for every change twice."""


def state_paths(shape: Shape) -> list[str]:
    """Status-like fields (see `_state_paths`) that took at least two distinct values."""
    return [path for path in _state_paths(shape) if _distinct_states(shape, path) >= 2]


def _distinct_states(shape: Shape, path: str) -> int:
    return len(_states(shape.at(path)))


def state_values(shape: Shape) -> set[str]:
    """The coded states seen in a status field's shape."""
    return set(_states(shape))


def _state_paths(shape: Shape) -> list[str]:
    """Dotted paths of status-like fields: a few distinct values under a status-like name.

    A status may sit inside an object (`fields.status.name` in Jira), so the search goes two
    levels down, through objects only.
    """
    found: list[str] = []
    for name, child in sorted(shape.props.items()):
        found.extend(_state_paths_at(name, child, 0))
    return found


def _state_paths_at(path: str, shape: Shape, depth: int) -> Iterator[str]:
    name = path.rsplit(".", 1)[-1]
    if STATE_NAMES.match(name):
        # The field itself holds the state. (ServiceNow's display-value pairs never get here:
        # `records.as_values` reads them back as values before any record is learned.)
        if _is_state_leaf(shape):
            yield path
            return
        # A status object: Jira's {"name": "Done", "id": "10430", ...}.
        named = shape.props.get("name")
        if shape.objects and named is not None and _is_state_leaf(named):
            yield f"{path}.name"
            return
    if depth < 1 and shape.objects:
        for key, child in sorted(shape.props.items()):
            yield from _state_paths_at(f"{path}.{key}", child, depth + 1)


def _is_state_leaf(shape: Shape) -> bool:
    if shape.objects or shape.overflow or shape.arrays or shape.floats:
        return False
    if shape.ints:
        return (
            shape.max_num is not None
            and shape.min_num is not None
            and shape.max_num - shape.min_num < MAX_STATES
        )
    distinct = [value for value in shape.values if value != ""]
    return 1 <= len(distinct) <= MAX_STATES


def value_at(record: Any, path: str) -> Any:
    """The value at a dotted path of a record, or None."""
    for part in path.split("."):
        if not isinstance(record, dict):
            return None
        record = record.get(part)
    return record


def state_key(value: Any) -> str | None:
    """A state as a string."""
    if value is None or value == "" or isinstance(value, (dict, list)):
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(slots=True)
class Change:
    """One entity seen twice with different content."""

    before: dict[str, Any]
    after: dict[str, Any]
    operation: str | None
    session: int
    example: str
    implied: bool = False
    """The state change was already counted from the request that caused it (an `Implied`)."""
    request: dict[str, Any] | None = None
    """The body of the write that made the change, when the change is its answer."""
    follows: dict[str, Any] | None = None
    """The body of the write the change was read after, when that write answered without the
    record (Salesforce's 204 to a PATCH)."""


@dataclass(slots=True)
class Created:
    """A record a create answered with, and the body that asked for it (None: unknown)."""

    record: dict[str, Any]
    operation: str
    session: int
    example: str
    request: dict[str, Any] | None = None


@dataclass(slots=True)
class Implied:
    """A write answered without a record whose request named a known state (Jira transitions)."""

    source: str | None
    target: str
    operation: str
    session: int
    example: str


@dataclass(slots=True)
class Refusal:
    source: str | None
    request: Any
    status: int
    message: str | None
    operation: str
    session: int
    example: str


@dataclass(slots=True)
class Observations:
    """Everything seen about the entities of one resource, in order."""

    changes: list[Change] = field(default_factory=list)
    implied: list[Implied] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    created: list[Created] = field(default_factory=list)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    """State path -> coded state -> the name the service displays for it."""


def find_state(request: Any, states: set[str], depth: int = 0) -> str | None:
    """A known state named anywhere in a request body: `{"transition": {"to": {"name": "Done"}}}`
    names `Done`."""
    if isinstance(request, str):
        return request if request in states else None
    if depth > 4:
        return None
    if isinstance(request, dict):
        for key in sorted(
            request, key=lambda name: (name not in ("name", "state", "status"), name)
        ):
            found = find_state(request[key], states, depth + 1)
            if found is not None:
                return found
    if isinstance(request, list):
        for item in request:
            found = find_state(item, states, depth + 1)
            if found is not None:
                return found
    return None


def state_machine(
    path: str,
    shape: Shape,
    seen: Observations,
    volatile: frozenset[str] = frozenset(),
    callers: frozenset[str] = frozenset(),
) -> StateMachine:
    """The life cycle of the status-like field at `path`; `volatile` names fields whose values
    say which record, who or when (see `entry_values.volatile_fields`), `callers` the references
    the service fills with whoever called."""
    states = _states(shape)
    transitions: dict[tuple[str | None, str, str | None], Tally] = {}
    entries: dict[str, list[Change]] = {}
    created: dict[str, list[Created]] = {}
    for made in seen.created:
        target = state_key(value_at(made.record, path))
        if target is not None:
            transitions.setdefault((None, target, made.operation), Tally()).add(
                made.session, made.example
            )
            into = created.setdefault(target, [])
            if len(into) < FIELD_EVIDENCE:
                into.append(made)
    for change in seen.changes:
        source = state_key(value_at(change.before, path))
        target = state_key(value_at(change.after, path))
        if target is None or source == target:
            continue
        if not change.implied:
            transitions.setdefault((source, target, change.operation), Tally()).add(
                change.session, change.example
            )
        if source is not None:
            # Without the state before, a stub (a create's short answer) would look like
            # every field being set on entry.
            entered = entries.setdefault(target, [])
            if len(entered) < FIELD_EVIDENCE:
                entered.append(change)
    for implied in seen.implied:
        transitions.setdefault((implied.source, implied.target, implied.operation), Tally()).add(
            implied.session, implied.example
        )
    refused: dict[tuple[str | None, str, int, str | None, str], Tally] = {}
    accepted = {(source, target) for source, target, _ in transitions}
    refusal_statuses: Counter[int] = Counter()
    for refusal in seen.refusals:
        target = _requested_state(refusal.request, path, set(states))
        if target is not None:
            refusal_statuses[refusal.status] += 1
        if target is None or (refusal.source, target) in accepted:
            # A move the service also accepted was refused for something else (who asked,
            # what else the request held): refusing the move would refuse what it allows.
            continue
        key = (refusal.source, target, refusal.status, refusal.message, refusal.operation)
        refused.setdefault(key, Tally()).add(refusal.session, refusal.example)
    known = set(states)
    for source, target, _ in transitions:
        known.add(target)
        if source is not None:
            known.add(source)
    ordered_states = sorted(known, key=_state_order)
    total = Tally()
    for tally in transitions.values():
        total.absorb(tally)
    observed = bool(transitions)
    return StateMachine(
        field=path,
        states=ordered_states,
        labels=dict(sorted(seen.labels.get(path, {}).items())),
        initial=sorted(
            {target for (source, target, _) in transitions if source is None}, key=_state_order
        ),
        transitions=[
            Transition(source=source, target=target, operation=operation, evidence=tally.evidence())
            for (source, target, operation), tally in sorted(
                transitions.items(), key=_transition_order
            )
        ],
        refused=[
            RefusedTransition(
                source=source,
                target=target,
                status=status,
                message=message,
                operation=operation,
                evidence=tally.evidence(),
            )
            for (source, target, status, message, operation), tally in sorted(
                refused.items(), key=str
            )
        ],
        required_on_entry=_required_on_entry(entries, path),
        changes_on_entry=_changes_on_entry(entries, seen.changes, path),
        sets_on_entry=sets_on_entry(_entries(created, entries), path.split(".")[0], volatile),
        callers_on_entry=callers_on_entry(_entries(created, entries), path.split(".")[0], callers),
        # Without any observed transition there is nothing to enforce: every move stays allowed;
        # nor for a field the server keeps in step with another (incident_state mirrors state).
        enforce=observed and _clients_write(path, seen),
        refusal_status=min(refusal_statuses, key=lambda s: (-refusal_statuses[s], s))
        if refusal_statuses
        else None,
        evidence=total.evidence(scale=1.0 if observed else 0.5)
        if observed
        else Tally().evidence(samples=shape.count, scale=0.3),
    )


def _entries(
    created: dict[str, list[Created]], changed: dict[str, list[Change]]
) -> Iterator[Entry]:
    """Every observed entry into a state: creates in it, and changes from another state."""
    for state, made in created.items():
        for one in made:
            yield Entry(state, None, one.record, one.request, one.session, one.example)
    for state, changes in changed.items():
        for change in changes:
            sent = change.request if change.request is not None else change.follows
            yield Entry(state, change.before, change.after, sent, change.session, change.example)


def _clients_write(path: str, seen: Observations) -> bool:
    """Whether clients move this field themselves, as far as the requests show.

    When the writes that changed it are known and none of them sent it, the server moves it as a
    consequence of something else, and refusing its moves would refuse the requests that cause
    them. With no known write (changes seen only by reading), assume clients do.
    """
    if seen.implied:
        return True
    top = path.split(".")[0]
    moved_by = [
        change.request
        for change in seen.changes
        if change.request is not None
        and state_key(value_at(change.before, path)) != state_key(value_at(change.after, path))
    ]
    return not moved_by or any(top in request for request in moved_by)


def _states(shape: Shape) -> list[str]:
    if shape.ints and shape.min_num is not None and shape.max_num is not None and not shape.strings:
        numbers = range(int(shape.min_num), int(shape.max_num) + 1)
        return sorted({str(value) for value in numbers}, key=_state_order)
    return sorted({value for value in shape.values if value != ""}, key=_state_order)


def _state_order(state: str) -> tuple[int, int, str]:
    return (0, int(state), "") if spells_int(state) else (1, 0, state)


def _transition_order(item: tuple[tuple[str | None, str, str | None], Tally]) -> tuple[Any, ...]:
    (source, target, operation), _ = item
    return (source is not None, _state_order(source or ""), _state_order(target), operation or "")


def _requested_state(request: Any, path: str, states: set[str]) -> str | None:
    direct = state_key(value_at(request, path)) if isinstance(request, dict) else None
    return direct if direct is not None else find_state(request, states)


def _filled(value: Any) -> bool:
    return value not in (None, "", [], {})


def _required_on_entry(entries: dict[str, list[Change]], path: str) -> dict[str, list[str]]:
    """Fields set after every entry into a state that were empty before at least one of them.

    Where the write that entered the state is known, only what the client sent or what was
    already set counts: fields the server fills on entry (`resolved_at`) are effects of the
    transition (`changes_on_entry`), not something a client must supply.
    """
    top = path.split(".")[0]
    required: dict[str, list[str]] = {}
    for state, changes in sorted(entries.items()):
        always: set[str] | None = None
        newly: set[str] = set()
        for change in changes:
            filled = {name for name, value in change.after.items() if _filled(value)}
            if change.request is not None:
                sent = {name for name, value in change.request.items() if _filled(value)}
                filled = {
                    name for name in filled if name in sent or _filled(change.before.get(name))
                }
            always = filled if always is None else always & filled
            newly |= {name for name in filled if not _filled(change.before.get(name))}
        fields = sorted((always or set()) & newly - {top})
        if fields:
            required[state] = fields
    return required


def _changes_on_entry(
    entries: dict[str, list[Change]], every_change: list[Change], path: str
) -> dict[str, list[str]]:
    """Fields that change with every entry into a state, but not with every change whatsoever
    (bookkeeping such as `sys_updated_on` changes on every write and says nothing)."""
    top = path.split(".")[0]
    bookkeeping: set[str] | None = None
    for change in every_change[:FIELD_EVIDENCE]:
        changed = _changed(change)
        bookkeeping = changed if bookkeeping is None else bookkeeping & changed
        if not bookkeeping:
            break
    result: dict[str, list[str]] = {}
    for state, changes in sorted(entries.items()):
        common: set[str] | None = None
        for change in changes:
            changed = _changed(change)
            common = changed if common is None else common & changed
        fields = sorted((common or set()) - (bookkeeping or set()) - {top})
        if fields:
            result[state] = fields
    return result


def _changed(change: Change) -> set[str]:
    keys = change.before.keys() | change.after.keys()
    return {key for key in keys if change.before.get(key) != change.after.get(key)}


def immutable_fields(changes: list[Change]) -> tuple[set[str], int]:
    """Fields that never changed across entities that did change; and how many changes that was."""
    stable: set[str] | None = None
    for change in changes[: FIELD_EVIDENCE * 4]:
        unchanged = {
            key
            for key in change.before.keys() & change.after.keys()
            if change.before[key] == change.after[key]
        }
        stable = unchanged if stable is None else stable & unchanged
        if not stable:
            break
    return (stable or set()), len(changes)


def counters(changes: list[Change], shape: Shape, lifecycles: set[str]) -> set[str]:
    """Fields that count something (ServiceNow's `sys_mod_count`, `reassignment_count`), told
    by how they behave, not by their names: whole numbers running from 0 or 1 with no gap up to
    the largest seen (a count passes through every number), that went up on some record and
    down on none. A count is no choice: the next update takes it past every value the traces
    showed, so it is never an enum. A field learned as a state machine (`lifecycles`) is a life
    cycle that may happen to move forward only (1 Open, 2 Work in Progress, 3 Closed)."""
    if not changes:
        return set()
    candidates = {
        name
        for name, child in shape.props.items()
        if name not in lifecycles and _counts_from_start(child)
    }
    rose: set[str] = set()
    fell: set[str] = set()
    for change in changes:
        for name in candidates:
            before = _whole(change.before.get(name))
            after = _whole(change.after.get(name))
            if before is None or after is None or before == after:
                continue
            (rose if after > before else fell).add(name)
    return rose - fell


def _counts_from_start(shape: Shape) -> bool:
    """Whether the strings seen here are whole numbers from 0 or 1 with none missing."""
    if "integer-string" not in shape.formats or shape.overflow or shape.ints or shape.objects:
        return False
    values = [value for value in shape.counts() if value != ""]
    if not values or not all(value.isascii() and value.isdigit() for value in values):
        return False
    numbers = sorted({int(value) for value in values})
    return numbers[0] <= 1 and numbers[-1] - numbers[0] == len(numbers) - 1


def _whole(value: Any) -> int | None:
    if isinstance(value, str):
        return int(value) if value.isascii() and value.isdigit() else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
