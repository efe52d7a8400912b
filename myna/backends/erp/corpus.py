"""The ERP back end's trace corpus: procure-to-pay sessions, written by a script.

Each session is one piece of purchasing or accounts-payable work with a task text (set up
vendors, items and periods; turn a requisition into an order; approve orders at each role's
limit; send and receive; match and pay invoices; close a period; edit and delete drafts), recorded
as the HTTP exchanges a client makes against the reference service
(`myna.backends.erp.instance`). Every business rule is exercised both ways: accepted, and
refused with its status and code. Learning this corpus yields the built-in ERP model.

Deterministic: the same code writes the same bytes, which a test checks against the committed
`corpus.jsonl`. Regenerate with

    python -m myna.backends.erp.corpus -o myna/backends/erp/corpus.jsonl
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final
from urllib.parse import quote, urlencode

from myna.backends import SECRET, corpus_command, record_exchange
from myna.backends.erp.instance import BASE, Erp, Reply, Request
from myna.traces.model import Body, Pairs, Session

HOST: Final = "https://erp.acme.example"
START: Final = datetime(2026, 3, 2, 8, 0, 0)
TOKEN: Final = "erp-integration-token"


@dataclass(slots=True)
class Scribe:
    """Makes calls against the service as one client would, and records them as a session."""

    erp: Erp
    session: Session
    step: timedelta = field(default_factory=lambda: timedelta(seconds=20))

    def call(
        self,
        method: str,
        collection: str,
        *,
        params: Pairs | None = None,
        body: Mapping[str, Any] | None = None,
        token: str | None = TOKEN,
    ) -> Reply:
        self.erp.advance(self.step)
        path = f"{BASE}/{collection}"
        query = list(params or [])
        sent = Body("json", dict(body), "application/json") if body is not None else Body()
        reply = self.erp.handle(Request(method, path, query, sent, token))
        headers: Pairs = [("Accept", "application/json")]
        if body is not None:
            headers.append(("Content-Type", "application/json"))
        if token is not None:
            headers.append(("Authorization", f"Bearer {SECRET}"))
        url = f"{HOST}{path}" + (f"?{urlencode(query, quote_via=quote)}" if query else "")
        record_exchange(
            self.session,
            request=(method, url, query, headers, sent),
            reply=reply,
            at=self.erp.now,
            latency=(30.0, 900),
        )
        return reply

    def create(self, collection: str, values: Mapping[str, Any]) -> dict[str, Any]:
        reply = self.call("POST", collection, body=values)
        assert reply.status == 201, reply.body.value
        created: dict[str, Any] = reply.body.value
        return created

    def act(
        self, collection: str, record_id: str, action: str, body: Mapping[str, Any] | None = None
    ) -> Reply:
        return self.call("POST", f"{collection}/{record_id}/{action}", body=body or {})

    def expect(self, reply: Reply, status: int, code: str | None = None) -> Reply:
        """The author's own check: the reference service answered as the chapter intends."""
        assert reply.status == status, (status, reply.body.value)
        if code is not None:
            assert reply.body.value["error"]["code"] == code, reply.body.value
        return reply


@dataclass(slots=True)
class Book:
    """Ids of the records chapters share: later chapters buy from the vendors set up first."""

    vendors: dict[str, str] = field(default_factory=dict)
    items: dict[str, str] = field(default_factory=dict)
    periods: dict[str, str] = field(default_factory=dict)
    orders: dict[str, str] = field(default_factory=dict)


# (name, tax id, e-mail, payment terms)
VENDORS: Final = (
    ("Contoso Office Supply", "US-47-1234567", "orders@contoso.example", "net30"),
    ("Fabrikam Industrial", "US-52-7654321", "ar@fabrikam.example", "net60"),
    ("Tailspin Electronics", "US-33-2468013", "billing@tailspin.example", "net15"),
    ("Wide World Logistics", "US-81-1357924", "invoices@wideworld.example", "net30"),
)

# (sku, name, unit of measure, unit price)
ITEMS: Final = (
    ("PAPER-A4", "Copy paper A4, 5-ream box", "box", "24.90"),
    ("LAPTOP-14", "14-inch laptop", "each", "1180.00"),
    ("DOCK-USB4", "USB4 docking station", "each", "215.00"),
    ("PALLET-WR", "Pallet shrink wrap roll", "each", "18.75"),
    ("STEEL-BAR", "Steel bar stock", "kg", "3.40"),
    ("CONSULT-H", "Engineering consulting", "hour", "150.00"),
)


