"""Canonical JSONL written while traffic happens (`myna record`), one complete line per event.

A `Recorder` is the live counterpart of a reader: each event it is given passes the same filters,
redaction and pseudonymisation as an imported one (`Source.admit`), then is written as one line
and flushed. The file holds one session: its header line is written first, so whatever stops
the recording (Ctrl-C, a crash, a closed terminal) leaves a file that reads as canonical JSONL up
to the last event written.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from myna.errors import InputError
from myna.traces.jsonl import encode_line, event_line, session_line
from myna.traces.model import Event, Session
from myna.traces.options import ReadOptions, ReadReport
from myna.traces.pseudonymise import Pseudonymiser
from myna.traces.source import Source


class Recorder:
    """Appends admitted events of one session to a canonical JSONL file as they happen."""

    def __init__(self, path: Path, session: Session, options: ReadOptions | None = None) -> None:
        options = options or ReadOptions()
        self.path = path
        self.session = session
        self.report = ReadReport(files=1, sessions=1)
        key = options.pseudonymise_key
        pseudonymiser = Pseudonymiser(key) if key else None
        # Admission is what every reader applies; nothing is read from this source's file.
        self._gate = Source(path, io.BytesIO(), options, self.report, pseudonymiser)
        self._lock = threading.Lock()
        try:
            self._file = path.open("w", encoding="utf-8")
        except OSError as error:
            raise InputError(
                f"cannot write the recording: {error.strerror or error}", file=str(path)
            ) from None
        self._write(encode_line(session_line(session), session.id, None))

    def record(self, event: Event) -> bool:
        """Filter, redact and write `event`; `False` when a filter left it out."""
        if not self._gate.admit(event):
            return False
        line = encode_line(event_line(event, self.session.id), self.session.id, event.id)
        self._write(line)
        return True

    def update_metadata(self, **values: Any) -> None:
        """Merge `values` into the session's metadata, written as a repeated header line: what
        follows it belongs to the same session, which a reader joins with what came before."""
        self.session.metadata.update(values)
        self._write(encode_line(session_line(self.session), self.session.id, None))

    def _write(self, line: str) -> None:
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
