"""`learn(sessions)`: service models from traces.

The shell reads the sessions once, splits HTTP exchanges into services (site + API base) and
hands tool calls to `myna.schemas.tools`. Each service is learned in four light passes over its
exchanges, so that each pass can use what the previous one settled:

1. records and ids: unwrap every response, collect the ids records carry (for cross-references)
   and a record-shape fingerprint (for the templating rules);
2. templating (`myna.schemas.paths`), then per operation: statuses, query parameters, request
   and response shapes, and what the conventions rules need;
3. records per resource: record shapes, id values, what creates answered with;
4. behaviour, replaying the exchanges in order per entity (`myna.schemas.behaviour`).

Only pure rule modules decide anything; this module counts and assembles.
"""

from __future__ import annotations

import base64
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from myna.errors import LearnError
from myna.schemas import behaviour, conventions
from myna.schemas.answers import (
    KEPT_HEADERS,
    AnswerSample,
    path_param,
    recorded_answers,
    sent_values,
)
from myna.schemas.complete import complete
from myna.schemas.effects import (
    SoftDelete,
    echoed_effects,
    keeps_unsent,
    soft_delete_effects,
)
from myna.schemas.entry_values import caller_references, volatile_fields
from myna.schemas.evidence import Tally, count_evidence
from myna.schemas.fields import (
    BOOKKEEPING,
    NO_DEFAULT,
    create_default,
    datetime_format,
    display_field,
    error_message,
    id_format,
    link_target,
    pointer_to_state,
    sequence_format,
    stamps_caller,
    stored_default,
    values_as_strings,
    written_blind,
)
from myna.schemas.merge import merge_models
from myna.schemas.model import (
    Auth,
    Conventions,
    Effect,
    Envelope,
    FieldSpec,
    Operation,
    Parameter,
    RecordedAnswer,
    Reference,
    Rendering,
    Resource,
    ResponseSpec,
    ServiceModel,
    ToolDefinition,
    Upload,
    View,
)
from myna.schemas.openapi import component_name
from myna.schemas.operations import (
    OpStats,
    another_kind,
    batch_key,
    literal_before,
    operation_id,
    operation_kind,
    operation_resource,
    query_role,
)
from myna.schemas.paths import (
    PARAM,
    api_base,
    item_under,
    param_name,
    service_name,
    singular,
    site_of,
    split_path,
    template_paths,
)
from myna.schemas.records import (
    ID_FIELDS,
    KIND_KEYS,
    NOTHING,
    Labels,
    Unwrapped,
    as_values,
    id_field,
    of_one_kind,
    receipt_id,
    record_type,
    shape_signature,
    unwrap,
    view_of,
)
from myna.schemas.records import (
    View as AnswerView,
)
from myna.schemas.scopes import plain_id, scope_field
from myna.schemas.shape import ARRAY_SAMPLE, JsonSchema, Shape, merge_schemas, sampled
from myna.schemas.signing import signature
from myna.schemas.tools import learn_tools, tool_definitions
from myna.schemas.uploads import UploadSample, learn_upload
from myna.schemas.values import ID_PATTERNS, classify_segment
from myna.schemas.views import (
    RenderedAnswer,
    is_link,
    label_tables,
    learn_renderings,
    learn_view,
)
from myna.traces.model import Exchange, Session, ToolCall

__all__ = ["Options", "learn"]

_IGNORED_METHODS = frozenset({"HEAD", "OPTIONS", "CONNECT", "TRACE"})
_RECORD_KINDS = frozenset({"list", "get", "create", "update", "replace", "query", "action"})
_WRITE_KINDS = frozenset({"create", "update", "replace", "action", "delete"})
_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})
_REFUSALS = frozenset({400, 403, 409, 412, 422})
"""Statuses that refuse a write on its merits; 401 and 404 say nothing about the transition."""
_ID_CAP = 50_000
"""Id values remembered per resource (for references and id formats); enough for any trace set."""
_CREATE_SAMPLES = 64
_LEAF_BUDGET = 2048
"""Values walked per resource (records x values in a record); past it, each further response
contributes one record to the schema (every response still counts as evidence)."""
_LAYOUTS = 1024
"""Record layouts remembered per resource for the novelty check."""
_BODY_BUDGET = 8
"""Bodies per operation and status walked for their (non-record) schema; the rest are counted."""
_ANSWERS_KEPT = 64
"""Exchanges kept per operation for replaying their answers (`answers.recorded_answers`)."""
_SIGHTINGS_KEPT = 1000
"""Recorded records kept per resource for a served mock to start with."""
_UNSAMPLED_MAX = 256
"""Records the sample left out whose values are counted for enum decisions, per resource
(evenly spaced over the first sightings): with the walked ones, enough to tell a closed set
from an open one, and a bound on the counting."""


OpKey = tuple[str, tuple[str, ...]]
"""An operation's (method, path template), as `ServiceLearner.ops` keys it."""


@dataclass(frozen=True, slots=True)
class Options:
    """What a learned model holds beside what the traces show directly."""

    records: bool = True
    """Keep the records the traces showed, for a served mock to start with."""
    complete: bool = True
    """Complete each resource's REST operations by the service's conventions (`complete`)."""
    answers: bool = True
    """Keep recorded answers of the operations a mock cannot simulate, for it to replay."""
    renderings: bool = True
    """Learn the other renderings of records that query parameters select, with the labels
    they show (a built-in back end's extension renders them itself)."""


def learn(
    sessions: Iterable[Session],
    *,
    service: str | None = None,
    update: ServiceModel | None = None,
    options: Options = Options(),
) -> list[ServiceModel]:
    """Learn one service model per service seen in `sessions`.

    `service` names the model and learns every exchange as that one service. `update` is an
    existing model to learn into: its facts are merged with what the new traces show, and every
    fact a person pinned is kept as it is. Raises `LearnError` when the input holds nothing to
    learn from.
    """
    exchanges: list[tuple[int, Exchange]] = []
    calls: list[tuple[int, ToolCall]] = []
    definitions: dict[str, ToolDefinition] = {}
    session_count = events = 0
    for index, session in enumerate(sessions):
        session_count += 1
        definitions.update(tool_definitions(session.metadata.get("tools")))
        for event in session.events:
            events += 1
            if isinstance(event, Exchange):
                exchanges.append((index, event))
            elif isinstance(event, ToolCall):
                calls.append((index, event))
    models = learn_http(exchanges, service=service, options=options) if exchanges else []
    if calls:
        # Tool calls are a service of their own; beside HTTP traffic it needs its own name.
        name = service or "tools"
        if any(model.name == name for model in models):
            name = f"{name}-tools"
        models.append(learn_tools(calls, name=name, definitions=definitions))
    if not models:
        raise LearnError(
            f"nothing to learn from {session_count} session(s) with {events} event(s): no API "
            "exchange answered with JSON or accepted a write, and no tool call was recorded",
            sessions=session_count,
            exchanges=len(exchanges),
        )
    if update is None:
        return models
    matching = [model for model in models if model.name == update.name]
    target = matching[0] if matching else models[0] if len(models) == 1 else None
    if target is None:
        names = ", ".join(sorted(model.name for model in models))
        raise LearnError(
            f"the traces hold several services ({names}) and none is named {update.name!r}; "
            "pass --service to pick one"
        )
    return [merge_models(update, model) if model is target else model for model in models]


# --- services -----------------------------------------------------------------------------


@dataclass(slots=True)
class Obs:
    """One exchange taken into a service, with what the passes work out about it."""

    exchange: Exchange
    session: int
    segments: list[str]
    origin: str
    """`scheme://host` of the exchange's URL."""
    unwrapped: Unwrapped = NOTHING
    template: tuple[str, ...] = ()
    op: OpStats | None = None
    view: AnswerView = "values"
    """Whether the answer showed its records' values, their labels, or both (`records.view_of`);
    `unwrapped` always holds values, or records whose fields are labels in a labels view."""
    labels: Labels | None = None
    """The labels a pairs view showed beside the values."""
    receipt: tuple[str, str] | None = None
    """(id field, id) when a write answered only with the id it made."""
    base_segments: int = 0
    """Leading segments that are the rest of an API base (the service's bases differ there)."""
    signed: bool = True
    """Whether the request carried a credential."""


@dataclass(slots=True)
class Group:
    site: str
    base: str
    observations: list[Obs] = field(default_factory=list)


def learn_http(
    exchanges: list[tuple[int, Exchange]], *, service: str | None, options: Options = Options()
) -> list[ServiceModel]:
    groups: dict[tuple[str, str], Group] = {}
    tokens: dict[str, tuple[str, Tally]] = {}
    sites: dict[str, str] = {}
    for session, exchange in exchanges:
        if _ignored(exchange):
            continue
        origin, path = _split_url(exchange.url)
        segments = split_path(path)
        site = sites.get(origin)
        if site is None:
            site = sites[origin] = site_of(origin.partition("://")[2])
        if _is_token_call(exchange, segments):
            _, tally = tokens.setdefault(site, (path, Tally()))
            tally.add(session, exchange.id)
            continue
        cut = api_base(segments)
        base = "/" + "/".join(segments[:cut]) if cut else ""
        group = groups.get((site, base))
        if group is None:
            group = groups[(site, base)] = Group(site, base)
        group.observations.append(Obs(exchange, session, segments[cut:], origin))
    # A base that only refused or redirected (an unauthenticated `/rest/api/3` redirected to
    # the login page) is still part of its site's service, which a mock must answer for.
    sites_used = {
        group.site
        for group in groups.values()
        if any(_usable(obs.exchange) for obs in group.observations)
    }
    usable = [group for group in groups.values() if group.site in sites_used]
    if service is not None and usable:
        usable = [_combine(usable)]
    else:
        # One service per site: a host's API bases (Jamf's `/JSSResource` beside `/api/v1`,
        # Jira's `/rest/api/2` beside `/rest/api/3`) are parts of one service, which clients
        # address by one credential and one instance URL.
        by_site: dict[str, list[Group]] = {}
        for group in usable:
            by_site.setdefault(group.site, []).append(group)
        usable = [_combine(found) if len(found) > 1 else found[0] for found in by_site.values()]
    labels = Counter(service_name(group.site, "", qualify=False) for group in usable)
    models = []
    for group in sorted(usable, key=lambda g: (g.site, g.base)):
        if service is not None:
            name = service
        else:
            label = service_name(group.site, "", qualify=False)
            name = label if labels[label] == 1 else group.site.replace(".", "_").replace(":", "-")
        token = tokens.get(group.site)
        models.append(ServiceLearner(name, group, token, options).learn())
    return models


