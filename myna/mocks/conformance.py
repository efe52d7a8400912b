"""Conformance: does a mock answer the recorded requests the way the recorded service did?

`run_conformance(model, sessions)` seeds a base snapshot with every record the recorded
responses show (keyed by the model's resources and id fields), opens one world per session on
it, replays each recorded request through the in-process client and compares the answer with the
recording: the same status, and a body that validates against the recorded body's structure
(the same JSON types, the same keys present; values may differ). Every mismatch keeps its reason.

Two details keep the comparison fair:
- Records the trace creates are not seeded; when the replayed create mints a different id than
  the recorded one, later requests in the session are rewritten to use the new id.
- Credentials in recordings are redacted, so each request that carried one carries the mock's
  own credential for the learned scheme (a token request its own grant, a refresh the refresh
  token the mock issued last); a request recorded without one, or that the service refused
  with 401, is replayed without one.
- A record a successful item request addresses (a lock put on issue 9, a delete answered 204)
  was held when the session began, whether or not an answer showed it: it is seeded by its id.

What the responses show is not always all the instance held: records it had before the trace
began but never sent (the user the client signs in as, whom the service stamps as `opened_by`)
come from seed files (`seed_dir`, read as `myna serve --seed-dir` reads them), loaded into the
same base snapshot, and `user` names the principal the replay signs in as.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from myna.errors import MockError
from myna.mocks.auth import Credentials, credential_headers
from myna.mocks.router import Match, Router
from myna.mocks.seed import read_files, with_recorded
from myna.mocks.store import Record
from myna.schemas.model import Operation, Resource, ServiceModel
from myna.schemas.records import receipt_id, view_of
from myna.schemas.signing import signed
from myna.schemas.values import spells_int
from myna.traces.model import Body, Exchange, Session
from myna.traces.redact import is_redacted

__all__ = [
    "ConformanceReport",
    "Mismatch",
    "body_schema",
    "conformance_command",
    "first_violation",
    "recorded_records",
    "run_conformance",
]

_DROPPED_HEADERS = frozenset(
    {"authorization", "cookie", "host", "content-length", "connection", "accept-encoding"}
)
DEFAULT_USER = "conformance"
_MOCK_SECRET = "conformance-secret"
_MOCK_TOKEN = "conformance-token"


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One recorded exchange the mock answered differently, and why."""

    session: str
    exchange: str
    method: str
    path: str
    recorded_status: int
    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """How many replayed exchanges matched the recording, and each one that did not.

    `skipped` lists exchanges outside the model's service (other hosts), with the reason; they
    count neither way.
    """

    total: int
    matched: int
    mismatches: list[Mismatch] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seeded: dict[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return self.matched / self.total if self.total else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "matched": self.matched,
            "share": round(self.share, 4),
            "seeded": self.seeded,
            "mismatches": [asdict(m) for m in self.mismatches],
            "skipped": [{"exchange": e, "reason": r} for e, r in self.skipped],
        }


def run_conformance(
    model: ServiceModel,
    sessions: Iterable[Session],
    *,
    store_url: str = "sqlite://",
    any_host: bool = False,
    one_world: bool = False,
    seed_dir: Path | None = None,
    user: str = DEFAULT_USER,
    on_session: Callable[[int, int], None] | None = None,
) -> ConformanceReport:
    """Seed, replay and compare (see the module docstring).

    Exchanges with another host than the model's servers are skipped, unless `any_host`: then a
    recording of another instance of the same service (a built-in back end against a real
    instance's traffic) is compared by path alone. Each session replays in a world of its own,
    unless `one_world`: sessions recorded one after another against one instance, where later
    ones use records earlier ones created, replay in order in one world. `seed_dir` adds the
    records of its seed files to the recorded ones; `user` is who the replay signs in as.
    `on_session(done, total)` is told after each session replayed (a progress bar).
    """
    sessions = list(sessions)
    run = _Run(model, sessions, one_world=one_world, user=user)
    records = run.seed_records(seed_dir)
    run.open(store_url, records)
    try:
        hosts = set() if any_host else _service_hosts(model)
        for number, session in enumerate(sessions):
            run.start_session(number, records)
            for exchange in session.exchanges:
                if hosts and exchange.host not in hosts:
                    run.skipped.append((exchange.id, f"host {exchange.host} is not the service's"))
                elif not _under(exchange.path, model.base_path):
                    # Another service of the same host, learned as a model of its own.
                    run.skipped.append((exchange.id, f"path is outside {model.base_path}"))
                else:
                    run.replay_exchange(session, exchange)
            if on_session is not None:
                on_session(number + 1, len(sessions))
        return ConformanceReport(
            run.total, run.matched, run.mismatches, run.skipped, run.held_before(records)
        )
    finally:
        run.close()


