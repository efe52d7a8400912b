"""Procure-to-pay business rules the service model cannot express, as small pure functions.

Each rule looks at plain values (amounts as `Decimal`, lines as small dataclasses) and yields
`Violation`s; `check` runs a table of them and raises the first as `Refused`. The reference
service (`instance.py`) calls them to write the corpus, and the ERP extension on the runtime's
extension mechanism adapts the same functions, so the rules live in exactly one place.

The rules, with the status and code each refusal answers (PROTOCOL.md lists them too):

- `approval_limit`: an approver may approve a purchase order or requisition only up to the
  limit of their role (403 `approval_limit_exceeded`; 422 `unknown_role`);
- `transition`: an action moves a document only from the states the action starts from
  (409 `invalid_transition`);
- `has_lines`: a purchase order is submitted with at least one line (422 `no_lines`);
- `receipt_within_order`: a goods receipt names lines of its order and never takes a line past
  its ordered quantity (422 `unknown_line`, 422 `invalid_quantity`, 409 `over_receipt`);
- `period_open`: receipts and invoices post into an existing, open accounting period
  (409 `period_closed`, 422 `no_period`);
- `three_way_match`: an invoice line matches when its quantity is at most the quantity received
  (no tolerance) and its unit price is within `PRICE_TOLERANCE` of the order's; an invoice that
  does not match is accepted but its payment is blocked (`payable`: 409 `payment_blocked`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Final

from myna.errors import MockError

CENTS: Final = Decimal("0.01")
PRICE_TOLERANCE: Final = Decimal("0.02")
"""Invoice unit prices may exceed the order's by at most 2%; quantities may not exceed receipts."""

APPROVAL_LIMITS: Final[Mapping[str, Decimal | None]] = {
    "buyer": Decimal("5000.00"),
    "manager": Decimal("25000.00"),
    "director": Decimal("100000.00"),
    "cfo": None,  # no limit
}
"""The most each approver role may approve; None is unlimited."""

PO_ACTIONS: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "submit": (("draft",), "submitted"),
    "approve": (("submitted",), "approved"),
    "reject": (("submitted",), "draft"),
    "send": (("approved",), "sent"),
    "close": (("received",), "closed"),
    "cancel": (("draft", "submitted", "approved"), "cancelled"),
}
"""Purchase order actions: the states each starts from, and the state it moves to."""

REQUISITION_ACTIONS: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "submit": (("draft",), "submitted"),
    "approve": (("submitted",), "approved"),
    "reject": (("submitted",), "rejected"),
}

PAYMENT_ACTIONS: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "schedule-payment": (("unpaid",), "scheduled"),
    "pay": (("scheduled",), "paid"),
}

PERIOD_ACTIONS: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "close": (("open",), "closed"),
    "reopen": (("closed",), "open"),
}


class Refused(MockError):
    """A request the service refuses: the HTTP status, a stable code and the field at fault."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.status = status
        self.code = code
        self.message = message
        self.field_name = field


@dataclass(frozen=True, slots=True)
class Violation:
    status: int
    code: str
    message: str
    field: str | None = None

    def refused(self) -> Refused:
        return Refused(self.status, self.code, self.message, self.field)


@dataclass(frozen=True, slots=True)
class OrderLine:
    line: int
    quantity: Decimal
    unit_price: Decimal
    received: Decimal = Decimal(0)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A receipt line or invoice line: which order line, how many, at what price (invoices)."""

    line: int
    quantity: Decimal
    unit_price: Decimal | None = None


@dataclass(frozen=True, slots=True)
class Period:
    code: str  # "2026-03"
    status: str  # "open" or "closed"

    def holds(self, day: date) -> bool:
        return self.code == f"{day.year:04d}-{day.month:02d}"


def money(value: Decimal) -> str:
    """Amounts travel as strings with two decimals: JSON numbers would lose cents."""
    return str(value.quantize(CENTS))


