"""Registers the readers that ship with Myna, most specific first (detection order matters)."""

from myna.traces.formats import register_reader
from myna.traces.har import looks_like_har, read_har
from myna.traces.jsonl import looks_like_jsonl, read_jsonl

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