class _Run:
    """One conformance run: its store and mock, the world each session replays in, and the
    tally (see `run_conformance`)."""

    def __init__(
        self, model: ServiceModel, sessions: list[Session], *, one_world: bool, user: str
    ) -> None:
        self.model = model
        self.routes = _routes(model)
        self.one_world = one_world
        self.sighted = _sightings(model, sessions, self.routes)
        # Who each session signs in as: whom its records name as their caller, unless a user
        # was given (the recordings' credentials are redacted, their stamps are not).
        self.users = [
            user if user != DEFAULT_USER else _top(self.sighted.callers.get(number), user)
            for number in range(len(sessions))
        ]
        self.replay = _Replay(model, user, users=frozenset(self.users or [user]))
        self.total = self.matched = 0
        self.mismatches: list[Mismatch] = []
        self.skipped: list[tuple[str, str]] = []
        self.renamed: dict[str, str] = {}
        self.world = ""

    def seed_records(self, seed_dir: Path | None) -> dict[RecordKey, Record]:
        """What the base snapshot holds: every recorded record (in one world, all but those
        the sessions make), with the seed files' records."""
        sighted = self.sighted
        records = sighted.records
        if self.one_world:
            made = set().union(*sighted.made.values()) if sighted.made else set()
            records = {key: record for key, record in records.items() if key not in made}
        if seed_dir is not None:
            records = _with_seed_files(self.model, seed_dir, records)
        return records

    def held_before(self, records: dict[RecordKey, Record]) -> dict[str, int]:
        """Records per resource the instance held before the recordings (none a session made)."""
        made = set().union(*self.sighted.made.values()) if self.sighted.made else set()
        seeded: dict[str, int] = {}
        for key in records.keys() - made:
            seeded[key[0]] = seeded.get(key[0], 0) + 1
        return dict(sorted(seeded.items()))

    def open(self, store_url: str, records: dict[RecordKey, Record]) -> None:
        from myna.mocks.runtime import Mock
        from myna.mocks.sqlstore import SqlStore

        # Tables of its own, dropped afterwards: a run never meets an earlier run's state, even
        # on a shared PostgreSQL database.
        self.store = SqlStore(
            self.model, store_url, prefix=f"myna_conformance_{uuid.uuid4().hex[:8]}_"
        )
        data = with_recorded(
            self.model,
            ((name, record_id, record) for (name, record_id), record in records.items()),
            seed=0,
        )
        self.snapshot = self.store.load_base(data.records, "recorded", sequences=data.sequences)
        self.mock = Mock(self.model, self.store, credentials=self.replay.credentials)

    def close(self) -> None:
        store = getattr(self, "store", None)
        if store is not None:
            store.drop()

    def start_session(self, number: int, records: dict[RecordKey, Record]) -> None:
        from myna.mocks.client import MockClient

        replay = self.replay
        if not self.one_world or number == 0:
            self.world = "conformance" if self.one_world else f"conformance-{number}"
            self.store.create_world(self.world, from_snapshot=self.snapshot)
            self.renamed = {}
            replay.refresh_token = None
        if not self.one_world:
            # The session's world holds what other sessions made before or after it, but not
            # what the session makes itself: its creates must not clash with them.
            _forget(self.store, self.world, self.sighted.made.get(number, set()) & records.keys())
            _forget(self.store, self.world, self.sighted.unseen_by(number, records.keys()))
            _restore(self.model, self.store, self.world, self.sighted.found_by(number))
        replay.user = self.users[number]
        # A bearer token the mock issued to the user, as the recorded client used the one its
        # login gave it: requests act as that user, not as an anonymous configured token.
        replay.token = self.mock.auth.grant(replay.user)
        self.client = MockClient(self.mock, world=self.world)

    def replay_exchange(self, session: Session, exchange: Exchange) -> None:
        replay = self.replay
        renamed = self.renamed
        self.total += 1
        response = self.client.request(
            exchange.method,
            _renamed(exchange.path, renamed),
            params=[(k, _renamed(v, renamed)) for k, v in exchange.query],
            headers=replay.headers(exchange),
            content=replay.token_form(exchange) or _renamed_body(exchange.request_body, renamed),
        )
        replayed = _json_or_none(response)
        replay.note_refresh_token(exchange, replayed)
        if response.status == exchange.status:
            # Ids follow the record whatever its body looked like, so one mismatch in a create's
            # answer does not turn every later call on that record into one.
            _learn_new_ids(self.model, self.routes, exchange, replayed, renamed)
        reason = _compare(exchange, response.status, replayed)
        if reason is None:
            self.matched += 1
            return
        self.mismatches.append(
            Mismatch(
                session.id,
                exchange.id,
                exchange.method,
                exchange.path,
                exchange.status,
                response.status,
                reason,
            )
        )


