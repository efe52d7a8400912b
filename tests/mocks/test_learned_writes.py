"""Writes the recordings showed a service making in its own way, served for new records too: a
write that appends several records under a parent at once, and a delete that only marks its
record (the record stays readable and can be brought back)."""

from __future__ import annotations

from typing import Any

import pytest

from myna.mocks import MockClient
from myna.schemas import learn
from myna.schemas.model import Effect, ServiceModel
from tests.mocks.crud_session import recorded_mock
from tests.schemas.traffic import exchange, session

TASKS = "https://tasks.example.com/v2"


def _list(number: int) -> dict[str, Any]:
    return {"id": f"L-{number:04d}", "name": f"Groceries {number}", "trashed": False}


def _item(number: int, list_id: str, text: str, trashed: bool = False) -> dict[str, Any]:
    return {"id": f"I-{number:04d}", "list_id": list_id, "text": text, "trashed": trashed}


def _session(number: int, *, soft: bool) -> Any:
    parent = _list(number)
    first, second = (
        _item(number * 10, parent["id"], "milk"),
        _item(number * 10 + 1, parent["id"], "eggs"),
    )
    gone = {**parent, "trashed": True}
    after = (
        exchange("GET", f"{TASKS}/lists/{parent['id']}", response=gone)
        if soft
        else exchange("GET", f"{TASKS}/lists/{parent['id']}", 404, response={"error": "not found"})
    )
    restored = (
        [
            exchange(
                "PATCH",
                f"{TASKS}/lists/{parent['id']}",
                response=parent,
                request={"trashed": False},
            )
        ]
        if soft
        else []
    )
    return session(
        exchange("POST", f"{TASKS}/lists", 201, response=parent, request={"name": parent["name"]}),
        exchange(
            "PATCH",
            f"{TASKS}/lists/{parent['id']}/items",
            response={"items": [first, second], "count": 2},
            request={"items": [{"text": "milk"}, {"text": "eggs"}]},
        ),
        exchange(
            "GET",
            f"{TASKS}/lists/{parent['id']}/items",
            response={"items": [first, second], "count": 2},
        ),
        exchange("DELETE", f"{TASKS}/lists/{parent['id']}", response=gone),
        after,
        *restored,
        name=f"s{number}",
    )


def _model(*, soft: bool) -> ServiceModel:
    [model] = learn([_session(number, soft=soft) for number in (1, 2, 3)])
    return model


@pytest.fixture(scope="module")
def soft_model() -> ServiceModel:
    return _model(soft=True)


def test_a_write_of_several_records_is_learned_as_a_create_under_the_parent(
    soft_model: ServiceModel,
) -> None:
    [append] = [
        op for op in soft_model.operations if op.path.endswith("/items") and op.method == "PATCH"
    ]

    assert (append.kind, append.batch, append.scope) == ("create", "items", "list_id")


def test_appending_makes_each_record_under_the_parent(soft_model: ServiceModel) -> None:
    client = MockClient(recorded_mock(soft_model))
    made = client.post("/v2/lists", json={"name": "Hardware"}).json()

    appended = client.patch(
        f"/v2/lists/{made['id']}/items", json={"items": [{"text": "nails"}, {"text": "glue"}]}
    )

    assert appended.status == 200, appended.json()
    results = appended.json()["items"]
    assert [item["text"] for item in results] == ["nails", "glue"]
    assert {item["list_id"] for item in results} == {made["id"]}
    assert len({item["id"] for item in results}) == 2
    listed = client.get(f"/v2/lists/{made['id']}/items").json()["items"]
    assert sorted(item["text"] for item in listed) == ["glue", "nails"]


def test_an_append_that_sends_no_list_is_refused(soft_model: ServiceModel) -> None:
    client = MockClient(recorded_mock(soft_model))
    made = client.post("/v2/lists", json={"name": "Hardware"}).json()

    refused = client.patch(f"/v2/lists/{made['id']}/items", json={"items": "nails"})

    assert 400 <= refused.status < 500
    assert client.get(f"/v2/lists/{made['id']}/items").json()["items"] == []


def test_a_delete_that_leaves_the_record_readable_only_marks_it(soft_model: ServiceModel) -> None:
    [delete] = [op for op in soft_model.operations if op.method == "DELETE" and not op.inferred]
    assert delete.effects == [Effect(field="trashed", value=True)]

    client = MockClient(recorded_mock(soft_model))
    made = client.post("/v2/lists", json={"name": "Hardware"}).json()

    deleted = client.delete(f"/v2/lists/{made['id']}")

    assert deleted.status == 200
    assert deleted.json()["trashed"] is True
    assert client.get(f"/v2/lists/{made['id']}").json()["trashed"] is True
    restored = client.patch(f"/v2/lists/{made['id']}", json={"trashed": False})
    assert restored.status == 200, restored.json()
    assert client.get(f"/v2/lists/{made['id']}").json()["trashed"] is False


