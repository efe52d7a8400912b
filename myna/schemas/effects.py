"""Effects learned from what writes did to their records.

Soft deletes: a DELETE that marks a record instead of removing it.

Notion's DELETE /blocks/{id} answers the record with `in_trash: true` and the record is still
there: a later GET answers it, a PATCH with `archived: false` brings it back. The traces show
both halves: what the delete answered beside the record's last answer (`SoftDelete.effects`:
the fields every delete set to the same value), and a successful call on the record after it
was deleted (`SoftDelete.survives`). Without the second, a delete is a delete.

Echoes: an action that stores part of what it was sent (Notion's POST /pages/{id}/move takes
a `parent` and the page answered has it). Pure functions; the learner collects the samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from myna.schemas.model import Effect

_SCALARS = (bool, int, float, str)


@dataclass
class SoftDelete:
    """What the deletes of one operation showed."""

    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    """(the record's last answer before the delete, the delete's answer)."""
    survives: int = 0
    """Deleted records a later call still answered successfully."""
    removed: int = 0
    """Deleted records a later call answered 404 or 410."""


def soft_delete_effects(seen: SoftDelete) -> list[Effect]:
    """The fields a delete sets when it only marks the record, or none when it removes it."""
    if not seen.pairs or not seen.survives or seen.removed:
        return []
    changed: dict[str, Any] | None = None
    for before, after in seen.pairs:
        here = {
            name: value
            for name, value in after.items()
            if isinstance(value, _SCALARS) and name in before and before[name] != value
        }
        changed = (
            here
            if changed is None
            else {name: value for name, value in changed.items() if here.get(name, _NONE) == value}
        )
    return [Effect(field=name, value=value) for name, value in sorted((changed or {}).items())]


_NONE = object()


def echoed_effects(pairs: list[tuple[Any, dict[str, Any]]]) -> list[Effect]:
    """The top-level request fields every answer of an action held, as sent or as part of
    what it held (`{"page_id": X}` within `{"type": "page_id", "page_id": X}`): the action
    stores them."""
    if not pairs or not all(isinstance(sent, dict) for sent, _ in pairs):
        return []
    names: set[str] | None = None
    for sent, answered in pairs:
        here = {
            name
            for name, value in sent.items()
            if name in answered and _within(value, answered[name])
        }
        names = here if names is None else names & here
    return [Effect(field=name, from_request=f"/{name}") for name in sorted(names or ())]


def _within(sent: Any, held: Any) -> bool:
    if isinstance(sent, dict) and isinstance(held, dict):
        return bool(sent) and all(
            key in held and _within(value, held[key]) for key, value in sent.items()
        )
    return bool(sent == held)


def keeps_unsent(
    examples: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]], writable: set[str]
) -> bool:
    """Whether a PUT changes only the fields it sends, as a PATCH does, from (the record's last
    answer before it, what it sent, what it answered): some writable field it left out held a
    value and kept it, and none it left out was cleared. A service whose PUTs always send every
    field shows neither, and keeps replace's meaning."""
    kept = cleared = 0
    for before, sent, after in examples:
        for name, value in before.items():
            if name in sent or name not in writable or value in (None, "", [], {}):
                continue
            if after.get(name) == value:
                kept += 1
            elif after.get(name) in (None, "", [], {}):
                cleared += 1
    return kept > 0 and not cleared
