"""Import a company's ITSM data (ticket exports, event logs) as a typed incident history.

`import_history` reads a file in any registered format (detected from its header unless named)
and returns the history with an `ImportReport` of everything it could not map;
`to_servicenow_records` turns the history into ServiceNow Table API records per table, and
`check_records` lists what keeps such records from being a consistent world.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

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
from myna.itsm.importers.names import realistic_names
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
    "realistic_names",
    "register",
    "stable_sys_id",
    "to_servicenow_records",
]


T = TypeVar("T")


def import_history(
    path: str | Path,
    *,
    format: str | None = None,
    pseudonymise_key: str | bytes | None = None,
    names_seed: int | None = None,
) -> tuple[IncidentHistory, ImportReport]:
    """Read `path` as an incident history.

    `path` is one export, or a directory whose `.csv` and `.json` exports (read in name order)
    make one history together: ServiceNow exports come a table per file. `format` names a
    registered reader (`uci_event_log`, `bpic2014`, `servicenow`); by default it is detected
    from each file's header, and all files must be of one format. With `pseudonymise_key`,
    every person becomes a consistent fake persona (keyed HMAC; see `myna.itsm.pseudonymise`)
    and their names are replaced in free text. With `names_seed`, kinds the source codes as a
    word and a number ("Group 56", "Symptom 72", "Caller 2403") get realistic names, the same
    for the same seed (`myna.itsm.importers.names`). Raises `InputError` naming the file, line and
    column when the input cannot be read as asked.
    """
    source = Path(path)
    files = _files(source)
    readers = [(file, _reader(file, format)) for file in files]
    first_file, reader = readers[0]
    for file, other in readers[1:]:
        if other.name != reader.name:
            raise InputError(
                f"is a {other.name} export, but {first_file.name} is {reader.name}; "
                "a directory is imported as one history, so its files must share a format",
                file=str(file),
            )
    report = ImportReport(str(source), reader.name)
    pseudonymiser = Pseudonymiser(pseudonymise_key) if pseudonymise_key else None
    builder = HistoryBuilder(str(source), reader.name, report, pseudonymiser)
    metadata: dict[str, str] = {}
    for file, _ in readers:
        report.files.append(str(file))
        metadata.update(_guarded(file, partial(reader.read, file, builder)))
    history = builder.build(metadata)
    return (history if names_seed is None else realistic_names(history, names_seed)), report


def _files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.suffix.lower() in (".csv", ".json"))
        if not files:
            raise InputError("the directory holds no .csv or .json export", file=str(source))
        return files
    raise InputError("no such file or directory", file=str(source))


def _reader(file: Path, format: str | None) -> Reader:
    return _guarded(file, lambda: reader_for(file, format))


def _guarded(file: Path, read: Callable[[], T]) -> T:
    """`read()`, with undecodable text and broken CSV quoting as InputErrors naming `file`."""
    try:
        return read()
    except UnicodeDecodeError as invalid:
        raise InputError(
            f"not UTF-8 text (byte {invalid.start}); re-export the file as UTF-8", file=str(file)
        ) from None
    except csv.Error as invalid:
        raise InputError(f"malformed CSV: {invalid}", file=str(file)) from None
