"""Auditing: is an episode correct (its verifier means what it says), and how hard is it?

An episode is accepted only if every gate holds:
- `reads_something`: the verifier has at least one goal check (not only guards), and every check
  reads a resource the model has;
- `world_valid`: the initial world satisfies the model (known resources and fields, unique ids,
  values that fit their fields' schemas, states of the state machines, references that resolve
  inside the world);
- `reference_passes`: the reference solution earns the full reward;
- `noop_fails`: an agent that does nothing does not pass;
- `probe:<name>`: every adversarial probe that applies fails (mass updates, deleting records,
  guessing the answer, calling admin or undocumented endpoints, replaying the logged failure);
- `deterministic`: rerunning the reference and the no-op gives identical breakdowns;
- `goals_unmet_initially`, `names_exist`, `states_agree`, `mutants_fail`, `clock_independent`:
  defects a passing reference cannot show (`myna.replay.defects`): a goal the initial world
  already meets, a record number the world lacks, an instruction naming another state than the
  one checked, a checked value that may be wrong and still pass, a verdict that moves with a
  shifted clock (when the worlds' factory can shift it).
Correctness is the share of gates that hold; rejected episodes keep their reasons.

Difficulty is `1 - pass rate` over k tries: of the agents the user plugs in when there are any,
otherwise of the built-in near-miss solvers (the reference with one step dropped, one value
perturbed, or the target record swapped). Near-miss pass rates measure how much precision the
verifier demands, not how hard a model finds the task; `ingest` replaces them with real rollouts.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Literal, Protocol

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field

from myna.replay.defects import (
    already_met,
    clock_findings,
    missing_names,
    mutant_findings,
    mutants,
    state_disagreements,
)
from myna.replay.episode import (
    GUARD_KINDS,
    AnswerStep,
    AuditEntry,
    Episode,
    HttpStep,
    PassStats,
    Scores,
    Step,
)
from myna.replay.registry import Registry
from myna.replay.run import EpisodeRunner, Reply, Result, run_steps
from myna.replay.shared import Layers, Tables
from myna.replay.verify import index_environment, scalar
from myna.replay.world import Clocked
from myna.schemas.model import FieldSpec, ServiceModel

_PARAM = re.compile(r"\{[^/{}]+\}")
PROBE_RECORDS = 12
"""How many other records a mass-update or delete probe hits at most (see `Context.others`)."""
CLOCK_SHIFT = 400 * 86400 + 7 * 3600
"""How far the clock moves for the clock gate: another year, month, weekday and hour."""


@dataclass(frozen=True, slots=True)
class Task:
    """What an agent may see of an episode: never the verifier or the reference solution."""

    episode_id: str
    instruction: str
    tools: tuple[str, ...]


class AgentWorld(Protocol):
    """The calls an agent can make during an attempt (an `Attempt` is one)."""

    def call(self, method: str, path: str, params: Any = None, body: Any = None) -> Reply: ...

    def tool(self, name: str, arguments: Any) -> Reply: ...


class Agent(Protocol):
    """Anything that can try an episode: act through `world`, return a final answer or None.

    `seed` differs between the k tries so a stochastic agent can vary; a deterministic one may
    ignore it.
    """

    @property
    def name(self) -> str: ...

    def solve(self, task: Task, world: AgentWorld, seed: int) -> str | None: ...


def task_of(episode: Episode) -> Task:
    return Task(episode.id, episode.problem.instruction, tuple(episode.environment.tools))


def attempt_with(runner: EpisodeRunner, agent: Agent, seed: int) -> Result:
    attempt = runner.start()
    answer = agent.solve(task_of(runner.episode), attempt, seed)
    return attempt.submit(answer)


@dataclass(frozen=True, slots=True)
class Scripted:
    """An agent that plays fixed steps (the built-in solvers and probes are these)."""

    name: str
    steps: tuple[Step, ...]

    def solve(self, task: Task, world: AgentWorld, seed: int) -> str | None:
        answer: str | None = None
        for step in self.steps:
            if isinstance(step, AnswerStep):
                answer = step.text
            elif isinstance(step, HttpStep):
                world.call(step.method, step.path, step.params, step.body)
            else:
                world.tool(step.tool, step.arguments)
        return answer


@dataclass(frozen=True, slots=True)
class Context:
    """What built-in probes and solvers may read: everything, unlike an agent."""

    episode: Episode
    model: ServiceModel

    def item_path(self, resource: str, record_id: str) -> str | None:
        spec = self.model.resources.get(resource)
        if spec is None or spec.item_path is None:
            return None
        return _PARAM.sub(record_id, spec.item_path, count=1)

    def record_ids(self, resource: str) -> list[str]:
        return sorted(index_environment(self.episode.environment).get(resource, {}))

    def others(self, resource: str, but: set[str]) -> list[str]:
        """Up to `PROBE_RECORDS` ids of `resource` not in `but`, for a probe to hit: those the
        episode holds of its own first (its distractors, the look-alikes a careless agent
        hits), then the rest in id order. A guard that lets the probe through with this many
        lets it through with all; bounding them keeps a probe's cost off the world's size."""
        layers = self.episode.environment.layers
        own = sorted(layers.own.get(resource, {})) if layers is not None else []
        picked = dict.fromkeys(i for i in [*own, *self.record_ids(resource)] if i not in but)
        return list(picked)[:PROBE_RECORDS]

    def write_targets(self) -> list[tuple[str, str, HttpStep]]:
        """(resource, record id, step) for reference writes addressed to an existing record."""
        found = []
        for step in self.episode.reference.steps:
            if not isinstance(step, HttpStep) or step.method.upper() not in _WRITES:
                continue
            record_id = step.path.rstrip("/").rsplit("/", 1)[-1]
            world = index_environment(self.episode.environment)
            for resource in self.episode.environment.initial_world:
                if record_id in world.get(resource, {}):
                    found.append((resource, record_id, step))
        return found


_WRITES = frozenset({"PATCH", "PUT", "POST", "DELETE"})

ProbeFactory = Callable[[Context], Scripted | None]
PROBES: Registry[ProbeFactory] = Registry("probe")
SolverFactory = Callable[[Context, random.Random], Scripted]
SOLVERS: Registry[SolverFactory] = Registry("near-miss solver")


def _reference(context: Context) -> tuple[Step, ...]:
    return tuple(context.episode.reference.steps)


@PROBES.register("mass_update")
def _mass_update(context: Context) -> Scripted | None:
    """Solves the task, and applies each reference update to every other record as well."""
    steps: list[Step] = []
    for resource, record_id, step in context.write_targets():
        if step.method.upper() not in ("PATCH", "PUT"):
            continue
        for other in context.others(resource, {record_id}):
            steps.append(step.model_copy(update={"path": step.path.replace(record_id, other)}))
    if not steps:
        return None
    return Scripted("mass_update", (*_reference(context), *steps))


@PROBES.register("delete_records")
def _delete_records(context: Context) -> Scripted | None:
    """Solves the task, then deletes every record the task did not need."""
    touched = {record_id for _, record_id, _ in context.write_targets()}
    deletes: list[Step] = []
    for resource in context.episode.environment.initial_world:
        for record_id in context.others(resource, touched):
            path = context.item_path(resource, record_id)
            if path is not None:
                deletes.append(HttpStep(method="DELETE", path=path))
    if not deletes:
        return None
    return Scripted("delete_records", (*_reference(context), *deletes))


def _answers(context: Context) -> tuple[Step, ...]:
    return tuple(s for s in context.episode.reference.steps if isinstance(s, AnswerStep))


def _without_answers(context: Context) -> tuple[Step, ...]:
    return tuple(s for s in context.episode.reference.steps if not isinstance(s, AnswerStep))


@PROBES.register("guess_answer")
def _guess_answer(context: Context) -> Scripted | None:
    """Does the work but answers with every value in the world, hoping one is right."""
    if context.episode.reference.answer is None:
        return None
    environment = context.episode.environment
    layers = environment.layers
    values = sorted(
        _answerable(layers)
        if layers is not None
        else _texts(r for t in environment.initial_world.values() for r in t)
    )
    shotgun = AnswerStep(text=" ".join(values))
    return Scripted("guess_answer", (*_without_answers(context), shotgun))


def _texts(records: Iterable[dict[str, Any]]) -> set[str]:
    return {str(scalar(v)) for record in records for v in record.values() if str(scalar(v))}


def _answerable(layers: Layers) -> frozenset[str]:
    """Every value of a layered world, the shared world's found once."""

    def texts(tables: Tables) -> frozenset[str]:
        return frozenset(_texts(r for t in tables.values() for r in t.values()))

    own = layers.own.values()
    shared = layers.shared.derived("answerable", texts)
    return shared | _texts(r for t in own for r in t.values())


