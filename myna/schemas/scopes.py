"""Scopes: which records a collection under a parent holds (`/groups/{id}/projects`).

A nested collection lists only its parent's records, and a record created there belongs to that
parent. The traces show which field says so: the one whose value, in every record every such
call answered with, is the id the path named (GitLab's `namespace.id`, Notion's
`parent.page_id`). Ids compare across spellings (a UUID with or without its dashes). Pure
functions; the learner collects the samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

Sample = tuple[str, list[dict[str, Any]]]
"""One call: the id its path named for the parent, and the records it answered with."""


def scope_field(samples: Iterable[Sample], *, parent_kind: str, own_id: str) -> str | None:
    """The field path (one level into nested objects at most) holding the parent's id in every
    record of every sample; None when no field does, or no sample showed a record.

    One parent's records agree on many values by chance (fixtures that number every record
    1000): unless several parents were seen, the field must be named after the parent's kind
    (`project_id` under `/projects/{id}`) or be a `parent`."""
    common: set[str] | None = None
    parents: set[str] = set()
    for parent, records in samples:
        parents.add(plain_id(parent))
        for record in records:
            found = {path for path, value in _leaves(record) if _same_id(value, parent)}
            common = found if common is None else common & found
            if not common:
                return None
    common = {path for path in common or () if path.partition(".")[0] != own_id}
    if len(parents) < 2:
        common = {path for path in common if _names_parent(path, parent_kind)}
    if not common:
        return None
    # An id-named field says "parent" more surely than one that merely holds the same value.
    return min(common, key=lambda path: (not path.lower().endswith("id"), path.count("."), path))


def _names_parent(path: str, parent_kind: str) -> bool:
    head = path.partition(".")[0].lower()
    return parent_kind.lower() in head or head.startswith("parent")


def nested_value(record: dict[str, Any], path: str) -> Any:
    """The value at a dotted path of object keys, or None."""
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def with_nested_value(record: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `record` with `value` at the dotted path, objects made on the way."""
    head, _, rest = path.partition(".")
    if not rest:
        return {**record, head: value}
    inner = record.get(head)
    return {
        **record,
        head: with_nested_value(inner if isinstance(inner, dict) else {}, rest, value),
    }


def _leaves(record: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for key, value in record.items():
        if isinstance(value, dict):
            for inner, item in value.items():
                if not isinstance(item, dict | list):
                    yield f"{key}.{inner}", item
        elif not isinstance(value, list):
            yield key, value


def _same_id(value: Any, parent: str) -> bool:
    if value is None or isinstance(value, bool) or value == "":
        return False
    return plain_id(str(value)) == plain_id(parent)


def plain_id(value: object) -> str:
    """An id as compared across spellings: `393abc1e-edcd-...` and `393abc1eedcd...` alike."""
    return str(value).replace("-", "").lower()
