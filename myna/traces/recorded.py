"""What every reader of recorded HTTP traffic shares: bodies, header maps, static assets.

Recorders store a body as text, as bytes (YAML `!!binary`, base64, hex chunks), possibly still
compressed, or already parsed as JSON. `parse_body` and `decode_body` turn each form into one
`Body`, redacted; `header_pairs` reads the header maps of the cassette formats (a name to a value
or to a list of values, or a flat `[name, value, ...]` list); `skip_reason` says which recorded
requests are not API traffic.
"""

from __future__ import annotations

import base64
import codecs
import re
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from myna.errors import TraceFormatError
from myna.traces import strictjson
from myna.traces.model import Body, Pairs
from myna.traces.redact import (
    json_may_hold_secrets,
    redact_json,
    redact_multipart,
    redact_query_string,
)

STATIC_MIME_PREFIXES = ("image/", "font/", "video/", "audio/")
STATIC_MIME_TYPES = frozenset(
    {
        "text/css",
        "text/javascript",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/font-woff",
        "application/font-woff2",
        "application/x-font-ttf",
        "application/x-font-woff",
        "application/vnd.ms-fontobject",
    }
)
STATIC_EXTENSIONS = frozenset(
    {
        "png", "jpg", "jpeg", "gif", "svg", "ico", "webp", "avif", "bmp",
        "woff", "woff2", "ttf", "otf", "eot", "css", "js", "mjs", "map",
    }
)  # fmt: skip

MAX_INFLATED_BYTES = 64 * 1024 * 1024
"""A compressed body that inflates past this is kept compressed (as base64): a few kilobytes of
gzip can claim gigabytes, and reading must stay within bounded memory."""

_COMPRESSED = frozenset({"gzip", "x-gzip", "deflate"})

Fail = Callable[[str, str], TraceFormatError]
"""How a reader reports a bad field: `fail(message, field)` makes the error to raise."""


def skip_reason(url: str, mime: str | None, *, include_static: bool) -> str | None:
    """`non_http` or `static` when the request is not API traffic, else `None`."""
    if urlsplit(url).scheme.lower() not in ("http", "https"):
        return "non_http"
    if include_static:
        return None
    if mime:
        essence = mime.partition(";")[0].strip().lower()
        if essence in STATIC_MIME_TYPES or essence.startswith(STATIC_MIME_PREFIXES):
            return "static"
    last_segment = urlsplit(url).path.rpartition("/")[2]
    extension = last_segment.rpartition(".")[2].lower() if "." in last_segment else ""
    return "static" if extension in STATIC_EXTENSIONS else None


_QUERY_PAIR = re.compile(r"[^=&#/?\s]+=[^&#/?\s]*")


def without_bare_query(url: str) -> str | None:
    """The URL with its query behind a `?`, when it was written without one; else `None`.

    Some recorders and clients write `https://h/api/groups.json&page[size]=100`: no `?`, the
    first `&` starting the query. Read literally, `&page[size]=100` is part of the last path
    segment. Only a path without `?` whose part after the first `&` is all `name=value` pairs
    (no `/` in them: `/a&b=c/d` stays a path) is read so.
    """
    if "?" in url or "&" not in url:
        return None
    parts = urlsplit(url)
    path, _, query = parts.path.partition("&")
    if not query or not all(_QUERY_PAIR.fullmatch(pair) for pair in query.split("&") if pair):
        return None
    return urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment))


def url_query(url: str) -> Pairs:
    """The query parameters written after the URL's `?`, decoded, in order."""
    _, _, query = url.partition("?")
    return parse_qsl(query.partition("#")[0], keep_blank_values=True) if query else []


