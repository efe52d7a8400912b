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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from myna.schemas.model import Evidence, Rendering, View, ViewField
from myna.schemas.values import string_format

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


# --- renderings: every field of a record shown another way ---------------------------------
#
# A query parameter may ask for another rendering of the same records: every field as
# `{display_value, value}`, or as its label. Each field of such an answer is traced back, as
# a view's values are, to what the plain answer shows of that field: its value, its label, a
# reference's link (`field_sources`). The templates are learned per kind of field (a plain
# value, a reference) so that they render fields no recording showed that way too.

VALUE, LABEL, LINK = "value", "label", "link"
_WHOLE = "_"
"""The key a rendered field is put under while it is traced, so a field rendered as one
value (its label) has a path too: `[]` once the key is taken off."""

Params = tuple[tuple[str, str], ...]
Labeller = Callable[[str, Any], Any]
"""(field, plain value) -> the label a rendering shows for it."""


@dataclass(frozen=True, slots=True)
class RenderedAnswer:
    """One answer with records: its resource and query parameters and, when it rendered its
    records another way, each record as the plain answer shows it beside the rendered one."""

    resource: str
    params: Params
    pairs: list[tuple[dict[str, Any], dict[str, Any]]]
    rendered: bool
    exact: bool = False
    """Whether the answer carried the plain values itself (every field beside its label)."""
    session: int = 0
    exchange: str = ""


def is_link(value: Any) -> bool:
    """Whether a plain answer's field is a reference shown as `{link, value}`."""
    return type(value) is dict and "link" in value and "value" in value


def plain_value(shown: Any) -> Any:
    """The value a plain answer's field holds (a reference's id)."""
    return shown["value"] if is_link(shown) else shown


def field_sources(shown: Any, label: Any) -> dict[str, Any]:
    """What a rendered field may be made of: the plain answer's value, its label, and a
    reference's link."""
    if is_link(shown):
        return {VALUE: shown["value"], LABEL: label, LINK: shown["link"]}
    return {VALUE: shown, LABEL: label}


def render_record(
    rendering: Rendering, shown: Mapping[str, Any], label: Labeller
) -> dict[str, Any]:
    """A record's plain answer in `rendering`."""
    out: dict[str, Any] = {}
    for name, value in shown.items():
        template = _template_for(rendering, name, value)
        if not template:
            out[name] = value
            continue
        out[name] = _rendered(template, field_sources(value, label(name, plain_value(value))))
    return out


def _template_for(rendering: Rendering, name: str, value: Any) -> list[ViewField]:
    """A field's own template where it holds a value, else its format's, else its kind's."""
    plain = plain_value(value)
    if not _empty(plain):
        own = rendering.fields.get(name)
        if own is not None:
            return own
        shaped = rendering.formats.get(_format(plain) or "")
        if shaped is not None:
            return shaped
    return rendering.reference if is_link(value) else rendering.value


def _format(value: Any) -> str | None:
    return string_format(value) if isinstance(value, str) else None


def _rendered(template: list[ViewField], index: Mapping[str, Any]) -> Any:
    shaped: dict[str, Any] = {}
    for part in template:
        value = part.value if part.source is None else index.get(part.source[0], part.value)
        _put(shaped, [_WHOLE, *part.path], copy.deepcopy(value))
    return shaped.get(_WHOLE)


def _empty(value: Any) -> bool:
    return value is None or value == ""


# learning ---------------------------------------------------------------------------------

_Example = tuple[dict[str, Any], dict[str, Any]]
"""(the field's sources, `{_: the rendered field}`)."""


def learn_renderings(
    answers: Sequence[RenderedAnswer], labels: Callable[[str, str, Any], Any]
) -> list[Rendering]:
    """The renderings the answers show, each selected by the values of the fewest query
    parameters that tell the answers' shapes apart (`_selecting`). `labels(resource, field,
    value)` is the label learned for a value."""
    # A rendered answer none of whose records could be paired with a plain one says nothing.
    answers = [answer for answer in answers if answer.pairs or not answer.rendered]
    shapes = [(answer.params, _signature(answer)) for answer in answers]
    names = _selecting(shapes)
    groups: dict[tuple[str, ...], list[RenderedAnswer]] = {}
    for answer in answers:
        if answer.rendered:
            groups.setdefault(_selected(dict(answer.params), names), []).append(answer)
    found: list[Rendering] = []
    for key, group in sorted(groups.items()):
        params = {name: value for name, value in zip(names, key, strict=True) if value}
        if params:
            found.append(_rendering(params, group, labels))
    return found


