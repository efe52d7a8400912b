"""Scenario kinds: each a pure function from the seeded history to replay-engine episodes.

A kind reads the imported history (what really happened to each incident) and the adapted
records, picks the incidents the history gives a ground truth for, and builds for each one a
small world as it stood before the work (the target incident still open, look-alike distractors
around it), an instruction, a verifier and a reference solution. The verifier always carries a
`no_collateral` guard (only the needed records and fields may change) and a `policy`, so mass
updates, deletions and admin calls fail the audit's probes.

Tiers 2 and 3 turn on free text (`prose`): a resolve scenario's close code is in the incident's
latest work note, a duplicate's original in the repeat report's note, which breached incidents
wait on their caller in the desk's notes, a recurring fault's cause in the one knowledge article
whose symptom matches what the callers report. Each fact is written in one of several wordings,
some a pattern finds and some only reading does; the ground truth stays the history's.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final, Literal

from myna.itsm.importers.consistency import REFERENCES as INCIDENT_LINKS
from myna.itsm.importers.model import Incident, IncidentHistory
from myna.itsm.importers.values import HoldReason, IncidentState
from myna.itsm.scenarios import prose
from myna.itsm.scenarios.balance import balanced
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
    Harmless,
    HttpStep,
    ModelRef,
    NoCollateral,
    Policy,
    Problem,
    Provenance,
    RecordExists,
    SideEffect,
    Solution,
    Step,
    TextCheck,
    Verifier,
)
from myna.replay.mock_world import note_fields, side_effect_resources, side_effects
from myna.replay.shared import SharedWorld
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
"""1: one write (or answer) the instruction spells out or one lookup finds; 2: a write needing a
lookup or several fields, an answer comparing or counting records; 3: several records or
tables, found by reading the data."""
FORM_TIERS: Final[dict[str, int]] = {"first_opened": 2, "count": 2}
"""Questions that compare or count several records sit a tier above those one lookup answers."""

TABLE: Final = "/api/now/table"
JOURNAL: Final = "sys_journal_field"
LEVELS: Final = {"1": "1 - High", "2": "2 - Medium", "3": "3 - Low"}
DISTRACTORS: Final = 3
BACKGROUND: Final = 600
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
class Decision:
    """What an agent must work out rather than read from the instruction, and the form of
    question it answers: the values a blind guess would have to hit (see `balance`)."""

    form: str
    value: str


@dataclass(frozen=True, slots=True)
class Scenario:
    """One generated scenario: its kind and tier, the episode that runs it, and the decision
    it turns on when that could be guessed."""

    kind: ScenarioKind
    tier: int
    episode: Episode
    decision: Decision | None = None


def tier_of(kind: ScenarioKind, decision: Decision | None) -> int:
    """A scenario's tier: its kind's, or its form of question's."""
    form = decision.form if decision is not None else ""
    return FORM_TIERS.get(form, TIERS[kind]) if kind == "question" else TIERS[kind]


