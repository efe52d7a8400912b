"""Service extensions: protocol a model opts into by name because no learned fact can say it.

A service model describes records, operations and rules; the generic runtime serves any of them.
A few services add protocol of their own on top (ServiceNow's display values, its batch endpoint,
its audit trail written beside every change). An `Extension` bundles that protocol as optional
hooks the runtime calls at fixed points, and a model lists the extensions it wants by name
(`ServiceModel.extensions`), so the runtime itself stays free of any one service's rules.

The hooks, in the order a request meets them:

- `aliases`: path prefixes that name the same resources (`/api/now/v2/table/` is `/api/now/table/`);
- `routes`: endpoints the model's operations cannot express, tried before the model's own; a
  route that carries other requests inside its own (a batch) says how they unpack (`unpack`), so
  whoever judges calls (a verifier's policy) sees each inner request as if it were sent alone;
- `unrouted`: the service's answer to a path no operation serves (ServiceNow's "Invalid table");
- `before_write` / `after_write`: on create, update and delete, inside the request's transaction:
  derive fields into `WriteCall.after`, refuse with a `Rejection`, or write side-effect records;
- `render`: rewrite one rendered record given the request's parameters (display values);
- `link_header`: the service's own `Link` header for a list page;
- `refusal`: the service's own words for a refusal the generic runtime raised (by its `code`);
- `prepare_seed`: not per request: the records of a seed (generated or read from files) before
  they are loaded as a base snapshot, to derive rows the service keeps beside them (ServiceNow's
  parent-class rows of a child-class record) so a seeded world holds what writes would have made;
- `check`: not per request: when a mock is built (`extensions_for`), refuse a model the extension
  cannot serve with a `ModelError` naming where, rather than failing inside every request.

Extensions are found by name in `EXTENSIONS`: the ones Myna ships are declared as entry points
(group `myna.extensions`, see `myna.mocks.plugins`), so a model file naming one works without
anyone importing its back end first; `register_extension` adds one in code. Duplicates raise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from myna.errors import MockError, ModelError
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.plugins import PluginRegistry
from myna.mocks.rejection import Rejection
from myna.mocks.router import Match, Router
from myna.mocks.store import Record, Transaction

if TYPE_CHECKING:
    from myna.mocks.contract import ResourceContract
    from myna.mocks.runtime import Mock
    from myna.schemas.model import ServiceModel

__all__ = [
    "EXTENSIONS",
    "Extension",
    "Extensions",
    "PageCall",
    "RenderCall",
    "Route",
    "RouteCall",
    "SeedRecords",
    "SideEffectOwner",
    "Unpack",
    "WriteCall",
    "extensions_for",
    "register_extension",
]

WriteKind = Literal["create", "update", "delete"]
SeedRecords = list[tuple[str, str, Record]]
"""A seed's (resource, id, record) triples, in load order."""


@dataclass(frozen=True, slots=True)
class RouteCall:
    """What an extension route's handler is given. `tx` is None for a non-transactional route
    (one that serves other requests through `serve`, as a batch endpoint does)."""

    mock: Mock
    request: MockRequest
    params: dict[str, str]
    world: str
    principal: str | None
    tx: Transaction | None
    serve: Callable[[MockRequest], MockResponse]

    def transaction(self) -> Transaction:
        """The request's transaction; only a route declared `transactional` has one."""
        if self.tx is None:
            raise MockError(f"the route {self.request.path} was not declared transactional")
        return self.tx

    def user(self) -> str:
        """Who is calling; only a route declared `authenticated` is sure to know."""
        if self.principal is None:
            raise MockError(f"the route {self.request.path} was not declared authenticated")
        return self.principal


Unpack = Callable[[MockRequest], list[MockRequest]]
"""The requests one request carries inside it, in the order they are served (a batch's inner
requests, each with the outer request's credential); [] when it carries none it could serve."""


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    handler: Callable[[RouteCall], MockResponse]
    authenticated: bool = True
    transactional: bool = True
    unpack: Unpack | None = None


