"""The `salesforce` extension: the Salesforce REST API, served by the reference org's code under
the served model's rules.

The CRM model (learned from the shipped corpus into the pinned overlay) names the objects, their
fields and operations, and states the rules a model can state:

- a restricted picklist's values (a field's `enum`) and default (`default`): another value is
  refused with `INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST`, and describe lists these values;
- the fields a create must send (`required_on_create`): `REQUIRED_FIELD_MISSING` without them;
- what entering a state sets (`StateMachine.sets_on_entry`: an Opportunity stage's Probability,
  ForecastCategoryName, IsClosed and IsWon; a Case's or Task's IsClosed...), applied by
  `myna.mocks.behaviour.entry_values`, so a value the request sends wins;
- what entering a state needs (`StateMachine.required_on_entry`: a Closed case has a Reason),
  refused in the words of the org's validation rule (`FIELD_CUSTOM_VALIDATION_EXCEPTION`).

`StoredOrg` reads those from the model it serves (`rules.model_rules`, once per mock), so editing
the model changes what a client sees. Everything else a Salesforce client relies on is protocol,
written once as the reference org's code (`instance.Org`, over the catalogue in `objects.py`)
and shared by the org that wrote the corpus (which has no model: it reads the same rules from
the catalogue, `rules.CATALOGUE`): Salesforce's answer shapes (create's `{id, success,
errors}`, 204 without a body on PATCH and DELETE, upsert by external id), SOQL with nested
relationship fields, `COUNT()` and `nextRecordsUrl` paging, SOSL, describe, limits, the
`[{message, errorCode, fields}]` refusals with Salesforce's codes, soft deletion with
`queryAll`, lead conversion, roll-ups, cascades, the access objects' rules (`writes.py`), and
the rules that are no constant per state (a case's ClosedDate stamp, the sticky escalation flag,
`records.py`). So this extension routes every Salesforce endpoint to that org:

- `StoredOrg` is an `Org` whose records are the store's, read through the request's transaction
  on first use (`StoredTable`) and written back when the org has answered; it acts as the world's
  user the caller names (else the org's administrator), writing a user only into a world without
  any; ids and case numbers come from the world's sequences, each started past the numbers the
  world's records hold, so no id is handed out twice; query cursors live beside the world, in
  the serving process, and a cursor whose world was reset since is gone;
- a refusal raises a `Rejection` carrying Salesforce's error list, so the runtime rolls back
  whatever the request wrote;
- the OAuth token endpoint checks credentials with the runtime's authenticator and answers
  Salesforce's token shape (identity URL, issue time, signature);
- a model whose rules the org cannot apply (entry values naming a field the object lacks) is
  refused when the mock is built (`check`), not inside every request.

The runtime keeps what is not Salesforce's: TLS serving, worlds, authentication, faults and the
call log. PROTOCOL.md states the contract, clause by clause, and where each rule lives (§7).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, Generic, TypeVar
from urllib.parse import parse_qsl

from myna.backends.crm.instance import (
    ADMIN_PROFILE,
    CASCADES,
    CASE_NUMBER_BASE,
    Cursor,
    Org,
    Refused,
    Reply,
    Request,
    Row,
    id_number,
    not_found,
    token_answer,
    versions,
)
from myna.backends.crm.jobs import Job
from myna.backends.crm.objects import BY_PREFIX, OBJECTS
from myna.backends.crm.rules import Rules, model_rules
from myna.errors import MockError
from myna.mocks.extensions import Extension, Route, RouteCall
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.query import And, Condition, Filter, Query, SortKey
from myna.mocks.rejection import Rejection
from myna.mocks.store import Record, Transaction
from myna.mocks.validation import is_json_media_type, parse_json_body
from myna.schemas.model import ServiceModel
from myna.traces.model import Body

if TYPE_CHECKING:
    from myna.mocks.runtime import Mock

DATA: Final = "/services/data/{version}"
TOKEN_PATH: Final = "/services/oauth2/token"
# Salesforce keeps at most ten query cursors open per user; opening another drops the oldest.
OPEN_CURSORS: Final = 10
# The org only checks that a session is known; the runtime has authenticated the caller already.
_RUNTIME_SESSION: Final = "authenticated-by-the-runtime"
T = TypeVar("T")
_JSON: Final = ("Content-Type", "application/json;charset=UTF-8")
_FORM: Final = "application/x-www-form-urlencoded"
_CSV: Final = "text/csv"
_WRITES: Final = frozenset({"POST", "PATCH", "PUT"})
_NO_BODY: Final = "The HTTP entity body is required, but this request has no entity body."


class StoredTable(MutableMapping[str, Row]):
    """One object's records as the org's code sees them: a dictionary of rows by Id.

    A row is read through the transaction the first time it is asked for (every row when the org
    iterates) and the org then changes it in place, as it changes its own dictionaries; `flush`
    writes back the rows that are new or changed. Rows missing a field (seeded through the
    model) get it as null, as the org stores every field.
    """

    def __init__(self, tx: Transaction, name: str) -> None:
        self.tx = tx
        self.name = name
        self._fields = OBJECTS[name].names
        self._soft = OBJECTS[name].soft_deleted
        self._rows: dict[str, Row] = {}
        self._deleted: set[str] = set()
        self._read: dict[str, Record] = {}  # as stored: shared with the store, never changed
        self._complete = False

    def _row(self, record_id: str) -> Row | None:
        row = self._rows.get(record_id)
        if row is not None or self._complete or record_id in self._deleted:
            return row
        stored = self.tx.get(self.name, record_id)
        return None if stored is None else self._keep(record_id, stored)

    def _keep(self, record_id: str, stored: Record) -> Row:
        row: Row = dict.fromkeys(self._fields)
        if self._soft:
            row["IsDeleted"] = False
        row.update(stored)
        self._read[record_id] = stored
        self._rows[record_id] = row
        return row

    def _load_all(self) -> None:
        if self._complete:
            return
        stored, _ = self.tx.list(self.name, Query())
        for record in stored:
            record_id = str(record["Id"])
            if record_id not in self._rows and record_id not in self._deleted:
                self._keep(record_id, record)
        self._complete = True

    def __getitem__(self, record_id: str) -> Row:
        row = self._row(record_id)
        if row is None:
            raise KeyError(record_id)
        return row

    def __setitem__(self, record_id: str, row: Row) -> None:
        self._rows[record_id] = row

    def __delitem__(self, record_id: str) -> None:
        # Data objects are deleted softly (IsDeleted): only setup objects' rows go.
        if self._soft:
            raise MockError(f"the org removed {self.name} {record_id}; it only marks rows deleted")
        if self._row(record_id) is None:
            raise KeyError(record_id)
        del self._rows[record_id]
        self._deleted.add(record_id)

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return iter(list(self._rows))

    def where(self, field_name: str, value: str) -> list[Row]:
        """The rows whose `field_name` is `value`: the store's (found by its index, as they
        were when this request began) and the ones this request holds, as it changed them."""
        stored, _ = self.tx.list(self.name, Query(where=Condition(field_name, "=", value)))
        ids = dict.fromkeys([*(str(record["Id"]) for record in stored), *self._rows])
        rows = (self._row(record_id) for record_id in ids)
        return [row for row in rows if row is not None and row.get(field_name) == value]

    def __len__(self) -> int:
        self._load_all()
        return len(self._rows)

    def mark(self) -> tuple[dict[str, Row], set[str], bool]:
        """This request's rows and deletions as they are now (see `back_to`)."""
        return (
            {key: dict(row) for key, row in self._rows.items()},
            set(self._deleted),
            self._complete,
        )

    def back_to(self, mark: tuple[dict[str, Row], set[str], bool]) -> None:
        """The rows as `mark` found them: what the request changed since is forgotten."""
        rows, deleted, complete = mark
        self._rows = {key: dict(row) for key, row in rows.items()}
        self._deleted = set(deleted)
        self._complete = complete

    def removes(self) -> bool:
        """Whether `flush` deletes rows of the store (not rows this request made and dropped)."""
        return bool(self._deleted) and not self._deleted.isdisjoint(self._read)

    def flush(self) -> None:
        for record_id in self._deleted:
            if record_id in self._read:
                self.tx.delete(self.name, record_id)
        for record_id, row in self._rows.items():
            stored = self._read.get(record_id)
            if stored is None:
                self.tx.insert(self.name, record_id, row)
            elif stored != row:
                self.tx.update(self.name, record_id, row)


