"""OpenTelemetry traces in OTLP JSON: the collector's file exporter and the OTLP/HTTP JSON body.

Accepted shapes: JSON Lines with one `ExportTraceServiceRequest` (`{"resourceSpans": [...]}`) a
line, as the collector's `file` exporter and the SDK's OTLP JSON file exporter write them, or one
such request as a JSON document (an OTLP/HTTP request body, pretty-printed or not).

Spans of one trace are one session, `<file key>/<traceId>` (a trace's spans may arrive across
many lines: sessions are buffered like HAR pages, with one bound on everything held, and yielded
in parts sharing the id when that bound is reached). Events in a part are in start-time order.

What a span becomes (the semantic conventions' attribute names, with their pre-1.21 HTTP names):
- an HTTP client span (`http.request.method` or `http.method`, and `url.full` or `http.url`, not
  of kind SERVER) is an `Exchange` whose status is `http.response.status_code`; headers come from
  `http.request.header.<name>` and `http.response.header.<name>`, bodies from `http.request.body`
  and `http.response.body` where an instrumentation captured them (no convention names them yet);
- a GenAI tool span (`gen_ai.operation.name` `execute_tool`, or a `gen_ai.tool.name`) is a
  `ToolCall`: `gen_ai.tool.call.id`, `.arguments` and `.result` (parsed when JSON), and the span's
  error status or `error.type` as its error;
- `gen_ai.tool.definitions` on any span (a chat or agent span) are the tools offered, kept in the
  session metadata as `tools`, as transcript readers keep them.
Every other span is counted in the report, by reason, so every span is accounted for:
`otlp_http_server` (the service's side of a call), `otlp_http_incomplete` (no URL or no response
status: the call never got an answer), `otlp_gen_ai` (model calls and agent spans),
`otlp_other`.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from myna.traces import strictjson
from myna.traces.formats import PEEK_BYTES, Peek
from myna.traces.model import Body, Event, Exchange, Pairs, Session, ToolCall
from myna.traces.recorded import parse_body
from myna.traces.source import PartBuffer, Source

SPAN_KIND_SERVER = 2
STATUS_CODE_ERROR = 2
REQUEST_HEADER = "http.request.header."
RESPONSE_HEADER = "http.response.header."
REQUEST_BODY_KEYS = ("http.request.body", "http.request.body.content")
RESPONSE_BODY_KEYS = ("http.response.body", "http.response.body.content")
TOOL_OPERATION = "execute_tool"

_MARK = re.compile(r'"resourceSpans"\s*:')


def looks_like_otlp(peek: Peek) -> bool:
    return peek.text[:1] == "{" and bool(_MARK.search(peek.text[:4096]))


def read_otlp(source: Source) -> Iterator[Session]:
    """Yield one session per trace (see the module docstring for the mapping)."""
    options = source.options
    buffers: dict[str, PartBuffer] = {}
    held_events = held_bytes = 0
    for span in _spans(source):
        event = _event(span, source)
        session_id = f"{source.key}/{span.trace_id}"
        buffer = buffers.get(session_id)
        if buffer is None:
            header = Session(
                id=session_id,
                source=source.name,
                metadata={"format": "otlp", "trace_id": span.trace_id, **span.resource},
            )
            buffer = buffers[session_id] = PartBuffer(
                header, options.part_events, options.part_bytes
            )
        _note_tools(buffer.header, span)
        if isinstance(event, str):
            source.report.skipped[event] += 1
            continue
        if not source.admit(event):
            continue
        buffer.hold(event, span.size)
        held_events += 1
        held_bytes += span.size
        if held_events >= options.part_events or held_bytes >= options.part_bytes:
            yield from _flush_all(buffers, source)
            held_events = held_bytes = 0
    yield from _flush_all(buffers, source)
    for buffer in buffers.values():
        if buffer.parts_yielded == 0 and buffer.header.metadata.get("tools"):
            # A trace of model calls only still tells which tools were offered.
            source.report.sessions += 1
            yield buffer.flush()


def _flush_all(buffers: dict[str, PartBuffer], source: Source) -> Iterator[Session]:
    for buffer in buffers.values():
        if buffer.events:
            buffer.events.sort(key=_start_key)
            source.report.sessions += buffer.parts_yielded == 0
            yield buffer.flush()


def _start_key(event: Event) -> float:
    return event.started_at.timestamp() if event.started_at else 0.0


@dataclass(slots=True)
class _Span:
    """One span with its attributes decoded, and where it sits in the file (for errors)."""

    trace_id: str
    span_id: str
    kind: int
    attributes: dict[str, Any]
    status: dict[str, Any]
    started_at: datetime | None
    duration_ms: float | None
    resource: dict[str, Any]
    line: int
    where: str
    size: int


# ---- spans to events ---------------------------------------------------------------------------


def _event(span: _Span, source: Source) -> Event | str:
    """The event a span stands for, or the reason it stands for none."""
    attributes = span.attributes
    operation = attributes.get("gen_ai.operation.name")
    if operation == TOOL_OPERATION or "gen_ai.tool.name" in attributes:
        return _tool_call(span, source)
    method = _method(attributes)
    if method is not None:
        if span.kind == SPAN_KIND_SERVER:
            return "otlp_http_server"
        return _exchange(span, method) or "otlp_http_incomplete"
    if any(key.startswith("gen_ai.") for key in attributes):
        return "otlp_gen_ai"
    return "otlp_other"


def _method(attributes: dict[str, Any]) -> str | None:
    method = attributes.get("http.request.method", attributes.get("http.method"))
    if method == "_OTHER":  # the convention's name for a method outside the known set
        method = attributes.get("http.request.method_original", method)
    return method.upper() if isinstance(method, str) and method else None


def _exchange(span: _Span, method: str) -> Exchange | None:
    attributes = span.attributes
    url = attributes.get("url.full", attributes.get("http.url"))
    status = attributes.get("http.response.status_code", attributes.get("http.status_code"))
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    if not isinstance(url, str) or not url or not isinstance(status, int):
        return None
    request_headers = _headers(attributes, REQUEST_HEADER)
    response_headers = _headers(attributes, RESPONSE_HEADER)
    query = urlsplit(url).query
    return Exchange(
        id=f"{span.trace_id}/{span.span_id}",
        method=method,
        url=url,
        status=status,
        query=parse_qsl(query, keep_blank_values=True) if query else [],
        request_headers=request_headers,
        request_body=_body(attributes, REQUEST_BODY_KEYS, request_headers),
        response_headers=response_headers,
        response_body=_body(attributes, RESPONSE_BODY_KEYS, response_headers),
        started_at=span.started_at,
        duration_ms=span.duration_ms,
        actor=_text_or_none(attributes.get("enduser.id", attributes.get("user.id"))),
    )


def _headers(attributes: dict[str, Any], prefix: str) -> Pairs:
    pairs: Pairs = []
    for key, value in attributes.items():
        if key.startswith(prefix):
            name = key[len(prefix) :]
            values = value if isinstance(value, list) else [value]
            pairs.extend((name, str(item)) for item in values)
    return pairs


def _body(attributes: dict[str, Any], keys: tuple[str, ...], headers: Pairs) -> Body:
    text = next((attributes[key] for key in keys if key in attributes), None)
    content_type = next((value for name, value in headers if name.lower() == "content-type"), None)
    return parse_body(text, content_type, None)[0]


def _tool_call(span: _Span, source: Source) -> ToolCall:
    attributes = span.attributes
    name = attributes.get("gen_ai.tool.name")
    if not isinstance(name, str) or not name:
        raise source.error(
            "an execute_tool span has no gen_ai.tool.name",
            line=span.line,
            field=f"{span.where}.attributes",
        )
    call_id = attributes.get("gen_ai.tool.call.id")
    error = None
    if span.status.get("code") in (STATUS_CODE_ERROR, "STATUS_CODE_ERROR"):
        error = str(span.status.get("message") or attributes.get("error.type") or "error")
    elif "error.type" in attributes:
        error = str(attributes["error.type"])
    return ToolCall(
        id=str(call_id) if call_id not in (None, "") else f"{span.trace_id}/{span.span_id}",
        name=name,
        arguments=_json_value(attributes.get("gen_ai.tool.call.arguments")),
        result=None if error else _json_value(attributes.get("gen_ai.tool.call.result")),
        error=error,
        started_at=span.started_at,
        actor=_text_or_none(attributes.get("gen_ai.agent.name")),
    )


def _note_tools(header: Session, span: _Span) -> None:
    definitions = _json_value(span.attributes.get("gen_ai.tool.definitions"))
    if not isinstance(definitions, list):
        return
    tools: list[Any] = header.metadata.setdefault("tools", [])
    known = {_tool_name(tool) for tool in tools}
    tools.extend(tool for tool in definitions if _tool_name(tool) not in known)


def _tool_name(tool: Any) -> Any:
    if not isinstance(tool, dict):
        return json.dumps(tool, sort_keys=True)
    function = tool.get("function")
    return function.get("name") if isinstance(function, dict) else tool.get("name")


def _json_value(value: Any) -> Any:
    """A JSON document given as text is parsed; anything else is kept as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return strictjson.loads(value)
        except ValueError:
            return value
    return value


