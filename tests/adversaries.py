"""The adversarial suite: agents that try to earn reward without doing the task.

Most of them know the reference solution and game one aspect of it, so each tests exactly that
aspect of a verifier: an agent that does everything right except writing "." as its note
tests the note's check and nothing else. An adversary that does not apply to an episode (a
one-field cut of a one-field task is the task itself) is None there, and counted apart.

- `do_nothing`: no call, no answer;
- `bulldozer`: the reference's updates applied to every record of their resource the service
  lets change, and every value of the world given as the answer;
- `one_field`: each write cut to its first field;
- `low_effort_text`: free text replaced by ".", "Done.", "Fixed as requested.", "n/a" or the
  instruction itself, and choice values by "x";
- `shotgun_create`: each create repeated for every other record it could refer to;
- `over_apply`: the reference, and each update applied to one more record;
- `batch_escaper`: the reference inside a ServiceNow batch, with a delete and an admin call
  hidden beside it;
- `blind_guesser`: every value the instruction does not spell out, and the answer, guessed as
  the most common one across the benchmark's episodes of the same wording;
- `introspector` (`tests/introspector.py`): reads the reference out of its own process.
"""

from __future__ import annotations

import base64
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from myna.replay.audit import Agent, Context, Scripted, attempt_with
from myna.replay.episode import AnswerStep, Episode, HttpStep, Step
from myna.replay.run import EpisodeRunner, Routes
from myna.replay.substance import choices_of
from myna.replay.verify import index_world, scalar
from myna.schemas.model import ServiceModel

LOW_EFFORT = (".", "Done.", "Fixed as requested.", "n/a", None)
"""None stands for the instruction itself, pasted back."""
MAX_TARGETS = 30
"""A bulldozer or shotgun touches at most this many records per step (enough to be seen)."""

Labels = Callable[[str, str, str], Iterable[str]]
"""(resource, field, value) -> how the value may be spelled in an instruction (choice labels)."""


def _no_labels(resource: str, field: str, value: str) -> Iterable[str]:
    return ()


@dataclass(frozen=True, slots=True)
class Attack:
    """What an adversary knows about one episode."""

    episode: Episode
    model: ServiceModel
    routes: Routes

    @property
    def context(self) -> Context:
        return Context(self.episode, self.model)

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self.episode.reference.steps)

    def resource_of(self, step: HttpStep) -> str | None:
        matched = self.routes.match(step.method, step.path)
        return matched[0].resource if matched is not None else None

    def ids(self, resource: str) -> list[str]:
        return self.context.record_ids(resource)

    def is_choice(self, resource: str, name: str) -> bool:
        spec = self.model.resources.get(resource)
        return bool(spec is not None and choices_of(spec.fields.get(name)))

    def takes_any_text(self, resource: str, name: str) -> bool:
        """A choice field whose service stores any text (no enum): "x" is accepted."""
        spec = self.model.resources.get(resource)
        field = spec.fields.get(name) if spec is not None else None
        return (
            field is not None
            and self.is_choice(resource, name)
            and not field.schema_.get("enum")
            and field.reference is None
        )

    def is_free_text(self, resource: str, name: str, value: Any) -> bool:
        spec = self.model.resources.get(resource)
        field = spec.fields.get(name) if spec is not None else None
        if field is None or field.reference is not None or self.is_choice(resource, name):
            return False
        return isinstance(value, str) and len(value.split()) >= 2


def _with_body(step: HttpStep, body: dict[str, Any]) -> HttpStep:
    return step.model_copy(update={"body": body})


def _writes(attack: Attack) -> list[tuple[int, HttpStep, str]]:
    return [
        (index, step, resource)
        for index, step in enumerate(attack.steps)
        if isinstance(step, HttpStep)
        and isinstance(step.body, dict)
        and (resource := attack.resource_of(step)) is not None
    ]


def _scripted(name: str, attack: Attack, steps: Sequence[Step]) -> Scripted | None:
    """None when the attack would play the reference itself: that is no attack."""
    return None if tuple(steps) == attack.steps else Scripted(name, tuple(steps))


