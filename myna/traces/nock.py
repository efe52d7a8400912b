"""nock recordings: the JSON array `nock.recorder` writes with `output_objects: true`.

Each item is one exchange, `{scope, method, path, body, status, response, headers | rawHeaders,
reqheaders, responseIsBinary}`:

- the URL is `scope` (`https://api.github.com:443`, the default port dropped) followed by `path`,
  which carries the query;
- `body` is the request body, parsed JSON when it was JSON, else text (`""` for none);
- `response` is parsed JSON or text; when the response headers name a `content-encoding`, a list
  of hex strings, the compressed chunks as received (inflated here when gzip or deflate); when
  `responseIsBinary`, one hex string of bytes that are not UTF-8 (kept as base64);
- `status` defaults to 200, as in `nock.define`;
- `rawHeaders` (a flat `[name, value, ...]` list, newer nock) or `headers` (a map) are the
  response headers, `reqheaders` the request headers.

What the trace model has no place for (nock's `options`, `badheaders`) is left out. One file is one
session, `<file key>` (`reading.file_keys`); exchange ids are `<file key>#<item index>`. The file is
streamed with ijson when large (`jsonarray`), so memory follows the largest item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from myna.errors import TraceFormatError
from myna.traces.formats import Peek
from myna.traces.jsonarray import array_items
from myna.traces.model import Body, Exchange, Pairs, Session, header_value
from myna.traces.recorded import (
    Fail,
    decode_body,
    header_pairs,
    hex_bytes,
    json_body,
    parse_body,
    skip_reason,
    url_query,
)
from myna.traces.source import Source

_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCOPE = re.compile(r'"scope"\s*:\s*"[A-Za-z][A-Za-z0-9+.-]*://')


def looks_like_nock(peek: Peek) -> bool:
    """A JSON array whose first item has a `scope` URL, a `method` and a `path`."""
    text = peek.text
    if not text.startswith("["):
        return False
    try:
        first, _ = json.JSONDecoder().raw_decode(text, len(text) - len(text[1:].lstrip()))
    except ValueError:  # the first item is longer than the peek: look at its start
        return bool(_SCOPE.search(text[:4096]))
    return isinstance(first, dict) and {"scope", "method", "path"} <= first.keys()


def read_nock(source: Source) -> Iterator[Session]:
    """Yield the one session of a nock recording (see the module docstring for the mapping)."""
    built = (
        _exchange(item, source, index, size) for index, item, size in array_items(source, None)
    )
    return source.one_session({"format": "nock"}, built)


def _exchange(item: Any, source: Source, index: int, size: int) -> tuple[Exchange, int] | None:
    """The exchange recorded in `item`, with `size`, the item's rough bytes in the file (its
    bodies may be parsed JSON, whose text size is not known)."""
    where = f"[{index}]"

    def fail(message: str, field: str) -> TraceFormatError:
        return source.error(message, entry=index, field=field)

    if not isinstance(item, dict):
        raise fail("expected a recorded request (a map with `scope`, `method`, `path`)", where)
    url = _origin(item.get("scope"), f"{where}.scope", fail) + _path(item.get("path"), where, fail)
    method = item.get("method")
    if not isinstance(method, str) or not method:
        raise fail("expected a non-empty string", f"{where}.method")
    raw = item.get("rawHeaders")
    response_headers = (
        header_pairs(raw, f"{where}.rawHeaders", fail)
        if raw is not None
        else header_pairs(item.get("headers"), f"{where}.headers", fail)
    )
    request_headers = header_pairs(item.get("reqheaders"), f"{where}.reqheaders", fail)
    mime = header_value(response_headers, "content-type")
    skip = skip_reason(url, mime, include_static=source.options.include_static)
    if skip:
        source.report.skipped[skip] += 1
        return None
    request_body = _request_body(item.get("body"), request_headers)
    response_body = _response_body(item, response_headers, where, fail)
    exchange = Exchange(
        id=f"{source.key}#{index}",
        method=method.upper(),
        url=url,
        status=_status(item.get("status", 200), f"{where}.status", fail),
        query=url_query(url),
        request_headers=request_headers,
        request_body=request_body,
        response_headers=response_headers,
        response_body=response_body,
    )
    return exchange, size


def _origin(scope: Any, field: str, fail: Fail) -> str:
    """`https://host:443` -> `https://host`: the URL as a client writes it."""
    parts = urlsplit(scope) if isinstance(scope, str) else None
    if parts is None or not parts.scheme or not parts.netloc:
        raise fail("expected the scope as an origin such as https://api.example.com:443", field)
    try:
        port = parts.port
    except ValueError:
        raise fail(f"bad port in scope {scope!r}", field) from None
    netloc = parts.netloc
    if port is not None and port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        netloc = netloc.rpartition(":")[0]
    return f"{parts.scheme}://{netloc}"


def _path(value: Any, where: str, fail: Fail) -> str:
    if not isinstance(value, str):
        raise fail("expected the request path as a string", f"{where}.path")
    return value if value.startswith("/") else f"/{value}"


def _status(value: Any, field: str, fail: Fail) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 100 <= value <= 999:
        raise fail("expected an integer HTTP status code", field)
    return value


def _request_body(value: Any, headers: Pairs) -> Body:
    mime = header_value(headers, "content-type")
    if value is None or isinstance(value, str):
        return parse_body(value, mime)[0]
    return json_body(value, mime)


def _response_body(item: dict[str, Any], headers: Pairs, where: str, fail: Fail) -> Body:
    value = item.get("response")
    mime = header_value(headers, "content-type")
    encoding = header_value(headers, "content-encoding")
    chunks = hex_bytes(value) if encoding and isinstance(value, list) else None
    if chunks is not None:
        return decode_body(chunks, mime, encoding)[0]
    if item.get("responseIsBinary") is True:
        data = hex_bytes(value) if isinstance(value, str) else None
        if data is None:
            raise fail("expected hex-encoded bytes (responseIsBinary is true)", f"{where}.response")
        return decode_body(data, mime, encoding)[0]
    if value is None or isinstance(value, str):
        return parse_body(value, mime)[0]
    return json_body(value, mime)
