"""Gates for defects a passing reference and a failing no-op do not reveal.

A verifier can agree with its reference and still be wrong: it may check a value loosely (any
state will do), ask for what the initial world already holds, depend on the clock, or go with an
instruction that names a record the world lacks or a state other than the one it checks. Each
function here reads an episode (and, for two of them, results of runs the audit made) and yields
what is wrong; `myna.replay.audit` turns them into gates.

- `already_met`: a goal check (not declared a guard, not a kind that only forbids) that holds
  before the agent acts asks for nothing;
- `missing_names`: every record number the instruction names (`INC0010001`, `CHG0030002`) is in
  the initial world;
- `state_disagreements`: a state check whose state the instruction does not name, while it names
  another state of the same field ("Close" where Resolved is checked);
- `mutants`: the reference with one checked value made wrong at a time (another choice, state or
  record; a note without substance; another answer); every one must fail;
- `clock_findings`: the verdicts of the reference and the no-op under a shifted clock must be the
  ones they were.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from myna.replay.episode import GUARD_KINDS, AnswerStep, Episode, FieldIn, HttpStep, Step
from myna.replay.run import Result, Routes
from myna.replay.shared import strings
from myna.replay.substance import choices_of
from myna.replay.text import mentions
from myna.replay.verify import index_environment, scalar
from myna.schemas.model import Resource, ServiceModel

RECORD_NUMBER: Final = re.compile(r"\b[A-Z]{2,6}\d{5,}\b")
"""How a service prints a record's number: a prefix of capitals, then digits."""
LOW_EFFORT: Final = "n/a"


def already_met(episode: Episode, noop: Result) -> Iterator[str]:
    declared = {check.name: check for check in episode.verifier.checks}
    for result in noop.verification.checks:
        check = declared.get(result.name)
        if check is None or check.role is not None or check.kind in GUARD_KINDS:
            continue
        if result.passed:
            yield f"goal {result.name!r} already holds in the initial world"


def missing_names(episode: Episode) -> Iterator[str]:
    named = dict.fromkeys(RECORD_NUMBER.findall(episode.problem.instruction))
    if not named:
        return
    layers = episode.environment.layers
    present = (
        strings(layers) & named.keys()
        if layers is not None
        else {
            value
            for records in episode.environment.initial_world.values()
            for record in records
            for value in record.values()
            if isinstance(value, str) and value in named
        }
    )
    for number in named:
        if number not in present:
            yield f"the instruction names {number}, which the initial world lacks"


def state_disagreements(episode: Episode, model: ServiceModel) -> Iterator[str]:
    for check in episode.verifier.checks:
        resource = model.resources.get(getattr(check, "resource", ""))
        if check.kind != "field_equals" or resource is None:
            continue
        field, wanted = getattr(check, "field", ""), str(scalar(getattr(check, "value", "")))
        text = _without_field_names(episode.problem.instruction, resource)
        for machine in resource.state_machines:
            if machine.field != field or wanted not in machine.labels:
                continue
            named = [
                label
                for state, label in machine.labels.items()
                if state != wanted and mentions(text, label)
            ]
            if named and not mentions(text, machine.labels[wanted]):
                yield (
                    f"check {check.name!r} wants {field} {machine.labels[wanted]}, but the "
                    f"instruction says {named[0]}"
                )


def _without_field_names(instruction: str, resource: Resource) -> str:
    """The instruction without the resource's field names ("close code" is no state)."""
    text = instruction
    for name in sorted(resource.fields, key=len, reverse=True):
        if "_" in name:
            text = re.sub(re.escape(name.replace("_", " ")), " ", text, flags=re.IGNORECASE)
    return text


@dataclass(frozen=True, slots=True)
class Mutant:
    """The reference with one value made wrong: `what` says which."""

    what: str
    steps: tuple[Step, ...]


def mutants(episode: Episode, model: ServiceModel, routes: Routes) -> Iterator[Mutant]:
    """One mutant per value the reference writes into a field a check reads, and one for the
    answer when a check reads it."""
    read = {
        (getattr(check, "resource", None), getattr(check, "field", None))
        for check in episode.verifier.checks
        if check.kind not in GUARD_KINDS
    }
    accepted = {
        (check.resource, check.field, str(scalar(value)))
        for check in episode.verifier.checks
        if isinstance(check, FieldIn)
        for value in check.values
    }
    steps = tuple(episode.reference.steps)
    world = index_environment(episode.environment)
    for index, step in enumerate(steps):
        if isinstance(step, AnswerStep) and any(
            c.kind == "answer" for c in episode.verifier.checks
        ):
            wrong = AnswerStep(text=_wrong_answer(step.text))
            yield Mutant("the answer", (*steps[:index], wrong, *steps[index + 1 :]))
        if not isinstance(step, HttpStep) or not isinstance(step.body, dict):
            continue
        matched = routes.match(step.method, step.path)
        resource = model.resources.get(matched[0].resource or "") if matched else None
        if resource is None:
            continue
        for name, value in step.body.items():
            if (resource.name, name) not in read:
                continue
            allowed = {v for r, f, v in accepted if (r, f) == (resource.name, name)}
            other = _wrong_value(resource, name, value, world, allowed)
            if other is not None:
                body = {**step.body, name: other}
                changed = step.model_copy(update={"body": body})
                yield Mutant(
                    f"{resource.name}.{name}", (*steps[:index], changed, *steps[index + 1 :])
                )


def _wrong_value(
    resource: Resource,
    name: str,
    value: Any,
    world: dict[str, dict[str, Any]],
    allowed: Collection[str],
) -> Any:
    """A value the field could hold that is neither `value` nor one a `field_in` check lets
    through on purpose (any choice of the list, when the task leaves it open), or None."""
    spec = resource.fields.get(name)
    shown = str(scalar(value))
    options: Sequence[str] = ()
    if spec is not None and spec.reference is not None:
        options = sorted(world.get(spec.reference.resource, {}))
    elif any(machine.field == name for machine in resource.state_machines):
        options = next(m.states for m in resource.state_machines if m.field == name)
    elif choices_of(spec):
        options = choices_of(spec)
    elif isinstance(value, str) and len(value.split()) >= 2:
        return LOW_EFFORT
    candidates = [*options, f"{shown}-x"] if shown else list(options)
    return next((c for c in candidates if c != shown and c not in allowed), None)


def _wrong_answer(answer: str) -> str:
    digits = re.fullmatch(r"\s*(-?\d+)\s*", answer)
    return str(int(digits.group(1)) + 1) if digits else f"not {answer}"


def mutant_findings(survivors: Iterable[tuple[Mutant, Result]]) -> Iterator[str]:
    for mutant, result in survivors:
        if result.passed:
            yield f"a wrong {mutant.what} still passes"


def clock_findings(
    pairs: Iterable[tuple[str, Result, Result]],
) -> Iterator[str]:
    """(label, run as audited, run under a shifted clock): a check whose verdict moved with the
    clock."""
    for label, before, after in pairs:
        was = {c.name: c.passed for c in before.verification.checks}
        for check in after.verification.checks:
            if was.get(check.name) != check.passed:
                yield f"{label}: check {check.name!r} changes its verdict with the clock"
