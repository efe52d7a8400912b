"""A second derivation of each scenario's expected end state, from the history alone.

A scenario kind writes its verifier and its reference together, so a mistake there is made in
both and the reference passes its own wrong verifier. `expected` works out again, from the
imported history and the names in the instruction, what the records a scenario is about should
end with (or what the answer is), without reading the verifier or the reference; `disagreements`
compares that with where the reference leaves the world. The audit refuses a scenario whose
reference the history contradicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from myna.itsm.importers.model import Incident, IncidentHistory
from myna.itsm.importers.values import IncidentState
from myna.itsm.scenarios.kinds import Scenario, awaits_caller, symptom_key
from myna.replay.episode import AnswerStep, Episode, HttpStep
from myna.replay.verify import index_environment, normalise, scalar

_NUMBER: Final = re.compile(r"\bINC\d{7}\b")
_TABLE: Final = re.compile(r"^/api/now/table/(\w+)(?:/(\w+))?$")


@dataclass(frozen=True, slots=True)
class Expected:
    """How the history says a scenario ends: field values per incident (by sys_id), values of
    records to create per table, and the answer to a question."""

    incidents: dict[str, dict[str, str]] = field(default_factory=dict)
    created: dict[str, dict[str, str]] = field(default_factory=dict)
    answer: str | None = None


class _Index:
    """The history looked up by number and sys_id."""

    def __init__(self, history: IncidentHistory) -> None:
        self.history = history
        self.by_number = {i.number: i for i in history.incidents}

    def named(self, episode: Episode) -> list[Incident]:
        found = _NUMBER.findall(episode.problem.instruction)
        return [self.by_number[n] for n in dict.fromkeys(found) if n in self.by_number]

    def group_name(self, sys_id: str | None) -> str:
        group = self.history.groups.get(sys_id or "")
        return group.name if group is not None else ""


Derivation = Callable[[_Index, Episode], Expected | None]


def _first(index: _Index, episode: Episode) -> Incident | None:
    named = index.named(episode)
    return named[0] if named else None


def _triage(index: _Index, episode: Episode) -> Expected | None:
    incident = _first(index, episode)
    if incident is None:
        return None
    decided = {
        "category": incident.category,
        "assignment_group": incident.assignment_group,
        "impact": incident.impact,
        "urgency": incident.urgency,
    }
    return Expected({incident.sys_id: {k: str(v) for k, v in decided.items() if v is not None}})


def _reassign(index: _Index, episode: Episode) -> Expected | None:
    """The last group that held the incident (an unassignment at the end names none)."""
    incident = _first(index, episode)
    if incident is None:
        return None
    moves = sorted((m.at, m.line, m.to_group) for m in incident.reassignments)
    held = [group for _, _, group in moves if group] + [incident.assignment_group or ""]
    final = [group for group in held if group]
    return Expected({incident.sys_id: {"assignment_group": final[-1]}}) if final else None


def _resolve(index: _Index, episode: Episode) -> Expected | None:
    incident = _first(index, episode)
    if incident is None or incident.resolution is None or incident.resolution.code is None:
        return None
    values = {"state": str(int(IncidentState.RESOLVED)), "close_code": incident.resolution.code}
    return Expected({incident.sys_id: values})


def _reopen(index: _Index, episode: Episode) -> Expected | None:
    """Back in progress, with the group that took the incident on after its first reopening
    (the last group it held otherwise)."""
    incident = _first(index, episode)
    if incident is None or not incident.reopenings:
        return None
    reopened = incident.reopenings[0].at
    later = sorted((m.at, m.to_group) for m in incident.reassignments if m.at >= reopened)
    handler = next((group for _, group in later if group), incident.assignment_group)
    values = {"state": str(int(IncidentState.IN_PROGRESS))}
    if handler:
        values["assignment_group"] = handler
    return Expected({incident.sys_id: values})


def _hold(index: _Index, episode: Episode) -> Expected | None:
    incident = _first(index, episode)
    if incident is None:
        return None
    held = sorted(
        (c.at, c.hold_reason)
        for c in incident.state_changes
        if c.state == IncidentState.ON_HOLD and c.hold_reason is not None
    )
    if not held:
        return None
    values = {"state": str(int(IncidentState.ON_HOLD)), "hold_reason": str(int(held[0][1]))}
    return Expected({incident.sys_id: values})


def _duplicate(index: _Index, episode: Episode) -> Expected | None:
    """Resolved as a duplicate of the latest earlier incident on the same symptom and the same
    item (or caller)."""
    incident = _first(index, episode)
    if incident is None:
        return None
    anchor = incident.cmdb_ci or incident.caller
    earlier = [
        other
        for other in index.history.incidents
        if (other.opened_at, other.number) < (incident.opened_at, incident.number)
        and symptom_key(other) == symptom_key(incident)
        and (other.cmdb_ci or other.caller) == anchor
    ]
    if not earlier:
        return None
    original = max(earlier, key=lambda other: (other.opened_at, other.number))
    values = {
        "state": str(int(IncidentState.RESOLVED)),
        "close_code": "Duplicate",
        "parent_incident": original.sys_id,
    }
    return Expected({incident.sys_id: values})


def _sla_escalation(index: _Index, episode: Episode) -> Expected | None:
    """High urgency on each open incident of the named group in the world that missed its SLA,
    but those the desk waited on their caller for."""
    names = {group.name: sys_id for sys_id, group in index.history.groups.items()}
    text = episode.problem.instruction
    group = next((sys_id for name, sys_id in names.items() if f" {name} " in text), None)
    if group is None:
        return None
    world = episode.environment.initial_world.get("incident", [])
    open_states = {str(int(s)) for s in (IncidentState.NEW, IncidentState.IN_PROGRESS)}
    open_states.add(str(int(IncidentState.ON_HOLD)))
    incidents = [
        index.by_number.get(str(r.get("number")))
        for r in world
        if str(scalar(r.get("state"))) in open_states
    ]
    breached = {
        i.sys_id: {"urgency": "1"}
        for i in incidents
        if i is not None
        and i.assignment_group == group
        and i.made_sla is False
        and not awaits_caller(i)
    }
    return Expected(breached)


def _shared_item(index: _Index, episode: Episode) -> Expected | None:
    """One record for the item the named incidents share."""
    items = {i.cmdb_ci for i in index.named(episode)}
    if len(items) != 1 or None in items:
        return None
    return Expected(created={"problem": {"cmdb_ci": str(items.pop())}})


def _change(index: _Index, episode: Episode) -> Expected | None:
    incident = _first(index, episode)
    if incident is None or incident.cmdb_ci is None:
        return None
    kind = "emergency" if incident.priority is not None and incident.priority <= 2 else "normal"
    return Expected(created={"change_request": {"cmdb_ci": incident.cmdb_ci, "type": kind}})


def _question(index: _Index, episode: Episode) -> Expected | None:
    """The answer, read again from the history or the world by the question's wording."""
    incident = _first(index, episode)
    text = episode.problem.instruction
    world = episode.environment.initial_world.get("incident", [])
    if text.startswith("Which group") and incident is not None:
        return Expected(answer=index.group_name(incident.assignment_group))
    if text.startswith("Who reported") and incident is not None:
        user = index.history.users.get(incident.caller or "")
        return Expected(answer=user.name if user else None)
    group = next(
        (
            sys_id
            for sys_id, g in index.history.groups.items()
            if f"assigned to {g.name} " in text or f"assigned to {g.name}," in text
        ),
        None,
    )
    mine = [r for r in world if str(scalar(r.get("assignment_group"))) == group]
    if text.startswith("Of the incidents") and mine:
        first = min(mine, key=lambda r: (str(r.get("opened_at")), str(r.get("number"))))
        return Expected(answer=str(first["number"]))
    if text.startswith("How many"):
        label = text.rsplit(" in the state ", 1)[-1].split("?", 1)[0]
        states = {s.label: str(int(s)) for s in IncidentState}
        wanted = states.get(label)
        return Expected(answer=str(sum(str(r.get("state")) == wanted for r in mine)))
    return None


