"""Building episodes from failure sessions and a service model.

For each failure session:
1. read its calls (`myna.replay.logs`) and harvest the records its responses showed;
2. find what the task needed: a successful session of the same task (its writes), else the
   corrected outcome in `metadata["expected"]`, else free-text feedback patterns, else, for a
   refused write, the write completed with the fields the model or the error demanded;
3. classify the failure (`myna.replay.classify`) and find the failure point;
4. rebuild the world at that point: the harvested records (as first read; not the ones the agent
   created), made consistent with the model (unknown fields dropped, required fields filled,
   missing reference targets stubbed), in a fresh world where the successful writes before the
   failure point are replayed (ids the world mints are mapped onto the logged ones);
5. derive the verifier (goal checks, a collateral guard, a policy) and the reference solution;
6. make K variants (`myna.replay.variants`).
A session nothing can be derived from is skipped with the reason; nothing is guessed.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from myna.errors import ReplayError
from myna.mocks.ids import mint_id, needs_counter
from myna.replay.classify import (
    Classification,
    Evidence,
    Feedback,
    Goal,
    classify,
    display_selector,
    parse_feedback,
    required_fields,
)
from myna.replay.episode import (
    AllowedChange,
    AnswerCheck,
    AnswerStep,
    CallPattern,
    Check,
    Derivation,
    Environment,
    Episode,
    FieldEquals,
    FieldIn,
    Harmless,
    HttpStep,
    ModelRef,
    NoCollateral,
    Policy,
    Problem,
    Provenance,
    RecordAbsent,
    RecordExists,
    Solution,
    Step,
    Verifier,
)
from myna.replay.logs import (
    Expected,
    LoggedCall,
    ToolToHttp,
    final_answer,
    instruction_of,
    logged_calls,
    record_id,
    records_in,
)
from myna.replay.mock_world import note_fields, side_effect_resources, side_effects
from myna.replay.run import Routes
from myna.replay.substance import (
    choices_of,
    forbids_notes,
    pick_choice,
    reference_note,
    text_check,
)
from myna.replay.verify import first_number, matches, normalise, same, scalar
from myna.replay.world import WorldFactory
from myna.schemas.model import FieldSpec, IdFormat, Operation, Resource, ServiceModel
from myna.traces.model import Session

World = dict[str, dict[str, dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Skipped:
    session_id: str
    reason: str


@dataclass(slots=True)
class BuildReport:
    episodes: list[Episode] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Plan:
    """What an episode asks for, before it is written out as checks and steps."""

    instruction: str
    goals: tuple[Goal, ...]
    answer: str | None
    forbidden: tuple[CallPattern, ...]
    wording: str = "original"
    answer_from: AnswerSource | None = None


@dataclass(frozen=True, slots=True)
class AnswerSource:
    """Where the expected answer is read in the world: a record the instruction names, then a
    field, or a reference field and a field of the record it points to."""

    resource: str
    record_id: str
    path: tuple[str, ...]


@dataclass(frozen=True)
class Builder:
    """Everything shared by the sessions of one build."""

    model: ServiceModel
    factory: WorldFactory
    model_ref: ModelRef
    tools: tuple[str, ...] = ()
    translate: ToolToHttp | None = None
    source_file: str | None = None
    distractors: int = 2

    @cached_property
    def routes(self) -> Routes:
        return Routes.from_model(self.model)


def build(sessions: Iterable[Session], builder: Builder, *, variants: int = 0) -> BuildReport:
    """Episodes (and their variants) from the failure sessions; successes serve as corrections."""
    from myna.replay.variants import make_variants

    every = list(sessions)
    successes: dict[str, list[Session]] = {}
    for session in every:
        if session.outcome == "success" and session.task:
            successes.setdefault(normalise(session.task), []).append(session)
    report = BuildReport()
    taken: set[str] = set()
    for session in every:
        if session.outcome != "failure":
            continue
        try:
            episode, plan, world = build_one(session, builder, successes)
        except ReplayError as cannot:
            report.skipped.append(Skipped(session.id, cannot.message))
            continue
        if episode.id in taken:
            # Two sessions with one id (or one session in several parts): keep both episodes.
            episode = episode.model_copy(update={"id": f"{episode.id}-{len(taken)}"})
        taken.add(episode.id)
        report.episodes.append(episode)
        report.episodes.extend(make_variants(episode, plan, world, builder, variants))
    return report


def build_one(
    session: Session, builder: Builder, successes: Mapping[str, Sequence[Session]]
) -> tuple[Episode, Plan, World]:
    model = builder.model
    routes = builder.routes
    calls = logged_calls(session, routes, builder.translate)
    instruction = instruction_of(session, file=builder.source_file)
    feedback = parse_feedback(session.feedback)
    logged_world = harvest(calls, model)
    goals, answer, forbidden, derived = expectations(
        session, calls, logged_world, feedback, successes.get(normalise(instruction), ()), builder
    )
    evidence = Evidence(
        tuple(calls), tuple(goals), answer, final_answer(session), feedback, tuple(forbidden), model
    )
    found = classify(evidence)
    if found is None:
        raise ReplayError("no failure class fits: the log shows no mistake against what it needed")
    if not goals and found.failure_class == "constraint_violation" and found.call is not None:
        goals = [_completed_write(found.call, model)]
        derived = "model"
    if not goals and answer is None:
        raise ReplayError(
            "no verifier can be derived: no successful session, corrected outcome or usable "
            "feedback says what the task needed"
        )
    world, id_map = rebuild_world(calls, found, logged_world, builder)
    goals = [_remap_goal(goal, id_map) for goal in goals]
    for goal in goals:
        if goal.record_id is not None and goal.record_id not in world.get(goal.resource, {}):
            raise ReplayError(
                f"the task needs {goal.resource} {goal.record_id}, which the log never showed"
            )
    world = add_distractors(world, goals, model, builder.distractors, seed=session.id)
    source = answer_source(instruction, answer, world, model) if answer is not None else None
    plan = Plan(instruction, tuple(goals), answer, tuple(forbidden), answer_from=source)
    provenance = Provenance(
        source_session=session.id,
        source_file=builder.source_file,
        step_index=found.index,
        failure_class=found.failure_class,
        failure_detail=found.detail,
        derived_from=derived,
        failing_calls=_failing_steps(calls, found, id_map),
        failing_answer=final_answer(session),
    )
    episode = assemble(
        _slug(f"{session.id}-{found.failure_class}"), plan, world, builder, provenance
    )
    return episode, plan, world


def named_in(text: str, value: str) -> bool:
    """Whether `value` appears in `text` as a whole word (an incident number, an id)."""
    return bool(value) and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None


def follow(
    world: World, model: ServiceModel, resource: str, record: dict[str, Any], path: Sequence[str]
) -> str | None:
    """The text at `path` from `record`: a field, or a reference then a field of its target."""
    value: Any = record.get(path[0])
    if len(path) == 2:
        spec = model.resources[resource].fields.get(path[0])
        target = spec.reference.resource if spec is not None and spec.reference else None
        linked = world.get(target or "", {}).get(str(scalar(value)))
        value = linked.get(path[1]) if linked is not None else None
    text = str(scalar(value)).strip()
    return text or None


def answer_source(
    instruction: str, answer: str, world: World, model: ServiceModel
) -> AnswerSource | None:
    """Where the answer can be read, starting from a record the instruction names; None when
    the answer is not a value of such a record or of a record it refers to (a count, a sum)."""
    wanted = normalise(answer)
    for resource_name, records in world.items():
        resource = model.resources[resource_name]
        for rid, record in records.items():
            shown = str(next(iter(display_selector(resource, record).values())))
            if not (named_in(instruction, shown) or named_in(instruction, rid)):
                continue
            paths: list[tuple[str, ...]] = [(name,) for name in record]
            paths += [
                (name, target_field)
                for name, spec in resource.fields.items()
                if spec.reference is not None and spec.reference.resource in model.resources
                for target_field in model.resources[spec.reference.resource].fields
            ]
            for path in paths:
                found = follow(world, model, resource_name, record, path)
                if found is not None and normalise(found) == wanted:
                    return AnswerSource(resource_name, rid, path)
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-").lower()


def harvest(calls: Iterable[LoggedCall], model: ServiceModel) -> World:
    """Records as first read in the log, minus those the agent itself created."""
    created: set[tuple[str, str]] = set()
    world: World = {}
    for call in calls:
        resource = model.resources.get(call.resource or "")
        if resource is None or not call.ok:
            continue
        for record in records_in(call.response, model):
            rid = record_id(record, resource.id_field)
            if rid is None:
                continue
            if call.method == "POST":
                created.add((resource.name, rid))
            if call.method == "GET" and (resource.name, rid) not in created:
                world.setdefault(resource.name, {}).setdefault(rid, record)
    return world


def placeholder(spec: FieldSpec, as_strings: bool) -> Any:
    """A value a required field may take when the log never showed one."""
    if spec.has_default:
        return spec.default
    enum = spec.schema_.get("enum")
    if enum:
        frequencies = spec.enum_frequencies or {}
        return max(enum, key=lambda option: frequencies.get(str(option), 0))
    kind = spec.schema_.get("type")
    value: Any = {"integer": 0, "number": 0, "boolean": False}.get(str(kind), "")
    return scalar(value) if as_strings and value != "" else value


def conform(world: World, model: ServiceModel) -> dict[str, list[dict[str, Any]]]:
    """The harvested world made consistent with the model."""
    as_strings = model.conventions.values_as_strings
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, records in world.items():
        spec = model.resources[name]
        for rid, record in records.items():
            out.setdefault(name, {})[rid] = _conform_record(record, spec, as_strings)
    for name, records in list(out.items()):
        for record in list(records.values()):
            for field_name, field_spec in model.resources[name].fields.items():
                target = field_spec.reference
                value = str(scalar(record.get(field_name)))
                if target is None or not value or target.resource not in model.resources:
                    continue
                rows = out.setdefault(target.resource, {})
                if value not in rows:
                    stub = {model.resources[target.resource].id_field: value}
                    rows[value] = _conform_record(
                        stub, model.resources[target.resource], as_strings
                    )
    return {name: list(rows.values()) for name, rows in out.items()}


def _conform_record(record: dict[str, Any], spec: Resource, as_strings: bool) -> dict[str, Any]:
    kept = {k: v for k, v in record.items() if not spec.fields or k in spec.fields}
    for name, field_spec in spec.fields.items():
        if name not in kept and field_spec.required and not field_spec.server_generated:
            kept[name] = placeholder(field_spec, as_strings)
    return kept


def rebuild_world(
    calls: Sequence[LoggedCall],
    found: Classification,
    logged_world: World,
    builder: Builder,
) -> tuple[World, dict[str, str]]:
    """The world at the failure point, and the map from logged ids to the ids it minted."""
    model = builder.model
    base = conform(logged_world, model)
    id_fields = {name: model.resources[name].id_field for name in model.resources}
    environment = Environment(
        model=builder.model_ref, initial_world=base, id_fields=id_fields, tools=list(builder.tools)
    )
    # Without a failing call (a missing step, a wrong answer) every successful write is prefix.
    stop = found.index if found.index is not None else max((c.index for c in calls), default=0) + 1
    world = builder.factory.open(environment)
    id_map: dict[str, str] = {}
    try:
        for call in calls:
            if call.index >= stop or not (call.is_write and call.ok):
                continue
            path, body = _remapped(call.path, call.body, id_map)
            reply = world.client.request(call.method, path, json=body, params=call.params)
            if not 200 <= reply.status < 300:
                raise ReplayError(
                    f"replaying {call.method} {call.path} (event {call.index}) was refused "
                    f"({reply.status}): the rebuilt world differs from the logged one"
                )
            if call.method == "POST" and call.resource in model.resources:
                _map_created(call, reply.json(), model.resources[call.resource], model, id_map)
        dumped = world.dump()
    finally:
        world.close()
    rebuilt: World = {}
    for name, records in dumped.items():
        id_field = id_fields.get(name, "id")
        rows = {record_id(r, id_field) or "": r for r in records}
        if rows:
            rebuilt[name] = rows
    return rebuilt, id_map


def add_distractors(
    world: World, goals: Sequence[Goal], model: ServiceModel, count: int, *, seed: str
) -> World:
    """Clones of each goal's record, with fresh ids and numbers, until its resource holds at
    least `count` other records.

    A log often shows only the record the agent worked on; in a world of one record, changing
    the wrong record or every record cannot be told from doing the task.
    """
    rng = random.Random(seed)
    out = {name: dict(rows) for name, rows in world.items()}
    for goal in goals:
        if goal.record_id is None:
            continue
        resource = model.resources[goal.resource]
        rows = out[goal.resource]
        target = rows[goal.record_id]
        minted = [(resource.id_field, resource.id_format)] + [
            (name, spec.generator) for name, spec in resource.fields.items() if spec.generator
        ]
        while len(rows) <= count:
            clone = dict(target)
            for name, fmt in minted:
                clone[name] = mint_id(fmt, rng, number=_next_number(rows.values(), name, fmt))
            for name in resource.unique:
                if name not in dict(minted) and clone.get(name) not in (None, ""):
                    clone[name] = f"{clone[name]}-{len(rows)}"
            rows[str(clone[resource.id_field])] = clone
    return out


def _next_number(records: Iterable[dict[str, Any]], name: str, fmt: IdFormat) -> int | None:
    if not needs_counter(fmt):
        return None
    numbers = [fmt.start - 1]
    for record in records:
        text = str(scalar(record.get(name)))
        digits = text.removeprefix(fmt.prefix)
        if digits.isdigit():
            numbers.append(int(digits))
    return max(numbers) + 1


def _map_created(
    call: LoggedCall, reply: Any, resource: Resource, model: ServiceModel, id_map: dict[str, str]
) -> None:
    logged = records_in(call.response, model)
    minted = records_in(reply, model)
    if logged and minted:
        old, new = record_id(logged[0], resource.id_field), record_id(minted[0], resource.id_field)
        if old and new and old != new:
            id_map[old] = new


def _remapped(path: str, body: Any, id_map: Mapping[str, str]) -> tuple[str, Any]:
    if not id_map:
        return path, body
    text = json.dumps(body)
    for old, new in id_map.items():
        path = path.replace(old, new)
        text = text.replace(old, new)
    return path, json.loads(text)


def _remap_goal(goal: Goal, id_map: Mapping[str, str]) -> Goal:
    if goal.record_id is None or goal.record_id not in id_map:
        return goal
    return Goal(goal.resource, goal.action, id_map[goal.record_id], goal.values)


def _failing_steps(
    calls: Sequence[LoggedCall], found: Classification, id_map: Mapping[str, str]
) -> list[Step]:
    start = found.index if found.index is not None else 0
    steps: list[Step] = []
    for call in calls:
        if call.index >= start and call.is_write:
            path, body = _remapped(call.path, call.body, id_map)
            steps.append(HttpStep(method=call.method, path=path, params=call.params, body=body))
    return steps


def expectations(
    session: Session,
    calls: Sequence[LoggedCall],
    world: World,
    feedback: Feedback,
    successes: Sequence[Session],
    builder: Builder,
) -> tuple[list[Goal], str | None, list[CallPattern], Derivation]:
    """Goals, expected answer, forbidden calls, and where they came from (first source wins)."""
    model = builder.model
    expected = _expected_metadata(session)
    answer = feedback.answer or (expected.answer if expected else None)
    forbidden = (
        [CallPattern(method=f.method, path=f.path) for f in expected.forbidden] if expected else []
    )
    forbidden += _forbidden_from_feedback(calls, feedback, model)
    for success in successes:
        success_calls = logged_calls(success, builder.routes, builder.translate)
        goals = [g for g in (_goal_of(call) for call in success_calls) if g is not None]
        if goals:
            if answer is None and "answer" in feedback.text.lower():
                answer = final_answer(success)
            return goals, answer, forbidden, "successful_session"
    if expected is not None and expected.changes:
        return _resolve(expected, world, model), answer, forbidden, "corrected_outcome"
    goals = _goals_from_feedback(calls, world, feedback, model)
    if goals or answer is not None:
        return goals, answer, forbidden, "feedback"
    return [], None, forbidden, "model"


def _expected_metadata(session: Session) -> Expected | None:
    raw = session.metadata.get("expected")
    if raw is None:
        return None
    try:
        return Expected.model_validate(raw)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReplayError(f"metadata.expected.{where}: {first['msg']}") from None


def _goal_of(call: LoggedCall) -> Goal | None:
    if not (call.is_write and call.ok and call.resource):
        return None
    body = dict(call.body) if isinstance(call.body, dict) else {}
    if call.method == "POST":
        return Goal(call.resource, "create", None, body)
    if call.method == "DELETE":
        return Goal(call.resource, "delete", call.target_id, {})
    return Goal(call.resource, "update", call.target_id, body)


def _resolve(expected: Expected, world: World, model: ServiceModel) -> list[Goal]:
    goals = []
    for position, change in enumerate(expected.changes):
        if change.resource not in model.resources:
            raise ReplayError(
                f"metadata.expected.changes.{position}: no resource {change.resource!r}"
            )
        if change.action == "create":
            goals.append(Goal(change.resource, "create", None, dict(change.set)))
            continue
        found = [
            rid
            for rid, rec in world.get(change.resource, {}).items()
            if matches(rec, change.record)
        ]
        if len(found) != 1:
            raise ReplayError(
                f"metadata.expected.changes.{position}: {change.record} selects {len(found)} "
                f"{change.resource} records in the logged responses, expected exactly one"
            )
        goals.append(Goal(change.resource, change.action, found[0], dict(change.set)))
    return goals


def _mentioned(world: World, feedback: Feedback, model: ServiceModel) -> list[tuple[str, str]]:
    """(resource, id) of records whose display value or id the feedback names."""
    found = []
    for name, records in world.items():
        resource = model.resources[name]
        for rid, record in records.items():
            shown = display_selector(resource, record)
            if feedback.mentions(str(next(iter(shown.values())))) or feedback.mentions(rid):
                found.append((name, rid))
    return found


def _goals_from_feedback(
    calls: Sequence[LoggedCall], world: World, feedback: Feedback, model: ServiceModel
) -> list[Goal]:
    writes = [c for c in calls if c.is_write and c.resource and c.method not in ("POST", "DELETE")]
    mentioned = _mentioned(world, feedback, model)
    if writes:
        last = writes[-1]
        resource = last.resource or ""
        body = dict(last.body) if isinstance(last.body, dict) else {}
        others = [rid for res, rid in mentioned if res == resource and rid != last.target_id]
        if others:
            # The right change on the wrong record: feedback names the record it should have been.
            return [Goal(resource, "update", others[0], {**body, **feedback.field_values})]
        if feedback.field_values:
            return [Goal(resource, "update", last.target_id, dict(feedback.field_values))]
    if feedback.field_values and len(mentioned) == 1:
        resource, rid = mentioned[0]
        return [Goal(resource, "update", rid, dict(feedback.field_values))]
    return []


def _forbidden_from_feedback(
    calls: Sequence[LoggedCall], feedback: Feedback, model: ServiceModel
) -> list[CallPattern]:
    patterns = []
    for method in sorted(feedback.forbidden_methods):
        for call in calls:
            if call.method == method and call.operation is not None:
                patterns.append(CallPattern(method=method, path=_glob(call.operation)))
    return list({(p.method, p.path): p for p in patterns}.values())


def _glob(operation: Operation) -> str:
    return re.sub(r"\{[^/{}]+\}", "*", operation.path)


def _completed_write(call: LoggedCall, model: ServiceModel) -> Goal:
    """A refused write completed with what the model or the error says it lacked."""
    body = dict(call.body) if isinstance(call.body, dict) else {}
    needed: dict[str, Any] = {name: None for name in required_fields(call, model)}
    if call.method == "POST":
        return Goal(call.resource or "", "create", None, {**body, **needed})
    return Goal(call.resource or "", "update", call.target_id, {**body, **needed})


def open_goal(
    name: str, resource: Resource, where: dict[str, Any], field_name: str, instruction: str
) -> tuple[Check, Any]:
    """The check and the reference's value for a field the task leaves to the agent: a value
    from the field's choice list, or free text of substance (`myna.replay.substance`)."""
    spec = resource.fields.get(field_name)
    options = choices_of(spec)
    if options:
        check: Check = FieldIn(
            name=name, resource=resource.name, where=where, field=field_name, values=options
        )
        return check, pick_choice(options, instruction, spec)
    leave_out = [str(value) for value in where.values()]
    check = text_check(name, resource.name, where, field_name, instruction, leave_out)
    return check, reference_note(instruction)


