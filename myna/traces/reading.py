"""The public entry points: `read` one trace file, `read_many` of them, as a stream of sessions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from os import PathLike
from pathlib import Path
from typing import BinaryIO

import myna.traces.builtin  # noqa: F401  (registers the built-in readers)
from myna.errors import TraceFormatError
from myna.traces.formats import (
    PEEK_BYTES,
    READERS,
    Peek,
    ReaderSpec,
    detect_format,
    register_reader,
)
from myna.traces.model import Session
from myna.traces.options import ReadOptions, ReadReport
from myna.traces.pseudonymise import Pseudonymiser
from myna.traces.source import Source

__all__ = ["READERS", "SessionStream", "read", "read_many", "register_reader"]

StrPath = str | PathLike[str]


class SessionStream(Iterator[Session]):
    """Sessions read lazily from one or more files, with a running report.

    A session longer than `ReadOptions.part_events` events is yielded as several parts that share
    its id, in order (the parts of different sessions may interleave, as HAR pages do). `report`
    counts files, sessions, events and skipped entries so far; `bytes_read` counts the bytes of
    the files read to their end, and `position` adds the file being read (for progress bars).
    """

    def __init__(
        self, paths: Iterable[StrPath], *, format: str | None, options: ReadOptions
    ) -> None:
        self.report = ReadReport()
        self.bytes_read = 0
        self._format = format
        self._options = options
        self._pseudonymiser = (
            Pseudonymiser(options.pseudonymise_key) if options.pseudonymise_key else None
        )
        self._file: BinaryIO | None = None
        self._sessions = self._read_all([Path(path) for path in paths])

    def __iter__(self) -> SessionStream:
        return self

    def __next__(self) -> Session:
        return next(self._sessions)

    @property
    def position(self) -> int:
        """Bytes consumed so far across all inputs, including the file being read."""
        current = self._file
        if current is None or current.closed:
            return self.bytes_read
        return self.bytes_read + current.tell()

    def _read_all(self, paths: list[Path]) -> Iterator[Session]:
        for path in paths:
            with _open(path) as file:
                self._file = file
                spec = _reader_for(path, file, self._format)
                source = Source(path, file, self._options, self.report, self._pseudonymiser)
                yield from spec.read(source)
                self.bytes_read += file.tell()
                self.report.files += 1
            self._file = None


def read(
    path: StrPath, *, format: str | None = None, options: ReadOptions | None = None
) -> SessionStream:
    """Read one trace file into sessions, streaming.

    `format` names a registered reader (`har`, `jsonl`, `openai-chat`, `openai-responses`,
    `anthropic`, `mcp`); by default it is detected from the start of the file. Credentials are
    always redacted; see `ReadOptions` for static assets, filters and pseudonymisation. Raises
    `TraceFormatError` naming the file and the entry or line when the input is malformed.
    """
    return SessionStream([path], format=format, options=options or ReadOptions())


def read_many(
    paths: Iterable[StrPath], *, format: str | None = None, options: ReadOptions | None = None
) -> SessionStream:
    """Read several trace files in order as one stream (one report, one pseudonymisation)."""
    return SessionStream(paths, format=format, options=options or ReadOptions())


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except OSError as error:
        raise TraceFormatError(
            f"cannot read the file: {error.strerror or error}", file=str(path)
        ) from None


def _reader_for(path: Path, file: BinaryIO, format: str | None) -> ReaderSpec:
    known = ", ".join(READERS)
    if format is not None:
        spec = READERS.get(format)
        if spec is None:
            raise TraceFormatError(
                f"unknown format {format!r}; expected one of {known}", file=str(path)
            )
        return spec
    try:
        head = file.read(PEEK_BYTES)
        file.seek(0)
    except OSError as error:
        raise TraceFormatError(
            f"cannot read the file: {error.strerror or error}", file=str(path)
        ) from None
    if not head.strip():
        # What `write_jsonl` writes when nothing passed the filters: an empty canonical trace.
        if path.suffix == ".jsonl":
            return READERS["jsonl"]
        raise TraceFormatError("the file is empty; expected a trace", file=str(path))
    name = detect_format(Peek.of(head))
    if name is None:
        raise TraceFormatError(
            f"cannot tell the trace format from the start of the file; "
            f"pass --format with one of {known}",
            file=str(path),
        )
    return READERS[name]
