"""The one exception hierarchy every stage raises.

`MynaError` is the root. Each subclass groups errors by purpose and carries the context a user
needs to find the problem (file, line or entry, method, path, field). Exceptions become data at
exactly two declared boundaries: the mock's HTTP layer (the service's own error shape) and the
replay step function (`info["repercussion"]`). Everywhere else they propagate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class MynaError(Exception):
    """Root of every error Myna raises on purpose.

    `kind` is a stable machine-readable code; `context` holds the facts the message names.
    """

    kind: str = "myna_error"

    def __init__(self, message: str, **context: Any) -> None:
        self.message = message
        self.context: Mapping[str, Any] = {k: v for k, v in context.items() if v is not None}
        super().__init__(self._render())

    def _render(self) -> str:
        where = ", ".join(f"{key} {value}" for key, value in self.context.items())
        return f"{where}: {self.message}" if where else self.message


class InputError(MynaError):
    """A file the user gave cannot be read as asked (traces, models, datasets, episodes)."""

    kind = "input_error"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        entry: int | None = None,
        field: str | None = None,
        **context: Any,
    ) -> None:
        self.file = file
        self.line = line
        self.entry = entry
        self.field = field
        super().__init__(message, file=file, line=line, entry=entry, field=field, **context)


class TraceFormatError(InputError):
    """A trace file is malformed, truncated or of an unknown format."""

    kind = "trace_format"


class ModelError(MynaError):
    """A service model is invalid, inconsistent, or cannot be learned from the input."""

    kind = "model_error"

    def __init__(self, message: str, *, path: str | None = None, **context: Any) -> None:
        self.path = path
        super().__init__(message, path=path, **context)


class LearnError(ModelError):
    """Learning found nothing usable, or evidence it cannot reconcile."""

    kind = "learn_error"


class MockError(MynaError):
    """The mock runtime was misconfigured or asked for something that does not exist."""

    kind = "mock_error"


class ReplayError(MynaError):
    """An episode is malformed or cannot be built, audited or run."""

    kind = "replay_error"


class BenchError(MynaError):
    """ITSMBench could not import data, generate scenarios or run an agent."""

    kind = "bench_error"
