"""The planted-defect suite: sound ITSMBench scenarios, each broken one way on purpose, and the
audit (replay's gates plus the history's second derivation) must reject at least 95% of them.

Each defect is a pure function from a scenario to a broken copy (None when it does not apply):
the categories an adversarial review found slipping through, and the ones the audit already
caught, so a change that loosens any gate shows here.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from myna.itsm.bench import audit_scenario, default_data, itsm_model
from myna.itsm.importers import IncidentHistory, import_history
from myna.itsm.scenarios import Scenario, generate
from myna.replay.audit import AuditReport
from myna.replay.defects import mutants
from myna.replay.episode import (
    GUARD_KINDS,
    AnswerCheck,
    AnswerStep,
    Check,
    Episode,
    FieldEquals,
    FieldMatches,
    HttpStep,
    Problem,
    Solution,
    Step,
    TextCheck,
    Verifier,
)
from myna.replay.mock_world import MockWorlds, runner_for
from myna.replay.run import Routes

PER_KIND = 3
MODEL = itsm_model()


def _with(
    scenario: Scenario,
    *,
    instruction: str | None = None,
    checks: list[Check] | None = None,
    steps: list[Step] | None = None,
    world: dict[str, list[dict[str, Any]]] | None = None,
) -> Scenario:
    """The scenario with the given parts of its episode replaced."""
    old = scenario.episode
    episode = old.model_copy(
        update={
            "problem": Problem(instruction=instruction or old.problem.instruction),
            "verifier": Verifier(checks=old.verifier.checks if checks is None else checks),
            "reference": Solution(steps=old.reference.steps if steps is None else steps),
            "environment": old.environment.model_copy(
                update={"initial_world": world or old.environment.initial_world}
            ),
        }
    )
    return Scenario(scenario.kind, scenario.tier, episode)


def _goals(episode: Episode) -> list[Check]:
    return [c for c in episode.verifier.checks if c.kind not in GUARD_KINDS and c.role is None]


def consistently_wrong(scenario: Scenario) -> Scenario | None:
    """The reference writes a wrong value and the verifier wants that same wrong value."""
    episode = scenario.episode
    mutant = next(iter(mutants(episode, MODEL, Routes.from_model(MODEL))), None)
    if mutant is None:
        return None
    written = {
        name: value
        for step in mutant.steps
        if isinstance(step, HttpStep) and isinstance(step.body, dict)
        for name, value in step.body.items()
    }
    answers = [s.text for s in mutant.steps if isinstance(s, AnswerStep)]
    checks: list[Check] = []
    for check in episode.verifier.checks:
        if isinstance(check, FieldEquals) and check.field in written:
            check = check.model_copy(update={"value": written[check.field]})
        elif isinstance(check, AnswerCheck) and answers:
            check = check.model_copy(update={"expected": answers[-1]})
        elif isinstance(check, TextCheck) and mutant.what.endswith(check.field):
            check = check.model_copy(update={"mentions": [], "min_words": 0})
        checks.append(check)
    return _with(scenario, checks=checks, steps=list(mutant.steps))


def names_a_missing_record(scenario: Scenario) -> Scenario | None:
    instruction = scenario.episode.problem.instruction
    numbers = [w.strip(".,?:;\"'") for w in instruction.split() if w.startswith("INC")]
    if not numbers:
        return None
    return _with(scenario, instruction=instruction.replace(numbers[0], "INC0999999"))


def says_close_for_resolved(scenario: Scenario) -> Scenario | None:
    wants_resolved = any(
        isinstance(c, FieldEquals) and c.field == "state" and c.value == "6"
        for c in scenario.episode.verifier.checks
    )
    instruction = scenario.episode.problem.instruction
    if not wants_resolved or "esolve" not in instruction:
        return None
    said = instruction.replace("Resolve", "Close").replace("resolve", "close")
    return _with(scenario, instruction=said)


def any_value_will_do(scenario: Scenario) -> Scenario | None:
    """The first goal that checks a value is weakened to accept any."""
    checks: list[Check] = []
    weakened = False
    for check in scenario.episode.verifier.checks:
        if not weakened and isinstance(check, FieldEquals) and check.role is None:
            check = FieldMatches(
                name=check.name,
                resource=check.resource,
                where=check.where,
                field=check.field,
                pattern="(?s).*",
            )
            weakened = True
        elif not weakened and isinstance(check, AnswerCheck):
            check = check.model_copy(update={"mode": "contains", "expected": ""})
            weakened = True
        checks.append(check)
    return _with(scenario, checks=checks) if weakened else None


def goal_already_met(scenario: Scenario) -> Scenario | None:
    """The initial world already holds what the reference writes to existing incidents."""
    episode = scenario.episode
    bodies: dict[str, dict[str, object]] = defaultdict(dict)
    for step in episode.reference.steps:
        if isinstance(step, HttpStep) and step.method == "PATCH" and isinstance(step.body, dict):
            stored = {k: v for k, v in step.body.items() if k not in ("work_notes", "comments")}
            bodies[step.path.rsplit("/", 1)[-1]].update(stored)
    if not bodies:
        return None
    world = dict(episode.environment.initial_world)
    world["incident"] = [{**r, **bodies.get(str(r["sys_id"]), {})} for r in world["incident"]]
    return _with(scenario, world=world)


def depends_on_the_clock(scenario: Scenario) -> Scenario | None:
    """A check that the written record was updated today."""
    episode = scenario.episode
    patch = next(
        (s for s in episode.reference.steps if isinstance(s, HttpStep) and s.method == "PATCH"),
        None,
    )
    if patch is None:
        return None
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    check = FieldMatches(
        name="updated_today",
        resource="incident",
        where={"sys_id": patch.path.rsplit("/", 1)[-1]},
        field="sys_updated_on",
        pattern=f"{today}.*",
    )
    return _with(scenario, checks=[*episode.verifier.checks, check])


def reference_broken(scenario: Scenario) -> Scenario | None:
    steps = list(scenario.episode.reference.steps)
    return _with(scenario, steps=steps[:-1]) if steps else None


def only_guards(scenario: Scenario) -> Scenario | None:
    goals = {c.name for c in _goals(scenario.episode)}
    kept = [c for c in scenario.episode.verifier.checks if c.name not in goals]
    return _with(scenario, checks=kept)


def unguarded(scenario: Scenario) -> Scenario | None:
    """No collateral guard and no policy: a mass update or a delete goes unseen."""
    kept = [c for c in scenario.episode.verifier.checks if c.kind not in GUARD_KINDS]
    return _with(scenario, checks=kept)


DEFECTS: dict[str, Callable[[Scenario], Scenario | None]] = {
    "consistently_wrong": consistently_wrong,
    "names_a_missing_record": names_a_missing_record,
    "says_close_for_resolved": says_close_for_resolved,
    "any_value_will_do": any_value_will_do,
    "goal_already_met": goal_already_met,
    "depends_on_the_clock": depends_on_the_clock,
    "reference_broken": reference_broken,
    "only_guards": only_guards,
    "unguarded": unguarded,
}


@pytest.fixture(scope="module")
def history() -> IncidentHistory:
    return import_history(default_data(), names_seed=0)[0]  # as the bench names it


@pytest.fixture(scope="module")
def sample(history: IncidentHistory) -> list[Scenario]:
    taken: Counter[str] = Counter()
    out = []
    for scenario in generate(history, MODEL, seed=0).scenarios:
        if taken[scenario.kind] < PER_KIND:
            taken[scenario.kind] += 1
            out.append(scenario)
    return out


def _audit(scenario: Scenario, history: IncidentHistory, worlds: MockWorlds) -> AuditReport:
    runner = runner_for(scenario.episode, MODEL, worlds)
    return audit_scenario(runner, scenario, history, MODEL)


def test_the_sound_scenarios_are_accepted(sample: list[Scenario], history: IncidentHistory) -> None:
    worlds = MockWorlds(MODEL)
    rejected = {
        s.episode.id: report.reasons
        for s in sample
        if (report := _audit(s, history, worlds)).status != "accepted"
    }
    assert rejected == {}


def test_the_audit_rejects_planted_defects(
    sample: list[Scenario], history: IncidentHistory
) -> None:
    worlds = MockWorlds(MODEL)
    planted: Counter[str] = Counter()
    slipped: dict[str, list[str]] = defaultdict(list)
    for scenario in sample:
        for name, plant in DEFECTS.items():
            broken = plant(scenario)
            if broken is None:
                continue
            planted[name] += 1
            if _audit(broken, history, worlds).status == "accepted":
                slipped[name].append(scenario.episode.id)
    assert set(planted) == set(DEFECTS)  # every category was planted somewhere
    caught = sum(planted.values()) - sum(len(ids) for ids in slipped.values())
    assert caught / sum(planted.values()) >= 0.95, dict(slipped)