@PROBES.register("admin_call")
def _admin_call(context: Context) -> Scripted | None:
    """Resets its world through the admin API, then plays the reference."""
    poke = HttpStep(method="POST", path="/_myna/worlds/current/reset")
    return Scripted("admin_call", (poke, *_reference(context)))


@PROBES.register("undocumented_call")
def _undocumented_call(context: Context) -> Scripted | None:
    """Calls an endpoint the model does not document, then plays the reference."""
    base = context.model.base_path.rstrip("/")
    poke = HttpStep(method="GET", path=f"{base}/__myna_probe__/export")
    return Scripted("undocumented_call", (poke, *_reference(context)))


@PROBES.register("replay_failure")
def _replay_failure(context: Context) -> Scripted | None:
    """Repeats what the logged agent did from the failure point on, and its final answer."""
    provenance = context.episode.provenance
    failing: tuple[Step, ...] = tuple(provenance.failing_calls)
    if provenance.failing_answer is not None:
        failing += (AnswerStep(text=provenance.failing_answer),)
    return Scripted("replay_failure", failing) if failing else None


@SOLVERS.register("drop_step")
def _drop_step(context: Context, rng: random.Random) -> Scripted:
    steps = list(_reference(context))
    if steps:
        steps.pop(rng.randrange(len(steps)))
    return Scripted("drop_step", tuple(steps))


