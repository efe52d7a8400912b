"""What `myna learn` and `myna model show` print: pure functions from models to Rich renderables.

State machines are drawn as text, one edge per line:

    incident.state
      ● ─create_incident─▶ 1
      1 ─update_incident─▶ 2
      2 ─✗ 403 "Invalid state transition"─▶ 7
      entering 6 sets close_code, resolved_at
"""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from myna.schemas.facts import weakest_first
from myna.schemas.model import (
    Evidence,
    Operation,
    Rendering,
    Resource,
    ServiceModel,
    StateMachine,
    ViewField,
)


def _evidence(evidence: Evidence) -> str:
    pinned = " pinned" if evidence.pinned else ""
    return f"{evidence.samples} in {evidence.sessions} sess, {evidence.confidence:.2f}{pinned}"


def summary_table(models: list[ServiceModel]) -> Table:
    """One row per resource of every learned service, with the evidence behind it."""
    table = Table(title="Learned", show_lines=False)
    for column in ("service", "resource", "id", "fields", "operations", "states", "evidence"):
        table.add_column(column)
    for model in models:
        by_resource: dict[str | None, int] = {}
        for operation in model.operations:
            by_resource[operation.resource] = by_resource.get(operation.resource, 0) + 1
        for resource in model.resources.values():
            table.add_row(
                model.name,
                resource.name,
                f"{resource.id_field} ({resource.id_format.kind})",
                str(len(resource.fields)),
                str(by_resource.get(resource.name, 0)),
                ", ".join(machine.field for machine in resource.state_machines) or "-",
                _evidence(resource.evidence),
            )
        loose = by_resource.get(None, 0)
        if loose or not model.resources:
            table.add_row(model.name, "(no resource)", "-", "-", str(loose), "-", "-")
    return table


def conventions_text(model: ServiceModel) -> Text:
    conventions = model.conventions
    envelope = conventions.envelope
    pagination = conventions.pagination
    auth = conventions.auth
    lines = [
        f"envelope: {envelope.style}"
        + (
            f" (item {envelope.item_key}, list {envelope.list_key})"
            if envelope.style == "wrapped"
            else ""
        ),
        f"pagination: {pagination.style}"
        + (f", limit {pagination.limit_param}" if pagination.limit_param else "")
        + (f", offset {pagination.offset_param}" if pagination.offset_param else "")
        + (", Link header" if pagination.link_header else "")
        + (f", total in {pagination.total_header}" if pagination.total_header else ""),
        f"query language: {conventions.query_language}",
        f"auth: {auth.scheme}, unauthorized -> {auth.unauthorized_status}"
        + (f" {auth.unauthorized_headers}" if auth.unauthorized_headers else ""),
        "errors: "
        + (", ".join(str(shape.status or "other") for shape in conventions.errors) or "none seen"),
        f"values as strings: {'yes' if conventions.values_as_strings else 'no'}",
        f"PUT: {'changes only the fields sent' if conventions.partial_put else 'replaces'}",
        *(_rendering_line(rendering) for rendering in conventions.renderings),
    ]
    return Text("\n".join(lines))


def _rendering_line(rendering: Rendering) -> str:
    """`?a=b`: how a plain value and a reference render, and what renders its own way."""
    asked = "&".join(f"{name}={value}" for name, value in rendering.params.items())
    own = [*rendering.formats, *rendering.fields]
    return (
        f"rendering ?{asked}: value -> {_template_text(rendering.value)}, "
        f"reference -> {_template_text(rendering.reference)}"
        + (f"; own way: {', '.join(own)}" if own else "")
        + f" ({_evidence(rendering.evidence)})"
    )


def _template_text(template: list[ViewField]) -> str:
    """`{display_value=label, value=value}`, or `label` for a field rendered as one value."""
    if not template:
        return "as is"
    parts = [
        f"{'.'.join(part.path)}={_source(part)}" if part.path else _source(part)
        for part in template
    ]
    return "{" + ", ".join(parts) + "}" if template[0].path else parts[0]


def _source(part: ViewField) -> str:
    return part.source[0] if part.source else repr(part.value)


def resources_table(model: ServiceModel) -> Table:
    table = Table(title=f"{model.name}: resources")
    for column in ("resource", "collection", "item", "id", "fields", "references", "evidence"):
        table.add_column(column)
    for resource in model.resources.values():
        references = sorted(
            f"{name}->{spec.reference.resource}"
            for name, spec in resource.fields.items()
            if spec.reference is not None
        )
        table.add_row(
            resource.name,
            resource.collection_path or "-",
            resource.item_path or "-",
            _identity(resource),
            str(len(resource.fields)),
            ", ".join(references[:4]) + (" ..." if len(references) > 4 else ""),
            _evidence(resource.evidence),
        )
    return table


