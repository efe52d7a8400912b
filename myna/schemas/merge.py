"""Learning into an existing model: merge what new traces show, keep what a person pinned.

A fact is pinned when its `evidence.pinned` is set: in the YAML, `x-myna-pinned: true` beside a
field, resource or operation, or `pinned: true` in the evidence of any other fact (a state
machine, an error shape, a convention). Pinned facts are never changed; everything else merges:
schemas by `merge_schemas`, evidence by adding counts, lists of facts by union.
"""

from __future__ import annotations

import re

from pydantic import JsonValue

from myna.schemas.answers import ANSWERS_PER_OPERATION
from myna.schemas.entry_values import same_value
from myna.schemas.evidence import EXAMPLES, confidence
from myna.schemas.model import (
    Conventions,
    EntryValues,
    Evidence,
    FieldSpec,
    Operation,
    Resource,
    ServiceModel,
    StateMachine,
)
from myna.schemas.shape import merge_schemas

_PARAMETER = re.compile(r"\{[^}]*\}")


def merge_evidence(old: Evidence, new: Evidence) -> Evidence:
    if old.pinned:
        return old
    samples = old.samples + new.samples
    return Evidence(
        samples=samples,
        sessions=old.sessions + new.sessions,
        examples=sorted({*old.examples, *new.examples})[:EXAMPLES],
        confidence=max(old.confidence, new.confidence, confidence(samples) if samples else 0.0),
    )


def merge_models(old: ServiceModel, new: ServiceModel) -> ServiceModel:
    """`old` updated with `new`: pinned facts of `old` kept as they are."""
    merged = old.model_copy(deep=True)
    merged.servers = sorted({*old.servers, *new.servers})
    merged.conventions = _merge_conventions(old, new)
    for name, resource in new.resources.items():
        mine = merged.resources.get(name)
        merged.resources[name] = resource if mine is None else _merge_resource(mine, resource)
    by_route = {_route(op): index for index, op in enumerate(merged.operations)}
    for operation in new.operations:
        index = by_route.get(_route(operation))
        if index is None:
            taken = {op.id for op in merged.operations}
            if operation.id in taken:
                operation = operation.model_copy(update={"id": f"{operation.id}_{len(taken)}"})
            merged.operations.append(operation)
        else:
            merged.operations[index] = _merge_operation(merged.operations[index], operation)
    merged.operations.sort(key=lambda op: (op.path, op.method))
    return merged


def _route(operation: Operation) -> tuple[str, str]:
    """What a request is matched on: the method and the path with its parameters unnamed, so
    that `/sobjects/Product2/{Id}` in a reviewed model is the route learned as `{product2Id}`."""
    return operation.method, _PARAMETER.sub("{}", operation.path)


def _merge_conventions(old: ServiceModel, new: ServiceModel) -> Conventions:
    mine, theirs = old.conventions, new.conventions
    result = mine.model_copy(deep=True)
    for part in ("envelope", "pagination", "auth"):
        current = getattr(mine, part)
        incoming = getattr(theirs, part)
        if current.evidence.pinned:
            continue
        if incoming.evidence.samples > current.evidence.samples or current.evidence.samples == 0:
            setattr(
                result,
                part,
                incoming.model_copy(
                    update={"evidence": merge_evidence(current.evidence, incoming.evidence)}
                ),
            )
    kept = {shape.status: shape for shape in mine.errors}
    for shape in theirs.errors:
        if shape.status not in kept or not kept[shape.status].evidence.pinned:
            kept[shape.status] = shape
    result.errors = [kept[status] for status in sorted(kept, key=lambda s: (s is None, s or 0))]
    result.values_as_strings = mine.values_as_strings or theirs.values_as_strings
    result.datetime_format = mine.datetime_format or theirs.datetime_format
    if mine.query_language == "fields":
        result.query_language = theirs.query_language
    return result


def _merge_resource(old: Resource, new: Resource) -> Resource:
    if old.evidence.pinned:
        return old
    merged = old.model_copy(deep=True)
    merged.collection_path = old.collection_path or new.collection_path
    merged.item_path = old.item_path or new.item_path
    merged.evidence = merge_evidence(old.evidence, new.evidence)
    for name, spec in new.fields.items():
        mine = merged.fields.get(name)
        merged.fields[name] = spec if mine is None else _merge_field(mine, spec)
    pinned = {name for name, spec in old.fields.items() if spec.evidence.pinned}
    order = field_order(list(old.fields), list(new.fields), pinned)
    merged.fields = {name: merged.fields[name] for name in order}
    machines = {machine.field: machine for machine in merged.state_machines}
    for machine in new.state_machines:
        current = machines.get(machine.field)
        machines[machine.field] = machine if current is None else _merge_machine(current, machine)
    merged.state_machines = [machines[name] for name in sorted(machines)]
    merged.envelope = old.envelope or new.envelope
    merged.records = _merge_records(old, new)
    return merged


def _merge_records(old: Resource, new: Resource) -> list[dict[str, JsonValue]]:
    """The records both models start a mock with, each id once: the existing model's first."""
    ids = {str(record.get(old.id_field)) for record in old.records}
    return [
        *old.records,
        *(record for record in new.records if str(record.get(new.id_field)) not in ids),
    ]