def line(book: Book, sku: str, quantity: int, unit_price: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"item": book.items[sku], "quantity": quantity}
    if unit_price is not None:
        entry["unit_price"] = unit_price
    return entry


def approved_order(scribe: Scribe, book: Book, vendor: str, lines: list[dict[str, Any]]) -> str:
    order = scribe.create("purchase-orders", {"vendor": book.vendors[vendor], "lines": lines})
    scribe.expect(scribe.act("purchase-orders", order["id"], "submit"), 200)
    scribe.expect(scribe.act("purchase-orders", order["id"], "approve", {"role": "cfo"}), 200)
    return str(order["id"])


# -- chapters ---------------------------------------------------------------------------------


def set_up_master_data(scribe: Scribe, book: Book) -> None:
    for code in ("2026-02", "2026-03", "2026-04"):
        book.periods[code] = scribe.create("accounting-periods", {"code": code})["id"]
    scribe.expect(
        scribe.call("POST", "accounting-periods", body={"code": "2026-03"}), 409, "duplicate"
    )
    for name, tax_id, email, terms in VENDORS:
        book.vendors[name] = scribe.create(
            "vendors", {"name": name, "tax_id": tax_id, "email": email, "payment_terms": terms}
        )["id"]
    scribe.expect(scribe.call("POST", "vendors", body={"name": "No Tax Id Ltd"}), 422, "required")
    for sku, name, unit, price in ITEMS:
        book.items[sku] = scribe.create(
            "items", {"sku": sku, "name": name, "unit_of_measure": unit, "unit_price": price}
        )["id"]
    scribe.expect(
        scribe.call("POST", "items", body={"sku": "X", "name": "Bad price", "unit_price": 12}),
        422,
        "invalid",
    )
    vendor = book.vendors["Wide World Logistics"]
    scribe.expect(scribe.call("GET", f"vendors/{vendor}"), 200)
    scribe.expect(scribe.call("PATCH", f"vendors/{vendor}", body={"payment_terms": "net60"}), 200)
    scribe.expect(scribe.call("GET", "vendors/VEN-999999"), 404, "not_found")
    page = scribe.expect(scribe.call("GET", "items", params=[("limit", "4")]), 200)
    assert "next" in page.body.value
    scribe.expect(scribe.call("GET", "items", params=[("limit", "4"), ("offset", "4")]), 200)
    scribe.expect(scribe.call("GET", "accounting-periods"), 200)
    scribe.expect(scribe.call("GET", f"accounting-periods/{book.periods['2026-03']}"), 200)
    scribe.expect(scribe.call("GET", f"items/{book.items['DOCK-USB4']}"), 200)
    scribe.expect(
        scribe.call("PATCH", f"items/{book.items['STEEL-BAR']}", body={"unit_price": "3.40"}), 200
    )
    scribe.expect(scribe.call("GET", "vendors", params=[("sort", "-name")]), 200)
    scribe.expect(scribe.call("GET", "vendors", token=None), 401, "unauthorized")