def _identity(resource: Resource) -> str:
    """The id field and its format, and the fields paths also name records by (`key`)."""
    identity = f"{resource.id_field} {resource.id_format.kind} {resource.id_format.prefix}"
    keys = f" (or by {', '.join(resource.keys)})" if resource.keys else ""
    return identity.strip() + keys


def operations_table(model: ServiceModel) -> Table:
    table = Table(title=f"{model.name}: operations")
    for column in (
        "operation",
        "method",
        "path",
        "kind",
        "resource",
        "statuses",
        "served",
        "evidence",
    ):
        table.add_column(column)
    for operation in model.operations:
        table.add_row(
            operation.id,
            operation.method,
            operation.path,
            operation.kind,
            operation.resource or "-",
            " ".join(str(response.status) for response in operation.responses),
            _served(operation),
            _evidence(operation.evidence),
        )
    return table


def _served(operation: Operation) -> str:
    """How the mock answers the operation (`_how_served`), and to whom when that is anyone."""
    served = _how_served(operation)
    return f"{served}, without a credential too" if operation.public else served


def _how_served(operation: Operation) -> str:
    """Simulated over its resource's records, replayed from recorded answers, or completed by
    a convention the traces never showed."""
    if operation.inferred is not None:
        inferred = operation.inferred
        return f"inferred {inferred.confidence:.0%}: {inferred.convention}"
    if operation.recorded and (operation.resource is None or operation.kind == "other"):
        return f"replayed ({len(operation.recorded)} recorded answers)"
    upload = operation.upload
    if upload is not None:
        filled = [*upload.query_fields.values(), upload.size_field, upload.type_field]
        return f"simulated, takes a file (fills {', '.join(f for f in filled if f)})"
    return "simulated"


def state_diagram(resource: Resource, machine: StateMachine) -> Text:
    """A state machine as text, one edge per line (see the module docstring)."""
    lines = [
        f"{resource.name}.{machine.field}"
        + ("" if machine.enforce else "  (observed states only, not enforced)")
    ]
    lines.append("  states: " + ", ".join(_state(machine, state) for state in machine.states))
    for transition in machine.transitions:
        source = "●" if transition.source is None else _state(machine, transition.source)
        lines.append(
            f"  {source} ─{transition.operation or '?'}─▶ {_state(machine, transition.target)}"
            f"   [{transition.evidence.samples}x]"
        )
    for refused in machine.refused:
        source = "?" if refused.source is None else _state(machine, refused.source)
        message = f' "{refused.message}"' if refused.message else ""
        lines.append(f"  {source} ─✗ {refused.status}{message}─▶ {_state(machine, refused.target)}")
    for state, fields in machine.required_on_entry.items():
        lines.append(f"  entering {_state(machine, state)} sets {', '.join(fields)}")
    for state, fields in machine.changes_on_entry.items():
        lines.append(f"  entering {_state(machine, state)} changes {', '.join(fields)}")
    for state, entry in machine.sets_on_entry.items():
        values = ", ".join(f"{name}={json.dumps(value)}" for name, value in entry.values.items())
        lines.append(f"  entering {_state(machine, state)} writes {values}")
    return Text("\n".join(lines))


def _state(machine: StateMachine, state: str) -> str:
    label = machine.labels.get(state)
    return f"{state} ({label})" if label else state


def weakest_table(model: ServiceModel, limit: int = 15) -> Table:
    """The least certain facts first: what a reviewer should look at (and perhaps pin)."""
    ranked = [fact for fact in weakest_first(model) if not fact.evidence.pinned]
    table = Table(title=f"{model.name}: weakest inferences first")
    for column in ("where", "fact", "confidence", "samples", "examples"):
        table.add_column(column)
    for item in ranked[:limit]:
        table.add_row(
            item.where,
            item.fact,
            f"{item.evidence.confidence:.2f}",
            str(item.evidence.samples),
            ", ".join(item.evidence.examples),
        )
    return table


def model_view(model: ServiceModel) -> RenderableType:
    """Everything `myna model show` prints for one model."""
    diagrams = [
        state_diagram(resource, machine)
        for resource in model.resources.values()
        for machine in resource.state_machines
    ]
    parts: list[RenderableType] = [
        Text(
            f"{model.title or model.name}  base {model.base_path or '/'}  "
            f"servers {', '.join(model.servers) or '-'}",
            style="bold",
        ),
        conventions_text(model),
        resources_table(model),
        operations_table(model),
    ]
    if diagrams:
        parts.append(Text("state machines", style="bold"))
        parts.extend(diagrams)
    parts.append(weakest_table(model))
    return Group(*parts)
