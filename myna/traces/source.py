"""The shell every reader shares: one open input file, and what happens to each event read from it.

A reader turns bytes into events; `Source.admit` then applies, in order, the user's filters, the
always-on redaction and the optional pseudonymisation, and counts what it dropped. `PartBuffer`
cuts long sessions into bounded parts so that memory stays flat whatever the file size.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from myna.errors import TraceFormatError
from myna.traces import strictjson
from myna.traces.model import Event, Exchange, Session, ToolCall
from myna.traces.options import ReadOptions, ReadReport
from myna.traces.pseudonymise import Pseudonymiser
from myna.traces.recorded import url_query, without_bare_query
from myna.traces.redact import redact_headers, redact_json, redact_pairs, redact_url


@dataclass(slots=True)
class Source:
    """One input file being read, with the options and report of the whole read.

    `key` names the file within the import (see `file_keys`): readers build the ids of the
    sessions and events they make up from it, so that those ids are unique across all files.
    """

    path: Path
    file: BinaryIO
    options: ReadOptions
    report: ReadReport
    pseudonymiser: Pseudonymiser | None = None
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.path.stem

    @property
    def name(self) -> str:
        return str(self.path)

    def error(
        self,
        message: str,
        *,
        line: int | None = None,
        entry: int | None = None,
        field: str | None = None,
    ) -> TraceFormatError:
        return TraceFormatError(message, file=self.name, line=line, entry=entry, field=field)

    def load_document(self) -> Any:
        """The rest of the file parsed as one JSON document; bad JSON names its line."""
        try:
            return strictjson.load(self.file)
        except json.JSONDecodeError as error:
            raise self.error(f"invalid JSON: {error.msg}", line=error.lineno) from None
        except UnicodeDecodeError:
            raise self.error("the file is not UTF-8 text") from None
        except ValueError as error:  # NaN or Infinity, refused by strictjson
            raise self.error(f"invalid JSON: {error}") from None

    def admit(self, event: Event, *, walk_json: bool = True) -> bool:
        """Filter, redact and pseudonymise `event` in place; `False` if a filter dropped it.

        `walk_json=False` tells that the event's JSON values (bodies, tool arguments and results)
        need no redaction walk: the reader redacted them already, or a test on the raw text
        (`json_may_hold_secrets`) found no secret key in them. Walking is the costly part.
        """
        bare_query = isinstance(event, Exchange) and _read_bare_query(event)
        filters = self.options.filters
        if filters.active and not filters.keeps(event):
            self.report.skipped["filtered"] += 1
            return False
        self.report.queries_without_question_mark += bare_query
        if isinstance(event, Exchange):
            _redact_exchange(event, walk_json=walk_json)
            if self.pseudonymiser:
                self.pseudonymiser.exchange(event)
        elif isinstance(event, ToolCall):
            if walk_json:
                event.arguments = redact_json(event.arguments)
                event.result = redact_json(event.result)
            if self.pseudonymiser:
                self.pseudonymiser.tool_call(event)
        elif self.pseudonymiser:
            self.pseudonymiser.message(event)
        self._note_time(event)
        self.report.events += 1
        return True

    def one_session(
        self, metadata: dict[str, Any], events: Iterable[tuple[Event, int] | None]
    ) -> Iterator[Session]:
        """The session `<file key>` of a file that is one session (a cassette, a recording),
        from its events with their sizes (`None` for an entry left out), admitted and yielded
        in bounded parts."""
        header = Session(id=self.key, source=self.name, metadata=metadata)
        buffer = PartBuffer(header, self.options.part_events, self.options.part_bytes)
        self.report.sessions += 1
        for built in events:
            if built is None or not self.admit(built[0], walk_json=False):
                continue
            part = buffer.add(*built)
            if part is not None:
                yield part
        if buffer.events or buffer.parts_yielded == 0:
            yield buffer.flush()

    def _note_time(self, event: Event) -> None:
        moment = event.started_at
        if moment is None:
            return
        report = self.report
        try:
            if report.first_event_at is None or moment < report.first_event_at:
                report.first_event_at = moment
            if report.last_event_at is None or moment > report.last_event_at:
                report.last_event_at = moment
        except TypeError:
            # A naive timestamp cannot be ordered against an aware one; the span then stays
            # what the aware timestamps say rather than guessing a zone.
            return


def _read_bare_query(exchange: Exchange) -> bool:
    """Give a query written without `?` its `?` (`recorded.without_bare_query`); whether it had
    to. Done first, so that filters see the path and redaction sees the query."""
    url = without_bare_query(exchange.url)
    if url is None:
        return False
    exchange.url = url
    if not exchange.query:
        exchange.query = url_query(url)
    return True


def _redact_exchange(exchange: Exchange, *, walk_json: bool) -> None:
    exchange.url = redact_url(exchange.url)
    exchange.query = redact_pairs(exchange.query)
    exchange.request_headers = redact_headers(exchange.request_headers)
    exchange.response_headers = redact_headers(exchange.response_headers)
    if walk_json:
        for body in (exchange.request_body, exchange.response_body):
            if body.kind == "json":
                body.value = redact_json(body.value)


@dataclass(slots=True)
class PartBuffer:
    """Events of one session waiting to be yielded, cut into parts at the configured bounds."""

    header: Session
    max_events: int
    max_bytes: int
    events: list[Event] = field(default_factory=list)
    size: int = 0
    parts_yielded: int = 0

    def add(self, event: Event, size: int) -> Session | None:
        """Add an event of roughly `size` bytes; returns a full part when one is ready."""
        self.hold(event, size)
        if len(self.events) >= self.max_events or self.size >= self.max_bytes:
            return self.flush()
        return None

    def hold(self, event: Event, size: int) -> None:
        """Add an event without checking the bounds (the caller bounds several buffers at once)."""
        self.events.append(event)
        self.size += size

    def flush(self) -> Session:
        header = self.header
        part = Session(
            id=header.id,
            events=self.events,
            task=header.task,
            outcome=header.outcome,
            feedback=header.feedback,
            source=header.source,
            metadata=dict(header.metadata),
        )
        self.events = []
        self.size = 0
        self.parts_yielded += 1
        return part
