"""A nested collection (`/groups/{id}/projects`) lists its parent's records only: the learner
finds the field that ties them, and the mock filters by it and stamps it on a create there."""

from __future__ import annotations

from typing import Any

import pytest

from myna.mocks import MockClient
from myna.schemas import learn
from myna.schemas.model import ServiceModel
from myna.schemas.scopes import scope_field
from tests.mocks.crud_session import recorded_mock
from tests.schemas.traffic import exchange, session

API = "https://code.example.com/api/v4"


def _project(index: int, group: int) -> dict[str, Any]:
    return {"id": index, "name": f"p{index}", "namespace": {"id": group, "kind": "group"}}


@pytest.fixture(scope="module")
def model() -> ServiceModel:
    first = [_project(1, 10), _project(2, 10)]
    second = [_project(3, 20)]
    made = _project(4, 20)
    [learned] = learn(
        [
            session(
                exchange("GET", f"{API}/groups/10/projects", response=first),
                exchange("GET", f"{API}/groups/20/projects", response=second),
                exchange("GET", f"{API}/projects", response=[*first, *second]),
                exchange("POST", f"{API}/groups/20/projects", 201, made, request={"name": "p4"}),
            )
        ]
    )
    return learned


def test_the_field_naming_the_parent_is_learned(model: ServiceModel) -> None:
    scoped = {op.id: op.scope for op in model.operations if op.scope is not None}

    assert set(scoped.values()) == {"namespace.id"}


def test_a_nested_list_shows_its_parents_records_and_a_create_there_joins_it(
    model: ServiceModel,
) -> None:
    client = MockClient(recorded_mock(model))
    nested = next(op for op in model.operations if op.scope and op.kind == "list").path
    group = nested.replace("{groupId}", "{}")

    assert [p["id"] for p in client.get(group.format(10)).json()] == [1, 2]
    made = client.post(group.format(10), json={"name": "p5"})
    assert made.status == 201, made.json()
    assert made.json()["namespace"]["id"] == 10
    assert [p["name"] for p in client.get(group.format(10)).json()] == ["p1", "p2", "p5"]
    assert "p5" not in [p["name"] for p in client.get(group.format(20)).json()]


def test_one_parent_agreeing_by_chance_is_no_scope() -> None:
    numbered_alike = [("1000", [{"id": 7, "user": {"id": 1000}}])]

    assert scope_field(numbered_alike, parent_kind="column", own_id="id") is None
    assert scope_field(numbered_alike, parent_kind="user", own_id="id") == "user.id"
