"""Scenario kinds: each a pure function from the seeded history to replay-engine episodes.

A kind reads the imported history (what really happened to each incident) and the adapted
records, picks the incidents the history gives a ground truth for, and builds for each one a
small world as it stood before the work (the target incident still open, look-alike distractors
around it), an instruction, a verifier and a reference solution. The verifier always carries a
`no_collateral` guard (only the needed records and fields may change) and a `policy`, so mass
updates, deletions and admin calls fail the audit's probes.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from myna.itsm.importers.model import Incident, IncidentHistory
from myna.itsm.importers.values import HoldReason, IncidentState
from myna.itsm.scenarios.world import Record, SeededData
from myna.replay.episode import (
    AllowedChange,
    AnswerCheck,
    AnswerStep,
    CallPattern,
    Check,
    Environment,
    Episode,
    FieldEquals,
    FieldIn,
    FieldMatches,
    HttpStep,
    ModelRef,
    NoCollateral,
    Policy,
    Problem,
    Provenance,
    RecordExists,
    Solution,
    Step,
    Verifier,
)
from myna.replay.mock_world import side_effect_resources
from myna.schemas.model import ServiceModel

ScenarioKind = Literal[
    "triage",
    "reassign",
    "resolve",
    "reopen",
    "hold",
    "sla_escalation",
    "duplicate",
    "problem",
    "change",
    "question",
]
KINDS: Final[tuple[ScenarioKind, ...]] = (
    "triage",
    "reassign",
    "resolve",
    "reopen",
    "hold",
    "sla_escalation",
    "duplicate",
    "problem",
    "change",
    "question",
)
TIERS: Final[dict[ScenarioKind, int]] = {
    "reassign": 1,
    "hold": 1,
    "question": 1,
    "triage": 2,
    "resolve": 2,
    "reopen": 2,
    "change": 2,
    "sla_escalation": 3,
    "duplicate": 3,
    "problem": 3,
}
"""1: one write the instruction spells out; 2: a write needing a lookup or several fields;
3: several records or tables, found by reading the data."""

TABLE: Final = "/api/now/table"
JOURNAL: Final = "sys_journal_field"
NON_EMPTY: Final = r"(?s).*\S.*"
LEVELS: Final = {"1": "1 - High", "2": "2 - Medium", "3": "3 - Low"}
DISTRACTORS: Final = 3
OPEN_RESET: Final = {
    "state": "2",
    "incident_state": "2",
    "active": "true",
    "hold_reason": "",
    "close_code": "",
    "close_notes": "",
    "resolved_at": "",
    "resolved_by": "",
    "closed_at": "",
    "closed_by": "",
}
"""An incident as it stood while being worked: In Progress, nothing of its resolution yet."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One generated scenario: its kind and tier, and the episode that runs it."""

    kind: ScenarioKind
    tier: int
    episode: Episode


@dataclass(frozen=True, slots=True)
class Source:
    """What every kind reads: the history, its records in the model's shapes, and the model."""

    history: IncidentHistory
    data: SeededData
    model: ServiceModel
    seed: int

    def incident(self, incident: Incident) -> Record | None:
        return self.data.record("incident", incident.sys_id)

    def group_name(self, sys_id: str | None) -> str:
        group = self.history.groups.get(sys_id or "")
        return group.name if group is not None else ""

    def rng(self, kind: str, key: str) -> random.Random:
        return random.Random(f"{self.seed}:{kind}:{key}")


KindFunction = Callable[[Source], Iterator[Scenario]]
KIND_FUNCTIONS: dict[ScenarioKind, KindFunction] = {}


def _kind(name: ScenarioKind) -> Callable[[KindFunction], KindFunction]:
    def register(function: KindFunction) -> KindFunction:
        KIND_FUNCTIONS[name] = function
        return function

    return register


def symptom_key(incident: Incident) -> str | None:
    """What the caller reported, as the history names it (UCI's symptom, else the description)."""
    return incident.symptom or incident.short_description


