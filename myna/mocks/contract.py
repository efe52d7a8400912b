"""What the mock promises for each resource and operation, compiled once from the service model.

One place derives the request schemas the mock validates against, the wire shape of records and
envelopes it answers with (and checks in strict mode), the success status of each operation, and
the fields the server fills in itself. The dispatcher, strict-mode response checks and the served
`/openapi.json` all read these, so what is documented is what is enforced.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TypeAlias

from myna.mocks.validation import SchemaCheck
from myna.schemas.model import (
    Conventions,
    Envelope,
    FieldSpec,
    JsonSchema,
    Operation,
    Reference,
    Resource,
    ServiceModel,
    StateMachine,
    View,
)
from myna.schemas.values import spells_int

Validator: TypeAlias = SchemaCheck

# Name parts start a word: `reopened_time` is not an opening stamp, `dateCreated` is a creation.
_WORD = r"(?:^|_|(?<=[a-z])(?=[A-Z]))"
_CREATE_STAMP = re.compile(_WORD + r"(?i:creat|open|insert)")
_UPDATE_STAMP = re.compile(_WORD + r"(?i:updat|modif|modstamp)")
_COUNTER = re.compile(r"(mod_?count|version|revision)$", re.IGNORECASE)
_CREATED_BY = re.compile(r"creat\w*_by$", re.IGNORECASE)
_UPDATED_BY = re.compile(r"(updat|modifi)\w*_by$", re.IGNORECASE)
_SCALAR_TYPES = frozenset({"integer", "number", "boolean"})


@dataclass(frozen=True, slots=True)
class ServerFields:
    """Fields the server writes itself, by when it writes them."""

    minted: tuple[FieldSpec, ...]  # ids and sequence numbers, on create
    created_stamps: tuple[str, ...]  # timestamps set on create only
    updated_stamps: tuple[str, ...]  # timestamps set on create and on every write
    counters: tuple[str, ...]  # modification counters: 0 on create, +1 per write
    created_by: tuple[str, ...]
    updated_by: tuple[str, ...]
    callers: tuple[tuple[str, Reference], ...] = ()  # the caller's own record, on create


@dataclass(frozen=True, slots=True)
class ResourceContract:
    resource: Resource
    record_schema: JsonSchema
    create_validator: Validator
    update_validator: Validator
    create_schema: JsonSchema
    update_schema: JsonSchema
    ignored_on_write: frozenset[str]
    refused_on_write: frozenset[str]
    references: dict[str, Reference]
    state_machines: tuple[StateMachine, ...]
    server: ServerFields
    stringly: frozenset[str]  # fields whose wire type is string while clients may send scalars
    envelope: Envelope  # how its bodies are wrapped: its own envelope, else the service's


@dataclass(frozen=True, slots=True)
class OperationContract:
    operation: Operation
    resource: ResourceContract | None
    success_status: int
    error_status: int  # what the service answers a malformed request with (400 or 422)
    request_schema: JsonSchema | None
    request_validator: Validator | None
    response_schema: JsonSchema | None
    response_validator: Validator | None
    id_param: str | None
    scope_param: str | None  # a nested collection's parent id (`Operation.scope`)
    replayed: bool  # answered from the recorded answers: no resource the mock could serve
    view: Viewed | None = None  # answers in another resource's shape (`Mock._addressed`)

    @property
    def body_required(self) -> bool:
        """Whether a request must carry a body: one writing a record's fields."""
        return self.request_schema is not None and self.operation.kind in _WRITES_FIELDS

    @property
    def refused_only(self) -> bool:
        """Whether no request to the operation can succeed: it is replayed, and the recordings
        only showed it refused (`GET /v1/invalid`, a fixture's label refused with 422)."""
        recorded = self.operation.recorded
        return self.replayed and bool(recorded) and all(a.status >= 400 for a in recorded)


_WRITES_FIELDS = frozenset({"create", "update", "replace"})


@dataclass(frozen=True, slots=True)
class Viewed:
    """An operation of one resource called at another's path: its record is answered as that
    other resource's view of it (`Resource.views`), in that resource's envelope."""

    view: View
    envelope: Envelope


