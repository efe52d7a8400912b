"""One call to an OpenAI-compatible chat-completions endpoint, with its failures named."""

from __future__ import annotations

from typing import Any

import httpx

from myna.errors import MynaError


def complete(http: httpx.Client, body: dict[str, Any], *, error: type[MynaError], what: str) -> Any:
    """The parsed reply of `POST {base}/chat/completions`; `error` (naming `what` endpoint and
    the client's base URL) when the endpoint cannot be reached or answers other than 200."""
    try:
        response = http.post("/chat/completions", json=body)
    except httpx.HTTPError as failed:
        raise error(f"{what} endpoint {http.base_url} failed: {failed}") from None
    if response.status_code != 200:
        raise error(
            f"{what} endpoint {http.base_url} answered {response.status_code}: "
            f"{response.text[:200]}"
        )
    try:
        return response.json()
    except ValueError:
        raise error(f"{what} endpoint {http.base_url} answered with no JSON") from None