def field_order(old: list[str], new: list[str], pinned: set[str]) -> list[str]:
    """The order of a merged resource's fields, which is the order records show them in.

    The existing model's order stands (its fields were seen first), but a pinned field the new
    traces also show takes its place among them: a reviewer writes pinned fields in any order
    (an overlay lists only them), and the service's order is what the traces show. A field new
    to the model goes after the field the traces showed before it, or before the first field
    they showed after it, or last."""
    seen = set(new)
    order = [name for name in old if not (name in pinned and name in seen)]
    placed = set(order)
    waiting: list[str] = []
    at: int | None = None
    for name in new:
        if name in placed:
            at = order.index(name)
            order[at:at] = waiting
            placed.update(waiting)
            at += len(waiting) + 1
            waiting = []
        elif at is None:
            waiting.append(name)
        else:
            order.insert(at, name)
            placed.add(name)
            at += 1
    return order + waiting


def _merge_field(old: FieldSpec, new: FieldSpec) -> FieldSpec:
    if old.evidence.pinned:
        return old
    merged = old.model_copy(deep=True)
    merged.schema_ = merge_schemas(old.schema_, new.schema_)
    merged.required = old.required and new.required
    merged.nullable = old.nullable or new.nullable
    merged.server_generated = old.server_generated and new.server_generated
    merged.read_only = old.read_only and new.read_only
    merged.required_on_create = old.required_on_create and new.required_on_create
    merged.immutable = old.immutable and new.immutable
    merged.reference = old.reference or new.reference
    merged.generator = old.generator or new.generator
    if old.enum_frequencies is not None and new.enum_frequencies is not None:
        counts = dict(old.enum_frequencies)
        for value, count in new.enum_frequencies.items():
            counts[value] = counts.get(value, 0) + count
        merged.enum_frequencies = dict(sorted(counts.items()))
    else:
        merged.enum_frequencies = None
    merged.evidence = merge_evidence(old.evidence, new.evidence)
    return merged


def _merge_machine(old: StateMachine, new: StateMachine) -> StateMachine:
    if old.evidence.pinned:
        return old
    merged = old.model_copy(deep=True)
    merged.states = [*old.states, *(state for state in new.states if state not in old.states)]
    merged.initial = sorted({*old.initial, *new.initial})
    seen = {(t.source, t.target, t.operation) for t in old.transitions}
    merged.transitions += [
        t for t in new.transitions if (t.source, t.target, t.operation) not in seen
    ]
    refused = {(r.source, r.target, r.status) for r in old.refused}
    merged.refused += [r for r in new.refused if (r.source, r.target, r.status) not in refused]
    for state, fields in new.required_on_entry.items():
        if state in merged.required_on_entry:
            merged.required_on_entry[state] = sorted(
                set(merged.required_on_entry[state]) & set(fields)
            )
        else:
            merged.required_on_entry[state] = fields
    for state, entry in new.sets_on_entry.items():
        mine = merged.sets_on_entry.get(state)
        if mine is None:
            merged.sets_on_entry[state] = entry
            continue
        # Values the two agree on stay, values only one shows join; a contradiction drops both.
        contradicted = {
            name
            for name, value in entry.values.items()
            if name in mine.values and not same_value(mine.values[name], value)
        }
        agreed = {
            name: value
            for name, value in {**entry.values, **mine.values}.items()
            if name not in contradicted
        }
        if agreed:
            merged.sets_on_entry[state] = EntryValues(
                values=agreed, evidence=merge_evidence(mine.evidence, entry.evidence)
            )
        else:
            del merged.sets_on_entry[state]
    merged.enforce = old.enforce or new.enforce
    merged.evidence = merge_evidence(old.evidence, new.evidence)
    return merged


def _merge_operation(old: Operation, new: Operation) -> Operation:
    if old.evidence.pinned or new.inferred is not None:
        # A convention adds nothing to what traces showed or a person wrote.
        return old
    if old.inferred is not None:
        return new
    merged = old.model_copy(deep=True)
    if old.request_schema is not None and new.request_schema is not None:
        merged.request_schema = merge_schemas(old.request_schema, new.request_schema)
    else:
        merged.request_schema = old.request_schema or new.request_schema
    names = {(p.name, p.location) for p in old.parameters}
    # The path keeps its own parameter names; a new one may have named them differently.
    merged.parameters += [
        p
        for p in new.parameters
        if (p.name, p.location) not in names
        and (p.location != "path" or f"{{{p.name}}}" in old.path)
    ]
    responses = {response.status: response for response in merged.responses}
    for response in new.responses:
        mine = responses.get(response.status)
        if mine is None:
            responses[response.status] = response
        elif not mine.evidence.pinned:
            schema = (
                merge_schemas(mine.schema_, response.schema_)
                if mine.schema_ is not None and response.schema_ is not None
                else mine.schema_ or response.schema_
            )
            responses[response.status] = mine.model_copy(
                update={
                    "schema_": schema,
                    "evidence": merge_evidence(mine.evidence, response.evidence),
                }
            )
    merged.responses = [responses[status] for status in sorted(responses)]
    merged.recorded = [
        *old.recorded,
        *(answer for answer in new.recorded if answer not in old.recorded),
    ][:ANSWERS_PER_OPERATION]
    merged.evidence = merge_evidence(old.evidence, new.evidence)
    return merged