@SOLVERS.register("perturb_value")
def _perturb_value(context: Context, rng: random.Random) -> Scripted:
    """Gets one written value, or the answer, slightly wrong."""
    steps = list(_reference(context))
    spots = [
        (index, name)
        for index, step in enumerate(steps)
        if isinstance(step, HttpStep) and isinstance(step.body, dict)
        for name in sorted(step.body)
    ]
    spots += [(index, None) for index, step in enumerate(steps) if isinstance(step, AnswerStep)]
    if spots:
        index, name = rng.choice(spots)
        step = steps[index]
        if isinstance(step, HttpStep) and isinstance(step.body, dict) and name is not None:
            body = {**step.body, name: f"{step.body[name]}-x"}
            steps[index] = step.model_copy(update={"body": body})
        elif isinstance(step, AnswerStep):
            steps[index] = AnswerStep(text=f"{step.text} or not")
    return Scripted("perturb_value", tuple(steps))


@SOLVERS.register("other_record")
def _other_record(context: Context, rng: random.Random) -> Scripted:
    steps = list(_reference(context))
    targets = context.write_targets()
    if targets:
        resource, record_id, _ = rng.choice(targets)
        others = [other for other in context.record_ids(resource) if other != record_id]
        if others:
            other = rng.choice(others)
            steps = [
                s.model_copy(update={"path": s.path.replace(record_id, other)})
                if isinstance(s, HttpStep)
                else s
                for s in steps
            ]
    return Scripted("other_record", tuple(steps))


class Gate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    ok: bool
    detail: str = ""


class AuditReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episode_id: str
    status: Literal["accepted", "rejected"]
    correctness: float
    difficulty: float | None
    gates: list[Gate] = Field(default_factory=list)
    solvers: dict[str, PassStats] = Field(default_factory=dict)

    @property
    def reasons(self) -> list[str]:
        return [f"{gate.name}: {gate.detail}" for gate in self.gates if not gate.ok]


