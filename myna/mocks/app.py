"""The HTTP shell: a FastAPI app whose one catch-all route hands every request to `Mock.handle`.

Routing, auth, validation and rendering all live in the dispatcher, so this file only translates
Starlette's request into a `MockRequest` and the `MockResponse` back. FastAPI's own generated
OpenAPI and docs are off: `/openapi.json` is the service as modelled, served by the dispatcher.
"""

from __future__ import annotations

import asyncio

from fastapi import FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool

from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.runtime import Mock

__all__ = ["create_app"]

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def create_app(mock: Mock, *, threadpool: bool = False) -> FastAPI:
    """The mock as an ASGI app.

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

    @app.api_route("/{path:path}", methods=_METHODS, include_in_schema=False)
    async def serve(request: Request) -> Response:
        scope = request.scope
        mock_request = MockRequest(
            method=request.method,
            path=scope["path"],
            query=request.query_params.multi_items(),
            headers={
                name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
            },
            body=await request.body(),
            base_url=str(request.base_url).rstrip("/"),
        )
        if threadpool:
            response = await run_in_threadpool(mock.handle, mock_request)
        else:
            response = mock.handle(mock_request)
        if response.delay > 0:
            await asyncio.sleep(response.delay)
        return _starlette(response)

    return app


def _starlette(response: MockResponse) -> Response:
    out = Response(content=response.body, status_code=response.status)
    for name, value in response.headers:
        out.headers.append(name, value)
    return out
