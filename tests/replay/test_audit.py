"""Auditing: good episodes are accepted, deliberately broken ones rejected with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from myna.replay.audit import (
    AgentWorld,
    Rollout,
    Task,
    Thresholds,
    audit,
    ingest,
    record_audit,
    world_problems,
)
from myna.replay.episode import (
    AnswerCheck,
    AnswerStep,
    Episode,
    FieldEquals,
    FieldMatches,
    HttpStep,
    Policy,
    Solution,
    Verifier,
)
from myna.replay.run import EpisodeRunner, Routes
from myna.schemas.model import FieldSpec, Reference, StateMachine
from tests.replay.conftest import A2
from tests.replay.fakes import FakeFactory, incident_model
from tests.replay.test_env import make_runner

MODEL = incident_model()


def audited(episode: Episode) -> list[str]:
    """The names of the gates the episode fails (empty: accepted)."""
    report = audit(make_runner(episode), MODEL, k=3)
    assert (report.status == "accepted") == (not report.reasons)
    return [gate.name for gate in report.gates if not gate.ok]


def test_a_good_episode_is_accepted_with_scores(episode: Episode) -> None:
    report = audit(make_runner(episode), MODEL, k=4)
    assert report.status == "accepted", report.reasons
    assert report.correctness == 1.0
    assert {gate.name for gate in report.gates} >= {
        "reads_something",
        "world_valid",
        "reference_passes",
        "noop_fails",
        "deterministic",
        "probe:mass_update",
        "probe:delete_records",
        "probe:admin_call",
        "probe:undocumented_call",
        "probe:replay_failure",
    }
    assert report.difficulty is not None
    assert 0.0 < report.difficulty <= 1.0
    assert report.solvers["drop_step"].passes == 0


def _checks(episode: Episode, keep: Callable[[str], bool]) -> Episode:
    kept = [check for check in episode.verifier.checks if keep(check.kind)]
    return episode.model_copy(update={"verifier": Verifier(checks=kept)})


def _noop_passes(episode: Episode) -> Episode:
    already = FieldEquals(
        name="still open", resource="incident", where={"sys_id": A2}, field="state", value="2"
    )
    return episode.model_copy(update={"verifier": Verifier(checks=[already])})


def _reference_fails(episode: Episode) -> Episode:
    wrong = HttpStep(
        method="PATCH",
        path=f"/api/now/table/incident/{A2}",
        body={"state": "6", "close_code": "Workaround", "close_notes": "x"},
    )
    return episode.model_copy(update={"reference": Solution(steps=[wrong])})


@pytest.mark.parametrize(
    ("breaking", "failed_gate"),
    [
        (_noop_passes, "noop_fails"),
        (_reference_fails, "reference_passes"),
        (lambda e: _checks(e, lambda kind: kind in ("no_collateral", "policy")), "reads_something"),
        (lambda e: _checks(e, lambda kind: kind != "no_collateral"), "probe:mass_update"),
        (lambda e: _checks(e, lambda kind: kind != "policy"), "probe:admin_call"),
    ],
    ids=["noop-passes", "reference-fails", "reads-nothing", "no-collateral-guard", "no-policy"],
)
def test_broken_episodes_are_rejected_naming_the_gate(
    episode: Episode, breaking: Callable[[Episode], Episode], failed_gate: str
) -> None:
    assert failed_gate in audited(breaking(episode))


def test_without_a_collateral_guard_deleting_records_goes_unnoticed(episode: Episode) -> None:
    allow_deletes = Policy(name="policy", forbidden=[])
    goals = [c for c in episode.verifier.checks if c.kind not in ("no_collateral", "policy")]
    loose = episode.model_copy(update={"verifier": Verifier(checks=[*goals, allow_deletes])})
    assert "probe:delete_records" in audited(loose)


def test_an_answer_checked_by_contains_is_beaten_by_guessing(episode: Episode) -> None:
    def with_answer(mode: str) -> Episode:
        answer = AnswerCheck(name="who", mode=mode, expected="beth.anglin")  # type: ignore[arg-type]
        steps = [*episode.reference.steps, AnswerStep(text="beth.anglin")]
        return episode.model_copy(
            update={
                "verifier": Verifier(checks=[*episode.verifier.checks, answer]),
                "reference": Solution(steps=steps),
            }
        )

    assert "probe:guess_answer" in audited(with_answer("contains"))
    assert audited(with_answer("normalised")) == []


def test_a_nondeterministic_verifier_is_rejected(episode: Episode) -> None:
    from myna.replay.episode import PythonCheck
    from myna.replay.verify import register_python_check

    flips = iter(range(1000))

    @register_python_check("tests.coin")
    def _coin(params: object, outcome: object) -> list[str]:
        return [] if next(flips) % 2 else ["tails"]

    coin = PythonCheck(name="coin", function="tests.coin")
    flaky = episode.model_copy(
        update={"verifier": Verifier(checks=[*episode.verifier.checks, coin])}
    )
    assert "deterministic" in audited(flaky)


def test_the_initial_world_must_satisfy_the_model(episode: Episode) -> None:
    model = incident_model()
    incident = model.resources["incident"]
    incident.fields = {
        name: FieldSpec(name=name)
        for name in ("sys_id", "number", "state", "short_description", "close_code", "close_notes")
    }
    incident.fields["assigned_to"] = FieldSpec(
        name="assigned_to", reference=Reference(resource="sys_user", style="link_value")
    )
    incident.fields["close_code"] = FieldSpec(
        name="close_code", schema={"enum": ["Solved (Permanently)", "Workaround"]}
    )
    incident.state_machines = [StateMachine(field="state", states=["1", "2", "6", "7"])]
    assert list(world_problems(episode, model)) == []

    world = episode.environment.initial_world
    broken = {
        "incident": [
            {**world["incident"][0], "state": "99", "priority": "1"},
            {**world["incident"][1], "close_code": "Guessed", "assigned_to": "d" * 32},
            {**world["incident"][1]},
        ],
        "sys_user": world["sys_user"],
        "cmdb_ci": [{"sys_id": "e" * 32}],
    }
    environment = episode.environment.model_copy(update={"initial_world": broken})
    problems = list(world_problems(episode.model_copy(update={"environment": environment}), model))
    assert problems == [
        "incident[0].state='99' is not a state of the model",
        "incident[0].priority is not a field of the model",
        "incident[1].close_code='Guessed' does not fit its schema: 'Guessed' is not one of "
        "['Solved (Permanently)', 'Workaround']",
        f"incident[1].assigned_to refers to missing sys_user {'d' * 32}",
        f"incident[2] repeats id {A2}",
        "resource 'cmdb_ci' is not in the model",
    ]


def test_audit_results_are_written_into_the_episode(episode: Episode) -> None:
    report = audit(make_runner(episode), MODEL, k=2)
    scored = record_audit(episode, report, at="2026-01-01T00:00:00+00:00")
    assert scored.scores.status == "accepted"
    assert scored.scores.correctness == 1.0
    assert scored.scores.solvers["other_record"].tries == 2
    assert scored.audit[-1].kind == "audit"
    rejected = record_audit(episode, audit(make_runner(_noop_passes(episode)), MODEL, k=1))
    assert rejected.scores.status == "rejected"
    assert "noop_fails: passed with reward 1.00" in rejected.scores.reasons


class ResolvingAgent:
    """A plugged-in agent that reads the instruction and resolves the incident it names."""

    name = "resolver"

    def solve(self, task: Task, world: AgentWorld, seed: int) -> str | None:
        number = next(word for word in task.instruction.split() if word.startswith("INC"))
        found = world.call("GET", "/api/now/table/incident", {"number": number.rstrip(":")})
        record = found.body["result"][0]
        world.call(
            "PATCH",
            f"/api/now/table/incident/{record['sys_id']}",
            body={
                "state": "6",
                "close_code": "Solved (Permanently)",
                "close_notes": f"Restarted the VPN concentrator (try {seed}).",
            },
        )
        return None


def test_difficulty_comes_from_plugged_in_agents_when_given(episode: Episode) -> None:
    report = audit(make_runner(episode), MODEL, agents=[ResolvingAgent()], k=3)
    assert report.solvers["resolver"].passes == 3
    assert report.difficulty == 0.0


@pytest.mark.parametrize(
    ("rollouts", "flag"),
    [
        ([Rollout(episode_id="e", agent="big", passed=False, strong=True)] * 5, "broken"),
        ([Rollout(episode_id="e", agent="small", passed=True)] * 5, "too_easy"),
        (
            [Rollout(episode_id="e", passed=True, judged="failure")] * 2
            + [Rollout(episode_id="e", passed=False)] * 3,
            "verifier_disagrees",
        ),
    ],
    ids=["strong-agents-always-fail", "always-passes", "verifier-disagrees-with-feedback"],
)
def test_ingest_updates_stats_and_flags(
    episode: Episode, rollouts: list[Rollout], flag: str
) -> None:
    updated = ingest(episode, rollouts, Thresholds(min_tries=5))
    assert [f.split(":")[0] for f in updated.scores.flags] == [flag]
    assert sum(s.tries for s in updated.scores.rollouts.values()) == 5
    assert updated.audit[-1].kind == "ingest"


def test_ingest_accumulates_and_sets_difficulty(episode: Episode) -> None:
    once = ingest(episode, [Rollout(episode_id="e", agent="a", passed=True)])
    twice = ingest(once, [Rollout(episode_id="e", agent="a", passed=False)] * 3)
    assert twice.scores.rollouts["a"].tries == 4
    assert twice.scores.difficulty == pytest.approx(0.75)
    assert twice.scores.flags == []


def test_a_probe_that_crashes_the_world_is_inconclusive_not_a_pass(episode: Episode) -> None:
    class CrashOnDelete(FakeFactory):
        def open(self, environment: Any) -> Any:
            world = super().open(environment)
            world.explode_on = frozenset({"DELETE"})
            return world

    no_delete_policy = [c for c in episode.verifier.checks if c.kind != "policy"]
    loose = episode.model_copy(
        update={
            "verifier": Verifier(
                checks=[
                    *no_delete_policy,
                    Policy(name="policy", forbid_undocumented=False, forbid_admin=False),
                ]
            )
        }
    )
    runner = EpisodeRunner(loose, CrashOnDelete(), Routes.from_model(MODEL))
    report = audit(runner, MODEL, k=1)
    gate = next(g for g in report.gates if g.name == "probe:delete_records")
    assert not gate.ok
    assert gate.detail == "inconclusive, the world crashed: RuntimeError: disk full"


def _labelled_model() -> Any:
    """The fake model with the incident state machine's labels, as ServiceNow names states."""
    model = incident_model()
    labels = {"1": "New", "2": "In Progress", "6": "Resolved", "7": "Closed"}
    machine = StateMachine(field="state", states=sorted(labels), labels=labels, enforce=False)
    model.resources["incident"].state_machines = [machine]
    return model


