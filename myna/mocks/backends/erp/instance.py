"""A reference procure-to-pay service in memory: the pen the ERP corpus author writes with.

It answers the REST API that PROTOCOL.md documents (`/api/erp/v1/{collection}`, `/{id}`, and
actions such as `/purchase-orders/{id}/approve`) and runs the business rules of `rules.py`:
approval limits by role, receipts within the ordered quantities, three-way matching with payment
blocked on a mismatch, and no posting into a closed accounting period. Deterministic: ids come
from per-collection counters and time from a clock the author advances.

This is not the mock. The mock is learned from the traffic written here; this file shares only
`rules.py` with the ERP extension, so the rules have one implementation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Final
from urllib.parse import urlencode

from myna.mocks.backends.erp import rules
from myna.mocks.backends.erp.rules import (
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
from myna.traces.model import Body, Pairs

Row = dict[str, Any]

BASE: Final = "/api/erp/v1"
JSON_TYPE: Final = "application/json"
STAMP: Final = "%Y-%m-%dT%H:%M:%SZ"
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
UNAUTHORIZED: Final[Row] = {
    "error": {
        "code": "unauthorized",
        "message": "a valid bearer token is required",
        "field": None,
    }
}
CHALLENGE: Final = 'Bearer realm="erp"'


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

# Which action each collection offers, with its transition table and status field.
ACTIONS: Final[Mapping[str, tuple[Mapping[str, tuple[tuple[str, ...], str]], str]]] = {
    "purchase-orders": (PO_ACTIONS, "status"),
    "purchase-requisitions": (REQUISITION_ACTIONS, "status"),
    "vendor-invoices": (PAYMENT_ACTIONS, "payment_status"),
    "accounting-periods": (PERIOD_ACTIONS, "status"),
}

# Fields holding ids of other collections' records.
REFERENCES: Final[Mapping[str, Mapping[str, str]]] = {
    "purchase-orders": {"vendor": "vendors", "requisition": "purchase-requisitions"},
    "goods-receipts": {"purchase_order": "purchase-orders"},
    "vendor-invoices": {"vendor": "vendors", "purchase_order": "purchase-orders"},
}


@dataclass(slots=True)
class Request:
    method: str
    path: str
    params: Pairs = field(default_factory=list)
    body: Body = field(default_factory=Body)
    token: str | None = None


@dataclass(slots=True)
class Reply:
    status: int
    body: Body
    headers: Pairs = field(default_factory=list)


def json_reply(status: int, value: Any, headers: Pairs | None = None) -> Reply:
    return Reply(
        status, Body("json", value, JSON_TYPE), [("Content-Type", JSON_TYPE), *(headers or [])]
    )


def error_reply(refused: Refused) -> Reply:
    body = {
        "error": {"code": refused.code, "message": refused.message, "field": refused.field_name}
    }
    headers: Pairs = [("WWW-Authenticate", CHALLENGE)] if refused.status == 401 else []
    return json_reply(refused.status, body, headers)


class Erp:
    """The service: tokens it accepts, its records by collection, and a clock."""

    def __init__(self, now: datetime, tokens: frozenset[str]) -> None:
        self.now = now
        self.tokens = tokens
        self.records: dict[str, dict[str, Row]] = {name: {} for name in COLLECTIONS}
        self.counters: dict[str, int] = dict.fromkeys(COLLECTIONS, 0)

    def advance(self, step: timedelta) -> None:
        self.now += step

    def handle(self, request: Request) -> Reply:
        try:
            return self._route(request)
        except Refused as refused:
            return error_reply(refused)

    # -- routing ------------------------------------------------------------------------------

    def _route(self, request: Request) -> Reply:
        if request.token is None or request.token not in self.tokens:
            return json_reply(401, UNAUTHORIZED, [("WWW-Authenticate", CHALLENGE)])
        if not request.path.startswith(BASE + "/"):
            raise Refused(404, "not_found", f"no endpoint answers {request.path}")
        parts = request.path[len(BASE) + 1 :].split("/")
        collection = COLLECTIONS.get(parts[0])
        if collection is None or len(parts) > 3:
            raise Refused(404, "not_found", f"no endpoint answers {request.path}")
        method = request.method
        if len(parts) == 1:
            if method == "GET":
                return self._list(collection, request)
            if method == "POST":
                return json_reply(201, self._create(collection, _object(request)))
        elif len(parts) == 2:
            row = self._get(collection, parts[1])
            if method == "GET":
                return json_reply(200, row)
            if method == "PATCH" and collection.writable:
                return json_reply(200, self._update(collection, row, _object(request)))
            if method == "DELETE" and collection.deletable:
                self._delete(collection, row)
                return Reply(204, Body())
        elif method == "POST" and parts[0] in ACTIONS and parts[2] in ACTIONS[parts[0]][0]:
            row = self._get(collection, parts[1])
            return json_reply(200, self._act(collection, row, parts[2], _object(request)))
        raise Refused(405, "method_not_allowed", f"{method} is not allowed on {request.path}")

    def _get(self, collection: Collection, record_id: str) -> Row:
        row = self.records[collection.name].get(record_id)
        if row is None:
            raise Refused(404, "not_found", f"{collection.name} has no record {record_id}", "id")
        return row

    def _list(self, collection: Collection, request: Request) -> Reply:
        params = dict(request.params)
        limit = min(_count(params.get("limit"), "limit", DEFAULT_LIMIT), MAX_LIMIT)
        offset = _count(params.get("offset"), "offset", 0)
        rows = list(self.records[collection.name].values())
        for name, value in request.params:
            if name in ("limit", "offset", "sort"):
                continue
            if rows and name not in rows[0]:
                raise Refused(
                    422, "unknown_field", f"{collection.name} has no field {name!r}", name
                )
            rows = [row for row in rows if _text(row.get(name)) == value]
        for key in reversed(params.get("sort", "").split(",") if params.get("sort") else []):
            name = key.lstrip("-")
            rows.sort(
                key=lambda row: (row.get(name) is None, _text(row.get(name))),
                reverse=key.startswith("-"),
            )
        page = rows[offset : offset + limit]
        body: Row = {"data": page, "total": len(rows)}
        if offset + len(page) < len(rows):
            moved = [(k, v) for k, v in request.params if k != "offset"]
            body["next"] = f"{request.path}?{urlencode([*moved, ('offset', str(offset + limit))])}"
        return json_reply(200, body)

    # -- writes -------------------------------------------------------------------------------

    def _mint(self, collection: Collection) -> str:
        self.counters[collection.name] += 1
        return f"{collection.prefix}-{self.counters[collection.name]:06d}"

    def _stamp(self) -> str:
        return self.now.strftime(STAMP)

    def _create(self, collection: Collection, sent: Row) -> Row:
        missing = [name for name in collection.required if sent.get(name) in (None, "")]
        if missing:
            raise Refused(422, "required", f"{missing[0]} is required", missing[0])
        self._check_references(collection, sent)
        build = BUILDERS[collection.name]
        row = build(self, sent)
        row = {
            "id": self._mint(collection),
            **row,
            "created_at": self._stamp(),
            "updated_at": self._stamp(),
        }
        self.records[collection.name][row["id"]] = row
        if collection.name == "goods-receipts":
            self._receive(row)
        return row

    def _update(self, collection: Collection, row: Row, sent: Row) -> Row:
        for name in sent:
            if name not in collection.writable:
                raise Refused(422, "read_only", f"{name} cannot be changed", name)
        if (
            collection.name in ("purchase-orders", "purchase-requisitions")
            and row["status"] != "draft"
        ):
            raise Refused(
                409,
                "not_editable",
                f"only a draft can change; this one is {row['status']}",
                "status",
            )
        self._check_references(collection, sent)
        merged = {**row, **sent}
        rebuilt = BUILDERS[collection.name](self, merged)
        row.update(rebuilt, updated_at=self._stamp())
        return row

    def _delete(self, collection: Collection, row: Row) -> None:
        if (
            collection.name in ("purchase-orders", "purchase-requisitions")
            and row["status"] != "draft"
        ):
            raise Refused(
                409,
                "not_deletable",
                f"only a draft can be deleted; this one is {row['status']}",
                "status",
            )
        for other, fields in REFERENCES.items():
            for name, target in fields.items():
                if target == collection.name and any(
                    r.get(name) == row["id"] for r in self.records[other].values()
                ):
                    raise Refused(409, "in_use", f"{row['id']} is referenced by {other}", "id")
        del self.records[collection.name][row["id"]]

    def _check_references(self, collection: Collection, sent: Row) -> None:
        for name, target in REFERENCES.get(collection.name, {}).items():
            value = sent.get(name)
            if value is not None and value not in self.records[target]:
                raise Refused(
                    422, "invalid_reference", f"{name} names no {target} record {value!r}", name
                )

    def _act(self, collection: Collection, row: Row, action: str, sent: Row) -> Row:
        actions, status_field = ACTIONS[collection.name]
        if collection.name == "vendor-invoices":
            rules.check([rules.payable(row["payment_status"], action)])
        else:
            rules.check([rules.transition(actions, action, row[status_field], status_field)])
        if collection.name == "purchase-orders" and action == "submit":
            rules.check([rules.has_lines(_order_lines(row))])
        if action == "approve":
            role = sent.get("role")
            if not isinstance(role, str):
                raise Refused(422, "required", "role is required", "role")
            rules.check([rules.approval_limit(Decimal(row["total"]), role)])
            row["approved_by_role"] = role
            row["approved_at"] = self._stamp()
        if collection.name == "accounting-periods":
            row["closed_at"] = self._stamp() if action == "close" else None
        if collection.name == "vendor-invoices" and action == "pay":
            row["paid_at"] = self._stamp()
        row[status_field] = actions[action][1]
        row["updated_at"] = self._stamp()
        return row

    def _receive(self, receipt: Row) -> None:
        order = self.records["purchase-orders"][receipt["purchase_order"]]
        for entry in receipt["lines"]:
            for line in order["lines"]:
                if line["line"] == entry["line"]:
                    line["received_quantity"] += entry["quantity"]
        complete = all(line["received_quantity"] == line["quantity"] for line in order["lines"])
        order["status"] = "received" if complete else "partially_received"
        order["updated_at"] = self._stamp()

    def periods(self) -> list[Period]:
        return [
            Period(row["code"], row["status"])
            for row in self.records["accounting-periods"].values()
        ]


# -- building each collection's record from what was sent (shared by create and PATCH) -------


def _vendor(erp: Erp, sent: Row) -> Row:
    return {
        "name": _string(sent, "name"),
        "tax_id": _string(sent, "tax_id"),
        "email": sent.get("email"),
        "currency": sent.get("currency") or "USD",
        "payment_terms": _choice(sent, "payment_terms", ("net15", "net30", "net60"), "net30"),
        "status": _choice(sent, "status", ("active", "inactive"), "active"),
    }


def _item(erp: Erp, sent: Row) -> Row:
    return {
        "sku": _string(sent, "sku"),
        "name": _string(sent, "name"),
        "unit_of_measure": _choice(sent, "unit_of_measure", ("each", "box", "hour", "kg"), "each"),
        "unit_price": money(_amount(sent.get("unit_price"), "unit_price")),
    }


def _priced_lines(erp: Erp, sent: Row, received: bool) -> tuple[list[Row], str]:
    lines = sent.get("lines")
    if not isinstance(lines, list):
        raise Refused(422, "invalid", "lines is a list of {item, quantity, unit_price?}", "lines")
    out: list[Row] = []
    for number, entry in enumerate(lines, start=1):
        where = f"lines[{number - 1}]"
        if not isinstance(entry, dict):
            raise Refused(422, "invalid", f"{where} is an object", where)
        item = erp.records["items"].get(str(entry.get("item")))
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


def _requisition(erp: Erp, sent: Row) -> Row:
    lines, total = _priced_lines(erp, sent, received=False)
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


def _order(erp: Erp, sent: Row) -> Row:
    lines, total = _priced_lines(erp, sent, received=True)
    order_date = sent.get("order_date") or erp.now.date().isoformat()
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


def _receipt(erp: Erp, sent: Row) -> Row:
    order = erp.records["purchase-orders"][sent["purchase_order"]]
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
            rules.period_open(erp.periods(), day, "receipt_date"),
            rules.receipt_within_order(_order_lines(order), received),
        ]
    )
    return {
        "purchase_order": order["id"],
        "receipt_date": day.isoformat(),
        "lines": [{"line": q.line, "quantity": int(q.quantity)} for q in received],
    }


def _invoice(erp: Erp, sent: Row) -> Row:
    order = erp.records["purchase-orders"][sent["purchase_order"]]
    day = _day(sent["invoice_date"], "invoice_date")
    invoiced = _received_lines(sent, priced=True)
    if order["vendor"] != sent["vendor"]:
        raise Refused(
            422, "vendor_mismatch", f"{order['id']} was ordered from {order['vendor']}", "vendor"
        )
    rules.check([rules.period_open(erp.periods(), day, "invoice_date")])
    exceptions = rules.three_way_match(_order_lines(order), invoiced)
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


def _period(erp: Erp, sent: Row) -> Row:
    code = _string(sent, "code")
    try:
        first = date.fromisoformat(f"{code}-01")
    except ValueError:
        raise Refused(422, "invalid", f"code {code!r} is a month, YYYY-MM", "code") from None
    if any(row["code"] == code for row in erp.records["accounting-periods"].values()):
        raise Refused(409, "duplicate", f"accounting period {code} exists", "code")
    following = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
    return {
        "code": code,
        "start_date": first.isoformat(),
        "end_date": (following - timedelta(days=1)).isoformat(),
        "status": "open",
        "closed_at": None,
    }


BUILDERS: Final[Mapping[str, Callable[[Erp, Row], Row]]] = {
    "vendors": _vendor,
    "items": _item,
    "purchase-requisitions": _requisition,
    "purchase-orders": _order,
    "goods-receipts": _receipt,
    "vendor-invoices": _invoice,
    "accounting-periods": _period,
}


# -- small readers of request values ---------------------------------------------------------


def _order_lines(order: Row) -> list[OrderLine]:
    return [
        OrderLine(
            line["line"],
            Decimal(line["quantity"]),
            Decimal(line["unit_price"]),
            Decimal(line.get("received_quantity", 0)),
        )
        for line in order["lines"]
    ]


def _object(request: Request) -> Row:
    if request.body.kind == "empty":
        return {}
    value = request.body.value
    if request.body.kind == "text":
        try:
            value = json.loads(str(value))
        except json.JSONDecodeError:
            raise Refused(400, "invalid_json", "the body is not JSON") from None
    if not isinstance(value, dict):
        raise Refused(400, "invalid_json", "the body is a JSON object")
    return value


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


def _count(value: str | None, name: str, default: int) -> int:
    if value is None:
        return default
    if not value.isdigit():
        raise Refused(422, "invalid", f"{name} is a whole number", name)
    return int(value)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
