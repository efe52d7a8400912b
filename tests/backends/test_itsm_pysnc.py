"""ServiceNow's own Python client, `pysnc`, against the built-in ITSM back end over HTTPS.

Nothing here adapts pysnc: each test builds a stock `ServiceNowClient` pointed at the mock (one
isolated world per test, through the `/worlds/{id}` prefix) and uses its public API. What pysnc
sends and expects is written down in myna/backends/itsm/PROTOCOL.md; tests marked `xfail`
name the part of that contract the runtime does not meet yet, and turn into failures (strict) the
day it does, so the marker has to go.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pysnc import ServiceNowClient
from pysnc.auth import ServiceNowClientCredentialsFlow, ServiceNowPasswordGrantFlow
from pysnc.exceptions import AuthenticationException, RoleException

from myna.backends import builtin_model
from myna.mocks import Mock
from myna.mocks.auth import Credentials
from myna.mocks.serve import Running, serving
from myna.mocks.sqlstore import SqlStore

AGENT = ("itil.agent", "itil-password")
OAUTH_CLIENT = ("integration-client", "integration-secret")


@pytest.fixture(scope="module")
def store() -> SqlStore:
    return SqlStore(builtin_model("itsm"), "sqlite://")


@pytest.fixture(scope="module")
def server(store: SqlStore) -> Iterator[Running]:
    credentials = Credentials(users=dict([AGENT, OAUTH_CLIENT]))
    mock = Mock(builtin_model("itsm"), store, credentials=credentials)
    with serving(mock, tls=True) as running:
        yield running


@pytest.fixture
def instance_url(
    server: Running,
    store: SqlStore,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """A fresh world for the test, as the instance URL pysnc is given."""
    assert server.ca_file is not None
    # pysnc sends prepared requests, for which requests lets REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE
    # override the session's verify=; its client-credentials flow posts with no verify at all.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(server.ca_file))
    monkeypatch.setenv("CURL_CA_BUNDLE", str(server.ca_file))
    world = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:60]
    store.create_world(world)
    return f"{server.base_url}/worlds/{world}"


@pytest.fixture
def client(instance_url: str, server: Running) -> Iterator[ServiceNowClient]:
    stock = ServiceNowClient(instance_url, AGENT, verify=str(server.ca_file))
    # A failed call's response stays referenced from the xfail traceback with its keep-alive
    # connection open, and uvicorn waits for open connections before it stops.
    stock.session.headers["Connection"] = "close"
    yield stock
    stock.session.close()


def _insert(client: ServiceNowClient, short_description: str, **values: str) -> str:
    record = client.GlideRecord("incident")
    record.initialize()
    record.short_description = short_description
    for name, value in values.items():
        record.set_value(name, value)
    sys_id = record.insert()
    assert sys_id is not None
    return str(sys_id)


def test_insert_returns_the_new_record_with_its_sys_id_and_number(
    client: ServiceNowClient,
) -> None:
    record = client.GlideRecord("incident")
    record.initialize()
    record.short_description = "Outlook cannot connect"
    sys_id = record.insert()
    assert re.fullmatch(r"[0-9a-f]{32}", str(sys_id))
    assert re.fullmatch(r"INC\d{7}", record.number.get_value())
    assert record.sys_mod_count.get_value() == "0"


def test_get_by_sys_id_and_by_number(client: ServiceNowClient) -> None:
    sys_id = _insert(client, "VPN drops on hotel Wi-Fi")
    by_id = client.GlideRecord("incident")
    assert by_id.get(sys_id)
    number = by_id.number.get_value()
    by_number = client.GlideRecord("incident")
    assert by_number.get("number", number)
    assert (by_number.sys_id.get_value(), by_number.short_description.get_value()) == (
        sys_id,
        "VPN drops on hotel Wi-Fi",
    )


def test_get_of_an_unknown_sys_id_is_false(client: ServiceNowClient) -> None:
    assert client.GlideRecord("incident").get("0123456789abcdef0123456789abcdef") is False


def test_query_with_encoded_conditions(client: ServiceNowClient) -> None:
    _insert(client, "mail relay down", urgency="1")
    _insert(client, "vpn flapping", urgency="1")
    _insert(client, "mail quota warning", urgency="3")
    _insert(client, "printer jam", urgency="1")
    found = client.GlideRecord("incident")
    found.add_query("urgency", "1")
    found.add_encoded_query("short_descriptionLIKEmail^ORshort_descriptionSTARTSWITHvpn")
    found.query()
    assert sorted(row.short_description.get_value() for row in found) == [
        "mail relay down",
        "vpn flapping",
    ]
    assert found.get_row_count() == 2


def test_iteration_reads_every_page(client: ServiceNowClient) -> None:
    inserted = {_insert(client, f"bulk {index}") for index in range(7)}
    paged = client.GlideRecord("incident", batch_size=3)
    paged.add_query("short_description", "STARTSWITH", "bulk")
    paged.query()
    assert {row.sys_id.get_value() for row in paged} == inserted
    assert paged.get_row_count() == 7


def test_update_persists_and_counts_the_modification(client: ServiceNowClient) -> None:
    sys_id = _insert(client, "disk almost full")
    record = client.GlideRecord("incident")
    assert record.get(sys_id)
    record.short_description = "disk full on lnx-db-01"
    assert record.update() == sys_id
    again = client.GlideRecord("incident")
    assert again.get(sys_id)
    assert again.short_description.get_value() == "disk full on lnx-db-01"
    assert again.sys_mod_count.get_value() == "1"


def test_delete_removes_the_record(client: ServiceNowClient) -> None:
    sys_id = _insert(client, "test - please ignore")
    record = client.GlideRecord("incident")
    assert record.get(sys_id)
    assert record.delete() is True
    assert client.GlideRecord("incident").get(sys_id) is False


def test_a_wrong_password_is_an_authentication_error(instance_url: str, server: Running) -> None:
    intruder = ServiceNowClient(instance_url, ("itil.agent", "wrong"), verify=str(server.ca_file))
    with pytest.raises(AuthenticationException):
        intruder.GlideRecord("incident").query()
    intruder.session.close()


def test_client_credentials_grant_then_bearer_calls(instance_url: str, server: Running) -> None:
    flow = ServiceNowClientCredentialsFlow(*OAUTH_CLIENT)
    oauth = ServiceNowClient(instance_url, flow, verify=str(server.ca_file))
    record = oauth.GlideRecord("incident")
    record.initialize()
    record.short_description = "created with a bearer token"
    assert record.insert() is not None
    oauth.session.close()


def test_password_grant_then_bearer_calls(instance_url: str, server: Running) -> None:
    flow = ServiceNowPasswordGrantFlow(*AGENT, *OAUTH_CLIENT)
    oauth = ServiceNowClient(instance_url, flow, verify=str(server.ca_file))
    found = oauth.GlideRecord("incident")
    found.query()
    assert found.get_row_count() == 0
    oauth.session.close()


# -- where the runtime falls short of PROTOCOL.md --------------------------------------------


def test_update_multiple_goes_through_the_batch_api(client: ServiceNowClient) -> None:
    for index in range(3):
        _insert(client, f"refresh {index}")
    batch = client.GlideRecord("incident")
    batch.add_query("short_description", "STARTSWITH", "refresh")
    batch.query()
    for row in batch:
        row.urgency = "2"
    assert batch.update_multiple() is True
    check = client.GlideRecord("incident")
    check.add_query("urgency", "2")
    check.query()
    assert check.get_row_count() == 3


def test_delete_multiple_goes_through_the_batch_api(client: ServiceNowClient) -> None:
    for index in range(3):
        _insert(client, f"probe {index}")
    probes = client.GlideRecord("incident")
    probes.add_query("short_description", "STARTSWITH", "probe")
    assert probes.delete_multiple() is True


def test_attachments_upload_list_and_read(client: ServiceNowClient, tmp_path: Path) -> None:
    sys_id = _insert(client, "VPN log attached")
    record = client.GlideRecord("incident")
    assert record.get(sys_id)
    location = record.add_attachment("vpn.log", b"tunnel down\n", "text/plain")
    assert "/attachment/" in location
    (attachment,) = list(record.get_attachments())
    assert attachment.read() == b"tunnel down\n"


def test_resolving_without_resolution_fields_is_refused_by_the_data_policy(
    client: ServiceNowClient,
) -> None:
    sys_id = _insert(client, "mail down")
    record = client.GlideRecord("incident")
    assert record.get(sys_id)
    record.state = "6"
    with pytest.raises(RoleException):
        record.update()


def _insert_ci(client: ServiceNowClient, table: str, name: str) -> str:
    record = client.GlideRecord(table)
    record.initialize()
    record.name = name
    sys_id = record.insert()
    assert sys_id is not None
    return str(sys_id)


def test_the_parent_class_reads_its_childrens_records(client: ServiceNowClient) -> None:
    server = _insert_ci(client, "cmdb_ci_server", "lnx-db-01")
    _insert_ci(client, "cmdb_ci", "rtr-core-01")
    every_ci = client.GlideRecord("cmdb_ci")
    every_ci.query()
    assert sorted((ci.name.get_value(), ci.sys_class_name.get_value()) for ci in every_ci) == [
        ("lnx-db-01", "cmdb_ci_server"),
        ("rtr-core-01", "cmdb_ci"),
    ]
    servers = client.GlideRecord("cmdb_ci_server")
    servers.query()
    assert [ci.name.get_value() for ci in servers] == ["lnx-db-01"]
    through_parent = client.GlideRecord("cmdb_ci")
    assert through_parent.get(server)
    assert through_parent.sys_class_name.get_value() == "cmdb_ci_server"


def test_fields_carry_display_values(client: ServiceNowClient) -> None:
    sys_id = _insert(client, "site down", impact="1", urgency="1")
    record = client.GlideRecord("incident")
    assert record.get(sys_id)
    assert record.state.get_display_value() == "New"


def test_priority_is_derived_from_impact_and_urgency(client: ServiceNowClient) -> None:
    sys_id = _insert(client, "all customers affected", impact="1", urgency="1")
    record = client.GlideRecord("incident")
    assert record.get(sys_id)
    assert record.priority.get_value() == "1"


def _new(client: ServiceNowClient, table: str, **values: str) -> str:
    record = client.GlideRecord(table)
    record.initialize()
    for name, value in values.items():
        record.set_value(name, value)
    sys_id = record.insert()
    assert sys_id is not None
    return str(sys_id)


def _move(client: ServiceNowClient, table: str, sys_id: str, **values: str) -> None:
    record = client.GlideRecord(table)
    assert record.get(sys_id)
    for name, value in values.items():
        record.set_value(name, value)
    assert record.update() == sys_id


def test_approving_through_sysapproval_approver_schedules_the_change(
    client: ServiceNowClient,
) -> None:
    change = _new(client, "change_request", short_description="Rotate the TLS certificates")
    _move(client, "change_request", change, state="-4")
    _move(client, "change_request", change, state="-3")
    approver = _new(client, "sys_user", user_name="cab.chair", first_name="Cab")
    approval = _new(client, "sysapproval_approver", sysapproval=change, approver=approver)
    mine = client.GlideRecord("sysapproval_approver")
    mine.add_query("approver", approver)
    mine.add_query("state", "requested")
    mine.query()
    assert [record.sys_id for record in mine] == [approval]
    _move(client, "sysapproval_approver", approval, state="approved")
    scheduled = client.GlideRecord("change_request")
    assert scheduled.get(change)
    assert (scheduled.state, scheduled.approval) == ("-2", "approved")
    assert scheduled.get_display_value("state") == "Scheduled"


def test_a_user_created_with_roles_has_them_as_pysnc_reads_them(
    client: ServiceNowClient,
) -> None:
    for name in ("itil", "knowledge"):
        _new(client, "sys_user_role", name=name)
    user = _new(client, "sys_user", user_name="kim.reader", roles="itil,knowledge")
    granted = client.GlideRecord("sys_user_has_role")
    granted.add_query("user", user)
    granted.query()
    assert sorted(record.get_display_value("role") for record in granted) == [
        "itil",
        "knowledge",
    ]


def test_a_knowledge_article_is_published_through_review(client: ServiceNowClient) -> None:
    base = _new(client, "kb_knowledge_base", title="IT")
    article = _new(client, "kb_knowledge", short_description="Reset MFA", kb_knowledge_base=base)
    _move(client, "kb_knowledge", article, workflow_state="review")
    _move(client, "kb_knowledge", article, workflow_state="published")
    record = client.GlideRecord("kb_knowledge")
    assert record.get(article)
    assert (record.workflow_state, record.get_display_value("kb_knowledge_base")) == (
        "published",
        "IT",
    )
    assert record.published
