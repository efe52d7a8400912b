"""`myna record --upstream URL`: a recording reverse proxy in front of the real service.

Every request that reaches the proxy is forwarded to the upstream (the path and query appended to
its base URL), answered with the upstream's answer, and written to canonical JSONL through a
`Recorder` as it completes (filters, redaction and pseudonymisation as in `traces import`). The
proxy lives with the serving stage because it is a server like `myna serve`: it runs under the
same uvicorn settings, with the same `--tls` certificates towards its clients; it imports only
`myna.traces` for what it writes.

What passes through changes in three ways, each so that the recording holds what the service
meant: the request asks the upstream for an unencoded answer (no `Accept-Encoding`), so bodies
are recorded as text; hop-by-hop headers are not forwarded; and a redirect's `Location` on the
upstream's origin is rewritten onto the proxy's, so the client keeps talking through it. Answers
are read whole before they are passed on (a stream or server-sent events arrive at once).
An upstream that cannot be reached is answered with 502 and counted, not recorded.
"""

from __future__ import annotations

import base64
import json
import ssl
import time
from datetime import UTC, datetime
from itertools import count
from urllib.parse import parse_qsl, urlsplit

import httpx

from myna.errors import InputError
from myna.mocks.app import Receive, Scope, Send, read_body
from myna.mocks.rejection import Rejection
from myna.traces.model import Body, Exchange, Pairs
from myna.traces.recorded import parse_body
from myna.traces.recorder import Recorder

MAX_BODY_BYTES = 64 * 1024 * 1024
"""A request body past this is refused (413) rather than held in memory and forwarded."""

HOP_BY_HOP = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
        "trailer", "transfer-encoding", "upgrade", "host", "content-length",
    }
)  # fmt: skip
"""Headers that describe one connection, not the message: never forwarded either way."""
NOT_FORWARDED = HOP_BY_HOP | {"accept-encoding"}
DECODED = HOP_BY_HOP | {"content-encoding"}
"""The answer's body is passed on decoded, so its encoding and length headers no longer hold."""


def upstream_base(url: str) -> str:
    """The upstream's base URL, checked: `https://instance.example.com[/prefix]`."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            f"--upstream {url!r} is not an http(s) URL such as https://instance.example.com",
            field="--upstream",
        )
    if parts.query or parts.fragment:
        raise InputError(f"--upstream {url!r} must not carry a query", field="--upstream")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def upstream_tls(ca_file: str | None) -> ssl.SSLContext:
    """The system trust store, or only the CA in `ca_file` (a private instance's)."""
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as error:
        raise InputError(f"cannot load the CA file: {error}", file=ca_file) from None


class RecordingProxy:
    """A bare ASGI app: forwards each request to `upstream` and records the exchange."""

    def __init__(
        self, upstream: str, recorder: Recorder, *, verify: ssl.SSLContext | bool = True
    ) -> None:
        self.upstream = upstream_base(upstream)
        self.recorder = recorder
        self.verify = verify
        self.unreachable = 0
        self._numbers = count()
        self._client: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._forward(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._client = httpx.AsyncClient(verify=self.verify, timeout=60.0)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._client is not None:
                    await self._client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self._client is not None, "the proxy runs with lifespan on"
        body = await read_body(receive, MAX_BODY_BYTES)
        if isinstance(body, Rejection):
            await _answer(send, 413, [("content-type", "text/plain")], body.message)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        url = self.upstream + scope["path"] + (f"?{query}" if query else "")
        headers = _pairs(scope["headers"])
        started_at, started = datetime.now(UTC), time.perf_counter()
        try:
            answer = await self._client.request(
                scope["method"],
                url,
                headers=[(k, v) for k, v in headers if k.lower() not in NOT_FORWARDED],
                content=body,
            )
        except httpx.HTTPError as error:
            self.unreachable += 1
            message = {"error": f"myna record: the upstream did not answer: {error!r}"}
            await _answer(send, 502, [("content-type", "application/json")], json.dumps(message))
            return
        duration = (time.perf_counter() - started) * 1000
        answer_headers = [
            (name, self._local(name, value, scope))
            for name, value in answer.headers.multi_items()
            if name.lower() not in DECODED
        ]
        self.recorder.record(
            Exchange(
                id=f"{self.recorder.session.id}#{next(self._numbers)}",
                method=scope["method"],
                url=url,
                status=answer.status_code,
                query=parse_qsl(query, keep_blank_values=True),
                request_headers=[(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP],
                request_body=_body(body, _content_type(headers)),
                response_headers=list(answer_headers),
                response_body=_body(answer.content, answer.headers.get("content-type")),
                started_at=started_at,
                duration_ms=round(duration, 3),
            )
        )
        await _answer(send, answer.status_code, answer_headers, answer.content)

    def _local(self, name: str, value: str, scope: Scope) -> str:
        """A redirect onto the upstream's origin points back through the proxy instead."""
        if name.lower() != "location" or not value.startswith(self.upstream):
            return value
        host = dict(_pairs(scope["headers"])).get("host", "")
        return f"{scope.get('scheme', 'http')}://{host}{value[len(self.upstream) :]}"


async def _answer(send: Send, status: int, headers: Pairs, body: str | bytes) -> None:
    content = body.encode() if isinstance(body, str) else body
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    raw.append((b"content-length", str(len(content)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": content})


def _pairs(raw: list[tuple[bytes, bytes]]) -> Pairs:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]


def _content_type(headers: Pairs) -> str | None:
    return next((value for name, value in headers if name.lower() == "content-type"), None)


def _body(content: bytes, mime_type: str | None) -> Body:
    """A body as a reader would have it: JSON parsed, text as text, other bytes as base64."""
    if not content:
        return Body(mime_type=mime_type)
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return parse_body(base64.b64encode(content).decode("ascii"), mime_type, "base64")[0]
    return parse_body(text, mime_type, None)[0]