@dataclass(slots=True)
class WriteCall:
    """One write about to be stored (`before_write`) or just stored (`after_write`).

    `before` is None on create; on delete `after` is the record as it was. Hooks change `after`
    in place to derive fields, raise `Rejection` to refuse (the transaction rolls back), and
    write other records through `tx` (`Mock.insert_record` mints and stamps them).
    """

    mock: Mock
    resource: ResourceContract
    kind: WriteKind
    before: Record | None
    after: Record
    sent: dict[str, Any]
    principal: str
    tx: Transaction
    request: MockRequest


@dataclass(frozen=True, slots=True)
class RenderCall:
    """One record as stored and as the runtime rendered it, for a hook to rewrite."""

    mock: Mock
    resource: ResourceContract
    record: Record
    rendered: dict[str, Any]
    request: MockRequest
    fields: tuple[str, ...] | None
    tx: Transaction


@dataclass(frozen=True, slots=True)
class PageCall:
    """A list page, for a service's own `Link` header."""

    request: MockRequest
    limit: int
    offset: int
    total: int


@dataclass(frozen=True, slots=True)
class SideEffectOwner:
    """How a side-effect row names the record it was written for (a journal entry's incident):
    the field holding that record's id, and optionally the fields holding its table and the
    field whose change the row records, so a judge of changes can charge the row to them."""

    id_field: str
    table_field: str | None = None
    field_field: str | None = None


