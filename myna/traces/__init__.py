"""Stage 1: read recorded interactions (HAR, canonical JSONL, agent transcripts) into one model.

`read(path)` and `read_many(paths)` stream `Session`s from any registered format; see
`myna.traces.reading` for the details and `ReadOptions` for what can be asked of a reader.
"""

from myna.traces.filters import Filters
from myna.traces.formats import READERS, register_reader
from myna.traces.model import Body, Event, Exchange, Message, Session, ToolCall
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
]
