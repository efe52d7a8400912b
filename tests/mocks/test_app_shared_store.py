"""Several mock processes on one database serve the same worlds consistently (SQLite file and
PostgreSQL); two `Mock` instances over two stores stand in for two processes."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.example import TABLE, servicenow_example
from myna.mocks.serve import serving
from myna.mocks.sqlstore import SqlStore
from tests.mocks.conftest import ADMIN_TOKEN, USER

INCIDENTS = f"{TABLE}/incident"


Process = Callable[[], Mock]


@pytest.fixture
def process(store_url: str) -> Iterator[Process]:
    """Makes mock "processes" on the test's database; closes their connections afterwards."""
    stores: list[SqlStore] = []

    def start() -> Mock:
        model = servicenow_example()
        stores.append(SqlStore(model, store_url))
        credentials = Credentials.parse([":".join(USER)])
        return Mock(model, stores[-1], credentials=credentials, admin_token=ADMIN_TOKEN)

    yield start
    for store in stores:
        store.close()


def test_two_processes_share_worlds_records_and_sequences(process: Process) -> None:
    first, second = process(), process()
    admin = MockClient(first, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert admin.post("/_myna/admin/worlds", json={"id": "shared"}).status == 201
    via_first = MockClient(first, auth=USER, world="shared")
    via_second = MockClient(second, auth=USER, world="shared")

    created = via_first.post(INCIDENTS, json={"short_description": "from the first"})
    also = via_second.post(INCIDENTS, json={"short_description": "from the second"})

    assert (created.status, also.status) == (201, 201)
    numbers = [r["number"] for r in via_second.get(INCIDENTS).json()["result"]]
    assert numbers == ["INC0010001", "INC0010002"]
    record_id = created.json()["result"]["sys_id"]
    assert via_second.get(f"{INCIDENTS}/{record_id}").json() == created.json()


def test_served_over_http_with_the_store_off_the_event_loop(process: Process) -> None:
    mock = process()
    with (
        serving(mock, threadpool=True) as running,
        httpx.Client(base_url=running.base_url, auth=USER) as client,
    ):
        created = client.post(INCIDENTS, json={"short_description": "threaded"})
        listed = client.get(INCIDENTS)

    assert created.status_code == 201
    assert listed.headers["x-total-count"] == "1"