def parse_body(text: Any, mime_type: Any, encoding: Any = None) -> tuple[Body, int]:
    """Classify and redact a body given as text; returns it with its size in characters.

    JSON is recognised by parsing, not by trusting the declared type (services answer JSON as
    `text/plain` and HTML as `application/json`); NaN and Infinity are not JSON and stay text.
    `encoding="base64"` marks text that is base64 of the bytes (HAR's `content.encoding`).
    """
    mime = mime_type if isinstance(mime_type, str) and mime_type else None
    if text is None or text == "":
        return Body(mime_type=mime), 0
    if not isinstance(text, str):
        return json_body(text, mime), 256
    size = len(text)
    if encoding == "base64":
        return Body("base64", text, mime), size
    lead = text.lstrip()[:1]
    if lead in ("{", "[") or (mime and "json" in mime):
        try:
            value = strictjson.loads(text)
        except ValueError:
            pass
        else:
            if json_may_hold_secrets(text):
                value = redact_json(value)
            return Body("json", value, mime), size
    if mime and "x-www-form-urlencoded" in mime:
        text = redact_query_string(text)
    elif mime and "multipart/form-data" in mime:
        text = redact_multipart(text)
    return Body("text", text, mime), size


def json_body(value: Any, mime: str | None) -> Body:
    """A body the recorder stored already parsed as JSON (redacted here: no text to test)."""
    return Body("json", redact_json(value), mime)


def decode_body(data: bytes, mime: str | None, content_encoding: str | None) -> tuple[Body, int]:
    """A body recorded as bytes: inflated when the headers say gzip or deflate, decoded with the
    declared charset (UTF-8 by default) and parsed; bytes that are not text stay base64."""
    if content_encoding and content_encoding.strip().lower() in _COMPRESSED:
        data = _inflate(data)
    try:
        text = data.decode(_charset(mime))
    except UnicodeDecodeError:
        return Body("base64", base64.b64encode(data).decode("ascii"), mime), len(data)
    return parse_body(text, mime)


_HEX = re.compile(r"^(?:[0-9a-fA-F]{2})*$")


def is_hex(value: Any) -> bool:
    """Whether `value` is text of hex digit pairs (bytes as nock and Polly.js record them)."""
    return isinstance(value, str) and bool(_HEX.match(value))


def hex_bytes(value: Any) -> bytes | None:
    """The bytes of a hex string, or of a list of hex chunks (a compressed answer recorded as it
    streamed: nock's `response`, Polly.js's `content.text` with `encoding: "hex"`); None when
    `value` is neither."""
    if is_hex(value):
        return bytes.fromhex(value)
    if isinstance(value, list) and value and all(is_hex(chunk) for chunk in value):
        return b"".join(bytes.fromhex(chunk) for chunk in value)
    return None


def _inflate(data: bytes) -> bytes:
    """Gzip, zlib or raw deflate, inflated; the bytes as they are when that fails or is too big."""
    for window in (47, -15):  # 47: gzip or zlib header, detected; -15: raw deflate
        inflater = zlib.decompressobj(window)
        try:
            inflated = inflater.decompress(data, MAX_INFLATED_BYTES)
        except zlib.error:
            continue
        return inflated if inflater.eof and not inflater.unconsumed_tail else data
    return data


def _charset(mime: str | None) -> str:
    for parameter in (mime or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"')
            try:
                return codecs.lookup(charset).name
            except LookupError:
                return "utf-8"
    return "utf-8"


def header_pairs(value: Any, field: str, fail: Fail) -> Pairs:
    """Headers as recorded by VCR, Betamax or nock, in order, as name-value pairs.

    Accepts a map of a name to a value or a list of values (`None` meaning no value), or nock's
    `rawHeaders`: a flat list `[name, value, name, value, ...]`. Numbers and booleans become
    their text; anything else is refused, naming the header.
    """
    if value is None:
        return []
    if isinstance(value, dict):
        pairs: Pairs = []
        for name, values in value.items():
            for item in values if isinstance(values, list) else [values]:
                text = _header_text(item, f"{field}.{name}", fail)
                if text is not None:
                    pairs.append((str(name), text))
        return pairs
    if isinstance(value, list) and len(value) % 2 == 0:
        texts = [_header_text(item, f"{field}[{i}]", fail) for i, item in enumerate(value)]
        return [(str(texts[i]), texts[i + 1] or "") for i in range(0, len(texts), 2)]
    raise fail("expected a map of header names to values", field)


def _header_text(item: Any, field: str, fail: Fail) -> str | None:
    if item is None:
        return None
    if isinstance(item, str):
        return item
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int | float):
        return str(item)
    if isinstance(item, bytes):
        return item.decode("utf-8", errors="replace")
    raise fail(f"expected a header value (text), got {type(item).__name__}", field)
