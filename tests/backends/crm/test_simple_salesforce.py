"""simple-salesforce, unchanged, against the built-in CRM back end over HTTPS.

Each test builds a stock `Salesforce(instance_url=..., session_id=..., session=...)` the way an
integration with an existing session does, trusting the mock's CA through a `requests.Session`
with `verify=`; the world is chosen by the `X-Myna-World` header on that session, so every test
runs in its own world. What the client sends and expects is written down in
myna/backends/crm/PROTOCOL.md; the `salesforce` extension serves it.
"""

from __future__ import annotations

import re
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

from myna.backends.crm.objects import OBJECTS
from myna.mocks import MockClient
from myna.mocks.serve import Running
from tests.backends.crm.conftest import INTEGRATION

ID18 = re.compile(r"[a-zA-Z0-9]{18}")


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


def test_relationship_fields_come_back_nested(sf: Salesforce) -> None:
    account = create(sf, "Account", Name="Acme")
    obj(sf, "Contact").create({"LastName": "Brooks", "AccountId": account})
    (record,) = sf.query("SELECT Name, Account.Name FROM Contact")["records"]
    assert record["Account"]["Name"] == "Acme"


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


def test_an_object_describe_lists_its_fields_and_picklist_values(sf: Salesforce) -> None:
    fields = {field["name"]: field for field in obj(sf, "Opportunity").describe()["fields"]}
    stages = [value["value"] for value in fields["StageName"]["picklistValues"]]
    assert stages[0] == "Prospecting"


def test_upsert_by_external_id_creates_then_updates(sf: Salesforce) -> None:
    assert obj(sf, "Account").upsert("External_Id__c/ERP-1", {"Name": "Acme Robotics"}) == 201
    assert obj(sf, "Account").upsert("External_Id__c/ERP-1", {"Rating": "Hot"}) == 200
    assert obj(sf, "Account").get_by_custom_id("External_Id__c", "ERP-1")["Rating"] == "Hot"


def test_limits_report_the_daily_api_requests(sf: Salesforce) -> None:
    limits = sf.limits()
    assert limits["DailyApiRequests"]["Max"] == 15000


# -- access: roles, profiles, groups, permission sets --------------------------------------------


def test_an_access_review_reads_every_field_the_describe_names(sf: Salesforce) -> None:
    role = obj(sf, "UserRole").create(
        {"Name": "Support", "OpportunityAccessForAccountOwner": "Read"}
    )
    assert role["success"] is True
    for name in (
        "UserRole",
        "Profile",
        "User",
        "Group",
        "PermissionSet",
        "PermissionSetAssignment",
    ):
        described = obj(sf, name).describe()
        fields = [field["name"] for field in described["fields"]]
        found = sf.query_all(f"SELECT {', '.join(fields)} FROM {name}")
        assert found["records"], name
        assert all(list(record)[1:] == fields for record in found["records"]), name
    # The role's two sharing groups came with it.
    groups = sf.query(f"SELECT Type FROM Group WHERE RelatedId = '{role['id']}'")
    assert sorted(group["Type"] for group in groups["records"]) == ["Role", "RoleAndSubordinates"]


def test_users_and_members_walk_to_their_roles_profiles_and_groups(sf: Salesforce) -> None:
    role = obj(sf, "UserRole").create(
        {"Name": "Support", "OpportunityAccessForAccountOwner": "Read"}
    )
    (profile,) = sf.query("SELECT Id FROM Profile WHERE Name = 'System Administrator'")["records"]
    user = obj(sf, "User").create(
        {
            "Username": "ines@acme.example",
            "LastName": "Alvarez",
            "Alias": "ialv",
            "Email": "ines@acme.example",
            "TimeZoneSidKey": "Europe/London",
            "LocaleSidKey": "en_GB",
            "EmailEncodingKey": "UTF-8",
            "LanguageLocaleKey": "en_US",
            "ProfileId": profile["Id"],
            "UserRoleId": role["id"],
        }
    )
    team = obj(sf, "Group").create({"Name": "Support Team", "Type": "Regular"})
    obj(sf, "GroupMember").create({"GroupId": team["id"], "UserOrGroupId": user["id"]})
    (found,) = sf.query(
        "SELECT Name, UserRole.Name, Profile.Name FROM User WHERE Username = 'ines@acme.example'"
    )["records"]
    assert (found["UserRole"]["Name"], found["Profile"]["Name"]) == (
        "Support",
        "System Administrator",
    )
    (member,) = sf.query("SELECT Group.DeveloperName, UserOrGroupId FROM GroupMember")["records"]
    assert (member["Group"]["DeveloperName"], member["UserOrGroupId"]) == (
        "Support_Team",
        user["id"],
    )
    with pytest.raises(SalesforceMalformedRequest) as twice:
        obj(sf, "GroupMember").create({"GroupId": team["id"], "UserOrGroupId": user["id"]})
    assert answer(twice.value)[0]["errorCode"] == "DUPLICATE_VALUE"


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


