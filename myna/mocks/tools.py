"""Function-calling tools for a service model: one tool per operation, and back to HTTP.

`Toolbox(model)` derives, for every operation, a tool with a unique snake_case name (at most 64
characters, `[a-z0-9_]`, as OpenAI requires), a description an LLM can act on (what the call does,
the HTTP route, how to filter, which fields are required or read-only, the allowed states and
transitions and what entering a state requires) and an input JSON Schema that combines the path
parameters, the query parameters and the request body. It renders them for OpenAI's Chat
Completions `tools`, Anthropic's Messages `tools` and MCP's `tools/list`, and maps a tool call
back to the HTTP request it stands for (`call`), which the MCP server and the replay stage send
to the mock.

Token endpoints are not tools unless asked for: credentials belong to whoever runs the agent.
Body fields are flattened into the tool's arguments when no name collides with a parameter, since
models fill flat argument lists more reliably; otherwise the body is one `body` argument.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal, NamedTuple
from urllib.parse import quote

import typer

from myna.errors import MockError
from myna.mocks.dialects import DIALECTS
from myna.schemas.model import (
    JsonSchema,
    Operation,
    OperationKind,
    Parameter,
    Resource,
    ServiceModel,
    StateMachine,
)

__all__ = [
    "HttpCall",
    "ToolArgument",
    "ToolFormat",
    "ToolSpec",
    "Toolbox",
    "call_for_tool",
    "mcp_tools",
    "openai_tools",
    "register_tools_command",
    "tool_name",
    "tool_names",
]

ArgumentLocation = Literal["path", "query", "body_field", "body"]
ToolFormat = Literal["openai", "anthropic", "mcp"]
MAX_NAME: Final = 64
MAX_DESCRIPTION: Final = 1024
_MAX_TRANSITIONS: Final = 24


class HttpCall(NamedTuple):
    """The HTTP request a tool call stands for."""

    method: str
    path: str
    params: dict[str, str]
    json_body: Any


@dataclass(frozen=True, slots=True)
class ToolArgument:
    """One property of a tool's input schema and where it goes in the HTTP request."""

    name: str
    location: ArgumentLocation
    wire_name: str


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: JsonSchema
    operation_id: str
    method: str
    path: str
    arguments: tuple[ToolArgument, ...]
    kind: OperationKind = "other"
    # Arguments not declared go into the body (flattened bodies that allow extra fields).
    open_body: bool = False
    # Learned from a tool-call service: the answer's body is the tool's own result.
    answers_as_tool: bool = False

    @property
    def read_only(self) -> bool:
        """Reads only: a safe method, or a search sent by POST (`kind` query)."""
        return self.method in ("GET", "HEAD", "OPTIONS") or self.kind in ("list", "get", "query")

    def openai(self) -> dict[str, Any]:
        """Chat Completions format: `{"type": "function", "function": {...}}`."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }

    def anthropic(self) -> dict[str, Any]:
        """Anthropic Messages format: name, description, input_schema."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def mcp(self) -> dict[str, Any]:
        """An MCP `Tool`: name, description, inputSchema and behaviour hints."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {
                "readOnlyHint": self.read_only,
                "destructiveHint": self.method == "DELETE",
                "idempotentHint": self.method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE"),
                "openWorldHint": False,
            },
        }


class Toolbox:
    """The tools of one model; build it once and reuse it (deriving them walks every operation)."""

    def __init__(self, model: ServiceModel, *, include_auth: bool = False) -> None:
        self.model = model
        # Token endpoints are left out by default: credentials belong to the harness that runs
        # the agent (the MCP server's headers, the client's auth), never to the agent itself.
        operations = [
            operation
            for operation in model.operations
            if include_auth or not _is_auth(model, operation)
        ]
        names = [
            # A tool learned from a tool-call service keeps the name its clients call it by.
            operation.id
            if operation.tool is not None and _TOOL_NAME.fullmatch(operation.id)
            else name
            for operation, name in zip(
                operations, tool_names([operation.id for operation in operations]), strict=True
            )
        ]
        self.tools: tuple[ToolSpec, ...] = tuple(
            _tool(model, operation, name) for operation, name in zip(operations, names, strict=True)
        )
        self._by_name = {tool.name: tool for tool in self.tools}

    def tool(self, name: str) -> ToolSpec:
        try:
            return self._by_name[name]
        except KeyError:
            raise MockError(
                f"no tool {name!r}; the model's tools are {', '.join(sorted(self._by_name))}",
                model=self.model.name,
            ) from None

    def openai(self) -> list[dict[str, Any]]:
        return [tool.openai() for tool in self.tools]

    def anthropic(self) -> list[dict[str, Any]]:
        return [tool.anthropic() for tool in self.tools]

    def mcp(self) -> list[dict[str, Any]]:
        return [tool.mcp() for tool in self.tools]

    def render(self, format_: ToolFormat) -> list[dict[str, Any]]:
        renderers = {"openai": self.openai, "anthropic": self.anthropic, "mcp": self.mcp}
        return renderers[format_]()

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> HttpCall:
        """The HTTP request for a call of tool `name` with `arguments`."""
        return _http_call(self.tool(name), arguments or {}, self.model.name)


def openai_tools(model: ServiceModel) -> list[dict[str, Any]]:
    return Toolbox(model).openai()


def mcp_tools(model: ServiceModel) -> list[dict[str, Any]]:
    return Toolbox(model).mcp()


def call_for_tool(model: ServiceModel, name: str, arguments: Mapping[str, Any] | None) -> HttpCall:
    """Map one tool call back to `(method, path, params, json_body)`; loops should use a Toolbox."""
    return Toolbox(model).call(name, arguments)


def _is_auth(model: ServiceModel, operation: Operation) -> bool:
    token_path = model.conventions.auth.token_path
    return operation.kind == "auth" or (token_path is not None and operation.path == token_path)


# --- names ---

_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_NAME: Final = re.compile(r"[^a-z0-9]+")


def tool_name(operation_id: str) -> str:
    """snake_case of an operationId, at most 64 characters of `[a-z0-9_]`."""
    snake = _NOT_NAME.sub("_", _CAMEL.sub("_", operation_id).lower()).strip("_") or "operation"
    if len(snake) <= MAX_NAME:
        return snake
    # Keep the readable start and make the cut unambiguous with a digest of the whole id.
    digest = hashlib.sha256(operation_id.encode()).hexdigest()[:8]
    return f"{snake[: MAX_NAME - 9].rstrip('_')}_{digest}"


def tool_names(operation_ids: list[str]) -> list[str]:
    """`tool_name` of each id, numbered (`_2`, `_3`...) where two would otherwise be equal."""
    taken: set[str] = set()
    names = []
    for operation_id in operation_ids:
        base = tool_name(operation_id)
        name, counter = base, 1
        while name in taken:
            counter += 1
            suffix = f"_{counter}"
            name = base[: MAX_NAME - len(suffix)] + suffix
        taken.add(name)
        names.append(name)
    return names


# --- schemas ---


def _clean(schema: Any) -> Any:
    """A JSON Schema without `x-` extensions: they mean nothing to a model and cost tokens."""
    if isinstance(schema, dict):
        return {key: _clean(value) for key, value in schema.items() if not key.startswith("x-")}
    if isinstance(schema, list):
        return [_clean(item) for item in schema]
    return schema


_PLACEHOLDER: Final = re.compile(r"\{([^{}]+)\}")


def _tool(model: ServiceModel, operation: Operation, name: str) -> ToolSpec:
    resource = model.resources.get(operation.resource) if operation.resource else None
    properties: dict[str, Any] = {}
    required: list[str] = []
    arguments: list[ToolArgument] = []
    query_argument: str | None = None  # the argument that takes the service's query language

    declared = {p.name: p for p in operation.parameters if p.location == "path"}
    for placeholder in _PLACEHOLDER.findall(operation.path):
        parameter = declared.get(placeholder)
        schema = (
            _clean(parameter.schema_) if parameter and parameter.schema_ else {"type": "string"}
        )
        schema.setdefault("description", _path_description(placeholder, resource))
        properties[placeholder] = schema
        required.append(placeholder)
        arguments.append(ToolArgument(placeholder, "path", placeholder))

    for parameter in [*operation.parameters, *_implied_list_parameters(model, operation, resource)]:
        if parameter.location != "query":
            continue
        argument = parameter.name if parameter.name not in properties else f"query_{parameter.name}"
        schema = _clean(parameter.schema_) or {"type": "string"}
        hint = _query_hint(model, parameter.name, parameter.role)
        if hint and "description" not in schema:
            schema["description"] = hint
        properties[argument] = schema
        if parameter.required:
            required.append(argument)
        if parameter.role == "query" and query_argument is None:
            query_argument = argument
        arguments.append(ToolArgument(argument, "query", parameter.name))

    body = _body_schema(operation, resource)
    open_body = False
    if body is not None:
        body_properties = body.get("properties")
        flat = (
            body.get("type") == "object"
            and isinstance(body_properties, dict)
            and not set(body_properties) & set(properties)
            and "body" not in properties
        )
        if flat and isinstance(body_properties, dict):
            properties.update(body_properties)
            required.extend(field for field in body.get("required", []) if field not in required)
            arguments.extend(ToolArgument(field, "body_field", field) for field in body_properties)
            open_body = body.get("additionalProperties", True) is not False
        else:
            properties["body"] = body
            if operation.kind in ("create", "replace"):
                required.append("body")
            arguments.append(ToolArgument("body", "body", "body"))

    input_schema: JsonSchema = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    if not open_body:
        input_schema["additionalProperties"] = False
    description = _description(model, operation, resource, query_argument)
    if operation.tool is not None:
        # Offered as its service described it; arguments the calls never showed go in the body.
        description = operation.tool.description or description
        input_schema = operation.tool.input_schema or input_schema
        open_body = True
    return ToolSpec(
        name=name,
        description=description,
        input_schema=input_schema,
        operation_id=operation.id,
        method=operation.method.upper(),
        path=operation.path,
        arguments=tuple(arguments),
        kind=operation.kind,
        open_body=open_body,
        answers_as_tool=operation.tool is not None,
    )


def _implied_list_parameters(
    model: ServiceModel, operation: Operation, resource: Resource | None
) -> list[Parameter]:
    """Query parameters the mock accepts on a list call although the model did not record them.

    Learning only sees the parameters clients happened to send; the mock serves the service's
    conventions (paging, the query language, `?field=value` filters) on every list, so the tool
    offers them too, as `myna.mocks.openapi_doc` does.
    """
    if operation.kind != "list":
        return []
    declared = {parameter.name for parameter in operation.parameters}
    pagination = model.conventions.pagination
    implied: list[Parameter] = []
    counting: JsonSchema = {"type": "integer", "minimum": 0}
    for name, role in (
        (pagination.limit_param, "limit"),
        (pagination.offset_param, "offset"),
        (pagination.page_param, "page"),
    ):
        if name:
            implied.append(Parameter(name=name, location="query", role=role, schema_=counting))
    if pagination.cursor_param:
        implied.append(Parameter(name=pagination.cursor_param, location="query", role="cursor"))
    dialect = DIALECTS.get(model.conventions.query_language)
    if dialect is not None and dialect.filter_parameter is not None:
        implied.append(Parameter(name=dialect.filter_parameter, location="query", role="query"))
    elif model.conventions.query_language == "fields" and resource is not None:
        implied.extend(
            Parameter(name=name, location="query", role="filter") for name in resource.fields
        )
    unique = {parameter.name: parameter for parameter in implied if parameter.name not in declared}
    return list(unique.values())


def _body_schema(operation: Operation, resource: Resource | None) -> JsonSchema | None:
    if operation.request_schema is not None:
        schema: JsonSchema = _clean(operation.request_schema)
        return schema
    if resource is None or operation.kind not in ("create", "update", "replace"):
        return None
    # No observed request body: offer the fields a client may write.
    properties: dict[str, Any] = {}
    for field in resource.fields.values():
        if field.server_generated or field.read_only or field.name == resource.id_field:
            continue
        schema = _clean(field.schema_) or {}
        note = _field_note(resource, field.name)
        if note and "description" not in schema:
            schema["description"] = note
        properties[field.name] = schema
    body: JsonSchema = {"type": "object", "properties": properties}
    if operation.kind == "create":
        needed = [f.name for f in resource.fields.values() if f.required_on_create]
        if needed:
            body["required"] = needed
    return body


def _field_note(resource: Resource, field: str) -> str | None:
    for machine in resource.state_machines:
        if machine.field == field:
            return "one of " + ", ".join(_state(machine, state) for state in machine.states)
    return None


# --- descriptions ---

_VERBS: Final = {
    "list": "List {resource} records",
    "get": "Get one {resource} record by its id",
    "create": "Create {a} {resource} record",
    "update": "Update fields of {a} {resource} record (only the fields sent change)",
    "replace": "Replace {a} {resource} record",
    "delete": "Delete {a} {resource} record",
    "action": "Run the {operation} action on {a} {resource} record",
    "query": "Query {resource} records",
    "auth": "Obtain an access token",
    "other": "Call {operation}",
}
_ROLE_HINTS: Final = {
    "limit": "maximum number of records to return",
    "offset": "number of records to skip",
    "page": "page number",
    "cursor": "opaque cursor from the previous page",
    "sort": "field(s) to sort by",
    "fields": "comma-separated fields to return",
    "filter": "return only records whose field equals this value",
}


def _query_hint(model: ServiceModel, name: str, role: str) -> str | None:
    if role == "query":
        dialect = DIALECTS.get(model.conventions.query_language)
        return None if dialect is None else dialect.syntax
    if role == "filter":
        return f"return only records whose {name} equals this value"
    return _ROLE_HINTS.get(role)


def _path_description(placeholder: str, resource: Resource | None) -> str:
    if resource is not None and placeholder == resource.id_field:
        return f"{resource.id_field} of the {resource.name} record"
    return placeholder


def _description(
    model: ServiceModel, operation: Operation, resource: Resource | None, query_argument: str | None
) -> str:
    resource_name = resource.name if resource else (operation.resource or model.name)
    article = "an" if resource_name[:1].lower() in "aeiou" else "a"
    dialect = DIALECTS.get(model.conventions.query_language)
    language = None if dialect is None else dialect.title
    if operation.summary:
        headline = operation.summary
    elif operation.kind == "query" and resource is None and language and query_argument:
        headline = f"Run a {language} query"
    else:
        headline = _VERBS[operation.kind].format(
            resource=resource_name, operation=operation.id, a=article
        )
    lines = [headline.rstrip(".") + ".", f"HTTP {operation.method.upper()} {operation.path}."]
    if language and query_argument:
        lines.append(f"Filter with a {language} query in `{query_argument}`.")
    if resource is not None and operation.kind in ("create", "update", "replace", "action"):
        lines.extend(_resource_hints(operation, resource))
    for effect in operation.effects:
        source = f"the request's {effect.from_request}" if effect.from_request else effect.value
        lines.append(f"Sets {effect.field} to {json.dumps(source)}.")
    text = " ".join(lines)
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 1].rstrip() + "…"
    return text


def _resource_hints(operation: Operation, resource: Resource) -> list[str]:
    hints = []
    if operation.kind == "create":
        needed = [f.name for f in resource.fields.values() if f.required_on_create]
        if needed:
            hints.append(f"Required: {', '.join(needed)}.")
    server_set = [
        f.name
        for f in resource.fields.values()
        if (f.server_generated or f.read_only) and f.name != resource.id_field
    ]
    if server_set:
        hints.append(f"Set by the service, do not send: {', '.join(server_set)}.")
    for machine in resource.state_machines:
        hints.append(_machine_hint(machine))
    return hints


def _state(machine: StateMachine, state: str) -> str:
    label = machine.labels.get(state)
    return f"{state} ({label})" if label and label != state else state


def _machine_hint(machine: StateMachine) -> str:
    parts = [f"{machine.field} is one of {', '.join(_state(machine, s) for s in machine.states)}"]
    if machine.initial:
        parts.append(f"new records start in {', '.join(machine.initial)}")
    if machine.transitions:
        moves = sorted({f"{t.source}->{t.target}" for t in machine.transitions if t.source})
        shown = moves[:_MAX_TRANSITIONS]
        more = "" if len(moves) <= _MAX_TRANSITIONS else f" and {len(moves) - len(shown)} more"
        allowed = "allowed" if machine.enforce else "seen"
        parts.append(f"{allowed} changes {', '.join(shown)}{more}")
    for state, fields in sorted(machine.required_on_entry.items()):
        if fields:
            parts.append(f"moving to {_state(machine, state)} requires {', '.join(fields)}")
    return "; ".join(parts) + "."


# --- tool call -> HTTP request ---


def _wire_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_wire_text(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _http_call(tool: ToolSpec, arguments: Mapping[str, Any], model_name: str) -> HttpCall:
    if not isinstance(arguments, Mapping):
        raise MockError(
            f"tool {tool.name} takes an object of arguments, got {type(arguments).__name__}",
            model=model_name,
        )
    by_name = {argument.name: argument for argument in tool.arguments}
    path = tool.path
    params: dict[str, str] = {}
    body: Any = None
    for name, value in arguments.items():
        argument = by_name.get(name)
        if argument is None:
            if not tool.open_body:
                raise MockError(
                    f"tool {tool.name} has no argument {name!r}; it takes "
                    f"{', '.join(by_name) or 'no arguments'}",
                    model=model_name,
                )
            body = {} if body is None else body
            body[name] = value
        elif argument.location == "path":
            if value is None or value == "":
                raise MockError(f"tool {tool.name} needs a value for {name!r}", model=model_name)
            path = path.replace(
                "{" + argument.wire_name + "}",
                quote(_wire_text(value), safe="", errors="surrogatepass"),
            )
        elif argument.location == "query":
            if value is not None:
                params[argument.wire_name] = _wire_text(value)
        elif argument.location == "body_field":
            body = {} if body is None else body
            body[argument.wire_name] = value
        else:
            body = value
    missing = _PLACEHOLDER.findall(path)
    if missing:
        raise MockError(
            f"tool {tool.name} needs {', '.join(repr(m) for m in missing)} to build {tool.path}",
            model=model_name,
        )
    if body is None and any(a.location in ("body_field", "body") for a in tool.arguments):
        # A create or update with no fields still sends a JSON object, as clients do.
        body = {} if tool.method in ("POST", "PUT", "PATCH") else None
    return HttpCall(tool.method, path, params, body)


# --- CLI ---


def register_tools_command(app: typer.Typer) -> None:
    """Add `myna tools MODEL [--format openai|anthropic|mcp] [-o FILE]` to the root app."""
    app.command("tools")(tools_command)


def tools_command(
    model_spec: Annotated[
        str, typer.Argument(metavar="MODEL", help="Service model file, or a built-in back end.")
    ],
    format_: Annotated[
        ToolFormat,
        typer.Option("--format", "-f", help="openai (Chat Completions tools), anthropic or mcp."),
    ] = "openai",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the JSON here, not to stdout.")
    ] = None,
) -> None:
    """Print function-calling tool definitions, one per operation of the model."""
    from myna.mocks.backend import resolve_model

    toolbox = Toolbox(resolve_model(model_spec))
    rendered = toolbox.render(format_)
    text = json.dumps(rendered, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {len(rendered)} tools to {output}", err=True)
