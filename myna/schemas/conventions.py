"""Service-wide conventions: envelope, pagination, query language, error bodies and auth.

Each function here is a pure rule over what the learner gathered for one service (`Gathered`),
returning one part of `Conventions` with its evidence.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from myna.schemas.evidence import Tally
from myna.schemas.model import Auth, AuthScheme, Envelope, ErrorShape, Pagination
from myna.schemas.paths import singular
from myna.schemas.records import GENERIC_LIST_KEYS

EnvelopeKey = tuple[str, str | None, str | None, str | None, str | None, str | None, bool]
"""(style, item_key, list_key, total_key, next_key, done_key, record_attributes)."""

TOTAL_KEYS = ("totalSize", "total", "total_count", "totalCount", "count")
NEXT_KEYS = ("nextRecordsUrl", "next", "nextPageToken", "next_cursor", "nextCursor")
DONE_KEYS = ("done", "isLast", "has_more")

_ENVELOPE_KEYS = frozenset((*TOTAL_KEYS, *NEXT_KEYS, *DONE_KEYS))

LIMIT_PARAMS = ("sysparm_limit", "limit", "maxResults", "per_page", "page_size", "pageSize", "size")
OFFSET_PARAMS = ("sysparm_offset", "offset", "startAt", "start", "skip")
PAGE_PARAMS = ("page", "pageNumber", "page_number")
CURSOR_PARAMS = (
    "cursor",
    "start_cursor",
    "after",
    "page_token",
    "pageToken",
    "starting_after",
    "nextPageToken",
)


@dataclass(slots=True)
class ErrorSample:
    status: int
    body: Any
    headers: dict[str, str]
    example: str


@dataclass(slots=True)
class Gathered:
    """What one pass over a service's exchanges collected for the convention rules."""

    envelopes: dict[EnvelopeKey, Tally] = field(default_factory=dict)
    list_query_params: Counter[str] = field(default_factory=Counter)
    list_exchanges: Tally = field(default_factory=Tally)
    link_header: Tally = field(default_factory=Tally)
    total_header: dict[str, Tally] = field(default_factory=dict)
    query_params: Counter[str] = field(default_factory=Counter)
    soql_paths: Tally = field(default_factory=Tally)
    jql: Tally = field(default_factory=Tally)
    errors: list[ErrorSample] = field(default_factory=list)
    auth_headers: dict[str, Tally] = field(default_factory=dict)
    api_key_headers: dict[str, Tally] = field(default_factory=dict)
    opaque_auth: Tally = field(default_factory=Tally)
    """Authorization headers whose scheme the recording does not show."""
    unauthorized: list[ErrorSample] = field(default_factory=list)
    token_path: str | None = None
    token_tally: Tally = field(default_factory=Tally)


def envelope_key(
    body: Any, key: str | None, many: bool, records: list[dict[str, Any]]
) -> EnvelopeKey:
    """How one response body wraps its records."""
    if key is None:
        # A bare list and a bare record look alike here; `envelope_from` tells them apart.
        return ("bare list" if many else "bare", None, None, None, None, None, False)
    assert isinstance(body, dict)
    present = body.keys() & _ENVELOPE_KEYS
    total = next((name for name in TOTAL_KEYS if name in present), None) if present else None
    nxt = next((name for name in NEXT_KEYS if name in present), None) if present else None
    done = next((name for name in DONE_KEYS if name in present), None) if present else None
    attributes = bool(records) and isinstance(records[0].get("attributes"), dict)
    if many:
        return ("wrapped", None, key, total, nxt, done, attributes)
    return ("wrapped", key, None, total, nxt, done, attributes)


def infer_envelope(gathered: Gathered) -> Envelope:
    """The wrapper most of the service's responses use."""
    return envelope_from(gathered.envelopes)


