"""Seed files for the built-in back ends' tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from myna.backends import builtin_model, write_seed_files
from myna.backends.itsm.instance import Instance
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.sqlstore import SqlStore


def initial_seed_dir(
    factory: pytest.TempPathFactory,
    initial_records: Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]],
) -> Path:
    """A reference service's state before its corpus ran, written as seed files."""
    directory = factory.mktemp("initial-seed")
    write_seed_files(initial_records(), directory)
    return directory


def itsm_pair(world: str, clock: Callable[[], float] | None = None) -> tuple[Instance, MockClient]:
    """A fresh ITSM reference instance and a served ITSM mock, both with the user `ana` (password
    `pw` on the mock, and a sys_user record on both), for tests that send the two the same
    calls; `clock` (POSIX seconds) is the mock's, for a test that moves time on both."""
    model = builtin_model("itsm")
    users = Credentials(users={"ana": "pw"})
    store = SqlStore(model, "sqlite://")
    mock = Mock(model, store, credentials=users, **({"clock": clock} if clock else {}))
    mock.store.create_world(world)
    instance = Instance("https://example.service-now.com", datetime(2026, 1, 5, 9, 0, 0))
    user = {"user_name": "ana", "first_name": "Ana"}
    instance.insert("sys_user", user, "admin")
    client = MockClient(mock, auth=("ana", "pw"), world=world)
    # Both sides know the caller as a user, so both can stamp her as who resolved or closed.
    assert client.post("/api/now/table/sys_user", json=user).status == 201
    return instance, client
