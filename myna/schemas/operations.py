"""Deciding what an operation is: its kind, its resource and its id.

Each function is a pure rule over the counts one pass over a service's exchanges gathered for one
(method, path template) pair (`OpStats`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from myna.schemas import conventions
from myna.schemas.evidence import Tally
from myna.schemas.model import OperationKind
from myna.schemas.paths import PARAM, TABLE_CONTAINERS, singular
from myna.schemas.records import GENERIC_LIST_KEYS
from myna.schemas.shape import Shape


@dataclass(slots=True)
class OpStats:
    """What the exchanges of one (method, path template) showed: statuses, parameters, request
    and response shapes, whether answers held many records or one with an id. The learner fills
    it; the rules below read it; `kind`, `resource` and `id` are what they decided."""

    method: str
    template: tuple[str, ...]
    tally: Tally = field(default_factory=Tally)
    statuses: dict[int, Tally] = field(default_factory=dict)
    query: dict[str, Shape] = field(default_factory=dict)
    request: Shape = field(default_factory=Shape)
    wrappers: dict[int, Shape] = field(default_factory=dict)
    bare: dict[int, Shape] = field(default_factory=dict)
    headers: dict[int, dict[str, Shape]] = field(default_factory=dict)
    wrap_keys: Counter[tuple[int, str | None, str]] = field(default_factory=Counter)
    record_types: Counter[str] = field(default_factory=Counter)
    envelopes: dict[conventions.EnvelopeKey, Tally] = field(default_factory=dict)
    list_extras: dict[str, Any] = field(default_factory=dict)
    """Keys beside the records of a list answer, with the first value each held."""
    answers: list[Any] = field(default_factory=list)
    """A bounded sample of the exchanges, kept for replaying their answers."""
    anonymous: Counter[int] = field(default_factory=Counter)
    """The statuses the service answered requests with that carried no credential."""
    many: int = 0
    idless: int = 0
    """Answers listing records none of which has an id."""
    keys_ever: set[str] = field(default_factory=set)
    """The fields any record a list answer held had."""
    keys_always: set[str] | None = None
    """The fields every record a list answer held had (None before the first)."""
    one_with_id: int = 0
    new_ids: int = 0
    """Answers of one record whose id is not the one the path named: a record made there."""
    same_ids: int = 0
    """Answers of one record whose id is the one the path named."""
    kind: OperationKind = "other"
    resource: str | None = None
    id: str = ""


QUERY_ACTIONS = frozenset({"query", "search", "find", "lookup", "graphql"})


def literal_before(template: tuple[str, ...], index: int) -> str | None:
    for segment in reversed(template[:index]):
        if segment != PARAM:
            return segment
    return None


def resource_name(literal: str, parent: str | None) -> str:
    return literal if parent in TABLE_CONTAINERS else singular(literal)


def contained_name(template: tuple[str, ...]) -> str | None:
    """The resource type a path names under a table container: `/sobjects/Account/...` ->
    `Account`, whatever follows it (an id, `describe`)."""
    for index in range(1, len(template)):
        if template[index - 1] in TABLE_CONTAINERS and template[index] != PARAM:
            return template[index]
    return None


def operation_resource(op: OpStats) -> str | None:
    """Which resource an operation's records belong to."""
    template = op.template
    named = contained_name(template)
    if (
        named is not None
        and template[-1] == PARAM
        and literal_before(template, len(template) - 1) != named
    ):
        # `/sobjects/Account/External_Id__c/{value}` finds a record by another of its fields;
        # a resource's operations address its records by their id.
        return None
    if op.record_types:
        # Records that name their own type (SOQL) come from a generic query endpoint, unless
        # the path names their one type (`/sobjects/Account/{id}`).
        return named if op.record_types.keys() == {named} else None
    list_keys = {key for (_, key, _) in op.wrap_keys if key and key not in GENERIC_LIST_KEYS}
    if len(list_keys) == 1:
        return singular(next(iter(list_keys)))
    if named is not None:
        return named
    literals = [(index, segment) for index, segment in enumerate(template) if segment != PARAM]
    if not literals:
        return None
    index, last = literals[-1]
    parent = template[index - 1] if index > 0 else None
    grandparent = template[index - 2] if index > 1 else None
    at_end = index == len(template) - 1
    if (
        at_end
        and parent == PARAM
        and not (op.many and op.method == "GET")
        and not creates_under(op)
    ):
        # /issue/{id}/transitions: the action belongs to the record the parameter names.
        owner = literal_before(template, index - 1)
        if owner is not None:
            position = template.index(owner)
            return resource_name(owner, template[position - 1] if position > 0 else None)
    if at_end and parent is not None and parent != PARAM and last in QUERY_ACTIONS:
        # /user/search answers with users.
        return resource_name(parent, grandparent)
    return resource_name(last, parent)