def _top(counts: Counter[str] | None, default: str) -> str:
    if not counts:
        return default
    return min(counts, key=lambda value: (-counts[value], value))


def recorded_records(
    model: ServiceModel, sessions: Iterable[Session], routes: Router[Operation] | None = None
) -> dict[tuple[str, str], Record]:
    """Every record the recorded successful responses show, before the trace changed it.

    A record seen several times keeps its first values, completed by fields only later
    sightings show (a projected list, then a full get). Records that a recorded create made are
    left out: the replay creates them. Display-value responses (labels instead of ids) are not
    used.
    """
    sighted = _sightings(model, sessions, routes or _routes(model))
    made = set().union(*sighted.made.values()) if sighted.made else set()
    return {key: record for key, record in sighted.records.items() if key not in made}


RecordKey = tuple[str, str]


@dataclass(slots=True)
class _Sighted:
    """Every record the recordings show, and how each session found and left them.

    `records` holds each record's first sighting, completed by fields only later sightings show
    (a projected list, then a full get); `made` the keys each session's creates made; `at_start`
    the records a session shows as the sessions before it last showed them, so that a session
    replayed in a world of its own starts where the instance was (an incident an earlier session
    moved to In Progress is in progress)."""

    records: dict[RecordKey, Record] = field(default_factory=dict)
    made: dict[int, set[RecordKey]] = field(default_factory=dict)
    at_start: dict[int, dict[RecordKey, Record]] = field(default_factory=dict)
    first_read: dict[int, dict[RecordKey, Record]] = field(default_factory=dict)
    """Each record as a session first showed it, when that was in a read's answer: what the
    instance held when a recording that stands alone began."""
    shown: dict[int, set[RecordKey]] = field(default_factory=dict)
    listed: dict[int, set[str]] = field(default_factory=dict)
    """The resources each session listed: their records it did not show were not there."""
    named: dict[int, set[str]] = field(default_factory=dict)
    """Every value each session's exchanges carry (path segments, query values, body scalars)."""
    callers: dict[int, Counter[str]] = field(default_factory=dict)
    """The ids each session's creates were stamped with as their caller (`stamp: caller`)."""
    current: dict[RecordKey, Record] = field(default_factory=dict)
    changed_by: dict[RecordKey, int] = field(default_factory=dict)
    addressed: dict[RecordKey, Record] = field(default_factory=dict)
    """Records a successful request's path addressed (a lock put on issue 1, a transition),
    as their id alone: the service held them, whether or not an answer showed them."""

    def settle(self, model: ServiceModel) -> None:
        """Take each addressed record no answer showed and no session made as a record the
        instance held from the start. A path may name a record by a key (`JJJ-9` for issue
        10050): a record shown holding that key is the one addressed."""
        made = set().union(*self.made.values()) if self.made else set()
        keyed = {
            (name, str(record[key]))
            for (name, _), record in self.records.items()
            for key in model.resources[name].keys
            if record.get(key) is not None
        }
        for key, record in self.addressed.items():
            if key not in made and key not in keyed:
                self.records.setdefault(key, record)

    def take(self, number: int, key: RecordKey, record: Record, *, made: bool, read: bool) -> None:
        if made and key not in self.records:
            self.made.setdefault(number, set()).add(key)
        shown = self.shown.setdefault(number, set())
        if key not in shown:
            shown.add(key)
            if read:
                self.first_read.setdefault(number, {})[key] = dict(record)
        known = self.records.setdefault(key, {})
        for name, value in record.items():
            known.setdefault(name, value)
        current = self.current.get(key)
        if current is None:
            self.current[key] = dict(record)
            self.changed_by[key] = number
            return
        last = self.changed_by[key]
        if last != number:
            # First sighting in this session of a record an earlier session showed last.
            self.at_start.setdefault(number, {}).setdefault(key, dict(current))
        current.update(record)
        self.changed_by[key] = number

    def unseen_by(self, number: int, keys: Iterable[RecordKey]) -> set[RecordKey]:
        """Records other sessions showed of a resource this session listed without showing
        them, and whose id its requests never name: not there when it was recorded (a
        recording from another year lists other projects)."""
        listed = self.listed.get(number, set())
        shown = self.shown.get(number, set())
        named = self.named.get(number, set())
        return {
            key for key in keys if key[0] in listed and key not in shown and key[1] not in named
        }

    def found_by(self, number: int) -> dict[RecordKey, Record]:
        """Records as the session found them: as it first read them, else as the sessions
        before it last showed them."""
        found = {key: dict(record) for key, record in self.at_start.get(number, {}).items()}
        for key, record in self.first_read.get(number, {}).items():
            found.setdefault(key, {}).update(record)
        return found


