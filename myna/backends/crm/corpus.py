"""The CRM back end's trace corpus: realistic Salesforce REST sessions, written by a script.

Each session is one piece of sales or service work with a task text (log in and discover the
org, load accounts and contacts, work an opportunity through its stages, convert a lead, run a
case through escalation and closure, sync by external id, page through a large query...),
recorded as the HTTP exchanges a client such as simple-salesforce makes against a reference org
(`myna.backends.crm.instance`). Learning this corpus yields the built-in CRM model.

Deterministic: the same code writes the same bytes, which a test checks against the committed
`corpus.jsonl`. Regenerate with

    python -m myna.backends.crm.corpus -o myna/backends/crm/corpus.jsonl

The org the corpus starts from is not empty: it has its users, profiles, roles, groups,
permission sets and a lead import, which the recordings never show whole. `initial_records()`
gives that state as seed records, and `--initial-seed DIR` writes them as seed files, so that a
replay of the corpus starts where the recording did, signed in as the org's `ADMINISTRATOR`:

    myna conformance crm corpus.jsonl --one-world --seed-dir DIR --user admin@acme.example
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final
from urllib.parse import quote, urlencode

from myna.backends import SECRET, corpus_command, record_exchange
from myna.backends.crm import ADMINISTRATOR as ADMINISTRATOR
from myna.backends.crm.access import Access, provision, share
from myna.backends.crm.instance import Org, Reply, Request, Row
from myna.traces.model import Body, Pairs, Session

HOST: Final = "https://acme-dev-ed.my.salesforce.com"
LOGIN: Final = "https://login.salesforce.com"
VERSION: Final = "v59.0"
DATA: Final = f"/services/data/{VERSION}"
START: Final = datetime(2026, 3, 2, 8, 0, 0)
CLIENT_ID: Final = "3MVG9fe4g9fhX0E5PSd8cExampleConnectedAppKey"
PASSWORD: Final = "correct horse battery staple"
# simple-salesforce's headers on every REST call.
CLIENT_HEADERS: Final[Pairs] = [("Content-Type", "application/json"), ("X-PrettyPrint", "1")]


@dataclass(slots=True)
class Scribe:
    """Makes calls against the org as one client would, and records them as a session."""

    org: Org
    session: Session
    token: str | None = None
    step: timedelta = field(default_factory=lambda: timedelta(seconds=15))

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Pairs | None = None,
        body: Body | None = None,
        headers: Pairs | None = None,
        token: str | None = None,
    ) -> Reply:
        self.org.advance(self.step)
        query = list(params or [])
        sent = body or Body()
        credential = token if token is not None else self.token
        extra = list(headers or [])
        reply = self.org.handle(Request(method, path, query, sent, credential, extra))
        self._record(method, path, query, sent, reply, credential, extra)
        return reply

    def _record(
        self,
        method: str,
        path: str,
        query: Pairs,
        sent: Body,
        reply: Reply,
        credential: str | None,
        extra: Pairs,
    ) -> None:
        token_call = path == "/services/oauth2/token"
        headers: Pairs = (
            [("Content-Type", "application/x-www-form-urlencoded")]
            if token_call
            else [*CLIENT_HEADERS, ("Authorization", f"Bearer {SECRET}")]
            if credential is not None
            else list(CLIENT_HEADERS)
        )
        headers.extend(extra)
        host = LOGIN if token_call else HOST
        url = f"{host}{path}" + (f"?{urlencode(query, quote_via=quote)}" if query else "")
        record_exchange(
            self.session,
            request=(method, url, query, headers, sent),
            reply=reply,
            at=self.org.now,
            latency=(45.0, 700),
        )

    # -- REST conveniences (the calls simple-salesforce makes) ---------------------------------

    def login(self, username: str, password: str = PASSWORD) -> Reply:
        form = {
            "grant_type": "password",
            "client_id": CLIENT_ID,
            "client_secret": "client-secret",
            "username": username,
            "password": password,
        }
        reply = self.call("POST", "/services/oauth2/token", body=_form(form), token=None)
        if reply.status == 200:
            self.token = str(reply.body.value["access_token"])
        return reply

    def create(self, name: str, values: Mapping[str, Any]) -> str:
        reply = self.call("POST", f"{DATA}/sobjects/{name}/", body=_json(values))
        assert reply.status == 201, reply.body.value
        return str(reply.body.value["id"])

    def attempt(self, name: str, values: Mapping[str, Any]) -> Reply:
        return self.call("POST", f"{DATA}/sobjects/{name}/", body=_json(values))

    def get(self, name: str, record_id: str, fields: str | None = None) -> Reply:
        params = [("fields", fields)] if fields else None
        return self.call("GET", f"{DATA}/sobjects/{name}/{record_id}", params=params)

    def update(self, name: str, record_id: str, values: Mapping[str, Any]) -> Reply:
        return self.call("PATCH", f"{DATA}/sobjects/{name}/{record_id}", body=_json(values))

    def delete(self, name: str, record_id: str) -> Reply:
        return self.call("DELETE", f"{DATA}/sobjects/{name}/{record_id}")

    def query(self, soql: str, *, every: bool = False, batch: int | None = None) -> Reply:
        headers = [("Sforce-Query-Options", f"batchSize={batch}")] if batch else None
        endpoint = "queryAll" if every else "query"
        return self.call("GET", f"{DATA}/{endpoint}/", params=[("q", soql)], headers=headers)

    def records(self, soql: str) -> list[dict[str, Any]]:
        reply = self.query(soql)
        assert reply.status == 200, reply.body.value
        records: list[dict[str, Any]] = reply.body.value["records"]
        return records


def _json(values: Mapping[str, Any]) -> Body:
    return Body("json", dict(values), "application/json")


def _form(values: Mapping[str, str]) -> Body:
    return Body("text", urlencode(values), "application/x-www-form-urlencoded")


# -- the org's people and data ------------------------------------------------------------------

# (username, first, last, title, department, profile, role)
PEOPLE: Final[tuple[tuple[str, str, str, str, str, str, str | None], ...]] = (
    (
        "maya.chen@acme.example",
        "Maya",
        "Chen",
        "Account Executive",
        "Sales",
        "Standard User",
        "Account Executive",
    ),
    (
        "leo.fischer@acme.example",
        "Leo",
        "Fischer",
        "Sales Development Rep",
        "Sales",
        "Standard User",
        "Sales Development",
    ),
    (
        "ines.alvarez@acme.example",
        "Ines",
        "Alvarez",
        "Support Engineer",
        "Support",
        "Standard User",
        "Support Engineer",
    ),
    (
        "integration@acme.example",
        "Integration",
        "User",
        "API Integration",
        "IT",
        "Salesforce API Only System Integrations",
        None,
    ),
    (
        ADMINISTRATOR,
        "Dana",
        "Whitfield",
        "Salesforce Administrator",
        "IT",
        "System Administrator",
        "Director, IT",
    ),
)

# (name, industry, type, rating, city, country, employees, revenue, external id)
ACCOUNTS: Final = (
    (
        "Northwind Traders",
        "Retail",
        "Customer - Direct",
        "Hot",
        "Seattle",
        "USA",
        420,
        52e6,
        "NW-001",
    ),
    ("Globex Energy", "Energy", "Prospect", "Warm", "Houston", "USA", 3100, 870e6, "GX-002"),
    (
        "Initech Software",
        "Technology",
        "Customer - Channel",
        "Warm",
        "Austin",
        "USA",
        260,
        31e6,
        "IN-003",
    ),
    ("Umbrella Health", "Healthcare", "Prospect", "Cold", "Boston", "USA", 5200, 1.2e9, "UH-004"),
    (
        "Vandelay Imports",
        "Transportation",
        "Customer - Direct",
        "Hot",
        "Newark",
        "USA",
        85,
        9.5e6,
        "VI-005",
    ),
    (
        "Stark Manufacturing",
        "Manufacturing",
        "Prospect",
        "Warm",
        "Detroit",
        "USA",
        12000,
        4.1e9,
        "SM-006",
    ),
)

# (first, last, title, email local part, account index)
CONTACTS: Final = (
    ("Olivia", "Brooks", "VP Operations", "olivia.brooks", 0),
    ("Ethan", "Park", "IT Director", "ethan.park", 0),
    ("Sofia", "Rossi", "CFO", "sofia.rossi", 1),
    ("Noah", "Kim", "Head of Procurement", "noah.kim", 2),
    ("Amara", "Okoye", "CIO", "amara.okoye", 3),
    ("Lucas", "Meyer", "Logistics Manager", "lucas.meyer", 4),
    ("Hana", "Sato", "Plant Manager", "hana.sato", 5),
)

# (name, code, family, list price)
PRODUCTS: Final = (
    ("Edge Gateway G2", "EG-G2", "Hardware", 1200.0),
    ("Fleet Analytics", "FA-CLOUD", "Software", 18000.0),
    ("Onboarding Package", "SVC-ONB", "Services", 4500.0),
)


@dataclass(slots=True)
class Book:
    """Ids the chapters hand each other, by a short name."""

    users: dict[str, str] = field(default_factory=dict)
    access: Access = field(default_factory=Access)
    accounts: list[str] = field(default_factory=list)
    contacts: list[str] = field(default_factory=list)
    products: list[str] = field(default_factory=list)
    opportunities: dict[str, str] = field(default_factory=dict)
    cases: dict[str, str] = field(default_factory=dict)
    leads: dict[str, str] = field(default_factory=dict)


def _account_values(index: int) -> dict[str, Any]:
    name, industry, kind, rating, city, country, employees, revenue, external = ACCOUNTS[index]
    return {
        "Name": name,
        "Industry": industry,
        "Type": kind,
        "Rating": rating,
        "BillingCity": city,
        "BillingCountry": country,
        "NumberOfEmployees": employees,
        "AnnualRevenue": revenue,
        "External_Id__c": external,
        "Phone": f"+1 555 01{index:02d}",
        "Website": f"https://www.{name.split()[0].lower()}.example",
    }


# -- chapters -------------------------------------------------------------------------------------


def discover_org(s: Scribe, b: Book) -> None:
    s.login("maya.chen@acme.example")
    s.call("GET", f"{DATA}/sobjects")
    for name in ("Account", "Contact", "Opportunity", "Lead", "Case"):
        s.call("GET", f"{DATA}/sobjects/{name}/describe")
    s.call("GET", f"{DATA}/sobjects/Account")
    s.call("GET", f"{DATA}/limits")


def refused_logins(s: Scribe, b: Book) -> None:
    s.login("maya.chen@acme.example", password="wrong password")
    s.call(
        "POST",
        "/services/oauth2/token",
        body=_form(
            {
                "grant_type": "refresh_token",
                "refresh_token": "INVALID",
                "client_id": "INVALID",
                "client_secret": "INVALID",
            }
        ),
    )
    s.call("GET", f"{DATA}/sobjects/User/describe", token="00Dexpired!AQ0AQexpired")
    s.call("GET", f"{DATA}/query/", params=[("q", "SELECT Id FROM Account")])


def load_accounts(s: Scribe, b: Book) -> None:
    s.login("integration@acme.example")
    for index in range(len(ACCOUNTS)):
        b.accounts.append(s.create("Account", _account_values(index)))
    s.update("Account", b.accounts[3], {"ParentId": b.accounts[1]})
    s.attempt("Account", {"Industry": "Retail", "BillingCity": "Oslo"})
    s.attempt("Account", {"Name": "Wayne Enterprises", "Industry": "Vigilantism"})
    s.attempt("Account", {"Name": "Wayne Enterprises", "Fax__c": "555"})
    s.attempt("Account", {"Name": "Duplicate Northwind", "External_Id__c": "NW-001"})
    s.get("Account", b.accounts[0])
    s.get("Account", b.accounts[1], "Id,Name,Industry,AnnualRevenue")


def load_contacts(s: Scribe, b: Book) -> None:
    s.login("integration@acme.example")
    for first, last, title, local, account in CONTACTS:
        domain = ACCOUNTS[account][0].split()[0].lower()
        b.contacts.append(
            s.create(
                "Contact",
                {
                    "FirstName": first,
                    "LastName": last,
                    "Title": title,
                    "Email": f"{local}@{domain}.example",
                    "AccountId": b.accounts[account],
                    "LeadSource": "Partner Referral" if account % 2 else "Web",
                },
            )
        )
    s.attempt("Contact", {"FirstName": "Nameless", "AccountId": b.accounts[0]})
    s.attempt("Contact", {"LastName": "Orphan", "AccountId": "001000000000000AAA"})
    s.attempt("Contact", {"LastName": "Typo", "AccountId": "not-an-id"})
    s.get("Contact", b.contacts[0])


def explore_with_soql(s: Scribe, b: Book) -> None:
    s.login("maya.chen@acme.example")
    s.query("SELECT Id, Name, Industry, AnnualRevenue FROM Account ORDER BY AnnualRevenue DESC")
    s.query("SELECT Id, Name, Email, Account.Name, Account.Industry FROM Contact ORDER BY LastName")
    s.query("SELECT Id, Name FROM Account WHERE Industry IN ('Retail', 'Energy') ORDER BY Name")
    s.query("SELECT Id, Name, Title FROM Contact WHERE Title LIKE '%Director%' OR Title = 'CIO'")
    s.query(
        "SELECT Id, Name FROM Account WHERE NOT (Rating = 'Cold') AND NumberOfEmployees > 200 "
        "ORDER BY NumberOfEmployees LIMIT 3"
    )
    s.query("SELECT Id, Name FROM Account ORDER BY Name LIMIT 2 OFFSET 2")
    s.query("SELECT COUNT() FROM Contact WHERE Account.BillingCountry = 'USA'")
    s.query("SELECT Id, Name, CreatedDate FROM Account WHERE CreatedDate = TODAY")
    s.query("SELECT Id, Name, Parent.Name, Owner.Name FROM Account WHERE ParentId != null")


def product_catalogue(s: Scribe, b: Book) -> None:
    s.login("integration@acme.example")
    for name, code, family, _price in PRODUCTS:
        b.products.append(
            s.create(
                "Product2",
                {"Name": name, "ProductCode": code, "Family": family, "IsActive": True},
            )
        )
    s.attempt("Product2", {"Name": "Mystery Box", "Family": "Toys"})
    s.query("SELECT Id, Name, ProductCode, Family FROM Product2 WHERE IsActive = true")


def work_an_opportunity(s: Scribe, b: Book) -> None:
    s.login("maya.chen@acme.example")
    deal = s.create(
        "Opportunity",
        {
            "Name": "Northwind - Fleet rollout",
            "AccountId": b.accounts[0],
            "StageName": "Prospecting",
            "CloseDate": "2026-06-30",
            "Type": "New Customer",
            "LeadSource": "Web",
        },
    )
    b.opportunities["northwind"] = deal
    s.get("Opportunity", deal)
    for index, quantity in ((0, 40.0), (1, 1.0), (2, 2.0)):
        s.create(
            "OpportunityLineItem",
            {
                "OpportunityId": deal,
                "Product2Id": b.products[index],
                "Quantity": quantity,
                "UnitPrice": PRODUCTS[index][3],
            },
        )
    s.get("Opportunity", deal, "Id,Name,Amount,StageName,Probability")
    for stage in ("Qualification", "Needs Analysis", "Value Proposition", "Proposal/Price Quote"):
        s.update("Opportunity", deal, {"StageName": stage})
        s.get("Opportunity", deal, "StageName,Probability,ForecastCategoryName,IsClosed,IsWon")
    s.update("Opportunity", deal, {"StageName": "Negotiation/Review", "Probability": 80})
    s.update("Opportunity", deal, {"StageName": "Won"})
    s.update("Opportunity", deal, {"IsWon": True})
    s.update("Opportunity", deal, {"StageName": None})
    s.update("Opportunity", deal, {"StageName": "Closed Won", "NextStep": "Kick-off call"})
    s.get("Opportunity", deal)
    s.query(
        "SELECT Id, Name, Quantity, UnitPrice, TotalPrice, Product2.Name FROM "
        f"OpportunityLineItem WHERE OpportunityId = '{deal}' ORDER BY TotalPrice DESC"
    )


def lose_an_opportunity(s: Scribe, b: Book) -> None:
    s.login("maya.chen@acme.example")
    deal = s.create(
        "Opportunity",
        {
            "Name": "Globex - Analytics pilot",
            "AccountId": b.accounts[1],
            "StageName": "Qualification",
            "CloseDate": "2026-05-15",
            "Amount": 36000,
        },
    )
    b.opportunities["globex"] = deal
    s.attempt("Opportunity", {"Name": "No stage", "CloseDate": "2026-05-01"})
    s.attempt("Opportunity", {"Name": "Bad date", "StageName": "Prospecting", "CloseDate": "soon"})
    s.update("Opportunity", deal, {"StageName": "Closed Lost"})
    s.get("Opportunity", deal, "StageName,Probability,ForecastCategoryName,IsClosed,IsWon")
    s.update("Opportunity", deal, {"StageName": "Value Proposition"})
    s.query(
        "SELECT Id, Name, StageName, Amount, Account.Name FROM Opportunity WHERE IsClosed = false "
        "ORDER BY CloseDate"
    )
    s.query(
        "SELECT StageName, Probability, IsWon FROM Opportunity WHERE CloseDate < 2026-07-01 "
        "AND Amount >= 10000"
    )


def convert_a_lead(s: Scribe, b: Book) -> None:
    s.login("leo.fischer@acme.example")
    lead = s.create(
        "Lead",
        {
            "FirstName": "Priya",
            "LastName": "Nair",
            "Company": "Oceanic Freight",
            "Title": "COO",
            "Email": "priya.nair@oceanic.example",
            "LeadSource": "Web",
            "Industry": "Transportation",
            "Rating": "Hot",
        },
    )
    b.leads["oceanic"] = lead
    s.get("Lead", lead)
    s.attempt("Lead", {"LastName": "Nocompany"})
    s.attempt("Lead", {"LastName": "Weird", "Company": "X", "Status": "Interested"})
    s.update("Lead", lead, {"Status": "Working - Contacted"})
    s.update("Lead", lead, {"IsConverted": True})
    s.call(
        "POST",
        f"/services/apexrest/LeadConvert/{lead}",
        body=_json({"opportunityName": "Oceanic Freight - Gateways"}),
    )
    s.get("Lead", lead)
    s.update("Lead", lead, {"Status": "Working - Contacted"})
    s.call("POST", f"/services/apexrest/LeadConvert/{lead}", body=_json({}))
    s.query(
        "SELECT Id, Status, IsConverted, ConvertedAccount.Name, ConvertedContact.Name, "
        f"ConvertedOpportunity.StageName FROM Lead WHERE Id = '{lead}'"
    )
    cold = s.create("Lead", {"LastName": "Hughes", "Company": "Dunder Supplies", "Rating": "Cold"})
    s.update("Lead", cold, {"Status": "Closed - Not Converted"})
    s.call(
        "POST",
        f"/services/apexrest/LeadConvert/{cold}",
        body=_json({"convertedStatus": "Qualified", "doNotCreateOpportunity": True}),
    )


def escalate_and_close_a_case(s: Scribe, b: Book) -> None:
    s.login("ines.alvarez@acme.example")
    case = s.create(
        "Case",
        {
            "Subject": "Gateways drop offline every night",
            "Description": "Edge Gateway G2 units lose their uplink at 02:00 local time.",
            "Origin": "Phone",
            "Type": "Problem",
            "Priority": "High",
            "AccountId": b.accounts[0],
            "ContactId": b.contacts[1],
        },
    )
    b.cases["gateways"] = case
    s.get("Case", case)
    s.update("Case", case, {"Status": "Working"})
    s.update("Case", case, {"Status": "Escalated"})
    s.get("Case", case, "CaseNumber,Status,IsEscalated,IsClosed")
    s.update("Case", case, {"Status": "Resolved"})
    s.update("Case", case, {"Status": "Closed"})
    s.update("Case", case, {"Status": "Closed", "Reason": "Equipment Design"})
    s.get("Case", case, "CaseNumber,Status,Reason,IsEscalated,IsClosed,ClosedDate")
    s.update("Case", case, {"IsClosed": False})
    s.update("Case", case, {"Status": "Working"})
    s.get("Case", case, "Status,IsClosed,ClosedDate")
    s.update("Case", case, {"Status": "Closed"})


def service_queue(s: Scribe, b: Book) -> None:
    s.login("ines.alvarez@acme.example")
    for subject, priority, origin, account in (
        ("Invoice shows wrong tax rate", "Medium", "Email", 1),
        ("How do I export fleet reports?", "Low", "Web", 2),
        ("Analytics dashboard times out", "High", "Web", 2),
    ):
        b.cases[subject] = s.create(
            "Case",
            {
                "Subject": subject,
                "Priority": priority,
                "Origin": origin,
                "AccountId": b.accounts[account],
                "Type": "Question",
            },
        )
    s.attempt("Case", {"Subject": "Bad priority", "Priority": "Urgent"})
    s.query(
        "SELECT Id, CaseNumber, Subject, Priority, Account.Name FROM Case WHERE IsClosed = false "
        "AND Priority IN ('High', 'Medium') ORDER BY CaseNumber"
    )
    s.query("SELECT COUNT() FROM Case WHERE IsEscalated = true")


def follow_up_tasks(s: Scribe, b: Book) -> None:
    s.login("maya.chen@acme.example")
    first = s.create(
        "Task",
        {
            "Subject": "Send kick-off agenda",
            "WhatId": b.opportunities["northwind"],
            "WhoId": b.contacts[0],
            "ActivityDate": "2026-03-06",
            "Priority": "High",
        },
    )
    second = s.create(
        "Task",
        {"Subject": "Call back about tax rate", "WhatId": b.cases["Invoice shows wrong tax rate"]},
    )
    s.get("Task", first)
    s.update("Task", first, {"Status": "In Progress"})
    s.update("Task", first, {"Status": "Completed"})
    s.update("Task", second, {"Status": "Done"})
    s.attempt("Task", {"Subject": "Wrong link", "WhoId": b.accounts[0]})
    s.query(
        "SELECT Id, Subject, Status, IsClosed, What.Name, Who.Name FROM Task WHERE "
        "OwnerId != null ORDER BY ActivityDate NULLS LAST"
    )


def sync_by_external_id(s: Scribe, b: Book) -> None:
    s.login("integration@acme.example")
    path = f"{DATA}/sobjects/Account/External_Id__c"
    s.call(
        "PATCH",
        f"{path}/AC-7001",
        body=_json({"Name": "Acme Robotics", "Industry": "Electronics", "Rating": "Warm"}),
    )
    s.call("PATCH", f"{path}/AC-7001", body=_json({"Rating": "Hot", "NumberOfEmployees": 140}))
    s.call("GET", f"{path}/AC-7001")
    s.call("PATCH", f"{path}/NW-001", body=_json({"Website": "https://northwind.example"}))
    s.call("PATCH", f"{path}/AC-7002", body=_json({"Industry": "Retail"}))
    s.call("PATCH", f"{path}/AC-7003", body=_json({"Name": "Dup", "External_Id__c": "AC-7003"}))
    s.call("GET", f"{path}/NO-SUCH")
    s.call("PATCH", f"{DATA}/sobjects/Account/Phone/555", body=_json({"Name": "x"}))
    s.query("SELECT Id, Name, External_Id__c, Rating FROM Account WHERE External_Id__c LIKE 'AC-%'")


def page_through_a_large_query(s: Scribe, b: Book) -> None:
    # The trade-show list came in through the Data Import Wizard before the corpus (`import_leads`).
    s.login("leo.fischer@acme.example")
    s.query("SELECT COUNT() FROM Lead WHERE LeadSource = 'Purchased List'")
    first = s.query(
        "SELECT Id, Name, Company FROM Lead WHERE LeadSource = 'Purchased List' ORDER BY Name",
        batch=200,
    )
    s.call("GET", str(first.body.value["nextRecordsUrl"]))
    s.call("GET", f"{DATA}/query/01gBADLOCATOR00-200")


def clean_up(s: Scribe, b: Book) -> None:
    s.login("integration@acme.example")
    stray = s.create("Contact", {"LastName": "Temp", "FirstName": "Import"})
    s.delete("Contact", stray)
    s.get("Contact", stray)
    s.delete("Contact", stray)
    s.query(f"SELECT Id, IsDeleted FROM Contact WHERE Id = '{stray}'", every=True)
    s.delete("Account", b.accounts[4])
    s.query(f"SELECT Id, Name FROM Contact WHERE AccountId = '{b.accounts[4]}'")
    s.get("Account", "001000000000000AAA")
    s.call("GET", f"{DATA}/sobjects/Invoice__c/describe")


def administer_every_object(s: Scribe, b: Book) -> None:
    s.login(ADMINISTRATOR)
    user = s.create(
        "User",
        {
            "Username": "ravi.patel@acme.example",
            "FirstName": "Ravi",
            "LastName": "Patel",
            "Alias": "rpate",
            "Email": "ravi.patel@acme.example",
            "TimeZoneSidKey": "Europe/London",
            "LocaleSidKey": "en_GB",
            "EmailEncodingKey": "UTF-8",
            "LanguageLocaleKey": "en_US",
            "Title": "Account Executive",
            "ProfileId": b.access.profiles["Standard User"],
            "UserRoleId": b.access.roles["Account Executive"],
        },
    )
    s.attempt("User", {"Username": "no.alias@acme.example", "LastName": "Alias"})
    s.get("User", user)
    s.update("User", user, {"Department": "Sales EMEA"})
    s.delete("User", user)
    s.update("User", user, {"IsActive": False})
    s.query(
        "SELECT Id, Name, Username, CompanyName, IsActive FROM User WHERE IsActive = true "
        "ORDER BY Name"
    )
    spare = s.create("Product2", {"Name": "Legacy Sensor", "Family": "Hardware"})
    s.get("Product2", spare)
    s.update("Product2", spare, {"Description": "End of life", "IsActive": False})
    deal = s.create(
        "Opportunity",
        {
            "Name": "Initech - Sensor refresh",
            "AccountId": b.accounts[2],
            "StageName": "Needs Analysis",
            "CloseDate": "2026-09-30",
        },
    )
    line = s.create(
        "OpportunityLineItem",
        {"OpportunityId": deal, "Product2Id": spare, "Quantity": 10.0, "UnitPrice": 99.5},
    )
    s.get("OpportunityLineItem", line)
    s.update("OpportunityLineItem", line, {"Quantity": 12.0})
    s.update("OpportunityLineItem", line, {"OpportunityId": b.opportunities["globex"]})
    s.get("Opportunity", deal, "Amount")
    s.delete("OpportunityLineItem", line)
    s.delete("Product2", spare)
    s.delete("Opportunity", deal)
    lead = s.create("Lead", {"LastName": "Spam", "Company": "Bots Inc"})
    s.delete("Lead", lead)
    case = s.create("Case", {"Subject": "Test case, please ignore"})
    task = s.create("Task", {"Subject": "Test task", "WhatId": case})
    s.delete("Task", task)
    s.delete("Case", case)
    contact = s.create("Contact", {"LastName": "Tester"})
    s.update("Contact", contact, {"Email": "tester@acme.example"})
    s.delete("Contact", contact)


def search_with_sosl(s: Scribe, b: Book) -> None:
    s.login("ines.alvarez@acme.example")
    search = f"{DATA}/search/"
    s.call("GET", search, params=[("q", "FIND {Northwind}")])
    s.call(
        "GET",
        search,
        params=[
            (
                "q",
                "FIND {Northwind OR Globex} IN NAME FIELDS RETURNING Account(Id, Name, Industry "
                "ORDER BY Name), Contact(Id, Name, Email)",
            )
        ],
    )
    s.call(
        "GET",
        search,
        params=[("q", "FIND {*@northwind.example} IN EMAIL FIELDS RETURNING Contact(Name, Title)")],
    )
    s.call(
        "GET",
        search,
        params=[
            (
                "q",
                "FIND {tax OR export* OR gateway*} RETURNING Case(CaseNumber, Subject "
                "WHERE IsClosed = false ORDER BY CaseNumber)",
            )
        ],
    )
    s.call("GET", search, params=[("q", "FIND Northwind")])


def query_mistakes(s: Scribe, b: Book) -> None:
    s.login("maya.chen@acme.example")
    s.query("SELECT Id, Name FROM Account WHERE")
    s.query("SELEC Id FROM Account")
    s.query("SELECT Id, Revenue FROM Account")
    s.query("SELECT Id FROM Invoice__c")
    s.query("SELECT Id, Account.Nme FROM Contact")


def manage_access(s: Scribe, b: Book) -> None:
    s.login(ADMINISTRATOR)
    leo = b.users["leo.fischer@acme.example"]
    role = s.create(
        "UserRole",
        {
            "Name": "Renewals Manager",
            "ParentRoleId": b.access.roles["VP, Sales"],
            "OpportunityAccessForAccountOwner": "Edit",
            "CaseAccessForAccountOwner": "Read",
        },
    )
    s.attempt("UserRole", {"Name": "No Access Level"})
    s.get("UserRole", role)
    s.update("UserRole", role, {"RollupDescription": "Renewals and upsells"})
    s.query(f"SELECT Id, DeveloperName, Type, RelatedId FROM Group WHERE RelatedId = '{role}'")
    s.update("User", leo, {"UserRoleId": role})
    desk = s.create("Group", {"Name": "Renewals Desk", "Type": "Regular"})
    s.get("Group", desk)
    s.update("Group", desk, {"DoesIncludeBosses": False})
    member = s.create("GroupMember", {"GroupId": desk, "UserOrGroupId": leo})
    s.create("GroupMember", {"GroupId": desk, "UserOrGroupId": b.access.groups["Sales Team"]})
    s.attempt("GroupMember", {"GroupId": desk, "UserOrGroupId": leo})
    s.get("GroupMember", member)
    s.update("GroupMember", member, {"UserOrGroupId": b.users["maya.chen@acme.example"]})
    pricing = s.create("PermissionSet", {"Name": "Renewal_Pricing", "Label": "Renewal Pricing"})
    s.get("PermissionSet", pricing)
    s.update(
        "PermissionSet",
        pricing,
        {
            "Description": "Discounts on renewal quotes.",
            "PermissionsEditOppLineItemUnitPrice": True,
        },
    )
    assignment = s.create(
        "PermissionSetAssignment", {"AssigneeId": leo, "PermissionSetId": pricing}
    )
    s.attempt("PermissionSetAssignment", {"AssigneeId": leo, "PermissionSetId": pricing})
    s.get("PermissionSetAssignment", assignment)
    s.update("PermissionSetAssignment", assignment, {"AssigneeId": b.users[ADMINISTRATOR]})
    s.delete("PermissionSet", pricing)
    standard = b.access.profiles["Standard User"]
    s.attempt("Profile", {"Name": "Standard User (copy)"})
    s.get("Profile", standard, "Id,Name,UserType,PermissionsConvertLeads,PermissionsImportLeads")
    s.update("Profile", standard, {"Description": "Sales and support staff"})
    s.get("User", leo, "Username,UserRoleId,ProfileId,UserType")
    s.delete("PermissionSetAssignment", assignment)
    s.delete("PermissionSet", pricing)
    s.delete("GroupMember", member)
    s.delete("Group", desk)
    s.delete("UserRole", role)
    s.update("User", leo, {"UserRoleId": b.access.roles["Sales Development"]})
    s.delete("UserRole", role)
    s.query(f"SELECT Id FROM Group WHERE RelatedId = '{role}'")


# The access objects an access-review integration reads, in the order it reads them.
ACCESS_OBJECTS: Final = (
    "UserRole",
    "Profile",
    "User",
    "Group",
    "GroupMember",
    "PermissionSet",
    "PermissionSetAssignment",
)


def review_access(s: Scribe, b: Book) -> None:
    s.login("integration@acme.example")
    for name in ACCESS_OBJECTS:
        described = s.call("GET", f"{DATA}/sobjects/{name}/describe")
        # Every field the describe names, as an access-review integration selects them.
        fields = ", ".join(field["name"] for field in described.body.value["fields"])
        s.query(f"SELECT {fields} FROM {name}")
    s.query(
        "SELECT Id, Name, UserRole.Name, Profile.Name FROM User WHERE IsActive = true ORDER BY Name"
    )
    s.query(
        "SELECT Group.DeveloperName, Group.Type, UserOrGroupId FROM GroupMember "
        "ORDER BY Group.DeveloperName"
    )
    s.query(
        "SELECT Assignee.Username, PermissionSet.Label FROM PermissionSetAssignment "
        "WHERE PermissionSet.IsOwnedByProfile = false ORDER BY PermissionSet.Label"
    )


@dataclass(frozen=True, slots=True)
class Chapter:
    slug: str
    task: str
    write: Callable[[Scribe, Book], None]


CHAPTERS: Final[tuple[Chapter, ...]] = (
    Chapter(
        "discover-org",
        "Log in with the OAuth password flow and discover the org: the object list, the "
        "describe results of the sales and service objects, and the API limits.",
        discover_org,
    ),
    Chapter(
        "refused-logins",
        "Show what a client sees with a wrong password, a bad refresh token, an expired "
        "session and no session at all.",
        refused_logins,
    ),
    Chapter(
        "load-accounts",
        "Load the customer accounts with their external ids and a parent account; see the "
        "missing name, the unknown industry, the unknown field and the duplicate id refused.",
        load_accounts,
    ),
    Chapter(
        "load-contacts",
        "Add the contacts of each account; see a contact without a last name and one pointing "
        "at a missing or malformed account refused.",
        load_contacts,
    ),
    Chapter(
        "explore-with-soql",
        "Answer questions about accounts and contacts with SOQL: relationship fields, IN, LIKE, "
        "NOT, ORDER BY, LIMIT and OFFSET, COUNT() and date literals.",
        explore_with_soql,
    ),
    Chapter(
        "product-catalogue",
        "Set up the product catalogue and list the active products.",
        product_catalogue,
    ),
    Chapter(
        "win-an-opportunity",
        "Work the Northwind opportunity from Prospecting to Closed Won with three products, "
        "watching probability, forecast category, IsClosed and IsWon follow the stage.",
        work_an_opportunity,
    ),
    Chapter(
        "lose-an-opportunity",
        "Close the Globex pilot as lost, reopen it, and list the open pipeline.",
        lose_an_opportunity,
    ),
    Chapter(
        "convert-a-lead",
        "Qualify a web lead and convert it into an account, contact and opportunity; a "
        "converted lead can no longer be edited or converted again.",
        convert_a_lead,
    ),
    Chapter(
        "escalate-and-close-a-case",
        "Work a support case from New through Escalated to Closed (a case reason is required "
        "to close), then reopen it.",
        escalate_and_close_a_case,
    ),
    Chapter(
        "service-queue",
        "Log incoming cases from email and web and list the open high and medium ones.",
        service_queue,
    ),
    Chapter(
        "follow-up-tasks",
        "Create follow-up tasks on an opportunity and a case, complete one, and list them.",
        follow_up_tasks,
    ),
    Chapter(
        "sync-by-external-id",
        "Sync accounts from the ERP by external id: upsert creates, then updates; an upsert "
        "without a required field, or naming a field that is no external id, is refused.",
        sync_by_external_id,
    ),
    Chapter(
        "page-through-a-large-query",
        "Read a 230-lead trade-show import in pages of 200 through nextRecordsUrl.",
        page_through_a_large_query,
    ),
    Chapter(
        "clean-up",
        "Delete a stray contact and a churned account (its contacts go with it); deleted "
        "records are gone from query and get, and visible through queryAll.",
        clean_up,
    ),
    Chapter(
        "administer-every-object",
        "Create, read, update and delete one record of every object (users are deactivated, "
        "not deleted; a line item stays with its opportunity).",
        administer_every_object,
    ),
    Chapter(
        "search-with-sosl",
        "Find customers, contacts and open cases by name, e-mail and text with SOSL searches.",
        search_with_sosl,
    ),
    Chapter(
        "query-mistakes",
        "Send the SOQL mistakes people make and read Salesforce's answers to them.",
        query_mistakes,
    ),
    Chapter(
        "manage-access",
        "Add a role (it brings its sharing groups), a public group with members and a "
        "permission set with an assignment, see duplicates, edits of members and assignments, "
        "new profiles and deleting what is still in use refused, then take it all down again.",
        manage_access,
    ),
    Chapter(
        "review-access",
        "Review who may do what, as an access-review integration does: describe each access "
        "object and read every field of every record, then users with their roles and "
        "profiles, group members and permission set assignments.",
        review_access,
    ),
)


def build_corpus() -> list[Session]:
    """Every chapter, in order, against one org: later chapters see earlier records."""
    return write_chapters(*reference_org())


def reference_org() -> tuple[Org, Book]:
    """The org before the first chapter: its connected app and the people who log in."""
    org = Org(HOST, START)
    org.add_client(CLIENT_ID, "client-secret")
    book = Book(access=provision(org))
    for username, first, last, title, department, profile, role in PEOPLE:
        book.users[username] = org.add_user(
            username,
            PASSWORD,
            first,
            last,
            Title=title,
            Department=department,
            CompanyName="Acme Corporation",
            ProfileId=book.access.profiles[profile],
            UserRoleId=book.access.roles[role] if role else None,
        )
    share(org, book.access, book.users)
    import_leads(org)
    return org, book


def import_leads(org: Org) -> None:
    """A Data Import Wizard load, outside the API traffic: 230 leads from a trade-show list."""
    for number in range(230):
        org.create(
            "Lead",
            {
                "LastName": f"Visitor {number:03d}",
                "Company": f"Expo Company {number % 37:02d}",
                "LeadSource": "Purchased List",
            },
            org.admin_id,
        )


def initial_records() -> dict[str, list[Row]]:
    """The reference org as the corpus found it (before its first call), as seed records per
    object in the stored form (what `myna serve --seed-dir` and `myna conformance --seed-dir`
    read): its users, profiles, roles, groups, permission sets and the imported leads, which the
    recordings show only in part or not at all."""
    org, _ = reference_org()
    return {name: [dict(row) for row in rows.values()] for name, rows in org.rows.items() if rows}


def write_chapters(org: Org, book: Book) -> list[Session]:
    """Run every chapter against `org`, one session each."""
    sessions: list[Session] = []
    for number, chapter in enumerate(CHAPTERS, start=1):
        session = Session(
            id=f"crm-{number:02d}-{chapter.slug}",
            task=chapter.task,
            outcome="success",
            source="myna.backends.crm.corpus",
        )
        chapter.write(Scribe(org, session), book)
        org.advance(timedelta(minutes=30))
        sessions.append(session)
    return sessions


def main(argv: list[str] | None = None) -> None:
    corpus_command(
        argv, __doc__.splitlines()[0] if __doc__ else None, build_corpus, initial_records
    )


if __name__ == "__main__":
    main()