def _text_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


# ---- the file to spans -------------------------------------------------------------------------


def _spans(source: Source) -> Iterator[_Span]:
    for request, line in _requests(source):
        if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
            raise source.error(
                'expected an OTLP trace request: an object with a "resourceSpans" array',
                line=line,
                field="resourceSpans",
            )
        for r, resource_spans in enumerate(request["resourceSpans"]):
            where = f"resourceSpans[{r}]"
            resource = _object(resource_spans, source, line, where).get("resource") or {}
            resource_attributes = _attributes(resource.get("attributes"), source, line, where)
            facts = {
                key: resource_attributes[name]
                for key, name in (("service", "service.name"), ("agent", "gen_ai.agent.name"))
                if isinstance(resource_attributes.get(name), str)
            }
            for s, scope_spans in enumerate(resource_spans.get("scopeSpans") or ()):
                inner = f"{where}.scopeSpans[{s}]"
                spans = _object(scope_spans, source, line, inner).get("spans") or ()
                for n, span in enumerate(spans):
                    yield _span(span, facts, source, line, f"{inner}.spans[{n}]")


def _requests(source: Source) -> Iterator[tuple[Any, int]]:
    peek = Peek.of(source.file.read(PEEK_BYTES))
    source.file.seek(0)
    if peek.first_value is None:
        yield source.load_document(), 1
        return
    for number, raw in enumerate(source.file, start=1):
        if raw.strip():
            try:
                yield strictjson.loads(raw), number
            except ValueError as error:
                raise source.error(f"invalid JSON: {error}", line=number) from None