def _forget(store: Any, world: str, keys: set[RecordKey]) -> None:
    if not keys:
        return
    with store.transaction(world) as tx:
        for resource, record_id in sorted(keys):
            tx.delete(resource, record_id)


def _restore(model: ServiceModel, store: Any, world: str, records: dict[RecordKey, Record]) -> None:
    """Put records back as a session found them (see `_Sighted.at_start`)."""
    if not records:
        return
    data = with_recorded(
        model, ((name, record_id, record) for (name, record_id), record in records.items()), seed=0
    )
    with store.transaction(world) as tx:
        for name, record_id, record in data.records:
            sighted = records.get((name, record_id))
            held = tx.get(name, record_id)
            # A row an extension derives from a sighted one (a CI's `cmdb_ci` row) was not seen.
            if held is not None and sighted is not None:
                # Only the fields the sighting showed: a projected list says nothing of others.
                shown = sighted.keys()
                tx.update(
                    name, record_id, {**held, **{k: v for k, v in record.items() if k in shown}}
                )


def _sightings(
    model: ServiceModel, sessions: Iterable[Session], routes: Router[Operation]
) -> _Sighted:
    """The records of every successful recorded answer, keyed by (resource, id) (`_Sighted`)."""
    sighted = _Sighted()
    for number, session in _chronological(sessions):
        sighted.made.setdefault(number, set())
        named = sighted.named.setdefault(number, set())
        for exchange in session.exchanges:
            named.update(_exchange_values(exchange))
            _take_exchange(model, routes, sighted, number, exchange)
            _take_address(model, routes, sighted, exchange)
    sighted.settle(model)
    return sighted


_ADDRESSING_KINDS = frozenset({"get", "update", "replace", "delete", "action"})


def _take_address(
    model: ServiceModel, routes: Router[Operation], sighted: _Sighted, exchange: Exchange
) -> None:
    """Note the record a successful item request's path names (`_Sighted.addressed`). Not an
    upsert's: the record it names by an external id may be one it made (201, a receipt)."""
    if not 200 <= exchange.status < 300 or exchange.status == 201:
        return
    if receipt_id(exchange.response_body.value) is not None:
        return
    found = routes.match(exchange.method, exchange.path)
    if not isinstance(found, Match) or found.target.kind not in _ADDRESSING_KINDS:
        return
    resource = model.resources.get(found.target.resource or "")
    record_id = _path_id(found, resource) if resource is not None else None
    value = _as_id(resource, record_id) if resource is not None and record_id else None
    if resource is not None and record_id and value is not None:
        sighted.addressed.setdefault((resource.name, record_id), {resource.id_field: value})


def _as_id(resource: Resource, value: str) -> str | int | None:
    """A path's id as the record holds it: a number where the id field is one; None when the
    value cannot be one (a commit's `000...1` where ids are numbers, an external id `AC-7001`
    where ids match `001[A-Za-z0-9]{15}`, names something else)."""
    pattern = resource.id_format.pattern
    if pattern is not None and re.fullmatch(pattern, value) is None:
        return None
    spec = resource.fields.get(resource.id_field)
    if spec is None or spec.schema_.get("type") != "integer":
        return value
    return int(value) if spells_int(value) and str(int(value)) == value else None


def _chronological(sessions: Iterable[Session]) -> list[tuple[int, Session]]:
    """Sessions numbered as given, in the order they were recorded when every one says when
    (recordings kept a file per test are sorted by name, not date); else as given."""
    numbered = list(enumerate(sessions))
    starts = [_started(session) for _, session in numbered]
    if any(start is None for start in starts):
        return numbered
    order = sorted(range(len(numbered)), key=lambda index: (starts[index], index))
    return [numbered[index] for index in order]


