"""The reference org and the served mock answer the same calls the same way.

Both start from the same records: the reference org runs its whole corpus, and the mock serves
the reference world (the records that run leaves), one forked world per example. Then the same
random call sequences (creates with valid and invalid picklist values and missing required
fields, edits, deletes, reads, upserts by external id, SOQL over what was written, lead
conversion) go to both, and each answer's status and body must agree, timestamps aside (each
side has its own clock). The rules are one implementation (`instance.Org` over `rules.py`);
this checks that the served side (the store's rows, the world's sequences, the model's rules,
the runtime's body parsing) does not tell them apart.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from datetime import UTC, timedelta
from itertools import count
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, rule

from myna.backends.crm.corpus import reference_org, write_chapters
from myna.backends.crm.instance import JSON_TYPE, Org, Request
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.cli import served_mock
from myna.mocks.runtime import DEFAULT_WORLD
from myna.traces.model import Body

DATA = "/services/data/v59.0"
ASYNC = "/services/async/59.0/job"
CSV = "text/csv"
TOKEN = "crm-differential"
ADMIN = "admin@example-crm.com"  # the org's first System Administrator, whom both act as
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000")
_WORLDS = count()

# What a create of each object may send: valid values, and a few the platform refuses.
PICKS: dict[str, dict[str, list[Any]]] = {
    "Account": {
        "Name": ["Northwind", "Globex", None],
        "Industry": ["Retail", "Banking", "Bogus"],
        "NumberOfEmployees": [12, 4000],
        "External_Id__c": ["EXT-1", "EXT-2"],
    },
    "Contact": {"LastName": ["Brooks", "Kim", ""], "Title": ["VP", "CTO"]},
    "Opportunity": {
        "Name": ["Big deal", "Renewal"],
        "StageName": ["Prospecting", "Negotiation/Review", "Closed Won", "Closed Lost", "Nope"],
        "CloseDate": ["2026-06-30"],
        "Probability": [5, 95],
        "Amount": [1000, 25000.5],
    },
    "Case": {
        "Subject": ["Printer jam", "Outage"],
        "Status": ["New", "Working", "Escalated", "Closed", "Lost"],
        "Reason": ["Breakdown", "Other", None],
        "Priority": ["High", "Low"],
        "IsEscalated": [True, False],
    },
    "Lead": {
        "LastName": ["Ito", "Hughes"],
        "Company": ["Oceanic", "Dunder", None],
        "Status": ["Open - Not Contacted", "Working - Contacted", "Closed - Converted"],
    },
    "Task": {
        "Subject": ["Call back", "Send quote"],
        "Status": ["Not Started", "Completed", "Deferred", "Done"],
        "Priority": ["High", "Normal"],
    },
}
# The fields a query reads back, per object: what the rules derive included.
READ: dict[str, str] = {
    "Account": "Id, Name, Industry, NumberOfEmployees, External_Id__c",
    "Contact": "Id, LastName, Title, AccountId, Account.Name",
    "Opportunity": "Id, Name, StageName, Probability, ForecastCategoryName, IsClosed, IsWon",
    "Case": "Id, CaseNumber, Status, Reason, IsClosed, IsEscalated, ClosedDate",
    "Lead": "Id, LastName, Company, Status, IsConverted, ConvertedAccountId",
    "Task": "Id, Subject, Status, IsClosed, Priority",
}


# What a create sends besides: the fields the object requires (a pick may still clear one).
BASE: dict[str, dict[str, Any]] = {
    "Account": {"Name": "Initech"},
    "Contact": {"LastName": "Lee"},
    "Opportunity": {"Name": "New deal", "StageName": "Qualification", "CloseDate": "2026-05-01"},
    "Case": {},
    "Lead": {"LastName": "Rossi", "Company": "Vandelay"},
    "Task": {},
}


def values_of(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Some of the fields a create or an edit of `name` may send, each with one of its picks."""
    picks = PICKS[name]
    return st.fixed_dictionaries(
        {}, optional={field: st.sampled_from(choices) for field, choices in picks.items()}
    )


def created(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """A create's values: mostly what the object requires, with some picks over them."""
    return values_of(name).map(lambda picked: {**BASE[name], **picked})


def _normal(value: Any) -> Any:
    """The body with each side's clock taken out: timestamps and dates derived from them."""
    if isinstance(value, str):
        return STAMP.sub("<stamp>", value)
    if isinstance(value, list):
        return [_normal(item) for item in value]
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items()}
    return value


def _type(headers: list[tuple[str, str]]) -> str:
    return next((value for key, value in headers if key.lower() == "content-type"), "")


