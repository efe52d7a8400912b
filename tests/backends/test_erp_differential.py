"""The ERP reference service and the served mock answer the same calls the same way.

Both start from the same records: the reference service runs its whole corpus, and the mock
serves the reference world (the records that run leaves), one forked world per example, with
the reference service's clock. Then the same random procure-to-pay work goes to both: orders
and requisitions with and without lines, every action with any role, edits and deletes, goods
receipts within and past the ordered quantities, invoices that match and that do not, payments,
periods closed and reopened under later postings, reads and filtered lists. Each answer must
agree: the status; on a refusal the error code and field; on success the whole body, the ids
each side minted for the same create taken as equal. The rules are one implementation
(`rules.py`, `documents.py`); this checks that the two adapters around them (`instance.py`,
`extension.py` on the runtime) do not tell them apart.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    initialize,
    multiple,
    rule,
)

from myna.backends.erp.corpus import TOKEN, reference_service, write_chapters
from myna.backends.erp.instance import BASE, JSON_TYPE, Erp, Request
from myna.mocks import Mock, MockClient
from myna.traces.model import Body
from tests.backends.differential import SameAnswers, fresh_world, run, serving

# Picks repeat what is mostly sent, so most work is accepted and gets far along.
VENDORS = ("VEN-000001", "VEN-000002", "VEN-000003", "VEN-000002", "VEN-404404")
ITEMS = ("ITM-000001", "ITM-000002", "ITM-000003", "ITM-000001", "ITM-404404")
ROLES = ("buyer", "manager", "director", "cfo", "intern")
# Posting dates: in the closed February, the open March and April, and in no period at all.
DAYS = ("2026-03-10", "2026-04-02", "2026-03-10", "2026-02-15", "2027-01-05")
MINTED = re.compile(r"\b(?:PR|PO|GR|INV|PER)-\d{6}\b")

lines = st.lists(
    st.fixed_dictionaries(
        {
            "item": st.sampled_from(ITEMS),
            "quantity": st.sampled_from([1, 5, 20, 90, 0]),
        }
    ),
    max_size=3,
)
received = st.lists(
    st.fixed_dictionaries(
        {"line": st.sampled_from([1, 1, 2, 3]), "quantity": st.sampled_from([1, 5, 20, 60, 0])}
    ),
    min_size=1,
    max_size=3,
)


class Pair:
    """The reference service and a served world, in the same state and at the same moment."""

    def __init__(self, erp: Erp, mock: Mock) -> None:
        self.erp = copy.deepcopy(erp)
        world = fresh_world(mock, self.erp.now)
        self.api = MockClient(mock, headers={"Authorization": f"Bearer {TOKEN}"}, world=world)
        # The served id of each record both sides created, by the reference service's id.
        self.ids: dict[str, str] = {}

    def send(
        self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None
    ) -> tuple[tuple[int, Any], tuple[int, Any]]:
        """(status, body) of the reference service, then of the served mock; the path names
        the reference service's ids and goes to the mock with the ids it minted instead."""
        sent = Body() if body is None else Body("json", body, JSON_TYPE)
        pairs = list((params or {}).items())
        reply = self.erp.handle(Request(method, f"{BASE}/{path}", pairs, sent, TOKEN))
        theirs_path = MINTED.sub(lambda m: self.ids.get(m[0], m[0]), f"{BASE}/{path}")
        theirs_body = _renamed(body, self.ids)
        response = self.api.request(method, theirs_path, json=theirs_body, params=params)
        served = response.json() if response.body else None
        if reply.status == 201 and response.status == 201 and isinstance(served, dict):
            self.ids[reply.body.value["id"]] = served["id"]
        back = {theirs: mine for mine, theirs in self.ids.items()}
        return _outcome(reply.status, reply.body.value), _outcome(
            response.status, _renamed(served, back)
        )


def _renamed(value: Any, ids: dict[str, str]) -> Any:
    """`value` with every minted id that `ids` names replaced."""
    if isinstance(value, str):
        return MINTED.sub(lambda m: ids.get(m[0], m[0]), value)
    if isinstance(value, list):
        return [_renamed(item, ids) for item in value]
    if isinstance(value, dict):
        return {key: _renamed(item, ids) for key, item in value.items()}
    return value


def _outcome(status: int, body: Any) -> tuple[int, Any]:
    """What must agree: a refusal's code and field (a message is each side's own words), or
    the whole body."""
    if status >= 400:
        error = body["error"]
        # The runtime's error template writes a refusal without a field as "".
        return status, (error["code"], error["field"] or None)
    if isinstance(body, dict) and "next" in body:
        # A list's next page names the path it was asked at, which differs by the world.
        body = {**body, "next": body["next"].rpartition("?")[2]}
    return status, body