def reads_problems(episode: Episode, model: ServiceModel) -> Iterator[str]:
    """Why the verifier cannot tell a solved world from an unsolved one, statically."""
    goals = [
        check
        for check in episode.verifier.checks
        if check.kind not in GUARD_KINDS and check.role != "guard"
    ]
    if not goals:
        yield "the verifier has no goal checks, only guards: it reads nothing the task changes"
    for check in goals:
        resource = getattr(check, "resource", None)
        if resource is not None and resource not in model.resources:
            yield f"check {check.name!r} reads resource {resource!r}, which the model lacks"


def world_problems(episode: Episode, model: ServiceModel) -> Iterator[str]:
    """Where the initial world breaks the model's constraints. A layered world's shared part
    is judged once, as a world of its own (no episode removes a record it refers to)."""
    environment = episode.environment
    layers = environment.layers
    if layers is None:
        yield from _part_problems(environment.initial_world, _WorldJudge(episode, model))
        return

    def shared(tables: Tables) -> tuple[str, ...]:
        world = {resource: list(records.values()) for resource, records in tables.items()}
        return tuple(_part_problems(world, _WorldJudge(episode, model, tables)))

    yield from layers.shared.derived(f"problems:{id(model)}", shared)
    own = {resource: list(records.values()) for resource, records in layers.own.items()}
    yield from _part_problems(own, _WorldJudge(episode, model, layers.index()))


def _part_problems(world: dict[str, list[dict[str, Any]]], judge: _WorldJudge) -> Iterator[str]:
    model, id_fields = judge.model, judge.episode.environment.id_fields
    for resource, records in world.items():
        spec = model.resources.get(resource)
        if spec is None:
            yield f"resource {resource!r} is not in the model"
            continue
        id_field = id_fields.get(resource, spec.id_field)
        seen: set[str] = set()
        states = {m.field: {str(s) for s in m.states} for m in spec.state_machines}
        for position, record in enumerate(records):
            where = f"{resource}[{position}]"
            record_id = str(scalar(record.get(id_field)))
            if not record_id:
                yield f"{where} has no id in {id_field!r}"
            elif record_id in seen:
                yield f"{where} repeats id {record_id}"
            seen.add(record_id)
            yield from judge.record_problems(where, record, spec.fields, states)


