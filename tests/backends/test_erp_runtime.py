"""`myna.mocks` serving the ERP back end: a seeded world that is internally consistent, and
every procure-to-pay rule accepted and refused through the runtime (model plus the `erp`
extension), with the documented status, code and field."""

from __future__ import annotations

from decimal import Decimal
from importlib.resources import as_file, files
from typing import Any

import pytest

from myna.backends import builtin_model
from myna.backends.erp.rules import PRICE_TOLERANCE, OrderLine, Quantity, three_way_match
from myna.backends.erp.world import seed_files
from myna.mocks import Mock
from myna.mocks.client import MockClient
from myna.mocks.seed import seed, seed_from_files
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import ServiceModel

API = "/api/erp/v1"
TOKEN = {"Authorization": "Bearer myna-token"}
Json = dict[str, Any]


@pytest.fixture(scope="module")
def model() -> ServiceModel:
    return builtin_model("erp")


@pytest.fixture
def erp(model: ServiceModel) -> MockClient:
    """The runtime over the shipped reference world, loaded as `myna serve erp --seed-dir` does
    (every record checked against the model's schemas)."""
    store = SqlStore(model, "sqlite://")
    with as_file(files("myna.backends.erp").joinpath("reference_world")) as directory:
        snapshot = seed_from_files(model, store, directory)
    store.create_world("default", from_snapshot=snapshot)
    return MockClient(Mock(model, store, seed=0), headers=TOKEN, world="default")


def test_the_shipped_reference_world_is_what_the_reference_service_leaves() -> None:
    shipped = files("myna.backends.erp").joinpath("reference_world")
    for name, text in seed_files().items():
        assert shipped.joinpath(name).read_text(encoding="utf-8") == text, (
            "regenerate: python -m myna.backends.erp.world -o myna/backends/erp/reference_world"
        )


def call(client: MockClient, method: str, path: str, body: Any = None) -> tuple[int, Json]:
    response = client.request(method, f"{API}/{path}", json=body)
    return response.status, response.json() if response.body else {}


def refused(answer: tuple[int, Json]) -> tuple[int, str, str | None]:
    status, body = answer
    return status, body["error"]["code"], body["error"]["field"] or None


def every(client: MockClient, collection: str, **filters: str) -> list[Json]:
    query = [(name, value) for name, value in filters.items()] + [("limit", "200")]
    response = client.request("GET", f"{API}/{collection}", params=query)
    assert response.status == 200, response.json()
    data: list[Json] = response.json()["data"]
    return data


def vendor_and_item(client: MockClient, sku: str = "CONSULT-H") -> tuple[str, str]:
    (vendor, *_) = every(client, "vendors", name="Fabrikam Industrial")
    (item,) = every(client, "items", sku=sku)
    return vendor["id"], item["id"]


def order(client: MockClient, quantity: int, *, sku: str = "CONSULT-H", to: str = "") -> Json:
    """A new order for `quantity` of `sku`, moved through the actions in `to`."""
    vendor, item = vendor_and_item(client, sku)
    status, created = call(
        client,
        "POST",
        "purchase-orders",
        {"vendor": vendor, "lines": [{"item": item, "quantity": quantity}]},
    )
    assert status == 201, created
    steps = {"submit": {}, "approve": {"role": "cfo"}, "send": {}}
    for action in to.split():
        status, created = call(
            client, "POST", f"purchase-orders/{created['id']}/{action}", steps[action]
        )
        assert status == 200, created
    return created


# -- the seeded world ---------------------------------------------------------------------------


def test_every_order_totals_its_lines_and_never_receives_more_than_it_ordered(
    erp: MockClient,
) -> None:
    orders = every(erp, "purchase-orders")
    assert {o["status"] for o in orders} >= {"draft", "approved", "received", "closed", "cancelled"}
    for placed in orders:
        lines = placed["lines"]
        assert all(
            Decimal(line["amount"]) == Decimal(line["unit_price"]) * line["quantity"]
            for line in lines
        )
        assert Decimal(placed["total"]) == sum(
            (Decimal(line["amount"]) for line in lines), Decimal(0)
        )
        assert all(0 <= line["received_quantity"] <= line["quantity"] for line in lines)
        if placed["status"] in ("received", "closed"):
            assert all(line["received_quantity"] == line["quantity"] for line in lines)


