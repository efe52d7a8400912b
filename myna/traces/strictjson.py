"""JSON parsing that refuses NaN and Infinity, which Python's `json` accepts but JSON forbids.

Readers parse with these so that what they produce can always be written back as JSON: a value
that cannot be is refused where it was read, with its file and line, not later at write time.
"""

from __future__ import annotations

import json
from typing import IO, Any


def loads(text: str | bytes) -> Any:
    return json.loads(text, parse_constant=_refuse)


def load(file: IO[bytes]) -> Any:
    return json.load(file, parse_constant=_refuse)


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