def _says(instruction: str) -> Callable[[Episode], Episode]:
    def rewrite(episode: Episode) -> Episode:
        return episode.model_copy(
            update={"problem": episode.problem.model_copy(update={"instruction": instruction})}
        )

    return rewrite


def _any_state(episode: Episode) -> Episode:
    checks = [
        FieldMatches(name=c.name, resource="incident", where=c.where, field="state", pattern=".*")
        if isinstance(c, FieldEquals) and c.field == "state"
        else c
        for c in episode.verifier.checks
    ]
    return episode.model_copy(update={"verifier": Verifier(checks=checks)})


def _already_resolved(episode: Episode) -> Episode:
    world = episode.environment.initial_world
    incidents = [{**r, "state": "6"} if r["sys_id"] == A2 else r for r in world["incident"]]
    environment = episode.environment.model_copy(
        update={"initial_world": {**world, "incident": incidents}}
    )
    return episode.model_copy(update={"environment": environment})


@pytest.mark.parametrize(
    ("breaking", "failed_gate"),
    [
        (_says("Close INC0010002: the VPN concentrator was restarted."), "states_agree"),
        (_says("Resolve INC0099999: the VPN concentrator was restarted."), "names_exist"),
        (_any_state, "mutants_fail"),
        (_already_resolved, "goals_unmet_initially"),
    ],
    ids=["close-for-resolved", "names-a-missing-record", "any-state-will-do", "already-met"],
)
def test_defects_a_passing_reference_hides_are_rejected(
    episode: Episode, breaking: Callable[[Episode], Episode], failed_gate: str
) -> None:
    report = audit(make_runner(breaking(episode)), _labelled_model(), k=1)
    assert failed_gate in [gate.name for gate in report.gates if not gate.ok]
    assert audit(make_runner(episode), _labelled_model(), k=1).status == "accepted"