def requisition_to_order(scribe: Scribe, book: Book) -> None:
    requisition = scribe.create(
        "purchase-requisitions",
        {
            "requester": "maya.chen@acme.example",
            "description": "Laptops for the new field engineers",
            "needed_by": "2026-03-20",
            "lines": [line(book, "LAPTOP-14", 6), line(book, "DOCK-USB4", 6)],
        },
    )
    rid = requisition["id"]
    scribe.expect(
        scribe.act("purchase-requisitions", rid, "approve", {"role": "manager"}),
        409,
        "invalid_transition",
    )
    scribe.expect(scribe.act("purchase-requisitions", rid, "submit"), 200)
    scribe.expect(
        scribe.act("purchase-requisitions", rid, "approve", {"role": "buyer"}),
        403,
        "approval_limit_exceeded",
    )
    scribe.expect(scribe.act("purchase-requisitions", rid, "approve", {"role": "manager"}), 200)
    scribe.expect(scribe.call("GET", f"purchase-requisitions/{rid}"), 200)
    order = scribe.create(
        "purchase-orders",
        {
            "vendor": book.vendors["Tailspin Electronics"],
            "requisition": rid,
            "lines": [line(book, "LAPTOP-14", 6, "1150.00"), line(book, "DOCK-USB4", 6)],
        },
    )
    scribe.expect(scribe.act("purchase-orders", order["id"], "submit"), 200)
    scribe.expect(scribe.act("purchase-orders", order["id"], "approve", {"role": "manager"}), 200)
    book.orders["laptops"] = order["id"]
    second = scribe.create(
        "purchase-requisitions",
        {"requester": "leo.fischer@acme.example", "lines": [line(book, "PAPER-A4", 40)]},
    )
    scribe.expect(scribe.act("purchase-requisitions", second["id"], "submit"), 200)
    scribe.expect(scribe.act("purchase-requisitions", second["id"], "reject"), 200)
    scribe.expect(scribe.call("GET", "purchase-requisitions", params=[("status", "approved")]), 200)


def approval_thresholds(scribe: Scribe, book: Book) -> None:
    # (quantity of consulting hours at 150.00, the role refused, the role that may approve)
    for hours, refused, allowed in (
        (20, None, "buyer"),
        (120, "buyer", "manager"),
        (400, "manager", "director"),
        (1000, "director", "cfo"),
    ):
        order = scribe.create(
            "purchase-orders",
            {
                "vendor": book.vendors["Fabrikam Industrial"],
                "lines": [line(book, "CONSULT-H", hours)],
            },
        )
        oid = order["id"]
        scribe.expect(
            scribe.act("purchase-orders", oid, "approve", {"role": allowed}),
            409,
            "invalid_transition",
        )
        scribe.expect(scribe.act("purchase-orders", oid, "submit"), 200)
        if refused is not None:
            scribe.expect(
                scribe.act("purchase-orders", oid, "approve", {"role": refused}),
                403,
                "approval_limit_exceeded",
            )
        scribe.expect(scribe.act("purchase-orders", oid, "approve", {"role": allowed}), 200)
        scribe.expect(scribe.act("purchase-orders", oid, "submit"), 409, "invalid_transition")
    odd = scribe.create(
        "purchase-orders",
        {"vendor": book.vendors["Fabrikam Industrial"], "lines": [line(book, "STEEL-BAR", 500)]},
    )
    scribe.expect(scribe.act("purchase-orders", odd["id"], "submit"), 200)
    scribe.expect(
        scribe.act("purchase-orders", odd["id"], "approve", {"role": "intern"}), 422, "unknown_role"
    )
    scribe.expect(scribe.act("purchase-orders", odd["id"], "reject"), 200)
    scribe.expect(scribe.act("purchase-orders", odd["id"], "cancel"), 200)
    empty = scribe.create(
        "purchase-orders", {"vendor": book.vendors["Fabrikam Industrial"], "lines": []}
    )
    scribe.expect(scribe.act("purchase-orders", empty["id"], "submit"), 422, "no_lines")
    scribe.expect(
        scribe.call("GET", "purchase-orders", params=[("status", "approved")]),
        200,
    )


