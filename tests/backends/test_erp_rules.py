"""The procure-to-pay rules as pure functions: each one accepts and refuses."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.backends.erp.rules import (
    PO_ACTIONS,
    OrderLine,
    Period,
    Quantity,
    Refused,
    approval_limit,
    check,
    has_lines,
    payable,
    period_open,
    receipt_within_order,
    three_way_match,
    transition,
)

ORDER = [
    OrderLine(1, Decimal(10), Decimal("100.00"), received=Decimal(4)),
    OrderLine(2, Decimal(5), Decimal("20.00")),
]


def codes(violations: object) -> list[str]:
    return [violation.code for violation in violations]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("total", "role", "expected"),
    [
        ("5000.00", "buyer", []),
        ("5000.01", "buyer", ["approval_limit_exceeded"]),
        ("25000.00", "manager", []),
        ("25000.01", "manager", ["approval_limit_exceeded"]),
        ("100000.00", "director", []),
        ("100000.01", "director", ["approval_limit_exceeded"]),
        ("9999999.99", "cfo", []),
        ("1.00", "intern", ["unknown_role"]),
    ],
    ids=lambda value: str(value),
)
def test_an_approver_approves_up_to_the_limit_of_their_role(
    total: str, role: str, expected: list[str]
) -> None:
    assert codes(approval_limit(Decimal(total), role)) == expected


@pytest.mark.parametrize(
    ("action", "status", "expected"),
    [
        ("submit", "draft", []),
        ("submit", "submitted", ["invalid_transition"]),
        ("approve", "submitted", []),
        ("approve", "draft", ["invalid_transition"]),
        ("send", "approved", []),
        ("send", "sent", ["invalid_transition"]),
        ("close", "received", []),
        ("close", "partially_received", ["invalid_transition"]),
    ],
)
def test_an_action_moves_an_order_only_from_its_source_states(
    action: str, status: str, expected: list[str]
) -> None:
    assert codes(transition(PO_ACTIONS, action, status, "status")) == expected


def test_an_order_is_submitted_with_at_least_one_line() -> None:
    assert codes(has_lines(ORDER)) == []
    assert codes(has_lines([])) == ["no_lines"]


@pytest.mark.parametrize(
    ("received", "expected"),
    [
        ([Quantity(1, Decimal(6)), Quantity(2, Decimal(5))], []),
        ([Quantity(1, Decimal(7))], ["over_receipt"]),
        ([Quantity(1, Decimal(3)), Quantity(1, Decimal(4))], ["over_receipt"]),
        ([Quantity(3, Decimal(1))], ["unknown_line"]),
        ([Quantity(2, Decimal(0))], ["invalid_quantity"]),
        ([], ["no_lines"]),
    ],
    ids=[
        "exactly-the-rest",
        "one-too-many",
        "two-lines-together-too-many",
        "no-such-line",
        "zero",
        "empty",
    ],
)
def test_a_receipt_never_takes_a_line_past_its_ordered_quantity(
    received: list[Quantity], expected: list[str]
) -> None:
    assert codes(receipt_within_order(ORDER, received)) == expected


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2026, 3, 31), []),
        (date(2026, 2, 1), ["period_closed"]),
        (date(2025, 12, 31), ["no_period"]),
    ],
    ids=["open", "closed", "none"],
)
def test_postings_go_into_an_existing_open_period(day: date, expected: list[str]) -> None:
    periods = [Period("2026-02", "closed"), Period("2026-03", "open")]
    assert codes(period_open(periods, day, "receipt_date")) == expected


@pytest.mark.parametrize(
    ("invoiced", "matches"),
    [
        (Quantity(1, Decimal(4), Decimal("100.00")), True),
        (Quantity(1, Decimal(4), Decimal("102.00")), True),  # exactly 2% over
        (Quantity(1, Decimal(4), Decimal("102.01")), False),
        (Quantity(1, Decimal(5), Decimal("100.00")), False),  # one more than received
        (Quantity(2, Decimal(1), Decimal("20.00")), False),  # nothing received yet
        (Quantity(9, Decimal(1), Decimal("1.00")), False),
    ],
    ids=[
        "exact",
        "price-at-tolerance",
        "price-over-tolerance",
        "quantity-over-received",
        "unreceived-line",
        "unknown-line",
    ],
)
def test_three_way_matching_allows_2_percent_on_price_and_nothing_on_quantity(
    invoiced: Quantity, matches: bool
) -> None:
    assert (three_way_match(ORDER, [invoiced]) == []) is matches


@pytest.mark.parametrize(
    ("status", "action", "expected"),
    [
        ("unpaid", "schedule-payment", []),
        ("scheduled", "pay", []),
        ("blocked", "schedule-payment", ["payment_blocked"]),
        ("blocked", "pay", ["payment_blocked"]),
        ("unpaid", "pay", ["invalid_transition"]),
        ("paid", "pay", ["invalid_transition"]),
    ],
)
def test_only_a_matched_invoice_is_scheduled_then_paid(
    status: str, action: str, expected: list[str]
) -> None:
    assert codes(payable(status, action)) == expected


def test_check_raises_the_first_violation_with_its_status_code_and_field() -> None:
    with pytest.raises(Refused, match=r"a buyer may approve up to 5000\.00") as raised:
        check([has_lines(ORDER), approval_limit(Decimal("6000"), "buyer")])
    assert (raised.value.status, raised.value.code, raised.value.field_name) == (
        403,
        "approval_limit_exceeded",
        "role",
    )
    check([has_lines(ORDER), approval_limit(Decimal("6000"), "manager")])


prices = st.decimals(min_value="0.01", max_value="99999.99", places=2)


@given(
    ordered=st.integers(1, 500),
    received=st.integers(0, 500),
    invoiced=st.integers(1, 600),
    price=prices,
    billed=prices,
)
def test_an_invoice_line_matches_exactly_when_within_receipts_and_price_tolerance(
    ordered: int, received: int, invoiced: int, price: Decimal, billed: Decimal
) -> None:
    order = [OrderLine(1, Decimal(ordered), price, Decimal(min(received, ordered)))]
    matched = three_way_match(order, [Quantity(1, Decimal(invoiced), billed)]) == []
    assert matched is (invoiced <= min(received, ordered) and billed <= price * Decimal("1.02"))


@given(ordered=st.integers(1, 500), received=st.integers(0, 500), more=st.integers(1, 600))
def test_a_receipt_is_refused_exactly_when_it_would_pass_the_ordered_quantity(
    ordered: int, received: int, more: int
) -> None:
    already = Decimal(min(received, ordered))
    order = [OrderLine(1, Decimal(ordered), Decimal("1.00"), already)]
    refusals = codes(receipt_within_order(order, [Quantity(1, Decimal(more))]))
    assert (refusals == ["over_receipt"]) is (already + more > ordered)
    assert refusals in ([], ["over_receipt"])
