"""Classifying a failure and reading feedback: small pure rules, tried in a fixed order.

What the heuristics can and cannot derive, honestly:
- A refused call (4xx on a write) is a constraint violation; the fields the service or the model
  demands (`required_on_entry` of the target state, or field names an error message lists after
  "mandatory"/"required") become goals with "any non-empty value".
- A write naming a field the model lacks, or an enum value outside the field's enum, is an
  invented value, whether or not the service accepted it.
- Free-text feedback is read with a few patterns only: `<field> should be <value>`,
  `correct answer is <text>`, a record's display value (e.g. `INC0010002`) naming the right
  record, and `must not / should not / never <delete|remove|...>` forbidding a method. Anything
  subtler needs a corrected outcome (`metadata["expected"]`) or a successful session of the same
  task; sessions nothing can be derived from are reported and skipped, never guessed.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from myna.replay.episode import CallPattern, FailureClass
from myna.replay.logs import LoggedCall, iter_text_values
from myna.replay.verify import normalise, same, scalar
from myna.schemas.model import Resource, ServiceModel

Action = Literal["update", "create", "delete"]


@dataclass(frozen=True, slots=True)
class Goal:
    """One change the task needs, on a record of the rebuilt world (None values: non-empty)."""

    resource: str
    action: Action
    record_id: str | None
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Classification:
    failure_class: FailureClass
    detail: str
    call: LoggedCall | None = None

    @property
    def index(self) -> int | None:
        return None if self.call is None else self.call.index


@dataclass(frozen=True, slots=True)
class Feedback:
    """What the patterns found in free-text feedback."""

    answer: str | None = None
    field_values: dict[str, str] = field(default_factory=dict)
    forbidden_methods: frozenset[str] = frozenset()
    text: str = ""

    def mentions(self, value: str) -> bool:
        return bool(value) and re.search(rf"\b{re.escape(value)}\b", self.text) is not None


_ANSWER = re.compile(
    r"(?:correct|right|expected|actual) answer(?:\s+(?:is|was|would have been|should be|"
    r"should have been)\s*:?|\s*:)\s*[\"'“]?(?P<answer>[^\"'”\n]+?)[\"'”]?\s*(?:\.\s|\.$|$)",
    re.IGNORECASE | re.MULTILINE,
)
_FIELD_VALUE = re.compile(
    r"\b(?P<field>[a-z][a-z0-9_]*) should (?:be|have been)(?: set to)? "
    r"[\"'“](?P<value>[^\"'”\n]+)[\"'”]",
    re.IGNORECASE,
)
_FORBID = re.compile(
    r"\b(?:must not|mustn't|should not|shouldn't|not allowed to|never|do not|don't)\s+"
    r"(?:have\s+)?(?:be(?:en)?\s+)?(?P<verb>delete|deleted|remove|removed|create|created)\b",
    re.IGNORECASE,
)
_VERB_METHODS = {
    "delete": "DELETE",
    "deleted": "DELETE",
    "remove": "DELETE",
    "removed": "DELETE",
    "create": "POST",
    "created": "POST",
}
_REQUIRED = re.compile(
    r"(?:mandatory|required)[^:]*:\s*(?P<names>[A-Za-z_][\w ]*(?:\s*,\s*[A-Za-z_][\w ]*)*)",
    re.IGNORECASE,
)


def parse_feedback(text: str | None) -> Feedback:
    if not text:
        return Feedback()
    answer = _ANSWER.search(text)
    methods = {_VERB_METHODS[match.group("verb").lower()] for match in _FORBID.finditer(text)}
    return Feedback(
        answer=answer.group("answer").strip() if answer else None,
        field_values={m.group("field"): m.group("value") for m in _FIELD_VALUE.finditer(text)},
        forbidden_methods=frozenset(methods),
        text=text,
    )


def required_fields(call: LoggedCall, model: ServiceModel) -> list[str]:
    """Fields a refused write lacked: from the model's state machines, then the error text."""
    spec = model.resources.get(call.resource or "")
    if spec is None:
        return []
    body = call.body if isinstance(call.body, dict) else {}
    found: list[str] = []
    for machine in spec.state_machines:
        target = body.get(machine.field)
        if target is not None:
            found += machine.required_on_entry.get(str(scalar(target)), [])
    for text in iter_text_values(call.response):
        for match in _REQUIRED.finditer(text):
            for name in (part.strip() for part in match.group("names").split(",")):
                if name in spec.fields or (not spec.fields and name.isidentifier()):
                    found.append(name)
    return [name for i, name in enumerate(found) if name not in found[:i] and name not in body]


