"""What the builder reads from a failure session: its calls, records, task, answer and feedback.

Myna reads these fields of a `myna.traces.Session`:
- `task` (or, when absent, the first user message): the instruction of the episode;
- `outcome`: only `failure` sessions become episodes; `success` sessions of the same task are
  used as the corrected outcome of their failures;
- `feedback`: free text (a user's complaint, a reviewer's note, a corrected answer), parsed by the
  heuristics in `myna.replay.classify`;
- `events`: exchanges (method, path, query, JSON request body, status, JSON response body), and
  tool calls when a tool translator is given; the last assistant message is the final answer.
  The mock's own call logs (`myna.mocks.calllog.to_session`) are read too: their world-scoped
  paths (`/worlds/<id>/...`) are the service's paths;
- `metadata["expected"]` (optional): a corrected outcome, structured (see `Expected`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from myna.errors import InputError
from myna.replay.run import Routes
from myna.replay.verify import scalar
from myna.replay.world import HttpRequest
from myna.schemas.model import Operation, ServiceModel
from myna.traces.model import Exchange, Session, ToolCall

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
WORLD_PREFIX = "/worlds/"


@dataclass(frozen=True, slots=True)
class LoggedCall:
    """One call of a session, matched to the model's operation when it has one."""

    index: int
    method: str
    path: str
    params: dict[str, str]
    body: Any
    status: int
    response: Any
    operation: Operation | None = None
    path_params: dict[str, str] = field(default_factory=dict)

    @property
    def is_write(self) -> bool:
        return self.method in WRITES

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def resource(self) -> str | None:
        return self.operation.resource if self.operation is not None else None

    @property
    def target_id(self) -> str | None:
        """The record id an item call addresses (its last path parameter)."""
        if self.operation is None or not self.path_params:
            return None
        return list(self.path_params.values())[-1]


ToolToHttp = Callable[[str, Any], HttpRequest]


def logged_calls(
    session: Session, routes: Routes, translate: ToolToHttp | None = None
) -> list[LoggedCall]:
    calls: list[LoggedCall] = []
    for index, event in enumerate(session.events):
        if isinstance(event, Exchange):
            calls.append(_from_exchange(index, event, routes))
        elif isinstance(event, ToolCall) and translate is not None:
            calls.append(_from_tool_call(index, event, routes, translate))
    return calls


def _from_exchange(index: int, exchange: Exchange, routes: Routes) -> LoggedCall:
    method = exchange.method.upper()
    path = exchange.path
    matched = routes.match(method, path)
    if matched is None and path.startswith(WORLD_PREFIX):
        # The mock's own call log: world-scoped paths are the service's paths under /worlds/<id>.
        path = "/" + path[len(WORLD_PREFIX) :].partition("/")[2]
        matched = routes.match(method, path)
    operation, params = matched if matched is not None else (None, {})
    return LoggedCall(
        index,
        method,
        path,
        dict(exchange.query),
        exchange.request_body.value if exchange.request_body.is_json else None,
        exchange.status,
        exchange.response_body.value if exchange.response_body.is_json else None,
        operation,
        params,
    )


def _from_tool_call(
    index: int, call: ToolCall, routes: Routes, translate: ToolToHttp
) -> LoggedCall:
    request = translate(call.name, call.arguments or {})
    matched = routes.match(request.method, request.path)
    operation, params = matched if matched is not None else (None, {})
    return LoggedCall(
        index,
        request.method.upper(),
        request.path,
        dict(request.params),
        request.body,
        400 if call.error else 200,
        call.result,
        operation,
        params,
    )


def records_in(body: Any, model: ServiceModel) -> list[dict[str, Any]]:
    """The records a response body carries, unwrapped from the model's envelope."""
    envelope = model.conventions.envelope
    inner = body
    if isinstance(body, dict):
        for key in (envelope.list_key, envelope.item_key):
            if key and key in body:
                inner = body[key]
                break
    if isinstance(inner, list):
        return [item for item in inner if isinstance(item, dict)]
    return [inner] if isinstance(inner, dict) else []


def record_id(record: dict[str, Any], id_field: str) -> str | None:
    value = scalar(record.get(id_field))
    return str(value) if value != "" else None


def instruction_of(session: Session, *, file: str | None = None) -> str:
    if session.task:
        return session.task
    for message in session.messages:
        if message.role == "user" and message.text.strip():
            return message.text
    raise InputError(f"session {session.id} has no task and no user message", file=file)


def final_answer(session: Session) -> str | None:
    answers = [m.text for m in session.messages if m.role == "assistant" and m.text.strip()]
    return answers[-1] if answers else None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExpectedChange(_Strict):
    """One change the task needs. `record` selects an existing record by field values.

    A `set` value of null means "any non-empty value" (free text such as close notes).
    """

    resource: str
    action: Literal["update", "create", "delete"] = "update"
    record: dict[str, Any] = Field(default_factory=dict)
    set: dict[str, Any] = Field(default_factory=dict)


class ExpectedCall(_Strict):
    method: str = "*"
    path: str


class Expected(_Strict):
    """A corrected outcome: `session.metadata["expected"]` in a failure log."""

    changes: list[ExpectedChange] = Field(default_factory=list)
    answer: str | None = None
    forbidden: list[ExpectedCall] = Field(default_factory=list)


def iter_text_values(value: Any) -> Iterator[str]:
    """Every scalar inside a JSON value, as text (for finding identifiers in feedback)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from iter_text_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from iter_text_values(item)
    elif value is not None:
        yield str(value)
