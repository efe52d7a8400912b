"""simple-salesforce, unchanged, against the built-in CRM back end over HTTPS.

Each test builds a stock `Salesforce(instance_url=..., session_id=..., session=...)` the way an
integration with an existing session does, trusting the mock's CA through a `requests.Session`
with `verify=`; the world is chosen by the `X-Myna-World` header on that session, so every test
runs in its own world. What the client sends and expects is written down in
myna/mocks/backends/crm/PROTOCOL.md. Tests marked `xfail` name the runtime hook that is missing
and turn into failures (strict) the day it exists, so the marker has to go.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any, cast

import pytest
import requests
from simple_salesforce.api import Salesforce, SFType
from simple_salesforce.exceptions import (
    SalesforceError,
    SalesforceExpiredSession,
    SalesforceMalformedRequest,
    SalesforceResourceNotFound,
)

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.backends import builtin_model
from myna.mocks.backends.crm.objects import OBJECTS
from myna.mocks.serve import Running, serving
from myna.mocks.sqlstore import SqlStore

SESSION = "00D5g000004ExAmE!AQ0AQmyna.test.session"
INTEGRATION = ("integration@acme.example", "integration-password")
ID18 = re.compile(r"[a-zA-Z0-9]{18}")


@pytest.fixture(scope="module")
def mock() -> Mock:
    model = builtin_model("crm")
    credentials = Credentials(users=dict([INTEGRATION]), tokens=frozenset({SESSION}))
    return Mock(model, SqlStore(model, "sqlite://"), credentials=credentials)


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
    # A failed call's response stays referenced from an xfail traceback with its keep-alive
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


def obj(sf: Salesforce, name: str) -> SFType:
    """`sf.<name>`: simple-salesforce's attribute access, typed for the REST object API."""
    return cast(SFType, getattr(sf, name))


def answer(error: SalesforceError) -> Any:
    """The error's decoded body (the client stores the parsed JSON, typed as bytes)."""
    return error.content


def create(sf: Salesforce, name: str, **values: Any) -> str:
    """Create a record and find its id the way any client can: by a query on what it sent."""
    obj(sf, name).create(values)
    key, value = next(iter(values.items()))
    found = sf.query(f"SELECT Id FROM {name} WHERE {key} = '{value}'")
    assert found["totalSize"] == 1, found
    record_id: str = found["records"][0]["Id"]
    return record_id


# -- CRUD -------------------------------------------------------------------------------------


def test_a_created_record_is_read_back_with_its_attributes(sf: Salesforce) -> None:
    account = create(sf, "Account", Name="Northwind Traders", Industry="Retail")
    assert ID18.fullmatch(account)
    assert account.startswith("001")
    record = obj(sf, "Account").get(account)
    assert record["attributes"] == {
        "type": "Account",
        "url": f"/services/data/v59.0/sobjects/Account/{account}",
    }
    assert (record["Id"], record["Name"], record["Industry"]) == (
        account,
        "Northwind Traders",
        "Retail",
    )


@pytest.mark.xfail(
    strict=True,
    reason="a create answers the whole record; Salesforce answers {'id', 'success': true, "
    "'errors': []}: myna/mocks/runtime.py Mock._create needs a per-operation answer shape "
    "(the pinned 201 response of the create operation) instead of Mock._item",
)
def test_create_answers_the_new_id_with_success(sf: Salesforce) -> None:
    answer = obj(sf, "Account").create({"Name": "Globex"})
    assert set(answer) == {"id", "success", "errors"}
    assert (answer["success"], answer["errors"]) == (True, [])


def test_update_answers_204_and_changes_the_record(sf: Salesforce) -> None:
    contact = create(sf, "Contact", LastName="Brooks", Title="VP Operations")
    assert obj(sf, "Contact").update(contact, {"Title": "COO"}) == 204
    assert obj(sf, "Contact").get(contact)["Title"] == "COO"


def test_update_answers_no_body(sf: Salesforce) -> None:
    contact = create(sf, "Contact", LastName="Brooks")
    response = obj(sf, "Contact").update(contact, {"Title": "COO"}, raw_response=True)
    assert response.content == b""