def envelope_from(envelopes: Mapping[EnvelopeKey, Tally]) -> Envelope:
    """The wrapper most of these responses use; item and list keys may come from different
    responses."""
    if not envelopes:
        return Envelope()
    ranked = sorted(envelopes.items(), key=lambda pair: (-pair[1].samples, str(pair[0])))
    (style, item_key, list_key, total, nxt, done, attributes), tally = ranked[0]
    if style.startswith("bare"):
        # Records answered bare and lists wrapped (`{"object": "list", "results": [...]}`)
        # is the wrapped style without an item key.
        lists = [pair for pair in ranked if pair[0][0] == "bare list" or pair[0][2] is not None]
        if not lists or lists[0][0][0] == "bare list":
            return Envelope(style="bare", evidence=tally.evidence())
        (style, item_key, list_key, total, nxt, done, attributes), tally = lists[0]
    merged = Tally()
    for key, other in ranked:
        if key[0] != "wrapped":
            continue
        if item_key is None and key[1] is not None and (list_key is None or key[1] == list_key):
            item_key = key[1]
        if list_key is None and key[2] is not None and (item_key is None or key[2] == item_key):
            list_key = key[2]
        if key[2] == list_key:
            total = total or key[3]
            nxt = nxt or key[4]
            done = done or key[5]
            attributes = attributes or key[6]
        merged.absorb(other)
    return Envelope(
        style="wrapped",
        item_key=item_key,
        list_key=list_key,
        total_key=total,
        next_key=nxt,
        done_key=done,
        record_attributes=attributes,
        evidence=merged.evidence(),
    )


def resource_envelope(
    envelopes: Mapping[EnvelopeKey, Tally],
    service: Envelope,
    *,
    extras: Mapping[str, Any],
    request_key: str | None,
) -> Envelope | None:
    """One resource's own wrapper (`{"tickets": [...]}` where another resource answers
    `{"agents": [...]}`), or None when the service's wrapper already says how it is wrapped.

    `extras` are the other keys its lists carried (`"object": "list"`), kept with a value so that
    the mock's lists carry them too; `request_key` wraps what a write sends (`{"ticket": {...}}`),
    learned from writes, else implied by the item wrapper when the resource was never written."""
    own = envelope_from(envelopes) if envelopes else _inherited(service)
    if _names_its_items(own, service):
        # The service wraps a record under its kind's name (`{"group": {...}}`), and this
        # resource's lists are `{"tickets": [...]}`: one ticket is `{"ticket": {...}}`.
        own.item_key = singular(str(own.list_key))
    _complete_paging(own, service)
    computed = {*TOTAL_KEYS, *DONE_KEYS, *(name for name in NEXT_KEYS if extras.get(name))}
    own.extra = {name: value for name, value in sorted(extras.items()) if name not in computed}
    own.request_key = request_key
    if request_key is None and own.item_key is not None and own.item_key not in GENERIC_ITEM_KEYS:
        own.request_key = own.item_key
    if _same_wrapping(own, service):
        return None
    return own


def _complete_paging(own: Envelope, service: Envelope) -> None:
    """A resource wrapped as the service wraps everything takes the paging keys its own few
    lists happened not to show (no next link on a short list)."""
    if (own.style, own.item_key, own.list_key) != (
        service.style,
        service.item_key,
        service.list_key,
    ):
        return
    own.total_key = own.total_key or service.total_key
    own.next_key = own.next_key or service.next_key
    own.done_key = own.done_key or service.done_key


def _names_its_items(own: Envelope, service: Envelope) -> bool:
    return (
        own.item_key is None
        and own.list_key is not None
        and own.list_key not in GENERIC_LIST_KEYS
        and service.item_key is not None
        and service.item_key not in GENERIC_ITEM_KEYS
    )


def _inherited(service: Envelope) -> Envelope:
    """The wrapping a resource whose answers never showed one takes from its service: a
    generic wrapper (`result`), never another resource's own name (`{"user": {...}}`)."""
    own = service.model_copy()
    if own.item_key not in GENERIC_ITEM_KEYS:
        own.item_key = None
    if own.list_key not in GENERIC_LIST_KEYS:
        own.list_key = None
    if own.item_key is None and own.list_key is None:
        own.style = "bare"
    return own


GENERIC_ITEM_KEYS = frozenset({"result", "data", "record", "item"})
"""Item wrappers that say nothing of the record (ServiceNow's `result`): never a write's
wrapper unless writes showed it."""


