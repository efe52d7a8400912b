"""A Salesforce-shaped service: OAuth2 tokens, SOQL queries, `{totalSize, done, records}` with
`attributes`, and Salesforce's list-shaped error body; plus API-key auth on a variant."""

from __future__ import annotations

import pytest

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import (
    Auth,
    Conventions,
    Envelope,
    ErrorShape,
    FieldSpec,
    IdFormat,
    Operation,
    Parameter,
    Resource,
    ServiceModel,
)

API = "/services/data/v50.0"
TOKEN_PATH = "/services/oauth2/token"
ACME = "001000000000001AAA"
GLOBEX = "001000000000002AAA"

ACCOUNT = Resource(
    name="Account",
    collection_path=f"{API}/sobjects/Account",
    item_path=f"{API}/sobjects/Account/{{Id}}",
    id_field="Id",
    id_format=IdFormat(kind="salesforce", prefix="001"),
    fields={
        "Id": FieldSpec.model_validate({"name": "Id", "schema": {"type": "string"}}),
        "Name": FieldSpec.model_validate({"name": "Name", "schema": {"type": "string"}}),
        "NumberOfEmployees": FieldSpec.model_validate(
            {"name": "NumberOfEmployees", "schema": {"type": ["integer", "null"]}}
        ),
    },
)


def salesforce_model(auth: Auth) -> ServiceModel:
    return ServiceModel(
        name="salesforce-test",
        conventions=Conventions(
            envelope=Envelope(
                style="wrapped",
                list_key="records",
                total_key="totalSize",
                done_key="done",
                record_attributes=True,
            ),
            errors=[ErrorShape(template=[{"message": "{message}", "errorCode": "{code}"}])],
            auth=auth,
            query_language="soql",
        ),
        resources={"Account": ACCOUNT},
        operations=[
            Operation(
                id="query",
                method="GET",
                path=f"{API}/query",
                kind="query",
                parameters=[Parameter(name="q", location="query", role="query")],
            ),
            Operation(
                id="get_account",
                method="GET",
                path=f"{API}/sobjects/Account/{{Id}}",
                kind="get",
                resource="Account",
            ),
            Operation(id="token", method="POST", path=TOKEN_PATH, kind="auth"),
        ],
    )


def _mock(auth: Auth) -> Mock:
    model = salesforce_model(auth)
    store = SqlStore(model)
    accounts = [
        ("Account", ACME, {"Id": ACME, "Name": "Acme", "NumberOfEmployees": 120}),
        ("Account", GLOBEX, {"Id": GLOBEX, "Name": "Globex", "NumberOfEmployees": None}),
    ]
    store.create_world("default", from_snapshot=store.load_base(iter(accounts), "accounts"))
    credentials = Credentials.parse(["client-id:client-secret", "api-key-1"])
    return Mock(model, store, credentials=credentials, admin_token="admin", strict=True)


OAUTH = Auth(
    scheme="oauth2",
    token_path=TOKEN_PATH,
    unauthorized_body=[
        {"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}
    ],
)


@pytest.fixture
def mock() -> Mock:
    return _mock(OAUTH)


@pytest.fixture
def client(mock: Mock) -> MockClient:
    token = MockClient(mock).post(
        TOKEN_PATH,
        content=b"grant_type=client_credentials&client_id=client-id&client_secret=client-secret",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert token.status == 200, token.json()
    return MockClient(mock, headers={"Authorization": f"Bearer {token.json()['access_token']}"})


def test_the_token_endpoint_issues_a_bearer_token(mock: Mock) -> None:
    response = MockClient(mock, base_url="https://example.my.salesforce.com").post(
        TOKEN_PATH,
        content=b"grant_type=password&username=client-id&password=client-secret",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )

    body = response.json()
    assert response.status == 200
    assert body["token_type"] == "Bearer"
    assert body["instance_url"] == "https://example.my.salesforce.com"


@pytest.mark.parametrize(
    "form",
    [
        b"grant_type=password&username=client-id&password=wrong",
        b"grant_type=client_credentials&client_id=nobody&client_secret=x",
        b"grant_type=authorization_code&code=abc",
    ],
    ids=["wrong-password", "unknown-client", "unsupported-grant"],
)
def test_bad_grants_are_refused(mock: Mock, form: bytes) -> None:
    response = MockClient(mock).post(
        TOKEN_PATH, content=form, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )

    assert response.status == 400
    assert response.json()["error"] == "invalid_grant"


def test_no_token_gets_the_services_own_401(mock: Mock) -> None:
    response = MockClient(mock).get(f"{API}/query", params={"q": "SELECT Id FROM Account"})

    assert response.status == 401
    assert response.json() == [
        {"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}
    ]


def test_a_soql_query_answers_in_salesforces_shape(client: MockClient) -> None:
    response = client.get(
        f"{API}/query", params={"q": "SELECT Id, Name FROM Account WHERE Name = 'Acme'"}
    )

    assert response.status == 200
    assert response.json() == {
        "totalSize": 1,
        "done": True,
        "records": [
            {
                "attributes": {"type": "Account", "url": f"{API}/sobjects/Account/{ACME}"},
                "Id": ACME,
                "Name": "Acme",
            }
        ],
    }


def test_count_queries_answer_only_the_total(client: MockClient) -> None:
    response = client.get(f"{API}/query", params={"q": "SELECT COUNT() FROM Account"})

    assert (response.json()["totalSize"], response.json()["records"]) == (2, [])


def test_order_and_nulls_follow_the_query(client: MockClient) -> None:
    response = client.get(
        f"{API}/query",
        params={"q": "SELECT Name FROM Account ORDER BY NumberOfEmployees DESC NULLS LAST"},
    )

    assert [r["Name"] for r in response.json()["records"]] == ["Acme", "Globex"]


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("SELEC Id FROM Account", "MALFORMED_QUERY"),
        ("SELECT Id FROM Opportunity", "INVALID_TYPE"),
        ("SELECT Id FROM Account WHERE Colour = 'red'", "invalid_request"),
    ],
    ids=["syntax", "unknown-object", "unknown-field"],
)
def test_bad_queries_are_400_in_salesforces_error_shape(
    client: MockClient, query: str, code: str
) -> None:
    response = client.get(f"{API}/query", params={"q": query})

    assert response.status == 400
    [error] = response.json()
    assert error["errorCode"] == code
    assert error["message"]


def test_api_key_auth_reads_the_learned_header() -> None:
    mock = _mock(Auth(scheme="apikey", header="X-Api-Key"))
    path = f"{API}/sobjects/Account/{ACME}"

    assert MockClient(mock).get(path).status == 401
    assert MockClient(mock, headers={"X-Api-Key": "wrong"}).get(path).status == 401
    accepted = MockClient(mock, headers={"X-Api-Key": "api-key-1"}).get(path)
    assert accepted.status == 200
    assert accepted.json()["Name"] == "Acme"
