"""`myna serve` hands uvicorn the bare ASGI callable, not the FastAPI app: every route a client
used through the FastAPI app answers the same through the served one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from starlette.testclient import TestClient

from myna.mocks.app import create_app
from myna.mocks.serve import serving
from tests.mocks.conftest import ADMIN_TOKEN, ALICE, TABLE, USER, build_mock

INCIDENTS = f"{TABLE}/incident"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
# Headers the dispatcher sets; uvicorn adds date and server, the test client does not.
COMPARED = ("content-type", "location", "x-total-count", "link", "allow", "www-authenticate")

Send = Callable[..., Any]  # httpx's and the test client's request methods


def _session(send: Send) -> list[tuple[int, dict[str, str], object]]:
    """A client's day: the service's API, its document, worlds and the admin API, mistakes too."""
    created = send("POST", INCIDENTS, json={"short_description": "disk full", "caller_id": ALICE})
    record_id = created.json()["result"]["sys_id"]
    answers = [
        created,
        send("GET", f"{INCIDENTS}/{record_id}"),
        send("PATCH", f"{INCIDENTS}/{record_id}", json={"state": "2"}),
        send("GET", INCIDENTS, params={"sysparm_limit": "1", "sysparm_query": "active=true"}),
        send("GET", "/openapi.json"),
        send("POST", "/_myna/admin/worlds", json={"id": "blue"}, headers=ADMIN),
        send("POST", f"/worlds/blue{INCIDENTS}", json={"short_description": "blue only"}),
        send("GET", INCIDENTS, headers={"X-Myna-World": "blue"}),
        send("GET", "/_myna/admin/worlds", headers=ADMIN),
        send("GET", "/_myna/admin/worlds", auth=USER),
        send("GET", f"/worlds/nowhere{INCIDENTS}"),
        send("GET", "/no/such/path"),
        send("PUT", INCIDENTS, json={}),
        send("POST", INCIDENTS, content=b"{broken", headers={"content-type": "application/json"}),
        send("DELETE", f"{INCIDENTS}/{record_id}"),
        send("GET", f"{INCIDENTS}/{record_id}"),
    ]
    return [
        (
            answer.status_code,
            {name: answer.headers[name] for name in COMPARED if name in answer.headers},
            _without_store_clock(answer.json()) if answer.content else None,
        )
        for answer in answers
    ]


def test_the_served_app_answers_every_route_as_the_fastapi_app_does() -> None:
    with serving(build_mock()) as running, httpx.Client(base_url=running.base_url) as http:
        served = _session(lambda method, url, **kw: http.request(method, url, **_auth(kw)))
    with TestClient(create_app(build_mock()), base_url=running.base_url) as fastapi:
        embedded = _session(lambda method, url, **kw: fastapi.request(method, url, **_auth(kw)))

    assert [status for status, _, _ in served] == [
        201, 200, 200, 200, 200, 201, 201, 200, 200, 401, 404, 404, 405, 400, 204, 404,
    ]  # fmt: skip
    assert served == embedded


def _without_store_clock(value: object) -> object:
    """The store stamps worlds with the wall clock (`created_at`), the one value two runs differ
    in."""
    if isinstance(value, dict):
        return {k: _without_store_clock(v) for k, v in value.items() if k != "created_at"}
    if isinstance(value, list):
        return [_without_store_clock(item) for item in value]
    return value


def _auth(options: dict[str, Any]) -> dict[str, Any]:
    """The service's credential unless the call brings the admin token or its own."""
    if "auth" in options or "Authorization" in options.get("headers", {}):
        return options
    return {"auth": USER, **options}
