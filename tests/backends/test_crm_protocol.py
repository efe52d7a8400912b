"""PROTOCOL.md, clause by clause, against the runtime serving the shipped CRM model (in process).

Each test is one statement of the contract a Salesforce REST client relies on; the last section
states how the `salesforce` extension serves it (versions, worlds, seeded records, cursors, the
token answer).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from datetime import datetime
from typing import Any

import pytest

from myna.backends import builtin_model
from myna.backends.crm.instance import Org
from myna.backends.crm.objects import OBJECTS
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.ids import salesforce_checksum
from myna.mocks.messages import MockResponse
from myna.mocks.sqlstore import SqlStore

DATA = "/services/data/v59.0"
SESSION = "00D5g000004ExAmE!AQ0AQprotocol"
USER = ("integration@acme.example", "integration-password")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000")


@pytest.fixture(scope="module")
def mock() -> Mock:
    model = builtin_model("crm")
    credentials = Credentials(users=dict([USER]), tokens=frozenset({SESSION}))
    return Mock(model, SqlStore(model, "sqlite://"), credentials=credentials, strict=True)


@pytest.fixture
def api(mock: Mock, request: pytest.FixtureRequest) -> MockClient:
    # Parametrized names share long prefixes: a digest of the whole name keeps worlds apart.
    digest = hashlib.sha1(request.node.name.encode()).hexdigest()[:8]
    world = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:48] + "-" + digest
    mock.store.create_world(world)
    return MockClient(
        mock,
        headers={"Authorization": f"Bearer {SESSION}"},
        world=world,
        base_url="https://acme.my.salesforce.com",
    )


def decoded(response: MockResponse) -> Any:
    return json.loads(response.body)


def header(response: MockResponse, name: str) -> str | None:
    return next((v for k, v in response.headers if k.lower() == name.lower()), None)


def create(api: MockClient, name: str, **values: Any) -> str:
    response = api.post(f"{DATA}/sobjects/{name}/", json=values)
    assert response.status == 201, response.body
    body = decoded(response)
    record_id: str = body.get("id") or body["Id"]
    return record_id


# -- 1. sessions --------------------------------------------------------------------------------


@pytest.mark.parametrize("authorization", [None, "Bearer 00Dexpired"], ids=["none", "expired"])
def test_a_missing_or_unknown_session_gets_the_recorded_401(
    mock: Mock, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = MockClient(mock, headers=headers).get(f"{DATA}/sobjects/Account/describe")
    assert response.status == 401
    assert header(response, "WWW-Authenticate") == "Token"
    assert decoded(response) == [
        {"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}
    ]


def test_the_password_grant_answers_a_bearer_session_and_a_wrong_password_invalid_grant(
    mock: Mock,
) -> None:
    client = MockClient(mock, base_url="https://acme.my.salesforce.com")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    user, password = USER
    granted = client.post(
        "/services/oauth2/token",
        content=f"grant_type=password&username={user}&password={password}".encode(),
        headers=form,
    )
    assert granted.status == 200
    token = decoded(granted)
    assert (token["token_type"], token["instance_url"]) == (
        "Bearer",
        "https://acme.my.salesforce.com",
    )
    refused = client.post(
        "/services/oauth2/token",
        content=f"grant_type=password&username={user}&password=wrong".encode(),
        headers=form,
    )
    assert (refused.status, decoded(refused)["error"]) == (400, "invalid_grant")


def test_the_token_answer_has_salesforce_s_identity_fields(mock: Mock) -> None:
    user, password = USER
    granted = MockClient(mock).post(
        "/services/oauth2/token",
        content=f"grant_type=password&username={user}&password={password}".encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert {"id", "issued_at", "signature"} <= set(decoded(granted))


# -- 2. records ---------------------------------------------------------------------------------


def first_id(api: MockClient, soql: str) -> str:
    found = decoded(api.get(f"{DATA}/query/", params={"q": soql}))["records"]
    assert found, soql
    record_id: str = found[0]["Id"]
    return record_id


def values_for(api: MockClient, name: str) -> dict[str, Any]:
    """A create's body for `name`, with the records it must point at made first (the caller,
    an org's first user, is a System Administrator)."""
    if name == "OpportunityLineItem":
        opportunity = create(api, "Opportunity", **values_for(api, "Opportunity"))
        product = create(api, "Product2", Name="P")
        return {"OpportunityId": opportunity, "Product2Id": product, "Quantity": 1, "UnitPrice": 10}
    if name == "GroupMember":
        group = create(api, "Group", **values_for(api, "Group"))
        return {"GroupId": group, "UserOrGroupId": first_id(api, "SELECT Id FROM User")}
    if name == "PermissionSetAssignment":
        granted = create(api, "PermissionSet", **values_for(api, "PermissionSet"))
        return {"PermissionSetId": granted, "AssigneeId": first_id(api, "SELECT Id FROM User")}
    if name == "User":
        profile = first_id(api, "SELECT Id FROM Profile WHERE Name = 'System Administrator'")
        return {
            "Username": "u@acme.example",
            "LastName": "U",
            "Alias": "u",
            "Email": "u@acme.example",
            "TimeZoneSidKey": "Europe/London",
            "LocaleSidKey": "en_GB",
            "EmailEncodingKey": "UTF-8",
            "LanguageLocaleKey": "en_US",
            "ProfileId": profile,
        }
    return {
        "Account": {"Name": "A"},
        "Contact": {"LastName": "C"},
        "Lead": {"LastName": "L", "Company": "C"},
        "Opportunity": {"Name": "O", "StageName": "Prospecting", "CloseDate": "2026-06-30"},
        "Product2": {"Name": "P"},
        "Case": {"Subject": "S"},
        "Task": {"Subject": "T"},
        "UserRole": {"Name": "Sales", "OpportunityAccessForAccountOwner": "Edit"},
        "Group": {"Name": "Sales Team", "Type": "Regular"},
        "PermissionSet": {"Name": "Pricing", "Label": "Pricing"},
    }[name]