def compile_model(
    model: ServiceModel,
) -> tuple[dict[str, ResourceContract], list[OperationContract]]:
    conventions = model.conventions
    resources = {
        name: compile_resource(resource, conventions) for name, resource in model.resources.items()
    }
    from myna.mocks.answered import answered_resources

    resources = answered_resources(model, resources)
    components = _components(model)
    operations = [
        compile_operation(op, resources, conventions, components) for op in model.operations
    ]
    return resources, operations


def _components(model: ServiceModel) -> JsonSchema:
    """The model's `components` as its OpenAPI document has them, so that learned schemas'
    `$ref: "#/components/schemas/..."` resolve when embedded beside them."""
    from myna.schemas.openapi import to_openapi

    components: JsonSchema = to_openapi(model).get("components", {})
    return components


def _resolvable(schema: JsonSchema, components: JsonSchema) -> JsonSchema:
    if "#/components/" not in json.dumps(schema):
        return schema
    return {**schema, "components": components}


def compile_resource(resource: Resource, conventions: Conventions) -> ResourceContract:
    as_strings = conventions.values_as_strings
    properties: dict[str, JsonSchema] = {}
    write_properties: dict[str, JsonSchema] = {}
    ignored: set[str] = set()
    refused: set[str] = set()
    stringly: set[str] = set()
    references: dict[str, Reference] = {}
    for name, spec in resource.fields.items():
        wire = _wire_schema(spec, as_strings, conventions.datetime_format)
        properties[name] = wire
        if spec.reference is not None:
            references[name] = spec.reference
        if as_strings and _schema_type(spec.schema_) & ({"string"} | _SCALAR_TYPES):
            stringly.add(name)
        if name == resource.id_field or spec.server_generated or spec.read_only:
            (refused if spec.write_policy == "refuse" else ignored).add(name)
            continue
        write_properties[name] = _write_schema(spec, as_strings, conventions.datetime_format)
    for name, schema in resource.inputs.items():
        sent = _accepted(schema)
        known = write_properties.get(name)
        write_properties[name] = sent if known is None else {"anyOf": [known, sent]}
    if resource.id_field not in properties:
        properties[resource.id_field] = {"type": ["string", "integer"]}
    # No "required": a projection (sysparm_fields, fields=) legitimately leaves out any field.
    record_schema: JsonSchema = {"type": "object", "properties": properties}
    server_side: dict[str, JsonSchema] = {name: {} for name in ignored | refused}
    create_required = sorted(
        name
        for name, spec in resource.fields.items()
        if spec.required_on_create
        and name in write_properties
        and not spec.has_default
        and spec.generator is None
    )
    create_schema: JsonSchema = {
        "type": "object",
        "properties": {**write_properties, **server_side},
        "additionalProperties": False,
    }
    if create_required:
        create_schema["required"] = create_required
    update_schema: JsonSchema = {
        "type": "object",
        "properties": {**write_properties, **server_side},
        "additionalProperties": False,
    }
    return ResourceContract(
        resource=resource,
        record_schema=record_schema,
        create_validator=_request_validator(create_schema),
        update_validator=_request_validator(update_schema),
        create_schema=create_schema,
        update_schema=update_schema,
        ignored_on_write=frozenset(ignored | (resource.inputs.keys() - resource.fields.keys())),
        refused_on_write=frozenset(refused),
        references=references,
        state_machines=tuple(resource.state_machines),
        server=_server_fields(resource),
        stringly=frozenset(stringly),
        envelope=resource.envelope or conventions.envelope,
    )


