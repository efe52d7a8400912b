from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from myna.itsm.importers import import_history, to_servicenow_records
from myna.itsm.pseudonymise import Pseudonymiser
from tests.itsm.conftest import UCI_HEADER, uci_row


def test_the_same_person_gets_the_same_persona_whatever_the_spelling() -> None:
    pseudonymiser = Pseudonymiser("k1")
    assert pseudonymiser.persona("Abel Tuter") == pseudonymiser.persona("abel  TUTER")


def test_a_fresh_pseudonymiser_with_the_same_key_agrees_and_another_key_does_not() -> None:
    first = Pseudonymiser("k1").persona("Abel Tuter")
    assert Pseudonymiser(b"k1").persona("Abel Tuter") == first
    assert Pseudonymiser("k2").persona("Abel Tuter").key != first.key


def test_many_people_get_distinct_user_names_and_emails() -> None:
    pseudonymiser = Pseudonymiser("k1")
    personas = [pseudonymiser.persona(f"Caller {n}") for n in range(3000)]
    assert len({p.user_name for p in personas}) == 3000
    assert len({p.email for p in personas}) == 3000
    assert all(p.email.endswith("@example.com") for p in personas)


def test_an_empty_key_is_refused() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        Pseudonymiser("")


def test_free_text_naming_a_known_person_is_scrubbed() -> None:
    pseudonymiser = Pseudonymiser("k1")
    persona = pseudonymiser.persona("Abel Tuter")
    assert pseudonymiser.scrub("Called ABEL TUTER back; Abel Tuters is someone else") == (
        f"Called {persona.name} back; Abel Tuters is someone else"
    )


def test_import_replaces_every_person_consistently_and_leaves_no_original_name(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(
        UCI_HEADER,
        uci_row("INC1", "New", "01-03-2016 09:05", mod=0, group="Group 1", assignee="Resolver 31"),
        uci_row(
            "INC2", "Active", "01-03-2016 09:05", mod=0, group="Group 1", assignee="Resolver 31"
        ),
    )
    plain, _ = import_history(path)
    masked, _ = import_history(path, pseudonymise_key="secret")
    again, _ = import_history(path, pseudonymise_key="secret")
    assert masked.pseudonymised
    assert masked.incidents[0].assigned_to == masked.incidents[1].assigned_to
    assert [u.name for u in masked.users.values()] == [u.name for u in again.users.values()]
    assert set(masked.users) == set(again.users)
    assert set(masked.users).isdisjoint(plain.users)
    originals = {u.name for u in plain.users.values()}
    dumped = json.dumps(to_servicenow_records(masked))
    assert not [name for name in originals if name in dumped]
    # Groups are not people: they keep their names.
    assert {g.name for g in masked.groups.values()} == {"Group 1"}


def test_people_named_in_notes_before_they_appear_in_a_reference_are_still_scrubbed(
    tmp_path: Path,
) -> None:
    records = [
        {
            "number": "INC0000001",
            "short_description": "Beth Anglin cannot print",
            "opened_at": "2026-01-05 09:00:00",
            "caller_id": {"value": "a" * 32, "display_value": "Abel Tuter"},
        },
        {
            "number": "INC0000002",
            "short_description": "Printer fixed",
            "opened_at": "2026-01-05 10:00:00",
            "caller_id": {"value": "b" * 32, "display_value": "Beth Anglin"},
            "close_notes": "Abel Tuter confirmed",
        },
    ]
    path = tmp_path / "incident.json"
    path.write_text(json.dumps({"records": records}), encoding="utf-8")
    history, _ = import_history(path, pseudonymise_key="secret")
    first, second = history.incidents
    beth = history.users[second.caller or ""].name
    assert first.short_description == f"{beth} cannot print"
    dumped = json.dumps(to_servicenow_records(history))
    assert "Abel Tuter" not in dumped
    assert "Beth Anglin" not in dumped
    # Source sys_ids are replaced too: they would link the pseudonym back to the instance.
    assert "a" * 32 not in dumped


@pytest.mark.parametrize(
    ("text", "replaced"),
    [
        ("Abel Tuter called", True),
        ("abel.tuter called", True),
        ("Abel\\nTuter called", False),
        ("Abel Tutering called", False),
        ("Abel called", False),
    ],
    ids=["blank", "user-name-dot", "line-break", "longer-word", "first-name-only"],
)
def test_scrubbing_matches_whole_names_word_by_word(text: str, replaced: bool) -> None:
    pseudonymiser = Pseudonymiser("k1")
    persona = pseudonymiser.persona("Abel Tuter")
    scrubbed = pseudonymiser.scrub(text.replace("\\n", "\n"))
    assert (persona.name in scrubbed) is replaced
