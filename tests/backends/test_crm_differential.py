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
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, MultipleResults, initialize, multiple, rule

from myna.backends.crm.corpus import HOST, reference_org, write_chapters
from myna.backends.crm.instance import JSON_TYPE, Org, Request, id_number
from myna.backends.crm.objects import BY_PREFIX
from myna.mocks import Mock, MockClient
from myna.traces.model import Body
from tests.backends.differential import SameAnswers, fresh_world, run, serving

DATA = "/services/data/v59.0"
ASYNC = "/services/async/59.0/job"
CSV = "text/csv"
TOKEN = "crm-differential"
ADMIN = "admin@example-crm.com"  # the org's first System Administrator, whom both act as
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000")
HOSTS = re.compile(rf"^(?:{re.escape(HOST)}|http://localhost)(?=/)")

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
    """The body with each side's clock taken out (timestamps and dates derived from them), and
    its host: the served org's is the one the request came to."""
    if isinstance(value, str):
        return HOSTS.sub("<host>", STAMP.sub("<stamp>", value))
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
        # A world seeded from files knows only the records it holds, so it hands out again the
        # ids of records the corpus deleted outright (setup objects have no recycle bin): the
        # reference org counts the same way here, so that both mint the same ids.
        for prefix, name in BY_PREFIX.items():
            minted = (id_number(str(record_id), prefix) for record_id in self.org.rows[name])
            self.org._counters[prefix] = max((n for n in minted if n is not None), default=0)
        admin = self.org.rows["User"][self.org.find_user(ADMIN) or ""]
        last_login = admin["LastLoginDate"]
        self.session = self.org.session_for(ADMIN)
        # The served side's session is configured, not logged into: no login is recorded there.
        admin["LastLoginDate"] = last_login
        # One clock for both, so that every stamp (CreatedDate, ClosedDate...) must agree too.
        world = fresh_world(mock, self.org.now)
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
    with serving("crm", TOKEN) as mock:
        yield org, mock


