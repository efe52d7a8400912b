"""MCP JSON-RPC logs: `tools/call` requests matched to their results or errors by id.

Accepted shapes: JSON Lines with one JSON-RPC message per line (a line may also hold a batch, a
JSON array of messages), or a JSON array of messages. A message may be wrapped in an envelope
`{"timestamp": ..., "direction": ..., "message": {...}}`, as loggers and proxies write them; the
timestamp becomes the call's time. One file is one session, named by its file key
(`reading.file_keys`); a call's id is `<file key>#<JSON-RPC id>`.

A `tools/call` request becomes a `ToolCall`; its response fills `result` (the `structuredContent`
when present, else the content: a single text block's text, parsed when it is a JSON document),
or `error` (a JSON-RPC error, or a result with `isError`). Calls are yielded in request order once
answered; a call never answered is kept with the error "no response recorded". Other traffic
(initialize, tools/list, notifications) is counted in the report as `mcp_other`; the server and
client names from `initialize` go to the session metadata.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from myna.traces import strictjson
from myna.traces.formats import PEEK_BYTES, Peek
from myna.traces.model import Session, ToolCall
from myna.traces.source import PartBuffer, Source

NO_RESPONSE = "no response recorded"

_MARK = re.compile(r'"jsonrpc"\s*:\s*"2\.0"')


def looks_like_mcp(peek: Peek) -> bool:
    return peek.text[:1] in ("{", "[") and bool(_MARK.search(peek.text[:4096]))


def read_mcp(source: Source) -> Iterator[Session]:
    """Yield the one session of an MCP log (see the module docstring)."""
    header = Session(id=source.key, source=source.name, metadata={"format": "mcp"})
    buffer = PartBuffer(header, source.options.part_events, source.options.part_bytes)
    pending: OrderedDict[str, tuple[ToolCall, bool]] = OrderedDict()
    source.report.sessions += 1
    for message, at, line in _messages(source):
        if "method" in message:
            _request(message, at, line, pending, header, source)
            continue
        key = message_key(message.get("id"))
        if key is None or key not in pending:
            result = message.get("result")
            if isinstance(result, dict) and isinstance(result.get("serverInfo"), dict):
                header.metadata["server"] = result["serverInfo"]
            source.report.skipped["mcp_other"] += 1
            continue
        call = pending[key][0]
        answer_call(call, message)
        pending[key] = (call, True)
        # Calls leave in request order, so a slow call holds back the ones after it.
        while pending and next(iter(pending.values()))[1]:
            call, _ = pending.popitem(last=False)[1]
            if source.admit(call):
                part = buffer.add(call, 0)
                if part is not None:
                    yield part
    for call, answered in pending.values():
        if not answered:
            call.error = NO_RESPONSE
        if source.admit(call):
            part = buffer.add(call, 0)
            if part is not None:
                yield part
    if buffer.events or buffer.parts_yielded == 0:
        yield buffer.flush()


def _request(
    message: dict[str, Any],
    at: datetime | None,
    line: int,
    pending: OrderedDict[str, tuple[ToolCall, bool]],
    header: Session,
    source: Source,
) -> None:
    raw_params = message.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    key = message_key(message.get("id"))
    if message["method"] != "tools/call" or key is None:
        if message["method"] == "initialize" and isinstance(params.get("clientInfo"), dict):
            header.metadata["client"] = params["clientInfo"]
        source.report.skipped["mcp_other"] += 1
        return
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise source.error("tools/call request has no tool name", line=line, field="params.name")
    if key in pending:
        raise source.error(f"request id {key} is used twice while unanswered", line=line)
    call = ToolCall(f"{source.key}#{key}", name, params.get("arguments"), started_at=at)
    pending[key] = (call, False)


def answer_call(call: ToolCall, message: dict[str, Any]) -> None:
    """Fill `call` from the JSON-RPC response `message` that answers it."""
    error = message.get("error")
    if isinstance(error, dict):
        call.error = f"{error.get('code', '?')}: {error.get('message', '')}".strip()
        return
    result = message.get("result")
    if not isinstance(result, dict):
        call.result = result
        return
    value = result.get("structuredContent")
    if value is None:
        value = _content_value(result.get("content"))
    if result.get("isError"):
        call.error = value if isinstance(value, str) else json.dumps(value)
    else:
        call.result = value


def _content_value(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    if len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "text":
        text = str(content[0].get("text", ""))
        if text[:1] in ("{", "["):
            try:
                return strictjson.loads(text)
            except ValueError:
                return text
        return text
    return content


def message_key(value: Any) -> str | None:
    """A JSON-RPC id as a dictionary key (`None` for a notification or a malformed id)."""
    if isinstance(value, bool) or value is None:
        return None
    return str(value) if isinstance(value, str | int) else None


def _messages(source: Source) -> Iterator[tuple[dict[str, Any], datetime | None, int]]:
    peek = Peek.of(source.file.read(PEEK_BYTES))
    source.file.seek(0)
    if peek.first_value is None and peek.text.startswith("["):
        document = source.load_document()
        for index, item in enumerate(document if isinstance(document, list) else [document]):
            yield from _unwrap(item, source, index + 1)
        return
    for number, raw in enumerate(source.file, start=1):
        if not raw.strip():
            continue
        try:
            item = strictjson.loads(raw)
        except ValueError as error:
            raise source.error(f"invalid JSON: {error}", line=number) from None
        for member in item if isinstance(item, list) else [item]:
            yield from _unwrap(member, source, number)


def _unwrap(
    item: Any, source: Source, line: int
) -> Iterator[tuple[dict[str, Any], datetime | None, int]]:
    if not isinstance(item, dict):
        raise source.error("expected a JSON-RPC message object", line=line)
    wrapped = item.get("message")
    message: dict[str, Any] = wrapped if isinstance(wrapped, dict) else item
    if message.get("jsonrpc") != "2.0":
        raise source.error('not a JSON-RPC 2.0 message (no "jsonrpc": "2.0")', line=line)
    yield message, _time(item.get("timestamp", item.get("time"))), line


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None
