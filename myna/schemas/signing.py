"""How a recorded request signed in: which header carried its credential, in which scheme.

The learner reads it twice: over all requests, to learn the service's scheme
(`conventions.infer_auth`), and per request, to learn what the service answers callers that
send no credential at all (a public `serverInfo`, a redirect to a login page). Conformance reads
it to replay each recorded request signed as it was recorded, or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from myna.traces.redact import is_redacted, is_secret_key

API_KEY_HEADERS = frozenset({"x-api-key", "api-key", "apikey", "x-auth-token", "private-token"})
NOT_CREDENTIALS = frozenset({"cookie", "proxy-authorization", "x-csrf-token", "x-xsrf-token"})
"""Headers that may hold secrets but are not how a client signs in to an API."""
_SCHEMES = frozenset({"basic", "bearer", "token"})


@dataclass(frozen=True, slots=True)
class Signature:
    """One header that signed a request in: `Authorization: Basic ...` is kind `scheme` named
    `basic`; `Authorization: SSWS ...` or a value redacted whole is `opaque`; an API key header
    is kind `key` named after the header as recorded."""

    kind: Literal["scheme", "opaque", "key"]
    name: str


def signature(name: str, value: str) -> Signature | None:
    """What the header `name: value` says of how the request signed in, if anything."""
    lowered = name.lower()
    if lowered == "authorization":
        word, space, _ = value.partition(" ")
        scheme = word.lower() if space and word.isalpha() else ""
        if scheme in _SCHEMES:
            return Signature("scheme", scheme)
        # `SSWS <key>` (Okta), or a value whose scheme went with the redaction.
        return Signature("opaque", "authorization")
    if lowered in API_KEY_HEADERS or (
        lowered not in NOT_CREDENTIALS and (is_secret_key(name) or is_redacted(value))
    ):
        return Signature("key", name)
    return None


def signed(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether a request with these headers carried a credential."""
    return any(signature(name, value) is not None for name, value in headers)
