"""A reference Salesforce org in memory: the pen the CRM corpus author writes traffic with.

It answers the REST API (`/services/data/vNN.N/...`: sobjects, describe, CRUD, upsert by external
id, SOQL `query`/`queryAll` with `nextRecordsUrl` paging, SOSL `search`, `limits`), the OAuth
token endpoint and one Apex REST class (`/services/apexrest/LeadConvert/{id}`, the usual way to
convert a lead over REST), the way Salesforce's documentation and the real recordings show (see
PROTOCOL.md). It runs the platform's behaviour for the shipped objects: restricted picklists,
required fields, read-only fields, what entering an Opportunity stage or a Case or Task status
sets (Probability, ForecastCategoryName, IsClosed, IsWon, IsEscalated), Case closure, lead
conversion, line-item roll-ups, soft deletion into the recycle bin and cascades. Deterministic
throughout: ids come from counters, time from a clock the author advances.

The rules a service model can state (a picklist's values and default, the fields a create must
send, the values a state's entry sets) come from the org's `Rules` (rules.py): the catalogue's
for the org that writes the corpus, the served model's for the org the `salesforce` extension
serves. What a write may send and may not do to the other records (field-level checks, the
access objects' rules, records in use) is `writes.py`'s, pure functions over the org as their
`Lookup`; what a record holds besides (names, addresses, case closure, line totals) is
`records.py`'s. Everything else here is the catalogue's and this code's.

This is not the mock. The mock is learned from the traffic written here. The org shares with the
runtime the SOQL and SOSL parsers and the filter evaluator (`myna.mocks.dialects`,
`myna.mocks.evaluate`), so query *semantics* are one implementation, and the application of
entry values (`myna.mocks.behaviour.entry_values`), so a state's values mean the same to both;
everything else (routing, rendering, behaviour) is written here independently of the runtime.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from urllib.parse import parse_qsl, unquote

from myna.backends import JSON_TYPE as JSON_TYPE
from myna.backends import Reply as Reply
from myna.backends import json_reply as json_reply
from myna.backends.crm.jobs import Job
from myna.backends.crm.objects import (
    BY_PREFIX,
    CHILD_RELATIONSHIPS,
    OBJECTS,
    PICKLIST_LABELS,
    Field,
    SObject,
    catalogued,
    sobject,
)
from myna.backends.crm.permissions import PERMISSIONS, SET_FIELDS, permission_values
from myna.backends.crm.records import (
    ADDRESS_PARTS,
    address,
    case_values,
    converted_lead,
    line_values,
    person_name,
    rolled_up_amount,
)
from myna.backends.crm.rules import CATALOGUE, Rules
from myna.backends.crm.writes import (
    Refused as Refused,
)
from myna.backends.crm.writes import (
    access_rules,
    checked,
    deletable,
    live,
    of_profile,
    refuse,
    required_missing,
    unique_pair,
)
from myna.errors import MockError
from myna.mocks.dialects import QuerySyntaxError
from myna.mocks.dialects.soql import FieldRef, SoqlQuery, malformed_query_message, parse_soql
from myna.mocks.dialects.sosl import SoslReturning, match_term, parse_sosl
from myna.mocks.evaluate import Context, evaluate
from myna.mocks.ids import salesforce_checksum
from myna.mocks.query import And, Condition, Filter, Not, Or, Query
from myna.traces.model import Body, Pairs

Row = dict[str, Any]

STAMP: Final = "%Y-%m-%dT%H:%M:%S.000+0000"
DEFAULT_BATCH: Final = 2000
MIN_BATCH: Final = 200
DAILY_API_REQUESTS: Final = 15000
ORG_ID: Final = "00D5g000004ExAmEAK"
# The organization's name and country, which a new user's company and country default to.
COMPANY: Final = "Acme Corporation"
COUNTRY: Final = "US"
# The profile of an org's first user, which grants every system permission.
ADMIN_PROFILE: Final = "System Administrator"
EVERY: Final = tuple(name for name, _ in PERMISSIONS)
# The OAuth scopes of the org's connected app, which every token it grants carries.
SCOPES: Final = "refresh_token api"

CONVERTED_STATUS: Final = "Closed - Converted"

# Objects whose records go with a deleted parent: (child, reference field).
CASCADES: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    "Account": (("Contact", "AccountId"), ("Opportunity", "AccountId"), ("Case", "AccountId")),
    "Opportunity": (("OpportunityLineItem", "OpportunityId"),),
    "Group": (("GroupMember", "GroupId"), ("GroupMember", "UserOrGroupId")),
    # Users are never deleted; their describe still says what would go with them.
    "User": (("GroupMember", "UserOrGroupId"), ("PermissionSetAssignment", "AssigneeId")),
}


# The settings a new user starts with switched on (a user the platform made, in a live org).
NEW_USER_SETTINGS: Final = (
    "EmailPreferencesAutoBcc",
    "EmailPreferencesStayInTouchReminder",
    "ReceivesInfoEmails",
    "UserPreferencesActivityRemindersPopup",
    "UserPreferencesEventRemindersCheckboxDefault",
    "UserPreferencesTaskRemindersCheckboxDefault",
    "UserPreferencesLightningExperiencePreferred",
)

_DATA_PATH: Final = re.compile(r"^/services/data/(v\d+\.\d)(?:/(.*?))?/?$")
_VERSIONS: Final = re.compile(r"^/services/data/?$")
_ASYNC_PATH: Final = re.compile(r"^/services/async/(\d+\.\d)(?:/(.*?))?/?$")
# The API versions the org answers, newest last, with each release's name.
API_VERSIONS: Final = (("Summer '23", "58.0"), ("Winter '24", "59.0"), ("Spring '24", "60.0"))
# The resources `/services/data/vNN.N/` lists, each under the version's path.
RESOURCES: Final = ("composite", "jobs", "limits", "query", "queryAll", "search", "sobjects")
# getUpdated and getDeleted look back at most this far.
REPLICATION_DAYS: Final = 30
_APEX_CONVERT: Final = re.compile(r"^/services/apexrest/LeadConvert/([A-Za-z0-9]{15,18})/?$")
_BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# An id the org mints: key prefix (3), pod (2), reserved "0" (1), a 9-character base-62 record
# number, then the case checksum (3).
POD: Final = "5g0"
CASE_NUMBER_BASE: Final = 1000


def id_number(record_id: str, prefix: str) -> int | None:
    """The record number of an id the org minted with this key prefix (None for another's)."""
    head = prefix + POD
    digits = record_id[len(head) : 15]
    if not record_id.startswith(head) or len(digits) != 9 or any(c not in _BASE62 for c in digits):
        return None
    number = 0
    for char in digits:
        number = number * 62 + _BASE62.index(char)
    return number


def not_found() -> Refused:
    return Refused(404, "NOT_FOUND", "The requested resource does not exist", None)


def not_allowed(method: str, allowed: Iterable[str]) -> Refused:
    return Refused(
        405,
        "METHOD_NOT_ALLOWED",
        f"HTTP Method '{method}' not allowed. Allowed are {','.join(allowed)}",
        None,
    )


def _row_methods(obj: SObject) -> tuple[str, ...]:
    """The writes a record of the object takes besides GET and HEAD."""
    return tuple(
        method
        for method, flag in (("PATCH", "updateable"), ("DELETE", "deletable"))
        if obj.flags[flag]
    )


@dataclass(slots=True)
class Request:
    method: str
    path: str
    params: Pairs = field(default_factory=list)
    body: Body = field(default_factory=Body)
    token: str | None = None  # the bearer session id; None: no Authorization header
    headers: Pairs = field(default_factory=list)

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def error_reply(refusal: Refused) -> Reply:
    headers: Pairs = [("WWW-Authenticate", "Token")] if refusal.status == 401 else []
    return json_reply(refusal.status, refusal.body(), headers)


def no_content() -> Reply:
    return Reply(204, Body())


@dataclass(slots=True)
class Cursor:
    """What `nextRecordsUrl` points at: the rest of a query's records, already rendered."""

    records: list[dict[str, Any]]
    total: int
    batch: int


ADMIN: Final = ("admin@example-crm.com", "Admin", "Org")


class Org:
    """One Salesforce org: records by object, users and sessions, a clock and the platform rules.

    A fresh org keeps its records in dictionaries. An org over records kept elsewhere (the mock's
    store, read through one request's transaction) passes them as `rows`, one mapping per object,
    with the query cursors and API call count it keeps between requests, and overrides
    `next_number`; the rules below never know the difference.
    """

    def __init__(
        self,
        host: str,
        start: datetime,
        *,
        rows: Mapping[str, MutableMapping[str, Row]] | None = None,
        cursors: MutableMapping[str, Cursor] | None = None,
        jobs: MutableMapping[str, Job] | None = None,
        api_calls: int = 0,
        admin: tuple[str, str, str] = ADMIN,
        rules: Rules = CATALOGUE,
    ) -> None:
        self.host = host
        self.rules = rules
        self.now = start
        self.rows: Mapping[str, MutableMapping[str, Row]] = (
            rows if rows is not None else {name: {} for name in OBJECTS}
        )
        self.passwords: dict[str, str] = {}
        self.sessions: dict[str, str] = {}  # session id -> User Id
        self.clients: dict[str, str] = {}  # connected app consumer key -> secret
        self.cursors: MutableMapping[str, Cursor] = cursors if cursors is not None else {}
        self.jobs: MutableMapping[str, Job] = jobs if jobs is not None else {}
        self.api_calls = api_calls
        self._counters: dict[str, int] = {}
        self.admin_id = self.acting_user(*admin)

    # -- clock, ids, users ---------------------------------------------------------------------

    def stamp(self, moment: datetime | None = None) -> str:
        return (moment or self.now).strftime(STAMP)

    def advance(self, delta: timedelta) -> None:
        self.now += delta

    def next_number(self, name: str) -> int:
        """The next number (from 1) of the sequence `name`: record numbers, case numbers."""
        number = self._counters.get(name, 0) + 1
        self._counters[name] = number
        return number

    def case_number(self) -> str:
        """The next case's number: an auto-number from 00001001 (the org's starting value)."""
        return f"{CASE_NUMBER_BASE + self.next_number('CaseNumber'):08d}"

    def new_id(self, prefix: str) -> str:
        number = self.next_number(prefix)
        digits = ""
        for _ in range(9):
            number, rest = divmod(number, 62)
            digits = _BASE62[rest] + digits
        body = f"{prefix}{POD}{digits}"
        return body + salesforce_checksum(body)

    def _system_user(self, username: str, first: str, last: str, **values: Any) -> str:
        """A user made by an administrator in Setup (no API checks), with the platform's
        defaults for everything else; `values` may name a profile and a role."""
        user_id = self.new_id("005")
        row = self._system_fields(
            "User",
            user_id,
            {
                "Username": username,
                "FirstName": first or None,
                "LastName": last,
                "Alias": (first[:1] + last[:4]).lower(),
                "Email": username,
                "IsActive": True,
                "TimeZoneSidKey": "America/Los_Angeles",
                "LocaleSidKey": "en_US",
                "EmailEncodingKey": "UTF-8",
                "LanguageLocaleKey": "en_US",
                **values,
            },
            user_id,
        )
        self._new_user(row)
        self.rows["User"][user_id] = row
        self._derive(OBJECTS["User"], None, row, row)
        self._assign_profile(row, user_id)
        return user_id

    def acting_user(self, username: str, first: str, last: str) -> str:
        """The user the org acts as: the one named `username`, the org's first user (made
        now, with that name) when there is none."""
        return self.find_user(username) or self._first_user(username, first, last)

    def _first_user(self, username: str, first: str, last: str) -> str:
        """The org's administrator, or a caller the runtime authenticated: a System
        Administrator, as an org's first user is (the profile comes with the org)."""
        profile = self.find_profile(ADMIN_PROFILE)
        user_id = self._system_user(username, first, last)
        if profile is None:
            # The profile is the org's first user's doing: it made it, so it is the admin now.
            self.admin_id = user_id
            profile = self.add_profile(ADMIN_PROFILE, self.new_id("100"), "Standard", EVERY)
        self.update("User", user_id, {"ProfileId": profile}, user_id)
        return user_id

    def find_profile(self, name: str) -> str | None:
        return self.first("Profile", "Name", name)

    def add_user(self, username: str, password: str, first: str, last: str, **values: Any) -> str:
        """A user who can log in (created by an administrator, outside the API traffic)."""
        user_id = self._system_user(username, first, last, **values)
        self.passwords[username] = password
        return user_id

    def add_client(self, client_id: str, secret: str) -> None:
        self.clients[client_id] = secret

    def add_record(self, name: str, values: Mapping[str, Any]) -> str:
        """A record the platform or an administrator in Setup made, outside the API's checks
        (a standard profile, the all-internal-users group)."""
        obj = OBJECTS[name]
        record_id = self.new_id(obj.key_prefix)
        row = self._system_fields(name, record_id, dict(values), self.admin_id)
        for spec in obj.fields:
            if spec.type == "boolean" and row[spec.name] is None:
                row[spec.name] = False
        self.rows[name][record_id] = row
        return record_id

    def add_profile(
        self,
        name: str,
        license_id: str,
        user_type: str,
        granted: Iterable[str],
        *,
        custom: bool = False,
    ) -> str:
        """A profile with the system permissions `granted` (named after `Permissions`), and
        the permission set it owns, which holds the same permissions: a user has its profile's
        permissions through an assignment of that set."""
        granted = tuple(granted)
        profile_id = self.add_record(
            "Profile",
            {
                "Name": name,
                "UserLicenseId": license_id,
                "UserType": user_type,
                **permission_values("Profile", granted),
            },
        )
        self.add_record(
            "PermissionSet",
            {
                "Name": f"X{profile_id}",
                "Label": profile_id,
                "LicenseId": license_id,
                "ProfileId": profile_id,
                "IsOwnedByProfile": True,
                "IsCustom": custom,
                "Type": "Profile",
                **permission_values("PermissionSet", granted),
            },
        )
        return profile_id

    def session_for(self, username: str) -> str:
        """A session id for the user, as the login flows issue one."""
        user_id = self._user_by_name(username)
        token = f"{ORG_ID[:15]}!AQ0AQ{user_id[3:15]}{len(self.sessions):04d}"
        self.sessions[token] = user_id
        self.logged_in(user_id)
        return token

    def logged_in(self, user_id: str) -> None:
        """A user logs in: the platform records when (the field is read-only to clients)."""
        self.rows["User"][user_id]["LastLoginDate"] = self.stamp()

    def _user_by_name(self, username: str) -> str:
        user_id = self.find_user(username)
        if user_id is None:
            raise MockError(f"no user named {username!r} in the reference org", user=username)
        return user_id

    def find_user(self, username: str) -> str | None:
        return self.first("User", "Username", username)

    def where(self, name: str, field_name: str, value: str) -> list[Row]:
        """The records of `name` whose `field_name` is `value`, in the order the org keeps them
        (a stored org finds them by the store's index instead of reading every record)."""
        return [row for row in self.rows[name].values() if row.get(field_name) == value]

    def first(self, name: str, field_name: str, value: str) -> str | None:
        """The id of the first record of `name` whose `field_name` is `value`, or None."""
        for record_id, row in self.rows[name].items():
            if row[field_name] == value:
                return record_id
        return None

    def _system_fields(self, name: str, record_id: str, values: Row, user: str) -> Row:
        obj = OBJECTS[name]
        row: Row = dict.fromkeys(obj.names)
        row.update(values)
        row["Id"] = record_id
        stamps = {
            "IsDeleted": False,
            "CreatedDate": self.stamp(),
            "CreatedById": user,
            "LastModifiedDate": self.stamp(),
            "LastModifiedById": user,
            "SystemModstamp": self.stamp(),
        }
        row.update((key, value) for key, value in stamps.items() if key in row)
        return row

    def _touch(self, row: Row, user: str) -> None:
        """Stamp a change on the audit fields the record's object has."""
        stamps = {
            "LastModifiedDate": self.stamp(),
            "LastModifiedById": user,
            "SystemModstamp": self.stamp(),
        }
        row.update((key, value) for key, value in stamps.items() if key in row)

    # -- dispatch ------------------------------------------------------------------------------

    def _token(self, request: Request) -> Reply:
        return _token_reply(self, form_pairs(request.body))

    def handle(self, request: Request) -> Reply:
        counters = dict(self._counters)
        try:
            return self.answer(request)
        except Refused as refusal:
            # A refused call uses up no number (the next record still gets the id this one
            # would have), as the served org's rolled-back transaction takes its draws back.
            self._counters = counters
            return error_reply(refusal)

    def answer(self, request: Request) -> Reply:
        """The org's reply to `request`; a refusal raises `Refused` (handle answers it)."""
        if request.path == "/services/oauth2/token":
            return self._token(request)
        if _VERSIONS.match(request.path) and request.method == "GET":
            return json_reply(200, versions())
        asynchronous = _ASYNC_PATH.match(request.path)
        if asynchronous is not None:
            from myna.backends.crm.bulk import async_call  # bulk.py builds on this module

            rest = asynchronous.group(2) or ""
            return async_call(self, request, asynchronous.group(1), rest.split("/"))
        user = self.sessions.get(request.token or "")
        if user is None:
            raise Refused(401, "INVALID_SESSION_ID", "Session expired or invalid", None)
        self.api_calls += 1
        headers: Pairs = [("Sforce-Limit-Info", f"api-usage={self.api_calls}/{DAILY_API_REQUESTS}")]
        convert = _APEX_CONVERT.match(request.path)
        if convert is not None and request.method == "POST":
            return self._convert(convert.group(1), json_object(request.body), user)
        matched = _DATA_PATH.match(request.path)
        if matched is None:
            raise not_found()
        version, rest = matched.group(1), matched.group(2) or ""
        reply = self.data_call(request, version, [unquote(p) for p in rest.split("/")], user)
        reply.headers.extend(headers)
        return reply

    def data_call(self, request: Request, version: str, parts: list[str], user: str) -> Reply:
        method = request.method
        head = parts[0]
        if head == "" and len(parts) == 1 and method == "GET":
            return json_reply(200, resources(version))
        if head == "limits" and len(parts) == 1 and method == "GET":
            return json_reply(200, self.limits())
        if head in ("composite", "jobs"):
            # Both build on this module: imported when their call comes.
            from myna.backends.crm.bulk import jobs_call
            from myna.backends.crm.composite import composite_call

            routed = composite_call if head == "composite" else jobs_call
            return routed(self, request, version, parts, user)
        if head in ("query", "queryAll") and method == "GET":
            if len(parts) == 2:
                return json_reply(200, self._more(version, head, parts[1]))
            params = dict(request.params)
            batch = _batch_size(request.header("Sforce-Query-Options"))
            return json_reply(
                200, self.query(params.get("q", ""), version, head == "queryAll", batch)
            )
        if head == "search" and len(parts) == 1 and method == "GET":
            return json_reply(200, self.search(dict(request.params).get("q", ""), version))
        if head != "sobjects":
            raise not_found()
        if len(parts) == 1 and method == "GET":
            return json_reply(200, self.global_describe(version))
        obj = sobject(parts[1]) if len(parts) > 1 else None
        if obj is None:
            raise not_found()
        if len(parts) == 2:
            if method == "GET":
                return json_reply(200, self._object_info(obj, version))
            if method == "POST":
                if not obj.flags["createable"]:
                    raise not_allowed(method, ("GET", "HEAD"))
                record_id = self.create(obj.name, json_object(request.body), user)
                return json_reply(201, {"id": record_id, "success": True, "errors": []})
        if len(parts) == 3 and parts[2] == "describe" and method == "GET":
            return json_reply(200, self.describe(obj, version))
        if len(parts) == 3 and parts[2] in ("updated", "deleted") and method == "GET":
            return json_reply(200, self.replicated(obj, parts[2], dict(request.params)))
        if len(parts) == 3:
            return self._record_call(request, version, obj, parts[2], user)
        if len(parts) == 4:
            return self._external_call(request, version, obj, parts[2], parts[3], user)
        raise not_found()

    def _record_call(
        self, request: Request, version: str, obj: SObject, record_id: str, user: str
    ) -> Reply:
        allowed = ("GET", "HEAD", *_row_methods(obj))
        if request.method in ("PATCH", "DELETE") and request.method not in allowed:
            # Users are deactivated, never deleted; group members and permission set
            # assignments are added and removed, never edited.
            raise not_allowed(request.method, allowed)
        if request.method in ("PATCH", "DELETE"):
            # A record in the recycle bin is still known: a write to it says so.
            binned = self.record(obj.name, record_id)
            if binned is not None and binned.get("IsDeleted"):
                raise Refused(404, "ENTITY_IS_DELETED", "entity is deleted", [])
        row = self.find(obj.name, record_id)
        if request.method == "GET":
            wanted = dict(request.params).get("fields")
            names = [n.strip() for n in wanted.split(",")] if wanted else None
            return json_reply(200, self.render(obj, row, version, names))
        if request.method == "PATCH":
            self.update(obj.name, row["Id"], json_object(request.body), user)
            return no_content()
        if request.method == "DELETE":
            self.delete(obj.name, row["Id"], user)
            return no_content()
        raise not_found()

    def _external_call(
        self, request: Request, version: str, obj: SObject, name: str, value: str, user: str
    ) -> Reply:
        spec = external_field(obj, name)
        matches = [row for row in self.where(obj.name, spec.name, value) if live(row)]
        if request.method == "GET":
            if not matches:
                raise not_found()
            return json_reply(200, self.render(obj, matches[0], version, None))
        if request.method != "PATCH":
            raise not_found()
        values = json_object(request.body)
        if spec.name in values:
            raise Refused(
                400,
                "INVALID_FIELD",
                f"The external ID field {spec.name} can't be set in the body of an upsert; "
                "it's taken from the URL",
                [spec.name],
            )
        record_id, created = self.upsert(obj, spec, value, values, user)
        answer = {"id": record_id, "success": True, "errors": [], "created": created}
        return json_reply(201 if created else 200, answer)

    def upsert(
        self, obj: SObject, spec: Field, value: str, values: Mapping[str, Any], user: str
    ) -> tuple[str, bool]:
        """Update the live record whose external id `spec` is `value`, else create one with
        it: its id, and whether it was created."""
        matches = [row for row in self.where(obj.name, spec.name, value) if live(row)]
        if not matches:
            return self.create(obj.name, {**values, spec.name: value}, user), True
        if len(matches) > 1:
            ids = ", ".join(row["Id"] for row in matches)
            raise Refused(300, "MULTIPLE_CHOICES", f"Multiple records found: {ids}", [spec.name])
        self.update(obj.name, matches[0]["Id"], values, user)
        return str(matches[0]["Id"]), False

    def savepoint(self) -> Callable[[], None]:
        """The org's records as they are now, to go back to when an all-or-nothing call fails
        part way. The numbers drawn since stay drawn (as the served world's sequences do in a
        request that answers); a request refused as a whole is `handle`'s."""
        rows = {
            name: {key: dict(row) for key, row in table.items()}
            for name, table in self.rows.items()
        }

        def restore() -> None:
            for name, table in self.rows.items():
                table.clear()
                table.update(rows[name])

        return restore

    def replicated(self, obj: SObject, which: str, params: Mapping[str, str]) -> dict[str, Any]:
        """getUpdated and getDeleted: the ids of `obj`'s records changed (or deleted) between
        `start` and `end`, as the replication API answers them."""
        start, end = _replication_window(self.now, params)
        covered = end.replace(second=0, microsecond=0)

        def within(row: Row) -> bool:
            modstamp = row.get("SystemModstamp")
            return modstamp is not None and start <= _parse_stamp(str(modstamp)) < covered

        rows = [row for row in self.rows[obj.name].values() if within(row)]
        if which == "updated":
            ids = [row["Id"] for row in rows if live(row)]
            return {"ids": ids, "latestDateCovered": self.stamp(covered)}
        gone = [
            {"id": row["Id"], "deletedDate": row["SystemModstamp"]} for row in rows if not live(row)
        ]
        earliest = min((g["deletedDate"] for g in gone), default=self.stamp(start))
        return {
            "deletedRecords": gone,
            "earliestDateAvailable": earliest,
            "latestDateCovered": self.stamp(covered),
        }

    # -- records -------------------------------------------------------------------------------

    def find(self, name: str, record_id: str) -> Row:
        row = self.record(name, record_id)
        if row is None or not live(row):
            raise not_found()
        return row

    def record(self, name: str, record_id: str) -> Row | None:
        rows = self.rows[name]
        if len(record_id) == 15:
            return next((row for key, row in rows.items() if key[:15] == record_id), None)
        return rows.get(record_id)

    def every(self, name: str) -> Iterable[Row]:
        return self.rows[name].values()

    def create(self, name: str, values: Mapping[str, Any], user: str) -> str:
        obj = OBJECTS[name]
        sent = checked(self, self.rules, obj, values, creating=True)
        for field_name, default in self.rules.defaults.get(name, {}).items():
            if sent.get(field_name) in (None, ""):
                sent[field_name] = default
        if obj.has("OwnerId") and obj.field("OwnerId").createable:
            sent.setdefault("OwnerId", user)
        missing = [
            spec.name
            for spec in obj.fields
            if self.rules.is_required(name, spec.name) and sent.get(spec.name) in (None, "")
        ]
        if missing:
            raise required_missing(missing)
        access_rules(self, name, None, sent)
        unique_pair(self, name, sent)
        record_id = self.new_id(obj.key_prefix)
        row = self._system_fields(name, record_id, sent, user)
        if name == "Case":
            row["CaseNumber"] = self.case_number()
        if name == "User":
            if row["IsActive"] is None:
                row["IsActive"] = True
            self._new_user(row)
        # A checkbox is never null: one a create leaves out is false.
        for spec in obj.fields:
            if spec.type == "boolean" and row[spec.name] is None:
                row[spec.name] = False
        self._created(obj, row, user)
        self._derive(obj, None, row, sent)
        self.rows[name][record_id] = row
        self._roll_up(row if name == "OpportunityLineItem" else None)
        self._after_create(name, row, user)
        return record_id

    def update(self, name: str, record_id: str, values: Mapping[str, Any], user: str) -> None:
        obj = OBJECTS[name]
        row = self.find(name, record_id)
        if name == "Lead":
            refuse(converted_lead(row))
        sent = checked(self, self.rules, obj, values, creating=False)
        cleared = [
            spec.name
            for spec in obj.fields
            if self.rules.is_required(name, spec.name)
            and spec.name in sent
            and sent[spec.name] in (None, "")
        ]
        if cleared:
            raise required_missing(cleared)
        access_rules(self, name, row, sent)
        after = {**row, **sent}
        self._derive(obj, row, after, sent)
        self._touch(after, user)
        self.rows[name][row["Id"]] = after
        self._roll_up(after if name == "OpportunityLineItem" else None)
        self._after_update(name, row, after, user)

    def delete(self, name: str, record_id: str, user: str) -> None:
        obj = OBJECTS[name]
        row = self.find(name, record_id)
        deletable(self, name, row)
        if obj.soft_deleted:
            row.update(IsDeleted=True, SystemModstamp=self.stamp())
        else:
            del self.rows[name][row["Id"]]
        for child, reference in CASCADES.get(name, ()):
            for other in self.where(child, reference, row["Id"]):
                if live(other):
                    self.delete(child, other["Id"], user)
        if name == "UserRole":
            # A role's two sharing groups go with it, once it is gone (while it is there, they
            # are not deleted on their own).
            for group in list(self.rows["Group"].values()):
                if group["RelatedId"] == row["Id"]:
                    self.delete("Group", group["Id"], user)
        if name == "OpportunityLineItem":
            self._roll_up(row)


    # -- the platform's automation -------------------------------------------------------------

    def _derive(self, obj: SObject, before: Row | None, after: Row, sent: Row) -> None:
        after.update(self.rules.entry_values(obj, before, after, sent))
        refuse(self.rules.entry_violation(obj, before, after, sent))
        if obj.has("FirstName") and obj.name != "Account":
            after["Name"] = person_name(after)
        if obj.has("Address"):
            after["Address"] = address(after)
        if obj.name == "Case":
            # What a status sets is the model's (above); what is no constant is `records`'.
            after.update(case_values(before, after, self.stamp()))
        elif obj.name == "OpportunityLineItem":
            opportunity = self.find("Opportunity", after["OpportunityId"])
            product = self.find("Product2", after["Product2Id"])
            after.update(line_values(opportunity, product, after))

    def _roll_up(self, line: Row | None) -> None:
        """An opportunity with products has the sum of their total prices as its Amount."""
        if line is None:
            return
        opportunity = self.rows["Opportunity"][line["OpportunityId"]]
        items = self.where("OpportunityLineItem", "OpportunityId", opportunity["Id"])
        amount = rolled_up_amount(items)
        if amount is not None:
            opportunity["Amount"] = amount

    # -- users, roles, groups and permission sets ----------------------------------------------

    def _new_user(self, row: Row) -> None:
        """What the platform fills on a new user: a generated nickname, the photo URLs, the
        type of its profile's license and the settings a new user starts with."""
        if row["CommunityNickname"] is None:
            moment = int((self.now - datetime(1970, 1, 1)).total_seconds() * 1000)
            row["CommunityNickname"] = f"User{moment}{self.next_number('Nickname'):07d}"
        for field_name, default in self.rules.defaults.get("User", {}).items():
            if row[field_name] is None:
                row[field_name] = default
        profile = self.record("Profile", row["ProfileId"]) if row["ProfileId"] else None
        row["UserType"] = profile["UserType"] if profile is not None else "Standard"
        files = self.host.replace(".my.salesforce.com", ".file.force.com")
        for name, size in (("FullPhotoUrl", "F"), ("SmallPhotoUrl", "T"), ("MediumPhotoUrl", "M")):
            row[name] = f"{files}/profilephoto/005/{size}"
        for name, size in (("BannerPhotoUrl", "B"), ("SmallBannerPhotoUrl", "D")):
            row[name] = f"/profilephoto/005/{size}"
        row["MediumBannerPhotoUrl"] = "/profilephoto/005/E"
        row["BadgeText"] = ""
        row["OutOfOfficeMessage"] = row["OutOfOfficeMessage"] or ""
        row["NumberOfFailedLogins"] = 0
        # A new user works for the organization, in its country, unless told otherwise.
        row["CompanyName"] = row["CompanyName"] or COMPANY
        row["Country"] = row["Country"] or COUNTRY
        for name in NEW_USER_SETTINGS:
            if row[name] is None:
                row[name] = True
        for spec in OBJECTS["User"].fields:
            if spec.type == "boolean" and row[spec.name] is None:
                row[spec.name] = False

    def _created(self, obj: SObject, row: Row, user: str) -> None:
        """Fields the platform fills on a new role, group or permission set."""
        if obj.name == "UserRole" and row["DeveloperName"] is None:
            row["DeveloperName"] = re.sub(r"[^A-Za-z0-9]", "", row["Name"]) or None
        if obj.name == "UserRole":
            row["ContactAccessForAccountOwner"] = row["ContactAccessForAccountOwner"] or "Edit"
            row["PortalType"] = row["PortalType"] or "None"
        if obj.name == "Group":
            # Groups belong to the organization, whoever creates them.
            row["OwnerId"] = ORG_ID
            if row["DeveloperName"] is None:
                row["DeveloperName"] = re.sub(r"\W+", "_", row["Name"]).strip("_") or None
        if obj.name == "PermissionSet":
            row["IsCustom"] = True

    def _after_create(self, name: str, row: Row, user: str) -> None:
        if name == "UserRole":
            # Every role comes with two sharing groups: the role itself, and the role with
            # its subordinates.
            for kind in ("Role", "RoleAndSubordinates"):
                group_id = self.new_id(OBJECTS["Group"].key_prefix)
                self.rows["Group"][group_id] = self._system_fields(
                    "Group",
                    group_id,
                    {
                        "DeveloperName": row["DeveloperName"],
                        "RelatedId": row["Id"],
                        "Type": kind,
                        "OwnerId": ORG_ID,
                        "DoesSendEmailToMembers": False,
                        "DoesIncludeBosses": True,
                    },
                    user,
                )
        if name == "User":
            self._assign_profile(row, user)

    def _after_update(self, name: str, before: Row, after: Row, user: str) -> None:
        if name == "User" and before["ProfileId"] != after["ProfileId"]:
            self._assign_profile(after, user)
        if name == "Profile":
            # A profile's permissions live in the permission set it owns.
            owned = self._owned_set(after["Id"])
            mirrored = {field: after[name] for name, field in SET_FIELDS.items()}
            if owned is not None and any(owned[k] != v for k, v in mirrored.items()):
                owned.update(mirrored)
                self._touch(owned, user)


    def _owned_set(self, profile_id: str) -> Row | None:
        return next(
            (
                permission_set
                for permission_set in self.rows["PermissionSet"].values()
                if permission_set["ProfileId"] == profile_id and permission_set["IsOwnedByProfile"]
            ),
            None,
        )


    def _assign_profile(self, user: Row, actor: str) -> None:
        """A user holds its profile through an assignment of the permission set the profile
        owns: one assignment, moved when the profile changes."""
        owned = self._owned_set(user["ProfileId"]) if user["ProfileId"] else None
        current = next(
            (
                assignment
                for assignment in self.rows["PermissionSetAssignment"].values()
                if assignment["AssigneeId"] == user["Id"] and of_profile(self, assignment)
            ),
            None,
        )
        if current is not None and owned is not None:
            current.update(PermissionSetId=owned["Id"], SystemModstamp=self.stamp())
        elif current is not None:
            del self.rows["PermissionSetAssignment"][current["Id"]]
        elif owned is not None:
            assignment_id = self.new_id(OBJECTS["PermissionSetAssignment"].key_prefix)
            self.rows["PermissionSetAssignment"][assignment_id] = self._system_fields(
                "PermissionSetAssignment",
                assignment_id,
                {"PermissionSetId": owned["Id"], "AssigneeId": user["Id"]},
                actor,
            )

    def _convert(self, lead_id: str, options: Row, user: str) -> Reply:
        """Apex `Database.convertLead`: an Account, a Contact and (unless told not to) an
        Opportunity from the lead, which becomes read-only with the converted status."""
        lead = self.find("Lead", lead_id)
        refuse(converted_lead(lead))
        status = options.get("convertedStatus", CONVERTED_STATUS)
        if status != CONVERTED_STATUS:
            raise Refused(
                400,
                "INVALID_STATUS",
                f"invalid convertedStatus: {status}",
                ["convertedStatus"],
            )
        account_id = options.get("accountId") or self.create(
            "Account",
            {"Name": lead["Company"], "Industry": lead["Industry"], "Rating": lead["Rating"]},
            user,
        )
        contact_id = self.create(
            "Contact",
            {
                "AccountId": account_id,
                "FirstName": lead["FirstName"],
                "LastName": lead["LastName"],
                "Email": lead["Email"],
                "Phone": lead["Phone"],
                "Title": lead["Title"],
                "LeadSource": lead["LeadSource"],
            },
            user,
        )
        opportunity_id = None
        if not options.get("doNotCreateOpportunity", False):
            opportunity_id = self.create(
                "Opportunity",
                {
                    "Name": options.get("opportunityName") or f"{lead['Company']}-",
                    "AccountId": account_id,
                    "StageName": "Prospecting",
                    "CloseDate": (self.now + timedelta(days=90)).date().isoformat(),
                    "LeadSource": lead["LeadSource"],
                },
                user,
            )
        lead.update(
            Status=CONVERTED_STATUS,
            IsConverted=True,
            ConvertedDate=self.now.date().isoformat(),
            ConvertedAccountId=account_id,
            ConvertedContactId=contact_id,
            ConvertedOpportunityId=opportunity_id,
            LastModifiedDate=self.stamp(),
            LastModifiedById=user,
            SystemModstamp=self.stamp(),
        )
        return json_reply(
            200,
            {
                "leadId": lead["Id"],
                "accountId": account_id,
                "contactId": contact_id,
                "opportunityId": opportunity_id,
                "success": True,
            },
        )

    # -- rendering -----------------------------------------------------------------------------

    def render(
        self, obj: SObject, row: Row, version: str, names: list[str] | None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"attributes": _attributes(obj.name, row["Id"], version)}
        for name in names if names is not None else obj.names:
            out[obj.field(name).name] = row.get(obj.field(name).name)
        return out

    def limits(self) -> dict[str, Any]:
        stored = sum(len(rows) for rows in self.rows.values())
        return {
            "DailyApiRequests": {
                "Max": DAILY_API_REQUESTS,
                "Remaining": DAILY_API_REQUESTS - self.api_calls,
            },
            "DailyBulkApiBatches": {"Max": 15000, "Remaining": 15000},
            "DataStorageMB": {"Max": 5, "Remaining": 5 - stored * 2 // 1024},
            "FileStorageMB": {"Max": 20, "Remaining": 20},
            "HourlyTimeBasedWorkflow": {"Max": 50, "Remaining": 50},
        }

    def global_describe(self, version: str) -> dict[str, Any]:
        return {
            "encoding": "UTF-8",
            "maxBatchSize": 200,
            "sobjects": [_object_summary(obj, version) for obj in OBJECTS.values()],
        }

    def _object_info(self, obj: SObject, version: str) -> dict[str, Any]:
        recent = sorted(
            (row for row in self.rows[obj.name].values() if live(row)),
            key=lambda row: str(row["SystemModstamp"]),
            reverse=True,
        )[:3]
        names = ["Id", obj.name_field] if obj.name_field is not None else ["Id"]
        return {
            "objectDescribe": _object_summary(obj, version),
            "recentItems": [self.render(obj, row, version, names) for row in recent],
        }

    def describe(self, obj: SObject, version: str) -> dict[str, Any]:
        summary = _object_summary(obj, version)
        base = summary["urls"]["sobject"]
        # The full describe also points at the layouts and at the classic UI's record pages,
        # for objects that have them.
        urls = dict(summary["urls"])
        if obj.flags["compactLayoutable"]:
            urls["compactLayouts"] = f"{base}/describe/compactLayouts"
        if obj.flags["layoutable"]:
            urls["layouts"] = f"{base}/describe/layouts"
            urls["namedLayouts"] = f"{base}/describe/namedLayouts/{{LayoutName}}"
            urls["quickActions"] = f"{base}/quickActions"
        if obj.flags["compactLayoutable"]:
            urls["uiDetailTemplate"] = f"{self.host}/{{ID}}"
            urls["uiEditTemplate"] = f"{self.host}/{{ID}}/e"
            urls["uiNewRecord"] = f"{self.host}/{obj.key_prefix}/e"
        if obj.name == "User":
            urls["passwordUtilities"] = f"{base}/{{ID}}/password"
        return {
            **summary,
            "urls": urls,
            "fields": [_describe_field(obj, spec, self.rules) for spec in obj.fields],
            "childRelationships": [
                {
                    "childSObject": child.name,
                    "field": spec.name,
                    "relationshipName": _child_relationship(child, spec),
                    "cascadeDelete": (child.name, spec.name) in CASCADES.get(obj.name, ()),
                    "deprecatedAndHidden": False,
                    "junctionIdListNames": [],
                    "junctionReferenceTo": [],
                    "restrictedDelete": False,
                }
                for child in OBJECTS.values()
                for spec in child.fields
                if obj.name in spec.reference_to
                and spec.name not in ("CreatedById", "LastModifiedById", "OwnerId")
            ],
            **_describe_flags(obj),
        }

    # -- SOQL ----------------------------------------------------------------------------------

    def query(self, text: str, version: str, include_deleted: bool, batch: int) -> dict[str, Any]:
        try:
            parsed = parse_soql(text, now=self.now)
        except QuerySyntaxError as error:
            raise Refused(400, "MALFORMED_QUERY", malformed_query_message(error), None) from None
        obj = sobject(parsed.object_name)
        if obj is None:
            raise _query_error(
                text,
                parsed.object_name,
                "INVALID_TYPE",
                f"sObject type '{parsed.object_name}' is not supported. If you are attempting to "
                "use a custom object, be sure to append the '__c' after the entity name. Please "
                "reference your WSDL or the describe call for the appropriate names.",
            )
        paths = _paths(parsed)
        for path in paths:
            self._check_path(text, obj, path)
        views = [
            self._view(obj, row, paths)
            for row in self.rows[obj.name].values()
            if include_deleted or live(row)
        ]
        page, total = evaluate(
            views,
            Query(
                where=parsed.where,
                order_by=parsed.order_by,
                limit=parsed.limit,
                offset=parsed.offset,
            ),
            Context(),
        )
        if parsed.is_count:
            return {"totalSize": total, "done": True, "records": []}
        shown = min(total - parsed.offset, len(page)) if parsed.limit is not None else len(page)
        selected = parsed.fields
        records = [self._project(obj, view, selected, version) for view in page]
        return self._paged(
            records, shown, version, "queryAll" if include_deleted else "query", batch
        )

    def search(self, text: str, version: str) -> dict[str, Any]:
        """SOSL: records of the RETURNING objects (every searchable one when none are named)
        with a text field in the search scope matching the term, Id only unless fields are
        named; each object's WHERE, ORDER BY and LIMIT apply, then the overall LIMIT."""
        try:
            parsed = parse_sosl(text, now=self.now)
        except QuerySyntaxError as error:
            raise Refused(400, "MALFORMED_SEARCH", malformed_query_message(error), None) from None
        matches = match_term(parsed.term)
        wanted = parsed.returning or tuple(
            SoslReturning(name) for name, obj in OBJECTS.items() if obj.flags["searchable"]
        )
        found: list[dict[str, Any]] = []
        for item in wanted:
            obj = sobject(item.object_name)
            if obj is None:
                raise _query_error(
                    text,
                    item.object_name,
                    "INVALID_TYPE",
                    f"sObject type '{item.object_name}' is not supported.",
                )
            for path in (*item.fields, *(key.field for key in item.order_by)):
                self._check_path(text, obj, path)
            searched = _searched_fields(obj, parsed.scope)
            paths = [*item.fields, *(key.field for key in item.order_by)]
            paths.extend(_condition_fields(item.where))
            views = [
                self._view(obj, row, paths)
                for row in self.rows[obj.name].values()
                if live(row)
                and any(isinstance(row[name], str) and matches(row[name]) for name in searched)
            ]
            page, _ = evaluate(
                views,
                Query(
                    where=item.where,
                    order_by=item.order_by,
                    limit=item.limit,
                    offset=item.offset,
                ),
                Context(),
            )
            fields = item.fields or ("Id",)
            found.extend(self._project(obj, view, fields, version) for view in page)
        if parsed.limit is not None:
            found = found[: parsed.limit]
        return {"searchRecords": found}

    def _paged(
        self, records: list[dict[str, Any]], total: int, version: str, endpoint: str, batch: int
    ) -> dict[str, Any]:
        if len(records) <= batch:
            return {"totalSize": total, "done": True, "records": records}
        locator = self.new_id("01g")[:15]
        self.cursors[locator] = Cursor(records, total, batch)
        return {
            "totalSize": total,
            "done": False,
            "nextRecordsUrl": f"/services/data/{version}/{endpoint}/{locator}-{batch}",
            "records": records[:batch],
        }

    def _more(self, version: str, endpoint: str, locator_at: str) -> dict[str, Any]:
        locator, _, at_text = locator_at.partition("-")
        cursor = self.cursors.get(locator)
        if cursor is None or not at_text.isdigit():
            raise Refused(400, "INVALID_QUERY_LOCATOR", "invalid query locator", None)
        at = int(at_text)
        following = at + cursor.batch
        page: dict[str, Any] = {
            "totalSize": cursor.total,
            "done": following >= len(cursor.records),
            "records": cursor.records[at:following],
        }
        if not page["done"]:
            page["nextRecordsUrl"] = f"/services/data/{version}/{endpoint}/{locator}-{following}"
            page = {key: page[key] for key in ("totalSize", "done", "nextRecordsUrl", "records")}
        return page

    def _check_path(self, text: str, obj: SObject, path: str) -> None:
        current = obj
        parts = path.split(".")
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if last and current.has(part):
                return
            relation = current.relationship(part) if not last else None
            targets = catalogued(relation) if relation is not None else ()
            if not targets:
                raise _query_error(
                    text,
                    part,
                    "INVALID_FIELD",
                    f"No such column '{part}' on entity '{current.name}'. If you are attempting "
                    "to use a custom field, be sure to append the '__c' after the custom field "
                    "name. Please reference your WSDL or the describe call for the appropriate "
                    "names.",
                )
            current = OBJECTS[targets[0]]

    def _view(self, obj: SObject, row: Row, paths: Iterable[str]) -> Row:
        """The row with each relationship the query's paths walk (`Account.Owner.Name`)
        holding its related record, so the shared evaluator walks it through plain
        dictionaries. Only walked relationships are looked up: a query reads every row."""
        view = dict(row)
        walks: dict[str, list[str]] = {}
        for path in paths:
            head, dot, rest = path.partition(".")
            if dot:
                walks.setdefault(head.lower(), []).append(rest)
        for spec in obj.fields:
            if spec.relationship is None:
                continue
            # The reference alone decides the relationship: a row stored with something under
            # the relationship's name (records seeded from a learned model) does not.
            view[spec.relationship] = None
            further = walks.get(spec.relationship.lower())
            reference = row.get(spec.name)
            if further is None or reference is None:
                continue
            target = BY_PREFIX.get(str(reference)[:3])
            related = self.rows[target].get(str(reference)) if target is not None else None
            if target is not None and related is not None:
                view[spec.relationship] = self._view(OBJECTS[target], related, further)
                view[spec.relationship]["__type"] = target
        return view

    def _project(
        self, obj: SObject, view: Row, selected: tuple[str, ...] | None, version: str
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"attributes": _attributes(obj.name, view["Id"], version)}
        for path in selected if selected is not None else obj.names:
            _place(out, obj, view, path.split("."), version)
        return out


def _place(out: dict[str, Any], obj: SObject, view: Row, parts: list[str], version: str) -> None:
    if len(parts) == 1:
        if not obj.has(parts[0]):
            # Through a polymorphic relationship `Name` is the target's name field.
            out["Name"] = view.get(obj.name_field) if obj.name_field is not None else None
            return
        out[obj.field(parts[0]).name] = view.get(obj.field(parts[0]).name)
        return
    relation = obj.relationship(parts[0])
    if relation is None or relation.relationship is None:
        return
    related = view.get(relation.relationship)
    if related is None:
        out[relation.relationship] = None
        return
    target = OBJECTS[related["__type"]]
    nested = out.get(relation.relationship)
    if not isinstance(nested, dict):
        nested = {"attributes": _attributes(target.name, related["Id"], version)}
        out[relation.relationship] = nested
    _place(nested, target, related, parts[1:], version)


def _searched_fields(obj: SObject, scope: str) -> tuple[str, ...]:
    """The fields a SOSL scope looks in: NAME the name fields, EMAIL and PHONE those types, ALL
    every text field."""
    if scope == "NAME":
        names = {obj.name_field or "Id", "FirstName", "LastName", "Company"}
        return tuple(spec.name for spec in obj.fields if spec.name in names)
    kinds = {"EMAIL": ("email",), "PHONE": ("phone",)}.get(
        scope, ("string", "textarea", "email", "phone", "url", "picklist")
    )
    return tuple(spec.name for spec in obj.fields if spec.type in kinds)


def _paths(query: SoqlQuery) -> list[str]:
    paths = [item.path for item in query.select if isinstance(item, FieldRef)]
    paths.extend(key.field for key in query.order_by)
    paths.extend(_condition_fields(query.where))
    return paths


def _condition_fields(where: Filter | None) -> list[str]:
    paths: list[str] = []
    stack: list[Filter] = [where] if where is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, Condition):
            paths.append(node.field)
        elif isinstance(node, And | Or):
            stack.extend(node.parts)
        elif isinstance(node, Not):
            stack.append(node.part)
    return paths


def _query_error(text: str, term: str, code: str, detail: str) -> Refused:
    at = re.search(rf"\b{re.escape(term)}\b", text, flags=re.IGNORECASE)
    position = at.start() if at else 0
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    line_text = text.split("\n")[line - 1]
    caret = " " * (column - 1) + "^"
    message = f"\n{line_text}\n{caret}\nERROR at Row:{line}:Column:{column}\n{detail}"
    return Refused(400, code, message, None)


def _attributes(name: str, record_id: str, version: str) -> dict[str, str]:
    return {"type": name, "url": f"/services/data/{version}/sobjects/{name}/{record_id}"}


def _object_summary(obj: SObject, version: str) -> dict[str, Any]:
    base = f"/services/data/{version}/sobjects/{obj.name}"
    return {
        "name": obj.name,
        "label": obj.label,
        "labelPlural": obj.label_plural,
        "keyPrefix": obj.key_prefix,
        "custom": False,
        "createable": obj.flags["createable"],
        "updateable": obj.flags["updateable"],
        "deletable": obj.flags["deletable"],
        "queryable": obj.flags["queryable"],
        "searchable": obj.flags["searchable"],
        "urls": {
            "sobject": base,
            "describe": f"{base}/describe",
            "rowTemplate": f"{base}/{{ID}}",
        },
    }


def _describe_field(obj: SObject, spec: Field, rules: Rules) -> dict[str, Any]:
    """A field's describe; its picklist values and default, and whether it is required, are
    the rules' (what the org enforces), the rest the catalogue's."""
    listed = rules.allowed(obj.name, spec.name) if spec.type == "picklist" else None
    labels = PICKLIST_LABELS.get(spec.picklist or "", {})
    default = rules.default(obj.name, spec.name)
    required = rules.is_required(obj.name, spec.name)
    return {
        "name": spec.name,
        "label": spec.label,
        "type": spec.type,
        "nillable": (spec.nillable or spec.required) and not required,
        "createable": spec.createable,
        "updateable": spec.updateable,
        "defaultedOnCreate": spec.defaulted or spec.name == "Id",
        "externalId": spec.external_id,
        "unique": spec.unique,
        "restrictedPicklist": listed is not None,
        "picklistValues": [
            {
                "active": True,
                "defaultValue": value == default,
                "label": labels.get(value, value),
                "validFor": None,  # no controlling field: every value is valid
                "value": value,
            }
            for value in listed or ()
        ],
        "referenceTo": list(spec.reference_to),
        "relationshipName": spec.relationship,
        **_field_facts(obj, spec, default, required),
    }


# A field's SOAP type and storage length by its type, as describe reports them.
_SOAP_TYPES: Final[Mapping[str, str]] = {
    "id": "tns:ID",
    "reference": "tns:ID",
    "boolean": "xsd:boolean",
    "currency": "xsd:double",
    "double": "xsd:double",
    "percent": "xsd:double",
    "int": "xsd:int",
    "date": "xsd:date",
    "datetime": "xsd:dateTime",
    "address": "urn:address",
}
_LENGTHS: Final[Mapping[str, int]] = {
    "id": 18,
    "reference": 18,
    "string": 255,
    "picklist": 255,
    "url": 255,
    "textarea": 32000,
    "email": 80,
    "phone": 40,
}
# Number types: (precision, scale) and digits.
_NUMBERS: Final[Mapping[str, tuple[int, int, int]]] = {
    "currency": (18, 2, 0),
    "double": (18, 2, 0),
    "percent": (3, 0, 0),
    "int": (0, 0, 9),
}
# URL fields that hold an image (a user's photo in two sizes).
_IMAGE_URLS: Final = frozenset({"SmallPhotoUrl", "MediumPhotoUrl"})


def _extra_type(obj: SObject, spec: Field) -> str | None:
    """The finer kind describe gives some fields: a person's name parts, plain text areas,
    image URLs."""
    if spec.name in ("FirstName", "LastName", "Name") and obj.has("FirstName"):
        return "personname"
    if spec.type == "textarea":
        return "plaintextarea"
    if spec.type == "url" and spec.name in _IMAGE_URLS:
        return "imageurl"
    return None


def _compound(obj: SObject, spec: Field) -> str | None:
    """The compound field a field is part of: a person's Name, an Address."""
    if spec.name in ("FirstName", "LastName") and obj.has("Name"):
        return "Name"
    if spec.name in ADDRESS_PARTS.values() and obj.has("Address"):
        return "Address"
    return None


def _field_facts(obj: SObject, spec: Field, default: str | None, required: bool) -> dict[str, Any]:
    """The rest of a field's describe: what a client checks before it filters, sorts, groups
    or writes, with the values a standard field of that type has."""
    length = _LENGTHS.get(spec.type, 0)
    precision, scale, digits = _NUMBERS.get(spec.type, (0, 0, 0))
    long_text = spec.type == "textarea"
    polymorphic = len(spec.reference_to) > 1
    # Checkboxes the platform defaults sort and group; the long permission and preference
    # families do neither.
    checkbox = spec.type == "boolean"
    ordered = spec.defaulted if checkbox else not long_text
    return {
        "aggregatable": not long_text and not checkbox and spec.type != "address",
        "aiPredictionField": False,
        "autoNumber": spec.name == "CaseNumber",
        "byteLength": length if spec.type in ("id", "reference") else length * 3,
        "calculated": False,
        "calculatedFormula": None,
        "cascadeDelete": False,
        "caseSensitive": False,
        "compoundFieldName": _compound(obj, spec),
        "controllerName": None,
        "custom": spec.name.endswith("__c"),
        "defaultValue": (False if spec.defaulted else None) if checkbox else default,
        "defaultValueFormula": None,
        "dependentPicklist": False,
        "deprecatedAndHidden": False,
        "digits": digits,
        "displayLocationInDecimal": False,
        "encrypted": False,
        "extraTypeInfo": _extra_type(obj, spec),
        "filterable": not long_text,
        "filteredLookupInfo": None,
        "formulaTreatNullNumberAsZero": False,
        "groupable": ordered
        and spec.type not in ("textarea", "currency", "double", "percent", "datetime", "address"),
        "highScaleNumber": False,
        "htmlFormatted": False,
        "idLookup": spec.name == "Id" or spec.external_id or spec.unique,
        "inlineHelpText": None,
        "length": length,
        "mask": None,
        "maskType": None,
        "nameField": spec.name == obj.name_field,
        "namePointing": polymorphic,
        "permissionable": not required and spec.createable and spec.name != "Id",
        "polymorphicForeignKey": polymorphic,
        "precision": precision,
        "queryByDistance": spec.type == "address",
        "referenceTargetField": None,
        "relationshipOrder": None,
        "restrictedDelete": False,
        "scale": scale,
        "searchPrefilterable": False,
        "soapType": _SOAP_TYPES.get(spec.type, "xsd:string"),
        "sortable": ordered and spec.type != "address",
        "writeRequiresMasterRead": False,
    }


def _describe_flags(obj: SObject) -> dict[str, Any]:
    """What an object's describe says about it beyond its fields."""
    flags = obj.flags
    return {
        "actionOverrides": [],
        "activateable": False,
        "associateEntityType": None,
        "associateParentEntity": None,
        "compactLayoutable": flags["compactLayoutable"],
        "customSetting": False,
        "deepCloneable": False,
        "defaultImplementation": None,
        "deprecatedAndHidden": False,
        "extendedBy": None,
        "extendsInterfaces": None,
        "feedEnabled": flags["feedEnabled"],
        "hasSubtypes": False,
        "implementedBy": None,
        "implementsInterfaces": None,
        "isInterface": False,
        "isSubtype": False,
        "layoutable": flags["layoutable"],
        "listviewable": None,
        "lookupLayoutable": None,
        "mergeable": flags["mergeable"],
        "mruEnabled": flags["mruEnabled"],
        "namedLayoutInfos": [],
        "networkScopeFieldName": None,
        "recordTypeInfos": [],
        "replicateable": flags["replicateable"],
        "retrieveable": True,
        "searchLayoutable": flags["searchLayoutable"],
        "sobjectDescribeOption": "FULL",
        "supportedScopes": [{"label": f"All {obj.label_plural.lower()}", "name": "everything"}],
        "triggerable": flags["triggerable"],
        "undeletable": flags["undeletable"],
    }


def _child_relationship(child: SObject, spec: Field) -> str | None:
    """The name a parent gives its children through `spec` (`Contacts` for Contact.AccountId),
    or None where the relationship cannot be walked from the parent."""
    if (child.name, spec.name) in CHILD_RELATIONSHIPS:
        return CHILD_RELATIONSHIPS[child.name, spec.name]
    if spec.relationship is None:
        return None
    return child.label_plural.replace(" ", "")


def external_field(obj: SObject, name: str) -> Field:
    if not obj.has(name):
        raise Refused(
            404,
            "NOT_FOUND",
            f"Provided external ID field does not exist or is not accessible: {name}",
            None,
        )
    spec = obj.field(name)
    if not (spec.external_id or spec.name == "Id"):
        raise Refused(
            400,
            "INVALID_FIELD",
            f"Field {spec.name} is not an external id field",
            [spec.name],
        )
    return spec


def _batch_size(header: str | None) -> int:
    if header is None:
        return DEFAULT_BATCH
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "batchSize" and value.isdigit():
            return min(max(int(value), MIN_BATCH), DEFAULT_BATCH)
    return DEFAULT_BATCH


def json_object(body: Body) -> Row:
    if body.kind == "json" and isinstance(body.value, dict):
        return dict(body.value)
    if body.kind == "empty":
        return {}
    raise Refused(
        400,
        "JSON_PARSER_ERROR",
        "The request body is either invalid or incomplete",
        None,
    )


def form_pairs(body: Body) -> dict[str, str]:
    return dict(parse_qsl(str(body.value))) if body.kind == "text" else {}


def _token_reply(org: Org, form: Mapping[str, str]) -> Reply:
    grant = form.get("grant_type")
    if form.get("client_id") not in org.clients or org.clients[form["client_id"]] != form.get(
        "client_secret"
    ):
        return json_reply(
            400, {"error": "invalid_client_id", "error_description": "client identifier invalid"}
        )
    username = form.get("username", "")
    if grant != "password" or org.passwords.get(username) != form.get("password"):
        return json_reply(
            400, {"error": "invalid_grant", "error_description": "authentication failure"}
        )
    token = org.session_for(username)
    # The recordings redact the signature (an HMAC of the identity URL and issue time).
    return json_reply(200, token_answer(org, token, org.sessions[token], "[REDACTED]"))


def token_answer(org: Org, token: str, user_id: str, signature: str) -> dict[str, Any]:
    """A granted token as Salesforce answers it, in its key order: the session id, its
    signature, the connected app's scopes, the instance, the identity URL (org and user id) and
    when it was issued (epoch milliseconds)."""
    return {
        "access_token": token,
        "signature": signature,
        "scope": SCOPES,
        "instance_url": org.host,
        "id": identity_url(user_id),
        "token_type": "Bearer",
        "issued_at": str(int((org.now - datetime(1970, 1, 1)).total_seconds() * 1000)),
    }


def identity_url(user_id: str) -> str:
    return f"https://login.salesforce.com/id/{ORG_ID}/{user_id}"


def versions() -> list[dict[str, str]]:
    """`GET /services/data/`: the API versions the org answers, oldest first."""
    return [
        {"label": label, "url": f"/services/data/v{number}", "version": number}
        for label, number in API_VERSIONS
    ]


def resources(version: str) -> dict[str, str]:
    """`GET /services/data/vNN.N/`: the version's resources by name."""
    return {name: f"/services/data/{version}/{name}" for name in RESOURCES}


def child_of(parent: SObject, relationship: str) -> tuple[SObject, str] | None:
    """The child object and its reference field that `parent`'s child relationship
    `relationship` (`Contacts` on Account) walks, or None."""
    for child in OBJECTS.values():
        for spec in child.fields:
            if (
                parent.name in spec.reference_to
                and _child_relationship(child, spec) == relationship
            ):
                return child, spec.name
    return None


def _parse_stamp(text: str) -> datetime:
    """A Salesforce timestamp (`2026-03-02T08:00:00.000+0000`) as a naive UTC datetime."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def _replication_window(now: datetime, params: Mapping[str, str]) -> tuple[datetime, datetime]:
    """getUpdated's and getDeleted's `start` and `end`: both required, in order, `start`
    within the last 30 days."""
    bounds = []
    for name in ("start", "end"):
        text = params.get(name)
        if not text:
            raise Refused(400, "MISSING_ARGUMENT", f"Missing argument: {name}", None)
        try:
            bounds.append(_parse_stamp(text))
        except ValueError:
            raise Refused(
                400, "INVALID_REPLICATION_DATE", f"Invalid {name} date: {text}", None
            ) from None
    start, end = bounds
    if end <= start:
        raise Refused(
            400, "INVALID_REPLICATION_DATE", "endDate must chronologically follow startDate", None
        )
    if start < now - timedelta(days=REPLICATION_DAYS):
        raise Refused(
            400,
            "INVALID_REPLICATION_DATE",
            f"startDate cannot be more than {REPLICATION_DAYS} days ago",
            None,
        )
    return start, min(end, now)