class Pair:
    """The reference org and a served world, in the same state."""

    def __init__(self, org: Org, mock: Mock) -> None:
        self.org = copy.deepcopy(org)
        self.session = self.org.session_for(ADMIN)
        world = f"differential-{next(_WORLDS)}"
        mock.store.fork_world(DEFAULT_WORLD, world)
        # One clock for both, so that every stamp (CreatedDate, ClosedDate...) must agree too.
        moment = self.org.now.replace(tzinfo=UTC).timestamp()
        mock.clock = lambda: moment
        # Bulk API 1.0 sends the session in its own header; the rest of the API, as a bearer.
        headers = {"Authorization": f"Bearer {TOKEN}", "X-SFDC-Session": TOKEN}
        self.api = MockClient(mock, headers=headers, world=world)

    def send(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, str] | None = None,
    ) -> tuple[tuple[int, Any], tuple[int, Any]]:
        """One call to each: (status, body) of the reference org, then of the served mock. A
        string body goes as CSV (a bulk upload); a CSV answer comes back as its text."""
        media = CSV if isinstance(body, str) else JSON_TYPE
        sent = Body() if body is None else Body("text" if media == CSV else "json", body, media)
        pairs = list((params or {}).items())
        headers = [("Content-Type", media)] if body is not None else []
        reply = self.org.handle(Request(method, path, pairs, sent, self.session, headers))
        mine = reply.body.value if reply.body.kind in ("json", "text") else None
        if isinstance(body, str):
            response = self.api.request(
                method, path, content=body.encode(), params=params, headers={"Content-Type": CSV}
            )
        else:
            response = self.api.request(method, path, json=body, params=params)
        theirs = (
            response.body.decode()
            if CSV in _type(response.headers)
            else (response.json() if response.body else None)
        )
        return (reply.status, _normal(mine)), (response.status, _normal(theirs))


@pytest.fixture(scope="module")
def sides() -> Iterator[tuple[Org, Mock]]:
    org, book = reference_org()
    write_chapters(org, book)
    credentials = Credentials(tokens=frozenset({TOKEN}))
    mock = served_mock("crm", world="reference", credentials=credentials, open_worlds=True)
    yield org, mock
    mock.store.close()


