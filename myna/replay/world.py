"""The narrow view of a mock world the replay engine needs, as structural protocols.

Replay logic is written against these protocols, not against a concrete mock, so it can be tested
with small fakes and run on any world that offers them. `myna.replay.mock_world` adapts the
in-process mock (`myna.mocks`) to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from myna.mocks.store import Record, RecordChange
from myna.replay.episode import Environment


class Response(Protocol):
    @property
    def status(self) -> int: ...

    def json(self) -> Any: ...


class WorldClient(Protocol):
    """Sends one request to a world, the way an agent would."""

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response: ...


class World(Protocol):
    """One isolated world: a client to call it, and its state for the verifier."""

    @property
    def client(self) -> WorldClient: ...

    def changes(self) -> list[RecordChange]:
        """Record changes since the world was opened."""
        ...

    def dump(self) -> dict[str, list[Record]]:
        """Every record, by resource."""
        ...

    def close(self) -> None: ...


class WorldFactory(Protocol):
    """Opens fresh worlds holding an environment's initial records."""

    def open(self, environment: Environment) -> World: ...


@runtime_checkable
class Clocked(Protocol):
    """A world factory whose service clock can be moved, so an audit can tell a verifier that
    depends on the time of day from one that does not."""

    def shifted(self, seconds: float) -> AbstractContextManager[None]:
        """While entered, the service's clock runs `seconds` ahead (or behind)."""
        ...


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A request a tool call translates to."""

    method: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None


class ToolTranslator(Protocol):
    """Turns an agent's tool call into the HTTP request the mock serves."""

    def __call__(self, name: str, arguments: Mapping[str, Any]) -> HttpRequest: ...