_Signature = tuple[Any, Any]
_PLAIN: _Signature = ("value", None)


def _signature(answer: RenderedAnswer) -> _Signature:
    """How an answer shows a plain value and a reference: the keys of the rendered field, or
    `value` when it is one value (None: the answer showed no reference)."""
    if not answer.rendered:
        return _PLAIN
    kinds: dict[bool, Counter[Any]] = {False: Counter(), True: Counter()}
    for plain, shown in answer.pairs:
        for name, rendered in shown.items():
            if name in plain:
                form = tuple(sorted(rendered)) if isinstance(rendered, dict) else "value"
                kinds[is_link(plain[name])][form] += 1
    value, reference = (
        counts.most_common(1)[0][0] if counts else None for counts in (kinds[False], kinds[True])
    )
    return value, reference


def _selecting(shapes: list[tuple[Params, _Signature]]) -> list[str]:
    """The fewest query parameters whose values tell the answers' shapes apart, added one at
    a time while each leaves fewer answers shaped unlike the others of their group."""
    candidates = sorted({name for params, shape in shapes if shape != _PLAIN for name, _ in params})
    chosen: list[str] = []
    left = _conflicts(shapes, chosen)
    while left and candidates:
        best = min(candidates, key=lambda name: (_conflicts(shapes, [*chosen, name]), name))
        after = _conflicts(shapes, [*chosen, best])
        if after >= left:
            break
        chosen.append(best)
        candidates.remove(best)
        left = after
    return chosen


def _selected(params: Mapping[str, str], names: Sequence[str]) -> tuple[str, ...]:
    return tuple(params.get(name, "").lower() for name in names)


def _conflicts(shapes: list[tuple[Params, _Signature]], names: Sequence[str]) -> int:
    """Answers shaped unlike most of those with the same values of `names` (an answer that
    showed no reference agrees with any shape of one)."""
    groups: dict[tuple[str, ...], list[_Signature]] = {}
    for params, shape in shapes:
        groups.setdefault(_selected(dict(params), names), []).append(shape)
    count = 0
    for group in groups.values():
        value = Counter(shape[0] for shape in group).most_common(1)[0][0]
        shown = Counter(shape[1] for shape in group if shape[1] is not None)
        reference = shown.most_common(1)[0][0] if shown else None
        count += sum(
            1
            for shape in group
            if shape[0] != value or (shape[1] is not None and shape[1] != reference)
        )
    return count


def _rendering(
    params: dict[str, str], group: list[RenderedAnswer], labels: Callable[[str, str, Any], Any]
) -> Rendering:
    """A rendering's templates: one per kind of field, from every answer, and a field's own
    where its kind's does not reproduce how its values were rendered, from the answers that
    carried the values themselves (another answer's plain record may be of another time)."""
    by_kind: dict[bool, list[_Example]] = {False: [], True: []}
    by_field: dict[str, list[_Example]] = {}
    for answer in group:
        for plain, shown in answer.pairs:
            for name, rendered in shown.items():
                if name not in plain:
                    continue
                value = plain_value(plain[name])
                index = field_sources(plain[name], labels(answer.resource, name, value))
                example = (index, {_WHOLE: rendered})
                by_kind[is_link(plain[name])].append(example)
                if answer.exact and not _empty(value):
                    by_field.setdefault(name, []).append(example)
    value, reference = _template(by_kind[False]), _template(by_kind[True])
    formats = _own_templates(_by_format(by_field), lambda _: value)
    made = Rendering(params=params, value=value, reference=reference, formats=formats)
    own = _own_templates(by_field, lambda name: _template_for(made, name, _shown(by_field[name])))
    sessions = {answer.session for answer in group}
    evidence = Evidence(
        samples=len(group),
        sessions=len(sessions),
        examples=sorted(answer.exchange for answer in group)[:3],
        confidence=round(len(group) / (len(group) + 1), 3),
    )
    return made.model_copy(update={"fields": own, "evidence": evidence})


