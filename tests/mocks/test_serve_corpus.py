"""A model learned from real ServiceNow recordings serves them back over HTTP: every recorded GET,
against the records the recordings show, gets the recorded status in the `{result}` envelope."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from myna.mocks import Mock
from myna.mocks.conformance import recorded_records
from myna.mocks.seed import seeding_order
from myna.mocks.serve import serving
from myna.mocks.sqlstore import SqlStore
from myna.schemas.learn import learn
from myna.traces.model import Session
from myna.traces.reading import read

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
SERVICENOW = CORPUS / "har" / "jupiterone_graph-servicenow"

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def sessions() -> list[Session]:
    if not SERVICENOW.is_dir():
        pytest.skip(f"the ServiceNow recordings are not at {SERVICENOW}")
    return [session for har in sorted(SERVICENOW.glob("*.har")) for session in read(har)]


def test_recorded_gets_replay_over_http_against_the_learned_model(sessions: list[Session]) -> None:
    [model] = learn(sessions, service="servicenow")
    store = SqlStore(model)
    records = recorded_records(model, sessions)
    ordered = [
        (resource, record_id, record)
        for resource in seeding_order(model)
        for (name, record_id), record in records.items()
        if name == resource
    ]
    store.create_world("default", from_snapshot=store.load_base(iter(ordered), "recorded"))
    mock = Mock(model, store)
    exchanges = [
        exchange
        for session in sessions
        for exchange in session.exchanges
        if exchange.method == "GET" and exchange.status == 200
    ]
    assert len(exchanges) > 50

    with (
        serving(mock) as running,
        httpx.Client(base_url=running.base_url, auth=("myna", "myna")) as client,
    ):
        answers = [
            client.get(urlsplit(exchange.url).path, params=exchange.query) for exchange in exchanges
        ]

    assert [a.status_code for a in answers] == [200] * len(exchanges)
    assert all("result" in answer.json() for answer in answers)
    store.close()
