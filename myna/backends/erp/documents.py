"""Procure-to-pay documents: how each record is built from what a client sent, and what an
action does to one, as functions of the request and a read-only view of the other records.

The reference service (`instance.py`, dicts in memory) and the ERP extension (the mock's store,
inside the request's transaction) each supply a `Lookup`, so both build records, apply receipts
and run actions with this one implementation and the rules of `rules.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Final, Protocol

from myna.backends.erp import rules
from myna.backends.erp.rules import (
    PAYMENT_ACTIONS,
    PERIOD_ACTIONS,
    PO_ACTIONS,
    REQUISITION_ACTIONS,
    OrderLine,
    Period,
    Quantity,
    Refused,
    money,
)

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Collection:
    """One collection: its path segment, id prefix, what a create needs, what PATCH may change."""

    name: str
    prefix: str
    required: tuple[str, ...]
    writable: tuple[str, ...]
    deletable: bool = True


COLLECTIONS: Final[Mapping[str, Collection]] = {
    c.name: c
    for c in (
        Collection(
            "vendors",
            "VEN",
            ("name", "tax_id"),
            ("name", "tax_id", "email", "currency", "payment_terms", "status"),
        ),
        Collection(
            "items", "ITM", ("sku", "name", "unit_price"), ("name", "unit_of_measure", "unit_price")
        ),
        Collection(
            "purchase-requisitions",
            "PR",
            ("requester", "lines"),
            ("requester", "description", "needed_by", "lines"),
        ),
        Collection(
            "purchase-orders",
            "PO",
            ("vendor", "lines"),
            ("vendor", "requisition", "order_date", "currency", "lines"),
        ),
        Collection("goods-receipts", "GR", ("purchase_order", "receipt_date", "lines"), (), False),
        Collection(
            "vendor-invoices",
            "INV",
            ("vendor", "purchase_order", "vendor_invoice_number", "invoice_date", "lines"),
            (),
            False,
        ),
        Collection("accounting-periods", "PER", ("code",), (), False),
    )
}

# Fields holding ids of other collections' records.
REFERENCES: Final[Mapping[str, Mapping[str, str]]] = {
    "purchase-orders": {"vendor": "vendors", "requisition": "purchase-requisitions"},
    "goods-receipts": {"purchase_order": "purchase-orders"},
    "vendor-invoices": {"vendor": "vendors", "purchase_order": "purchase-orders"},
}


RESOURCES: Final[Mapping[str, str]] = {
    "vendors": "vendor",
    "items": "item",
    "purchase-requisitions": "purchase-requisition",
    "purchase-orders": "purchase-order",
    "goods-receipts": "goods-receipt",
    "vendor-invoices": "vendor-invoice",
    "accounting-periods": "accounting-period",
}
"""The model's resource name for each collection of the API."""

ACTIONS: Final[Mapping[str, tuple[Mapping[str, tuple[tuple[str, ...], str]], str]]] = {
    "purchase-orders": (PO_ACTIONS, "status"),
    "purchase-requisitions": (REQUISITION_ACTIONS, "status"),
    "vendor-invoices": (PAYMENT_ACTIONS, "payment_status"),
    "accounting-periods": (PERIOD_ACTIONS, "status"),
}
"""The actions each collection offers: their transition table and the status field it moves."""

# Only drafts change or go away; accounting documents never do.
DRAFT_ONLY: Final = frozenset({"purchase-orders", "purchase-requisitions"})


class Lookup(Protocol):
    """What building a record needs to know about the rest of the world."""

    def record(self, collection: str, record_id: str) -> Row | None: ...

    def periods(self) -> list[Period]: ...

    def today(self) -> date: ...


def build(lookup: Lookup, collection: str, sent: Row) -> Row:
    """The record `sent` describes, with every derived field, or `Refused`: first for an id
    that names no record of the collection its field refers to."""
    for name, target in REFERENCES.get(collection, {}).items():
        if sent.get(name) is not None:
            _referenced(lookup, target, sent, name)
    return BUILDERS[collection](lookup, sent)


