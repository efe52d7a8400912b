"""The CRM record rules that are no model fact (`records.py`), as pure functions over rows."""

from __future__ import annotations

from myna.backends.crm.records import (
    address,
    case_values,
    converted_lead,
    line_values,
    person_name,
    rolled_up_amount,
)

STAMP = "2026-03-02T09:00:00.000+0000"


def case(
    status: str, reason: str | None = None, escalated: bool | None = None
) -> dict[str, object]:
    return {"Status": status, "Reason": reason, "IsEscalated": escalated}


def test_closing_a_case_stamps_the_moment() -> None:
    # That closing needs a reason is a state's required field: test_crm_rules.py.
    assert case_values(case("Working"), case("Closed", "Other"), STAMP) == {
        "IsEscalated": False,
        "ClosedDate": STAMP,
    }


def test_a_closed_case_edited_again_is_not_closed_again() -> None:
    closed = case("Closed", None, True)
    assert case_values(closed, closed, STAMP) == {}


def test_a_converted_lead_is_read_only() -> None:
    assert converted_lead({"IsConverted": False}) is None
    refused = converted_lead({"IsConverted": True})
    assert refused is not None
    assert refused.code == "CANNOT_UPDATE_CONVERTED_LEAD"


def test_derived_names_addresses_and_totals() -> None:
    assert person_name({"FirstName": "Ana", "LastName": "Lee"}) == "Ana Lee"
    assert person_name({"FirstName": None, "LastName": "Lee"}) == "Lee"
    parts = dict.fromkeys(
        ("City", "Country", "GeocodeAccuracy", "Latitude", "Longitude", "PostalCode", "State")
    )
    assert address({**parts, "Street": None}) is None
    assert address({**parts, "Street": "1 Main St"}) == {
        "city": None,
        "country": None,
        "geocodeAccuracy": None,
        "latitude": None,
        "longitude": None,
        "postalCode": None,
        "state": None,
        "street": "1 Main St",
    }
    line = line_values(
        {"Name": "Big deal"}, {"Name": "Gateway"}, {"Quantity": 3, "UnitPrice": 9.99}
    )
    assert line == {"Name": "Big deal Gateway", "TotalPrice": 29.97}


def test_an_opportunity_sums_its_live_products_only() -> None:
    items = [
        {"TotalPrice": 100.0, "IsDeleted": False},
        {"TotalPrice": 50.5, "IsDeleted": False},
        {"TotalPrice": 999.0, "IsDeleted": True},
    ]
    assert rolled_up_amount(items) == 150.5
    assert rolled_up_amount([{"TotalPrice": 5.0, "IsDeleted": True}]) is None
