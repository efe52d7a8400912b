"""Stage 1: read recorded interactions (HAR, VCR and nock recordings, canonical JSONL, agent
transcripts) into one model.

`read(path)` and `read_many(paths)` stream `Session`s from any registered format; `write_jsonl`
writes them as canonical JSONL. See `myna.traces.reading` for the details and `ReadOptions` for
what can be asked of a reader.

The model types load eagerly; the readers (ijson, jsonschema-rs, Faker) load on first use, so
that importing the model, or running `myna --help`, does not pay for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from myna.traces.model import Body, Event, Exchange, Message, Session, ToolCall

if TYPE_CHECKING:
    from myna.traces.filters import Filters
    from myna.traces.formats import READERS, register_reader
    from myna.traces.jsonl import write_jsonl
    from myna.traces.options import ReadOptions, ReadReport
    from myna.traces.reading import SessionStream, read, read_many

__all__ = [
    "READERS",
    "Body",
    "Event",
    "Exchange",
    "Filters",
    "Message",
    "ReadOptions",
    "ReadReport",
    "Session",
    "SessionStream",
    "ToolCall",
    "read",
    "read_many",
    "register_reader",
    "write_jsonl",
]

_LAZY = {
    "Filters": "myna.traces.filters",
    "READERS": "myna.traces.reading",
    "register_reader": "myna.traces.reading",
    "write_jsonl": "myna.traces.jsonl",
    "ReadOptions": "myna.traces.options",
    "ReadReport": "myna.traces.options",
    "SessionStream": "myna.traces.reading",
    "read": "myna.traces.reading",
    "read_many": "myna.traces.reading",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'myna.traces' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
