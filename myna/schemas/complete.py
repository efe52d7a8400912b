"""Completion by convention: the REST operations a resource's recordings imply but never showed.

Recordings are mostly reads (integration tests and ingestion jobs list and fetch), yet an agent
working against the mock will fetch one record, create, update and delete. Where the traces show
a collection of records with ids, the service's own conventions say how those calls look: the
item path other operations used (or the collection's path and the id), the method the service
updates with (PATCH or PUT), the statuses its creates and deletes answered. Each completed
operation says so in `Operation.inferred`, with the convention and a confidence: higher when
the service showed the same call on another resource than when only REST's defaults imply it.
Pure functions over a learned model; `learn` calls `complete` unless told not to.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from myna.schemas.model import (
    Evidence,
    Inference,
    Operation,
    OperationKind,
    Parameter,
    Resource,
    ResponseSpec,
    ServiceModel,
)
from myna.schemas.paths import item_under, param_name

_SHOWN = 0.8
"""Confidence of a call the service showed on another of its resources."""
_DEFAULT = 0.5
"""Confidence of a call only REST's conventions imply."""

_ITEM_KINDS: tuple[OperationKind, ...] = ("get", "update", "replace", "delete")


@dataclass(frozen=True)
class Habits:
    """How the service makes each kind of call, as its recorded operations show it."""

    update_method: str | None
    """PATCH or PUT, whichever the service's updates used most; None when it never updated."""
    statuses: dict[OperationKind, int]
    """The success status each kind of operation answered most."""
    shown: frozenset[OperationKind]
    """Kinds of operation recorded on some resource of the service."""


def complete(model: ServiceModel) -> ServiceModel:
    """The model with each resource's missing REST operations added, marked inferred."""
    habits = service_habits(model.operations)
    taken = {(op.method, _shape(op.path)) for op in model.operations}
    ids = {op.id for op in model.operations}
    added: list[Operation] = []
    for resource in model.resources.values():
        for operation in missing_operations(resource, model.operations, habits):
            key = (operation.method, _shape(operation.path))
            if key in taken:
                continue
            taken.add(key)
            operation.id = _unique(operation.id, ids)
            ids.add(operation.id)
            added.append(operation)
    if not added:
        return model
    completed = {op.resource for op in added if op.kind != "create"}
    resources = {
        name: resource.model_copy(update={"item_path": item_path_of(resource)})
        if name in completed
        else resource
        for name, resource in model.resources.items()
    }
    return model.model_copy(
        update={"operations": [*model.operations, *added], "resources": resources}
    )


def service_habits(operations: list[Operation]) -> Habits:
    updates = Counter(
        op.method for op in operations if op.kind in ("update", "replace") and op.inferred is None
    )
    statuses: dict[OperationKind, Counter[int]] = {}
    for op in operations:
        for response in op.responses:
            if 200 <= response.status < 300:
                statuses.setdefault(op.kind, Counter())[response.status] += 1
    return Habits(
        update_method=updates.most_common(1)[0][0] if updates else None,
        statuses={kind: counts.most_common(1)[0][0] for kind, counts in statuses.items()},
        shown=frozenset(op.kind for op in operations if op.inferred is None),
    )


def missing_operations(
    resource: Resource, operations: list[Operation], habits: Habits
) -> Iterator[Operation]:
    """The operations a resource lacks, as the service's habits say they would look."""
    own = {op.kind for op in operations if op.resource == resource.name}
    if not resource.collection_path or not own:
        # A record at the root (`/{id}`) has no collection path to create it at.
        return
    item_path = item_path_of(resource)
    if "create" not in own and not _has_parameters_only(resource.collection_path):
        yield _operation(resource, "create", "POST", resource.collection_path, habits)
    if "get" not in own:
        yield _operation(resource, "get", "GET", item_path, habits)
    if not own & {"update", "replace"}:
        # With the service's method, and merging what was sent into the record: nothing
        # recorded says this resource's writes drop the fields they leave out.
        yield _operation(resource, "update", habits.update_method or "PATCH", item_path, habits)
    if "delete" not in own:
        yield _operation(resource, "delete", "DELETE", item_path, habits)


def _operation(
    resource: Resource, kind: OperationKind, method: str, path: str, habits: Habits
) -> Operation:
    shown = kind in habits.shown or (kind == "update" and "replace" in habits.shown)
    convention = (
        f"{method} {path}: as the service's {kind} calls on its other resources"
        if shown
        else f"{method} {path}: REST's convention for a collection of records with ids "
        f"(the service showed no {kind} call)"
    )
    status = habits.statuses.get(kind, {"create": 201, "delete": 204}.get(kind, 200))
    parameters = [
        Parameter(name=name, location="path", required=True, schema_={"type": "string"})
        for name in re.findall(r"\{([^}]+)\}", path)
    ]
    if kind in _ITEM_KINDS and parameters:
        parameters[-1].role = "id"
    return Operation(
        id=f"{kind}_{resource.name}",
        method=method,
        path=path,
        kind=kind,
        resource=resource.name,
        parameters=parameters,
        responses=[ResponseSpec(status=status)],
        inferred=Inference(convention=convention, confidence=_SHOWN if shown else _DEFAULT),
        evidence=Evidence(confidence=_SHOWN if shown else _DEFAULT),
    )


def item_path_of(resource: Resource) -> str:
    """Where one record lives: where the traces showed it, else under its collection."""
    if resource.item_path is not None:
        return resource.item_path
    return item_under(resource.collection_path or "", param_name(resource.name, (), {}))


def _has_parameters_only(path: str) -> bool:
    return all(segment.startswith("{") for segment in path.strip("/").split("/"))


def _shape(path: str) -> str:
    """A path with its parameters' names left out: two templates that route alike match."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def _unique(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate = f"{name}_{number}"
        number += 1
    return candidate
