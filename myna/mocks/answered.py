"""What a mock can answer, as the schemas it publishes (`/openapi.json`) and checks its own
answers against (strict mode).

A learned record schema says what the recordings showed. A mock answers more than that: what
clients wrote (a request schema lets them store any text in a field the recordings only ever
showed empty, a number where nested text was seen, an `href` that is no URI), what the mock fills
in itself (stamps, counters, the caller's name, a parent's id taken from the path, the usual value
of a field a create left out) and the records a world starts with (the recorded ones, completed
with generated values). Each resource's record schema is widened here until it admits all of
those: where they contradict it and only there, so what the evidence says stays published
wherever nothing the mock does contradicts it. A replayed operation's schema is widened the same
way by the answers it replays. Nothing here names a service.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any

import jsonschema_rs

from myna.mocks import ids, seed
from myna.mocks.contract import ResourceContract
from myna.mocks.fill import fillers
from myna.mocks.render import renderer_for
from myna.mocks.replayed import echoed
from myna.mocks.seed import recorded_data
from myna.mocks.store import Record
from myna.mocks.validation import coerce_scalars
from myna.schemas import shape
from myna.schemas import values as schema_values
from myna.schemas.model import JsonSchema, Operation, ServiceModel
from myna.schemas.model_cache import MIN_CACHED_BYTES, cached_data, sources
from myna.schemas.values import JSON_SCHEMA_FORMAT, string_format

_ANY_TEXT: JsonSchema = {"type": "string"}
_ID_VALUE: JsonSchema = {"type": ["string", "integer"]}
_SAMPLE_MOMENT = datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
_SEEDED_EXTRA = 1
"""Generated records looked at per resource, beside the recorded ones: generation follows the
same paths for every record, so one shows what it makes."""
_MAX_WIDENINGS = 64
"""Widenings tried for one value before its whole field admits it as it is."""
_ECHO_PROBE = "myna-echo-probe"
"""Stands for any path value a replayed answer echoes (`echoed`): a client sends any text."""
_KEPT_FORMATS = frozenset({"date-time", "date"})
"""Formats a widening for a value keeps: timestamps are timestamps however a service lays them
out; any other text may be anything."""


def format_stamp(moment: datetime, datetime_format: str | None) -> str:
    """A timestamp as the mock writes one: in the service's layout, else RFC 3339 in UTC."""
    if datetime_format:
        return moment.strftime(datetime_format)
    return moment.isoformat().replace("+00:00", "Z")


# -- resources ----------------------------------------------------------------------------------


def answered_resources(
    model: ServiceModel, resources: Mapping[str, ResourceContract]
) -> dict[str, ResourceContract]:
    """`resources` with each record schema widened to what the mock can answer for it."""
    seeded = _seeded(model)
    out: dict[str, ResourceContract] = {}
    for name, contract in resources.items():
        renderer = renderer_for(contract, model)
        properties = _written(model, contract)
        samples = [*seeded.get(name, ()), *_made_by_the_mock(model, contract)]
        rendered = [renderer.render(record, "http://mock") for record in samples]
        for field, values in _values_by_field(rendered, properties).items():
            properties[field] = admitting(properties[field], values)
        schema = {**contract.record_schema, "properties": properties}
        out[name] = replace(contract, record_schema=schema)
    return out


def _seeded(model: ServiceModel) -> dict[str, list[Record]]:
    """The records a served world starts with (`seed_recorded`), and a few generated ones.

    A large model's are kept in the cache (`model_cache`), named by the model and the code and
    Faker release that make them: making them imports and sets up Faker, 0.1 s of the 1 s a
    warm start of the ITSM back end takes otherwise (BENCHMARKS.md)."""
    dumped = model.model_dump_json()
    if len(dumped) < MIN_CACHED_BYTES:
        return _made_seeded(model)
    made_by = sources(seed.__file__, ids.__file__, shape.__file__, schema_values.__file__)
    parts = (version("faker"), made_by, dumped)
    seeded: dict[str, list[Record]] = cached_data("seeded", parts, lambda: _made_seeded(model))
    return seeded


def _made_seeded(model: ServiceModel) -> dict[str, list[Record]]:
    data = recorded_data(model, seed=0, top_up=_SEEDED_EXTRA)
    out: dict[str, list[Record]] = {}
    for name, _, record in data.records:
        out.setdefault(name, []).append(record)
    return out


def _written(model: ServiceModel, contract: ResourceContract) -> dict[str, JsonSchema]:
    """The record's properties admitting what writes store: a field's request schema (as the
    renderer shows a stored reference), any caller's name in a `*_by` stamp, any parent id a
    nested collection's path gives, and what an action copies from its request."""
    properties = dict(contract.record_schema["properties"])
    as_strings = model.conventions.values_as_strings
    sent: dict[str, JsonSchema] = contract.create_schema["properties"]
    kept = contract.ignored_on_write | contract.refused_on_write
    for name, schema in sent.items():
        if name in kept or name not in properties:
            continue
        answered = _as_rendered(contract, name, schema, as_strings)
        if answered is not None:
            properties[name] = union(properties[name], answered)
    for name in (*contract.server.created_by, *contract.server.updated_by):
        properties[name] = union(properties[name], _ANY_TEXT)
    own = contract.resource.name
    for operation in model.operations:
        if operation.resource != own:
            continue
        if operation.scope is not None:
            scoped = _widened_at({"properties": properties}, operation.scope.split("."), _ID_VALUE)
            properties = scoped["properties"]
        for field, copied in _copied_by_action(operation):
            properties[field] = union(properties.get(field, {}), copied)
    return properties


