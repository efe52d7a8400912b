"""A demo-sized CRM world: the reference world grown to what a demo org holds, so an agent has
something to search (hundreds of accounts with their contacts, opportunities in every stage,
cases in every status, follow-up tasks), owned by the org's sales and support people.

Every record is made by the reference org's own `create` and `update`, so every rule holds in it
as in the reference world (a stage's probability and forecast category, a closed case's reason
and close date, names derived from first and last names). Deterministic; it ships as seed files
(`demo_world/<Object>.jsonl`), the world `myna serve crm` serves unless `--world reference`
names the reference world; regenerated with

    python -m myna.backends.crm.demo -o myna/backends/crm/demo_world
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Final

from myna.backends import write_world_command
from myna.backends.crm.corpus import reference_org, write_chapters
from myna.backends.crm.instance import Org, Row
from myna.backends.crm.objects import PICKLISTS, STAGES
from myna.backends.crm.world import seed_files

ACCOUNTS: Final = 240
CONTACTS_PER_ACCOUNT: Final = 3
OPPORTUNITIES_PER_ACCOUNT: Final = 2
CASES: Final = 320
TASKS: Final = 260
SELLERS: Final = ("maya.chen@acme.example", "leo.fischer@acme.example", "ravi.patel@acme.example")
SUPPORT: Final = ("ines.alvarez@acme.example",)

_STEMS: Final = (
    "Northwind",
    "Contoso",
    "Fabrikam",
    "Litware",
    "Adventure",
    "Tailspin",
    "Wingtip",
    "Proseware",
    "Lucerne",
    "Margie",
    "Trey",
    "Woodgrove",
    "Alpine",
    "Coho",
    "Fourth",
    "Humongous",
    "Blue Yonder",
    "Datum",
    "Graphic",
    "Southridge",
)
_SUFFIXES: Final = (
    "Traders",
    "Labs",
    "Systems",
    "Logistics",
    "Health",
    "Energy",
    "Foods",
    "Bank",
    "Media",
    "Works",
    "Partners",
    "Motors",
)
_FIRST: Final = (
    "Ana",
    "Ben",
    "Chloe",
    "Dev",
    "Emil",
    "Fatima",
    "Goran",
    "Hana",
    "Ivan",
    "Jun",
    "Kofi",
    "Lena",
    "Mateo",
    "Nora",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
)
_LAST: Final = (
    "Abbott",
    "Brooks",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Huang",
    "Ibrahim",
    "Jensen",
    "Kowalski",
    "Laurent",
    "Moreau",
    "Novak",
    "Okafor",
    "Park",
)
_TITLES: Final = ("CEO", "CFO", "CTO", "VP Sales", "Head of IT", "Buyer", "Office Manager")
_CITIES: Final = (
    ("Seattle", "US"),
    ("Austin", "US"),
    ("Toronto", "CA"),
    ("London", "GB"),
    ("Berlin", "DE"),
    ("Paris", "FR"),
    ("Sydney", "AU"),
    ("Tokyo", "JP"),
)
_SUBJECTS: Final = (
    "Cannot log in",
    "Invoice mismatch",
    "Gateway offline",
    "Slow dashboard",
    "Shipment delayed",
    "Feature question",
    "License renewal",
    "Data export fails",
)


def demo_world() -> dict[str, list[Row]]:
    """Every record of the demo org, by object, in the catalogue's order."""
    org, book = reference_org()
    write_chapters(org, book)
    rng = random.Random(14)
    sellers = [org.find_user(name) or org.admin_id for name in SELLERS]
    support = [org.find_user(name) or org.admin_id for name in SUPPORT]
    accounts = _accounts(org, rng, sellers)
    contacts = _contacts(org, rng, accounts)
    opportunities = _opportunities(org, rng, accounts)
    _cases(org, rng, contacts, support)
    _tasks(org, rng, opportunities, contacts, sellers)
    return {name: [dict(row) for row in rows.values()] for name, rows in org.rows.items()}