@pytest.mark.parametrize("name", sorted(n for n, obj in OBJECTS.items() if obj.flags["createable"]))
def test_minted_ids_have_the_object_key_prefix_and_a_valid_checksum(
    api: MockClient, name: str
) -> None:
    record_id = create(api, name, **values_for(api, name))
    assert len(record_id) == 18
    assert record_id.startswith(OBJECTS[name].key_prefix)
    assert record_id[15:] == salesforce_checksum(record_id[:15])


@pytest.mark.parametrize(
    ("method", "name", "allowed"),
    [
        ("POST", "Profile", "GET,HEAD"),
        ("DELETE", "User", "GET,HEAD,PATCH"),
        ("PATCH", "GroupMember", "GET,HEAD,DELETE"),
        ("PATCH", "PermissionSetAssignment", "GET,HEAD,DELETE"),
    ],
)
def test_a_method_the_object_does_not_take_answers_method_not_allowed(
    api: MockClient, method: str, name: str, allowed: str
) -> None:
    if method == "POST":
        response = api.post(f"{DATA}/sobjects/{name}/", json={"Name": "Copy"})
    else:
        record_id = create(api, name, **values_for(api, name))
        path = f"{DATA}/sobjects/{name}/{record_id}"
        response = api.delete(path) if method == "DELETE" else api.patch(path, json={})
    assert response.status == 405
    assert decoded(response) == [
        {
            "message": f"HTTP Method '{method}' not allowed. Allowed are {allowed}",
            "errorCode": "METHOD_NOT_ALLOWED",
        }
    ]