@dataclass(frozen=True, slots=True)
class Kept(Generic[T]):
    """A cursor or a job, and the value its world's sequence `crm.<kind>.<key>` had when the
    org made it."""

    value: T
    mark: int


class Cursors(OrderedDict[str, Kept[Cursor]]):
    """A world's open query cursors in this process, the oldest dropped past Salesforce's
    limit."""

    def __setitem__(self, locator: str, opened: Kept[Cursor]) -> None:
        super().__setitem__(locator, opened)
        while len(self) > OPEN_CURSORS:
            self.popitem(last=False)


@dataclass(slots=True)
class Memory:
    """What a world's org remembers between requests in this process: cursors and jobs."""

    cursors: Cursors = field(default_factory=Cursors)
    jobs: dict[str, Kept[Job]] = field(default_factory=dict)


# Cursors and jobs are a server's memory, not records: they live beside each mock's worlds.
_MEMORY: weakref.WeakKeyDictionary[Mock, dict[str, Memory]] = weakref.WeakKeyDictionary()


def memory_of(mock: Mock, world: str) -> Memory:
    return _MEMORY.setdefault(mock, {}).setdefault(world, Memory())


def cursors_of(mock: Mock, world: str) -> Cursors:
    return memory_of(mock, world).cursors


class WorldMemory(MutableMapping[str, T]):
    """A world's open cursors (or jobs) as one request sees them.

    Making one starts a sequence of the world's named after it; a reset drops a world's
    sequences (in whichever process resets it), so one whose sequence has since restarted
    belongs to the world's previous life and is gone, however long this process kept it.
    """

    def __init__(self, tx: Transaction, kept: MutableMapping[str, Kept[T]], kind: str) -> None:
        self.tx = tx
        self.kept = kept
        self.kind = kind

    def _mark(self, key: str) -> str:
        return f"crm.{self.kind}.{key}"

    def __setitem__(self, key: str, value: T) -> None:
        self.kept[key] = Kept(value, self.tx.next_sequence(self._mark(key), 1))

    def __getitem__(self, key: str) -> T:
        kept = self.kept[key]
        # A sequence the world no longer has starts again at 0, below any mark.
        if self.tx.next_sequence(self._mark(key), 0) <= kept.mark:
            del self.kept[key]
            raise KeyError(key)
        return kept.value

    def __delitem__(self, key: str) -> None:
        del self.kept[key]

    def __iter__(self) -> Iterator[str]:
        return iter([key for key in list(self.kept) if key in self])

    def __contains__(self, key: object) -> bool:
        try:
            self[str(key)]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return len(list(iter(self)))