def test_delete_answers_204_and_the_record_is_gone(sf: Salesforce) -> None:
    lead = create(sf, "Lead", LastName="Hughes", Company="Dunder Supplies")
    assert obj(sf, "Lead").delete(lead) == 204
    with pytest.raises(SalesforceResourceNotFound) as gone:
        obj(sf, "Lead").get(lead)
    assert answer(gone.value) == [
        {"errorCode": "NOT_FOUND", "message": "The requested resource does not exist"}
    ]


@pytest.mark.parametrize("name", ["Account", "Contact", "Lead", "Product2", "Case", "Task"])
def test_every_object_takes_a_create_and_a_get(sf: Salesforce, name: str) -> None:
    values = {
        "Account": {"Name": "Acme"},
        "Contact": {"LastName": "Kim"},
        "Lead": {"LastName": "Ito", "Company": "Oceanic"},
        "Product2": {"Name": "Edge Gateway"},
        "Case": {"Subject": "Gateway offline"},
        "Task": {"Subject": "Call back"},
    }[name]
    record_id = create(sf, name, **values)
    assert record_id.startswith(OBJECTS[name].key_prefix)
    assert obj(sf, name).get(record_id)["attributes"]["type"] == name


# -- SOQL ---------------------------------------------------------------------------------------


def test_query_selects_orders_and_limits(sf: Salesforce) -> None:
    for name, employees in (("Acme", 40), ("Globex", 900), ("Initech", 2500)):
        obj(sf, "Account").create({"Name": name, "NumberOfEmployees": employees})
    answer = sf.query(
        "SELECT Id, Name FROM Account WHERE NumberOfEmployees > 100 ORDER BY Name DESC LIMIT 5"
    )
    assert (answer["totalSize"], answer["done"]) == (2, True)
    assert [record["Name"] for record in answer["records"]] == ["Initech", "Globex"]
    assert all(record["attributes"]["type"] == "Account" for record in answer["records"])


def test_count_answers_the_total_without_records(sf: Salesforce) -> None:
    for name in ("A", "B", "C"):
        obj(sf, "Account").create({"Name": name})
    assert sf.query("SELECT COUNT() FROM Account") == {
        "totalSize": 3,
        "done": True,
        "records": [],
    }


def test_a_malformed_query_is_refused_with_malformed_query(sf: Salesforce) -> None:
    with pytest.raises(SalesforceMalformedRequest) as refused:
        sf.query("SELECT Id FROM Account WHERE")
    (entry,) = answer(refused.value)
    assert entry["errorCode"] == "MALFORMED_QUERY"
    assert "ERROR at Row:1:Column:" in entry["message"]


@pytest.mark.xfail(
    strict=True,
    reason="relationship fields come back under their dotted name ('Account.Name'); Salesforce "
    "nests them ({'Account': {'attributes': ..., 'Name': ...}}): myna/mocks/render.py "
    "RecordRenderer.render needs a nested projection for dotted SOQL fields",
)
def test_relationship_fields_come_back_nested(sf: Salesforce) -> None:
    account = create(sf, "Account", Name="Acme")
    obj(sf, "Contact").create({"LastName": "Brooks", "AccountId": account})
    (record,) = sf.query("SELECT Name, Account.Name FROM Contact")["records"]
    assert record["Account"]["Name"] == "Acme"


@pytest.mark.xfail(
    strict=True,
    reason="a query answers every match at once (done true, no nextRecordsUrl): "
    "myna/mocks/runtime.py Mock._query must cut the answer at the batch size (2000, or "
    "Sforce-Query-Options: batchSize=200..2000), keep a cursor, and answer "
    "GET query/{locator}-{offset} (the pinned query_more operation)",
)
def test_query_all_follows_next_records_url_across_pages(
    sf: Salesforce, seeder: MockClient
) -> None:
    for number in range(230):
        seeder.post(
            "/services/data/v59.0/sobjects/Lead",
            json={"LastName": f"Visitor {number:03d}", "Company": "Expo"},
        )
    first = sf.query("SELECT Id FROM Lead", headers={"Sforce-Query-Options": "batchSize=200"})
    assert (first["done"], len(first["records"])) == (False, 200)
    every = sf.query_all("SELECT Id FROM Lead", headers={"Sforce-Query-Options": "batchSize=200"})
    assert (every["totalSize"], len(every["records"])) == (230, 230)


