"""`myna serve`'s HTTP protocol: half-open connections are closed after `--request-timeout`,
and what the HTTP parser refuses is a 400 in the service's shape (over real servers, with raw
sockets)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from myna.mocks.cli import served_mock
from myna.mocks.serve import serving
from tests.mocks.test_store_concurrency import _server


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


@pytest.fixture(scope="module")
def impatient() -> Iterator[tuple[str, int]]:
    """`myna serve itsm --request-timeout 3` in its own process: short enough to wait for,
    long enough that a loaded machine never stretches a slow request (0.5 s) past it."""
    with _server("sqlite://", "--request-timeout", "3") as (base_url, _):
        where = urlsplit(base_url)
        assert where.hostname is not None
        assert where.port is not None
        yield where.hostname, where.port


def test_a_hundred_half_open_connections_are_closed_by_the_timeout(
    impatient: tuple[str, int],
) -> None:
    silent = [socket.create_connection(impatient, timeout=10) for _ in range(40)]
    heads = [socket.create_connection(impatient, timeout=10) for _ in range(30)]
    bodies = [socket.create_connection(impatient, timeout=10) for _ in range(30)]
    for connection in heads:
        connection.sendall(b"GET /api/now/table/incident HTTP/1.1\r\nHost: x\r\n")
    for connection in bodies:  # the head whole, the body never
        connection.sendall(
            b"POST /api/now/table/incident HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
    started = time.monotonic()
    try:
        # Meanwhile the server still answers whole requests.
        assert _exchange(impatient, _WHOLE).startswith(b"HTTP/1.1 200 ")
        for connection in silent + heads + bodies:
            assert connection.recv(1) == b""  # closed by the server
    finally:
        for connection in silent + heads + bodies:
            connection.close()
    assert time.monotonic() - started < 8


def test_a_slow_request_within_the_timeout_is_served(impatient: tuple[str, int]) -> None:
    with socket.create_connection(impatient, timeout=10) as connection:
        for line in _WHOLE.split(b"\r\n")[:-1]:
            connection.sendall(line + b"\r\n")
            time.sleep(0.1)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 ")


def test_the_timeout_is_refused_when_not_positive() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from myna.cli import main; main()",
            "serve",
            "itsm",
            "--request-timeout",
            "0",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--request-timeout" in result.stderr


_WHOLE = (
    b"GET /api/now/table/incident?sysparm_limit=1 HTTP/1.1\r\nHost: x\r\n"
    b"Authorization: Bearer myna-token\r\nConnection: close\r\n\r\n"
)


def test_a_whole_request_is_still_served(address: tuple[str, int]) -> None:
    answer = _exchange(address, _WHOLE)
    assert answer.startswith(b"HTTP/1.1 200 ")