def _accounts(org: Org, rng: random.Random, owners: list[str]) -> list[tuple[str, str]]:
    """(account id, its owner) for each new account."""
    made = []
    for number in range(ACCOUNTS):
        city, country = rng.choice(_CITIES)
        owner = owners[number % len(owners)]
        values = {
            "Name": f"{_STEMS[number % 20]} {_SUFFIXES[number // 20 % 12]} {number:03d}",
            "Industry": rng.choice(PICKLISTS["Industry"]),
            "Type": rng.choice(PICKLISTS["AccountType"]),
            "Rating": rng.choice(PICKLISTS["Rating"]),
            "BillingCity": city,
            "BillingCountry": country,
            "NumberOfEmployees": rng.randrange(5, 20000),
            "AnnualRevenue": float(rng.randrange(1, 500) * 100000),
            "External_Id__c": f"DEMO-{number:05d}",
            "OwnerId": owner,
        }
        org.advance(timedelta(minutes=7))
        made.append((org.create("Account", values, owner), owner))
    return made


def _contacts(
    org: Org, rng: random.Random, accounts: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """(contact id, its account id) for each new contact."""
    made: list[tuple[str, str]] = []
    for account, owner in accounts:
        for _ in range(CONTACTS_PER_ACCOUNT):
            first, last = rng.choice(_FIRST), rng.choice(_LAST)
            values = {
                "AccountId": account,
                "FirstName": first,
                "LastName": last,
                "Title": rng.choice(_TITLES),
                "Email": f"{first.lower()}.{last.lower()}.{len(made)}@customer.example",
                "LeadSource": rng.choice(PICKLISTS["LeadSource"]),
                "OwnerId": owner,
            }
            made.append((org.create("Contact", values, owner), account))
    return made


def _opportunities(org: Org, rng: random.Random, accounts: list[tuple[str, str]]) -> list[str]:
    made = []
    stages = list(STAGES)
    for index, (account, owner) in enumerate(accounts):
        for slot in range(OPPORTUNITIES_PER_ACCOUNT):
            # Every stage, round robin, so each is well represented.
            stage = stages[(index * OPPORTUNITIES_PER_ACCOUNT + slot) % len(stages)]
            close = org.now.date() + timedelta(days=rng.randrange(-120, 180))
            values = {
                "Name": f"Deal {index:03d}-{slot}",
                "AccountId": account,
                "StageName": stage,
                "CloseDate": close.isoformat(),
                "Amount": float(rng.randrange(5, 400) * 1000),
                "Type": rng.choice(PICKLISTS["OpportunityType"]),
                "OwnerId": owner,
            }
            made.append(org.create("Opportunity", values, owner))
    return made


def _cases(
    org: Org, rng: random.Random, contacts: list[tuple[str, str]], agents: list[str]
) -> None:
    statuses = PICKLISTS["CaseStatus"]
    for number in range(CASES):
        contact, account = contacts[rng.randrange(len(contacts))]
        agent = agents[number % len(agents)]
        values = {
            "Subject": f"{rng.choice(_SUBJECTS)} #{number:03d}",
            "AccountId": account,
            "ContactId": contact,
            "Priority": rng.choice(PICKLISTS["CasePriority"]),
            "Origin": rng.choice(PICKLISTS["CaseOrigin"]),
            "Type": rng.choice(PICKLISTS["CaseType"]),
            "OwnerId": agent,
        }
        org.advance(timedelta(minutes=3))
        case = org.create("Case", values, agent)
        status = statuses[number % len(statuses)]
        if status != "New":
            # Work moves a case along, as an agent would: closing needs a reason.
            org.advance(timedelta(minutes=40))
            reason = rng.choice(PICKLISTS["CaseReason"]) if status == "Closed" else None
            org.update("Case", case, {"Status": status, "Reason": reason}, agent)


def _tasks(
    org: Org,
    rng: random.Random,
    opportunities: list[str],
    contacts: list[tuple[str, str]],
    owners: list[str],
) -> None:
    statuses = PICKLISTS["TaskStatus"]
    for number in range(TASKS):
        owner = owners[number % len(owners)]
        values = {
            "Subject": rng.choice(("Call", "Send quote", "Follow up", "Demo", "Renewal check")),
            "Status": statuses[number % len(statuses)],
            "Priority": rng.choice(PICKLISTS["TaskPriority"]),
            "ActivityDate": (org.now.date() + timedelta(days=rng.randrange(-30, 30))).isoformat(),
            "WhatId": opportunities[rng.randrange(len(opportunities))],
            "WhoId": contacts[rng.randrange(len(contacts))][0],
            "OwnerId": owner,
        }
        org.create("Task", values, owner)


def main(argv: list[str] | None = None) -> None:
    write_world_command(
        argv, __doc__.splitlines()[0] if __doc__ else None, lambda: seed_files(demo_world())
    )


if __name__ == "__main__":
    main()