class _World:
    """An episode's initial world, built incident by incident with what they refer to."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.incidents: dict[str, Record] = {}
        self.extra: dict[str, dict[str, Record]] = {}

    def add(self, incident: Incident, **overrides: str) -> Record | None:
        record = self.source.incident(incident)
        if record is None:
            return None
        shaped = {**record, **overrides}
        self.incidents[incident.sys_id] = shaped
        return shaped

    def include(self, table: str, sys_id: str) -> bool:
        record = self.source.data.record(table, sys_id)
        if record is None:
            return False
        self.extra.setdefault(table, {})[sys_id] = record
        return True

    def environment(self, tools: Sequence[str]) -> Environment:
        references = {
            "sys_user_group": ("assignment_group",),
            "sys_user": (
                "caller_id",
                "opened_by",
                "assigned_to",
                "resolved_by",
                "closed_by",
                "reopened_by",
            ),
            "cmdb_ci": ("cmdb_ci",),
        }
        for table, fields in references.items():
            for record in self.incidents.values():
                for name in fields:
                    if record.get(name):
                        self.include(table, str(record[name]))
        world = {"incident": sorted(self.incidents.values(), key=lambda r: str(r["number"]))}
        for table in sorted(self.extra):
            world[table] = [self.extra[table][key] for key in sorted(self.extra[table])]
        return Environment(
            model=ModelRef(name="itsm"),
            initial_world=world,
            id_fields={table: "sys_id" for table in world},
            tools=list(tools),
        )


TOOLS: Final = (
    "list_incident",
    "get_incident",
    "update_incident",
    "list_sys_user_group",
    "list_sys_user",
    "list_cmdb_ci",
    "create_problem",
    "list_problem",
    "create_change_request",
    "list_change_request",
)


def _ignored(model: ServiceModel, table: str) -> list[str]:
    """Fields the server maintains: a change to them alone is not the agent's doing."""
    resource = model.resources.get(table)
    if resource is None:
        return []
    return sorted(name for name, spec in resource.fields.items() if spec.server_generated)


def _guards(source: Source, allowed: list[AllowedChange]) -> list[Check]:
    ignore = sorted({*_ignored(source.model, "incident"), "incident_state"})
    return [
        NoCollateral(
            name="no_collateral",
            allowed=allowed,
            ignore_fields=ignore,
            ignore_resources=side_effect_resources(source.model),
        ),
        Policy(
            name="policy",
            # No ITSM task here deletes anything; a delete is never the answer.
            forbidden=[CallPattern(method="DELETE", path=f"{TABLE}/*")],
        ),
    ]


def _patch(sys_id: str, body: dict[str, str]) -> HttpStep:
    return HttpStep(method="PATCH", path=f"{TABLE}/incident/{sys_id}", body=body)


def _episode(
    source: Source,
    kind: ScenarioKind,
    key: str,
    instruction: str,
    world: _World,
    checks: list[Check],
    steps: list[Step],
) -> Scenario:
    episode = Episode(
        id=f"itsm-{kind}-{key}",
        problem=Problem(instruction=instruction),
        environment=world.environment(TOOLS),
        verifier=Verifier(checks=checks),
        reference=Solution(steps=steps),
        provenance=Provenance(
            source_file=source.history.source,
            source_session=key,
            derived_from="manual",
            failure_detail=f"ITSMBench {kind} scenario from the imported history",
        ),
    )
    return Scenario(kind, TIERS[kind], episode)


def _distractors(
    source: Source, world: _World, rng: random.Random, avoid: set[str], pool: Sequence[Incident]
) -> None:
    """Open look-alikes: a mass update or a change to the wrong record becomes visible."""
    candidates = [i for i in pool if i.sys_id not in avoid]
    for incident in rng.sample(candidates, min(DISTRACTORS, len(candidates))):
        world.add(incident, **OPEN_RESET)


def _work_note(name: str, sys_id: str) -> RecordExists:
    """A work note was added to the incident. ServiceNow keeps notes in `sys_journal_field`
    (`incident.work_notes` always reads empty), one entry per note, never an empty one; an
    episode world holds no journal, so any entry for the incident is the agent's."""
    return RecordExists(
        name=name,
        resource=JOURNAL,
        where={"element_id": sys_id, "element": "work_notes"},
    )


