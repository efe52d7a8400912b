"""The platform rules a service model can state, from the catalogue or from a model.

Besides protocol (answer shapes, SOQL, describe, cursors, lead conversion, cascades, roll-ups,
the access objects' rules), the reference org (`instance.Org`) enforces rules a learned model
expresses as facts:

- a restricted picklist takes only its listed values (a field's `enum`), refused with
  `INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST`; a create that leaves it out gets its default
  (`FieldSpec.default`);
- a create must send the required fields (`FieldSpec.required_on_create`), refused with
  `REQUIRED_FIELD_MISSING`; an update may not clear them;
- entering a state sets values (`StateMachine.sets_on_entry`: Closed Won brings Probability 100,
  IsClosed and IsWon true) unless the request sets the field itself;
- entering a state needs fields (`StateMachine.required_on_entry`: a Closed case has a Reason),
  refused as the org's validation rule, `FIELD_CUSTOM_VALIDATION_EXCEPTION` on the field.

`Rules` holds those facts and one source fills it. The org that *writes* the corpus has no model
(the model is learned from what it writes), so it reads the catalogue (`CATALOGUE`, from
`objects.py`); the org the `salesforce` extension serves reads the served model (`model_rules`),
so editing the model changes what a client sees. Which fields are picklists, and every other
fact, stay the catalogue's: the org stores, renders and describes the catalogue's fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from myna.backends.crm.objects import (
    ENTRY_VALUES,
    OBJECTS,
    PICKLIST_DEFAULTS,
    PICKLISTS,
    REQUIRED_ON_ENTRY,
    SObject,
)
from myna.backends.crm.records import CASE_REASON_RULE, Violation
from myna.errors import ModelError
from myna.mocks.behaviour import Write, check_required_on_entry, entry_values
from myna.schemas.model import EntryValues, IdFormat, Resource, ServiceModel, StateMachine

Row = dict[str, Any]

_NUMBERS: Final = frozenset({"currency", "double", "percent"})
# The org's validation rules, by the field a state requires: the message each refuses with.
VALIDATION_MESSAGES: Final[Mapping[tuple[str, str], str]] = {("Case", "Reason"): CASE_REASON_RULE}


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules of each object, by API name: `picklists[object][field]` the values a picklist
    takes, in order (a picklist field not listed takes any value); `defaults[object][field]` what
    a create that leaves a picklist out gets; `required[object]` the fields a create must send;
    `machines[object]` a resource whose state machines set values on entering a state, or need
    fields to enter one."""

    picklists: Mapping[str, Mapping[str, tuple[str, ...]]]
    defaults: Mapping[str, Mapping[str, str]]
    required: Mapping[str, frozenset[str]]
    machines: Mapping[str, Resource]

    def allowed(self, name: str, field_name: str) -> tuple[str, ...] | None:
        """The values picklist `field_name` of `name` takes, or None when it takes any."""
        return self.picklists.get(name, {}).get(field_name)

    def default(self, name: str, field_name: str) -> str | None:
        return self.defaults.get(name, {}).get(field_name)

    def is_required(self, name: str, field_name: str) -> bool:
        return field_name in self.required.get(name, ())

    def entry_values(self, obj: SObject, before: Row | None, after: Row, sent: Row) -> Row:
        """What entering a state sets on this write, for the fields `sent` does not set, as the
        org stores them (a percent is a float however the model writes it)."""
        resource = self.machines.get(obj.name)
        if resource is None:
            return {}
        values = entry_values(Write(resource, before, after, sent))
        return {obj.field(name).name: _stored(obj, name, value) for name, value in values.items()}

    def entry_violation(
        self, obj: SObject, before: Row | None, after: Row, sent: Row
    ) -> Violation | None:
        """The first field a state this write enters needs and the record lacks, refused as the
        org's validation rule on that field; None when nothing is missing."""
        resource = self.machines.get(obj.name)
        if resource is None:
            return None
        for missing in check_required_on_entry(Write(resource, before, after, sent)):
            message = VALIDATION_MESSAGES.get((obj.name, missing.field), missing.message)
            code = "FIELD_CUSTOM_VALIDATION_EXCEPTION"
            return Violation(missing.status, code, message, (missing.field,))
        return None