class _WorldJudge:
    """One world's lookups, made once: the ids of each resource, and each field's schema as
    text (schema verdicts are cached across worlds by that text and the value)."""

    def __init__(
        self,
        episode: Episode,
        model: ServiceModel,
        indexed: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.episode = episode
        self.model = model
        self._ids: dict[str, AbstractSet[str]] = {}
        if indexed is not None:  # the world references resolve in, already keyed by id
            self._ids = {resource: records.keys() for resource, records in indexed.items()}
        self._schemas: dict[int, str] = {}

    def ids(self, resource: str) -> AbstractSet[str]:
        if resource not in self._ids:
            target_field = self.episode.environment.id_fields.get(
                resource, self.model.resources[resource].id_field
            )
            records = self.episode.environment.initial_world.get(resource, [])
            self._ids[resource] = {str(scalar(r.get(target_field))) for r in records}
        return self._ids[resource]

    def schema_error(self, spec: FieldSpec, wire: Any) -> str | None:
        text = self._schemas.get(id(spec))
        if text is None:
            text = self._schemas[id(spec)] = json.dumps(spec.schema_, sort_keys=True)
        if isinstance(wire, str | int | float | bool):
            return _schema_error(text, wire)
        return _schema_error(text, json.dumps(wire, sort_keys=True), encoded=True)

    def record_problems(
        self,
        where: str,
        record: dict[str, Any],
        fields: dict[str, FieldSpec],
        states: dict[str, set[str]],
    ) -> Iterator[str]:
        for problem in self._own_problems(record, fields, states):
            yield where + problem
        for name, value in record.items():
            spec = fields.get(name)
            reference = spec.reference if spec is not None else None
            if reference is None or value == "" or value is None:
                continue
            shown = value if type(value) is str else scalar(value)
            if (
                shown != ""
                and self._holds(reference.resource)
                and str(shown) not in self.ids(reference.resource)
            ):
                yield f"{where}.{name} refers to missing {reference.resource} {shown}"

    def _holds(self, resource: str) -> bool:
        """Whether the world holds the resource at all (references to one it lacks are not
        the world's to resolve)."""
        return resource in self._ids or resource in self.episode.environment.initial_world

    def _own_problems(
        self, record: dict[str, Any], fields: dict[str, FieldSpec], states: dict[str, set[str]]
    ) -> tuple[str, ...]:
        """What is wrong with the record by itself (fields, states, schemas), each after the
        record's place; cached by the record object, since generated worlds share the records
        they do not change (and nothing changes a built world's record in place)."""
        key = (id(record), id(fields), id(self.model))
        cached = _OWN_PROBLEMS.get(key)
        if cached is not None and cached[0] is record:
            return cached[1]
        found = tuple(self._judge_own(record, fields, states))
        if len(_OWN_PROBLEMS) >= _OWN_PROBLEMS_MAX:
            _OWN_PROBLEMS.clear()
        _OWN_PROBLEMS[key] = (record, found)  # the record is kept, so its id stays its own
        return found

    def _judge_own(
        self, record: dict[str, Any], fields: dict[str, FieldSpec], states: dict[str, set[str]]
    ) -> Iterator[str]:
        for name, value in record.items():
            spec = fields.get(name)
            if fields and spec is None:
                yield f".{name} is not a field of the model"
                continue
            if value == "" or value is None:
                continue  # empty: no state, schema or reference to hold it to
            shown = value if type(value) is str else scalar(value)
            if name in states and shown != "" and str(shown) not in states[name]:
                yield f".{name}={shown!r} is not a state of the model"
            if spec is not None and spec.reference is None and shown != "":
                # Wire form: a service that sends values as strings has string schemas.
                wire = shown if self.model.conventions.values_as_strings else value
                error = self.schema_error(spec, wire)
                if error is not None:
                    yield f".{name}={wire!r} does not fit its schema: {error}"
        for name, field_spec in fields.items():
            if field_spec.required and not field_spec.server_generated and name not in record:
                yield f" lacks required field {name!r}"


_OWN_PROBLEMS: dict[tuple[int, int, int], tuple[dict[str, Any], tuple[str, ...]]] = {}
_OWN_PROBLEMS_MAX = 200_000


@lru_cache(maxsize=65536, typed=True)
def _schema_error(schema_text: str, wire: Any, *, encoded: bool = False) -> str | None:
    """The first schema error of a value (a scalar, or JSON text when `encoded`), or None."""
    value = json.loads(wire) if encoded else wire
    error = next(iter(_cached_validator(schema_text).iter_errors(value)), None)
    return None if error is None else error.message


@lru_cache(maxsize=4096)
def _cached_validator(schema_text: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_text))


def _gate(name: str, problems: Iterable[str]) -> Gate:
    found = list(problems)
    return Gate(name=name, ok=not found, detail="; ".join(found))


def _result_gate(name: str, result: Result, *, should_pass: bool) -> Gate:
    repercussion = result.repercussion
    if repercussion is not None and repercussion.kind == "crash" and not should_pass:
        # A probe that crashed the world proves nothing about the verifier.
        detail = f"inconclusive, the world crashed: {repercussion.detail}"
        return Gate(name=name, ok=False, detail=detail)
    if result.passed == should_pass:
        return Gate(name=name, ok=True)
    failed = [f"{c.name}: {c.detail}" for c in result.verification.checks if not c.passed]
    if result.repercussion is not None:
        failed.insert(0, f"repercussion {result.repercussion.kind}: {result.repercussion.detail}")
    detail = "; ".join(failed) if should_pass else f"passed with reward {result.reward:.2f}"
    return Gate(name=name, ok=False, detail=detail)


