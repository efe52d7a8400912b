"""The service model on disk: OpenAPI 3.1 YAML with `x-myna-*` extensions.

Layout:
- `info` carries the title and version; `x-myna-service` the model name and base path;
  `servers` the observed base URLs; `x-myna-conventions` the `Conventions`.
- every resource is a `components.schemas` entry: a plain object schema whose properties are the
  field schemas, each with an `x-myna-field` holding the rest of its `FieldSpec`, and an
  `x-myna-resource` holding the resource's own facts (paths, id, state machines, evidence).
- every operation is a `paths` entry with its operationId, parameters, request body and responses,
  and an `x-myna-operation` for its kind, resource, effects and evidence.

Any OpenAPI tool reads the file; `load` reads it back into a `ServiceModel`. `save` is
deterministic (sorted keys, fixed layout), so `load` then `save` reproduces the bytes and a
reviewed model diffs cleanly. A hand edit that breaks the model raises `ModelError` naming the
file, the YAML path of the bad entry and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

import jsonschema_rs
import yaml
from pydantic import BaseModel, ValidationError

from myna.errors import ModelError
from myna.schemas.model import (
    Conventions,
    FieldSpec,
    Operation,
    Parameter,
    Resource,
    ResponseSpec,
    ServiceModel,
)
from myna.schemas.model_cache import cached_parse
from myna.traces.formats import PEEK_BYTES, Peek, detect_format

__all__ = ["component_name", "dumps", "from_openapi", "load", "loads", "save", "to_openapi"]

OPENAPI_VERSION = "3.1.0"
JSON = "application/json"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_COMPONENT_NAME = re.compile(r"[^A-Za-z0-9._-]")

_Pydantic = TypeVar("_Pydantic", bound=BaseModel)


def _dump(model: BaseModel, *, exclude: set[str] | None = None) -> dict[str, Any]:
    """A pydantic model as plain data, defaults left out so the file stays readable."""
    return model.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude=exclude)


# --- model -> document --------------------------------------------------------------------


def to_openapi(model: ServiceModel) -> dict[str, Any]:
    """The OpenAPI 3.1 document for a service model."""
    document: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": {"title": model.title or model.name, "version": model.version},
        "x-myna-service": {"name": model.name, "base_path": model.base_path},
        "x-myna-conventions": _dump(model.conventions),
        "paths": _paths(model.operations),
        "components": {
            "schemas": {
                component_name(name): _resource_schema(resource)
                for name, resource in model.resources.items()
            }
        },
    }
    if model.title is None:
        document["x-myna-service"]["untitled"] = True
    if model.extensions:
        document["x-myna-service"]["extensions"] = list(model.extensions)
    if model.servers:
        document["servers"] = [{"url": url} for url in model.servers]
    return document


def component_name(name: str) -> str:
    """The `components.schemas` key of a resource (OpenAPI allows only `[A-Za-z0-9._-]`)."""
    return _COMPONENT_NAME.sub("_", name)


def _pin(facts: dict[str, Any]) -> dict[str, Any]:
    """Move a pinned fact's flag out of its evidence to where a reviewer sees and sets it:
    `x-myna-pinned: true` beside the field, resource or operation."""
    evidence = facts.get("evidence")
    if not isinstance(evidence, dict) or not evidence.pop("pinned", False):
        return {}
    if not evidence:
        facts.pop("evidence")
    return {"x-myna-pinned": True}


def _unpin(facts: dict[str, Any], pinned: Any) -> dict[str, Any]:
    if pinned is True:
        evidence = facts.get("evidence")
        facts["evidence"] = {**(evidence if isinstance(evidence, dict) else {}), "pinned": True}
    return facts


def _resource_schema(resource: Resource) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, spec in resource.fields.items():
        facts = _dump(spec, exclude={"schema_"})
        properties[name] = {**spec.schema_, "x-myna-field": facts, **_pin(facts)}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "x-myna-resource": _dump(resource, exclude={"fields", "records"}),
    }
    if resource.records:
        # The recorded records a served mock starts with: JSON Schema's own place for them.
        schema["examples"] = resource.records
    # Per-field order is part of the model (it is the order records show fields in).
    schema["x-myna-resource"]["field_order"] = list(resource.fields)
    schema.update(_pin(schema["x-myna-resource"]))
    required = sorted(name for name, spec in resource.fields.items() if spec.required)
    if required:
        schema["required"] = required
    return schema


def _paths(operations: list[Operation]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for position, operation in enumerate(operations):
        method = operation.method.lower()
        entry = paths.setdefault(operation.path, {})
        if method not in _METHODS or method in entry:
            raise ModelError(
                f"operation {operation.id!r}: method {operation.method!r} cannot be written "
                f"for path {operation.path!r} (not an HTTP method, or a second one of it)",
                path=f"operations[{position}]",
            )
        entry[method] = _operation(operation, position)
    return paths


def _operation(operation: Operation, position: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "operationId": operation.id,
        "responses": {
            str(response.status): _response(response) for response in operation.responses
        },
        "x-myna-operation": {
            **_dump(
                operation,
                exclude={"id", "method", "path", "summary", "parameters", "request_schema"},
            ),
            "position": position,
            "response_order": [response.status for response in operation.responses],
            "method": operation.method,
        },
    }
    body["x-myna-operation"].pop("responses", None)
    body.update(_pin(body["x-myna-operation"]))
    if not operation.responses:
        body["responses"] = {"default": {"description": "not observed"}}
    if operation.summary is not None:
        body["summary"] = operation.summary
    if operation.parameters:
        body["parameters"] = [_parameter(parameter) for parameter in operation.parameters]
    if operation.request_schema is not None:
        body["requestBody"] = {"content": {JSON: {"schema": operation.request_schema}}}
    return body


def _parameter(parameter: Parameter) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": parameter.name,
        "in": parameter.location,
        "schema": parameter.schema_,
        "x-myna-parameter": _dump(parameter, exclude={"name", "location", "schema_", "required"}),
    }
    # OpenAPI requires path parameters to say so.
    if parameter.required or parameter.location == "path":
        entry["required"] = True
    if parameter.location == "path" and not parameter.required:
        entry["x-myna-parameter"]["optional"] = True
    return entry


def _response(response: ResponseSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "description": f"observed {response.evidence.samples} time(s)",
        "x-myna-evidence": _dump(response.evidence),
    }
    if response.headers:
        entry["headers"] = {name: {"schema": schema} for name, schema in response.headers.items()}
    if response.schema_ is not None or response.example is not None:
        content: dict[str, Any] = {}
        if response.schema_ is not None:
            content["schema"] = response.schema_
        if response.example is not None:
            content["example"] = response.example
        entry["content"] = {JSON: content}
    return entry


# --- document -> model --------------------------------------------------------------------


def from_openapi(document: Any, *, source: str | None = None) -> ServiceModel:
    """Read a document written by `to_openapi` (and possibly edited by hand)."""
    reader = _Reader(source)
    root = reader.mapping(document, "")
    service = reader.mapping(root.get("x-myna-service", {}), "x-myna-service")
    info = reader.mapping(root.get("info", {}), "info")
    name = service.get("name")
    if not isinstance(name, str) or not name:
        raise reader.error("x-myna-service.name", "expected the service name (a string)")
    servers = [
        reader.mapping(server, f"servers[{index}]").get("url")
        for index, server in enumerate(root.get("servers") or [])
    ]
    components = reader.mapping(root.get("components", {}), "components")
    schemas = reader.mapping(components.get("schemas", {}), "components.schemas")
    resources = [
        reader.resource(schema, f"components.schemas.{key}") for key, schema in schemas.items()
    ]
    data = {
        "name": name,
        "title": None if service.get("untitled") else info.get("title"),
        "version": info.get("version", "1"),
        "servers": servers,
        "base_path": service.get("base_path", ""),
        "extensions": service.get("extensions", []),
    }
    model = reader.validate(ServiceModel, data, "x-myna-service")
    model.conventions = reader.validate(
        Conventions, root.get("x-myna-conventions", {}), "x-myna-conventions"
    )
    model.resources = {resource.name: resource for resource in resources}
    model.operations = reader.operations(reader.mapping(root.get("paths", {}), "paths"))
    return model


class _Reader:
    """Validates pieces of a document, turning pydantic errors into `ModelError`s with paths."""

    def __init__(self, source: str | None) -> None:
        self.source = source

    def error(self, where: str, message: str) -> ModelError:
        return ModelError(message, path=self.source, field=where or "(document)")

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(where, f"expected a mapping, got {type(value).__name__}")
        return value

    def validate(self, kind: type[_Pydantic], data: Any, where: str) -> _Pydantic:
        try:
            return kind.model_validate(data)
        except ValidationError as invalid:
            first = invalid.errors()[0]
            location = ".".join(str(part) for part in first["loc"])
            field = f"{where}.{location}" if location else where
            raise self.error(field, f"{first['msg']} (got {first.get('input')!r:.80})") from invalid

    def resource(self, schema: Any, where: str) -> Resource:
        schema = self.mapping(schema, where)
        facts = dict(self.mapping(schema.get("x-myna-resource"), f"{where}.x-myna-resource"))
        _unpin(facts, schema.get("x-myna-pinned"))
        order = facts.pop("field_order", None)
        properties = self.mapping(schema.get("properties", {}), f"{where}.properties")
        listed = order if isinstance(order, list) else []
        for name in listed:
            if name not in properties:
                raise self.error(
                    f"{where}.x-myna-resource.field_order",
                    f"lists field {name!r} that is not among the properties",
                )
        names = [*listed, *sorted(properties.keys() - set(listed))]
        fields: dict[str, FieldSpec] = {}
        for name in names:
            prop = dict(self.mapping(properties[name], f"{where}.properties.{name}"))
            place = f"{where}.properties.{name}.x-myna-field"
            spec = dict(self.mapping(prop.pop("x-myna-field", {}), place))
            _unpin(spec, prop.pop("x-myna-pinned", None))
            # Hand-written files may leave out the name: the property's key says it.
            spec.setdefault("name", name)
            fields[name] = self.validate(FieldSpec, {**spec, "schema": prop}, place)
        examples = schema.get("examples", [])
        if not isinstance(examples, list) or not all(isinstance(r, dict) for r in examples):
            raise self.error(f"{where}.examples", "expected a list of records (mappings)")
        resource = self.validate(Resource, facts, f"{where}.x-myna-resource")
        resource.fields = fields
        resource.records = examples
        return resource

    def operations(self, paths: dict[str, Any]) -> list[Operation]:
        found: list[tuple[int, Operation]] = []
        for path, entry in paths.items():
            entry = self.mapping(entry, f"paths.{path}")
            for method, body in entry.items():
                if method not in _METHODS:
                    continue
                where = f"paths.{path}.{method}"
                found.append(self.operation(path, method, self.mapping(body, where), where))
        found.sort(key=lambda pair: pair[0])
        return [operation for _, operation in found]

    def operation(
        self, path: str, method: str, body: dict[str, Any], where: str
    ) -> tuple[int, Operation]:
        facts = dict(self.mapping(body.get("x-myna-operation", {}), f"{where}.x-myna-operation"))
        _unpin(facts, body.get("x-myna-pinned"))
        position = facts.pop("position", 1 << 30)
        order = facts.pop("response_order", None)
        written_method = facts.pop("method", method.upper())
        responses_doc = self.mapping(body.get("responses", {}), f"{where}.responses")
        statuses = (
            order
            if isinstance(order, list)
            else sorted(key for key in responses_doc if key != "default")
        )
        responses = [
            self.response(status, responses_doc.get(str(status)), f"{where}.responses.{status}")
            for status in statuses
        ]
        request_body = body.get("requestBody")
        request_schema = None
        if request_body is not None:
            content = self.mapping(request_body, f"{where}.requestBody").get("content", {})
            request_schema = self.mapping(content, f"{where}.requestBody.content").get(JSON, {})
            request_schema = self.mapping(request_schema, f"{where}.requestBody.content").get(
                "schema", {}
            )
        parameters = [
            self.parameter(parameter, f"{where}.parameters[{index}]")
            for index, parameter in enumerate(body.get("parameters") or [])
        ]
        data = {
            **facts,
            "id": body.get("operationId"),
            "method": written_method,
            "path": path,
            "summary": body.get("summary"),
            "request_schema": request_schema,
        }
        operation = self.validate(Operation, data, f"{where}.x-myna-operation")
        operation.parameters = parameters
        operation.responses = responses
        return (position if isinstance(position, int) else 1 << 30, operation)

    def parameter(self, entry: Any, where: str) -> Parameter:
        entry = self.mapping(entry, where)
        facts = dict(self.mapping(entry.get("x-myna-parameter", {}), f"{where}.x-myna-parameter"))
        optional = facts.pop("optional", False)
        data = {
            **facts,
            "name": entry.get("name"),
            "location": entry.get("in"),
            "required": bool(entry.get("required", False)) and not optional,
            "schema": entry.get("schema", {}),
        }
        return self.validate(Parameter, data, where)

    def response(self, status: Any, entry: Any, where: str) -> ResponseSpec:
        entry = self.mapping(entry, where)
        content = self.mapping(entry.get("content", {}), f"{where}.content")
        media = self.mapping(content.get(JSON, {}), f"{where}.content")
        headers = {
            name: self.mapping(header, f"{where}.headers.{name}").get("schema", {})
            for name, header in self.mapping(entry.get("headers", {}), f"{where}.headers").items()
        }
        data = {
            "status": status,
            "schema": media.get("schema"),
            "headers": headers,
            "example": media.get("example"),
            "evidence": entry.get("x-myna-evidence", {}),
        }
        return self.validate(ResponseSpec, data, where)


# --- files --------------------------------------------------------------------------------

_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def dumps(model: ServiceModel) -> str:
    """The model as YAML text: sorted keys, block style, the same bytes for the same model."""
    return yaml.dump(
        to_openapi(model),
        Dumper=_Dumper,
        sort_keys=True,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def loads(text: str, *, source: str | None = None) -> ServiceModel:
    """Parse YAML text written by `dumps` (or by hand) into a model (a large one is read from
    the parsed models kept by `model_cache` when an earlier load parsed the same text)."""
    return cached_parse(text, lambda parsed: _parse(parsed, source))


def _parse(text: str, source: str | None) -> ServiceModel:
    try:
        document = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as broken:
        # One line: the problem and where, without the parser's context lines.
        mark = getattr(broken, "problem_mark", None)
        problem = getattr(broken, "problem", None) or str(broken).splitlines()[0]
        where = {} if mark is None else {"line": mark.line + 1, "column": mark.column + 1}
        raise ModelError(f"not valid YAML: {problem}", path=source, **where) from broken
    model = from_openapi(document, source=source)
    _check_field_schemas(model, source)
    return model


def _check_field_schemas(model: ServiceModel, source: str | None) -> None:
    """Refuse a field schema that is not JSON Schema (an enum written as a mapping by hand),
    naming the field, before anything serves or rewrites the model."""
    for resource in model.resources.values():
        for name, spec in resource.fields.items():
            try:
                jsonschema_rs.meta.validate(spec.schema_)
            except jsonschema_rs.ValidationError as invalid:
                where = ".".join([resource.name, name, *map(str, invalid.instance_path)])
                raise ModelError(
                    f"field schema is not valid JSON Schema: {invalid.message}",
                    path=source,
                    at=where,
                ) from None


def save(model: ServiceModel, path: str | Path) -> None:
    """Write the model to `path` as OpenAPI 3.1 YAML."""
    try:
        Path(path).write_text(dumps(model), encoding="utf-8")
    except OSError as failed:
        raise ModelError(f"cannot write the model: {failed.strerror}", path=str(path)) from None


def load(path: str | Path) -> ServiceModel:
    """Read a model file written by `save` (and perhaps reviewed by a person). A file that is
    not one (binary, not UTF-8, a trace) is refused from its first bytes, before a large one is
    read whole."""
    target = Path(path)
    try:
        with target.open("rb") as file:
            head = file.read(PEEK_BYTES)
            _refuse_other_kinds(head, target)
            data = head + file.read()
    except OSError as missing:
        raise ModelError(f"cannot read model file: {missing.strerror}", path=str(target)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as broken:
        raise ModelError(_NOT_TEXT, path=str(target), byte=broken.start) from None
    return loads(text, source=str(target))


_NOT_TEXT = "not a model file: it is not UTF-8 text"


def _refuse_other_kinds(head: bytes, target: Path) -> None:
    """Refuse a binary file or a trace by its first `PEEK_BYTES`."""
    if b"\x00" in head:
        raise ModelError(_NOT_TEXT, path=str(target), byte=head.index(b"\x00"))
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as broken:
        if broken.start < len(head) - 3:  # not a character the peek cut in two
            raise ModelError(_NOT_TEXT, path=str(target), byte=broken.start) from None
    import myna.traces.builtin  # noqa: F401  (registers the readers whose detectors ask)

    trace = detect_format(Peek.of(head))
    if trace is not None:
        raise ModelError(
            f"not a model file: it is a {trace} trace; learn a model from it with `myna learn`",
            path=str(target),
        )