class SameAnswers(RuleBasedStateMachine):
    """Random Salesforce work, sent to both sides; every answer compared."""

    sides: tuple[Org, Mock]
    records = Bundle("records")
    leads = Bundle("leads")

    def __init__(self) -> None:
        super().__init__()
        self.pair = Pair(*self.sides)

    def check(self, method: str, path: str, body: Any = None, **params: str) -> tuple[int, Any]:
        reference, served = self.pair.send(method, path, body, params or None)
        assert served == reference, (method, path, body, params)
        return reference

    @initialize()
    def start(self) -> None:
        self.check("GET", f"{DATA}/query", q="SELECT COUNT() FROM Lead")

    @rule(target=records, name=st.sampled_from(sorted(PICKS)), data=st.data())
    def create(self, name: str, data: st.DataObject) -> tuple[str, str]:
        status, body = self.check("POST", f"{DATA}/sobjects/{name}", data.draw(created(name)))
        return name, body["id"] if status == 201 else "001000000000000AAA"

    @rule(target=leads, values=created("Lead"))
    def create_lead(self, values: dict[str, Any]) -> str:
        status, body = self.check("POST", f"{DATA}/sobjects/Lead", values)
        return str(body["id"]) if status == 201 else "00Q000000000000AAA"

    @rule(record=records, data=st.data())
    def edit(self, record: tuple[str, str], data: st.DataObject) -> None:
        name, record_id = record
        self.check("PATCH", f"{DATA}/sobjects/{name}/{record_id}", data.draw(values_of(name)))

    @rule(record=records)
    def read(self, record: tuple[str, str]) -> None:
        self.check("GET", f"{DATA}/sobjects/{record[0]}/{record[1]}")

    @rule(record=records)
    def delete(self, record: tuple[str, str]) -> None:
        self.check("DELETE", f"{DATA}/sobjects/{record[0]}/{record[1]}")

    @rule(name=st.sampled_from(sorted(PICKS)), every=st.booleans())
    def query(self, name: str, every: bool) -> None:
        endpoint = "queryAll" if every else "query"
        soql = f"SELECT {READ[name]} FROM {name} ORDER BY Id DESC LIMIT 20"
        self.check("GET", f"{DATA}/{endpoint}", q=soql)

    @rule(key=st.sampled_from(["EXT-1", "EXT-2", "EXT-3"]), data=st.data())
    def upsert(self, key: str, data: st.DataObject) -> None:
        values = data.draw(values_of("Account"))
        values.pop("External_Id__c", None)
        self.check("PATCH", f"{DATA}/sobjects/Account/External_Id__c/{key}", values)

    @rule(
        lead=leads,
        opportunity=st.booleans(),
        status=st.sampled_from(["Closed - Converted", "Qualified"]),
    )
    def convert(self, lead: str, opportunity: bool, status: str) -> None:
        options = {"convertedStatus": status, "doNotCreateOpportunity": opportunity}
        self.check("POST", f"/services/apexrest/LeadConvert/{lead}", options)

    @rule(lead=leads)
    def read_lead(self, lead: str) -> None:
        self.check("GET", f"{DATA}/sobjects/Lead/{lead}")

    @rule(name=st.sampled_from(sorted(PICKS)), data=st.data(), all_or_none=st.booleans())
    def collection(self, name: str, data: st.DataObject, all_or_none: bool) -> None:
        records = data.draw(st.lists(created(name), min_size=1, max_size=3))
        typed = [{"attributes": {"type": name}, **values} for values in records]
        body = {"allOrNone": all_or_none, "records": typed}
        self.check("POST", f"{DATA}/composite/sobjects", body)

    @rule(account=created("Account"), contact=created("Contact"), all_or_none=st.booleans())
    def chain(self, account: dict[str, Any], contact: dict[str, Any], all_or_none: bool) -> None:
        subrequests = [
            {
                "method": "POST",
                "url": f"{DATA}/sobjects/Account",
                "referenceId": "a",
                "body": account,
            },
            {
                "method": "POST",
                "url": f"{DATA}/sobjects/Contact",
                "referenceId": "c",
                "body": {**contact, "AccountId": "@{a.id}"},
            },
        ]
        body = {"allOrNone": all_or_none, "compositeRequest": subrequests}
        self.check("POST", f"{DATA}/composite", body)

    @rule(
        name=st.sampled_from(["Account", "Contact", "Lead"]),
        data=st.data(),
        operation=st.sampled_from(["insert", "upsert"]),
    )
    def bulk(self, name: str, data: st.DataObject, operation: str) -> None:
        records = data.draw(st.lists(created(name), min_size=1, max_size=4))
        columns = sorted({key for values in records for key in values})
        lines = [",".join(columns)] + [
            ",".join("" if values.get(c) is None else str(values[c]) for c in columns)
            for values in records
        ]
        spec = {"object": name, "operation": operation}
        if operation == "upsert":
            spec["externalIdFieldName"] = "Id"
        status, job = self.check("POST", f"{DATA}/jobs/ingest", spec)
        if status >= 400:
            return
        path = f"{DATA}/jobs/ingest/{job['id']}"
        self.check("PUT", f"{path}/batches", "\n".join(lines) + "\n")
        self.check("PATCH", path, {"state": "UploadComplete"})
        for what in ("", "/successfulResults", "/failedResults"):
            self.check("GET", path + what)

    @rule(name=st.sampled_from(["Account", "Contact"]), data=st.data())
    def bulk_v1(self, name: str, data: st.DataObject) -> None:
        """Bulk API 1.0: a job, one JSON batch, its results, the job closed."""
        spec = {"operation": "insert", "object": name, "contentType": "JSON"}
        status, job = self.check("POST", ASYNC, spec)
        if status >= 400:
            return
        records = data.draw(st.lists(created(name), min_size=1, max_size=3))
        _, batch = self.check("POST", f"{ASYNC}/{job['id']}/batch", records)
        self.check("GET", f"{ASYNC}/{job['id']}/batch/{batch['id']}/result")
        self.check("POST", f"{ASYNC}/{job['id']}", {"state": "Closed"})

    @rule(name=st.sampled_from(sorted(PICKS)), which=st.sampled_from(["updated", "deleted"]))
    def replicated(self, name: str, which: str) -> None:
        """getUpdated and getDeleted over the last day (both sides share one clock)."""
        now = self.pair.org.now.replace(tzinfo=UTC)
        window = {"start": (now - timedelta(days=1)).isoformat(), "end": now.isoformat()}
        self.check("GET", f"{DATA}/sobjects/{name}/{which}", **window)


@pytest.mark.usefixtures("sides")
def test_random_salesforce_work_gets_the_same_answer(sides: tuple[Org, Mock]) -> None:
    SameAnswers.sides = sides
    machine = SameAnswers.TestCase
    machine.settings = settings(
        max_examples=60,
        stateful_step_count=15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    machine().runTest()
