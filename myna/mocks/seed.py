"""Seed a mock: generate records that look like the service's own, or read them from files.

Generation is deterministic for a seed (same seed and model, same bytes) and consistent:

- ids and sequence numbers follow each resource's `IdFormat` (`INC0010001`, Salesforce ids with
  their checksum, ...), and the counters they used are recorded so the runtime continues after;
- values follow the JSON Schema types and formats, enums follow the learned frequencies, names
  pick a Faker provider (`email`, `phone`, `city`, ...);
- references point only at records that exist: referenced resources are seeded first (a
  topological order; a cycle is broken by leaving the back reference empty). A reference is
  stored as its target's bare id, as the runtime stores what clients send (a `link_value`
  field's `{link, value}` is how responses render it); one whose learned value is a constant no
  record of the target could have (ServiceNow's `global` domain) gets that constant;
- timestamps of a record are in a sensible order (created <= opened <= resolved <= closed <=
  updated);
- a field only the service writes, whose create default the model knows and of which the corpus
  showed no mix of values, holds that default (a record is not born deleted);
- every state machine's field gets a state, the fields that state requires on entry are filled
  (never with an empty choice) and the fields only other states require are left empty (a New
  incident has no close code);
- with `Conventions.values_as_strings`, numbers and booleans travel as strings (ServiceNow).

`seed_from_files` reads `<resource>.jsonl` or `<resource>.csv` files instead, checking each
value against the model and naming the file, line and field of anything that does not fit; a
`link_value` reference may be written either way and is stored as the bare id.
"""

from __future__ import annotations

import bisect
import csv
import itertools
import json
import math
import random
import re
import string
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from myna.errors import InputError, MockError
from myna.mocks.extensions import SeedRecords, extensions_for
from myna.mocks.ids import counter_name, mint_id, needs_counter
from myna.mocks.store import Record, Store
from myna.schemas.model import (
    FieldSpec,
    IdFormat,
    JsonSchema,
    Reference,
    Resource,
    ServiceModel,
    StateMachine,
)
from myna.schemas.shape import OBSERVED, unwrap_pattern
from myna.schemas.values import ID_PATTERNS, SPACED_DATETIME, spells_int

if TYPE_CHECKING:
    from faker import Faker

__all__ = [
    "ANCHOR",
    "SeedData",
    "could_be_id",
    "counters_after",
    "generate",
    "has_recorded",
    "prepared",
    "read_files",
    "seed",
    "seed_from_files",
    "seed_recorded",
    "seeding_order",
    "stored_value_schema",
    "with_recorded",
]

ANCHOR = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
"""The "now" of generated data: timestamps lie in the year before it, whatever the clock says."""

_EMPTY_SHARE = 0.2  # optional fields left empty, as real records often have them
_UNIQUE_TRIES = 20


@dataclass(frozen=True, slots=True)
class SeedData:
    """Records to load, in load order, and the last value each counter used."""

    records: list[tuple[str, str, Record]]
    sequences: dict[str, int] = field(default_factory=dict)

    def count(self, resource: str) -> int:
        return sum(1 for name, _, _ in self.records if name == resource)


def seed(
    model: ServiceModel,
    store: Store,
    *,
    seed: int,
    records: int | Mapping[str, int],
    name: str | None = None,
) -> str:
    """Generate records and load them as a base snapshot; return its id (`seed-<seed>` unless
    `name` is given). `records` is a count per resource, or counts for some resources."""
    data = generate(model, seed=seed, records=records)
    return store.load_base(data.records, name or f"seed-{seed}", sequences=data.sequences)


def seed_recorded(
    model: ServiceModel,
    store: Store,
    *,
    seed: int,
    top_up: int | Mapping[str, int] = 0,
    name: str | None = None,
) -> str:
    """Load the records a learned model's traces showed (each resource's `records`), topped
    up with generated ones (`with_recorded`), as a base snapshot; return its id."""
    data = recorded_data(model, seed=seed, top_up=top_up)
    return store.load_base(data.records, name or f"recorded-{seed}", sequences=data.sequences)


def recorded_data(
    model: ServiceModel, *, seed: int, top_up: int | Mapping[str, int] = 0
) -> SeedData:
    """The records `seed_recorded` loads."""
    recorded = [
        (resource.name, str(record[resource.id_field]), dict(record))
        for resource in model.resources.values()
        for record in resource.records
        if record.get(resource.id_field) not in (None, "")
    ]
    recorded += _referenced_only(model, recorded)
    return with_recorded(model, recorded, seed=seed, top_up=top_up)


def _referenced_only(
    model: ServiceModel, recorded: list[tuple[str, str, Record]]
) -> list[tuple[str, str, Record]]:
    """A record for each id the recorded records point at that no recording showed (a
    ServiceNow `sys_domain` of `global`): a world's references all resolve, so a client may
    write back what it read. Generated values complete them (`with_recorded`)."""
    held = {(name, record_id) for name, record_id, _ in recorded}
    missing: dict[tuple[str, str], Record] = {}
    for name, _, record in recorded:
        for field_name, spec in model.resources[name].fields.items():
            reference = spec.reference
            if reference is None or reference.resource not in model.resources:
                continue
            value = record.get(field_name)
            target_id = value.get("value") if isinstance(value, dict) else value
            if target_id in (None, "") or isinstance(target_id, dict | list):
                continue
            key = (reference.resource, str(target_id))
            if key not in held and key not in missing:
                id_field = model.resources[reference.resource].id_field
                missing[key] = {id_field: target_id}
    return [(name, record_id, record) for (name, record_id), record in missing.items()]


def has_recorded(model: ServiceModel) -> bool:
    """Whether the model kept records its traces showed, for a mock to start with."""
    return any(resource.records for resource in model.resources.values())


