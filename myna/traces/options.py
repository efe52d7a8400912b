"""What a reader is asked to do (options) and what it reports back (counts of what it skipped)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from myna.traces.filters import Filters

DEFAULT_PART_EVENTS = 1000
"""A long session is yielded in consecutive parts of at most this many events (same session id),
so that a 1 GB single-session HAR never has to sit in memory at once."""

DEFAULT_PART_BYTES = 32 * 1024 * 1024
"""...or of at most roughly this many bytes of body text, whichever comes first."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Options every reader honours.

    `pseudonymise_key` turns on pseudonymisation of e-mail addresses, phone numbers and person
    names, keyed by this secret (same key, same fake values across a corpus). Redaction of
    credentials is always on and has no option.
    """

    include_static: bool = False
    filters: Filters = field(default_factory=Filters)
    pseudonymise_key: str | None = None
    part_events: int = DEFAULT_PART_EVENTS
    part_bytes: int = DEFAULT_PART_BYTES


@dataclass(slots=True)
class ReadReport:
    """What reading did: counts a user sees in the import summary.

    `skipped` maps a reason (`static`, `websocket`, `non_http`, `filtered`) to how many entries
    or events were left out for it; nothing is dropped without being counted here.
    `queries_without_question_mark` counts the exchanges whose URL had its query written without
    a `?` (`/groups.json&page=2`), read as a query.
    """

    files: int = 0
    sessions: int = 0
    events: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    queries_without_question_mark: int = 0
    first_event_at: datetime | None = None
    last_event_at: datetime | None = None
