"""The ServiceNow surface beyond incidents that real clients and agents call, as REST sequences
over a real HTTP server running `myna serve itsm` (its reference world): the service catalog
and its order now, the knowledge article workflow, approvals that move the record they are for,
roles granted to users and inherited from groups, multipart attachment uploads, and change
tasks under their change."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from myna.mocks.auth import Credentials
from myna.mocks.cli import served_mock
from myna.mocks.serve import Running, serving

TABLE = "/api/now/table"
ORDER = "/api/sn_sc/servicecatalog/items/{}/order_now"
PEOPLE = ("nina.sato", "carlos.mendes", "priya.raman")


@pytest.fixture(scope="module")
def server() -> Iterator[Running]:
    credentials = Credentials(users={name: "pw" for name in PEOPLE})
    mock = served_mock("itsm", credentials=credentials)
    try:
        with serving(mock) as running:
            yield running
    finally:
        mock.store.close()


class Api:
    """A plain HTTP client of the served instance, signed in as one person."""

    def __init__(self, server: Running, user: str) -> None:
        self.base = server.base_url
        self.session = requests.Session()
        self.session.auth = (user, "pw")
        self.session.headers.update({"Accept": "application/json", "Connection": "close"})

    def call(self, method: str, path: str, **options: Any) -> requests.Response:
        return self.session.request(method, f"{self.base}{path}", timeout=10, **options)

    def rows(self, table: str, query: str) -> list[dict[str, Any]]:
        params = {"sysparm_query": query, "sysparm_exclude_reference_link": "true"}
        answer = self.call("GET", f"{TABLE}/{table}", params=params)
        assert answer.status_code == 200, answer.text
        found: list[dict[str, Any]] = answer.json()["result"]
        return found

    def one(self, table: str, query: str) -> dict[str, Any]:
        (found,) = self.rows(table, query)
        return found

    def create(self, table: str, **values: Any) -> dict[str, Any]:
        answer = self.write("POST", f"{TABLE}/{table}", values)
        assert answer.status_code == 201, answer.text
        created: dict[str, Any] = answer.json()["result"]
        return created

    def patch(self, table: str, sys_id: str, **values: Any) -> requests.Response:
        return self.write("PATCH", f"{TABLE}/{table}/{sys_id}", values)

    def get(self, table: str, sys_id: str) -> dict[str, Any]:
        answer = self.call(
            "GET", f"{TABLE}/{table}/{sys_id}", params={"sysparm_exclude_reference_link": "true"}
        )
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()["result"]
        return found

    def write(self, method: str, path: str, values: Any) -> requests.Response:
        params = {"sysparm_exclude_reference_link": "true"}
        return self.call(method, path, json=values, params=params)


@pytest.fixture
def nina(server: Running) -> Api:
    return Api(server, "nina.sato")


def person(api: Api, user_name: str) -> str:
    return str(api.one("sys_user", f"user_name={user_name}")["sys_id"])


def error(answer: requests.Response) -> tuple[int, str, str]:
    body = answer.json()
    assert body["status"] == "failure", body
    return answer.status_code, body["error"]["message"], body["error"]["detail"]


# -- the service catalog ------------------------------------------------------------------------


def test_the_catalog_lists_categories_items_and_their_variables(nina: Api) -> None:
    hardware = nina.one("sc_category", "title=Hardware")
    items = {row["name"]: row for row in nina.rows("sc_cat_item", f"category={hardware['sys_id']}")}
    assert set(items) == {"Standard Laptop", "Monitor"}
    laptop = items["Standard Laptop"]
    variables = nina.rows("item_option_new", f"cat_item={laptop['sys_id']}^ORDERBYorder")
    assert [(v["name"], v["mandatory"]) for v in variables] == [
        ("operating_system", "true"),
        ("additional_software", "false"),
    ]


def test_ordering_an_item_makes_a_request_with_its_item(nina: Api) -> None:
    laptop = nina.one("sc_cat_item", "name=Standard Laptop")
    path = ORDER.format(laptop["sys_id"])
    before = len(nina.rows("sc_request", ""))
    refused = nina.call("POST", path, json={"sysparm_quantity": "2", "variables": {}})
    assert error(refused) == (400, "Mandatory Variables are required", "Operating system")
    assert len(nina.rows("sc_request", "")) == before  # the refused order made nothing
    answer = nina.call(
        "POST",
        path,
        json={"sysparm_quantity": "2", "variables": {"operating_system": "Windows 11"}},
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["table"] == "sc_request"
    assert result["request_number"] == result["number"]
    assert result["request_id"] == result["sys_id"]
    request = nina.get("sc_request", result["sys_id"])
    assert request["number"] == result["number"]
    assert request["requested_for"] == person(nina, "nina.sato")  # the caller, unless named
    assert (request["price"], request["approval"], request["state"]) == (
        "2598.00",
        "requested",
        "1",
    )
    (item,) = nina.rows("sc_req_item", f"request={result['sys_id']}")
    assert (item["cat_item"], item["parent"], item["quantity"]) == (
        laptop["sys_id"],
        result["sys_id"],
        "2",
    )
    assert item["short_description"] == laptop["short_description"]


def test_an_order_may_name_whom_it_is_for(nina: Api) -> None:
    monitor = nina.one("sc_cat_item", "name=Monitor")
    carlos = person(nina, "carlos.mendes")
    answer = nina.call(
        "POST", ORDER.format(monitor["sys_id"]), json={"sysparm_requested_for": carlos}
    )
    assert answer.status_code == 200, answer.text
    request = nina.get("sc_request", answer.json()["result"]["sys_id"])
    assert (request["requested_for"], request["price"]) == (carlos, "249.00")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{not json", 400),
        (b"[]", 400),
        (b'{"sysparm_quantity": "0"}', 400),
        (b'{"sysparm_quantity": "lots"}', 400),
        (b'{"variables": "operating_system=Linux"}', 400),
    ],
)
def test_an_unreadable_order_is_refused(nina: Api, body: bytes, status: int) -> None:
    monitor = nina.one("sc_cat_item", "name=Monitor")
    before = len(nina.rows("sc_request", ""))
    answer = nina.call(
        "POST",
        ORDER.format(monitor["sys_id"]),
        data=body,
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == status, answer.text
    assert answer.json()["status"] == "failure"
    assert len(nina.rows("sc_request", "")) == before


def test_ordering_an_unknown_item_is_not_found(nina: Api) -> None:
    answer = nina.call("POST", ORDER.format("0" * 32), json={})
    assert error(answer)[:2] == (404, "No Record found")


# -- knowledge ----------------------------------------------------------------------------------


def test_an_article_goes_through_review_to_publication_and_retirement(nina: Api) -> None:
    base = nina.one("kb_knowledge_base", "title=IT")
    email = nina.one("kb_category", f"label=Email^parent_id={base['sys_id']}")
    article = nina.create(
        "kb_knowledge",
        short_description="Shared mailbox missing in Outlook",
        text="<p>Remove and add the mailbox again.</p>",
        kb_knowledge_base=base["sys_id"],
        kb_category=email["sys_id"],
    )
    sys_id = article["sys_id"]
    assert (article["workflow_state"], article["published"], article["active"]) == (
        "draft",
        "",
        "true",
    )
    assert nina.patch("kb_knowledge", sys_id, workflow_state="review").status_code == 200
    published = nina.patch("kb_knowledge", sys_id, workflow_state="published").json()["result"]
    assert published["workflow_state"] == "published"
    assert published["published"]
    back = nina.patch("kb_knowledge", sys_id, workflow_state="draft")
    assert error(back)[:2] == (400, "Invalid value for kb_knowledge.workflow_state")
    retired = nina.patch("kb_knowledge", sys_id, workflow_state="retired").json()["result"]
    assert (retired["workflow_state"], retired["active"]) == ("retired", "false")
    assert error(nina.patch("kb_knowledge", sys_id, text="edited"))[:2] == (
        403,
        "Operation Failed",
    )
    found = nina.rows("kb_knowledge", f"kb_category={email['sys_id']}^active=true")
    assert sys_id not in {row["sys_id"] for row in found}


def test_a_new_article_starts_as_a_draft(nina: Api) -> None:
    answer = nina.write(
        "POST", f"{TABLE}/kb_knowledge", {"short_description": "x", "workflow_state": "retired"}
    )
    assert error(answer)[:2] == (400, "Invalid value for kb_knowledge.workflow_state")


# -- approvals ----------------------------------------------------------------------------------


def _change_in_authorize(api: Api, text: str) -> str:
    change = api.create("change_request", short_description=text)
    for state in ("-4", "-3"):
        assert api.patch("change_request", change["sys_id"], state=state).status_code == 200
    return str(change["sys_id"])


def test_a_change_is_scheduled_once_every_approver_approves(server: Running) -> None:
    carlos, priya = Api(server, "carlos.mendes"), Api(server, "priya.raman")
    change = _change_in_authorize(carlos, "Patch the VPN concentrators")
    approvals = [
        carlos.create("sysapproval_approver", sysapproval=change, approver=person(carlos, approver))
        for approver in ("carlos.mendes", "priya.raman")
    ]
    assert [(a["state"], a["source_table"], a["document_id"]) for a in approvals] == [
        ("requested", "change_request", change)
    ] * 2
    mine = priya.rows("sysapproval_approver", f"approver={person(priya, 'priya.raman')}")
    assert approvals[1]["sys_id"] in {row["sys_id"] for row in mine}
    assert priya.patch("sysapproval_approver", approvals[1]["sys_id"], state="approved").ok
    waiting = carlos.get("change_request", change)
    assert (waiting["state"], waiting["approval"]) == ("-3", "requested")
    assert carlos.patch("sysapproval_approver", approvals[0]["sys_id"], state="approved").ok
    scheduled = carlos.get("change_request", change)
    assert (scheduled["state"], scheduled["approval"]) == ("-2", "approved")
    # A decided approval is read-only.
    again = priya.patch("sysapproval_approver", approvals[1]["sys_id"], state="rejected")
    assert error(again)[:2] == (403, "Operation Failed")


def test_a_rejected_approval_sends_the_change_back_to_new(server: Running) -> None:
    carlos = Api(server, "carlos.mendes")
    change = _change_in_authorize(carlos, "Reboot the core switch at noon")
    approval = carlos.create(
        "sysapproval_approver", sysapproval=change, approver=person(carlos, "carlos.mendes")
    )
    rejected = carlos.patch(
        "sysapproval_approver", approval["sys_id"], state="rejected", comments="Not at noon."
    )
    assert rejected.ok, rejected.text
    back = carlos.get("change_request", change)
    assert (back["state"], back["approval"]) == ("-5", "rejected")


def test_an_approved_request_is_in_process(nina: Api, server: Running) -> None:
    monitor = nina.one("sc_cat_item", "name=Monitor")
    ordered = nina.call("POST", ORDER.format(monitor["sys_id"]), json={}).json()["result"]
    carlos = Api(server, "carlos.mendes")
    approval = carlos.create(
        "sysapproval_approver",
        sysapproval=ordered["sys_id"],
        approver=person(carlos, "carlos.mendes"),
    )
    assert approval["source_table"] == "sc_request"
    assert carlos.patch("sysapproval_approver", approval["sys_id"], state="approved").ok
    request = nina.get("sc_request", ordered["sys_id"])
    assert (request["approval"], request["request_state"]) == ("approved", "in_process")


def test_an_approval_needs_an_approver(nina: Api) -> None:
    answer = nina.write("POST", f"{TABLE}/sysapproval_approver", {"state": "requested"})
    assert error(answer) == (
        403,
        "Operation Failed",
        "Data Policy Exception: \n\tThe following fields are mandatory: Approver",
    )


# -- roles --------------------------------------------------------------------------------------


def _roles_of(api: Api, user: str) -> dict[str, tuple[str, str]]:
    """The names of a user's roles, each with whether it is inherited and from which group."""
    names = {row["sys_id"]: row["name"] for row in api.rows("sys_user_role", "")}
    return {
        names[row["role"]]: (row["inherited"], row["granted_by"])
        for row in api.rows("sys_user_has_role", f"user={user}")
    }


