"""Agents ITSMBench can run, behind the replay engine's agent interface.

An agent is any object with a `name` and `solve(task, world, seed) -> answer | None`
(`myna.replay.audit.Agent`): `task` holds the episode id, the instruction and the tool names
offered; `world` offers `tool(name, arguments)` and `call(method, path, params, body)`, each
returning a reply with `status` and `body`; `seed` differs between trials. An agent that talks to
a model may also expose `tokens: int | None`, the tokens its last `solve` used, for the report.

`make_agent(spec, context)` builds one by name: `oracle`, `noop`, `random`, `heuristic`, `rules`,
`openai` (an OpenAI-compatible chat endpoint; see `myna.itsm.agents.openai`), or `module:Class`
for any Python class, constructed with no arguments in a child process
(`myna.replay.isolation`): it gets the task text, the tool names and the service's API, and can
read neither the episode nor its reference solution nor the call log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from myna.errors import BenchError, ReplayError
from myna.itsm.agents.baselines import HeuristicAgent, NoopAgent, OracleAgent, RandomAgent
from myna.itsm.agents.rules import RuleAgent
from myna.replay.audit import Agent
from myna.replay.episode import Solution
from myna.replay.isolation import IsolatedAgent

__all__ = [
    "AGENTS",
    "AgentContext",
    "HeuristicAgent",
    "NoopAgent",
    "OracleAgent",
    "RandomAgent",
    "RuleAgent",
    "make_agent",
]


@dataclass(frozen=True, slots=True)
class AgentContext:
    """What the bench hands an agent factory: reference solutions (only the oracle reads them)
    and the OpenAI tool definitions of the offered tools."""

    references: Mapping[str, Solution] = field(default_factory=dict)
    tools: tuple[dict[str, object], ...] = ()


def _openai(context: AgentContext) -> Agent:
    from myna.itsm.agents.openai import OpenAIAgent

    return OpenAIAgent.from_env(list(context.tools))


AGENTS: dict[str, Callable[[AgentContext], Agent]] = {
    "oracle": lambda context: OracleAgent(context.references),
    "noop": lambda context: NoopAgent(),
    "random": lambda context: RandomAgent(),
    "heuristic": lambda context: HeuristicAgent(),
    "rules": lambda context: RuleAgent(),
    "openai": _openai,
}


def make_agent(spec: str, context: AgentContext) -> Agent:
    """The agent `spec` names: a built-in name, or `module:Class` for any importable class."""
    factory = AGENTS.get(spec)
    if factory is not None:
        return factory(context)
    module_name, colon, class_name = spec.partition(":")
    if not colon or not module_name or not class_name:
        known = ", ".join(sorted(AGENTS))
        raise BenchError(f"unknown agent {spec!r}: give one of {known}, or module:Class")
    try:
        # Outside the verifier's reach: the agent runs in a child process that gets the task
        # text and the service's API, never the episode, its reference or the call log.
        return IsolatedAgent(spec)
    except ReplayError as refused:
        raise BenchError(refused.message, agent=spec) from None