def test_every_receipt_sums_to_its_order_s_received_quantities(erp: MockClient) -> None:
    for placed in every(erp, "purchase-orders"):
        receipts = every(erp, "goods-receipts", purchase_order=placed["id"])
        for line in placed["lines"]:
            posted = sum(
                e["quantity"] for r in receipts for e in r["lines"] if e["line"] == line["line"]
            )
            assert posted == line["received_quantity"], (placed["id"], line["line"])


def test_every_invoice_s_payment_status_follows_its_three_way_match(erp: MockClient) -> None:
    invoices = every(erp, "vendor-invoices")
    assert {i["payment_status"] for i in invoices} == {"paid", "scheduled", "blocked", "unpaid"}
    for invoice in invoices:
        placed = call(erp, "GET", f"purchase-orders/{invoice['purchase_order']}")[1]
        assert placed["vendor"] == invoice["vendor"]
        ordered = [
            OrderLine(
                line["line"],
                Decimal(line["quantity"]),
                Decimal(line["unit_price"]),
                Decimal(line["received_quantity"]),
            )
            for line in placed["lines"]
        ]
        billed = [
            Quantity(line["line"], Decimal(line["quantity"]), Decimal(line["unit_price"]))
            for line in invoice["lines"]
        ]
        exceptions = three_way_match(ordered, billed)
        assert invoice["match_exceptions"] == exceptions
        assert (invoice["payment_status"] == "blocked") is bool(exceptions)


def test_a_generated_seed_serves_every_collection_with_references_that_resolve(
    model: ServiceModel,
) -> None:
    store = SqlStore(model, "sqlite://")
    store.create_world("default", from_snapshot=seed(model, store, seed=0, records=5))
    client = MockClient(Mock(model, store, seed=0), headers=TOKEN, world="default")
    for collection in (
        "vendors",
        "items",
        "purchase-requisitions",
        "purchase-orders",
        "goods-receipts",
        "vendor-invoices",
        "accounting-periods",
    ):
        assert len(every(client, collection)) == 5, collection
    for placed in every(client, "purchase-orders"):
        assert call(client, "GET", f"vendors/{placed['vendor']}")[0] == 200


def test_a_call_without_a_token_gets_the_documented_401(model: ServiceModel) -> None:
    store = SqlStore(model, "sqlite://")
    store.create_world("default")
    response = MockClient(Mock(model, store), world="default").get(f"{API}/vendors")
    assert response.status == 401
    assert response.header("WWW-Authenticate") == 'Bearer realm="erp"'
    assert response.json() == {
        "error": {
            "code": "unauthorized",
            "message": "a valid bearer token is required",
            "field": None,
        }
    }


# -- each rule, accepted and refused ------------------------------------------------------------


def test_a_new_order_derives_its_line_numbers_amounts_and_total(erp: MockClient) -> None:
    placed = order(erp, 3, sku="DOCK-USB4")
    assert placed["status"] == "draft"
    assert placed["lines"] == [
        {
            "line": 1,
            "item": placed["lines"][0]["item"],
            "description": "USB4 docking station",
            "quantity": 3,
            "unit_price": "215.00",
            "amount": "645.00",
            "received_quantity": 0,
        }
    ]
    assert placed["total"] == "645.00"


@pytest.mark.parametrize(
    ("hours", "below", "at_limit"),
    [
        (30, None, "buyer"),
        (120, "buyer", "manager"),
        (600, "manager", "director"),
        (1000, "director", "cfo"),
    ],
    ids=["4500-buyer", "18000-manager", "90000-director", "150000-cfo"],
)
def test_an_approver_approves_only_up_to_their_role_s_limit(
    erp: MockClient, hours: int, below: str | None, at_limit: str
) -> None:
    placed = order(erp, hours, to="submit")
    path = f"purchase-orders/{placed['id']}/approve"
    if below is not None:
        assert refused(call(erp, "POST", path, {"role": below})) == (
            403,
            "approval_limit_exceeded",
            "role",
        )
    status, approved = call(erp, "POST", path, {"role": at_limit})
    assert (status, approved["status"], approved["approved_by_role"]) == (200, "approved", at_limit)
    assert approved["approved_at"] is not None


def test_an_unknown_role_and_a_missing_role_are_refused(erp: MockClient) -> None:
    placed = order(erp, 1, to="submit")
    path = f"purchase-orders/{placed['id']}/approve"
    assert refused(call(erp, "POST", path, {"role": "intern"})) == (422, "unknown_role", "role")
    assert refused(call(erp, "POST", path, {})) == (422, "required", "role")