@pytest.fixture(scope="module")
def sides() -> Iterator[tuple[Erp, Mock]]:
    erp = reference_service()
    write_chapters(erp)
    with serving("erp", TOKEN) as mock:
        yield erp, mock


class Work(SameAnswers[Pair]):
    """Random procure-to-pay work, sent to both sides; every answer compared."""

    orders = Bundle("orders")
    sent_orders = Bundle("sent_orders")  # orders this run sent: goods come in against them
    requisitions = Bundle("requisitions")
    invoices = Bundle("invoices")
    periods = Bundle("periods")

    def paired(self) -> Pair:
        return Pair(*self.sides)

    def created(self, collection: str, body: dict[str, Any]) -> MultipleResults[str]:
        """The record both sides created (its reference id), or none when both refused."""
        status, answer = self.check("POST", collection, body)
        return multiple(str(answer["id"])) if status == 201 else multiple()

    @initialize(target=periods)
    def start(self) -> MultipleResults[str]:
        self.check("GET", "accounting-periods")
        return multiple("PER-000001", "PER-000002", "PER-000003")

    @initialize(target=orders)
    def seeded_orders(self) -> MultipleResults[str]:
        """The corpus's orders, in every state it left them (sent, received, closed...)."""
        return multiple(*(f"PO-{number:06d}" for number in range(1, 10)))

    @rule(collection=st.sampled_from(["purchase-orders", "vendor-invoices", "goods-receipts"]))
    def read_missing(self, collection: str) -> None:
        self.check("GET", f"{collection}/XX-404404")

    @rule(
        target=orders,
        vendor=st.sampled_from(VENDORS),
        sent=lines,
        requisition=st.sampled_from([None, None, None, "PR-000001", "PR-404404"]),
    )
    def create_order(
        self, vendor: str, sent: list[dict[str, Any]], requisition: str | None
    ) -> MultipleResults[str]:
        body: dict[str, Any] = {"vendor": vendor, "lines": sent}
        if requisition is not None:
            body["requisition"] = requisition
        return self.created("purchase-orders", body)

    @rule(target=requisitions, sent=lines, needed=st.sampled_from([None, "2026-03-20", "soon"]))
    def create_requisition(
        self, sent: list[dict[str, Any]], needed: str | None
    ) -> MultipleResults[str]:
        body: dict[str, Any] = {"requester": "maya.chen@acme.example", "lines": sent}
        if needed is not None:
            body["needed_by"] = needed
        return self.created("purchase-requisitions", body)

    @rule(
        order=orders,
        action=st.sampled_from(["submit", "reject", "send", "close", "cancel", "approve"]),
        role=st.sampled_from(ROLES),
    )
    def act_on_order(self, order: str, action: str, role: str) -> None:
        body = {"role": role} if action == "approve" else {}
        self.check("POST", f"purchase-orders/{order}/{action}", body)

    @rule(target=sent_orders, order=orders)
    def send_order(self, order: str) -> MultipleResults[str]:
        """Submitted, approved by the CFO, sent, and one of each line received: an order more
        goods and invoices come in against."""
        status = 0
        for action, body in (("submit", {}), ("approve", {"role": "cfo"}), ("send", {})):
            status, _ = self.check("POST", f"purchase-orders/{order}/{action}", body)
        if status != 200:
            return multiple()
        self._receive(order, "2026-03-10", whole=False)
        return multiple(order)

    @rule(
        requisition=requisitions,
        action=st.sampled_from(["submit", "reject", "approve"]),
        role=st.sampled_from(ROLES),
    )
    def act_on_requisition(self, requisition: str, action: str, role: str) -> None:
        body = {"role": role} if action == "approve" else {}
        self.check("POST", f"purchase-requisitions/{requisition}/{action}", body)

    @rule(order=orders, sent=lines, currency=st.sampled_from([None, "EUR"]))
    def edit_order(self, order: str, sent: list[dict[str, Any]], currency: str | None) -> None:
        body: dict[str, Any] = {"lines": sent}
        if currency is not None:
            body["currency"] = currency
        self.check("PATCH", f"purchase-orders/{order}", body)

    @rule(order=orders, status=st.sampled_from(["approved", "draft"]))
    def edit_status(self, order: str, status: str) -> None:
        """The status moves by actions only: a PATCH naming it is refused alike."""
        self.check("PATCH", f"purchase-orders/{order}", {"status": status})

    @rule(record=st.one_of(orders, requisitions))
    def delete(self, record: str) -> None:
        collection = "purchase-orders" if record.startswith("PO") else "purchase-requisitions"
        self.check("DELETE", f"{collection}/{record}")

    @rule(order=orders, sent=received, day=st.sampled_from(DAYS))
    def receive(self, order: str, sent: list[dict[str, Any]], day: str) -> None:
        body = {"purchase_order": order, "receipt_date": day, "lines": sent}
        self.check("POST", "goods-receipts", body)

    @rule(order=st.one_of(sent_orders, orders), day=st.sampled_from(DAYS), whole=st.booleans())
    def receive_ordered(self, order: str, day: str, whole: bool) -> None:
        self._receive(order, day, whole=whole)

    def _receive(self, order: str, day: str, *, whole: bool) -> None:
        """A receipt of what the order still awaits: all of it, or one of each line."""
        status, body = self.check("GET", f"purchase-orders/{order}")
        if status != 200:
            return
        awaited = {
            line["line"]: line["quantity"] - line["received_quantity"] for line in body["lines"]
        }
        sent = [
            {"line": line, "quantity": quantity if whole else 1}
            for line, quantity in awaited.items()
            if quantity > 0
        ]
        self.check(
            "POST", "goods-receipts", {"purchase_order": order, "receipt_date": day, "lines": sent}
        )

    @rule(
        target=invoices,
        order=st.one_of(sent_orders, orders),
        sent=received,
        price=st.sampled_from([None, "0.50", "999.00"]),
        own_vendor=st.sampled_from([True, True, False]),
        day=st.sampled_from(DAYS),
    )
    def invoice(
        self, order: str, sent: list[dict[str, Any]], price: str | None, own_vendor: bool, day: str
    ) -> MultipleResults[str]:
        """An invoice for an order, at the order's prices (None) or at others, from the order's
        vendor or another."""
        status, ordered = self.check("GET", f"purchase-orders/{order}")
        if status != 200:
            return multiple()
        prices = {line["line"]: line["unit_price"] for line in ordered["lines"]}
        body = {
            "vendor": ordered["vendor"] if own_vendor else "VEN-000004",
            "purchase_order": order,
            "vendor_invoice_number": f"V-{order}",
            "invoice_date": day,
            "lines": [
                {**line, "unit_price": price or prices.get(line["line"], "1.00")} for line in sent
            ],
        }
        return self.created("vendor-invoices", body)

    @rule(invoice=invoices, action=st.sampled_from(["schedule-payment", "pay"]))
    def pay(self, invoice: str, action: str) -> None:
        self.check("POST", f"vendor-invoices/{invoice}/{action}", {})

    @rule(target=periods, code=st.sampled_from(["2026-05", "2026-03", "2026-13", "May"]))
    def create_period(self, code: str) -> MultipleResults[str]:
        return self.created("accounting-periods", {"code": code})

    @rule(period=periods, action=st.sampled_from(["close", "reopen"]))
    def act_on_period(self, period: str, action: str) -> None:
        self.check("POST", f"accounting-periods/{period}/{action}", {})

    @rule(record=st.one_of(orders, requisitions, invoices, periods))
    def read(self, record: str) -> None:
        collection = {
            "PO": "purchase-orders",
            "PR": "purchase-requisitions",
            "IN": "vendor-invoices",
            "PE": "accounting-periods",
        }[record[:2]]
        self.check("GET", f"{collection}/{record}")

    @rule(
        collection=st.sampled_from(["purchase-orders", "goods-receipts", "vendor-invoices"]),
        status=st.sampled_from([None, "draft", "sent", "received"]),
        limit=st.sampled_from(["2", "50"]),
    )
    def list_records(self, collection: str, status: str | None, limit: str) -> None:
        params = {"limit": limit, "sort": "-created_at,id"}
        if status is not None and collection == "purchase-orders":
            params["status"] = status
        self.check("GET", collection, **params)


@pytest.mark.usefixtures("sides")
def test_random_procure_to_pay_work_gets_the_same_answer(sides: tuple[Erp, Mock]) -> None:
    Work.sides = sides
    run(Work)


def test_a_deleted_order_is_not_found(sides: tuple[Erp, Mock]) -> None:
    pair = Pair(*sides)
    order = pair.send("POST", "purchase-orders", {"vendor": VENDORS[1], "lines": []})[0][1]["id"]
    deleted, served = pair.send("DELETE", f"purchase-orders/{order}")
    assert (deleted[0], served[0]) == (204, 204)
    reference, served = pair.send("GET", f"purchase-orders/{order}")
    assert served == reference == (404, ("not_found", "id"))