def seed_from_files(
    model: ServiceModel,
    store: Store,
    directory: Path,
    *,
    name: str | None = None,
    checked: bool = True,
) -> str:
    """Load `<resource>.jsonl` / `<resource>.csv` files from `directory` as a base snapshot
    (`checked`: see `read_files`)."""
    data = read_files(model, directory, checked=checked)
    return store.load_base(data.records, name or directory.name, sequences=data.sequences)


def seeding_order(model: ServiceModel, resources: list[str] | None = None) -> list[str]:
    """Resources so that every referenced resource comes before the ones referring to it. In a
    cycle, the remaining resource waiting on the fewest others goes next, counting first the
    references a create must send (a group member's group), then the others (who created a
    record), then by name; so a back reference that may stay empty stays empty rather than one
    a record cannot lack, nor every reference of a resource that refers to many."""
    names = sorted(resources if resources is not None else model.resources)

    def targets(name: str, *, needed: bool) -> set[str]:
        return {
            spec.reference.resource
            for spec in model.resources[name].fields.values()
            if spec.reference is not None
            and spec.reference.resource != name
            and spec.reference.resource in names
            and (spec.required or spec.required_on_create) == needed
        }

    must = {name: targets(name, needed=True) for name in names}
    may = {name: targets(name, needed=False) for name in names}
    order: list[str] = []
    remaining = list(names)
    while remaining:
        placed = set(order)
        chosen = min(
            remaining, key=lambda name: (len(must[name] - placed), len(may[name] - placed), name)
        )
        order.append(chosen)
        remaining.remove(chosen)
    return order


def generate(model: ServiceModel, *, seed: int, records: int | Mapping[str, int]) -> SeedData:
    """Deterministic records for the model (see the module docstring for what they respect)."""
    counts = _counts(model, records)
    generator = _Generator(model, seed)
    out: list[tuple[str, str, Record]] = []
    for name in seeding_order(model, [n for n, c in counts.items() if c > 0]):
        out.extend(generator.resource(model.resources[name], counts[name]))
    return SeedData(prepared(model, out), dict(sorted(generator.counters.items())))


def with_recorded(
    model: ServiceModel,
    recorded: Iterable[tuple[str, str, Record]],
    *,
    seed: int,
    top_up: int | Mapping[str, int] = 0,
) -> SeedData:
    """The records a recording showed, as a world starts with them, then generated ones.

    Each recorded record is stored as the runtime stores what clients send (a `{link, value}`
    reference by its id) and completed with generated values for the fields it lacks (an older
    recording, or a list that showed only some fields): a service answers every record of a
    resource with the same fields. Generated records then bring each resource up to `top_up`
    records; their references may point at recorded records, and their ids and numbers continue
    after the recorded ones."""
    recorded = [
        (name, record_id, _as_stored(model.resources[name], record))
        for name, record_id, record in recorded
        if name in model.resources
    ]
    generator = _Generator(model, seed)
    generator.counters.update(counters_after(model, recorded))
    by_resource: dict[str, list[tuple[str, str, Record]]] = {}
    for triple in recorded:
        by_resource.setdefault(triple[0], []).append(triple)
        generator.remember(model.resources[triple[0]], triple[2])
    wanted = _counts(model, top_up)
    out: list[tuple[str, str, Record]] = []
    for name in seeding_order(
        model, sorted(set(by_resource) | {n for n, c in wanted.items() if c})
    ):
        resource = model.resources[name]
        mine = by_resource.get(name, [])
        out.extend(generator.completed(resource, mine))
        out.extend(generator.resource(resource, max(0, wanted.get(name, 0) - len(mine))))
    return SeedData(prepared(model, out), dict(sorted(generator.counters.items())))


def _as_stored(resource: Resource, record: Record) -> Record:
    """A recorded record as the runtime stores one: a `{link, value}` reference by its id
    alone, as a write sending that shape is stored."""
    stored = dict(record)
    for name, value in record.items():
        spec = resource.fields.get(name)
        if (
            spec is not None
            and spec.reference is not None
            and spec.reference.style == "link_value"
            and isinstance(value, dict)
        ):
            stored[name] = value.get("value", "")
    return stored


def prepared(model: ServiceModel, records: SeedRecords) -> SeedRecords:
    """`records` as the model's service stores them, in seeding order: with the rows its
    extensions derive from them (ServiceNow keeps a server also as a `cmdb_ci` row). Every way
    a world is seeded goes through here: generated records, seed files, recorded records
    (conformance) and episodes' initial worlds."""
    return _in_order(model, extensions_for(model).prepare_seed(model, records))


def _in_order(model: ServiceModel, records: SeedRecords) -> SeedRecords:
    """`records` grouped by resource in seeding order, each resource's in the order given (an
    extension's `prepare_seed` may have added records of resources that come earlier)."""
    grouped: dict[str, SeedRecords] = {}
    for triple in records:
        grouped.setdefault(triple[0], []).append(triple)
    return [triple for name in seeding_order(model, list(grouped)) for triple in grouped[name]]


def _counts(model: ServiceModel, records: int | Mapping[str, int]) -> dict[str, int]:
    if isinstance(records, int):
        return {name: records for name in model.resources}
    unknown = sorted(set(records) - set(model.resources))
    if unknown:
        raise MockError(
            f"cannot seed unknown resources {unknown}; the model has {sorted(model.resources)}"
        )
    return {name: int(records.get(name, 0)) for name in model.resources}