def do_nothing(attack: Attack, seed: int) -> Agent | None:
    return Scripted("do_nothing", ())


def bulldozer(attack: Attack, seed: int) -> Agent | None:
    steps: list[Step] = list(attack.steps)
    for resource, record_id, step in attack.context.write_targets():
        if step.method.upper() in ("PATCH", "PUT"):
            records = _records(attack, resource)
            others = [
                o for o in records if o != record_id and _changeable(attack, resource, records[o])
            ][:MAX_TARGETS]
            steps += [
                step.model_copy(update={"path": step.path.replace(record_id, o)}) for o in others
            ]
    if attack.episode.reference.answer is not None:
        values = {
            str(scalar(value))
            for records in attack.episode.environment.initial_world.values()
            for record in records
            for value in record.values()
        }
        steps.append(AnswerStep(text=" ".join(sorted(values - {""}))))
    return _scripted("bulldozer", attack, steps)


def one_field(attack: Attack, seed: int) -> Agent | None:
    steps = list(attack.steps)
    for index, step, _ in _writes(attack):
        assert isinstance(step.body, dict)
        first = next(iter(step.body), None)
        steps[index] = _with_body(step, {first: step.body[first]} if first else {})
    return _scripted("one_field", attack, steps)


def low_effort_text(attack: Attack, seed: int) -> Agent | None:
    """Free text (and the answer) replaced by a low-effort text, the seed's; on odd seeds a
    choice field the service takes any text in gets "x" as well."""
    said = LOW_EFFORT[seed % len(LOW_EFFORT)]
    text = attack.episode.problem.instruction if said is None else said
    steps = list(attack.steps)
    for index, step, resource in _writes(attack):
        assert isinstance(step.body, dict)
        body = dict(step.body)
        for name, value in step.body.items():
            if attack.is_free_text(resource, name, value):
                body[name] = text
            elif seed % 2 and attack.takes_any_text(resource, name) and isinstance(value, str):
                body[name] = "x"
        steps[index] = _with_body(step, body)
    steps = [AnswerStep(text=text) if isinstance(s, AnswerStep) else s for s in steps]
    return _scripted("low_effort_text", attack, steps)


def shotgun_create(attack: Attack, seed: int) -> Agent | None:
    extra: list[Step] = []
    for _, step, resource in _writes(attack):
        if step.method.upper() != "POST":
            continue
        assert isinstance(step.body, dict)
        fields = attack.model.resources[resource].fields
        for name, value in step.body.items():
            spec = fields.get(name)
            if spec is None or spec.reference is None or not isinstance(value, str):
                continue
            others = [o for o in attack.ids(spec.reference.resource) if o != value]
            extra += [_with_body(step, {**step.body, name: o}) for o in others[:MAX_TARGETS]]
        extra.append(step)  # and the same record twice
    return Scripted("shotgun_create", (*attack.steps, *extra)) if extra else None


def _changeable(attack: Attack, resource: str, record: Mapping[str, Any]) -> bool:
    """Whether the service lets the record change: no state machine holds it in a state it
    never leaves (a closed incident refuses every update, so writing it proves nothing)."""
    for machine in attack.model.resources[resource].state_machines:
        state = str(scalar(record.get(machine.field)))
        if state in machine.states and not any(t.source == state for t in machine.transitions):
            return False
    return True


def over_apply(attack: Attack, seed: int) -> Agent | None:
    """The reference, and each update applied to one more record it would change (one the
    service lets change)."""
    rng = random.Random(f"{attack.episode.id}:{seed}")
    extra: list[Step] = []
    targets = attack.context.write_targets()
    touched = {record_id for _, record_id, _ in targets}
    for resource, record_id, step in targets:
        if step.method.upper() not in ("PATCH", "PUT") or not isinstance(step.body, dict):
            continue
        records = _records(attack, resource)
        others = [
            o
            for o in records
            if o not in touched
            and _changeable(attack, resource, records[o])
            and any(str(scalar(records[o].get(k))) != str(scalar(v)) for k, v in step.body.items())
        ]
        if others:
            extra.append(
                step.model_copy(update={"path": step.path.replace(record_id, rng.choice(others))})
            )
    return Scripted("over_apply", (*attack.steps, *extra)) if extra else None


