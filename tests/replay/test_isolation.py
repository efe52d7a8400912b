"""Agents outside the verifier's reach: a `module:Class` agent runs in a child process with the
task text and the service's API only, and whatever it does there stays there."""

from __future__ import annotations

import pytest

from myna.errors import ReplayError
from myna.replay.audit import attempt_with, task_of
from myna.replay.episode import Episode
from myna.replay.isolation import IsolatedAgent
from tests.introspector import Introspector
from tests.replay.test_env import make_runner

AGENTS = "tests.replay.isolated_agents"


def test_an_isolated_agent_works_the_service_over_http_calls_and_tools(episode: Episode) -> None:
    agent = IsolatedAgent(f"{AGENTS}:HttpResolver")
    try:
        assert agent.name == "http-resolver"
        runner = make_runner(episode)
        first, second = attempt_with(runner, agent, 0), attempt_with(runner, agent, 1)
        assert first.passed
        assert second.passed  # one child, attempt after attempt
    finally:
        agent.close()


def test_the_introspector_reads_the_answer_in_process_and_nothing_in_a_child(
    episode: Episode,
) -> None:
    runner = make_runner(episode)
    assert attempt_with(runner, Introspector(), 0).passed  # the attack is real
    isolated = IsolatedAgent("tests.introspector:Introspector")
    try:
        result = attempt_with(runner, isolated, 0)
    finally:
        isolated.close()
    assert not result.passed
    assert result.reward == 0.0


@pytest.mark.parametrize("name", ["Crasher", "Quitter"])
def test_an_agent_that_breaks_fails_its_attempt_and_the_next_one_gets_a_fresh_child(
    episode: Episode, name: str
) -> None:
    agent = IsolatedAgent(f"{AGENTS}:{name}")
    try:
        runner = make_runner(episode)
        attempt = runner.start()
        assert agent.solve(task_of(episode), attempt, 0) is None
        assert agent.solve(task_of(episode), runner.start(), 1) is None
    finally:
        agent.close()


def test_an_agent_past_its_time_is_stopped(episode: Episode) -> None:
    agent = IsolatedAgent(f"{AGENTS}:Sleeper", timeout=1.0)
    try:
        assert agent.solve(task_of(episode), make_runner(episode).start(), 0) is None
    finally:
        agent.close()


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (f"{AGENTS}:Unbuildable", "ValueError: no configuration"),
        (f"{AGENTS}:Missing", "has no class 'Missing'"),
        ("tests.replay.no_such_module:Agent", "cannot import"),
        (f"{AGENTS}:NotAnAgent", "is not an agent"),
        ("no-colon", "expected module:Class"),
    ],
    ids=["raises", "missing-class", "missing-module", "not-an-agent", "bad-spec"],
)
def test_an_agent_that_cannot_be_built_is_named(spec: str, said: str) -> None:
    with pytest.raises(ReplayError, match=said):
        IsolatedAgent(spec)
