"""Finding the records in a response body, and the id field of a record.

Services wrap records differently: ServiceNow in `{"result": ...}`, Salesforce queries in
`{"records": [...], "totalSize": n, "done": true}`, Jira searches in `{"issues": [...]}`, many
services not at all. `unwrap` finds the records whatever the wrapper, and says which key held them.

Some answers show records through a lens: ServiceNow's `sysparm_display_value=true` answers with
every field's label instead of its value, and `=all` (and its Change Management API always) with
`{"display_value", "value"}` per field. `view_of` says which lens an answer used and `as_values`
takes the values back out, so that a label is never learned as a value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import compress, repeat
from operator import contains, is_
from typing import Any, Literal

GENERIC_LIST_KEYS = frozenset(
    {"result", "results", "records", "data", "items", "values", "entries", "elements", "rows"}
)
"""Wrapper keys that say nothing about what the records are."""

ID_FIELDS = ("sys_id", "id", "Id", "ID", "uuid", "key")
"""Fields holding a record's own id, most telling first."""

RECEIPT_KEYS = frozenset({"success", "created", "errors", "warnings", "infos"})
"""Keys that say how a write went, beside the id it made (Salesforce's create answers
`{"id", "success", "errors"}`, its upsert also `created`)."""

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
    if len(body) == 1:
        # `{"ticket": {"id": 7, ...}}`: a record under its kind's name (Zendesk, Rails apps).
        ((key, inner),) = body.items()
        if isinstance(inner, dict) and any(_id_like(inner.get(name)) for name in ID_FIELDS):
            return Unwrapped([inner], "one", key)
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
        elif isinstance(value, dict) and value:
            # An empty object beside the list is the page's metadata (Notion's `"block": {}`).
            return None
    if found is None or found in GENERIC_LIST_KEYS:
        return found
    # An object that merely has one list field (a project with its `components`, a goods receipt
    # with its `lines`) is a record: it has many fields, or an id of its own.
    if len(body) > 6 or any(_id_like(body.get(name)) for name in ID_FIELDS):
        return None
    return found


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


def receipt_id(body: Any) -> tuple[str, str] | None:
    """(id field, id) of a write's answer that carries only the id it made and how it went
    (`{"id": "001...", "success": true, "errors": []}`): an acknowledgement, not a record."""
    if not isinstance(body, dict) or len(body) > len(RECEIPT_KEYS) + 1:
        return None
    named = [name for name in ID_FIELDS if name in body]
    if len(named) != 1:
        return None
    (name,) = named
    value = body[name]
    if not _id_like(value) or any(key != name and key not in RECEIPT_KEYS for key in body):
        return None
    return name, str(value)


# --- views: an answer shown through labels ----------------------------------------------

View = Literal["values", "labels", "pairs"]
"""How an answer shows its records' fields: as values, as labels only, or as both per field."""

VIEW_PARAMS: dict[tuple[str, str], View] = {
    ("sysparm_display_value", "true"): "labels",
    ("sysparm_display_value", "all"): "pairs",
}
"""Query parameters asking for a view other than the values (ServiceNow's Table API)."""

_VIEW_NAMES = frozenset(name for name, _ in VIEW_PARAMS)

PAIR_KEYS = frozenset({"display_value", "value", "link", "display_value_internal"})
"""Keys of a field shown as a pair; `link` is a reference's, `display_value_internal` a
date's (Change Management)."""


def view_of(query: Iterable[tuple[str, str]], records: list[dict[str, Any]]) -> View:
    """The view an answer shows its records in: what the request asked for, else pairs when
    the first record holds one (an API that always answers in pairs)."""
    for name, value in query:
        if name in _VIEW_NAMES:
            view = VIEW_PARAMS.get((name, value.lower()))
            if view is not None:
                return view
    if (
        records
        and _shows_display_value(records[0])
        and any(_is_pair(value) for value in records[0].values())
    ):
        return "pairs"
    return "values"


def _shows_display_value(record: dict[str, Any]) -> bool:
    """Whether some value of `record` is an object with a `display_value`, tested without a
    Python step per value: this runs on every answer, and most records are long."""
    values = record.values()
    objects = compress(values, map(is_, map(type, values), repeat(dict)))
    return any(map(contains, objects, repeat("display_value")))


def _is_pair(value: Any) -> bool:
    return (
        type(value) is dict
        and "display_value" in value
        and ("value" in value or "link" in value)
        and value.keys() <= PAIR_KEYS
    )


Labels = dict[str, dict[str, str]]
"""Field -> value (as a string) -> the label the service shows for it."""


def as_values(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Labels]:
    """The records of a pairs view as values, and the labels the pairs showed.

    Each pair becomes its `value`, or `{link, value}` for a reference (what the values view
    answers); a label equal to its value says nothing and is left out."""
    labels: Labels = {}
    plain: list[dict[str, Any]] = []
    for record in records:
        values: dict[str, Any] = {}
        for name, item in record.items():
            if not _is_pair(item):
                values[name] = item
                continue
            value = item.get("value")
            values[name] = {"link": item["link"], "value": value} if "link" in item else value
            shown = item["display_value"]
            if value is None or isinstance(value, (dict, list)) or not isinstance(shown, str):
                continue
            code = str(value).lower() if isinstance(value, bool) else str(value)
            if shown and shown != code:
                labels.setdefault(name, {})[code] = shown
        plain.append(values)
    return plain, labels


KIND_KEYS = ("object", "kind", "type", "_type", "resourceType")
"""Keys under which a service names each record's kind (Notion's `"object": "page"`)."""


def of_one_kind(
    records: list[dict[str, Any]], kinds: Mapping[str, Mapping[str, int]]
) -> list[dict[str, Any]]:
    """The records of the kind the resource's answers name most (`kinds`: how often each value
    of each kind key was seen): an answer of another kind seen on the resource's paths (an
    async task at `/pages/{id}/markdown`) is no record of it to start a world with."""
    for key in KIND_KEYS:
        seen = kinds.get(key)
        if seen:
            usual = max(seen, key=lambda value: (seen[value], value))
            return [record for record in records if record.get(key, usual) == usual]
    return records
