"""Fixtures shared by every stage's tests: database URLs for the mock store, a chat endpoint.

`store_url` runs a test once on SQLite (a file in the test's temporary directory) and once on
PostgreSQL. PostgreSQL comes from `MYNA_TEST_POSTGRES_URL` (default: a local server); each test
gets its own schema, selected through the connection's `search_path`, so parallel runs never see
each other's tables. When the server is unreachable the PostgreSQL case is skipped, except under
CI (`CI=true`), where it fails.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import uvicorn
from fastapi import FastAPI, Request
from hypothesis import HealthCheck, settings

# Timing is for benchmarks, never a unit test's verdict: a loaded machine (CI beside other jobs)
# must not fail a property because one example ran slowly.
settings.register_profile(
    "myna", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("myna")

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_base_url() -> str:
    return os.environ.get("MYNA_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)


@cache
def _postgres_unreachable(url: str) -> str | None:
    """Why the server cannot be used, or None when it answers."""
    engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except (sa.exc.OperationalError, sa.exc.InterfaceError) as error:
        return str(error).splitlines()[0]
    finally:
        engine.dispose()
    return None


def _require_postgres(url: str) -> None:
    reason = _postgres_unreachable(url)
    if reason is None:
        return
    message = f"PostgreSQL at {sa.make_url(url).render_as_string()} is unreachable: {reason}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A PostgreSQL URL whose connections work in a fresh schema, dropped afterwards."""
    base = postgres_base_url()
    _require_postgres(base)
    schema = f"myna_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base)
    try:
        with admin.begin() as connection:
            connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        url = sa.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
        with admin.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
    finally:
        admin.dispose()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A PostgreSQL URL of the test's own schema (`postgres_schema`)."""
    with postgres_schema() as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file of the test's own (a file, so that two stores can share it)."""
    return f"sqlite:///{tmp_path / 'myna.db'}"


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
    ]
)
def store_url(request: pytest.FixtureRequest) -> str:
    """A database URL for the mock store: each test runs on SQLite and on PostgreSQL."""
    fixture = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    url: str = request.getfixturevalue(fixture)
    return url


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _chat_server(replies: list[dict[str, Any]], seen: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> dict[str, Any]:
        seen.append(await request.json())
        return replies[len(seen) - 1]

    return app


@pytest.fixture
def chat_endpoint() -> Iterator[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    """An OpenAI-compatible chat endpoint on a real port: append the completions it answers
    with to `replies`; the requests it got land in `seen`."""
    replies: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    port = _free_port()
    config = uvicorn.Config(_chat_server(replies, seen), port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}/v1", replies, seen
    server.should_exit = True
    thread.join(timeout=5)
