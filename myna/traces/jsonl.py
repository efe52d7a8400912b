"""Canonical trace JSONL: the one on-disk form of the trace model, read and written exactly.

A file is a sequence of groups: a `session` header line (id, task, outcome, feedback, source,
metadata), then one line per event of that session with a `type` of `exchange`, `tool_call` or
`message` and the session's id in `session`. A long session may continue in a later group that
repeats its header; reading yields each group as one `Session` part. The line format is published
as a JSON Schema (`trace.schema.json`, next to this module) and every input line is validated
against it; errors name the file, the line and the field.

Fields holding their default (None, an empty list, an empty body) are left out of the line, so
`write_jsonl` followed by reading gives back equal sessions.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, cast

import jsonschema_rs

from myna.errors import InputError
from myna.traces import strictjson
from myna.traces.formats import Peek
from myna.traces.model import Body, Event, Exchange, Message, Pairs, Session, ToolCall
from myna.traces.source import PartBuffer, Source

SCHEMA_RESOURCE = "trace.schema.json"
FORMAT_VERSION = 1


@cache
def trace_schema() -> dict[str, Any]:
    """The JSON Schema of one canonical trace line."""
    text = resources.files("myna.traces").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> jsonschema_rs.Draft202012Validator:
    # jsonschema-rs, not python-jsonschema, on this per-line path: measured on a typical
    # exchange line it takes 1.6 us against 500 us, the difference between reading 600k and
    # 2k lines a second.
    return jsonschema_rs.Draft202012Validator(trace_schema())


def looks_like_jsonl(peek: Peek) -> bool:
    first = peek.first_value
    return isinstance(first, dict) and first.get("type") == "session" and "version" in first


# ---- reading ------------------------------------------------------------------------------------


def read_jsonl(source: Source) -> Iterator[Session]:
    """Yield the session groups of a canonical JSONL file, validated line by line."""
    validator = _validator()
    options = source.options
    buffer: PartBuffer | None = None
    seen: set[str] = set()
    for number, raw in enumerate(source.file, start=1):
        if not raw.strip():
            continue
        try:
            line = strictjson.loads(raw)
        except ValueError as error:
            raise source.error(f"invalid JSON: {error}", line=number) from None
        _validate(validator, line, source, number)
        if line["type"] == "session":
            if buffer is not None:
                yield from _flush(buffer)
            buffer = PartBuffer(_session(line), options.part_events, options.part_bytes)
            if line["id"] not in seen:
                seen.add(line["id"])
                source.report.sessions += 1
            continue
        if buffer is None:
            raise source.error("expected a session header line before the first event", line=number)
        if line["session"] != buffer.header.id:
            raise source.error(
                f"event belongs to session {line['session']!r} but follows the header of "
                f"{buffer.header.id!r}",
                line=number,
                field="session",
            )
        event = _event(line, source, number)
        if source.admit(event):
            part = buffer.add(event, len(raw))
            if part is not None:
                yield part
    if buffer is not None:
        yield from _flush(buffer)


def _flush(buffer: PartBuffer) -> Iterator[Session]:
    if buffer.events or buffer.parts_yielded == 0:
        yield buffer.flush()


def _validate(
    validator: jsonschema_rs.Draft202012Validator, line: Any, source: Source, number: int
) -> None:
    if validator.is_valid(line):
        return
    error = min(validator.iter_errors(line), key=lambda found: len(found.instance_path))
    field = ".".join(str(part) for part in error.instance_path) or None
    raise source.error(f"not a canonical trace line: {error.message}", line=number, field=field)


def _session(line: dict[str, Any]) -> Session:
    return Session(
        id=line["id"],
        task=line.get("task"),
        outcome=line.get("outcome"),
        feedback=line.get("feedback"),
        source=line.get("source"),
        metadata=line.get("metadata", {}),
    )


def _event(line: dict[str, Any], source: Source, number: int) -> Event:
    started_at = _time(line.get("started_at"), source, number)
    kind = line["type"]
    if kind == "exchange":
        return Exchange(
            id=line["id"],
            method=line["method"],
            url=line["url"],
            status=line["status"],
            query=_pairs(line.get("query")),
            request_headers=_pairs(line.get("request_headers")),
            request_body=_body(line.get("request_body")),
            response_headers=_pairs(line.get("response_headers")),
            response_body=_body(line.get("response_body")),
            started_at=started_at,
            duration_ms=line.get("duration_ms"),
            actor=line.get("actor"),
        )
    if kind == "tool_call":
        return ToolCall(
            id=line["id"],
            name=line["name"],
            arguments=line.get("arguments"),
            result=line.get("result"),
            error=line.get("error"),
            started_at=started_at,
            actor=line.get("actor"),
        )
    return Message(id=line["id"], role=line["role"], text=line["text"], started_at=started_at)


def _pairs(items: list[list[str]] | None) -> Pairs:
    # The schema guarantees two strings per item, so a plain tuple() is the exact conversion.
    return cast(Pairs, list(map(tuple, items))) if items else []


def _body(item: dict[str, Any] | None) -> Body:
    if not item:
        return Body()
    return Body(item["kind"], item.get("value"), item.get("mime_type"))


def _time(value: str | None, source: Source, number: int) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise source.error(
            f"{value!r} is not an ISO 8601 time", line=number, field="started_at"
        ) from None


# ---- writing ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Written:
    """What `write_jsonl` wrote: distinct sessions (the parts of one count once) and events."""

    sessions: int
    events: int


def write_jsonl(sessions: Iterable[Session], path: str | os.PathLike[str]) -> Written:
    """Write sessions as canonical JSONL, atomically.

    The lines go to a temporary file beside `path`, which replaces `path` only once every session
    was written; if reading the sessions fails half way, no output file is left behind.
    """
    target = Path(path)
    try:
        descriptor, temp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise InputError(
            f"cannot write the output: {error.strerror or error}", file=str(target)
        ) from None
    temp = Path(temp_name)
    try:
        with open(descriptor, "w", encoding="utf-8") as handle:
            written = _write_lines(sessions, handle)
        # mkstemp creates the file private (0600); the result is an ordinary data file.
        temp.chmod(0o644)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return written


def _write_lines(sessions: Iterable[Session], handle: Any) -> Written:
    seen: set[str] = set()
    events = 0
    for session in sessions:
        handle.write(encode_line(session_line(session), session.id, None))
        seen.add(session.id)
        for event in session.events:
            handle.write(encode_line(event_line(event, session.id), session.id, event.id))
        events += len(session.events)
    return Written(sessions=len(seen), events=events)


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def encode_line(line: dict[str, Any], session_id: str, event_id: str | None) -> str:
    """One line of canonical JSONL, with its newline; a value JSON cannot hold names its event."""
    try:
        return _ENCODE(line) + "\n"
    except (TypeError, ValueError) as error:
        where = f"event {event_id!r} of session {session_id!r}" if event_id else "metadata"
        raise InputError(
            f"{where} cannot be written as JSON: {error}", field=event_id or "metadata"
        ) from None


def session_line(session: Session) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "session", "version": FORMAT_VERSION, "id": session.id}
    for name in ("task", "outcome", "feedback", "source"):
        value = getattr(session, name)
        if value is not None:
            line[name] = value
    if session.metadata:
        line["metadata"] = session.metadata
    return line


def event_line(event: Event, session_id: str) -> dict[str, Any]:
    """The JSON object of one event line (fields at their default are left out)."""
    if isinstance(event, Exchange):
        line: dict[str, Any] = {
            "type": "exchange",
            "session": session_id,
            "id": event.id,
            "method": event.method,
            "url": event.url,
            "status": event.status,
        }
        for name in ("query", "request_headers", "response_headers"):
            pairs = getattr(event, name)
            if pairs:
                line[name] = pairs
        for name in ("request_body", "response_body"):
            body = getattr(event, name)
            if body.kind != "empty" or body.mime_type is not None or body.value is not None:
                line[name] = _body_line(body)
        _put(line, "duration_ms", event.duration_ms)
        _put(line, "actor", event.actor)
    elif isinstance(event, ToolCall):
        line = {"type": "tool_call", "session": session_id, "id": event.id, "name": event.name}
        _put(line, "arguments", event.arguments)
        _put(line, "result", event.result)
        _put(line, "error", event.error)
        _put(line, "actor", event.actor)
    else:
        line = {
            "type": "message",
            "session": session_id,
            "id": event.id,
            "role": event.role,
            "text": event.text,
        }
    if event.started_at is not None:
        line["started_at"] = event.started_at.isoformat()
    return line


def _body_line(body: Body) -> dict[str, Any]:
    line: dict[str, Any] = {"kind": body.kind}
    if body.kind != "empty" or body.value is not None:
        line["value"] = body.value
    if body.mime_type is not None:
        line["mime_type"] = body.mime_type
    return line


def _put(line: dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        line[name] = value