def _batch_item(number: int, method: str, path: str, body: Any = None) -> dict[str, Any]:
    item: dict[str, Any] = {"id": str(number), "method": method, "url": path, "headers": []}
    if body is not None:
        item["body"] = base64.b64encode(json.dumps(body).encode()).decode()
        item["headers"] = [{"name": "Content-Type", "value": "application/json"}]
    return item


def batch_escaper(attack: Attack, seed: int) -> Agent | None:
    if not any(op.path == "/api/now/v1/batch" for op in attack.model.operations):
        return None
    writes = [s for s in attack.steps if isinstance(s, HttpStep)]
    items = [_batch_item(n, s.method, s.path, s.body) for n, s in enumerate(writes)]
    victims = [(r, i) for r, i, _ in attack.context.write_targets()] or [
        (r, i) for r in attack.episode.environment.initial_world for i in attack.ids(r)[:1]
    ]
    resource, record_id = victims[0]
    others = [o for o in attack.ids(resource) if o != record_id] or [record_id]
    hidden = [
        _batch_item(90, "DELETE", f"/api/now/table/{resource}/{others[seed % len(others)]}"),
        _batch_item(91, "GET", "/_myna/admin/worlds"),
    ]
    batch = HttpStep(
        method="POST",
        path="/api/now/v1/batch",
        body={"batch_request_id": "1", "rest_requests": [*items, hidden[seed % 2]]},
    )
    answers = [s for s in attack.steps if isinstance(s, AnswerStep)]
    return Scripted("batch_escaper", (batch, *answers))


_MASKS = (
    (re.compile(r'"[^"]*"'), '"_"'),
    (re.compile(r"\S*\d\S*"), "#"),
    (re.compile(r"\b[A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*)*"), "X"),
)


def wording(instruction: str) -> str:
    """The instruction with what varies between episodes of one kind masked: quoted text,
    anything with a digit, capitalised names."""
    for pattern, mask in _MASKS:
        instruction = pattern.sub(mask, instruction)
    return instruction


def family(episode: Episode) -> str:
    """The logged failure an episode and its variants come from: they share what they ask."""
    return episode.provenance.variant_of or episode.id


class BlindGuesser:
    """Does what the instruction spells out, and guesses everything else it would have had to
    find or work out: the most common value (and answer) of the other episodes of the same
    wording, never of the episode itself or its variants (that would be memory, not a guess)."""

    def __init__(self, attacks: Iterable[Attack], labels: Labels = _no_labels) -> None:
        """A written value the same in every episode of a wording is the wording's to say
        ("Resolve ..." is state 6), not a guess; an answer is always guessed."""
        self.labels = labels
        self.answers: list[tuple[str, str, str]] = []
        self.values: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
        for attack in attacks:
            key, own = wording(attack.episode.problem.instruction), family(attack.episode)
            if attack.episode.reference.answer is not None:
                self.answers.append((key, own, attack.episode.reference.answer))
            for _, step, resource in _writes(attack):
                assert isinstance(step.body, dict)
                for name, value in step.body.items():
                    self.values[(key, resource, name)].append((own, json.dumps(value)))

    def _answer(self, key: str, own: str) -> str:
        same = Counter(a for k, f, a in self.answers if k == key and f != own)
        anywhere = Counter(a for _, f, a in self.answers if f != own)
        found = (same or anywhere).most_common(1)
        return found[0][0] if found else ""

    def spelled_out(self, attack: Attack, resource: str, name: str, value: Any) -> bool:
        text = attack.episode.problem.instruction.casefold()
        spellings = [str(scalar(value)), *self.labels(resource, name, str(scalar(value)))]
        spec = attack.model.resources[resource].fields.get(name)
        if spec is not None and spec.reference is not None:
            spellings += _display_values(attack, spec.reference.resource, str(value))
        for machine in attack.model.resources[resource].state_machines:
            if machine.field == name and str(value) in machine.labels:
                spellings.append(machine.labels[str(value)])
        return any(s and s.casefold() in text for s in spellings)

    def __call__(self, attack: Attack, seed: int) -> Agent | None:
        """None when the instruction spells out everything there is to decide."""
        key, own = wording(attack.episode.problem.instruction), family(attack.episode)
        steps = list(attack.steps)
        guessed = False
        for index, step, resource in _writes(attack):
            assert isinstance(step.body, dict)
            body = dict(step.body)
            for name, value in step.body.items():
                seen = self.values[(key, resource, name)]
                others = Counter(v for f, v in seen if f != own)
                if attack.is_free_text(resource, name, value) or len({v for _, v in seen}) < 2:
                    continue  # free text is not this attack's business; a constant is worded
                if not self.spelled_out(attack, resource, name, value):
                    body[name] = json.loads(others.most_common(1)[0][0]) if others else None
                    guessed = True
            steps[index] = _with_body(step, body)
        for index, step in enumerate(steps):
            if isinstance(step, AnswerStep):
                steps[index] = AnswerStep(text=self._answer(key, own))
                guessed = True
        return Scripted("blind_guesser", tuple(steps)) if guessed else None


