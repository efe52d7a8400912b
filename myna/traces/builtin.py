"""Registers the readers that ship with Myna, most specific first (detection order matters)."""

from myna.traces.formats import register_reader
from myna.traces.har import looks_like_har, read_har
from myna.traces.jsonl import looks_like_jsonl, read_jsonl
from myna.traces.mcp import looks_like_mcp, read_mcp
from myna.traces.nock import looks_like_nock, read_nock
from myna.traces.otlp import looks_like_otlp, read_otlp
from myna.traces.transcripts import (
    looks_like_anthropic,
    looks_like_openai_chat,
    looks_like_openai_responses,
    read_anthropic,
    read_openai_chat,
    read_openai_responses,
)
from myna.traces.vcr import looks_like_vcr, read_vcr

register_reader(
    "jsonl",
    read_jsonl,
    detect=looks_like_jsonl,
    description="Myna canonical trace JSONL (trace.schema.json)",
)
register_reader(
    "har",
    read_har,
    detect=looks_like_har,
    description="HAR 1.2 from browsers, proxies and Polly.js",
)
register_reader(
    "otlp",
    read_otlp,
    detect=looks_like_otlp,
    description="OpenTelemetry OTLP JSON traces (HTTP client spans, GenAI tool spans)",
)
register_reader(
    "vcr",
    read_vcr,
    detect=looks_like_vcr,
    description="VCR cassettes: vcrpy (YAML, JSON), Ruby VCR (YAML, JSON), Betamax (JSON)",
)
register_reader(
    "nock",
    read_nock,
    detect=looks_like_nock,
    description="nock recordings (nock.recorder with output_objects: a JSON array)",
)
register_reader(
    "mcp",
    read_mcp,
    detect=looks_like_mcp,
    description="MCP JSON-RPC logs (tools/call requests and their results)",
)
register_reader(
    "openai-responses",
    read_openai_responses,
    detect=looks_like_openai_responses,
    description="OpenAI Responses API items (function_call, function_call_output)",
)
register_reader(
    "anthropic",
    read_anthropic,
    detect=looks_like_anthropic,
    description="Anthropic Messages transcripts (tool_use, tool_result)",
)
register_reader(
    "openai-chat",
    read_openai_chat,
    detect=looks_like_openai_chat,
    description="OpenAI Chat Completions transcripts (tool_calls, tool messages)",
)