def assemble(
    episode_id: str,
    plan: Plan,
    world: World,
    builder: Builder,
    provenance: Provenance,
) -> Episode:
    """The episode for a plan on a world: goal checks, guards and the reference solution."""
    model = builder.model
    checks: list[Check] = []
    steps: list[Step] = []
    allowed: list[AllowedChange] = []
    for position, goal in enumerate(plan.goals):
        resource = model.resources[goal.resource]
        goal_checks, step, change = _goal_parts(position, goal, resource, world, plan, model)
        checks += goal_checks
        steps.append(step)
        allowed.append(change)
    if plan.answer is not None:
        mode = "number" if _is_number(plan.answer) else "normalised"
        checks.append(AnswerCheck(name="answer", mode=mode, expected=plan.answer))
        steps.append(AnswerStep(text=plan.answer))
    checks.append(
        NoCollateral(
            name="no collateral changes",
            allowed=allowed,
            harmless=_harmless(plan, model),
            ignore_fields=_server_maintained(model, plan.goals, world),
            side_effects=side_effects(model),
            ignore_resources=side_effect_resources(model),
        )
    )
    checks.append(Policy(name="policy", forbidden=list(plan.forbidden)))
    environment = Environment(
        model=builder.model_ref,
        initial_world={name: list(rows.values()) for name, rows in world.items()},
        id_fields={name: model.resources[name].id_field for name in world},
        tools=list(builder.tools),
    )
    return Episode(
        id=episode_id,
        problem=Problem(instruction=plan.instruction, wording=plan.wording),
        environment=environment,
        verifier=Verifier(checks=checks),
        reference=Solution(steps=steps),
        provenance=provenance,
    )


