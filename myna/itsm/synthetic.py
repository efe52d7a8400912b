"""A synthetic incident event log in the UCI layout, so ITSMBench runs with no download.

SYNTHETIC DATA: every incident, person, group and place in it is made up. The file says so in
its leading `# synthetic: true` metadata lines, which the importer reads into
`IncidentHistory.metadata`.

The generator is deterministic for a seed (one `random.Random`, no clock, no hash ordering), so
the shipped file is reproducible byte for byte. Its lifecycles follow the shapes real service
desks show: a first-line group triages, some incidents are passed along a chain of groups, some
wait on the caller, a vendor or a problem, a few are reopened, some breach their SLA (resolution
target by priority, paused while on hold, as ServiceNow SLAs pause), clusters of duplicates hit
the same configuration item with the same symptom, and the newest incidents are still open when
the export is cut.
"""

from __future__ import annotations

import csv
import io
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib.resources import files
from pathlib import Path

from myna.itsm.importers.values import (
    IMPACT_LABELS,
    PRIORITY_LABELS,
    URGENCY_LABELS,
    priority_of,
)

__all__ = [
    "COLUMNS",
    "DEFAULT_INCIDENTS",
    "DEFAULT_SEED",
    "GENERATOR_VERSION",
    "default_export",
    "render",
    "write",
]

GENERATOR_VERSION = "2"
RECURRENCE_MOVES = 0.4
"""The share of reopened incidents whose recurrence another group handles."""
DEFAULT_SEED = 2026
DEFAULT_INCIDENTS = 400
DEFAULT_FILE = "synthetic_incident_event_log.csv"

COLUMNS = tuple(
    [
        "number",
        "incident_state",
        "active",
        "reassignment_count",
        "reopen_count",
        "sys_mod_count",
        "made_sla",
        "caller_id",
        "opened_by",
        "opened_at",
        "sys_created_by",
        "sys_created_at",
        "sys_updated_by",
        "sys_updated_at",
        "contact_type",
        "location",
        "category",
        "subcategory",
        "u_symptom",
        "cmdb_ci",
        "impact",
        "urgency",
        "priority",
        "assignment_group",
        "assigned_to",
        "knowledge",
        "u_priority_confirmation",
        "notify",
        "problem_id",
        "rfc",
        "vendor",
        "caused_by",
        "closed_code",
        "resolved_by",
        "resolved_at",
        "closed_at",
    ]
)

START = datetime(2026, 1, 5, 0, 0)
OPENING_DAYS = 60
# Past the last possible first update (a duplicate opens up to 6 h after its first incident and
# is logged within 30 min), so every incident is in the export, the newest ones still open.
EXPORT_CUT = START + timedelta(days=OPENING_DAYS, hours=7)
# Resolution targets by priority, in hours of elapsed time not on hold.
SLA_HOURS = {1: 4, 2: 8, 3: 24, 4: 72, 5: 120}
# Resolved incidents close automatically after this long, on the hour (as the UCI log's do).
AUTO_CLOSE = timedelta(days=5)
FIRST_LINE = "Group 1"
HOLDS = (("Awaiting User Info", 0.7), ("Awaiting Vendor", 0.15), ("Awaiting Problem", 0.15))
CONTACTS = (("Phone", 0.5), ("Email", 0.25), ("Self-service", 0.2), ("Walk-in", 0.05))
LEVELS = ((1, 0.08), (2, 0.72), (3, 0.2))


def _date(at: datetime) -> str:
    # The UCI log's own form, DD/MM/YYYY HH:MM (the corpus copy has DD-MM-YYYY).
    return at.strftime("%d/%m/%Y %H:%M")


def _pick(rng: random.Random, weighted: tuple[tuple[object, float], ...]) -> object:
    return rng.choices([value for value, _ in weighted], [weight for _, weight in weighted])[0]


@dataclass(slots=True)
class _World:
    """The made-up organisation: categories, the groups that handle them, their members."""

    categories: list[tuple[str, list[str], list[str]]]
    """(category, subcategories, groups that resolve it, first being the usual one)."""
    members: dict[str, list[str]]
    symptoms: list[str]
    cis: list[str]


