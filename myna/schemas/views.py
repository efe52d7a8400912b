"""Views: a resource's paths answering another resource's record in their own shape.

Some services address one record under several kinds: Notion deletes a page at
`/blocks/{id}` and answers it as a block (`"type": "child_page"`, `"child_page": {"title":
...}`), a title that is the page's rich-text title joined into plain text. The learner sees
both answers for the same id; each value of the view is traced back to where it came from in
the record's last answer (`learn_view`), and the mock builds the view the same way from the
record it holds (`project`). Both sides use `sources`, so what was learned is what is served.
"""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import JsonValue

from myna.schemas.model import Evidence, View, ViewField

JOIN = "*"
"""A source path segment: the text at the rest of the path in every item of a list, joined."""

Path = tuple[str, ...]

_ABSENT = object()
_AGREEING = 0.8
"""The share of examples a source must agree with."""
_DISTINCT_TEXT = 3
"""Text this long or longer, found elsewhere in the record, is taken to come from there;
shorter values and booleans agree with too many fields by chance."""


def sources(record: Any, prefix: Path = ()) -> dict[Path, Any]:
    """Every value a view could take from a record, by path: each node, and for a list of
    objects the text each of them holds at one path, joined (`JOIN`)."""
    found: dict[Path, Any] = {prefix: record} if prefix else {}
    if isinstance(record, dict):
        for key, item in record.items():
            found.update(sources(item, (*prefix, str(key))))
    elif isinstance(record, list) and record and all(isinstance(item, dict) for item in record):
        per_item = [sources(item) for item in record]
        shared = set(per_item[0]).intersection(*per_item[1:])
        for sub in sorted(shared):
            parts = [values[sub] for values in per_item]
            if all(isinstance(part, str) for part in parts):
                found[(*prefix, JOIN, *sub)] = "".join(parts)
    return found


def leaves(value: dict[str, Any], prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """The values a view is made of: nested objects are walked, anything else is one value."""
    for key, item in value.items():
        path = (*prefix, key)
        if isinstance(item, dict) and item:
            yield from leaves(item, path)
        else:
            yield path, item


def learn_view(
    source: str,
    examples: Sequence[tuple[dict[str, Any], dict[str, Any]]],
    evidence: Evidence,
    *,
    minimum: int = 2,
) -> View | None:
    """The view of `source`'s records, from pairs of (the record's last answer, the view the
    service answered for it). Where the pairs were found by their ids alone, one could be a
    coincidence: at least `minimum`."""
    if not examples or len(examples) < minimum:
        return None
    indexes = [sources(record) for record, _ in examples]
    shown = [dict(leaves(view)) for _, view in examples]
    order: dict[Path, None] = {}
    for values in shown:
        order.update(dict.fromkeys(values))
    fields = [_field(path, indexes, shown) for path in order]
    return View(source=source, fields=fields, evidence=evidence)


def _field(path: Path, indexes: list[dict[Path, Any]], shown: list[dict[Path, Any]]) -> ViewField:
    """Where one value of the view comes from, by what most examples agree on: the same
    place in the record, else the one place that held the same distinctive value, else a
    constant, else the same place (its value changed: a delete answers `in_trash: true`),
    else the usual value. Most, not all: the record's last answer may have been another
    view of it (a page's markdown)."""
    pairs = [
        (index, values[path])
        for index, values in zip(indexes, shown, strict=True)
        if path in values
    ]
    enough = max(1, math.ceil(len(pairs) * _AGREEING))
    places: Counter[Path] = Counter()
    for index, value in pairs:
        if index.get(path, _ABSENT) == value:
            places[path] += 1
        if _distinctive(value):
            places.update(place for place, held in index.items() if held == value and place != path)
    usual, count = Counter(_key(value) for _, value in pairs).most_common(1)[0]
    sample = _json(next(value for _, value in pairs if _key(value) == usual))
    if places[path] >= enough:
        return ViewField(path=list(path), source=list(path), value=sample)
    agreed = [place for place, count in places.items() if count >= enough]
    if agreed:
        chosen = min(agreed, key=lambda place: (-places[place], len(place), place))
        return ViewField(path=list(path), source=list(chosen), value=sample)
    if count >= enough or sum(path in index for index, _ in pairs) < enough:
        return ViewField(path=list(path), value=sample)
    return ViewField(path=list(path), source=list(path), value=sample)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _distinctive(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= _DISTINCT_TEXT


def _json(value: Any) -> JsonValue:
    return copy.deepcopy(value)  # type: ignore[no-any-return]


def project(view: View, record: dict[str, Any]) -> dict[str, Any]:
    """The view of one record's answer. A value whose source the record lacks is the usual
    value the service showed there: the view keeps the shape clients read."""
    index = sources(record)
    shaped: dict[str, Any] = {}
    for field in view.fields:
        value = field.value if field.source is None else index.get(tuple(field.source), _ABSENT)
        _put(shaped, field.path, copy.deepcopy(field.value if value is _ABSENT else value))
    return shaped


def _put(target: dict[str, Any], path: Sequence[str], value: Any) -> None:
    for key in path[:-1]:
        nested = target.get(key)
        if not isinstance(nested, dict):
            nested = target[key] = {}
        target = nested
    target[path[-1]] = value
