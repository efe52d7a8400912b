"""OTLP JSON traces written by the OpenTelemetry SDK itself: HTTP client spans from the httpx
instrumentation against a served mock, GenAI tool spans, and the OTLP/HTTP body form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.instrumentation.httpx import SyncOpenTelemetryTransport
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from myna.errors import TraceFormatError
from myna.mocks.serve import serving
from myna.schemas import learn
from myna.traces import Exchange, read
from myna.traces.formats import Peek, detect_format
from myna.traces.redact import REDACTED
from tests.mocks.conftest import ALICE, TABLE, USER, build_mock
from tests.traces.helpers import WriteFile

TOOLS = [
    {"type": "function", "name": "create_incident", "parameters": {"type": "object"}},
    {"type": "function", "name": "get_incident", "parameters": {"type": "object"}},
]


class _Buffered(httpx.BaseTransport):
    """Reads each answer whole, so the response hook can see the body the client then gets."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        try:
            content = response.read()
        finally:
            response.close()
        return httpx.Response(response.status_code, headers=response.headers, content=content)

    def close(self) -> None:
        self.inner.close()


def _request_hook(span: Any, request: Any) -> None:
    _, _, headers, stream, _ = request
    for name, value in headers.raw:
        span.set_attribute(f"http.request.header.{name.decode().lower()}", [value.decode()])
    body = b"".join(stream)
    if body:
        span.set_attribute("http.request.body", body.decode())


def _response_hook(span: Any, request: Any, response: Any) -> None:
    _, headers, stream, _ = response
    for name, value in headers.raw:
        span.set_attribute(f"http.response.header.{name.decode().lower()}", [value.decode()])
    span.set_attribute("http.response.body", b"".join(stream).decode())


def _agent_run(provider: TracerProvider, base_url: str) -> None:
    """An agent turn: a model call offering tools, two tool calls (one failing), and the HTTP
    calls the first tool made, all in one trace."""
    tracer = provider.get_tracer("agent")
    transport = SyncOpenTelemetryTransport(
        _Buffered(),
        tracer_provider=provider,
        request_hook=_request_hook,
        response_hook=_response_hook,
    )
    with (
        tracer.start_as_current_span("invoke_agent helpdesk") as agent,
        httpx.Client(base_url=base_url, auth=USER, transport=transport) as http,
    ):
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        with tracer.start_as_current_span("chat gpt-x", kind=SpanKind.CLIENT) as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.tool.definitions", json.dumps(TOOLS))
        with tracer.start_as_current_span("execute_tool create_incident") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "create_incident")
            tool.set_attribute("gen_ai.tool.call.id", "call_1")
            arguments = {"short_description": "Printer on fire", "caller_id": ALICE}
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps(arguments))
            created = http.post(f"{TABLE}/incident", json=arguments)
            assert created.status_code == 201
            record = created.json()["result"]
            tool.set_attribute("gen_ai.tool.call.result", json.dumps(record))
            http.get(f"{TABLE}/incident/{record['sys_id']}")
            http.patch(f"{TABLE}/incident/{record['sys_id']}", json={"state": "2"})
            assert http.get(f"{TABLE}/incident/{'f' * 32}").status_code == 404
        with tracer.start_as_current_span("execute_tool get_incident") as failing:
            failing.set_attribute("gen_ai.operation.name", "execute_tool")
            failing.set_attribute("gen_ai.tool.name", "get_incident")
            failing.set_attribute("gen_ai.tool.call.id", "call_2")
            failing.set_status(Status(StatusCode.ERROR, "incident not found"))
        with tracer.start_as_current_span("render answer"):
            pass


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """The agent run exported by the SDK's OTLP JSON file exporter, and the spans it wrote."""
    path = tmp_path_factory.mktemp("otlp") / "agent.jsonl"
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with serving(build_mock()) as running:
        _agent_run(provider, running.base_url)
    provider.shutdown()
    return path, list(memory.get_finished_spans())


def test_sdk_spans_import_with_every_span_accounted_for(recorded: tuple[Path, list[Any]]) -> None:
    path, spans = recorded
    stream = read(path)
    sessions = list(stream)
    assert len(sessions) == 1
    assert stream.report.events + sum(stream.report.skipped.values()) == len(spans)
    assert stream.report.skipped == {"otlp_gen_ai": 2, "otlp_other": 1}
    session = sessions[0]
    trace_id = format(spans[0].context.trace_id, "032x")
    assert session.id == f"agent/{trace_id}"
    assert [tool["name"] for tool in session.metadata["tools"]] == [
        "create_incident",
        "get_incident",
    ]
    kinds = [
        (event.method, event.status) if isinstance(event, Exchange) else event.name
        for event in session.events
    ]
    assert kinds == [
        "create_incident",
        ("POST", 201),
        ("GET", 200),
        ("PATCH", 200),
        ("GET", 404),
        "get_incident",
    ]


