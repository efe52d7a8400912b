"""Every call a world answered, kept in a bounded ring and exported as canonical traces.

Logging freezes each call into bytes and tuples (the response body is serialised anyway) and
converts to `myna.traces.model.Exchange` only on export, so it stays off the hot path and out of
the garbage collector's way. Credentials are
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

from myna.mocks.messages import MockRequest, MockResponse, Refusal
from myna.traces.jsonl import event_line, session_line
from myna.traces.model import Body, Exchange, Session

REDACTED = "[REDACTED]"
_SECRET_HEADERS = frozenset(
    {"authorization", "cookie", "set-cookie", "x-api-key", "x-myna-admin-token"}
)
# Per world: thousands of live worlds each keeping their last thousand calls stay within memory.
DEFAULT_CAPACITY = 1_000


@dataclass(frozen=True, slots=True)
class Call:
    """One answered call, frozen into bytes, strings and tuples: nothing the garbage collector
    has to traverse, so a full log does not slow every collection down."""

    started_at: float  # POSIX seconds
    duration_ms: float
    method: str
    url: str
    query: tuple[tuple[str, str], ...]
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes
    status: int
    response_headers: tuple[tuple[str, str], ...]
    response_body: bytes
    refusal: Refusal | None = None

    @classmethod
    def of(
        cls, request: MockRequest, response: MockResponse, started_at: float, duration_ms: float
    ) -> Call:
        query = f"?{urlencode(request.query)}" if request.query else ""
        return cls(
            started_at=started_at,
            duration_ms=duration_ms,
            method=request.method,
            url=f"{request.base_url}{request.path}{query}",
            query=tuple(request.query),
            request_headers=tuple(request.headers.items()),
            request_body=request.body,
            status=response.status,
            response_headers=tuple(response.headers),
            # Serialised now: the in-process client hands the payload to the caller, who may
            # change it afterwards.
            response_body=response.body,
            refusal=response.refusal,
        )


class CallLog:
    """The most recent `capacity` calls of one world, oldest first."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._calls: deque[Call] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self.recorded = 0
        """Calls recorded since the log began (a clear does not reset it): a watcher's cursor."""

    def record(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)
            self.recorded += 1

    def since(self, cursor: int) -> tuple[list[Call], int]:
        """The calls recorded after `cursor` that the log still holds, and the new cursor."""
        with self._lock:
            held = min(len(self._calls), self.recorded - cursor)
            return list(self._calls)[len(self._calls) - held :] if held > 0 else [], self.recorded

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
    return Exchange(
        id=exchange_id,
        method=call.method,
        url=call.url,
        status=call.status,
        query=list(call.query),
        request_headers=[(name, _redact(name, value)) for name, value in call.request_headers],
        request_body=_body(call.request_body, _header(call.request_headers, "content-type")),
        response_headers=[(name, _redact(name, value)) for name, value in call.response_headers],
        response_body=_body(call.response_body, _header(call.response_headers, "content-type")),
        started_at=datetime.fromtimestamp(call.started_at, tz=UTC),
        duration_ms=call.duration_ms,
    )


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    return next((value for key, value in headers if key.lower() == name), None)


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
    """The session as canonical trace JSONL (`myna/traces/trace.schema.json`), written by the
    trace stage's own line builders: a header line, then one line per exchange."""
    lines = [orjson.dumps(session_line(session))]
    lines.extend(orjson.dumps(event_line(event, session.id)) for event in session.events)
    return b"\n".join(lines) + b"\n"