def new(sf: Salesforce, name: str, **values: Any) -> str:
    """Create a record and take its id from Salesforce's create answer."""
    created = obj(sf, name).create(values)
    assert (created["success"], created["errors"]) == (True, [])
    record_id: str = created["id"]
    return record_id


def test_a_required_field_is_refused_when_missing(sf: Salesforce) -> None:
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Opportunity").create({"Name": "No stage", "CloseDate": "2026-06-30"})
    assert answer(refused.value) == [
        {
            "message": "Required fields are missing: [StageName]",
            "errorCode": "REQUIRED_FIELD_MISSING",
            "fields": ["StageName"],
        }
    ]
    deal = new(sf, "Opportunity", Name="Staged", StageName="Prospecting", CloseDate="2026-06-30")
    assert obj(sf, "Opportunity").get(deal)["StageName"] == "Prospecting"


def test_a_restricted_picklist_refuses_other_values(sf: Salesforce) -> None:
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Case").create({"Subject": "s", "Priority": "Urgent"})
    (entry,) = answer(refused.value)
    assert (entry["errorCode"], entry["fields"]) == (
        "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
        ["Priority"],
    )
    case = new(sf, "Case", Subject="s", Priority="High")
    assert obj(sf, "Case").get(case)["Priority"] == "High"


def test_an_unknown_field_is_refused_with_invalid_field(sf: Salesforce) -> None:
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Account").create({"Name": "Acme", "Fax__c": "555"})
    (entry,) = answer(refused.value)
    assert entry["errorCode"] == "INVALID_FIELD"
    assert "Fax__c" in entry["message"]
    with pytest.raises(SalesforceMalformedRequest) as queried:
        sf.query("SELECT Fax__c FROM Account")
    assert answer(queried.value)[0]["errorCode"] == "INVALID_FIELD"


def test_computed_fields_are_refused(sf: Salesforce) -> None:
    deal = new(sf, "Opportunity", Name="Deal", StageName="Prospecting", CloseDate="2026-06-30")
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Opportunity").update(deal, {"IsWon": True})
    assert answer(refused.value)[0]["fields"] == ["IsWon"]
    assert obj(sf, "Opportunity").update(deal, {"NextStep": "Demo"}) == 204


@pytest.mark.parametrize(
    ("stage", "probability", "category", "closed", "won"),
    [
        ("Value Proposition", 50, "Pipeline", False, False),
        ("Closed Won", 100, "Closed", True, True),
        ("Closed Lost", 0, "Omitted", True, False),
    ],
    ids=["open", "won", "lost"],
)
def test_a_stage_brings_its_probability_forecast_category_and_flags(
    sf: Salesforce, stage: str, probability: int, category: str, closed: bool, won: bool
) -> None:
    deal = new(sf, "Opportunity", Name="Deal", StageName="Prospecting", CloseDate="2026-06-30")
    assert obj(sf, "Opportunity").update(deal, {"StageName": stage}) == 204
    after = obj(sf, "Opportunity").get(deal)
    assert (
        after["Probability"],
        after["ForecastCategoryName"],
        after["IsClosed"],
        after["IsWon"],
    ) == (probability, category, closed, won)


def test_a_probability_sent_with_the_stage_wins_over_the_stage_default(sf: Salesforce) -> None:
    deal = new(sf, "Opportunity", Name="Deal", StageName="Prospecting", CloseDate="2026-06-30")
    obj(sf, "Opportunity").update(deal, {"StageName": "Negotiation/Review", "Probability": 65})
    assert obj(sf, "Opportunity").get(deal)["Probability"] == 65