def _world(rng: random.Random) -> _World:
    groups = [f"Group {n}" for n in range(2, 18)]
    members: dict[str, list[str]] = {FIRST_LINE: [f"Resolver {n}" for n in range(1, 7)]}
    resolver = 7
    for group in groups:
        size = rng.randint(3, 7)
        members[group] = [f"Resolver {n}" for n in range(resolver, resolver + size)]
        resolver += size
    # A few people work in two groups, as real staff do.
    for group in rng.sample(groups, 4):
        other = rng.choice([g for g in groups if g != group])
        members[group].append(rng.choice(members[other]))
    categories = []
    subcategory = 1
    for n in range(1, 21):
        subs = [f"Subcategory {s}" for s in range(subcategory, subcategory + rng.randint(2, 5))]
        subcategory += len(subs)
        categories.append((f"Category {n}", subs, rng.sample(groups, 3)))
    return _World(
        categories=categories,
        members=members,
        symptoms=[f"Symptom {n}" for n in range(1, 91)],
        cis=[f"cmdb_ci {n}" for n in range(1, 36)],
    )


@dataclass(slots=True)
class _Event:
    at: datetime
    state: str
    group: str
    assignee: str | None
    problem: str | None = None
    rfc: str | None = None


@dataclass(slots=True)
class _Incident:
    number: str
    opened_at: datetime
    caller: str
    opened_by: str
    created_by: str | None
    contact: str
    location: str
    category: str
    subcategory: str
    symptom: str
    ci: str | None
    impact: int
    urgency: int
    knowledge: bool
    confirmed: bool
    notify: str
    caused_by: str | None
    duplicate_of: int | None
    events: list[_Event] = field(default_factory=list)
    close_code: str | None = None
    resolved_by: str | None = None


def _incidents(rng: random.Random, world: _World, count: int) -> list[_Incident]:
    openings: list[tuple[datetime, int | None]] = []
    while len(openings) < count:
        day = rng.randrange(OPENING_DAYS)
        hour = rng.choices(range(24), [1] * 7 + [6] * 11 + [2] * 6)[0]
        at = START + timedelta(days=day, hours=hour, minutes=rng.randrange(60))
        root = len(openings)
        openings.append((at, None))
        # One incident in ten is the first of a cluster of duplicates reported within hours.
        if rng.random() < 0.1:
            for _ in range(rng.randint(1, 3)):
                openings.append((at + timedelta(minutes=rng.randint(20, 360)), root))
    openings = openings[:count]
    order = sorted(range(len(openings)), key=lambda i: (openings[i][0], i))
    position = {original: rank for rank, original in enumerate(order)}
    incidents: list[_Incident] = []
    for rank, original in enumerate(order):
        at, first = openings[original]
        # Duplicates open after their first incident, so it is already made.
        source = incidents[position[first]] if first is not None else None
        category, subs, _ = rng.choice(world.categories)
        incidents.append(
            _Incident(
                number=f"INC{10001 + rank:07d}",
                opened_at=at,
                caller=f"Caller {int(rng.paretovariate(1.2) * 40) % 900 + 1}",
                opened_by=f"Opened by {rng.randint(1, 40)}",
                created_by=f"Created by {rng.randint(1, 40)}" if rng.random() < 0.8 else None,
                contact=str(_pick(rng, CONTACTS)),
                location=source.location if source else f"Location {rng.randint(1, 60)}",
                category=source.category if source else category,
                subcategory=source.subcategory if source else rng.choice(subs),
                symptom=source.symptom if source else rng.choice(world.symptoms),
                ci=source.ci
                if source
                else (rng.choice(world.cis) if rng.random() < 0.45 else None),
                impact=source.impact if source else int(str(_pick(rng, LEVELS))),
                urgency=int(str(_pick(rng, LEVELS))),
                knowledge=rng.random() < 0.6,
                confirmed=rng.random() < 0.1,
                notify="Send Email" if rng.random() < 0.1 else "Do Not Notify",
                caused_by=f"CHG{rng.randint(1000, 1999):07d}" if rng.random() < 0.02 else None,
                duplicate_of=position[first] if first is not None else None,
            )
        )
    return incidents


