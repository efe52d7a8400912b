"""Completion by convention: a read-only recording still yields a model with the REST family,
each completed operation marked as inferred, and recorded facts always win."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rich.console import Console

from myna.schemas import learn
from myna.schemas.learn import Options
from myna.schemas.model import ServiceModel
from myna.schemas.render import operations_table
from tests.schemas.traffic import exchange, servicenow_lifecycle, session

DESK = "https://desk.example.com/api/v2"


def _ticket(index: int) -> dict[str, Any]:
    return {"id": index, "subject": f"Printer {index}", "status": "open", "group_id": 7}


def read_only() -> list[Any]:
    tickets = [_ticket(index) for index in range(1, 4)]
    return [
        session(
            exchange("GET", f"{DESK}/tickets.json", response={"tickets": tickets}),
            exchange("GET", f"{DESK}/groups", response={"groups": [{"id": 7, "name": "IT"}]}),
            exchange("GET", f"{DESK}/groups/7", response={"group": {"id": 7, "name": "IT"}}),
            exchange(
                "PUT",
                f"{DESK}/groups/7",
                response={"group": {"id": 7, "name": "Help"}},
                request={"group": {"name": "Help"}},
            ),
        )
    ]


@pytest.fixture(scope="module")
def desk() -> ServiceModel:
    [model] = learn(read_only())
    return model


def test_a_listed_resource_gets_the_rest_family(desk: ServiceModel) -> None:
    inferred = {
        (op.method, op.kind) for op in desk.operations if op.resource == "ticket" and op.inferred
    }

    assert inferred == {
        ("POST", "create"),
        ("GET", "get"),
        ("PUT", "update"),
        ("DELETE", "delete"),
    }


def test_completed_calls_follow_the_services_own_habits(desk: ServiceModel) -> None:
    update = next(op for op in desk.operations if op.resource == "ticket" and op.kind == "update")

    assert update.inferred is not None
    assert "other resources" in update.inferred.convention
    assert update.inferred.confidence > next(
        op.inferred.confidence
        for op in desk.operations
        if op.resource == "ticket" and op.kind == "delete" and op.inferred is not None
    )


def test_recorded_operations_are_never_marked_inferred(desk: ServiceModel) -> None:
    recorded = {op.id for op in desk.operations if op.inferred is None}

    assert {"list_ticket", "get_group", "replace_group"} <= recorded


def test_no_complete_learns_only_what_was_recorded() -> None:
    [model] = learn(read_only(), options=Options(complete=False))

    assert all(op.inferred is None for op in model.operations)
    assert not any(op.kind == "delete" for op in model.operations)


def test_relearning_never_lets_a_convention_replace_a_recorded_operation() -> None:
    [recorded] = learn(servicenow_lifecycle())
    reads = [
        session(*[event for event in s.exchanges if event.method == "GET"])
        for s in servicenow_lifecycle()
    ]

    [updated] = learn(reads, update=recorded)

    assert updated.operation("create_incident") == recorded.operation("create_incident")
    assert updated.operation("create_incident").inferred is None


def test_a_collection_named_as_a_file_names_its_records_the_same_way(desk: ServiceModel) -> None:
    get = next(op for op in desk.operations if op.resource == "ticket" and op.kind == "get")

    assert get.path == "/api/v2/tickets/{id}.json"


def test_model_show_says_how_each_operation_is_served(desk: ServiceModel) -> None:
    console = Console(width=400, record=True)
    console.print(operations_table(desk))
    lines = console.export_text().splitlines()
    rows = {line.split("│")[1].strip(): line for line in lines if line.startswith("│")}

    assert "inferred 80%" in rows["update_ticket"]
    assert "inferred 50%" in rows["delete_ticket"]
    assert "simulated" in rows["list_ticket"]


def test_a_completed_item_path_never_repeats_a_parents_parameter() -> None:
    nested = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    [model] = learn(
        [
            session(
                exchange("GET", f"{DESK}/items/42/items", response=nested),
                exchange("GET", f"{DESK}/items/43/items", response=nested),
            )
        ]
    )

    for operation in model.operations:
        names = re.findall(r"\{([^}]+)\}", operation.path)
        assert len(names) == len(set(names)), operation.path
