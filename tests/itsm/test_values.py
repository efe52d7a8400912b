from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.itsm.importers.values import (
    MISSING_MARKERS,
    HoldReason,
    IncidentState,
    close_code,
    format_datetime,
    parse_bool,
    parse_datetime,
    parse_level,
    parse_state,
    priority_of,
)

minute_times = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2099, 12, 31)).map(
    lambda t: t.replace(second=0, microsecond=0)
)


@given(minute_times, st.sampled_from(["%d-%m-%Y %H:%M", "%d/%m/%Y %H:%M", "%Y-%m-%d %H:%M:%S"]))
def test_every_accepted_date_form_reads_back_the_same_moment(moment: datetime, form: str) -> None:
    assert parse_datetime(moment.strftime(form)) == moment


@given(minute_times)
def test_servicenow_form_round_trips(moment: datetime) -> None:
    assert parse_datetime(format_datetime(moment)) == moment


@pytest.mark.parametrize(
    "text",
    [
        "31-02-2016 10:00",
        "29-02-2015 10:00",
        "01-13-2016 10:00",
        "2016/02/01",
        "yesterday",
        "12:00",
    ],
    ids=["feb-31", "not-leap", "month-13", "slashed-iso", "word", "time-only"],
)
def test_impossible_or_foreign_dates_are_refused_with_the_expected_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"DD-MM-YYYY|not a real date"):
        parse_datetime(text)


@given(st.sampled_from(sorted(MISSING_MARKERS)), st.sampled_from(["", " ", "  "]))
def test_missing_markers_read_as_none_in_every_parser(marker: str, pad: str) -> None:
    text = f"{pad}{marker.upper()}{pad}"
    assert parse_datetime(text) is None
    assert parse_bool(text) is None
    assert parse_level(text, low=1, high=3) is None
    assert parse_state(text) is None


@given(
    st.sampled_from(["true", "false", "yes", "no", "1", "0", "t", "f"]),
    st.sampled_from([str.lower, str.upper, str.title]),
)
def test_booleans_in_any_case(word: str, case: object) -> None:
    assert callable(case)
    expected = word in ("true", "yes", "1", "t")
    assert parse_bool(case(word)) is expected


def test_a_non_boolean_says_what_was_expected() -> None:
    with pytest.raises(ValueError, match="expected a boolean"):
        parse_bool("maybe")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("3 - Moderate", 3), ("1 - High", 1), ("2", 2), (" 5 - Planning ", 5)],
    ids=["label", "high", "bare", "padded"],
)
def test_levels_read_their_number(text: str, expected: int) -> None:
    assert parse_level(text, low=1, high=5) == expected


def test_a_level_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="between 1 and 3"):
        parse_level("4 - Low", low=1, high=3)


@pytest.mark.parametrize(
    ("label", "state", "reason"),
    [
        ("New", IncidentState.NEW, None),
        ("Active", IncidentState.IN_PROGRESS, None),
        ("Awaiting User Info", IncidentState.ON_HOLD, HoldReason.AWAITING_CALLER),
        ("Awaiting Evidence", IncidentState.ON_HOLD, HoldReason.AWAITING_CALLER),
        ("Awaiting Problem", IncidentState.ON_HOLD, HoldReason.AWAITING_PROBLEM),
        ("Awaiting Vendor", IncidentState.ON_HOLD, HoldReason.AWAITING_VENDOR),
        ("Resolved", IncidentState.RESOLVED, None),
        ("Closed", IncidentState.CLOSED, None),
        ("Cancelled", IncidentState.CANCELED, None),
        ("3", IncidentState.ON_HOLD, None),
        ("7", IncidentState.CLOSED, None),
    ],
    ids=lambda value: str(value),
)
def test_source_states_map_onto_servicenows_state_model(
    label: str, state: IncidentState, reason: HoldReason | None
) -> None:
    assert parse_state(label) == (state, reason)


def test_an_unknown_state_is_refused() -> None:
    with pytest.raises(ValueError, match="expected an incident state"):
        parse_state("Pending Approval")


@pytest.mark.parametrize(
    ("impact", "urgency", "priority"),
    [
        (1, 1, 1),
        (1, 2, 2),
        (2, 1, 2),
        (2, 2, 3),
        (1, 3, 3),
        (3, 1, 3),
        (2, 3, 4),
        (3, 2, 4),
        (3, 3, 5),
    ],
)
def test_priority_follows_servicenows_default_matrix(
    impact: int, urgency: int, priority: int
) -> None:
    assert priority_of(impact, urgency) == priority


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("solution PROVIDED", ("Solution provided", True)),
        ("Solved (Work Around)", ("Workaround provided", True)),
        ("Closed/Resolved by Caller", ("Resolved by caller", True)),
        ("No error - works as designed", ("No resolution provided", True)),
        ("Operator error", ("User error", True)),
        ("code 6", ("code 6", False)),
        ("?", (None, True)),
    ],
    ids=[
        "any-case",
        "legacy-workaround",
        "legacy-caller",
        "bpic",
        "bpic-user",
        "anonymised",
        "missing",
    ],
)
def test_close_codes_map_to_servicenows_vocabulary_or_are_kept(
    source: str, expected: tuple[str | None, bool]
) -> None:
    assert close_code(source) == expected
