"""The platform's record rules that are no model fact, as small pure functions over rows.

The rules a model states (picklists, required fields, what entering a state sets) are `rules.py`'s;
these are the others, which look at a record before and after a write (and the records it names)
and answer the values the platform derives or the `Violation` it refuses with. The org
(`instance.Org`) calls them on every write, for the reference org that writes the corpus and the
one the `salesforce` extension serves alike (ERP's `rules.py` is the pattern):

- `case_values`: closing a case stamps its `ClosedDate`; a case is never without `IsEscalated`;
- `converted_lead`: a converted lead is read-only (`CANNOT_UPDATE_CONVERTED_LEAD`);
- `person_name`, `address`: a contact's, lead's or user's `Name` and compound `Address`;
- `line_values`: an opportunity product's `Name` and `TotalPrice`;
- `rolled_up_amount`: an opportunity with products has their total as its `Amount`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

Row = dict[str, Any]

CASE_REASON_RULE: Final = "Choose a case reason before closing the case."
"""The message of the reference org's one validation rule (Setup > Case > Validation Rules),
which a case closed without a reason is refused with; the rule itself is a state's required
field (`objects.REQUIRED_ON_ENTRY`, the model's `required_on_entry`)."""

# An address's parts, by the key its compound field gives each (in the order Salesforce
# renders them).
ADDRESS_PARTS: Final[Mapping[str, str]] = {
    "city": "City",
    "country": "Country",
    "geocodeAccuracy": "GeocodeAccuracy",
    "latitude": "Latitude",
    "longitude": "Longitude",
    "postalCode": "PostalCode",
    "state": "State",
    "street": "Street",
}


@dataclass(frozen=True, slots=True)
class Violation:
    """A write the platform refuses: the status, Salesforce's error code, message and fields."""

    status: int
    code: str
    message: str
    fields: tuple[str, ...] = ()


def _closing(before: Row | None, after: Row) -> bool:
    return after["Status"] == "Closed" and (before is None or before["Status"] != "Closed")


def case_values(before: Row | None, after: Row, stamp: str) -> Row:
    """What a write of a case derives: the moment it closed, and an escalation flag that is
    false unless set (and, once set, stays until a write clears it)."""
    values: Row = {}
    if after["IsEscalated"] is None:
        values["IsEscalated"] = False
    if _closing(before, after):
        values["ClosedDate"] = stamp
    return values


def converted_lead(lead: Row) -> Violation | None:
    """A converted lead takes no more writes, nor another conversion."""
    if lead["IsConverted"]:
        return Violation(400, "CANNOT_UPDATE_CONVERTED_LEAD", "cannot reference converted lead")
    return None


def person_name(row: Row) -> str:
    """A person's `Name`: first and last name, or the last alone."""
    first = row.get("FirstName")
    return f"{first} {row['LastName']}" if first else str(row["LastName"])


def address(row: Row) -> dict[str, Any] | None:
    """The compound address of a record's parts, or null when every part is."""
    parts = {key: row[name] for key, name in ADDRESS_PARTS.items()}
    return parts if any(value is not None for value in parts.values()) else None


def line_values(opportunity: Row, product: Row, line: Row) -> Row:
    """An opportunity product's name (the opportunity's and the product's) and total price."""
    return {
        "Name": f"{opportunity['Name']} {product['Name']}",
        "TotalPrice": round(line["Quantity"] * line["UnitPrice"], 2),
    }


def rolled_up_amount(items: Iterable[Row]) -> float | None:
    """An opportunity's Amount from its live products' total prices; None (the Amount stays
    as it is) when it has none."""
    totals = [item["TotalPrice"] for item in items if not item["IsDeleted"]]
    return round(sum(totals), 2) if totals else None