def compile_operation(
    operation: Operation,
    resources: dict[str, ResourceContract],
    conventions: Conventions,
    components: JsonSchema,
) -> OperationContract:
    contract = resources.get(operation.resource) if operation.resource else None
    kind = operation.kind
    request_schema: JsonSchema | None = None
    if contract is not None and kind == "create" and operation.batch is not None:
        # Several records at once: a list of what one create takes.
        items = as_sent(contract.create_schema, contract.stringly)
        request_schema = {
            "type": "object",
            "properties": {operation.batch: {"type": "array", "items": items}},
            "required": [operation.batch],
        }
    elif contract is not None and kind == "create":
        request_schema = as_sent(contract.create_schema, contract.stringly)
    elif contract is not None and kind in ("update", "replace"):
        request_schema = as_sent(contract.update_schema, contract.stringly)
    elif operation.request_schema is not None:
        request_schema = _resolvable(operation.request_schema, components)
    replayed = _replayed(operation, contract)
    response_schema = _response_schema(operation, contract)
    if response_schema is not None:
        response_schema = _resolvable(response_schema, components)
    if replayed:
        from myna.mocks.answered import replayed_schema

        response_schema = replayed_schema(operation, response_schema)
    id_param = _id_param(operation)
    return OperationContract(
        operation=operation,
        resource=contract,
        success_status=_success_status(operation),
        error_status=_error_status(operation),
        request_schema=request_schema,
        request_validator=_request_validator(request_schema)
        if request_schema is not None
        else None,
        response_schema=response_schema,
        response_validator=SchemaCheck(response_schema) if response_schema is not None else None,
        id_param=id_param,
        scope_param=_scope_param(operation),
        replayed=replayed,
        view=Viewed(operation.view, contract.envelope)
        if operation.view is not None and contract is not None
        else None,
    )


_SIMULATED_WITHOUT_RESOURCE = frozenset({"auth", "query"})
"""Kinds the runtime serves without a resource: a token endpoint, a query naming its own."""


def _replayed(operation: Operation, contract: ResourceContract | None) -> bool:
    """Whether the mock answers an operation from its recorded answers: it names no resource
    the model serves (and is not a kind that needs none), or its kind is one the runtime cannot
    simulate."""
    if operation.kind == "other":
        return True
    return contract is None and operation.kind not in _SIMULATED_WITHOUT_RESOURCE


def as_sent(schema: JsonSchema, stringly: frozenset[str]) -> JsonSchema:
    """A write's schema as clients send it: where the service stores text, the scalars whose
    text (`coerce_scalars`) the field takes are accepted too (ServiceNow takes `2` for "2").
    Requests are checked against this schema before coercion, so the document says exactly
    which bodies are taken."""
    properties: dict[str, JsonSchema] = schema.get("properties", {})
    widened = {
        name: _with_scalars(field) if name in stringly else field
        for name, field in properties.items()
    }
    return schema if widened == properties else {**schema, "properties": widened}


_SCALAR_PROBES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("number", ("0", "-7", "1.5", "-0.25", "1e+300", "1e-05", "1" * 40)),
    ("integer", ("0", "-7", "1" * 40)),
    ("boolean", ("true", "false")),
)
"""The text of sample scalars of each type: a text field admitting all of them admits the
text of every scalar of the type (whose integral floats are written as integers)."""


def _with_scalars(schema: JsonSchema) -> JsonSchema:
    branches = schema.get("anyOf") if set(schema) == {"anyOf"} else [schema]
    if not isinstance(branches, list):
        return schema
    extra = [
        scalars
        for branch in branches
        if isinstance(branch, dict) and _schema_type(branch) == {"string"}
        for scalars in [_scalars_taken(branch)]
        if scalars is not None
    ]
    return {"anyOf": [*branches, *extra]} if extra else schema


def _scalars_taken(text: JsonSchema) -> JsonSchema | None:
    """The scalars whose text the string schema `text` admits (None: none)."""
    enum = text.get("enum")
    if isinstance(enum, list):
        taken = [value for value in map(_scalar_of, enum) if value is not None]
        return {"enum": taken} if taken else None
    check = SchemaCheck(text, formats=True)
    types: list[str] = []
    for kind, probes in _SCALAR_PROBES:
        if all(check.is_valid(probe) for probe in probes) and not (
            kind == "integer" and "number" in types
        ):
            types.append(kind)
    return {"type": types if len(types) > 1 else types[0]} if types else None


