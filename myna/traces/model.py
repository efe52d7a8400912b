"""The canonical trace model every reader produces and every later stage consumes.

Plain slotted dataclasses: they are built millions of times while importing and learning, so they
stay cheap, and they cross module boundaries as types rather than dicts of strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

Pairs: TypeAlias = list[tuple[str, str]]
"""An ordered multi-map (headers, query strings): names may repeat and order is kept."""

BodyKind = Literal["empty", "json", "text", "base64"]


@dataclass(slots=True)
class Body:
    """A request or response body: parsed JSON when it parses, otherwise text or base64 bytes."""

    kind: BodyKind = "empty"
    value: Any = None
    mime_type: str | None = None

    @property
    def is_json(self) -> bool:
        return self.kind == "json"


@dataclass(slots=True)
class Exchange:
    """One HTTP request and its response."""

    id: str
    method: str
    url: str
    status: int
    query: Pairs = field(default_factory=list)
    request_headers: Pairs = field(default_factory=list)
    request_body: Body = field(default_factory=Body)
    response_headers: Pairs = field(default_factory=list)
    response_body: Body = field(default_factory=Body)
    started_at: datetime | None = None
    duration_ms: float | None = None
    actor: str | None = None

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/"

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    def request_header(self, name: str) -> str | None:
        return header_value(self.request_headers, name)

    def response_header(self, name: str) -> str | None:
        return header_value(self.response_headers, name)


@dataclass(slots=True)
class ToolCall:
    """One tool (function) call an agent made, with its result or error."""

    id: str
    name: str
    arguments: Any = None
    result: Any = None
    error: str | None = None
    started_at: datetime | None = None
    actor: str | None = None


MessageRole = Literal["system", "user", "assistant", "tool"]


@dataclass(slots=True)
class Message:
    """A conversational turn around the calls (the task, the agent's answer, feedback)."""

    id: str
    role: MessageRole
    text: str
    started_at: datetime | None = None


Event: TypeAlias = Exchange | ToolCall | Message

Outcome = Literal["success", "failure", "unknown"]


@dataclass(slots=True)
class Session:
    """An ordered run of events: a HAR page, a transcript, an agent episode.

    `task`, `outcome` and `feedback` are what the replay stage reads to turn failures into
    episodes; `metadata` keeps whatever else the source recorded, untouched.
    """

    id: str
    events: list[Event] = field(default_factory=list)
    task: str | None = None
    outcome: Outcome | None = None
    feedback: str | None = None
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def exchanges(self) -> list[Exchange]:
        return [event for event in self.events if isinstance(event, Exchange)]

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [event for event in self.events if isinstance(event, ToolCall)]

    @property
    def messages(self) -> list[Message]:
        return [event for event in self.events if isinstance(event, Message)]


def header_value(pairs: Pairs, name: str) -> str | None:
    """The first value of the header `name` (any case) in `pairs`, if any."""
    wanted = name.lower()
    for key, value in pairs:
        if key.lower() == wanted:
            return value
    return None
