"""The readers Myna knows, and which one a file is for.

A registry is a dict plus `register`; detection reads the header row (or, for JSON, takes the
ServiceNow reader) and picks the reader whose identifying columns the header has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from myna.errors import InputError
from myna.itsm.importers import bpic, servicenow, uci
from myna.itsm.importers.builder import HistoryBuilder
from myna.itsm.importers.model import SourceFormat
from myna.itsm.importers.table import Header, column_index, read_header


@dataclass(frozen=True, slots=True)
class Reader:
    name: SourceFormat
    description: str
    columns: frozenset[str]
    """Header columns (normalised, after aliases) that identify the format and must be present."""
    read: Callable[[Path, HistoryBuilder], dict[str, str]]
    aliases: Mapping[str, str]
    reads_json: bool = False


READERS: dict[str, Reader] = {}


def register(reader: Reader) -> None:
    if reader.name in READERS:
        raise ValueError(f"a reader named {reader.name!r} is already registered")
    READERS[reader.name] = reader


# Order matters for detection: the event log's columns are a superset of what identifies a
# ServiceNow export, so the more specific layouts are tried first.
register(
    Reader(
        "uci_event_log",
        'UCI "incident management process enriched event log": one row per incident update',
        uci.REQUIRED_COLUMNS,
        uci.read,
        {},
    )
)
register(
    Reader(
        "bpic2014",
        "BPI Challenge 2014 incident table (published or Kaggle column names)",
        bpic.COLUMNS,
        bpic.read,
        bpic.ALIASES,
    )
)
register(
    Reader(
        "servicenow",
        "ServiceNow list export of incident, problem, change_request (CSV or JSON)",
        servicenow.COLUMNS,
        servicenow.read,
        servicenow.LABELS,
        reads_json=True,
    )
)


def reader_for(path: Path, format: str | None = None) -> Reader:
    """The reader named `format`, or the one whose columns the file's header has."""
    if format is not None:
        reader = READERS.get(format)
        if reader is None:
            raise InputError(
                f"unknown format {format!r}; expected one of {', '.join(READERS)}", file=str(path)
            )
        if path.suffix.lower() == ".json":
            if not reader.reads_json:
                raise InputError(f"the {format} format is CSV, not JSON", file=str(path))
            return reader
        _check_columns(path, reader)
        return reader
    if path.suffix.lower() == ".json":
        return next(reader for reader in READERS.values() if reader.reads_json)
    header = _header(path)
    for reader in READERS.values():
        if not _missing(header, reader):
            return reader
    expected = "; ".join(
        f"{reader.name} needs {', '.join(sorted(reader.columns))}" for reader in READERS.values()
    )
    shown = ", ".join(header.columns[:8]) + (", ..." if len(header.columns) > 8 else "")
    raise InputError(
        f"cannot tell the format from the header ({shown}): {expected}",
        file=str(path),
        line=header.line,
    )


def _header(path: Path) -> Header:
    with path.open(newline="", encoding="utf-8-sig") as stream:
        return read_header(stream, path)


def _missing(header: Header, reader: Reader) -> list[str]:
    return sorted(reader.columns - column_index(header, reader.aliases).keys())


def _check_columns(path: Path, reader: Reader) -> None:
    header = _header(path)
    missing = _missing(header, reader)
    if missing:
        raise InputError(
            f"not a {reader.name} file: the header lacks {', '.join(missing)}",
            file=str(path),
            line=header.line,
        )