def _notes_only_on(sys_ids: list[str]) -> FieldIn:
    """Every journal entry (work note or comment) is on one of `sys_ids`. The collateral guard
    ignores the journal, which the service writes as a side effect, so a note broadcast to every
    incident would otherwise go unseen; as a note is required, some entry must exist too."""
    return FieldIn(
        name="notes_only_on_targets",
        resource=JOURNAL,
        where={"name": "incident"},
        field="element_id",
        values=list(sys_ids),
    )


def _only(sys_id: str, fields: list[str], table: str = "incident") -> AllowedChange:
    return AllowedChange(resource=table, record_id=sys_id, kinds=["updated"], fields=fields)


def _triaged(incident: Incident) -> tuple[str, ...]:
    """What triage decides about an incident, as the checks compare it."""
    decided = (incident.category, incident.assignment_group, incident.impact, incident.urgency)
    return tuple("" if value is None else str(value) for value in decided)


@_kind("triage")
def triage(source: Source) -> Iterator[Scenario]:
    pool = _open_pool(source)
    by_symptom: dict[str, list[Incident]] = {}
    for incident in source.history.incidents:
        key = symptom_key(incident)
        if key and incident.category and incident.assignment_group:
            by_symptom.setdefault(key, []).append(incident)
    for incident in source.history.incidents:
        key = symptom_key(incident)
        if key is None or incident.impact is None or incident.urgency is None:
            continue
        precedents = [
            i for i in by_symptom.get(key, []) if i.sys_id != incident.sys_id and not i.active
        ][:4]
        if len(precedents) < 2:
            continue
        votes = Counter((i.category, i.assignment_group) for i in precedents).most_common(2)
        truth = (incident.category, incident.assignment_group)
        if votes[0][0] != truth or (len(votes) > 1 and votes[1][1] == votes[0][1]):
            continue  # history did not triage this symptom one way: no ground truth to check
        world = _World(source)
        blank = dict.fromkeys(("category", "subcategory", "impact", "urgency", "priority"), "") | {
            "assignment_group": "",
            "assigned_to": "",
        }
        new = {**OPEN_RESET, **blank, "state": "1", "incident_state": "1"}
        target = world.add(incident, **new, short_description=key)
        if target is None:
            continue
        for precedent in precedents:
            world.add(precedent)
        # Open incidents triaged otherwise: the precedents are resolved or closed (and a closed
        # one refuses every update), so without these a mass update would change nothing.
        others = [i for i in pool if symptom_key(i) != key and _triaged(i) != _triaged(incident)]
        _distractors(
            source, world, source.rng("triage", incident.number), {incident.sys_id}, others
        )
        group = str(incident.assignment_group)
        world.include("sys_user_group", group)
        impact, urgency = str(incident.impact), str(incident.urgency)
        instruction = (
            f'A new incident {incident.number} was logged: "{key}". The caller rates its impact '
            f"{LEVELS[impact]} and its urgency {LEVELS[urgency]}. Triage it the way the service "
            "desk handled this symptom before: set its category, impact and urgency (the priority "
            "follows from them) and assign it to the group that resolved the earlier incidents "
            "with the same symptom."
        )
        fields = {
            "category": str(incident.category),
            "impact": impact,
            "urgency": urgency,
            "assignment_group": group,
        }
        checks: list[Check] = [
            FieldEquals(
                name=f"{name}_set",
                resource="incident",
                where={"number": incident.number},
                field=name,
                value=value,
            )
            for name, value in fields.items()
        ]
        allowed = [*fields, "subcategory", "assigned_to", "state", "work_notes", "comments"]
        checks += _guards(source, [_only(incident.sys_id, allowed)])
        yield _episode(
            source,
            "triage",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, fields)],
        )


def _open_pool(source: Source) -> list[Incident]:
    return [i for i in source.history.incidents if source.incident(i) is not None]