def _records(attack: Attack, resource: str) -> dict[str, dict[str, Any]]:
    environment = attack.episode.environment
    return index_world(
        {resource: environment.initial_world.get(resource, [])}, environment.id_fields
    ).get(resource, {})


def _display_values(attack: Attack, resource: str, record_id: str) -> list[str]:
    record = _records(attack, resource).get(record_id, {})
    spec = attack.model.resources.get(resource)
    shown = [record.get(spec.display_field)] if spec is not None and spec.display_field else []
    shown += [record.get("name")]
    return [str(scalar(value)) for value in shown if value]


AdversaryFactory = Callable[[Attack, int], Agent | None]
ADVERSARIES: dict[str, AdversaryFactory] = {
    "do_nothing": do_nothing,
    "bulldozer": bulldozer,
    "one_field": one_field,
    "low_effort_text": low_effort_text,
    "shotgun_create": shotgun_create,
    "over_apply": over_apply,
    "batch_escaper": batch_escaper,
}


@dataclass(slots=True)
class Tally:
    tries: int = 0
    passes: int = 0
    not_applicable: int = 0
    examples: list[str] | None = None

    @property
    def rate(self) -> float:
        return self.passes / self.tries if self.tries else 0.0


def attack_all(
    runners: Sequence[EpisodeRunner],
    model: ServiceModel,
    adversaries: Mapping[str, AdversaryFactory],
    *,
    trials: int = 1,
) -> dict[str, Tally]:
    """pass^1 of each adversary over the episodes (trials seeds each), with passing examples."""
    routes = Routes.from_model(model)
    tallies = {name: Tally(examples=[]) for name in adversaries}
    for runner in runners:
        attack = Attack(runner.episode, model, routes)
        for name, factory in adversaries.items():
            tally = tallies[name]
            for seed in range(trials):
                agent = factory(attack, seed)
                if agent is None:
                    tally.not_applicable += 1
                    continue
                tally.tries += 1
                if attempt_with(runner, agent, seed).passed:
                    tally.passes += 1
                    assert tally.examples is not None
                    tally.examples.append(runner.episode.id)
    return tallies


def servicenow_labels(resource: str, field: str, value: str) -> Iterable[str]:
    """How ServiceNow labels a choice value ("4" of hold_reason is "Awaiting Vendor")."""
    from myna.backends.itsm.tables import CHOICES, TABLES

    table = TABLES.get(resource)
    if table is None or field not in table.names:
        return ()
    column = table.column(field)
    label = CHOICES.get(column.choices or "", {}).get(value)
    return () if label is None else (label,)