def _stored(obj: SObject, name: str, value: Any) -> Any:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if number and obj.field(name).type in _NUMBERS else value


def _machines(obj: SObject, statuses: set[str]) -> Resource:
    """A resource carrying `obj`'s entry values and required fields (`ENTRY_VALUES`,
    `REQUIRED_ON_ENTRY`) as state machines, the form `myna.mocks.behaviour` applies."""
    machines = []
    for status in sorted(statuses):
        entered = ENTRY_VALUES.get((obj.name, status), {})
        needs = REQUIRED_ON_ENTRY.get((obj.name, status), {})
        machines.append(
            StateMachine(
                field=status,
                states=list(dict.fromkeys([*entered, *needs])),
                sets_on_entry={
                    state: EntryValues(values=dict(values)) for state, values in entered.items()
                },
                required_on_entry={state: list(fields) for state, fields in needs.items()},
                # Only a machine that is enforced has its required fields checked.
                enforce=bool(needs),
            )
        )
    return Resource(
        name=obj.name,
        id_field="Id",
        id_format=IdFormat(kind="salesforce", prefix=obj.key_prefix, width=18),
        state_machines=machines,
    )


def _catalogue() -> Rules:
    picklists = {
        name: {
            spec.name: PICKLISTS[spec.picklist or spec.name]
            for spec in obj.fields
            if spec.type == "picklist"
        }
        for name, obj in OBJECTS.items()
    }
    defaults: dict[str, dict[str, str]] = {}
    for (name, field_name), value in PICKLIST_DEFAULTS.items():
        defaults.setdefault(name, {})[field_name] = value
    required = {
        name: frozenset(spec.name for spec in obj.fields if spec.required)
        for name, obj in OBJECTS.items()
    }
    statuses: dict[str, set[str]] = {}
    for name, status in [*ENTRY_VALUES, *REQUIRED_ON_ENTRY]:
        statuses.setdefault(name, set()).add(status)
    machines = {name: _machines(OBJECTS[name], fields) for name, fields in statuses.items()}
    return Rules(picklists, defaults, required, machines)


CATALOGUE: Final = _catalogue()
"""The rules as the catalogue states them: the reference org's, which wrote the corpus."""


def model_rules(model: ServiceModel) -> Rules:
    """The rules `model` states for the catalogue's objects and fields: a picklist takes its
    field's `enum` (any value when the field has none), a create must send the fields marked
    `required_on_create`, and a resource's `sets_on_entry` and (enforced machines')
    `required_on_entry` apply. An object the model lacks has none of these rules; entry values
    naming a field the object lacks are a ModelError."""
    picklists: dict[str, dict[str, tuple[str, ...]]] = {}
    defaults: dict[str, dict[str, str]] = {}
    required: dict[str, frozenset[str]] = {}
    machines: dict[str, Resource] = {}
    for name, obj in OBJECTS.items():
        resource = model.resources.get(name)
        if resource is None:
            continue
        fields = resource.fields
        for spec in obj.fields:
            modelled = fields.get(spec.name)
            if spec.type != "picklist" or modelled is None:
                continue
            enum = modelled.schema_.get("enum")
            if isinstance(enum, list):
                picklists.setdefault(name, {})[spec.name] = tuple(
                    str(value) for value in enum if value is not None
                )
            if modelled.has_default and modelled.default is not None:
                defaults.setdefault(name, {})[spec.name] = str(modelled.default)
        required[name] = frozenset(
            spec.name
            for spec in obj.fields
            if spec.name in fields and fields[spec.name].required_on_create
        )
        if any(
            machine.sets_on_entry or machine.required_on_entry
            for machine in resource.state_machines
        ):
            _check_entry_fields(resource, obj)
            machines[name] = resource
    return Rules(picklists, defaults, required, machines)


def _check_entry_fields(resource: Resource, obj: SObject) -> None:
    for machine in resource.state_machines:
        for state, entry in machine.sets_on_entry.items():
            unknown = sorted(name for name in entry.values if not obj.has(name))
            if unknown:
                raise ModelError(
                    f"entering {machine.field} {state!r} sets {', '.join(unknown)}, which "
                    f"{obj.name} does not have (its fields are the catalogue's, objects.py)",
                    path=f"{resource.name}.state_machines.{machine.field}.sets_on_entry.{state}",
                )
