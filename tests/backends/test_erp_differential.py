"""The ERP reference service and the served mock answer the same calls the same way.

Both start from the same records: the reference service runs its whole corpus, and the mock
serves the reference world (the records that run leaves). Then the same random purchase-order
work (creates with and without lines, every action with any role, edits and deletes) goes to
both, and each answer's status, error code and field, or the order's status and total, must
agree. The rules are one implementation (`rules.py`, `documents.py`); this checks that the two
adapters around them (`instance.py`, `extension.py` on the runtime) do not tell them apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import as_file, files
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.backends import builtin_model
from myna.backends.erp.corpus import TOKEN, reference_service, write_chapters
from myna.backends.erp.instance import BASE, JSON_TYPE, Erp, Request
from myna.mocks import Mock
from myna.mocks.client import MockClient
from myna.mocks.seed import seed_from_files
from myna.mocks.sqlstore import SqlStore
from myna.traces.model import Body

VENDOR, ITEMS = "VEN-000002", ("ITM-000001", "ITM-000002", "ITM-000003")
ROLES = ("buyer", "manager", "director", "cfo", "intern")


@dataclass(frozen=True, slots=True)
class Pair:
    erp: Erp
    api: MockClient

    def reference(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        sent = Body() if body is None else Body("json", body, JSON_TYPE)
        reply = self.erp.handle(Request(method, f"{BASE}/{path}", [], sent, TOKEN))
        return reply.status, reply.body.value

    def served(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        response = self.api.request(method, f"{BASE}/{path}", json=body)
        return response.status, response.json() if response.body else None


def _outcome(status: int, body: Any) -> tuple[int, Any]:
    if status >= 400:
        return status, (body["error"]["code"], body["error"]["field"])
    if not isinstance(body, dict) or "status" not in body:
        return status, None
    return status, (body["status"], body.get("total"))


@pytest.fixture(scope="module")
def pair() -> Pair:
    erp = reference_service()
    write_chapters(erp)
    model = builtin_model("erp")
    store = SqlStore(model, "sqlite://")
    with as_file(files("myna.backends.erp").joinpath("reference_world")) as directory:
        snapshot = seed_from_files(model, store, directory)
    store.create_world("default", from_snapshot=snapshot)
    api = MockClient(
        Mock(model, store, seed=0), headers={"Authorization": "Bearer myna-token"}, world="default"
    )
    return Pair(erp, api)


lines = st.lists(
    st.fixed_dictionaries(
        {"item": st.sampled_from(ITEMS), "quantity": st.integers(min_value=1, max_value=90)}
    ),
    max_size=3,
)
actions: st.SearchStrategy[tuple[str, dict[str, str]]] = st.one_of(
    st.sampled_from(["submit", "reject", "send", "close", "cancel"]).map(lambda a: (a, {})),
    st.sampled_from(ROLES).map(lambda role: ("approve", {"role": role})),
)
steps = st.one_of(
    actions.map(lambda step: ("POST", step[0], step[1])),
    lines.map(lambda sent: ("PATCH", "", {"lines": sent})),
    st.just(("DELETE", "", None)),
)


@settings(max_examples=60, deadline=None)
@given(first=lines, work=st.lists(steps, min_size=1, max_size=6))
def test_random_purchase_order_work_gets_the_same_answer(
    pair: Pair, first: list[dict[str, Any]], work: list[tuple[str, str, Any]]
) -> None:
    sent = {"vendor": VENDOR, "lines": first}
    (status, mine), (served_status, theirs) = (
        pair.reference("POST", "purchase-orders", sent),
        pair.served("POST", "purchase-orders", sent),
    )
    assert (status, served_status) == (201, 201), theirs
    assert theirs["total"] == mine["total"]
    for method, action, body in work:
        suffix = f"/{action}" if action else ""
        reference = pair.reference(method, f"purchase-orders/{mine['id']}{suffix}", body)
        served = pair.served(method, f"purchase-orders/{theirs['id']}{suffix}", body)
        assert _outcome(*served) == _outcome(*reference), (method, action, body)
        if reference[0] == 204:
            break  # deleted: what follows is a 404 (test_a_deleted_order_is_not_found)


@pytest.mark.xfail(
    strict=True,
    reason="the runtime's 404 names no field ('') where the reference service names 'id' "
    "(the ERP extension has no `refusal` hook for the runtime's not_found)",
)
def test_a_deleted_order_is_not_found(pair: Pair) -> None:
    sent = {"vendor": VENDOR, "lines": []}
    mine = f"purchase-orders/{pair.reference('POST', 'purchase-orders', sent)[1]['id']}"
    theirs = f"purchase-orders/{pair.served('POST', 'purchase-orders', sent)[1]['id']}"
    assert (pair.reference("DELETE", mine)[0], pair.served("DELETE", theirs)[0]) == (204, 204)
    assert _outcome(*pair.served("GET", theirs)) == _outcome(*pair.reference("GET", mine))