@dataclass(frozen=True, slots=True)
class Source:
    """What every kind reads: the history, its records in the model's shapes, and the model."""

    history: IncidentHistory
    data: SeededData
    model: ServiceModel
    seed: int
    background: tuple[Incident, ...] = ()
    """Closed incidents every world holds as they ended (`with_background`)."""
    shared: SharedWorld | None = None
    """The background with every user, group and item of the history: what all worlds share."""

    def with_background(self) -> Source:
        """The source with its background: up to `BACKGROUND` of the incidents that ended
        closed (a seeded sample), with the people, groups and items, as one shared world."""
        closed = [
            i
            for i in self.history.incidents
            if str((self.incident(i) or {}).get("state")) == str(int(IncidentState.CLOSED))
        ]
        picked = self.rng("background", "all").sample(closed, min(BACKGROUND, len(closed)))
        chosen = tuple(sorted(picked, key=lambda i: i.number))
        tables: dict[str, dict[str, Record]] = {
            "incident": {i.sys_id: r for i in chosen if (r := self.incident(i)) is not None}
        }
        for table in SHARED_TABLES:
            records = self.data.tables.get(table, {})
            tables[table] = {key: records[key] for key in sorted(records)}
        return replace(self, background=chosen, shared=SharedWorld(tables))

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
    """An episode's initial world: the source's shared world (its background of closed
    incidents as they ended, with every user, group and item) and the records the scenario
    adds or changes over it, incident by incident with what they refer to.

    A closed incident refuses every update, so none of the background is work to do: a world
    of realistic size, where the records a task is about must be searched for, and whose
    closed look-alikes test an instruction's "open" clause."""

    def __init__(self, source: Source, kind: str, key: str) -> None:
        self.source = source
        self.shared = source.shared or SharedWorld({})
        self.incidents: dict[str, Record] = dict(self.shared.tables.get("incident", {}))
        self.extra: dict[str, dict[str, Record]] = {}
        self._own: dict[str, Record] = {}

    def add(self, incident: Incident, **overrides: str) -> Record | None:
        record = self.source.incident(incident)
        if record is None:
            return None
        # Records no scenario changes are shared between worlds, not copied into each.
        shaped = {**record, **overrides} if overrides else record
        self.incidents[incident.sys_id] = self._own[incident.sys_id] = shaped
        return shaped

    def put(self, table: str, record: Record) -> None:
        """A record the scenario writes into the world (a work note, a knowledge article)."""
        self.extra.setdefault(table, {})[str(record["sys_id"])] = record

    def include(self, table: str, sys_id: str) -> bool:
        if sys_id in self.shared.tables.get(table, {}):
            return True
        record = self.source.data.record(table, sys_id)
        if record is None:
            return False
        self.extra.setdefault(table, {})[sys_id] = record
        return True

    def environment(self, tools: Sequence[str]) -> Environment:
        for table, fields in REFERENCES.items():
            named = {str(r[name]) for r in self._own.values() for name in fields if r.get(name)}
            for sys_id in sorted(named - set(self.extra.get(table, {}))):
                self.include(table, sys_id)
        by_number = sorted(self._own.items(), key=lambda item: str(item[1]["number"]))
        own = {"incident": dict(by_number)}
        own.update((table, dict(sorted(self.extra[table].items()))) for table in sorted(self.extra))
        tables = {*self.shared.tables, *own}
        # Built from records of the right shapes only; validating every record of every world
        # again cost more than generating it (the audit judges each world against the model).
        return Environment.layered(
            ModelRef(name="itsm"),
            self.shared,
            own,
            {table: "sys_id" for table in sorted(tables)},
            list(tools),
        )


SHARED_TABLES: Final = ("sys_user_group", "sys_user", "cmdb_ci")
"""The tables every world holds whole, beside its incidents."""
REFERENCES: Final = {
    table: tuple(
        name
        for (owner, name), target in INCIDENT_LINKS.items()
        if (owner, target) == ("incident", table)
    )
    for table in SHARED_TABLES
}
"""The incident fields referring to each of those tables."""

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
    "list_sys_journal_field",
    "list_kb_knowledge",
)


def _ignored(model: ServiceModel, table: str) -> list[str]:
    """Fields the server maintains: a change to them alone is not the agent's doing."""
    resource = model.resources.get(table)
    if resource is None:
        return []
    return sorted(name for name, spec in resource.fields.items() if spec.server_generated)


@dataclass(frozen=True, slots=True)
class _Service:
    """What every guard reads of the model, found once per model (finding it builds the
    model's extensions)."""

    model: ServiceModel
    ignore: list[str]
    notes: list[str]
    effects: list[SideEffect]
    effect_resources: list[str]


_SERVICES: dict[int, _Service] = {}


def _service(model: ServiceModel) -> _Service:
    found = _SERVICES.get(id(model))
    if found is None or found.model is not model:
        ignore = sorted({*_ignored(model, "incident"), "incident_state"})
        found = _Service(
            model, ignore, note_fields(model), side_effects(model), side_effect_resources(model)
        )
        _SERVICES[id(model)] = found
    return found


