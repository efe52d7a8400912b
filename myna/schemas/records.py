"""Finding the records in a response body, and the id field of a record.

Services wrap records differently: ServiceNow in `{"result": ...}`, Salesforce queries in
`{"records": [...], "totalSize": n, "done": true}`, Jira searches in `{"issues": [...]}`, many
services not at all. `unwrap` finds the records whatever the wrapper, and says which key held them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

GENERIC_LIST_KEYS = frozenset(
    {"result", "results", "records", "data", "items", "values", "entries", "elements", "rows"}
)
"""Wrapper keys that say nothing about what the records are."""

ID_FIELDS = ("sys_id", "id", "Id", "ID", "uuid", "key")
"""Fields holding a record's own id, most telling first."""

Cardinality = Literal["one", "many"]


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """The records of one body, whether the body held one or many, and the key around them."""

    records: list[dict[str, Any]]
    cardinality: Cardinality
    key: str | None


NOTHING = Unwrapped([], "one", None)


def unwrap(body: Any) -> Unwrapped:
    """The records in a response body (nothing when it holds no objects)."""
    if isinstance(body, list):
        records = [item for item in body if isinstance(item, dict)]
        return (
            Unwrapped(records, "many", None)
            if records and len(records) == len(body)
            else (Unwrapped([], "many", None) if not body else NOTHING)
        )
    if not isinstance(body, dict) or not body:
        return NOTHING
    result = body.get("result")
    if isinstance(result, dict) and len(body) <= 2:
        return Unwrapped([result], "one", "result")
    list_key = _list_key(body)
    if list_key is not None:
        items = body[list_key]
        return Unwrapped([item for item in items if isinstance(item, dict)], "many", list_key)
    return Unwrapped([body], "one", None)


def _list_key(body: dict[str, Any]) -> str | None:
    """The key of the one list of objects in a wrapper whose other keys are scalars."""
    found: str | None = None
    for key, value in body.items():
        if isinstance(value, list):
            if value and not isinstance(value[0], dict):
                continue
            if found is not None:
                return None
            found = key
        elif isinstance(value, dict):
            return None
    if found is None:
        return None
    # An object that merely has one list field (a project with its `components`) is a record.
    return found if found in GENERIC_LIST_KEYS or len(body) <= 6 else None


def id_field(records: list[dict[str, Any]], resource: str | None = None) -> str | None:
    """The field holding each record's own id, if the records have one."""
    if not records:
        return None
    first = records[0]
    candidates = [*ID_FIELDS]
    if resource:
        candidates[1:1] = [f"{resource}_id", f"{resource}Id"]
    for name in candidates:
        if _id_like(first.get(name)):
            return name
    # Otherwise one `...Id` field whose values differ across a list (Jira's `accountId`).
    named = [name for name in first if name.endswith(("Id", "_id")) and _id_like(first[name])]
    if len(named) == 1 and len(records) >= 2:
        (name,) = named
        values = [record.get(name) for record in records]
        if len(set(map(str, values))) == len(values):
            return name
    return None


def _id_like(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool) and value != ""


def record_type(record: dict[str, Any]) -> str | None:
    """The type a record declares itself (Salesforce's `attributes.type`)."""
    attributes = record.get("attributes")
    if isinstance(attributes, dict):
        kind = attributes.get("type")
        if isinstance(kind, str) and kind:
            return kind
    return None


def shape_signature(records: list[dict[str, Any]]) -> int | None:
    """A cheap fingerprint of the first record's keys, to compare response shapes."""
    if not records:
        return None
    return hash(frozenset(records[0]))