# The rules a mock's model states, read from it once.
_RULES: weakref.WeakKeyDictionary[Mock, Rules] = weakref.WeakKeyDictionary()


def rules_of(mock: Mock) -> Rules:
    rules = _RULES.get(mock)
    if rules is None:
        rules = _RULES[mock] = model_rules(mock.model)
    return rules


def check(model: ServiceModel) -> None:
    """Refuse, when the mock is built, a model whose rules the org cannot apply (a ModelError
    naming where), so no request meets it."""
    model_rules(model)


class StoredOrg(Org):
    """The reference org over one request's transaction, acting as the user `principal` names
    (see `acting_user`)."""

    def __init__(self, call: RouteCall, principal: str) -> None:
        self.tx = call.transaction()
        self.tables = {name: StoredTable(self.tx, name) for name in OBJECTS}
        self._started: set[str] = set()
        moment = datetime.fromtimestamp(int(call.mock.clock()), tz=UTC).replace(tzinfo=None)
        # The runtime's principal is a user name or, for a configured session, the word
        # "token"; a User's Username is an e-mail address.
        username = principal if "@" in principal else f"{principal}@crm.myna.invalid"
        memory = memory_of(call.mock, call.world)
        super().__init__(
            call.request.base_url,
            moment,
            rows=self.tables,
            cursors=WorldMemory(self.tx, memory.cursors, "cursor"),
            jobs=WorldMemory(self.tx, memory.jobs, "job"),
            api_calls=self.tx.next_sequence("crm.api_calls", 1) - 1,
            admin=(username, "", principal.partition("@")[0]),
            rules=rules_of(call.mock),
        )
        self.sessions[_RUNTIME_SESSION] = self.admin_id

    def acting_user(self, username: str, first: str, last: str) -> str:
        """The world's user the caller acts as, written nowhere: the user whose Username the
        principal names, else the org's administrator (`administrator`). Only a world with no
        user at all gets one, its first user, as an org is never without one."""
        return (
            self.find_user(username)
            or self.administrator()
            or self._first_user(username, first, last)
        )

    def administrator(self) -> str | None:
        """The org's first active System Administrator (by Id); in a world without one, its
        first active user, else its first user; None in a world without users."""
        profile = self.find_profile(ADMIN_PROFILE)
        active = Condition("IsActive", "=", True)
        choices: list[Filter | None] = [active, None]
        if profile is not None:
            choices.insert(0, And((Condition("ProfileId", "=", profile), active)))
        for where in choices:
            found, _ = self.tx.list("User", Query(where=where, order_by=(SortKey("Id"),), limit=1))
            if found:
                return str(found[0]["Id"])
        return None

    def where(self, name: str, field_name: str, value: str) -> list[Row]:
        return self.tables[name].where(field_name, value)

    def savepoint(self) -> Callable[[], None]:
        """The request's rows as they are now (what it read and changed, not every record)."""
        marks = {name: table.mark() for name, table in self.tables.items()}

        def restore() -> None:
            for name, table in self.tables.items():
                table.back_to(marks[name])

        return restore

    def first(self, name: str, field_name: str, value: str) -> str | None:
        # Every request looks its caller up (and a new caller its profile): by the store's
        # filter, not by reading every record.
        wanted = Query(where=Condition(field_name, "=", value), limit=1)
        found, _ = self.tx.list(name, wanted)
        return str(found[0]["Id"]) if found else None

    def next_number(self, name: str) -> int:
        """The next number of the world's sequence `name`. A sequence of ids or case numbers
        starts past every number the world's records hold (a seeded world's), read the first
        time the world uses it, and only counts up after that: a number is never handed out
        twice, even once its record is gone (see `flush`)."""
        start = 1
        if (name in BY_PREFIX or name == "CaseNumber") and self._first_use(name):
            start = self._highest(name) + 1
        return self.tx.next_sequence(f"crm.{name}", start)

    def _first_use(self, name: str) -> bool:
        """Whether the world (or the snapshot it stands on) never used sequence `name`: its
        marker sequence counts the requests that asked, once per request."""
        if name in self._started:
            return False
        self._started.add(name)
        return self.tx.next_sequence(f"crm.{name}.started", 1) == 1

    def _highest(self, name: str) -> int:
        """The largest number of sequence `name` among the world's records: the case numbers
        past the org's first, or the ids of the object with that key prefix the org minted."""
        if name == "CaseNumber":
            found, _ = self.tx.list("Case", Query(fields=("CaseNumber",)))
            numbers = [str(record.get("CaseNumber") or "") for record in found]
            return max((int(n) - CASE_NUMBER_BASE for n in numbers if n.isdigit()), default=0)
        found, _ = self.tx.list(BY_PREFIX[name], Query(fields=("Id",)))
        minted = (id_number(str(record["Id"]), name) for record in found)
        return max((number for number in minted if number is not None), default=0)

    def flush(self) -> None:
        for name, table in self.tables.items():
            prefix = OBJECTS[name].key_prefix
            if table.removes() and self._first_use(prefix):
                # Start the object's id sequence while the world still holds the rows that go,
                # so it starts past them.
                self.tx.next_sequence(f"crm.{prefix}", self._highest(prefix) + 1)
        for table in self.tables.values():
            table.flush()


