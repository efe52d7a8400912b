"""Learning the values a state's entry sets, from small literal entries."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from myna.schemas.entry_values import Entry, callers_on_entry, sets_on_entry, volatile_fields
from myna.schemas.model import FieldSpec, IdFormat, Reference, Resource

NOTHING: frozenset[str] = frozenset()


def _update(
    before: dict[str, Any],
    after: dict[str, Any],
    sent: dict[str, Any] | None,
    example: str,
    *,
    state: str = "Closed Won",
) -> Entry:
    return Entry(state, before, after, sent, session=int(example[1:]) % 2, example=example)


def _create(after: dict[str, Any], sent: dict[str, Any] | None, example: str) -> Entry:
    return Entry(after["stage"], None, after, sent, session=0, example=example)


def _won(example: str, **before: Any) -> Entry:
    """An opportunity moved to Closed Won by a client that sent only the stage."""
    return _update(
        {"stage": "Prospecting", "probability": 10, "closed": False, **before},
        {"stage": "Closed Won", "probability": 100, "closed": True},
        {"stage": "Closed Won"},
        example,
    )


def _learned(*entries: Entry, skip: frozenset[str] = NOTHING) -> dict[str, dict[str, Any]]:
    return {state: entry.values for state, entry in sets_on_entry(entries, "stage", skip).items()}


def test_what_every_entry_into_a_state_set_is_learned_with_its_evidence() -> None:
    learned = sets_on_entry([_won("x1"), _won("x2"), _won("x3")], "stage", NOTHING)

    assert learned["Closed Won"].values == {"closed": True, "probability": 100}
    evidence = learned["Closed Won"].evidence
    assert (evidence.samples, evidence.sessions, evidence.examples) == (3, 2, ["x1", "x2", "x3"])


def test_one_entry_is_not_enough() -> None:
    assert _learned(_won("x1")) == {}


def test_entries_that_disagree_teach_nothing_about_that_field() -> None:
    other = _update(
        {"stage": "Prospecting", "probability": 10, "closed": False},
        {"stage": "Closed Won", "probability": 90, "closed": True},
        {"stage": "Closed Won"},
        "x3",
    )

    assert _learned(_won("x1"), _won("x2"), other) == {"Closed Won": {"closed": True}}


def test_what_the_client_sent_every_time_is_the_clients_not_the_states() -> None:
    def resolve(example: str) -> Entry:
        return _update(
            {"stage": "Open", "code": ""},
            {"stage": "Closed Won", "code": "Solved"},
            {"stage": "Closed Won", "code": "Solved"},
            example,
        )

    assert _learned(resolve("x1"), resolve("x2")) == {}


def test_a_value_the_service_forces_over_what_the_client_sent_is_learned() -> None:
    forced = _update(
        {"stage": "Prospecting", "closed": False},
        {"stage": "Closed Won", "closed": True},
        {"stage": "Closed Won", "closed": False},
        "x1",
    )
    # The client sent "true" as a string once: it asked for what it got, which shows nothing.
    asked = _update(
        {"stage": "Prospecting", "closed": False},
        {"stage": "Closed Won", "closed": True},
        {"stage": "Closed Won", "closed": "true"},
        "x2",
    )

    assert _learned(forced, asked) == {"Closed Won": {"closed": True}}
    assert _learned(asked, asked) == {}


def test_a_value_that_was_already_there_is_not_set_by_the_state() -> None:
    # `active` is true before and after entering In Progress: nothing shows the state set it.
    def start(example: str) -> Entry:
        return _update(
            {"stage": "New", "active": "true"},
            {"stage": "In Progress", "active": "true"},
            {"stage": "In Progress"},
            example,
            state="In Progress",
        )

    assert _learned(start("x1"), start("x2")) == {}


def test_a_change_seen_without_its_request_still_counts() -> None:
    unknown = _update(
        {"stage": "Prospecting", "closed": False},
        {"stage": "Closed Won", "closed": True},
        None,
        "x1",
    )

    assert _learned(unknown, unknown) == {"Closed Won": {"closed": True}}


def test_creates_teach_a_default_that_depends_on_the_state_asked_for() -> None:
    entries = [
        _create({"stage": "Prospecting", "probability": 10, "region": "EU"}, {"stage": "x"}, "c1"),
        _create({"stage": "Prospecting", "probability": 10, "region": "EU"}, {"stage": "x"}, "c2"),
        _create({"stage": "Proposal", "probability": 75, "region": "EU"}, {"stage": "x"}, "c3"),
        _create({"stage": "Proposal", "probability": 75, "region": "EU"}, {"stage": "x"}, "c4"),
    ]

    # `region` is the same whatever the stage: a plain default, not the stage's doing.
    assert _learned(*entries) == {
        "Proposal": {"probability": 75},
        "Prospecting": {"probability": 10},
    }


def test_creates_whose_state_the_client_did_not_choose_teach_nothing() -> None:
    """An invoice is created `matched` and `unpaid` or `unmatched` and `blocked`: the service
    derived both from the invoice's lines, so neither status decides the other."""

    def invoice(match: str, payment: str, example: str) -> Entry:
        after = {"stage": match, "payment_status": payment}
        return _create(after, {"vendor": "V1", "lines": []}, example)

    entries = [
        invoice("matched", "unpaid", "c1"),
        invoice("matched", "unpaid", "c2"),
        invoice("unmatched", "blocked", "c3"),
        invoice("unmatched", "blocked", "c4"),
    ]

    assert _learned(*entries) == {}


