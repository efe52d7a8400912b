"""Every client mistake is a 4xx in the service's error shape, and writes nothing."""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myna.mocks import Mock, MockClient
from myna.mocks.validation import MAX_BODY_BYTES, MAX_DEPTH
from tests.mocks.conftest import TABLE, USER, build_mock

INCIDENTS = f"{TABLE}/incident"
JSON = {"Content-Type": "application/json"}


def _total(client: MockClient) -> int:
    return int(client.get(INCIDENTS).header("X-Total-Count") or "-1")


def _assert_service_error(response_status: int, body: object) -> None:
    assert 400 <= response_status < 500
    assert isinstance(body, dict)
    assert body["status"] == "failure"
    assert set(body["error"]) == {"message", "detail"}
    assert body["error"]["message"]


def _nested(depth: int) -> bytes:
    return b'{"short_description": "x", "description": ' + b"[" * depth + b"]" * depth + b"}"


BAD_BODIES = [
    pytest.param(b"{not json", 400, id="malformed-json"),
    pytest.param(b"", 400, id="empty-body"),
    pytest.param(b"[1, 2]", 400, id="array-not-object"),
    pytest.param(b'"text"', 400, id="string-not-object"),
    pytest.param(b'{"short_description": ["a"]}', 400, id="wrong-type"),
    pytest.param(b'{"short_description": "x", "colour": "red"}', 400, id="unknown-field"),
    pytest.param(b'{"description": "no short description"}', 400, id="missing-required"),
    pytest.param(b'{"short_description": "' + b"x" * 161 + b'"}', 400, id="too-long"),
    pytest.param(b'{"short_description": "x", "state": "9"}', 400, id="not-in-enum"),
    pytest.param(b'{"short_description": "\\u0000"}', 400, id="nul-character"),
    pytest.param(b'{"short_description": "\\ud800"}', 400, id="lone-surrogate"),
    pytest.param(b'{"short_description": "\xff\xfe"}', 400, id="invalid-utf8"),
    pytest.param(_nested(MAX_DEPTH + 5), 400, id="deep-nesting"),
    pytest.param(_nested(5000), 400, id="very-deep-nesting"),
    pytest.param(
        # Well formed but naming a record the world lacks: the generic runtime's documented
        # 409 (a back end may answer its own status, as ITSM's extension answers 400).
        b'{"short_description": "x", "caller_id": "' + b"f" * 32 + b'"}',
        409,
        id="dangling-reference",
    ),
    pytest.param(
        b'{"short_description": "x", "sla_due": "2024-01-01 00:00:00"}', 400, id="refused-read-only"
    ),
    pytest.param(b'{"short_description": "x", "state": "6"}', 400, id="illegal-initial-state"),
    pytest.param(
        b'{"short_description": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}', 413, id="oversized"
    ),
]


@pytest.mark.parametrize(("body", "status"), BAD_BODIES)
def test_bad_create_bodies_are_refused_and_write_nothing(
    client: MockClient, body: bytes, status: int
) -> None:
    before = _total(client)

    response = client.post(INCIDENTS, content=body, headers=JSON)

    assert response.status == status
    _assert_service_error(response.status, response.json())
    assert _total(client) == before


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"sysparm_limit": "ten"}, 400),
        ({"sysparm_limit": "-1"}, 400),
        ({"sysparm_offset": "1e3"}, 400),
        ({"sysparm_query": "stateDYNAMICabc"}, 400),
        ({"sysparm_query": "ORDERBYcolour"}, 400),
        ({"sysparm_query": "colour=red"}, 400),
    ],
    ids=[
        "limit-word",
        "limit-negative",
        "offset-float",
        "unsupported-operator",
        "sort-unknown",
        "filter-unknown",
    ],
)
def test_bad_list_parameters_are_400(
    client: MockClient, params: dict[str, str], status: int
) -> None:
    response = client.get(INCIDENTS, params=params)

    assert response.status == status
    _assert_service_error(response.status, response.json())


@pytest.mark.parametrize(
    "text",
    ["'; DROP TABLE incident; --", "../../etc/passwd", "%00%2e%2e/", "Ω≈ç√∫ 👩🏽‍💻 \u202e"],
    ids=["sql", "path-traversal", "encoded", "unicode"],
)
def test_hostile_looking_strings_are_stored_verbatim(client: MockClient, text: str) -> None:
    created = client.post(INCIDENTS, json={"short_description": text})
    record_id = created.json()["result"]["sys_id"]

    assert client.get(f"{INCIDENTS}/{record_id}").json()["result"]["short_description"] == text
    assert client.get(INCIDENTS, params={"short_description": text}).header("X-Total-Count") == "1"


@pytest.mark.parametrize(
    "path",
    [f"{INCIDENTS}/..%2f..%2fetc", f"{INCIDENTS}/%00", "/api/now/table/incident'--", "/%ff%fe"],
    ids=["encoded-traversal", "nul", "quote", "bad-percent"],
)
def test_odd_paths_are_404_not_500(client: MockClient, path: str) -> None:
    response = client.get(path)

    assert response.status == 404
    _assert_service_error(response.status, response.json())


def test_unknown_world_is_a_404_in_the_services_shape(client: MockClient) -> None:
    by_prefix = client.get(f"/worlds/nowhere{INCIDENTS}")
    by_header = client.get(INCIDENTS, headers={"X-Myna-World": "nowhere"})

    for response in (by_prefix, by_header):
        assert response.status == 404
        _assert_service_error(response.status, response.json())


def test_a_failed_update_leaves_the_record_unchanged(
    client: MockClient, incident: dict[str, object]
) -> None:
    path = f"{INCIDENTS}/{incident['sys_id']}"

    response = client.patch(path, json={"state": "6", "description": "half-done"})

    assert response.status == 400  # Resolved needs close_code and close_notes
    assert client.get(path).json()["result"] == incident


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.dictionaries(
        st.sampled_from(
            ["short_description", "description", "state", "priority", "active", "caller_id", "x"]
        ),
        json_values,
        max_size=4,
    )
)
def test_any_json_object_is_created_or_refused_never_500(body: dict[str, object]) -> None:
    client = MockClient(_shared_mock(), auth=USER)
    before = _total(client)

    response = client.post(INCIDENTS, content=json.dumps(body).encode(), headers=JSON)

    assert response.status in (201, 400), response.json()
    assert _total(client) == before + (1 if response.status == 201 else 0)


@functools.cache
def _shared_mock() -> Mock:
    return build_mock()


def test_a_header_echoing_text_beyond_latin_1_is_sent_not_a_500() -> None:
    """A learned model's Link header carries the request's path as sent (an id with an emoji)."""
    import asyncio

    from myna.mocks.app import _send
    from myna.mocks.messages import MockResponse

    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    link = '</repos/x/commits/\U000ae2bb/statuses?page=2>;rel="next"'
    asyncio.run(_send(send, MockResponse(200, [("Link", link)], payload=[])))

    assert sent[0]["status"] == 200
    assert (b"link", link.encode("utf-8")) in sent[0]["headers"]  # type: ignore[operator]
