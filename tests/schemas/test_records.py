"""Which recorded records a learned resource keeps to start a world with."""

from __future__ import annotations

from myna.schemas import learn
from tests.schemas.traffic import exchange, session

NOTION = "https://api.notion.example/v1"


def _page(index: int) -> dict[str, object]:
    return {"object": "page", "id": f"00000000-0000-0000-0000-00000000000{index}", "title": "t"}


def test_an_answer_of_another_kind_on_a_resources_paths_is_not_kept_as_its_record() -> None:
    task = {"object": "async_task", "id": "00000000-0000-0000-0000-000000000009", "status": "s"}
    [model] = learn(
        [
            session(
                exchange("GET", f"{NOTION}/pages/{_page(1)['id']}", response=_page(1)),
                exchange("GET", f"{NOTION}/pages/{_page(2)['id']}", response=_page(2)),
                exchange("GET", f"{NOTION}/pages/{task['id']}", response=task),
            )
        ]
    )

    kept = model.resources["page"].records

    assert [record["object"] for record in kept] == ["page", "page"]