def _scalar_of(text: object) -> bool | int | None:
    """The scalar a client may send for an enumerated text: 2 for "2", true for "true"."""
    if text in ("true", "false"):
        return text == "true"
    if isinstance(text, str) and re.fullmatch(r"-?[1-9][0-9]*|0", text):
        return int(text)
    return None


def _request_validator(schema: JsonSchema) -> Validator:
    # Formats (email, uuid, date-time...) are checked on the way in so that what the mock
    # stores, and later answers with, keeps to the schema the model publishes.
    return SchemaCheck(schema, formats=True)


def item_schema(record: JsonSchema, envelope: Envelope) -> JsonSchema:
    if envelope.style == "wrapped" and envelope.item_key:
        return {
            "type": "object",
            "properties": {envelope.item_key: record},
            "required": [envelope.item_key],
        }
    return record


def list_schema(record: JsonSchema, envelope: Envelope) -> JsonSchema:
    records: JsonSchema = {"type": "array", "items": record}
    if envelope.style != "wrapped" or not envelope.list_key:
        return records
    properties: dict[str, JsonSchema] = {envelope.list_key: records}
    if envelope.total_key:
        properties[envelope.total_key] = {"type": "integer", "minimum": 0}
    if envelope.next_key:
        properties[envelope.next_key] = {"type": ["string", "null"]}
    if envelope.done_key:
        properties[envelope.done_key] = {"type": "boolean"}
    return {"type": "object", "properties": properties, "required": [envelope.list_key]}


def _response_schema(operation: Operation, contract: ResourceContract | None) -> JsonSchema | None:
    if contract is None:
        for response in operation.responses:
            if 200 <= response.status < 300 and response.schema_ is not None:
                return response.schema_
        return None
    record = _rendered_record_schema(contract)
    if operation.kind == "list":
        return list_schema(record, operation.envelope or contract.envelope)
    if _success_status(operation) == 204:
        return None
    return item_schema(record, contract.envelope)


def _rendered_record_schema(contract: ResourceContract) -> JsonSchema:
    if not contract.envelope.record_attributes:
        return contract.record_schema
    attributes: JsonSchema = {
        "type": "object",
        "properties": {"type": {"type": "string"}, "url": {"type": "string"}},
        "required": ["type", "url"],
    }
    schema = dict(contract.record_schema)
    schema["properties"] = {**contract.record_schema["properties"], "attributes": attributes}
    return schema


def _wire_schema(spec: FieldSpec, as_strings: bool, datetime_format: str | None) -> JsonSchema:
    """The field as responses carry it: strings under values_as_strings, {link, value} refs."""
    schema = _timestamps_as_sent(spec.schema_, datetime_format)
    if as_strings and _schema_type(schema) & _SCALAR_TYPES:
        schema = _drop_type_keywords(schema)
        schema["type"] = "string"
    if spec.reference is not None and spec.reference.style == "link_value":
        link_value: JsonSchema = {
            "type": "object",
            "properties": {"link": {"type": "string"}, "value": {"type": "string"}},
            "required": ["value"],
        }
        return {"anyOf": [link_value, {"type": "string"}]}
    if as_strings:
        # ServiceNow renders an empty value as "" whatever the field's type.
        return {"anyOf": [schema, {"const": ""}]} if schema else schema
    if spec.nullable or not spec.required:
        return {"anyOf": [schema, {"type": "null"}]} if schema else schema
    return schema


def _write_schema(spec: FieldSpec, as_strings: bool, datetime_format: str | None) -> JsonSchema:
    """The field as requests may send it (after scalar coercion under values_as_strings).

    A field clients write but the service only ever answered empty is write-only input (a
    ServiceNow journal field: the comment becomes a journal entry, the field reads ""): what the
    responses showed says nothing of what the service accepts, so any string is.
    """
    schema = _accepted(_timestamps_as_sent(spec.schema_, datetime_format))
    if _only_empty_string(schema):
        schema = {"type": "string"}
    if spec.reference is not None:
        id_schema: JsonSchema = {"type": ["string", "integer"]}
        if spec.reference.style == "link_value":
            return {
                "anyOf": [
                    id_schema,
                    {"type": "object", "properties": {"value": id_schema}, "required": ["value"]},
                    {"type": "null"},
                ]
            }
        return {"anyOf": [id_schema, {"type": "null"}]}
    if as_strings and _schema_type(schema) & _SCALAR_TYPES:
        schema = _drop_type_keywords(schema)
        schema["type"] = "string"
    if as_strings and schema:
        return {"anyOf": [schema, {"const": ""}]}
    if (spec.nullable or not spec.required) and schema:
        # A field not every record carries may be cleared.
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


