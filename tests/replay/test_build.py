"""Building: the shipped failure logs become audited episodes, one per failure class, with
variants; sessions nothing can be derived from are skipped with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from myna.replay.audit import audit
from myna.replay.build import Builder, BuildReport, build
from myna.replay.classify import Evidence, Feedback, Goal, classify, parse_feedback
from myna.replay.episode import FAILURE_CLASSES, Episode, FieldEquals, HttpStep, ModelRef
from myna.replay.logs import LoggedCall
from myna.replay.mock_world import MockWorlds, ToolboxTranslator, runner_for
from myna.replay.run import Routes
from myna.replay.sample_logs import (
    BASE_URL,
    DESK,
    INCIDENTS,
    SAMPLES,
    TABLE,
    failure_sessions,
    incident_model,
)
from myna.traces.model import Body, Exchange, Message, Session, ToolCall
from tests.replay.conftest import build_samples_on_itsm

MODEL = incident_model()


@pytest.fixture(scope="module")
def worlds() -> MockWorlds:
    return MockWorlds(MODEL)


def _builder(worlds: MockWorlds, **changes: Any) -> Builder:
    return Builder(
        model=MODEL,
        factory=worlds,
        model_ref=ModelRef(path="incident.model.yaml"),
        tools=tuple(ToolboxTranslator(MODEL).names()),
        **changes,
    )


@pytest.fixture(scope="module")
def built(worlds: MockWorlds) -> BuildReport:
    return build(failure_sessions(), _builder(worlds), variants=3)


def _originals(report: BuildReport) -> dict[str, Episode]:
    return {
        e.provenance.failure_class or "": e for e in report.episodes if not e.provenance.variant_of
    }


def test_the_samples_cover_every_failure_class_once(built: BuildReport) -> None:
    assert built.skipped == []
    assert sorted(_originals(built)) == sorted(FAILURE_CLASSES)


@pytest.mark.parametrize(
    ("failure_class", "session", "derived_from", "step_index"),
    [
        ("constraint_violation", "resolve-vpn", "model", 2),
        ("wrong_record", "assign-printer", "feedback", 3),
        ("missing_step", "escalate-switch", "successful_session", None),
        ("invented_value", "close-outlook", "corrected_outcome", 2),
        ("wrong_answer", "who-has-vpn", "feedback", None),
        ("policy_breach", "cancel-duplicate", "feedback", 3),
    ],
    ids=lambda value: str(value),
)
def test_provenance_names_the_session_the_failure_point_and_the_evidence(
    built: BuildReport, failure_class: str, session: str, derived_from: str, step_index: int | None
) -> None:
    provenance = _originals(built)[failure_class].provenance
    assert (provenance.source_session, provenance.derived_from, provenance.step_index) == (
        session,
        derived_from,
        step_index,
    )


def _check(episode: Episode, name: str) -> Any:
    return next(c for c in episode.verifier.checks if c.name == name)


def test_a_refused_resolve_needs_the_fields_the_model_requires(built: BuildReport) -> None:
    episode = _originals(built)["constraint_violation"]
    assert {c.name for c in episode.verifier.checks} == {
        "incident #1 state",
        "incident #1 close_code set",
        "incident #1 close_notes set",
        "no collateral changes",
        "policy",
    }
    patch = episode.reference.steps[0]
    assert isinstance(patch, HttpStep)
    assert patch.body["close_code"] == "Solution provided"  # the most frequent close code
    assert episode.provenance.failing_calls == [
        HttpStep(
            method="PATCH", path=f"{TABLE}/incident/{INCIDENTS['INC0010002']}", body={"state": "6"}
        )
    ]


def test_a_wrong_record_episode_targets_the_record_the_feedback_names(built: BuildReport) -> None:
    episode = _originals(built)["wrong_record"]
    check = _check(episode, "incident #1 assigned_to")
    assert isinstance(check, FieldEquals)
    assert check.where == {"number": "INC0010003"}


def test_the_successful_prefix_is_replayed_into_the_initial_world(built: BuildReport) -> None:
    episode = _originals(built)["missing_step"]
    switch = next(
        r for r in episode.environment.initial_world["incident"] if r["number"] == "INC0010001"
    )
    assert switch["urgency"] == "1"  # the agent's one successful write
    assert _check(episode, "incident #1 assignment_group").value


def test_a_policy_breach_forbids_the_call_the_feedback_objects_to(built: BuildReport) -> None:
    episode = _originals(built)["policy_breach"]
    policy = _check(episode, "policy")
    assert [(p.method, p.path) for p in policy.forbidden] == [("DELETE", f"{TABLE}/incident/*")]
    assert _check(episode, "incident #1 state").value == "8"


def test_the_world_gets_distractors_when_the_log_shows_one_record(built: BuildReport) -> None:
    episode = _originals(built)["constraint_violation"]
    numbers = sorted(r["number"] for r in episode.environment.initial_world["incident"])
    assert numbers == ["INC0010002", "INC0010003", "INC0010004"]


def test_variants_vary_record_value_and_wording_each_with_its_own_verifier(
    built: BuildReport,
) -> None:
    variants = [
        e for e in built.episodes if e.provenance.variant_of == "escalate-switch-missing_step"
    ]
    assert len(variants) == 3
    assert {v.provenance.variant for v in variants} == {"other_record", "other_value", "wording"}
    other_value = next(v for v in variants if v.provenance.variant == "other_value")
    new_urgency = _check(other_value, "incident #1 urgency").value
    assert new_urgency != "1"
    assert f"urgency to {new_urgency}" in other_value.problem.instruction
    other_record = next(v for v in variants if v.provenance.variant == "other_record")
    assert "INC0010001" not in other_record.problem.instruction


def test_audit_accepts_every_built_episode_and_variant(
    built: BuildReport, worlds: MockWorlds
) -> None:
    for episode in built.episodes:
        report = audit(runner_for(episode, MODEL, worlds), MODEL, k=2)
        assert report.status == "accepted", (episode.id, report.reasons)


def _session(session_id: str, feedback: str | None, *events: Any, **metadata: Any) -> Session:
    task = Message(id="m0", role="user", text="Resolve INC0010002.")
    return Session(
        id=session_id,
        events=[task, *events],
        task=task.text,
        outcome="failure",
        feedback=feedback,
        metadata=metadata,
    )


def _exchange(
    method: str, path: str, status: int, response: Any = None, body: Any = None
) -> Exchange:
    return Exchange(
        id=f"{method}{path}",
        method=method,
        url=f"{BASE_URL}{path}",
        status=status,
        request_body=Body("json", body) if body is not None else Body(),
        response_body=Body("json", response) if response is not None else Body(),
    )


READ = _exchange("GET", f"{TABLE}/incident", 200, {"result": [DESK["INC0010002"]]})


@pytest.mark.parametrize(
    ("session", "reason"),
    [
        (_session("silent", None, READ), "no failure class fits"),
        (
            _session(
                "vague",
                "This was not good.",
                READ,
                _exchange(
                    "PATCH",
                    f"{TABLE}/incident/{INCIDENTS['INC0010002']}",
                    200,
                    {"result": DESK["INC0010002"]},
                    {"priority": "2"},
                ),
            ),
            "no failure class fits",
        ),
        (
            _session("bad-metadata", None, READ, expected={"changes": [{"resource": 3}]}),
            "metadata.expected.changes.0.resource",
        ),
        (
            _session(
                "unseen-record",
                None,
                READ,
                expected={
                    "changes": [
                        {
                            "resource": "incident",
                            "record": {"number": "INC0099999"},
                            "set": {"state": "6"},
                        }
                    ]
                },
            ),
            "selects 0 incident records",
        ),
    ],
    ids=["no-evidence", "feedback-without-facts", "invalid-corrected-outcome", "unknown-record"],
)
def test_sessions_nothing_can_be_derived_from_are_skipped_with_the_reason(
    worlds: MockWorlds, session: Session, reason: str
) -> None:
    report = build([session], _builder(worlds))
    assert report.episodes == []
    assert [s.session_id for s in report.skipped] == [session.id]
    assert reason in report.skipped[0].reason


def test_records_created_before_the_failure_are_replayed_with_the_ids_the_world_mints(
    worlds: MockWorlds,
) -> None:
    logged_id = "0" * 32
    created = {**DESK["INC0010003"], "sys_id": logged_id, "number": "INC0010100"}
    new = {"short_description": "Badge reader broken", "state": "1"}
    session = _session(
        "create-then-fail",
        "The update was refused.",
        _exchange("POST", f"{TABLE}/incident", 201, {"result": created}, new),
        _exchange(
            "PATCH",
            f"{TABLE}/incident/{logged_id}",
            400,
            {"error": {"message": "mandatory: close_code"}},
            {"state": "6"},
        ),
    )
    report = build([session], _builder(worlds))
    [episode] = report.episodes
    [failing] = episode.provenance.failing_calls
    assert isinstance(failing, HttpStep)
    minted_id = failing.path.rsplit("/", 1)[-1]
    assert minted_id != logged_id
    incidents = {r["sys_id"]: r for r in episode.environment.initial_world["incident"]}
    assert incidents[minted_id]["short_description"] == "Badge reader broken"
    assert _check(episode, "incident #1 state").where == {"number": incidents[minted_id]["number"]}


@pytest.mark.parametrize(
    ("text", "answer", "fields", "methods"),
    [
        ('The correct answer is "Beth Anglin".', "Beth Anglin", {}, set()),
        ("Expected answer: 42", "42", {}, set()),
        (
            'close_code should be "Solved (Permanently)" here',
            None,
            {"close_code": "Solved (Permanently)"},
            set(),
        ),
        ("Incidents must not be deleted.", None, {}, {"DELETE"}),
        ("You should never remove users or create duplicates.", None, {}, {"DELETE"}),
        ("Never create a new ticket; don't create users.", None, {}, {"POST"}),
        ("Looks fine to me.", None, {}, set()),
    ],
    ids=[
        "answer",
        "answer-colon",
        "field-value",
        "forbid-delete",
        "forbid-remove",
        "forbid-create",
        "nothing",
    ],
)
def test_feedback_patterns(
    text: str, answer: str | None, fields: dict[str, str], methods: set[str]
) -> None:
    feedback = parse_feedback(text)
    assert (feedback.answer, feedback.field_values, set(feedback.forbidden_methods)) == (
        answer,
        fields,
        methods,
    )


def test_the_shipped_samples_are_current() -> None:
    from myna.schemas import openapi
    from myna.traces import read

    hint = "regenerate: python -m myna.replay.sample_logs"
    assert openapi.load(SAMPLES / "incident.model.yaml") == incident_model(), hint
    assert list(read(SAMPLES / "failures.jsonl")) == failure_sessions(), hint


def _call(method: str, path: str, status: int = 200, body: Any = None) -> LoggedCall:
    matched = Routes.from_model(MODEL).match(method, path)
    operation, params = matched if matched is not None else (None, {})
    return LoggedCall(7, method, path, {}, body, status, None, operation, params)


GOALS = (Goal("incident", "update", INCIDENTS["INC0010002"], {"state": "6"}),)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            _call("PATCH", f"{TABLE}/incident/{INCIDENTS['INC0010002']}", body={"colour": "red"}),
            "invented_value",
        ),
        (
            _call("PATCH", f"{TABLE}/incident/{INCIDENTS['INC0010002']}", body={"priority": "9"}),
            "invented_value",
        ),
        (_call("POST", "/api/now/import/incident", body={"state": "6"}), "policy_breach"),
        (_call("GET", "/api/now/stats/incident"), "missing_step"),
        (_call("GET", f"{TABLE}/incident/{INCIDENTS['INC0010002']}", 403), "missing_step"),
        (
            _call("PATCH", f"{TABLE}/incident/{INCIDENTS['INC0010002']}", 409, {"state": "6"}),
            "constraint_violation",
        ),
        (
            _call("PATCH", f"{TABLE}/incident/{INCIDENTS['INC0010001']}", body={"state": "6"}),
            "wrong_record",
        ),
    ],
    ids=[
        "unknown-field",
        "value-outside-enum",
        "undocumented-write",
        "undocumented-read-is-fine",
        "refused-read-is-not-a-violation",
        "refused-write",
        "other-record",
    ],
)
def test_classification_rules(call: LoggedCall, expected: str) -> None:
    evidence = Evidence((call,), GOALS, None, None, Feedback(), (), MODEL)
    found = classify(evidence)
    assert found is not None
    assert found.failure_class == expected


def test_agent_transcripts_with_tool_calls_are_read_through_the_tools(worlds: MockWorlds) -> None:
    target = INCIDENTS["INC0010002"]
    task = Message(id="m0", role="user", text="Resolve INC0010002.")
    read = ToolCall(
        id="t1",
        name="get_incident",
        arguments={"sys_id": target},
        result={"result": DESK["INC0010002"]},
    )
    refused = ToolCall(
        id="t2",
        name="update_incident",
        arguments={"sys_id": target, "state": "6"},
        error="mandatory: close_code, close_notes",
    )
    session = Session(
        id="transcript", events=[task, read, refused], task=task.text, outcome="failure"
    )
    report = build([session], _builder(worlds, translate=ToolboxTranslator(MODEL)))
    [episode] = report.episodes
    assert (episode.provenance.failure_class, episode.provenance.step_index) == (
        "constraint_violation",
        2,
    )


def test_the_mocks_own_call_log_is_valid_input(worlds: MockWorlds) -> None:
    from myna.mocks.calllog import to_session
    from myna.replay.episode import Environment

    environment = Environment(
        model=ModelRef(path="m"),
        initial_world={"incident": [DESK["INC0010002"]]},
        id_fields={"incident": "sys_id"},
    )
    world = worlds.open(environment)
    target = f"{TABLE}/incident/{INCIDENTS['INC0010002']}"
    world.client.request("GET", target)
    assert world.client.request("PATCH", target, json={"state": "6"}).status == 400
    session = to_session(world.world, world.calls())
    world.close()
    session.task, session.outcome = "Resolve INC0010002.", "failure"
    [episode] = build([session], _builder(worlds)).episodes
    assert episode.provenance.failure_class == "constraint_violation"
    [failing] = episode.provenance.failing_calls
    assert isinstance(failing, HttpStep)
    assert failing.path == target


def test_the_samples_build_and_pass_audit_on_the_builtin_itsm_back_end() -> None:
    itsm, worlds, report = build_samples_on_itsm(variants=1)
    assert report.skipped == []
    assert {e.provenance.failure_class for e in report.episodes} == set(FAILURE_CLASSES)
    for episode in report.episodes:
        verdict = audit(runner_for(episode, itsm, worlds), itsm, k=1)
        assert verdict.status == "accepted", (episode.id, verdict.reasons)


def test_the_logged_wrong_answer_is_replayed_by_the_audit_probe(
    built: BuildReport, worlds: MockWorlds
) -> None:
    episode = _originals(built)["wrong_answer"]
    assert episode.provenance.failing_answer == "INC0010002 is assigned to beth.anglin."
    report = audit(runner_for(episode, MODEL, worlds), MODEL, k=1)
    assert "probe:replay_failure" in {gate.name for gate in report.gates if gate.ok}


def test_a_question_varies_to_another_record_with_its_own_answer(built: BuildReport) -> None:
    variants = [e for e in built.episodes if e.provenance.variant_of == "who-has-vpn-wrong_answer"]
    [other] = [v for v in variants if v.provenance.variant == "other_record"]
    assert other.problem.instruction == (
        "Who is INC0010005 assigned to? Reply with the person's full name."
    )
    assert _check(other, "answer").expected == "David Miller"
