"""The request schemas a mock publishes say exactly which requests it takes: a replayed
operation refuses a body its schema refuses, a text field of a service that renders values as
text takes the scalars its schema names and no others, and a list takes the cursors it issues
and no others."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.contract import as_sent
from myna.mocks.runtime import CURSOR_PATTERN
from myna.mocks.validation import SchemaCheck, coerce_scalars
from myna.schemas import learn
from myna.schemas.model import ServiceModel
from tests.mocks.crud_session import recorded_mock
from tests.schemas.traffic import exchange, session

NOTES = "https://notes.example.com/v1"

# -- a replayed operation checks the body it is sent -----------------------------------------


def _search(number: int) -> Any:
    found = {"results": [{"kind": "note", "title": f"Note {number}"}], "more": False}
    return session(
        exchange(
            "POST",
            f"{NOTES}/search",
            response=found,
            request={"query": f"note {number}", "sort": {"direction": "ascending"}},
        ),
        name=f"s{number}",
    )


@pytest.fixture(scope="module")
def searched() -> ServiceModel:
    [model] = learn([_search(number) for number in range(1, 4)])
    return model


@pytest.fixture(scope="module")
def search_client(searched: ServiceModel) -> MockClient:
    return MockClient(recorded_mock(searched, strict=True), headers={})


def test_the_search_is_answered_from_its_recordings(search_client: MockClient) -> None:
    [contract] = [c for c in search_client.mock.operations if c.operation.path == "/v1/search"]
    assert contract.replayed or contract.operation.kind == "query"  # no dialect: replayed
    assert contract.request_schema is not None


@pytest.mark.parametrize(
    "body",
    [[None, None], {"query": 5}, {"query": "x", "sort": "ascending"}, "text"],
    ids=["array", "number-for-text", "text-for-object", "string"],
)
def test_a_replayed_operation_refuses_a_body_its_schema_refuses(
    search_client: MockClient, body: Any
) -> None:
    answer = search_client.post("/v1/search", json=body)

    assert answer.status == 400, answer.body
    assert "error" in answer.json()


def test_a_replayed_operation_answers_a_body_its_schema_takes_and_none(
    search_client: MockClient,
) -> None:
    sent = search_client.post(
        "/v1/search", json={"query": "anything", "sort": {"direction": "descending"}}
    )
    bare = search_client.post("/v1/search")

    assert sent.status == 200, sent.body
    assert sent.json()["results"]
    assert bare.status == 200


def test_a_replayed_write_without_its_body_is_refused() -> None:
    gists = "https://api.example.net/gists"
    [model] = learn(
        [
            session(
                exchange("POST", gists, 201, response={"ok": True}, request={"files": {}}),
                name=f"g{number}",
            )
            for number in range(3)
        ]
    )
    client = MockClient(recorded_mock(model), headers={})
    [contract] = [c for c in client.mock.operations if c.operation.path == "/gists"]
    assert contract.replayed
    assert contract.body_required

    assert client.post("/gists").status == 400
    assert client.post("/gists", json={"files": {}}).status == 201


def test_a_replayed_body_of_another_media_type_is_refused_and_documented(
    search_client: MockClient,
) -> None:
    answer = search_client.post(
        "/v1/search", content=b"query=x", headers={"Content-Type": "text/plain"}
    )
    document = search_client.get("/openapi.json").json()

    assert answer.status == 415
    assert {"413", "415"} <= set(document["paths"]["/v1/search"]["post"]["responses"])


# -- text fields take the scalars their schema says ------------------------------------------

TEXTS: list[dict[str, Any]] = [
    {"type": "string"},
    {"type": "string", "x-myna-type": "integer", "pattern": "^(?:-?[0-9]+)?$"},
    {"type": "string", "x-myna-type": "boolean", "pattern": "^(?:true|false)$"},
    {"type": "string", "x-myna-type": "integer", "enum": ["1", "2", "10", "01"]},
    {"type": "string", "enum": ["true", "low", "3"]},
    {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
    {"type": "string", "maxLength": 3},
    {"type": "string", "format": "email"},
]
SCALARS = st.one_of(
    st.booleans(),
    st.integers(),
    st.integers(-(10**6), 10**6).map(float),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, 2, 3, 10, -0.0, 2.0, 1e300, True, False]),
)


@given(text=st.sampled_from(TEXTS), value=SCALARS)
@settings(max_examples=400, deadline=None)
def test_a_scalar_the_published_schema_takes_is_stored_as_text_the_field_takes(
    text: dict[str, Any], value: Any
) -> None:
    field = {"anyOf": [text, {"const": ""}]}
    published = as_sent({"type": "object", "properties": {"f": field}}, frozenset({"f"}))
    stored = coerce_scalars({"f": value}, frozenset({"f"}))

    taken = SchemaCheck(published).is_valid({"f": value})

    if taken:  # what the document promises is stored as the field allows
        assert SchemaCheck(field, formats=True).is_valid(stored["f"])
    if text.keys() <= {"type", "x-myna-type", "pattern", "enum"}:
        # and for text that is a number, a flag or a closed set, nothing else is taken
        assert taken == SchemaCheck(field, formats=True).is_valid(stored["f"])


@pytest.mark.parametrize(
    "body",
    [
        {"short_description": 42, "urgency": 2},
        {"short_description": True, "urgency": 2.0},
        {"short_description": "x", "urgency": True},
        {"short_description": "x", "urgency": 7},
        {"short_description": "x", "urgency": "abc"},
    ],
)
def test_a_service_rendering_values_as_text_takes_what_it_publishes(body: dict[str, Any]) -> None:
    client = MockClient(ITSM, auth=("myna", "myna"))
    incidents = "/api/now/table/incident"
    document = client.get("/openapi.json").json()
    published = document["paths"][incidents]["post"]["requestBody"]["content"]
    schema = published["application/json"]["schema"]

    answer = client.post(incidents, json=body)

    assert answer.status < 500
    assert (answer.status == 201) == SchemaCheck(schema, formats=True).is_valid(body)
    if answer.status == 201:
        stored = answer.json()["result"]
        assert (
            stored["short_description"]
            == coerce_scalars(body, frozenset(body))["short_description"]
        )
        assert stored["urgency"] == "2"


ITSM = Mock(builtin_model("itsm"))


# -- cursors ----------------------------------------------------------------------------------


@given(cursor=st.from_regex(CURSOR_PATTERN, fullmatch=True))
@settings(max_examples=50, deadline=None)
def test_every_cursor_the_document_admits_is_taken(cursor: str) -> None:
    answer = CURSOR_CLIENT.get("/v1/users", params={CURSOR: cursor})
    assert answer.status == 200, answer.body


@pytest.mark.parametrize("cursor", ["", "abc", "30 31", "3" + "0" * 38, "zz"])
def test_a_cursor_the_document_refuses_is_refused(cursor: str) -> None:
    assert re.fullmatch(CURSOR_PATTERN, cursor) is None
    answer = CURSOR_CLIENT.get("/v1/users", params={CURSOR: cursor})
    assert answer.status == 400


def test_the_cursor_a_page_hands_out_is_published_and_taken() -> None:
    first = CURSOR_CLIENT.get("/v1/users", params={"page_size": 1}).json()
    document = CURSOR_CLIENT.get("/openapi.json").json()
    [cursor] = [
        p for p in document["paths"]["/v1/users"]["get"]["parameters"] if p["name"] == CURSOR
    ]

    assert cursor["schema"]["pattern"] == CURSOR_PATTERN
    assert re.fullmatch(CURSOR_PATTERN, first["next_cursor"])
    after = CURSOR_CLIENT.get("/v1/users", params={"page_size": 1, CURSOR: first["next_cursor"]})
    assert after.status == 200
    assert after.json()["results"] != first["results"]


def _users_session(number: int) -> Any:
    users = [{"object": "user", "id": f"u-{number}-{n}", "name": f"User {n}"} for n in range(3)]
    page = {"object": "list", "results": users, "next_cursor": None, "has_more": False}
    return session(
        exchange("GET", "https://api.example.org/v1/users?page_size=3", response=page),
        exchange("GET", f"https://api.example.org/v1/users/{users[0]['id']}", response=users[0]),
        name=f"u{number}",
    )


def _cursor_client() -> MockClient:
    [model] = learn([_users_session(number) for number in range(1, 4)])
    return MockClient(recorded_mock(model), headers={})


CURSOR_CLIENT = _cursor_client()
CURSOR = CURSOR_CLIENT.mock.model.conventions.pagination.cursor_param or "cursor"


# -- a request naming a record that does not exist --------------------------------------------

SHOP = "https://shop.example.com/api/v1"
USERS = [{"id": "u_1a2b3c4d", "name": "Ana"}, {"id": "u_5e6f7a8b", "name": "Ben"}]


def _orders_session(number: int) -> Any:
    orders = [{"id": n, "owner": USERS[n % 2]["id"], "note": f"order {n}"} for n in (1, 2)]
    made = {"id": 10 + number, "owner": USERS[0]["id"], "note": "new"}
    return session(
        exchange("GET", f"{SHOP}/users", response=USERS),
        exchange("GET", f"{SHOP}/orders", response=orders),
        exchange("POST", f"{SHOP}/orders", 201, response=made, request={"owner": made["owner"]}),
        name=f"o{number}",
    )


@pytest.fixture
def shop() -> MockClient:
    [model] = learn([_orders_session(number) for number in range(3)])
    reference = model.resources["order"].fields["owner"].reference
    assert reference is not None
    assert reference.resource == "user"
    return MockClient(recorded_mock(model, strict=True), headers={})


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_a_reference_to_no_record_is_the_documented_409(shop: MockClient, method: str) -> None:
    """The body fits the published schema, so the refusal is no 400: the request conflicts
    with what the world holds, and the document says so on every write. Not 404, which
    says the record the path names is gone."""
    path, template = ("/api/v1/orders/1", "/api/v1/orders/{orderId}")
    if method == "POST":
        path = template = "/api/v1/orders"
    operation = shop.get("/openapi.json").json()["paths"][template][method.lower()]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    dangling = {"owner": "u_0f0f0f0f"}
    assert SchemaCheck(schema, formats=True).is_valid(dangling)

    refused = shop.request(method, path, json=dangling)
    unchanged = shop.get("/api/v1/orders/1").json()
    taken = shop.request(method, path, json={"owner": USERS[0]["id"]})

    assert refused.status == 409, refused.body
    assert "owner refers to user u_0f0f0f0f" in refused.body.decode()
    assert "reference to a record" in operation["responses"]["409"]["description"]
    assert unchanged["owner"] == USERS[1]["id"]
    assert taken.status in (200, 201), taken.body
    assert taken.json()["owner"] == USERS[0]["id"]


# -- a path the recordings only showed refused -------------------------------------------------


def _refused_session(number: int) -> Any:
    bad = {"object": "error", "status": 400, "code": "invalid_request_url"}
    return session(
        exchange("GET", f"{NOTES}/invalid", 400, response=bad),
        exchange("POST", f"{NOTES}/search", response={"results": []}, request={"query": "x"}),
        exchange("POST", f"{NOTES}/search", 400, response=bad, request={"query": 5}),
        exchange("GET", f"{NOTES}/settings/lock", 404, response={"message": "Not locked"}),
        exchange("PUT", f"{NOTES}/settings/lock", response={"locked": True}, request={}),
        name=f"r{number}",
    )


def test_a_path_only_ever_refused_is_answered_but_not_published() -> None:
    """No request to it can succeed, so the document does not offer it; the mock still
    answers as recorded. An operation recorded both taken and refused stays published, and
    so does one only refused at a path where another succeeded: the document lists every
    method the path answers (its `Allow`)."""
    [model] = learn([_refused_session(number) for number in range(3)])
    client = MockClient(recorded_mock(model), headers={})

    document = client.get("/openapi.json").json()
    answer = client.get("/v1/invalid")

    assert "/v1/invalid" not in document["paths"]
    assert "post" in document["paths"]["/v1/search"]
    assert set(document["paths"]["/v1/settings/lock"]) == {"get", "put"}
    assert answer.status == 400
    assert answer.json()["code"] == "invalid_request_url"
