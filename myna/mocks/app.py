"""The HTTP shell: `MockAsgi`, a bare ASGI callable around `Mock.handle`, and `create_app`, the
same callable mounted at the root of a FastAPI app for embedding in a larger one.

Routing, auth, validation and rendering all live in the dispatcher, so this file only turns the
ASGI scope and body into a `MockRequest` and the `MockResponse` back into ASGI messages. It skips
Starlette's Request/Response objects and FastAPI's dependency solving on purpose: they would
double the cost of a request whose real work takes tens of microseconds. `myna serve` hands
uvicorn `MockAsgi` itself (`serve.server_for`): every route, including `/openapi.json` (the
service as modelled) and the admin API, is the dispatcher's, so the FastAPI app adds nothing
there but its middleware stack and mount (~20 us a request). FastAPI's generated OpenAPI and
docs are off."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.rejection import Rejection
from myna.mocks.runtime import Mock
from myna.mocks.validation import ResponseContractError

__all__ = ["MockAsgi", "create_app"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def create_app(mock: Mock, *, threadpool: bool = False) -> FastAPI:
    """The mock as a FastAPI app.

    By default the dispatcher runs on the event loop: with embedded SQLite a request is tens of
    microseconds of CPU, less than a thread hop costs. Pass `threadpool=True` when the store
    waits on a network database (PostgreSQL), so one slow query does not stall other requests.
    """
    app = FastAPI(
        title=mock.model.title or mock.model.name,
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.mock = mock
    app.mount("/", MockAsgi(mock, threadpool=threadpool))
    return app


class MockAsgi:
    """A bare ASGI application around `Mock.handle`."""

    def __init__(self, mock: Mock, *, threadpool: bool = False) -> None:
        self.mock = mock
        self.threadpool = threadpool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan and websockets: nothing to do
        request = _request(scope, await read_body(receive, self.mock.max_body_bytes))
        if isinstance(request, Rejection):
            response = self.mock.error_response(request)
        else:
            try:
                if self.threadpool:
                    response = await run_in_threadpool(self.mock.handle, request)
                else:
                    response = self.mock.handle(request)
            except ResponseContractError as broken:
                # Strict mode caught the mock breaking its own model: a server error, said so.
                payload = {"error": {"kind": broken.kind, "message": str(broken)}}
                response = MockResponse(
                    500, [("Content-Type", "application/json")], payload=payload
                )
        if response.delay > 0:
            await asyncio.sleep(response.delay)
        await _send(send, response)


def _request(scope: Scope, body: bytes | Rejection) -> MockRequest | Rejection:
    if isinstance(body, Rejection):
        return body
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    query_string: bytes = scope.get("query_string", b"")
    host = headers.get("host") or _server_host(scope)
    # A mount at "/" leaves root_path empty; the full path is what the service's paths match.
    return MockRequest(
        method=scope["method"],
        path=scope["path"],
        query=_query(query_string),
        headers=headers,
        body=body,
        base_url=f"{scope.get('scheme', 'http')}://{host}",
    )


def _query(raw: bytes) -> list[tuple[str, str]]:
    if not raw:
        return []
    from urllib.parse import parse_qsl

    return parse_qsl(raw.decode("latin-1"), keep_blank_values=True)


def _server_host(scope: Scope) -> str:
    server = scope.get("server")
    if not server:
        return "localhost"
    host, port = server
    return f"{host}:{port}"


async def read_body(receive: Receive, limit: int) -> bytes | Rejection:
    """The whole request body; past `limit` the rest is drained and the request refused (413)."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        more = message.get("more_body", False)
    if size > limit:
        return Rejection(413, f"request body is over the limit of {limit} bytes")
    return b"".join(chunks)


async def _send(send: Send, response: MockResponse) -> None:
    body = response.body
    headers = [(name.lower().encode("latin-1"), _header(value)) for name, value in response.headers]
    headers.append((b"content-length", str(len(body)).encode("ascii")))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _header(value: str) -> bytes:
    """A header value as bytes: Latin-1 as HTTP has it, or UTF-8 for a value that echoes what
    a client sent beyond it (a Link header carrying a query with an emoji)."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")
