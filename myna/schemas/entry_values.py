"""Values a service sets when a record enters a state (`StateMachine.sets_on_entry`).

An *entry* is one observed moment a record came into a state: a create answered with the record
in that state, or a write after which the status field holds a state it did not hold before.
Entering Salesforce's `Closed Won` sets `Probability` 100, `IsClosed` true, `IsWon` true and
`ForecastCategoryName` `Closed`; closing a ServiceNow incident sets `active` "false".

Field F takes value V on entering state S when
- at least `MIN_ENTRIES` entries into S show F, and every one of them shows V;
- at least one of them shows the service putting V there: an update after which F holds V
  although it held something else before and the client did not send V, or a create whose client
  chose the state and left F out while such creates into another state got another value for F
  (a default that depends on the state; one that does not is `FieldSpec.default`'s business).
  A create whose client did not choose the state shows two values the service derived together
  from something else (an invoice created `unmatched` and payment `blocked`): which one decides
  the other cannot be told, so such creates never count;
- F says what the state implies, not who or when: ids, minted numbers, references (the caller),
  bookkeeping stamps, and values shaped like timestamps or ids are never learned, whatever the
  corpus shows, because a recording made by one user under one clock repeats them by accident.

Everything here is a pure function of the entries; `myna.schemas.behaviour` collects them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from myna.schemas.evidence import Tally
from myna.schemas.fields import BOOKKEEPING
from myna.schemas.model import EntryValues, Resource
from myna.schemas.values import classify_segment, string_format

MIN_ENTRIES = 2
"""Entries into a state that must agree on a field's value before it counts as set by it."""
MIN_CALLER_ENTRIES = 1
"""Moves into a state that must fill a caller reference: one is enough, because only the
references the service stamps with the caller elsewhere are candidates, and no move into the
state may leave it empty."""

_ID_SHAPED = frozenset({"uuid", "hex32", "ulid", "salesforce", "key", "prefixed", "date"})
_TIME_SHAPED = frozenset({"date-time", "date-time-space", "date"})

Record = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Entry:
    """A record seen entering `state`: `before` is None for a create, `sent` None when the
    request body is unknown."""

    state: str
    before: Record | None
    after: Record
    sent: Record | None
    session: int
    example: str


def volatile_fields(resource: Resource) -> frozenset[str]:
    """Fields whose value says which record, who or when, never what a state implies."""
    return frozenset(
        name
        for name, spec in resource.fields.items()
        if name == resource.id_field
        or spec.generator is not None
        or spec.reference is not None
        or BOOKKEEPING.match(name) is not None
    )


def caller_references(resource: Resource) -> frozenset[str]:
    """References to the resource the service stamps creates' callers from (`opened_by`'s
    users): where a state stamps whoever moved the record there, it is one of these."""
    callers = {
        spec.reference.resource
        for spec in resource.fields.values()
        if spec.stamp == "caller" and spec.reference is not None
    }
    return frozenset(
        name
        for name, spec in resource.fields.items()
        if spec.reference is not None and spec.reference.resource in callers
    )


def sets_on_entry(
    entries: Iterable[Entry], field: str, skip: frozenset[str]
) -> dict[str, EntryValues]:
    """State of `field` -> the values every observed entry into it left in fields other than
    `field` and those in `skip`."""
    skip = skip | {field}
    by_state: dict[str, list[Entry]] = {}
    for entry in entries:
        by_state.setdefault(entry.state, []).append(entry)
    defaults = _create_defaults(by_state, field, skip)
    learned: dict[str, EntryValues] = {}
    for state, entered in sorted(by_state.items()):
        values = {
            name: value
            for name, value in _constants(entered, skip).items()
            if any(_moved(entry, name, value, field, defaults) for entry in entered)
        }
        if values:
            tally = Tally()
            for entry in entered:
                tally.add(entry.session, entry.example)
            learned[state] = EntryValues(values=values, evidence=tally.evidence())
    return learned


