"""Targeted variants: the same failure mode on other records, with other values, in other words.

A variant rewrites the episode's plan, then is assembled like the original, so it gets its own
verifier and reference solution:
- `other_record`: a goal's record is swapped for another record of the same resource that does
  not already satisfy it; the instruction must name the record (display value or id) so the
  swap can be written into it, and the logged failing calls are retargeted too. For a question,
  the record the instruction names is swapped and the answer read again along the same path
  (a field, or a reference and a field of its target), when the answer was found that way;
- `other_value`: a goal value of an enum field (not a state machine's field, whose transitions
  constrain it) that the instruction spells out is swapped for another enum value;
- `wording`: the instruction is reworded by a fixed template.
Choices are seeded by the episode id, so rebuilding gives the same variants.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from myna.replay.build import Builder, Plan, World, assemble, follow
from myna.replay.classify import Goal, display_selector
from myna.replay.episode import Episode, HttpStep, Step
from myna.replay.verify import normalise, same, scalar

WORDINGS: tuple[tuple[str, str], ...] = (
    ("polite", "Please take care of the following request. {text}"),
    ("scoped", "{text} Do not change anything the request does not ask for."),
    ("ticket", "Service desk ticket: {text}"),
)


@dataclass(frozen=True, slots=True)
class Variant:
    kind: str
    plan: Plan
    substitutions: tuple[tuple[str, str], ...] = ()


def _names(text: str, value: str) -> bool:
    return bool(value) and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None


def _swap(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new.replace("\\", "\\\\"), text)


def _satisfied(goal: Goal, record: dict[str, object]) -> bool:
    return all(
        str(scalar(record.get(name))).strip() != ""
        if value is None
        else same(record.get(name), value)
        for name, value in goal.values.items()
    )


def _other_records(
    plan: Plan, world: World, builder: Builder, rng: random.Random
) -> Iterator[Variant]:
    targeted = {goal.record_id for goal in plan.goals}
    for position, goal in enumerate(plan.goals):
        if goal.record_id is None:
            continue
        resource = builder.model.resources[goal.resource]
        records = world.get(goal.resource, {})
        shown = str(next(iter(display_selector(resource, records[goal.record_id]).values())))
        if not (_names(plan.instruction, shown) or _names(plan.instruction, goal.record_id)):
            continue
        candidates = sorted(
            rid
            for rid, record in records.items()
            if rid not in targeted and not (goal.action == "update" and _satisfied(goal, record))
        )
        rng.shuffle(candidates)
        for other in candidates:
            other_shown = str(next(iter(display_selector(resource, records[other]).values())))
            instruction = _swap(_swap(plan.instruction, shown, other_shown), goal.record_id, other)
            goals = list(plan.goals)
            goals[position] = replace(goal, record_id=other)
            yield Variant(
                "other_record",
                replace(plan, instruction=instruction, goals=tuple(goals)),
                ((goal.record_id, other),),
            )


def _other_subjects(
    plan: Plan, world: World, builder: Builder, rng: random.Random
) -> Iterator[Variant]:
    """The same question about another record: its answer read along the same path."""
    source = plan.answer_from
    if source is None or plan.answer is None:
        return
    model = builder.model
    resource = model.resources[source.resource]
    records = world.get(source.resource, {})
    shown = str(next(iter(display_selector(resource, records[source.record_id]).values())))
    candidates = sorted(rid for rid in records if rid != source.record_id)
    rng.shuffle(candidates)
    for other in candidates:
        answer = follow(world, model, source.resource, records[other], source.path)
        if answer is None or normalise(answer) == normalise(plan.answer):
            continue
        other_shown = str(next(iter(display_selector(resource, records[other]).values())))
        instruction = _swap(_swap(plan.instruction, shown, other_shown), source.record_id, other)
        moved = replace(source, record_id=other)
        yield Variant(
            "other_record",
            replace(plan, instruction=instruction, answer=answer, answer_from=moved),
        )


def _other_values(
    plan: Plan, world: World, builder: Builder, rng: random.Random
) -> Iterator[Variant]:
    for position, goal in enumerate(plan.goals):
        resource = builder.model.resources[goal.resource]
        machine_fields = {machine.field for machine in resource.state_machines}
        current = world.get(goal.resource, {}).get(goal.record_id or "", {})
        for name, value in goal.values.items():
            spec = resource.fields.get(name)
            enum = spec.schema_.get("enum") if spec is not None else None
            if value is None or not enum or name in machine_fields:
                continue
            if not _names(plan.instruction, str(scalar(value))):
                continue
            options = [o for o in enum if not same(o, value) and not same(current.get(name), o)]
            rng.shuffle(options)
            for option in options:
                goals = list(plan.goals)
                goals[position] = replace(goal, values={**goal.values, name: option})
                instruction = _swap(plan.instruction, str(scalar(value)), str(scalar(option)))
                yield Variant(
                    "other_value", replace(plan, instruction=instruction, goals=tuple(goals))
                )


def _wordings(plan: Plan, world: World, builder: Builder, rng: random.Random) -> Iterator[Variant]:
    for name, template in WORDINGS:
        yield Variant(
            "wording",
            replace(plan, instruction=template.format(text=plan.instruction), wording=name),
        )


MAKERS: tuple[Callable[[Plan, World, Builder, random.Random], Iterator[Variant]], ...] = (
    _other_records,
    _other_subjects,
    _other_values,
    _wordings,
)


def _retarget(steps: list[Step], substitutions: tuple[tuple[str, str], ...]) -> list[Step]:
    out: list[Step] = []
    for step in steps:
        if isinstance(step, HttpStep) and substitutions:
            path, text = step.path, json.dumps(step.body)
            for old, new in substitutions:
                path, text = path.replace(old, new), text.replace(old, new)
            out.append(step.model_copy(update={"path": path, "body": json.loads(text)}))
        else:
            out.append(step)
    return out


def make_variants(
    episode: Episode, plan: Plan, world: World, builder: Builder, k: int
) -> list[Episode]:
    """Up to k variants, taking one from each kind in turn until k are made or none are left."""
    rng = random.Random(episode.id)
    sources = [maker(plan, world, builder, rng) for maker in MAKERS]
    variants: list[Episode] = []
    seen = {plan.instruction}
    while len(variants) < k and sources:
        for source in list(sources):
            if len(variants) >= k:
                break
            variant = next(source, None)
            if variant is None:
                sources.remove(source)
                continue
            if variant.plan.instruction in seen:
                continue
            seen.add(variant.plan.instruction)
            provenance = episode.provenance.model_copy(
                update={
                    "variant_of": episode.id,
                    "variant": variant.kind,
                    "failing_calls": _retarget(
                        list(episode.provenance.failing_calls), variant.substitutions
                    ),
                }
            )
            variant_id = f"{episode.id}-v{len(variants) + 1}"
            variants.append(assemble(variant_id, variant.plan, world, builder, provenance))
    return variants