DERIVATIONS: Final[Mapping[str, Derivation]] = {
    "triage": _triage,
    "reassign": _reassign,
    "resolve": _resolve,
    "reopen": _reopen,
    "hold": _hold,
    "duplicate": _duplicate,
    "sla_escalation": _sla_escalation,
    "problem": _shared_item,
    "change": _change,
    "question": _question,
}


def expected(history: IncidentHistory, scenario: Scenario) -> Expected | None:
    """What the history says the scenario ends with; None when it cannot say."""
    return DERIVATIONS[scenario.kind](_Index(history), scenario.episode)


def disagreements(history: IncidentHistory, scenario: Scenario) -> Iterator[str]:
    """Where the reference leaves the world otherwise than the history says it should."""
    truth = expected(history, scenario)
    if truth is None:
        yield "the history gives no second derivation of this scenario's outcome"
        return
    episode = scenario.episode
    final, touched, created, answer = _reference_end(episode)
    initial = index_environment(episode.environment).get("incident", {})
    for sys_id, values in truth.incidents.items():
        record = final.get(sys_id) or initial.get(sys_id, {})
        for name, value in values.items():
            if str(scalar(record.get(name))) != value:
                shown = record.get(name)
                yield f"incident {sys_id}: the reference leaves {name}={shown!r}, history {value!r}"
    for sys_id in sorted(touched - set(truth.incidents)):
        if _changed(episode, sys_id, final[sys_id]):
            yield f"incident {sys_id}: the reference changes it; history names no change"
    for table, values in truth.created.items():
        if not any(
            all(str(scalar(b.get(k))) == v for k, v in values.items())
            for b in created.get(table, [])
        ):
            yield f"the reference creates no {table} with {values}"
    if truth.answer is not None and normalise(answer or "") != normalise(truth.answer):
        yield f"the reference answers {answer!r}, history {truth.answer!r}"


def _reference_end(
    episode: Episode,
) -> tuple[dict[str, dict[str, Any]], set[str], dict[str, list[dict[str, Any]]], str | None]:
    """The incidents the reference writes as it leaves them (and their ids), the records it
    creates, and its answer."""
    initial = index_environment(episode.environment).get("incident", {})
    final: dict[str, dict[str, Any]] = {}
    created: dict[str, list[dict[str, Any]]] = {}
    touched: set[str] = set()
    answer = None
    for step in episode.reference.steps:
        if isinstance(step, AnswerStep):
            answer = step.text
        if not isinstance(step, HttpStep) or not isinstance(step.body, dict):
            continue
        path = _TABLE.match(step.path)
        if path is None:
            continue
        table, sys_id = path.groups()
        if step.method.upper() == "POST":
            created.setdefault(table, []).append(step.body)
        elif table == "incident" and sys_id in initial:
            final.setdefault(sys_id, dict(initial[sys_id])).update(step.body)
            touched.add(sys_id)
    return final, touched, created, answer


def _changed(episode: Episode, sys_id: str, record: dict[str, Any]) -> bool:
    before = index_environment(episode.environment)["incident"][sys_id]
    notes = {"work_notes", "comments"}
    return any(
        str(scalar(record.get(k))) != str(scalar(before.get(k))) for k in set(record) - notes
    )
