"""The Service Catalog API's order now: `POST /api/sn_sc/servicecatalog/items/{sys_id}/order_now`
(PROTOCOL.md §8).

    {"sysparm_quantity": "1", "variables": {"operating_system": "Windows 11"},
     "sysparm_requested_for": "<sys_user sys_id>"}
    -> 200 {"result": {"sys_id": "<request>", "number": "REQ0010002",
                       "request_number": "REQ0010002", "request_id": "<request>",
                       "table": "sc_request"}}

An order is made of Table API calls (served by the runtime in the caller's world with the
caller's credential): it reads the catalog item and its variables, refuses an order that leaves
a mandatory variable unanswered (`rules.missing_variables`), then creates the request and its
requested item (`rules.ordered_records`), each through the tables' own rules. The item's
request is its parent, as for any item created under a request. Nothing is decided twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import orjson

from myna.backends.itsm.rules import Variable, missing_variables, ordered_records
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.rejection import Rejection

if TYPE_CHECKING:
    from myna.mocks.extensions import RouteCall

_JSON: Final = ("Content-Type", "application/json;charset=UTF-8")
_TABLE: Final = "/api/now/table"
# The outer request's headers an inner Table API call keeps: who calls, and in which world.
_PASSED: Final = ("authorization", "x-myna-world")
ORDER_NOW: Final = "/api/sn_sc/servicecatalog/items/{sys_id}/order_now"


def order_now(call: RouteCall) -> MockResponse:
    sent = _order(call.request)
    quantity = _quantity(sent.get("sysparm_quantity", 1))
    answers = sent.get("variables") or {}
    if not isinstance(answers, dict):
        raise _unreadable("variables is not an object")
    item = _one(call, "GET", f"{_TABLE}/sc_cat_item/{quote(call.params['sys_id'])}")
    verdict = missing_variables(_variables(call, stored_text(item["sys_id"])), answers)
    if verdict is not None:
        raise Rejection(verdict.status, verdict.message, detail=verdict.detail)
    requested_for = stored_text(sent.get("sysparm_requested_for")) or _caller(call)
    request, line = ordered_records(
        {name: stored_text(value) for name, value in item.items()}, quantity, requested_for
    )
    created = _one(call, "POST", f"{_TABLE}/sc_request", body=request)
    request_id = stored_text(created["sys_id"])
    try:
        _one(call, "POST", f"{_TABLE}/sc_req_item", body={**line, "request": request_id})
    except Rejection:
        # The order is one act: a request without its item is taken back.
        call.serve(_inner(call, "DELETE", f"{_TABLE}/sc_request/{request_id}"))
        raise
    number = stored_text(created["number"])
    result = {
        "sys_id": request_id,
        "number": number,
        "request_number": number,
        "request_id": request_id,
        "table": "sc_request",
    }
    return MockResponse(200, [_JSON], payload={"result": result})


def _order(request: MockRequest) -> dict[str, Any]:
    if not request.body.strip():
        return {}
    try:
        sent = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        raise _unreadable("The payload is not valid JSON.") from None
    if not isinstance(sent, dict):
        raise _unreadable("The payload is not a JSON object.")
    return sent


def _quantity(value: Any) -> int:
    try:
        quantity = int(str(value))
    except ValueError:
        quantity = 0
    if quantity < 1:
        raise Rejection(
            400,
            "Invalid quantity",
            detail=f"sysparm_quantity must be a whole number from 1, not {value!r}",
        )
    return quantity


def _variables(call: RouteCall, item_id: str) -> list[Variable]:
    query = [("sysparm_query", f"cat_item={item_id}^active=true^ORDERBYorder")]
    found = _many(call, f"{_TABLE}/item_option_new", query)
    return [
        Variable(
            stored_text(found_one.get("name")),
            stored_text(found_one.get("question_text")),
            stored_text(found_one.get("mandatory")) == "true",
        )
        for found_one in found
    ]


def _caller(call: RouteCall) -> str:
    """The caller's sys_user id, for whom an order is made unless it names someone."""
    query = [("sysparm_query", f"user_name={call.user()}"), ("sysparm_limit", "1")]
    users = _many(call, f"{_TABLE}/sys_user", query)
    return stored_text(users[0].get("sys_id")) if users else ""


def _inner(
    call: RouteCall,
    method: str,
    path: str,
    query: list[tuple[str, str]] | None = None,
    body: Mapping[str, Any] | None = None,
) -> MockRequest:
    headers = {name: value for name, value in call.request.headers.items() if name in _PASSED}
    if body is not None:
        headers["content-type"] = "application/json"
    # Bare values: references come back as plain sys_ids.
    flat = [("sysparm_exclude_reference_link", "true"), *(query or [])]
    return MockRequest(
        method=method,
        path=path,
        query=flat,
        headers=headers,
        body=orjson.dumps(body) if body is not None else b"",
        base_url=call.request.base_url,
    )


def _answer(call: RouteCall, request: MockRequest) -> Any:
    """The result of one inner call; a refusal is raised as the Table API worded it."""
    response = call.serve(request)
    payload = orjson.loads(response.body) if response.body else {}
    if response.status >= 400:
        error = payload.get("error") or {} if isinstance(payload, dict) else {}
        raise Rejection(
            response.status, str(error.get("message") or ""), detail=error.get("detail")
        )
    return payload["result"]


def _one(
    call: RouteCall, method: str, path: str, body: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    found: dict[str, Any] = _answer(call, _inner(call, method, path, body=body))
    return found


def _many(call: RouteCall, path: str, query: list[tuple[str, str]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = _answer(call, _inner(call, "GET", path, query))
    return found


def _unreadable(detail: str) -> Rejection:
    return Rejection(400, "Exception while reading request", detail=detail)


def stored_text(value: Any) -> str:
    """A stored value as the Table API's text (a record may hold it typed)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
