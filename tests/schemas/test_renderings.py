"""Renderings: a query parameter that asks for every field beside its label, learned from the
answers that showed it and rebuilt for records no such answer showed."""

from __future__ import annotations

from typing import Any

import pytest

from myna.schemas import learn
from myna.schemas.model import Rendering, ServiceModel
from myna.schemas.views import render_record
from tests.schemas.traffic import exchange, session

DESK = "https://desk.example.com/api/v3"
STATUS = {"1": "Open", "2": "Waiting", "3": "Solved"}
PEOPLE = {
    "a" * 31 + "1": "Ada Byron",
    "a" * 31 + "2": "Alan Turing",
    "a" * 31 + "3": "Grace Hopper",
}


def _user(user_id: str) -> dict[str, Any]:
    first = PEOPLE[user_id].split()[0]
    return {"id": user_id, "name": PEOPLE[user_id], "email": f"{first.lower()}@example.com"}


def _ticket(number: int, status: str, owner: str, closed: str = "") -> dict[str, Any]:
    return {
        "id": f"{number:032x}",
        "subject": f"Printer {number} jammed on floor {number % 4}",
        "status": status,
        "owner": {"link": f"{DESK}/users/{owner}", "value": owner},
        "opened": f"2026-01-{number:02d} 10:00:00",
        "closed": closed,
    }


def _both(ticket: dict[str, Any]) -> dict[str, Any]:
    """The service's rule the learner must find: each field beside its label; a timestamp
    also with its internal form."""
    shown: dict[str, Any] = {}
    for name, value in ticket.items():
        if isinstance(value, dict):
            label = PEOPLE[value["value"]]
            shown[name] = {"display_value": label, "link": value["link"], "value": value["value"]}
        elif name == "status":
            shown[name] = {"display_value": STATUS[value], "value": value}
        else:
            shown[name] = {"display_value": value, "value": value}
            if name in ("opened", "closed") and value:
                shown[name]["display_value_internal"] = value
    return shown


def _recordings() -> list[Any]:
    owners = list(PEOPLE)
    users = [_user(user_id) for user_id in owners]
    tickets = [
        _ticket(number, status, owners[number % 3], "2026-02-01 09:00:00" if status == "3" else "")
        for number, status in enumerate(["1", "2", "3", "1", "2", "3"], start=1)
    ]
    sessions = [session(exchange("GET", f"{DESK}/users", response=users), name="u")]
    for ticket in tickets:
        sessions.append(
            session(
                exchange("GET", f"{DESK}/tickets/{ticket['id']}", response=ticket),
                exchange(
                    "GET",
                    f"{DESK}/tickets/{ticket['id']}?show=both&page_size=5",
                    response=_both(ticket),
                ),
                exchange("GET", f"{DESK}/tickets?page_size=5", response=tickets),
                name=f"t{ticket['id'][-2:]}",
            )
        )
    return sessions


@pytest.fixture(scope="module")
def model() -> ServiceModel:
    [learned] = learn(_recordings())
    return learned


@pytest.fixture(scope="module")
def rendering(model: ServiceModel) -> Rendering:
    (found,) = model.conventions.renderings
    return found


def test_the_parameter_that_asks_for_it_is_learned_and_no_other(rendering: Rendering) -> None:
    assert rendering.params == {"show": "both"}


def test_labels_are_learned_from_answers_that_showed_both(model: ServiceModel) -> None:
    assert model.resources["ticket"].fields["status"].labels == STATUS


def test_a_referenced_record_s_display_field_needs_no_table(model: ServiceModel) -> None:
    """Every owner's label is the user's name: the mock can read it from the user, the
    resource at the collection the links name (`/users/{id}`), whatever its own name."""
    owner = model.resources["ticket"].fields["owner"]
    assert owner.reference is not None
    assert owner.reference.resource == "user"
    assert owner.labels == {}


def test_the_rendering_rebuilds_a_record_no_answer_showed_that_way(rendering: Rendering) -> None:
    owner = "a" * 31 + "3"
    ticket = _ticket(27, "3", owner, closed="2026-03-04 05:06:07")
    names = {**STATUS, **PEOPLE}

    def label(name: str, value: Any) -> Any:
        return names.get(value, value) if name in ("status", "owner") else value

    assert render_record(rendering, ticket, label) == _both(ticket)


def test_an_empty_timestamp_renders_as_every_empty_value(rendering: Rendering) -> None:
    ticket = _ticket(9, "1", "a" * 31 + "1")

    shown = render_record(rendering, ticket, lambda name, value: STATUS.get(value, value))

    assert shown["closed"] == {"display_value": "", "value": ""}
    assert shown["opened"]["display_value_internal"] == ticket["opened"]