def _accepted(schema: JsonSchema, *, nested: bool = False) -> JsonSchema:
    """What a write may send inside a field. The keys answers always showed in a nested object
    are ones the service fills in (Notion completes a rich text's `annotations`), so a request
    need not send them; and a nested id may come in another spelling than the one answers use
    (a UUID without its dashes, Jira's project id 10000 answered as "10000"), so nested formats
    are not checked and a nested string may be sent as a number."""
    accepted: JsonSchema = {}
    for key, value in schema.items():
        if key == "required" or (nested and key in ("format", "pattern")):
            continue
        if nested and key == "type" and value == "string":
            accepted[key] = ["string", "number"]
            continue
        if nested and key == "enum" and isinstance(value, list):
            accepted[key] = [
                *value,
                *(int(v) for v in value if isinstance(v, str) and spells_int(v)),
            ]
            continue
        if key in _SUBSCHEMA_LISTS and isinstance(value, list):
            accepted[key] = [
                _accepted(s, nested=nested) if isinstance(s, dict) else s for s in value
            ]
        elif key == "properties" and isinstance(value, dict):
            accepted[key] = {
                name: _accepted(s, nested=True) if isinstance(s, dict) else s
                for name, s in value.items()
            }
        elif key == "items" and isinstance(value, dict):
            accepted[key] = _accepted(value, nested=True)
        else:
            accepted[key] = value
    return accepted


def _only_empty_string(schema: JsonSchema) -> bool:
    """Whether the only string the schema admits is "" (a union's other branches may be
    objects: the display-value form of `sysparm_display_value=all`)."""
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        strings = [b for b in branches if isinstance(b, dict) and "string" in _schema_type(b)]
        return bool(strings) and all(_only_empty_string(branch) for branch in strings)
    return _schema_type(schema) == {"string"} and (
        schema.get("maxLength") == 0 or schema.get("enum") == [""] or schema.get("const") == ""
    )


_STRFTIME = {
    "%Y": r"\d{4}",
    "%m": r"\d{2}",
    "%d": r"\d{2}",
    "%H": r"\d{2}",
    "%M": r"\d{2}",
    "%S": r"\d{2}",
    "%f": r"\d{1,9}",
    "%z": r"(?:[+-]\d{2}:?\d{2}|Z)?",
    "%Z": r"[A-Z]*",
    "%%": "%",
}


def _timestamps_as_sent(schema: JsonSchema, datetime_format: str | None) -> JsonSchema:
    """A `date-time` field of a service with its own timestamp layout (ServiceNow's
    `2024-01-01 10:00:00` is not RFC 3339) is a string matching that layout, wherever the
    `date-time` sits: a field learned as a union (the bare value, or the display-value object of
    `sysparm_display_value=all`) holds it in each branch."""
    if datetime_format is None:
        return dict(schema)
    return _with_layout(schema, "^" + strftime_pattern(datetime_format) + "$")


_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf")


def _with_layout(schema: JsonSchema, pattern: str) -> JsonSchema:
    adjusted: JsonSchema = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_LISTS and isinstance(value, list):
            adjusted[key] = [_with_layout(s, pattern) if isinstance(s, dict) else s for s in value]
        elif key == "properties" and isinstance(value, dict):
            adjusted[key] = {
                name: _with_layout(s, pattern) if isinstance(s, dict) else s
                for name, s in value.items()
            }
        elif key == "items" and isinstance(value, dict):
            adjusted[key] = _with_layout(value, pattern)
        elif key != "format" or value != "date-time":
            adjusted[key] = value
    if schema.get("format") == "date-time":
        adjusted["pattern"] = pattern
    return adjusted