@dataclass(frozen=True, slots=True)
class _Slot:
    """What `_Generator._record` needs of one field, found once per resource: a large world
    asks it of every field of every record."""

    name: str
    spec: FieldSpec
    required: bool  # by the model, whatever the record's states
    unique: bool
    born_with_default: bool
    # The constants a reference's learned schema limits it to (if any).
    constants: tuple[str, ...] | None = None
    # An enum's prepared draws (`_draw`): when the field may be empty, and when it may not.
    draws: tuple[_Draw, _Draw] | None = None


def _slots(resource: Resource) -> list[_Slot]:
    slots = []
    for name, spec in resource.fields.items():
        if name == resource.id_field:
            continue
        constants = None
        if spec.reference is not None:
            choices = _choices(reference_id_schema(spec))
            constants = None if choices is None else tuple(choices)
        draws = None
        if spec.enum_frequencies:
            frequencies, schema = spec.enum_frequencies, spec.schema_
            draws = (
                _draw(frequencies, schema, filled=False),
                _draw(frequencies, schema, filled=True),
            )
        slots.append(
            _Slot(
                name,
                spec,
                required=spec.required or spec.required_on_create,
                unique=name in resource.unique,
                born_with_default=_born_with_default(spec),
                constants=constants,
                draws=draws,
            )
        )
    return slots


class _Generator:
    """The per-run state of generation: ids made so far, counters, values of unique fields."""

    def __init__(self, model: ServiceModel, seed: int) -> None:
        self.model = model
        self.seed = seed
        self.ids: dict[str, list[Any]] = {}
        self.counters: dict[str, int] = {}
        self.unique_values: dict[tuple[str, str], set[str]] = {}
        self.as_strings = model.conventions.values_as_strings
        self.time_fields: dict[str, list[tuple[str, FieldSpec, str]]] = {}
        # id(field spec), filled -> an enum's prepared draw; the model keeps the specs alive.
        self.draws: dict[tuple[int, bool], _Draw] = {}
        self.slots: dict[str, list[_Slot]] = {}
        # (resource, field, ids made of its target) -> the constants among them (`_reference`).
        self.constant_targets: dict[tuple[str, str, int], list[Any]] = {}

    def resource(self, resource: Resource, count: int) -> Iterator[tuple[str, str, Record]]:
        # One random stream per resource: adding a resource to the model leaves the others'
        # records unchanged.
        rng = random.Random(f"{self.seed}/{resource.name}")
        fake = pooled_faker(rng)
        made = self.ids.setdefault(resource.name, [])
        taken: set[str] = set()
        for _ in range(count):
            record_id, id_value = self._new_id(resource, resource.id_field, resource.id_format, rng)
            # Short random ids (an `opaque` format learned from 4-character tokens) can repeat.
            for _ in range(_UNIQUE_TRIES):
                if record_id not in taken:
                    break
                record_id, id_value = self._new_id(
                    resource, resource.id_field, resource.id_format, rng
                )
            taken.add(record_id)
            record = self._record(resource, rng, fake)
            record = {resource.id_field: id_value, **record}
            if self.as_strings:
                record = _stringified(record)
            made.append(record[resource.id_field])
            yield resource.name, record_id, record

    def remember(self, resource: Resource, record: Record) -> None:
        """Take a record made elsewhere (recorded) into account: references may point at it and
        generated unique values avoid its own."""
        self.ids.setdefault(resource.name, []).append(record.get(resource.id_field))
        for name in resource.unique:
            if name in record:
                self.unique_values.setdefault((resource.name, name), set()).add(
                    json.dumps(record[name])
                )

    def completed(
        self, resource: Resource, records: list[tuple[str, str, Record]]
    ) -> Iterator[tuple[str, str, Record]]:
        """Each record with generated values for the declared fields it lacks."""
        rng = random.Random(f"{self.seed}/{resource.name}/completed")
        fake = pooled_faker(rng)
        for name, record_id, record in records:
            missing = resource.fields.keys() - record.keys()
            if not missing:
                yield name, record_id, record
                continue
            drawn = self._record(resource, rng, fake)
            if self.as_strings:
                drawn = _stringified(drawn)
            filled = {
                field: drawn[field]
                for field in resource.fields
                if field in missing and field in drawn
            }
            yield name, record_id, {**record, **filled}

    def _new_id(
        self, resource: Resource, name: str, fmt: IdFormat, rng: random.Random
    ) -> tuple[str, Any]:
        number = None
        if needs_counter(fmt):
            counter = counter_name(resource.name, name)
            number = self.counters.get(counter, fmt.start - 1) + 1
            self.counters[counter] = number
        text = mint_id(fmt, rng, number=number, now_ms=_millis(ANCHOR))
        spec = resource.fields.get(name)
        if fmt.kind == "integer" and spec is not None and type_of(spec.schema_) == "integer":
            return text, int(text)
        return text, text

    def _record(self, resource: Resource, rng: random.Random, fake: _Pooled) -> Record:
        states = _pick_states(resource, rng)
        required_now, owned_by_states = _state_fields(resource.state_machines, states)
        times = self._timeline(resource, rng, required_now, owned_by_states)
        record: Record = {}
        slots = self.slots.get(resource.name)
        if slots is None:
            slots = self.slots[resource.name] = _slots(resource)
        for slot in slots:
            name, spec = slot.name, slot.spec
            needed = slot.required or name in required_now
            if name in states:
                record[name] = _typed_enum(states[name], spec.schema_)
            elif name in owned_by_states and not needed:
                self._leave_empty(record, spec)
            elif spec.reference is not None:
                value = self._reference(resource, slot, spec.reference, rng, needed)
                if value is None:
                    self._leave_empty(record, spec)
                else:
                    record[name] = value
            elif spec.generator is not None:
                record[name] = self._new_id(resource, name, spec.generator, rng)[1]
            elif name in times:
                record[name] = times[name]
            elif slot.born_with_default:
                record[name] = spec.default
            elif not needed and rng.random() < _EMPTY_SHARE:
                self._leave_empty(record, spec)
            elif slot.unique:
                record[name] = self._unique(resource, spec, rng, fake, needed=needed)
            elif slot.draws is not None:
                record[name] = _pick(slot.draws[needed], rng)
            else:
                record[name] = _value(spec, rng, fake, filled=needed, draws=self.draws)
        for sm in resource.state_machines:
            entry = sm.sets_on_entry.get(states[sm.field])
            if entry is not None:
                # What the service writes on entering the state holds in a record that is in it.
                record.update(
                    (name, value) for name, value in entry.values.items() if name in resource.fields
                )
        return record

    def _leave_empty(self, record: Record, spec: FieldSpec) -> None:
        if self.as_strings:
            record[spec.name] = ""
        elif spec.nullable:
            record[spec.name] = None

    def _unique(
        self,
        resource: Resource,
        spec: FieldSpec,
        rng: random.Random,
        pooled: _Pooled,
        *,
        needed: bool,
    ) -> Any:
        fake = pooled.faker  # a unique field's values must not repeat
        value = _value(spec, rng, fake, filled=needed, draws=self.draws)
        seen = self.unique_values.setdefault((resource.name, spec.name), set())
        for _ in range(_UNIQUE_TRIES):
            if json.dumps(value) not in seen:
                break
            value = _value(spec, rng, fake, filled=needed, draws=self.draws)
        else:
            value = f"{value}-{len(seen)}"
        seen.add(json.dumps(value))
        return value

    def _reference(
        self,
        resource: Resource,
        slot: _Slot,
        reference: Reference,
        rng: random.Random,
        needed: bool,
    ) -> Any:
        """An id of a record already made, or the constant the field's learned value is limited
        to; None when there is neither (a broken cycle)."""
        target = self.model.resources.get(reference.resource)
        targets = self.ids.get(reference.resource, [])
        if slot.constants is not None:
            targets = self._constant_targets(resource, slot, target, targets)
        if not targets or (not needed and rng.random() < _EMPTY_SHARE):
            return None
        target_id = rng.choice(targets)
        if reference.style == "object" and target is not None:
            return {target.id_field: target_id}
        return target_id

    def _constant_targets(
        self, resource: Resource, slot: _Slot, target: Resource | None, made: list[Any]
    ) -> list[Any]:
        """The constants of a reference's learned enum that name a record made so far or that
        no record could be (found again only when more records have been made)."""
        key = (resource.name, slot.name, len(made))
        found = self.constant_targets.get(key)
        if found is None:
            # A learned enum of ids names records of the corpus, which need not exist here.
            ids = {str(target_id) for target_id in made}
            found = self.constant_targets[key] = [
                value
                for value in slot.constants or ()
                if value in ids or (target is not None and not could_be_id(target, value))
            ]
        return found

    def _timeline(
        self,
        resource: Resource,
        rng: random.Random,
        required_now: set[str],
        owned_by_states: set[str],
    ) -> dict[str, Any]:
        moment = ANCHOR - timedelta(days=rng.uniform(2, 400))
        times: dict[str, Any] = {}
        # In the order of a record's life (`_time_fields`).
        for name, spec, layout in self._time_fields(resource):
            if name in owned_by_states and name not in required_now and not spec.required:
                continue
            moment += timedelta(minutes=rng.uniform(1, 4 * 24 * 60))
            times[name] = moment.strftime(layout)
        return times

    def _time_fields(self, resource: Resource) -> list[tuple[str, FieldSpec, str]]:
        """The resource's fields a record's timeline fills, in the order of a record's life,
        each with its `strftime` layout (found once per resource: seeding asks for every
        record)."""
        found = self.time_fields.get(resource.name)
        if found is None:
            fields = [
                (name, spec, self._time_layout(spec))
                for name, spec in resource.fields.items()
                if _is_time(spec)
                and name != resource.id_field
                and spec.reference is None
                and spec.generator is None
            ]
            found = self.time_fields[resource.name] = sorted(
                fields, key=lambda item: (_time_rank(item[0]), item[0])
            )
        return found

    def _time_layout(self, spec: FieldSpec) -> str:
        if spec.schema_.get("format") == "date":
            return "%Y-%m-%d"
        if unwrap_pattern(str(spec.schema_.get("pattern", ""))) == SPACED_DATETIME:
            return "%Y-%m-%d %H:%M:%S"
        return self.model.conventions.datetime_format or "%Y-%m-%dT%H:%M:%SZ"


