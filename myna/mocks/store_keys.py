"""Which records a list call reads: the equalities of its filter, and the fields a store keeps
keys for in every world.

A filter's conjuncts `field = value` narrow a list to the records holding one of the value's
keys (`equality_keys`); the evaluator then decides on those, so the answer is the one a full
scan gives, at a cost that follows the matches instead of the world's size. A store keeps the
keys of a world's own rows for the fields the model's extensions look records up by
(`Extension.lookups`), which its write hooks do on every write.
"""

from __future__ import annotations

from myna.mocks.evaluate import MISSING, equality_keys
from myna.mocks.extensions import EXTENSIONS
from myna.mocks.query import And, Condition, Filter
from myna.mocks.store import Record
from myna.schemas.model import ServiceModel


def indexed_fields(model: ServiceModel) -> dict[str, tuple[str, ...]]:
    """The fields the model's extensions look records up by, per resource the model serves."""
    fields: dict[str, list[str]] = {}
    for name in model.extensions:
        extension = EXTENSIONS.get(name)
        for resource, field in sorted(extension.lookups) if extension is not None else ():
            if resource in model.resources and field not in fields.get(resource, ()):
                fields.setdefault(resource, []).append(field)
    return {resource: tuple(names) for resource, names in fields.items()}


Equality = tuple[str, tuple[str, ...]]
"""A conjunct `field = value` of a filter: the field and the value's keys (`equality_keys`)."""


def equalities(where: Filter | None) -> list[Equality]:
    """The conjuncts of `where` of the form `field = value` (a plain field, a non-empty value):
    every record `where` matches holds a key of each such value in its field."""
    if where is None:
        return []
    found = []
    for part in where.parts if isinstance(where, And) else (where,):
        if isinstance(part, Condition) and part.op == "=" and "." not in part.field:
            keys = equality_keys(part.value)
            if keys:
                found.append((part.field, keys))
    return found


def only_equalities(where: Filter | None, equal: list[Equality]) -> bool:
    """Whether `where` is nothing but the equalities `equalities` found in it."""
    parts = where.parts if isinstance(where, And) else (where,)
    return where is not None and len(equal) == len(parts)


def record_keys(record: Record | None, fields: tuple[str, ...]) -> set[tuple[str, str]]:
    """The (field, key) pairs a record holds in the indexed `fields`."""
    if record is None:
        return set()
    return {(field, key) for field in fields for key in equality_keys(record.get(field, MISSING))}