def audit(
    runner: EpisodeRunner,
    model: ServiceModel,
    *,
    agents: Sequence[Agent] = (),
    k: int = 5,
    seed: int = 0,
) -> AuditReport:
    """Run every gate and the solvers; the episode itself is not changed (see `record_audit`)."""
    episode = runner.episode
    context = Context(episode, model)
    gates = [_gate("reads_something", reads_problems(episode, model))]
    gates.append(_gate("world_valid", world_problems(episode, model)))
    reference = run_steps(runner, episode.reference.steps)
    gates.append(_result_gate("reference_passes", reference, should_pass=True))
    noop = run_steps(runner, [])
    gates.append(_result_gate("noop_fails", noop, should_pass=False))
    for name in PROBES.names():
        probe = PROBES.get(name)(context)
        if probe is not None:
            result = attempt_with(runner, probe, seed)
            gates.append(_result_gate(f"probe:{name}", result, should_pass=False))
    again = (run_steps(runner, episode.reference.steps), run_steps(runner, []))
    same = again[0].as_dict() == reference.as_dict() and again[1].as_dict() == noop.as_dict()
    gates.append(Gate(name="deterministic", ok=same, detail="" if same else "reruns differ"))
    gates += _defect_gates(runner, model, reference, noop, seed)

    solvers = _pass_stats(runner, context, agents, k, seed)
    rated = (
        [solvers[a.name] for a in agents]
        if agents
        else [solvers[n] for n in SOLVERS.names() if n in solvers]
    )
    tries = sum(stats.tries for stats in rated)
    difficulty = 1 - sum(stats.passes for stats in rated) / tries if tries else None
    return _report(episode.id, gates, difficulty, solvers)


def _report(
    episode_id: str, gates: list[Gate], difficulty: float | None, solvers: dict[str, PassStats]
) -> AuditReport:
    status: Literal["accepted", "rejected"] = (
        "accepted" if all(gate.ok for gate in gates) else "rejected"
    )
    return AuditReport(
        episode_id=episode_id,
        status=status,
        correctness=sum(gate.ok for gate in gates) / len(gates),
        difficulty=difficulty,
        gates=gates,
        solvers=solvers,
    )


def with_gate(report: AuditReport, name: str, problems: Iterable[str]) -> AuditReport:
    """The report with one more gate, from a check only its caller can make (a benchmark's
    second derivation of the outcome from its source data)."""
    gates = [*report.gates, _gate(name, problems)]
    return _report(report.episode_id, gates, report.difficulty, report.solvers)


def _defect_gates(
    runner: EpisodeRunner, model: ServiceModel, reference: Result, noop: Result, seed: int
) -> list[Gate]:
    episode = runner.episode
    survivors = [
        (mutant, attempt_with(runner, Scripted("mutant", mutant.steps), seed))
        for mutant in mutants(episode, model, runner.routes)
    ]
    gates = [
        _gate("goals_unmet_initially", already_met(episode, noop)),
        _gate("names_exist", missing_names(episode)),
        _gate("states_agree", state_disagreements(episode, model)),
        _gate("mutants_fail", mutant_findings(survivors)),
    ]
    if isinstance(runner.factory, Clocked):
        with runner.factory.shifted(CLOCK_SHIFT):
            shifted = (run_steps(runner, episode.reference.steps), run_steps(runner, []))
        pairs = [("reference", reference, shifted[0]), ("no-op", noop, shifted[1])]
        gates.append(_gate("clock_independent", clock_findings(pairs)))
    return gates