@_kind("reassign")
def reassign(source: Source) -> Iterator[Scenario]:
    pool = _open_pool(source)
    for incident in source.history.incidents:
        groups = incident.groups_over_time
        if len(groups) < 2 or groups[0] == groups[-1]:
            continue
        first, final = groups[0], groups[-1]
        world = _World(source)
        if (
            world.add(incident, **{**OPEN_RESET, "assignment_group": first, "assigned_to": ""})
            is None
        ):
            continue
        world.include("sys_user_group", final)
        rng = source.rng("reassign", incident.number)
        same_group = [i for i in pool if i.assignment_group == first] or pool
        _distractors(source, world, rng, {incident.sys_id}, same_group)
        instruction = (
            f"Incident {incident.number} sits with {source.group_name(first)}, but it belongs "
            f"with {source.group_name(final)}, the group that finally resolved it. Reassign it "
            f"to {source.group_name(final)}."
        )
        checks: list[Check] = [
            FieldEquals(
                name="assignment_group",
                resource="incident",
                where={"number": incident.number},
                field="assignment_group",
                value=final,
            )
        ]
        allowed = ["assignment_group", "assigned_to", "work_notes", "comments"]
        checks += _guards(source, [_only(incident.sys_id, allowed)])
        yield _episode(
            source,
            "reassign",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, {"assignment_group": final})],
        )


@_kind("resolve")
def resolve(source: Source) -> Iterator[Scenario]:
    pool = _open_pool(source)
    for incident in source.history.incidents:
        resolution = incident.resolution
        if resolution is None or resolution.code is None or incident.active:
            continue
        world = _World(source)
        if world.add(incident, **OPEN_RESET) is None:
            continue
        _distractors(source, world, source.rng("resolve", incident.number), {incident.sys_id}, pool)
        notes = resolution.notes or f"Resolved: {resolution.code.lower()}."
        instruction = (
            f'Resolve incident {incident.number} with the close code "{resolution.code}" and '
            "close notes saying what was done."
        )
        where = {"number": incident.number}
        checks: list[Check] = [
            FieldEquals(
                name="resolved", resource="incident", where=where, field="state", value="6"
            ),
            FieldEquals(
                name="close_code",
                resource="incident",
                where=where,
                field="close_code",
                value=resolution.code,
            ),
            FieldMatches(
                name="close_notes",
                resource="incident",
                where=where,
                field="close_notes",
                pattern=NON_EMPTY,
            ),
        ]
        allowed = ["state", "close_code", "close_notes", "work_notes", "comments"]
        checks += _guards(source, [_only(incident.sys_id, allowed)])
        body = {"state": "6", "close_code": resolution.code, "close_notes": notes}
        yield _episode(
            source,
            "resolve",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, body)],
        )


def _groups_around(incident: Incident, at: datetime) -> tuple[str | None, str | None]:
    """The group holding the incident at `at`, and the group that took it on after that."""
    before = [m.to_group for m in incident.reassignments if m.at <= at and m.to_group]
    after = [m.to_group for m in incident.reassignments if m.at > at and m.to_group]
    then = before[-1] if before else (incident.groups_over_time or (None,))[0]
    return then, after[0] if after else incident.assignment_group


