"""Parsed models kept between runs, so a start does not parse a large model file again.

Turning the ITSM back end's model (950 KB of YAML) into a `ServiceModel` costs about half a
second of CPU (PyYAML builds the document in Python, then pydantic validates it); validating the
same model from its JSON dump costs a tenth of that. So `openapi.loads` keeps each large model it
parses as JSON in a cache folder and reads that on the next load of the same text.

A cached entry is named by a hash of everything the parse depends on: the text, Myna's version,
pydantic's version and the source of the two modules that turn text into a model
(`openapi.py`, `model.py`), so an edited model file, another release or a development tree's
edit of the loader each miss the old entry. Entries are JSON validated on the way in, never
pickles: a file in the folder is data, not code. The folder is `MYNA_CACHE_DIR`, else
`$XDG_CACHE_HOME/myna`, else `~/.cache/myna` (its `models/` folder); `MYNA_CACHE_DIR=off` turns
the cache off. A folder that cannot be written to only means every load parses.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

import pydantic

from myna import __version__
from myna.schemas.model import ServiceModel

# Below this size a parse costs about what reading a cached entry does (the ERP model, 96 KB,
# parses in 0.05 s), so small models, hand-written ones and tests' are not cached.
MIN_CACHED_BYTES = 128 * 1024
# Entries kept: each is one model version (0.1-1 MB); the oldest go first.
KEPT_ENTRIES = 32


def cached_parse(text: str, parse: Callable[[str], ServiceModel]) -> ServiceModel:
    """`parse(text)`, or the model an earlier parse of the same text left in the cache."""
    folder = cache_folder()
    if folder is None or len(text) < MIN_CACHED_BYTES:
        return parse(text)
    entry = folder / f"{_key(text)}.json"
    try:
        return ServiceModel.model_validate_json(entry.read_bytes())
    except (OSError, ValueError):
        pass  # missing, unreadable, or not what this Myna writes: parse again
    model = parse(text)
    _store(entry, model.model_dump_json().encode("utf-8"))
    return model


def cached_data(kind: str, parts: Iterable[str], make: Callable[[], Any]) -> Any:
    """`make()`, or the JSON data an earlier call with the same `parts` (everything the data
    depends on) left in the cache's folder `kind`. Data that JSON would not give back equal (a
    tuple, a NaN, a value JSON has no type for) is made on every call, never kept."""
    import orjson  # the mocks' data (the `serve` extra), not the lean core's model loading

    folder = cache_folder(kind)
    if folder is None:
        return make()
    entry = folder / f"{_digest(parts)}.json"
    try:
        return orjson.loads(entry.read_bytes())
    except (OSError, ValueError):
        pass  # missing, unreadable, or not JSON: make it again
    data = make()
    try:
        text = orjson.dumps(data)
    except TypeError:
        return data
    if orjson.loads(text) == data:
        _store(entry, text)
    return data


def cache_folder(kind: str = "models") -> Path | None:
    """Where parsed models (or other `kind`s of entries) are kept, or None when
    `MYNA_CACHE_DIR=off`."""
    chosen = os.environ.get("MYNA_CACHE_DIR")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen) / kind
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "myna" / kind


def _key(text: str) -> str:
    return _digest((pydantic.VERSION, _loader_source(), text))


def _digest(parts: Iterable[str]) -> str:
    made_of = hashlib.sha256()
    for part in (__version__, *parts):
        made_of.update(part.encode("utf-8", "surrogatepass"))
        made_of.update(b"\0")
    return made_of.hexdigest()[:32]


@cache
def _loader_source() -> str:
    from myna.schemas import model, openapi  # openapi imports this module

    return sources(openapi.__file__, model.__file__)


def sources(*paths: str | None) -> str:
    """The text of the modules at `paths`: what an entry made by their code depends on."""
    try:
        return "".join(Path(path).read_text(encoding="utf-8") for path in paths if path)
    except OSError:  # a package that ships no sources: its version says it all
        return ""


def _store(entry: Path, text: bytes) -> None:
    """Write the entry in one step (a reader finds it whole), then drop the oldest beyond
    `KEPT_ENTRIES`. A folder that cannot be written to is left as it is."""
    partial = entry.with_name(f"{entry.stem}.{os.getpid()}.partial")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(text)
        partial.replace(entry)
    except OSError:
        with suppress(OSError):
            partial.unlink(missing_ok=True)
        return
    with suppress(OSError):  # another process pruning at the same time
        entries = sorted(entry.parent.glob("*.json"), key=lambda found: found.stat().st_mtime)
        for old in entries[:-KEPT_ENTRIES]:
            old.unlink(missing_ok=True)
