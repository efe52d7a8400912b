"""The verifier: each check kind, the reward arithmetic, and failures as results."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.mocks.store import RecordChange
from myna.replay.episode import (
    AllowedChange,
    AnswerCheck,
    CallPattern,
    Check,
    CountRecords,
    Environment,
    FieldChanged,
    FieldEquals,
    FieldIn,
    FieldMatches,
    FieldUnchanged,
    ModelRef,
    NoCollateral,
    Policy,
    PythonCheck,
    RecordAbsent,
    RecordExists,
    Verifier,
)
from myna.replay.shared import Layers, SharedWorld
from myna.replay.verify import (
    Base,
    CallRecord,
    Outcome,
    WorldView,
    make_outcome,
    matches,
    register_python_check,
    verify,
)
from tests.replay.conftest import A1, A2, incident_world

ENV = Environment(
    model=ModelRef(name="fake"),
    initial_world=incident_world(),
    id_fields={"incident": "sys_id", "sys_user": "sys_id"},
)
INC1 = incident_world()["incident"][0]
INC2 = incident_world()["incident"][1]
RESOLVE_2 = RecordChange(
    "incident", A2, "updated", INC2, {**INC2, "state": "6", "close_code": "Solved"}
)
DELETE_1 = RecordChange("incident", A1, "deleted", INC1, None)
CREATE = RecordChange(
    "incident", "f" * 32, "created", None, {"sys_id": "f" * 32, "number": "INC0010003"}
)
TOUCH_2 = RecordChange(
    "incident", A2, "updated", INC2, {**INC2, "sys_updated_on": "2026-01-01 00:00:00"}
)


def outcome(*changes: RecordChange, answer: str | None = None, calls: Any = ()) -> Outcome:
    return make_outcome(ENV, changes, calls, answer)


def passes(check: Check, result_of: Outcome) -> bool:
    return verify(Verifier(checks=[check]), result_of).passed


INC2_SEL = {"number": "INC0010002"}


@pytest.mark.parametrize(
    ("check", "changes", "expected"),
    [
        (RecordExists(name="c", resource="incident", where=INC2_SEL), (), True),
        (RecordExists(name="c", resource="incident", where={"number": "INC9"}), (), False),
        (
            RecordExists(name="c", resource="incident", where={"number": "INC0010003"}),
            (CREATE,),
            True,
        ),
        (RecordAbsent(name="c", resource="incident", where={"number": "INC0010001"}), (), False),
        (
            RecordAbsent(name="c", resource="incident", where={"number": "INC0010001"}),
            (DELETE_1,),
            True,
        ),
        (
            FieldEquals(name="c", resource="incident", where=INC2_SEL, field="state", value=6),
            (RESOLVE_2,),
            True,
        ),
        (
            FieldEquals(name="c", resource="incident", where=INC2_SEL, field="state", value="6"),
            (),
            False,
        ),
        (
            FieldEquals(
                name="c", resource="incident", where={"number": "nope"}, field="state", value="2"
            ),
            (),
            False,
        ),
        (
            FieldEquals(
                name="c", resource="incident", where=INC2_SEL, field="assigned_to", value="c" * 32
            ),
            (),
            True,
        ),
        (
            FieldIn(
                name="c", resource="incident", where=INC2_SEL, field="state", values=["6", "7"]
            ),
            (RESOLVE_2,),
            True,
        ),
        (
            FieldIn(
                name="c", resource="incident", where=INC2_SEL, field="state", values=["6", "7"]
            ),
            (),
            False,
        ),
        (
            FieldMatches(
                name="c", resource="incident", where=INC2_SEL, field="close_code", pattern="Sol.*"
            ),
            (RESOLVE_2,),
            True,
        ),
        (
            FieldMatches(
                name="c", resource="incident", where=INC2_SEL, field="close_code", pattern=".+"
            ),
            (),
            False,
        ),
        (
            FieldChanged(name="c", resource="incident", where=INC2_SEL, field="state"),
            (RESOLVE_2,),
            True,
        ),
        (FieldChanged(name="c", resource="incident", where=INC2_SEL, field="state"), (), False),
        (
            FieldUnchanged(
                name="c", resource="incident", where={"number": "INC0010001"}, field="state"
            ),
            (DELETE_1,),
            False,
        ),
        (
            FieldUnchanged(
                name="c", resource="incident", where=INC2_SEL, field="short_description"
            ),
            (RESOLVE_2,),
            True,
        ),
        (CountRecords(name="c", resource="incident", where={"state": "2"}, min=2, max=2), (), True),
        (
            CountRecords(name="c", resource="incident", where={"state": "2"}, min=2),
            (RESOLVE_2,),
            False,
        ),
        (CountRecords(name="c", resource="incident", max=2), (CREATE,), False),
    ],
    ids=[
        "exists",
        "exists-missing",
        "exists-created",
        "absent-present",
        "absent-deleted",
        "equals-number-as-string",
        "equals-unchanged",
        "equals-selects-nothing",
        "equals-reference-value",
        "in",
        "in-not",
        "matches",
        "matches-empty",
        "changed",
        "changed-not",
        "unchanged-but-deleted",
        "unchanged",
        "count-exact",
        "count-too-few",
        "count-too-many",
    ],
)
def test_world_checks(check: Check, changes: tuple[RecordChange, ...], expected: bool) -> None:
    assert passes(check, outcome(*changes)) is expected


def _guard(*allowed: AllowedChange) -> NoCollateral:
    return NoCollateral(name="guard", allowed=list(allowed), ignore_fields=["sys_updated_on"])


@pytest.mark.parametrize(
    ("guard", "changes", "expected"),
    [
        (
            _guard(
                AllowedChange(resource="incident", record_id=A2, fields=["state", "close_code"])
            ),
            (RESOLVE_2,),
            True,
        ),
        (
            _guard(AllowedChange(resource="incident", record_id=A2, fields=["state"])),
            (RESOLVE_2,),
            False,
        ),
        (_guard(AllowedChange(resource="incident", record_id=A1)), (RESOLVE_2,), False),
        (_guard(AllowedChange(resource="incident", record_id=A2)), (RESOLVE_2, DELETE_1), False),
        (_guard(AllowedChange(resource="incident", kinds=["created"])), (CREATE,), True),
        (_guard(), (TOUCH_2,), True),
        (_guard(), (), True),
        (_guard(), (CREATE,), False),
        (
            NoCollateral(name="guard", ignore_resources=[CREATE.resource]),
            (CREATE,),
            True,
        ),
    ],
    ids=[
        "allowed-fields",
        "extra-field",
        "other-record",
        "extra-delete",
        "any-create",
        "server-maintained-field-only",
        "nothing-changed",
        "unexpected-create",
        "service-written-resource",
    ],
)
def test_collateral_guard(
    guard: NoCollateral, changes: tuple[RecordChange, ...], expected: bool
) -> None:
    assert passes(guard, outcome(*changes)) is expected


@pytest.mark.parametrize(
    ("mode", "expected", "answer", "result"),
    [
        ("exact", "INC0010002", " INC0010002\n", True),
        ("exact", "INC0010002", "inc0010002", False),
        ("normalised", "Beth Anglin", "beth   anglin.", True),
        ("normalised", "Beth Anglin", "Beth", False),
        ("contains", "Beth Anglin", "It was assigned to BETH ANGLIN!", True),
        ("number", "42", "There are 42.0 open incidents", True),
        ("number", "1,200", "1200", True),
        ("number", "42", "forty-two", False),
        ("normalised", "x", None, False),
    ],
    ids=[
        "exact",
        "exact-case",
        "normalised",
        "normalised-partial",
        "contains",
        "number",
        "number-thousands",
        "number-missing",
        "no-answer",
    ],
)
def test_answer_checks(mode: Any, expected: str, answer: str | None, result: bool) -> None:
    check = AnswerCheck(name="answer", mode=mode, expected=expected)
    assert passes(check, outcome(answer=answer)) is result


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (CallRecord("PATCH", f"/api/now/table/incident/{A2}", 200), True),
        (CallRecord("DELETE", f"/api/now/table/incident/{A2}", 204), False),
        (CallRecord("POST", "/_myna/worlds/w/reset", 200, admin=True), False),
        (CallRecord("GET", "/api/now/secret", 404, documented=False), False),
    ],
    ids=["allowed", "forbidden-pattern", "admin", "undocumented"],
)
def test_policy(call: CallRecord, expected: bool) -> None:
    policy = Policy(name="policy", forbidden=[CallPattern(method="DELETE", path="/api/now/*")])
    assert passes(policy, outcome(calls=[call])) is expected


def test_reward_is_the_weighted_share_with_a_breakdown() -> None:
    verifier = Verifier(
        checks=[
            FieldEquals(
                name="resolved",
                resource="incident",
                where=INC2_SEL,
                field="state",
                value="6",
                weight=3,
            ),
            AnswerCheck(name="answer", expected="done"),
        ]
    )
    result = verify(verifier, outcome(RESOLVE_2, answer="not yet"))
    assert result.reward == pytest.approx(0.75)
    assert not result.passed
    assert [(c.name, c.passed) for c in result.checks] == [("resolved", True), ("answer", False)]
    assert "not yet" in result.checks[1].detail


def test_a_verifier_with_no_checks_gives_no_reward() -> None:
    result = verify(Verifier(), outcome())
    assert (result.reward, result.passed) == (0.0, False)


@register_python_check("tests.no_open_incidents_left")
def _no_open_incidents(params: Mapping[str, Any], result_of: Outcome) -> Iterator[str]:
    for record_id, record in result_of.final["incident"].items():
        if record.get("state") in params["open_states"]:
            yield f"incident {record_id} is still open"


@register_python_check("tests.broken")
def _broken(params: Mapping[str, Any], result_of: Outcome) -> Iterator[str]:
    raise KeyError(params["missing"])


def test_python_checks_run_behind_the_same_interface() -> None:
    check = PythonCheck(
        name="py", function="tests.no_open_incidents_left", params={"open_states": ["1", "2"]}
    )
    assert not passes(check, outcome(RESOLVE_2))
    resolve_1 = RecordChange("incident", A1, "updated", INC1, {**INC1, "state": "7"})
    assert passes(check, outcome(RESOLVE_2, resolve_1))


@pytest.mark.parametrize(
    "check",
    [
        PythonCheck(name="py", function="tests.broken"),
        PythonCheck(name="py", function="tests.not_registered"),
        FieldMatches(name="py", resource="incident", where={}, field="state", pattern="("),
    ],
    ids=["raises", "unknown-function", "bad-regex"],
)
def test_a_broken_check_is_a_failed_result_not_an_exception(check: Check) -> None:
    result = verify(Verifier(checks=[check]), outcome())
    assert not result.passed
    assert "raised" in result.checks[0].detail


@given(
    weights=st.lists(st.floats(min_value=0.01, max_value=100), min_size=1, max_size=8),
    outcomes=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_reward_is_between_zero_and_one_and_one_only_when_all_pass(
    weights: list[float], outcomes: list[bool]
) -> None:
    checks: list[Check] = [
        RecordExists(
            name=f"c{i}",
            resource="incident",
            where={"number": "INC0010001" if ok else "missing"},
            weight=weight,
        )
        for i, (weight, ok) in enumerate(zip(weights, outcomes, strict=False))
    ]
    result = verify(Verifier(checks=checks), outcome())
    assert 0.0 <= result.reward <= 1.0
    assert result.passed == all(outcomes[: len(weights)])
    assert (result.reward == pytest.approx(1.0)) == result.passed


_values = st.sampled_from(["1", "2", "", None, 2, {"link": "l", "value": "1"}])
_records = st.dictionaries(st.sampled_from(["state", "priority"]), _values, max_size=2)


@given(
    base=st.dictionaries(st.sampled_from([f"r{i}" for i in range(6)]), _records, max_size=6),
    overlay=st.dictionaries(
        st.sampled_from([f"r{i}" for i in range(9)]), st.none() | _records, max_size=5
    ),
    where=st.dictionaries(st.sampled_from(["state", "priority"]), _values, max_size=2),
)
def test_indexed_selection_equals_scanning_the_merged_world(
    base: dict[str, dict[str, Any]], overlay: dict[str, Any], where: dict[str, Any]
) -> None:
    view = WorldView(Base({"incident": base}), {"incident": overlay})
    merged = {**base, **{k: v for k, v in overlay.items() if v is not None}}
    for record_id, record in overlay.items():
        if record is None:
            merged.pop(record_id, None)
    scanned = sorted(rid for rid, record in merged.items() if matches(record, where))
    assert sorted(rid for rid, _ in view.select("incident", where)) == scanned
    assert dict(view["incident"]) == merged


@given(
    shared=st.dictionaries(st.sampled_from([f"r{i}" for i in range(6)]), _records, max_size=6),
    own=st.dictionaries(st.sampled_from([f"r{i}" for i in range(3, 9)]), _records, max_size=4),
    overlay=st.dictionaries(
        st.sampled_from([f"r{i}" for i in range(9)]), st.none() | _records, max_size=3
    ),
    where=st.dictionaries(st.sampled_from(["state", "priority"]), _values, max_size=2),
)
def test_a_layered_world_selects_what_its_whole_world_does(
    shared: dict[str, dict[str, Any]],
    own: dict[str, dict[str, Any]],
    overlay: dict[str, Any],
    where: dict[str, Any],
) -> None:
    """The shared world's by-value index, built once for every episode over it, less the ids
    the episode's own records replace, plus theirs: the same selection as the whole world's."""
    world = SharedWorld({"incident": shared})
    layers = Layers(world, {"incident": own})
    whole = WorldView(Base(layers.index()), {"incident": overlay})
    for _ in range(2):  # the second episode reuses the shared index the first built
        layered = WorldView(Base(layers.index(), layers), {"incident": overlay})
        found = sorted(rid for rid, _ in layered.select("incident", where))
        assert found == sorted(rid for rid, _ in whole.select("incident", where))