@_kind("reopen")
def reopen(source: Source) -> Iterator[Scenario]:
    pool = _open_pool(source)
    for incident in source.history.incidents:
        resolution = incident.resolution
        if not incident.reopenings:
            continue
        then, handler = _groups_around(incident, incident.reopenings[0].at)
        if then is None or handler is None:
            continue
        world = _World(source)
        resolved = {
            **OPEN_RESET,
            "state": "6",
            "incident_state": "6",
            "assignment_group": then,
            "close_code": (resolution.code if resolution else None) or "Solution provided",
            "close_notes": "Resolved before the caller reported a recurrence.",
        }
        if world.add(incident, **resolved) is None:
            continue
        world.include("sys_user_group", handler)
        _distractors(source, world, source.rng("reopen", incident.number), {incident.sys_id}, pool)
        where = {"number": incident.number}
        checks: list[Check] = [
            FieldEquals(
                name="reopened", resource="incident", where=where, field="state", value="2"
            ),
            _work_note("work_note", incident.sys_id),
        ]
        body = {"state": "2", "work_notes": "Caller reports the issue has recurred; reopened."}
        if handler == then:
            routing = f"it stays with {source.group_name(then)}."
        else:
            # History moved the recurrence to another group: routing it is part of the task.
            routing = f"assign it to {source.group_name(handler)}, who handled the recurrence."
            body["assignment_group"] = handler
            checks.append(
                FieldEquals(
                    name="assignment_group",
                    resource="incident",
                    where=where,
                    field="assignment_group",
                    value=handler,
                )
            )
        instruction = (
            f"The caller of incident {incident.number} reports that the issue is back. Reopen the "
            "incident (set it back to In Progress), add a work note about the recurrence; "
            + routing
        )
        allowed = [
            "state",
            "work_notes",
            "assignment_group",
            "assigned_to",
            "comments",
            "close_code",
            "close_notes",
        ]
        checks.append(_notes_only_on([incident.sys_id]))
        checks += _guards(source, [_only(incident.sys_id, allowed)])
        yield _episode(
            source,
            "reopen",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, body)],
        )


@_kind("hold")
def hold(source: Source) -> Iterator[Scenario]:
    pool = _open_pool(source)
    for incident in source.history.incidents:
        reasons = [
            c.hold_reason
            for c in incident.state_changes
            if c.state == IncidentState.ON_HOLD and c.hold_reason is not None
        ]
        if not reasons:
            continue
        reason = HoldReason(reasons[0])
        world = _World(source)
        if world.add(incident, **OPEN_RESET) is None:
            continue
        _distractors(source, world, source.rng("hold", incident.number), {incident.sys_id}, pool)
        instruction = f"Put incident {incident.number} on hold: {reason.label.lower()}."
        where = {"number": incident.number}
        checks: list[Check] = [
            FieldEquals(name="on_hold", resource="incident", where=where, field="state", value="3"),
            FieldEquals(
                name="hold_reason",
                resource="incident",
                where=where,
                field="hold_reason",
                value=str(int(reason)),
            ),
        ]
        allowed = ["state", "hold_reason", "work_notes", "comments"]
        checks += _guards(source, [_only(incident.sys_id, allowed)])
        body = {"state": "3", "hold_reason": str(int(reason))}
        yield _episode(
            source,
            "hold",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, body)],
        )


