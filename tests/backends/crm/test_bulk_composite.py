"""simple-salesforce's bulk, bulk2, composite, `updated`/`deleted` and version calls, unchanged,
against the built-in CRM back end over HTTPS.

Bulk API 2.0 (`sf.bulk2`: CSV ingest and query jobs), Bulk API 1.0 (`sf.bulk`: JSON batches
with the `X-SFDC-Session` header), the composite resources (through `sf.restful`, as the client
has no helper of its own for them), getUpdated and getDeleted (`sf.<Object>.updated/deleted`)
and `/services/data[/vNN.N]/`. Each write goes through the org's own rules, so a bulk or
composite write is refused or derived exactly as the same write sent alone.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from simple_salesforce.api import Salesforce
from simple_salesforce.exceptions import SalesforceMalformedRequest

from myna.mocks.serve import Running
from tests.backends.crm.conftest import SESSION, Clock
from tests.backends.crm.test_simple_salesforce import obj

DATA = "/services/data/v59.0"


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def names(sf: Salesforce, soql: str) -> list[str]:
    return [record["Name"] for record in sf.query_all(soql)["records"]]


def composite(sf: Salesforce, path: str, body: Any, method: str = "POST") -> Any:
    return sf.restful(path, method=method, json=body)


# -- Bulk API 2.0 ---------------------------------------------------------------------------------


def test_bulk2_insert_creates_good_records_and_reports_the_bad_ones(sf: Salesforce) -> None:
    records = [
        {"Name": "Acme", "NumberOfEmployees": "40"},
        {"Name": "", "Industry": "Retail"},
        {"Name": "Globex", "Industry": "Nonsense"},
        {"Name": "Initech", "NumberOfEmployees": "many"},
    ]
    (result,) = sf.bulk2.Account.insert(records=records, wait=0)
    assert (result["numberRecordsProcessed"], result["numberRecordsFailed"]) == (4, 3)
    job = result["job_id"]
    (created,) = rows(sf.bulk2.Account.get_successful_records(job))
    assert (created["sf__Created"], created["Name"]) == ("true", "Acme")
    assert (
        sf.query(f"SELECT NumberOfEmployees FROM Account WHERE Id = '{created['sf__Id']}'")[
            "records"
        ][0]["NumberOfEmployees"]
        == 40
    )
    errors = [
        row["sf__Error"].split(":")[0] for row in rows(sf.bulk2.Account.get_failed_records(job))
    ]
    assert errors == [
        "REQUIRED_FIELD_MISSING",
        "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
        "INVALID_TYPE_ON_FIELD_IN_RECORD",
    ]
    assert names(sf, "SELECT Name FROM Account") == ["Acme"]


def test_bulk2_takes_a_csv_file_and_applies_the_stage_rules(sf: Salesforce, tmp_path: Path) -> None:
    path = tmp_path / "deals.csv"
    path.write_text(
        "Name,StageName,CloseDate\nWon deal,Closed Won,2026-06-30\nEarly,Prospecting,2026-07-01\n"
    )
    (result,) = sf.bulk2.Opportunity.insert(csv_file=str(path), wait=0)
    assert result["numberRecordsFailed"] == 0
    found = sf.query("SELECT Name, Probability, IsWon, IsClosed FROM Opportunity ORDER BY Name")
    assert [(r["Name"], r["Probability"], r["IsWon"], r["IsClosed"]) for r in found["records"]] == [
        ("Early", 10.0, False, False),
        ("Won deal", 100.0, True, True),
    ]


def test_bulk2_update_upsert_and_delete(sf: Salesforce) -> None:
    (inserted,) = sf.bulk2.Account.insert(
        records=[{"Name": "One", "External_Id__c": "E1"}, {"Name": "Two"}], wait=0
    )
    ids = {
        r["Name"]: r["sf__Id"]
        for r in rows(sf.bulk2.Account.get_successful_records(inserted["job_id"]))
    }
    sf.bulk2.Account.update(records=[{"Id": ids["Two"], "Name": "Deux"}], wait=0)
    (upserted,) = sf.bulk2.Account.upsert(
        records=[{"External_Id__c": "E1", "Name": "Uno"}, {"External_Id__c": "E3", "Name": "Tre"}],
        external_id_field="External_Id__c",
        wait=0,
    )
    flags = {
        r["Name"]: r["sf__Created"]
        for r in rows(sf.bulk2.Account.get_successful_records(upserted["job_id"]))
    }
    assert flags == {"Uno": "false", "Tre": "true"}
    assert names(sf, "SELECT Name FROM Account ORDER BY Name") == ["Deux", "Tre", "Uno"]
    (deleted,) = sf.bulk2.Account.delete(
        records=[{"Id": ids["One"]}, {"Id": "001000000000000AAA"}], wait=0
    )
    assert (deleted["numberRecordsProcessed"], deleted["numberRecordsFailed"]) == (2, 1)
    assert names(sf, "SELECT Name FROM Account ORDER BY Name") == ["Deux", "Tre"]
    assert names(sf, "SELECT Name FROM Account WHERE IsDeleted = true") == []
    everything = sf.query_all(
        "SELECT Name FROM Account WHERE IsDeleted = true", include_deleted=True
    )
    assert [record["Name"] for record in everything["records"]] == ["Uno"]


def test_bulk2_query_pages_through_csv_with_locators(sf: Salesforce) -> None:
    sf.bulk2.Account.insert(records=[{"Name": f"Account {n}"} for n in range(5)], wait=0)
    pages = list(
        sf.bulk2.Account.query("SELECT Name FROM Account ORDER BY Name", max_records=2, wait=0)
    )
    assert len(pages) == 3
    assert [row["Name"] for page in pages for row in rows(page)] == [
        f"Account {n}" for n in range(5)
    ]
    assert pages[0].splitlines()[0] == '"Name"'


def test_bulk2_query_all_sees_deleted_records_and_relationship_columns(sf: Salesforce) -> None:
    account = obj(sf, "Account").create({"Name": "Parent"})["id"]
    first = obj(sf, "Contact").create({"LastName": "Kept", "AccountId": account})["id"]
    gone = obj(sf, "Contact").create({"LastName": "Gone", "AccountId": account})["id"]
    obj(sf, "Contact").delete(gone)
    soql = "SELECT Id, LastName, Account.Name FROM Contact ORDER BY LastName"
    live = [row for page in sf.bulk2.Contact.query(soql, wait=0) for row in rows(page)]
    assert [(r["Id"], r["Account.Name"]) for r in live] == [(first, "Parent")]
    every = [row for page in sf.bulk2.Contact.query_all(soql, wait=0) for row in rows(page)]
    assert [r["LastName"] for r in every] == ["Gone", "Kept"]


def test_bulk2_job_info_and_refusals(
    sf: Salesforce, session: requests.Session, server: Running
) -> None:
    jobs = f"{server.base_url}{DATA}/jobs/ingest"
    headers = {"Authorization": f"Bearer {SESSION}", "Content-Type": "application/json"}
    made = session.post(jobs, headers=headers, json={"object": "Account", "operation": "insert"})
    assert made.status_code == 200 or made.status_code == 201
    info = made.json()
    assert (info["state"], info["contentType"], info["object"]) == ("Open", "CSV", "Account")
    assert info["contentUrl"] == f"services/data/v59.0/jobs/ingest/{info['id']}/batches"
    bad = session.post(jobs, headers=headers, json={"object": "Account", "operation": "merge"})
    assert bad.status_code == 400
    assert bad.json()[0]["errorCode"] == "INVALIDJOB"
    unknown = session.post(jobs, headers=headers, json={"object": "Nope", "operation": "insert"})
    assert unknown.json()[0]["errorCode"] == "INVALIDENTITY"
    aborted = session.patch(f"{jobs}/{info['id']}", headers=headers, json={"state": "Aborted"})
    assert aborted.json()["state"] == "Aborted"
    upload = session.put(
        f"{jobs}/{info['id']}/batches",
        headers={**headers, "Content-Type": "text/csv"},
        data=b"Name\nLate\n",
    )
    assert upload.status_code == 400
    assert session.get(f"{jobs}/750000000000000AAA", headers=headers).status_code == 404


# -- Bulk API 1.0 ---------------------------------------------------------------------------------


def test_bulk_insert_update_upsert_and_delete(sf: Salesforce) -> None:
    results = sf.bulk.Contact.insert(
        [{"LastName": "Ito"}, {"FirstName": "Nameless"}], batch_size=10
    )
    assert [r["success"] for r in results] == [True, False]
    assert results[1]["errors"][0]["statusCode"] == "REQUIRED_FIELD_MISSING"
    contact = results[0]["id"]
    updated = sf.bulk.Contact.update([{"Id": contact, "Title": "CTO"}])
    assert updated == [{"success": True, "created": False, "id": contact, "errors": []}]
    assert obj(sf, "Contact").get(contact)["Title"] == "CTO"
    upserted = sf.bulk.Account.upsert(
        [{"External_Id__c": "X9", "Name": "Upserted"}], "External_Id__c"
    )
    assert (upserted[0]["success"], upserted[0]["created"]) == (True, True)
    assert sf.bulk.Contact.delete([{"Id": contact}])[0]["success"] is True
    assert sf.query("SELECT COUNT() FROM Contact")["totalSize"] == 0


def test_bulk_query_and_query_all(sf: Salesforce) -> None:
    for name in ("Alpha", "Beta"):
        obj(sf, "Account").create({"Name": name})
    gone = obj(sf, "Account").create({"Name": "Gamma"})["id"]
    obj(sf, "Account").delete(gone)
    found = sf.bulk.Account.query("SELECT Id, Name FROM Account ORDER BY Name")
    assert [record["Name"] for record in found] == ["Alpha", "Beta"]
    assert found[0]["attributes"]["type"] == "Account"
    every = sf.bulk.Account.query_all("SELECT Name FROM Account ORDER BY Name")
    assert [record["Name"] for record in every] == ["Alpha", "Beta", "Gamma"]


def test_bulk_needs_the_session_header(session: requests.Session, server: Running) -> None:
    job = f"{server.base_url}/services/async/59.0/job"
    sent = {"operation": "insert", "object": "Account", "contentType": "JSON"}
    headers = {"Content-Type": "application/json"}
    refused = session.post(job, headers={**headers, "X-SFDC-Session": "wrong"}, json=sent)
    assert refused.status_code == 400
    assert refused.json() == {
        "exceptionCode": "InvalidSessionId",
        "exceptionMessage": "Invalid session id",
    }
    made = session.post(job, headers={**headers, "X-SFDC-Session": SESSION}, json=sent)
    assert made.status_code == 201
    info = made.json()
    assert (info["state"], info["object"], info["contentType"]) == ("Open", "Account", "JSON")
    closed = session.post(
        f"{job}/{info['id']}",
        headers={**headers, "X-SFDC-Session": SESSION},
        json={"state": "Closed"},
    )
    assert closed.json()["state"] == "Closed"


# -- composite ------------------------------------------------------------------------------------


def _sub(reference: str, method: str, url: str, body: Any = None) -> dict[str, Any]:
    sub = {"method": method, "url": f"{DATA}/{url}", "referenceId": reference}
    return sub if body is None else {**sub, "body": body}


def test_composite_references_earlier_answers(sf: Salesforce) -> None:
    answer = composite(
        sf,
        "composite",
        {
            "compositeRequest": [
                _sub("account", "POST", "sobjects/Account", {"Name": "Referenced"}),
                _sub(
                    "contact",
                    "POST",
                    "sobjects/Contact",
                    {"LastName": "Li", "AccountId": "@{account.id}"},
                ),
                _sub("read", "GET", "sobjects/Contact/@{contact.id}"),
            ]
        },
    )
    statuses = [r["httpStatusCode"] for r in answer["compositeResponse"]]
    assert statuses == [201, 201, 200]
    account = answer["compositeResponse"][0]["body"]["id"]
    assert answer["compositeResponse"][2]["body"]["AccountId"] == account


def test_composite_all_or_none_rolls_everything_back(sf: Salesforce) -> None:
    answer = composite(
        sf,
        "composite",
        {
            "allOrNone": True,
            "compositeRequest": [
                _sub("good", "POST", "sobjects/Account", {"Name": "Rolled back"}),
                _sub("bad", "POST", "sobjects/Account", {"Industry": "Retail"}),
            ],
        },
    )
    first, second = answer["compositeResponse"]
    assert second["httpStatusCode"] == 400
    assert second["body"][0]["errorCode"] == "REQUIRED_FIELD_MISSING"
    assert (first["httpStatusCode"], first["body"][0]["errorCode"]) == (400, "PROCESSING_HALTED")
    assert sf.query("SELECT COUNT() FROM Account")["totalSize"] == 0


def test_composite_without_all_or_none_keeps_what_worked(sf: Salesforce) -> None:
    answer = composite(
        sf,
        "composite",
        {
            "compositeRequest": [
                _sub("bad", "POST", "sobjects/Account", {"Industry": "Retail"}),
                _sub(
                    "child", "POST", "sobjects/Contact", {"LastName": "X", "AccountId": "@{bad.id}"}
                ),
                _sub("fine", "POST", "sobjects/Account", {"Name": "Kept"}),
            ]
        },
    )
    statuses = [r["httpStatusCode"] for r in answer["compositeResponse"]]
    assert statuses == [400, 400, 201]
    assert "bad.id" in answer["compositeResponse"][1]["body"][0]["message"]
    assert names(sf, "SELECT Name FROM Account") == ["Kept"]


def test_composite_tree_creates_parents_and_children(sf: Salesforce) -> None:
    tree = {
        "records": [
            {
                "attributes": {"type": "Account", "referenceId": "acme"},
                "Name": "Tree Co",
                "Contacts": {
                    "records": [
                        {"attributes": {"type": "Contact", "referenceId": "c1"}, "LastName": "Oak"},
                        {"attributes": {"type": "Contact", "referenceId": "c2"}, "LastName": "Elm"},
                    ]
                },
            }
        ]
    }
    answer = composite(sf, "composite/tree/Account", tree)
    assert answer["hasErrors"] is False
    assert [r["referenceId"] for r in answer["results"]] == ["acme", "c1", "c2"]
    account = answer["results"][0]["id"]
    found = sf.query(
        f"SELECT LastName FROM Contact WHERE AccountId = '{account}' ORDER BY LastName"
    )
    assert [r["LastName"] for r in found["records"]] == ["Elm", "Oak"]


def test_composite_tree_is_all_or_nothing(
    sf: Salesforce, session: requests.Session, server: Running
) -> None:
    tree = {
        "records": [
            {"attributes": {"type": "Account", "referenceId": "ok"}, "Name": "Fine"},
            {
                "attributes": {"type": "Account", "referenceId": "broken"},
                "Rating": "Lukewarm",
                "Name": "X",
            },
        ]
    }
    answer = session.post(
        f"{server.base_url}{DATA}/composite/tree/Account",
        headers={"Authorization": f"Bearer {SESSION}"},
        json=tree,
    )
    assert answer.status_code == 400
    body = answer.json()
    assert body["hasErrors"] is True
    assert body["results"][0]["referenceId"] == "broken"
    assert (
        body["results"][0]["errors"][0]["statusCode"] == "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST"
    )
    assert sf.query("SELECT COUNT() FROM Account")["totalSize"] == 0


def test_sobject_collections_create_read_update_delete(sf: Salesforce) -> None:
    made = composite(
        sf,
        "composite/sobjects",
        {"records": [{"attributes": {"type": "Account"}, "Name": n} for n in ("A", "B")]},
    )
    ids = [r["id"] for r in made]
    assert all(r["success"] for r in made)
    read = sf.restful(
        "composite/sobjects/Account",
        params={"ids": ",".join([*ids, "001000000000000AAA"]), "fields": "Name"},
    )
    assert [r and r["Name"] for r in read] == ["A", "B", None]
    changed = composite(
        sf,
        "composite/sobjects",
        {
            "records": [
                {"attributes": {"type": "Account"}, "id": ids[0], "Id": ids[0], "Name": "A2"}
            ]
        },
        method="PATCH",
    )
    assert changed[0]["success"] is False  # `id` is no Account field: refused like a PATCH
    composite(
        sf,
        "composite/sobjects",
        {"records": [{"attributes": {"type": "Account"}, "Id": ids[0], "Name": "A2"}]},
        method="PATCH",
    )
    assert names(sf, "SELECT Name FROM Account ORDER BY Name") == ["A2", "B"]
    gone = sf.restful("composite/sobjects", method="DELETE", params={"ids": ids[1]})
    assert gone == [{"id": ids[1], "success": True, "errors": []}]
    assert names(sf, "SELECT Name FROM Account") == ["A2"]


def test_sobject_collections_all_or_none(sf: Salesforce) -> None:
    answer = composite(
        sf,
        "composite/sobjects",
        {
            "allOrNone": True,
            "records": [
                {"attributes": {"type": "Account"}, "Name": "Would be"},
                {"attributes": {"type": "Account"}},
            ],
        },
    )
    assert [r["errors"][0]["statusCode"] for r in answer] == [
        "ALL_OR_NONE_OPERATION_ROLLED_BACK",
        "REQUIRED_FIELD_MISSING",
    ]
    assert sf.query("SELECT COUNT() FROM Account")["totalSize"] == 0


def test_composite_batch_halts_on_error_when_asked(sf: Salesforce) -> None:
    account = obj(sf, "Account").create({"Name": "Batch"})["id"]
    requests_ = [
        {
            "method": "PATCH",
            "url": f"v59.0/sobjects/Account/{account}",
            "richInput": {"Name": "Batched"},
        },
        {"method": "GET", "url": "v59.0/sobjects/Account/001000000000000AAA"},
        {"method": "GET", "url": f"v59.0/sobjects/Account/{account}?fields=Name"},
    ]
    answer = composite(sf, "composite/batch", {"batchRequests": requests_, "haltOnError": True})
    assert answer["hasErrors"] is True
    assert [r["statusCode"] for r in answer["results"]] == [204, 404, 412]
    assert answer["results"][2]["result"][0]["errorCode"] == "BATCH_PROCESSING_HALTED"
    answer = composite(sf, "composite/batch", {"batchRequests": requests_})
    assert [r["statusCode"] for r in answer["results"]] == [204, 404, 200]
    assert answer["results"][2]["result"]["Name"] == "Batched"


# -- getUpdated, getDeleted, versions ------------------------------------------------------------


def test_updated_and_deleted_cover_the_window(sf: Salesforce, clock: Clock) -> None:
    before = clock.moment()
    clock.advance(1)
    kept = obj(sf, "Account").create({"Name": "Kept"})["id"]
    gone = obj(sf, "Account").create({"Name": "Gone"})["id"]
    obj(sf, "Account").delete(gone)
    clock.advance(2)
    after = clock.moment()
    updated = obj(sf, "Account").updated(before, after)
    assert updated["ids"] == [kept]
    deleted = obj(sf, "Account").deleted(before, after)
    assert [r["id"] for r in deleted["deletedRecords"]] == [gone]
    assert deleted["deletedRecords"][0]["deletedDate"].endswith("+0000")
    assert obj(sf, "Account").updated(before - timedelta(hours=1), before)["ids"] == []


def test_updated_refuses_a_window_too_old(sf: Salesforce, clock: Clock) -> None:
    now = clock.moment()
    with pytest.raises(SalesforceMalformedRequest) as refused:
        obj(sf, "Account").updated(now - timedelta(days=40), now)
    assert refused.value.content[0]["errorCode"] == "INVALID_REPLICATION_DATE"
    with pytest.raises(SalesforceMalformedRequest):
        obj(sf, "Account").deleted(now, now - timedelta(days=1))


def test_versions_and_resources(sf: Salesforce, session: requests.Session, server: Running) -> None:
    listed = session.get(f"{server.base_url}/services/data/")
    assert listed.status_code == 200
    assert {
        "label": "Winter '24",
        "url": "/services/data/v59.0",
        "version": "59.0",
    } in listed.json()
    resources = sf.restful("")
    assert resources is not None
    assert resources["sobjects"] == f"{DATA}/sobjects"
    assert resources["composite"] == f"{DATA}/composite"
    assert json.loads(json.dumps(resources))["jobs"] == f"{DATA}/jobs"
