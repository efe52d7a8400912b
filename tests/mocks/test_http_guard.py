"""`myna serve`'s HTTP protocol: half-open connections are closed, and what the HTTP parser
refuses is a 400 in the service's shape (over a real server)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from myna.mocks import http_guard
from myna.mocks.cli import served_mock
from myna.mocks.serve import serving


@pytest.fixture(scope="module")
def address() -> Iterator[tuple[str, int]]:
    with serving(served_mock("itsm", admin_token="http-guard-admin-token")) as running:
        where = urlsplit(running.base_url)
        assert where.hostname is not None
        assert where.port is not None
        yield where.hostname, where.port


def _exchange(address: tuple[str, int], request: bytes) -> bytes:
    with socket.create_connection(address, timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        return answer


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /api/now/table/incident HTTP/1.1 extra\r\nHost: x\r\n\r\n",
        b"FROBNICATE /api/now/table/incident HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /api/now/table/incident?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n",
    ],
    ids=["malformed-request-line", "unknown-method", "100-kb-query", "bad-header"],
)
def test_what_the_parser_refuses_is_the_services_400(
    address: tuple[str, int], request_bytes: bytes
) -> None:
    answer = _exchange(address, request_bytes)
    head, _, body = answer.partition(b"\r\n\r\n")

    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)
    assert error["status"] == "failure"
    assert error["error"]["message"]


def test_half_open_connections_are_closed(
    address: tuple[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http_guard, "REQUEST_TIMEOUT", 0.5)
    silent = [socket.create_connection(address, timeout=10) for _ in range(20)]
    partial = [socket.create_connection(address, timeout=10) for _ in range(20)]
    for connection in partial:
        connection.sendall(b"GET /api/now/table/incident HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()
    try:
        for connection in silent + partial:
            assert connection.recv(1) == b""  # closed by the server
    finally:
        for connection in silent + partial:
            connection.close()
    assert time.monotonic() - started < 5


def test_a_whole_request_is_still_served(address: tuple[str, int]) -> None:
    answer = _exchange(
        address,
        b"GET /api/now/table/incident?sysparm_limit=1 HTTP/1.1\r\nHost: x\r\n"
        b"Authorization: Bearer myna-token\r\nConnection: close\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 200 ")