def reference_id_schema(spec: FieldSpec) -> JsonSchema:
    """The JSON Schema of the id a reference field stores. A `link_value` field is learned in
    its wire form, `{"link", "value"}` (maybe beside an empty string); the store keeps the bare
    id, which that object's `value` describes (unconstrained when no object was seen)."""
    reference = spec.reference
    if reference is None or reference.style != "link_value":
        return spec.schema_
    schema = spec.schema_
    for branch in (schema, *schema.get("anyOf", ()), *schema.get("oneOf", ())):
        value = branch.get("properties", {}).get("value")
        if isinstance(value, dict):
            return value
    return {}


def stored_value_schema(model: ServiceModel, spec: FieldSpec) -> JsonSchema:
    """The JSON Schema a stored value of the field fits: a reference's bare id
    (`reference_id_schema`) without a learned enum whose every value could be the target's id.
    Such an enum lists the records the corpus happened to show; whether a value names a record
    is a question for the reference check (seed files, the checker), as generation draws
    references from the records that exist. An enum of constants no record could have
    (ServiceNow's `global` domain) still holds."""
    schema = reference_id_schema(spec)
    target = model.resources.get(spec.reference.resource) if spec.reference is not None else None
    choices = _choices(schema)
    if target is None or not choices or not all(could_be_id(target, v) for v in choices):
        return schema
    return {key: value for key, value in schema.items() if key != "enum"}


