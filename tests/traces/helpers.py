"""Builders for literal HAR fixtures, and where the real corpus lives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
HAR_CORPUS = CORPUS / "har"

WriteFile = Callable[[str, Any], Path]
"""The `write_json` fixture: write a JSON value (or raw text) to a named file, get its path."""


def corpus_hars() -> list[Path]:
    return sorted(HAR_CORPUS.glob("*/*.har")) if HAR_CORPUS.is_dir() else []


def entry(
    url: str = "https://api.example.com/api/now/table/incident",
    *,
    method: str = "GET",
    status: int = 200,
    headers: list[dict[str, Any]] | None = None,
    response_text: str | None = '{"result": []}',
    response_mime: str = "application/json",
    post_data: dict[str, Any] | None = None,
    started: str = "2024-05-01T10:00:00.000Z",
    **extra: Any,
) -> dict[str, Any]:
    """One HAR entry in the shape browsers and Polly.js write."""
    request: dict[str, Any] = {
        "method": method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "headers": headers or [{"name": "accept", "value": "application/json"}],
        "queryString": [],
        "cookies": [],
        "headersSize": -1,
        "bodySize": 0,
    }
    if post_data is not None:
        request["postData"] = post_data
    content: dict[str, Any] = {"mimeType": response_mime, "size": 0}
    if response_text is not None:
        content["text"] = response_text
    return {
        "startedDateTime": started,
        "time": 12.5,
        "request": request,
        "response": {
            "status": status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "content-type", "value": response_mime}],
            "cookies": [],
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 12.5, "receive": 0},
        **extra,
    }


def har(entries: list[dict[str, Any]], pages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    log: dict[str, Any] = {"version": "1.2", "creator": {"name": "WebInspector", "version": "537"}}
    if pages is not None:
        log["pages"] = pages
    log["entries"] = entries
    return {"log": log}