def act(collection: str, action: str, row: Row, sent: Row, stamp: str) -> Row:
    """The fields `action` changes on `row`, or `Refused` when a rule forbids it."""
    actions, status_field = ACTIONS[collection]
    if collection == "vendor-invoices":
        rules.check([rules.payable(row[status_field], action)])
    else:
        rules.check([rules.transition(actions, action, row[status_field], status_field)])
    changes: Row = {status_field: actions[action][1], "updated_at": stamp}
    if collection == "purchase-orders" and action == "submit":
        rules.check([rules.has_lines(order_lines(row))])
    if action == "approve":
        role = sent.get("role")
        if not isinstance(role, str):
            raise Refused(422, "required", "role is required", "role")
        rules.check([rules.approval_limit(Decimal(str(row["total"])), role)])
        changes.update(approved_by_role=role, approved_at=stamp)
    if collection == "accounting-periods":
        changes["closed_at"] = stamp if action == "close" else None
    if collection == "vendor-invoices" and action == "pay":
        changes["paid_at"] = stamp
    return changes


def required(collection: str, sent: Row) -> None:
    """A create sends every field its collection requires, and none it derives (a status, a
    total, an approver)."""
    spec = COLLECTIONS[collection]
    for name in sent:
        if name not in spec.required and name not in spec.writable:
            raise Refused(422, "read_only", f"{name} is set by the service", name)
    missing = [name for name in COLLECTIONS[collection].required if sent.get(name) in (None, "")]
    if missing:
        raise Refused(422, "required", f"{missing[0]} is required", missing[0])


def writable(collection: str, sent: Row) -> None:
    """A PATCH sends only fields clients may change; derived ones (totals, statuses) are not,
    and a required one is changed, never cleared."""
    spec = COLLECTIONS[collection]
    for name, value in sent.items():
        if name not in spec.writable:
            raise Refused(422, "read_only", f"{name} cannot be changed", name)
        if name in spec.required and value in (None, ""):
            raise Refused(422, "required", f"{name} is required", name)


def editable(collection: str, row: Row, verb: str) -> None:
    """Orders and requisitions change (`verb` "change") or go away ("be deleted") only as
    drafts."""
    if collection in DRAFT_ONLY and row["status"] != "draft":
        code = "not_editable" if verb == "change" else "not_deletable"
        raise Refused(409, code, f"only a draft can {verb}; this one is {row['status']}", "status")


def received(order: Row, receipt: Row) -> Row:
    """The order's lines and status once `receipt` is posted against it."""
    lines = [dict(line) for line in order["lines"]]
    for entry in receipt["lines"]:
        for line in lines:
            if line["line"] == entry["line"]:
                line["received_quantity"] += entry["quantity"]
    complete = all(line["received_quantity"] == line["quantity"] for line in lines)
    return {"lines": lines, "status": "received" if complete else "partially_received"}


def _referenced(lookup: Lookup, collection: str, sent: Row, name: str) -> Row:
    row = lookup.record(collection, str(sent.get(name)))
    if row is None:
        raise Refused(
            422,
            "invalid_reference",
            f"{name} names no {collection} record {sent.get(name)!r}",
            name,
        )
    return row


def _vendor(lookup: Lookup, sent: Row) -> Row:
    return {
        "name": _string(sent, "name"),
        "tax_id": _string(sent, "tax_id"),
        "email": sent.get("email"),
        "currency": sent.get("currency") or "USD",
        "payment_terms": _choice(sent, "payment_terms", ("net15", "net30", "net60"), "net30"),
        "status": _choice(sent, "status", ("active", "inactive"), "active"),
    }