def _started(session: Session) -> datetime | None:
    times = [e.started_at for e in session.exchanges if e.started_at is not None]
    return min(times) if times else None


def _exchange_values(exchange: Exchange) -> Iterator[str]:
    """The values an exchange names a record by: its path segments, query values and the
    scalars of both bodies (a reference in an answer names the record it points to)."""
    yield from (segment for segment in exchange.path.split("/") if segment)
    yield from (value for _, value in exchange.query)
    pending = [exchange.request_body.value, exchange.response_body.value]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif value is not None:
            yield str(value)


def _take_exchange(
    model: ServiceModel,
    routes: Router[Operation],
    sighted: _Sighted,
    number: int,
    exchange: Exchange,
) -> None:
    if not 200 <= exchange.status < 300 or not exchange.response_body.is_json:
        return
    if _asks_for_rendering(model, exchange):
        return
    found_route = routes.match(exchange.method, exchange.path)
    if not isinstance(found_route, Match):
        return
    operation = found_route.target
    if operation.resource not in model.resources:
        return
    resource = model.resources[operation.resource]
    receipt = receipt_id(exchange.response_body.value)
    if receipt is not None:
        # A write answered only with the id it made is no record: it shows nothing of the
        # record's fields, but a create's answer says the trace made that record.
        if _creates(operation, exchange, receipt):
            sighted.made[number].add((resource.name, receipt[1]))
        return
    path_id = _path_id(found_route, resource)
    made = _creates(operation, exchange, None)
    read = operation.kind in ("list", "get") or exchange.method in ("GET", "HEAD")
    if operation.kind in ("list", "query"):
        sighted.listed.setdefault(number, set()).add(resource.name)
    for record in _records_in(model, operation, exchange.response_body.value):
        record_id = _id_of(resource, record)
        if record_id is None and path_id is not None and operation.kind != "list":
            # A projected item (`sysparm_fields=name`) lacks its id; the path has it.
            record_id = path_id
            record = {resource.id_field: path_id, **record}
        if record_id is None:
            continue
        sighted.take(number, (resource.name, record_id), record, made=made, read=read)
        if made:
            callers = _callers_named(resource, record)
        elif not read:
            callers = _callers_entered(resource, record)
        else:
            continue
        for caller in callers:
            sighted.callers.setdefault(number, Counter())[caller] += 1


def _callers_named(resource: Resource, record: Record) -> Iterator[str]:
    """The ids a created record names as its caller, in the fields the service stamps so."""
    for name, spec in resource.fields.items():
        if spec.stamp == "caller" and spec.reference is not None:
            yield from _referenced(record.get(name))


def _callers_entered(resource: Resource, record: Record) -> Iterator[str]:
    """The ids a written record names as whoever moved it into its state, in the fields the
    service stamps so on entering it (`StateMachine.callers_on_entry`: resolved_by)."""
    for machine in resource.state_machines:
        state = record.get(machine.field)
        if isinstance(state, str | int) and not isinstance(state, bool):
            for name in machine.callers_on_entry.get(str(state), ()):
                yield from _referenced(record.get(name))


def _referenced(value: Any) -> Iterator[str]:
    """The id a reference holds, bare or in an object."""
    if isinstance(value, dict):
        value = value.get("value", value.get("id"))
    if value not in (None, "") and not isinstance(value, dict | list):
        yield str(value)


