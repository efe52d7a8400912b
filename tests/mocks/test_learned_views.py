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


def _exports() -> list[Any]:
    sessions = []
    for number, title in enumerate(["Quarterly plan", "Budget review"], start=1):
        doc = {"object": "doc", **_doc(number, title)}
        export = {"object": "doc_export", "id": doc["id"], "format": "markdown", "text": "# x"}
        sessions.append(
            session(
                exchange("POST", f"{WIKI}/docs", response=doc, request={"title": doc["title"]}),
                exchange("GET", f"{WIKI}/docs/{doc['id']}/export", response=export),
                name=f"e{number}",
            )
        )
    return sessions


def test_an_operation_answering_another_shape_of_its_record_keeps_that_shape() -> None:
    [model] = learn(_exports())
    [export] = [op for op in model.operations if op.path.endswith("/export")]
    assert export.view is not None

    client = MockClient(recorded_mock(model))
    doc = client.post("/api/docs", json={"title": [{"text": "Road"}, {"text": "map"}]}).json()
    shown = client.get(f"/api/docs/{doc['id']}/export")

    assert shown.status == 200, shown.json()
    assert shown.json()["object"] == "doc_export"
    assert shown.json()["id"] == doc["id"]
    assert shown.json()["format"] == "markdown"


def test_a_path_that_always_answered_one_record_serves_that_record() -> None:
    users = [
        {"object": "user", "id": f"a0e0000{n}-aaaa-4bbb-8ccc-000000000000", "name": f"User {n}"}
        for n in (1, 2)
    ]
    me = users[1]
    [model] = learn(
        [
            session(
                exchange("GET", f"{WIKI}/users", response={"results": users}),
                *[exchange("GET", f"{WIKI}/users/me", response=me) for _ in range(4)],
                exchange("GET", f"{WIKI}/users/{users[0]['id']}", response=users[0]),
                exchange("GET", f"{WIKI}/users/{users[1]['id']}", response=users[1]),
                exchange(
                    "PATCH",
                    f"{WIKI}/users/{users[0]['id']}",
                    response={**users[0], "name": "Renamed"},
                    request={"name": "Renamed"},
                ),
            )
        ]
    )
    [alias] = [op for op in model.operations if op.path.endswith("/me")]
    assert (alias.resource, alias.target) == ("user", me["id"])

    client = MockClient(recorded_mock(model))
    assert client.patch(f"/api/users/{me['id']}", json={"name": "Me, renamed"}).status == 200

    assert client.get("/api/users/me").json()["name"] == "Me, renamed"
