"""Records named by a key instead of their id: an issue at /issue/JJJ-9, a merge request by
its per-project number."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from myna.schemas import learn
from myna.schemas.render import resources_table
from tests.mocks.crud_session import seeded_client
from tests.schemas.traffic import exchange, session

API = "https://tracker.example.com/api"


def issue(number: int, **extra: Any) -> dict[str, Any]:
    return {"id": str(10000 + number), "key": f"JJJ-{number}", "summary": f"Bug {number}", **extra}


def test_a_record_read_by_its_key_is_read_and_written_by_its_key_too() -> None:
    traffic = session(
        exchange("GET", f"{API}/issues", response=[issue(1), issue(2), issue(3)]),
        exchange("GET", f"{API}/issues/JJJ-2", response=issue(2)),
        exchange("GET", f"{API}/issues/10003", response=issue(3)),
    )
    (model,) = learn([traffic])
    assert model.resources["issue"].keys == ["key"]
    console = Console(width=300, record=True)
    console.print(resources_table(model))
    assert "or by key" in console.export_text()
    client = seeded_client(model)

    assert client.get("/api/issues/JJJ-1").json()["id"] == "10001"
    assert client.get("/api/issues/10001").json()["key"] == "JJJ-1"
    assert client.patch("/api/issues/JJJ-3", json={"summary": "fixed"}).status == 200
    assert client.get("/api/issues/10003").json()["summary"] == "fixed"
    assert client.get("/api/issues/JJJ-99").status == 404
    # A key is looked up as written, not as a pattern.
    assert client.get("/api/issues/JJJ-%25").status == 404


def test_a_key_that_counts_per_parent_finds_the_parents_record() -> None:
    def merge_request(project: int, iid: int) -> dict[str, Any]:
        return {"id": project * 100 + iid, "iid": iid, "project_id": project, "title": f"mr {iid}"}

    traffic = session(
        *(
            exchange(
                "GET",
                f"{API}/projects/{project}/merge_requests",
                response=[merge_request(project, 1), merge_request(project, 2)],
            )
            for project in (7, 8)
        ),
        exchange("GET", f"{API}/projects/8/merge_requests/2", response=merge_request(8, 2)),
    )
    (model,) = learn([traffic])
    [resource] = [r for r in model.resources.values() if "iid" in r.fields]
    assert resource.keys == ["iid"]
    client = seeded_client(model)

    assert client.get("/api/projects/7/merge_requests/1").json()["id"] == 701
    assert client.get("/api/projects/8/merge_requests/1").json()["id"] == 801


def test_the_parent_is_told_by_the_field_named_after_it_not_any_field_holding_its_id() -> None:
    # A merge request from a fork names the other project too (`source_project_id`): project
    # 8's number 1 is the one whose `project_id` is 8.
    def merge_request(project: int, iid: int, source: int) -> dict[str, Any]:
        return {
            "id": project * 100 + iid,
            "iid": iid,
            "project_id": project,
            "source_project_id": source,
            "title": f"mr {iid}",
        }

    traffic = session(
        exchange("GET", f"{API}/projects/7/merge_requests", response=[merge_request(7, 1, 8)]),
        exchange("GET", f"{API}/projects/8/merge_requests", response=[merge_request(8, 1, 8)]),
        exchange("GET", f"{API}/projects/8/merge_requests/1", response=merge_request(8, 1, 8)),
    )
    (model,) = learn([traffic])
    client = seeded_client(model)

    assert client.get("/api/projects/8/merge_requests/1").json()["id"] == 801
    assert client.get("/api/projects/7/merge_requests/1").json()["id"] == 701


def test_a_path_value_of_digits_python_cannot_count_is_no_record_and_no_error() -> None:
    # `'¹'.isdigit()` holds and `int('¹')` fails: found by schemathesis on the learned GitLab.
    traffic = session(
        exchange("GET", f"{API}/issues", response=[issue(1), issue(2), issue(3)]),
        exchange("GET", f"{API}/issues/JJJ-2", response=issue(2)),
    )
    (model,) = learn([traffic])
    client = seeded_client(model)

    for value in ("%C2%B9", "%D9%A3"):  # ¹, Arabic-Indic three
        assert client.get(f"/api/issues/{value}").status == 404
        assert client.patch(f"/api/issues/{value}", json={"summary": "x"}).status == 404