def _lifecycle(rng: random.Random, world: _World, incident: _Incident, problems: list[str]) -> None:
    groups = next(g for c, _, g in world.categories if c == incident.category)
    at = incident.opened_at + timedelta(minutes=rng.randint(2, 30))
    events = incident.events
    events.append(_Event(at, "New", FIRST_LINE, None))
    assignee: str | None = rng.choice(world.members[FIRST_LINE]) if rng.random() < 0.3 else None
    if assignee is not None:
        at += timedelta(minutes=rng.randint(1, 40))
        events.append(_Event(at, "New", FIRST_LINE, assignee))
    # Triage: the usual group for the category, sometimes a wrong one first, then a chain.
    chain = [groups[0]] if rng.random() < 0.75 else [rng.choice(groups[1:]), groups[0]]
    if rng.random() < 0.2:
        chain.append(rng.choice(groups[1:]))
    problem = None
    if incident.duplicate_of is not None and rng.random() < 0.6:
        problem = problems[incident.duplicate_of % len(problems)]
    # A few incidents sit in the first-line queue for days: the backlog any desk has.
    if rng.random() < 0.05:
        at += timedelta(hours=rng.randint(24, 240))
    for group in chain:
        at += timedelta(minutes=rng.randint(5, 90))
        assignee = rng.choice(world.members[group])
        events.append(_Event(at, "Active", group, assignee, problem))
        for _ in range(rng.randint(0, 2)):
            at += timedelta(minutes=rng.randint(10, 180))
            events.append(_Event(at, "Active", group, assignee, problem))
    group = chain[-1]
    if rng.random() < 0.25:
        hold = str(_pick(rng, HOLDS))
        if hold == "Awaiting Problem":
            problem = problem or rng.choice(problems)
        at += timedelta(minutes=rng.randint(5, 120))
        events.append(_Event(at, hold, group, assignee, problem))
        at += timedelta(hours=rng.randint(2, 96))
        events.append(_Event(at, hold, group, assignee, problem))
        at += timedelta(minutes=rng.randint(1, 30))
        events.append(_Event(at, "Active", group, assignee, problem))
    rfc = f"CHG{rng.randint(2000, 2999):07d}" if rng.random() < 0.05 else None
    priority = priority_of(incident.impact, incident.urgency)
    at += timedelta(hours=rng.expovariate(1 / (SLA_HOURS[priority] * 0.35)))
    events.append(_Event(at, "Resolved", group, assignee, problem, rfc))
    incident.resolved_by = f"Resolved by {rng.randint(1, 120)}"
    incident.close_code = _close_code(rng, incident, problem, rfc)
    if rng.random() < 0.08:
        # Some recurrences go to another of the category's groups. Drawn apart from `rng`, so
        # adding this left every other incident of the export as it was.
        apart = random.Random(f"recurrence:{incident.number}")
        if apart.random() < RECURRENCE_MOVES:
            group = apart.choice([g for g in groups if g != group])
            assignee = apart.choice(world.members[group])
        at += timedelta(hours=rng.randint(1, 72))
        events.append(_Event(at, "Active", group, assignee, problem, rfc))
        at += timedelta(hours=rng.randint(1, 24))
        events.append(_Event(at, "Resolved", group, assignee, problem, rfc))
    closed = at + AUTO_CLOSE
    closed = closed.replace(minute=0) + timedelta(hours=1)
    events.append(_Event(closed, "Closed", group, assignee, problem, rfc))


def _close_code(
    rng: random.Random, incident: _Incident, problem: str | None, rfc: str | None
) -> str:
    if incident.duplicate_of is not None and rng.random() < 0.7:
        return "Duplicate"
    if rfc is not None:
        return "Resolved by change"
    if problem is not None:
        return "Known error" if rng.random() < 0.5 else "Resolved by problem"
    return str(
        _pick(
            rng,
            (
                ("Solution provided", 0.55),
                ("Workaround provided", 0.15),
                ("Resolved by caller", 0.12),
                ("User error", 0.1),
                ("No resolution provided", 0.08),
            ),
        )
    )


