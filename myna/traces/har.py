"""HAR 1.2 reader (browsers, proxies, Polly.js), streaming with ijson.

A file larger than `WHOLE_FILE_BYTES` is streamed: each `log.entries[i]` is built by ijson,
converted to an `Exchange` and released, so memory depends on the largest entry, not on the file;
`log.pages`, `log.creator` and Polly's `log._recordingName` are read from the part of the file
before `log.entries`. Smaller files are parsed in one go, which is faster. Both paths give the
same sessions and the same errors (a malformed small file is re-read by the streaming parser to
find the entry at fault).

Sessions: an entry with a `pageref` belongs to the session `<file key>/<pageref>`; entries without
one go to the session `<file key>` (the file's stem, qualified by its folders when another input
of the same import shares the stem: see `reading.file_keys`). Page titles reach the session
metadata; in a streamed file, only when `pages` comes before `entries`, as the HAR specification
orders them (Polly writes `pages` after `entries`, but leaves it empty). Exchange ids are
`<file key>#<entry index>`: stable across runs and unique within an import, where Polly's `_id` is
not (it hashes the request, so repeats collide).

Entries that are not API traffic are counted in the report and left out: static assets (images,
fonts, scripts, styles; kept with `include_static`), WebSocket connections and non-HTTP URLs.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import ijson

from myna.traces import strictjson
from myna.traces.formats import Peek
from myna.traces.jsonarray import content_start, first_line, load_small, streamed_items
from myna.traces.model import Body, Exchange, Pairs, Session, header_value
from myna.traces.recorded import decode_body, hex_bytes, parse_body, skip_reason, url_query
from myna.traces.source import PartBuffer, Source

STATIC_RESOURCE_TYPES = frozenset({"image", "font", "script", "stylesheet", "media", "manifest"})

_ENTRY_PREFIX = "log.entries.item"

WHOLE_FILE_BYTES = 16 * 1024 * 1024
"""Files up to this size are parsed in one go (C `json`, about 2.5x ijson's speed); larger ones
are streamed entry by entry, so memory stays flat whatever the size."""
_LOG_KEY = re.compile(r'^\{\s*(?:"[^"]*"\s*:\s*(?:"[^"]*"|[^{\[,]*)\s*,\s*)*"log"\s*:\s*\{')


def looks_like_har(peek: Peek) -> bool:
    """A JSON object whose `log` member is an object (after any scalar members)."""
    return bool(_LOG_KEY.match(peek.text))


def read_har(source: Source) -> Iterator[Session]:
    """Yield the sessions of one HAR file (see the module docstring for the mapping)."""
    prelude, entries = _open_entries(source)
    options = source.options
    buffers: dict[str, PartBuffer] = {}
    buffered_events = buffered_bytes = 0
    for index, entry in entries:
        if not isinstance(entry, dict):
            raise source.error("expected an object", entry=index, field=f"log.entries[{index}]")
        skip = _skip_reason(entry, include_static=options.include_static)
        if skip:
            source.report.skipped[skip] += 1
            continue
        exchange, size = _exchange(entry, source, index)
        if not source.admit(exchange, walk_json=False):
            continue
        pageref = entry.get("pageref")
        session_id = f"{source.key}/{pageref}" if pageref else source.key
        buffer = buffers.get(session_id)
        if buffer is None:
            buffer = buffers[session_id] = PartBuffer(
                _session_header(session_id, pageref, prelude, source),
                options.part_events,
                options.part_bytes,
            )
        buffer.hold(exchange, size)
        buffered_events += 1
        buffered_bytes += size
        if buffered_events >= options.part_events or buffered_bytes >= options.part_bytes:
            # The bound is on what all open sessions hold together: pages interleave, and a
            # finished page's tail would otherwise wait in memory for the end of the file.
            yield from _flush_all(buffers, source)
            buffered_events = buffered_bytes = 0
    yield from _flush_all(buffers, source)


def _flush_all(buffers: dict[str, PartBuffer], source: Source) -> Iterator[Session]:
    for buffer in buffers.values():
        if buffer.events:
            source.report.sessions += buffer.parts_yielded == 0
            yield buffer.flush()


def _open_entries(source: Source) -> tuple[_Prelude, Iterator[tuple[int, Any]]]:
    """The prelude and the numbered entries: parsed whole when small, streamed otherwise."""
    start = content_start(source)
    small = load_small(source, start, WHOLE_FILE_BYTES)
    if small:
        return _from_document(small[0], source)
    prelude = _read_prelude(source)
    source.file.seek(start)
    return prelude, streamed_items(source, _ENTRY_PREFIX)


def _from_document(document: Any, source: Source) -> tuple[_Prelude, Iterator[tuple[int, Any]]]:
    if not isinstance(document, dict):
        raise source.error("not a HAR file: the top level must be a JSON object", field="")
    log = document.get("log")
    if log is None:
        raise source.error("not a HAR file: no `log` object", field="log")
    if not isinstance(log, dict):
        raise source.error("not a HAR file: `log` must be a JSON object", field="log")
    entries = log.get("entries")
    if entries is None:
        raise source.error("HAR has no `log.entries` array", field="log.entries")
    if not isinstance(entries, list):
        raise source.error("expected an array", field="log.entries")
    recording = log.get("_recordingName")
    prelude = _Prelude(recording=recording if isinstance(recording, str) else None)
    if isinstance(log.get("creator"), dict):
        prelude.creator = log["creator"]
    for page in log.get("pages") or ():
        _keep(prelude, "log.pages.item", page)
    return prelude, enumerate(entries)


@dataclass(slots=True)
class _Prelude:
    """What precedes `log.entries`: the creator, the pages, Polly's recording name."""

    creator: dict[str, Any] = field(default_factory=dict)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    recording: str | None = None


def _read_prelude(source: Source) -> _Prelude:
    """Check the HAR's outer structure and collect the small members before `log.entries`.

    Parsing stops at the start of `log.entries`, so this costs the prelude's size, not the
    file's; only a file without entries is read to its end (to say so).
    """
    prelude = _Prelude()
    builder: ijson.ObjectBuilder | None = None
    target = ""
    try:
        for prefix, event, value in ijson.parse(source.file, use_float=True):
            if builder is not None:
                builder.event(event, value)
                if prefix == target and event == "end_map":
                    _keep(prelude, target, builder.value)
                    builder = None
            elif prefix == "log.entries":
                if event != "start_array":
                    raise source.error("expected an array", field="log.entries")
                return prelude
            elif prefix in ("log.pages.item", "log.creator") and event == "start_map":
                builder, target = ijson.ObjectBuilder(), prefix
                builder.event(event, value)
            elif prefix == "log._recordingName" and event == "string":
                prelude.recording = value
            elif prefix in ("", "log") and event not in ("map_key", "end_map", "start_map"):
                what = "the top level" if prefix == "" else "`log`"
                raise source.error(f"not a HAR file: {what} must be a JSON object", field=prefix)
    except ijson.JSONError as error:
        raise source.error(
            f"invalid or truncated JSON near byte {source.file.tell()}: {first_line(error)}",
            field="log",
        ) from None
    raise source.error("HAR has no `log.entries` array", field="log.entries")


def _keep(prelude: _Prelude, target: str, value: Any) -> None:
    if target == "log.creator":
        prelude.creator = value
    elif isinstance(value, dict) and isinstance(value.get("id"), str):
        prelude.pages[value["id"]] = value


def _session_header(session_id: str, pageref: Any, prelude: _Prelude, source: Source) -> Session:
    metadata: dict[str, Any] = {"format": "har"}
    if prelude.creator.get("name"):
        metadata["creator"] = (
            f"{prelude.creator['name']} {prelude.creator.get('version', '')}".strip()
        )
    if prelude.recording:
        metadata["recording"] = prelude.recording
    if pageref:
        metadata["page"] = str(pageref)
        page = prelude.pages.get(str(pageref))
        if page and page.get("title"):
            metadata["title"] = page["title"]
    return Session(id=session_id, source=source.name, metadata=metadata)


def _skip_reason(entry: dict[str, Any], *, include_static: bool) -> str | None:
    request = entry.get("request")
    url = request.get("url") if isinstance(request, dict) else None
    if not isinstance(url, str):
        return None  # malformed: let the conversion name the missing field
    scheme = url.partition(":")[0].lower()
    if (
        scheme in ("ws", "wss")
        or entry.get("_resourceType") == "websocket"
        or "_webSocketMessages" in entry
    ):
        return "websocket"
    if not include_static and entry.get("_resourceType") in STATIC_RESOURCE_TYPES:
        return "static"
    response = entry.get("response")
    content = response.get("content") if isinstance(response, dict) else None
    mime = content.get("mimeType") if isinstance(content, dict) else None
    return skip_reason(url, mime if isinstance(mime, str) else None, include_static=include_static)


def _exchange(entry: dict[str, Any], source: Source, index: int) -> tuple[Exchange, int]:
    where = f"log.entries[{index}]"
    request = entry.get("request")
    if not isinstance(request, dict):
        raise source.error("entry has no request object", entry=index, field=f"{where}.request")
    response = entry.get("response")
    if not isinstance(response, dict):
        raise source.error("entry has no response object", entry=index, field=f"{where}.response")
    method = request.get("method")
    url = request.get("url")
    if not isinstance(method, str) or not method:
        raise source.error("request has no method", entry=index, field=f"{where}.request.method")
    if not isinstance(url, str) or not url:
        raise source.error("request has no url", entry=index, field=f"{where}.request.url")
    status = response.get("status")
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    if not isinstance(status, int) or isinstance(status, bool):
        raise source.error(
            "response has no integer status", entry=index, field=f"{where}.response.status"
        )
    request_body, request_size = _request_body(request.get("postData"))
    response_headers = _pairs(response.get("headers"))
    response_body, response_size = _response_body(response.get("content"), response_headers)
    exchange = Exchange(
        id=f"{source.key}#{index}",
        method=method.upper(),
        url=url,
        status=status,
        query=_query(request.get("queryString"), url),
        request_headers=_pairs(request.get("headers")),
        request_body=request_body,
        response_headers=response_headers,
        response_body=response_body,
        started_at=_started_at(entry.get("startedDateTime"), source, index),
        duration_ms=_duration(entry.get("time")),
    )
    return exchange, request_size + response_size + 512


def _pairs(items: Any) -> Pairs:
    if not isinstance(items, list):
        return []
    return [
        (str(item.get("name", "")), _text(item.get("value")))
        for item in items
        if isinstance(item, dict)
    ]


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _query(items: Any, url: str) -> Pairs:
    if isinstance(items, list) and items:
        return _pairs(items)
    return url_query(url)


def _started_at(value: Any, source: Source, index: int) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise source.error(
            f"startedDateTime {value!r} is not an ISO 8601 time",
            entry=index,
            field=f"log.entries[{index}].startedDateTime",
        ) from None


def _duration(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _request_body(post_data: Any) -> tuple[Body, int]:
    if not isinstance(post_data, dict):
        return Body(), 0
    text = post_data.get("text")
    params = post_data.get("params")
    if (text is None or text == "") and isinstance(params, list) and params:
        text = urlencode(_pairs(params))
    return parse_body(text, post_data.get("mimeType"), post_data.get("encoding"))


def _response_body(content: Any, headers: Pairs) -> tuple[Body, int]:
    if not isinstance(content, dict):
        return Body(), 0
    text, mime, encoding = content.get("text"), content.get("mimeType"), content.get("encoding")
    data = _encoded_bytes(text, encoding) if isinstance(text, str) else None
    if data is not None:
        mime = mime if isinstance(mime, str) and mime else None
        return decode_body(data, mime, header_value(headers, "content-encoding"))
    return parse_body(text, mime, encoding)


def _encoded_bytes(text: str, encoding: Any) -> bytes | None:
    """The bytes of an answer recorded encoded: Polly.js keeps one it did not decode (gzip) as
    a JSON list of hex or base64 chunks; a base64 answer whose headers say it is compressed is
    inflated too. None for anything else (a base64 file stays as recorded)."""
    if encoding not in ("hex", "base64"):
        return None
    chunks: Any = text
    if text.startswith("["):
        try:
            chunks = strictjson.loads(text)
        except ValueError:
            return None
    if encoding == "hex":
        return hex_bytes(chunks)
    if not isinstance(chunks, list) or not all(isinstance(chunk, str) for chunk in chunks):
        return None
    try:
        return b"".join(base64.b64decode(chunk, validate=True) for chunk in chunks)
    except ValueError:
        return None
