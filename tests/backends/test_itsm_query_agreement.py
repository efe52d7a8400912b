"""Encoded queries mean the same thing to the corpus's reference instance and to the runtime.

The two are written independently (a small Python evaluator in the corpus author; the dialect
parser and the SQL store in the runtime), so agreeing on generated queries over the same records
is evidence that both read ServiceNow's operators, precedence (`^OR` over `^` over `^NQ`),
dot-walking, case-insensitive comparison and ordering the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.backends.itsm.instance import Instance, Request
from myna.mocks import MockClient
from tests.backends.seeds import itsm_pair

# short_description (unique), urgency, impact, category, caller
INCIDENTS = (
    ("Mail down", "1", "2", "software", "ben"),
    ("mail slow", "2", "2", "software", "cat"),
    ("VPN drops", "1", "1", "network", "ben"),
    ("Disk full", "3", "3", "hardware", ""),
    ("Printer jam", "3", "2", "inquiry", "cat"),
    ("disk warning", "2", "3", "hardware", ""),
)
CONDITIONS = (
    "urgency=1",
    "urgency!=1",
    "urgencyIN1,2",
    "urgencyNOT IN1,2",
    "urgency<2",
    "urgency>=2",
    "urgencyBETWEEN1@2",
    "impact=2",
    "category=software",
    "category!=SOFTWARE",
    "categoryINsoftware,hardware",
    "short_descriptionLIKEmail",
    "short_descriptionNOT LIKEdisk",
    "short_descriptionSTARTSWITHdisk",
    "short_descriptionENDSWITHJAM",
    "short_description=mail slow",
    "caller_id.user_name=ben",
    "caller_id.user_name!=ben",
    "caller_idISEMPTY",
    "caller_idISNOTEMPTY",
)


@dataclass(frozen=True, slots=True)
class Pair:
    instance: Instance
    api: MockClient

    def reference(self, query: str) -> list[str]:
        reply = self.instance.handle(
            Request("GET", "/api/now/table/incident", [("sysparm_query", query)], user="ana")
        )
        assert reply.status == 200, reply.body.value
        return [row["short_description"] for row in reply.body.value["result"]]

    def runtime(self, query: str) -> list[str]:
        response = self.api.get("/api/now/table/incident", params={"sysparm_query": query})
        assert response.status == 200, response.body
        return [row["short_description"] for row in response.json()["result"]]


def _load(pair: Pair) -> None:
    callers: dict[str, tuple[str, str]] = {}
    for user_name in ("ben", "cat"):
        values = {"user_name": user_name, "first_name": user_name.title(), "last_name": "Doe"}
        mine = pair.instance.insert("sys_user", values, "admin")["sys_id"]
        theirs = pair.api.post("/api/now/table/sys_user", json=values).json()["result"]["sys_id"]
        callers[user_name] = (mine, theirs)
    for text, urgency, impact, category, caller in INCIDENTS:
        values = {"short_description": text, "urgency": urgency, "impact": impact}
        mine_caller, their_caller = callers.get(caller, ("", ""))
        pair.instance.insert(
            "incident", {**values, "category": category, "caller_id": mine_caller}, "ana"
        )
        created = pair.api.post(
            "/api/now/table/incident",
            json={**values, "category": category, "caller_id": their_caller},
        )
        assert created.status == 201, created.body


@pytest.fixture(scope="module")
def pair() -> Pair:
    loaded = Pair(*itsm_pair("agreement"))
    _load(loaded)
    return loaded


def _group(conditions: list[list[str]]) -> str:
    return "^".join("^OR".join(alternatives) for alternatives in conditions)


ors = st.lists(st.sampled_from(CONDITIONS), min_size=1, max_size=2)
groups = st.lists(ors, min_size=1, max_size=3).map(_group)
queries = st.lists(groups, min_size=1, max_size=2).map("^NQ".join)


@settings(max_examples=80, deadline=None)
@given(query=queries)
def test_both_select_the_same_incidents(pair: Pair, query: str) -> None:
    assert sorted(pair.runtime(query)) == sorted(pair.reference(query))


@pytest.mark.parametrize(
    "order",
    [
        "ORDERBYshort_description",
        "ORDERBYDESCshort_description",
        "urgency!=3^ORDERBYshort_description",
    ],
)
def test_both_order_case_insensitively(pair: Pair, order: str) -> None:
    assert pair.runtime(order) == pair.reference(order)
