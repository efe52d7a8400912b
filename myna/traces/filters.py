"""Which events to keep: by host, path prefix, method, status and time range.

Host, path, method and status apply to HTTP exchanges only; the time range applies to every event
that carries a timestamp (an event without one is kept, since nothing says it is out of range).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from myna.errors import InputError
from myna.traces.model import Event, Exchange

_STATUS_CLASS = re.compile(r"^([1-5])xx$", re.IGNORECASE)
_STATUS_RANGE = re.compile(r"^(\d{3})-(\d{3})$")
_STATUS_ONE = re.compile(r"^\d{3}$")


@dataclass(frozen=True, slots=True)
class StatusRange:
    """An inclusive range of HTTP status codes (`404`, `4xx` and `200-299` all parse to one)."""

    low: int
    high: int

    def __contains__(self, status: object) -> bool:
        return isinstance(status, int) and self.low <= status <= self.high


def parse_status(text: str) -> StatusRange:
    """Parse `404`, `4xx` or `200-299` into a `StatusRange`."""
    spec = text.strip()
    if _STATUS_ONE.match(spec):
        return StatusRange(int(spec), int(spec))
    if match := _STATUS_CLASS.match(spec):
        digit = int(match.group(1))
        return StatusRange(digit * 100, digit * 100 + 99)
    if match := _STATUS_RANGE.match(spec):
        low, high = int(match.group(1)), int(match.group(2))
        if low <= high:
            return StatusRange(low, high)
    raise InputError(
        f"bad status filter {text!r}; expected a code (404), a class (4xx) or a range (200-299)",
        field="status",
    )


def parse_time(text: str, *, field: str) -> datetime:
    """Parse an ISO 8601 time for `--since`/`--until`; a time without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(
            f"bad time {text!r}; expected ISO 8601 such as 2024-05-01 or 2024-05-01T12:00:00Z",
            field=field,
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Filters:
    """Conditions an event must meet to be kept. Empty tuples and `None` mean "any"."""

    hosts: tuple[str, ...] = ()
    path_prefixes: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    statuses: tuple[StatusRange, ...] = ()
    since: datetime | None = None
    until: datetime | None = None

    @classmethod
    def build(
        cls,
        *,
        hosts: Iterable[str] = (),
        path_prefixes: Iterable[str] = (),
        methods: Iterable[str] = (),
        statuses: Iterable[str] = (),
        since: str | None = None,
        until: str | None = None,
    ) -> Filters:
        """Build filters from the strings a user typed (normalising case, parsing ranges)."""
        return cls(
            hosts=tuple(host.lower() for host in hosts),
            path_prefixes=tuple(path_prefixes),
            methods=tuple(method.upper() for method in methods),
            statuses=tuple(parse_status(status) for status in statuses),
            since=parse_time(since, field="since") if since else None,
            until=parse_time(until, field="until") if until else None,
        )

    @property
    def active(self) -> bool:
        return bool(
            self.hosts
            or self.path_prefixes
            or self.methods
            or self.statuses
            or self.since
            or self.until
        )

    def keeps(self, event: Event) -> bool:
        """Whether `event` passes every condition."""
        if (self.since or self.until) and not self._in_time_range(event):
            return False
        if isinstance(event, Exchange):
            return self._keeps_exchange(event)
        return True

    def _in_time_range(self, event: Event) -> bool:
        moment = event.started_at
        if moment is None:
            return True
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        if self.since and moment < self.since:
            return False
        return not (self.until and moment > self.until)

    def _keeps_exchange(self, exchange: Exchange) -> bool:
        if self.methods and exchange.method.upper() not in self.methods:
            return False
        if self.statuses and not any(exchange.status in band for band in self.statuses):
            return False
        if self.hosts:
            netloc = exchange.host.lower()
            if netloc not in self.hosts and _hostname(netloc) not in self.hosts:
                return False
        return not (
            self.path_prefixes
            and not any(exchange.path.startswith(prefix) for prefix in self.path_prefixes)
        )


def _hostname(netloc: str) -> str:
    """`user@host:443` -> `host`, so that a filter on a bare host matches whatever the port."""
    host = netloc.rpartition("@")[2]
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.partition(":")[0]
