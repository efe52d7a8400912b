"""The CRM corpus and the reference Salesforce org that writes it.

The corpus is the ground truth the built-in model is learned from, so these tests pin down what it
says: it is reproducible to the byte, it exercises every object and every REST verb, and the org
behind it follows Salesforce's rules (each rule shown accepted and refused).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import pytest

from myna.backends.crm.corpus import CHAPTERS, build_corpus
from myna.backends.crm.instance import Org, Reply, Request
from myna.backends.crm.objects import OBJECTS, PICKLISTS, STAGES
from myna.mocks.ids import salesforce_checksum
from myna.traces.jsonl import write_jsonl
from myna.traces.model import Body, Session
from myna.traces.reading import read

SHIPPED = files("myna.backends.crm").joinpath("corpus.jsonl")
HOST = "https://test.my.salesforce.com"
DATA = "/services/data/v59.0"
ID18 = re.compile(r"[a-zA-Z0-9]{18}")


@pytest.fixture(scope="module")
def corpus() -> list[Session]:
    return build_corpus()


def test_regenerating_the_corpus_reproduces_the_shipped_file_byte_for_byte(
    corpus: list[Session], tmp_path: Path
) -> None:
    written = tmp_path / "corpus.jsonl"
    write_jsonl(corpus, written)
    assert written.read_bytes() == SHIPPED.read_bytes(), (
        "regenerate: python -m myna.backends.crm.corpus -o myna/backends/crm/corpus.jsonl"
    )


def test_the_shipped_corpus_reads_back_through_the_trace_reader(corpus: list[Session]) -> None:
    with as_file(SHIPPED) as path:
        sessions = list(read(path))
    assert [s.id for s in sessions] == [s.id for s in corpus]
    assert [len(s.events) for s in sessions] == [len(s.events) for s in corpus]


def test_every_session_states_its_task(corpus: list[Session]) -> None:
    assert len(corpus) == len(CHAPTERS)
    assert all(session.task and len(session.task) > 30 for session in corpus)


def test_the_corpus_stays_modest(corpus: list[Session]) -> None:
    exchanges = sum(len(session.exchanges) for session in corpus)
    assert 150 <= exchanges <= 300


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_every_object_is_created_read_updated_deleted_and_queried(
    corpus: list[Session], name: str
) -> None:
    sobjects = f"{DATA}/sobjects/{name}"
    seen = {
        (exchange.method, exchange.path.rstrip("/").count("/"), exchange.status)
        for session in corpus
        for exchange in session.exchanges
        if exchange.path.rstrip("/").startswith(sobjects)
        and exchange.path.rstrip("/").split("/")[5] == name
    }
    # What an object does not take is shown refused: users are deactivated, never deleted;
    # group members and permission set assignments are added and removed, never edited;
    # profiles are cloned in Setup, never created through the API.
    flags = OBJECTS[name].flags
    create = ("POST", 5, 201 if flags["createable"] else 405)
    update = ("PATCH", 6, 204 if flags["updateable"] else 405)
    delete = ("DELETE", 6, 204 if flags["deletable"] else 405)
    expected = {create, ("GET", 6, 200), update, delete}
    if name == "Profile":
        # Only a custom profile nobody holds may be deleted, and the org has none.
        expected.remove(delete)
    assert expected <= seen
    assert any(
        e.path.startswith(f"{DATA}/query") and f"FROM {name}" in dict(e.query).get("q", "")
        for s in corpus
        for e in s.exchanges
    ), f"no SOQL query reads {name}"


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/services/oauth2/token", 200, None),
        ("/services/oauth2/token", 400, None),
        (f"{DATA}/sobjects/User/describe", 401, "INVALID_SESSION_ID"),
        (f"{DATA}/sobjects/Account/", 400, "REQUIRED_FIELD_MISSING"),
        (f"{DATA}/sobjects/Account/", 400, "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST"),
        (f"{DATA}/query/", 400, "MALFORMED_QUERY"),
        (f"{DATA}/query/", 400, "INVALID_FIELD"),
        (f"{DATA}/query/", 400, "INVALID_TYPE"),
        (f"{DATA}/sobjects/Account/001000000000000AAA", 404, "NOT_FOUND"),
        (f"{DATA}/sobjects/Account/External_Id__c/AC-7001", 201, None),
        (f"{DATA}/sobjects/Account/External_Id__c/AC-7001", 200, None),
        (f"{DATA}/sobjects", 200, None),
        (f"{DATA}/limits", 200, None),
        (f"{DATA}/search/", 200, None),
        (f"{DATA}/search/", 400, "MALFORMED_SEARCH"),
    ],
    ids=[
        "token",
        "token-refused",
        "expired-session",
        "required-field",
        "picklist",
        "malformed-query",
        "invalid-field",
        "invalid-type",
        "not-found",
        "upsert-created",
        "upsert-updated",
        "global-describe",
        "limits",
        "search",
        "malformed-search",
    ],
)
def test_the_corpus_covers_the_endpoints_and_refusals(
    corpus: list[Session], path: str, status: int, code: str | None
) -> None:
    def matches(value: Any) -> bool:
        return code is None or (isinstance(value, list) and value[0].get("errorCode") == code)

    assert any(
        e.path == path and e.status == status and matches(e.response_body.value)
        for s in corpus
        for e in s.exchanges
    ), f"no {status} {code or ''} on {path}"


def test_a_query_pages_through_next_records_url(corpus: list[Session]) -> None:
    pages = [
        e.response_body.value
        for s in corpus
        for e in s.exchanges
        if e.path.startswith(f"{DATA}/query") and e.status == 200
    ]
    first = next(page for page in pages if page.get("done") is False)
    (following,) = [
        e.response_body.value
        for s in corpus
        for e in s.exchanges
        if e.path == first["nextRecordsUrl"]
    ]
    assert (len(first["records"]), len(following["records"])) == (200, 30)
    assert (first["totalSize"], following["totalSize"], following["done"]) == (230, 230, True)


def test_every_id_is_18_characters_with_its_object_key_prefix_and_checksum(
    corpus: list[Session],
) -> None:
    prefixes = {obj.key_prefix: name for name, obj in OBJECTS.items()}
    seen: set[str] = set()
    for session in corpus:
        for exchange in session.exchanges:
            value = exchange.response_body.value
            if isinstance(value, dict) and value.get("success") is True and "id" in value:
                seen.add(value["id"])
            if isinstance(value, dict) and isinstance(value.get("records"), list):
                seen.update(record["Id"] for record in value["records"] if "Id" in record)
    assert len(seen) > 250
    for record_id in seen:
        assert ID18.fullmatch(record_id), record_id
        assert record_id[:3] in prefixes, record_id
        assert record_id[15:] == salesforce_checksum(record_id[:15])


def test_secrets_travel_redacted(corpus: list[Session]) -> None:
    for session in corpus:
        for exchange in session.exchanges:
            assert exchange.request_header("Authorization") in (None, "Bearer [REDACTED]")
            if exchange.path == "/services/oauth2/token":
                assert "password=" not in str(exchange.request_body.value) or (
                    "password=[REDACTED]" in str(exchange.request_body.value)
                )
                value = exchange.response_body.value
                assert "access_token" not in value or value["access_token"] == "[REDACTED]"


# -- the reference org --------------------------------------------------------------------------


class Desk:
    """A small org with one signed-in user, driven like a client would."""

    def __init__(self) -> None:
        self.org = Org(HOST, datetime(2026, 1, 5, 9, 0, 0))
        self.org.add_client("app", "secret")
        self.org.add_user("ana@test.example", "pw", "Ana", "Lima")
        self.token = self.org.session_for("ana@test.example")

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: list[tuple[str, str]] | None = None,
        headers: list[tuple[str, str]] | None = None,
    ) -> Reply:
        self.org.advance(timedelta(minutes=1))
        sent = Body() if body is None else Body("json", body, "application/json")
        return self.org.handle(Request(method, path, params or [], sent, self.token, headers or []))

    def create(self, name: str, **values: Any) -> str:
        reply = self.call("POST", f"{DATA}/sobjects/{name}", values)
        assert reply.status == 201, reply.body.value
        assert reply.body.value["success"] is True
        return str(reply.body.value["id"])

    def patch(self, name: str, record_id: str, **values: Any) -> Reply:
        return self.call("PATCH", f"{DATA}/sobjects/{name}/{record_id}", values)

    def row(self, name: str, record_id: str) -> dict[str, Any]:
        return self.org.rows[name][record_id]

    def query(self, soql: str, **options: Any) -> Reply:
        return self.call("GET", f"{DATA}/query", params=[("q", soql)], **options)

    def opportunity(self, **values: Any) -> str:
        defaults = {"Name": "Deal", "StageName": "Prospecting", "CloseDate": "2026-06-30"}
        return self.create("Opportunity", **{**defaults, **values})


@pytest.fixture
def desk() -> Desk:
    return Desk()


def error(reply: Reply) -> tuple[int, str, list[str] | None]:
    (entry,) = reply.body.value
    return reply.status, entry["errorCode"], entry.get("fields")


@pytest.mark.parametrize(
    ("name", "values", "missing"),
    [
        ("Account", {"Industry": "Retail"}, ["Name"]),
        ("Contact", {"FirstName": "Ana"}, ["LastName"]),
        ("Lead", {"LastName": "Ito"}, ["Company"]),
        ("Opportunity", {"Name": "Deal"}, ["StageName", "CloseDate"]),
        ("Product2", {"Family": "Software"}, ["Name"]),
    ],
)
def test_required_fields_are_refused_when_missing_and_accepted_when_given(
    desk: Desk, name: str, values: dict[str, Any], missing: list[str]
) -> None:
    refused = desk.call("POST", f"{DATA}/sobjects/{name}", values)
    assert error(refused) == (400, "REQUIRED_FIELD_MISSING", missing)
    assert (
        refused.body.value[0]["message"] == f"Required fields are missing: [{', '.join(missing)}]"
    )
    fill = {"Name": "x", "LastName": "x", "Company": "x", "StageName": "Prospecting"}
    given = {**values, **{f: fill.get(f, "2026-06-30") for f in missing}}
    assert desk.call("POST", f"{DATA}/sobjects/{name}", given).status == 201


@pytest.mark.parametrize(
    ("name", "field", "label", "bad"),
    [
        ("Account", "Industry", "Industry", "Vigilantism"),
        ("Lead", "Status", "Status", "Interested"),
        ("Case", "Priority", "Priority", "Urgent"),
        ("Task", "Status", "Status", "Done"),
        ("Opportunity", "StageName", "Stage", "Won"),
    ],
)
def test_restricted_picklists_refuse_values_outside_their_list(
    desk: Desk, name: str, field: str, label: str, bad: str
) -> None:
    base = {
        "Account": {"Name": "A"},
        "Lead": {"LastName": "L", "Company": "C"},
        "Case": {"Subject": "S"},
        "Task": {"Subject": "T"},
        "Opportunity": {"Name": "O", "StageName": "Prospecting", "CloseDate": "2026-06-30"},
    }[name]
    refused = desk.call("POST", f"{DATA}/sobjects/{name}", {**base, field: bad})
    assert error(refused) == (400, "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST", [field])
    assert refused.body.value[0]["message"] == (
        f"{label}: bad value for restricted picklist field: {bad}"
    )
    good = PICKLISTS[OBJECTS[name].field(field).picklist or field][-1]
    assert desk.call("POST", f"{DATA}/sobjects/{name}", {**base, field: good}).status == 201


@pytest.mark.parametrize("stage", list(STAGES))
def test_a_stage_brings_its_probability_forecast_category_and_closed_flags(
    desk: Desk, stage: str
) -> None:
    deal = desk.opportunity()
    assert desk.patch("Opportunity", deal, StageName=stage).status == 204
    row = desk.row("Opportunity", deal)
    probability, category = STAGES[stage]
    assert (row["Probability"], row["ForecastCategoryName"]) == (probability, category)
    assert (row["IsClosed"], row["IsWon"]) == (
        stage in ("Closed Won", "Closed Lost"),
        stage == "Closed Won",
    )


def test_a_probability_sent_with_the_stage_wins_over_the_default(desk: Desk) -> None:
    deal = desk.opportunity()
    desk.patch("Opportunity", deal, StageName="Negotiation/Review", Probability=80)
    assert desk.row("Opportunity", deal)["Probability"] == 80.0


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("Opportunity", "IsWon"),
        ("Opportunity", "IsClosed"),
        ("Case", "IsClosed"),
        ("Lead", "IsConverted"),
    ],
)
def test_computed_fields_cannot_be_set(desk: Desk, name: str, field: str) -> None:
    makers: dict[str, Callable[[], str]] = {
        "Opportunity": desk.opportunity,
        "Case": lambda: desk.create("Case", Subject="s"),
        "Lead": lambda: desk.create("Lead", LastName="L", Company="C"),
    }
    record = makers[name]()
    assert error(desk.patch(name, record, **{field: True})) == (
        400,
        "INVALID_FIELD_FOR_INSERT_UPDATE",
        [field],
    )


def test_escalation_marks_the_case_and_closing_needs_a_reason(desk: Desk) -> None:
    case = desk.create("Case", Subject="Gateway offline")
    assert desk.row("Case", case)["Status"] == "New"
    assert desk.row("Case", case)["CaseNumber"] == "00001001"
    desk.patch("Case", case, Status="Escalated")
    assert desk.row("Case", case)["IsEscalated"] is True
    refused = desk.patch("Case", case, Status="Closed")
    assert error(refused) == (400, "FIELD_CUSTOM_VALIDATION_EXCEPTION", ["Reason"])
    assert desk.row("Case", case)["Status"] == "Escalated"
    assert desk.patch("Case", case, Status="Closed", Reason="Breakdown").status == 204
    closed = desk.row("Case", case)
    assert (closed["IsClosed"], closed["ClosedDate"]) == (True, "2026-01-05T09:04:00.000+0000")
    desk.patch("Case", case, Status="Working")
    reopened = desk.row("Case", case)
    assert (reopened["IsClosed"], reopened["ClosedDate"], reopened["IsEscalated"]) == (
        False,
        None,
        True,
    )


def test_converting_a_lead_creates_an_account_contact_and_opportunity(desk: Desk) -> None:
    lead = desk.create(
        "Lead", FirstName="Priya", LastName="Nair", Company="Oceanic", Email="p@o.example"
    )
    reply = desk.call("POST", f"/services/apexrest/LeadConvert/{lead}", {})
    assert reply.status == 200
    result = reply.body.value
    converted = desk.row("Lead", lead)
    assert (converted["Status"], converted["IsConverted"]) == ("Closed - Converted", True)
    assert (
        converted["ConvertedAccountId"],
        converted["ConvertedContactId"],
        converted["ConvertedOpportunityId"],
    ) == (result["accountId"], result["contactId"], result["opportunityId"])
    assert desk.row("Account", result["accountId"])["Name"] == "Oceanic"
    contact = desk.row("Contact", result["contactId"])
    assert (contact["Name"], contact["AccountId"]) == ("Priya Nair", result["accountId"])
    assert desk.row("Opportunity", result["opportunityId"])["StageName"] == "Prospecting"


def test_a_converted_lead_refuses_edits_and_a_second_conversion(desk: Desk) -> None:
    lead = desk.create("Lead", LastName="Nair", Company="Oceanic")
    desk.call("POST", f"/services/apexrest/LeadConvert/{lead}", {"doNotCreateOpportunity": True})
    assert desk.row("Lead", lead)["ConvertedOpportunityId"] is None
    assert error(desk.patch("Lead", lead, Status="Working - Contacted"))[1] == (
        "CANNOT_UPDATE_CONVERTED_LEAD"
    )
    again = desk.call("POST", f"/services/apexrest/LeadConvert/{lead}", {})
    assert error(again)[1] == "CANNOT_UPDATE_CONVERTED_LEAD"


def test_line_items_total_their_price_and_roll_up_into_the_amount(desk: Desk) -> None:
    deal = desk.opportunity(Amount=5)
    product = desk.create("Product2", Name="Gateway")
    first = desk.create(
        "OpportunityLineItem", OpportunityId=deal, Product2Id=product, Quantity=3, UnitPrice=10.5
    )
    desk.create(
        "OpportunityLineItem", OpportunityId=deal, Product2Id=product, Quantity=1, UnitPrice=100
    )
    assert desk.row("OpportunityLineItem", first)["TotalPrice"] == 31.5
    assert desk.row("Opportunity", deal)["Amount"] == 131.5
    desk.call("DELETE", f"{DATA}/sobjects/OpportunityLineItem/{first}")
    assert desk.row("Opportunity", deal)["Amount"] == 100.0


def test_references_must_name_an_existing_record_of_the_right_object(desk: Desk) -> None:
    account = desk.create("Account", Name="A")
    assert (
        desk.call(
            "POST", f"{DATA}/sobjects/Contact", {"LastName": "x", "AccountId": account}
        ).status
        == 201
    )
    wrong_kind = desk.call("POST", f"{DATA}/sobjects/Task", {"Subject": "x", "WhoId": account})
    assert error(wrong_kind) == (400, "INVALID_CROSS_REFERENCE_KEY", ["WhoId"])
    malformed = desk.call("POST", f"{DATA}/sobjects/Contact", {"LastName": "x", "AccountId": "x"})
    assert error(malformed) == (400, "MALFORMED_ID", ["AccountId"])


def test_deleting_an_account_takes_its_contacts_and_query_all_still_sees_them(desk: Desk) -> None:
    account = desk.create("Account", Name="Churned")
    contact = desk.create("Contact", LastName="Gone", AccountId=account)
    assert desk.call("DELETE", f"{DATA}/sobjects/Account/{account}").status == 204
    assert error(desk.call("GET", f"{DATA}/sobjects/Contact/{contact}"))[:2] == (404, "NOT_FOUND")
    soql = f"SELECT Id, IsDeleted FROM Contact WHERE Id = '{contact}'"
    assert desk.query(soql).body.value["totalSize"] == 0
    every = desk.call("GET", f"{DATA}/queryAll", params=[("q", soql)]).body.value
    assert [record["IsDeleted"] for record in every["records"]] == [True]


def test_upsert_creates_then_updates_by_external_id(desk: Desk) -> None:
    path = f"{DATA}/sobjects/Account/External_Id__c/ERP-1"
    created = desk.call("PATCH", path, {"Name": "Acme"})
    assert (created.status, created.body.value["created"]) == (201, True)
    updated = desk.call("PATCH", path, {"Rating": "Hot"})
    assert (updated.status, updated.body.value) == (
        200,
        {"id": created.body.value["id"], "success": True, "errors": [], "created": False},
    )
    assert desk.call("GET", path).body.value["Rating"] == "Hot"
    assert error(desk.call("PATCH", f"{DATA}/sobjects/Account/Phone/555", {"Name": "x"}))[:2] == (
        400,
        "INVALID_FIELD",
    )


def test_a_record_is_found_by_its_15_character_id_too(desk: Desk) -> None:
    account = desk.create("Account", Name="Acme")
    reply = desk.call("GET", f"{DATA}/sobjects/Account/{account[:15]}")
    assert reply.body.value["Id"] == account


@pytest.mark.parametrize(
    ("soql", "names"),
    [
        ("SELECT Name FROM Account ORDER BY Name", ["Acme", "Globex", "Initech"]),
        ("SELECT Name FROM Account WHERE Industry = 'Energy'", ["Globex"]),
        (
            "SELECT Name FROM Account WHERE Industry IN ('Energy', 'Retail') ORDER BY Name DESC",
            ["Globex", "Acme"],
        ),
        (
            "SELECT Name FROM Account WHERE Name LIKE 'G%' OR NumberOfEmployees > 1000",
            ["Globex", "Initech"],
        ),
        (
            "SELECT Name FROM Account WHERE NOT (Industry = 'Retail') ORDER BY Name",
            ["Globex", "Initech"],
        ),
        ("SELECT Name FROM Account ORDER BY Name LIMIT 1 OFFSET 1", ["Globex"]),
        (
            "SELECT Name FROM Account WHERE CreatedDate = TODAY ORDER BY Name",
            ["Acme", "Globex", "Initech"],
        ),
    ],
    ids=["order", "equals", "in", "like-or", "not", "limit-offset", "date-literal"],
)
def test_soql_selects_and_orders(desk: Desk, soql: str, names: list[str]) -> None:
    desk.create("Account", Name="Acme", Industry="Retail", NumberOfEmployees=40)
    desk.create("Account", Name="Globex", Industry="Energy", NumberOfEmployees=900)
    desk.create("Account", Name="Initech", Industry="Technology", NumberOfEmployees=2500)
    answer = desk.query(soql).body.value
    assert [record["Name"] for record in answer["records"]] == names
    assert answer["done"] is True


def test_relationship_fields_come_back_nested_with_their_attributes(desk: Desk) -> None:
    account = desk.create("Account", Name="Acme")
    contact = desk.create("Contact", LastName="Brooks", AccountId=account)
    desk.create("Contact", LastName="Solo")
    answer = desk.query(
        "SELECT Name, Account.Name FROM Contact WHERE Account.Name = 'Acme'"
    ).body.value
    assert answer["records"] == [
        {
            "attributes": {"type": "Contact", "url": f"{DATA}/sobjects/Contact/{contact}"},
            "Name": "Brooks",
            "Account": {
                "attributes": {"type": "Account", "url": f"{DATA}/sobjects/Account/{account}"},
                "Name": "Acme",
            },
        }
    ]


def test_count_answers_the_total_without_records(desk: Desk) -> None:
    for name in ("A", "B"):
        desk.create("Account", Name=name)
    assert desk.query("SELECT COUNT() FROM Account").body.value == {
        "totalSize": 2,
        "done": True,
        "records": [],
    }


def test_a_large_answer_pages_in_batches_through_next_records_url(desk: Desk) -> None:
    for number in range(205):
        desk.org.create("Lead", {"LastName": f"L{number:03d}", "Company": "C"}, desk.org.admin_id)
    first = desk.query(
        "SELECT Id FROM Lead", headers=[("Sforce-Query-Options", "batchSize=200")]
    ).body.value
    assert (first["done"], len(first["records"])) == (False, 200)
    assert re.fullmatch(rf"{DATA}/query/01g\w{{12}}-200", first["nextRecordsUrl"])
    rest = desk.call("GET", first["nextRecordsUrl"]).body.value
    assert (rest["done"], len(rest["records"]), "nextRecordsUrl" in rest) == (True, 5, False)
    unpaged = desk.query("SELECT Id FROM Lead").body.value
    assert (unpaged["done"], len(unpaged["records"])) == (True, 205)


@pytest.mark.parametrize(
    ("soql", "code", "detail"),
    [
        ("SELECT Id FROM", "MALFORMED_QUERY", "ERROR at Row:1:Column:15"),
        (
            "SELECT Id, Revenue FROM Account",
            "INVALID_FIELD",
            "No such column 'Revenue' on entity 'Account'",
        ),
        ("SELECT Id FROM Invoice__c", "INVALID_TYPE", "sObject type 'Invoice__c' is not supported"),
        (
            "SELECT Account.Nme FROM Contact",
            "INVALID_FIELD",
            "No such column 'Nme' on entity 'Account'",
        ),
    ],
    ids=["malformed", "unknown-field", "unknown-object", "unknown-relationship-field"],
)
def test_query_mistakes_answer_salesforce_s_codes(
    desk: Desk, soql: str, code: str, detail: str
) -> None:
    reply = desk.query(soql)
    (entry,) = reply.body.value
    assert (reply.status, entry["errorCode"], "fields" in entry) == (400, code, False)
    assert detail in entry["message"]


def test_an_unknown_session_gets_the_recorded_401(desk: Desk) -> None:
    reply = desk.org.handle(Request("GET", f"{DATA}/sobjects", token="00Dexpired"))
    assert reply.status == 401
    assert ("WWW-Authenticate", "Token") in reply.headers
    assert reply.body.value == [
        {"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}
    ]


@pytest.mark.parametrize(
    ("form", "status", "error_code"),
    [
        (
            "grant_type=password&client_id=app&client_secret=secret&username=ana@test.example&password=pw",
            200,
            None,
        ),
        (
            "grant_type=password&client_id=app&client_secret=secret&username=ana@test.example&password=no",
            400,
            "invalid_grant",
        ),
        (
            "grant_type=password&client_id=other&client_secret=x&username=ana@test.example&password=pw",
            400,
            "invalid_client_id",
        ),
    ],
    ids=["granted", "wrong-password", "unknown-client"],
)
def test_the_token_endpoint_grants_a_session_for_the_right_password(
    desk: Desk, form: str, status: int, error_code: str | None
) -> None:
    reply = desk.org.handle(
        Request(
            "POST",
            "/services/oauth2/token",
            body=Body("text", form, "application/x-www-form-urlencoded"),
        )
    )
    assert reply.status == status
    if error_code is not None:
        assert reply.body.value["error"] == error_code
        return
    token = reply.body.value["access_token"]
    assert reply.body.value["instance_url"] == HOST
    granted = desk.org.handle(Request("GET", f"{DATA}/limits", token=token))
    assert granted.status == 200
    assert granted.body.value["DailyApiRequests"]["Max"] == 15000


@pytest.mark.parametrize(
    ("sosl", "found"),
    [
        # The org's users work for Acme Corporation (a new user's company is the org's).
        (
            "FIND {acme}",
            [("User", "Admin Org"), ("User", "Ana Lima"), ("Account", "Acme"), ("Contact", "Lee")],
        ),
        ("FIND {acme} IN NAME FIELDS RETURNING Account(Name)", [("Account", "Acme")]),
        ("FIND {lee@acme.example} IN EMAIL FIELDS RETURNING Contact(Name)", [("Contact", "Lee")]),
        (
            "FIND {glob* OR acme} RETURNING Account(Name ORDER BY Name DESC)",
            [
                ("Account", "Globex"),
                ("Account", "Acme"),
            ],
        ),
        ("FIND {acme} RETURNING Account(Name WHERE Industry = 'Energy')", []),
    ],
    ids=["everywhere", "name-scope", "email-scope", "wildcard-or-order", "where"],
)
def test_sosl_searches_the_scope_and_returns_the_named_objects(
    desk: Desk, sosl: str, found: list[tuple[str, str]]
) -> None:
    account = desk.create("Account", Name="Acme", Industry="Retail")
    desk.create("Account", Name="Globex", Industry="Energy")
    desk.create("Contact", LastName="Lee", Email="lee@acme.example", AccountId=account)
    answer = desk.call("GET", f"{DATA}/search", params=[("q", sosl)]).body.value
    assert [
        (
            record["attributes"]["type"],
            record.get("Name") or desk.row(record["attributes"]["type"], record["Id"])["Name"],
        )
        for record in answer["searchRecords"]
    ] == found


def test_a_search_without_braces_is_malformed(desk: Desk) -> None:
    reply = desk.call("GET", f"{DATA}/search", params=[("q", "FIND acme")])
    assert error(reply)[:2] == (400, "MALFORMED_SEARCH")


def test_an_object_describe_states_fields_picklists_and_defaults(desk: Desk) -> None:
    described = desk.call("GET", f"{DATA}/sobjects/Lead/describe").body.value
    assert (described["name"], described["keyPrefix"]) == ("Lead", "00Q")
    fields = {field["name"]: field for field in described["fields"]}
    status = fields["Status"]
    assert [v["value"] for v in status["picklistValues"] if v["defaultValue"]] == [
        "Open - Not Contacted"
    ]
    assert (fields["Company"]["nillable"], fields["Company"]["createable"]) == (False, True)
    assert (fields["IsConverted"]["createable"], fields["IsConverted"]["updateable"]) == (
        False,
        False,
    )
    assert fields["ConvertedAccountId"]["referenceTo"] == ["Account"]


# -- access: roles, profiles, groups, permission sets --------------------------------------------


def profile_of(desk: Desk, name: str = "System Administrator") -> str:
    found = desk.org.find_profile(name)
    assert found is not None
    return found


def new_user(desk: Desk, username: str, **values: Any) -> str:
    return desk.create(
        "User",
        **{
            "Username": username,
            "LastName": "Ito",
            "Alias": "ito",
            "Email": username,
            "TimeZoneSidKey": "Europe/London",
            "LocaleSidKey": "en_GB",
            "EmailEncodingKey": "UTF-8",
            "LanguageLocaleKey": "en_US",
            "ProfileId": profile_of(desk),
            **values,
        },
    )


def test_a_user_needs_a_profile(desk: Desk) -> None:
    reply = desk.call("POST", f"{DATA}/sobjects/User", {"Username": "x@test.example"})
    assert error(reply)[1] == "REQUIRED_FIELD_MISSING"
    assert "ProfileId" in (error(reply)[2] or [])


def test_a_new_role_brings_its_two_sharing_groups_and_takes_them_when_deleted(
    desk: Desk,
) -> None:
    role = desk.create("UserRole", Name="VP, Sales", OpportunityAccessForAccountOwner="Edit")
    soql = f"SELECT DeveloperName, Type, OwnerId FROM Group WHERE RelatedId = '{role}'"
    groups = desk.query(soql).body.value["records"]
    assert sorted((g["DeveloperName"], g["Type"]) for g in groups) == [
        ("VPSales", "Role"),
        ("VPSales", "RoleAndSubordinates"),
    ]
    assert {g["OwnerId"][:3] for g in groups} == {"00D"}
    assert desk.call("DELETE", f"{DATA}/sobjects/UserRole/{role}").status == 204
    assert desk.query(soql).body.value["totalSize"] == 0
    # Setup records are deleted outright: not even queryAll sees them.
    every = desk.call("GET", f"{DATA}/queryAll", params=[("q", soql)])
    assert every.body.value["totalSize"] == 0


def test_a_user_holds_its_profile_through_one_assignment_that_follows_the_profile(
    desk: Desk,
) -> None:
    user = new_user(desk, "ito@test.example")
    reader = desk.org.add_profile("Read Only", "1005g0000000009AAA", "Standard", ["RunReports"])
    soql = (
        "SELECT PermissionSet.ProfileId FROM PermissionSetAssignment "
        f"WHERE AssigneeId = '{user}' AND PermissionSet.IsOwnedByProfile = true"
    )
    (held,) = desk.query(soql).body.value["records"]
    assert held["PermissionSet"]["ProfileId"] == profile_of(desk)
    assert desk.patch("User", user, ProfileId=reader).status == 204
    (held,) = desk.query(soql).body.value["records"]
    assert held["PermissionSet"]["ProfileId"] == reader


def test_a_profile_s_permissions_are_the_permission_set_it_owns(desk: Desk) -> None:
    profile = profile_of(desk)
    assert desk.patch("Profile", profile, PermissionsApiEnabled=False).status == 204
    (owned,) = desk.query(
        "SELECT PermissionsApiEnabled FROM PermissionSet "
        f"WHERE ProfileId = '{profile}' AND IsOwnedByProfile = true"
    ).body.value["records"]
    assert owned["PermissionsApiEnabled"] is False
    refused = desk.call("POST", f"{DATA}/sobjects/Profile", {"Name": "Copy"})
    assert error(refused)[:2] == (405, "METHOD_NOT_ALLOWED")


def test_a_membership_and_an_assignment_exist_once(desk: Desk) -> None:
    user = new_user(desk, "ito@test.example")
    group = desk.create("Group", Name="Renewals Desk", Type="Regular")
    assert desk.row("Group", group)["DeveloperName"] == "Renewals_Desk"
    desk.create("GroupMember", GroupId=group, UserOrGroupId=user)
    again = desk.call(
        "POST", f"{DATA}/sobjects/GroupMember", {"GroupId": group, "UserOrGroupId": user}
    )
    assert error(again)[:2] == (400, "DUPLICATE_VALUE")
    granted = desk.create("PermissionSet", Name="Pricing", Label="Pricing")
    desk.create("PermissionSetAssignment", AssigneeId=user, PermissionSetId=granted)
    twice = desk.call(
        "POST",
        f"{DATA}/sobjects/PermissionSetAssignment",
        {"AssigneeId": user, "PermissionSetId": granted},
    )
    assert error(twice)[:2] == (400, "DUPLICATE_VALUE")


def test_what_is_in_use_is_not_deleted_and_a_group_takes_its_members(desk: Desk) -> None:
    role = desk.create("UserRole", Name="Support", OpportunityAccessForAccountOwner="Read")
    user = new_user(desk, "ito@test.example", UserRoleId=role)
    held = desk.call("DELETE", f"{DATA}/sobjects/UserRole/{role}")
    assert error(held)[:2] == (400, "DELETE_FAILED")
    granted = desk.create("PermissionSet", Name="Pricing", Label="Pricing")
    assignment = desk.create("PermissionSetAssignment", AssigneeId=user, PermissionSetId=granted)
    assigned = desk.call("DELETE", f"{DATA}/sobjects/PermissionSet/{granted}")
    assert error(assigned)[:2] == (400, "DELETE_FAILED")
    assert (
        desk.call("DELETE", f"{DATA}/sobjects/PermissionSetAssignment/{assignment}").status == 204
    )
    assert desk.call("DELETE", f"{DATA}/sobjects/PermissionSet/{granted}").status == 204
    group = desk.create("Group", Name="Support Team", Type="Regular")
    member = desk.create("GroupMember", GroupId=group, UserOrGroupId=user)
    assert desk.call("PATCH", f"{DATA}/sobjects/GroupMember/{member}", {}).status == 405
    assert desk.call("DELETE", f"{DATA}/sobjects/Group/{group}").status == 204
    assert desk.call("GET", f"{DATA}/sobjects/GroupMember/{member}").status == 404


def test_a_new_user_gets_the_platform_s_defaults(desk: Desk) -> None:
    user = desk.row("User", new_user(desk, "ito@test.example", City="Leeds"))
    assert re.fullmatch(r"User\d{20}", user["CommunityNickname"])
    assert (user["UserType"], user["CompanyName"], user["DigestFrequency"]) == (
        "Standard",
        "Acme Corporation",
        "N",
    )
    assert user["Address"] == {
        "city": "Leeds",
        "country": "US",
        "geocodeAccuracy": None,
        "latitude": None,
        "longitude": None,
        "postalCode": None,
        "state": None,
        "street": None,
    }
    assert user["UserPreferencesReminderSoundOff"] is False
    assert desk.row("User", desk.org.sessions[desk.token])["LastLoginDate"] is not None


def test_soql_walks_from_users_and_members_to_their_roles_profiles_and_groups(desk: Desk) -> None:
    role = desk.create("UserRole", Name="Support", OpportunityAccessForAccountOwner="Read")
    user = new_user(desk, "ito@test.example", UserRoleId=role)
    group = desk.create("Group", Name="Support Team", Type="Regular")
    desk.create("GroupMember", GroupId=group, UserOrGroupId=user)
    (found,) = desk.query(
        f"SELECT Name, UserRole.Name, Profile.Name FROM User WHERE Id = '{user}'"
    ).body.value["records"]
    assert (found["UserRole"]["Name"], found["Profile"]["Name"]) == (
        "Support",
        "System Administrator",
    )
    (member,) = desk.query(
        "SELECT Group.DeveloperName, UserOrGroupId FROM GroupMember WHERE Group.Type = 'Regular'"
    ).body.value["records"]
    assert (member["Group"]["DeveloperName"], member["UserOrGroupId"]) == ("Support_Team", user)
    unknown = desk.query("SELECT UserOrGroup.Name FROM GroupMember")
    assert error(unknown)[:2] == (400, "INVALID_FIELD")
