"""The registry of trace readers and format auto-detection.

A reader is a function from an open `Source` to sessions. Each is registered under a format name
(what `--format` takes) with a detector: a pure function over the first bytes of a file. Detection
asks the detectors in registration order and takes the first that answers yes, so the specific
formats register before the general ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from myna.traces.model import Session
from myna.traces.source import Source

PEEK_BYTES = 64 * 1024

Reader = Callable[[Source], Iterator[Session]]


@dataclass(frozen=True, slots=True)
class Peek:
    """The start of a file, as detectors see it.

    `text` is the first `PEEK_BYTES` decoded leniently, with leading whitespace removed;
    `first_value` is the first line parsed as JSON when that line is complete and parses (the
    JSON Lines case), else `None`.
    """

    text: str
    first_value: Any

    @classmethod
    def of(cls, head: bytes) -> Peek:
        text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
        first_line, newline, _ = text.partition("\n")
        first_value: Any = None
        if newline or len(head) < PEEK_BYTES:
            try:
                first_value = json.loads(first_line)
            except ValueError:
                first_value = None
        return cls(text=text, first_value=first_value)


Detector = Callable[[Peek], bool]


@dataclass(frozen=True, slots=True)
class ReaderSpec:
    name: str
    read: Reader
    detect: Detector
    description: str


READERS: dict[str, ReaderSpec] = {}


def register_reader(name: str, read: Reader, *, detect: Detector, description: str) -> None:
    """Add a reader under a format name; registering a name twice is a mistake and raises."""
    if name in READERS:
        raise ValueError(f"a trace reader named {name!r} is already registered")
    READERS[name] = ReaderSpec(name=name, read=read, detect=detect, description=description)


def detect_format(peek: Peek) -> str | None:
    """The name of the first registered format whose detector accepts `peek`, if any."""
    for spec in READERS.values():
        if spec.detect(peek):
            return spec.name
    return None
