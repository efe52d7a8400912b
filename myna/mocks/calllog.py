"""Every call a world answered, kept in a bounded ring and exported as canonical traces.

Logging stores references to the request and response (no copies, no conversion) so it stays off
the hot path; conversion to `myna.traces.model.Exchange` happens on export. Credentials are
replaced with `[REDACTED]` on the way out, as the trace readers do, so an exported log can be
shared and learned from again.
"""

from __future__ import annotations

import base64
import threading
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

import orjson

from myna.mocks.messages import MockRequest, MockResponse
from myna.traces.model import Body, Exchange, Session

REDACTED = "[REDACTED]"
_SECRET_HEADERS = frozenset(
    {"authorization", "cookie", "set-cookie", "x-api-key", "x-myna-admin-token"}
)
DEFAULT_CAPACITY = 10_000


@dataclass(frozen=True, slots=True)
class Call:
    started_at: float  # POSIX seconds
    duration_ms: float
    request: MockRequest
    response: MockResponse


class CallLog:
    """The most recent `capacity` calls of one world, oldest first."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._calls: deque[Call] = deque(maxlen=capacity)
        self._lock = threading.Lock()

    def record(self, call: Call) -> None:
        # Freeze the body now: the in-process client hands the payload to the caller, who may
        # mutate it afterwards.
        _ = call.response.body
        with self._lock:
            self._calls.append(call)

    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()

    def __len__(self) -> int:
        return len(self._calls)


def to_session(world: str, calls: list[Call]) -> Session:
    """The calls as one canonical trace session (one `Exchange` per call)."""
    exchanges = [_exchange(f"{world}-{index}", call) for index, call in enumerate(calls)]
    return Session(
        id=world,
        events=list(exchanges),
        source="myna-mock",
        metadata={"world": world},
    )


def _exchange(exchange_id: str, call: Call) -> Exchange:
    request, response = call.request, call.response
    query = f"?{urlencode(request.query)}" if request.query else ""
    return Exchange(
        id=exchange_id,
        method=request.method,
        url=f"{request.base_url}{request.path}{query}",
        status=response.status,
        query=list(request.query),
        request_headers=[(name, _redact(name, value)) for name, value in request.headers.items()],
        request_body=_body(request.body, request.headers.get("content-type")),
        response_headers=[(name, _redact(name, value)) for name, value in response.headers],
        response_body=_body(response.body, response.header("content-type")),
        started_at=datetime.fromtimestamp(call.started_at, tz=UTC),
        duration_ms=call.duration_ms,
    )


def _redact(name: str, value: str) -> str:
    return REDACTED if name.lower() in _SECRET_HEADERS else value


def _body(raw: bytes, mime_type: str | None) -> Body:
    if not raw:
        return Body("empty", None, mime_type)
    try:
        return Body("json", orjson.loads(raw), mime_type)
    except orjson.JSONDecodeError:
        pass
    try:
        return Body("text", raw.decode("utf-8"), mime_type)
    except UnicodeDecodeError:
        return Body("base64", base64.b64encode(raw).decode("ascii"), mime_type)


def session_jsonl(session: Session) -> bytes:
    """The session as canonical trace JSONL (`myna/traces/trace.schema.json`): a header line,
    then one line per exchange."""
    header = {
        "type": "session",
        "version": 1,
        "id": session.id,
        "source": session.source,
        "metadata": session.metadata,
    }
    lines = [orjson.dumps(header)]
    for exchange in session.exchanges:
        lines.append(orjson.dumps(_exchange_line(session.id, exchange)))
    return b"\n".join(lines) + b"\n"


def _exchange_line(session_id: str, exchange: Exchange) -> dict[str, object]:
    return {
        "type": "exchange",
        "session": session_id,
        "id": exchange.id,
        "started_at": exchange.started_at.isoformat() if exchange.started_at else None,
        "method": exchange.method,
        "url": exchange.url,
        "status": exchange.status,
        "query": [list(pair) for pair in exchange.query],
        "request_headers": [list(pair) for pair in exchange.request_headers],
        "request_body": _body_json(exchange.request_body),
        "response_headers": [list(pair) for pair in exchange.response_headers],
        "response_body": _body_json(exchange.response_body),
        "duration_ms": exchange.duration_ms,
    }


def _body_json(body: Body) -> dict[str, object]:
    out: dict[str, object] = {"kind": body.kind, "mime_type": body.mime_type}
    if body.kind != "empty":
        out["value"] = body.value
    return out
