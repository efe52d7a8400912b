"""The web console: static pages under `/_myna/admin/console/` and their API, before the mock.

`ConsoleAsgi` wraps the mock's ASGI app and answers the console's paths itself; every other
request goes to the mock unchanged. The pages (HTML, JavaScript, CSS: no data, no secret) load
without a credential; the page asks for the admin token (or reads it from the URL fragment, which
browsers never send) and sends it as a bearer token on every API call, to the console's API here
and to the admin API, which it uses as it is for worlds (list, fork, reset, snapshot, diff).

    GET  api/model                    the model page's data (facts weakest first)
    POST api/facts                    {"address", "pinned"?, "roles"?}: pin, unpin or edit a
                                      fact, written back to the model file
    GET  api/worlds/{world}/events    the world's calls as server-sent events, as they happen
    GET  api/results                  benchmark results and episodes under --results
    GET  api/results/{name}           one of them

Server-sent events are read with `fetch` (not `EventSource`, which cannot send a header), so the
token never appears in a URL.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from myna.errors import ModelError
from myna.mocks.admin import ADMIN_PREFIX
from myna.mocks.app import Receive, Scope, Send, read_body
from myna.mocks.auth import admin_allowed
from myna.mocks.console.views import call_view, model_view, result_file, result_files
from myna.mocks.rejection import Rejection
from myna.mocks.runtime import Mock
from myna.schemas import facts
from myna.schemas.openapi import save

App = Callable[[Scope, Receive, Send], Awaitable[None]]
MAX_EDIT_BYTES = 64 * 1024

CONSOLE_PREFIX = f"{ADMIN_PREFIX}/console"
RECENT_CALLS = 50
"""Calls a new watcher is sent first, before the ones that arrive while it watches."""
POLL_SECONDS = 0.1
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css"}
_EVENTS = re.compile(r"^api/worlds/([A-Za-z0-9][A-Za-z0-9._-]{0,63})/events$")
_RESULT = re.compile(r"^api/results/(.+)$")


class _FactEdit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    address: str
    pinned: bool | None = None
    roles: dict[str, bool] | None = None


class ConsoleAsgi:
    """The console in front of `app` (the mock's ASGI app)."""

    def __init__(
        self,
        app: App,
        mock: Mock,
        *,
        model_file: Path | None = None,
        results: Path | None = None,
    ) -> None:
        self.app = app
        self.mock = mock
        self.model_file = model_file
        self.results = results
        self._lock = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(CONSOLE_PREFIX):
            await self.app(scope, receive, send)
            return
        inner = path[len(CONSOLE_PREFIX) :].lstrip("/")
        if not inner.startswith("api/"):
            await _static(inner or "index.html", send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not admin_allowed(headers, self.mock.admin_token):
            await _json(send, 401, _error("unauthorized", "the console needs the admin token"))
            return
        await self._api(scope["method"], inner, receive, send)

    async def _api(self, method: str, inner: str, receive: Receive, send: Send) -> None:
        if (method, inner) == ("GET", "api/model"):
            await _json(send, 200, model_view(self.mock.model, editable=self._editable))
        elif (method, inner) == ("POST", "api/facts"):
            body = await read_body(receive, MAX_EDIT_BYTES)
            if isinstance(body, Rejection):
                await _json(send, 413, _error("too_large", body.message))
            else:
                await self._edit_fact(body, send)
        elif method == "GET" and (match := _EVENTS.match(inner)):
            await self._events(match.group(1), receive, send)
        elif (method, inner) == ("GET", "api/results"):
            await _json(send, 200, {"files": result_files(self.results)})
        elif method == "GET" and (match := _RESULT.match(inner)):
            found = result_file(self.results, match.group(1))
            if found is None:
                await _json(send, 404, _error("not_found", f"no result file {match.group(1)!r}"))
            else:
                await _json(send, 200, found)
        else:
            await _json(send, 404, _error("not_found", f"no console route {method} {inner}"))

    @property
    def _editable(self) -> bool:
        return self.model_file is not None

    async def _edit_fact(self, body: bytes, send: Send) -> None:
        try:
            edit = _FactEdit.model_validate_json(body or b"{}")
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            await _json(send, 400, _error("invalid_request", f"{where}: {first['msg']}"))
            return
        if edit.pinned is None and not edit.roles:
            message = "nothing to change: give pinned, roles or both"
            await _json(send, 400, _error("invalid_request", message))
            return
        if self.model_file is None:
            message = "this mock serves a built-in model: there is no model file to write to"
            await _json(send, 409, _error("not_editable", message))
            return
        try:
            async with self._lock:
                # Writing a large model takes a while: off the event loop, so calls go on.
                view = await asyncio.to_thread(self._apply, edit)
        except ModelError as error:
            await _json(send, 400, _error("invalid_request", error.message))
            return
        await _json(send, 200, view)

    def _apply(self, edit: _FactEdit) -> dict[str, Any]:
        assert self.model_file is not None
        model = self.mock.model
        if edit.roles:
            facts.set_field_roles(model, edit.address, edit.roles)
        if edit.pinned is not None:
            facts.pin(model, edit.address, edit.pinned)
        save(model, self.model_file)
        return model_view(model, editable=True)

    async def _events(self, world: str, receive: Receive, send: Send) -> None:
        if not self.mock.world_exists(world):
            await _json(send, 404, _error("not_found", f"world {world!r} does not exist"))
            return
        log = self.mock.call_log(world)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        cursor = max(0, log.recorded - RECENT_CALLS)
        disconnected = asyncio.ensure_future(_disconnect(receive))
        try:
            await send({"type": "http.response.body", "body": b": watching\n\n", "more_body": True})
            while not disconnected.done():
                calls, cursor = log.since(cursor)
                for offset, call in enumerate(calls):
                    event = json.dumps(call_view(cursor - len(calls) + offset + 1, call))
                    chunk = f"event: call\ndata: {event}\n\n".encode()
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await asyncio.wait({disconnected}, timeout=POLL_SECONDS)
        finally:
            disconnected.cancel()


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _static(name: str, send: Send) -> None:
    folder = resources.files("myna.mocks.console").joinpath("static")
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        await _json(send, 404, _error("not_found", f"no console file {name!r}"))
        return
    target = folder.joinpath(*parts)
    suffix = Path(name).suffix
    if suffix not in _TYPES or not target.is_file():
        await _json(send, 404, _error("not_found", f"no console file {name!r}"))
        return
    await _answer(send, 200, _TYPES[suffix], target.read_bytes())


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message}}


async def _json(send: Send, status: int, payload: Any) -> None:
    await _answer(send, status, "application/json", json.dumps(payload).encode())


async def _answer(send: Send, status: int, content_type: str, body: bytes) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
