"""The mock's dispatcher: one pure function from `MockRequest` to `MockResponse`.

`Mock.handle` resolves the world (root, `/worlds/{id}/...` or `X-Myna-World`), applies the world's
faults, routes by the model's operation paths, authenticates, validates, enforces behaviour, runs
one store transaction and renders the service's own shapes. Every refusal is a `Rejection` raised
inside the transaction (so nothing it wrote survives) and turned into the service's error body
here, and only here. The FastAPI app and the in-process client are thin shells around `handle`.
"""

from __future__ import annotations

import contextlib
import random
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import orjson

from myna.errors import MockError
from myna.mocks import behaviour, ids
from myna.mocks.answered import format_stamp
from myna.mocks.auth import ANONYMOUS, DEFAULT_CREDENTIALS, Authenticator, Credentials
from myna.mocks.auth import DEFAULT_WORLD as DEFAULT_WORLD  # where callers import it from
from myna.mocks.calllog import DEFAULT_CAPACITY, Call, CallLog
from myna.mocks.contract import OperationContract, ResourceContract, Viewed, compile_model
from myna.mocks.dialects import DIALECTS, Dialect, QuerySyntaxError
from myna.mocks.extensions import (
    PageCall,
    RenderCall,
    Route,
    RouteCall,
    WriteCall,
    extensions_for,
)
from myna.mocks.faults import FaultConfig, FaultState
from myna.mocks.fill import completed, fillers
from myna.mocks.messages import MockRequest, MockResponse, Pairs, Refusal
from myna.mocks.query import And, Condition, Filter, Or, Query, SortKey
from myna.mocks.rejection import Rejection
from myna.mocks.render import RecordRenderer, error_body, renderer_for, wrap_item, wrap_list
from myna.mocks.renderings import Labeller, as_asked, selected
from myna.mocks.replayed import best_answer, echoed
from myna.mocks.router import Match, MethodMismatch, Router
from myna.mocks.store import (
    ConflictError,
    NotFoundError,
    Record,
    Store,
    StoreFullError,
    Transaction,
    UndeclaredWriteError,
)
from myna.mocks.validation import (
    MAX_BODY_BYTES,
    check_strings,
    coerce_scalars,
    parse_json_body,
    require_object,
    validate_request,
    validate_response,
)
from myna.schemas.answers import path_param, sent_values
from myna.schemas.model import Effect, IdFormat, Reference, Resource, ServiceModel
from myna.schemas.scopes import with_nested_value
from myna.schemas.uploads import upload_record
from myna.schemas.values import spells_int
from myna.schemas.views import project

WORLD_HEADER = "x-myna-world"
ADMIN_PREFIX = "/_myna/admin"
OPENAPI_PATH = "/openapi.json"
_JSON = ("Content-Type", "application/json")
# The list parameters services commonly sort and project with; a dialect adds its service's own.
_SORT_PARAMS = ("sort", "_sort", "order_by", "orderBy")
_FIELDS_PARAMS = ("fields", "_fields")
Clock = Callable[[], float]


_NO_DRAWS = random.Random(0)
"""Counter formats draw nothing; `mint_id` still takes a generator."""