def send_and_receive(scribe: Scribe, book: Book) -> None:
    oid = book.orders["laptops"]
    scribe.expect(
        scribe.call(
            "POST",
            "goods-receipts",
            body={
                "purchase_order": oid,
                "receipt_date": "2026-03-03",
                "lines": [{"line": 1, "quantity": 1}],
            },
        ),
        409,
        "invalid_transition",
    )
    scribe.expect(scribe.act("purchase-orders", oid, "send"), 200)
    scribe.expect(scribe.act("purchase-orders", oid, "send"), 409, "invalid_transition")
    scribe.create(
        "goods-receipts",
        {
            "purchase_order": oid,
            "receipt_date": "2026-03-05",
            "lines": [{"line": 1, "quantity": 4}, {"line": 2, "quantity": 6}],
        },
    )
    scribe.expect(scribe.call("GET", f"purchase-orders/{oid}"), 200)
    scribe.expect(
        scribe.call(
            "POST",
            "goods-receipts",
            body={
                "purchase_order": oid,
                "receipt_date": "2026-03-06",
                "lines": [{"line": 1, "quantity": 3}],
            },
        ),
        409,
        "over_receipt",
    )
    scribe.expect(
        scribe.call(
            "POST",
            "goods-receipts",
            body={
                "purchase_order": oid,
                "receipt_date": "2026-03-06",
                "lines": [{"line": 9, "quantity": 1}],
            },
        ),
        422,
        "unknown_line",
    )
    scribe.expect(
        scribe.call(
            "POST",
            "goods-receipts",
            body={
                "purchase_order": oid,
                "receipt_date": "2026-03-06",
                "lines": [{"line": 1, "quantity": 0}],
            },
        ),
        422,
        "invalid_quantity",
    )
    scribe.create(
        "goods-receipts",
        {
            "purchase_order": oid,
            "receipt_date": "2026-03-09",
            "lines": [{"line": 1, "quantity": 2}],
        },
    )
    scribe.expect(scribe.call("GET", f"purchase-orders/{oid}"), 200)
    scribe.expect(
        scribe.call(
            "POST",
            "goods-receipts",
            body={
                "purchase_order": oid,
                "receipt_date": "2026-03-10",
                "lines": [{"line": 2, "quantity": 1}],
            },
        ),
        409,
        "invalid_transition",
    )
    receipts = scribe.expect(
        scribe.call("GET", "goods-receipts", params=[("purchase_order", oid)]), 200
    )
    first = receipts.body.value["data"][0]["id"]
    scribe.expect(scribe.call("GET", f"goods-receipts/{first}"), 200)
    paper = approved_order(
        scribe,
        book,
        "Contoso Office Supply",
        [line(book, "PAPER-A4", 100), line(book, "PALLET-WR", 20)],
    )
    scribe.expect(scribe.act("purchase-orders", paper, "send"), 200)
    scribe.create(
        "goods-receipts",
        {
            "purchase_order": paper,
            "receipt_date": "2026-03-11",
            "lines": [{"line": 1, "quantity": 100}, {"line": 2, "quantity": 12}],
        },
    )
    book.orders["paper"] = paper


def match_and_pay(scribe: Scribe, book: Book) -> None:
    laptops, paper = book.orders["laptops"], book.orders["paper"]
    tailspin, contoso = book.vendors["Tailspin Electronics"], book.vendors["Contoso Office Supply"]
    matched = scribe.create(
        "vendor-invoices",
        {
            "vendor": tailspin,
            "purchase_order": laptops,
            "vendor_invoice_number": "TS-88410",
            "invoice_date": "2026-03-12",
            "lines": [
                {"line": 1, "quantity": 6, "unit_price": "1150.00"},
                {"line": 2, "quantity": 6, "unit_price": "215.00"},
            ],
        },
    )
    assert matched["match_status"] == "matched", matched
    scribe.expect(scribe.act("vendor-invoices", matched["id"], "pay"), 409, "invalid_transition")
    scribe.expect(scribe.act("vendor-invoices", matched["id"], "schedule-payment"), 200)
    scribe.expect(scribe.act("vendor-invoices", matched["id"], "pay"), 200)
    scribe.expect(scribe.act("vendor-invoices", matched["id"], "pay"), 409, "invalid_transition")
    within = scribe.create(
        "vendor-invoices",
        {
            "vendor": contoso,
            "purchase_order": paper,
            "vendor_invoice_number": "CT-2026-0311",
            "invoice_date": "2026-03-13",
            "lines": [{"line": 1, "quantity": 100, "unit_price": "25.39"}],
        },
    )
    assert within["match_status"] == "matched", within
    scribe.expect(scribe.act("vendor-invoices", within["id"], "schedule-payment"), 200)
    over_price = scribe.create(
        "vendor-invoices",
        {
            "vendor": contoso,
            "purchase_order": paper,
            "vendor_invoice_number": "CT-2026-0312",
            "invoice_date": "2026-03-13",
            "lines": [{"line": 2, "quantity": 12, "unit_price": "19.70"}],
        },
    )
    assert over_price["payment_status"] == "blocked", over_price
    scribe.expect(
        scribe.act("vendor-invoices", over_price["id"], "schedule-payment"), 409, "payment_blocked"
    )
    over_quantity = scribe.create(
        "vendor-invoices",
        {
            "vendor": contoso,
            "purchase_order": paper,
            "vendor_invoice_number": "CT-2026-0313",
            "invoice_date": "2026-03-14",
            "lines": [{"line": 2, "quantity": 20, "unit_price": "18.75"}],
        },
    )
    assert over_quantity["payment_status"] == "blocked", over_quantity
    scribe.expect(scribe.act("vendor-invoices", over_quantity["id"], "pay"), 409, "payment_blocked")
    scribe.expect(
        scribe.call(
            "POST",
            "vendor-invoices",
            body={
                "vendor": tailspin,
                "purchase_order": paper,
                "vendor_invoice_number": "X-1",
                "invoice_date": "2026-03-14",
                "lines": [],
            },
        ),
        422,
        "vendor_mismatch",
    )
    scribe.expect(
        scribe.call("GET", "vendor-invoices", params=[("payment_status", "blocked")]), 200
    )
    scribe.expect(scribe.call("GET", f"vendor-invoices/{over_price['id']}"), 200)


