"""Collects the reference entities readers meet, with stable ids, and assembles the history.

Readers hand raw source values to `HistoryBuilder`; it normalises them, gives each entity one
record and one sys_id however often it recurs, pseudonymises people when asked, and notes in the
report what it had to keep verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from myna.itsm.importers.model import (
    Category,
    ChangeRequest,
    ConfigurationItem,
    Group,
    ImportReport,
    Incident,
    IncidentHistory,
    Location,
    Problem,
    SourceFormat,
    User,
    stable_sys_id,
)
from myna.itsm.importers.values import clean
from myna.itsm.pseudonymise import Pseudonymiser

_SYS_ID = re.compile(r"[0-9a-f]{32}")
_DIGITS = re.compile(r"(\d+)\s*$")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def is_sys_id(value: str) -> bool:
    return _SYS_ID.fullmatch(value) is not None


def _entity_id(table: str, name: str) -> str:
    return name if is_sys_id(name) else stable_sys_id(table, name.casefold())


def task_number(prefix: str, source_key: str) -> str | None:
    """`source_key` as a ServiceNow task number (INC0000045, PRB0000002), when it ends in digits."""
    if re.fullmatch(rf"{prefix}\d{{7,}}", source_key):
        return source_key
    match = _DIGITS.search(source_key)
    return f"{prefix}{int(match[1]):07d}" if match else None


class HistoryBuilder:
    def __init__(
        self,
        source: str,
        format: SourceFormat,
        report: ImportReport,
        pseudonymiser: Pseudonymiser | None = None,
    ) -> None:
        self.source = source
        self.format = format
        self.report = report
        self.pseudonymiser = pseudonymiser
        self.users: dict[str, User] = {}
        self.groups: dict[str, Group] = {}
        self.locations: dict[str, Location] = {}
        self.cis: dict[str, ConfigurationItem] = {}
        self.categories: dict[str, set[str]] = {}
        self.problems: dict[str, Problem] = {}
        self.changes: dict[str, ChangeRequest] = {}
        self.memberships: set[tuple[str, str]] = set()
        self.incidents: list[Incident] = []
        self._user_keys: dict[str, str] = {}
        self._numbers: dict[str, str] = {}
        self._taken: set[str] = set()
        self._by_number: dict[str, str] = {}
        self._redirects: dict[str, str] = {}

    def user(
        self, raw: str | None, role: str, *, line: int, column: str, sys_id: str | None = None
    ) -> str | None:
        """The sys_id of the person `raw` names, creating the user on first sight.

        `sys_id` is the source's own id for the person: it identifies the person better than a
        display name, and is kept as the record's id unless people are pseudonymised (a source
        id would link the pseudonym back to the source instance).
        """
        label = clean(raw)
        if label is None:
            return None
        identity = (sys_id or label).casefold()
        known = self._user_keys.get(identity)
        if known is None:
            user = self._new_user(label, identity, line=line, column=column, source_id=sys_id)
            known = user.sys_id
            self._user_keys[identity] = known
            self.users[known] = user
        user = self.users[known]
        if user.name == user.sys_id and label != user.sys_id and self.pseudonymiser is None:
            # First seen as a bare sys_id, now with its display name.
            named = self._new_user(label, identity, line=line, column=column, source_id=known)
            user = replace(named, roles=user.roles)
            self.users[known] = user
        if role not in user.roles:
            self.users[known] = replace(user, roles=user.roles | {role})
        return known

    def _new_user(
        self, label: str, identity: str, *, line: int, column: str, source_id: str | None
    ) -> User:
        if self.pseudonymiser is not None:
            persona = self.pseudonymiser.persona(identity, also_known_as=label)
            return User(
                sys_id=stable_sys_id("sys_user", persona.key),
                key=persona.key,
                name=persona.name,
                user_name=persona.user_name,
                email=persona.email,
                first_name=persona.first_name,
                last_name=persona.last_name,
                roles=frozenset(),
            )
        if is_sys_id(label):
            self.report.add(
                line, column, label, "kept_verbatim", "reference given as a sys_id without a name"
            )
            sys_id, user_name, first, last = label, label, "", label
        else:
            sys_id = source_id or stable_sys_id("sys_user", label.casefold())
            if " " in label:
                first, _, last = label.partition(" ")
                user_name = _NOT_ALNUM.sub(".", label.lower()).strip(".")
            else:
                first, last, user_name = "", label, label.lower()
        return User(
            sys_id=sys_id,
            key=label,
            name=label,
            user_name=user_name,
            email=f"{user_name}@example.com",
            first_name=first,
            last_name=last,
            roles=frozenset(),
        )

    def group(self, raw: str | None, *, sys_id: str | None = None) -> str | None:
        name = clean(raw)
        if name is None:
            return None
        sys_id = sys_id or _entity_id("sys_user_group", name)
        if sys_id not in self.groups:
            self.groups[sys_id] = Group(sys_id, name, name)
        return sys_id

    def location(self, raw: str | None, *, sys_id: str | None = None) -> str | None:
        name = clean(raw)
        if name is None:
            return None
        sys_id = sys_id or _entity_id("cmn_location", name)
        if sys_id not in self.locations:
            self.locations[sys_id] = Location(sys_id, name, name)
        return sys_id

    def ci(
        self,
        raw: str | None,
        *,
        ci_class: str = "cmdb_ci",
        category: str | None = None,
        subcategory: str | None = None,
        sys_id: str | None = None,
    ) -> str | None:
        name = clean(raw)
        if name is None:
            return None
        sys_id = sys_id or _entity_id("cmdb_ci", name)
        if sys_id not in self.cis:
            self.cis[sys_id] = ConfigurationItem(
                sys_id, name, name, ci_class, category, subcategory
            )
        return sys_id

    def category(self, raw: str | None, subcategory: str | None) -> str | None:
        name = clean(raw)
        if name is None:
            return None
        subs = self.categories.setdefault(name, set())
        if subcategory is not None:
            subs.add(subcategory)
        return name

    def problem(
        self, raw: str | None, *, line: int, column: str, sys_id: str | None = None
    ) -> str | None:
        """The sys_id of the problem `raw` refers to (by number, name or sys_id)."""
        key = clean(raw)
        if key is None:
            return None
        number = self._number("PRB", key, line=line, column=column)
        known = self._by_number.get(number)
        if known is not None:
            return known
        stub = Problem(sys_id or _entity_id("problem", key), key, number)
        self.problems.setdefault(stub.sys_id, stub)
        self._by_number[number] = stub.sys_id
        return stub.sys_id

    def change(
        self, raw: str | None, *, line: int, column: str, sys_id: str | None = None
    ) -> str | None:
        """The sys_id of the change request `raw` refers to (by number or sys_id)."""
        key = clean(raw)
        if key is None:
            return None
        number = self._number("CHG", key, line=line, column=column)
        known = self._by_number.get(number)
        if known is not None:
            return known
        stub = ChangeRequest(sys_id or _entity_id("change_request", key), key, number)
        self.changes.setdefault(stub.sys_id, stub)
        self._by_number[number] = stub.sys_id
        return stub.sys_id

    def put_problem(self, problem: Problem) -> None:
        """A problem record from the export; it replaces a reference-only stub of its number."""
        self._replace_stub(self.problems, "PRB", problem.number, problem.sys_id)
        self.problems[problem.sys_id] = problem

    def put_change(self, change: ChangeRequest) -> None:
        """A change record from the export; it replaces a reference-only stub of its number."""
        self._replace_stub(self.changes, "CHG", change.number, change.sys_id)
        self.changes[change.sys_id] = change

    def _replace_stub(self, table: dict[str, Any], prefix: str, number: str, sys_id: str) -> None:
        self._numbers.setdefault(f"{prefix}:{number}", number)
        self._taken.add(number)
        stub = self._by_number.get(number)
        if stub is not None and stub != sys_id:
            # Incidents read earlier point at the stub; `build` redirects them.
            self._redirects[stub] = sys_id
            table.pop(stub, None)
        self._by_number[number] = sys_id

    def _number(self, prefix: str, key: str, *, line: int, column: str) -> str:
        """A task number for `key`, unique within the import; sequence numbers as a last resort."""
        known = self._numbers.get(f"{prefix}:{key}")
        if known is not None:
            return known
        number = None if is_sys_id(key) else task_number(prefix, key)
        if number is None or number in self._taken:
            number = f"{prefix}{9_000_000 + len(self._numbers):07d}"
            self.report.add(
                line,
                column,
                key,
                "kept_verbatim",
                f"no unique {prefix} number in the source value; numbered {number} and kept the "
                "value as correlation_id",
            )
        self._numbers[f"{prefix}:{key}"] = number
        self._taken.add(number)
        return number

    def incident_number(self, source_key: str, *, line: int, column: str) -> str:
        return self._number("INC", source_key, line=line, column=column)

    def member(self, group: str | None, user: str | None) -> None:
        if group is not None and user is not None:
            self.memberships.add((group, user))

    def add(self, incident: Incident) -> None:
        self.incidents.append(incident)

    def build(self, metadata: dict[str, str] | None = None) -> IncidentHistory:
        self.report.incidents = len(self.incidents)
        incidents = self.incidents
        if self._redirects:
            incidents = [_redirect(incident, self._redirects) for incident in incidents]
        if self.pseudonymiser is not None:
            # Free text is scrubbed last, when every person in the file has been met.
            scrub = self.pseudonymiser.scrub
            incidents = [_scrub_incident(incident, scrub) for incident in incidents]
            self.problems = {
                k: replace(p, short_description=_optional(scrub, p.short_description))
                for k, p in self.problems.items()
            }
            self.changes = {
                k: replace(c, short_description=_optional(scrub, c.short_description))
                for k, c in self.changes.items()
            }
        return IncidentHistory(
            source=self.source,
            format=self.format,
            incidents=tuple(incidents),
            users=self.users,
            groups=self.groups,
            locations=self.locations,
            cis=self.cis,
            categories={
                name: Category(name, frozenset(subs)) for name, subs in self.categories.items()
            },
            problems=self.problems,
            changes=self.changes,
            memberships=frozenset(self.memberships),
            metadata=dict(metadata or {}),
            pseudonymised=self.pseudonymiser is not None,
        )


def _redirect(incident: Incident, redirects: dict[str, str]) -> Incident:
    def target(sys_id: str | None) -> str | None:
        return redirects.get(sys_id, sys_id) if sys_id is not None else None

    return replace(
        incident,
        problem=target(incident.problem),
        rfc=target(incident.rfc),
        caused_by=target(incident.caused_by),
    )


def _optional(scrub: Callable[[str], str], text: str | None) -> str | None:
    return scrub(text) if text is not None else None


def _scrub_incident(incident: Incident, scrub: Callable[[str], str]) -> Incident:
    resolution = incident.resolution
    if resolution is not None and resolution.notes is not None:
        resolution = replace(resolution, notes=scrub(resolution.notes))
    return replace(
        incident,
        short_description=_optional(scrub, incident.short_description),
        description=_optional(scrub, incident.description),
        resolution=resolution,
        journal=tuple(replace(entry, text=scrub(entry.text)) for entry in incident.journal),
    )
