"""Every learned fact of a model with an address, its evidence, and the edits a reviewer makes.

A fact is anything that carries `Evidence`: a resource, a field's roles, a state machine, each of
its transitions, an operation, and the conventions (envelope, pagination, auth). Its address is
a short stable string (`field:incident.number`, `transition:incident.state:2`,
`operation:createIncident`) that `myna model show`, the web console and its API share. Pinning
sets `evidence.pinned` (re-learning keeps the fact as it is); editing a field's roles pins it too,
since a person decided it. Both change the model in place; `openapi.save` writes it back, sorted
and byte-stable, so pinning and then unpinning leaves the file as it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from myna.errors import ModelError
from myna.schemas.model import Evidence, ServiceModel

FIELD_ROLES: Final = ("server_generated", "read_only", "required_on_create", "immutable")
"""The roles of a field a reviewer may switch on or off."""


@dataclass(frozen=True, slots=True)
class Fact:
    """One learned fact: where it is, what it says, and why Myna believes it."""

    address: str
    where: str
    fact: str
    evidence: Evidence

    @property
    def strength(self) -> tuple[float, int, str, str]:
        """Sort key, weakest first: a fact never seen (samples 0) is the least certain."""
        evidence = self.evidence
        return (
            evidence.confidence if evidence.samples else 0.0,
            evidence.samples,
            self.where,
            self.fact,
        )


def facts(model: ServiceModel) -> Iterator[Fact]:
    """Every fact of `model`, resources first, then operations and conventions."""
    for resource in model.resources.values():
        yield Fact(
            f"resource:{resource.name}",
            resource.name,
            f"resource, id {resource.id_field}",
            resource.evidence,
        )
        for name, spec in resource.fields.items():
            roles = [role for role in FIELD_ROLES if getattr(spec, role)]
            if roles or spec.reference is not None or spec.evidence.pinned:
                reference = [f"-> {spec.reference.resource}"] if spec.reference else []
                described = ", ".join(roles + reference) or "no special role"
                yield Fact(
                    f"field:{resource.name}.{name}",
                    f"{resource.name}.{name}",
                    described,
                    spec.evidence,
                )
        for machine in resource.state_machines:
            where = f"{resource.name}.{machine.field}"
            yield Fact(f"machine:{where}", where, "state machine", machine.evidence)
            for index, transition in enumerate(machine.transitions):
                yield Fact(
                    f"transition:{where}:{index}",
                    where,
                    f"{transition.source or '(create)'} -> {transition.target} "
                    f"by {transition.operation or '?'}",
                    transition.evidence,
                )
    for operation in model.operations:
        yield Fact(
            f"operation:{operation.id}",
            operation.id,
            f"{operation.kind} {operation.method} {operation.path}",
            operation.evidence,
        )
    conventions = model.conventions
    for name, style, evidence in (
        ("envelope", conventions.envelope.style, conventions.envelope.evidence),
        ("pagination", conventions.pagination.style, conventions.pagination.evidence),
        ("auth", conventions.auth.scheme, conventions.auth.evidence),
    ):
        yield Fact(f"conventions:{name}", "conventions", f"{name} {style}", evidence)


def weakest_first(model: ServiceModel) -> list[Fact]:
    return sorted(facts(model), key=lambda fact: fact.strength)


def find(model: ServiceModel, address: str) -> Fact:
    """The fact at `address`; an unknown address is a `ModelError` naming it."""
    for fact in facts(model):
        if fact.address == address:
            return fact
    raise ModelError(f"the model has no fact {address!r}", path=address)


def pin(model: ServiceModel, address: str, pinned: bool) -> Fact:
    """Pin (or unpin) the fact at `address`."""
    fact = find(model, address)
    fact.evidence.pinned = pinned
    return find(model, address)


def set_field_roles(model: ServiceModel, address: str, roles: Mapping[str, bool]) -> Fact:
    """Switch roles of the field at `address` (`field:resource.name`) and pin it."""
    kind, _, target = address.partition(":")
    resource_name, _, field_name = target.partition(".")
    resource = model.resources.get(resource_name)
    spec = resource.fields.get(field_name) if kind == "field" and resource else None
    if spec is None:
        raise ModelError(f"the model has no field fact {address!r}", path=address)
    unknown = sorted(set(roles) - set(FIELD_ROLES))
    if unknown:
        raise ModelError(
            f"{', '.join(unknown)} is not a field role; expected one of {', '.join(FIELD_ROLES)}",
            path=address,
        )
    for role, value in roles.items():
        setattr(spec, role, bool(value))
    spec.evidence.pinned = True
    return find(model, address)
