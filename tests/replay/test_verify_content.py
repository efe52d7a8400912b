"""Verifiers that judge content: free text of substance, references to records the agent made,
bounded and selective change guards, side effects charged to their records, and a reward that
doing nothing cannot earn."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.mocks.store import RecordChange
from myna.replay.episode import (
    AllowedChange,
    Check,
    Environment,
    FieldEquals,
    FieldRefers,
    Harmless,
    ModelRef,
    NoCollateral,
    Policy,
    SideEffect,
    TextCheck,
    Verifier,
)
from myna.replay.text import informative, mentions, repeats, stem, substance_problems
from myna.replay.verify import make_outcome, verify
from tests.replay.conftest import A1, A2, incident_world

INSTRUCTION = "Resolve INC0010002: the VPN concentrator was restarted and the drops stopped."
ENV = Environment(
    model=ModelRef(name="fake"),
    initial_world=incident_world(),
    id_fields={"incident": "sys_id", "sys_user": "sys_id"},
)
INC1, INC2 = incident_world()["incident"]
JOURNAL = SideEffect(
    resource="sys_journal_field", id_field="element_id", table_field="name", field_field="element"
)


def _update(record: dict[str, Any], **values: str) -> RecordChange:
    return RecordChange("incident", record["sys_id"], "updated", record, {**record, **values})


def _note(
    on: str, text: str = "Called the user back.", element: str = "work_notes"
) -> RecordChange:
    row = {"sys_id": f"j{on[:8]}{element}{len(text)}", "element_id": on, "name": "incident"}
    row |= {"element": element, "value": text}
    return RecordChange("sys_journal_field", row["sys_id"], "created", None, row)


def _created(number: str, **values: str) -> RecordChange:
    record = {"sys_id": number.lower(), "number": number, **values}
    return RecordChange("problem", record["sys_id"], "created", None, record)


def _verdict(check: Check, *changes: RecordChange) -> tuple[bool, str]:
    result = verify(Verifier(checks=[check]), make_outcome(ENV, changes))
    return result.passed, result.checks[0].detail


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (".", "informative words"),
        ("Done.", "informative words"),
        ("Fixed as requested, closing the ticket.", "informative words"),
        (INSTRUCTION, "repeats the instruction"),
        ("The printer was replaced by a new one today.", "names 0 of the 2"),
        ("Restarted the VPN concentrator; the hourly drops have stopped since.", None),
        ("VPN concentrator rebooted, no drops since 10:00, user confirmed.", None),
    ],
    ids=["dot", "done", "boilerplate", "copy", "off-topic", "substance", "other-words"],
)
def test_free_text_is_judged_for_substance(text: str, problem: str | None) -> None:
    found = list(
        substance_problems(
            text,
            mentions_of=[["vpn"], ["concentrator", "restart"], ["drop", "stop"]],
            min_mentions=2,
            min_words=3,
            not_copy_of=INSTRUCTION,
        )
    )
    if problem is None:
        assert found == []
    else:
        assert any(problem in f for f in found), found


def test_words_compare_by_stem_and_identifiers_whole() -> None:
    assert mentions("Restarting the concentrators", "restarted concentrator")
    assert mentions("stopped", "stop")
    assert not mentions("INC00100021", "INC0010002")
    assert stem("inc0010002") == "inc0010002"
    assert informative("Done, fixed as requested.") == []


@given(st.lists(st.sampled_from(["please", "done", "ok", "it", "the"]), max_size=2))
def test_the_instruction_with_filler_around_it_still_repeats_it(extra: list[str]) -> None:
    assert repeats(" ".join([*extra, INSTRUCTION, *extra]), INSTRUCTION)


def test_a_note_of_its_own_that_quotes_the_instruction_does_not_repeat_it() -> None:
    note = f"{INSTRUCTION} Confirmed with the caller on a follow-up call; tunnel stable overnight."
    assert not repeats(note, INSTRUCTION)


def test_a_text_check_on_journal_entries_needs_one_entry_of_substance() -> None:
    check = TextCheck(
        name="note",
        resource="sys_journal_field",
        where={"element_id": A2, "element": "work_notes"},
        field="value",
        quantifier="any",
        mentions=[["vpn"]],
        min_words=2,
    )
    assert not _verdict(check, _note(A2, "."))[0]
    assert not _verdict(check, _note(A2, "."), _note(A1, "VPN tunnel reset, works again."))[0]
    assert _verdict(check, _note(A2, "VPN tunnel reset, works again."))[0]


def test_a_reference_to_a_record_the_agent_created_is_checked_by_where_it_points() -> None:
    check = FieldRefers(
        name="linked",
        resource="incident",
        where={"number": "INC0010002"},
        field="problem_id",
        target_resource="problem",
        target_where={"cmdb_ci": "mail"},
    )
    made = _created("PRB0040001", cmdb_ci="mail")
    assert _verdict(check, made, _update(INC2, problem_id="prb0040001"))[0]
    assert not _verdict(check, made, _update(INC2, problem_id="other"))[0]
    two = _created("PRB0040002", cmdb_ci="mail")
    passed, detail = _verdict(check, made, two, _update(INC2, problem_id="prb0040001"))
    assert not passed
    assert "2 records" in detail


GUARD = NoCollateral(
    name="guard",
    allowed=[
        AllowedChange(resource="incident", where={"state": "2"}, fields=["urgency"]),
        AllowedChange(
            resource="problem", kinds=["created"], where={"cmdb_ci": "mail"}, max_count=1
        ),
    ],
    harmless=[Harmless(resource="incident", record_id=A2, fields=["work_notes", "comments"])],
    side_effects=[JOURNAL],
    ignore_resources=["sys_journal_field"],
)


@pytest.mark.parametrize(
    ("changes", "ok", "said"),
    [
        ((_update(INC2, urgency="1"), _update(INC1, urgency="1")), True, ""),
        ((_update(INC2, urgency="1", state="6"),), False, "['state', 'urgency']"),
        ((_created("PRB1", cmdb_ci="mail"),), True, ""),
        ((_created("PRB1", cmdb_ci="mail"), _created("PRB2", cmdb_ci="mail")), False, "prb2"),
        ((_created("PRB1", cmdb_ci="printer"),), False, "prb1"),
        ((_update(INC2, work_notes="Called back."), _note(A2)), True, ""),
        ((_update(INC1, work_notes="Called back."), _note(A1)), False, f"incident {A1} work_notes"),
        ((_note(A1, element="comments"),), False, f"incident {A1} comments"),
    ],
    ids=[
        "where-selects-both",
        "field-not-allowed",
        "one-create",
        "second-create",
        "create-elsewhere",
        "note-on-target",
        "note-on-other",
        "journal-entry-alone",
    ],
)
def test_the_change_guard_is_bounded_and_selective(
    changes: tuple[RecordChange, ...], ok: bool, said: str
) -> None:
    passed, detail = _verdict(GUARD, *changes)
    assert passed == ok, detail
    assert said in detail


def _equals(name: str, number: str, field: str, value: str) -> FieldEquals:
    return FieldEquals(
        name=name, resource="incident", where={"number": number}, field=field, value=value
    )


def test_doing_nothing_earns_nothing_and_a_broken_guard_zeroes_the_reward() -> None:
    guard = NoCollateral(name="guard", allowed=[AllowedChange(resource="incident", record_id=A2)])
    verifier = Verifier(
        checks=[
            _equals("resolved", "INC0010002", "state", "6"),
            _equals("urgent", "INC0010002", "urgency", "1"),
            _equals("already", "INC0010001", "state", "2"),
            guard,
            Policy(name="policy"),
        ]
    )
    held = {"already", "guard", "policy"}
    nothing = verify(verifier, make_outcome(ENV), held)
    half = verify(verifier, make_outcome(ENV, [_update(INC2, state="6")]), held)
    both = [_update(INC2, state="6"), _update(INC1, state="6")]
    reckless = verify(verifier, make_outcome(ENV, both), held)
    assert (nothing.reward, half.reward, reckless.reward) == (0.0, 0.5, 0.0)
    assert {c.name: c.role for c in half.checks}["already"] == "guard"
    assert not half.passed