def invented(call: LoggedCall, model: ServiceModel) -> str | None:
    """Why a write's body names a field or value the model does not have, or None."""
    spec = model.resources.get(call.resource or "")
    if spec is None or not spec.fields or not isinstance(call.body, dict):
        return None
    for name, value in call.body.items():
        field_spec = spec.fields.get(name)
        if field_spec is None:
            return f"field {name!r} is not a field of {spec.name}"
        enum = field_spec.schema_.get("enum")
        if enum and not any(same(value, option) for option in enum):
            return f"{spec.name}.{name}={value!r} is not one of {enum!r}"
    return None


Rule = Callable[["Evidence"], Classification | None]


@dataclass(frozen=True, slots=True)
class Evidence:
    """Everything the rules may look at."""

    calls: tuple[LoggedCall, ...]
    goals: tuple[Goal, ...]
    expected_answer: str | None
    given_answer: str | None
    feedback: Feedback
    forbidden: tuple[CallPattern, ...]
    model: ServiceModel


def _policy(evidence: Evidence) -> Classification | None:
    for call in evidence.calls:
        if call.is_write and call.operation is None:
            detail = f"wrote through an undocumented endpoint: {call.method} {call.path}"
            return Classification("policy_breach", detail, call)
        for pattern in evidence.forbidden:
            if pattern.method in ("*", call.method) and fnmatch.fnmatchcase(
                call.path, pattern.path
            ):
                detail = f"made a forbidden call {call.method} {call.path}"
                return Classification("policy_breach", detail, call)
        if call.is_write and call.method in evidence.feedback.forbidden_methods:
            detail = f"feedback forbids {call.method}: {call.path}"
            return Classification("policy_breach", detail, call)
    return None


def _invented(evidence: Evidence) -> Classification | None:
    for call in evidence.calls:
        if call.is_write:
            reason = invented(call, evidence.model)
            if reason is not None:
                return Classification("invented_value", reason, call)
    return None


def _constraint(evidence: Evidence) -> Classification | None:
    for call in evidence.calls:
        if call.is_write and 400 <= call.status < 500:
            return Classification(
                "constraint_violation",
                f"{call.method} {call.path} was refused ({call.status})",
                call,
            )
    return None


def _wrong_record(evidence: Evidence) -> Classification | None:
    wanted = {(g.resource, g.record_id) for g in evidence.goals if g.record_id is not None}
    for call in evidence.calls:
        if not (call.is_write and call.ok and call.method != "POST"):
            continue
        target = (call.resource, call.target_id)
        same_resource = [rid for res, rid in wanted if res == call.resource]
        if target not in wanted and same_resource:
            return Classification(
                "wrong_record",
                f"changed {call.resource} {call.target_id}; the task needed {same_resource[0]}",
                call,
            )
    return None


def achieved(goal: Goal, calls: Iterable[LoggedCall]) -> bool:
    """Whether the agent's successful writes made this change (judged from the log alone)."""
    done: dict[str, Any] = {}
    for call in calls:
        if not (call.is_write and call.ok and call.resource == goal.resource):
            continue
        if goal.action == "delete" and call.method == "DELETE" and call.target_id == goal.record_id:
            return True
        if goal.action == "create" and call.method == "POST":
            body = call.body if isinstance(call.body, dict) else {}
            if all(v is None or same(body.get(k), v) for k, v in goal.values.items()):
                return True
        if (
            goal.action == "update"
            and call.target_id == goal.record_id
            and isinstance(call.body, dict)
        ):
            done.update(call.body)
    if goal.action != "update":
        return False
    return all(
        (name in done and str(scalar(done[name])).strip() != "")
        if value is None
        else (name in done and same(done[name], value))
        for name, value in goal.values.items()
    )


def _missing_step(evidence: Evidence) -> Classification | None:
    for goal in evidence.goals:
        if not achieved(goal, evidence.calls):
            what = ", ".join(goal.values) or goal.action
            where = goal.record_id or "a new record"
            return Classification("missing_step", f"never made {goal.resource} {where}: {what}")
    return None


def _wrong_answer(evidence: Evidence) -> Classification | None:
    expected = evidence.expected_answer
    given = evidence.given_answer
    if expected is not None and (given is None or normalise(expected) not in normalise(given)):
        return Classification("wrong_answer", f"answered {given!r}; expected {expected!r}")
    return None


RULES: tuple[Rule, ...] = (
    _policy,
    _invented,
    _constraint,
    _wrong_record,
    _missing_step,
    _wrong_answer,
)


def classify(evidence: Evidence) -> Classification | None:
    """The first rule that fires, in the order of `RULES`; None when none does."""
    for rule in RULES:
        found = rule(evidence)
        if found is not None:
            return found
    return None


def display_selector(resource: Resource, record: dict[str, Any]) -> dict[str, Any]:
    """How a verifier names a record: by its display field when it has one, else by id."""
    display = resource.display_field
    if display is not None and scalar(record.get(display)) != "":
        return {display: scalar(record[display])}
    return {resource.id_field: scalar(record.get(resource.id_field))}