def test_a_user_created_with_roles_has_them(nina: Api) -> None:
    nina.create("sys_user_role", name="auditor", description="Reads the audit trail")
    user = nina.create(
        "sys_user", user_name="ada.moss", first_name="Ada", roles="itil,auditor,no_such_role"
    )
    assert _roles_of(nina, user["sys_id"]) == {"itil": ("false", ""), "auditor": ("false", "")}


def test_a_group_member_inherits_the_groups_roles(nina: Api) -> None:
    group = nina.create("sys_user_group", name="Auditors", roles="approver_user")
    user = nina.create("sys_user", user_name="ben.ode", first_name="Ben")
    assert _roles_of(nina, user["sys_id"]) == {}
    nina.create("sys_user_grmember", user=user["sys_id"], group=group["sys_id"])
    assert _roles_of(nina, user["sys_id"]) == {"approver_user": ("true", group["sys_id"])}


def test_the_reference_world_has_users_with_their_roles(nina: Api) -> None:
    roles = _roles_of(nina, person(nina, "priya.raman"))
    assert {"itil", "knowledge", "approver_user", "security_admin"} <= set(roles)


# -- attachments and change tasks ---------------------------------------------------------------


def test_a_multipart_upload_attaches_a_file(nina: Api) -> None:
    incident = nina.create("incident", short_description="Printer prints blank pages")
    answer = nina.call(
        "POST",
        "/api/now/attachment/upload",
        data={"table_name": "incident", "table_sys_id": incident["sys_id"]},
        files={"uploadFile": ("test page.pdf", b"%PDF-1.4 blank", "application/pdf")},
    )
    assert answer.status_code == 201, answer.text
    record = answer.json()["result"]
    assert (record["file_name"], record["content_type"], record["size_bytes"]) == (
        "test page.pdf",
        "application/pdf",
        "14",
    )
    assert answer.headers["Location"].endswith(f"/api/now/attachment/{record['sys_id']}")
    content = nina.call("GET", f"/api/now/attachment/{record['sys_id']}/file")
    assert content.content == b"%PDF-1.4 blank"