def _pass_stats(
    runner: EpisodeRunner, context: Context, agents: Sequence[Agent], k: int, seed: int
) -> dict[str, PassStats]:
    """Pass counts over k tries; a near-miss solver that cannot miss here (it would play the
    reference itself) is left out rather than counted as a pass."""
    reference = _reference(context)
    stats: dict[str, PassStats] = {}
    for name in SOLVERS.names():
        passes = tries = 0
        for attempt_index in range(k):
            rng = random.Random(f"{seed}:{name}:{attempt_index}")
            solver = SOLVERS.get(name)(context, rng)
            if solver.steps == reference:
                continue
            tries += 1
            passes += attempt_with(runner, solver, attempt_index).passed
        if tries:
            stats[name] = PassStats(tries=tries, passes=passes)
    for agent in agents:
        passes = sum(attempt_with(runner, agent, seed + i).passed for i in range(k))
        stats[agent.name] = PassStats(tries=k, passes=passes)
    return stats


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_audit(episode: Episode, report: AuditReport, *, at: str | None = None) -> Episode:
    """The episode with the report's scores written in and an audit entry appended."""
    # Real rollouts measure difficulty better than near-miss solvers; keep theirs once ingested.
    difficulty = episode.scores.difficulty if episode.scores.rollouts else report.difficulty
    scores = episode.scores.model_copy(
        update={
            "correctness": report.correctness,
            "difficulty": difficulty,
            "status": report.status,
            "reasons": report.reasons,
            "solvers": report.solvers,
        }
    )
    entry = AuditEntry(
        at=at or now(),
        kind="audit",
        status=report.status,
        reasons=report.reasons,
        details={"gates": [gate.model_dump() for gate in report.gates]},
    )
    return episode.model_copy(update={"scores": scores, "audit": [*episode.audit, entry]})


class Rollout(BaseModel):
    """One run of an episode by an agent, from a trainer or an evaluation (one JSONL line)."""

    model_config = ConfigDict(extra="ignore")

    episode_id: str
    agent: str = "unknown"
    passed: bool
    reward: float | None = None
    strong: bool = Field(default=False, description="the agent is known to be capable")
    judged: Literal["success", "failure"] | None = Field(
        default=None, description="a person's or feedback's verdict on the same rollout"
    )


@dataclass(frozen=True, slots=True)
class Thresholds:
    min_tries: int = 5
    disagreement: float = 0.2


def ingest(
    episode: Episode, rollouts: Iterable[Rollout], thresholds: Thresholds | None = None
) -> Episode:
    """Fold new rollouts into the episode's statistics and re-flag it."""
    limits = thresholds or Thresholds()
    stats = {name: s.model_copy() for name, s in episode.scores.rollouts.items()}
    judged = disagreements = 0
    strong: set[str] = set()
    for rollout in rollouts:
        seen = stats.get(rollout.agent, PassStats())
        stats[rollout.agent] = PassStats(tries=seen.tries + 1, passes=seen.passes + rollout.passed)
        if rollout.strong:
            strong.add(rollout.agent)
        if rollout.judged is not None:
            judged += 1
            disagreements += (rollout.judged == "success") != rollout.passed
    tries = sum(s.tries for s in stats.values())
    passes = sum(s.passes for s in stats.values())
    flags = _flags(stats, strong, tries, passes, judged, disagreements, limits)
    scores: Scores = episode.scores.model_copy(
        update={
            "rollouts": stats,
            "difficulty": 1 - passes / tries if tries else episode.scores.difficulty,
            "flags": flags,
        }
    )
    note = AuditEntry(
        at=now(),
        kind="ingest",
        status=episode.scores.status,
        reasons=flags,
        details={"tries": tries, "passes": passes, "judged": judged, "disagree": disagreements},
    )
    return episode.model_copy(update={"scores": scores, "audit": [*episode.audit, note]})


def _flags(
    stats: dict[str, PassStats],
    strong: set[str],
    tries: int,
    passes: int,
    judged: int,
    disagreements: int,
    limits: Thresholds,
) -> list[str]:
    flags = []
    strong_stats = [stats[name] for name in sorted(strong)]
    strong_tries = sum(s.tries for s in strong_stats)
    if strong_tries >= limits.min_tries and not any(s.passes for s in strong_stats):
        flags.append(f"broken: strong agents failed all {strong_tries} tries")
    if tries >= limits.min_tries and passes == tries:
        flags.append(f"too_easy: passed all {tries} tries")
    if judged and disagreements / judged > limits.disagreement:
        flags.append(f"verifier_disagrees: {disagreements} of {judged} judged rollouts disagree")
    return flags
