"""Import a company's ITSM data (ticket exports, event logs) as a typed incident history.

`import_history` reads a file in any registered format (detected from its header unless named)
and returns the history with an `ImportReport` of everything it could not map;
`to_servicenow_records` turns the history into ServiceNow Table API records per table, and
`check_records` lists what keeps such records from being a consistent world.
"""

from __future__ import annotations

import csv
from pathlib import Path

from myna.errors import InputError
from myna.itsm.importers.builder import HistoryBuilder
from myna.itsm.importers.consistency import Finding, check_records
from myna.itsm.importers.model import (
    Category,
    ChangeRequest,
    ConfigurationItem,
    FieldChange,
    Group,
    ImportIssue,
    ImportReport,
    Incident,
    IncidentHistory,
    JournalEntry,
    Location,
    Problem,
    Reassignment,
    Reopening,
    Resolution,
    StateChange,
    User,
    stable_sys_id,
)
from myna.itsm.importers.records import TABLES, to_servicenow_records
from myna.itsm.importers.registry import READERS, Reader, reader_for, register
from myna.itsm.importers.values import HoldReason, IncidentState
from myna.itsm.pseudonymise import Pseudonymiser

__all__ = [
    "READERS",
    "TABLES",
    "Category",
    "ChangeRequest",
    "ConfigurationItem",
    "FieldChange",
    "Finding",
    "Group",
    "HoldReason",
    "ImportIssue",
    "ImportReport",
    "Incident",
    "IncidentHistory",
    "IncidentState",
    "JournalEntry",
    "Location",
    "Problem",
    "Reader",
    "Reassignment",
    "Reopening",
    "Resolution",
    "StateChange",
    "User",
    "check_records",
    "import_history",
    "register",
    "stable_sys_id",
    "to_servicenow_records",
]


def import_history(
    path: str | Path,
    *,
    format: str | None = None,
    pseudonymise_key: str | bytes | None = None,
) -> tuple[IncidentHistory, ImportReport]:
    """Read `path` as an incident history.

    `format` names a registered reader (`uci_event_log`, `bpic2014`, `servicenow`); by default it
    is detected from the header. With `pseudonymise_key`, every person becomes a consistent fake
    persona (keyed HMAC; see `myna.itsm.pseudonymise`) and known names are replaced in free text.
    Raises `InputError` naming the file, line and column when the input cannot be read as asked.
    """
    source = Path(path)
    if not source.is_file():
        raise InputError("no such file", file=str(source))
    try:
        reader = reader_for(source, format)
        report = ImportReport(str(source), reader.name)
        pseudonymiser = Pseudonymiser(pseudonymise_key) if pseudonymise_key else None
        builder = HistoryBuilder(str(source), reader.name, report, pseudonymiser)
        metadata = reader.read(source, builder)
    except UnicodeDecodeError as invalid:
        raise InputError(
            f"not UTF-8 text (byte {invalid.start}); re-export the file as UTF-8", file=str(source)
        ) from None
    except csv.Error as invalid:
        raise InputError(f"malformed CSV: {invalid}", file=str(source)) from None
    return builder.build(metadata), report