@pytest.mark.parametrize(
    ("data", "files", "status"),
    [
        ({"table_name": "incident", "table_sys_id": "0" * 32}, {"f": ("a.txt", b"a")}, 400),
        ({"table_name": "no_table", "table_sys_id": "0" * 32}, {"f": ("a.txt", b"a")}, 400),
        ({"table_name": "incident"}, None, 400),  # no file part
    ],
)
def test_a_multipart_upload_to_nothing_is_refused(
    nina: Api, data: dict[str, str], files: Any, status: int
) -> None:
    if files is None:
        answer = nina.call(
            "POST", "/api/now/attachment/upload", files={"table_name": (None, "incident")}
        )
    else:
        answer = nina.call("POST", "/api/now/attachment/upload", data=data, files=files)
    assert answer.status_code == status, answer.text
    assert answer.json()["status"] == "failure"


def test_an_upload_that_is_not_a_form_is_refused(nina: Api) -> None:
    answer = nina.call("POST", "/api/now/attachment/upload", json={"table_name": "incident"})
    assert error(answer)[:2] == (415, "Unsupported Media Type")


def test_a_change_task_belongs_to_the_change_it_was_created_under(nina: Api) -> None:
    changes = [nina.create("change_request", short_description=f"Change {n}") for n in range(3)]
    for change in changes:
        task = nina.create(
            "change_task", short_description="Verify", change_request=change["sys_id"]
        )
        assert task["parent"] == change["sys_id"]
