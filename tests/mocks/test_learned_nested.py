"""What lives below a record: rows about it that are no records of their own, and the record
a path without parameters stands for."""

from __future__ import annotations

from myna.schemas import learn
from tests.mocks.crud_session import seeded_client
from tests.schemas.traffic import exchange, session

ASSETS = "http://127.0.0.1:8080/api/v1"
APPS = ("0oa2vpmqxp82pl9sk4x7", "0oas5to408GEd54s04x6", "0oa1cagurdhtxqBdf4x7")


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


def test_a_list_below_a_record_holding_another_kind_than_its_namesake_is_replayed() -> None:
    # Okta's `/apps/{id}/users` are assignments: the user's id, but a `scope` and a
    # `syncState` no user has, and none of a user's `lastLogin`.
    def user(number: int) -> dict[str, object]:
        return {"id": f"00u{number}", "status": "ACTIVE", "lastLogin": None, "profile": {}}

    def assignment(app: str, number: int) -> dict[str, object]:
        links = {"app": {"href": f"{ASSETS}/apps/{app}"}, "user": {"href": f"/users/00u{number}"}}
        return {"id": f"00u{number}", "scope": "USER", "syncState": "DISABLED", "_links": links}

    traffic = session(
        exchange("GET", f"{ASSETS}/users", response=[user(1), user(2)]),
        exchange("GET", f"{ASSETS}/apps", response=[{"id": app, "label": app} for app in APPS]),
        *(
            exchange("GET", f"{ASSETS}/apps/{app}/users", response=[assignment(app, 1)])
            for app in APPS
        ),
    )
    (model,) = learn([traffic])
    [assigned] = [op for op in model.operations if op.path.endswith("/users") and "apps" in op.path]

    assert assigned.resource is None
    client = seeded_client(model)
    assert client.get(f"/api/v1/apps/{APPS[1]}/users").json() == [assignment(APPS[1], 1)]
    assert [user["id"] for user in client.get("/api/v1/users").json()] == ["00u1", "00u2"]


def test_a_list_wrapped_otherwise_than_its_resources_lists_keeps_its_own_wrapper() -> None:
    # GitHub's search answers `{total_count, incomplete_results, items}`; its lists are bare.
    issues = [{"id": 1, "number": 1, "title": "sesame"}, {"id": 2, "number": 2, "title": "x"}]
    found = {"total_count": 1, "incomplete_results": False, "items": issues[:1]}
    traffic = session(
        exchange("GET", f"{ASSETS}/repos/o/r/issues", response=issues),
        exchange("GET", f"{ASSETS}/repos/o/r/issues/2", response=issues[1]),
        exchange("GET", f"{ASSETS}/search/issues?q=sesame", response=found),
    )
    (model,) = learn([traffic])
    [search] = [op for op in model.operations if op.path.endswith("/search/issues")]

    assert search.envelope is not None
    assert search.envelope.list_key == "items"
    client = seeded_client(model)
    answer = client.get("/api/v1/search/issues").json()
    assert (answer["total_count"], answer["incomplete_results"]) == (2, False)
    assert sorted(issue["id"] for issue in answer["items"]) == [1, 2]
    assert isinstance(client.get("/api/v1/repos/o/r/issues").json(), list)