def label_tables(answers: Sequence[RenderedAnswer]) -> dict[tuple[str, str], dict[str, str]]:
    """(resource, field) -> value -> the label the rendered answers showed for it: the one
    text a rendered field holds that is neither its value nor its link, as most answers
    showed it (an answer paired with an earlier plain one may have seen another value)."""
    votes: dict[tuple[str, str], dict[str, Counter[str]]] = {}
    for answer in answers:
        for plain, shown in answer.pairs:
            for name, rendered in shown.items():
                value = plain_value(plain.get(name))
                if _empty(value) or isinstance(value, dict | list) or name not in plain:
                    continue
                label = _label_in(rendered, field_sources(plain[name], None))
                if label is not None:
                    table = votes.setdefault((answer.resource, name), {})
                    table.setdefault(_text(value), Counter())[label] += 1
    return {
        key: {value: counts.most_common(1)[0][0] for value, counts in sorted(found.items())}
        for key, found in votes.items()
    }


def _label_in(rendered: Any, index: Mapping[str, Any]) -> str | None:
    """The one text of a rendered field that is neither its value nor its link, when the
    field shows one of those too: what it labels is then certain."""
    known = {_text(index[VALUE])} | ({_text(index[LINK])} if LINK in index else set())
    texts = {item for _, item in leaves(rendered)} if isinstance(rendered, dict) else {rendered}
    other = {text for text in texts if isinstance(text, str) and text not in known}
    return other.pop() if len(other) == 1 and texts & known else None


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _by_format(by_field: Mapping[str, list[_Example]]) -> dict[str, list[_Example]]:
    """The examples of plain values, by the format of their values."""
    found: dict[str, list[_Example]] = {}
    for examples in by_field.values():
        for example in examples:
            shaped = _format(example[0][VALUE]) if LINK not in example[0] else None
            if shaped is not None:
                found.setdefault(shaped, []).append(example)
    return found


def _shown(examples: list[_Example]) -> Any:
    """The plain answer's value of a field, as its first example's sources hold it."""
    index = examples[0][0]
    return {LINK: index[LINK], VALUE: index[VALUE]} if LINK in index else index[VALUE]


def _own_templates(
    groups: Mapping[str, list[_Example]], usual: Callable[[str], list[ViewField]]
) -> dict[str, list[ViewField]]:
    """The groups' own templates, where the usual one does not reproduce their examples."""
    return {
        key: _template(examples)
        for key, examples in sorted(groups.items())
        if not _reproduces(usual(key), examples)
    }


def _reproduces(template: list[ViewField], examples: list[_Example]) -> bool:
    done = sum(bool(_rendered(template, index) == view[_WHOLE]) for index, view in examples)
    return done * 2 > len(examples)


def _template(examples: list[_Example]) -> list[ViewField]:
    """How fields render, from examples of them: each part most of them hold, traced to the
    field's source most of its values agree with, else the usual constant."""
    shown = [dict(leaves(view)) for _, view in examples]
    counts: Counter[Path] = Counter(path for values in shown for path in values)
    template: list[ViewField] = []
    for path, count in counts.items():
        if count * 2 > len(examples):
            pairs = [
                (index, values[path])
                for (index, _), values in zip(examples, shown, strict=True)
                if path in values
            ]
            template.append(_traced(path, pairs))
    return template


def _traced(path: Path, pairs: list[tuple[dict[str, Any], Any]]) -> ViewField:
    """Where one part of a rendered field comes from: the source whose value it holds most
    often where that says something (distinctive text), then at all, then the source named
    like the part (a `value` is the value where the label is the same)."""

    def score(place: str) -> tuple[int, int, bool]:
        held = [(index.get(place, _ABSENT), value) for index, value in pairs]
        agreeing = [value for source, value in held if source == value]
        return sum(map(_distinctive, agreeing)), len(agreeing), place == path[-1]

    places = sorted({place for index, _ in pairs for place in index})
    best = max(places, key=lambda place: (score(place), place), default=None)
    usual, count = Counter(_key(value) for _, value in pairs).most_common(1)[0]
    sample = _json(next(value for _, value in pairs if _key(value) == usual))
    constant = len(pairs) >= 2 and count * 2 > len(pairs)
    if best is None or (constant and score(best)[1] * 2 <= len(pairs)):
        return ViewField(path=list(path[1:]), value=sample)
    return ViewField(path=list(path[1:]), source=[best], value=None)