def conformance_command(
    model: ServiceModel,
    traces: list[Path],
    *,
    json_output: bool,
    db: str = "sqlite://",
    any_host: bool = False,
    one_world: bool = False,
    seed_dir: Path | None = None,
    user: str = DEFAULT_USER,
) -> int:
    """The body of `myna conformance MODEL TRACES... [--json] [--db URL] [--seed-dir DIR]
    [--user NAME]`: print the report (a table, or JSON with `json_output`); return 0 when every
    exchange matched, 1 otherwise."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    from rich.table import Table

    from myna.traces import read_many
    from myna.traces.cli import with_progress

    columns = (TextColumn("[bold]replaying sessions"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("replaying", total=None)
        report = run_conformance(
            model,
            with_progress(read_many(traces), traces),
            store_url=db,
            any_host=any_host,
            one_world=one_world,
            seed_dir=seed_dir,
            user=user,
            on_session=lambda done, total: progress.update(task, completed=done, total=total),
        )
    if report.total == 0:
        hosts = ", ".join(sorted(_service_hosts(model))) or "none"
        raise MockError(
            f"no exchange in the traces belongs to the model's service (its hosts: {hosts}); "
            "pass --any-host to compare recordings of another instance by path",
            field="TRACES",
        )
    console = Console()
    if json_output:
        console.print_json(json.dumps(report.to_dict()))
    else:
        console.print(
            f"{report.matched}/{report.total} exchanges answered as recorded "
            f"({report.share:.1%}); seeded {sum(report.seeded.values())} records"
        )
        if report.mismatches:
            table = Table("exchange", "request", "recorded", "mock", "reason")
            for m in report.mismatches:
                table.add_row(
                    m.exchange,
                    f"{m.method} {m.path}",
                    str(m.recorded_status),
                    str(m.status),
                    m.reason,
                )
            console.print(table)
    return 0 if not report.mismatches else 1


# --- seeding -------------------------------------------------------------------------------


def _routes(model: ServiceModel) -> Router[Operation]:
    router: Router[Operation] = Router()
    for operation in model.operations:
        router.add(operation.method, operation.path, operation)
    return router


def _operation(routes: Router[Operation], exchange: Exchange) -> Operation | None:
    found = routes.match(exchange.method, exchange.path)
    return found.target if isinstance(found, Match) else None


def _path_id(found: Match[Operation], resource: Resource) -> str | None:
    """The record id a matched item path carries: the parameter named like the id field, or
    the last one."""
    if resource.id_field in found.params:
        return found.params[resource.id_field]
    values = list(found.params.values())
    return values[-1] if values else None


def _asks_for_rendering(model: ServiceModel, exchange: Exchange) -> bool:
    """Whether the request asked for another rendering of the records (labels in place of
    values), by the model's learned renderings or as the learner tells label answers (a back
    end whose extension renders learns none): such answers show no record as stored."""
    if view_of(exchange.query, []) != "values":
        return True
    sent = {name: value.lower() for name, value in exchange.query}
    return any(
        all(sent.get(name) == value.lower() for name, value in rendering.params.items())
        for rendering in model.conventions.renderings
    )


def _records_in(model: ServiceModel, operation: Operation, body: Any) -> Iterator[Record]:
    envelope = operation.envelope or model.envelope_of(operation.resource)
    key = envelope.list_key if operation.kind in ("list", "query") else envelope.item_key
    payload = body.get(key) if isinstance(body, dict) and key else body
    items = payload if isinstance(payload, list) else [payload]
    for item in items:
        if isinstance(item, dict):
            yield {
                k: v for k, v in item.items() if k != "attributes" or not envelope.record_attributes
            }


def _id_of(resource: Resource, record: Record) -> str | None:
    value = record.get(resource.id_field)
    if isinstance(value, dict):
        # A display-value answer (`sysparm_display_value=all`) wraps every field, the id too.
        value = value.get("value")
    return None if value is None or value == "" else str(value)


def _creates(operation: Operation, exchange: Exchange, receipt: tuple[str, str] | None) -> bool:
    """Whether the exchange made the record it answers with: a create, any POST answered 201
    Created (an upload the model does not know as a create), or a write whose receipt says it
    created the record (Salesforce's upsert by external id: `"created": true`)."""
    if operation.kind == "create" or (exchange.method == "POST" and exchange.status == 201):
        return True
    body = exchange.response_body.value
    return receipt is not None and isinstance(body, dict) and body.get("created") is True


def _with_seed_files(
    model: ServiceModel, directory: Path, recorded: dict[tuple[str, str], Record]
) -> dict[tuple[str, str], Record]:
    """The seed files' records, completed by fields only the recordings show, and every
    recorded record the files lack. A seed file is the instance as it was before the trace, so
    its values win over sightings the trace may already have changed."""
    combined: dict[tuple[str, str], Record] = {
        (name, record_id): dict(record)
        for name, record_id, record in read_files(model, directory).records
    }
    for key, record in recorded.items():
        known = combined.setdefault(key, {})
        for name, value in record.items():
            known.setdefault(name, value)
    return combined


def _under(path: str, base: str) -> bool:
    return not base or path == base or path.startswith(base.rstrip("/") + "/")


def _service_hosts(model: ServiceModel) -> set[str]:
    return {urlsplit(server).netloc for server in model.servers if urlsplit(server).netloc}


# --- replaying -----------------------------------------------------------------------------


_GRANT_SECRETS = {
    "password": "password",
    "client_credentials": "client_secret",
    "refresh_token": "refresh_token",
}


@dataclass(slots=True)
class _Replay:
    """How replayed requests sign in: as `user`, with the mock's own secrets where the recording
    has redacted ones. `refresh_token` is the last one the mock issued in this world; `token` is
    the bearer token requests carry (one the mock issued to `user`)."""

    model: ServiceModel
    user: str
    users: frozenset[str] = frozenset()
    refresh_token: str | None = None
    token: str = _MOCK_TOKEN

    @property
    def credentials(self) -> Credentials:
        users = dict.fromkeys({self.user, *self.users}, _MOCK_SECRET)
        return Credentials(users=users, tokens=frozenset({_MOCK_TOKEN}))

    def headers(self, exchange: Exchange) -> dict[str, str]:
        headers = {
            name.lower(): value
            for name, value in exchange.request_headers
            if name.lower() not in _DROPPED_HEADERS and not name.startswith(":")
        }
        auth = self.model.conventions.auth
        if exchange.status == auth.unauthorized_status or not signed(exchange.request_headers):
            # Replayed as recorded: a refused credential, or none at all (a public endpoint).
            return headers
        token = self.token if auth.scheme in ("bearer", "oauth2", "unknown") else _MOCK_TOKEN
        own = credential_headers(auth, user=self.user, password=_MOCK_SECRET, token=token)
        headers.update((name.lower(), value) for name, value in own.items())
        return headers

    def token_form(self, exchange: Exchange) -> bytes | None:
        """The mock's own grant for a recorded token request whose credentials were redacted
        (the whole form, or the secret in it), as every other request carries the mock's
        credential; None for any other request. A fully redacted form says nothing of its
        grant, so it becomes a password grant. A token request the service refused keeps its
        redacted secret, which the mock refuses too, as a refused credential is replayed
        without one."""
        if not self._is_token_call(exchange) or exchange.status >= 400:
            return None
        body = exchange.request_body
        text = "" if body.value is None else str(body.value)
        form = dict(parse_qsl(text)) if "=" in text else {}
        grant = form.get("grant_type", "password")
        if grant not in _GRANT_SECRETS:
            return None
        redacted = is_redacted(form.get(_GRANT_SECRETS[grant], "")) if form else is_redacted(text)
        if not redacted:
            return None
        if grant == "password":
            form |= {"grant_type": grant, "username": self.user, "password": _MOCK_SECRET}
        elif grant == "refresh_token":
            if self.refresh_token is None:
                return None
            form["refresh_token"] = self.refresh_token
        else:
            form |= {"client_id": self.user, "client_secret": _MOCK_SECRET}
        return urlencode(form).encode()

    def note_refresh_token(self, exchange: Exchange, replayed: Any) -> None:
        """Remember the refresh token a replayed token request was given, for the next refresh."""
        if self._is_token_call(exchange) and isinstance(replayed, dict):
            token = replayed.get("refresh_token")
            if isinstance(token, str) and token:
                self.refresh_token = token

    def _is_token_call(self, exchange: Exchange) -> bool:
        token_path = self.model.conventions.auth.token_path
        return token_path is not None and exchange.method == "POST" and exchange.path == token_path


def _renamed(text: str, renamed: dict[str, str]) -> str:
    for old, new in renamed.items():
        text = text.replace(old, new)
    return text


def _renamed_body(body: Body, renamed: dict[str, str]) -> bytes:
    if body.kind == "empty" or body.value is None:
        return b""
    if body.kind == "json":
        return json.dumps(_renamed_value(body.value, renamed)).encode()
    if body.kind == "base64":
        return base64.b64decode(body.value)
    return _renamed(str(body.value), renamed).encode()


def _renamed_value(value: Any, renamed: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _renamed(value, renamed)
    if isinstance(value, dict):
        return {key: _renamed_value(item, renamed) for key, item in value.items()}
    if isinstance(value, list):
        return [_renamed_value(item, renamed) for item in value]
    return value


def _learn_new_ids(
    model: ServiceModel,
    routes: Router[Operation],
    exchange: Exchange,
    replayed: Any,
    renamed: dict[str, str],
) -> None:
    """After a replayed create, map the recorded record's id to the one the mock minted."""
    operation = _operation(routes, exchange)
    if operation is None or operation.resource is None or not exchange.response_body.is_json:
        return
    resource = model.resources.get(operation.resource)
    receipt = receipt_id(exchange.response_body.value)
    if resource is None or not _creates(operation, exchange, receipt):
        return
    old, new = (
        _made_id(model, operation, resource, exchange.response_body.value),
        _made_id(model, operation, resource, replayed),
    )
    if old and new and old != new:
        renamed[old] = new


def _made_id(
    model: ServiceModel, operation: Operation, resource: Resource, body: Any
) -> str | None:
    """The id of the record a create answered with: its receipt's, or the record's own."""
    receipt = receipt_id(body)
    if receipt is not None:
        return receipt[1]
    made = next(_records_in(model, operation, body), None)
    return None if made is None else _id_of(resource, made)


def _json_or_none(response: Any) -> Any:
    body = response.body
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return _NOT_JSON


_NOT_JSON: Any = object()


# --- comparing -----------------------------------------------------------------------------


def _compare(exchange: Exchange, status: int, body: Any) -> str | None:
    """Why the answer differs from the recording, or None when it conforms."""
    if status != exchange.status:
        detail = ""
        if isinstance(body, dict | list):
            # The service's own error (Salesforce's is a list) says why it refused.
            detail = f": {_short(json.dumps(body))}"
        return f"status {status}, recorded {exchange.status}{detail}"
    recorded = exchange.response_body
    if not recorded.is_json:
        return None
    if body is None or body is _NOT_JSON:
        return "the recorded body is JSON, the mock's is not"
    problem = first_violation(body_schema(recorded.value), body)
    if problem is None:
        return None
    where, message = problem
    return f"body at {where}: {_short(message)}"


def body_schema(value: Any) -> dict[str, Any]:
    """The structure of a recorded body as a JSON Schema: the same JSON types and the same keys
    (values free; a recorded null says nothing about the type)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int | float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        item_schemas = [body_schema(item) for item in value]
        return {"type": "array", "items": _common(item_schemas)}
    return {
        "type": "object",
        "properties": {key: body_schema(item) for key, item in value.items()},
        "required": sorted(value),
    }


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "boolean": (bool,),
    "number": (int, float),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def first_violation(schema: dict[str, Any], value: Any, where: str = "$") -> tuple[str, str] | None:
    """Where and why `value` breaks a `body_schema` schema (its subset of JSON Schema: type,
    or [type, "null"], properties, required, items), or None. Several times faster than a
    general validator on the long lists recordings hold, with jsonschema's wording."""
    if not schema or (value is None and isinstance(schema["type"], list)):
        return None
    kind = _kind(schema)
    expected = _JSON_TYPES[kind]
    if not isinstance(value, expected) or (kind == "number" and isinstance(value, bool)):
        return where, f"{_repr(value)} is not of type {kind!r}"
    if isinstance(value, dict):
        for key in schema["required"]:
            if key not in value:
                return where, f"{key!r} is a required property"
        for key, sub in schema["properties"].items():
            if key in value:
                found = first_violation(sub, value[key], f"{where}[{key!r}]")
                if found is not None:
                    return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = first_violation(schema["items"], item, f"{where}[{index}]")
            if found is not None:
                return found
    return None


def _repr(value: Any) -> str:
    return _short(json.dumps(value), 80) if not isinstance(value, str) else repr(_short(value, 80))


def _common(schemas: list[dict[str, Any]]) -> dict[str, Any]:
    """What every item of a recorded list satisfied: shared keys required, types merged. A
    null sample (the empty schema) makes the merged type nullable rather than vanishing, so a
    field recorded as a string here and null there accepts both."""
    typed = [s for s in schemas if s]
    kinds = {_kind(s) for s in typed}
    if len(kinds) != 1:
        return {}
    (kind,) = kinds
    merged: dict[str, Any] = {"type": kind}
    if kind == "object":
        keys = set.intersection(*(set(s["properties"]) for s in typed))
        merged["properties"] = {key: _common([s["properties"][key] for s in typed]) for key in keys}
        merged["required"] = sorted(keys)
    elif kind == "array":
        merged["items"] = _common([s["items"] for s in typed])
    if len(typed) < len(schemas) or any(isinstance(s["type"], list) for s in typed):
        merged["type"] = [kind, "null"]
    return merged


def _kind(schema: dict[str, Any]) -> str:
    kind = schema["type"]
    return str(kind[0]) if isinstance(kind, list) else str(kind)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