def _guards(source: Source, allowed: list[AllowedChange], about: Sequence[str] = ()) -> list[Check]:
    """The collateral guard and the policy. A note on an incident the task is `about` is
    harmless; a journal entry anywhere else is charged to the incident it names."""
    service = _service(source.model)
    notes = service.notes
    return [
        NoCollateral(
            name="no_collateral",
            allowed=allowed,
            harmless=[Harmless(resource="incident", record_id=i, fields=notes) for i in about],
            ignore_fields=service.ignore,
            side_effects=service.effects,
            ignore_resources=service.effect_resources,
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
    decision: Decision | None = None,
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
    return Scenario(kind, tier_of(kind, decision), episode, decision)


def _distractors(
    source: Source, world: _World, rng: random.Random, avoid: set[str], pool: Sequence[Incident]
) -> None:
    """Open look-alikes: a mass update or a change to the wrong record becomes visible."""
    candidates = [i for i in pool if i.sys_id not in avoid]
    for incident in rng.sample(candidates, min(DISTRACTORS, len(candidates))):
        world.add(incident, **OPEN_RESET)


def _work_note(name: str, sys_id: str, mentions: list[list[str]], instruction: str) -> TextCheck:
    """A work note of substance on the incident. ServiceNow keeps notes in `sys_journal_field`
    (`incident.work_notes` always reads empty), one entry per note; an episode world holds no
    journal, so every entry for the incident is the agent's, and one of them must do."""
    return TextCheck(
        name=name,
        resource=JOURNAL,
        where={"element_id": sys_id, "element": "work_notes"},
        field="value",
        quantifier="any",
        mentions=mentions,
        not_copy_of=instruction,
    )


def _close_notes(number: str, mentions: list[list[str]], said: str) -> TextCheck:
    """Close notes that name what they must and say something of their own."""
    return TextCheck(
        name="close_notes",
        resource="incident",
        where={"number": number},
        field="close_notes",
        mentions=mentions,
        not_copy_of=said,
    )


RECURRENCE: Final = ["recur", "recurrence", "return", "back", "reappear", "reopen"]
"""A note on a reopened incident names the recurrence, in one of these words."""
BREACH: Final = [["sla"], ["breach", "overdue", "missed"]]


def _subject(source: Source, incident: Incident) -> str:
    """What the incident is about, as a note would name it."""
    item = source.data.record("cmdb_ci", incident.cmdb_ci or "")
    return symptom_key(incident) or (str(item["name"]) if item else "the reported fault")


def _resolution_note(code: str, subject: str) -> str:
    """The close notes a competent agent writes when the history kept none."""
    return (
        f"Investigated {subject}; closed as {code.lower()} after confirming with the caller "
        "that service is restored."
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
        world = _World(source, "triage", incident.number)
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
        allowed = [*fields, "subcategory", "assigned_to", "state"]
        checks += _guards(source, [_only(incident.sys_id, allowed)], [incident.sys_id])
        yield _episode(
            source,
            "triage",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, fields)],
            Decision("triage", f"{fields['category']}|{group}"),
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
        world = _World(source, "reassign", incident.number)
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
        allowed = ["assignment_group", "assigned_to"]
        checks += _guards(source, [_only(incident.sys_id, allowed)], [incident.sys_id])
        yield _episode(
            source,
            "reassign",
            incident.number,
            instruction,
            world,
            checks,
            [_patch(incident.sys_id, {"assignment_group": final})],
        )


def _codes(source: Source) -> dict[str, int]:
    """The close codes a resolve scenario may turn on, each with how many scenarios it may
    have: the codes the history uses often enough that every one of them gets the same number
    (the most scenarios in all), so a code guessed without reading the note is right by
    chance over the codes listed, no more."""
    found = Counter(
        i.resolution.code
        for i in source.history.incidents
        if i.resolution is not None and i.resolution.code and not i.active
    )
    # At least six codes to choose from (or all the history has): a short list is a guess.
    least = min(6, len(found))
    best = max(
        (
            c
            for c in range(1, max(found.values(), default=1) + 1)
            if sum(n >= c for n in found.values()) >= least
        ),
        key=lambda c: (c * sum(n >= c for n in found.values()), c),
        default=1,
    )
    return {code: best for code, n in sorted(found.items()) if n >= best}


def _desk_name(source: Source, sys_id: str | None) -> str:
    user = source.history.users.get(sys_id or "")
    return user.user_name if user is not None and user.user_name else "service.desk"


@_kind("resolve")
def resolve(source: Source) -> Iterator[Scenario]:
    """The close code is stated only in the incident's latest work note, in words or quoted."""
    pool = _open_pool(source)
    room = _codes(source)
    codes = sorted(room, key=lambda c: (len(c), c))
    for incident in source.history.incidents:
        resolution = incident.resolution
        if resolution is None or room.get(resolution.code or "", 0) <= 0 or incident.active:
            continue
        world = _World(source, "resolve", incident.number)
        if resolution.code is None or world.add(incident, **OPEN_RESET) is None:
            continue
        room[resolution.code] -= 1
        rng = source.rng("resolve", incident.number)
        _distractors(source, world, rng, {incident.sys_id}, pool)
        said = prose.close_code_note(resolution.code, rng)
        at = resolution.resolved_at or incident.opened_at
        by = _desk_name(source, resolution.resolved_by or incident.assigned_to)
        world.put(
            JOURNAL, prose.journal(f"resolve:{incident.number}", incident.sys_id, said, at, by)
        )
        notes = resolution.notes or _resolution_note(resolution.code, _subject(source, incident))
        instruction = (
            f"Resolve incident {incident.number}. Its latest work note says how it was "
            "settled: set the close code that matches it (one of "
            f"{', '.join(codes)}) and write close notes saying what was done."
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
            _close_notes(incident.number, [], instruction),
        ]
        allowed = ["state", "close_code", "close_notes"]
        checks += _guards(source, [_only(incident.sys_id, allowed)], [incident.sys_id])
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
    """The group holding the incident just before `at`, and the group that took it on from
    then (a move at `at` itself, made with the reopening, is the recurrence's)."""
    before = [m.to_group for m in incident.reassignments if m.at < at and m.to_group]
    after = [m.to_group for m in incident.reassignments if m.at >= at and m.to_group]
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
        world = _World(source, "reopen", incident.number)
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
        ]
        body = {
            "state": "2",
            "work_notes": "The caller reports the issue has recurred since the resolution; "
            "reopened for a fresh investigation.",
        }
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
        checks.append(_work_note("work_note", incident.sys_id, [RECURRENCE], instruction))
        allowed = [
            "state",
            "work_notes",
            "assignment_group",
            "assigned_to",
            "comments",
            "close_code",
            "close_notes",
        ]
        checks += _guards(source, [_only(incident.sys_id, allowed)], [incident.sys_id])
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
        world = _World(source, "hold", incident.number)
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
        allowed = ["state", "hold_reason"]
        checks += _guards(source, [_only(incident.sys_id, allowed)], [incident.sys_id])
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
    all_breached = [i for i in _open_pool(source) if i.made_sla is False]
    for group, incidents in sorted(by_group.items()):
        for part, chunk in enumerate(_chunks(incidents, 6)):
            breached = [i for i in chunk if i.made_sla is False]
            if not breached or len(breached) == len(chunk):
                continue
            key = f"{chunk[0].number}-{part}"
            escalate = [i for i in breached if not awaits_caller(i)]
            if not escalate:
                continue
            world = _World(source, "sla_escalation", key)
            # Other groups' open breached incidents: the group clause must do its work.
            elsewhere = [i for i in all_breached if i.assignment_group != group]
            rng = source.rng("sla_escalation", key)
            for incident in rng.sample(elsewhere, min(DISTRACTORS, len(elsewhere))):
                world.add(incident, **OPEN_RESET)
            for incident in chunk:
                # A breached incident stood below High urgency before its escalation.
                held = "2" if incident.made_sla is False and incident.urgency == 1 else None
                world.add(incident, **OPEN_RESET, **({"urgency": held} if held else {}))
                _desk_note(source, world, incident, rng)
            name = source.group_name(group)
            instruction = (
                f"Find every open incident assigned to {name} that has breached its SLA "
                "(made_sla is false) and escalate it: set its urgency to 1 - High and add a work "
                "note saying it breached its SLA. Skip those whose work notes show we are "
                "waiting on the caller. Leave the others alone."
            )
            checks: list[Check] = []
            steps: list[Step] = []
            allowed = []
            for incident in escalate:
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
                checks.append(
                    _work_note(f"work_note_{incident.number}", incident.sys_id, BREACH, instruction)
                )
                body = {
                    "urgency": "1",
                    "work_notes": "SLA breached: urgency raised to High so the group takes "
                    "this incident first.",
                }
                steps.append(_patch(incident.sys_id, body))
                allowed.append(_only(incident.sys_id, ["urgency", "work_notes", "impact"]))
            checks += _guards(source, allowed, [i.sys_id for i in escalate])
            yield _episode(source, "sla_escalation", key, instruction, world, checks, steps)


def awaits_caller(incident: Incident) -> bool:
    """Whether the desk ever put the incident on hold waiting for its caller."""
    return any(
        c.state == IncidentState.ON_HOLD and c.hold_reason == HoldReason.AWAITING_CALLER
        for c in incident.state_changes
    )


def _desk_note(source: Source, world: _World, incident: Incident, rng: random.Random) -> None:
    """The note the desk left on a group's incident: waiting on its caller, in one of several
    wordings, or any other news (some in the same words)."""
    notes = prose.AWAITING_CALLER if awaits_caller(incident) else prose.OTHER_NOTES
    at = incident.updated_at or incident.opened_at
    by = _desk_name(source, incident.assigned_to)
    entry = prose.journal(f"desk:{incident.number}", incident.sys_id, rng.choice(notes), at, by)
    world.put(JOURNAL, entry)


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
        world = _World(source, "duplicate", incident.number)
        # The repeat report names neither the item nor the symptom: only its work note says
        # which incident it repeats.
        blank = {"cmdb_ci": "", "short_description": "Caller reports a problem again"}
        if world.add(incident, **OPEN_RESET, **blank) is None or world.add(original) is None:
            continue
        rng = source.rng("duplicate", incident.number)
        _distractors(source, world, rng, {incident.sys_id, original.sys_id}, pool)
        _same_caller(source, world, rng, original)
        note = _repeat_note(source, world, original, rng)
        by = _desk_name(source, incident.opened_by)
        entry = prose.journal(
            f"duplicate:{incident.number}", incident.sys_id, note, incident.opened_at, by
        )
        world.put(JOURNAL, entry)
        instruction = (
            f"Incident {incident.number} repeats an issue that was already reported; a work "
            "note on it says which incident it repeats. Resolve "
            f"{incident.number} as a duplicate of that incident: close code "
            '"Duplicate", close notes naming the original\'s number, and its parent incident set '
            "to the original."
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
        checks.append(_close_notes(incident.number, [[original.number]], instruction))
        allowed = ["state", "close_code", "close_notes", "parent_incident"]
        checks += _guards(source, [_only(incident.sys_id, allowed)], [incident.sys_id])
        body = {
            "state": "6",
            "close_code": "Duplicate",
            "close_notes": f"Duplicate of {original.number}, the same issue reported earlier; "
            "follow-up continues on the original.",
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


def _same_caller(source: Source, world: _World, rng: random.Random, original: Incident) -> None:
    """Other incidents of the original's caller: "the caller's latest incident" is no answer."""
    theirs = [
        i
        for i in source.history.incidents
        if i.caller == original.caller and i.sys_id not in world.incidents
    ]
    for other in rng.sample(theirs, min(2, len(theirs))):
        world.add(other)


def _repeat_note(source: Source, world: _World, original: Incident, rng: random.Random) -> str:
    """The note naming the original: by number, or by its caller and the minute it was opened
    when no other incident in the world shares both."""
    user = source.history.users.get(original.caller or "")
    twins = [
        r
        for r in world.incidents.values()
        if r.get("caller_id") == original.caller
        and str(r.get("opened_at"))[:16] == f"{original.opened_at:%Y-%m-%d %H:%M}"
    ]
    caller = user.name if user is not None and len(twins) == 1 else None
    return prose.earlier_report(original.number, caller, original.opened_at, rng)


def _one_created(table: str, where: dict[str, str]) -> AllowedChange:
    """One record of `table` may be created, and only the one `where` selects."""
    return AllowedChange(resource=table, kinds=["created"], where=where, max_count=1)


def _default(source: Source, table: str, name: str) -> object:
    spec = source.model.resources[table].fields.get(name)
    return spec.default if spec is not None and spec.has_default else None


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
            world = _World(source, "problem", f"{ci}-{part}")
            name = str(item["name"])
            kb = _articles(source, world, ci, name, chunk[0])
            rng = source.rng("problem", f"{ci}-{part}")
            # The callers say what they saw, never what caused it: matching their words to the
            # right one of the item's articles is the reading this kind asks for.
            for incident in chunk:
                report = rng.choice(kb.cause.reports).format(item=name)
                world.add(incident, **OPEN_RESET, description=report)
            numbers = [i.number for i in chunk]
            others = [i for i in source.history.incidents if i.cmdb_ci and i.cmdb_ci != ci]
            for other in rng.sample(others, min(2, len(others))):
                world.add(other, **OPEN_RESET)
            instruction = (
                f"Incidents {', '.join(numbers)} all concern the configuration item {name}. "
                "Open a problem for that item whose description lists these incident numbers "
                "and states, in your own words, the cause given by the current knowledge "
                "article that matches what these callers report (and no other cause)."
            )
            where = {"cmdb_ci": ci}
            checks: list[Check] = [
                RecordExists(name="problem_for_ci", resource="problem", where=where),
                TextCheck(
                    name="lists_incidents",
                    resource="problem",
                    where=where,
                    field="description",
                    mentions=[[number] for number in numbers],
                    not_copy_of=instruction,
                ),
                TextCheck(
                    name="names_cause",
                    resource="problem",
                    where=where,
                    field="description",
                    mentions=[list(kb.cause.words)],
                    not_copy_of=kb.text,
                    excludes=[list(c.words) for c in kb.ruled_out],
                ),
            ]
            checks += _guards(source, [_one_created("problem", where)])
            body = {
                "short_description": f"Recurring incidents on {item['name']}",
                "description": f"Incidents {', '.join(numbers)} all hit configuration item "
                f"{name}; the knowledge base traces them to the {kb.cause.words[0]}. "
                "Investigating a permanent fix.",
                "cmdb_ci": ci,
            }
            steps: list[Step] = [HttpStep(method="POST", path=f"{TABLE}/problem", body=body)]
            yield _episode(
                source, "problem", f"{chunk[0].number}-{part}", instruction, world, checks, steps
            )


@dataclass(frozen=True, slots=True)
class _Knowledge:
    """What a problem scenario's articles say: the cause of the incidents' fault (with the text
    of its article) and the causes the other articles on the item give."""

    cause: prose.Cause
    text: str
    ruled_out: tuple[prose.Cause, ...]


def _articles(source: Source, world: _World, ci: str, name: str, first: Incident) -> _Knowledge:
    """The knowledge articles a problem scenario reads: two current ones on the item (the
    incidents' fault and another), a retired one on the item with a third cause, and a current
    one on another item."""
    rng = source.rng("problem:kb", ci)
    cause, rival, retired, elsewhere = rng.sample(prose.CAUSES, 4)
    at = first.opened_at
    current = prose.article(f"{ci}:current", name, cause, rng, at)
    world.put("kb_knowledge", current)
    world.put("kb_knowledge", prose.article(f"{ci}:rival", name, rival, rng, at))
    world.put("kb_knowledge", prose.article(f"{ci}:retired", name, retired, rng, at, current=False))
    others = sorted(c for c in source.data.tables.get("cmdb_ci", {}) if c != ci)
    if others:
        other = str(source.data.tables["cmdb_ci"][rng.choice(others)]["name"])
        world.put("kb_knowledge", prose.article(f"{ci}:other", other, elsewhere, rng, at))
    return _Knowledge(cause, current["text"], (rival, retired))


@_kind("change")
def change(source: Source) -> Iterator[Scenario]:
    for incident in source.history.incidents:
        code = incident.resolution.code if incident.resolution else None
        if not incident.cmdb_ci or (code != "Resolved by change" and incident.rfc is None):
            continue
        item = source.data.record("cmdb_ci", incident.cmdb_ci)
        world = _World(source, "change", incident.number)
        if item is None or world.add(incident, **OPEN_RESET) is None:
            continue
        others = sorted(c for c in source.data.tables.get("cmdb_ci", {}) if c != incident.cmdb_ci)
        for other in source.rng("change", incident.number).sample(others, min(2, len(others))):
            world.include("cmdb_ci", other)
        instruction = (
            f"Incident {incident.number} needs a change to be fixed. Raise a change request for "
            f"the configuration item {item['name']}, with the incident number in its short "
            "description: an emergency change if the incident's priority is 1 - Critical or "
            "2 - High, a normal change otherwise."
        )
        where = {"cmdb_ci": incident.cmdb_ci}
        kind = "emergency" if incident.priority in (1, 2) else "normal"
        checks: list[Check] = [
            RecordExists(name="change_for_ci", resource="change_request", where=where),
            FieldEquals(
                name="change_type",
                resource="change_request",
                where=where,
                field="type",
                value=kind,
                # The mock creates normal changes unasked: then the check only forbids.
                role="guard" if _default(source, "change_request", "type") == kind else None,
            ),
            TextCheck(
                name="names_incident",
                resource="change_request",
                where=where,
                field="short_description",
                mentions=[[incident.number]],
                min_words=2,
                not_copy_of=instruction,
            ),
        ]
        checks += _guards(source, [_one_created("change_request", where)])
        body = {
            "short_description": f"Fix for {incident.number} on {item['name']}",
            "type": kind,
            "cmdb_ci": incident.cmdb_ci,
        }
        steps: list[Step] = [HttpStep(method="POST", path=f"{TABLE}/change_request", body=body)]
        yield _episode(source, "change", incident.number, instruction, world, checks, steps)


@_kind("question")
def question(source: Source) -> Iterator[Scenario]:
    incidents = _open_pool(source)
    for incident in incidents:
        rng = source.rng("question", incident.number)
        world = _World(source, "question", incident.number)
        world.add(incident)
        for other in rng.sample(incidents, min(QUESTION_WORLD, len(incidents))):
            world.add(other)
        asked = _ask(source, incident, world, rng)
        if asked is None:
            continue
        form, text, answer = asked
        checks: list[Check] = [
            AnswerCheck(name="answer", mode="normalised", expected=answer),
            *_guards(source, [], [incident.sys_id]),
        ]
        yield _episode(
            source,
            "question",
            incident.number,
            text,
            world,
            checks,
            [AnswerStep(text=answer)],
            Decision(form, answer),
        )


QUESTION_WORLD: Final = 12
"""Incidents beside the one a question names: enough that counting or ranking means reading."""
QuestionForm = Callable[[Source, Incident, "_World"], tuple[str, str] | None]


def _owner(source: Source, incident: Incident, world: _World) -> tuple[str, str] | None:
    group = source.group_name(incident.assignment_group)
    if not group:
        return None
    text = (
        f"Which group is incident {incident.number} assigned to? Answer with the group's name only."
    )
    return text, group


def _caller(source: Source, incident: Incident, world: _World) -> tuple[str, str] | None:
    user = source.history.users.get(incident.caller or "")
    if user is None or not user.name:
        return None
    return (
        f"Who reported incident {incident.number}? Answer with the caller's name only.",
        user.name,
    )


def _first_opened(source: Source, incident: Incident, world: _World) -> tuple[str, str] | None:
    """The group's incident opened first in the world: others opened earlier belong to other
    groups, so the group clause matters."""
    owner = str(world.incidents[incident.sys_id].get("assignment_group") or "")
    mine = sorted(
        (str(r.get("opened_at")), str(r["number"]))
        for r in world.incidents.values()
        if str(r.get("assignment_group") or "") == owner
    )
    if not owner or len(mine) < 2 or mine[0][0] == mine[1][0] or not mine[0][0]:
        return None
    text = (
        f"Of the incidents assigned to {source.group_name(owner)}, which was opened first? "
        "Answer with its number only."
    )
    return text, mine[0][1]


def _count(source: Source, incident: Incident, world: _World) -> tuple[str, str] | None:
    owner = incident.assignment_group
    if owner is None:
        return None
    state = str(int(incident.state))
    found = sum(
        1
        for r in world.incidents.values()
        if r.get("assignment_group") == owner and str(r.get("state")) == state
    )
    text = (
        f"How many incidents assigned to {source.group_name(owner)} are in the state "
        f"{incident.state.label}? Answer with the number only."
    )
    return text, str(found)


QUESTION_FORMS: Final[dict[str, QuestionForm]] = {
    "owner": _owner,
    "caller": _caller,
    "first_opened": _first_opened,
    "count": _count,
}


def _ask(
    source: Source, incident: Incident, world: _World, rng: random.Random
) -> tuple[str, str, str] | None:
    """A question about the world with one exact answer (its form, text and answer), or None
    when the data has none."""
    form = rng.choice(sorted(QUESTION_FORMS))
    asked = QUESTION_FORMS[form](source, incident, world)
    return None if asked is None else (form, *asked)


def generate_kind(kind: ScenarioKind, source: Source) -> Iterator[Scenario]:
    yield from KIND_FUNCTIONS[kind](source)


def all_kinds(source: Source) -> dict[ScenarioKind, list[Scenario]]:
    """Every kind's scenarios, with no decision common enough to guess (`balance`)."""
    return {
        kind: balanced(
            list(generate_kind(kind, source)),
            key=lambda s: None if s.decision is None else s.decision.value,
            form=lambda s: None if s.decision is None else s.decision.form,
        )
        for kind in KINDS
    }
