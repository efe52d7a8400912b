"""Redaction of credentials, always applied on import.

Credentials in headers (Authorization, Cookie, Set-Cookie, API-key and token headers), in query
strings and form bodies, in URL user-info and in JSON values under secret-looking keys are replaced
by `[REDACTED]`. Values already redacted upstream (`[REDACTED]`, `Bearer [REDACTED]`, `****`) are
kept as they are. The authorization scheme and cookie names are kept because the learning stage
reads them to infer how the service authenticates; only the secrets themselves go.

All functions are pure over their input except `redact_json`, which edits freshly parsed JSON in
place: it runs on every imported body, and copying large bodies would double the work.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import unquote_plus

from myna.traces.model import Pairs

REDACTED = "[REDACTED]"

_ALREADY_REDACTED = re.compile(r"redacted|^\*{3,}$|^x{6,}$", re.IGNORECASE)

_SECRET_KEYS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "authorization",
        "proxyauthorization",
        "cookie",
        "setcookie",
        "sessionid",
        "sid",
        "signature",
        "assertion",
        "clientassertion",
        "privatekey",
        "subscriptionkey",
    }
)
_SECRET_SUFFIXES = (
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "sessionid",
    "privatekey",
    "signature",
    "subscriptionkey",
)
# Pagination cursors end in "token" but carry no credential, and the learning stage needs them to
# recognise how a service pages.
_CURSOR_SUFFIXES = ("pagetoken", "continuationtoken", "synctoken", "nexttoken", "cursortoken")

_SECRET_FRAGMENTS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "cookie",
    "session",
    "sid",
    "signature",
    "assertion",
)
_MAY_HOLD_SECRET = re.compile("|".join(_SECRET_FRAGMENTS), re.IGNORECASE)
_QUERY_PARAM = re.compile(r"(?:^|(?<=[&;]))([^=&;]+)=([^&;]*)")
# One multipart/form-data field: its `name` in the part headers, a blank line, then the value.
_MULTIPART_FIELD = re.compile(
    r'(name="([^"]*)"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n)([^\r\n]*)', re.IGNORECASE
)
_URL_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/@:?#]*):([^/@?#]*)@")


@lru_cache(maxsize=4096)
def is_secret_key(name: str) -> bool:
    """Whether a header, query or JSON key names a credential (`client_secret`, `X-Api-Key`)."""
    normal = "".join(char for char in name.lower() if char.isalnum())
    if normal.startswith("x") and normal[1:] in _SECRET_KEYS:
        return True
    if normal in _SECRET_KEYS:
        return True
    return normal.endswith(_SECRET_SUFFIXES) and not normal.endswith(_CURSOR_SUFFIXES)


def is_redacted(value: str) -> bool:
    """Whether a value was already redacted upstream (kept as it is, never redacted twice)."""
    return bool(_ALREADY_REDACTED.search(value))


def redact_header(name: str, value: str) -> str:
    """Redact one header value if its name marks it as a credential."""
    if not is_secret_key(name) or is_redacted(value):
        return value
    lower = name.lower()
    if lower in ("authorization", "proxy-authorization"):
        scheme, space, _ = value.partition(" ")
        return f"{scheme} {REDACTED}" if space and scheme.isalpha() else REDACTED
    if lower == "cookie":
        names = (part.split("=", 1)[0].strip() for part in value.split(";") if part.strip())
        return "; ".join(f"{cookie}={REDACTED}" for cookie in names)
    if lower == "set-cookie":
        first, sep, attributes = value.partition(";")
        cookie = first.split("=", 1)[0].strip()
        return f"{cookie}={REDACTED}{sep}{attributes}"
    return REDACTED


def redact_headers(headers: Pairs) -> Pairs:
    """Redacted headers; the same list when no header names a credential (the common case)."""
    if not any(is_secret_key(name) for name, _ in headers):
        return headers
    return [(name, redact_header(name, value)) for name, value in headers]


def redact_pairs(pairs: Pairs) -> Pairs:
    """Redact decoded query-string or form pairs (the same list when none is a secret)."""
    if not any(is_secret_key(name) for name, _ in pairs):
        return pairs
    return [
        (name, REDACTED if is_secret_key(name) and not is_redacted(value) else value)
        for name, value in pairs
    ]


def redact_query_string(query: str) -> str:
    """Redact secret parameters in a raw `a=1&token=x` string, leaving the rest byte for byte."""
    if "=" not in query or not _MAY_HOLD_SECRET.search(query):
        return query
    return _QUERY_PARAM.sub(_redact_raw_param, query)


def _redact_raw_param(match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    if is_secret_key(unquote_plus(name)) and not is_redacted(unquote_plus(value)):
        return f"{name}={REDACTED}"
    return match.group(0)


def redact_multipart(text: str) -> str:
    """Redact the values of secret fields in a multipart/form-data body given as text."""
    return _MULTIPART_FIELD.sub(_redact_multipart_field, text)


def _redact_multipart_field(match: re.Match[str]) -> str:
    head, name, value = match.group(1), match.group(2), match.group(3)
    if is_secret_key(name) and value and not is_redacted(value):
        return f"{head}{REDACTED}"
    return match.group(0)


def redact_url(url: str) -> str:
    """Redact a password in the URL's user-info and secret query parameters."""
    if "@" in url:
        userinfo = _URL_USERINFO.match(url)
        if userinfo and not is_redacted(userinfo.group(2)):
            url = f"{userinfo.group(1)}:{REDACTED}@{url[userinfo.end() :]}"
    base, question, rest = url.partition("?")
    if not question:
        return url
    query, hash_mark, fragment = rest.partition("#")
    return f"{base}?{redact_query_string(query)}{hash_mark}{fragment}"


def json_may_hold_secrets(text: str) -> bool:
    """Cheap test on raw JSON text; `False` means `redact_json` would change nothing.

    It finds the fragments every secret key contains (`pass`, `token`, `key`, ...) and, for each
    one inside an object key (before a closing quote that a colon follows), asks `is_secret_key`
    about that key. Substring search runs at memory speed where a regular expression crawls, so
    most bodies skip the walk. A key with an escaped quote in it counts as a possible secret.
    """
    lowered = text.lower()
    for fragment in _SECRET_FRAGMENTS:
        start = lowered.find(fragment)
        while start != -1:
            close = lowered.find('"', start)
            if close == -1:
                break
            if lowered[close - 1] == "\\":
                return True
            if lowered[close + 1 : close + 8].lstrip()[:1] == ":":
                opening = lowered.rfind('"', 0, start)
                if opening <= 0 or lowered[opening - 1] == "\\":
                    return True
                if is_secret_key(lowered[opening + 1 : close]):
                    return True
            start = lowered.find(fragment, close)
    return False


def redact_json(value: Any) -> Any:
    """Redact scalar values under secret keys anywhere in a parsed JSON value (in place).

    `null` and booleans under a secret key stay (they reveal nothing and keep the shape), and
    objects or arrays under one are walked rather than wiped. Iterative, with exact type tests,
    because it runs over every imported body.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            for key, item in node.items():
                kind = type(item)
                if kind is dict or kind is list:
                    stack.append(item)
                elif (
                    (kind is str or kind is int or kind is float)
                    and is_secret_key(key)
                    and (kind is not str or (item and not is_redacted(item)))
                ):
                    node[key] = REDACTED
        elif type(node) is list:
            stack.extend(item for item in node if type(item) is dict or type(item) is list)
    return value