def _rows(incident: _Incident, rng: random.Random) -> list[list[str]]:
    events = [event for event in incident.events if event.at <= EXPORT_CUT]
    final = events[-1]
    resolved = [e.at for e in events if e.state == "Resolved"]
    done = final.state in ("Resolved", "Closed")
    priority = priority_of(incident.impact, incident.urgency)
    deadline = timedelta(hours=SLA_HOURS[priority])
    rows: list[list[str]] = []
    held = timedelta()
    reassignments = reopens = 0
    previous: _Event | None = None
    for mod_count, event in enumerate(events):
        if previous is not None:
            if previous.state.startswith("Awaiting"):
                held += event.at - previous.at
            if event.group != previous.group:
                reassignments += 1
            if previous.state == "Resolved" and event.state == "Active":
                reopens += 1
        stop = (
            event.at
            if event.state not in ("Resolved", "Closed")
            else (resolved[-1] if resolved else event.at)
        )
        made_sla = (stop - incident.opened_at) - held <= deadline
        rows.append(
            [
                incident.number,
                event.state,
                "FALSE" if event.state == "Closed" else "TRUE",
                str(reassignments),
                str(reopens),
                str(mod_count),
                "TRUE" if made_sla else "FALSE",
                incident.caller,
                incident.opened_by,
                _date(incident.opened_at),
                incident.created_by or "?",
                _date(events[0].at) if incident.created_by else "?",
                f"Updated by {rng.randint(1, 200)}",
                _date(event.at),
                incident.contact,
                incident.location,
                incident.category,
                incident.subcategory,
                incident.symptom,
                incident.ci or "?",
                IMPACT_LABELS[incident.impact],
                URGENCY_LABELS[incident.urgency],
                PRIORITY_LABELS[priority],
                event.group,
                event.assignee or "?",
                "TRUE" if incident.knowledge else "FALSE",
                "TRUE" if incident.confirmed else "FALSE",
                incident.notify,
                event.problem or "?",
                event.rfc or "?",
                "?",
                incident.caused_by or "?",
                (incident.close_code or "?") if done else "?",
                (incident.resolved_by or "?") if done else "?",
                _date(resolved[-1]) if done and resolved else "?",
                _date(final.at) if final.state == "Closed" else "?",
            ]
        )
        previous = event
    return rows


def render(*, seed: int = DEFAULT_SEED, incidents: int = DEFAULT_INCIDENTS) -> str:
    """The whole synthetic export as text: metadata lines, the UCI header, one row per update."""
    rng = random.Random(seed)
    world = _world(rng)
    problems = [f"Problem ID {n}" for n in range(1, 31)]
    generated = _incidents(rng, world, incidents)
    for incident in generated:
        _lifecycle(rng, world, incident, problems)
    out = io.StringIO()
    for key, value in (
        ("synthetic", "true"),
        ("note", "SYNTHETIC DATA made up by Myna; no real incident, person or organisation"),
        ("generator", f"myna.itsm.synthetic {GENERATOR_VERSION}"),
        ("seed", str(seed)),
        ("incidents", str(incidents)),
        ("layout", "UCI incident management process enriched event log"),
    ):
        out.write(f"# {key}: {value}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for incident in generated:
        writer.writerows(_rows(incident, rng))
    return out.getvalue()


def write(
    path: str | Path, *, seed: int = DEFAULT_SEED, incidents: int = DEFAULT_INCIDENTS
) -> Path:
    target = Path(path)
    target.write_text(render(seed=seed, incidents=incidents), encoding="utf-8", newline="")
    return target


def default_export() -> Path:
    """The synthetic export shipped with the package: the benchmark's default data."""
    return Path(str(files("myna.itsm.data").joinpath(DEFAULT_FILE)))
