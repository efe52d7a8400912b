"""Which list calls an index answers: the equality lookups a store keeps keys for.

A store indexes the fields the model's extensions look records up by (`Extension.lookups`).
A filter with a conjunct `field = value` on one of them reads only the records holding one of
the value's keys (`equality_keys`), and the evaluator then decides on those: the keys are a
superset of the matches, so the answer is the one a full scan gives, at a cost that follows
the matches instead of the world's size.
"""

from __future__ import annotations

from collections.abc import Mapping

from myna.mocks.evaluate import MISSING, equality_keys
from myna.mocks.extensions import EXTENSIONS
from myna.mocks.query import And, Condition, Filter
from myna.mocks.store import Record
from myna.schemas.model import ServiceModel

Indexed = Mapping[str, tuple[str, ...]]
"""Resource -> the fields of it the store keeps keys for."""


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


def record_keys(record: Record | None, fields: tuple[str, ...]) -> set[tuple[str, str]]:
    """The (field, key) pairs a record holds in the indexed `fields`."""
    if record is None:
        return set()
    return {(field, key) for field in fields for key in equality_keys(record.get(field, MISSING))}
