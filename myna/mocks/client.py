"""The in-process client: `Mock.handle` with an httpx-like surface and no sockets.

Requests go through exactly the same dispatcher as HTTP ones (routing, worlds, auth, validation,
faults, call log), so a fast RL loop and an agent over HTTP see the same service. Injected latency
is honoured with `time.sleep`, as a slow network would be.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from typing import Any

import orjson

from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.runtime import Mock

QueryParams = Mapping[str, Any] | list[tuple[str, Any]]


class MockClient:
    """Call a `Mock` like an HTTP API: `client.get("/api/now/table/incident", params=...)`.

    `headers` are sent with every request (credentials, `X-Myna-World`); `auth=(user, password)`
    adds Basic credentials. `world` scopes every call to that world (the `/worlds/{id}` prefix).
    """

    def __init__(
        self,
        mock: Mock,
        *,
        headers: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        world: str | None = None,
        base_url: str = "http://localhost",
    ) -> None:
        self.mock = mock
        self.base_url = base_url.rstrip("/")
        self.world = world
        self._headers = {name.lower(): value for name, value in (headers or {}).items()}
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
            self._headers["authorization"] = f"Basic {token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | None = None,
        params: QueryParams | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> MockResponse:
        merged = dict(self._headers)
        if headers:
            merged.update((name.lower(), value) for name, value in headers.items())
        body = b""
        if content is not None:
            body = content
        elif json is not None:
            body = orjson.dumps(json)
            merged.setdefault("content-type", "application/json")
        if self.world is not None:
            path = f"/worlds/{self.world}{path}"
        request = MockRequest(
            method=method.upper(),
            path=path,
            query=_pairs(params),
            headers=merged,
            body=body,
            base_url=self.base_url,
        )
        response = self.mock.handle(request)
        if response.delay > 0:
            time.sleep(response.delay)
        return response

    def get(self, path: str, **kwargs: Any) -> MockResponse:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> MockResponse:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> MockResponse:
        return self.request("PUT", path, **kwargs)

    def patch(self, path: str, **kwargs: Any) -> MockResponse:
        return self.request("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> MockResponse:
        return self.request("DELETE", path, **kwargs)


def _pairs(params: QueryParams | None) -> list[tuple[str, str]]:
    if not params:
        return []
    items = params.items() if isinstance(params, Mapping) else params
    return [(str(name), _text(value)) for name, value in items]


def _text(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)