def could_be_id(resource: Resource, value: Any) -> bool:
    """Whether `value` has the form the model states the resource's ids take (any value does
    when it states none). One that does not is a constant the service writes in place of a
    record (ServiceNow's `global` domain, whose link names sys_user_group), never a record a
    seed should hold."""
    pattern = resource.id_format.pattern
    return pattern is None or re.fullmatch(pattern, str(value)) is not None


def _born_with_default(spec: FieldSpec) -> bool:
    """Whether a seeded record holds the value a create gives the field: the service writes it
    (clients never do), the model knows that value, and the corpus showed no mix of values to
    draw from (booleans never get one). Any other value is the effect of a call the seed never
    made: a record drawn with Salesforce's `IsDeleted` true would be in the recycle bin, gone
    from every get and list."""
    return spec.server_generated and spec.has_default and not spec.enum_frequencies


def _choices(schema: JsonSchema) -> list[str] | None:
    """The non-empty values a schema limits a string to (`const` or `enum`), if it does."""
    if "const" in schema:
        return [str(schema["const"])]
    enum = schema.get("enum")
    if not enum:
        return None
    return [str(option) for option in enum if option not in ("", None)]


def _millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _pick_states(resource: Resource, rng: random.Random) -> dict[str, str]:
    """A state for each machine. A machine whose state another machine's state sets on entry
    (ServiceNow's `incident_state` follows `state`) is not drawn but follows it."""
    machines = resource.state_machines
    following = {
        name
        for sm in machines
        for entry in sm.sets_on_entry.values()
        for name in entry.values
        if name != sm.field
    }
    states: dict[str, str] = {}
    for sm in sorted(machines, key=lambda sm: sm.field in following):
        if sm.field not in states:
            states[sm.field] = _pick_state(sm, resource.fields.get(sm.field), rng)
        entry = sm.sets_on_entry.get(states[sm.field])
        for other in machines:
            if entry is not None and other.field in entry.values and other.field not in states:
                states[other.field] = str(entry.values[other.field])
    return states


def _pick_state(sm: StateMachine, spec: FieldSpec | None, rng: random.Random) -> str:
    frequencies = spec.enum_frequencies if spec is not None else None
    if frequencies:
        options = [state for state in frequencies if state in sm.states] or list(frequencies)
        weights = [frequencies[state] for state in options]
        return rng.choices(options, weights=weights)[0]
    return rng.choice(sm.states)


def _state_fields(
    machines: list[StateMachine], states: Mapping[str, str]
) -> tuple[set[str], set[str]]:
    """Fields the chosen states require, and fields that only some state requires."""
    required: set[str] = set()
    owned: set[str] = set()
    for sm in machines:
        for fields in sm.required_on_entry.values():
            owned.update(fields)
        required.update(sm.required_on_entry.get(states[sm.field], ()))
    return required, owned


_TIME_NAME_SUFFIXES = ("_at", "_on", "date", "stamp", "_time")
_LONGEST_TIMESTAMP = len("2024-12-17T15:14:34Z")


def _is_time(spec: FieldSpec) -> bool:
    fmt = spec.schema_.get("format")
    if fmt in ("date-time", "date"):
        return True
    # A name alone (`*_at`, `*_on`) is weak evidence: a schema that constrains the text in a
    # way no timestamp fits overrules it.
    pattern = spec.schema_.get("pattern")
    return (
        fmt is None
        and type_of(spec.schema_) == "string"
        and not _only_empty(spec.schema_)
        and not {"enum", "const"} & spec.schema_.keys()
        and (pattern is None or unwrap_pattern(pattern) == SPACED_DATETIME)
        and spec.schema_.get("maxLength", _LONGEST_TIMESTAMP) >= _LONGEST_TIMESTAMP
        and spec.name.lower().endswith(_TIME_NAME_SUFFIXES)
    )


_TIME_RANKS = (
    ("created",),
    ("opened", "start", "submitted"),
    (),  # every other timestamp
    ("resolved",),
    ("closed", "end"),
    ("updated", "modified", "modstamp"),
)


def _time_rank(name: str) -> int:
    """Where a timestamp field falls in a record's life: created, opened, ..., last updated."""
    lowered = name.lower()
    for rank in (5, 0, 1, 3, 4):
        if any(word in lowered for word in _TIME_RANKS[rank]):
            return rank
    return 2


def _only_empty(schema: JsonSchema) -> bool:
    """Whether every string the schema allows is empty (a field only ever seen blank)."""
    branches = [schema, *schema.get("anyOf", ()), *schema.get("oneOf", ())]
    strings = [b for b in branches if b.get("type") == "string"]
    return bool(strings) and all(b.get("maxLength") == 0 for b in strings)


def type_of(schema: JsonSchema) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        for key in ("anyOf", "oneOf"):
            for option in schema.get(key, ()):
                found = type_of(option)
                if found is not None and found != "null":
                    return found
    return kind if isinstance(kind, str) else None


def _typed_enum(value: str, schema: JsonSchema) -> Any:
    kind = type_of(schema)
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except ValueError:
        return value
    if kind == "boolean":
        return value == "true"
    return value


