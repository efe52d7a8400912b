"""The ITSM mock's Aggregate API (`/api/now/stats/{table}`) and `gs.dateGenerate` dates
(PROTOCOL.md §7 and §2.4), over the served shipped model."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.sqlstore import SqlStore

STATS = "/api/now/stats/incident"
# (urgency, impact) of each incident created
INCIDENTS = [("1", "1"), ("1", "2"), ("2", "2"), ("3", "3"), ("3", "3")]


@pytest.fixture(scope="module")
def api() -> MockClient:
    model = builtin_model("itsm")
    mock = Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users={"ana": "pw"}))
    mock.store.create_world("stats")
    client = MockClient(mock, auth=("ana", "pw"), world="stats")
    for urgency, impact in INCIDENTS:
        sent = {"short_description": "printer jam", "urgency": urgency, "impact": impact}
        created = client.post("/api/now/table/incident", json=sent)
        assert created.status == 201, created.body
    return client


def stats(api: MockClient, **params: str) -> Any:
    response = api.get(STATS, params=params)
    assert response.status == 200, response.body
    return response.json()["result"]


def listed(api: MockClient, query: str) -> list[dict[str, Any]]:
    response = api.get("/api/now/table/incident", params={"sysparm_query": query})
    assert response.status == 200, response.body
    result: list[dict[str, Any]] = response.json()["result"]
    return result


def test_count_is_the_number_of_records_the_query_selects(api: MockClient) -> None:
    total = len(listed(api, ""))
    assert stats(api, sysparm_count="true") == {"stats": {"count": str(total)}}
    urgent = len(listed(api, "urgency=1"))
    assert urgent == 2
    assert stats(api, sysparm_count="true", sysparm_query="urgency=1") == {"stats": {"count": "2"}}
    assert stats(api, sysparm_count="true", sysparm_query="urgency=9") == {"stats": {"count": "0"}}
    # Without sysparm_count (and nothing else asked) the stats are empty, as ServiceNow's are.
    assert stats(api) == {"stats": {}}


def test_grouped_counts_follow_the_group_values(api: MockClient) -> None:
    grouped = stats(api, sysparm_count="true", sysparm_group_by="priority")
    expected = Counter(row["priority"] for row in listed(api, ""))
    assert grouped == [
        {"stats": {"count": str(n)}, "groupby_fields": [{"field": "priority", "value": value}]}
        for value, n in sorted(expected.items())
    ]
    two = stats(
        api, sysparm_count="true", sysparm_group_by="urgency,impact", sysparm_query="urgency=3"
    )
    assert two == [
        {
            "stats": {"count": "2"},
            "groupby_fields": [
                {"field": "urgency", "value": "3"},
                {"field": "impact", "value": "3"},
            ],
        }
    ]


def test_column_aggregates_are_text(api: MockClient) -> None:
    answer = stats(
        api,
        sysparm_query="urgency!=2",
        sysparm_avg_fields="urgency",
        sysparm_min_fields="urgency,short_description",
        sysparm_max_fields="impact",
        sysparm_sum_fields="urgency",
    )
    assert answer == {
        "stats": {
            "avg": {"urgency": "2.0000"},
            "min": {"urgency": "1", "short_description": "printer jam"},
            "max": {"impact": "3"},
            "sum": {"urgency": "8"},
        }
    }


def test_the_v1_path_is_the_same_api_and_an_unknown_table_is_refused(api: MockClient) -> None:
    assert api.get("/api/now/v1/stats/incident", params={"sysparm_count": "true"}).json() == {
        "result": {"stats": {"count": str(len(INCIDENTS))}}
    }
    refused = api.get("/api/now/stats/no_such_table", params={"sysparm_count": "true"})
    assert refused.status == 400
    assert refused.json()["error"]["message"] == "Invalid table no_such_table"


@pytest.mark.parametrize(
    ("when", "selected"),
    [
        ("javascript:gs.dateGenerate('2000-01-01','00:00:00')", len(INCIDENTS)),
        ('javascript:gs.dateGenerate("2000-01-01","start")', len(INCIDENTS)),
        ("javascript:gs.dateGenerate('2999-12-31','end')", 0),
    ],
)
def test_encoded_query_dates_written_with_gs_date_generate(
    api: MockClient, when: str, selected: int
) -> None:
    query = f"sys_created_on>{when}"
    assert len(listed(api, query)) == selected
    assert stats(api, sysparm_count="true", sysparm_query=query) == {
        "stats": {"count": str(selected)}
    }


def test_a_javascript_value_other_than_date_generate_is_a_400(api: MockClient) -> None:
    response = api.get(
        "/api/now/table/incident", params={"sysparm_query": "sys_created_on>javascript:gs.now()"}
    )
    assert response.status == 400