def _ignored(exchange: Exchange) -> bool:
    """Exchanges that say nothing of the service's own operations: HTTP's implied methods
    (HEAD is GET without the body, OPTIONS a preflight), unless the service refused them (a
    `HEAD /` answered 405 is the service's answer, which a mock must give too)."""
    return exchange.method.upper() in _IGNORED_METHODS and 200 <= exchange.status < 300


def _usable(exchange: Exchange) -> bool:
    if not 200 <= exchange.status < 300:
        return False
    return exchange.response_body.is_json or exchange.method.upper() != "GET"


def _is_token_call(exchange: Exchange, segments: list[str]) -> bool:
    if exchange.method.upper() != "POST" or not segments or segments[-1] != "token":
        return False
    body = exchange.response_body.value
    form = exchange.request_header("content-type") or ""
    return (isinstance(body, dict) and "access_token" in body) or "form-urlencoded" in form


def _combine(groups: list[Group]) -> Group:
    """One group from several: paths keep whatever part of their base is not shared."""
    bases = [split_path(group.base) for group in groups]
    common: list[str] = []
    for parts in zip(*bases, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    combined = Group(groups[0].site, "/" + "/".join(common) if common else "")
    for group, base in zip(groups, bases, strict=True):
        extra = base[len(common) :]
        for obs in group.observations:
            obs.segments = [*extra, *obs.segments]
            obs.base_segments = len(extra)
            combined.observations.append(obs)
    combined.observations.sort(key=lambda obs: (obs.session, obs.exchange.id))
    return combined


# --- operations ---------------------------------------------------------------------------


_KEPT_RESPONSE_HEADERS = ("x-total-count", "link", "location", "etag", "retry-after")


class ServiceLearner:
    """Learns one service from its group of exchanges (see the module docstring)."""

    def __init__(
        self,
        name: str,
        group: Group,
        token: tuple[str, Tally] | None,
        options: Options = Options(),
    ) -> None:
        self.name = name
        self.options = options
        self.group = group
        self.observations = group.observations
        self.fields_of: dict[str, set[str]] = {}
        self.ops: dict[OpKey, OpStats] = {}
        self.gathered = conventions.Gathered()
        self.auth = Auth()
        """The service's sign-in, once the operations' pass has gathered it."""
        if token is not None:
            self.gathered.token_path, self.gathered.token_tally = token
        self.records: dict[str, Shape] = {}
        self.record_tally: dict[str, Tally] = {}
        self.ids: dict[str, set[str]] = {}
        self.id_fields: dict[str, str] = {}
        self.item_urls: dict[str, str] = {}
        self.creates: dict[str, list[tuple[Any, dict[str, Any]]]] = {}
        self.requests: dict[str, list[Shape]] = {}
        self.servers: set[str] = set()
        self.pages: set[tuple[Any, ...]] = set()
        self.walked: dict[str, int] = {}
        self.latest: dict[tuple[str, str], dict[str, Any]] = {}
        self.kinds: dict[str, dict[str, set[type]]] = {}
        self.widths: dict[str, set[int]] = {}
        self.layouts: dict[str, set[tuple[tuple[str, ...], tuple[type, ...]]]] = {}
        self.sightings: dict[str, dict[str, dict[str, Any]]] = {}
        """Resource -> id -> the record as first seen (`_pass_sightings`)."""
        self.made: set[tuple[str, str]] = set()
        self._seen_deletes: dict[OpKey, SoftDelete] | None = None
        self._seen_views: dict[OpKey, View] | None = None
        self.unsampled: dict[str, dict[str, dict[str, Any]]] = {}
        """Resource -> id -> the first sighting of each record the sample did not walk."""

    def learn(self) -> ServiceModel:
        self._pass_records()
        self._template()
        self._pass_operations()
        self._decide_operations()
        self._pass_resources()
        self._pass_sightings()
        self.envelope = conventions.infer_envelope(self.gathered)
        resources = self._resources()
        self._behaviour(resources)
        self.auth = conventions.infer_auth(self.gathered)
        operations = self._operations(resources)
        model = ServiceModel(
            name=self.name,
            servers=sorted(self.servers),
            base_path=self.group.base,
            conventions=self._conventions(resources),
            resources=resources,
            operations=operations,
        )
        if self.options.renderings:
            model.conventions.renderings = self._renderings(resources)
        model.conventions.partial_put = self._partial_put(resources)
        return complete(model) if self.options.complete else model

    # pass 1 ----------------------------------------------------------------------------

    def _pass_records(self) -> None:
        fields_of = self.fields_of
        for obs in self.observations:
            exchange = obs.exchange
            if 200 <= exchange.status < 300 and exchange.response_body.is_json:
                obs.unwrapped = unwrapped = unwrap(exchange.response_body.value)
                records = unwrapped.records
                if not records:
                    continue
                receipt = (
                    receipt_id(records[0])
                    if len(records) == 1 and exchange.method.upper() in _WRITE_METHODS
                    else None
                )
                if receipt is not None:
                    # `{"id", "success", "errors"}` names the record a create made; it is none.
                    obs.receipt = receipt
                    obs.unwrapped = NOTHING
                    fields_of.setdefault(receipt[1], set()).add(receipt[0])
                    continue
                obs.view = view_of(exchange.query, records)
                if obs.view == "labels":
                    continue
                if obs.view == "pairs":
                    records, obs.labels = as_values(records)
                    obs.unwrapped = Unwrapped(records, unwrapped.cardinality, unwrapped.key)
                for record in records:
                    for name in ID_FIELDS:
                        value = record.get(name)
                        if (
                            value is not None
                            and value != ""
                            and not isinstance(value, (dict, list, bool))
                        ):
                            fields_of.setdefault(str(value), set()).add(name)

    def _template(self) -> None:
        """Template the paths below each API base on their own: the base (`2` of
        `/rest/api/2`) is a literal, never a parameter among its siblings."""
        names = Counter(name for found in self.fields_of.values() for name in found)
        self.service_id = names.most_common(1)[0][0] if names else None
        self.param_values = {}
        by_base: dict[tuple[str, ...], list[Obs]] = {}
        for obs in self.observations:
            by_base.setdefault(tuple(obs.segments[: obs.base_segments]), []).append(obs)
        ids = set(self.fields_of)
        for base, observations in by_base.items():
            paths = [obs.segments[len(base) :] for obs in observations]
            shapes = [shape_signature(obs.unwrapped.records) for obs in observations]
            made = [_made_elsewhere(obs) for obs in observations]
            templates = template_paths(paths, shapes, ids, made)
            for template, values in templates.param_values.items():
                self.param_values[(*base, *template)] = values
            for index, obs in enumerate(observations):
                obs.template = (*base, *templates.of_exchange[index])

    # pass 2 ----------------------------------------------------------------------------

    def _pass_operations(self) -> None:
        gathered = self.gathered
        for obs in self.observations:
            exchange = obs.exchange
            method = exchange.method.upper()
            key = (method, obs.template)
            op = self.ops.get(key)
            if op is None:
                op = self.ops[key] = OpStats(method, obs.template)
            obs.op = op
            op.tally.add(obs.session, exchange.id)
            if len(op.answers) < _ANSWERS_KEPT:
                op.answers.append(obs)
            status = exchange.status
            op.statuses.setdefault(status, Tally()).add(obs.session, exchange.id)
            self.servers.add(obs.origin)
            for name, value in exchange.query:
                shape = op.query.get(name)
                if shape is None:
                    shape = op.query[name] = Shape()
                shape.add(value)
                gathered.query_params[name] += 1
            if exchange.request_body.is_json:
                op.request.add(exchange.request_body.value)
                if _mentions_jql(exchange.request_body.value):
                    gathered.jql.add(obs.session, exchange.id)
            obs.signed = self._gather_auth(obs)
            if not obs.signed:
                op.anonymous[status] += 1
            if status >= 300:
                # A redirect (to a login page, a renamed record's new home) is an answer to
                # replay, never a record's rendering.
                if status >= 400:
                    self._gather_error(obs)
                continue
            self._gather_response(obs, op)

    def _gather_auth(self, obs: Obs) -> bool:
        """Which header carried a credential, and in which scheme when the recording still
        says (`Basic [REDACTED]`); a credential redacted whole still says one was needed.
        Whether the request carried one at all."""
        exchange = obs.exchange
        gathered = self.gathered
        carried = False
        for name, value in exchange.request_headers:
            found = signature(name, value)
            if found is None:
                continue
            carried = True
            if found.kind == "scheme":
                gathered.auth_headers.setdefault(found.name, Tally()).add(obs.session, exchange.id)
            elif found.kind == "opaque":
                gathered.opaque_auth.add(obs.session, exchange.id)
            else:
                gathered.api_key_headers.setdefault(name, Tally()).add(obs.session, exchange.id)
        return carried

    def _gather_error(self, obs: Obs) -> None:
        exchange = obs.exchange
        body = exchange.response_body
        value = (
            body.value
            if body.kind == "json"
            else _short_text(body.value, body.mime_type)
            if body.kind == "text"
            else None
        )
        headers = {name.lower(): text for name, text in exchange.response_headers}
        sample = conventions.ErrorSample(exchange.status, value, headers, exchange.id)
        if exchange.status == 401:
            self.gathered.unauthorized.append(sample)
        if body.is_json:
            self.gathered.errors.append(sample)

    def _gather_response(self, obs: Obs, op: OpStats) -> None:
        exchange = obs.exchange
        status = exchange.status
        gathered = self.gathered
        for name, value in exchange.response_headers:
            lowered = name.lower()
            if lowered in _KEPT_RESPONSE_HEADERS:
                headers = op.headers.setdefault(status, {})
                shape = headers.get(lowered)
                if shape is None:
                    shape = headers[lowered] = Shape()
                shape.add(value)
        if not exchange.response_body.is_json:
            return
        body = exchange.response_body.value
        unwrapped = obs.unwrapped
        many = unwrapped.cardinality == "many"
        if many or unwrapped.key is not None or id_field(unwrapped.records) is not None:
            key = conventions.envelope_key(body, unwrapped.key, many, unwrapped.records)
            gathered.envelopes.setdefault(key, Tally()).add(obs.session, exchange.id)
            op.envelopes.setdefault(key, Tally()).add(obs.session, exchange.id)
            if many and isinstance(body, dict):
                for name, value in body.items():
                    if name != unwrapped.key:
                        op.list_extras.setdefault(name, value)
        if many:
            op.many += 1
            if unwrapped.records and id_field(unwrapped.records) is None:
                op.idless += 1
            for record in unwrapped.records:
                op.keys_ever.update(record)
                op.keys_always = (
                    set(record) if op.keys_always is None else op.keys_always & record.keys()
                )
            gathered.list_exchanges.add(obs.session, exchange.id)
            for name, _ in exchange.query:
                gathered.list_query_params[name] += 1
            if exchange.response_header("link"):
                gathered.link_header.add(obs.session, exchange.id)
            for name, _ in exchange.response_headers:
                if name.lower() in ("x-total-count", "x-total", "total-count"):
                    gathered.total_header.setdefault(_canonical_header(name), Tally()).add(
                        obs.session, exchange.id
                    )
        elif (unwrapped.records and id_field(unwrapped.records) is not None) or obs.receipt:
            op.one_with_id += 1
            self._count_identity(obs, op)
        if (
            obs.template
            and obs.template[-1] == "query"
            and any(name == "q" for name, _ in exchange.query)
        ):
            gathered.soql_paths.add(obs.session, exchange.id)
        for record in unwrapped.records[:1]:
            kind = record_type(record)
            if kind is not None:
                op.record_types[kind] += 1
        if unwrapped.key is not None:
            op.wrap_keys[(status, unwrapped.key, unwrapped.cardinality)] += 1
            wrapper = op.wrappers.get(status)
            if wrapper is None:
                wrapper = op.wrappers[status] = Shape()
            assert isinstance(body, dict)
            if wrapper.count < _BODY_BUDGET:
                wrapper.add({name: value for name, value in body.items() if name != unwrapped.key})
        elif not unwrapped.records and not many:
            shape = op.bare.get(status)
            if shape is None:
                shape = op.bare[status] = Shape()
            if shape.count < _BODY_BUDGET:
                shape.add(body)
        else:
            op.wrap_keys[(status, None, unwrapped.cardinality)] += 1

    def _count_identity(self, obs: Obs, op: OpStats) -> None:
        """Whether a one-record answer to a call below a record is that record or another."""
        if len(op.template) < 2 or op.template[-1] == PARAM or PARAM not in op.template:
            return
        entity = _entity_of(obs, op)
        records = obs.unwrapped.records
        name = id_field(records) if records else None
        if entity is None or name is None:
            return
        if plain_id(records[0][name]) == plain_id(entity):
            op.same_ids += 1
        else:
            op.new_ids += 1

    def _decide_operations(self) -> None:
        for op in self.ops.values():
            op.resource = operation_resource(op)
            op.kind = operation_kind(op)
            if op.kind == "list" and PARAM in op.template and op.idless == op.many:
                # `/consumables/{id}/users` listing rows without ids (who took one, when):
                # something about a parent record, not the `user` records themselves.
                op.resource = None
        self._part_other_kinds()
        items = {
            op.template: op.resource for op in self.ops.values() if op.template[-1:] == (PARAM,)
        }
        for op in self.ops.values():
            # POST /attachment/file beside /attachment/{id}: a route below a collection that
            # makes records makes that collection's records.
            owner = items.get((*op.template[:-1], PARAM)) if op.kind == "create" else None
            if owner is not None and op.template[-1] != PARAM and len(op.template) >= 2:
                op.resource = owner

    def _part_other_kinds(self) -> None:
        """A list below a record that holds another kind than the top-level list of its name
        (`operations.another_kind`) ties to no resource: its answers are replayed rather than
        rendered from records they are not."""
        lists = [op for op in self.ops.values() if op.kind == "list" and op.resource]
        top: dict[str, list[OpStats]] = {}
        for op in lists:
            if PARAM not in op.template:
                top.setdefault(op.resource or "", []).append(op)
        for op in lists:
            if PARAM in op.template and any(
                another_kind(op, other) for other in top.get(op.resource or "", [])
            ):
                op.resource = None

    # pass 3 ----------------------------------------------------------------------------

    def _pass_resources(self) -> None:
        for obs in self.observations:
            op = obs.op
            assert op is not None
            if obs.receipt is not None:
                self._take_receipt(obs, op)
                continue
            records = obs.unwrapped.records
            # A labels view shows what the service displays, not what it holds.
            if not records or op.kind not in _RECORD_KINDS or obs.view == "labels":
                continue
            if op.kind == "get" and PARAM not in op.template:
                # A singleton (`/myself`) says nothing about which collection its record is in.
                continue
            typed = record_type(records[0]) is not None
            first = record_type(records[0]) if typed else op.resource
            page = _page_fingerprint(records, self.id_fields.get(first or ""))
            repeat = page is not None and page in self.pages
            if page is not None:
                self.pages.add(page)
            if first is not None and first not in self.records:
                # The page, not one record, shows which field tells records apart.
                page_of_first = [r for r in records if not typed or record_type(r) == first]
                self.records[first] = Shape()
                chosen = id_field(page_of_first, first)
                if chosen is not None:
                    self.id_fields[first] = chosen
            chosen_records = [] if repeat else self._record_sample(records, first)
            for record in chosen_records:
                name = record_type(record) if typed else op.resource
                if name is None:
                    continue
                self._take_record(name, record, obs)
            if not repeat and len(chosen_records) < len(records):
                self._take_novel(records, chosen_records, typed, op.resource, obs)
            counts = (
                Counter(record_type(r) for r in records) if typed else {op.resource: len(records)}
            )
            for name, count in counts.items():
                if name is not None:
                    tally = self.record_tally.setdefault(name, Tally())
                    tally.add(obs.session, obs.exchange.id)
                    tally.samples += count - 1
            if typed or op.resource is None:
                continue
            ids = self.ids.setdefault(op.resource, set())
            id_name = self.id_fields.get(op.resource)
            if id_name is not None and len(ids) < _ID_CAP:
                for record in records:
                    value = record.get(id_name)
                    if value is not None:
                        ids.add(str(value))
            if op.kind == "create" and obs.exchange.request_body.is_json:
                pairs = self.creates.setdefault(op.resource, [])
                for pair in _created_pairs(op, obs.exchange.request_body.value, records):
                    if len(pairs) < _CREATE_SAMPLES:
                        pairs.append(pair)
        for op in self.ops.values():
            if (
                op.resource is not None
                and op.kind in ("create", "update", "replace")
                and op.request.count
            ):
                batch = batch_key(op)
                # A batch create's records are the items of its list, not the request.
                request = op.request.props[batch].items if batch is not None else op.request
                if request is not None:
                    self.requests.setdefault(op.resource, []).append(request)

    def _pass_sightings(self) -> None:
        """The records the service held before the traces changed anything, for a served mock to
        start with: each record's first sighting, completed by fields only later sightings show
        (a projected list, then a full get); records the traces created are left out, since
        serving them at start would make their creates clash."""
        sightings = self.sightings
        for obs, op in self._answered():
            if op.kind not in _RECORD_KINDS:
                continue
            made = op.kind == "create" or (op.method == "POST" and obs.exchange.status == 201)
            for name, key, record in self._identified(obs, op):
                if made:
                    self.made.add((name, key))
                if (name, key) in self.made:
                    continue
                seen = sightings.setdefault(name, {})
                known = seen.get(key)
                if known is None:
                    if len(seen) < _SIGHTINGS_KEPT:
                        seen[key] = {k: v for k, v in record.items() if k != "attributes"}
                    continue
                for field_name, item in record.items():
                    if field_name != "attributes":
                        known.setdefault(field_name, item)

    def _answered(self) -> Iterator[tuple[Obs, OpStats]]:
        """The successful answers that showed records' values."""
        for obs in self.observations:
            op = obs.op
            assert op is not None
            if obs.unwrapped.records and obs.view != "labels" and 200 <= obs.exchange.status < 300:
                yield obs, op

    def _identified(self, obs: Obs, op: OpStats) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(resource, id, record) of each record of an answer that carries its id."""
        for record in obs.unwrapped.records:
            name = record_type(record) or op.resource
            id_name = self.id_fields.get(name or "")
            value = record.get(id_name) if id_name is not None else None
            if name is not None and value is not None and not isinstance(value, dict | list):
                yield name, str(value), record

    def _take_receipt(self, obs: Obs, op: OpStats) -> None:
        """A create answered with only the id it made: an id of the operation's resource, and
        a request without a record to compare it with."""
        assert obs.receipt is not None
        if op.resource is None or op.kind != "create":
            return
        ids = self.ids.setdefault(op.resource, set())
        if len(ids) < _ID_CAP:
            ids.add(obs.receipt[1])
        if obs.exchange.request_body.is_json:
            pairs = self.creates.setdefault(op.resource, [])
            if len(pairs) < _CREATE_SAMPLES:
                pairs.append((obs.exchange.request_body.value, {}))

    def _record_sample(
        self, records: list[dict[str, Any]], resource: str | None
    ) -> list[dict[str, Any]]:
        """The records of one response to walk: as many as the resource's budget of values
        still allows, at least one (every response still counts as evidence)."""
        name = resource or ""
        walked = self.walked.get(name, 0)
        if walked >= _LEAF_BUDGET:
            return sampled(records, 1)
        width = _size(records[len(records) // 2])
        count = max(1, min(ARRAY_SAMPLE, len(records), (_LEAF_BUDGET - walked) // width))
        self.walked[name] = walked + count * width
        return sampled(records, count)

    def _take_novel(
        self,
        records: list[dict[str, Any]],
        chosen: list[dict[str, Any]],
        typed: bool,
        resource: str | None,
        obs: Obs,
    ) -> None:
        """Walk the records the sample left out only if they show something new at the top
        level: a field not seen yet, a field missing, or a value of a type not seen for its
        field (a ServiceNow reference that is usually "" but here `{link, value}`). A record
        with a number of fields not seen before is taken too: it may lack one."""
        taken = {id(record) for record in chosen}
        left: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            if id(record) in taken:
                continue
            name = record_type(record) if typed else resource
            if name is None:
                continue
            # Records of one resource mostly repeat a few layouts: a layout seen before (same
            # keys, same value types) is skipped without looking at its fields one by one.
            layout = (tuple(record), tuple(map(type, record.values())))
            layouts = self.layouts.setdefault(name, set())
            if layout not in layouts:
                kinds = self.kinds.get(name)
                if (
                    kinds is None
                    or len(record) not in self.widths[name]
                    or any(type(value) not in kinds.get(key, ()) for key, value in record.items())
                ):
                    self._take_record(name, record, obs)
                    continue
                if len(layouts) < _LAYOUTS:
                    layouts.add(layout)
            left.setdefault(name, []).append(record)
        for name, kept in left.items():
            self._keep_unsampled(name, kept)

    def _keep_unsampled(self, name: str, records: list[dict[str, Any]]) -> None:
        """Remember the first sighting of each record the sample left out, by its id: their
        values count towards enum decisions (`_count_unsampled`). A record without an id cannot
        be told from another sighting of itself, so it is not counted."""
        id_name = self.id_fields.get(name)
        if id_name is None:
            return
        kept = self.unsampled.setdefault(name, {})
        for record in records:
            value = record.get(id_name)
            if value is not None:
                kept.setdefault(str(value), record)

    def _take_record(self, name: str, record: dict[str, Any], obs: Obs) -> None:
        shape = self.records.get(name)
        if shape is None:
            shape = self.records[name] = Shape()
            chosen = id_field([record], name)
            if chosen is not None:
                self.id_fields[name] = chosen
        # What the novelty check compares against; a layout taken before adds nothing to it.
        layout = (tuple(record), tuple(map(type, record.values())))
        layouts = self.layouts.setdefault(name, set())
        if layout not in layouts:
            if len(layouts) < _LAYOUTS:
                layouts.add(layout)
            kinds = self.kinds.setdefault(name, {})
            self.widths.setdefault(name, set()).add(len(record))
            for field_name, kind in zip(layout[0], layout[1], strict=True):
                found = kinds.get(field_name)
                if found is None:
                    kinds[field_name] = {kind}
                else:
                    found.add(kind)
        id_name = self.id_fields.get(name)
        value = record.get(id_name) if id_name is not None else None
        if value is None:
            shape.add(record)
            return
        ids = self.ids.setdefault(name, set())
        if len(ids) < _ID_CAP:
            ids.add(str(value))
        # Each entity counts once; seeing it again adds only what changed, so a record fetched
        # ten times does not make its free text look like an enumeration.
        key = (name, str(value))
        before = self.latest.get(key)
        self.latest[key] = record
        if before is None:
            shape.add(record)
        elif before != record:
            props = shape.props
            for field_name, item in record.items():
                if before.get(field_name, _ABSENT) != item:
                    child = props.get(field_name)
                    if child is None:
                        child = props[field_name] = Shape(field_name)
                    child.add(item)
        attributes = record.get("attributes")
        if isinstance(attributes, dict) and name not in self.item_urls:
            url = attributes.get("url")
            if (
                isinstance(url, str)
                and id_name is not None
                and url.endswith("/" + str(record.get(id_name)))
            ):
                self.item_urls[name] = url[: url.rindex("/")]

    # resources -------------------------------------------------------------------------

    def _resources(self) -> dict[str, Resource]:
        resources: dict[str, Resource] = {}
        self._item_convention = self._item_paths_follow_collections()
        self._caller_fields: set[tuple[str, str]] = set()
        for name in sorted(self.records):
            shape = self.records[name]
            id_name = self.id_fields.get(name) or self._id_from_item_path(name, shape)
            if id_name is None:
                continue
            id_shape = shape.props[id_name]
            self._count_unsampled(name, shape)
            collection, item = self._resource_paths(name, id_name)
            envelope = self._resource_envelope(name, shape)
            request_key = (envelope or self.envelope).request_key
            fields = self._fields(name, shape, id_name, request_key)
            inputs = self._inputs(name, shape, request_key)
            also = self._also(name)
            views = self._views(name, also) if also else []
            # Numbered fields (INC0010001) are as unique as the id: the service mints both.
            numbered = [key for key, spec in fields.items() if spec.generator is not None]
            resources[name] = Resource(
                name=name,
                collection_path=collection,
                item_path=item,
                id_field=id_name,
                id_format=id_format(self.ids.get(name, set()), id_shape),
                fields=fields,
                display_field=display_field(shape, id_name),
                unique=[id_name, *numbered],
                keys=self._keys(name, id_name),
                envelope=envelope,
                inputs=inputs,
                also=also,
                views=views,
                records=of_one_kind(
                    list(self.sightings.get(name, {}).values()),
                    {key: shape.props[key].counts() for key in KIND_KEYS if key in shape.props},
                )
                if self.options.records
                else [],
                evidence=self.record_tally[name].evidence(),
            )
        _stamp_callers_alike(resources, self._caller_fields)
        _links_to_resources(resources)
        return resources

    def _resource_envelope(self, name: str, shape: Shape) -> Envelope | None:
        """How this resource's answers and writes are wrapped, where the service's wrapper
        does not say (see `conventions.resource_envelope`)."""
        envelopes: dict[conventions.EnvelopeKey, Tally] = {}
        extras: dict[str, Any] = {}
        request_key: str | None = None
        for op in self.ops.values():
            if op.resource != name:
                continue
            for wrapping, tally in op.envelopes.items():
                envelopes.setdefault(wrapping, Tally()).absorb(tally)
            for extra, value in op.list_extras.items():
                extras.setdefault(extra, value)
            if op.kind in ("create", "update", "replace") and request_key is None:
                request_key = _request_wrapper(op.request, shape)
        return conventions.resource_envelope(
            envelopes, self.envelope, extras=extras, request_key=request_key
        )

    def _count_unsampled(self, name: str, shape: Shape) -> None:
        """Count the values of records the sample left out (each record once, unless it was
        walked after all; at most `_UNSAMPLED_MAX`) into the fields that may be categories, one
        pass per field in C."""
        kept = self.unsampled.get(name)
        if not kept:
            return
        records = sampled(
            [record for key, record in kept.items() if (name, key) not in self.latest],
            _UNSAMPLED_MAX,
        )
        for field_name, child in shape.props.items():
            if child.may_be_categorical():
                counts: Counter[Any] = Counter(map(dict.get, records, itertools.repeat(field_name)))
                # Absent from a record (None) is not a value; the novelty check walked every
                # record with a type not seen for the field, so the rest are strings.
                counts.pop(None, None)
                child.unsampled = counts

    def _id_from_item_path(self, name: str, shape: Shape) -> str | None:
        """Records fetched with only some fields (`sysparm_fields`) lack their id; the item
        path still names it, and its values are the ids."""
        for op in self.ops.values():
            if (
                op.resource == name
                and op.kind == "get"
                and op.template
                and op.template[-1] == PARAM
            ):
                values = self.param_values.get(op.template, {})
                path = self._path(op.template, name)
                id_name = path.rsplit("{", 1)[1].rstrip("}")
                self.id_fields[name] = id_name
                self.ids[name] = set(values)
                id_shape = shape.props[id_name] = Shape(id_name)
                for value, count in values.items():
                    for _ in range(count):
                        id_shape.add(value)
                id_shape.count = shape.objects
                return id_name
        return None

    def _resource_paths(self, name: str, id_name: str) -> tuple[str | None, str | None]:
        collection = item = None
        for op in sorted(self.ops.values(), key=lambda o: (-o.tally.samples, o.template)):
            if op.resource != name:
                continue
            path = self._path(op.template, name, id_name)
            on_item = bool(op.template) and op.template[-1] == PARAM
            if op.kind in ("get", "update", "replace", "delete") and item is None and on_item:
                # `/docs/{id}/export` answers about a record; the record lives at `/docs/{id}`.
                item = path
            elif op.kind in ("list", "create") and collection is None:
                collection = path
        if name in self.item_urls:
            collection = collection or self.item_urls[name]
            item = item or f"{self.item_urls[name]}/{{{id_name}}}"
        if collection is None and item is not None:
            collection = item.rsplit("/", 1)[0]
        if item is None and collection is not None and self._item_convention:
            # Every resource seen both ways keeps its records at `<collection>/{id}`.
            item = item_under(collection, id_name)
        return collection, item

    def _item_paths_follow_collections(self) -> bool:
        """Whether item templates are their collection template plus one parameter."""
        collections = {op.template for op in self.ops.values() if op.kind in ("list", "create")}
        items = [
            op.template
            for op in self.ops.values()
            if op.kind == "get" and op.template[-1:] == (PARAM,)
        ]
        return bool(items) and all(template[:-1] in collections for template in items)

    def _path(
        self, template: tuple[str, ...], resource: str | None, id_name: str | None = None
    ) -> str:
        """The full URL path of a template, with parameters named after what they hold."""
        parts: list[str] = []
        used: set[str] = set()
        for index, segment in enumerate(template):
            if segment != PARAM:
                parts.append(segment)
                continue
            owner = literal_before(template, index)
            values = self.param_values.get(template[: index + 1], {})
            name = param_name(owner, values, self.fields_of, self.service_id)
            if (
                owner == resource
                and id_name is not None
                and id_name not in _GENERIC
                and not (set().union(*(self.fields_of.get(v, set()) for v in values)) - {id_name})
            ):
                name = id_name
            while name in used:
                name += "_"
            used.add(name)
            parts.append("{" + name + "}")
        return self.group.base + "/" + "/".join(parts) if parts else self.group.base or "/"

    def _fields(
        self, name: str, shape: Shape, id_name: str, request_key: str | None
    ) -> dict[str, FieldSpec]:
        requests = self.requests.get(name, [])
        creates = [
            (_unwrapped_request(request, request_key), record)
            for request, record in self.creates.get(name, [])
        ]
        create_requests = [request for request, _ in creates if isinstance(request, dict)]
        sent: set[str] = set()
        for request in requests:
            sent |= request.props.keys()
            for child in request.props.values():
                # Jira wraps the writable fields in {"fields": {...}}.
                sent |= child.props.keys()
        tally = self.record_tally[name]
        fields: dict[str, FieldSpec] = {}
        for field_name, child in shape.props.items():
            written = field_name in sent
            blind = written and written_blind(
                child, [r.props[field_name] for r in requests if field_name in r.props]
            )
            schema: JsonSchema = {"type": "string"} if blind else child.schema()
            generated = field_name == id_name or (bool(requests) and not written)
            weak = (
                not requests and field_name != id_name and BOOKKEEPING.match(field_name) is not None
            )
            spec = FieldSpec(
                name=field_name,
                schema_=schema,
                required=child.count >= shape.objects,
                nullable=child.nulls > 0,
                server_generated=generated or weak,
                read_only=generated or weak,
                required_on_create=len(create_requests) >= _CREATES_TO_REQUIRE
                and all(field_name in r for r in create_requests),
                evidence=tally.evidence(samples=child.count, scale=0.3 if weak else 1.0),
            )
            spec.reference = self._reference(field_name, child, name)
            default = create_default(field_name, creates)
            if default is not NO_DEFAULT:
                spec.has_default = True
                spec.default = stored_default(default)
            elif spec.reference is not None and generated and stamps_caller(field_name, creates):
                spec.stamp = "caller"
                self._caller_fields.add((field_name, spec.reference.resource))
            # What seeding draws from; the schema has an enum only if the set is closed.
            frequencies = None if blind else child.frequencies()
            if frequencies is not None:
                spec.enum_frequencies = frequencies
            # A reference holds another record's numbers (PO-000001); this one mints none.
            minted = field_name != id_name and spec.reference is None
            spec.generator = sequence_format(child) if minted else None
            fields[field_name] = spec
        return fields

    def _also(self, name: str) -> list[str]:
        """The other resources whose records this resource's item operations were called
        with, successfully: their ids are ids of this resource too. Numbers are left out: two
        tables may both hold a record 7 by chance, not one record under two names."""
        others = {
            resource: {plain_id(value) for value in ids}
            for resource, ids in self.ids.items()
            if resource != name
        }
        found: set[str] = set()
        for _obs, value in self._item_calls(name):
            if value.isdigit():
                continue
            found.update(resource for resource, ids in others.items() if plain_id(value) in ids)
        return sorted(found)

    def _item_calls(self, name: str) -> Iterator[tuple[Obs, str]]:
        """Each successful item call on the resource, with the id its path named."""
        for obs in self.observations:
            op = obs.op
            if (
                op is None
                or op.resource != name
                or op.kind not in _ITEM_KINDS
                or not 200 <= obs.exchange.status < 300
            ):
                continue
            value = _entity_of(obs, op)
            if value is not None:
                yield obs, value

    def _upload(self, op: OpStats) -> Upload | None:
        """How the operation's creates made records of files sent as their bodies, if any
        were (`myna.schemas.uploads`)."""
        samples: list[UploadSample] = []
        tally = Tally()
        for obs in self.observations:
            exchange = obs.exchange
            sent = exchange.request_body
            records = obs.unwrapped.records
            if obs.op is not op or sent.kind not in _FILE_BODIES or len(records) != 1:
                continue
            if not 200 <= exchange.status < 300:
                continue
            size = len(sent.value.encode()) if sent.kind == "text" else _decoded_size(sent.value)
            media_type = exchange.request_header("content-type") or sent.mime_type
            samples.append(UploadSample(exchange.query, size, media_type, records[0]))
            tally.add(obs.session, exchange.id)
        return learn_upload(samples, tally.evidence()) if samples else None

    def _keys(self, name: str, id_field: str) -> list[str]:
        """The fields besides the id that this resource's item paths named records by: a
        path value that is not the answered record's id but another field's value."""
        votes: Counter[str] = Counter()
        for obs, value in self._item_calls(name):
            records = obs.unwrapped.records
            if len(records) != 1 or str(records[0].get(id_field)) == value:
                continue
            # A project keyed BUG may be named BUG too: either may be the key, and the mock
            # looks a record up by any of them, so each counts.
            votes.update(
                field
                for field, held in records[0].items()
                if field != id_field and _scalar_text(held) == value
            )
        return sorted(votes)

    def _views(self, name: str, also: list[str]) -> list[View]:
        """How this resource's item paths answered the records of the resources in `also`,
        learned from each such answer beside the record's answer just before it."""
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        examples: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {o: [] for o in also}
        tallies: dict[str, Tally] = {other: Tally() for other in also}
        for obs, op in self._answered():
            for kind, value, record in self._identified(obs, op):
                key = plain_id(value)
                if kind == name and op.resource == name and op.kind in _ITEM_KINDS:
                    for other, found in examples.items():
                        before = latest.get((other, key))
                        if before is not None and len(found) < _EXAMPLES_KEPT:
                            found.append((before, record))
                            tallies[other].add(obs.session, obs.exchange.id)
                elif kind in examples:
                    latest[(kind, key)] = record
        learned = (
            learn_view(other, found, tallies[other].evidence()) for other, found in examples.items()
        )
        return [view for view in learned if view is not None]

    def _inputs(self, name: str, shape: Shape, request_key: str | None) -> dict[str, JsonSchema]:
        """The fields writes sent that no record of the resource ever showed, or sent in
        another structure than records show them, with the schema of what was sent."""
        sent: dict[str, JsonSchema] = {}
        for request in self.requests.get(name, []):
            body = request.props.get(request_key, request) if request_key else request
            for key, child in body.props.items():
                if key != request_key and _input_of_its_own(child, shape.props.get(key)):
                    schema = child.schema()
                    sent[key] = merge_schemas(sent[key], schema) if key in sent else schema
        return dict(sorted(sent.items()))

    def _reference(self, field_name: str, shape: Shape, owner: str) -> Reference | None:
        link = shape.props.get("link")
        if link is not None and "value" in shape.props:
            target = link_target(link.sample)
            if target is not None:
                return Reference(
                    resource=target, style="link_value", evidence=count_evidence(shape.objects)
                )
        values = [value for value in shape.sample if value]
        if not values or shape.objects:
            return None
        for resource, ids in sorted(self.ids.items()):
            if resource == owner and field_name == self.id_fields.get(owner):
                continue
            if all(value in ids for value in values):
                return Reference(
                    resource=resource, style="id", evidence=count_evidence(len(values))
                )
        return None

    # behaviour -------------------------------------------------------------------------

    def _behaviour(self, resources: dict[str, Resource]) -> None:
        paths = {name: behaviour.state_paths(self.records[name]) for name in resources}
        states = {
            name: {path: behaviour.state_values(self.records[name].at(path)) for path in found}
            for name, found in paths.items()
        }
        seen = {name: behaviour.Observations() for name in resources}
        writes = {op.resource for op in self.ops.values() if op.kind in _WRITE_KINDS}
        last: dict[tuple[str, str], dict[str, Any]] = {}
        # The write a record's next read shows the effect of: (operation, implied, request body).
        pending: dict[tuple[str, str], tuple[str, bool, dict[str, Any] | None]] = {}
        # A record may be addressed by any of its ids (Jira: `10010` or `JJJ-9`).
        alias: dict[tuple[str, str], str] = {}
        for obs in self.observations:
            op = obs.op
            assert op is not None
            name = op.resource
            if name is None or name not in resources or not (paths[name] or name in writes):
                continue
            resource = resources[name]
            exchange = obs.exchange
            entity = _entity_of(obs, op)
            if entity is not None:
                entity = alias.get((name, entity), entity)
            if op.kind in _WRITE_KINDS and exchange.status >= 400:
                if exchange.status in _REFUSALS and (entity is not None or op.kind == "create"):
                    before = last.get((name, entity)) if entity is not None else None
                    for path in paths[name]:
                        seen[name].refusals.append(
                            behaviour.Refusal(
                                source=behaviour.state_key(behaviour.value_at(before, path))
                                if before
                                else None,
                                request=exchange.request_body.value,
                                status=exchange.status,
                                message=error_message(exchange.response_body.value),
                                operation=op.id or operation_id(op),
                                session=obs.session,
                                example=exchange.id,
                            )
                        )
                continue
            if exchange.status >= 300:
                continue
            records = (
                []
                if obs.view == "labels"
                else [r for r in obs.unwrapped.records if r.get(resource.id_field) is not None]
            )
            written = op.kind in _WRITE_KINDS
            if written and not records and entity is not None:
                before = last.get((name, entity))
                implied = False
                for path in paths[name]:
                    target = behaviour.find_state(exchange.request_body.value, states[name][path])
                    if target is not None:
                        source = (
                            behaviour.state_key(behaviour.value_at(before, path))
                            if before
                            else None
                        )
                        seen[name].implied.append(
                            behaviour.Implied(
                                source, target, operation_id(op), obs.session, exchange.id
                            )
                        )
                        implied = True
                pending[(name, entity)] = (operation_id(op), implied, _request_record(exchange))
                continue
            if obs.labels:
                labels = seen[name].labels
                for path in paths[name]:
                    shown = obs.labels.get(path)
                    if shown:
                        labels.setdefault(path, {}).update(shown)
            for record in records:
                canonical = str(record[resource.id_field])
                for id_name in ID_FIELDS:
                    other = record.get(id_name)
                    if other is not None and not isinstance(other, (dict, list)):
                        alias[(name, str(other))] = canonical
                key = (name, canonical)
                request = _request_record(exchange) if written else None
                operation, was_implied, follows = (
                    (operation_id(op), False, None)
                    if written
                    else pending.pop(key, (None, False, None))
                )
                if op.kind == "create":
                    seen[name].created.append(
                        behaviour.Created(
                            record, operation or "", obs.session, exchange.id, request
                        )
                    )
                    # A create may answer with a stub; the next read shows the state it made.
                    pending[key] = (operation_id(op), False, request)
                before = last.get(key)
                last[key] = record
                if before is not None and before != record:
                    seen[name].changes.append(
                        behaviour.Change(
                            before,
                            record,
                            operation,
                            obs.session,
                            exchange.id,
                            was_implied,
                            request=request,
                            follows=follows,
                        )
                    )
        for name, resource in resources.items():
            observed = seen[name]
            volatile = volatile_fields(resource)
            callers = caller_references(resource)
            resource.state_machines = [
                behaviour.state_machine(
                    path, self.records[name].at(path), observed, volatile, callers
                )
                for path in paths[name]
            ]
            stable, changes = behaviour.immutable_fields(observed.changes)
            for field_name in stable:
                if field_name in resource.fields:
                    resource.fields[field_name].immutable = True
            if changes and resource.id_field in resource.fields:
                resource.fields[resource.id_field].immutable = True
            lifecycles = {path.split(".")[0] for path in paths[name]}
            for field_name in behaviour.counters(observed.changes, self.records[name], lifecycles):
                if field_name in resource.fields:
                    resource.fields[field_name].schema_.pop("enum", None)

    # operations ------------------------------------------------------------------------

    def _operations(self, resources: dict[str, Resource]) -> list[Operation]:
        taken: set[str] = set()
        operations: list[Operation] = []
        for op in sorted(
            self.ops.values(), key=lambda o: (o.template, _METHOD_ORDER.get(o.method, 9), o.method)
        ):
            target = self._singleton_of(op, resources)
            if target is not None:
                op.resource = target[0]
            resource = resources.get(op.resource) if op.resource else None
            id_name = resource.id_field if resource is not None else None
            path = self._path(op.template, op.resource, id_name)
            base_id = operation_id(op)
            unique = base_id
            counter = 2
            while unique in taken:
                unique = f"{base_id}_{counter}"
                counter += 1
            taken.add(unique)
            op.id = unique
            operations.append(
                Operation(
                    id=unique,
                    method=op.method,
                    path=path,
                    kind=op.kind,
                    resource=op.resource if resource is not None else None,
                    parameters=self._parameters(op, path),
                    request_schema=op.request.schema() if op.request.count else None,
                    responses=self._responses(op, resources),
                    effects=self._effects(op, resource),
                    scope=self._scope(op) if resource is not None else None,
                    batch=batch_key(op) if op.kind == "create" else None,
                    upload=self._upload(op) if op.kind == "create" else None,
                    view=self._operation_views().get((op.method, op.template)),
                    target=target[1] if target is not None else None,
                    recorded=self._recorded(op, path)
                    if self.options.answers and _replayed(op, resource)
                    else [],
                    public=self._public(op, resource),
                    envelope=self._operation_envelope(op, resource),
                    evidence=op.tally.evidence(),
                )
            )
        self._rename_transitions(resources)
        return operations

    def _scope(self, op: OpStats) -> str | None:
        """The field that ties a nested collection's records to the parent its path names."""
        template = op.template
        if op.kind not in ("list", "create") or PARAM not in template or template[-1] == PARAM:
            return None
        position = len(template) - 1 - template[::-1].index(PARAM)
        samples = [
            (obs.segments[position], obs.unwrapped.records)
            for obs in self.observations
            # A collection's list and its creates show the same tie.
            if obs.op is not None
            and obs.op.template == template
            and obs.op.kind in ("list", "create")
            and 200 <= obs.exchange.status < 300
            and position < len(obs.segments)
            and obs.unwrapped.records
        ]
        owner = literal_before(template, position)
        resource = op.resource or ""
        return scope_field(
            samples,
            parent_kind=singular(owner) if owner else "parent",
            own_id=self.id_fields.get(resource) or "id",
        )

    def _operation_envelope(self, op: OpStats, resource: Resource | None) -> Envelope | None:
        """A list's own wrapper where its answers wrap otherwise than its resource's lists
        (GitHub's `/search/issues` answers `{total_count, items}`, its other lists are bare)."""
        if op.kind != "list" or resource is None or not op.envelopes:
            return None
        own = conventions.resource_envelope(
            op.envelopes, self.envelope, extras=op.list_extras, request_key=None
        )
        own = own or self.envelope
        usual = resource.envelope or self.envelope
        if (own.style, own.list_key) == (usual.style, usual.list_key):
            return None
        return own

    def _public(self, op: OpStats, resource: Resource | None) -> bool:
        """Whether the service answered the operation to callers without a credential, when
        it asked others for one: with a success, or, where the mock replays recorded answers,
        with anything but its 401 (a redirect to the login page). A record's operation that
        only refused them stays closed: the mock would otherwise serve its records to anyone."""
        if self.auth.scheme == "none":
            return False
        if any(200 <= status < 300 for status in op.anonymous):
            return True
        refusals = set(op.anonymous) - {self.auth.unauthorized_status}
        return bool(refusals) and _replayed(op, resource)

    def _recorded(self, op: OpStats, path: str) -> list[RecordedAnswer]:
        """The answers a mock replays for an operation it cannot simulate."""
        names = re.findall(r"\{([^}]+)\}", path)
        positions = [index for index, segment in enumerate(op.template) if segment == PARAM]
        samples = []
        for obs in op.answers:
            exchange = obs.exchange
            params = {
                path_param(name): obs.segments[index]
                for name, index in zip(names, positions, strict=True)
                if index < len(obs.segments)
            }
            params.update(exchange.query)
            body = exchange.response_body
            samples.append(
                AnswerSample(
                    params=params,
                    sent=sent_values(exchange.request_body.value),
                    status=exchange.status,
                    headers={
                        name.lower(): value
                        for name, value in exchange.response_headers
                        if name.lower() in KEPT_HEADERS
                    },
                    body=body.value if body.is_json else None,
                    text=body.value if body.kind == "text" else None,
                    anonymous=not obs.signed and self.auth.scheme != "none",
                    session=obs.session,
                    example=exchange.id,
                )
            )
        return recorded_answers(samples)

    def _rename_transitions(self, resources: dict[str, Resource]) -> None:
        """Transitions were recorded with operation hints; point them at the final ids."""
        final = {operation_id(op): op.id for op in self.ops.values()}
        for resource in resources.values():
            for machine in resource.state_machines:
                for transition in machine.transitions:
                    if transition.operation is not None:
                        transition.operation = (
                            final.get(transition.operation, transition.operation) or None
                        )
                for refused in machine.refused:
                    if refused.operation is not None:
                        refused.operation = final.get(refused.operation, refused.operation)

    def _parameters(self, op: OpStats, path: str) -> list[Parameter]:
        parameters: list[Parameter] = []
        names = re.findall(r"\{([^}]+)\}", path)
        params = [index for index, segment in enumerate(op.template) if segment == PARAM]
        for name, index in zip(names, params, strict=True):
            values = self.param_values.get(op.template[: index + 1], {})
            shape = Shape()
            for value in values:
                shape.add(value)
            schema: JsonSchema = {"type": "string"}
            classes = {classify_segment(value) for value in values}
            if len(classes) == 1:
                (only,) = classes
                pattern = ID_PATTERNS.get(only)
                if pattern is not None:
                    schema["pattern"] = pattern
            tally = Tally()
            tally.samples = sum(values.values())
            parameters.append(
                Parameter(
                    name=name,
                    location="path",
                    required=True,
                    schema_=schema,
                    role="id",
                    evidence=tally.evidence(),
                )
            )
        for name in sorted(op.query):
            shape = op.query[name]
            tally = Tally()
            tally.samples = shape.count
            parameters.append(
                Parameter(
                    name=name,
                    location="query",
                    required=shape.count == op.tally.samples,
                    schema_=shape.schema(),
                    role=query_role(name),
                    evidence=tally.evidence(),
                )
            )
        return parameters

    def _responses(self, op: OpStats, resources: dict[str, Resource]) -> list[ResponseSpec]:
        responses: list[ResponseSpec] = []
        for status in sorted(op.statuses):
            tally = op.statuses[status]
            schema = self._response_schema(op, status, resources)
            headers = {
                _canonical_header(name): shape.schema()
                for name, shape in sorted(op.headers.get(status, {}).items())
            }
            responses.append(
                ResponseSpec(
                    status=status, schema_=schema, headers=headers, evidence=tally.evidence()
                )
            )
        return responses

    def _response_schema(
        self, op: OpStats, status: int, resources: dict[str, Resource]
    ) -> JsonSchema | None:
        keys = [key for key in op.wrap_keys if key[0] == status]
        if not keys:
            bare = op.bare.get(status)
            return bare.schema() if bare is not None and bare.count else None
        _, key, cardinality = max(keys, key=lambda k: (op.wrap_keys[k], str(k)))
        names = sorted(op.record_types) if op.record_types else [op.resource] if op.resource else []
        refs = [
            {"$ref": f"#/components/schemas/{component_name(name)}"}
            for name in names
            if name in resources
        ]
        record: JsonSchema = (
            refs[0] if len(refs) == 1 else {"anyOf": refs} if refs else {"type": "object"}
        )
        inner = {"type": "array", "items": record} if cardinality == "many" else record
        if key is None:
            return inner
        wrapper = op.wrappers[status].schema()
        wrapper.setdefault("properties", {})[key] = inner
        wrapper["required"] = sorted({*wrapper.get("required", []), key})
        return wrapper

    def _effects(self, op: OpStats, resource: Resource | None) -> list[Effect]:
        """What a custom action does to its record: the state it moves the record to; what a
        delete that only marks its record sets (`deletes`)."""
        if op.kind == "delete":
            seen = self._deletes().get((op.method, op.template))
            return soft_delete_effects(seen) if seen is not None else []
        if op.kind != "action" or resource is None:
            return []
        effects = self._state_effects(op, resource)
        moved = {effect.field for effect in effects}
        echoed = echoed_effects(self._action_pairs(op))
        return effects + [effect for effect in echoed if effect.field not in moved]

    def _action_pairs(self, op: OpStats) -> list[tuple[Any, dict[str, Any]]]:
        """(what was sent, the record answered) of each successful call of an action."""
        return [
            (obs.exchange.request_body.value, obs.unwrapped.records[0])
            for obs in self.observations
            if obs.op is op
            and 200 <= obs.exchange.status < 300
            and obs.exchange.request_body.is_json
            and len(obs.unwrapped.records) == 1
        ][:_EXAMPLES_KEPT]

    def _state_effects(self, op: OpStats, resource: Resource) -> list[Effect]:
        """The state an action moves its record to."""
        effects: list[Effect] = []
        for machine in resource.state_machines:
            for transition in machine.transitions:
                if transition.operation == operation_id(op):
                    pointer = pointer_to_state(op.request, set(machine.states))
                    effects.append(
                        Effect(
                            field=machine.field,
                            from_request=pointer,
                            value=None if pointer else transition.target,
                        )
                    )
                    break
        return effects

    def _singleton_of(self, op: OpStats, resources: dict[str, Resource]) -> tuple[str, str] | None:
        """(resource, id) of the one record a path without parameters always answered, when
        that record is one of a resource's (GET /users/me: the caller, a user)."""
        if op.kind != "get" or PARAM in op.template:
            return None
        found: set[tuple[str, str]] = set()
        for obs in self.observations:
            if obs.op is not op or not 200 <= obs.exchange.status < 300:
                continue
            records = obs.unwrapped.records
            if len(records) != 1:
                return None
            found.update(self._singleton_ids(op, records[0], resources))
        if len(found) != 1:
            return None
        ((name, key),) = found
        value = next((value for value in self.ids.get(name, ()) if plain_id(value) == key), key)
        return name, value

    def _singleton_ids(
        self, op: OpStats, record: dict[str, Any], resources: dict[str, Resource]
    ) -> set[tuple[str, str]]:
        """(resource, plain id) of each resource the record answered at a path without
        parameters is one of: the resource the path names (GitLab's `/user`, whoever signed in,
        a user the lists may never show), else those whose records hold its id."""
        if op.resource in resources:
            own = plain_id(self._id_value(op.resource, record))
            return {(op.resource, own)} if own else set()
        return {
            (name, plain_id(self._id_value(name, record)))
            for name in resources
            if plain_id(self._id_value(name, record)) in self._plain_ids(name)
        }

    def _id_value(self, name: str, record: dict[str, Any]) -> str:
        id_name = self.id_fields.get(name)
        value = record.get(id_name) if id_name is not None else None
        return "" if value is None or isinstance(value, dict | list) else str(value)

    def _plain_ids(self, name: str) -> set[str]:
        return {plain_id(value) for value in self.ids.get(name, ())}

    def _operation_views(self) -> dict[OpKey, View]:
        """Item operations whose answers name another kind than their resource's records do
        (`"object": "page_markdown"` on a page's path), with the view each answers (computed
        once)."""
        if self._seen_views is not None:
            return self._seen_views
        kinds: dict[OpKey, Counter[str]] = {}
        usual: dict[str, Counter[str]] = {}
        for obs, op in self._answered():
            kind = _kind_value(obs.unwrapped.records[0])
            if op.resource is not None and kind is not None:
                usual.setdefault(op.resource, Counter())[kind] += 1
                if op.kind in _VIEWED_KINDS and len(obs.unwrapped.records) == 1:
                    kinds.setdefault((op.method, op.template), Counter())[kind] += 1
        other = {
            key
            for key, counts in kinds.items()
            if counts.most_common(1)[0][0]
            != usual[str(self.ops[key].resource)].most_common(1)[0][0]
        }
        self._seen_views = self._learn_operation_views(other) if other else {}
        return self._seen_views

    def _learn_operation_views(self, viewed: set[OpKey]) -> dict[OpKey, View]:
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        pairs: dict[OpKey, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        tallies: dict[OpKey, Tally] = {}
        for obs, op in self._answered():
            op_key = (op.method, op.template)
            for name, value, record in self._identified(obs, op):
                key = (name, plain_id(value))
                if op_key not in viewed:
                    latest[key] = record
                elif key in latest and len(pairs.get(op_key, ())) < _EXAMPLES_KEPT:
                    pairs.setdefault(op_key, []).append((latest[key], record))
                    tallies.setdefault(op_key, Tally()).add(obs.session, obs.exchange.id)
        learned = {
            # The operation, not an id that happened to match, says these answers are views.
            op_key: learn_view(
                str(self.ops[op_key].resource), examples, tallies[op_key].evidence(), minimum=1
            )
            for op_key, examples in pairs.items()
        }
        return {op_key: view for op_key, view in learned.items() if view is not None}

    def _deletes(self) -> dict[OpKey, SoftDelete]:
        """Per delete operation, its answers beside the records' last answers, and what later
        calls on the deleted records answered (computed once)."""
        if self._seen_deletes is not None:
            return self._seen_deletes
        found: dict[OpKey, SoftDelete] = {}
        latest: dict[str, dict[str, Any]] = {}
        deleted: dict[str, SoftDelete] = {}
        for obs in self.observations:
            op = obs.op
            assert op is not None
            entity = _entity_of(obs, op)
            key = plain_id(entity) if entity is not None else None
            status = obs.exchange.status
            if key is not None and key in deleted and op.kind in _ITEM_KINDS:
                seen = deleted.pop(key)
                seen.survives += 200 <= status < 300
                seen.removed += status in (404, 410)
            if not 200 <= status < 300:
                continue
            if op.kind == "delete" and key is not None:
                seen = found.setdefault((op.method, op.template), SoftDelete())
                deleted[key] = seen
                before = latest.get(key)
                records = obs.unwrapped.records
                if before is not None and len(records) == 1 and len(seen.pairs) < _EXAMPLES_KEPT:
                    seen.pairs.append((before, records[0]))
            for _, value, record in self._identified(obs, op):
                latest[plain_id(value)] = record
        self._seen_deletes = found
        return found

    # conventions -----------------------------------------------------------------------

    def _conventions(self, resources: dict[str, Resource]) -> Conventions:
        gathered = self.gathered
        envelope = self.envelope
        language, _ = conventions.infer_query_language(gathered)
        return Conventions(
            envelope=envelope,
            pagination=conventions.infer_pagination(gathered, envelope),
            errors=conventions.infer_errors(gathered),
            auth=self.auth,
            values_as_strings=values_as_strings(self.records.values()),
            datetime_format=datetime_format(self.records.values()),
            query_language=language,
        )

    def _renderings(self, resources: dict[str, Resource]) -> list[Rendering]:
        """The other renderings query parameters selected (`views.learn_renderings`), and the
        labels they showed, kept on the fields where no referenced record's display field
        gives them."""
        answers = list(self._rendered_answers(resources))
        if not any(answer.rendered for answer in answers):
            return []
        tables = label_tables(answers)

        def label(resource: str, name: str, value: Any) -> Any:
            return tables.get((resource, name), {}).get(str(value), value)

        renderings = learn_renderings(answers, label)
        for (resource, name), table in tables.items():
            spec = resources[resource].fields.get(name)
            if spec is not None:
                spec.labels = self._labels_kept(resources, spec, table)
        return renderings

    def _partial_put(self, resources: dict[str, Resource]) -> bool:
        """Whether the service's PUTs keep what they leave out (`effects.keeps_unsent`), from
        each successful PUT on a record beside the record's answer before it."""
        before: dict[tuple[str, str], dict[str, Any]] = {}
        examples: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = []
        writable: set[str] = set()
        for obs, op in self._answered():
            resource = resources.get(op.resource or "")
            if resource is None or obs.view != "values":
                continue
            for record in obs.unwrapped.records:
                key = (resource.name, str(record.get(resource.id_field)))
                sent = obs.exchange.request_body.value
                if op.kind == "replace" and key in before and isinstance(sent, dict):
                    sent = _unwrapped_request(
                        sent, (resource.envelope or self.envelope).request_key
                    )
                    if isinstance(sent, dict):
                        examples.append((before[key], sent, record))
                        writable.update(n for n, f in resource.fields.items() if not f.read_only)
                before[key] = record
        return keeps_unsent(examples, writable)

    def _rendered_answers(self, resources: dict[str, Resource]) -> Iterator[RenderedAnswer]:
        """Each successful answer with records of a resource: rendered another way (pairs or
        labels) beside the plain answer of the same records (a pairs answer's own values,
        else the record's plain answer before it, else its last), or plain."""
        before: dict[tuple[str, str], dict[str, Any]] = {}
        for obs in self.observations:
            op, exchange = obs.op, obs.exchange
            if op is None or op.resource not in resources or not 200 <= exchange.status < 300:
                continue
            records = obs.unwrapped.records
            if not records or op.kind not in _RECORD_KINDS:
                continue
            id_name = resources[op.resource].id_field
            params = tuple(exchange.query)
            if obs.view == "values":
                for record in records:
                    before[(op.resource, str(record.get(id_name)))] = record
                yield RenderedAnswer(op.resource, params, [], False)
                continue
            shown = unwrap(exchange.response_body.value).records if obs.view == "pairs" else records
            pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
            exact = obs.view == "pairs"
            for plain, rendered in zip(records, shown, strict=True):
                key = (op.resource, str(plain.get(id_name)))
                other = before.get(key) or self.latest.get(key)
                found = _linked(plain, other) if exact else other
                if found is not None and id_name in plain:
                    pairs.append((found, rendered))
            yield RenderedAnswer(op.resource, params, pairs, True, exact, obs.session, exchange.id)

    def _labels_kept(
        self, resources: dict[str, Resource], spec: FieldSpec, table: dict[str, str]
    ) -> dict[str, str]:
        """The labels a mock cannot work out: a reference's, unless the referenced record's
        display field holds it."""
        target = resources.get(spec.reference.resource) if spec.reference else None
        shown = target.display_field if target is not None else None
        if target is None or shown is None:
            return table
        return {
            value: label
            for value, label in table.items()
            if self.latest.get((target.name, value), {}).get(shown) != label
        }


# --- small decisions ----------------------------------------------------------------------


def _linked(values: dict[str, Any], plain: dict[str, Any] | None) -> dict[str, Any]:
    """A rendered answer's own values, each reference as the plain answer shows it (`{link,
    value}`), where the rendering left its link out."""
    if plain is None:
        return values
    return {
        name: plain[name] if is_link(plain.get(name)) and plain[name]["value"] == value else value
        for name, value in values.items()
    }


_METHOD_ORDER = {"GET": 0, "POST": 1, "PUT": 2, "PATCH": 3, "DELETE": 4}
_GENERIC = frozenset({"id", "Id", "ID", "key", "uuid"})
_ABSENT = object()


def _links_to_resources(resources: dict[str, Resource]) -> None:
    """A `{link, value}` reference names the link's collection segment (`/users/{id}` ->
    `users`); where a resource of another name lives at that collection (`user`), the
    reference is to it. A segment no resource serves stays as it is (a table the traces never
    read)."""
    served: dict[str, str] = {}
    for name, resource in resources.items():
        if resource.collection_path:
            served.setdefault(resource.collection_path.rstrip("/").rsplit("/", 1)[-1], name)
    for resource in resources.values():
        for spec in resource.fields.values():
            reference = spec.reference
            if reference is None or reference.style != "link_value":
                continue
            if reference.resource not in resources and reference.resource in served:
                reference.resource = served[reference.resource]


def _stamp_callers_alike(resources: dict[str, Resource], callers: set[tuple[str, str]]) -> None:
    """A field the service stamps with the caller in one resource is stamped so wherever it
    fills a field of that name pointing at the same resource (`opened_by` on every task), also
    where the traces had one caller only and showed it as a constant."""
    for resource in resources.values():
        for name, spec in resource.fields.items():
            reference = spec.reference
            if (
                spec.stamp is None
                and spec.server_generated
                and reference is not None
                and (name, reference.resource) in callers
            ):
                spec.stamp = "caller"


def _request_wrapper(request: Shape, record: Shape) -> str | None:
    """The key every write of an operation wrapped its record in (`{"ticket": {...}}`): the
    one key of every body, holding an object, and no field of the records themselves (Jira's
    `fields` is both)."""
    if request.count == 0 or request.objects != request.count or len(request.props) != 1:
        return None
    ((key, child),) = request.props.items()
    if child.objects != request.count or key in record.props:
        return None
    return key


_CREATES_TO_REQUIRE = 3
"""Creates that all sent a field before the mock refuses one without it: one or two recorded
creates show what a client happened to send, not what the service insists on."""


def _input_of_its_own(sent: Shape, answered: Shape | None) -> bool:
    """Whether what writes sent for a field is more than a value of the field as answers show
    it: a field answers never show, or a structure answers never had (Notion takes a title as
    a list of rich texts and answers it as an object holding that list)."""
    if answered is None:
        return True
    return bool(sent.objects or sent.arrays) and not _within(sent, answered)


def _within(sent: Shape, answered: Shape) -> bool:
    """Whether every key path the writes sent is one the answers have, with the same kind of
    JSON value (object or list)."""
    if (sent.objects and not answered.objects) or (sent.arrays and not answered.arrays):
        return False
    for key, child in sent.props.items():
        other = answered.props.get(key)
        if other is None or not _within(child, other):
            return False
    if sent.items is not None:
        return answered.items is not None and _within(sent.items, answered.items)
    return True


def _unwrapped_request(request: Any, key: str | None) -> Any:
    if key is not None and isinstance(request, dict) and isinstance(request.get(key), dict):
        return request[key]
    return request


def _replayed(op: OpStats, resource: Resource | None) -> bool:
    """Whether a mock replays the operation's recorded answers: it ties to no resource, or
    does something Myna cannot simulate (answers that are not records, a query language with
    no evaluator)."""
    if op.kind == "auth":
        return False
    return resource is None or op.kind in ("other", "query")


_EXAMPLES_KEPT = 50
"""Examples a per-operation or per-resource pass keeps (views, deletes, actions' echoes)."""
_ITEM_KINDS = frozenset({"get", "update", "replace", "delete", "action"})


_VIEWED_KINDS = frozenset({"get", "update", "action"})


def _kind_value(record: dict[str, Any]) -> str | None:
    """The kind a record names itself (`"object": "page"`), if it does."""
    for key in KIND_KEYS:
        value = record.get(key)
        if isinstance(value, str):
            return value
    return None


def _created_pairs(
    op: OpStats, sent: Any, records: list[dict[str, Any]]
) -> list[tuple[Any, dict[str, Any]]]:
    """(what was sent, what was made) of each record one create made: the create's body and
    its record, or each item of a batch beside the record made of it."""
    batch = batch_key(op)
    if batch is None:
        return [(sent, records[0])]
    items = sent.get(batch) if isinstance(sent, dict) else None
    if not isinstance(items, list) or len(items) != len(records):
        return []
    return list(zip(items, records, strict=True))


_FILE_BODIES = frozenset({"text", "base64"})


def _made_elsewhere(obs: Obs) -> bool:
    """Whether a POST answered one record whose id its path does not hold: it made a record,
    so its last segment names where records are made, not one of them."""
    exchange = obs.exchange
    records = obs.unwrapped.records
    if exchange.method.upper() != "POST" or not 200 <= exchange.status < 300 or len(records) != 1:
        return False
    ids = [str(records[0][name]) for name in ID_FIELDS if records[0].get(name) not in (None, "")]
    return bool(ids) and not set(ids) & set(obs.segments)


def _decoded_size(value: Any) -> int:
    """The byte count of a base64 body, as the service received it."""
    try:
        return len(base64.b64decode(str(value), validate=False))
    except ValueError:
        return len(str(value))


def _scalar_text(value: Any) -> str | None:
    """A string or integer as a path would carry it; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _entity_of(obs: Obs, op: OpStats) -> str | None:
    """The id of the record a request addresses: the last path parameter before any action."""
    if PARAM not in op.template:
        return None
    index = len(op.template) - 1 - op.template[::-1].index(PARAM)
    segments = obs.segments
    return segments[index] if index < len(segments) else None


def _size(value: Any) -> int:
    """How many values walking `value` visits (arrays counted as sampled)."""
    if isinstance(value, dict):
        return 1 + sum(_size(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_size(item) for item in sampled(value))
    return 1


def _split_url(url: str) -> tuple[str, str]:
    """(`scheme://host`, path) of a URL, without the query; cheaper than `urlsplit`."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return "", url.split("?", 1)[0] or "/"
    host, slash, path = rest.partition("/")
    path = (slash + path).split("?", 1)[0].split("#", 1)[0]
    return f"{scheme}://{host}", path or "/"


def _page_fingerprint(records: list[dict[str, Any]], id_name: str | None) -> tuple[Any, ...] | None:
    """Ids at the start, middle and end of a page: the same page fetched again (recordings
    often repeat a listing) need not be walked again; it still counts as evidence."""
    if id_name is None or len(records) < 2:
        return None
    middle = len(records) // 2
    # Ids are strings or numbers in the first record; str() keeps any odd one hashable.
    return (
        id_name,
        len(records),
        str(records[0].get(id_name)),
        str(records[middle].get(id_name)),
        str(records[-1].get(id_name)),
        len(records[middle]),
    )


def _short_text(text: Any, mime_type: str | None) -> str | None:
    """A plain-text error body worth replaying; HTML pages and long texts are not."""
    if (
        not isinstance(text, str)
        or len(text) > 500
        or "html" in (mime_type or "")
        or "<html" in text
    ):
        return None
    return text


def _mentions_jql(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("jql"), str)


def _canonical_header(name: str) -> str:
    lowered = name.lower()
    if lowered.startswith("x-"):
        return "X-" + "-".join(part.capitalize() for part in lowered[2:].split("-"))
    return "-".join(part.capitalize() for part in lowered.split("-"))


def _request_record(exchange: Exchange) -> dict[str, Any] | None:
    body = exchange.request_body.value if exchange.request_body.is_json else None
    return body if isinstance(body, dict) else None