def _value(
    spec: FieldSpec,
    rng: random.Random,
    fake: Fake,
    *,
    filled: bool = False,
    draws: dict[tuple[int, bool], _Draw] | None = None,
) -> Any:
    """A value for the field; `filled` when it must not be empty (a state requires it), so an
    enum's blank choice is not drawn. `draws` keeps each enum's prepared draw by field."""
    if spec.enum_frequencies:
        key = (id(spec), filled)
        draw = None if draws is None else draws.get(key)
        if draw is None:
            draw = _draw(spec.enum_frequencies, spec.schema_, filled=filled)
            if draws is not None:
                draws[key] = draw
        return _pick(draw, rng)
    schema = spec.schema_
    enum = schema.get("enum")
    if filled and enum and any(option != "" for option in enum):
        schema = {**schema, "enum": [option for option in enum if option != ""]}
    return value_from_schema(schema, spec.name, rng, fake, depth=0)


_Draw = tuple[list[Any], list[float]]


def _pick(draw: _Draw, rng: random.Random) -> Any:
    """What `rng.choices(options, cum_weights=cumulative)[0]` draws, without its set-up."""
    options, cumulative = draw
    return options[bisect.bisect(cumulative, rng.random() * cumulative[-1], 0, len(options) - 1)]


def _draw(frequencies: Mapping[str, int], schema: JsonSchema, *, filled: bool) -> _Draw:
    """An enum's options, as the schema types them, and cumulative weights (a draw need not
    add them up or type its value again)."""
    if filled:
        kept = {option: n for option, n in frequencies.items() if option != "" and n > 0}
        frequencies = kept or frequencies
    options = [_typed_enum(option, schema) for option in frequencies]
    return options, [float(n) for n in itertools.accumulate(frequencies.values())]


_MAX_DEPTH = 4


def _number_from(schema: JsonSchema, kind: str, rng: random.Random) -> int | float:
    """A number within the schema's bounds, else within the range the traces showed."""
    observed = schema.get(OBSERVED) or {}
    low = schema.get("minimum", observed.get("minimum", 0))
    high = schema.get("maximum", observed.get("maximum", max(low, 0) + 1000))
    if kind == "integer":
        return rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
    return round(rng.uniform(float(low), float(high)), 2)