@dataclass(frozen=True, slots=True)
class Extension:
    """A named bundle of hooks; every hook is optional."""

    name: str
    routes: tuple[Route, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    partial_put: bool = False  # PUT changes only the fields sent, as PATCH does
    ignore_unknown_fields: bool = False  # body fields the resource lacks are dropped, not refused
    unrouted: Callable[[Mock, MockRequest, str], Rejection | None] | None = None
    before_write: Callable[[WriteCall], None] | None = None
    after_write: Callable[[WriteCall], None] | None = None
    render: Callable[[RenderCall], dict[str, Any]] | None = None
    link_header: Callable[[PageCall], str | None] | None = None
    refusal: Callable[[Rejection], Rejection] | None = None
    prepare_seed: Callable[[ServiceModel, SeedRecords], SeedRecords] | None = None
    check: Callable[[ServiceModel], None] | None = None
    # Resources the extension writes on its own, beside the records a client changes (audit
    # trails, journals): a verifier's collateral-damage guard must not blame the agent for them,
    # but charges each row to the record it names when `side_effect_owners` says how.
    side_effect_resources: frozenset[str] = frozenset()
    side_effect_owners: tuple[tuple[str, SideEffectOwner], ...] = ()
    # Fields a client adds notes through (a journal kept beside the record): a verifier treats
    # a note on a record the task is about as harmless, unless the task forbids notes.
    note_fields: frozenset[str] = frozenset()
    # (resource, field) pairs the hooks look records up by, with `tx.list` filtering on
    # `field = value` (an incident's SLAs by task): the store indexes each, so such a lookup
    # costs the same however many records the world holds.
    lookups: frozenset[tuple[str, str]] = frozenset()


EXTENSIONS: PluginRegistry[Extension] = PluginRegistry(
    "service extension", "myna.extensions", Extension
)
"""Every extension, by name (declared as entry points, or registered in code)."""


def register_extension(extension: Extension) -> None:
    """Add an extension; a second one with the same name is a mistake and raises."""
    EXTENSIONS.register(extension.name, extension)


def extensions_for(model: ServiceModel) -> Extensions:
    """The extensions `model` opts into, in the order it lists them, each having checked that it
    can serve the model (a `ModelError` otherwise)."""
    chosen: list[Extension] = []
    for name in model.extensions:
        extension = EXTENSIONS.get(name)
        if extension is None:
            raise ModelError(
                f"the model asks for an unknown extension: {EXTENSIONS.unknown(name)}",
                path=f"{model.name}.extensions",
            )
        chosen.append(extension)
    for extension in chosen:
        if extension.check is not None:
            extension.check(model)
    return Extensions(tuple(chosen))


class Extensions:
    """A model's extensions composed: what the runtime calls, one method per hook."""

    def __init__(self, chosen: tuple[Extension, ...]) -> None:
        self.chosen = chosen
        self.router: Router[Route] = Router()
        for extension in chosen:
            for route in extension.routes:
                self.router.add(route.method, route.path, route)
        self._aliases = tuple(alias for extension in chosen for alias in extension.aliases)
        self.partial_put = any(extension.partial_put for extension in chosen)
        self.ignore_unknown_fields = any(extension.ignore_unknown_fields for extension in chosen)
        self._unrouted = tuple(e.unrouted for e in chosen if e.unrouted is not None)
        self._before = tuple(e.before_write for e in chosen if e.before_write is not None)
        self._after = tuple(e.after_write for e in chosen if e.after_write is not None)
        self._render = tuple(e.render for e in chosen if e.render is not None)
        self._links = tuple(e.link_header for e in chosen if e.link_header is not None)
        self._refusals = tuple(e.refusal for e in chosen if e.refusal is not None)
        self._seeds = tuple(e.prepare_seed for e in chosen if e.prepare_seed is not None)
        self.side_effect_resources = frozenset(
            name for extension in chosen for name in extension.side_effect_resources
        )
        self.side_effect_owners = {
            name: owner for extension in chosen for name, owner in extension.side_effect_owners
        }
        self.note_fields = frozenset(name for e in chosen for name in e.note_fields)
        # The runtime skips the per-record hooks entirely when no extension has one.
        self.renders = bool(self._render)
        self.writes = bool(self._before or self._after)
        self.links = bool(self._links)

    def alias(self, path: str) -> str:
        """`path` with its first aliased prefix (whole segments) replaced by the served one."""
        for prefix, target in self._aliases:
            if path == prefix or path.startswith(prefix + "/"):
                return target + path[len(prefix) :]
        return path

    def route(self, method: str, path: str) -> Match[Route] | None:
        if not self.chosen:
            return None
        matched = self.router.match(method, path)
        return matched if isinstance(matched, Match) else None

    def unpack(self, request: MockRequest) -> list[MockRequest]:
        """The requests `request` carries inside it (one level: an inner request may carry more),
        with their paths as sent; [] for a request no route unpacks, or one it would refuse."""
        matched = self.route(request.method.upper(), self.alias(request.path))
        if matched is None or matched.target.unpack is None:
            return []
        return matched.target.unpack(request)

    def unrouted(self, mock: Mock, request: MockRequest, path: str) -> Rejection | None:
        for hook in self._unrouted:
            rejection = hook(mock, request, path)
            if rejection is not None:
                return rejection
        return None

    def before_write(self, call: WriteCall) -> None:
        for hook in self._before:
            hook(call)

    def after_write(self, call: WriteCall) -> None:
        for hook in self._after:
            hook(call)

    def render(self, call: RenderCall) -> dict[str, Any]:
        rendered = call.rendered
        for hook in self._render:
            rendered = hook(
                RenderCall(
                    call.mock,
                    call.resource,
                    call.record,
                    rendered,
                    call.request,
                    call.fields,
                    call.tx,
                )
            )
        return rendered

    def refusal(self, rejection: Rejection) -> Rejection:
        for hook in self._refusals:
            rejection = hook(rejection)
        return rejection

    def prepare_seed(self, model: ServiceModel, records: SeedRecords) -> SeedRecords:
        for hook in self._seeds:
            records = hook(model, records)
        return records

    def link_header(self, call: PageCall) -> str | None:
        """The first extension's Link header (only call when `links` is true)."""
        return self._links[0](call)
