"""Concurrent writers on one database lose no acknowledged write.

Two `myna serve itsm` processes share a PostgreSQL database, or one `myna serve itsm --workers 2`
serves a SQLite file or PostgreSQL from two worker processes on one port, and 16 clients PATCH
through both at once: every
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
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import httpx
import pytest

from myna.mocks.serve import free_port
from tests.conftest import postgres_schema

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
ADMIN_TOKEN = "concurrency-admin-token"


@contextmanager
def _server(db: str, *options: str, admin_token: str = ADMIN_TOKEN) -> Iterator[tuple[str, int]]:
    """`myna serve itsm` on `db` in its own process, once it answers; its base URL and pid."""
    port = free_port()
    command = [sys.executable, "-c", "from myna.cli import main; main()", "serve", "itsm"]
    command += ["--db", db, "--port", str(port), *options]
    env = {**os.environ, "PYTHONPATH": str(REPO), "MYNA_ADMIN_TOKEN": admin_token}
    with subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ) as process:
        try:
            base_url = f"http://127.0.0.1:{port}"
            _wait_until_serving(base_url, process)
            yield base_url, process.pid
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


@pytest.fixture(
    scope="module",
    params=[
        pytest.param("servers-postgresql", marks=pytest.mark.postgres),
        pytest.param("workers-sqlite"),
        pytest.param("workers-postgresql", marks=pytest.mark.postgres),
    ],
)
def two_servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """Two server processes on one database (the second starts once the first seeded it), or
    one server of two workers (then both URLs are its one port)."""
    kind, database = str(request.param).split("-")
    with ExitStack() as stack:
        if database == "postgresql":
            url = stack.enter_context(postgres_schema())
        else:
            url = f"sqlite:///{tmp_path_factory.mktemp('workers') / 'myna.db'}"
        if kind == "servers":
            first, _ = stack.enter_context(_server(url))
            second, _ = stack.enter_context(_server(url))
            yield first, second
        else:
            port, _ = stack.enter_context(_server(url, "--workers", "2"))
            yield port, port


def test_workers_are_processes_sharing_the_worlds(tmp_path: Path) -> None:
    """`--workers 2`: two processes answer on the port, and a world one made is every one's."""
    with _server(f"sqlite:///{tmp_path / 'myna.db'}", "--workers", "2") as (base_url, pid):
        assert len(_children(pid)) == 2
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        made = httpx.post(f"{base_url}/_myna/admin/worlds", json={"id": "w"}, headers=admin)
        assert made.status_code == 201, made.text
        # The world's own credential, which every worker accepts (derived from the admin token).
        key = {"Authorization": f"Bearer {made.json()['credentials']['token']}"}
        for _ in range(8):  # a new connection each: the kernel hands them to either worker
            found = httpx.get(f"{base_url}/worlds/w{INCIDENTS}?sysparm_limit=1", headers=key)
            assert found.status_code == 200, found.text


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(FileNotFoundError):  # a process that ended meanwhile
            stat = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            if int(stat[1]) == pid:
                children.append(int(entry.name))
    return children


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