def _same_wrapping(left: Envelope, right: Envelope) -> bool:
    ignored = {"evidence"}
    return left.model_dump(exclude=ignored) == right.model_dump(exclude=ignored)


def infer_pagination(gathered: Gathered, envelope: Envelope) -> Pagination:
    params = gathered.list_query_params
    limit = next((name for name in LIMIT_PARAMS if params[name]), None)
    offset = next((name for name in OFFSET_PARAMS if params[name]), None)
    page = next((name for name in PAGE_PARAMS if params[name]), None)
    cursor = next((name for name in CURSOR_PARAMS if params[name]), None)
    total_header = None
    if gathered.total_header:
        total_header = max(gathered.total_header.items(), key=lambda pair: pair[1].samples)[0]
    style: Any = "none"
    if offset:
        style = "limit_offset"
    elif cursor:
        style = "cursor"
    elif page:
        style = "page"
    elif envelope.next_key and envelope.next_key.endswith(("Url", "url")):
        style = "next_url"
    elif envelope.next_key:
        style = "cursor"
    elif limit:
        style = "limit_offset"
    return Pagination(
        style=style,
        limit_param=limit,
        offset_param=offset,
        page_param=page,
        cursor_param=cursor or (envelope.next_key if style == "cursor" else None),
        link_header=gathered.link_header.samples > 0,
        total_header=total_header,
        evidence=gathered.list_exchanges.evidence(),
    )


def infer_query_language(gathered: Gathered) -> tuple[Any, Tally | None]:
    if gathered.query_params["sysparm_query"]:
        tally = Tally()
        tally.samples = gathered.query_params["sysparm_query"]
        return "servicenow", tally
    if gathered.soql_paths.samples:
        return "soql", gathered.soql_paths
    if gathered.jql.samples:
        return "jql", gathered.jql
    return "fields", None


# --- error bodies -------------------------------------------------------------------------

MESSAGE_KEYS = frozenset(
    {"message", "error_description", "errorMessage", "error_message", "msg", "title", "description"}
)
DETAIL_KEYS = frozenset({"detail", "details", "reason"})
CODE_KEYS = frozenset({"code", "errorCode", "error_code", "error", "type", "status_code"})
FIELD_ERROR_KEYS = frozenset({"errors", "fieldErrors", "field_errors"})


def error_template(samples: list[Any]) -> Any:
    """A template of the error body: varying texts become `{message}`/`{detail}`/`{code}`."""
    ordered = sorted(samples, key=lambda sample: json.dumps(sample, sort_keys=True))
    template = _template(ordered[0], ordered, None)
    if "{message}" in json.dumps(template):
        return template
    # One recorded error says nothing of which text varies; a mock that answered every refusal
    # with it ("Resource not found: thisisafakekey") would tell an agent nothing.
    return _with_message(template)


_MESSAGE_LIKE = re.compile(r"(?i)summary|message|error|detail|description|msg|reason|title")


def _with_message(template: Any) -> Any:
    """The template with its first message-like text (by key) made the `{message}`."""
    if isinstance(template, dict):
        for name, item in template.items():
            if isinstance(item, str) and _MESSAGE_LIKE.search(name):
                return {**template, name: "{message}"}
        for name, item in template.items():
            replaced = _with_message(item)
            if replaced != item:
                return {**template, name: replaced}
    if isinstance(template, list) and template:
        return [_with_message(template[0]), *template[1:]]
    return template


def _template(value: Any, samples: list[Any], key: str | None) -> Any:
    if isinstance(value, dict):
        if key in FIELD_ERROR_KEYS and all(isinstance(item, str) for item in value.values()):
            return {"{field}": "{message}"} if value else {}
        return {
            name: _template(item, [s.get(name) for s in samples if isinstance(s, dict)], name)
            for name, item in value.items()
        }
    if isinstance(value, list):
        if all(isinstance(item, str) for item in value):
            return ["{message}"] if any(sample for sample in samples) else []
        inner = [item for sample in samples if isinstance(sample, list) for item in sample]
        return [_template(value[0], inner, key)] if value else []
    if isinstance(value, str):
        if key in MESSAGE_KEYS:
            return "{message}"
        if key in DETAIL_KEYS:
            return "{detail}"
        if key in CODE_KEYS and len({json.dumps(s) for s in samples}) > 1:
            return "{code}"
        if key in CODE_KEYS or all(sample == value for sample in samples):
            return value
        return "{message}"
    return value


