"""Reading a CSV export: leading `# key: value` metadata lines, a header, rows with line numbers.

`Cells` wraps one row and turns each parser's `ValueError` into an `InputError` naming the file,
line and column (for a column that must hold a value) or into an `ImportIssue` (for one that may
be left empty), so readers state per column which of the two it is.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

from myna.errors import InputError
from myna.itsm.importers.model import ImportReport
from myna.itsm.importers.values import clean, is_missing

T = TypeVar("T")


def normalise_column(name: str) -> str:
    return "_".join(name.strip().lower().replace("#", "no").split())


@dataclass(frozen=True, slots=True)
class Header:
    columns: tuple[str, ...]
    """Normalised column names, in file order."""
    line: int
    metadata: dict[str, str]
    """`# key: value` lines before the header (Myna's synthetic exports label themselves so)."""


def read_header(stream: IO[str], path: Path) -> Header:
    metadata: dict[str, str] = {}
    line = 0
    for text in stream:
        line += 1
        stripped = text.strip()
        if stripped.startswith("#"):
            key, sep, value = stripped.lstrip("#").partition(":")
            if sep:
                metadata[key.strip()] = value.strip()
            continue
        if not stripped:
            continue
        columns = next(csv.reader([text]))
        return Header(tuple(normalise_column(c) for c in columns), line, metadata)
    raise InputError("the file is empty: expected a CSV header row", file=str(path), line=line + 1)


def rows(stream: IO[str], header: Header) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) for every non-blank row after the header."""
    reader = csv.reader(stream)
    for cells in reader:
        if not any(cell.strip() for cell in cells):
            continue
        yield header.line + reader.line_num, cells


class Cells:
    """One row's cells by column name, with typed accessors that know where they are."""

    __slots__ = ("_cells", "_index", "line", "path", "report")

    def __init__(
        self,
        cells: Sequence[str],
        index: Mapping[str, int],
        *,
        line: int,
        path: Path,
        report: ImportReport,
    ) -> None:
        self._cells = cells
        self._index = index
        self.line = line
        self.path = path
        self.report = report

    def raw(self, column: str) -> str | None:
        position = self._index.get(column)
        if position is None or position >= len(self._cells):
            return None
        return self._cells[position]

    def text(self, column: str) -> str | None:
        return clean(self.raw(column))

    def required(self, column: str, parse: Callable[[str | None], T | None]) -> T:
        value = self.raw(column)
        if is_missing(value):
            raise InputError(
                "a value is required here", file=str(self.path), line=self.line, field=column
            )
        try:
            parsed = parse(value)
        except ValueError as invalid:
            raise InputError(
                str(invalid), file=str(self.path), line=self.line, field=column
            ) from None
        assert parsed is not None
        return parsed

    def attempt(
        self, column: str, parse: Callable[[str | None], T | None]
    ) -> tuple[T | None, str | None]:
        """The parsed value, or None and why not, for a caller that reports it in its own words."""
        try:
            return parse(self.raw(column)), None
        except ValueError as invalid:
            return None, str(invalid)

    def optional(self, column: str, parse: Callable[[str | None], T | None]) -> T | None:
        value = self.raw(column)
        try:
            return parse(value)
        except ValueError as invalid:
            assert value is not None
            self.report.add(self.line, column, value, "invalid", f"{invalid}; left empty")
            return None


def column_index(header: Header, aliases: Mapping[str, str] | None = None) -> dict[str, int]:
    """Canonical column name -> position; aliases map other spellings onto canonical names."""
    index: dict[str, int] = {}
    for position, name in enumerate(header.columns):
        canonical = (aliases or {}).get(name, name)
        index.setdefault(canonical, position)
    return index