def close_a_period(scribe: Scribe, book: Book) -> None:
    february = book.periods["2026-02"]
    scribe.expect(scribe.act("accounting-periods", february, "close"), 200)
    scribe.expect(scribe.act("accounting-periods", february, "close"), 409, "invalid_transition")
    order = approved_order(scribe, book, "Wide World Logistics", [line(book, "PALLET-WR", 40)])
    scribe.expect(scribe.act("purchase-orders", order, "send"), 200)
    receipt = {"purchase_order": order, "lines": [{"line": 1, "quantity": 40}]}
    scribe.expect(
        scribe.call("POST", "goods-receipts", body={**receipt, "receipt_date": "2026-02-27"}),
        409,
        "period_closed",
    )
    scribe.expect(
        scribe.call("POST", "goods-receipts", body={**receipt, "receipt_date": "2025-12-30"}),
        422,
        "no_period",
    )
    scribe.create("goods-receipts", {**receipt, "receipt_date": "2026-03-16"})
    invoice = {
        "vendor": book.vendors["Wide World Logistics"],
        "purchase_order": order,
        "vendor_invoice_number": "WW-5521",
        "lines": [{"line": 1, "quantity": 40, "unit_price": "18.75"}],
    }
    scribe.expect(
        scribe.call("POST", "vendor-invoices", body={**invoice, "invoice_date": "2026-02-28"}),
        409,
        "period_closed",
    )
    scribe.expect(scribe.act("accounting-periods", february, "reopen"), 200)
    scribe.create("vendor-invoices", {**invoice, "invoice_date": "2026-02-28"})
    scribe.expect(scribe.act("accounting-periods", february, "close"), 200)
    scribe.expect(scribe.act("purchase-orders", order, "close"), 200)
    scribe.expect(
        scribe.act("purchase-orders", book.orders["paper"], "close"), 409, "invalid_transition"
    )
    scribe.expect(scribe.call("GET", "accounting-periods", params=[("status", "closed")]), 200)