def infer_errors(gathered: Gathered) -> list[ErrorShape]:
    """One error shape per status seen, plus the most common shape for every other status."""
    by_status: dict[int, list[ErrorSample]] = {}
    for sample in gathered.errors:
        by_status.setdefault(sample.status, []).append(sample)
    shapes: list[ErrorShape] = []
    templates: Counter[str] = Counter()
    tallies: dict[str, Tally] = {}
    for status in sorted(by_status):
        samples = by_status[status]
        template = error_template([sample.body for sample in samples])
        tally = Tally()
        for sample in samples:
            tally.add(0, sample.example)
        headers = _common_headers(samples)
        shapes.append(
            ErrorShape(status=status, template=template, headers=headers, evidence=tally.evidence())
        )
        key = json.dumps(template, sort_keys=True)
        templates[key] += len(samples)
        tallies.setdefault(key, Tally()).absorb(tally)
    if templates:
        key, _ = min(templates.items(), key=lambda pair: (-pair[1], pair[0]))
        shapes.append(
            ErrorShape(status=None, template=json.loads(key), evidence=tallies[key].evidence())
        )
    return shapes


_KEPT_ERROR_HEADERS = ("www-authenticate", "retry-after")


def _common_headers(samples: list[ErrorSample]) -> dict[str, str]:
    common: dict[str, str] = {}
    for name in _KEPT_ERROR_HEADERS:
        values = {sample.headers.get(name) for sample in samples}
        if len(values) == 1:
            (value,) = values
            if value is not None:
                common[_header_case(name)] = value
    return common


def _header_case(name: str) -> str:
    return (
        "WWW-Authenticate"
        if name == "www-authenticate"
        else "-".join(part.capitalize() for part in name.split("-"))
    )


# --- auth ---------------------------------------------------------------------------------

_CHALLENGE_SCHEMES: dict[str, AuthScheme] = {
    "basic": "basic",
    "bearer": "bearer",
    "token": "bearer",
}


def infer_auth(gathered: Gathered) -> Auth:
    """The scheme from Authorization headers (or the 401 challenge), and the 401 answer."""
    scheme: AuthScheme = "none"
    tally = Tally()
    if gathered.auth_headers:
        name, tally = max(
            gathered.auth_headers.items(), key=lambda pair: (pair[1].samples, pair[0])
        )
        scheme = _CHALLENGE_SCHEMES.get(name, "none")
    header = None
    if scheme == "none" and gathered.api_key_headers:
        header, tally = max(
            gathered.api_key_headers.items(), key=lambda pair: (pair[1].samples, pair[0])
        )
        scheme = "apikey"
    answer = sorted(gathered.unauthorized, key=lambda sample: sample.example)
    challenge = next(
        (s.headers["www-authenticate"] for s in answer if "www-authenticate" in s.headers), None
    )
    if scheme == "none" and challenge:
        scheme = _CHALLENGE_SCHEMES.get(challenge.split(" ")[0].lower(), "none")
    if scheme == "none" and (gathered.opaque_auth.samples or answer):
        # A credential was sent (its scheme redacted with it) or one was refused: the service
        # is not open, whatever the recording hides.
        scheme, header = "unknown", "Authorization"
        if gathered.opaque_auth.samples:
            tally = gathered.opaque_auth
    if gathered.token_path is not None:
        scheme = "oauth2"
        tally = gathered.token_tally
    if not answer:
        return Auth(
            scheme=scheme, header=header, token_path=gathered.token_path, evidence=tally.evidence()
        )
    first = answer[0]
    headers = {"WWW-Authenticate": challenge} if challenge else {}
    merged = Tally()
    merged.absorb(tally)
    for sample in answer:
        merged.add(0, sample.example)
    return Auth(
        scheme=scheme,
        header=header,
        token_path=gathered.token_path,
        unauthorized_status=first.status,
        unauthorized_headers=headers,
        unauthorized_body=first.body,
        evidence=merged.evidence(),
    )