def _as_rendered(
    contract: ResourceContract, name: str, sent: JsonSchema, as_strings: bool
) -> JsonSchema | None:
    """What a written value of the field looks like in an answer (None: nothing new): a
    reference is stored by its id and shown as `{link, value}` or as the id itself."""
    reference = contract.references.get(name)
    if reference is None:
        return sent
    if reference.style == "link_value":
        return None if as_strings else {"type": "null"}
    return _ANY_TEXT if as_strings else {"type": ["string", "integer", "null"]}


def _copied_by_action(operation: Operation) -> Iterator[tuple[str, JsonSchema]]:
    """Each field an action sets from its request body, with what the body may hold there."""
    for effect in operation.effects:
        if effect.from_request is not None:
            yield effect.field, _at_pointer(operation.request_schema or {}, effect.from_request)


def _at_pointer(schema: JsonSchema, pointer: str) -> JsonSchema:
    """The part of a request schema a JSON pointer into its bodies reaches; {} (anything) where
    the schema does not say."""
    for part in pointer.lstrip("/").split("/"):
        if not part:
            continue
        key = part.replace("~1", "/").replace("~0", "~")
        properties = schema.get("properties")
        if isinstance(properties, dict) and isinstance(properties.get(key), dict):
            schema = properties[key]
        elif key.isdigit() and isinstance(schema.get("items"), dict):
            schema = schema["items"]
        else:
            return {}
    return schema


_MANY_WRITES = 2_147_483_647


def _made_by_the_mock(model: ServiceModel, contract: ResourceContract) -> list[Record]:
    """Records holding each value the mock writes by itself: what a create fills in (the usual
    values, defaults, initial states, ids, stamps, counters) and what entering a state sets."""
    resource = contract.resource
    stamp = format_stamp(_SAMPLE_MOMENT, model.conventions.datetime_format)
    # As the runtime: a service that renders every value as text fills in nothing.
    created: Record = {} if model.conventions.values_as_strings else dict(fillers(resource))
    created.update(
        (name, spec.default) for name, spec in resource.fields.items() if spec.has_default
    )
    for machine in contract.state_machines:
        if machine.initial:
            created[machine.field] = machine.initial[0]
    created.update((name, stamp) for name in contract.server.created_stamps)
    created.update((name, stamp) for name in contract.server.updated_stamps)
    created.update((name, 0) for name in contract.server.counters)
    minted = [(resource.id_field, resource.id_format)]
    minted += [(spec.name, spec.generator) for spec in contract.server.minted if spec.generator]
    for name, fmt in minted:
        value = ids.mint_id(fmt, random.Random(0), number=fmt.start, now_ms=0)
        spec = resource.fields.get(name)
        integer = spec is not None and spec.schema_.get("type") == "integer"
        created[name] = int(value) if integer and name not in contract.stringly else value
    # A counter climbs with every write: one far past anything recorded stands for them all
    # (a learned `enum` of the counts seen must give way).
    changed: Record = {name: _MANY_WRITES for name in contract.server.counters}
    for operation in model.operations:
        if operation.resource == resource.name:
            changed.update((e.field, e.value) for e in operation.effects if e.from_request is None)
    entered = [
        dict(entry.values)
        for machine in contract.state_machines
        for entry in machine.sets_on_entry.values()
    ]
    return [coerce_scalars(record, contract.stringly) for record in (created, changed, *entered)]


def _values_by_field(
    records: Iterable[Mapping[str, Any]], properties: Mapping[str, JsonSchema]
) -> dict[str, list[Any]]:
    """The distinct values each declared field takes in `records`."""
    seen: dict[str, dict[str, Any]] = {}
    for record in records:
        for name, value in record.items():
            if name in properties:
                seen.setdefault(name, {})[json.dumps(value, sort_keys=True, default=str)] = value
    return {name: list(values.values()) for name, values in seen.items()}


# -- replayed operations ------------------------------------------------------------------------


def replayed_schema(operation: Operation, learned: JsonSchema | None) -> JsonSchema | None:
    """A replayed operation's success schema admitting every success it replays, with any text
    where a replayed answer echoes a path value (`echoed`). None when nothing was learned: the
    document then says nothing of the body."""
    if learned is None:
        return None
    return admitting(learned, _replayed_bodies(operation))


def _replayed_bodies(operation: Operation) -> Iterator[Any]:
    for answer in operation.recorded:
        if not 200 <= answer.status < 300 or answer.text is not None or answer.body is None:
            continue
        yield answer.body
        probes = {name: _ECHO_PROBE for name in answer.params if name.startswith("{")}
        yield echoed(answer, probes)
    if not operation.recorded:
        for response in operation.responses:
            if 200 <= response.status < 300 and response.example is not None:
                yield response.example
                break


