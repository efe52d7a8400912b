"""The higher tiers turn on free text: the fact a scenario needs is in a work note or a knowledge
article, in words, and the verifier holds an agent to what the text says."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from myna.itsm.importers import IncidentHistory
from myna.itsm.scenarios import Generation, Scenario, generate, prose
from myna.itsm.scenarios.kinds import JOURNAL, awaits_caller
from myna.replay.episode import FieldEquals, HttpStep, TextCheck
from myna.replay.mock_world import runner_for
from myna.replay.run import run_steps
from myna.replay.text import mentions
from myna.schemas.model import ServiceModel


@pytest.fixture(scope="module")
def generation(history: IncidentHistory, model: ServiceModel) -> Generation:
    return generate(history, model, seed=3)


def _of(generation: Generation, kind: str) -> list[Scenario]:
    return [s for s in generation.scenarios if s.kind == kind]


def _notes(scenario: Scenario, sys_id: str) -> list[str]:
    journal = scenario.episode.environment.initial_world.get(JOURNAL, [])
    return [str(r["value"]) for r in journal if r["element_id"] == sys_id]


def _target(scenario: Scenario) -> dict[str, Any]:
    number = scenario.episode.id.rsplit("-", 1)[-1]
    incidents = scenario.episode.environment.initial_world["incident"]
    return next(r for r in incidents if r["number"] == number)


def _expected(scenario: Scenario, name: str) -> str:
    check = next(c for c in scenario.episode.verifier.checks if c.name == name)
    assert isinstance(check, FieldEquals)
    return str(check.value)


def test_a_resolve_scenario_gives_its_close_code_only_in_the_latest_work_note(
    generation: Generation,
) -> None:
    scenarios = _of(generation, "resolve")
    in_words = 0
    for scenario in scenarios:
        code = _expected(scenario, "close_code")
        assert f'"{code}"' not in scenario.episode.problem.instruction
        (note,) = _notes(scenario, str(_target(scenario)["sys_id"]))
        in_words += code.casefold() not in note.casefold()
    # Most notes say what was done in words; the rest quote the code as the field holds it.
    assert len(scenarios) / 2 < in_words < len(scenarios)


def test_resolve_codes_are_balanced_so_a_guess_is_right_by_chance(
    generation: Generation,
) -> None:
    codes = [_expected(s, "close_code") for s in _of(generation, "resolve")]
    counts = {code: codes.count(code) for code in codes}
    assert len(counts) >= 6
    assert len(set(counts.values())) == 1


def test_a_duplicate_is_named_only_in_its_work_note(
    generation: Generation, history: IncidentHistory
) -> None:
    by_sys_id = {i.sys_id: i for i in history.incidents}
    by_number = 0
    for scenario in _of(generation, "duplicate"):
        target = _target(scenario)
        assert target["cmdb_ci"] == ""
        original = by_sys_id[_expected(scenario, "parent")]
        assert original.number not in scenario.episode.problem.instruction
        (note,) = _notes(scenario, str(target["sys_id"]))
        if original.number in note:
            by_number += 1
            continue
        caller = history.users[original.caller or ""].name
        # By who reported it and the minute it was opened, in one of several wordings.
        assert caller in note
        assert f"{original.opened_at:%M}" in note
    assert 0 < by_number < len(_of(generation, "duplicate"))


def test_sla_skips_what_the_desk_waits_on_the_caller_for(
    generation: Generation, history: IncidentHistory, model: ServiceModel
) -> None:
    by_number = {i.number: i for i in history.incidents}
    scenario = next(
        s
        for s in _of(generation, "sla_escalation")
        if any(
            (i := by_number.get(str(r["number"]))) is not None
            and awaits_caller(i)
            and i.made_sla is False
            and str(r["sys_id"]) in str(s.episode.environment.initial_world.get(JOURNAL))
            for r in s.episode.environment.initial_world["incident"]
        )
    )
    waiting = [
        r
        for r in scenario.episode.environment.initial_world["incident"]
        if (i := by_number.get(str(r["number"]))) is not None
        and awaits_caller(i)
        and i.made_sla is False
        and _notes(scenario, str(r["sys_id"]))
    ]
    assert all(_notes(scenario, str(r["sys_id"]))[0] in prose.AWAITING_CALLER for r in waiting)
    runner = runner_for(scenario.episode, model)
    assert run_steps(runner, scenario.episode.reference.steps).passed
    over = [
        HttpStep(
            method="PATCH",
            path=f"/api/now/table/incident/{r['sys_id']}",
            body={"urgency": "1", "work_notes": "SLA breached: escalated to High urgency."},
        )
        for r in waiting
    ]
    result = run_steps(runner, [*scenario.episode.reference.steps, *over])
    assert not result.passed


def _problem_with(scenario: Scenario, description: str) -> list[HttpStep]:
    (step,) = scenario.episode.reference.steps
    assert isinstance(step, HttpStep)
    assert isinstance(step.body, dict)
    return [step.model_copy(update={"body": {**step.body, "description": description}})]


def test_a_problem_must_name_the_cause_its_reports_match_and_no_other(
    generation: Generation, model: ServiceModel
) -> None:
    scenario = _of(generation, "problem")[0]
    world = scenario.episode.environment.initial_world
    check = next(c for c in scenario.episode.verifier.checks if c.name == "names_cause")
    assert isinstance(check, TextCheck)
    current = [a for a in world["kb_knowledge"] if a["workflow_state"] == "published"]
    assert len(current) >= 2  # the item's fault, another fault of the item, another item
    numbers = ", ".join(re.findall(r"INC\d{7}", scenario.episode.problem.instruction))
    right = f"{check.mentions[0][0]}"
    wrong = check.excludes[0][0]
    runner = runner_for(scenario.episode, model)

    def passes(description: str) -> bool:
        return run_steps(runner, _problem_with(scenario, description)).passed

    assert passes(f"Incidents {numbers} share one fault: the {right} on the item failed.")
    assert not passes(f"Incidents {numbers} share one fault: the {wrong} on the item failed.")
    everything = " ".join(str(a["text"]) for a in current)
    assert not passes(f"Incidents {numbers}. {everything}")


def test_prose_is_deterministic_for_a_seed() -> None:
    def notes(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [prose.close_code_note("code 6", rng) for _ in range(5)]

    assert notes(1) == notes(1)
    assert any("six" in note for note in notes(1) + notes(2))


@pytest.mark.parametrize("cause", prose.CAUSES, ids=lambda c: c.words[0])
def test_each_wording_of_a_cause_names_it_and_no_other(cause: prose.Cause) -> None:
    others = [word for other in prose.CAUSES if other is not cause for word in other.words]
    for sentence in cause.sentences:
        assert any(mentions(sentence, word) for word in cause.words), sentence
        assert not any(mentions(sentence, word) for word in others), sentence
    # What callers report, and the rest of an article, name no cause at all.
    for text in (*cause.reports, cause.symptom, *prose.WORKAROUND):
        assert not any(mentions(text, word) for c in prose.CAUSES for word in c.words), text
