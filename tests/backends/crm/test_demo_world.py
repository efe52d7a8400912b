"""The demo-sized CRM world: reproduced from the reference org, at a demo org's scale, every rule
holding in it, and served the way `myna serve crm --seed-dir .../demo_world` serves it."""

from __future__ import annotations

import json
from collections import Counter
from importlib.resources import as_file, files
from typing import Any

import pytest

from myna.backends.crm.demo import demo_world
from myna.backends.crm.objects import PICKLISTS, STAGES
from myna.backends.crm.world import seed_files
from myna.mocks import MockClient
from myna.mocks.auth import Credentials
from myna.mocks.cli import served_mock

SHIPPED = files("myna.backends.crm").joinpath("demo_world")
DATA = "/services/data/v59.0"
TOKEN = "crm-demo-token"


@pytest.fixture(scope="module")
def api() -> MockClient:
    with as_file(SHIPPED) as directory:
        mock = served_mock(
            "crm", seed_dir=directory, credentials=Credentials(tokens=frozenset({TOKEN}))
        )
    return MockClient(mock, headers={"Authorization": f"Bearer {TOKEN}"})


def records(api: MockClient, soql: str) -> list[dict[str, Any]]:
    answer = api.get(f"{DATA}/query/", params={"q": soql})
    assert answer.status == 200, answer.body
    found: list[dict[str, Any]] = json.loads(answer.body)["records"]
    return found


def count(api: MockClient, soql: str) -> int:
    answer = api.get(f"{DATA}/query/", params={"q": soql})
    assert answer.status == 200, answer.body
    total: int = json.loads(answer.body)["totalSize"]
    return total


def test_regenerating_the_demo_world_reproduces_the_shipped_seed_files() -> None:
    shipped = {
        item.name: item.read_text(encoding="utf-8")
        for item in SHIPPED.iterdir()
        if item.name.endswith(".jsonl")
    }
    assert seed_files(demo_world()) == shipped, (
        "regenerate: python -m myna.backends.crm.demo -o myna/backends/crm/demo_world"
    )


@pytest.mark.parametrize(
    ("name", "at_least"),
    [("Account", 200), ("Contact", 600), ("Opportunity", 400), ("Case", 300), ("Task", 200)],
)
def test_the_world_is_demo_sized(api: MockClient, name: str, at_least: int) -> None:
    assert count(api, f"SELECT COUNT() FROM {name}") >= at_least


def test_opportunities_span_every_stage_with_its_derived_values(api: MockClient) -> None:
    deals = records(
        api, "SELECT StageName, Probability, ForecastCategoryName, IsClosed, IsWon FROM Opportunity"
    )
    assert set(Counter(deal["StageName"] for deal in deals)) == set(STAGES)
    for deal in deals:
        probability, category = STAGES[deal["StageName"]]
        assert (deal["Probability"], deal["ForecastCategoryName"]) == (probability, category)
        assert deal["IsWon"] == (deal["StageName"] == "Closed Won")


def test_cases_span_every_status_and_closed_ones_have_a_reason(api: MockClient) -> None:
    cases = records(api, "SELECT Status, Reason, IsClosed, ClosedDate FROM Case")
    assert {case["Status"] for case in cases} == set(PICKLISTS["CaseStatus"])
    for case in cases:
        closed = case["Status"] == "Closed"
        assert case["IsClosed"] == closed
        if closed:
            assert case["Reason"] is not None, case
            assert case["ClosedDate"] is not None, case


def test_agents_can_search_it(api: MockClient) -> None:
    answer = api.get(f"{DATA}/search/", params={"q": "FIND {Northwind} RETURNING Account(Name)"})
    assert answer.status == 200, answer.body
    found = json.loads(answer.body)["searchRecords"]
    assert len(found) >= 10
    assert all("Northwind" in record["Name"] for record in found)
    owned = records(api, "SELECT Owner.Name FROM Account WHERE Owner.Name != null LIMIT 500")
    assert len({record["Owner"]["Name"] for record in owned}) >= 3
