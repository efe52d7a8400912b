"""What lives below a record: rows about it that are no records of their own, and the record
a path without parameters stands for."""

from __future__ import annotations

from myna.schemas import learn
from tests.mocks.crud_session import seeded_client
from tests.schemas.traffic import exchange, session

ASSETS = "http://127.0.0.1:8080/api/v1"


def _user(number: int) -> dict[str, object]:
    return {"id": number, "name": f"User {number}", "username": f"user{number}"}


def test_rows_without_ids_under_a_record_are_replayed_not_taken_for_its_namesakes() -> None:
    # Who took a consumable, and when: rows named `users` that are no user records.
    taken = {
        "total": 1,
        "rows": [{"name": "<a href='/users/1'>User 1</a>", "created_at": "2023-09-06 12:39"}],
    }
    traffic = session(
        exchange("GET", f"{ASSETS}/users", response={"total": 2, "rows": [_user(1), _user(2)]}),
        exchange("GET", f"{ASSETS}/consumables/view/1/users", response=taken),
    )
    (model,) = learn([traffic])
    rows = next(op for op in model.operations if op.path.startswith("/api/v1/consumables/view"))

    assert (rows.resource, [answer.body for answer in rows.recorded]) == (None, [taken])
    client = seeded_client(model)
    assert client.get("/api/v1/consumables/view/1/users").json() == taken
    assert len(client.get("/api/v1/users").json()["rows"]) == 2


def test_a_path_without_parameters_named_after_a_resource_answers_its_one_record() -> None:
    # GitLab's `/user`: whoever signed in, a user the lists never showed.
    me = _user(5887285)
    traffic = session(
        exchange("GET", f"{ASSETS}/users", response=[_user(1), _user(2)]),
        exchange("GET", f"{ASSETS}/users/2", response=_user(2)),
        exchange("GET", f"{ASSETS}/user", response=me),
    )
    (model,) = learn([traffic])
    [current] = [op for op in model.operations if op.path == "/api/v1/user"]

    assert (current.resource, current.target) == ("user", "5887285")
    assert seeded_client(model).get("/api/v1/user").json() == me