def strftime_pattern(datetime_format: str) -> str:
    parts = re.split(r"(%.)", datetime_format)
    return "".join(_STRFTIME.get(part, re.escape(part)) for part in parts if part)


def _drop_type_keywords(schema: JsonSchema) -> JsonSchema:
    numeric = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    return {key: value for key, value in schema.items() if key not in numeric and key != "enum"}


def _schema_type(schema: JsonSchema) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {item for item in declared if isinstance(item, str)}
    return set()


def _server_fields(resource: Resource) -> ServerFields:
    minted: list[FieldSpec] = []
    created: list[str] = []
    updated: list[str] = []
    counters: list[str] = []
    created_by: list[str] = []
    updated_by: list[str] = []
    callers: list[tuple[str, Reference]] = []
    for name, spec in resource.fields.items():
        if name == resource.id_field:
            continue
        if spec.stamp == "caller" and spec.reference is not None:
            callers.append((name, spec.reference))
            continue
        if spec.generator is not None:
            minted.append(spec)
            continue
        if not spec.server_generated:
            continue
        if _is_timestamp(spec.schema_):
            # Any other server timestamp (resolved_at, closed_at) marks a business event that
            # the service's rules set; stamping it on every write would invent that event.
            # An immutable one with a default (a knowledge article's valid_to) is no stamp.
            if (spec.immutable and not spec.has_default) or _CREATE_STAMP.search(name):
                created.append(name)
            elif _UPDATE_STAMP.search(name):
                updated.append(name)
        elif _COUNTER.search(name) and _may_count(spec):
            counters.append(name)
        elif not _holds_text(spec.schema_):
            # Notion's `created_by` is a user object, not a login: nothing to stamp the
            # caller's name into.
            continue
        elif _CREATED_BY.search(name):
            created_by.append(name)
        elif _UPDATED_BY.search(name):
            updated_by.append(name)
    return ServerFields(
        minted=tuple(minted),
        created_stamps=tuple(created),
        updated_stamps=tuple(updated),
        counters=tuple(counters),
        created_by=tuple(created_by),
        updated_by=tuple(updated_by),
        callers=tuple(callers),
    )


def _holds_text(schema: JsonSchema) -> bool:
    return (
        not schema
        or "string" in _schema_type(schema)
        or any(
            _holds_text(branch) for branch in schema.get("anyOf", ()) if isinstance(branch, dict)
        )
    )


def _may_count(spec: FieldSpec) -> bool:
    """Whether a field named like a counter can be one: not a reference, and not defaulting
    to something other than a number (std_change_producer_version is an empty reference)."""
    if spec.reference is not None:
        return False
    return not spec.has_default or str(spec.default).isdigit()


def _is_timestamp(schema: JsonSchema) -> bool:
    """A date or date-time, also when learned as one branch of a union (ServiceNow sends a
    timestamp as a string, or as {display_value, value} when asked for display values)."""
    if schema.get("format") in ("date-time", "date"):
        return True
    branches = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    return any(
        isinstance(branch, dict) and branch.get("format") in ("date-time", "date")
        for branch in branches
    )


def _success_status(operation: Operation) -> int:
    statuses = [r.status for r in operation.responses if 200 <= r.status < 300]
    if statuses:
        return statuses[0]
    return {"create": 201, "delete": 204}.get(operation.kind, 200)


def _error_status(operation: Operation) -> int:
    for response in operation.responses:
        if response.status in (400, 422):
            return response.status
    return 400


def _scope_param(operation: Operation) -> str | None:
    """The path parameter naming a nested collection's parent: its last one."""
    names = re.findall(r"\{([^}]+)\}", operation.path)
    return names[-1] if operation.scope is not None and names else None


def _id_param(operation: Operation) -> str | None:
    path_params = re.findall(r"\{([^}]+)\}", operation.path)
    # Below a parent (`/lists/{listId}/notes/{noteId}`) the record's own id is the last one.
    for parameter in reversed(operation.parameters):
        if parameter.location == "path" and parameter.role == "id":
            return parameter.name
    return path_params[-1] if path_params else None
