"""The agents behind `--agent`: built-ins, any class by import path, and an OpenAI endpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest

from myna.errors import BenchError
from myna.itsm.agents import AgentContext, HeuristicAgent, RandomAgent, make_agent
from myna.itsm.agents.openai import OpenAIAgent
from myna.itsm.bench import default_data, itsm_model
from myna.itsm.importers import import_history
from myna.itsm.scenarios import Scenario, generate
from myna.replay.audit import Task, task_of
from myna.replay.episode import FieldEquals
from myna.replay.mock_world import runner_for
from myna.replay.run import EpisodeRunner, Result
from myna.schemas.model import ServiceModel


class EchoAgent:
    """A user's agent class, found by `module:Class`."""

    name = "echo"

    def solve(self, task: Task, world: Any, seed: int) -> str | None:
        return task.instruction


class NotAnAgent:
    pass


@pytest.fixture(scope="module")
def model() -> ServiceModel:
    return itsm_model()


@pytest.fixture(scope="module")
def scenarios(model: ServiceModel) -> list[Scenario]:
    return list(generate(import_history(default_data())[0], model, seed=0, limit=40).scenarios)


def _scenario(scenarios: list[Scenario], kind: str) -> Scenario:
    return next(s for s in scenarios if s.kind == kind)


def _play(runner: EpisodeRunner, agent: Any, seed: int = 0) -> Result:
    attempt = runner.start()
    return attempt.submit(agent.solve(task_of(runner.episode), attempt, seed))


@pytest.mark.parametrize("name", ["oracle", "noop", "random", "heuristic"])
def test_built_in_agents_are_made_by_name(name: str) -> None:
    assert make_agent(name, AgentContext()).name == name


def test_any_class_is_an_agent_by_import_path() -> None:
    agent = make_agent(f"{__name__}:EchoAgent", AgentContext())
    assert agent.name == "echo"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt", "unknown agent 'gpt'"),
        ("no_such_module_xyz:Agent", "cannot import 'no_such_module_xyz'"),
        (f"{__name__}:Missing", "has no class 'Missing'"),
        (f"{__name__}:NotAnAgent", "is not an agent"),
    ],
    ids=["unknown-name", "missing-module", "missing-class", "not-an-agent"],
)
def test_bad_agent_specs_are_named(spec: str, message: str) -> None:
    with pytest.raises(BenchError, match=message):
        make_agent(spec, AgentContext())


def test_random_agent_is_seeded(scenarios: list[Scenario], model: ServiceModel) -> None:
    runner = runner_for(_scenario(scenarios, "resolve").episode, model)
    runs = [_play(runner, RandomAgent(), seed) for seed in (3, 3, 4)]
    assert runs[0].as_dict() == runs[1].as_dict()


def test_heuristic_copies_values_the_instruction_spells_out(
    scenarios: list[Scenario], model: ServiceModel
) -> None:
    hold = _play(runner_for(_scenario(scenarios, "hold").episode, model), HeuristicAgent())
    assert hold.passed
    sla = _play(runner_for(_scenario(scenarios, "sla_escalation").episode, model), HeuristicAgent())
    assert not sla.passed


def _tool_call(call_id: str, name: str, arguments: dict[str, str]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _completion(message: dict[str, Any], tokens: int) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", **message}}],
        "usage": {"prompt_tokens": tokens - 5, "completion_tokens": 5, "total_tokens": tokens},
    }


def test_openai_adapter_runs_tool_calls_until_a_final_message(
    chat_endpoint: tuple[str, list[dict[str, Any]], list[dict[str, Any]]],
    scenarios: list[Scenario],
    model: ServiceModel,
) -> None:
    base_url, replies, seen = chat_endpoint
    scenario = _scenario(scenarios, "hold")
    number = scenario.episode.id.rsplit("-", 1)[-1]
    target = next(
        r for r in scenario.episode.environment.initial_world["incident"] if r["number"] == number
    )
    reason = next(
        c.value
        for c in scenario.episode.verifier.checks
        if isinstance(c, FieldEquals) and c.field == "hold_reason"
    )
    find = _tool_call("call_1", "list_incident", {"sysparm_query": f"number={number}"})
    hold = _tool_call(
        "call_2",
        "update_incident",
        {"sys_id": target["sys_id"], "state": "3", "hold_reason": str(reason)},
    )
    replies += [
        _completion({"content": None, "tool_calls": [find]}, 100),
        _completion({"content": None, "tool_calls": [hold]}, 120),
        _completion({"content": "Done: on hold."}, 130),
    ]
    tools = [
        {"type": "function", "function": {"name": name}}
        for name in scenario.episode.environment.tools
    ]
    env = {
        "MYNA_OPENAI_BASE_URL": base_url,
        "MYNA_OPENAI_MODEL": "fake-1",
        "MYNA_OPENAI_API_KEY": "k",
    }
    agent = OpenAIAgent.from_env(tools, env)

    result = _play(runner_for(scenario.episode, model), agent)

    assert result.passed
    assert agent.tokens == 350
    assert agent.name == "openai:fake-1"
    assert [request["model"] for request in seen] == ["fake-1"] * 3
    assert seen[0]["messages"][1] == {
        "role": "user",
        "content": scenario.episode.problem.instruction,
    }
    answered = [m for m in seen[1]["messages"] if m["role"] == "tool"]
    assert answered[0]["tool_call_id"] == "call_1"
    assert json.loads(answered[0]["content"])["body"]["result"][0]["number"] == number
    assert {t["function"]["name"] for t in seen[0]["tools"]} == set(
        scenario.episode.environment.tools
    )


def test_openai_adapter_needs_a_model() -> None:
    with pytest.raises(BenchError, match="MYNA_OPENAI_MODEL"):
        OpenAIAgent.from_env([], {})


def test_openai_adapter_names_a_failing_endpoint(
    chat_endpoint: tuple[str, list[dict[str, Any]], list[dict[str, Any]]],
    scenarios: list[Scenario],
    model: ServiceModel,
) -> None:
    base_url, _, _ = chat_endpoint
    agent = OpenAIAgent(base_url.replace("/v1", "/nowhere"), "fake-1", [])
    with pytest.raises(BenchError, match="answered 404"):
        _play(runner_for(_scenario(scenarios, "hold").episode, model), agent)
