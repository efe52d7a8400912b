"""Answering records in the rendering a request's query parameters ask for.

A learned model's `Conventions.renderings` say which query parameters select another
rendering of every record (each field beside its label, or its label alone) and how each
field is made from what the plain answer shows (`views.render_record`). The mock renders the
plain answer first, then this, on every answer that holds records: lists, gets and writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from myna.mocks.contract import ResourceContract
from myna.mocks.render import to_string
from myna.mocks.store import Transaction
from myna.schemas.model import Rendering
from myna.schemas.views import render_record


def selected(renderings: Sequence[Rendering], query: Iterable[tuple[str, str]]) -> Rendering | None:
    """The rendering the request asks for: the one whose parameters it sends, all of them with
    the same values (letter case aside), naming the most."""
    sent = {name: value.lower() for name, value in query}
    best: Rendering | None = None
    for rendering in renderings:
        if all(sent.get(name) == value.lower() for name, value in rendering.params.items()) and (
            best is None or len(rendering.params) > len(best.params)
        ):
            best = rendering
    return best


@dataclass(frozen=True, slots=True)
class Labeller:
    """The label of one field's value: the one the recordings showed for it, else the display
    field of the record a reference names, else the value itself."""

    resource: ResourceContract
    resources: Mapping[str, ResourceContract]
    tx: Transaction
    as_strings: bool

    def __call__(self, name: str, value: Any) -> Any:
        spec = self.resource.resource.fields.get(name)
        if spec is None or value is None or value == "" or isinstance(value, dict | list):
            return value
        found = spec.labels.get(str(value))
        if found is not None:
            return found
        reference = self.resource.references.get(name)
        target = self.resources.get(reference.resource) if reference is not None else None
        shown = target.resource.display_field if target is not None else None
        if target is None or shown is None:
            return value
        record = self.tx.get(target.resource.name, str(value))
        if record is None or record.get(shown) is None:
            return value
        return to_string(record[shown]) if self.as_strings else record[shown]


def as_asked(
    rendering: Rendering,
    rendered: list[dict[str, Any]],
    label: Labeller,
) -> list[dict[str, Any]]:
    """Plain answers' records in `rendering`."""
    return [render_record(rendering, record, label) for record in rendered]
