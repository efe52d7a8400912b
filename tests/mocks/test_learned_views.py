"""A record addressed at another resource's path answers in that resource's shape, as the
recordings showed (Notion answers a page deleted at /blocks/{id} as a `child_page` block), for
records the recordings never showed too."""

from __future__ import annotations

from typing import Any

import pytest

from myna.mocks import MockClient
from myna.schemas import learn
from tests.mocks.crud_session import recorded_mock
from tests.schemas.traffic import exchange, session

WIKI = "https://wiki.example.com/api"


def _doc(number: int, title: str) -> dict[str, Any]:
    return {
        "kind": "doc",
        "id": f"d0c{number:05d}-aaaa-4bbb-8ccc-000000000000",
        "title": [{"text": title[:4]}, {"text": title[4:]}],
        "owner": {"kind": "user", "id": "u-1"},
        "removed": False,
    }


def _node_of(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "node",
        "id": doc["id"],
        "owner": doc["owner"],
        "node_type": "doc_link",
        "doc_link": {"title": "".join(run["text"] for run in doc["title"])},
        "removed": True,
    }


def _recordings() -> list[Any]:
    paragraph = {
        "kind": "node",
        "id": "a0de0001-aaaa-4bbb-8ccc-000000000000",
        "owner": {"kind": "user", "id": "u-1"},
        "node_type": "paragraph",
        "paragraph": {"text": "hello"},
        "removed": False,
    }
    sessions = [session(exchange("GET", f"{WIKI}/nodes/{paragraph['id']}", response=paragraph))]
    for number, title in enumerate(["Quarterly plan", "Budget review", "Hiring loop"], start=1):
        doc = _doc(number, title)
        sent = {"title": doc["title"]}
        sessions.append(
            session(
                exchange("POST", f"{WIKI}/docs", response=doc, request=sent),
                exchange("GET", f"{WIKI}/docs/{doc['id']}", response=doc),
                exchange("DELETE", f"{WIKI}/nodes/{doc['id']}", response=_node_of(doc)),
                name=f"s{number}",
            )
        )
    return sessions


@pytest.fixture
def client() -> MockClient:
    [model] = learn(_recordings())
    return MockClient(recorded_mock(model))


def test_a_new_record_deleted_at_the_other_path_answers_as_its_view(client: MockClient) -> None:
    made = client.post("/api/docs", json={"title": [{"text": "Road"}, {"text": "map 2027"}]})
    assert made.status in (200, 201), made.json()
    doc = made.json()

    deleted = client.delete(f"/api/nodes/{doc['id']}")

    assert deleted.status == 200, deleted.json()
    assert deleted.json() == {
        "kind": "node",
        "id": doc["id"],
        "owner": doc["owner"],
        "node_type": "doc_link",
        "doc_link": {"title": "Roadmap 2027"},
        "removed": True,
    }


def test_the_resource_own_records_keep_their_own_shape(client: MockClient) -> None:
    own = client.get("/api/nodes/a0de0001-aaaa-4bbb-8ccc-000000000000")

    assert own.status == 200
    assert own.json()["node_type"] == "paragraph"
    assert own.json()["paragraph"] == {"text": "hello"}


def test_an_unknown_id_at_the_other_path_is_not_found(client: MockClient) -> None:
    missing = client.delete("/api/nodes/d0c99999-aaaa-4bbb-8ccc-000000000000")

    assert missing.status == 404
