"""What a write leaves out and the service fills in, as a learned model says it would.

A created record carries every field the service's answers usually show, even those the client
did not send (Notion answers a new data source with its `database_parent`), and the nested keys
its answers always carry (a rich text's `annotations`). The values are the plainest the
evidence allows: null where the service showed null, the value its recorded records hold most,
else the simplest value the schema admits. Pure functions over the model; the runtime calls them.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from myna.mocks.seed import pooled_faker, type_of, value_from_schema
from myna.schemas.model import FieldSpec, JsonSchema, Resource
from myna.schemas.shape import OBSERVED


def fillers(resource: Resource) -> tuple[tuple[str, Any], ...]:
    """Each field a create fills when neither the client nor a default did: those present in
    most recorded answers. References are left out: a made-up one would point at nothing."""
    filled: list[tuple[str, Any]] = []
    for name, spec in resource.fields.items():
        if (
            name == resource.id_field
            or spec.has_default
            or spec.reference is not None
            or not usually_present(resource, spec)
        ):
            continue
        filled.append((name, None if spec.nullable else _usual_value(resource, name, spec)))
    return tuple(filled)


def usually_present(resource: Resource, spec: FieldSpec) -> bool:
    """Whether most records the traces showed carry the field: counted against the records
    that carried an id, as answers that only echo a few fields (a delete's) are no records."""
    id_field = resource.fields.get(resource.id_field)
    records = id_field.evidence.samples if id_field is not None else resource.evidence.samples
    return spec.required or 2 * spec.evidence.samples > records


def completed(value: Any, schema: JsonSchema, name: str = "") -> Any:
    """A written value with the nested keys its answers always carry added, where missing. A
    list sent where answers hold an object around a list (Notion's title property) is put in
    that object's one list-valued key."""
    if isinstance(value, list) and type_of(schema) == "object":
        holder = _list_holder(_branch(schema, "object"), name)
        if holder is not None:
            value = {holder: value}
    if isinstance(value, dict):
        shape = _branch(schema, "object")
        properties: dict[str, JsonSchema] = shape.get("properties", {})
        out = {
            key: completed(item, properties[key], key) if key in properties else item
            for key, item in value.items()
        }
        for key in shape.get("required", ()):
            if key not in out and key in properties:
                out[key] = plain_value(properties[key])
        return out
    if isinstance(value, list):
        items = _branch(schema, "array").get("items") or {}
        return [completed(item, items, name) for item in value]
    return value


def _list_holder(schema: JsonSchema, name: str) -> str | None:
    """The key of an object schema that holds a list: the one named like the field, else the
    only one."""
    lists = [
        key
        for key, sub in schema.get("properties", {}).items()
        if isinstance(sub, dict) and type_of(sub) == "array"
    ]
    if name in lists:
        return name
    return lists[0] if len(lists) == 1 else None


def plain_value(schema: JsonSchema) -> Any:
    """The simplest value the schema admits: false, the least number seen, an empty list,
    an object of its required keys; a string only where a format or pattern asks for one."""
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = type_of(schema)
    if kind in (None, "null"):
        return None
    shape = _branch(schema, kind)
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return shape.get("minimum", (shape.get(OBSERVED) or {}).get("minimum", 0))
    if kind == "array":
        return []
    if kind == "object":
        properties: dict[str, JsonSchema] = shape.get("properties", {})
        return {
            key: plain_value(properties[key])
            for key in shape.get("required", ())
            if key in properties
        }
    if "format" in shape or "pattern" in shape or shape.get("enum"):
        return _drawn(shape, "value")
    return ""


def _usual_value(resource: Resource, name: str, spec: FieldSpec) -> Any:
    counts: Counter[str] = Counter(
        json.dumps(record[name], sort_keys=True) for record in resource.records if name in record
    )
    if counts:
        return json.loads(counts.most_common(1)[0][0])
    return plain_value(spec.schema_)


def _drawn(schema: JsonSchema, name: str) -> Any:
    """One value the seeding generator draws for the schema, the same on every run."""
    rng = random.Random(json.dumps(schema, sort_keys=True))
    return value_from_schema(schema, name, rng, pooled_faker(rng), 0)


def _branch(schema: JsonSchema, kind: str) -> JsonSchema:
    """The part of a schema (itself, or one branch of its union) that describes `kind`."""
    if type_of(schema) == kind and "anyOf" not in schema and "oneOf" not in schema:
        return schema
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, ()):
            if isinstance(option, dict) and type_of(option) == kind:
                return _branch(option, kind)
    return schema
