"""The reference instance and the served mock answer the same calls the same way.

The corpus only walks the paths its scenarios take, so a rule the two state differently stays
invisible to the own-corpus replay. Here the same random call sequences (state moves with every
field the data policies ask for, and plain edits) go to both, and each answer's status and error
message must agree: a Canceled incident is read-only in both, New straight to Closed is refused
by both, and so on for every pinned state model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.backends.itsm.instance import JSON_TYPE, Instance, Request
from myna.backends.itsm.rules import DOMAIN, INSERT_VALUES, STATE_MODELS, insert_defaults
from myna.backends.itsm.tables import TASK_TABLES
from myna.mocks import MockClient
from myna.traces.model import Body
from tests.backends.seeds import itsm_pair

TABLE = "/api/now/table"
# Everything a data policy may ask for on entering a state, so that only the state model decides.
FILLED = {
    "close_code": "Solution provided",
    "close_notes": "done",
    "hold_reason": "1",
    "resolution_code": "fix_applied",
    "fix_notes": "fixed",
}


# What the rules derive, compared after every accepted write.
DERIVED = (
    "state",
    "approval",
    "active",
    "reopen_count",
    "hold_reason",
    "incident_state",
    "priority",
    "reassignment_count",
    "made_sla",
    "problem_state",
    "request_state",
    "workflow_state",
)
# What entering a state stamps (`rules.entered`, and resolving's `resolution_times`): compared
# by presence, since each side has its own clock and its own ids for the caller.
STAMPED = (
    "resolved_at",
    "resolved_by",
    "closed_at",
    "closed_by",
    "work_start",
    "work_end",
    "published",
    "calendar_stc",
)
TABLES = ["incident", "problem", "change_request", "sc_request", "kb_knowledge"]
OTHER = {"true": "false", "false": "true", "0": "3", "requested": "approved"}


@dataclass(frozen=True, slots=True)
class Pair:
    instance: Instance
    api: MockClient

    def create(self, table: str) -> tuple[str, str]:
        values = {"short_description": "printer jam"}
        mine = self.instance.insert(table, values, "ana")["sys_id"]
        created = self.api.post(f"{TABLE}/{table}", json=values)
        assert created.status == 201, created.body
        return mine, created.json()["result"]["sys_id"]

    def patch(
        self,
        table: str,
        ids: tuple[str, str],
        values: dict[str, str],
        theirs: dict[str, str] | None = None,
    ) -> tuple[Any, Any]:
        """The same update to both (`theirs`: the mock's values, when its ids differ)."""
        paths = (f"{TABLE}/{table}/{ids[0]}", f"{TABLE}/{table}/{ids[1]}")
        return self.send("PATCH", paths, values, theirs)

    def send(
        self,
        method: str,
        paths: tuple[str, str],
        values: dict[str, str],
        theirs: dict[str, str] | None = None,
    ) -> tuple[Any, Any]:
        """One call to each, outcomes (reference, served)."""
        reply = self.instance.handle(
            Request(
                method,
                paths[0],
                body=Body("json", values, JSON_TYPE),
                content_type=JSON_TYPE,
                user="ana",
            )
        )
        response = self.api.request(method, paths[1], json=theirs or values)
        return _outcome(reply.status, reply.body.value), _outcome(response.status, response.json())


def _outcome(status: int, body: Any) -> tuple[int, Any]:
    """The status, and for a refusal ServiceNow's message and detail."""
    if status >= 400:
        # Each side numbers its records itself: CHG0010005 on one is CHG0010002 on the other.
        detail = re.sub(r"\b[A-Z]+\d{7}\b", "<number>", body["error"]["detail"] or "")
        return status, (body["error"]["message"], detail)
    result = body["result"]
    stamped = tuple(bool(_value(result.get(name))) for name in STAMPED)
    return status, (*(result.get(name) for name in DERIVED), *stamped)


@pytest.fixture(scope="module")
def pair() -> Pair:
    return Pair(*itsm_pair("differential"))


# A step: a move to a state (with what its data policy wants) or an edit of another field.
def steps(table: str) -> st.SearchStrategy[dict[str, str]]:
    model = STATE_MODELS[table]
    moves = st.sampled_from(model.states).map(lambda state: {**FILLED, model.field: state})
    # A move with nothing else: the data policies decide, read by both from the overlay.
    bare = st.sampled_from(model.states).map(lambda state: {model.field: state})
    decisions = ["approved", "rejected", "requested"] if table == "change_request" else []
    edits = st.sampled_from(
        [{"work_notes": "one more thing"}, *({"approval": value} for value in decisions)]
    )
    return st.one_of(moves, bare, edits)


@pytest.mark.parametrize("table", TABLES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_state_moves_get_the_same_answer(
    pair: Pair, table: str, data: st.DataObject
) -> None:
    ids = pair.create(table)
    for values in data.draw(st.lists(steps(table), min_size=1, max_size=6)):
        reference, served = pair.patch(table, ids, values)
        assert served == reference, values


@pytest.mark.parametrize("table", TABLES)
def test_a_record_created_in_any_state_gets_the_same_answer(pair: Pair, table: str) -> None:
    model = STATE_MODELS[table]
    for state in model.states:
        values = {**FILLED, "short_description": "printer jam", model.field: state}
        reference, served = pair.send("POST", (f"{TABLE}/{table}",) * 2, values)
        assert served == reference, state


@pytest.mark.parametrize(
    "table", ["incident", "problem", "change_request", "sc_request", "kb_knowledge", "sys_user"]
)
def test_an_insert_fills_in_the_same_values(pair: Pair, table: str) -> None:
    """The defaults for what a client leaves empty (sent empty here, so that no learned
    default stands in), and the values an insert fixes whatever was sent."""
    defaults = insert_defaults(table, table in TASK_TABLES)
    fixed = {**DOMAIN, **INSERT_VALUES.get(table, {})}
    values = {
        "short_description": "printer jam",
        "user_name": "bo",
        **dict.fromkeys(defaults, ""),
        # A value the column takes, but not what an insert leaves there: each side overrules it.
        **{name: OTHER[value] for name, value in INSERT_VALUES.get(table, {}).items()},
    }
    mine = pair.instance.insert(table, values, "ana")
    created = pair.api.post(f"{TABLE}/{table}", json=values)
    assert created.status == 201, created.body
    theirs = created.json()["result"]
    names = [name for name in (*defaults, *fixed) if name in mine]
    assert {name: _value(theirs.get(name)) for name in names} == {
        name: mine[name] for name in names
    }
    assert {name: mine[name] for name in fixed if name in mine} == {
        name: value for name, value in fixed.items() if name in mine
    }


@pytest.mark.parametrize(
    ("path", "status"),
    [
        # The two the issue found: the copies disagreed on these.
        ([{"state": "8"}, {"work_notes": "after cancel"}], 403),
        ([{**FILLED, "state": "7"}], 400),
        # Closed is read-only whatever is sent.
        ([{**FILLED, "state": "6"}, {"state": "7"}, {"short_description": "x"}], 403),
    ],
)
def test_the_named_disagreements_now_agree(
    pair: Pair, path: list[dict[str, str]], status: int
) -> None:
    ids = pair.create("incident")
    outcomes = [pair.patch("incident", ids, values) for values in path]
    assert all(reference == served for reference, served in outcomes), outcomes
    assert outcomes[-1][0][0] == status


@pytest.mark.parametrize(
    ("parent_table", "child_table", "field"),
    [("change_request", "change_task", "change_request"), ("sc_request", "sc_req_item", "request")],
)
def test_a_task_created_under_a_record_has_that_record_as_its_parent(
    pair: Pair, parent_table: str, child_table: str, field: str
) -> None:
    # Several candidates, so that a learned constant (the corpus's only change) cannot pass.
    parents = [pair.create(parent_table) for _ in range(3)]
    for mine, theirs in parents:
        values = {"short_description": "step"}
        row = pair.instance.insert(child_table, {**values, field: mine}, "ana")
        assert row["parent"] == mine
        created = pair.api.post(f"{TABLE}/{child_table}", json={**values, field: theirs})
        assert created.status == 201, created.body
        assert created.json()["result"]["parent"]["value"] == theirs


def test_an_assignee_outside_the_assignment_group_is_refused_alike(pair: Pair) -> None:
    def both(table: str, values: dict[str, str]) -> tuple[str, str]:
        mine = pair.instance.insert(table, values, "admin")["sys_id"]
        created = pair.api.post(f"{TABLE}/{table}", json=values)
        assert created.status == 201, created.body
        return mine, created.json()["result"]["sys_id"]

    member = both("sys_user", {"user_name": "mia", "first_name": "Mia", "last_name": "Lee"})
    stranger = both("sys_user", {"user_name": "sam", "first_name": "Sam", "last_name": "Fox"})
    group = both("sys_user_group", {"name": "Network"})
    for side in (0, 1):
        values = {"group": group[side], "user": member[side]}
        if side == 0:
            pair.instance.insert("sys_user_grmember", values, "admin")
        else:
            assert pair.api.post(f"{TABLE}/sys_user_grmember", json=values).status == 201
    ids = pair.create("incident")
    outcomes = [
        pair.patch(
            "incident",
            ids,
            *({"assignment_group": group[side], "assigned_to": person[side]} for side in (0, 1)),
        )
        for person in (stranger, member, stranger)
    ]
    assert all(reference == served for reference, served in outcomes), outcomes
    assert [reference[0] for reference, _ in outcomes] == [403, 200, 403]
    assert outcomes[0][0][1] == (
        "Operation Failed",
        "Invalid update: Sam Fox is not a member of assignment group Network",
    )


def test_priority_and_reassignments_are_counted_alike(pair: Pair) -> None:
    groups = [
        _both(pair, "sys_user_group", {"name": name}, {"name": name})
        for name in ("Desk", "Network", "Database")
    ]
    ids = pair.create("incident")
    outcomes = [
        pair.patch("incident", ids, {"impact": "1"}),
        pair.patch("incident", ids, {"urgency": "2"}),
    ]
    for mine, theirs in (groups[0], groups[1], groups[2], groups[0]):
        sides = ({"assignment_group": mine}, {"assignment_group": theirs})
        outcomes.append(pair.patch("incident", ids, *sides))
    assert all(reference == served for reference, served in outcomes), outcomes
    # Three moves between groups after the first, priority 1 x 2 -> 2.
    assert outcomes[-1][0][1][DERIVED.index("reassignment_count")] == "3"
    assert outcomes[-1][0][1][DERIVED.index("priority")] == "2"


def test_a_problem_counts_its_incidents_alike(pair: Pair) -> None:
    problems = [pair.create("problem") for _ in range(2)]
    incidents = [pair.create("incident") for _ in range(3)]
    moves = [(0, 0), (1, 0), (2, 1), (1, 1), (0, None)]
    counts = []
    for incident, problem in moves:
        sides = (
            {"problem_id": "" if problem is None else problems[problem][side]} for side in (0, 1)
        )
        reference, served = pair.patch("incident", incidents[incident], *sides)
        assert reference == served
        counts.append(tuple(_related(pair, ids) for ids in problems))
    assert counts == [
        (("1", "1"), ("0", "0")),
        (("2", "2"), ("0", "0")),
        (("2", "2"), ("1", "1")),
        (("1", "1"), ("2", "2")),
        (("0", "0"), ("2", "2")),
    ]


def _related(pair: Pair, ids: tuple[str, str]) -> tuple[str, str]:
    mine = pair.instance.rows["problem"][ids[0]]["related_incidents"]
    theirs = pair.api.get(f"{TABLE}/problem/{ids[1]}").json()["result"]["related_incidents"]
    return mine, theirs


def test_resolving_past_the_sla_deadline_misses_the_sla_alike() -> None:
    start = datetime(2026, 1, 5, 9, 0, 0)
    now = [start.replace(tzinfo=UTC).timestamp()]
    pair = Pair(*itsm_pair("sla", clock=lambda: now[0]))
    late, prompt = pair.create("incident"), pair.create("incident")
    resolve = {**FILLED, "state": "6"}
    made = [_made_sla(pair.patch("incident", prompt, resolve))]
    # Impact and urgency 3: priority 5, resolved within 5 days.
    pair.instance.advance(timedelta(days=6))
    now[0] += timedelta(days=6).total_seconds()
    made.append(_made_sla(pair.patch("incident", late, resolve)))
    assert made == [("true", "true"), ("false", "false")]


def _made_sla(outcomes: tuple[Any, Any]) -> tuple[Any, Any]:
    reference, served = outcomes
    assert (reference[0], served[0]) == (200, 200), outcomes
    return tuple(outcome[1][DERIVED.index("made_sla")] for outcome in outcomes)


def _both(
    pair: Pair, table: str, values: dict[str, str], theirs: dict[str, str]
) -> tuple[str, str]:
    """One record created on each side (`theirs`: the mock's values); their sys_ids."""
    mine = pair.instance.insert(table, values, "ana")["sys_id"]
    created = pair.api.post(f"{TABLE}/{table}", json=theirs)
    assert created.status == 201, created.body
    return mine, created.json()["result"]["sys_id"]


DECISIONS = ["approved", "rejected", "cancelled", "not_required", "requested"]


@settings(max_examples=40, deadline=None)
@given(
    table=st.sampled_from(["change_request", "sc_request"]),
    decisions=st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(DECISIONS)), min_size=1, max_size=6
    ),
)
def test_approvers_decide_their_record_alike(
    pair: Pair, table: str, decisions: list[tuple[int, str]]
) -> None:
    """Approvals asked of a change in Authorize (or of a request), decided in any order: each
    decision gets the same answer, and leaves the record in the same state on both sides."""
    record = pair.create(table)
    if table == "change_request":
        pair.patch(table, record, {"state": "-4"})
        pair.patch(table, record, {"state": "-3"})
    people = [
        _both(pair, "sys_user", {"user_name": f"cab{n}"}, {"user_name": f"cab{n}"})
        for n in range(3)
    ]
    approvals = [
        _both(
            pair,
            "sysapproval_approver",
            {"sysapproval": record[0], "approver": people[n][0]},
            {"sysapproval": record[1], "approver": people[n][1]},
        )
        for n in range(3)
    ]
    for which, decision in decisions:
        reference, served = pair.patch(
            "sysapproval_approver", approvals[which], {"state": decision}
        )
        assert served[0] == reference[0], (which, decision, reference, served)
        reads = (
            pair.instance.rows[table][record[0]],
            pair.api.get(f"{TABLE}/{table}/{record[1]}").json()["result"],
        )
        assert [tuple(_value(row.get(k)) for k in ("state", "approval")) for row in reads] == [
            tuple(_value(reads[0].get(k)) for k in ("state", "approval"))
        ] * 2


def _value(value: Any) -> Any:
    return value.get("value") if isinstance(value, dict) else value
