"""A demo-sized ITSM world: what `myna serve itsm` serves by default.

The reference world (`world.py`) is what the corpus leaves: a dozen people, nine incidents. An
agent needs something to search, so the demo world continues from it on the same reference
instance, with the same business rules, and writes a service desk's worth of work: users in
groups with their roles, configuration items, hundreds of incidents in every state (assigned
within their groups, on hold with a reason, resolved with a resolution, closed, canceled),
problems linked to incidents, changes with their tasks and approvals at every stage, catalog
requests approved and fulfilled, and knowledge articles at every step of their workflow. Every
record is one the platform's rules made, with its audit, journal and SLA rows.

Deterministic (a seeded random generator and the instance's clock); regenerate with

    python -m myna.backends.itsm.demo -o myna/backends/itsm/demo_world
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from myna.backends import write_world_command
from myna.backends.itsm.instance import Instance, Row
from myna.backends.itsm.world import reference_instance, seed_texts

SEED: Final = 14
INCIDENTS: Final = 320
PROBLEMS: Final = 30
CHANGES: Final = 40
REQUESTS: Final = 60
ARTICLES: Final = 60

FIRST: Final = (
    "Alex", "Bea", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivan", "Jade", "Kofi",
    "Lars", "Maya", "Noor", "Oscar", "Pia", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Viktor",
    "Wen", "Yara",
)  # fmt: skip
LAST: Final = ("Adams", "Brandt", "Costa", "Dubois", "Evans", "Fujita", "Garcia", "Horvat")
DEPARTMENTS: Final = ("Finance", "Sales", "Human Resources", "Marketing", "IT")
# (short description, category, subcategory)
PROBLEMS_SEEN: Final = (
    ("Outlook keeps asking for my password", "software", "email"),
    ("Cannot reach the shared drive from home", "network", "vpn"),
    ("Laptop battery drains within an hour", "hardware", "laptop"),
    ("Payroll report times out", "software", "web"),
    ("Printer on floor 3 prints blank pages", "hardware", "printer"),
    ("VPN disconnects every few minutes", "network", "vpn"),
    ("Customer portal shows error 502", "software", "web"),
    ("Database backup job failed overnight", "database", "backup"),
    ("New starter cannot log in", "inquiry", "account"),
    ("Teams calls drop on the guest Wi-Fi", "network", "wireless"),
    ("Excel crashes when opening large files", "software", "office"),
    ("Monitor flickers after docking", "hardware", "monitor"),
    ("Mailbox is full and cannot receive mail", "software", "email"),
    ("Slow response from the CRM", "software", "web"),
    ("Password reset link does not arrive", "inquiry", "account"),
    ("File server is running out of space", "hardware", "storage"),
)
CHANGE_WORK: Final = (
    "Patch {ci} to the latest security release",
    "Increase memory on {ci}",
    "Rotate TLS certificates on {ci}",
    "Upgrade {ci} to the next minor version",
    "Move {ci} to the new storage array",
    "Apply firewall rule changes for {ci}",
)
ARTICLE_TOPICS: Final = (
    "How to set up multi-factor authentication",
    "Connecting to the VPN from a hotel",
    "Mapping a network drive",
    "Requesting a new laptop",
    "Clearing the Outlook cache",
    "Printing from a personal device",
    "Resetting your password",
    "Booking a meeting room with video",
    "Sharing files with external partners",
    "Reporting a phishing e-mail",
)


@dataclass(slots=True)
class Desk:
    """The reference instance being filled, and who and what is in it."""

    instance: Instance
    rng: random.Random
    people: list[str] = field(default_factory=list)  # user names of fulfillers
    callers: list[str] = field(default_factory=list)  # sys_ids of everyone
    groups: dict[str, list[str]] = field(default_factory=dict)  # group id -> member ids
    cis: list[tuple[str, str]] = field(default_factory=list)  # (sys_id, name)
    problems: list[str] = field(default_factory=list)

    def pick(self, items: Sequence[str]) -> str:
        return items[self.rng.randrange(len(items))]

    def tick(self, minutes: int = 7) -> None:
        self.instance.advance(timedelta(minutes=self.rng.randint(1, minutes)))

    def insert(self, table: str, values: dict[str, str], user: str = "admin") -> Row:
        self.tick()
        return self.instance.insert(table, values, user)

    def update(self, table: str, sys_id: str, values: dict[str, str], user: str) -> Row:
        self.tick()
        return self.instance.update(table, sys_id, values, user)

    def assignment(self) -> dict[str, str]:
        """A group and one of its members."""
        group = self.pick(sorted(self.groups))
        return {"assignment_group": group, "assigned_to": self.pick(self.groups[group])}

    def worker(self, assignment: dict[str, str]) -> str:
        return self.instance.rows["sys_user"][assignment["assigned_to"]]["user_name"]


def _desk(instance: Instance, rng: random.Random) -> Desk:
    desk = Desk(instance, rng)
    rows = instance.rows
    desk.callers = [row["sys_id"] for row in rows["sys_user"].values() if row["user_name"]]
    for member in rows["sys_user_grmember"].values():
        desk.groups.setdefault(member["group"], []).append(member["user"])
    desk.cis = [(row["sys_id"], row["name"]) for row in rows["cmdb_ci"].values()]
    for table in ("cmdb_ci_server", "cmdb_ci_appl"):
        desk.cis += [(row["sys_id"], row["name"]) for row in rows[table].values()]
    desk.problems = list(rows["problem"])
    return desk


# -- people and things --------------------------------------------------------------------------


def hire(desk: Desk) -> None:
    """Forty-eight more people: most callers, some fulfillers placed in resolver groups, where
    they inherit the group's roles."""
    resolver_groups = sorted(desk.groups)
    for n in range(48):
        first, last = FIRST[n % len(FIRST)], LAST[n // len(FIRST) * 3 % len(LAST) + n % 3]
        department = DEPARTMENTS[n % len(DEPARTMENTS)]
        user = desk.insert(
            "sys_user",
            {
                "user_name": f"{first}.{last}{n}".lower(),
                "first_name": first,
                "last_name": last,
                "email": f"{first}.{last}{n}@example.com".lower(),
                "title": "Analyst" if department == "IT" else f"{department} Specialist",
                "roles": "itil" if department == "IT" else "",
            },
        )
        desk.callers.append(user["sys_id"])
        if department == "IT":
            group = resolver_groups[n % len(resolver_groups)]
            desk.insert("sys_user_grmember", {"user": user["sys_id"], "group": group})
            desk.groups[group].append(user["sys_id"])


def build_cmdb(desk: Desk) -> None:
    """Forty more servers, some in maintenance or retired."""
    for n in range(40):
        name = (
            f"{desk.pick(('lnx', 'win'))}-{desk.pick(('app', 'db', 'web', 'batch'))}-{n + 10:02d}"
        )
        status = desk.pick(("1", "1", "1", "1", "3"))
        server = desk.insert(
            "cmdb_ci_server",
            {
                "name": name,
                "host_name": name,
                "ip_address": f"10.30.{n // 200}.{n % 200 + 10}",
                "os": "Linux Red Hat" if name.startswith("lnx") else "Windows 2022 Datacenter",
                "operational_status": status,
                "install_status": "3" if status == "3" else "1",
                "classification": desk.pick(("Production", "Development", "Test")),
            },
        )
        desk.cis.append((server["sys_id"], name))


# -- incidents ----------------------------------------------------------------------------------

# Where each incident ends, in the proportions a service desk's open and recent work shows.
INCIDENT_ENDS: Final = ("1",) * 5 + ("2",) * 6 + ("3",) * 3 + ("6",) * 5 + ("7",) * 10 + ("8",) * 2
HOLD_REASONS: Final = ("1", "3", "4", "5")
CLOSE_CODES: Final = (
    "Solution provided",
    "Workaround provided",
    "Resolved by caller",
    "User error",
)


def report_incidents(desk: Desk) -> None:
    for _ in range(INCIDENTS):
        text, category, subcategory = PROBLEMS_SEEN[desk.rng.randrange(len(PROBLEMS_SEEN))]
        caller = desk.pick(desk.callers)
        values = {
            "short_description": text,
            "caller_id": caller,
            "category": category,
            "subcategory": subcategory,
            "impact": desk.pick(("1", "2", "2", "3", "3", "3")),
            "urgency": desk.pick(("1", "2", "2", "3", "3", "3")),
            "contact_type": desk.pick(("email", "phone", "self-service", "self-service")),
            "cmdb_ci": desk.pick([ci for ci, _ in desk.cis]),
        }
        incident = desk.insert("incident", values, "aisha.khan")
        _work_incident(desk, incident["sys_id"], desk.pick(INCIDENT_ENDS))


def _work_incident(desk: Desk, sys_id: str, end: str) -> None:
    if end == "1":
        return
    if end == "8":
        desk.update("incident", sys_id, {"state": "8", "work_notes": "Duplicate."}, "aisha.khan")
        return
    assignment = desk.assignment()
    worker = desk.worker(assignment)
    desk.update("incident", sys_id, {**assignment, "state": "2"}, "aisha.khan")
    if end == "3":
        reason = desk.pick(HOLD_REASONS)
        desk.update("incident", sys_id, {"state": "3", "hold_reason": reason}, worker)
        return
    if end == "2":
        desk.update("incident", sys_id, {"work_notes": "Looking into it."}, worker)
        return
    if desk.problems and desk.rng.random() < 0.2:
        desk.update("incident", sys_id, {"problem_id": desk.pick(desk.problems)}, worker)
    resolution = {
        "state": "6",
        "close_code": desk.pick(CLOSE_CODES),
        "close_notes": "Fixed and confirmed with the caller.",
    }
    desk.update("incident", sys_id, resolution, worker)
    if end == "7":
        desk.instance.advance(timedelta(hours=desk.rng.randint(1, 48)))
        desk.update("incident", sys_id, {"state": "7"}, "aisha.khan")


# -- problems -----------------------------------------------------------------------------------

PROBLEM_PATH: Final = ("102", "103", "104", "106", "107")


def investigate_problems(desk: Desk) -> None:
    for n in range(PROBLEMS):
        text, category, _ = PROBLEMS_SEEN[n % len(PROBLEMS_SEEN)]
        problem = desk.insert(
            "problem",
            {
                "short_description": f"Recurring: {text.lower()}",
                "category": category,
                "impact": desk.pick(("1", "2", "3")),
                "urgency": desk.pick(("1", "2", "3")),
                **desk.assignment(),
            },
            "priya.raman",
        )
        desk.problems.append(problem["sys_id"])
        for state in PROBLEM_PATH[: desk.rng.randrange(len(PROBLEM_PATH) + 1)]:
            values = {"state": state}
            if state == "106":
                values.update(resolution_code="fix_applied", fix_notes="Root cause fixed.")
            desk.update("problem", problem["sys_id"], values, "priya.raman")


# -- changes, with their tasks and approvals ----------------------------------------------------

# The stage each change reaches: New, Assess, Authorize (awaiting approval), Scheduled,
# Implement, Review, Closed, Canceled, or rejected at approval.
CHANGE_ENDS: Final = ("-5", "-4", "-3", "-3", "-2", "-1", "0", "3", "3", "3", "4", "rejected")


def plan_changes(desk: Desk) -> None:
    for n in range(CHANGES):
        ci, name = desk.cis[n % len(desk.cis)]
        change = desk.insert(
            "change_request",
            {
                "short_description": CHANGE_WORK[n % len(CHANGE_WORK)].format(ci=name),
                "cmdb_ci": ci,
                "type": desk.pick(("normal", "normal", "normal", "emergency")),
                "risk": desk.pick(("2", "3", "3", "4")),
                "justification": "Keeps the service supported and secure.",
                "implementation_plan": "Follow the runbook in the maintenance window.",
                **desk.assignment(),
            },
            "carlos.mendes",
        )
        _run_change(desk, change["sys_id"], CHANGE_ENDS[n % len(CHANGE_ENDS)])


def _run_change(desk: Desk, sys_id: str, end: str) -> None:
    if end == "-5":
        return
    if end == "4":
        desk.update("change_request", sys_id, {"state": "4"}, "carlos.mendes")
        return
    desk.update("change_request", sys_id, {"state": "-4"}, "carlos.mendes")
    if end == "-4":
        return
    desk.update("change_request", sys_id, {"state": "-3"}, "carlos.mendes")
    approvals = [
        desk.insert("sysapproval_approver", {"sysapproval": sys_id, "approver": approver})
        for approver in _cab(desk)
    ]
    if end == "-3":
        return
    verdict = "rejected" if end == "rejected" else "approved"
    for approval in approvals:
        approver = desk.instance.rows["sys_user"][approval["approver"]]["user_name"]
        desk.update("sysapproval_approver", approval["sys_id"], {"state": verdict}, approver)
        if verdict == "rejected":
            return
    _implement(desk, sys_id, end)


def _cab(desk: Desk) -> list[str]:
    """The change advisory board's members, who approve changes."""
    group = next(
        sys_id
        for sys_id, row in desk.instance.rows["sys_user_group"].items()
        if row["name"] == "Change Advisory Board"
    )
    return desk.groups[group]


CHANGE_PATH: Final = ("-1", "0", "3")


def _implement(desk: Desk, sys_id: str, end: str) -> None:
    change = desk.instance.rows["change_request"][sys_id]
    assignment = {k: change[k] for k in ("assignment_group", "assigned_to")}
    worker = desk.worker(assignment)
    tasks = [
        desk.insert(
            "change_task",
            {"change_request": sys_id, "short_description": text, **assignment},
            "carlos.mendes",
        )
        for text in ("Implement", "Verify")
    ]
    for state in CHANGE_PATH[: CHANGE_PATH.index(end) + 1] if end in CHANGE_PATH else ():
        if state == "0":
            for task in tasks:
                done = {"state": "3", "close_code": "successful", "close_notes": "Done."}
                desk.update("change_task", task["sys_id"], done, worker)
        values = {"state": state}
        if state == "3":
            values.update(close_code="successful", close_notes="Completed in the window.")
        desk.update("change_request", sys_id, values, worker)


# -- catalog requests ---------------------------------------------------------------------------


# How far each request gets: pending, awaiting approval, approved, in fulfilment, delivered,
# closed incomplete, skipped.
REQUEST_ENDS: Final = ("-5", "1", "approved", "2", "3", "3", "4", "7")


def order_from_catalog(desk: Desk) -> None:
    items = list(desk.instance.rows["sc_cat_item"].values())
    for n in range(REQUESTS):
        item = items[n % len(items)]
        requester = desk.pick(desk.callers)
        end = REQUEST_ENDS[n % len(REQUEST_ENDS)]
        request = desk.insert(
            "sc_request",
            {
                "requested_for": requester,
                "short_description": item["name"],
                "price": item["price"],
                "state": "-5" if end == "-5" else "1",
            },
            "nina.sato",
        )
        line = desk.insert(
            "sc_req_item",
            {
                "request": request["sys_id"],
                "cat_item": item["sys_id"],
                "requested_for": requester,
                "short_description": item["short_description"],
                "price": item["price"],
            },
            "nina.sato",
        )
        if end not in ("-5", "1"):
            _approve(desk, request["sys_id"])
            _fulfil(desk, request["sys_id"], line["sys_id"], end)


def _approve(desk: Desk, request: str) -> None:
    carlos = desk.instance.user_id("carlos.mendes")
    approval = desk.insert("sysapproval_approver", {"sysapproval": request, "approver": carlos})
    desk.update("sysapproval_approver", approval["sys_id"], {"state": "approved"}, "carlos.mendes")


def _fulfil(desk: Desk, request: str, line: str, end: str) -> None:
    if end == "approved":
        return
    groups = desk.instance.rows["sys_user_group"]
    hardware = next(sys_id for sys_id, row in groups.items() if row["name"] == "Hardware")
    assignment = {"assignment_group": hardware, "assigned_to": desk.pick(desk.groups[hardware])}
    worker = desk.worker(assignment)
    desk.update("sc_req_item", line, {"approval": "approved", **assignment, "state": "2"}, worker)
    desk.update("sc_request", request, {"state": "2"}, worker)
    if end != "2":
        desk.update("sc_req_item", line, {"state": end, "work_notes": "Done."}, worker)
        desk.update("sc_request", request, {"state": end}, worker)


# -- knowledge ----------------------------------------------------------------------------------

ARTICLE_PATHS: Final[tuple[tuple[str, ...], ...]] = (
    (),
    ("review",),
    ("review", "published"),
    ("published",),
    ("review", "published"),
    ("published", "retired"),
)


def write_articles(desk: Desk) -> None:
    rows = desk.instance.rows
    base = next(iter(rows["kb_knowledge_base"]))
    categories = list(rows["kb_category"])
    for n in range(ARTICLES):
        topic = ARTICLE_TOPICS[n % len(ARTICLE_TOPICS)]
        article = desk.insert(
            "kb_knowledge",
            {
                "short_description": topic if n < len(ARTICLE_TOPICS) else f"{topic} ({n})",
                "text": f"<p>{topic}: step-by-step instructions.</p>",
                "kb_knowledge_base": base,
                "kb_category": categories[n % len(categories)],
            },
            "priya.raman",
        )
        for state in ARTICLE_PATHS[n % len(ARTICLE_PATHS)]:
            desk.update("kb_knowledge", article["sys_id"], {"workflow_state": state}, "priya.raman")


STEPS: Final[tuple[Callable[[Desk], None], ...]] = (
    hire,
    build_cmdb,
    investigate_problems,
    report_incidents,
    plan_changes,
    order_from_catalog,
    write_articles,
)


def demo_instance(seed: int = SEED) -> Instance:
    """The reference instance after the corpus and a service desk's worth of work."""
    instance = reference_instance()
    desk = _desk(instance, random.Random(seed))
    for step in STEPS:
        step(desk)
        instance.advance(timedelta(hours=2))
    return instance


def seed_files() -> dict[str, str]:
    """The text of each `demo_world/<table>.jsonl` file."""
    return seed_texts(demo_instance())


def main(argv: list[str] | None = None) -> None:
    write_world_command(argv, __doc__.splitlines()[0] if __doc__ else None, seed_files)


if __name__ == "__main__":
    main()