def test_a_delete_after_which_the_record_is_gone_removes_it() -> None:
    model = _model(soft=False)
    [delete] = [op for op in model.operations if op.method == "DELETE" and not op.inferred]
    assert delete.effects == []

    client = MockClient(recorded_mock(model))
    made = client.post("/v2/lists", json={"name": "Hardware"}).json()

    assert client.delete(f"/v2/lists/{made['id']}").status == 200
    assert client.get(f"/v2/lists/{made['id']}").status == 404


def _moves_and_notes() -> list[Any]:
    sessions = []
    for number in (1, 2, 3):
        parent = {**_list(number), "folder": {"type": "folder", "id": "F-1"}}
        moved = {**parent, "folder": {"type": "folder", "id": f"F-{number + 1}"}}
        note = {"id": f"N-{number:04d}", "list_id": parent["id"], "body": f"note {number}"}
        sessions.append(
            session(
                exchange("POST", f"{TASKS}/lists", 201, response=parent, request={"name": "x"}),
                exchange(
                    "POST",
                    f"{TASKS}/lists/{parent['id']}/move",
                    response=moved,
                    request={"folder": {"id": f"F-{number + 1}"}},
                ),
                exchange(
                    "POST",
                    f"{TASKS}/lists/{parent['id']}/notes",
                    response=note,
                    request={"body": note["body"]},
                ),
                exchange("GET", f"{TASKS}/lists/{parent['id']}/notes/{note['id']}", response=note),
                name=f"m{number}",
            )
        )
    return sessions


@pytest.fixture(scope="module")
def moving_model() -> ServiceModel:
    [model] = learn(_moves_and_notes())
    return model


def test_an_action_stores_what_it_was_sent_as_its_answers_showed(
    moving_model: ServiceModel,
) -> None:
    client = MockClient(recorded_mock(moving_model))
    made = client.post("/v2/lists", json={"name": "Hardware"}).json()

    moved = client.post(f"/v2/lists/{made['id']}/move", json={"folder": {"id": "F-9"}})

    assert moved.status == 200, moved.json()
    assert moved.json()["folder"]["id"] == "F-9"
    assert "type" in moved.json()["folder"]
    assert client.get(f"/v2/lists/{made['id']}").json()["folder"]["id"] == "F-9"


def test_a_post_below_a_record_answered_200_with_a_new_record_is_a_create(
    moving_model: ServiceModel,
) -> None:
    [notes] = [op for op in moving_model.operations if op.path.endswith("/notes")]
    assert (notes.kind, notes.resource, notes.scope) == ("create", "note", "list_id")

    client = MockClient(recorded_mock(moving_model))
    made = client.post("/v2/lists", json={"name": "Hardware"}).json()
    note = client.post(f"/v2/lists/{made['id']}/notes", json={"body": "buy glue"}).json()

    assert note["list_id"] == made["id"]
    fetched = client.get(f"/v2/lists/{made['id']}/notes/{note['id']}")
    assert fetched.json()["body"] == "buy glue"


def _put_sessions(*, partial: bool) -> list[Any]:
    """Lists made, then PUT with a new name only: the service kept or cleared the colour."""
    sessions = []
    for number in range(1, 4):
        made = {"id": f"L-{number:04d}", "name": f"Chores {number}", "colour": "green"}
        put = {**made, "name": f"Errands {number}"} | ({} if partial else {"colour": None})
        url = f"{TASKS}/lists/{made['id']}"
        sent = {"name": made["name"], "colour": "green"}
        sessions.append(
            session(
                exchange("POST", f"{TASKS}/lists", 201, response=made, request=sent),
                exchange("PUT", url, response=put, request={"name": put["name"]}),
                name=f"p{number}",
            )
        )
    return sessions


@pytest.mark.parametrize("partial", [True, False], ids=["keeps", "clears"])
def test_a_put_keeps_what_it_leaves_out_as_the_service_s_puts_did(partial: bool) -> None:
    [model] = learn(_put_sessions(partial=partial))
    assert model.conventions.partial_put is partial
    client = MockClient(recorded_mock(model))
    made = client.post("/v2/lists", json={"name": "Garden", "colour": "blue"}).json()

    put = client.put(f"/v2/lists/{made['id']}", json={"name": "Yard"})

    assert put.status == 200, put.json()
    assert put.json()["name"] == "Yard"
    assert put.json().get("colour") == ("blue" if partial else None)