def _harmless(plan: Plan, model: ServiceModel) -> list[Harmless]:
    """A note on each record the task is about (the records it changes, the record a question
    names) is harmless, unless the instruction forbids notes."""
    notes = set(note_fields(model))
    if not notes or forbids_notes(plan.instruction):
        return []
    about = [(g.resource, g.record_id) for g in plan.goals if g.record_id is not None]
    if plan.answer_from is not None:
        about.append((plan.answer_from.resource, plan.answer_from.record_id))
    out = []
    for resource, target in dict.fromkeys(about):
        fields = sorted(notes & set(model.resources[resource].fields))
        if fields:
            out.append(Harmless(resource=resource, record_id=target, fields=fields))
    return out


def _is_number(text: str) -> bool:
    number = first_number(text)
    return number is not None and re.fullmatch(r"\s*[-+]?[\d.,]+\s*", text) is not None


def _goal_parts(
    position: int,
    goal: Goal,
    resource: Resource,
    world: World,
    plan: Plan,
    model: ServiceModel,
) -> tuple[list[Check], Step, AllowedChange]:
    label = f"{goal.resource} #{position + 1}"
    if goal.action == "create":
        return _create_parts(label, goal, resource, plan, model)
    before = world[goal.resource][goal.record_id or ""]
    where = display_selector(resource, before)
    if goal.action == "delete":
        method, path = _operation_path(model, resource, "delete", goal.record_id)
        absent = RecordAbsent(name=f"{label} deleted", resource=goal.resource, where=where)
        allowed = AllowedChange(resource=goal.resource, record_id=goal.record_id, kinds=["deleted"])
        return [absent], HttpStep(method=method, path=path), allowed
    return _update_parts(label, goal, resource, where, before, plan, model)


