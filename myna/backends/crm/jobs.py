"""What the org remembers of a bulk job between calls (Bulk API 2.0 and 1.0): plain data.

A job is a server's memory, like a query cursor, not a record: the reference org keeps its jobs
in a dictionary, the served org beside each world in the serving process (`extension.py`).
`bulk.py` is the protocol over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Outcome:
    """One record's result in a bulk or collection write: its id and whether it was created,
    or the refusal (Salesforce's code, message and fields); `sent` is what the client sent for
    it, as the results repeat it."""

    sent: dict[str, str]
    record_id: str | None = None
    created: bool = False
    code: str | None = None
    message: str = ""
    fields: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.code is None


@dataclass(slots=True)
class Batch:
    """A Bulk API 1.0 batch: its records' outcomes, or a query's records (JSON, rendered)."""

    id: str
    created: str
    outcomes: list[Outcome] = field(default_factory=list)
    records: list[dict[str, Any]] | None = None
    request: Any = None
    failure: str | None = None


@dataclass(slots=True)
class Job:
    """A bulk job: what it does (`operation` on `object`, or a query), its state, and what it
    did. `version` is the API's ('v59.0' for 2.0, '59.0' for 1.0, which has `batches`)."""

    id: str
    kind: str  # "ingest", "query" (Bulk API 2.0) or "async" (1.0)
    operation: str
    object: str
    version: str
    created_by: str
    created: str
    state: str
    external_id: str | None = None
    delimiter: str = "COMMA"
    line_ending: str = "LF"
    query: str | None = None
    upload: str = ""
    outcomes: list[Outcome] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    batches: dict[str, Batch] = field(default_factory=dict)
    modstamp: str = ""
    error: str | None = None