def callers_on_entry(
    entries: Iterable[Entry], field: str, candidates: frozenset[str]
) -> dict[str, list[str]]:
    """State of `field` -> the references among `candidates` (those the service fills with
    the caller elsewhere) that every observed move into it filled, empty before and not sent
    by the client (`MIN_CALLER_ENTRIES`), none leaving it empty. A create shows nothing: the service
    stamps creates anyway (`FieldSpec.stamp`)."""
    by_state: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.before is not None:
            by_state.setdefault(entry.state, []).append(entry)
    learned: dict[str, list[str]] = {}
    for state, entered in sorted(by_state.items()):
        names = [name for name in sorted(candidates - {field}) if _stamped_by_moves(entered, name)]
        if names:
            learned[state] = names
    return learned


def _stamped_by_moves(entered: list[Entry], name: str) -> bool:
    if any(_blank(entry.after.get(name)) for entry in entered):
        return False
    filled = [
        entry
        for entry in entered
        if entry.before is not None
        and _blank(entry.before.get(name))
        and (entry.sent is None or name not in entry.sent)
    ]
    return len(filled) >= MIN_CALLER_ENTRIES


def _blank(value: Any) -> bool:
    return _plain(value) in (None, "") or value == {}


def _constants(entered: list[Entry], skip: frozenset[str]) -> dict[str, Any]:
    """Fields every entry showing them shows with one learnable value, seen often enough."""
    seen: dict[str, tuple[Any, int]] = {}
    mixed: set[str] = set()
    for entry in entered:
        for name, raw in entry.after.items():
            if name in skip or name in mixed:
                continue
            value = _plain(raw)
            known = seen.get(name)
            if not _learnable(value) or (known is not None and _key(known[0]) != _key(value)):
                mixed.add(name)
                seen.pop(name, None)
                continue
            seen[name] = (value, 1 if known is None else known[1] + 1)
    return {name: value for name, (value, count) in sorted(seen.items()) if count >= MIN_ENTRIES}


def _moved(
    entry: Entry,
    name: str,
    value: Any,
    field: str,
    defaults: dict[str, dict[str, set[tuple[bool, Any]]]],
) -> bool:
    """Whether this entry shows the service, not the client, putting `value` into `name`."""
    if entry.sent is not None and name in entry.sent and _loose(entry.sent[name]) == _loose(value):
        return False
    if entry.before is not None:
        return name in entry.before and _key(_plain(entry.before[name])) != _key(value)
    sent = entry.sent
    if sent is None or field not in sent or name in sent:
        # Only a create that asked for its state shows what the state brings.
        return False
    wanted = _key(value)
    return any(
        state != entry.state and any(other != wanted for other in values)
        for state, values in defaults.get(name, {}).items()
    )


def _create_defaults(
    by_state: dict[str, list[Entry]], field: str, skip: frozenset[str]
) -> dict[str, dict[str, set[tuple[bool, Any]]]]:
    """Field -> state -> the values creates asking for that state got for it without sending it."""
    defaults: dict[str, dict[str, set[tuple[bool, Any]]]] = {}
    for state, entered in by_state.items():
        for entry in entered:
            if entry.before is not None or entry.sent is None or field not in entry.sent:
                continue
            for name, raw in entry.after.items():
                value = _plain(raw)
                if name in skip or name in entry.sent or not _learnable(value):
                    continue
                defaults.setdefault(name, {}).setdefault(state, set()).add(_key(value))
    return defaults


def _plain(value: Any) -> Any:
    """A ServiceNow display-value pair `{"display_value", "value"}` as its stored value."""
    if isinstance(value, dict) and "display_value" in value and "value" in value:
        return value["value"]
    return value


def _learnable(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if not isinstance(value, str):
        return False
    return string_format(value) not in _TIME_SHAPED and classify_segment(value) not in _ID_SHAPED


def same_value(one: Any, other: Any) -> bool:
    """Equal as JSON values: `1` and `1.0` are, `True` and `1` are not."""
    return _key(one) == _key(other)


def _key(value: Any) -> tuple[bool, Any]:
    """Equality that keeps `True` apart from `1` (Python's `True == 1`)."""
    return (isinstance(value, bool), value)


def _loose(value: Any) -> Any:
    """A value as a client may send it and a service render it: `7`, `7.0` and `"7"` agree, as do
    `false` and `"false"` (ServiceNow answers every scalar as a string)."""
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    return value
