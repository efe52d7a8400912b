"""The adversarial suite against ITSMBench: every kind, on the shipped data and the UCI sample.

No adversary reaches 5% pass^1 on any kind; the reference with a harmless work note on its target
still passes; doing nothing earns no partial reward.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from myna.itsm.bench import default_data, itsm_model
from myna.itsm.importers import import_history
from myna.itsm.scenarios import KINDS, Generation, Scenario, generate
from myna.replay.episode import AnswerStep, HttpStep
from myna.replay.mock_world import MockWorlds, runner_for
from myna.replay.run import EpisodeRunner, Routes, run_steps
from myna.schemas.model import ServiceModel
from tests.adversaries import ADVERSARIES, Attack, BlindGuesser, attack_all, servicenow_labels
from tests.itsm.conftest import corpus_file

PER_KIND = 10
TRIALS = 2
UCI = "uci_incident_event_log/incident_event_log_first5998.csv"


@pytest.fixture(scope="module")
def model() -> ServiceModel:
    return itsm_model()


def _data(source: str) -> Path:
    return default_data() if source == "shipped" else corpus_file(UCI)


@pytest.fixture(scope="module", params=["shipped", "uci"])
def generation(request: pytest.FixtureRequest, model: ServiceModel) -> Generation:
    history, _ = import_history(_data(request.param), names_seed=0)  # as the bench names it
    return generate(history, model, seed=0)


def _sample(generation: Generation) -> dict[str, list[Scenario]]:
    by_kind: dict[str, list[Scenario]] = defaultdict(list)
    for scenario in generation.scenarios:
        if len(by_kind[scenario.kind]) < PER_KIND:
            by_kind[scenario.kind].append(scenario)
    return by_kind


def test_no_adversary_reaches_five_percent_on_any_kind(
    generation: Generation, model: ServiceModel
) -> None:
    routes = Routes.from_model(model)
    worlds = MockWorlds(model)
    guesser = BlindGuesser(
        [Attack(s.episode, model, routes) for s in generation.scenarios], servicenow_labels
    )
    suite = {**ADVERSARIES, "blind_guesser": guesser}
    rates = {}
    for kind, scenarios in _sample(generation).items():
        runners = [runner_for(s.episode, model, worlds) for s in scenarios]
        for name, tally in attack_all(runners, model, suite, trials=TRIALS).items():
            rates[(kind, name)] = (tally.rate, tally.examples)
    assert {key: found for key, found in rates.items() if found[0] > 0.05} == {}
    assert {kind for kind, _ in rates} == {k for k in KINDS if generation.yielded[k]}


def _runners(generation: Generation, model: ServiceModel) -> list[EpisodeRunner]:
    worlds = MockWorlds(model)
    return [
        runner_for(s.episode, model, worlds)
        for group in _sample(generation).values()
        for s in group
    ]


def test_the_reference_with_a_work_note_on_its_target_passes(
    generation: Generation, model: ServiceModel
) -> None:
    for runner in _runners(generation, model):
        steps = list(runner.episode.reference.steps)
        target = next(
            (s.path for s in steps if isinstance(s, HttpStep) and s.method == "PATCH"), None
        )
        if target is None:
            continue  # a create or a question: nothing of the world is its target to note
        note = HttpStep(
            method="PATCH", path=target, body={"work_notes": "Checked with the caller by phone."}
        )
        answers = [s for s in steps if isinstance(s, AnswerStep)]
        noted = [s for s in steps if not isinstance(s, AnswerStep)] + [note, *answers]
        result = run_steps(runner, noted)
        assert result.passed, (runner.episode.id, result.verification.as_dict())


def test_doing_nothing_earns_no_partial_reward(generation: Generation, model: ServiceModel) -> None:
    rewards = {run_steps(runner, []).reward for runner in _runners(generation, model)}
    assert rewards == {0.0}
