"""The items of a JSON file's main array, parsed whole when small and streamed when large.

Cassettes and nock recordings hold their exchanges in one array: the whole file (nock), or one
member of the top-level object (`interactions`, `http_interactions`). A file up to
`WHOLE_FILE_BYTES` is parsed in one go with the C `json` module; a larger one is streamed item by
item with ijson, so memory follows the largest item, not the file. Both paths give the same items
and the same errors (a malformed small file is re-read by the streaming parser to find the item at
fault).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import ijson

from myna.traces import strictjson
from myna.traces.source import Source

WHOLE_FILE_BYTES = 16 * 1024 * 1024


def array_items(source: Source, key: str | None) -> Iterator[tuple[int, Any, int]]:
    """The numbered items of the top-level array (`key=None`) or of the top-level object's
    array member `key`, each with its rough size in bytes (its share of a file parsed whole; the
    bytes read while it was streamed); raises naming the file, and the item where one is broken."""
    start = content_start(source)
    small = load_small(source, start, WHOLE_FILE_BYTES)
    if small:
        items = _member(small[0], key, source)
        share = (source.file.tell() - start) // max(len(items), 1)
        return ((index, item, share) for index, item in enumerate(items))
    _check_outline(source, key)
    source.file.seek(start)
    return _with_bytes_read(source, streamed_items(source, f"{key}.item" if key else "item"))


def _with_bytes_read(
    source: Source, items: Iterator[tuple[int, Any]]
) -> Iterator[tuple[int, Any, int]]:
    position = source.file.tell()
    for index, item in items:
        now = source.file.tell()  # moves a buffer at a time: right in sum, not item by item
        yield index, item, now - position
        position = now


def load_small(source: Source, start: int, limit: int) -> list[Any]:
    """`[document]` when the file from `start` is at most `limit` bytes of valid JSON; else `[]`,
    with the file back at `start` for the streaming parser (which says where the fault is)."""
    if os.fstat(source.file.fileno()).st_size - start <= limit:
        try:
            return [strictjson.load(source.file)]
        except (ValueError, UnicodeDecodeError):
            source.file.seek(start)
    return []


def _member(document: Any, key: str | None, source: Source) -> list[Any]:
    if key is None:
        if not isinstance(document, list):
            raise source.error("expected a JSON array at the top level", field="")
        return document
    if not isinstance(document, dict):
        raise source.error(f"expected a JSON object with an `{key}` array", field="")
    items = document.get(key)
    if not isinstance(items, list):
        raise source.error("expected an array", field=key)
    return items


def _check_outline(source: Source, key: str | None) -> None:
    """Check, up to the start of the array, that the file has the expected outline."""
    try:
        for prefix, event, _ in ijson.parse(source.file):
            if prefix == "" and key is None:
                if event != "start_array":
                    raise source.error("expected a JSON array at the top level", field="")
                return
            if prefix == "" and event not in ("start_map", "map_key", "end_map"):
                raise source.error(f"expected a JSON object with an `{key}` array", field="")
            if prefix == key:
                if event != "start_array":
                    raise source.error("expected an array", field=key)
                return
    except ijson.JSONError as error:
        raise source.error(
            f"invalid or truncated JSON near byte {source.file.tell()}: {first_line(error)}"
        ) from None
    raise source.error("expected an array", field=key)


def streamed_items(source: Source, prefix: str) -> Iterator[tuple[int, Any]]:
    """The numbered values at `prefix`, built one at a time by ijson's C backend."""
    items = ijson.items(source.file, prefix, use_float=True)
    index = 0
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except ijson.JSONError as error:
            raise source.error(
                f"invalid or truncated JSON near byte {source.file.tell()}: {first_line(error)}",
                entry=index,
            ) from None
        yield index, item
        index += 1


def content_start(source: Source) -> int:
    """Skip a UTF-8 byte order mark (Fiddler writes one), which the JSON parser rejects."""
    start = 3 if source.file.read(3) == b"\xef\xbb\xbf" else 0
    source.file.seek(start)
    return start


def first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