def test_an_order_moves_only_along_its_life_cycle(erp: MockClient) -> None:
    placed = order(erp, 1)
    path = f"purchase-orders/{placed['id']}"
    assert refused(call(erp, "POST", f"{path}/send", {})) == (409, "invalid_transition", "status")
    assert refused(call(erp, "POST", f"{path}/approve", {"role": "cfo"})) == (
        409,
        "invalid_transition",
        "status",
    )
    for action, body, after in (
        ("submit", {}, "submitted"),
        ("reject", {}, "draft"),
        ("submit", {}, "submitted"),
        ("approve", {"role": "cfo"}, "approved"),
        ("send", {}, "sent"),
    ):
        assert call(erp, "POST", f"{path}/{action}", body)[1]["status"] == after
    assert refused(call(erp, "POST", f"{path}/cancel", {})) == (409, "invalid_transition", "status")
    assert refused(call(erp, "POST", f"{path}/close", {})) == (409, "invalid_transition", "status")


def test_an_order_is_submitted_only_with_lines(erp: MockClient) -> None:
    vendor, _ = vendor_and_item(erp)
    _, empty = call(erp, "POST", "purchase-orders", {"vendor": vendor, "lines": []})
    assert refused(call(erp, "POST", f"purchase-orders/{empty['id']}/submit", {})) == (
        422,
        "no_lines",
        "lines",
    )
    assert call(erp, "POST", f"purchase-orders/{order(erp, 1)['id']}/submit", {})[0] == 200


def receive(
    client: MockClient, placed: Json, quantity: int, day: str = "2026-03-20", line: int = 1
) -> tuple[int, Json]:
    body = {
        "purchase_order": placed["id"],
        "receipt_date": day,
        "lines": [{"line": line, "quantity": quantity}],
    }
    return call(client, "POST", "goods-receipts", body)


def test_receipts_never_exceed_the_ordered_quantity_and_move_the_order(erp: MockClient) -> None:
    placed = order(erp, 10, sku="PALLET-WR", to="submit approve send")
    assert refused(receive(erp, placed, 11)) == (409, "over_receipt", "lines[0].quantity")
    assert receive(erp, placed, 6)[0] == 201
    after = call(erp, "GET", f"purchase-orders/{placed['id']}")[1]
    assert (after["status"], after["lines"][0]["received_quantity"]) == ("partially_received", 6)
    assert refused(receive(erp, placed, 5)) == (409, "over_receipt", "lines[0].quantity")
    assert refused(receive(erp, placed, 1, line=2)) == (422, "unknown_line", "lines[0].line")
    assert refused(receive(erp, placed, 0)) == (422, "invalid_quantity", "lines[0].quantity")
    assert receive(erp, placed, 4)[0] == 201
    assert call(erp, "GET", f"purchase-orders/{placed['id']}")[1]["status"] == "received"
    assert refused(receive(erp, placed, 1)) == (409, "invalid_transition", "purchase_order")
    assert call(erp, "POST", f"purchase-orders/{placed['id']}/close", {})[1]["status"] == "closed"


def test_an_order_not_yet_sent_cannot_be_received(erp: MockClient) -> None:
    placed = order(erp, 2, sku="PALLET-WR", to="submit approve")
    assert refused(receive(erp, placed, 1)) == (409, "invalid_transition", "purchase_order")


def test_nothing_posts_into_a_closed_period_or_outside_every_period(erp: MockClient) -> None:
    (february,) = every(erp, "accounting-periods", code="2026-02")
    assert february["status"] == "closed"
    placed = order(erp, 4, sku="PALLET-WR", to="submit approve send")
    assert refused(receive(erp, placed, 1, day="2026-02-10")) == (
        409,
        "period_closed",
        "receipt_date",
    )
    assert refused(receive(erp, placed, 1, day="2025-11-10")) == (422, "no_period", "receipt_date")
    assert (
        call(erp, "POST", f"accounting-periods/{february['id']}/reopen", {})[1]["status"] == "open"
    )
    assert receive(erp, placed, 1, day="2026-02-10")[0] == 201
    status, closed = call(erp, "POST", f"accounting-periods/{february['id']}/close", {})
    assert (status, closed["status"]) == (200, "closed")
    assert closed["closed_at"] is not None


def invoice(
    client: MockClient, placed: Json, quantity: int, price: str, day: str = "2026-03-21"
) -> tuple[int, Json]:
    body = {
        "vendor": placed["vendor"],
        "purchase_order": placed["id"],
        "vendor_invoice_number": f"V-{price}",
        "invoice_date": day,
        "lines": [{"line": 1, "quantity": quantity, "unit_price": price}],
    }
    return call(client, "POST", "vendor-invoices", body)


