"""The public entry points: `read` one trace file, `read_many` of them, as a stream of sessions."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
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
        # Which file first produced each session id: a later file that produces it again (ids
        # read from the content, as canonical JSONL and transcripts carry them) gets its own.
        first_file: dict[str, int] = {}
        for index, (path, key) in enumerate(zip(paths, file_keys(paths), strict=True)):
            with _open(path) as file:
                self._file = file
                spec = _reader_for(path, file, self._format)
                source = Source(
                    path, file, self._options, self.report, self._pseudonymiser, key=key
                )
                for session in spec.read(source):
                    if first_file.setdefault(session.id, index) != index:
                        _qualify(session, key)
                        first_file.setdefault(session.id, index)
                    yield session
                self.bytes_read += file.tell()
                self.report.files += 1
            self._file = None


def read(
    path: StrPath, *, format: str | None = None, options: ReadOptions | None = None
) -> SessionStream:
    """Read one trace file into sessions, streaming.

    `format` names a registered reader (`har`, `vcr`, `nock`, `jsonl`, `openai-chat`,
    `openai-responses`, `anthropic`, `mcp`); by default it is detected from the start of the
    file. Credentials are always redacted; see `ReadOptions` for static assets, filters and
    pseudonymisation. Raises `TraceFormatError` naming the file and the entry or line when the
    input is malformed.
    """
    return SessionStream([path], format=format, options=options or ReadOptions())


def read_many(
    paths: Iterable[StrPath], *, format: str | None = None, options: ReadOptions | None = None
) -> SessionStream:
    """Read several trace files in order as one stream (one report, one pseudonymisation)."""
    return SessionStream(paths, format=format, options=options or ReadOptions())


def file_keys(paths: Sequence[Path]) -> list[str]:
    """A name for each input file, unique within the import and the same on every run.

    A file's stem, when no other input has that stem; otherwise its path below the deepest folder
    holding all the inputs with that stem (`gitlab/fetch-users`, `snipe-it/fetch-users`), with
    the suffix when only the suffix tells them apart. A name still taken (the same file given
    twice) gets `~2`, `~3`, ... in input order.
    """
    by_stem: dict[str, list[int]] = defaultdict(list)
    for index, path in enumerate(paths):
        by_stem[path.stem].append(index)
    names = [path.stem for path in paths]
    for indexes in by_stem.values():
        resolved = [paths[index].resolve() for index in indexes]
        if len(set(resolved)) < 2:
            continue
        common = Path(os.path.commonpath([path.parent for path in resolved]))
        relative = [path.relative_to(common) for path in resolved]
        qualified = [path.with_suffix("").as_posix() for path in relative]
        if len(set(qualified)) < len(set(resolved)):
            qualified = [path.as_posix() for path in relative]
        for index, name in zip(indexes, qualified, strict=True):
            names[index] = name
    return _numbered(names)


def _numbered(names: list[str]) -> list[str]:
    taken: set[str] = set()
    unique = []
    for name in names:
        candidate, number = name, 1
        while candidate in taken:
            number += 1
            candidate = f"{name}~{number}"
        taken.add(candidate)
        unique.append(candidate)
    return unique


def _qualify(session: Session, key: str) -> None:
    """Prefix a session's id and its events' ids with its file's key (see `_read_all`)."""
    session.id = f"{key}/{session.id}"
    for event in session.events:
        event.id = f"{key}/{event.id}"


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