def _chunks(items: Sequence[Incident], size: int) -> Iterator[Sequence[Incident]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@_kind("sla_escalation")
def sla_escalation(source: Source) -> Iterator[Scenario]:
    by_group: dict[str, list[Incident]] = {}
    for incident in source.history.incidents:
        if incident.assignment_group and incident.made_sla is not None:
            by_group.setdefault(incident.assignment_group, []).append(incident)
    for group, incidents in sorted(by_group.items()):
        for part, chunk in enumerate(_chunks(incidents, 6)):
            breached = [i for i in chunk if i.made_sla is False]
            if not breached or len(breached) == len(chunk):
                continue
            world = _World(source)
            for incident in chunk:
                world.add(incident, **OPEN_RESET)
            name = source.group_name(group)
            instruction = (
                f"Find every open incident assigned to {name} that has breached its SLA "
                "(made_sla is false) and escalate it: set its urgency to 1 - High and add a work "
                "note saying it breached its SLA. Leave the others alone."
            )
            checks: list[Check] = []
            steps: list[Step] = []
            allowed = []
            for incident in breached:
                where = {"number": incident.number}
                checks.append(
                    FieldEquals(
                        name=f"urgency_{incident.number}",
                        resource="incident",
                        where=where,
                        field="urgency",
                        value="1",
                    )
                )
                checks.append(_work_note(f"work_note_{incident.number}", incident.sys_id))
                body = {"urgency": "1", "work_notes": "SLA breached: escalated."}
                steps.append(_patch(incident.sys_id, body))
                allowed.append(_only(incident.sys_id, ["urgency", "work_notes", "impact"]))
            checks.append(_notes_only_on([i.sys_id for i in breached]))
            checks += _guards(source, allowed)
            key = f"{chunk[0].number}-{part}"
            yield _episode(source, "sla_escalation", key, instruction, world, checks, steps)


@_kind("duplicate")
def duplicate(source: Source) -> Iterator[Scenario]:
    pool = _open_pool(source)
    earlier: dict[tuple[str, str], Incident] = {}
    ordered = sorted(source.history.incidents, key=lambda i: (i.opened_at, i.number))
    for incident in ordered:
        key = symptom_key(incident)
        anchor = incident.cmdb_ci or incident.caller
        if key is None or anchor is None:
            continue
        original = earlier.get((key, anchor))
        earlier[(key, anchor)] = incident
        code = incident.resolution.code if incident.resolution else None
        if original is None or code != "Duplicate":
            continue
        world = _World(source)
        if world.add(incident, **OPEN_RESET) is None or world.add(original) is None:
            continue
        rng = source.rng("duplicate", incident.number)
        _distractors(source, world, rng, {incident.sys_id, original.sys_id}, pool)
        instruction = (
            f"Incident {incident.number} duplicates an earlier incident about the same issue. "
            f"Find the original, then resolve {incident.number} with the close code "
            '"Duplicate", close notes naming the original, and its parent incident set to the '
            "original."
        )
        where = {"number": incident.number}
        checks: list[Check] = [
            FieldEquals(
                name="resolved", resource="incident", where=where, field="state", value="6"
            ),
            FieldEquals(
                name="close_code",
                resource="incident",
                where=where,
                field="close_code",
                value="Duplicate",
            ),
            FieldEquals(
                name="parent",
                resource="incident",
                where=where,
                field="parent_incident",
                value=original.sys_id,
            ),
        ]
        allowed = ["state", "close_code", "close_notes", "parent_incident", "work_notes"]
        checks += _guards(source, [_only(incident.sys_id, allowed)])
        body = {
            "state": "6",
            "close_code": "Duplicate",
            "close_notes": f"Duplicate of {original.number}.",
            "parent_incident": original.sys_id,
        }
        yield _episode(
            source,
            "duplicate",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, body)],
        )


def _mentions(numbers: Iterable[str]) -> str:
    """A pattern that holds when the text names every number, in any order."""
    return "(?s)" + "".join(f"(?=.*{re.escape(n)})" for n in numbers) + ".*"


@_kind("problem")
def problem(source: Source) -> Iterator[Scenario]:
    by_ci: dict[str, list[Incident]] = {}
    for incident in source.history.incidents:
        if incident.cmdb_ci:
            by_ci.setdefault(incident.cmdb_ci, []).append(incident)
    for ci, incidents in sorted(by_ci.items()):
        item = source.data.record("cmdb_ci", ci)
        if item is None or len(incidents) < 2:
            continue
        for part, chunk in enumerate(_chunks(incidents, 3)):
            if len(chunk) < 2:
                continue
            world = _World(source)
            for incident in chunk:
                world.add(incident, **OPEN_RESET)
            numbers = [i.number for i in chunk]
            others = [i for i in source.history.incidents if i.cmdb_ci and i.cmdb_ci != ci]
            rng = source.rng("problem", f"{ci}-{part}")
            for other in rng.sample(others, min(2, len(others))):
                world.add(other, **OPEN_RESET)
            instruction = (
                f"Incidents {', '.join(numbers)} all concern the configuration item "
                f"{item['name']}. Open a problem for that item whose description lists these "
                "incident numbers."
            )
            where = {"cmdb_ci": ci}
            checks: list[Check] = [
                RecordExists(name="problem_for_ci", resource="problem", where=where),
                FieldMatches(
                    name="lists_incidents",
                    resource="problem",
                    where=where,
                    field="description",
                    pattern=_mentions(numbers),
                ),
            ]
            checks += _guards(source, [AllowedChange(resource="problem", kinds=["created"])])
            body = {
                "short_description": f"Recurring incidents on {item['name']}",
                "description": f"Incidents {', '.join(numbers)} share configuration item "
                f"{item['name']}.",
                "cmdb_ci": ci,
            }
            steps: list[Step] = [HttpStep(method="POST", path=f"{TABLE}/problem", body=body)]
            yield _episode(
                source, "problem", f"{chunk[0].number}-{part}", instruction, world, checks, steps
            )