def test_a_matched_invoice_is_scheduled_and_paid(erp: MockClient) -> None:
    placed = order(erp, 10, sku="PALLET-WR", to="submit approve send")
    receive(erp, placed, 10)
    within = str((Decimal("18.75") * (1 + PRICE_TOLERANCE)).quantize(Decimal("0.01")))
    status, billed = invoice(erp, placed, 10, within)
    assert (status, billed["match_status"], billed["payment_status"], billed["total"]) == (
        201,
        "matched",
        "unpaid",
        "191.20",
    )
    path = f"vendor-invoices/{billed['id']}"
    assert refused(call(erp, "POST", f"{path}/pay", {})) == (
        409,
        "invalid_transition",
        "payment_status",
    )
    assert call(erp, "POST", f"{path}/schedule-payment", {})[1]["payment_status"] == "scheduled"
    status, paid = call(erp, "POST", f"{path}/pay", {})
    assert (status, paid["payment_status"]) == (200, "paid")
    assert paid["paid_at"] is not None


@pytest.mark.parametrize(
    ("quantity", "price", "exception"),
    [
        (10, "19.13", "exceeds the order's 18.75 by more than 2%"),
        (11, "18.75", "invoices 11, received 10"),
    ],
    ids=["price-over-tolerance", "quantity-over-received"],
)
def test_an_unmatched_invoice_is_accepted_but_blocked_from_payment(
    erp: MockClient, quantity: int, price: str, exception: str
) -> None:
    placed = order(erp, 10, sku="PALLET-WR", to="submit approve send")
    receive(erp, placed, 10)
    status, billed = invoice(erp, placed, quantity, price)
    assert (status, billed["match_status"], billed["payment_status"]) == (
        201,
        "unmatched",
        "blocked",
    )
    assert exception in billed["match_exceptions"][0]
    for action in ("schedule-payment", "pay"):
        answer = call(erp, "POST", f"vendor-invoices/{billed['id']}/{action}", {})
        assert refused(answer) == (409, "payment_blocked", "payment_status")


def test_an_invoice_from_another_vendor_or_in_a_closed_period_is_refused(erp: MockClient) -> None:
    placed = order(erp, 1, sku="PALLET-WR", to="submit approve send")
    receive(erp, placed, 1)
    (other, *_) = every(erp, "vendors", name="Contoso Office Supply")
    assert refused(invoice(erp, {**placed, "vendor": other["id"]}, 1, "18.75")) == (
        422,
        "vendor_mismatch",
        "vendor",
    )
    assert refused(invoice(erp, placed, 1, "18.75", day="2026-02-27")) == (
        409,
        "period_closed",
        "invoice_date",
    )


def test_only_a_draft_changes_and_derived_fields_are_never_sent(erp: MockClient) -> None:
    placed = order(erp, 1, sku="PAPER-A4")
    path = f"purchase-orders/{placed['id']}"
    _, item = vendor_and_item(erp, "PAPER-A4")
    status, changed = call(erp, "PATCH", path, {"lines": [{"item": item, "quantity": 4}]})
    assert (status, changed["total"]) == (200, "99.60")
    assert refused(call(erp, "PATCH", path, {"total": "1.00"})) == (422, "read_only", "total")
    vendor, _ = vendor_and_item(erp)
    created = call(
        erp, "POST", "purchase-orders", {"vendor": vendor, "status": "approved", "lines": []}
    )
    assert refused(created) == (422, "read_only", "status")
    call(erp, "POST", f"{path}/submit", {})
    assert refused(call(erp, "PATCH", path, {"currency": "EUR"})) == (409, "not_editable", "status")
    assert refused(call(erp, "DELETE", path)) == (409, "not_deletable", "status")


def test_a_draft_and_an_unused_vendor_are_deleted_but_a_vendor_in_use_is_not(
    erp: MockClient,
) -> None:
    placed = order(erp, 1)
    assert erp.request("DELETE", f"{API}/purchase-orders/{placed['id']}").status == 204
    assert refused(call(erp, "DELETE", f"vendors/{placed['vendor']}")) == (409, "in_use", "id")
    _, spare = call(erp, "POST", "vendors", {"name": "Spare Parts Co", "tax_id": "US-00-0000001"})
    assert erp.request("DELETE", f"{API}/vendors/{spare['id']}").status == 204
