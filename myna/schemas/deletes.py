"""Soft deletes: a DELETE that marks a record instead of removing it.

Notion's DELETE /blocks/{id} answers the record with `in_trash: true` and the record is still
there: a later GET answers it, a PATCH with `archived: false` brings it back. The traces show
both halves: what the delete answered beside the record's last answer (`SoftDelete.effects`:
the fields every delete set to the same value), and a successful call on the record after it
was deleted (`SoftDelete.survives`). Without the second, a delete is a delete. Pure functions;
the learner collects the samples.
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
