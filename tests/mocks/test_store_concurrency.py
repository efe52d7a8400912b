"""Concurrent writers on one PostgreSQL database lose no acknowledged write.

Two `myna serve itsm` processes share a database and 16 clients PATCH through both at once: every
acknowledged PATCH of one hot record counts in its `sys_mod_count`, and clients that each own a
field of shared records all find their last value there. A PATCH reads the record and writes it
back whole, so without a lock on the world's writes the second of two concurrent PATCHes
overwrites the first (READ COMMITTED).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from myna.mocks.serve import free_port
from tests.conftest import postgres_schema

pytestmark = pytest.mark.postgres

INCIDENTS = "/api/now/table/incident"
AUTH = ("myna", "myna")
CLIENTS = 16
PATCHES = 15
# Free-text fields of an ITSM incident: each client of the disjoint-fields run owns one.
FIELDS = (
    "short_description",
    "description",
    "close_notes",
    "category",
    "subcategory",
    "contact_type",
    "close_code",
)
REPO = Path(__file__).resolve().parents[2]


@contextmanager
def _server(db: str) -> Iterator[str]:
    """`myna serve itsm` on `db` in its own process, once it answers; its base URL."""
    port = free_port()
    command = [sys.executable, "-c", "from myna.cli import main; main()", "serve", "itsm"]
    command += ["--db", db, "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ) as process:
        try:
            base_url = f"http://127.0.0.1:{port}"
            _wait_until_serving(base_url, process)
            yield base_url
        finally:
            process.terminate()
            process.wait(timeout=10)


def _wait_until_serving(base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base_url}{INCIDENTS}?sysparm_limit=1", auth=AUTH).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"myna serve itsm at {base_url} did not start")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def two_servers() -> Iterator[tuple[str, str]]:
    """Two server processes on one database; the second starts once the first seeded it."""
    with postgres_schema() as url, _server(url) as first, _server(url) as second:
        yield first, second


def _create_incident(base_url: str) -> str:
    response = httpx.post(f"{base_url}{INCIDENTS}", json={"short_description": "hot"}, auth=AUTH)
    assert response.status_code == 201, response.text
    sys_id: str = response.json()["result"]["sys_id"]
    return sys_id


def _patch_many(base_url: str, record: str, field: str, client: int) -> int:
    """PATCH `field` of `record` PATCHES times; the number of acknowledged PATCHes."""
    acknowledged = 0
    with httpx.Client(base_url=base_url, auth=AUTH, timeout=60) as http:
        for n in range(PATCHES):
            response = http.patch(f"{INCIDENTS}/{record}", json={field: f"client {client} #{n}"})
            assert response.status_code == 200, response.text
            acknowledged += 1
    return acknowledged


def _read(base_url: str, record: str) -> dict[str, str]:
    response = httpx.get(f"{base_url}{INCIDENTS}/{record}", auth=AUTH)
    result: dict[str, str] = response.json()["result"]
    return result


def test_a_hot_record_counts_every_acknowledged_patch(two_servers: tuple[str, str]) -> None:
    record = _create_incident(two_servers[0])

    with ThreadPoolExecutor(CLIENTS) as pool:
        acknowledged = pool.map(
            lambda client: _patch_many(
                two_servers[client % 2], record, FIELDS[client % len(FIELDS)], client
            ),
            range(CLIENTS),
        )
        total = sum(acknowledged)

    assert total == CLIENTS * PATCHES
    for base_url in two_servers:
        assert _read(base_url, record)["sys_mod_count"] == str(total)


def test_clients_owning_disjoint_fields_of_shared_records_keep_every_last_value(
    two_servers: tuple[str, str],
) -> None:
    records = [_create_incident(two_servers[0]) for _ in range(-(-CLIENTS // len(FIELDS)))]
    owned = [
        (records[client // len(FIELDS)], FIELDS[client % len(FIELDS)]) for client in range(CLIENTS)
    ]

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(
            pool.map(
                lambda client: _patch_many(two_servers[client % 2], *owned[client], client),
                range(CLIENTS),
            )
        )

    stale = []
    for client, (record, field) in enumerate(owned):
        value = _read(two_servers[1 - client % 2], record)[field]
        if value != f"client {client} #{PATCHES - 1}":
            stale.append((client, field, value))
    assert stale == []
    counts = [int(_read(two_servers[0], record)["sys_mod_count"]) for record in records]
    writers = [sum(1 for r, _ in owned if r == record) for record in records]
    assert counts == [n * PATCHES for n in writers]