class Work(SameAnswers[Pair]):
    """Random Salesforce work, sent to both sides; every answer compared."""

    records = Bundle("records")
    leads = Bundle("leads")
    # The access objects and products: seeded by the corpus, then made by the run.
    users = Bundle("users")
    roles = Bundle("roles")
    groups = Bundle("groups")
    access = Bundle("access")  # (object, id) of roles, groups, members, sets, assignments
    permission_sets = Bundle("permission_sets")
    profiles = Bundle("profiles")
    opportunities = Bundle("opportunities")
    products = Bundle("products")
    lines = Bundle("lines")

    def paired(self) -> Pair:
        return Pair(*self.sides)

    @initialize()
    def start(self) -> None:
        self.check("GET", f"{DATA}/query", q="SELECT COUNT() FROM Lead")

    def seeded(self, name: str, **where: Any) -> MultipleResults[str]:
        """The ids of the corpus's records of `name` (those whose fields are as `where` says)."""
        rows = self.pair.org.rows[name].values()
        return multiple(
            *(
                str(row["Id"])
                for row in rows
                if all(row.get(key) == value for key, value in where.items())
            )
        )

    @initialize(target=users)
    def seeded_users(self) -> MultipleResults[str]:
        """The active users but the one both sides act as: for a configured token the served
        side acts as the first System Administrator of the moment (`StoredOrg.acting_user`),
        so moving that user to another profile would change who acts there only."""
        acting = self.pair.org.find_user(ADMIN)
        return multiple(
            *(user for user in self.seeded("User", IsActive=True).values if user != acting)
        )

    @initialize(target=roles)
    def seeded_roles(self) -> MultipleResults[str]:
        return self.seeded("UserRole")

    @initialize(target=groups)
    def seeded_groups(self) -> MultipleResults[str]:
        return self.seeded("Group")

    @initialize(target=profiles)
    def seeded_profiles(self) -> MultipleResults[str]:
        return self.seeded("Profile")

    @initialize(target=permission_sets)
    def seeded_sets(self) -> MultipleResults[str]:
        return self.seeded("PermissionSet")

    @initialize(target=opportunities)
    def seeded_opportunities(self) -> MultipleResults[str]:
        return self.seeded("Opportunity", IsDeleted=False)

    @initialize(target=products)
    def seeded_products(self) -> MultipleResults[str]:
        return self.seeded("Product2", IsDeleted=False)

    def made(self, name: str, values: dict[str, Any]) -> MultipleResults[Any]:
        """A create of `name` sent to both; the new id when both made it."""
        status, body = self.check("POST", f"{DATA}/sobjects/{name}", values)
        return multiple(str(body["id"])) if status == 201 else multiple()

    @rule(target=roles, name=st.sampled_from(["Renewals", "CEO"]), parent=st.none() | roles)
    def create_role(self, name: str, parent: str | None) -> MultipleResults[str]:
        values = {"Name": name, "ParentRoleId": parent, "OpportunityAccessForAccountOwner": "Edit"}
        return self.made("UserRole", values)

    @rule(role=roles, parent=roles)
    def reparent_role(self, role: str, parent: str) -> None:
        """A role moved under another: refused where the hierarchy would loop."""
        self.check("PATCH", f"{DATA}/sobjects/UserRole/{role}", {"ParentRoleId": parent})

    @rule(target=groups, name=st.sampled_from(["Renewals Desk", "Night Shift"]))
    def create_group(self, name: str) -> MultipleResults[str]:
        return self.made("Group", {"Name": name, "Type": "Regular"})

    @rule(target=access, group=groups, member=st.one_of(users, groups))
    def add_member(self, group: str, member: str) -> MultipleResults[tuple[str, str]]:
        """A user or group joins a group: once, and never into itself however deep."""
        made = self.made("GroupMember", {"GroupId": group, "UserOrGroupId": member})
        return multiple(*(("GroupMember", record) for record in made.values))

    @rule(target=permission_sets, label=st.sampled_from(["Renewal Pricing", "Exports"]))
    def create_permission_set(self, label: str) -> MultipleResults[str]:
        values = {"Name": label.replace(" ", "_"), "Label": label, "PermissionsApiEnabled": True}
        return self.made("PermissionSet", values)

    @rule(target=access, permission_set=permission_sets, user=users)
    def assign(self, permission_set: str, user: str) -> MultipleResults[tuple[str, str]]:
        """A set assigned to a user: once, and a profile's own set only through the profile."""
        values = {"PermissionSetId": permission_set, "AssigneeId": user}
        made = self.made("PermissionSetAssignment", values)
        return multiple(*(("PermissionSetAssignment", record) for record in made.values))

    @rule(user=users, profile=profiles, role=st.none() | roles)
    def move_user(self, user: str, profile: str, role: str | None) -> None:
        """A new profile moves the user's profile assignment; a new role, its sharing."""
        path = f"{DATA}/sobjects/User/{user}"
        self.check("PATCH", path, {"ProfileId": profile, "UserRoleId": role})
        self.check("GET", path)

    @rule(
        record=st.one_of(
            roles.map(lambda role: ("UserRole", role)),
            groups.map(lambda group: ("Group", group)),
            permission_sets.map(lambda permission_set: ("PermissionSet", permission_set)),
            access,
        )
    )
    def remove_access(self, record: tuple[str, str]) -> None:
        """Deleted, or kept while in use (a role held, a set assigned, a role's groups)."""
        name, record_id = record
        self.check("DELETE", f"{DATA}/sobjects/{name}/{record_id}")
        self.check("GET", f"{DATA}/query", q=f"SELECT Id FROM {name} ORDER BY Id")

    @rule(
        target=lines,
        opportunity=opportunities,
        product=products,
        quantity=st.sampled_from([1.0, 12.0, 0.5]),
        price=st.sampled_from([99.5, 1200.0]),
    )
    def add_line(
        self, opportunity: str, product: str, quantity: float, price: float
    ) -> MultipleResults[str]:
        """A product line, rolled up into its opportunity's Amount."""
        values = {
            "OpportunityId": opportunity,
            "Product2Id": product,
            "Quantity": quantity,
            "UnitPrice": price,
        }
        made = self.made("OpportunityLineItem", values)
        self.check("GET", f"{DATA}/sobjects/Opportunity/{opportunity}", fields="Id,Amount")
        return made

    @rule(line=lines, quantity=st.sampled_from([2.0, 40.0]), move=st.none() | opportunities)
    def edit_line(self, line: str, quantity: float, move: str | None) -> None:
        values: dict[str, Any] = {"Quantity": quantity}
        if move is not None:
            values["OpportunityId"] = move
        self.check("PATCH", f"{DATA}/sobjects/OpportunityLineItem/{line}", values)
        self.check("GET", f"{DATA}/query", q="SELECT Id, Amount FROM Opportunity ORDER BY Id")

    @rule(line=lines)
    def delete_line(self, line: str) -> None:
        self.check("DELETE", f"{DATA}/sobjects/OpportunityLineItem/{line}")
        self.check("GET", f"{DATA}/query", q="SELECT Id, Amount FROM Opportunity ORDER BY Id")

    @rule(name=st.sampled_from(["Account", "Case", "User", "Group", "PermissionSet", "Invoice__c"]))
    def describe(self, name: str) -> None:
        self.check("GET", f"{DATA}/sobjects/{name}/describe")

    @rule(term=st.sampled_from(["Northwind", "Brooks", "Printer", "zzz"]))
    def search(self, term: str) -> None:
        self.check(
            "GET", f"{DATA}/search", q=f"FIND {{{term}}} RETURNING Account(Id, Name), Contact"
        )

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
    Work.sides = sides
    run(Work)