def approval_limit(total: Decimal, role: str) -> Iterator[Violation]:
    if role not in APPROVAL_LIMITS:
        known = ", ".join(APPROVAL_LIMITS)
        yield Violation(422, "unknown_role", f"role {role!r} is not one of: {known}", "role")
        return
    limit = APPROVAL_LIMITS[role]
    if limit is not None and total > limit:
        yield Violation(
            403,
            "approval_limit_exceeded",
            f"a {role} may approve up to {money(limit)}; this document totals {money(total)}",
            "role",
        )


def transition(
    actions: Mapping[str, tuple[tuple[str, ...], str]], action: str, status: str, field: str
) -> Iterator[Violation]:
    sources, _ = actions[action]
    if status not in sources:
        yield Violation(
            409,
            "invalid_transition",
            f"cannot {action} when {field} is {status!r}; it must be one of: {', '.join(sources)}",
            field,
        )


def has_lines(lines: Sequence[OrderLine]) -> Iterator[Violation]:
    if not lines:
        yield Violation(422, "no_lines", "a purchase order needs at least one line", "lines")


def receipt_within_order(
    ordered: Sequence[OrderLine], received: Sequence[Quantity]
) -> Iterator[Violation]:
    by_line = {line.line: line for line in ordered}
    taken: dict[int, Decimal] = {}
    if not received:
        yield Violation(422, "no_lines", "a goods receipt needs at least one line", "lines")
    for index, entry in enumerate(received):
        where = f"lines[{index}]"
        order_line = by_line.get(entry.line)
        if order_line is None:
            yield Violation(
                422, "unknown_line", f"the order has no line {entry.line}", f"{where}.line"
            )
            continue
        if entry.quantity <= 0:
            yield Violation(
                422, "invalid_quantity", "a received quantity is positive", f"{where}.quantity"
            )
            continue
        taken[entry.line] = taken.get(entry.line, Decimal(0)) + entry.quantity
        open_quantity = order_line.quantity - order_line.received
        if taken[entry.line] > open_quantity:
            yield Violation(
                409,
                "over_receipt",
                f"line {entry.line} ordered {order_line.quantity}, received "
                f"{order_line.received}; {taken[entry.line]} more exceeds the order",
                f"{where}.quantity",
            )


def period_open(periods: Iterable[Period], day: date, field: str) -> Iterator[Violation]:
    for period in periods:
        if period.holds(day):
            if period.status != "open":
                yield Violation(
                    409,
                    "period_closed",
                    f"accounting period {period.code} is closed; {day.isoformat()} cannot post",
                    field,
                )
            return
    yield Violation(422, "no_period", f"no accounting period holds {day.isoformat()}", field)


def three_way_match(ordered: Sequence[OrderLine], invoiced: Sequence[Quantity]) -> list[str]:
    """Why the invoice does not match its order and receipts; empty when it matches."""
    by_line = {line.line: line for line in ordered}
    reasons: list[str] = []
    for entry in invoiced:
        order_line = by_line.get(entry.line)
        if order_line is None:
            reasons.append(f"line {entry.line} is not on the order")
            continue
        if entry.quantity > order_line.received:
            reasons.append(
                f"line {entry.line} invoices {entry.quantity}, received {order_line.received}"
            )
        ceiling = order_line.unit_price * (1 + PRICE_TOLERANCE)
        if entry.unit_price is not None and entry.unit_price > ceiling:
            reasons.append(
                f"line {entry.line} price {money(entry.unit_price)} exceeds the order's "
                f"{money(order_line.unit_price)} by more than {PRICE_TOLERANCE:.0%}"
            )
    return reasons


def payable(payment_status: str, action: str) -> Iterator[Violation]:
    if payment_status == "blocked":
        yield Violation(
            409,
            "payment_blocked",
            "the invoice does not match its purchase order and receipts; payment is blocked",
            "payment_status",
        )
        return
    yield from transition(PAYMENT_ACTIONS, action, payment_status, "payment_status")


def check(rules: Iterable[Iterator[Violation]]) -> None:
    """Raise the first violation any of `rules` yields."""
    for rule in rules:
        for violation in rule:
            raise violation.refused()