def serve(call: RouteCall) -> MockResponse:
    """Any Salesforce data or Apex REST call: the org answers, then its writes are stored."""
    return _answer(call, call.user())


def serve_async(call: RouteCall) -> MockResponse:
    """A Bulk API 1.0 call, whose session comes in the `X-SFDC-Session` header: the runtime's
    authenticator decides as for a bearer token; a refusal is Bulk API 1.0's own shape."""
    session = call.request.headers.get("x-sfdc-session", "")
    principal = call.mock.auth.principal({"authorization": f"Bearer {session}"}, call.world)
    if principal is None:
        refused = {"exceptionCode": "InvalidSessionId", "exceptionMessage": "Invalid session id"}
        return MockResponse(400, [_JSON], payload=refused)
    return _answer(call, principal)


def api_versions(call: RouteCall) -> MockResponse:
    """`GET /services/data/`: the versions, which a client asks before it has a session."""
    return MockResponse(200, [_JSON], payload=versions())


def _answer(call: RouteCall, principal: str) -> MockResponse:
    org = StoredOrg(call, principal)
    try:
        reply = org.answer(org_request(call.request, call.world))
    except Refused as refusal:
        raise rejection(refusal) from None
    org.flush()
    return response(reply)


def org_request(request: MockRequest, world: str) -> Request:
    """The runtime's request as the org reads it, relative to the world's instance URL."""
    path = request.path
    prefix = f"/worlds/{world}"
    if path.startswith(prefix + "/"):
        path = path[len(prefix) :]
    headers = list(request.headers.items())
    return Request(
        request.method.upper(),
        path,
        list(request.query),
        _body(request),
        _RUNTIME_SESSION,
        headers,
    )