def test_http_spans_carry_urls_headers_and_bodies_with_credentials_redacted(
    recorded: tuple[Path, list[Any]],
) -> None:
    session = next(iter(read(recorded[0])))
    create, get = session.exchanges[:2]
    assert create.url.endswith(f"{TABLE}/incident")
    assert create.request_body.value == {"short_description": "Printer on fire", "caller_id": ALICE}
    assert create.response_body.value["result"]["short_description"] == "Printer on fire"
    assert create.request_header("authorization") == f"Basic {REDACTED}"
    assert create.response_header("content-type") == "application/json"
    assert get.duration_ms is not None
    assert get.duration_ms >= 0
    assert get.started_at is not None
    assert create.started_at is not None
    assert get.started_at >= create.started_at


def test_tool_spans_become_tool_calls_with_results_and_errors(
    recorded: tuple[Path, list[Any]],
) -> None:
    calls = next(iter(read(recorded[0]))).tool_calls
    assert [(call.id, call.name, call.error) for call in calls] == [
        ("call_1", "create_incident", None),
        ("call_2", "get_incident", "incident not found"),
    ]
    assert calls[0].arguments == {"short_description": "Printer on fire", "caller_id": ALICE}
    assert isinstance(calls[0].result, dict)
    assert calls[0].result["short_description"] == "Printer on fire"


def test_a_learned_model_knows_the_resource_the_spans_touched(
    recorded: tuple[Path, list[Any]],
) -> None:
    models = {model.name: model for model in learn(read(recorded[0]), service="itsm")}
    model = models["itsm"]
    assert "incident" in model.resources
    kinds = {(operation.method, operation.kind) for operation in model.operations}
    assert ("POST", "create") in kinds


def test_an_otlp_http_request_body_reads_like_the_file_exporters_lines(
    recorded: tuple[Path, list[Any]], write_json: WriteFile
) -> None:
    spans: list[ReadableSpan] = recorded[1]
    body = json.dumps(encode_spans(spans).to_dict(), indent=2)
    assert detect_format(Peek.of(body.encode())) == "otlp"
    from_body = next(iter(read(write_json("agent.json", body))))
    from_lines = next(iter(read(recorded[0])))
    assert from_body.events == from_lines.events


def _request(span: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


@pytest.mark.parametrize(
    ("lines", "message", "field"),
    [
        (['{"resourceSpans": [}'], "invalid JSON", None),
        ([json.dumps({"resourceSpans": {}})], '"resourceSpans" array', "resourceSpans"),
        (
            [json.dumps(_request({"spanId": "01"}))],
            "a span has no traceId",
            "resourceSpans[0].scopeSpans[0].spans[0].traceId",
        ),
        (
            [
                json.dumps(
                    _request(
                        {
                            "traceId": "aa",
                            "spanId": "01",
                            "attributes": [
                                {
                                    "key": "gen_ai.operation.name",
                                    "value": {"stringValue": "execute_tool"},
                                }
                            ],
                        }
                    )
                )
            ],
            "no gen_ai.tool.name",
            "resourceSpans[0].scopeSpans[0].spans[0].attributes",
        ),
    ],
    ids=["bad-json", "not-an-array", "no-trace-id", "tool-without-name"],
)
def test_bad_otlp_names_the_line_and_field(
    write_json: WriteFile, lines: list[str], message: str, field: str | None
) -> None:
    first = json.dumps(_request({"traceId": "aa", "spanId": "00"}))
    path = write_json("bad.jsonl", "\n".join([first, *lines]) + "\n")
    with pytest.raises(TraceFormatError, match=message) as raised:
        list(read(path, format="otlp"))
    assert raised.value.context["line"] == 2
    assert raised.value.context.get("field") == field


def test_every_attribute_value_kind_decodes(write_json: WriteFile) -> None:
    attributes = [
        {"key": "http.request.method", "value": {"stringValue": "GET"}},
        {"key": "url.full", "value": {"stringValue": "https://api.example.com/items?a=1"}},
        {"key": "http.response.status_code", "value": {"intValue": "200"}},
        {"key": "http.request.header.x-ids", "value": {"arrayValue": {"values": [
            {"intValue": 7}, {"doubleValue": 1.5}, {"boolValue": True}]}}},
        {"key": "http.response.body", "value": {"stringValue": '{"items": []}'}},
    ]  # fmt: skip
    span = {"traceId": "ab", "spanId": "cd", "kind": 3, "attributes": attributes}
    exchange = next(iter(read(write_json("one.jsonl", json.dumps(_request(span))))))
    only = exchange.events[0]
    assert isinstance(only, Exchange)
    assert only.query == [("a", "1")]
    assert only.request_headers == [("x-ids", "7"), ("x-ids", "1.5"), ("x-ids", "True")]
    assert only.response_body.value == {"items": []}


def test_server_spans_and_unanswered_calls_are_counted_not_read(write_json: WriteFile) -> None:
    def span(span_id: str, kind: int, *extra: dict[str, Any]) -> dict[str, Any]:
        method = {"key": "http.request.method", "value": {"stringValue": "GET"}}
        return {"traceId": "ab", "spanId": span_id, "kind": kind, "attributes": [method, *extra]}

    url = {"key": "url.full", "value": {"stringValue": "https://api.example.com/x"}}
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span("1", 2), span("2", 3, url)]}]}]}
    stream = read(write_json("side.jsonl", json.dumps(request)))
    assert list(stream) == []
    assert stream.report.skipped == {"otlp_http_server": 1, "otlp_http_incomplete": 1}
