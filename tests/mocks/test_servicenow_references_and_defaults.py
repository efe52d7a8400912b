"""ServiceNow shapes the ITSM mock must reproduce from its own corpus: every reference is
`{link, value}` whether or not the mock serves the target table (`""` when empty), and a new
record is born in the global domain, opened or written by its caller."""

from __future__ import annotations

import re
from typing import Any

import pytest

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.render import unserved_item_path
from myna.mocks.sqlstore import SqlStore

BASE = "https://example.service-now.com"
TABLE = "/api/now/table"
AGENT = ("itil.agent", "itil-password")
COMPANY = "375eb73037ae9a16e99afe98eff2bd3d"


@pytest.fixture(scope="module")
def mock() -> Mock:
    model = builtin_model("itsm")
    return Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users=dict([AGENT])))


@pytest.fixture
def api(mock: Mock, request: pytest.FixtureRequest) -> MockClient:
    world = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[-60:]
    mock.store.create_world(world)
    return MockClient(mock, auth=AGENT, world=world, base_url=BASE)


def create(api: MockClient, table: str, **values: str) -> dict[str, Any]:
    response = api.post(f"{TABLE}/{table}", json=values)
    assert response.status == 201, response.json()
    result: dict[str, Any] = response.json()["result"]
    return result


def test_an_unserved_table_gets_the_item_path_of_the_served_ones() -> None:
    assert unserved_item_path("core_company", builtin_model("itsm")) == (
        f"{TABLE}/core_company/",
        "",
    )


def test_a_reference_into_an_unserved_table_is_rendered_as_link_and_value(
    api: MockClient,
) -> None:
    user = create(api, "sys_user", user_name="ana.li", company=COMPANY)
    assert user["company"] == {"link": f"{BASE}{TABLE}/core_company/{COMPANY}", "value": COMPANY}


def test_an_empty_reference_into_an_unserved_table_is_an_empty_string(api: MockClient) -> None:
    assert create(api, "sys_user", user_name="ben.ng")["company"] == ""


@pytest.mark.parametrize("table", ["incident", "problem", "change_request", "sc_request"])
def test_a_new_task_is_in_the_global_domain_and_opened_by_its_caller(
    api: MockClient, table: str
) -> None:
    caller = create(api, "sys_user", user_name=AGENT[0])
    task = create(api, table, short_description="printer jammed")
    assert task["opened_by"]["value"] == caller["sys_id"]
    assert task["sys_domain"]["value"] == "global"
    assert task["sys_domain_path"] == "/"


def test_a_caller_without_a_user_record_opens_a_task_with_no_opener(api: MockClient) -> None:
    task = create(api, "incident", short_description="printer jammed")
    assert task["opened_by"] == ""
    assert api.get(f"{TABLE}/sys_user").json()["result"] == []


def test_a_new_article_is_written_by_its_caller(api: MockClient) -> None:
    caller = create(api, "sys_user", user_name=AGENT[0])
    article = create(api, "kb_knowledge", short_description="Reset a VPN token")
    assert article["author"]["value"] == caller["sys_id"]


@pytest.mark.parametrize(
    ("table", "field"),
    [("change_request", "requested_by"), ("sc_request", "requested_for")],
    ids=["change-requested-by", "request-requested-for"],
)
def test_a_new_change_or_request_is_on_behalf_of_its_caller(
    api: MockClient, table: str, field: str
) -> None:
    caller = create(api, "sys_user", user_name=AGENT[0])
    assert create(api, table, short_description="new laptop")[field]["value"] == caller["sys_id"]


def test_a_requester_the_client_names_is_kept(api: MockClient) -> None:
    create(api, "sys_user", user_name=AGENT[0])
    other = create(api, "sys_user", user_name="cara.diaz")
    request = create(api, "sc_request", short_description="monitor", requested_for=other["sys_id"])
    assert request["requested_for"]["value"] == other["sys_id"]