@pytest.mark.xfail(
    strict=True,
    reason="GET search?q=FIND {...} is parsed as SOQL and answers MALFORMED_QUERY: "
    "myna/mocks/runtime.py Mock._query needs to recognise a search operation (its q starts with "
    "FIND) and answer it with myna/mocks/dialects/sosl.py parse_sosl/match_term as "
    "{'searchRecords': [...]}",
)
def test_search_finds_records_by_name(sf: Salesforce) -> None:
    obj(sf, "Account").create({"Name": "Acme Robotics"})
    found = sf.search("FIND {Acme} IN NAME FIELDS RETURNING Account(Name)")
    assert [record["Name"] for record in found["searchRecords"]] == ["Acme Robotics"]


# -- describe, limits, upsert --------------------------------------------------------------------


def test_the_global_describe_lists_every_object_with_its_key_prefix(sf: Salesforce) -> None:
    answer = sf.describe()
    assert answer is not None
    assert {item["name"]: item["keyPrefix"] for item in answer["sobjects"]} == {
        name: obj.key_prefix for name, obj in OBJECTS.items()
    }


@pytest.mark.xfail(
    strict=True,
    reason="sobjects/{Object}/describe answers 200 with an empty body: the operation is kind "
    "'other' with no example; myna/mocks/runtime.py needs a describe operation kind that renders "
    "the resource's fields (type, nillable, createable, updateable, picklistValues, referenceTo)",
)
def test_an_object_describe_lists_its_fields_and_picklist_values(sf: Salesforce) -> None:
    fields = {field["name"]: field for field in obj(sf, "Opportunity").describe()["fields"]}
    stages = [value["value"] for value in fields["StageName"]["picklistValues"]]
    assert stages[0] == "Prospecting"


@pytest.mark.xfail(
    strict=True,
    reason="PATCH sobjects/Account/External_Id__c/{value} looks the value up as a record Id and "
    "answers 404: myna/mocks/runtime.py needs an upsert operation kind that finds the record by "
    "an external-id field, creates it (201, created true) or updates it (200, created false)",
)
def test_upsert_by_external_id_creates_then_updates(sf: Salesforce) -> None:
    assert obj(sf, "Account").upsert("External_Id__c/ERP-1", {"Name": "Acme Robotics"}) == 201
    assert obj(sf, "Account").upsert("External_Id__c/ERP-1", {"Rating": "Hot"}) == 200
    assert obj(sf, "Account").get_by_custom_id("External_Id__c", "ERP-1")["Rating"] == "Hot"


@pytest.mark.xfail(
    strict=True,
    reason="limits answers 200 with an empty body (kind 'other', no example): "
    "myna/mocks/runtime.py needs the limits resource (DailyApiRequests Max and Remaining)",
)
def test_limits_report_the_daily_api_requests(sf: Salesforce) -> None:
    limits = sf.limits()
    assert limits["DailyApiRequests"]["Max"] == 15000


# -- sessions -----------------------------------------------------------------------------------


