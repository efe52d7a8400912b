"""The adversarial suite against every shipped replay episode: the failure logs in
`myna/replay/samples`, built with three variants each on the built-in ITSM back end. No adversary
passes any episode; the reference with a harmless work note on its target passes every one."""

from __future__ import annotations

import pytest

from myna.replay.audit import attempt_with
from myna.replay.build import BuildReport
from myna.replay.episode import AnswerStep, HttpStep
from myna.replay.isolation import IsolatedAgent
from myna.replay.mock_world import MockWorlds, runner_for
from myna.replay.run import EpisodeRunner, Routes, run_steps
from myna.schemas.model import ServiceModel
from tests.adversaries import ADVERSARIES, Attack, BlindGuesser, attack_all
from tests.replay.conftest import build_samples_on_itsm

TRIALS = 5


@pytest.fixture(scope="module")
def built() -> tuple[ServiceModel, MockWorlds, BuildReport]:
    return build_samples_on_itsm(variants=3)


@pytest.fixture(scope="module")
def model(built: tuple[ServiceModel, MockWorlds, BuildReport]) -> ServiceModel:
    return built[0]


@pytest.fixture(scope="module")
def runners(built: tuple[ServiceModel, MockWorlds, BuildReport]) -> list[EpisodeRunner]:
    model, worlds, report = built
    assert len(report.episodes) == 24
    return [runner_for(episode, model, worlds) for episode in report.episodes]


def test_no_adversary_passes_any_shipped_episode(
    runners: list[EpisodeRunner], model: ServiceModel
) -> None:
    routes = Routes.from_model(model)
    guesser = BlindGuesser([Attack(r.episode, model, routes) for r in runners])
    tallies = attack_all(runners, model, {**ADVERSARIES, "blind_guesser": guesser}, trials=TRIALS)
    passing = {name: tally.examples for name, tally in tallies.items() if tally.passes}
    assert passing == {}
    assert sum(tally.tries for tally in tallies.values()) >= 500


def test_the_reference_with_a_harmless_note_on_its_target_passes_every_episode(
    runners: list[EpisodeRunner],
) -> None:
    for runner in runners:
        episode = runner.episode
        steps = list(episode.reference.steps)
        writes = [s for s in steps if isinstance(s, HttpStep) and s.method == "PATCH"]
        target = writes[0].path if writes else _named_record(runner)
        note = HttpStep(method="PATCH", path=target, body={"work_notes": "Spoke to the caller."})
        answers = [s for s in steps if isinstance(s, AnswerStep)]
        noted = [s for s in steps if not isinstance(s, AnswerStep)] + [note, *answers]
        result = run_steps(runner, noted)
        assert result.passed, (episode.id, [c.detail for c in result.verification.checks])


def _named_record(runner: EpisodeRunner) -> str:
    """The incident a question names (its number is in the instruction)."""
    instruction = runner.episode.problem.instruction
    for record in runner.episode.environment.initial_world["incident"]:
        if str(record["number"]) in instruction:
            return f"/api/now/table/incident/{record['sys_id']}"
    raise AssertionError(f"{runner.episode.id} names no incident")


def test_the_introspector_finds_nothing_from_its_child_process(
    runners: list[EpisodeRunner],
) -> None:
    agent = IsolatedAgent("tests.introspector:Introspector")
    try:
        results = [attempt_with(runner, agent, 0) for runner in runners[::6]]
    finally:
        agent.close()
    assert [r.passed for r in results] == [False] * len(results)
    assert {r.reward for r in results} == {0.0}
