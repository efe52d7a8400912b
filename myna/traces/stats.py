"""Summary statistics over sessions: what `myna traces stats` prints, as a pure fold."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from myna.traces.model import Exchange, Session, ToolCall
from myna.traces.options import ReadReport


@dataclass(slots=True)
class TraceStats:
    """Counts over a stream of sessions (the parts of one session count once)."""

    sessions: int = 0
    exchanges: int = 0
    tool_calls: int = 0
    messages: int = 0
    hosts: Counter[str] = field(default_factory=Counter)
    methods: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    tools: Counter[str] = field(default_factory=Counter)
    tool_errors: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    queries_without_question_mark: int = 0
    first_event_at: datetime | None = None
    last_event_at: datetime | None = None
    files: int = 0

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict, with counters sorted by count then name for stable output."""
        return {
            "files": self.files,
            "sessions": self.sessions,
            "exchanges": self.exchanges,
            "tool_calls": self.tool_calls,
            "messages": self.messages,
            "first_event_at": _iso(self.first_event_at),
            "last_event_at": _iso(self.last_event_at),
            "exchanges_per_host": _ordered(self.hosts),
            "exchanges_per_method": _ordered(self.methods),
            "exchanges_per_status": {str(k): v for k, v in _ordered(self.statuses).items()},
            "tool_calls_per_tool": _ordered(self.tools),
            "tool_errors_per_tool": _ordered(self.tool_errors),
            "skipped": _ordered(self.skipped),
            "queries_without_question_mark": self.queries_without_question_mark,
        }


def collect(sessions: Iterable[Session]) -> TraceStats:
    """Fold sessions into statistics; the time span and skips come from `finish`."""
    stats = TraceStats()
    seen: set[str] = set()
    for session in sessions:
        if session.id not in seen:
            seen.add(session.id)
            stats.sessions += 1
        for event in session.events:
            if isinstance(event, Exchange):
                stats.exchanges += 1
                stats.hosts[event.host] += 1
                stats.methods[event.method] += 1
                stats.statuses[event.status] += 1
            elif isinstance(event, ToolCall):
                stats.tool_calls += 1
                stats.tools[event.name] += 1
                if event.error is not None:
                    stats.tool_errors[event.name] += 1
            else:
                stats.messages += 1
    return stats


def finish(stats: TraceStats, report: ReadReport) -> TraceStats:
    """Add what only the reader knows: files read, time span, entries skipped and why, queries
    written without `?`."""
    stats.files = report.files
    stats.first_event_at = report.first_event_at
    stats.last_event_at = report.last_event_at
    stats.skipped = Counter(report.skipped)
    stats.queries_without_question_mark = report.queries_without_question_mark
    return stats


def _ordered(counter: Counter[Any]) -> dict[Any, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], str(item[0]))))


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None
