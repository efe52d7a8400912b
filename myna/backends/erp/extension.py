"""The `erp` extension: the procure-to-pay rules on the generic runtime, as a thin adapter.

The model serves the collections, envelope, paging, auth and life cycles; this extension adds
what no learned fact can say, by calling the same `documents` and `rules` functions the
reference service runs:

- `before_write` on create and PATCH builds the record from what was sent (line numbers,
  amounts, totals, received quantities, a period's dates, an invoice's three-way match and
  payment status) and refuses what the rules refuse (closed periods, receipts past the order,
  edits of anything but a draft); on delete it keeps non-drafts and records in use;
- `after_write` on a goods receipt moves its order's received quantities and status;
- `routes` answer every action (`POST /{collection}/{id}/{action}`), because an approval limit
  or a payment block depends on more than the state machine the model pins.

A rule's `Refused` becomes the runtime's `Rejection` with the same status, code and field, so
the error body is the documented `{"error": {"code", "message", "field"}}`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import Any

from myna.backends.erp import documents
from myna.backends.erp.documents import ACTIONS, RESOURCES, Row
from myna.backends.erp.instance import BASE
from myna.backends.erp.rules import Period, Refused
from myna.mocks.extensions import Extension, Route, RouteCall, WriteCall
from myna.mocks.messages import MockResponse
from myna.mocks.query import Condition, Query
from myna.mocks.rejection import Rejection
from myna.mocks.store import Transaction

COLLECTION_OF = {resource: collection for collection, resource in RESOURCES.items()}


class StoreLookup:
    """The world as `documents` sees it, read through the request's transaction."""

    def __init__(self, tx: Transaction, clock: Callable[[], float]) -> None:
        self.tx = tx
        self.clock = clock

    def record(self, collection: str, record_id: str) -> Row | None:
        return self.tx.get(RESOURCES[collection], record_id)

    def periods(self) -> list[Period]:
        rows, _ = self.tx.list(RESOURCES["accounting-periods"], Query())
        return [Period(str(row["code"]), str(row["status"])) for row in rows]

    def today(self) -> date:
        return datetime.fromtimestamp(self.clock(), tz=UTC).date()


@contextmanager
def refusals() -> Iterator[None]:
    """A rule's refusal, answered as the runtime answers any refusal."""
    try:
        yield
    except Refused as refused:
        fields = (refused.field_name,) if refused.field_name else ()
        raise Rejection(refused.status, refused.message, fields=fields, code=refused.code) from None


def refusal(rejection: Rejection) -> Rejection:
    """The runtime's 404 for an unknown record names the field at fault, `id`, as the service
    does."""
    if rejection.status == 404 and rejection.resource is not None and not rejection.fields:
        rejection.fields = ("id",)
    return rejection


def before_write(call: WriteCall) -> None:
    collection = COLLECTION_OF.get(call.resource.resource.name)
    if collection is None:
        return
    lookup = StoreLookup(call.tx, call.mock.clock)
    with refusals():
        if call.kind == "create":
            # The body as sent: the runtime drops fields the model marks read-only before this
            # hook, but the service refuses them.
            documents.required(collection, _sent(call) or call.sent)
            call.after.update(documents.build(lookup, collection, call.sent))
        elif call.kind == "update":
            assert call.before is not None
            documents.writable(collection, _sent(call) or call.sent)
            documents.editable(collection, call.before, "change")
            call.after.update(documents.build(lookup, collection, {**call.before, **call.sent}))
        else:
            documents.editable(collection, call.after, "be deleted")
            _not_in_use(call.tx, collection, str(call.after["id"]))


def after_write(call: WriteCall) -> None:
    if call.kind != "create" or call.resource.resource.name != RESOURCES["goods-receipts"]:
        return
    order_resource = RESOURCES["purchase-orders"]
    order_id = str(call.after["purchase_order"])
    order = call.tx.get(order_resource, order_id)
    assert order is not None  # before_write refused a receipt for an unknown order
    moved = documents.received(order, call.after)
    call.tx.update(order_resource, order_id, {**order, **moved, "updated_at": call.mock.stamp()})


def _not_in_use(tx: Transaction, collection: str, record_id: str) -> None:
    for other, fields in documents.REFERENCES.items():
        for name, target in fields.items():
            if target != collection:
                continue
            _, count = tx.list(RESOURCES[other], Query(where=Condition(name, "=", record_id)))
            if count:
                raise Refused(409, "in_use", f"{record_id} is referenced by {other}", "id")


def _action(collection: str, action: str) -> Callable[[RouteCall], MockResponse]:
    resource = RESOURCES[collection]

    def handle(call: RouteCall) -> MockResponse:
        assert call.tx is not None  # action routes are transactional
        record_id = call.params["id"]
        before = call.tx.get(resource, record_id)
        if before is None:
            raise Rejection(404, f"{collection} has no record {record_id}", fields=("id",))
        with refusals():
            changes = documents.act(collection, action, before, _body(call), call.mock.stamp())
        after = {**before, **changes}
        call.tx.update(resource, record_id, after)
        rendered = call.mock.renderers[resource].render(after, call.request.base_url, None)
        return MockResponse(200, [("Content-Type", "application/json")], payload=rendered)

    return handle


def _body(call: RouteCall) -> Row:
    value = _sent(call)
    if value is None:
        raise Rejection(400, "the body is a JSON object", code="invalid_json")
    return value


def _sent(call: RouteCall | WriteCall) -> Row | None:
    """The request's JSON object; `{}` for no body, None for JSON that is not an object. Bytes
    that are not acceptable JSON are refused by the runtime's one body parser."""
    if not call.request.body.strip():
        return {}
    value: Any = call.mock.json_body(call.request, 400)
    return value if isinstance(value, dict) else None


ERP = Extension(
    name="erp",
    routes=tuple(
        Route("POST", f"{BASE}/{collection}/{{id}}/{action}", _action(collection, action))
        for collection, (table, _) in ACTIONS.items()
        for action in table
    ),
    before_write=before_write,
    after_write=after_write,
    refusal=refusal,
)