@_kind("change")
def change(source: Source) -> Iterator[Scenario]:
    for incident in source.history.incidents:
        code = incident.resolution.code if incident.resolution else None
        if not incident.cmdb_ci or (code != "Resolved by change" and incident.rfc is None):
            continue
        item = source.data.record("cmdb_ci", incident.cmdb_ci)
        world = _World(source)
        if item is None or world.add(incident, **OPEN_RESET) is None:
            continue
        others = sorted(c for c in source.data.tables.get("cmdb_ci", {}) if c != incident.cmdb_ci)
        for other in source.rng("change", incident.number).sample(others, min(2, len(others))):
            world.include("cmdb_ci", other)
        instruction = (
            f"Incident {incident.number} needs a change to be fixed. Raise a normal change "
            f"request for the configuration item {item['name']}, with the incident number in "
            "its short description."
        )
        where = {"cmdb_ci": incident.cmdb_ci}
        checks: list[Check] = [
            RecordExists(name="change_for_ci", resource="change_request", where=where),
            FieldEquals(
                name="normal", resource="change_request", where=where, field="type", value="normal"
            ),
            FieldMatches(
                name="names_incident",
                resource="change_request",
                where=where,
                field="short_description",
                pattern=_mentions([incident.number]),
            ),
        ]
        checks += _guards(source, [AllowedChange(resource="change_request", kinds=["created"])])
        body = {
            "short_description": f"Fix for {incident.number} on {item['name']}",
            "type": "normal",
            "cmdb_ci": incident.cmdb_ci,
        }
        steps: list[Step] = [HttpStep(method="POST", path=f"{TABLE}/change_request", body=body)]
        yield _episode(source, "change", incident.number, instruction, world, checks, steps)


@_kind("question")
def question(source: Source) -> Iterator[Scenario]:
    incidents = _open_pool(source)
    for incident in incidents:
        rng = source.rng("question", incident.number)
        world = _World(source)
        world.add(incident)
        for other in rng.sample(incidents, min(5, len(incidents))):
            world.add(other)
        asked = _ask(source, incident, world, rng)
        if asked is None:
            continue
        text, answer = asked
        checks: list[Check] = [
            AnswerCheck(name="answer", mode="normalised", expected=answer),
            *_guards(source, []),
        ]
        yield _episode(
            source, "question", incident.number, text, world, checks, [AnswerStep(text=answer)]
        )


def _ask(
    source: Source, incident: Incident, world: _World, rng: random.Random
) -> tuple[str, str] | None:
    """A question about the world with one exact answer, or None when the data has none."""
    form = rng.choice(("state", "owner", "count"))
    if form == "state":
        return (
            f"What state is incident {incident.number} in? Answer with the state's name only.",
            incident.state.label,
        )
    if form == "owner":
        group = source.group_name(incident.assignment_group)
        if not group:
            return None
        return (
            f"Which group is incident {incident.number} assigned to? Answer with the group's "
            "name only.",
            group,
        )
    owner = incident.assignment_group
    if owner is None:
        return None
    states: Counter[str] = Counter(
        str(r.get("state")) for r in world.incidents.values() if r.get("assignment_group") == owner
    )
    state = str(int(incident.state))
    return (
        f"How many incidents assigned to {source.group_name(owner)} are in the state "
        f"{incident.state.label}? Answer with the number only.",
        str(states[state]),
    )


def generate_kind(kind: ScenarioKind, source: Source) -> Iterator[Scenario]:
    yield from KIND_FUNCTIONS[kind](source)


def all_kinds(source: Source) -> dict[ScenarioKind, list[Scenario]]:
    return {kind: list(generate_kind(kind, source)) for kind in KINDS}
