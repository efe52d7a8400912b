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
from collections.abc import Callable
from contextlib import suppress
from functools import cache
from pathlib import Path

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
    _store(entry, model)
    return model


def cache_folder() -> Path | None:
    """Where parsed models are kept, or None when `MYNA_CACHE_DIR=off`."""
    chosen = os.environ.get("MYNA_CACHE_DIR")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen) / "models"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "myna" / "models"


def _key(text: str) -> str:
    made_of = hashlib.sha256()
    for part in (__version__, pydantic.VERSION, _loader_source(), text):
        made_of.update(part.encode("utf-8", "surrogatepass"))
        made_of.update(b"\0")
    return made_of.hexdigest()[:32]


@cache
def _loader_source() -> str:
    from myna.schemas import model, openapi  # openapi imports this module

    paths = (openapi.__file__, model.__file__)
    try:
        return "".join(Path(path).read_text(encoding="utf-8") for path in paths if path)
    except OSError:  # a package that ships no sources: its version says it all
        return ""


def _store(entry: Path, model: ServiceModel) -> None:
    """Write the entry in one step (a reader finds it whole), then drop the oldest beyond
    `KEPT_ENTRIES`. A folder that cannot be written to is left as it is."""
    partial = entry.with_name(f"{entry.stem}.{os.getpid()}.partial")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(model.model_dump_json(), encoding="utf-8")
        partial.replace(entry)
    except OSError:
        with suppress(OSError):
            partial.unlink(missing_ok=True)
        return
    with suppress(OSError):  # another process pruning at the same time
        entries = sorted(entry.parent.glob("*.json"), key=lambda found: found.stat().st_mtime)
        for old in entries[:-KEPT_ENTRIES]:
            old.unlink(missing_ok=True)