def _span(raw: Any, resource: dict[str, Any], source: Source, line: int, where: str) -> _Span:
    span = _object(raw, source, line, where)
    ids = []
    for key in ("traceId", "spanId"):
        value = span.get(key)
        if not isinstance(value, str) or not value:
            raise source.error(f"a span has no {key}", line=line, field=f"{where}.{key}")
        ids.append(value)
    start = _nanos(span.get("startTimeUnixNano"))
    end = _nanos(span.get("endTimeUnixNano"))
    kind = span.get("kind")
    status = span.get("status")
    attributes = _attributes(span.get("attributes"), source, line, where)
    return _Span(
        trace_id=ids[0],
        span_id=ids[1],
        kind=kind if isinstance(kind, int) else 0,
        attributes=attributes,
        status=status if isinstance(status, dict) else {},
        started_at=datetime.fromtimestamp(start / 1e9, tz=UTC) if start else None,
        duration_ms=(end - start) / 1e6 if start and end and end >= start else None,
        resource=resource,
        line=line,
        where=where,
        size=512 + sum(len(value) for value in attributes.values() if isinstance(value, str)),
    )


def _object(value: Any, source: Source, line: int, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise source.error("expected an object", line=line, field=where)
    return value


def _nanos(value: Any) -> int | None:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _attributes(raw: Any, source: Source, line: int, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise source.error(
            "expected an array of attributes", line=line, field=f"{where}.attributes"
        )
    attributes: dict[str, Any] = {}
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise source.error(
                "an attribute needs a string key",
                line=line,
                field=f"{where}.attributes[{index}]",
            )
        attributes[item["key"]] = any_value(item.get("value"))
    return attributes


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as a plain value (64-bit integers arrive as strings in OTLP JSON)."""
    if not isinstance(value, dict) or not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind == "intValue":
        return int(inner) if isinstance(inner, str) and inner.lstrip("-").isdigit() else inner
    if kind == "arrayValue":
        return [any_value(item) for item in (inner or {}).get("values") or ()]
    if kind == "kvlistValue":
        pairs = (inner or {}).get("values") or ()
        return {pair.get("key"): any_value(pair.get("value")) for pair in pairs}
    if kind == "bytesValue" and isinstance(inner, str):
        try:
            return base64.b64decode(inner, validate=True).hex()
        except ValueError:
            return inner
    return inner
