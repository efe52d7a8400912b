"""What the console's API answers: pure functions from the model, call logs and result files to
JSON-ready dicts, so the browser renders and the server only reads and writes."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import orjson

from myna.mocks.calllog import Call
from myna.schemas.facts import FIELD_ROLES, Fact, weakest_first
from myna.schemas.model import Evidence, Resource, ServiceModel, StateMachine

RESULT_FORMATS = ("myna.itsmbench/", "myna.episode/")
"""The `format` prefixes of the files the results page lists."""


def model_view(model: ServiceModel, *, editable: bool) -> dict[str, Any]:
    """The model page: resources with their fields and state machines, operations, and every
    fact with its evidence, weakest first."""
    return {
        "name": model.name,
        "title": model.title or model.name,
        "editable": editable,
        "resources": [_resource(resource) for resource in model.resources.values()],
        "operations": [
            {
                "id": operation.id,
                "method": operation.method,
                "path": operation.path,
                "kind": operation.kind,
                "resource": operation.resource,
                "address": f"operation:{operation.id}",
            }
            for operation in model.operations
        ],
        "facts": [_fact(fact, model) for fact in weakest_first(model)],
    }


def _resource(resource: Resource) -> dict[str, Any]:
    return {
        "name": resource.name,
        "id_field": resource.id_field,
        "fields": [
            {
                "name": name,
                "type": spec.schema_.get("type"),
                "roles": [role for role in FIELD_ROLES if getattr(spec, role)],
                "reference": spec.reference.resource if spec.reference else None,
            }
            for name, spec in resource.fields.items()
        ],
        "machines": [_machine(resource, machine) for machine in resource.state_machines],
    }


def _machine(resource: Resource, machine: StateMachine) -> dict[str, Any]:
    where = f"{resource.name}.{machine.field}"
    return {
        "field": machine.field,
        "address": f"machine:{where}",
        "states": machine.states,
        "labels": machine.labels,
        "initial": machine.initial,
        "transitions": [
            {
                "source": transition.source,
                "target": transition.target,
                "operation": transition.operation,
                "address": f"transition:{where}:{index}",
            }
            for index, transition in enumerate(machine.transitions)
        ],
        "refused": [
            {"source": refused.source, "target": refused.target, "status": refused.status}
            for refused in machine.refused
        ],
    }


def _fact(fact: Fact, model: ServiceModel) -> dict[str, Any]:
    view: dict[str, Any] = {
        "address": fact.address,
        "where": fact.where,
        "fact": fact.fact,
        **_evidence(fact.evidence),
    }
    if fact.address.startswith("field:"):
        resource, _, field_name = fact.where.partition(".")
        spec = model.resources[resource].fields[field_name]
        view["roles"] = {role: getattr(spec, role) for role in FIELD_ROLES}
    return view


def _evidence(evidence: Evidence) -> dict[str, Any]:
    return {
        "confidence": round(evidence.confidence if evidence.samples else 0.0, 3),
        "samples": evidence.samples,
        "sessions": evidence.sessions,
        "examples": evidence.examples,
        "pinned": evidence.pinned,
    }


def call_view(number: int, call: Call) -> dict[str, Any]:
    """One call as the calls page shows it: request, answer and the rule's decision."""
    return {
        "number": number,
        "at": call.started_at,
        "duration_ms": round(call.duration_ms, 3),
        "method": call.method,
        "url": call.url,
        "status": call.status,
        "request": _body(call.request_body),
        "response": _body(call.response_body),
        "decision": (
            {"check": call.refusal.check, "message": call.refusal.message,
             "fields": list(call.refusal.fields)}
            if call.refusal is not None
            else None
        ),
    }  # fmt: skip


def _body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(raw).decode("ascii")}


def result_files(directory: Path | None) -> list[dict[str, Any]]:
    """The benchmark results and episodes under `directory`, by kind and name."""
    if directory is None:
        return []
    listed = []
    for path in sorted(directory.rglob("*.json")):
        kind = _result_kind(path)
        if kind is not None:
            listed.append({"name": path.relative_to(directory).as_posix(), "kind": kind})
    return listed


def _result_kind(path: Path) -> str | None:
    try:
        head = path.read_bytes()[:4096].decode("utf-8", errors="replace")
    except OSError:
        return None
    for prefix in RESULT_FORMATS:
        if f'"{prefix}' in head:
            return prefix.split(".")[1].rstrip("/")
    return None


def result_file(directory: Path | None, name: str) -> Any:
    """One listed file's JSON; `None` for a name that is not a listed file (no path escapes)."""
    if directory is None:
        return None
    listed = {entry["name"] for entry in result_files(directory)}
    if name not in listed:
        return None
    return json.loads((directory / name).read_text(encoding="utf-8"))