# -- widening -----------------------------------------------------------------------------------


def admitting(schema: JsonSchema, values: Iterable[Any]) -> JsonSchema:
    """`schema` widened where `values` contradict it, until it admits each of them: the failing
    part (a nested key's type, a pattern, a required key) gives way, not the whole schema."""
    check = _validator(schema)
    for value in values:
        if check.is_valid(value):
            continue
        schema = _admit(schema, value)
        check = _validator(schema)
    return schema


def _admit(schema: JsonSchema, value: Any) -> JsonSchema:
    for _ in range(_MAX_WIDENINGS):
        error = next(iter(_validator(schema).iter_errors(value)), None)
        if error is None:
            return schema
        path = list(error.schema_path)
        if path and path[0] in ("components", "$defs"):
            # Inside a `$ref`'s target, shared with other schemas: widen an inlined copy.
            inlined: JsonSchema = jsonschema_rs.dereference(schema)
            if inlined == schema:
                break
            schema = inlined
            continue
        found = _at_instance(value, list(error.instance_path))
        schema = _give_way(schema, path[:-1], str(path[-1]) if path else "", found)
    return union(schema, loose(value))


def _give_way(
    schema: JsonSchema, where: Sequence[str | int], keyword: str, value: Any
) -> JsonSchema:
    """`schema` with the subschema at `where` no longer refusing `value` by `keyword`."""
    if where:
        head, rest = where[0], where[1:]
        if isinstance(head, int):
            raise AssertionError("a schema path steps into a list only after its keyword")
        child = schema.get(head)
        if isinstance(child, list) and rest and isinstance(rest[0], int):
            items = list(child)
            items[rest[0]] = _give_way(items[rest[0]], rest[1:], keyword, value)
            return {**schema, head: items}
        if isinstance(child, dict):
            return {**schema, head: _give_way(child, rest, keyword, value)}
        return union(schema, loose(value))
    if keyword == "required" and isinstance(value, dict):
        required = [name for name in schema.get("required", ()) if name in value]
        trimmed = {key: item for key, item in schema.items() if key != "required"}
        return {**trimmed, "required": required} if required else trimmed
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return {key: item for key, item in schema.items() if key != keyword}
    return union(schema, loose(value))


def _widened_at(schema: JsonSchema, path: Sequence[str], extra: JsonSchema) -> JsonSchema:
    """`schema` with the value at a path of keys into its objects (through each branch of a
    union) admitting `extra`; a key no `properties` declares is not constrained already."""
    if not path:
        return union(schema, extra)
    out = dict(schema)
    options = schema.get("anyOf")
    if isinstance(options, list):
        out["anyOf"] = [
            _widened_at(option, path, extra) if isinstance(option, dict) else option
            for option in options
        ]
    properties = schema.get("properties")
    if isinstance(properties, dict) and isinstance(properties.get(path[0]), dict):
        inner = _widened_at(properties[path[0]], path[1:], extra)
        out["properties"] = {**properties, path[0]: inner}
    return out


def _at_instance(value: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        value = value[part]
    return value


def union(left: JsonSchema, right: JsonSchema) -> JsonSchema:
    """A schema admitting what either admits, each kept whole: `anyOf` of their alternatives.
    `components` a schema carries to resolve its `$ref`s stay at its root."""
    if left == right or not _constrains(left):
        return left
    if not _constrains(right):
        return right
    components = left.get("components")
    left = {key: item for key, item in left.items() if key != "components"}
    mine = _alternatives(left)
    merged = [*mine, *(option for option in _alternatives(right) if option not in mine)]
    # A bare `anyOf` is extended in place, keeping its notes (`x-myna-types`).
    notes = {key: item for key, item in left.items() if key != "anyOf"} if _bare(left) else {}
    if components is not None:
        notes["components"] = components
    return {"anyOf": merged, **notes}


def loose(value: Any) -> JsonSchema:
    """The plainest schema of a value's kind: its type, and a timestamp's format."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        kind = string_format(value)
        fmt = JSON_SCHEMA_FORMAT.get(kind) if kind is not None else None
        return {"type": "string", "format": fmt} if fmt in _KEPT_FORMATS else _ANY_TEXT
    return {"type": "array"} if isinstance(value, list) else {"type": "object"}


def _constrains(schema: JsonSchema) -> bool:
    return any(not _annotation(key) for key in schema)


def _alternatives(schema: JsonSchema) -> list[JsonSchema]:
    return list(schema["anyOf"]) if _bare(schema) else [schema]


def _bare(schema: JsonSchema) -> bool:
    """Whether the schema is an `anyOf` and nothing else that validates."""
    checked = [key for key in schema if not _annotation(key)]
    return checked == ["anyOf"] and isinstance(schema["anyOf"], list)


def _annotation(key: str) -> bool:
    return key.startswith("x-") or key in ("description", "title", "examples", "components")


def _validator(schema: JsonSchema) -> Any:
    return jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