def test_a_record_carries_attributes_with_its_type_and_url(api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    record = decoded(api.get(f"{DATA}/sobjects/Account/{account}"))
    assert record["attributes"] == {
        "type": "Account",
        "url": f"{DATA}/sobjects/Account/{account}",
    }


def test_date_times_carry_milliseconds(api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    record = decoded(api.get(f"{DATA}/sobjects/Account/{account}"))
    assert STAMP.fullmatch(record["CreatedDate"])


def test_delete_answers_204_without_a_body(api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    deleted = api.delete(f"{DATA}/sobjects/Account/{account}")
    assert (deleted.status, deleted.body) == (204, b"")


def test_patch_answers_204_without_a_body(api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    updated = api.patch(f"{DATA}/sobjects/Account/{account}", json={"Rating": "Hot"})
    assert (updated.status, updated.body) == (204, b"")


def test_an_unknown_record_answers_not_found_without_fields(api: MockClient) -> None:
    response = api.get(f"{DATA}/sobjects/Account/0015g0000000000AAA")
    assert response.status == 404
    assert decoded(response) == [
        {"errorCode": "NOT_FOUND", "message": "The requested resource does not exist"}
    ]


@pytest.mark.parametrize(
    ("body", "code", "fields"),
    [
        ({"Industry": "Retail"}, "REQUIRED_FIELD_MISSING", ["Name"]),
        (
            {"Name": "A", "Industry": "Vigilantism"},
            "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
            ["Industry"],
        ),
        # A column the object lacks is named in the message only: it is no field of the record.
        ({"Name": "A", "Fax__c": "555"}, "INVALID_FIELD", []),
    ],
    ids=["required", "picklist", "unknown-field"],
)
def test_a_refused_write_answers_the_error_list_naming_the_field(
    api: MockClient, body: dict[str, str], code: str, fields: list[str]
) -> None:
    response = api.post(f"{DATA}/sobjects/Account/", json=body)
    assert response.status == 400
    (entry,) = decoded(response)
    assert set(entry) == {"message", "errorCode", "fields"}
    assert (entry["errorCode"], entry["fields"]) == (code, fields)


def test_a_missing_required_field_says_required_field_missing(api: MockClient) -> None:
    (entry,) = decoded(api.post(f"{DATA}/sobjects/Account/", json={"Industry": "Retail"}))
    assert entry == {
        "message": "Required fields are missing: [Name]",
        "errorCode": "REQUIRED_FIELD_MISSING",
        "fields": ["Name"],
    }


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [("Opportunity", "IsWon", True), ("Lead", "IsConverted", True), ("Case", "IsClosed", True)],
)
def test_computed_fields_are_refused_and_writable_ones_accepted(
    api: MockClient, name: str, field: str, value: Any
) -> None:
    values = {
        "Opportunity": {"Name": "O", "StageName": "Prospecting", "CloseDate": "2026-06-30"},
        "Lead": {"LastName": "L", "Company": "C"},
        "Case": {"Subject": "S"},
    }[name]
    record = create(api, name, **values)
    refused = api.patch(f"{DATA}/sobjects/{name}/{record}", json={field: value})
    assert refused.status == 400
    assert decoded(refused)[0]["fields"] == [field]
    accepted = api.patch(f"{DATA}/sobjects/{name}/{record}", json={"OwnerId": None})
    assert accepted.status == 204


def test_a_reference_must_name_an_existing_record(api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    assert (
        api.post(f"{DATA}/sobjects/Contact/", json={"LastName": "K", "AccountId": account}).status
        == 201
    )
    missing = api.post(
        f"{DATA}/sobjects/Contact/", json={"LastName": "K", "AccountId": "0015g0000000000AAA"}
    )
    assert missing.status in (400, 404)
    assert decoded(missing)[0]["fields"] == ["AccountId"]


# -- 3. SOQL ------------------------------------------------------------------------------------


def test_a_query_answers_total_size_done_and_records_with_attributes(api: MockClient) -> None:
    for name in ("Acme", "Globex"):
        create(api, "Account", Name=name)
    response = api.get(f"{DATA}/query/", params={"q": "SELECT Id, Name FROM Account ORDER BY Name"})
    answer = decoded(response)
    assert list(answer) == ["totalSize", "done", "records"]
    assert (answer["totalSize"], answer["done"]) == (2, True)
    assert [record["Name"] for record in answer["records"]] == ["Acme", "Globex"]
    assert set(answer["records"][0]) == {"attributes", "Id", "Name"}


def test_count_answers_no_records(api: MockClient) -> None:
    create(api, "Account", Name="Acme")
    answer = decoded(api.get(f"{DATA}/query/", params={"q": "SELECT COUNT() FROM Account"}))
    assert answer == {"totalSize": 1, "done": True, "records": []}


def test_a_malformed_query_answers_malformed_query_with_the_caret_message(
    api: MockClient,
) -> None:
    response = api.get(f"{DATA}/query/", params={"q": "SELECT Id FROM"})
    assert response.status == 400
    (entry,) = decoded(response)
    assert entry["errorCode"] == "MALFORMED_QUERY"
    assert entry["message"].startswith("\nSELECT Id FROM\n")


def test_query_all_sees_deleted_records(api: MockClient) -> None:
    account = create(api, "Account", Name="Gone")
    api.delete(f"{DATA}/sobjects/Account/{account}")
    soql = f"SELECT Id, IsDeleted FROM Account WHERE Id = '{account}'"
    answer = decoded(api.get(f"{DATA}/queryAll/", params={"q": soql}))
    assert [record["IsDeleted"] for record in answer["records"]] == [True]


def test_an_unknown_query_field_answers_invalid_field(api: MockClient) -> None:
    response = api.get(f"{DATA}/query/", params={"q": "SELECT Id FROM Account WHERE Revenue > 1"})
    (entry,) = decoded(response)
    assert entry["errorCode"] == "INVALID_FIELD"


# -- 5. behaviour -------------------------------------------------------------------------------


def test_a_case_closes_only_with_a_reason_and_may_reopen(api: MockClient) -> None:
    case = create(api, "Case", Subject="Gateway offline")
    path = f"{DATA}/sobjects/Case/{case}"
    assert api.patch(path, json={"Status": "Escalated"}).status == 204
    refused = api.patch(path, json={"Status": "Closed"})
    assert (refused.status, decoded(refused)[0]["fields"]) == (400, ["Reason"])
    assert decoded(api.get(path))["Status"] == "Escalated"
    assert api.patch(path, json={"Status": "Closed", "Reason": "Breakdown"}).status == 204
    assert api.patch(path, json={"Status": "New"}).status == 204


def test_any_stage_may_follow_any_other(api: MockClient) -> None:
    deal = create(api, "Opportunity", Name="O", StageName="Closed Won", CloseDate="2026-06-30")
    path = f"{DATA}/sobjects/Opportunity/{deal}"
    for stage in ("Prospecting", "Negotiation/Review", "Closed Lost", "Qualification"):
        assert api.patch(path, json={"StageName": stage}).status == 204
    assert decoded(api.get(path))["StageName"] == "Qualification"


def test_a_picklist_default_fills_a_left_out_status(api: MockClient) -> None:
    lead = create(api, "Lead", LastName="L", Company="C")
    assert decoded(api.get(f"{DATA}/sobjects/Lead/{lead}"))["Status"] == "Open - Not Contacted"


def test_lead_conversion_moves_the_lead_to_the_converted_status(api: MockClient) -> None:
    lead = create(api, "Lead", LastName="Nair", Company="Oceanic")
    converted = api.post(f"/services/apexrest/LeadConvert/{lead}", json={})
    assert converted.status == 200
    assert decoded(api.get(f"{DATA}/sobjects/Lead/{lead}"))["Status"] == "Closed - Converted"


def test_a_converted_lead_refuses_edits(api: MockClient) -> None:
    lead = create(api, "Lead", LastName="Nair", Company="Oceanic")
    api.post(f"/services/apexrest/LeadConvert/{lead}", json={})
    refused = api.patch(f"{DATA}/sobjects/Lead/{lead}", json={"Title": "CTO"})
    assert (refused.status, decoded(refused)[0]["errorCode"]) == (
        400,
        "CANNOT_UPDATE_CONVERTED_LEAD",
    )


# -- how the mock serves the contract (the `salesforce` extension) --------------------------------


def test_every_api_version_is_served_alike(api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    record = decoded(api.get(f"/services/data/v50.0/sobjects/Account/{account}"))
    assert record["attributes"]["url"] == f"/services/data/v50.0/sobjects/Account/{account}"


def test_an_unknown_path_under_services_answers_not_found(api: MockClient) -> None:
    response = api.get(f"{DATA}/sobjects/Account/0015g0000000000AAA/Contacts/extra")
    assert (response.status, decoded(response)) == (
        404,
        [{"message": "The requested resource does not exist", "errorCode": "NOT_FOUND"}],
    )


def test_a_write_to_a_deleted_record_says_entity_is_deleted(api: MockClient) -> None:
    account = create(api, "Account", Name="Gone")
    assert api.delete(f"{DATA}/sobjects/Account/{account}").status == 204
    for response in (
        api.patch(f"{DATA}/sobjects/Account/{account}", json={"Name": "Back"}),
        api.delete(f"{DATA}/sobjects/Account/{account}"),
    ):
        assert (response.status, decoded(response)[0]["errorCode"]) == (404, "ENTITY_IS_DELETED")


def test_records_live_in_the_caller_s_world_only(mock: Mock, api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    with mock.store.transaction(str(api.world)) as tx:
        stored = tx.get("Account", account)
    assert stored is not None
    assert (stored["Name"], stored["IsDeleted"]) == ("Acme", False)
    mock.store.create_world("crm-other-world")
    other = MockClient(
        mock, headers={"Authorization": f"Bearer {SESSION}"}, world="crm-other-world"
    )
    count = decoded(other.get(f"{DATA}/query/", params={"q": "SELECT COUNT() FROM Account"}))
    assert count["totalSize"] == 0


def test_a_record_seeded_with_some_fields_is_served_with_every_field(
    mock: Mock, api: MockClient
) -> None:
    account = "0015g0000000001AAA"
    # A generated record may name an owner no world holds and carry a stray relationship value.
    seeded = {"Id": account, "Name": "Seeded", "OwnerId": "zzz5g0000000001AAA", "Owner": {}}
    with mock.store.transaction(str(api.world)) as tx:
        tx.insert("Account", account, seeded)
    record = decoded(api.get(f"{DATA}/sobjects/Account/{account}"))
    assert (record["Name"], record["IsDeleted"], record["Industry"]) == ("Seeded", False, None)
    soql = "SELECT Name, Owner.Name FROM Account"
    found = decoded(api.get(f"{DATA}/query/", params={"q": soql}))
    assert [(row["Name"], row["Owner"]) for row in found["records"]] == [("Seeded", None)]


def test_a_refused_request_writes_nothing(api: MockClient) -> None:
    lead = create(api, "Lead", LastName="Nair", Company="Oceanic")
    refused = api.post(
        f"/services/apexrest/LeadConvert/{lead}",
        json={"convertedStatus": "Closed - Converted", "accountId": "0015g0000000000AAA"},
    )
    assert refused.status == 400
    assert decoded(api.get(f"{DATA}/sobjects/Lead/{lead}"))["IsConverted"] is False
    count = decoded(api.get(f"{DATA}/query/", params={"q": "SELECT COUNT() FROM Contact"}))
    assert count["totalSize"] == 0


def test_ids_and_case_numbers_count_on_across_requests(api: MockClient) -> None:
    first, second = (create(api, "Case", Subject=subject) for subject in ("A", "B"))
    numbers = [
        decoded(api.get(f"{DATA}/sobjects/Case/{case}"))["CaseNumber"] for case in (first, second)
    ]
    assert numbers == ["00001001", "00001002"]
    assert first != second


def test_the_oldest_of_more_than_ten_open_cursors_expires(api: MockClient) -> None:
    for number in range(201):
        create(api, "Lead", LastName=f"Visitor {number:03d}", Company="Expo")
    batch = {"Sforce-Query-Options": "batchSize=200"}
    urls = [
        decoded(api.get(f"{DATA}/query/", params={"q": "SELECT Id FROM Lead"}, headers=batch))[
            "nextRecordsUrl"
        ]
        for _ in range(11)
    ]
    expired = api.get(urls[0])
    assert (expired.status, decoded(expired)[0]["errorCode"]) == (400, "INVALID_QUERY_LOCATOR")
    last = decoded(api.get(urls[-1]))
    assert (last["done"], len(last["records"])) == (True, 1)


def test_the_token_answer_is_signed_and_names_the_user(mock: Mock, api: MockClient) -> None:
    user, password = USER
    granted = decoded(
        MockClient(mock, base_url="https://acme.my.salesforce.com", world=api.world).post(
            "/services/oauth2/token",
            content=f"grant_type=password&username={user}&password={password}".encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    )
    assert "expires_in" not in granted
    signed = f"{granted['id']}{granted['issued_at']}".encode()
    digest = hmac.new(granted["access_token"].encode(), signed, hashlib.sha256).digest()
    assert granted["signature"] == base64.b64encode(digest).decode("ascii")
    user_id = granted["id"].rsplit("/", 1)[1]
    me = MockClient(
        mock, headers={"Authorization": f"Bearer {granted['access_token']}"}, world=api.world
    )
    me_as_user = decoded(me.get(f"{DATA}/sobjects/User/{user_id}"))
    assert (me_as_user["Username"], me_as_user["Name"]) == (user, "integration")


def test_a_create_in_a_world_seeded_from_files_steps_past_the_seeded_ids_and_numbers(
    mock: Mock, api: MockClient
) -> None:
    # The ids and case number a fresh org mints first, as a world seeded from its records holds.
    fresh = Org("https://acme.my.salesforce.com", datetime(2026, 1, 5))
    case = fresh.new_id(OBJECTS["Case"].key_prefix)
    with mock.store.transaction(str(api.world)) as tx:
        tx.insert("Case", case, {"Id": case, "Subject": "Seeded", "CaseNumber": "00001001"})
    created = create(api, "Case", Subject="New")
    assert created != case
    assert decoded(api.get(f"{DATA}/sobjects/Case/{created}"))["CaseNumber"] == "00001002"


# -- JSON types ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "values", "field", "sent"),
    [
        ("Account", {}, "Name", {"a": 1}),
        ("Case", {"Subject": "S"}, "Description", ["a", "b"]),
        ("Account", {"Name": "A"}, "Industry", {"value": "Retail"}),
        ("Account", {"Name": "A"}, "AnnualRevenue", {"amount": 5}),
        ("Account", {"Name": "A"}, "NumberOfEmployees", [5]),
        ("Opportunity", {"Name": "O", "StageName": "Prospecting"}, "CloseDate", {"y": 2026}),
        ("Contact", {"LastName": "C"}, "AccountId", {"Id": "0015g0000000001AAA"}),
        ("Product2", {"Name": "P"}, "IsActive", {"yes": True}),
    ],
    ids=["string", "textarea", "picklist", "currency", "int", "date", "reference", "boolean"],
)
def test_an_object_or_array_for_a_scalar_field_is_a_json_parser_error(
    api: MockClient, name: str, values: dict[str, Any], field: str, sent: Any
) -> None:
    body = {**values, field: sent}
    if name == "Opportunity" and field != "CloseDate":
        body["CloseDate"] = "2026-06-30"
    response = api.post(f"{DATA}/sobjects/{name}/", json=body)
    assert response.status == 400, response.body
    (entry,) = decoded(response)
    assert entry["errorCode"] == "JSON_PARSER_ERROR"
    token = "START_OBJECT value {" if isinstance(sent, dict) else "START_ARRAY value ["
    assert token in entry["message"]
    count = decoded(api.get(f"{DATA}/query/", params={"q": f"SELECT COUNT() FROM {name}"}))
    assert count["totalSize"] == 0


def test_an_update_with_an_object_value_changes_nothing(api: MockClient) -> None:
    account = create(api, "Account", Name="Acme")
    refused = api.patch(f"{DATA}/sobjects/Account/{account}", json={"Name": {"a": 1}})
    assert (refused.status, decoded(refused)[0]["errorCode"]) == (400, "JSON_PARSER_ERROR")
    assert decoded(api.get(f"{DATA}/sobjects/Account/{account}"))["Name"] == "Acme"


# -- access objects ------------------------------------------------------------------------------


def refusal(response: MockResponse) -> tuple[int, str]:
    return response.status, decoded(response)[0]["errorCode"]


def test_a_role_cannot_be_its_own_parent_nor_its_own_ancestor(api: MockClient) -> None:
    top = create(api, "UserRole", Name="VP Sales", OpportunityAccessForAccountOwner="Edit")
    middle = create(
        api,
        "UserRole",
        Name="Director",
        OpportunityAccessForAccountOwner="Edit",
        ParentRoleId=top,
    )
    bottom = create(
        api,
        "UserRole",
        Name="Manager",
        OpportunityAccessForAccountOwner="Edit",
        ParentRoleId=middle,
    )
    for role, parent in ((top, top), (top, bottom), (middle, bottom)):
        response = api.patch(f"{DATA}/sobjects/UserRole/{role}", json={"ParentRoleId": parent})
        assert refusal(response) == (400, "CIRCULAR_DEPENDENCY"), (role, parent)
        assert decoded(response)[0]["fields"] == ["ParentRoleId"]
    assert decoded(api.get(f"{DATA}/sobjects/UserRole/{top}"))["ParentRoleId"] is None
    moved = api.patch(f"{DATA}/sobjects/UserRole/{bottom}", json={"ParentRoleId": top})
    assert moved.status == 204


def test_a_role_with_subordinate_roles_is_not_deleted(api: MockClient) -> None:
    top = create(api, "UserRole", Name="VP Sales", OpportunityAccessForAccountOwner="Edit")
    create(
        api, "UserRole", Name="Director", OpportunityAccessForAccountOwner="Edit", ParentRoleId=top
    )
    response = api.delete(f"{DATA}/sobjects/UserRole/{top}")
    assert refusal(response) == (400, "DELETE_FAILED")
    assert "VP Sales" in decoded(response)[0]["message"]
    assert api.get(f"{DATA}/sobjects/UserRole/{top}").status == 200


def groups_of_role(api: MockClient, role: str) -> list[str]:
    soql = f"SELECT Id FROM Group WHERE RelatedId = '{role}'"
    return [row["Id"] for row in decoded(api.get(f"{DATA}/query/", params={"q": soql}))["records"]]


def test_a_role_s_sharing_groups_go_only_with_the_role(api: MockClient) -> None:
    role = create(api, "UserRole", Name="Support", OpportunityAccessForAccountOwner="Edit")
    groups = groups_of_role(api, role)
    assert len(groups) == 2
    for group in groups:
        assert refusal(api.delete(f"{DATA}/sobjects/Group/{group}")) == (400, "DELETE_FAILED")
    assert groups_of_role(api, role) == groups
    assert api.delete(f"{DATA}/sobjects/UserRole/{role}").status == 204
    assert groups_of_role(api, role) == []


def test_the_organization_group_is_not_deleted(mock: Mock, api: MockClient) -> None:
    organization = "00G5g0000000001EAA"
    with mock.store.transaction(str(api.world)) as tx:
        tx.insert(
            "Group",
            organization,
            {"Id": organization, "Name": "", "Type": "Organization", "OwnerId": None},
        )
    response = api.delete(f"{DATA}/sobjects/Group/{organization}")
    assert refusal(response) == (400, "DELETE_FAILED")
    assert api.get(f"{DATA}/sobjects/Group/{organization}").status == 200


def test_a_group_cannot_contain_itself_directly_or_through_another(api: MockClient) -> None:
    sales = create(api, "Group", Name="Sales", Type="Regular")
    emea = create(api, "Group", Name="EMEA", Type="Regular")
    itself = api.post(
        f"{DATA}/sobjects/GroupMember/", json={"GroupId": sales, "UserOrGroupId": sales}
    )
    assert refusal(itself) == (400, "CIRCULAR_DEPENDENCY")
    create(api, "GroupMember", GroupId=sales, UserOrGroupId=emea)
    back = api.post(f"{DATA}/sobjects/GroupMember/", json={"GroupId": emea, "UserOrGroupId": sales})
    assert refusal(back) == (400, "CIRCULAR_DEPENDENCY")
    assert decoded(back)[0]["fields"] == ["UserOrGroupId"]
    count = decoded(api.get(f"{DATA}/query/", params={"q": "SELECT COUNT() FROM GroupMember"}))
    assert count["totalSize"] == 1


def profile_assignment(api: MockClient, user: str) -> dict[str, Any]:
    soql = (
        "SELECT Id, PermissionSetId FROM PermissionSetAssignment "
        f"WHERE AssigneeId = '{user}' AND PermissionSet.IsOwnedByProfile = true"
    )
    (found,) = decoded(api.get(f"{DATA}/query/", params={"q": soql}))["records"]
    assignment: dict[str, Any] = found
    return assignment


def test_the_assignment_that_carries_a_profile_stays_with_its_user(api: MockClient) -> None:
    user = create(api, "User", **values_for(api, "User"))
    carried = profile_assignment(api, user)
    response = api.delete(f"{DATA}/sobjects/PermissionSetAssignment/{carried['Id']}")
    assert refusal(response) == (400, "DELETE_FAILED")
    assert profile_assignment(api, user) == carried
