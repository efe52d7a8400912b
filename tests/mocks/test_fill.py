"""A learned mock's creates look like the service's: what the client leaves out is filled in as
the recordings show it, what only writes send is accepted, and observed ranges are no rules."""

from __future__ import annotations

from typing import Any

import pytest

from myna.mocks import Mock, MockClient
from myna.mocks.fill import completed, plain_value
from myna.schemas import learn
from tests.schemas.traffic import exchange, session

NOTES = "https://notes.example.com/api/notes"


def _note(index: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": index,
        "title": f"Note {index}",
        "priority": 1 + index % 2,
        "style": {"bold": False, "color": "red"},
        "archived": False,
        **extra,
    }


@pytest.fixture(scope="module")
def client() -> MockClient:
    listed = [_note(index) for index in range(1, 6)]
    created = _note(6, title="Fresh")
    traffic = session(
        exchange("GET", NOTES, response={"notes": listed}),
        exchange("GET", f"{NOTES}/1", response={"note": listed[0]}),
        exchange(
            "POST",
            NOTES,
            201,
            {"note": created},
            request={
                "note": {
                    "title": "Fresh",
                    "priority": 1,
                    "style": {"color": "red"},
                    "blocks": [{"text": "hello"}],
                }
            },
        ),
        exchange("GET", f"{NOTES}/6", response={"note": created}),
    )
    (model,) = learn([traffic])
    return MockClient(Mock(model))


def test_a_create_answers_the_fields_the_service_fills_in(client: MockClient) -> None:
    made = client.post("/api/notes", json={"note": {"title": "Plain"}})

    assert made.status == 201, made.json()
    note = made.json()["note"]
    assert note["style"] == {"bold": False, "color": "red"}
    assert note["archived"] is False


def test_a_minted_id_has_the_recorded_type(client: MockClient) -> None:
    note = client.post("/api/notes", json={"note": {"title": "Typed"}}).json()["note"]

    assert isinstance(note["id"], int)
    assert client.get(f"/api/notes/{note['id']}").json()["note"]["title"] == "Typed"


def test_nested_keys_the_answers_always_carry_are_completed(client: MockClient) -> None:
    note = client.post(
        "/api/notes", json={"note": {"title": "Blue", "style": {"color": "blue"}}}
    ).json()["note"]

    assert note["style"] == {"bold": False, "color": "blue"}


def test_a_field_only_writes_send_is_accepted_and_not_stored(client: MockClient) -> None:
    made = client.post(
        "/api/notes", json={"note": {"title": "With blocks", "blocks": [{"text": "x"}]}}
    )

    assert made.status == 201, made.json()
    assert "blocks" not in made.json()["note"]


def test_an_observed_range_is_not_enforced(client: MockClient) -> None:
    made = client.post("/api/notes", json={"note": {"title": "Urgent", "priority": 4}})

    assert made.status == 201, made.json()
    assert made.json()["note"]["priority"] == 4


def test_a_list_sent_where_answers_wrap_it_goes_into_the_wrapping_object() -> None:
    rich_text = {"type": "array", "items": {"type": "object"}}
    title = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "type": {"enum": ["title"]}, "title": rich_text},
        "required": ["id", "title", "type"],
    }

    value = completed([{"text": "Hi"}], title, "title")

    assert value == {"id": "", "type": "title", "title": [{"text": "Hi"}]}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "boolean"}, False),
        ({"type": "integer", "x-myna-observed": {"minimum": 3, "maximum": 9}}, 3),
        ({"type": ["array", "null"]}, []),
        ({"type": "string"}, ""),
        ({"type": "null"}, None),
        ({"anyOf": [{"type": "null"}, {"type": "object", "properties": {}}]}, {}),
    ],
)
def test_plain_values(schema: dict[str, Any], expected: Any) -> None:
    assert plain_value(schema) == expected


def test_a_nested_id_answered_as_text_may_be_sent_as_a_number() -> None:
    issues = [
        {"id": str(10 + index), "fields": {"project": {"id": "10000"}, "summary": f"s{index}"}}
        for index in range(4)
    ]
    traffic = session(
        exchange("GET", "https://jira.example.com/rest/api/3/issue", response=issues),
        *(
            exchange(
                "POST",
                "https://jira.example.com/rest/api/3/issue",
                201,
                issue,
                request={"fields": {"project": {"id": "10000"}, "summary": issue["id"]}},
            )
            for issue in issues
        ),
    )
    (model,) = learn([traffic])
    client = MockClient(Mock(model))

    made = client.post(
        "/rest/api/3/issue", json={"fields": {"project": {"id": 10000}, "summary": "numeric"}}
    )

    assert made.status == 201, made.json()
