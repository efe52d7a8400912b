"""ITSMBench end to end: import, seed, generate, audit, run an agent, score.

`prepare` imports an export (the shipped synthetic log by default), generates scenarios and audits
each one with the replay engine (reference passes, no-op and probes fail, deterministic); only
accepted scenarios are run. `run` plays an agent `trials` times on each, in `workers` threads
(each with its own in-process mock) or on a Ray pool's actors (`myna.replay.distributed`, each
with its own mocks), and `score` turns the trials into pass^1, pass^k, partial
reward, tool calls and tokens, overall and per kind and tier.

pass^k is tau-bench's: the chance that k independent trials of a task all succeed, estimated per
task from n trials with c successes as C(c, k) / C(n, k), and averaged over tasks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.resources import files
from itertools import pairwise
from math import comb
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from myna.itsm.agents import AgentContext, make_agent
from myna.itsm.importers import ImportReport, IncidentHistory, import_history
from myna.itsm.scenarios import KINDS, Generation, Scenario, generate
from myna.itsm.scenarios.kinds import TOOLS
from myna.itsm.scenarios.truth import disagreements
from myna.replay.audit import Agent, AuditReport, audit, record_audit, task_of, with_gate
from myna.replay.distributed import RayPool
from myna.replay.episode import Episode, save_episode
from myna.replay.mock_world import MockWorlds, runner_for
from myna.replay.run import EpisodeRunner
from myna.schemas.model import ServiceModel

Progress = Callable[[int, int], None]
"""Called as work finishes with (units done so far, units in all)."""


def default_data() -> Path:
    """The synthetic export that ships with Myna (clearly labelled synthetic in its header)."""
    return Path(str(files("myna.itsm.data").joinpath("synthetic_incident_event_log.csv")))


def itsm_model() -> ServiceModel:
    from myna.backends import builtin_model

    return builtin_model("itsm")


class _Runners:
    """Episode runners on one in-process mock per thread (a store's worlds stay in its thread)."""

    def __init__(self, model: ServiceModel) -> None:
        self.model = model
        self._local = threading.local()

    def runner(self, episode: Episode) -> EpisodeRunner:
        worlds: MockWorlds | None = getattr(self._local, "worlds", None)
        if worlds is None:
            worlds = MockWorlds(self.model)
            self._local.worlds = worlds
        return runner_for(episode, self.model, worlds)


T = TypeVar("T")


def _map(
    setup: Callable[[], Callable[[Scenario], T]],
    items: Sequence[Scenario],
    workers: int,
    progress: Progress | None,
    pool: RayPool | None = None,
) -> list[T]:
    """`setup()` applied to every item in order: on the Ray pool's actors (each builds its own
    with `setup`), else in `workers` threads sharing one (its mocks are per thread)."""
    if pool is not None:
        return pool.map(setup, items, progress)
    function = setup()
    done = 0
    lock = threading.Lock()

    def one(item: Scenario) -> T:
        nonlocal done
        out = function(item)
        if progress is not None:
            with lock:
                done += 1
                progress(done, len(items))
        return out

    if workers <= 1:
        return [one(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool_:
        return list(pool_.map(one, items))


@dataclass(frozen=True, slots=True)
class Prepared:
    """Scenarios from one export, audited."""

    source: str
    import_report: ImportReport
    generation: Generation
    audits: tuple[AuditReport, ...]
    model: ServiceModel
    synthetic: bool = False

    @property
    def accepted(self) -> list[Scenario]:
        return [
            s
            for s, a in zip(self.generation.scenarios, self.audits, strict=True)
            if a.status == "accepted"
        ]


def prepare(
    data: Path | None = None,
    *,
    seed: int = 0,
    limit: int | None = None,
    workers: int = 1,
    model: ServiceModel | None = None,
    progress: Progress | None = None,
    pool: RayPool | None = None,
) -> Prepared:
    path = data or default_data()
    # Coded labels ("Group 56") get realistic names: matching digits is no reading.
    history, report = import_history(path, names_seed=seed)
    service = model or itsm_model()
    generation = generate(history, service, seed=seed, limit=limit)
    audits = _map(_Audits(history, service, seed), generation.scenarios, workers, progress, pool)
    return Prepared(
        str(path),
        report,
        generation,
        tuple(audits),
        service,
        history.synthetic,
    )


def audit_scenario(
    runner: EpisodeRunner,
    scenario: Scenario,
    history: IncidentHistory,
    model: ServiceModel,
    *,
    seed: int = 0,
) -> AuditReport:
    """The replay audit of a scenario's episode, and its reference compared with a second
    derivation of the outcome from the history (`myna.itsm.scenarios.truth`)."""
    report = audit(runner, model, k=1, seed=seed)
    return with_gate(report, "agrees_with_history", disagreements(history, scenario))


@dataclass(frozen=True, slots=True)
class _Audits:
    """Builds the audit of one scenario on mocks of its own (a thread's or a Ray actor's)."""

    history: IncidentHistory
    model: ServiceModel
    seed: int

    def __call__(self) -> Callable[[Scenario], AuditReport]:
        runners = _Runners(self.model)
        return lambda scenario: audit_scenario(
            runners.runner(scenario.episode), scenario, self.history, self.model, seed=self.seed
        )


def save_episodes(prepared: Prepared, directory: Path) -> list[Path]:
    """Write every generated scenario as a `myna.episode/1` file with its audit recorded, so the
    replay engine (`myna replay run|export`, `myna.replay.Env`) can use them directly."""
    return [
        save_episode(record_audit(scenario.episode, report), directory)
        for scenario, report in zip(prepared.generation.scenarios, prepared.audits, strict=True)
    ]


class Trial(BaseModel):
    scenario: str
    kind: str
    tier: int
    trial: int
    passed: bool
    reward: float
    tool_calls: int
    tokens: int | None = None
    repercussion: str | None = None
    failed: list[str] = Field(default_factory=list)
    """The checks the attempt failed, each as "name: what was wrong"."""


FAILED_DETAIL = 240
"""How much of a failed check's detail a trial keeps."""


def run(
    prepared: Prepared,
    agent_spec: str,
    *,
    trials: int = 1,
    workers: int = 1,
    seed: int = 0,
    progress: Progress | None = None,
    pool: RayPool | None = None,
) -> list[Trial]:
    scenarios = prepared.accepted
    tools = _tool_definitions(prepared.model)
    context = AgentContext(
        references={s.episode.id: s.episode.reference for s in scenarios}, tools=tuple(tools)
    )
    make_agent(agent_spec, context)  # fail before any work when the agent cannot be built
    plays = _Plays(prepared.model, agent_spec, context, trials, seed)
    played = _map(plays, scenarios, workers, progress, pool)
    return [trial for group in played for trial in group]


@dataclass(frozen=True, slots=True)
class _Plays:
    """Builds the trials of one scenario on mocks and agents of its own (per thread or actor)."""

    model: ServiceModel
    agent_spec: str
    context: AgentContext
    trials: int
    seed: int

    def __call__(self) -> Callable[[Scenario], list[Trial]]:
        runners = _Runners(self.model)
        local = threading.local()

        def agent() -> Agent:
            built: Agent | None = getattr(local, "agent", None)
            if built is None:
                built = make_agent(self.agent_spec, self.context)
                local.agent = built
            return built

        return lambda scenario: [
            self._trial(runners.runner(scenario.episode), agent(), scenario, index)
            for index in range(self.trials)
        ]

    def _trial(self, runner: EpisodeRunner, solver: Agent, scenario: Scenario, index: int) -> Trial:
        attempt = runner.start()
        result = attempt.submit(solver.solve(task_of(scenario.episode), attempt, self.seed + index))
        return Trial(
            scenario=scenario.episode.id,
            kind=scenario.kind,
            tier=scenario.tier,
            trial=index,
            passed=result.passed,
            reward=result.reward,
            tool_calls=len(attempt.calls),
            tokens=getattr(solver, "tokens", None),
            repercussion=None if result.repercussion is None else result.repercussion.kind,
            failed=[
                f"{c.name}: {c.detail}"[:FAILED_DETAIL]
                for c in result.verification.checks
                if not c.passed
            ],
        )


LADDER: tuple[str, ...] = ("noop", "random", "heuristic", "rules")
"""The solver ladder, weakest first: each rung should pass less as the tiers rise."""


@dataclass(frozen=True, slots=True)
class Rung:
    """One solver's pass^1 per tier (tier -> share of the tier's scenarios passed)."""

    agent: str
    by_tier: dict[int, float]
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)
    """kind -> (trials passed, trials played)."""

    @property
    def falls(self) -> bool:
        """Whether its pass rate falls strictly from each tier to the next."""
        rates = [self.by_tier[tier] for tier in sorted(self.by_tier)]
        return all(a > b for a, b in pairwise(rates))


def ladder(prepared: Prepared, agents: Sequence[str] = LADDER, *, workers: int = 1) -> list[Rung]:
    """Every solver of the ladder once on every accepted scenario, by tier."""
    rungs = []
    for agent in agents:
        played = run(prepared, agent, workers=workers)
        tiers = sorted({t.tier for t in played})
        by_tier = {
            tier: sum(t.passed for t in played if t.tier == tier)
            / sum(1 for t in played if t.tier == tier)
            for tier in tiers
        }
        by_kind = {
            kind: (
                sum(t.passed for t in played if t.kind == kind),
                sum(t.kind == kind for t in played),
            )
            for kind in sorted({t.kind for t in played})
        }
        rungs.append(Rung(agent, by_tier, by_kind))
    return rungs


def _tool_definitions(model: ServiceModel) -> list[dict[str, object]]:
    from myna.mocks.tools import Toolbox

    toolbox = Toolbox(model)
    return [toolbox.tool(name).openai() for name in TOOLS]


def pass_hat_k(successes: Iterable[tuple[int, int]], k: int) -> float | None:
    """tau-bench's pass^k over tasks given as (trials n, successes c): mean of C(c,k)/C(n,k);
    None when some task has fewer than k trials."""
    rows = list(successes)
    if not rows or any(n < k for n, _ in rows):
        return None
    return sum(comb(c, k) / comb(n, k) for n, c in rows) / len(rows)


class Score(BaseModel):
    scenarios: int
    trials: int
    pass_hat: dict[int, float] = Field(description="k -> pass^k")
    reward: float
    tool_calls: float
    tokens: int | None = None


def score(trials: Sequence[Trial]) -> Score:
    by_scenario: dict[str, list[Trial]] = {}
    for trial in trials:
        by_scenario.setdefault(trial.scenario, []).append(trial)
    rows = [(len(group), sum(t.passed for t in group)) for group in by_scenario.values()]
    most = min((n for n, _ in rows), default=0)
    curve = {k: pass_hat_k(rows, k) for k in range(1, most + 1)}
    reported = [t.tokens for t in trials if t.tokens is not None]
    count = len(trials)
    return Score(
        scenarios=len(by_scenario),
        trials=count,
        pass_hat={k: value for k, value in curve.items() if value is not None},
        reward=sum(t.reward for t in trials) / count if count else 0.0,
        tool_calls=sum(t.tool_calls for t in trials) / count if count else 0.0,
        tokens=sum(reported) if reported else None,
    )


class SourceYield(BaseModel):
    """The headline: how many scenarios the data yielded, and how many survived the audit."""

    kind: str
    yielded: int
    generated: int
    accepted: int
    rejections: dict[str, int] = Field(default_factory=dict)


class Example(BaseModel):
    """A failed trial shown in the report: what was asked and which checks failed."""

    scenario: str
    kind: str
    tier: int
    instruction: str
    reward: float
    failed: list[str]


EXAMPLES = 2
"""Failed trials the report shows per kind and tier."""


def examples(prepared: Prepared, trials: Sequence[Trial]) -> list[Example]:
    """The first failed trials of each kind and tier, with their instructions."""
    asked = {s.episode.id: s.episode.problem.instruction for s in prepared.accepted}
    shown: dict[tuple[str, int], list[Example]] = {}
    for trial in trials:
        slot = shown.setdefault((trial.kind, trial.tier), [])
        if trial.passed or len(slot) >= EXAMPLES or trial.scenario not in asked:
            continue
        if any(e.scenario == trial.scenario for e in slot):
            continue
        slot.append(
            Example(
                scenario=trial.scenario,
                kind=trial.kind,
                tier=trial.tier,
                instruction=asked[trial.scenario],
                reward=trial.reward,
                failed=trial.failed,
            )
        )
    return [example for key in sorted(shown) for example in shown[key]]


class BenchResult(BaseModel):
    format: str = "myna.itsmbench/1"
    source: str
    source_format: str
    synthetic: bool
    agent: str
    trials_per_scenario: int
    seed: int
    import_issues: dict[str, int]
    seed_issues: list[dict[str, object]]
    yields: list[SourceYield]
    overall: Score
    by_kind: dict[str, Score]
    by_tier: dict[str, Score]
    trials: list[Trial]
    examples: list[Example] = Field(default_factory=list)

    @property
    def survival(self) -> tuple[int, int]:
        return sum(y.accepted for y in self.yields), sum(y.generated for y in self.yields)


def yields(prepared: Prepared) -> list[SourceYield]:
    out = []
    for kind in KINDS:
        pairs = [
            (s, a)
            for s, a in zip(prepared.generation.scenarios, prepared.audits, strict=True)
            if s.kind == kind
        ]
        rejections: dict[str, int] = {}
        for _, report in pairs:
            for gate in report.gates:
                if not gate.ok:
                    rejections[gate.name] = rejections.get(gate.name, 0) + 1
        out.append(
            SourceYield(
                kind=kind,
                yielded=prepared.generation.yielded[kind],
                generated=len(pairs),
                accepted=sum(a.status == "accepted" for _, a in pairs),
                rejections=rejections,
            )
        )
    return out


def result(
    prepared: Prepared, agent: str, trials: Sequence[Trial], *, per_scenario: int, seed: int
) -> BenchResult:
    """Everything a run found, for the JSON file and the report."""
    kinds = sorted({t.kind for t in trials})
    tiers = sorted({t.tier for t in trials})
    return BenchResult(
        source=prepared.source,
        source_format=prepared.import_report.format,
        synthetic=prepared.synthetic,
        agent=agent,
        trials_per_scenario=per_scenario,
        seed=seed,
        import_issues={str(k): v for k, v in prepared.import_report.by_kind().items()},
        seed_issues=[
            {
                "table": i.table,
                "field": i.field,
                "kind": i.kind,
                "detail": i.detail,
                "count": i.count,
            }
            for i in prepared.generation.seed_issues
        ],
        yields=yields(prepared),
        overall=score(trials),
        by_kind={kind: score([t for t in trials if t.kind == kind]) for kind in kinds},
        by_tier={str(tier): score([t for t in trials if t.tier == tier]) for tier in tiers},
        trials=list(trials),
        examples=examples(prepared, trials),
    )
