"""VCR cassettes: vcrpy (YAML or JSON), Ruby VCR (YAML or JSON) and Betamax (JSON).

All of them hold a list of interactions, each a request and the response it got:

- vcrpy: `interactions` (beside `version: 1`); a request is `{method, uri, body, headers}` with the
  body as text, bytes (`!!binary`) or null; a response is `{status: {code, message}, headers,
  body: {string}}` (its aiohttp stub adds `url`). Headers map a name to a list of values.
- Ruby VCR: `http_interactions` (beside `recorded_with`); bodies are `{encoding, string}` or, for
  exact bytes, `{encoding, base64_string}` (Psych writes other binary strings as `!binary`); the
  response may add `http_version` and `adapter_metadata`; each interaction has `recorded_at`, an
  HTTP date.
- Betamax: Ruby VCR's outline in JSON, `recorded_at` in ISO 8601 (UTC), the response's final
  `url`, and gzip'd bodies always as `base64_string`.

One cassette is one session, `<file key>` (`reading.file_keys`); exchange ids are
`<file key>#<interaction index>`. Bodies recorded as bytes are inflated when the headers say gzip
or deflate and decoded; text that parses as JSON becomes a JSON body. What the trace model has no
place for is left out: the status message, the HTTP version, the final URL after redirects,
adapter metadata. JSON cassettes are streamed with ijson, YAML ones from libyaml's parser events
(`yamlstream`), so memory follows the largest interaction, not the file.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from myna.errors import TraceFormatError
from myna.traces.formats import PEEK_BYTES, Peek
from myna.traces.jsonarray import array_items, content_start
from myna.traces.model import Body, Exchange, Pairs, Session, header_value
from myna.traces.recorded import (
    Fail,
    decode_body,
    header_pairs,
    parse_body,
    skip_reason,
    url_query,
)
from myna.traces.source import Source
from myna.traces.yamlstream import sequence_items

KEYS = ("interactions", "http_interactions")

_JSON_HEAD = re.compile(
    r'^\{\s*(?:"[^"]*"\s*:\s*(?:"[^"]*"|[^{\[,]*)\s*,\s*)*"(http_interactions|interactions)"\s*:\s*\['
)
# A top-level `interactions:` (at the start of a line) whose first item is an interaction.
_YAML_KEY = re.compile(
    r"^(?:http_interactions|interactions):[ \t]*(?:\[|\r?\n- (?:request|response|recorded_at):)",
    re.MULTILINE,
)


def looks_like_vcr(peek: Peek) -> bool:
    """A JSON object or YAML mapping whose `interactions` or `http_interactions` is a list."""
    return bool(_JSON_HEAD.match(peek.text) or _YAML_KEY.search(peek.text))


def read_vcr(source: Source) -> Iterator[Session]:
    """Yield the one session of a cassette (see the module docstring for the mapping)."""
    built = (
        _exchange(item, source, index, f"{key}[{index}]")
        for key, index, item in _interactions(source)
    )
    return source.one_session({"format": "vcr"}, built)


def _interactions(source: Source) -> Iterator[tuple[str, int, Any]]:
    start = content_start(source)
    head = source.file.read(PEEK_BYTES)
    source.file.seek(start)
    if not head.lstrip().startswith(b"{"):
        return sequence_items(source, KEYS)
    found = _JSON_HEAD.match(head.decode("utf-8", errors="replace").lstrip())
    key = (
        found.group(1)
        if found
        else "http_interactions"
        if b'"http_interactions"' in head
        else KEYS[0]
    )
    return ((key, index, item) for index, item, _ in array_items(source, key))


def _exchange(item: Any, source: Source, index: int, where: str) -> tuple[Exchange, int] | None:
    def fail(message: str, field: str) -> TraceFormatError:
        return source.error(message, entry=index, field=field)

    if not isinstance(item, dict):
        raise fail("expected an interaction (a map with `request` and `response`)", where)
    request = _member(item, "request", where, fail)
    response = _member(item, "response", where, fail)
    method = _text(request.get("method"), f"{where}.request.method", fail)
    url = _text(request.get("uri"), f"{where}.request.uri", fail)
    request_headers = header_pairs(request.get("headers"), f"{where}.request.headers", fail)
    response_headers = header_pairs(response.get("headers"), f"{where}.response.headers", fail)
    skip = skip_reason(
        url,
        header_value(response_headers, "content-type"),
        include_static=source.options.include_static,
    )
    if skip:
        source.report.skipped[skip] += 1
        return None
    request_body, request_size = _body(
        request.get("body"), request_headers, f"{where}.request.body", fail
    )
    response_body, response_size = _body(
        response.get("body"), response_headers, f"{where}.response.body", fail
    )
    exchange = Exchange(
        id=f"{source.key}#{index}",
        method=method.upper(),
        url=url,
        status=_status(response, f"{where}.response", fail),
        query=url_query(url),
        request_headers=request_headers,
        request_body=request_body,
        response_headers=response_headers,
        response_body=response_body,
        started_at=_recorded_at(item.get("recorded_at"), f"{where}.recorded_at", fail),
    )
    return exchange, request_size + response_size + 512


def _member(parent: dict[str, Any], name: str, where: str, fail: Fail) -> dict[str, Any]:
    value = parent.get(name)
    if not isinstance(value, dict):
        raise fail(f"expected a `{name}` map", f"{where}.{name}")
    return value


def _text(value: Any, field: str, fail: Fail) -> str:
    if not isinstance(value, str) or not value:
        raise fail("expected a non-empty string", field)
    return value


def _status(response: dict[str, Any], where: str, fail: Fail) -> int:
    """`status: {code, message}`; Betamax's oldest cassettes have `status_code` instead."""
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else response.get("status_code", status)
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 999:
        raise fail("expected an integer HTTP status code", f"{where}.status.code")
    return code


def _body(value: Any, headers: Pairs, field: str, fail: Fail) -> tuple[Body, int]:
    """A body as vcrpy (text, bytes or null) or Ruby VCR and Betamax (`{string | base64_string,
    encoding}`) record it."""
    content: Any = value
    if isinstance(value, dict):
        if "base64_string" in value:
            content = _base64(value["base64_string"], f"{field}.base64_string", fail)
        else:
            content = value.get("string")
            field = f"{field}.string"
    mime = header_value(headers, "content-type")
    if isinstance(content, bytes):
        return decode_body(content, mime, header_value(headers, "content-encoding"))
    if content is None or isinstance(content, str):
        return parse_body(content, mime)
    raise fail("expected the body as text, bytes, or a map with `string` or `base64_string`", field)


def _base64(value: Any, field: str, fail: Fail) -> bytes:
    if not isinstance(value, str):
        raise fail("expected base64 text", field)
    try:
        return base64.b64decode(value)
    except (binascii.Error, ValueError):
        raise fail("expected base64 text", field) from None


def _recorded_at(value: Any, field: str, fail: Fail) -> datetime | None:
    """Ruby VCR's HTTP date, Betamax's ISO 8601 time (UTC when it names no zone)."""
    if value is None or value == "":
        return None
    moment: datetime | None = value if isinstance(value, datetime) else None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            try:
                moment = parsedate_to_datetime(value)
            except (TypeError, ValueError):
                moment = None
    if moment is None:
        raise fail(f"expected an HTTP date or an ISO 8601 time, got {value!r}", field)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
