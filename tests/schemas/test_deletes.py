"""Soft deletes: what a delete sets when the record survives it."""

from __future__ import annotations

from myna.schemas.deletes import SoftDelete, soft_delete_effects
from myna.schemas.model import Effect


def _pairs() -> list[tuple[dict[str, object], dict[str, object]]]:
    return [
        (
            {"id": f"r{n}", "trashed": False, "status": "open", "seen": n},
            {"id": f"r{n}", "trashed": True, "status": "open", "seen": n + 1},
        )
        for n in range(3)
    ]


def test_the_fields_every_delete_set_alike_are_its_effects() -> None:
    seen = SoftDelete(pairs=_pairs(), survives=1)

    assert soft_delete_effects(seen) == [Effect(field="trashed", value=True)]


def test_a_delete_no_later_call_survived_removes_the_record() -> None:
    assert soft_delete_effects(SoftDelete(pairs=_pairs())) == []


def test_a_later_404_says_the_delete_removes_the_record() -> None:
    assert soft_delete_effects(SoftDelete(pairs=_pairs(), survives=2, removed=1)) == []
