"""The built-in ERP back end: its corpus and model are reproducible, the model conforms to its
own corpus as far as the generic runtime can, and `myna.mocks` serves it over a seeded world in
which the pinned life cycles hold. Rules that need the ERP extension are strict xfails naming it.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from myna.mocks import Mock
from myna.mocks.backends import BACKENDS, builtin_model
from myna.mocks.backends.erp.corpus import CHAPTERS, build_corpus
from myna.mocks.backends.erp.rules import (
    PAYMENT_ACTIONS,
    PERIOD_ACTIONS,
    PO_ACTIONS,
    REQUISITION_ACTIONS,
)
from myna.mocks.client import MockClient
from myna.mocks.seed import seed
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import ServiceModel
from myna.schemas.openapi import dumps
from myna.traces.jsonl import write_jsonl
from myna.traces.model import Session
from myna.traces.reading import read

PACKAGE = files("myna.mocks.backends.erp")
API = "/api/erp/v1"
TOKEN = {"Authorization": "Bearer myna-token"}


@pytest.fixture(scope="module")
def shipped() -> ServiceModel:
    return builtin_model("erp")


@pytest.fixture(scope="module")
def corpus() -> list[Session]:
    return build_corpus()


# -- reproducibility ----------------------------------------------------------------------------


def test_regenerating_the_corpus_reproduces_the_shipped_file_byte_for_byte(
    corpus: list[Session], tmp_path: Path
) -> None:
    written = tmp_path / "corpus.jsonl"
    write_jsonl(corpus, written)
    assert written.read_bytes() == PACKAGE.joinpath("corpus.jsonl").read_bytes(), (
        "regenerate: python -m myna.mocks.backends.erp.corpus "
        "-o myna/mocks/backends/erp/corpus.jsonl"
    )


def test_learning_the_corpus_into_the_overlay_reproduces_the_shipped_model() -> None:
    assert dumps(BACKENDS["erp"].learn()) == PACKAGE.joinpath("model.yaml").read_text(
        encoding="utf-8"
    ), (
        "regenerate: myna learn myna/mocks/backends/erp/corpus.jsonl --service erp "
        "--update myna/mocks/backends/erp/overlay.yaml -o myna/mocks/backends/erp/model.yaml"
    )


def test_every_chapter_is_a_session_with_its_task(corpus: list[Session]) -> None:
    assert [session.task for session in corpus] == [chapter.task for chapter in CHAPTERS]
    assert len(list(read(Path(str(PACKAGE.joinpath("corpus.jsonl")))))) == len(CHAPTERS)


def test_every_rule_is_refused_somewhere_in_the_corpus(corpus: list[Session]) -> None:
    refused = {
        exchange.response_body.value["error"]["code"]
        for session in corpus
        for exchange in session.exchanges
        if exchange.status >= 400
    }
    assert {
        "approval_limit_exceeded",
        "unknown_role",
        "invalid_transition",
        "no_lines",
        "over_receipt",
        "unknown_line",
        "invalid_quantity",
        "period_closed",
        "no_period",
        "payment_blocked",
        "unauthorized",
    } <= refused


# -- the shipped model --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "field", "table"),
    [
        ("purchase-order", "status", PO_ACTIONS),
        ("purchase-requisition", "status", REQUISITION_ACTIONS),
        ("vendor-invoice", "payment_status", PAYMENT_ACTIONS),
        ("accounting-period", "status", PERIOD_ACTIONS),
    ],
)
def test_the_pinned_life_cycles_are_the_rule_tables(
    shipped: ServiceModel,
    resource: str,
    field: str,
    table: dict[str, tuple[tuple[str, ...], str]],
) -> None:
    (machine,) = [m for m in shipped.resources[resource].state_machines if m.field == field]
    accepted = {(t.source, t.target) for t in machine.transitions if t.operation}
    assert accepted == {(s, target) for sources, target in table.values() for s in sources}
    for action, (_, target) in table.items():
        effects = shipped.operation(f"{action}_{resource}").effects
        assert (effects[0].field, effects[0].value) == (field, target)
    assert all(refused.status == 409 for refused in machine.refused)


def test_the_conventions_are_the_documented_ones(shipped: ServiceModel) -> None:
    conventions = shipped.conventions
    assert (conventions.envelope.list_key, conventions.envelope.total_key) == ("data", "total")
    assert (conventions.pagination.limit_param, conventions.pagination.max_limit) == ("limit", 200)
    assert conventions.auth.scheme == "bearer"
    assert conventions.auth.unauthorized_headers == {"WWW-Authenticate": 'Bearer realm="erp"'}
    shape = shipped.error_shape(409)
    assert shape is not None
    assert shape.template == {
        "error": {"code": "{code}", "message": "{message}", "field": "{field}"}
    }


# -- conformance --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def conformance(corpus: list[Session]) -> tuple[float, list[str]]:
    from myna.mocks.conformance import run_conformance

    # The chapters run against one service and later ones use earlier records, so they replay
    # as one session in one world.
    whole = Session(id="erp", events=[event for session in corpus for event in session.events])
    report = run_conformance(builtin_model("erp"), [whole])
    return report.share, [mismatch.reason for mismatch in report.mismatches]


# Fields the reference service derives (line amounts and totals, a period's dates, an invoice's
# match exceptions); the generic runtime cannot, so answers without them are explained.
DERIVED = ("total", "match_exceptions", "start_date", "end_date")


def test_every_mismatch_is_a_derived_field_or_a_rule_the_runtime_lacks(
    conformance: tuple[float, list[str]],
) -> None:
    share, reasons = conformance
    unexplained = [
        reason
        for reason in reasons
        if not reason.startswith("status ")
        and not any(f"'{name}' is a required property" in reason for name in DERIVED)
    ]
    assert unexplained == []
    # Measured: 0.36 of 136 exchanges; the rest needs the ERP extension (below).
    assert share >= 0.35


@pytest.mark.xfail(
    strict=True,
    reason="needs the ERP extension on myna/mocks/extensions.py (not committed yet): "
    "before_write on create to derive line amounts, totals, received quantities and match "
    "status and to refuse by rules.py; a hook on actions (Mock._action calls no write hook) for "
    "approval limits and payment blocks; and defaults of null for nullable fields a create "
    "does not send (approved_at, closed_at, paid_at)",
)
def test_the_shipped_back_end_answers_95_percent_of_its_own_corpus(
    conformance: tuple[float, list[str]],
) -> None:
    assert conformance[0] >= 0.95


# -- served by myna.mocks -----------------------------------------------------------------------


@pytest.fixture
def client(shipped: ServiceModel) -> MockClient:
    store = SqlStore(shipped, "sqlite://")
    snapshot = seed(shipped, store, seed=0, records=5)
    store.create_world("default", from_snapshot=snapshot)
    return MockClient(Mock(shipped, store, seed=0), headers=TOKEN, world="default")


def call(client: MockClient, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    response = client.request(method, f"{API}/{path}", json=body)
    return response.status, response.json() if response.body else None


def test_the_seeded_world_lists_every_collection_with_resolving_references(
    client: MockClient, shipped: ServiceModel
) -> None:
    for resource in shipped.resources.values():
        if resource.collection_path is None or resource.name == "line":
            continue
        status, page = call(client, "GET", resource.collection_path.removeprefix(API + "/"))
        assert status == 200, resource.name
        assert page["total"] == len(page["data"]) == 5
    _, orders = call(client, "GET", "purchase-orders")
    for order in orders["data"]:
        assert call(client, "GET", f"vendors/{order['vendor']}")[0] == 200
        assert order["status"] in shipped.resources["purchase-order"].state_machines[0].states


def test_a_call_without_a_token_gets_the_documented_401(shipped: ServiceModel) -> None:
    store = SqlStore(shipped, "sqlite://")
    store.create_world("default")
    response = MockClient(Mock(shipped, store), world="default").get(f"{API}/vendors")
    assert response.status == 401
    assert response.header("WWW-Authenticate") == 'Bearer realm="erp"'
    assert response.json()["error"]["code"] == "unauthorized"


def new_order(client: MockClient) -> str:
    _, vendors = call(client, "GET", "vendors")
    _, items = call(client, "GET", "items")
    status, order = call(
        client,
        "POST",
        "purchase-orders",
        {
            "vendor": vendors["data"][0]["id"],
            "lines": [{"item": items["data"][0]["id"], "quantity": 2}],
        },
    )
    assert status == 201, order
    assert order["status"] == "draft"
    return str(order["id"])


def test_an_order_moves_through_its_life_cycle_and_refuses_skipped_steps(
    client: MockClient,
) -> None:
    order = new_order(client)
    status, body = call(client, "POST", f"purchase-orders/{order}/send", {})
    assert (status, body["error"]["field"]) == (409, "status")
    assert call(client, "POST", f"purchase-orders/{order}/submit", {})[1]["status"] == "submitted"
    status, approved = call(client, "POST", f"purchase-orders/{order}/approve", {"role": "cfo"})
    assert (status, approved["status"], approved["approved_by_role"]) == (200, "approved", "cfo")
    assert call(client, "POST", f"purchase-orders/{order}/send", {})[1]["status"] == "sent"
    assert call(client, "POST", f"purchase-orders/{order}/close", {})[0] == 409


@pytest.mark.xfail(
    strict=True,
    reason="approval limits need a hook on actions: Mock._action (myna/mocks/runtime.py) calls "
    "no before_write, so an ERP extension cannot refuse a buyer approving above 5000.00",
)
def test_a_buyer_cannot_approve_above_their_limit_through_the_runtime(client: MockClient) -> None:
    order = new_order(client)
    call(client, "PATCH", f"purchase-orders/{order}", {"total": "9000.00"})
    call(client, "POST", f"purchase-orders/{order}/submit", {})
    assert call(client, "POST", f"purchase-orders/{order}/approve", {"role": "buyer"})[0] == 403


@pytest.mark.xfail(
    strict=True,
    reason="receipts within the order need the ERP extension's before_write on goods-receipt "
    "create (myna/mocks/backends/erp/extension.py, waiting on myna/mocks/extensions.py)",
)
def test_a_receipt_past_the_ordered_quantity_is_refused_through_the_runtime(
    client: MockClient,
) -> None:
    order = new_order(client)
    for action, body in (("submit", {}), ("approve", {"role": "cfo"}), ("send", {})):
        call(client, "POST", f"purchase-orders/{order}/{action}", body)
    receipt = {
        "purchase_order": order,
        "receipt_date": "2026-03-05",
        "lines": [{"line": 1, "quantity": 3}],
    }
    assert call(client, "POST", "goods-receipts", receipt)[0] == 409


@pytest.mark.xfail(
    strict=True,
    reason="blocking payment of an unmatched invoice needs the ERP extension's before_write on "
    "vendor-invoice create to run rules.three_way_match and set payment_status",
)
def test_an_invoice_over_tolerance_is_blocked_through_the_runtime(client: MockClient) -> None:
    order = new_order(client)
    _, placed = call(client, "GET", f"purchase-orders/{order}")
    invoice = {
        "vendor": placed["vendor"],
        "purchase_order": order,
        "vendor_invoice_number": "X-1",
        "invoice_date": "2026-03-05",
        "lines": [{"line": 1, "quantity": 2, "unit_price": "999999.00"}],
    }
    status, body = call(client, "POST", "vendor-invoices", invoice)
    assert (status, body["payment_status"]) == (201, "blocked")