def creates_under(op: OpStats) -> bool:
    """Whether a POST below a record (`/groups/{id}/projects`, `/issue/{id}/comment`) makes a
    record of its own: answered 201, or with one record whose id is not the path's (Notion
    answers creates 200), with one record that has an id; or a write below a record
    that sends a list of records and answers with the list it made (`batch_key`)."""
    made = 201 in op.statuses or (op.new_ids > 0 and not op.same_ids)
    one = op.method == "POST" and made and bool(op.one_with_id) and not op.many
    return one or batch_key(op) is not None


def batch_key(op: OpStats) -> str | None:
    """The request key of a write that makes several records at once: every request held one
    list of objects under it, and every successful answer was a list of records."""
    if op.method not in _WRITES or not op.many or op.one_with_id or not op.request.count:
        return None
    if not any(200 <= status < 300 for status in op.statuses):
        return None
    lists = [
        key
        for key, shape in op.request.props.items()
        if shape.count == op.request.count
        and shape.arrays == shape.count
        and shape.items is not None
        and shape.items.objects == shape.items.count > 0
    ]
    return lists[0] if len(lists) == 1 else None


_WRITES = frozenset({"POST", "PUT", "PATCH"})


def operation_kind(op: OpStats) -> OperationKind:
    template = op.template
    method = op.method
    on_item = bool(template) and template[-1] == PARAM
    last = template[-1] if template else ""
    after_item = len(template) >= 2 and template[-2] == PARAM and not on_item
    if on_item:
        return {
            "GET": "get",
            "PUT": "replace",
            "PATCH": "update",
            "DELETE": "delete",
            "POST": "update",
        }.get(method, "other")  # type: ignore[return-value]
    if last in QUERY_ACTIONS:
        return "query"
    if after_item and method in ("POST", "PUT", "PATCH"):
        return "create" if creates_under(op) else "action"
    if method == "GET":
        if op.many:
            return "list"
        return "get" if op.one_with_id else "other"
    if method == "POST":
        created = any(status == 201 for status in op.statuses) or op.one_with_id
        return "create" if created else "action" if after_item else "other"
    if method == "DELETE":
        return "delete" if after_item else "other"
    return "other"


def operation_id(op: OpStats) -> str:
    """A readable operationId: `list_incident`, `transition_issue`, `get_serverInfo`."""
    literals = [segment for segment in op.template if segment != PARAM]
    resource = op.resource
    if op.kind == "action" and literals:
        return f"{singular(literals[-1])}_{resource or '_'.join(literals[:-1]) or 'root'}"
    if resource is not None and op.kind != "other":
        return f"{op.kind}_{resource}"
    slug = "_".join(literals) or "root"
    if op.kind != "other":
        return op.kind if slug == op.kind else f"{op.kind}_{slug}"
    return f"{op.method.lower()}_{slug}"


def query_role(name: str) -> Any:
    if name in conventions.LIMIT_PARAMS:
        return "limit"
    if name in conventions.OFFSET_PARAMS:
        return "offset"
    if name in conventions.PAGE_PARAMS:
        return "page"
    if name in conventions.CURSOR_PARAMS:
        return "cursor"
    if name in ("sysparm_query", "q", "jql", "query", "filter"):
        return "query"
    if name in ("sysparm_fields", "fields", "expand", "sysparm_display_value"):
        return "fields"
    if name in ("sort", "order", "orderBy", "sysparm_order_by"):
        return "sort"
    return "filter"


def another_kind(nested: OpStats, top: OpStats) -> bool:
    """Whether a list below a record holds another kind of record than the top-level list of
    the same name: each has fields the other never shows (Okta's `/apps/{id}/users` are
    assignments, with `scope` and `syncState` and without a user's `lastLogin`), where a
    collection scoped to its parent holds the same records."""
    if top.keys_always is None or not nested.keys_ever:
        return False
    return bool(nested.keys_ever - top.keys_ever) and bool(top.keys_always - nested.keys_ever)
