"""The request and response the mock's dispatcher speaks, independent of any HTTP server.

The FastAPI shell and the in-process client both translate to and from these, so both get exactly
the same semantics. A response keeps the Python value it rendered and serialises it on first
access to `body`: the in-process client then skips a JSON round trip, and the HTTP shell pays for
one `orjson.dumps`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

Pairs = list[tuple[str, str]]


@dataclass(slots=True)
class MockRequest:
    """One HTTP request. Header names are lower case; `query` keeps order and repeats."""

    method: str
    path: str
    query: Pairs = field(default_factory=list)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    base_url: str = "http://localhost"

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


_UNSET: Any = object()


class Refusal(NamedTuple):
    """Why the mock refused a request: the check (or error code) that did, and its words."""

    check: str
    message: str
    fields: tuple[str, ...] = ()


class MockResponse:
    """One HTTP response: status, headers (ordered pairs) and a JSON (or empty) body."""

    __slots__ = ("_body", "_payload", "delay", "headers", "refusal", "status")

    def __init__(
        self,
        status: int,
        headers: Pairs | None = None,
        *,
        payload: Any = _UNSET,
        body: bytes | None = None,
        delay: float = 0.0,
        refusal: Refusal | None = None,
    ) -> None:
        self.status = status
        self.headers: Pairs = headers if headers is not None else []
        self._payload = payload
        self._body = body
        # Seconds the shell waits before answering (injected latency); the dispatcher never sleeps.
        self.delay = delay
        self.refusal = refusal

    @property
    def has_json(self) -> bool:
        return self._payload is not _UNSET

    @property
    def body(self) -> bytes:
        if self._body is None:
            self._body = b"" if self._payload is _UNSET else orjson.dumps(self._payload)
        return self._body

    def json(self) -> Any:
        """The body as JSON, exactly as a client over HTTP would parse it."""
        if self._payload is not _UNSET:
            return self._payload
        return orjson.loads(self.body)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None

    def __repr__(self) -> str:
        return f"MockResponse(status={self.status}, body={self.body[:200]!r})"