def value_from_schema(
    schema: JsonSchema, name: str, rng: random.Random, fake: Fake, depth: int
) -> Any:
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        options = [o for o in schema.get(key, ()) if type_of(o) not in (None, "null")]
        if options:
            return value_from_schema(options[0], name, rng, fake, depth)
    kind = type_of(schema)
    if kind == "null":
        return None
    if kind in ("integer", "number"):
        return _number_from(schema, kind, rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        if depth >= _MAX_DEPTH:
            return []
        items = schema.get("items") or {"type": "string"}
        low = int(schema.get("minItems", 0))
        size = rng.randint(low, max(low, int(schema.get("maxItems", 3))))
        return [value_from_schema(items, name, rng, fake, depth + 1) for _ in range(size)]
    if kind == "object":
        if depth >= _MAX_DEPTH:
            return {}
        required = set(schema.get("required", ()))
        return {
            key: value_from_schema(sub, key, rng, fake, depth + 1)
            for key, sub in schema.get("properties", {}).items()
            if key in required or rng.random() >= _EMPTY_SHARE
        }
    return _string(schema, name, rng, fake)


def _string(schema: JsonSchema, name: str, rng: random.Random, fake: Fake) -> str:
    carried = _carried_value(schema, rng)
    if carried is not None:
        return carried
    fmt = schema.get("format")
    text = _by_format(fmt, rng, fake) if isinstance(fmt, str) else None
    if text is None:
        text = _by_name(name, rng, fake)
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    if len(text) < low:
        text += "".join(rng.choice(string.ascii_lowercase) for _ in range(low - len(text)))
    if high is not None:
        text = text[: int(high)]
    return text


_FORMAT_PROVIDERS = {
    "email": "email",
    "uri": "url",
    "url": "url",
    "hostname": "hostname",
    "ipv4": "ipv4",
    "ipv6": "ipv6",
    "time": "time",
}


def _by_format(fmt: str, rng: random.Random, fake: Fake) -> str | None:
    """A value of a string format, or None for a format without a maker."""
    provider = _FORMAT_PROVIDERS.get(fmt)
    if provider is not None:
        return _make(fake, provider)
    if fmt == "uuid":
        return mint_id(IdFormat(kind="uuid"), rng)
    if fmt == "date":
        return (ANCHOR.date() - timedelta(days=rng.randint(0, 400))).isoformat()
    if fmt == "date-time":
        moment = ANCHOR - timedelta(minutes=rng.randint(0, 400 * 1440))
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def _carried_value(schema: JsonSchema, rng: random.Random) -> str | None:
    """A value for a string the learner marked as carrying something else: a number or a
    boolean sent as text (`x-myna-type`), a timestamp, or an id of a known class (`pattern`)."""
    logical = schema.get("x-myna-type")
    if logical == "integer":
        return str(rng.randint(0, 99))
    if logical == "number":
        return f"{rng.uniform(0, 1000):.2f}"
    if logical == "boolean":
        return rng.choice(("true", "false"))
    pattern = schema.get("pattern")
    if not isinstance(pattern, str):
        return None
    inner = unwrap_pattern(pattern)
    if inner == SPACED_DATETIME:
        moment = ANCHOR - timedelta(minutes=rng.randint(0, 400 * 1440))
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    for kind in ("hex32", "uuid", "ulid", "salesforce"):
        if inner == ID_PATTERNS[kind][1:-1]:
            return mint_id(IdFormat(kind=kind), rng, now_ms=0)
    return None


# Words in a field's name -> the Faker provider that makes its values; the first match wins,
# so the more specific names come first. `headline` is a short sentence without its full stop.
_BY_NAME: tuple[tuple[tuple[str, ...], str], ...] = (
    (("email",), "email"),
    (("phone", "mobile", "fax"), "phone_number"),
    (("first_name", "firstname"), "first_name"),
    (("last_name", "lastname"), "last_name"),
    (("user_name", "username", "login"), "user_name"),
    (("city",), "city"),
    (("country",), "country"),
    (("state", "province"), "state"),
    (("zip", "postal"), "postcode"),
    (("street", "address"), "street_address"),
    (("company", "account", "organization", "vendor"), "company"),
    (("url", "website", "link"), "url"),
    (("short_description", "title", "subject", "summary"), "headline"),
    (("description", "comment", "note", "body", "text"), "paragraph"),
    (("name",), "name"),
    (("color", "colour"), "color_name"),
    (("currency",), "currency_code"),
)


def _by_name(name: str, rng: random.Random, fake: Fake) -> str:
    return _make(fake, _provider_for(name))


_POOL = 1000
"""Values a provider makes per resource before the resource draws among those it made: Faker
costs most of generating a record, and a large world needs no more distinct sentences."""


class _Pooled:
    """A resource's Faker whose providers make their first `_POOL` values, then draw among
    them with the resource's random stream (a small world's values are Faker's own, and any
    world's the same for a seed). The Faker is made on the first value asked of it: a start
    that draws none (a model's fillers, recorded records lacking no field) pays neither
    Faker's import nor its set-up (5 ms a resource)."""

    __slots__ = ("_faker", "_made", "_rng", "_seed")

    def __init__(self, seed: int, rng: random.Random) -> None:
        self._seed = seed
        self._faker: Faker | None = None
        self._rng = rng
        self._made: dict[str, list[str]] = {}

    @property
    def faker(self) -> Faker:
        if self._faker is None:
            from faker import Faker

            self._faker = Faker("en_US")
            self._faker.seed_instance(self._seed)
        return self._faker

    def make(self, provider: str) -> str:
        made = self._made.setdefault(provider, [])
        if len(made) < _POOL:
            made.append(_provide(self.faker, provider))
            return made[-1]
        return self._rng.choice(made)


Fake: TypeAlias = "Faker | _Pooled"


def pooled_faker(rng: random.Random) -> _Pooled:
    """Values of Faker's providers for a stream of draws from `rng`, seeded from it."""
    return _Pooled(rng.getrandbits(64), rng)


def _make(fake: Fake, provider: str) -> str:
    return fake.make(provider) if isinstance(fake, _Pooled) else _provide(fake, provider)


def _provide(fake: Faker, provider: str) -> str:
    if provider == "headline":
        return str(fake.sentence(nb_words=5).rstrip("."))
    return str(getattr(fake, provider)())


@lru_cache(maxsize=4096)
def _provider_for(name: str) -> str:
    """The Faker provider for a field of this name (looked up once per name: seeding asks for
    every value of every record)."""
    lowered = name.lower()
    return next(
        (provider for words, provider in _BY_NAME if any(word in lowered for word in words)),
        "word",
    )


def _stringified(record: Record) -> Record:
    """`_stringify` of a record, its text values (most of them) passed through as they are."""
    return {
        name: value if type(value) is str else _stringify(value) for name, value in record.items()
    }


def _stringify(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return {key: _stringify(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_stringify(item) for item in value]
    return value


# --- seeding from files ------------------------------------------------------------------------


def read_files(model: ServiceModel, directory: Path, *, checked: bool = True) -> SeedData:
    """Records from `<resource>.jsonl` / `<resource>.csv` files, checked against the model.

    Each record needs its resource's id field; each value must fit its field's schema; a
    reference must name a record of the files when its target resource has a file. Counters of
    sequence ids and numbers continue after the largest value found. `checked=False` skips the
    per-value checks, for a world shipped with its model, whose tests check it against that
    model: at every start they would cost more than loading it (a third of a second for the
    ITSM demo world).
    """
    if not directory.is_dir():
        raise InputError("not a directory of seed files", file=str(directory))
    files = sorted(p for p in directory.iterdir() if p.suffix in (".jsonl", ".csv"))
    if not files:
        raise InputError("no <resource>.jsonl or <resource>.csv files", file=str(directory))
    loaded: dict[str, list[tuple[str, int, Record]]] = {}
    paths: dict[str, Path] = {}
    for path in files:
        resource = model.resources.get(path.stem)
        if resource is None:
            raise InputError(
                f"no resource {path.stem!r} in the model; it has {sorted(model.resources)}",
                file=str(path),
            )
        if resource.name in loaded:
            raise InputError(
                f"a second file for resource {resource.name!r} (first: {paths[resource.name]})",
                file=str(path),
            )
        paths[resource.name] = path
        rows = _jsonl_rows(path) if path.suffix == ".jsonl" else _csv_rows(path, resource, model)
        loaded[resource.name] = [
            (str(_id_of(record, resource, path, line)), line, record) for line, record in rows
        ]
    lines = {
        (name, record_id): line for name, rows in loaded.items() for record_id, line, _ in rows
    }
    given = [
        (name, record_id, record) for name, rows in loaded.items() for record_id, _, record in rows
    ]
    # Checked after the extensions' additions, so a reference to a row they derive (an incident's
    # CI that the files hold only as a server) resolves, and the derived rows are checked too.
    records = prepared(model, given)
    known: dict[str, set[str]] = {}
    for name, record_id, _ in records:
        known.setdefault(name, set()).add(record_id)
    sequences: dict[str, int] = {}
    validators: dict[str, dict[str, Any]] = {}
    for name, record_id, record in records:
        resource = model.resources[name]
        if checked:
            if name not in validators:
                validators[name] = _validators(model, resource)
            line = lines.get((name, record_id))
            file = str(paths[name]) if line is not None else _derived(directory, name, record_id)
            _check_record(record, resource, validators[name], known, file, line, model)
        _advance_counters(sequences, resource, record)
    return SeedData(records, dict(sorted(sequences.items())))


def _derived(directory: Path, resource: str, record_id: str) -> str:
    """Where a row an extension derived comes from, for an error in it."""
    return f"{directory} ({resource} {record_id}, derived from a record of another file)"


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Record]]:
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(
                    f"not JSON: {error.msg} at column {error.colno}",
                    file=str(path),
                    line=line_number,
                ) from error
            if not isinstance(record, dict):
                raise InputError(
                    f"expected a JSON object, found {type(record).__name__}",
                    file=str(path),
                    line=line_number,
                )
            yield line_number, record


def _csv_rows(path: Path, resource: Resource, model: ServiceModel) -> Iterator[tuple[int, Record]]:
    as_strings = model.conventions.values_as_strings
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            line = reader.line_num
            record: Record = {}
            for name, text in row.items():
                if name is None:
                    raise InputError("more values than header columns", file=str(path), line=line)
                spec = resource.fields.get(name)
                record[name] = _from_csv(text or "", spec, as_strings, path, line)
            yield line, record


def _from_csv(text: str, spec: FieldSpec | None, as_strings: bool, path: Path, line: int) -> Any:
    if spec is None or as_strings:
        return text
    kind = type_of(spec.schema_)
    if text == "":
        return None if kind != "string" else ""
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
        if kind == "boolean":
            if text.lower() not in ("true", "false"):
                raise ValueError(text)
            return text.lower() == "true"
        if kind in ("object", "array") or (spec.reference is not None and text.startswith("{")):
            return json.loads(text)
    except (ValueError, json.JSONDecodeError) as error:
        raise InputError(
            f"expected {kind}, found {text!r}", file=str(path), line=line, field=spec.name
        ) from error
    return text


def _id_of(record: Record, resource: Resource, path: Path, line: int) -> Any:
    value = record.get(resource.id_field)
    if value is None or value == "":
        raise InputError(
            "every record needs its id field", file=str(path), line=line, field=resource.id_field
        )
    return value


def _validators(model: ServiceModel, resource: Resource) -> dict[str, Any]:
    """A validator of each field's stored value (a reference's bare id, not its wire form)."""
    from jsonschema import Draft202012Validator  # only a data file's records are checked so

    schemas = {name: stored_value_schema(model, spec) for name, spec in resource.fields.items()}
    return {name: Draft202012Validator(schema) for name, schema in schemas.items() if schema}


def _check_record(
    record: Record,
    resource: Resource,
    validators: Mapping[str, Any],
    known: Mapping[str, set[str]],
    file: str,
    line: int | None,
    model: ServiceModel,
) -> None:
    for name, value in list(record.items()):
        spec = resource.fields.get(name)
        if spec is None:
            raise InputError(
                f"no field {name!r} in resource {resource.name!r}",
                file=file,
                line=line,
                field=name,
            )
        if spec.reference is not None and spec.reference.style == "link_value":
            value = record[name] = _link_value_id(value, file, line, name)
        empty = value is None or (value == "" and model.conventions.values_as_strings)
        if empty:
            continue
        validator = validators.get(name)
        if validator is not None:
            error = next(iter(validator.iter_errors(value)), None)
            if error is not None:
                raise InputError(
                    f"value {value!r} does not fit the field's schema: {error.message}",
                    file=file,
                    line=line,
                    field=name,
                )
        if spec.reference is not None and spec.reference.resource in known:
            target = _reference_id(value)
            target_resource = model.resources[spec.reference.resource]
            if (
                target is not None
                and target not in known[target_resource.name]
                and could_be_id(target_resource, target)
            ):
                raise InputError(
                    f"references {spec.reference.resource} {target!r}, which no file defines",
                    file=file,
                    line=line,
                    field=name,
                )


def _link_value_id(value: Any, file: str, line: int | None, name: str) -> Any:
    """A `link_value` reference as the store keeps it: files may hold it as responses render it
    (`{"link", "value"}`) or as the bare id."""
    if not isinstance(value, dict):
        return value
    if "value" not in value:
        raise InputError(
            f"a reference written as an object needs its 'value' (the target's id): {value!r}",
            file=file,
            line=line,
            field=name,
        )
    return value["value"]


def _reference_id(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("value", "id", "Id", "sys_id"):
            if key in value:
                return _reference_id(value[key])
        return None
    return None if value in (None, "") else str(value)


def counters_after(
    model: ServiceModel, records: Iterable[tuple[str, str, Record]]
) -> dict[str, int]:
    """The last value each counter (integer ids, sequence numbers) used in these records, so
    that records the runtime creates next never collide with them."""
    sequences: dict[str, int] = {}
    for name, _, record in records:
        resource = model.resources.get(name)
        if resource is not None:
            _advance_counters(sequences, resource, record)
    return dict(sorted(sequences.items()))


def _advance_counters(sequences: dict[str, int], resource: Resource, record: Record) -> None:
    formats = [(resource.id_field, resource.id_format)] + [
        (name, spec.generator) for name, spec in resource.fields.items() if spec.generator
    ]
    for name, fmt in formats:
        if not needs_counter(fmt):
            continue
        number = _counter_value(fmt, record.get(name))
        if number is not None:
            counter = counter_name(resource.name, name)
            sequences[counter] = max(sequences.get(counter, number), number)


def _counter_value(fmt: IdFormat, value: Any) -> int | None:
    text = str(value) if value not in (None, "") else ""
    if fmt.prefix and text.startswith(fmt.prefix):
        text = text[len(fmt.prefix) :]
    return int(text) if spells_int(text) else None
