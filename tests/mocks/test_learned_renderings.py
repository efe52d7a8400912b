"""A learned mock answers in the rendering a query parameter asks for, as the recordings
showed it, on lists, gets and writes, for records no recording showed that way."""

from __future__ import annotations

import pytest

from myna.mocks import MockClient
from myna.schemas import learn
from tests.mocks.crud_session import recorded_mock
from tests.schemas.test_renderings import PEOPLE, _recordings

GRACE = "a" * 31 + "3"


@pytest.fixture(scope="module")
def client() -> MockClient:
    [model] = learn(_recordings())
    return MockClient(recorded_mock(model))


def test_a_create_answers_each_field_beside_its_label(client: MockClient) -> None:
    made = client.post(
        "/api/v3/tickets",
        params={"show": "both"},
        json={"subject": "Badge reader offline", "status": "2", "owner": GRACE},
    )

    assert made.status in (200, 201), made.json()
    shown = made.json()
    subject = "Badge reader offline"
    assert shown["subject"] == {"display_value": subject, "value": subject}
    assert shown["status"] == {"display_value": "Waiting", "value": "2"}
    # No recording showed this owner's label: the user's display field gives it.
    assert shown["owner"]["display_value"] == PEOPLE[GRACE]
    assert shown["owner"]["value"] == GRACE
    assert shown["owner"]["link"].endswith(f"/{GRACE}")


def test_without_the_parameter_the_answer_is_plain(client: MockClient) -> None:
    listed = client.get("/api/v3/tickets").json()

    assert all(isinstance(ticket["status"], str) for ticket in listed)
    assert all(set(ticket["owner"]) == {"link", "value"} for ticket in listed)


def test_a_list_renders_every_record_and_the_value_is_read_as_sent(client: MockClient) -> None:
    listed = client.get("/api/v3/tickets", params={"show": "BOTH"}).json()

    assert listed
    for ticket in listed:
        assert set(ticket["status"]) == {"display_value", "value"}
        assert ticket["owner"]["display_value"] in PEOPLE.values()
        if ticket["closed"]["value"]:
            assert ticket["closed"]["display_value_internal"] == ticket["closed"]["value"]