def edit_and_delete(scribe: Scribe, book: Book) -> None:
    draft = scribe.create(
        "purchase-orders",
        {"vendor": book.vendors["Contoso Office Supply"], "lines": [line(book, "PAPER-A4", 10)]},
    )
    did = draft["id"]
    scribe.expect(
        scribe.call(
            "PATCH",
            f"purchase-orders/{did}",
            body={"lines": [line(book, "PAPER-A4", 30), line(book, "DOCK-USB4", 1)]},
        ),
        200,
    )
    scribe.expect(
        scribe.call("PATCH", f"purchase-orders/{did}", body={"total": "1.00"}), 422, "read_only"
    )
    scribe.expect(scribe.call("DELETE", f"purchase-orders/{did}"), 204)
    scribe.expect(scribe.call("GET", f"purchase-orders/{did}"), 404, "not_found")
    scribe.expect(
        scribe.call("PATCH", f"purchase-orders/{book.orders['laptops']}", body={"currency": "EUR"}),
        409,
        "not_editable",
    )
    scribe.expect(
        scribe.call("DELETE", f"purchase-orders/{book.orders['paper']}"), 409, "not_deletable"
    )
    scribe.expect(
        scribe.call("DELETE", f"vendors/{book.vendors['Tailspin Electronics']}"), 409, "in_use"
    )
    spare = scribe.create("vendors", {"name": "Northwind Spares", "tax_id": "US-19-9081726"})
    scribe.expect(scribe.call("DELETE", f"vendors/{spare['id']}"), 204)
    gadget = scribe.create(
        "items", {"sku": "GADGET-1", "name": "Unused gadget", "unit_price": "9.99"}
    )
    scribe.expect(scribe.call("DELETE", f"items/{gadget['id']}"), 204)
    wish = scribe.create(
        "purchase-requisitions",
        {"requester": "ines.alvarez@acme.example", "lines": [line(book, "DOCK-USB4", 1)]},
    )
    scribe.expect(
        scribe.call(
            "PATCH",
            f"purchase-requisitions/{wish['id']}",
            body={"lines": [line(book, "DOCK-USB4", 2)]},
        ),
        200,
    )
    scribe.expect(scribe.call("DELETE", f"purchase-requisitions/{wish['id']}"), 204)
    scribe.expect(
        scribe.call(
            "POST",
            "purchase-orders",
            body={"vendor": "VEN-999999", "lines": [line(book, "PAPER-A4", 1)]},
        ),
        422,
        "invalid_reference",
    )
    scribe.expect(
        scribe.call(
            "GET", "purchase-orders", params=[("vendor", book.vendors["Contoso Office Supply"])]
        ),
        200,
    )


@dataclass(frozen=True, slots=True)
class Chapter:
    slug: str
    task: str
    write: Callable[[Scribe, Book], None]


CHAPTERS: Final = (
    Chapter(
        "set-up-master-data",
        "Open the February to April accounting periods, register four vendors and six items, "
        "and read them back in pages; a vendor without a tax id and a price sent as a number "
        "are refused, and so is a call without a token.",
        set_up_master_data,
    ),
    Chapter(
        "requisition-to-order",
        "Raise a laptop requisition, have a manager approve it (a buyer may not: it is over "
        "their limit), turn it into a purchase order and approve that; reject a second one.",
        requisition_to_order,
    ),
    Chapter(
        "approval-thresholds",
        "Approve consulting orders at each approver role's limit: the role below refuses, the "
        "role at the limit approves; an unknown role, approving a draft and submitting an "
        "order without lines are refused.",
        approval_thresholds,
    ),
    Chapter(
        "send-and-receive",
        "Send the laptop order and receive it in two deliveries; receiving before it is sent, "
        "past the ordered quantity, against an unknown line or after it is complete is refused.",
        send_and_receive,
    ),
    Chapter(
        "match-and-pay",
        "Match vendor invoices to their orders and receipts: matched invoices are scheduled "
        "and paid; one priced over the 2% tolerance and one invoicing more than was received "
        "are blocked from payment.",
        match_and_pay,
    ),
    Chapter(
        "close-a-period",
        "Close February: receipts and invoices dated in it are refused until it is reopened; "
        "close a fully received order (one not yet received cannot be closed).",
        close_a_period,
    ),
    Chapter(
        "edit-and-delete",
        "Edit and delete a draft order; approved and sent orders, and vendors in use, refuse "
        "edits and deletion.",
        edit_and_delete,
    ),
)


def build_corpus() -> list[Session]:
    """Every chapter, in order, against one service: later chapters see earlier records."""
    return write_chapters(reference_service())


def reference_service() -> Erp:
    """The service the corpus is written against, before any call."""
    return Erp(START, frozenset({TOKEN}))


def write_chapters(erp: Erp) -> list[Session]:
    """Run every chapter against `erp`, returning the sessions it recorded."""
    book = Book()
    sessions: list[Session] = []
    for number, chapter in enumerate(CHAPTERS, start=1):
        session = Session(
            id=f"erp-{number:02d}-{chapter.slug}",
            task=chapter.task,
            outcome="success",
            source="myna.backends.erp.corpus",
        )
        chapter.write(Scribe(erp, session), book)
        erp.advance(timedelta(hours=2))
        sessions.append(session)
    return sessions


def main(argv: list[str] | None = None) -> None:
    corpus_command(argv, __doc__.splitlines()[0] if __doc__ else None, build_corpus)


if __name__ == "__main__":
    main()