def test_an_expired_session_raises_with_the_recorded_401(
    server: Running, session: requests.Session
) -> None:
    stale = Salesforce(instance_url=server.base_url, session_id="00Dexpired", session=session)
    with pytest.raises(SalesforceExpiredSession) as expired:
        stale.query("SELECT Id FROM Account")
    assert answer(expired.value) == [
        {"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}
    ]


def test_a_password_grant_issues_a_session_the_client_can_use(
    server: Running, session: requests.Session
) -> None:
    user, password = INTEGRATION
    granted = session.post(
        f"{server.base_url}/services/oauth2/token",
        data={"grant_type": "password", "username": user, "password": password},
    )
    assert granted.status_code == 200
    token = granted.json()
    assert (token["token_type"], token["instance_url"]) == ("Bearer", server.base_url)
    sf = Salesforce(instance_url=server.base_url, session_id=token["access_token"], session=session)
    assert sf.query("SELECT COUNT() FROM Account")["totalSize"] == 0
    refused = session.post(
        f"{server.base_url}/services/oauth2/token",
        data={"grant_type": "password", "username": user, "password": "wrong"},
    )
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_grant")


# -- behaviour rules, each accepted and refused ---------------------------------------------------


def test_a_required_field_is_refused_when_missing(sf: Salesforce) -> None:
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Opportunity").create({"Name": "No stage", "CloseDate": "2026-06-30"})
    assert answer(refused.value)[0]["fields"] == ["StageName"]
    accepted = obj(sf, "Opportunity").create(
        {"Name": "Staged", "StageName": "Prospecting", "CloseDate": "2026-06-30"}
    )
    assert accepted["StageName"] == "Prospecting"


def test_a_restricted_picklist_refuses_other_values(sf: Salesforce) -> None:
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Case").create({"Subject": "s", "Priority": "Urgent"})
    assert answer(refused.value)[0]["fields"] == ["Priority"]
    assert obj(sf, "Case").create({"Subject": "s", "Priority": "High"})["Priority"] == "High"


@pytest.mark.xfail(
    strict=True,
    reason="refusals carry the runtime's own codes ('invalid_request'); Salesforce says "
    "REQUIRED_FIELD_MISSING and INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST: myna/mocks/runtime.py "
    "Mock._body / validation.validate_request need per-violation error codes the model can name",
)
def test_refusals_carry_salesforce_s_error_codes(sf: Salesforce) -> None:
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Account").create({"Industry": "Retail"})
    assert answer(refused.value)[0]["errorCode"] == "REQUIRED_FIELD_MISSING"


def test_computed_fields_are_refused(sf: Salesforce) -> None:
    deal = obj(sf, "Opportunity").create(
        {"Name": "Deal", "StageName": "Prospecting", "CloseDate": "2026-06-30"}
    )["Id"]
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Opportunity").update(deal, {"IsWon": True})
    assert answer(refused.value)[0]["fields"] == ["IsWon"]
    assert obj(sf, "Opportunity").update(deal, {"NextStep": "Demo"}) == 204


@pytest.mark.xfail(
    strict=True,
    reason="entering a stage changes no other field: the model names the changed fields "
    "(changes_on_entry) but cannot say their values; myna/schemas/model.py StateMachine needs "
    "values on entry (Closed Won -> Probability 100, IsClosed true, IsWon true) and "
    "myna/mocks/runtime.py Mock._update must apply them",
)
def test_closing_an_opportunity_as_won_sets_probability_and_the_flags(sf: Salesforce) -> None:
    deal = obj(sf, "Opportunity").create(
        {"Name": "Deal", "StageName": "Prospecting", "CloseDate": "2026-06-30"}
    )["Id"]
    obj(sf, "Opportunity").update(deal, {"StageName": "Closed Won"})
    won = obj(sf, "Opportunity").get(deal)
    assert (won["Probability"], won["IsClosed"], won["IsWon"]) == (100, True, True)


def test_closing_a_case_needs_a_reason(sf: Salesforce) -> None:
    case = obj(sf, "Case").create({"Subject": "Gateway offline"})["Id"]
    assert obj(sf, "Case").update(case, {"Status": "Escalated"}) == 204
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Case").update(case, {"Status": "Closed"})
    assert answer(refused.value)[0]["fields"] == ["Reason"]
    assert obj(sf, "Case").get(case)["Status"] == "Escalated"
    assert obj(sf, "Case").update(case, {"Status": "Closed", "Reason": "Breakdown"}) == 204
    assert obj(sf, "Case").update(case, {"Status": "Working"}) == 204


def test_converting_a_lead_moves_it_to_the_converted_status(sf: Salesforce) -> None:
    lead = obj(sf, "Lead").create({"LastName": "Nair", "Company": "Oceanic Freight"})["Id"]
    converted = sf.apexecute(f"LeadConvert/{lead}", method="POST", data={})
    assert converted["Status"] == "Closed - Converted"
    with pytest.raises(SalesforceResourceNotFound):
        sf.apexecute("LeadConvert/00Q000000000000AAA", method="POST", data={})


@pytest.mark.xfail(
    strict=True,
    reason="conversion changes the lead only: myna/schemas/model.py Effect cannot create records "
    "of other resources (the Account, Contact and Opportunity) nor set read-only fields "
    "(IsConverted, Converted*Id), and nothing makes a converted lead refuse edits",
)
def test_converting_a_lead_creates_an_account_a_contact_and_an_opportunity(
    sf: Salesforce,
) -> None:
    lead = obj(sf, "Lead").create({"LastName": "Nair", "Company": "Oceanic Freight"})["Id"]
    sf.apexecute(f"LeadConvert/{lead}", method="POST", data={})
    converted = obj(sf, "Lead").get(lead)
    assert converted["IsConverted"] is True
    assert obj(sf, "Account").get(converted["ConvertedAccountId"])["Name"] == "Oceanic Freight"