def test_who_and_when_are_never_learned() -> None:
    def close(example: str) -> Entry:
        return _update(
            {
                "stage": "Open",
                "closed_at": "",
                "closed_by": "",
                "owner": "",
                "sys_updated_by": "system",
                "active": "true",
            },
            {
                "stage": "Closed Won",
                "closed_at": "2024-04-16 17:16:27",  # one clock in the recording
                "closed_by": "6816f79cc0a8016401c5a33be04be441",  # one user in the recording
                "owner": "0055g0000000002AAA",
                "sys_updated_by": "admin",
                "active": "false",
            },
            {"stage": "Closed Won"},
            example,
        )

    learned = _learned(close("x1"), close("x2"), skip=frozenset({"sys_updated_by"}))

    assert learned == {"Closed Won": {"active": "false"}}


def test_display_value_pairs_count_as_their_value() -> None:
    paired = _update(
        {"stage": "Open", "active": {"display_value": "true", "value": "true"}},
        {"stage": "Closed Won", "active": {"display_value": "false", "value": "false"}},
        {"stage": "Closed Won"},
        "x1",
    )
    plain = _update(
        {"stage": "Open", "active": "true"},
        {"stage": "Closed Won", "active": "false"},
        {"stage": "Closed Won"},
        "x2",
    )

    assert _learned(paired, plain) == {"Closed Won": {"active": "false"}}


def test_true_is_not_one() -> None:
    def close(value: Any, example: str) -> Entry:
        return _update(
            {"stage": "Open", "flag": 0}, {"stage": "Closed Won", "flag": value}, None, example
        )

    assert _learned(close(True, "x1"), close(1, "x2")) == {}
    assert _learned(close(1, "x1"), close(1.0, "x2")) == {"Closed Won": {"flag": 1}}


def test_volatile_fields_are_ids_minted_numbers_references_and_bookkeeping() -> None:
    resource = Resource(
        name="incident",
        id_field="sys_id",
        id_format=IdFormat(kind="hex32"),
        fields={
            name: FieldSpec(name=name)
            for name in ("sys_id", "active", "sys_updated_on", "close_code")
        }
        | {
            "number": FieldSpec(name="number", generator=IdFormat(kind="sequence", prefix="INC")),
            "closed_by": FieldSpec(name="closed_by", reference=Reference(resource="sys_user")),
        },
    )

    assert volatile_fields(resource) == {"sys_id", "number", "closed_by", "sys_updated_on"}


# -- any mapping is recovered ------------------------------------------------------------------

_states = st.from_regex(r"[A-Z][a-z]{1,8}", fullmatch=True).filter(lambda name: name != "Before")
_fields = st.from_regex(r"[a-z]{1,8}", fullmatch=True).filter(lambda name: name != "stage")
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", max_size=12),
)
_mappings = st.dictionaries(_states, st.dictionaries(_fields, _values, max_size=4), max_size=4)


@settings(max_examples=80, deadline=None)
@given(_mappings, st.integers(2, 4))
def test_any_constant_mapping_is_recovered_exactly(
    mapping: dict[str, dict[str, Any]], times: int
) -> None:
    """Records enter each state `times` times from a state where every field held something
    else (longer than any drawn text); the learner gives back the mapping, without the states
    that set nothing."""
    entries = [
        _update(
            {"stage": "Before", **dict.fromkeys(values, "something else")},
            {"stage": state, **values},
            {"stage": state},
            f"x{index}",
            state=state,
        )
        for state, values in mapping.items()
        for index in range(times)
    ]

    learned = sets_on_entry(entries, "stage", NOTHING)

    assert {state: entry.values for state, entry in learned.items()} == {
        state: values for state, values in mapping.items() if values
    }
    assert all(entry.evidence.samples == times for entry in learned.values())


def _move(state: str, resolved_by: Any, sent: dict[str, Any] | None = None) -> Entry:
    before = {"state": "2", "resolved_by": ""}
    after = {"state": state, "resolved_by": resolved_by}
    return Entry(state, before, after, sent or {"state": state}, 0, "x")


def test_a_caller_reference_every_move_into_a_state_filled_is_stamped_there() -> None:
    moves = [_move("6", {"value": "u1"}), _move("6", {"value": "u2"}), _move("3", "")]

    learned = callers_on_entry(moves, "state", frozenset({"resolved_by"}))

    assert learned == {"6": ["resolved_by"]}


def test_a_reference_the_client_sent_or_a_move_left_empty_is_not_stamped() -> None:
    sent = [_move("6", {"value": "u1"}, {"state": "6", "resolved_by": "u1"})]
    mixed = [_move("6", {"value": "u1"}), _move("6", "")]

    assert callers_on_entry(sent, "state", frozenset({"resolved_by"})) == {}
    assert callers_on_entry(mixed, "state", frozenset({"resolved_by"})) == {}
    assert callers_on_entry([_move("6", {"value": "u1"})], "state", frozenset()) == {}