def _create_parts(
    label: str, goal: Goal, resource: Resource, plan: Plan, model: ServiceModel
) -> tuple[list[Check], Step, AllowedChange]:
    where = {
        k: v for k, v in goal.values.items() if v is not None and not isinstance(v, dict | list)
    }
    checks: list[Check] = [
        RecordExists(name=f"{label} created", resource=goal.resource, where=where)
    ]
    body = dict(goal.values)
    for name, value in goal.values.items():
        if value is None:
            check, body[name] = open_goal(
                f"{label} {name} set", resource, where, name, plan.instruction
            )
            checks.append(check)
    method, path = _operation_path(model, resource, "create", None)
    # One record the task asks for: creating one per candidate is not working out which.
    allowed = AllowedChange(resource=goal.resource, kinds=["created"], where=where, max_count=1)
    return checks, HttpStep(method=method, path=path, body=body), allowed


def _update_parts(
    label: str,
    goal: Goal,
    resource: Resource,
    where: dict[str, Any],
    before: dict[str, Any],
    plan: Plan,
    model: ServiceModel,
) -> tuple[list[Check], Step, AllowedChange]:
    checks: list[Check] = []
    body: dict[str, Any] = {}
    for name, value in goal.values.items():
        if value is None:
            check, body[name] = open_goal(
                f"{label} {name} set", resource, where, name, plan.instruction
            )
            checks.append(check)
        else:
            checks.append(
                FieldEquals(
                    name=f"{label} {name}",
                    resource=goal.resource,
                    where=where,
                    field=name,
                    value=value,
                    # Asked for what already holds: nothing to earn, only to keep.
                    role="guard" if same(before.get(name), value) else None,
                )
            )
            body[name] = value
    method, path = _operation_path(model, resource, "update", goal.record_id)
    allowed = AllowedChange(
        resource=goal.resource, record_id=goal.record_id, fields=sorted(goal.values)
    )
    return checks, HttpStep(method=method, path=path, body=body), allowed


_KIND_PREFERENCE = {"update": ("update", "replace"), "create": ("create",), "delete": ("delete",)}


def _operation_path(
    model: ServiceModel, resource: Resource, action: str, rid: str | None
) -> tuple[str, str]:
    for kind in _KIND_PREFERENCE[action]:
        for operation in model.operations:
            if operation.resource == resource.name and operation.kind == kind:
                path = re.sub(r"\{[^/{}]+\}", rid or "", operation.path, count=1)
                return operation.method.upper(), path
    raise ReplayError(f"the model has no {action} operation for {resource.name}")


def _server_maintained(model: ServiceModel, goals: Sequence[Goal], world: World) -> list[str]:
    """Fields the service changes by itself on the resources of the world (not goal fields):
    a note on a record stamps who updated it and when."""
    names: set[str] = set()
    for name in {goal.resource for goal in goals} | set(world):
        resource = model.resources[name]
        names |= {
            f for f, spec in resource.fields.items() if spec.server_generated or spec.read_only
        }
        for machine in resource.state_machines:
            for fields in machine.changes_on_entry.values():
                names |= set(fields)
    return sorted(names - {name for goal in goals for name in goal.values})
