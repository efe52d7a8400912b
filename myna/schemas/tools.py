"""Service models from agent tool calls (OpenAI tool calls, Anthropic tool_use, MCP tools/call).

A tool becomes an operation: its kind from the verb in its name (`get_incident` -> get,
`close_incident` -> action), its input schema from the arguments, its output schema from the
results. Records in results become resources; an argument whose values are ids a result carried
earlier names that resource's record (the id flows from one call into the next). Operations are
written as `POST /tools/{name}` so the model stays a valid OpenAPI document; a tool that names
its resource's record by one such argument is `POST /tools/{name}/{argument}`, the record's id in
the path as an HTTP service would put it, and the rest of its arguments are the body.

Where the traces also hold the tools' definitions (an MCP server's `tools/list`, a transcript's
`tools`: session metadata `tools`), each operation keeps its tool's description and input schema
(`Operation.tool`), so the mock offers the tools as the service did; a tool defined but never
called still becomes an operation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from myna.schemas import behaviour
from myna.schemas.evidence import Tally
from myna.schemas.fields import id_format
from myna.schemas.model import (
    Effect,
    FieldSpec,
    Operation,
    OperationKind,
    Parameter,
    Resource,
    ResponseSpec,
    ServiceModel,
    ToolDefinition,
)
from myna.schemas.paths import singular
from myna.schemas.records import Labels, as_values, id_field, unwrap, view_of
from myna.schemas.shape import Shape, sampled
from myna.traces.model import ToolCall

VERBS: dict[str, OperationKind] = {
    **dict.fromkeys(("get", "read", "fetch", "show", "retrieve", "describe", "view"), "get"),
    **dict.fromkeys(("list", "all", "browse", "enumerate"), "list"),
    **dict.fromkeys(("search", "find", "query", "lookup", "filter"), "query"),
    **dict.fromkeys(("create", "add", "new", "insert", "open", "register", "submit"), "create"),
    **dict.fromkeys(("update", "edit", "modify", "set", "patch", "change"), "update"),
    **dict.fromkeys(("replace", "put", "overwrite"), "replace"),
    **dict.fromkeys(("delete", "remove", "destroy", "drop", "cancel"), "delete"),
}
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def tool_kind(name: str) -> tuple[OperationKind, str | None]:
    """The operation kind and resource noun of a tool name (`create_incident`)."""
    words = [word.lower() for word in _WORDS.findall(name)]
    if not words:
        return "other", None
    for position in (0, len(words) - 1):
        verb = words[position]
        rest = words[1:] if position == 0 else words[:-1]
        if verb in VERBS:
            return VERBS[verb], singular("_".join(rest)) if rest else None
    # An unknown verb on a noun (`close_incident`, `assign_ticket`) is a custom action.
    return "action", singular("_".join(words[1:])) if len(words) > 1 else None


@dataclass(slots=True)
class ToolStats:
    name: str
    tally: Tally = field(default_factory=Tally)
    arguments: Shape = field(default_factory=Shape)
    results: Shape = field(default_factory=Shape)
    errors: Tally = field(default_factory=Tally)
    id_arguments: dict[str, set[str]] = field(default_factory=dict)


TOOL_PREFIX = "/tools/"


def tool_definitions(tools: Any) -> dict[str, ToolDefinition]:
    """Tool definitions by name from a session's `tools` metadata, in MCP (`inputSchema`),
    OpenAI (`{"type": "function", "function": {...}}` or flat) or Anthropic (`input_schema`)
    form; entries that name no tool are left out."""
    found: dict[str, ToolDefinition] = {}
    for entry in tools if isinstance(tools, list) else ():
        if not isinstance(entry, dict):
            continue
        function = entry.get("function")
        tool: dict[str, Any] = function if isinstance(function, dict) else entry
        name = tool.get("name")
        schema = next(
            (tool[key] for key in ("inputSchema", "input_schema", "parameters") if key in tool),
            None,
        )
        description = tool.get("description")
        if isinstance(name, str) and name:
            found[name] = ToolDefinition(
                description=description if isinstance(description, str) else None,
                input_schema=schema if isinstance(schema, dict) else None,
            )
    return found


def learn_tools(
    calls: list[tuple[int, ToolCall]],
    *,
    name: str,
    definitions: dict[str, ToolDefinition] | None = None,
) -> ServiceModel:
    """One model for every tool the calls used, and every tool `definitions` describe."""
    definitions = definitions or {}
    stats: dict[str, ToolStats] = {tool: ToolStats(tool) for tool in definitions}
    records: dict[str, Shape] = {}
    record_tally: dict[str, Tally] = {}
    ids: dict[str, set[str]] = {}
    id_fields: dict[str, str] = {}
    seen: dict[str, behaviour.Observations] = {}
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for session, call in calls:
        tool = stats.get(call.name)
        if tool is None:
            tool = stats[call.name] = ToolStats(call.name)
        tool.tally.add(session, call.id)
        kind, noun = tool_kind(call.name)
        if call.arguments is not None:
            tool.arguments.add(call.arguments)
            _note_id_arguments(tool, call.arguments, ids)
        if call.error is not None:
            tool.errors.add(session, call.id)
            continue
        if call.result is None:
            continue
        tool.results.add(call.result)
        found = unwrap(call.result).records
        labels: Labels = {}
        if view_of((), found) == "pairs":
            # A tool passing ServiceNow's display-value pairs through: learn the values.
            found, labels = as_values(found)
        resource = noun or call.name
        if not found or id_field(found, resource) is None:
            continue
        id_name = id_fields.setdefault(resource, id_field(found, resource) or "id")
        shape = records.setdefault(resource, Shape())
        record_tally.setdefault(resource, Tally()).add(session, call.id)
        observations = seen.setdefault(resource, behaviour.Observations())
        for field_name, shown in labels.items():
            observations.labels.setdefault(field_name, {}).update(shown)
        for record in sampled(found):
            shape.add(record)
            value = record.get(id_name)
            if value is None:
                continue
            ids.setdefault(resource, set()).add(str(value))
            key = (resource, str(value))
            if kind == "create":
                observations.created.append(behaviour.Created(record, call.name, session, call.id))
            before = last.get(key)
            last[key] = record
            if before is not None and before != record:
                operation = call.name if kind in ("create", "update", "replace", "action") else None
                observations.changes.append(
                    behaviour.Change(before, record, operation, session, call.id)
                )
    resources = {
        resource: _resource(
            resource,
            records[resource],
            id_fields[resource],
            record_tally[resource],
            seen[resource],
            ids,
        )
        for resource in sorted(records)
    }
    operations = [
        _operation(stats[tool], resources, ids, definitions.get(tool)) for tool in sorted(stats)
    ]
    for learned in operations:
        _note_defaults(learned, resources)
    return ServiceModel(
        name=name, title=f"{name} (tools)", resources=resources, operations=operations
    )


def _note_id_arguments(tool: ToolStats, arguments: Any, ids: dict[str, set[str]]) -> None:
    """Remember which arguments carried ids that earlier results returned."""
    if not isinstance(arguments, dict):
        return
    for key, value in arguments.items():
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            text = str(value)
            for resource, known in ids.items():
                if text in known:
                    tool.id_arguments.setdefault(key, set()).add(resource)


def _resource(
    name: str,
    shape: Shape,
    id_name: str,
    tally: Tally,
    observed: behaviour.Observations,
    ids: dict[str, set[str]],
) -> Resource:
    fields = {
        field_name: FieldSpec(
            name=field_name,
            schema_=child.schema(),
            required=child.count == shape.objects,
            nullable=child.nulls > 0,
            server_generated=field_name == id_name,
            read_only=field_name == id_name,
            enum_frequencies=child.frequencies(),
            evidence=tally.evidence(samples=child.count),
        )
        for field_name, child in shape.props.items()
    }
    paths = behaviour.state_paths(shape)
    machines = [behaviour.state_machine(path, shape.at(path), observed) for path in paths]
    lifecycles = {path.split(".")[0] for path in paths}
    for field_name in behaviour.counters(observed.changes, shape, lifecycles):
        fields[field_name].schema_.pop("enum", None)
    return Resource(
        name=name,
        id_field=id_name,
        id_format=id_format(ids.get(name, set()), shape.props[id_name]),
        fields=fields,
        unique=[id_name],
        state_machines=machines,
        evidence=tally.evidence(),
    )


def _operation(
    tool: ToolStats,
    resources: dict[str, Resource],
    ids: dict[str, set[str]],
    definition: ToolDefinition | None,
) -> Operation:
    kind, noun = tool_kind(tool.name)
    resource = noun if noun in resources else None
    if resource is None:
        owners = {owner for found in tool.id_arguments.values() for owner in found}
        if len(owners) == 1:
            resource = next(iter(owners))
    id_arguments = sorted(
        argument
        for argument, owners in tool.id_arguments.items()
        if argument in tool.arguments.props and resource in owners
    )
    # The one argument naming the operation's own record goes in the path, as its id.
    in_path = id_arguments[0] if len(id_arguments) == 1 and kind != "create" else None
    parameters = [
        Parameter(
            name=argument,
            location="path" if argument == in_path else "query",
            role="id",
            schema_={"type": "string"},
            required=argument == in_path
            or tool.arguments.props[argument].count == tool.arguments.objects,
            evidence=tool.tally.evidence(samples=tool.arguments.props[argument].count),
        )
        for argument in sorted(tool.id_arguments)
        if argument in tool.arguments.props
    ]
    responses = []
    if tool.results.count:
        responses.append(
            ResponseSpec(
                status=200,
                schema_=tool.results.schema(),
                evidence=tool.tally.evidence(samples=tool.results.count),
            )
        )
    if tool.errors.samples:
        responses.append(ResponseSpec(status=400, evidence=tool.errors.evidence()))
    # A definition's input schema is the service's own contract; the calls are only samples.
    request_schema = definition.input_schema if definition else None
    if request_schema is None and tool.arguments.count:
        request_schema = tool.arguments.schema()
    if request_schema is not None and in_path is not None:
        request_schema = _without(request_schema, in_path)
    return Operation(
        id=tool.name,
        method="POST",
        path=f"{TOOL_PREFIX}{tool.name}" + (f"/{{{in_path}}}" if in_path else ""),
        kind=kind,
        resource=resource,
        summary=f"tool {tool.name}",
        parameters=parameters,
        request_schema=request_schema,
        responses=responses,
        effects=_effects(tool.name, kind, resources.get(resource or "")),
        tool=definition,
        evidence=tool.tally.evidence(),
    )


def _note_defaults(operation: Operation, resources: dict[str, Resource]) -> None:
    """A create tool's declared argument defaults are what a record holds when left out."""
    resource = resources.get(operation.resource or "")
    if operation.kind != "create" or resource is None or operation.tool is None:
        return
    properties = (operation.tool.input_schema or {}).get("properties")
    for name, schema in (properties if isinstance(properties, dict) else {}).items():
        field_spec = resource.fields.get(name)
        if field_spec is not None and isinstance(schema, dict) and "default" in schema:
            field_spec.has_default = True
            field_spec.default = schema["default"]


def _effects(name: str, kind: OperationKind, resource: Resource | None) -> list[Effect]:
    """An action tool moves its record to the state its calls were seen moving it to."""
    if kind != "action" or resource is None:
        return []
    for machine in resource.state_machines:
        for transition in machine.transitions:
            if transition.operation == name:
                return [Effect(field=machine.field, value=transition.target)]
    return []


def _without(schema: dict[str, Any], argument: str) -> dict[str, Any] | None:
    """An object schema less one property (an argument that travels in the path instead);
    `None` when nothing is left for a body."""
    properties = {k: v for k, v in schema.get("properties", {}).items() if k != argument}
    if not properties:
        return None
    required = [k for k in schema.get("required", []) if k != argument]
    trimmed = {**schema, "properties": properties}
    if required:
        trimmed["required"] = required
    else:
        trimmed.pop("required", None)
    return trimmed
