"""Effects learned from writes: soft deletes, actions that store what they were sent, and
PUTs that keep what they leave out."""

from __future__ import annotations

import pytest

from myna.schemas.effects import SoftDelete, echoed_effects, keeps_unsent, soft_delete_effects
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


def test_an_action_stores_what_every_answer_held_as_sent() -> None:
    pairs = [
        (
            {"parent": {"page_id": f"p{n}"}, "note": "moving"},
            {"id": "x", "parent": {"type": "page_id", "page_id": f"p{n}"}, "note": "kept"},
        )
        for n in range(3)
    ]

    assert echoed_effects(pairs) == [Effect(field="parent", from_request="/parent")]


def test_an_action_that_answered_otherwise_once_stores_nothing() -> None:
    pairs = [
        ({"parent": {"page_id": "p1"}}, {"parent": {"page_id": "p1"}}),
        ({"parent": {"page_id": "p2"}}, {"parent": {"page_id": "p1"}}),
    ]

    assert echoed_effects(pairs) == []


_TICKET = {"id": "t1", "subject": "Printer", "owner": "u1", "updated": "10:00"}
_WRITABLE = {"subject", "owner"}


@pytest.mark.parametrize(
    ("answered", "partial"),
    [
        pytest.param({**_TICKET, "subject": "Jammed", "updated": "10:05"}, True, id="kept"),
        pytest.param({**_TICKET, "subject": "Jammed", "owner": None}, False, id="cleared"),
        pytest.param({**_TICKET, "subject": "Jammed", "owner": ""}, False, id="emptied"),
    ],
)
def test_a_put_is_partial_when_what_it_left_out_kept_its_value(
    answered: dict[str, object], partial: bool
) -> None:
    assert keeps_unsent([(_TICKET, {"subject": "Jammed"}, answered)], _WRITABLE) is partial


def test_a_put_that_sends_every_writable_field_says_nothing() -> None:
    sent = {"subject": "Jammed", "owner": "u2"}
    # `updated` was left out and kept, but clients never write it.
    assert not keeps_unsent([(_TICKET, sent, {**_TICKET, **sent})], _WRITABLE)