def _item(lookup: Lookup, sent: Row) -> Row:
    return {
        "sku": _string(sent, "sku"),
        "name": _string(sent, "name"),
        "unit_of_measure": _choice(sent, "unit_of_measure", ("each", "box", "hour", "kg"), "each"),
        "unit_price": money(_amount(sent.get("unit_price"), "unit_price")),
    }


def _priced_lines(lookup: Lookup, sent: Row, received: bool) -> tuple[list[Row], str]:
    lines = sent.get("lines")
    if not isinstance(lines, list):
        raise Refused(422, "invalid", "lines is a list of {item, quantity, unit_price?}", "lines")
    out: list[Row] = []
    for number, entry in enumerate(lines, start=1):
        where = f"lines[{number - 1}]"
        if not isinstance(entry, dict):
            raise Refused(422, "invalid", f"{where} is an object", where)
        item = lookup.record("items", str(entry.get("item")))
        if item is None:
            raise Refused(422, "invalid_reference", f"{where}.item names no item", f"{where}.item")
        quantity = _quantity(entry.get("quantity"), f"{where}.quantity")
        price = _amount(entry.get("unit_price", item["unit_price"]), f"{where}.unit_price")
        line: Row = {
            "line": number,
            "item": item["id"],
            "description": entry.get("description") or item["name"],
            "quantity": quantity,
            "unit_price": money(price),
            "amount": money(price * quantity),
        }
        if received:
            line["received_quantity"] = entry.get("received_quantity", 0)
        out.append(line)
    total = sum((Decimal(line["amount"]) for line in out), Decimal(0))
    return out, money(total)


def _requisition(lookup: Lookup, sent: Row) -> Row:
    lines, total = _priced_lines(lookup, sent, received=False)
    return {
        "requester": _string(sent, "requester"),
        "description": sent.get("description"),
        "needed_by": _day(sent.get("needed_by"), "needed_by").isoformat()
        if sent.get("needed_by")
        else None,
        "lines": lines,
        "total": total,
        "status": sent.get("status", "draft"),
        "approved_by_role": sent.get("approved_by_role"),
        "approved_at": sent.get("approved_at"),
    }


def _order(lookup: Lookup, sent: Row) -> Row:
    lines, total = _priced_lines(lookup, sent, received=True)
    order_date = sent.get("order_date") or lookup.today().isoformat()
    return {
        "vendor": sent["vendor"],
        "requisition": sent.get("requisition"),
        "order_date": _day(order_date, "order_date").isoformat(),
        "currency": sent.get("currency") or "USD",
        "lines": lines,
        "total": total,
        "status": sent.get("status", "draft"),
        "approved_by_role": sent.get("approved_by_role"),
        "approved_at": sent.get("approved_at"),
    }


def _received_lines(sent: Row, priced: bool) -> list[Quantity]:
    lines = sent.get("lines")
    if not isinstance(lines, list):
        raise Refused(422, "invalid", "lines is a list of {line, quantity}", "lines")
    out = []
    for index, entry in enumerate(lines):
        where = f"lines[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("line"), int):
            raise Refused(422, "invalid", f"{where}.line is an order line number", f"{where}.line")
        price = _amount(entry.get("unit_price"), f"{where}.unit_price") if priced else None
        out.append(
            Quantity(
                entry["line"],
                Decimal(_quantity(entry.get("quantity"), f"{where}.quantity", zero=True)),
                price,
            )
        )
    return out


def _receipt(lookup: Lookup, sent: Row) -> Row:
    order = _referenced(lookup, "purchase-orders", sent, "purchase_order")
    day = _day(sent["receipt_date"], "receipt_date")
    received = _received_lines(sent, priced=False)
    rules.check(
        [
            rules.transition(
                {"receive": (("sent", "partially_received"), "")},
                "receive",
                order["status"],
                "purchase_order",
            ),
            rules.period_open(lookup.periods(), day, "receipt_date"),
            rules.receipt_within_order(order_lines(order), received),
        ]
    )
    return {
        "purchase_order": order["id"],
        "receipt_date": day.isoformat(),
        "lines": [{"line": q.line, "quantity": int(q.quantity)} for q in received],
    }