def _body(request: MockRequest) -> Body:
    """The body as the org reads it: JSON through the runtime's one hardened parser, a form
    (the OAuth token endpoint) as text. Bytes that are not acceptable JSON (malformed, nested
    too deep, holding NUL) reach the org as text, which it answers with JSON_PARSER_ERROR, as
    Salesforce answers a write without a body; any other media type is Salesforce's 415."""
    raw = request.body
    if not raw.strip():
        if request.method.upper() in _WRITES:
            raise Refused(400, "JSON_PARSER_ERROR", _NO_BODY, None)
        return Body()
    content_type = request.headers.get("content-type", "")
    if _FORM in content_type.lower() or _CSV in content_type.lower():
        # A form (the OAuth token endpoint) or a bulk upload's CSV: text, as the org reads it.
        media = _FORM if _FORM in content_type.lower() else _CSV
        return Body("text", raw.decode("utf-8", "replace"), media)
    if content_type and not is_json_media_type(content_type):
        media = content_type.partition(";")[0].strip()
        raise Refused(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            f"Content-Type header specified in HTTP request is not supported: {media}",
            None,
        )
    try:
        return Body("json", parse_json_body(raw, status=400), _JSON[1])
    except Rejection:
        return Body("text", raw.decode("utf-8", "replace"), "text/plain")


def response(reply: Reply) -> MockResponse:
    if reply.body.kind == "empty":
        return MockResponse(reply.status, list(reply.headers))
    if reply.body.kind == "text":
        text = str(reply.body.value)
        return MockResponse(reply.status, list(reply.headers), body=text.encode("utf-8"))
    return MockResponse(reply.status, list(reply.headers), payload=reply.body.value)


def rejection(refusal: Refused) -> Rejection:
    """A refusal as the runtime answers it: Salesforce's error list, verbatim."""
    headers = (("WWW-Authenticate", "Token"),) if refusal.status == 401 else ()
    return Rejection(
        refusal.status,
        refusal.message,
        code=refusal.code,
        fields=tuple(refusal.fields or ()),
        headers=headers,
        body=refusal.body(),
    )


def token(call: RouteCall) -> MockResponse:
    """`POST /services/oauth2/token`: the runtime's credentials decide; Salesforce's shape."""
    form = dict(parse_qsl(call.request.body.decode("utf-8", "replace"))) | dict(call.request.query)
    issued = call.mock.auth.issue_token(form, call.request.base_url, call.world)
    if issued is None:
        refused = {"error": "invalid_grant", "error_description": "authentication failure"}
        return MockResponse(400, [_JSON], payload=refused)
    username = form.get("username") or form.get("client_id", "")
    org = StoredOrg(call, username)
    org.logged_in(org.admin_id)
    session = str(issued["access_token"])
    answer = token_answer(org, session, org.admin_id, "")
    answer["signature"] = signature(session, answer["id"], answer["issued_at"])
    org.flush()
    return MockResponse(200, [_JSON], payload=answer)


