"""ITSMBench scenarios: replay-engine episodes generated from an imported incident history.

`generate(history, model, seed=...)` adapts the history's records to the ITSM back end's model
(`myna.itsm.scenarios.world.adapt`), runs every scenario kind over it and returns the scenarios,
with how many each kind yielded and what the adaptation could not map. The same history and seed
always give the same scenarios.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from myna.itsm.importers import IncidentHistory, to_servicenow_records
from myna.itsm.scenarios.kinds import (
    KINDS,
    TIERS,
    Scenario,
    ScenarioKind,
    Source,
    all_kinds,
    tier_of,
)
from myna.itsm.scenarios.world import SeededData, SeedIssue, adapt
from myna.schemas.model import ServiceModel

__all__ = [
    "KINDS",
    "TIERS",
    "Generation",
    "Scenario",
    "ScenarioKind",
    "SeedIssue",
    "SeededData",
    "adapt",
    "generate",
    "interleave",
    "tier_of",
]


@dataclass(frozen=True, slots=True)
class Generation:
    """The scenarios a history yields, and what it took to get them."""

    scenarios: tuple[Scenario, ...]
    yielded: dict[ScenarioKind, int]
    """How many scenarios each kind found ground truth for, before any limit."""
    seed_issues: tuple[SeedIssue, ...]


def generate(
    history: IncidentHistory, model: ServiceModel, *, seed: int = 0, limit: int | None = None
) -> Generation:
    """Every scenario the history supports, shuffled by `seed` and interleaved by kind, so a
    `limit` keeps every kind represented."""
    data = adapt(to_servicenow_records(history), model)
    by_kind = all_kinds(Source(history, data, model, seed).with_background())
    yielded = {kind: len(by_kind[kind]) for kind in KINDS}
    chosen = interleave(by_kind, seed)
    if limit is not None:
        chosen = chosen[:limit]
    return Generation(tuple(chosen), yielded, data.issues)


def interleave(by_kind: dict[ScenarioKind, list[Scenario]], seed: int) -> list[Scenario]:
    """Round-robin over kinds, each kind's scenarios in a seeded shuffle."""
    queues = []
    for kind in KINDS:
        scenarios = list(by_kind.get(kind, []))
        random.Random(f"{seed}:{kind}").shuffle(scenarios)
        queues.append(scenarios)
    out: list[Scenario] = []
    for position in range(max((len(q) for q in queues), default=0)):
        out += [queue[position] for queue in queues if position < len(queue)]
    return out