class Mock:
    """A service model served as a stateful mock. `handle` is the whole API.

    `store` defaults to an in-memory SQLite `SqlStore`. `strict` checks every successful response
    against the model and raises `ResponseContractError` on a mismatch (a Myna bug, never a
    client's). `clock` returns POSIX seconds; tests pass a fixed one for repeatable stamps.
    """

    def __init__(
        self,
        model: ServiceModel,
        store: Store | None = None,
        *,
        credentials: Credentials | None = None,
        admin_token: str | None = None,
        strict: bool = False,
        clock: Clock = time.time,
        seed: int | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        call_log_capacity: int = DEFAULT_CAPACITY,
        open_worlds: bool = True,
    ) -> None:
        if store is None:
            from myna.mocks.sqlstore import SqlStore

            store = SqlStore(model, "sqlite://")
        self.model = model
        self.store = store
        self.strict = strict
        self.clock = clock
        self.max_body_bytes = max_body_bytes
        self.admin_token = admin_token or secrets.token_urlsafe(24)
        self.auth = Authenticator(
            model.conventions.auth,
            credentials or DEFAULT_CREDENTIALS,
            admin_token=self.admin_token,
            open_worlds=open_worlds,
            generation=store.key_generation,
        )
        self.resources, operations = compile_model(model)
        self.renderers: dict[str, RecordRenderer] = {
            name: renderer_for(contract, model) for name, contract in self.resources.items()
        }
        self.operations = operations
        # Each resource's operation of each kind, for a path that addresses another
        # resource's record (`Resource.also`).
        self._by_kind = _addressing(self.resources, operations)
        # Each resource's fields with a default, in field order (every create fills them in).
        # A caller stamp's default is only its fallback (`_fill_server_fields`).
        self._defaults: dict[str, tuple[tuple[str, Any], ...]] = {
            name: tuple(
                (field_name, field.default)
                for field_name, field in contract.resource.fields.items()
                if field.has_default and field.stamp is None
            )
            for name, contract in self.resources.items()
        }
        # A service that renders every value as text (ServiceNow) shows a field it never set
        # as "": it has nothing to fill in.
        self._completes = not model.conventions.values_as_strings
        self._fillers = {
            name: fillers(contract.resource) if self._completes else ()
            for name, contract in self.resources.items()
        }
        self.router: Router[OperationContract] = Router()
        for contract in operations:
            self.router.add(contract.operation.method, contract.operation.path, contract)
        self.extensions = extensions_for(model)
        self.dialect = DIALECTS.get(model.conventions.query_language)
        self.list_params = _ListParameters.of(self.dialect)
        # Random ids are drawn from the world's base snapshot, a per-world draw counter and this
        # salt, so a world forked twice from one snapshot mints the same ids in the same order
        # (reruns of an episode are comparable), while draws within one world never repeat,
        # even across processes sharing a database.
        self._id_salt = str(seed) if seed is not None else secrets.token_hex(8)
        self._faults: dict[str, FaultState] = {}
        self._logs: dict[str, CallLog] = {}
        self._log_capacity = call_log_capacity
        self._known_worlds: set[str] = set()
        self._probe = next(iter(model.resources), None)
        self._lock = threading.Lock()
        self.ensure_world(DEFAULT_WORLD)
        from myna.mocks.admin import AdminApi

        self.admin = AdminApi(self)
        self._openapi: bytes | None = None
        self._last_stamp: tuple[int, str] = (-1, "")

    # -- worlds, faults and logs (the admin API drives these) -------------------------------------

    def ensure_world(self, world: str) -> None:
        """Create `world` unless it exists (the default world, at start-up)."""
        if self.world_exists(world):
            return
        # Another process may create it between our check and our insert.
        with contextlib.suppress(ConflictError):
            self.store.create_world(world)
        self._known_worlds.add(world)

    def note_world(self, world: str) -> None:
        """Remember a world the admin API just created, so requests skip the existence check."""
        self._known_worlds.add(world)

    def world_exists(self, world: str) -> bool:
        if world in self._known_worlds:
            return True
        # Another process sharing the database may have created it. A read in the world is one
        # indexed lookup (the store raises NotFoundError for a missing world on the first read),
        # where listing worlds would cost one row per world.
        if self._probe is None:
            found = any(info.id == world for info in self.store.worlds())
        else:
            try:
                with self.store.transaction(world, writes=False) as tx:
                    tx.get(self._probe, "")
                found = True
            except NotFoundError:
                found = False
        if found:
            self._known_worlds.add(world)
        return found

    def forget_world(self, world: str) -> None:
        with self._lock:
            self._known_worlds.discard(world)
            self._faults.pop(world, None)
            self._logs.pop(world, None)

    def set_faults(self, world: str, config: FaultConfig | None) -> None:
        with self._lock:
            if config is None:
                self._faults.pop(world, None)
            else:
                self._faults[world] = FaultState(config)

    def faults(self, world: str) -> FaultConfig | None:
        state = self._faults.get(world)
        return None if state is None else state.config

    def call_log(self, world: str) -> CallLog:
        log = self._logs.get(world)
        if log is None:
            with self._lock:
                log = self._logs.setdefault(world, CallLog(self._log_capacity))
        return log

    # -- the dispatcher ---------------------------------------------------------------------------

    def handle(self, request: MockRequest) -> MockResponse:
        path = request.path
        if path.startswith(ADMIN_PREFIX):
            return self.admin.handle(request)
        started = self.clock()
        world = DEFAULT_WORLD
        try:
            world, path = self._world_of(request)
            response = self._serve(world, path, request, started)
        except Rejection as rejection:
            response = self.error_response(rejection)
        except StoreFullError as full:
            # Not the client's mistake, and nothing was written: the service is unavailable.
            response = self.error_response(Rejection(503, full.message, detail="Unavailable"))
        if world in self._known_worlds:
            self.call_log(world).record(
                Call.of(request, response, started, (self.clock() - started) * 1000.0)
            )
        origin = request.headers.get("origin")
        if origin is not None:
            response.headers = [*response.headers, *_cors_headers(origin)]
        return response

    def _world_of(self, request: MockRequest) -> tuple[str, str]:
        path = request.path
        if path.startswith("/worlds/"):
            world, slash, rest = path[8:].partition("/")
            path = slash + rest if slash else "/"
        else:
            world = request.headers.get(WORLD_HEADER, DEFAULT_WORLD)
        return world, path

    def _admit(
        self, world: str, request: MockRequest, *, public: bool = False
    ) -> str | MockResponse:
        """The principal of a request whose credential reaches `world`, which exists; else the
        answer. A credential good only for other worlds gets the 404 of a missing world, and
        no credential the 401, whether the world exists or not: only a holder learns of it. A
        `public` operation takes a request with no credential at all as the anonymous caller,
        in the worlds a shared credential would reach."""
        principal = self.auth.principal(request.headers, world)
        if principal is None:
            if self.auth.recognised(request.headers):
                raise _no_world(world)
            anonymous = self.auth.unsigned(request.headers) and self.auth.reaches(None, world)
            if not (public and anonymous):
                return self.unauthorized()
            principal = ANONYMOUS
        if world != DEFAULT_WORLD and not self.world_exists(world):
            raise _no_world(world)
        return principal

    def _serve(self, world: str, path: str, request: MockRequest, now: float) -> MockResponse:
        delay = 0.0
        faults = self._faults.get(world)
        # Faults are the world's: a caller that cannot reach it must not see them.
        if faults is not None and self.auth.principal(request.headers, world) is not None:
            decision = faults.decide(now)
            delay = decision.delay
            if decision.rejection is not None:
                response = self.error_response(decision.rejection)
                response.delay = delay
                return response
        response = self._dispatch(world, path, request)
        response.delay = delay
        return response

    def _dispatch(self, world: str, path: str, request: MockRequest) -> MockResponse:
        method = request.method.upper()
        path = self.extensions.alias(path)
        extra = self.extensions.route(method, path)
        if extra is not None:
            return self._extension_route(world, extra, request)
        matched = self.router.match(method, path)
        if isinstance(matched, MethodMismatch) and method in ("OPTIONS", "HEAD"):
            return self._implied(method, world, path, request, matched.allowed)
        auth = self.model.conventions.auth
        if isinstance(matched, Match) and (
            matched.target.operation.kind == "auth" or path == auth.token_path
        ):
            return self._token(world, request)
        if method == "GET" and path == OPENAPI_PATH and matched is None:
            return MockResponse(200, [_JSON], body=self.openapi_bytes())
        public = isinstance(matched, Match) and matched.target.operation.public
        principal = self._admit(world, request, public=public)
        if isinstance(principal, MockResponse):
            return principal
        if matched is None or (
            isinstance(matched, Match) and matched.target.operation.kind == "other"
        ):
            refused = self.extensions.unrouted(self, request, path)
            if refused is not None:
                raise refused
        if matched is None:
            raise Rejection(404, f"no operation answers {method} {path}", detail="Invalid URL")
        if isinstance(matched, MethodMismatch):
            raise Rejection(
                405,
                f"{method} is not allowed on {path}",
                detail=f"allowed: {', '.join(matched.allowed)}",
                headers=(("Allow", ", ".join(matched.allowed)),),
            )
        contract = matched.target
        if contract.replayed:
            return self._replay(contract, matched.params, request, anonymous=principal == ANONYMOUS)
        kind = contract.operation.kind
        handler = _HANDLERS.get(kind, Mock._other)
        try:
            response = self._transact(
                world,
                kind not in _READING_KINDS,
                lambda tx: handler(
                    self, *self._addressed(contract, matched.params, tx), request, tx, principal
                ),
            )
        except NotFoundError as missing:
            raise Rejection(404, missing.message, detail="No Record found") from None
        except ConflictError as conflict:
            field = conflict.context.get("field")
            raise Rejection(409, conflict.message, fields=(str(field),) if field else ()) from None
        except Rejection as refused:
            if refused.resource is None and contract.resource is not None:
                refused.resource = contract.resource.resource.name
            raise
        if self.strict and contract.response_validator is not None and response.has_json:
            validate_response(
                contract.response_validator, response.json(), method=method, path=path
            )
        return response

    def _addressed(
        self, contract: OperationContract, params: dict[str, str], tx: Transaction
    ) -> tuple[OperationContract, dict[str, str]]:
        """The operation a path's id addresses: its own resource's, or where the record lives
        in a resource the traces showed these paths also address (a page at /blocks/{id}),
        that resource's operation of the same kind."""
        resource = contract.resource
        if resource is None or contract.id_param is None:
            return contract, params
        spec = resource.resource
        if not spec.keys and not (spec.also and contract.operation.kind in _ADDRESSED_KINDS):
            return contract, params
        record_id = params.get(contract.id_param, "")
        name = spec.name
        if tx.get(name, record_id) is not None:
            return contract, params
        keyed = _by_key(spec, record_id, params, tx)
        if keyed is not None:
            return contract, {**params, contract.id_param: keyed}
        if contract.operation.kind not in _ADDRESSED_KINDS:
            return contract, params
        for other in spec.also:
            same = self._by_kind.get((name, other, contract.operation.kind))
            if same is not None and same.id_param and tx.get(other, record_id) is not None:
                return same, {**params, same.id_param: record_id}
        return contract, params

    def _implied(
        self,
        method: str,
        world: str,
        path: str,
        request: MockRequest,
        allowed: tuple[str, ...],
    ) -> MockResponse:
        """HTTP's own methods on a path the model serves: OPTIONS (a CORS preflight, which
        carries no credentials) lists what the path allows; HEAD is GET without the body."""
        if method == "OPTIONS":
            heads = ("HEAD",) if "GET" in allowed else ()
            methods = ", ".join(sorted({*allowed, *heads, "OPTIONS"}))
            headers = [("Allow", methods), ("Access-Control-Allow-Methods", methods)]
            asked = request.headers.get("access-control-request-headers")
            if asked:
                headers.append(("Access-Control-Allow-Headers", asked))
            return MockResponse(204, headers)
        if "GET" not in allowed:
            raise Rejection(
                405,
                f"{method} is not allowed on {path}",
                detail=f"allowed: {', '.join(allowed)}",
                headers=(("Allow", ", ".join(allowed)),),
            )
        answered = self._dispatch(world, path, replace(request, method="GET"))
        return MockResponse(answered.status, answered.headers)

    def _extension_route(
        self, world: str, matched: Match[Route], request: MockRequest
    ) -> MockResponse:
        route = matched.target
        principal: str | None = None
        if route.authenticated:
            admitted = self._admit(world, request)
            if isinstance(admitted, MockResponse):
                return admitted
            principal = admitted

        def serve(inner: MockRequest) -> MockResponse:
            # An inner request is served in the outer one's world, which a client whose instance
            # URL is /worlds/{id} spells out. Any other world is refused like a missing one: a
            # batch must not reach a world its caller could not (the episode server relies on it).
            try:
                if inner.path.startswith("/worlds/"):
                    named, path = self._world_of(inner)
                    if named != world:
                        raise _no_world(named)
                    return self._dispatch(world, path, inner)
                return self._dispatch(world, inner.path, inner)
            except Rejection as rejection:
                return self.error_response(rejection)

        if not route.transactional:
            call = RouteCall(self, request, matched.params, world, principal, None, serve)
            return route.handler(call)
        try:
            return self._transact(
                world,
                request.method.upper() not in _READING_METHODS,
                lambda tx: route.handler(
                    RouteCall(self, request, matched.params, world, principal, tx, serve)
                ),
            )
        except NotFoundError:
            # Only an unauthenticated route (a token endpoint) gets here without its world
            # checked, and then only with credentials that reach the world.
            raise _no_world(world) from None

    def _transact(
        self, world: str, writes: bool, work: Callable[[Transaction], MockResponse]
    ) -> MockResponse:
        """Run `work` in one transaction of `world`. A request expected only to read runs in a
        reading one (concurrent with others); should it write after all, it runs again in a
        writing one, the world's only writer while it runs."""
        try:
            with self.store.transaction(world, writes=writes) as tx:
                return work(tx)
        except UndeclaredWriteError:
            with self.store.transaction(world, writes=True) as tx:
                return work(tx)

    # -- operation kinds ----------------------------------------------------------------------

    def _list(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        resource = _resource_of(contract)
        query, page = self._list_query(contract, resource, request.query)
        scope = contract.operation.scope
        if scope is not None and contract.scope_param in params:
            # A nested collection lists its parent's records only.
            parent = Condition(scope, "=", params[contract.scope_param])
            query = replace(
                query, where=parent if query.where is None else And((parent, query.where))
            )
        records, total = tx.list(resource.resource.name, query)
        renderer = self.renderers[resource.resource.name]
        base_url = request.base_url
        rendered = [renderer.render(record, base_url, query.fields) for record in records]
        if self.extensions.renders:
            rendered = [
                self.extensions.render(
                    RenderCall(self, resource, record, out, request, query.fields, tx)
                )
                for record, out in zip(records, rendered, strict=True)
            ]
        rendered = self._as_asked(resource, rendered, request, tx)
        offset = query.offset
        limit = query.limit
        has_next = limit is not None and offset + len(records) < total
        conventions = self.model.conventions
        pagination = conventions.pagination
        next_url = _page_url(request, page, offset + (limit or 0)) if has_next and limit else None
        headers: Pairs = [_JSON]
        if pagination.total_header:
            headers.append((pagination.total_header, str(total)))
        if pagination.link_header and limit:
            link = (
                self.extensions.link_header(PageCall(request, limit, offset, total))
                if self.extensions.links
                else _link_header(request, page, offset, limit, total)
            )
            if link is not None:
                headers.append(("Link", link))
        if has_next and limit and pagination.style == "cursor":
            # A cursor service hands out the cursor itself, not a URL to the next page.
            next_url = _encode_cursor(offset + limit)
        envelope = contract.operation.envelope or resource.envelope
        payload = wrap_list(rendered, envelope, total=total, next_url=next_url)
        return MockResponse(contract.success_status, headers, payload=payload)

    def _get(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        resource = _resource_of(contract)
        target = contract.operation.target
        if target is not None:
            # A path that always answers one record (GET /users/me).
            params = {**params, resource.resource.id_field: target}
            contract = replace(contract, id_param=resource.resource.id_field)
        record = self._existing(contract, resource, params, tx)
        fields = _naming_fields(
            resource.resource, _fields_param(request.query, self.list_params.fields)
        )
        return self._item(contract, resource, record, request, fields, tx)

    def _create(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        resource = _resource_of(contract)
        batch = contract.operation.batch
        if batch is not None:
            return self._create_many(contract, params, request, tx, principal, batch)
        sent = self._body(contract, resource, request)
        record = self._made(contract, resource, params, sent, request, tx, principal)
        return self._item(contract, resource, record, request, None, tx)

    def _create_many(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
        batch: str,
    ) -> MockResponse:
        """A create that sends a list of records (`Operation.batch`): each is made as a create
        would make it, and the answer lists them in the resource's list wrapper."""
        resource = _resource_of(contract)
        body = self._validated(contract, resource, request)
        items = body.get(batch)
        status = contract.error_status
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise Rejection(status, f"{batch} must be a list of objects", fields=(batch,))
        renderer = self.renderers[resource.resource.name]
        made = []
        for item in items:
            sent = self._sent(resource, coerce_scalars(item, resource.stringly), status)
            record = self._made(contract, resource, params, sent, request, tx, principal)
            made.append(renderer.render(record, request.base_url, None))
        made = self._as_asked(resource, made, request, tx)
        payload = wrap_list(made, resource.envelope, total=len(made), next_url=None)
        return MockResponse(contract.success_status, [_JSON], payload=payload)

    def _made(
        self,
        contract: OperationContract,
        resource: ResourceContract,
        params: dict[str, str],
        sent: dict[str, Any],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> Record:
        """One record created from what a client sent, stored under the behaviour rules."""
        spec = resource.resource
        record: Record = {
            name: default for name, default in self._fillers[spec.name] if name not in sent
        }
        record.update(
            (name, default) for name, default in self._defaults[spec.name] if name not in sent
        )
        record.update(sent)
        scope = contract.operation.scope
        if scope is not None and contract.scope_param in params:
            # Created under its parent's path, the record belongs to that parent.
            record = with_nested_value(record, scope, _scoped_id(params[contract.scope_param]))
        for machine in resource.state_machines:
            if _empty(record.get(machine.field)) and machine.initial:
                record[machine.field] = machine.initial[0]
        _enter_states(resource, None, record, sent)
        record_id = self._fill_server_fields(resource, record, tx, principal)
        write = WriteCall(self, resource, "create", None, record, sent, principal, tx, request)
        self._write(contract, write, lambda: tx.insert(spec.name, record_id, record))
        return record

    def _update(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        resource = _resource_of(contract)
        before = self._existing(contract, resource, params, tx)
        sent = self._body(contract, resource, request)
        partial = self.extensions.partial_put or self.model.conventions.partial_put
        if contract.operation.kind == "replace" and not partial:
            after = self._replaced(resource, before, sent)
        else:
            after = {**before, **sent}
        self._change(
            contract,
            WriteCall(self, resource, "update", before, after, sent, principal, tx, request),
        )
        return self._item(contract, resource, after, request, None, tx)

    def _delete(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        resource = _resource_of(contract)
        if contract.operation.effects:
            # A delete that only marks its record (`in_trash: true`): an action.
            return self._action(contract, params, request, tx, principal)
        record = self._existing(contract, resource, params, tx)
        record_id = str(record[resource.resource.id_field])
        write = WriteCall(self, resource, "delete", record, record, {}, principal, tx, request)
        self._write(contract, write, lambda: tx.delete(resource.resource.name, record_id))
        if contract.success_status == 204:
            return MockResponse(204, [])
        return self._item(contract, resource, record, request, None, tx)

    def _action(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        """A custom action (a Jira transition, a ServiceNow close): apply the operation's
        effects to the record, under the same behaviour rules as an update."""
        resource = _resource_of(contract)
        before = self._existing(contract, resource, params, tx)
        body: Any = None
        # An action's body is optional, as the document says; one whose effects read nothing
        # from it and that publishes no schema takes any body (a file upload's parts).
        if request.body.strip() and (
            contract.request_validator is not None
            or any(effect.from_request for effect in contract.operation.effects)
        ):
            body = self.json_body(request, contract.error_status)
            if contract.request_validator is not None:
                validate_request(contract.request_validator, body, status=contract.error_status)
        after = dict(before)
        changed: dict[str, Any] = {}
        for effect in contract.operation.effects:
            value = _effect_value(effect, body)
            if value is not _ABSENT:
                changed[effect.field] = self._nested(resource, effect.field, value)
        sent = coerce_scalars(changed, resource.stringly)
        after.update(sent)
        self._change(
            contract,
            WriteCall(self, resource, "update", before, after, sent, principal, tx, request),
        )
        if contract.success_status == 204:
            return MockResponse(204, [])
        return self._item(contract, resource, after, request, None, tx)

    # -- the write pipeline: every create, update, delete and action goes through it -------------

    def _change(self, contract: OperationContract, write: WriteCall) -> None:
        """An update or an action: what entering the new state sets, the server's stamps, then
        the write itself."""
        assert write.before is not None
        _enter_states(write.resource, write.before, write.after, write.sent)
        self._stamp_entry_callers(write)
        self._touch(write.resource, write.before, write.after, write.principal)
        record_id = str(write.before[write.resource.resource.id_field])
        name = write.resource.resource.name
        self._write(contract, write, lambda: write.tx.update(name, record_id, write.after))

    def _stamp_entry_callers(self, write: WriteCall) -> None:
        """Whoever moved the record into a state that stamps its mover (resolved_by)."""
        resource = write.resource
        names = behaviour.callers_entered(
            behaviour.Write(resource.resource, write.before, write.after, write.sent)
        )
        for name in names:
            reference = resource.references.get(name)
            caller = self._caller(reference, write.principal, write.tx) if reference else None
            if caller is not None:
                write.after[name] = caller

    def _write(
        self, contract: OperationContract, write: WriteCall, store: Callable[[], None]
    ) -> None:
        """The extensions' `before_write` hooks (derive, refuse), the behaviour checks (not on a
        delete), `store`, then the `after_write` hooks (side effects), all in the request's
        transaction, so a refusal anywhere leaves nothing written."""
        hooked = self.extensions.writes
        if hooked:
            self.extensions.before_write(write)
        if write.kind != "delete":
            resource = write.resource
            self._enforce(contract, resource, write.before, write.after, write.sent, write.tx)
        store()
        if hooked:
            self.extensions.after_write(write)

    def _query(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        """A query endpoint (Salesforce `/query?q=SOQL`): the resource is the statement's own
        (SOQL's FROM), in the model's query language."""
        status = contract.error_status
        dialect = self.dialect
        if (dialect is None or dialect.parse_statement is None) and contract.operation.recorded:
            return self._replay(contract, params, request, anonymous=principal == ANONYMOUS)
        if dialect is None or dialect.parse_statement is None:
            # Not the client's mistake: the mock has no evaluator for this language (JQL).
            language = self.model.conventions.query_language
            raise Rejection(
                501, f"the mock cannot evaluate {language} queries", code="NOT_IMPLEMENTED"
            )
        names = [p.name for p in contract.operation.parameters if p.role == "query"] or ["q"]
        pairs = dict(request.query)
        text = next((pairs[name] for name in names if name in pairs), None)
        if not text:
            raise Rejection(
                status, f"the query parameter {names[0]} is missing", fields=(names[0],)
            )
        now = datetime.fromtimestamp(self.clock(), tz=UTC)
        try:
            statement = dialect.parse_statement(text, now)
        except QuerySyntaxError as error:
            raise _malformed(dialect, error, status, names[0]) from None
        resource = self._resource_named(statement.resource, status)
        query = statement.query
        for condition in _conditions([query.where] if query.where is not None else []):
            _known_field(resource, condition.field, status, "WHERE")
        for key in query.order_by:
            _known_field(resource, key.field, status, "ORDER BY")
        records, total = tx.list(resource.resource.name, query)
        renderer = self.renderers[resource.resource.name]
        rendered = (
            []
            if statement.count_only
            else [renderer.render(record, request.base_url, query.fields) for record in records]
        )
        rendered = self._as_asked(resource, rendered, request, tx)
        payload = wrap_list(rendered, resource.envelope, total=total, next_url=None)
        return MockResponse(contract.success_status, [_JSON], payload=payload)

    def _resource_named(self, name: str, status: int) -> ResourceContract:
        wanted = name.lower()
        for resource_name, contract in self.resources.items():
            if resource_name.lower() == wanted:
                return contract
        raise Rejection(status, f"{name!r} is not a resource of this service", code="INVALID_TYPE")

    def _other(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        tx: Transaction,
        principal: str,
    ) -> MockResponse:
        """An operation Myna learned but cannot simulate."""
        return self._replay(contract, params, request, anonymous=principal == ANONYMOUS)

    def _replay(
        self,
        contract: OperationContract,
        params: dict[str, str],
        request: MockRequest,
        *,
        anonymous: bool = False,
    ) -> MockResponse:
        """Answer as the service answered the recorded request most like this one, else with
        the operation's example or its bare success status. A body is first checked against the
        schema the operation publishes: the answer is recorded, the refusal of what the service
        would not take is not."""
        if contract.request_validator is not None and (
            request.body.strip() or contract.body_required
        ):
            body = self.json_body(request, contract.error_status)
            validate_request(contract.request_validator, body, status=contract.error_status)
        answers = contract.operation.recorded
        if answers:
            wanted: dict[str, str] = {path_param(name): value for name, value in params.items()}
            wanted.update(request.query)
            answer = best_answer(
                answers, wanted, sent_values(_json_or_none(request.body)), anonymous=anonymous
            )
            headers: Pairs = [
                (name, value) for name, value in answer.headers.items() if name != "content-length"
            ]
            if answer.text is not None:
                return MockResponse(answer.status, headers, body=answer.text.encode())
            if answer.body is None:
                return MockResponse(answer.status, headers)
            if not any(name == "content-type" for name, _ in headers):
                headers.append(_JSON)
            return MockResponse(answer.status, headers, payload=echoed(answer, wanted))
        for response in contract.operation.responses:
            if 200 <= response.status < 300:
                if response.example is None:
                    return MockResponse(response.status, [])
                return MockResponse(response.status, [_JSON], payload=response.example)
        return MockResponse(contract.success_status, [])

    # -- helpers ------------------------------------------------------------------------------

    def _existing(
        self,
        contract: OperationContract,
        resource: ResourceContract,
        params: dict[str, str],
        tx: Transaction,
    ) -> Record:
        record_id = params.get(contract.id_param) if contract.id_param else None
        record = tx.get(resource.resource.name, record_id) if record_id is not None else None
        if record is None:
            raise Rejection(
                404,
                "No Record found",
                detail=f"{resource.resource.name} {record_id!r} does not exist",
            )
        return record

    def _body(
        self, contract: OperationContract, resource: ResourceContract, request: MockRequest
    ) -> dict[str, Any]:
        body = self._validated(contract, resource, request)
        return self._sent(resource, body, contract.error_status)

    def _validated(
        self, contract: OperationContract, resource: ResourceContract, request: MockRequest
    ) -> dict[str, Any]:
        """The request's JSON object, unwrapped, checked against the operation's schema; or,
        on a create that takes files, the fields an upload fills."""
        status = contract.error_status
        upload = contract.operation.upload
        media_type = request.headers.get("content-type")
        if upload is not None and media_type and "json" not in media_type:
            sent = upload_record(upload, request.query, request.body, media_type)
            check_strings(sent, status=status)
            return sent
        value = self.json_body(request, status)
        value = _unwrapped(value, resource.envelope.request_key)
        body = require_object(value, status=status)
        if self.extensions.ignore_unknown_fields and contract.operation.batch is None:
            body = {name: value for name, value in body.items() if name in resource.resource.fields}
        if contract.request_validator is not None:
            # The body as sent: the published schema says which scalars text fields take.
            validate_request(contract.request_validator, body, status=status)
        return coerce_scalars(body, resource.stringly)

    def _sent(
        self, resource: ResourceContract, body: dict[str, Any], status: int
    ) -> dict[str, Any]:
        """What a write stores of the fields a client sent for one record."""
        refused = [name for name in body if name in resource.refused_on_write]
        if refused:
            raise Rejection(status, f"{', '.join(refused)} cannot be set", fields=tuple(refused))
        sent: dict[str, Any] = {}
        for name, value in body.items():
            if name in resource.ignored_on_write:
                continue
            if name in resource.references and isinstance(value, dict):
                value = value.get("value")
            else:
                value = self._nested(resource, name, value)
            sent[name] = value
        return sent

    def _nested(self, resource: ResourceContract, name: str, value: Any) -> Any:
        """A nested value completed with what the service's answers always carry there."""
        if not self._completes or not isinstance(value, dict | list):
            return value
        spec = resource.resource.fields.get(name)
        return completed(value, spec.schema_, name) if spec is not None else value

    def json_body(self, request: MockRequest, status: int) -> Any:
        """The request's body through the one hardened JSON parser (`parse_json_body`)."""
        return parse_json_body(
            request.body,
            status=status,
            max_bytes=self.max_body_bytes,
            content_type=request.headers.get("content-type"),
        )

    def _replaced(self, resource: ResourceContract, before: Record, sent: dict[str, Any]) -> Record:
        """PUT: the client's fields replace the record's; server-owned fields are kept."""
        spec = resource.resource
        kept = {
            name: value
            for name, value in before.items()
            if name == spec.id_field
            or name in resource.ignored_on_write
            or name in resource.refused_on_write
        }
        defaults = {
            name: default for name, default in self._defaults[spec.name] if name not in sent
        }
        return {**defaults, **kept, **sent}

    def _touch(
        self, resource: ResourceContract, before: Record, after: Record, principal: str
    ) -> None:
        stamp = self._stamp()
        for name in resource.server.updated_stamps:
            after[name] = stamp
        for name in resource.server.counters:
            after[name] = _typed(resource, name, _as_int(before.get(name)) + 1)
        for name in resource.server.updated_by:
            after[name] = principal

    def _enforce(
        self,
        contract: OperationContract,
        resource: ResourceContract,
        before: Record | None,
        after: Record,
        sent: dict[str, Any],
        tx: Transaction,
    ) -> None:
        write = behaviour.Write(resource.resource, before, after, sent)

        def exists(target: str, record_id: str) -> bool:
            # A reference into a table the model does not serve cannot be checked; refusing it
            # would refuse every record the real service accepts.
            return target not in self.resources or tx.get(target, record_id) is not None

        for violation in _violations(write, resource, exists):
            status = contract.error_status if violation.status == 400 else violation.status
            raise Rejection(
                status, violation.message, fields=(violation.field,), check=violation.kind
            )

    def _item(
        self,
        contract: OperationContract,
        resource: ResourceContract,
        record: Record,
        request: MockRequest,
        fields: tuple[str, ...] | None,
        tx: Transaction,
    ) -> MockResponse:
        rendered = self.renderers[resource.resource.name].render(record, request.base_url, fields)
        if self.extensions.renders:
            rendered = self.extensions.render(
                RenderCall(self, resource, record, rendered, request, fields, tx)
            )
        (rendered,) = self._as_asked(resource, [rendered], request, tx)
        if contract.view is not None:
            payload = wrap_item(project(contract.view.view, rendered), contract.view.envelope)
        else:
            payload = wrap_item(rendered, resource.envelope)
        headers: Pairs = [_JSON]
        if contract.operation.kind == "create" and resource.resource.item_path:
            renderer = self.renderers[resource.resource.name]
            if renderer.item_path is not None:
                before, after = renderer.item_path
                record_id = record[resource.resource.id_field]
                headers.append(("Location", f"{request.base_url}{before}{record_id}{after}"))
        return MockResponse(contract.success_status, headers, payload=payload)

    def _as_asked(
        self,
        resource: ResourceContract,
        rendered: list[dict[str, Any]],
        request: MockRequest,
        tx: Transaction,
    ) -> list[dict[str, Any]]:
        """The records in the rendering the request's query parameters select, if any."""
        renderings = self.model.conventions.renderings
        rendering = selected(renderings, request.query) if renderings else None
        if rendering is None:
            return rendered
        as_strings = self.model.conventions.values_as_strings
        return as_asked(rendering, rendered, Labeller(resource, self.resources, tx, as_strings))

    def insert_record(
        self, tx: Transaction, resource_name: str, values: Record, principal: str
    ) -> Record:
        """Store a record the service writes itself (an audit row, an attachment): id, numbers,
        stamps and counters are filled in as on create; no validation or behaviour rules."""
        resource = self.resources[resource_name]
        record = dict(values)
        record_id = self._fill_server_fields(resource, record, tx, principal)
        tx.insert(resource_name, record_id, record)
        return record

    def update_record(
        self, write: WriteCall, resource_name: str, record_id: str, changes: Record
    ) -> Record:
        """Update another record as a consequence of `write`, in its transaction and as its
        caller (an approval that decides the change it is for): the pipeline of a client's
        update, so that record's own rules and checks run, and a refusal there refuses `write`.
        Returns the record as stored."""
        contract = next(
            contract
            for kind in ("update", "replace")
            for contract in self.operations
            if contract.resource is not None
            and contract.resource.resource.name == resource_name
            and contract.id_param is not None
            and contract.operation.kind == kind
        )
        resource = self.resources[resource_name]
        before = write.tx.get(resource_name, record_id)
        if before is None:
            raise MockError(f"no {resource_name} record {record_id} to update")
        sent = coerce_scalars(changes, resource.stringly)
        after = {**before, **sent}
        principal, tx, request = write.principal, write.tx, write.request
        self._change(
            contract,
            WriteCall(self, resource, "update", before, after, sent, principal, tx, request),
        )
        return after

    def _fill_server_fields(
        self, resource: ResourceContract, record: Record, tx: Transaction, principal: str
    ) -> str:
        """Mint the id and numbers and stamp a new record; returns its id."""
        own = resource.resource
        minted = self._mint(resource, own.id_field, own.id_format, tx)
        # The record holds the id in its recorded type (GitHub's ids are numbers); the store
        # keys records by its text.
        record[own.id_field] = minted
        record_id = str(minted)
        for field in resource.server.minted:
            if _empty(record.get(field.name)) and field.generator is not None:
                record[field.name] = self._mint(resource, field.name, field.generator, tx)
        stamp = self._stamp()
        for name in (*resource.server.created_stamps, *resource.server.updated_stamps):
            record[name] = stamp
        for name in resource.server.counters:
            record[name] = _typed(resource, name, 0)
        for name in (*resource.server.created_by, *resource.server.updated_by):
            record[name] = principal
        for name, reference in resource.server.callers:
            if _empty(record.get(name)):
                caller = self._caller(reference, principal, tx)
                spec = resource.resource.fields[name]
                record[name] = spec.default if caller is None and spec.has_default else caller
        return record_id

    def _caller(self, reference: Reference, principal: str, tx: Transaction) -> Any:
        """The caller's own record among the referenced ones (a user named like the principal,
        or whose id it is), as a reference to it is stored; None when the caller has none
        there: no record is made up for a principal whose credentials live outside the world."""
        contract = self.resources.get(reference.resource)
        if contract is None:
            return None
        spec = contract.resource
        found = tx.get(spec.name, principal)
        if found is None:
            names = [name for name in _CALLER_NAMES if name in spec.fields]
            if spec.display_field and spec.display_field not in names:
                names.append(spec.display_field)
            if not names:
                return None
            found = _named(tx, spec.name, spec.id_field, names, principal)
        if found is None:
            return None
        return dict(found) if reference.style == "object" else found.get(spec.id_field)

    def stamp(self) -> str:
        """Now, in the service's timestamp format."""
        return self._stamp()

    def _stamp(self) -> str:
        # Stamps have one-second resolution, so a busy mock formats each second once.
        second = int(self.clock())
        cached = self._last_stamp
        if cached[0] == second:
            return cached[1]
        moment = datetime.fromtimestamp(second, tz=UTC)
        text = format_stamp(moment, self.model.conventions.datetime_format)
        self._last_stamp = (second, text)
        return text

    def _mint(self, resource: ResourceContract, name: str, fmt: IdFormat, tx: Transaction) -> Any:
        counter = ids.counter_name(resource.resource.name, name)
        number = None
        if ids.needs_counter(fmt):
            number = tx.next_sequence(counter, fmt.start)
            rng = _NO_DRAWS
        else:
            draw = tx.next_sequence(f"{counter}#draw", 1)
            rng = random.Random(f"{self._id_salt}|{tx.base_snapshot()}|{counter}|{draw}")
        value = ids.mint_id(fmt, rng, number=number, now_ms=int(self.clock() * 1000))
        field = resource.resource.fields.get(name)
        if (
            field is not None
            and name not in resource.stringly
            and field.schema_.get("type") == "integer"
        ):
            return int(value)
        return value

    def _list_query(
        self, contract: OperationContract, resource: ResourceContract, pairs: Pairs
    ) -> tuple[Query, _Paging]:
        conventions = self.model.conventions
        pagination = conventions.pagination
        params = dict(pairs)
        status = contract.error_status
        limit = pagination.default_limit
        offset = 0
        if pagination.limit_param and pagination.limit_param in params:
            limit = _non_negative(params[pagination.limit_param], pagination.limit_param, status)
        if pagination.max_limit is not None and (limit is None or limit > pagination.max_limit):
            limit = pagination.max_limit
        if pagination.offset_param and pagination.offset_param in params:
            offset = _non_negative(params[pagination.offset_param], pagination.offset_param, status)
        elif pagination.page_param and pagination.page_param in params:
            page = _non_negative(params[pagination.page_param], pagination.page_param, status)
            offset = max(page - 1, 0) * (limit or 0)
        elif pagination.cursor_param and pagination.cursor_param in params:
            offset = _decode_cursor(
                params[pagination.cursor_param], pagination.cursor_param, status
            )
        paging = _Paging(
            pagination.offset_param, pagination.page_param, pagination.cursor_param, limit
        )
        reserved = {
            pagination.limit_param,
            pagination.offset_param,
            pagination.page_param,
            pagination.cursor_param,
            *self.list_params.sort,
            "_order",
            *self.list_params.fields,
        }
        for parameter in contract.operation.parameters:
            if parameter.role not in ("filter", "id", "other"):
                reserved.add(parameter.name)
        where: list[Filter] = []
        order_by: list[SortKey] = []
        dialect = self.dialect
        if dialect is not None and dialect.filter_parameter is not None:
            reserved.add(dialect.filter_parameter)
            text = params.get(dialect.filter_parameter)
            if text and dialect.parse_filter is not None:
                try:
                    condition, sort = dialect.parse_filter(text)
                except QuerySyntaxError as error:
                    raise _malformed(dialect, error, status, dialect.filter_parameter) from None
                if condition is not None:
                    where.append(condition)
                order_by.extend(sort)
        fields = resource.resource.fields
        for name, value in pairs:
            if name in reserved or name not in fields:
                continue
            where.append(Condition(name, "=", value))
        order_by.extend(_sort_keys(params, self.list_params.sort))
        for key in order_by:
            _known_field(resource, key.field, status, "sort")
        for condition in _conditions(where):
            _known_field(resource, condition.field, status, "filter")
        query = Query(
            where=None if not where else where[0] if len(where) == 1 else And(tuple(where)),
            order_by=tuple(order_by),
            limit=limit,
            offset=offset,
            fields=_naming_fields(resource.resource, _fields_param(pairs, self.list_params.fields)),
        )
        return query, paging

    # -- responses outside the happy path -----------------------------------------------------

    def error_response(self, rejection: Rejection) -> MockResponse:
        rejection = self.extensions.refusal(rejection)
        refusal = Refusal(rejection.check or rejection.code, rejection.message, rejection.fields)
        if rejection.body is not None:
            return MockResponse(
                rejection.status,
                [_JSON, *rejection.headers],
                payload=rejection.body,
                refusal=refusal,
            )
        body, headers = error_body(self.model, rejection)
        return MockResponse(rejection.status, [_JSON, *headers], payload=body, refusal=refusal)

    def unauthorized(self) -> MockResponse:
        auth = self.model.conventions.auth
        headers: Pairs = [_JSON, *self.auth.challenge_headers()]
        refusal = Refusal("auth", "the request carries no credential the mock accepts")
        if auth.unauthorized_body is not None:
            return MockResponse(
                auth.unauthorized_status,
                headers,
                payload=auth.unauthorized_body,
                refusal=refusal,
            )
        rejection = Rejection(
            auth.unauthorized_status,
            "User Not Authenticated",
            detail="Required to provide Auth information",
        )
        body, extra = error_body(self.model, rejection)
        return MockResponse(
            auth.unauthorized_status, headers + extra, payload=body, refusal=refusal
        )

    def _token(self, world: str, request: MockRequest) -> MockResponse:
        form = _form(request)
        issued = self.auth.issue_token(form, request.base_url, world)
        if issued is None:
            status = self.model.conventions.auth.unauthorized_status
            error = {"error": "invalid_grant", "error_description": "authentication failure"}
            return MockResponse(status if status != 401 else 400, [_JSON], payload=error)
        return MockResponse(200, [_JSON], payload=issued)

    def openapi_bytes(self) -> bytes:
        if self._openapi is None:
            from myna.mocks.openapi_doc import openapi_document

            self._openapi = orjson.dumps(openapi_document(self))
        return self._openapi


# Operations and extension routes expected only to read (the store is told, so concurrent reads
# need not queue behind the world's writers).
_READING_KINDS = frozenset({"list", "get", "query", "other"})
_READING_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_HANDLERS: dict[str, Callable[..., MockResponse]] = {
    "list": Mock._list,
    "get": Mock._get,
    "create": Mock._create,
    "update": Mock._update,
    "replace": Mock._update,
    "delete": Mock._delete,
    "action": Mock._action,
    "query": Mock._query,
}


@dataclass(frozen=True, slots=True)
class _ListParameters:
    """The list parameters that sort and project: the common ones and the dialect's own."""

    sort: tuple[str, ...]
    fields: tuple[str, ...]

    @classmethod
    def of(cls, dialect: Dialect | None) -> _ListParameters:
        if dialect is None:
            return cls(_SORT_PARAMS, _FIELDS_PARAMS)
        return cls(
            (*_SORT_PARAMS, *dialect.sort_parameters), (*_FIELDS_PARAMS, *dialect.fields_parameters)
        )


_ADDRESSED_KINDS = frozenset({"get", "update", "replace", "delete"})
"""What a path of one resource may do to another's record it also addresses: the item
operations. Actions and the rest are the resource's own (a block's children are not a page's
markdown)."""


def _addressing(
    resources: dict[str, ResourceContract], operations: list[OperationContract]
) -> dict[tuple[str, str, str], OperationContract]:
    """For each resource, each resource it also addresses and each item kind, the operation
    that serves it: the other's own, answering in the view the traces showed, if any."""
    own: dict[tuple[str, str], OperationContract] = {}
    for contract in operations:
        if contract.resource is not None and contract.id_param is not None:
            own.setdefault((contract.resource.resource.name, contract.operation.kind), contract)
    found: dict[tuple[str, str, str], OperationContract] = {}
    for name, resource in resources.items():
        views = {view.source: view for view in resource.resource.views}
        for other in resource.resource.also:
            for kind in _ADDRESSED_KINDS:
                served = own.get((other, kind))
                if served is None:
                    continue
                served = _with_path_effects(served, own.get((name, kind)))
                view = views.get(other)
                if view is not None:
                    served = replace(served, view=Viewed(view, resource.envelope))
                found[(name, other, kind)] = served
    return found


def _with_path_effects(
    served: OperationContract, addressing: OperationContract | None
) -> OperationContract:
    """The operation that serves another resource's record, doing what the path it was called
    at does to records: a path whose deletes only mark records marks theirs too (Notion's
    DELETE /blocks/{id} on a page)."""
    if addressing is None or served.operation.effects or not addressing.operation.effects:
        return served
    assert served.resource is not None
    fields = served.resource.resource.fields
    effects = [effect for effect in addressing.operation.effects if effect.field in fields]
    if not effects:
        return served
    operation = served.operation.model_copy(update={"effects": effects})
    return replace(served, operation=operation)


def _by_key(resource: Resource, value: str, params: dict[str, str], tx: Transaction) -> str | None:
    """The id of the one record a path names by a key field instead of its id (an issue's
    `JJJ-9`); among several (a merge request's `iid` counts per project), the one whose
    fields hold every other value the path names."""
    matches = [
        Condition(key, "=", candidate) for key in resource.keys for candidate in _as_sent(value)
    ]
    if not matches:
        return None
    found, _ = tx.list(resource.name, Query(where=Or(tuple(matches)), limit=_KEYED_AT_MOST))
    if len(found) > 1:
        # The field named like the parameter first (`{projectId}`: `project_id`), then any:
        # a merge request names other projects too (its fork's `source_project_id`).
        others = {name: text for name, text in params.items() if text != value}
        named = [record for record in found if _holds_named(record, others)]
        found = named or [record for record in found if set(others.values()) <= _texts(record)]
    return str(found[0][resource.id_field]) if len(found) == 1 else None


def _holds_named(record: Record, params: dict[str, str]) -> bool:
    """Whether the record holds each parameter's value in the field named like it."""
    return bool(params) and all(
        str(record.get(_field_name(name), "")) == text for name, text in params.items()
    )


def _field_name(param: str) -> str:
    """`projectId` -> `project_id`: the field a path parameter is named after."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", param).lower()


_KEYED_AT_MOST = 50
"""Records sharing a key value looked at to tell them apart by the path's other values."""


def _as_sent(value: str) -> tuple[str | int, ...]:
    """A path value as a record may hold it: text, and the integer it spells."""
    if spells_int(value) and len(value) < 19:
        return (value, int(value))
    return (value,)


def _texts(record: Record) -> set[str]:
    return {str(held) for held in record.values() if isinstance(held, str | int)}


def _json_or_none(body: bytes) -> Any:
    """A body's JSON for picking a recorded answer by, or None: a replayed answer does not
    judge the body, so one that does not parse picks by the rest of the request."""
    try:
        return orjson.loads(body) if body.strip() else None
    except orjson.JSONDecodeError:
        return None


def _no_world(world: str) -> Rejection:
    return Rejection(404, f"world {world!r} does not exist", detail="No such world")


def _malformed(dialect: Dialect, error: QuerySyntaxError, status: int, parameter: str) -> Rejection:
    """A query the dialect cannot read, refused in the service's words."""
    return Rejection(
        status, dialect.error_message(error), code=dialect.error_code, fields=(parameter,)
    )


@dataclass(frozen=True, slots=True)
class _Paging:
    """The parameter names a list call pages with, for Link headers and next URLs."""

    offset_param: str | None
    page_param: str | None
    cursor_param: str | None
    limit: int | None


def _enter_states(
    resource: ResourceContract, before: Record | None, after: Record, sent: Record
) -> None:
    """Write what entering a state sets (`sets_on_entry`) into `after`, stored as a client's
    value would be. It runs before the service's extension hooks, so code that knows better
    (a back end's own rules) still has the last word, and before the checks, which see it."""
    if not any(machine.sets_on_entry for machine in resource.resource.state_machines):
        return
    values = behaviour.entry_values(behaviour.Write(resource.resource, before, after, sent))
    if values:
        after.update(coerce_scalars(values, resource.stringly))


def _violations(
    write: behaviour.Write, resource: ResourceContract, exists: behaviour.Exists
) -> Iterator[behaviour.Violation]:
    yield from behaviour.check_read_only(write, resource.refused_on_write)
    yield from behaviour.check_transitions(write)
    yield from behaviour.check_required_on_entry(write)
    yield from behaviour.check_references(write, resource.references, exists)


def _unwrapped(body: Any, key: str | None) -> Any:
    """The record a write sends inside the resource's request wrapper (`{"ticket": {...}}`);
    a body sent without the wrapper is taken as the record itself."""
    if key is not None and isinstance(body, dict) and len(body) == 1:
        inner = body.get(key)
        if isinstance(inner, dict):
            return inner
    return body


def _resource_of(contract: OperationContract) -> ResourceContract:
    if contract.resource is None:
        raise MockError(
            f"operation {contract.operation.id} of kind {contract.operation.kind} names no "
            "resource of the model",
            path=contract.operation.path,
        )
    return contract.resource


_ABSENT = object()
_CALLER_NAMES = ("user_name", "username", "login", "email", "userName", "name")


def _named(tx: Transaction, resource: str, id_field: str, names: list[str], who: str) -> Any:
    """The first record (in list order) whose field of `names` holds `who`. One equality per
    field first: the store answers each from an index, where the OR of them scans every record
    on every update a caller is stamped on; the OR decides only when fields name different ones."""
    hits: dict[str, Record] = {}
    for name in names:
        records, _ = tx.list(resource, Query(where=Condition(name, "=", who), limit=1))
        hits.update((str(r.get(id_field)), r) for r in records)
    if len(hits) <= 1:
        return next(iter(hits.values()), None)
    where = Or(tuple(Condition(name, "=", who) for name in names))
    records, _ = tx.list(resource, Query(where=where, limit=1))
    return records[0] if records else None


"""Fields of a user-like record that a principal's name may equal."""


def _effect_value(effect: Effect, body: Any) -> Any:
    """The value an effect sets, or `_ABSENT` when it copies a part of the body that the client
    left out (the action's request schema says what is required; the rest is optional)."""
    if effect.from_request is None:
        return effect.value
    value = body
    for part in effect.from_request.lstrip("/").split("/"):
        if not part:
            continue
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and spells_int(key) and int(key) < len(value):
            value = value[int(key)]
        else:
            return _ABSENT
    return value


def _scoped_id(value: str) -> Any:
    """A parent id from a path, typed as ids are (GitLab's `project_id` is a number)."""
    return int(value) if spells_int(value) and len(value) < 19 else value


def _cors_headers(origin: str) -> Pairs:
    """What a browser needs to let a page on another origin read the answer: any origin, as
    a mock serves whoever holds its credentials, with the paging headers readable."""
    return [
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Allow-Credentials", "true"),
        ("Access-Control-Expose-Headers", "Link, X-Total-Count, Location"),
        ("Vary", "Origin"),
    ]


def _typed(resource: ResourceContract, name: str, value: Any) -> Any:
    if name in resource.stringly and not isinstance(value, str):
        return str(value)
    return value


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _empty(value: Any) -> bool:
    return value is None or value == ""


def _non_negative(text: str, name: str, status: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise Rejection(
            status, f"{name} must be a whole number, not {text!r}", fields=(name,)
        ) from None
    if value < 0:
        raise Rejection(status, f"{name} must not be negative", fields=(name,))
    return value


CURSOR_PATTERN = "^(?:3[0-9]){1,18}$"
"""The cursors `_encode_cursor` issues (an offset's digits in hex, below 10**18), as the
document publishes them: any other text is refused."""
_CURSOR = re.compile(CURSOR_PATTERN)


def _decode_cursor(text: str, name: str, status: int) -> int:
    if _CURSOR.fullmatch(text) is None:
        raise Rejection(
            status, f"{name} {text[:80]!r} is not a cursor this service issued", fields=(name,)
        )
    return int(bytes.fromhex(text).decode("ascii"))


def _encode_cursor(offset: int) -> str:
    return str(offset).encode("ascii").hex()


def _sort_keys(params: dict[str, str], names: tuple[str, ...]) -> list[SortKey]:
    keys: list[SortKey] = []
    for name in names:
        text = params.get(name)
        if not text:
            continue
        descending_all = params.get("_order", "").lower() == "desc"
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            descending = part.startswith("-") or descending_all
            keys.append(SortKey(part.lstrip("-"), descending=descending))
    return keys


def _known_field(resource: ResourceContract, name: str, status: int, what: str) -> None:
    head = name.split(".", 1)[0]
    fields = resource.resource.fields
    if head not in fields and head != resource.resource.id_field:
        raise Rejection(
            status,
            f"{what} names {name!r}, which is not a field of {resource.resource.name}",
            fields=(name,),
        )
    if "." in name and fields[head].reference is None:
        raise Rejection(
            status, f"{what} dot-walks through {head!r}, which is not a reference", fields=(name,)
        )


def _conditions(filters: list[Filter]) -> Iterator[Condition]:
    stack = list(filters)
    while stack:
        node = stack.pop()
        if isinstance(node, Condition):
            yield node
        elif isinstance(node, And | Or):
            stack.extend(node.parts)
        else:
            stack.append(node.part)


def _fields_param(pairs: Pairs, names: tuple[str, ...]) -> tuple[str, ...] | None:
    for name, value in pairs:
        if name in names:
            names = tuple(part.strip() for part in value.split(",") if part.strip())
            return names or None
    return None


def _naming_fields(resource: Resource, fields: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """A projection that names at least one of the resource's fields, else none: `*all` or
    `navigable` ask for every field in a language of the service's own."""
    if fields is None:
        return None
    known = resource.fields
    return fields if any(name.split(".")[0] in known for name in fields) else None


def _page_url(request: MockRequest, paging: _Paging, offset: int) -> str:
    return f"{request.path}?{_with_offset(request.query, paging, offset)}"


def _with_offset(pairs: Pairs, paging: _Paging, offset: int) -> str:
    """The same query string, moved to `offset` in whichever way the service pages."""
    moved = (paging.offset_param, paging.page_param, paging.cursor_param)
    out = [(k, v) for k, v in pairs if k not in moved]
    if paging.offset_param:
        out.append((paging.offset_param, str(offset)))
    elif paging.page_param and paging.limit:
        out.append((paging.page_param, str(offset // paging.limit + 1)))
    elif paging.cursor_param:
        out.append((paging.cursor_param, _encode_cursor(offset)))
    return urlencode(out)


_PATH_SAFE = "/:@!$&'()*+,;=~"
"""What a path keeps unescaped when written back into a URL (RFC 3986 pchar and "/")."""


def _link_header(
    request: MockRequest, paging: _Paging, offset: int, limit: int, total: int
) -> str | None:
    if offset == 0 and total <= limit:
        return None  # one page holds every row: there is nowhere to go
    base = f"{request.base_url}{quote(request.path, safe=_PATH_SAFE)}"
    last = max(((total - 1) // limit) * limit, 0) if limit else 0
    links = [(0, "first")]
    if offset > 0:
        links.append((max(offset - limit, 0), "prev"))
    if offset + limit < total:
        links.append((offset + limit, "next"))
    links.append((last, "last"))
    return ",".join(
        f'<{base}?{_with_offset(request.query, paging, target)}>;rel="{rel}"'
        for target, rel in links
    )


def _form(request: MockRequest) -> dict[str, str]:
    content_type = request.headers.get("content-type", "")
    if "json" in content_type:
        try:
            value = orjson.loads(request.body)
        except orjson.JSONDecodeError:
            return {}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
    try:
        text = request.body.decode("utf-8")
    except UnicodeDecodeError:
        return {}
    return dict(parse_qsl(text)) | dict(request.query)