def test_escalating_a_case_marks_it_and_closing_needs_a_reason(sf: Salesforce) -> None:
    case = new(sf, "Case", Subject="Gateway offline")
    assert obj(sf, "Case").update(case, {"Status": "Escalated"}) == 204
    assert obj(sf, "Case").get(case)["IsEscalated"] is True
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Case").update(case, {"Status": "Closed"})
    (entry,) = answer(refused.value)
    assert (entry["errorCode"], entry["fields"]) == (
        "FIELD_CUSTOM_VALIDATION_EXCEPTION",
        ["Reason"],
    )
    assert obj(sf, "Case").get(case)["Status"] == "Escalated"
    assert obj(sf, "Case").update(case, {"Status": "Closed", "Reason": "Breakdown"}) == 204
    closed = obj(sf, "Case").get(case)
    assert (closed["IsClosed"], closed["ClosedDate"] is not None) == (True, True)
    assert obj(sf, "Case").update(case, {"Status": "Working"}) == 204
    reopened = obj(sf, "Case").get(case)
    assert (reopened["IsClosed"], reopened["ClosedDate"]) == (False, None)


def test_converting_a_lead_creates_an_account_a_contact_and_an_opportunity(
    sf: Salesforce,
) -> None:
    lead = new(sf, "Lead", LastName="Nair", Company="Oceanic Freight")
    converted = sf.apexecute(f"LeadConvert/{lead}", method="POST", data={})
    assert converted["success"] is True
    after = obj(sf, "Lead").get(lead)
    assert (after["Status"], after["IsConverted"]) == ("Closed - Converted", True)
    assert (
        after["ConvertedAccountId"],
        after["ConvertedContactId"],
        after["ConvertedOpportunityId"],
    ) == (converted["accountId"], converted["contactId"], converted["opportunityId"])
    assert obj(sf, "Account").get(converted["accountId"])["Name"] == "Oceanic Freight"
    contact = obj(sf, "Contact").get(converted["contactId"])
    assert (contact["LastName"], contact["AccountId"]) == ("Nair", converted["accountId"])
    assert obj(sf, "Opportunity").get(converted["opportunityId"])["StageName"] == "Prospecting"


def test_a_converted_lead_refuses_edits_and_a_second_conversion(sf: Salesforce) -> None:
    lead = new(sf, "Lead", LastName="Nair", Company="Oceanic Freight")
    assert obj(sf, "Lead").update(lead, {"Title": "CTO"}) == 204
    sf.apexecute(f"LeadConvert/{lead}", method="POST", data={})
    with pytest.raises(SalesforceMalformedRequest) as edited:
        obj(sf, "Lead").update(lead, {"Title": "CEO"})
    assert answer(edited.value)[0]["errorCode"] == "CANNOT_UPDATE_CONVERTED_LEAD"
    with pytest.raises(SalesforceMalformedRequest) as again:
        sf.apexecute(f"LeadConvert/{lead}", method="POST", data={})
    assert answer(again.value)[0]["errorCode"] == "CANNOT_UPDATE_CONVERTED_LEAD"
    with pytest.raises(SalesforceResourceNotFound):
        sf.apexecute("LeadConvert/00Q000000000000AAA", method="POST", data={})


def test_a_refused_conversion_writes_nothing(sf: Salesforce) -> None:
    lead = new(sf, "Lead", LastName="Nair", Company="Oceanic Freight")
    with pytest.raises(SalesforceMalformedRequest):
        sf.apexecute(f"LeadConvert/{lead}", method="POST", data={"convertedStatus": "Working"})
    assert sf.query("SELECT COUNT() FROM Account")["totalSize"] == 0
    untouched = obj(sf, "Lead").get(lead)
    assert (untouched["Status"], untouched["ConvertedAccountId"]) == ("Open - Not Contacted", None)


def test_a_deleted_record_stays_in_the_recycle_bin_for_query_all(sf: Salesforce) -> None:
    account = new(sf, "Account", Name="Gone")
    contact = new(sf, "Contact", LastName="Kim", AccountId=account)
    assert obj(sf, "Account").delete(account) == 204
    soql = "SELECT Id, IsDeleted FROM Contact"
    assert sf.query(soql)["totalSize"] == 0
    assert [
        (r["Id"], r["IsDeleted"]) for r in sf.query_all(soql, include_deleted=True)["records"]
    ] == [(contact, True)]
    with pytest.raises(SalesforceResourceNotFound) as deleted:
        obj(sf, "Account").update(account, {"Name": "Back"})
    assert answer(deleted.value)[0]["errorCode"] == "ENTITY_IS_DELETED"
