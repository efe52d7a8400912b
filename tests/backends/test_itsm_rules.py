"""The ITSM rules both sides run, as plain functions over the overlay's state models."""

from __future__ import annotations

from myna.backends.itsm.rules import STATE_MODELS, Stamper, entered
from myna.backends.itsm.tables import table

NOW = "2026-01-05 09:30:00"
CALLER = "6816f79cc0a8016401c5a33be04be441"


def stamper(name: str, caller: str = CALLER) -> Stamper:
    def kind(column: str) -> tuple[str, str | None] | None:
        spec = table(name)
        if column not in spec.names:
            return None
        return spec.column(column).kind, spec.column(column).target

    return Stamper(NOW, caller, kind)


def test_resolving_an_incident_stamps_who_and_when_and_moves_its_incident_state() -> None:
    values = entered(STATE_MODELS["incident"], "2", {"state": "6"}, (), stamper("incident"))
    assert values == {"incident_state": "6", "resolved_at": NOW, "resolved_by": CALLER}


def test_closing_a_request_sets_its_request_state_and_stamps_the_closer() -> None:
    values = entered(STATE_MODELS["sc_request"], "2", {"state": "4"}, (), stamper("sc_request"))
    assert values == {
        "request_state": "closed_incomplete",
        "active": "false",
        "closed_at": NOW,
        "closed_by": CALLER,
    }


def test_a_write_that_stays_in_its_state_enters_nothing() -> None:
    assert entered(STATE_MODELS["incident"], "6", {"state": "6"}, (), stamper("incident")) == {}


def test_what_the_client_sent_wins_over_what_the_state_sets_but_not_over_a_stamp() -> None:
    values = entered(
        STATE_MODELS["incident"],
        "6",
        {"state": "7", "active": "true"},
        ("state", "active", "closed_at"),
        stamper("incident"),
    )
    assert values == {"incident_state": "7", "closed_at": NOW, "closed_by": CALLER}


def test_a_date_column_takes_the_day_and_a_caller_without_a_record_stamps_nobody() -> None:
    published = entered(
        STATE_MODELS["kb_knowledge"],
        "draft",
        {"workflow_state": "published"},
        (),
        stamper("kb_knowledge"),
    )
    assert published == {"published": "2026-01-05"}
    closed = entered(STATE_MODELS["problem"], "106", {"state": "107"}, (), stamper("problem", ""))
    assert closed == {"problem_state": "107", "active": "false", "closed_at": NOW}