def _invoice(lookup: Lookup, sent: Row) -> Row:
    order = _referenced(lookup, "purchase-orders", sent, "purchase_order")
    day = _day(sent["invoice_date"], "invoice_date")
    invoiced = _received_lines(sent, priced=True)
    if order["vendor"] != sent["vendor"]:
        raise Refused(
            422, "vendor_mismatch", f"{order['id']} was ordered from {order['vendor']}", "vendor"
        )
    rules.check([rules.period_open(lookup.periods(), day, "invoice_date")])
    exceptions = rules.three_way_match(order_lines(order), invoiced)
    lines = [
        {
            "line": q.line,
            "quantity": int(q.quantity),
            "unit_price": money(q.unit_price or Decimal(0)),
            "amount": money((q.unit_price or Decimal(0)) * q.quantity),
        }
        for q in invoiced
    ]
    return {
        "vendor": sent["vendor"],
        "purchase_order": order["id"],
        "vendor_invoice_number": _string(sent, "vendor_invoice_number"),
        "invoice_date": day.isoformat(),
        "lines": lines,
        "total": money(sum((Decimal(str(line["amount"])) for line in lines), Decimal(0))),
        "match_status": "unmatched" if exceptions else "matched",
        "match_exceptions": exceptions,
        "payment_status": "blocked" if exceptions else "unpaid",
        "paid_at": None,
    }


def _period(lookup: Lookup, sent: Row) -> Row:
    code = _string(sent, "code")
    try:
        first = date.fromisoformat(f"{code}-01")
    except ValueError:
        raise Refused(422, "invalid", f"code {code!r} is a month, YYYY-MM", "code") from None
    if any(period.code == code for period in lookup.periods()):
        raise Refused(409, "duplicate", f"accounting period {code} exists", "code")
    following = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
    return {
        "code": code,
        "start_date": first.isoformat(),
        "end_date": (following - timedelta(days=1)).isoformat(),
        "status": "open",
        "closed_at": None,
    }


BUILDERS: Final[Mapping[str, Callable[[Lookup, Row], Row]]] = {
    "vendors": _vendor,
    "items": _item,
    "purchase-requisitions": _requisition,
    "purchase-orders": _order,
    "goods-receipts": _receipt,
    "vendor-invoices": _invoice,
    "accounting-periods": _period,
}


def order_lines(order: Row) -> list[OrderLine]:
    return [
        OrderLine(
            line["line"],
            Decimal(line["quantity"]),
            Decimal(line["unit_price"]),
            Decimal(line.get("received_quantity", 0)),
        )
        for line in order["lines"]
    ]


def _string(sent: Row, name: str) -> str:
    value = sent.get(name)
    if not isinstance(value, str) or not value:
        raise Refused(422, "required", f"{name} is a non-empty string", name)
    return value


def _choice(sent: Row, name: str, allowed: tuple[str, ...], default: str) -> str:
    value = sent.get(name, default)
    if value not in allowed:
        raise Refused(422, "invalid", f"{name} is one of: {', '.join(allowed)}", name)
    return str(value)


def _amount(value: Any, name: str) -> Decimal:
    try:
        amount = Decimal(str(value)) if isinstance(value, str) else None
    except InvalidOperation:
        amount = None
    if amount is None or amount < 0 or not amount.is_finite():
        raise Refused(422, "invalid", f'{name} is a decimal string such as "12.50"', name)
    return amount


def _quantity(value: Any, name: str, *, zero: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or (value <= 0 and not zero):
        raise Refused(422, "invalid_quantity", f"{name} is a positive whole number", name)
    return value


def _day(value: Any, name: str) -> date:
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise Refused(422, "invalid", f"{name} is a date, YYYY-MM-DD", name) from None