def signature(key: str, identity: str, issued_at: str) -> str:
    """Salesforce signs the identity URL and issue time (HMAC-SHA256, base64) so a client can
    tell the answer was not altered; the session is the key the mock has."""
    digest = hmac.new(key.encode(), (identity + issued_at).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


def unrouted(mock: Mock, request: MockRequest, path: str) -> Rejection | None:
    """Any other path under /services answers Salesforce's NOT_FOUND."""
    return rejection(not_found()) if path.startswith("/services/") else None


def _routes() -> tuple[Route, ...]:
    calls: tuple[tuple[str, str], ...] = (
        ("GET", f"{DATA}/sobjects"),
        ("GET", f"{DATA}/sobjects/{{object}}"),
        ("POST", f"{DATA}/sobjects/{{object}}"),
        ("GET", f"{DATA}/sobjects/{{object}}/describe"),
        ("GET", f"{DATA}/sobjects/{{object}}/{{id}}"),
        ("PATCH", f"{DATA}/sobjects/{{object}}/{{id}}"),
        ("DELETE", f"{DATA}/sobjects/{{object}}/{{id}}"),
        ("GET", f"{DATA}/sobjects/{{object}}/{{field}}/{{value}}"),
        ("PATCH", f"{DATA}/sobjects/{{object}}/{{field}}/{{value}}"),
        ("GET", f"{DATA}/query"),
        ("GET", f"{DATA}/query/{{locator}}"),
        ("GET", f"{DATA}/queryAll"),
        ("GET", f"{DATA}/queryAll/{{locator}}"),
        ("GET", f"{DATA}/search"),
        ("GET", f"{DATA}/limits"),
        ("POST", "/services/apexrest/LeadConvert/{id}"),
        ("GET", DATA),
        ("GET", f"{DATA}/sobjects/{{object}}/updated"),
        ("GET", f"{DATA}/sobjects/{{object}}/deleted"),
        *_COMPOSITE,
        *_JOBS,
    )
    return (
        *(Route(method, path, serve) for method, path in calls),
        *(Route(method, path, serve_async, authenticated=False) for method, path in _ASYNC),
        Route("GET", "/services/data", api_versions, authenticated=False, transactional=False),
        Route("POST", TOKEN_PATH, token, authenticated=False),
    )


_COMPOSITE: Final = (
    ("POST", f"{DATA}/composite"),
    ("POST", f"{DATA}/composite/batch"),
    ("POST", f"{DATA}/composite/tree/{{object}}"),
    *((method, f"{DATA}/composite/sobjects") for method in ("POST", "PATCH", "DELETE")),
    ("GET", f"{DATA}/composite/sobjects/{{object}}"),
)
_JOBS: Final = (
    *(("POST", f"{DATA}/jobs/{kind}") for kind in ("ingest", "query")),
    *(("GET", f"{DATA}/jobs/{kind}") for kind in ("ingest", "query")),
    *(
        (method, f"{DATA}/jobs/{kind}/{{job}}")
        for kind in ("ingest", "query")
        for method in ("GET", "PATCH", "DELETE")
    ),
    ("PUT", f"{DATA}/jobs/ingest/{{job}}/batches"),
    *(
        ("GET", f"{DATA}/jobs/ingest/{{job}}/{what}")
        for what in ("successfulResults", "failedResults", "unprocessedrecords")
    ),
    ("GET", f"{DATA}/jobs/query/{{job}}/results"),
)
_BULK: Final = "/services/async/{version}/job"
_ASYNC: Final = (
    ("POST", _BULK),
    ("GET", f"{_BULK}/{{job}}"),
    ("POST", f"{_BULK}/{{job}}"),
    *((method, f"{_BULK}/{{job}}/batch") for method in ("GET", "POST")),
    ("GET", f"{_BULK}/{{job}}/batch/{{batch}}"),
    ("GET", f"{_BULK}/{{job}}/batch/{{batch}}/request"),
    ("GET", f"{_BULK}/{{job}}/batch/{{batch}}/result"),
    ("GET", f"{_BULK}/{{job}}/batch/{{batch}}/result/{{result}}"),
)


SALESFORCE = Extension(
    name="salesforce",
    routes=_routes(),
    unrouted=unrouted,
    check=check,
    # An opportunity's products, summed into its Amount on every change of one (`_roll_up`),
    # the records a delete takes with it (`CASCADES`), and values of unique fields (a create
    # or an upsert by external id finds the record holding one).
    lookups=frozenset(
        {("OpportunityLineItem", "OpportunityId")}
        | {(child, field) for cascades in CASCADES.values() for child, field in cascades}
        | {(obj.name, spec.name) for obj in OBJECTS.values() for spec in obj.fields if spec.unique}
    ),
)
