"""What the tests of simple-salesforce against the CRM back end share: one served mock per module
over HTTPS, a world per test, and a stock client whose `requests.Session` trusts the mock's CA
and names the world (`X-Myna-World`)."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import requests
from simple_salesforce.api import Salesforce

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.serve import Running, serving
from myna.mocks.sqlstore import SqlStore

SESSION = "00D5g000004ExAmE!AQ0AQmyna.test.session"
INTEGRATION = ("integration@acme.example", "integration-password")


class Clock:
    """The mock's clock: the time of day until a test moves it on (getUpdated covers whole
    minutes only, so a test of it waits by moving the clock, not by sleeping)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, minutes: float) -> None:
        self.offset += minutes * 60

    def moment(self) -> datetime:
        return datetime.fromtimestamp(self(), tz=UTC)


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def mock(clock: Clock) -> Mock:
    model = builtin_model("crm")
    credentials = Credentials(users=dict([INTEGRATION]), tokens=frozenset({SESSION}))
    return Mock(model, SqlStore(model, "sqlite://"), credentials=credentials, clock=clock)


@pytest.fixture(scope="module")
def server(mock: Mock) -> Iterator[Running]:
    with serving(mock, tls=True) as running:
        yield running


@pytest.fixture
def world(mock: Mock, request: pytest.FixtureRequest) -> str:
    # Parametrized names share long prefixes: a digest of the whole name keeps worlds apart.
    digest = hashlib.sha1(request.node.name.encode()).hexdigest()[:8]
    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:48] + "-" + digest
    mock.store.create_world(name)
    return name


@pytest.fixture
def session(
    server: Running, world: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[requests.Session]:
    assert server.ca_file is not None
    # requests lets REQUESTS_CA_BUNDLE override a session's verify= for every call it sends.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(server.ca_file))
    monkeypatch.setenv("CURL_CA_BUNDLE", str(server.ca_file))
    stock = requests.Session()
    stock.verify = str(server.ca_file)
    stock.headers["X-Myna-World"] = world
    # A failed call's response stays referenced from a traceback with its keep-alive
    # connection open, and uvicorn waits for open connections before it stops.
    stock.headers["Connection"] = "close"
    yield stock
    stock.close()


@pytest.fixture
def sf(server: Running, session: requests.Session) -> Salesforce:
    return Salesforce(instance_url=server.base_url, session_id=SESSION, session=session)


@pytest.fixture
def seeder(mock: Mock, world: str) -> MockClient:
    """The same world in process, for loading many records fast (not the client under test)."""
    return MockClient(mock, headers={"Authorization": f"Bearer {SESSION}"}, world=world)
