"""The ITSM corpus and the reference instance that writes it.

The corpus is the ground truth the built-in model is learned from, so these tests pin down what it
says: it is reproducible to the byte, it exercises every table and every Table API verb, and the
instance behind it follows ServiceNow's rules (each rule shown accepted and refused).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import pytest

from myna.backends.itsm.corpus import CHAPTERS, build_corpus
from myna.backends.itsm.instance import Instance, Reply, Request, page_links
from myna.backends.itsm.tables import TABLES
from myna.traces.jsonl import write_jsonl
from myna.traces.model import Body, Session
from myna.traces.reading import read

SHIPPED = files("myna.backends.itsm").joinpath("corpus.jsonl")
HOST = "https://test.service-now.com"


@pytest.fixture(scope="module")
def corpus() -> list[Session]:
    return build_corpus()


def test_regenerating_the_corpus_reproduces_the_shipped_file_byte_for_byte(
    corpus: list[Session], tmp_path: Path
) -> None:
    written = tmp_path / "corpus.jsonl"
    write_jsonl(corpus, written)
    assert written.read_bytes() == SHIPPED.read_bytes(), (
        "regenerate: python -m myna.backends.itsm.corpus -o myna/backends/itsm/corpus.jsonl"
    )


def test_the_shipped_corpus_reads_back_through_the_trace_reader(corpus: list[Session]) -> None:
    with as_file(SHIPPED) as path:
        sessions = list(read(path))
    assert [s.id for s in sessions] == [s.id for s in corpus]
    assert [len(s.events) for s in sessions] == [len(s.events) for s in corpus]


def test_every_session_states_its_task(corpus: list[Session]) -> None:
    assert len(corpus) == len(CHAPTERS)
    assert all(session.task and len(session.task) > 30 for session in corpus)


def test_the_corpus_stays_modest(corpus: list[Session]) -> None:
    exchanges = sum(len(session.exchanges) for session in corpus)
    # 29 chapters over 26 tables: the smoke test alone makes six calls a table.
    assert 200 <= exchanges <= 450


WRITABLE = sorted(
    set(TABLES) - {"sys_audit", "sys_journal_field", "task_sla", "sys_attachment", "sys_db_object"}
)


@pytest.mark.parametrize("table", WRITABLE)
def test_every_writable_table_is_created_read_listed_updated_replaced_and_deleted(
    corpus: list[Session], table: str
) -> None:
    seen = {
        (exchange.method, exchange.path.count("/"), exchange.status)
        for session in corpus
        for exchange in session.exchanges
        if exchange.path.startswith(f"/api/now/table/{table}")
        and exchange.path.split("/")[4] == table
    }
    assert {
        ("POST", 4, 201),
        ("GET", 4, 200),
        ("GET", 5, 200),
        ("PATCH", 5, 200),
        ("PUT", 5, 200),
        ("DELETE", 5, 204),
    } <= seen


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/oauth_token.do", 200),
        ("/oauth_token.do", 401),
        ("/api/now/v1/batch", 200),
        ("/api/now/v1/attachment/file", 201),
        ("/api/now/table/sys_user", 401),
        ("/api/now/table/incidents", 400),
    ],
    ids=["token", "token-refused", "batch", "upload", "unauthenticated", "invalid-table"],
)
def test_the_corpus_covers_the_other_endpoints_and_refusals(
    corpus: list[Session], path: str, status: int
) -> None:
    assert any(e.path == path and e.status == status for s in corpus for e in s.exchanges), (
        f"no {status} on {path}"
    )


def test_secrets_travel_redacted(corpus: list[Session]) -> None:
    for session in corpus:
        for exchange in session.exchanges:
            authorization = exchange.request_header("Authorization")
            assert authorization in (None, "Basic [REDACTED]", "Bearer [REDACTED]")
            if exchange.path == "/oauth_token.do":
                assert "password=[REDACTED]" in str(exchange.request_body.value) or (
                    "client_secret=[REDACTED]" in str(exchange.request_body.value)
                )


# -- the reference instance -----------------------------------------------------------------


class Desk:
    """A small instance with two groups and three people, driven like a client would."""

    def __init__(self) -> None:
        self.instance = Instance(HOST, datetime(2026, 1, 5, 9, 0, 0))
        self.ids: dict[str, str] = {}
        for user_name in ("ana", "ben", "cat"):
            row = self.instance.insert(
                "sys_user", {"user_name": user_name, "first_name": user_name.title()}, "admin"
            )
            self.ids[user_name] = row["sys_id"]
        for group, members in (("Network", ("ana", "ben")), ("Database", ("cat",))):
            self.ids[group] = self.instance.insert("sys_user_group", {"name": group}, "admin")[
                "sys_id"
            ]
            for member in members:
                self.instance.insert(
                    "sys_user_grmember",
                    {"user": self.ids[member], "group": self.ids[group]},
                    "admin",
                )

    def call(
        self, method: str, path: str, body: Any = None, params: list[tuple[str, str]] | None = None
    ) -> Reply:
        self.instance.advance(timedelta(minutes=1))
        sent = Body() if body is None else Body("json", body, "application/json")
        return self.instance.handle(Request(method, path, params or [], sent, None, "ana"))

    def incident(self, **values: str) -> dict[str, str]:
        reply = self.call("POST", "/api/now/table/incident", {"short_description": "x", **values})
        assert reply.status == 201, reply.body.value
        result: dict[str, str] = reply.body.value["result"]
        return result

    def patch(self, sys_id: str, **values: str) -> Reply:
        return self.call("PATCH", f"/api/now/table/incident/{sys_id}", values)

    def row(self, sys_id: str) -> dict[str, str]:
        return self.instance.rows["incident"][sys_id]


@pytest.fixture
def desk() -> Desk:
    return Desk()


@pytest.mark.parametrize(
    ("impact", "urgency", "priority"),
    [
        ("1", "1", "1"),
        ("1", "2", "2"),
        ("1", "3", "3"),
        ("2", "1", "2"),
        ("2", "2", "3"),
        ("2", "3", "4"),
        ("3", "1", "3"),
        ("3", "2", "4"),
        ("3", "3", "5"),
    ],
)
def test_priority_follows_the_impact_urgency_matrix(
    desk: Desk, impact: str, urgency: str, priority: str
) -> None:
    assert desk.incident(impact=impact, urgency=urgency)["priority"] == priority


def test_a_new_incident_gets_a_number_defaults_and_an_sla(desk: Desk) -> None:
    first, second = desk.incident(), desk.incident()
    assert (first["number"], second["number"]) == ("INC0010001", "INC0010002")
    assert first["state"] == first["incident_state"] == "1"
    assert (first["active"], first["sys_mod_count"], first["priority"]) == ("true", "0", "5")
    slas = [s for s in desk.instance.rows["task_sla"].values() if s["task"] == first["sys_id"]]
    assert [s["stage"] for s in slas] == ["in_progress"]


def test_resolving_needs_the_resolution_code_and_notes(desk: Desk) -> None:
    incident = desk.incident()
    refused = desk.patch(incident["sys_id"], state="6", close_code="Solution provided")
    assert refused.status == 403
    assert refused.body.value == {
        "error": {
            "message": "Operation Failed",
            "detail": "Data Policy Exception: \n\tThe following fields are mandatory: "
            "Resolution notes",
        },
        "status": "failure",
    }
    assert desk.row(incident["sys_id"])["sys_mod_count"] == "0"
    resolved = desk.patch(
        incident["sys_id"], state="6", close_code="Solution provided", close_notes="Fixed."
    )
    assert resolved.status == 200
    result = resolved.body.value["result"]
    assert (result["state"], result["active"], result["sys_mod_count"]) == ("6", "true", "1")
    assert result["resolved_at"] == "2026-01-05 09:03:00"
    assert result["resolved_by"]["value"] == desk.ids["ana"]


def test_closing_deactivates_and_locks_the_incident(desk: Desk) -> None:
    incident = desk.incident()
    desk.patch(incident["sys_id"], state="6", close_code="Duplicate", close_notes="Dup.")
    closed = desk.patch(incident["sys_id"], state="7")
    assert (closed.status, closed.body.value["result"]["active"]) == (200, "false")
    locked = desk.patch(incident["sys_id"], short_description="changed")
    assert locked.status == 403
    assert locked.body.value["error"]["detail"] == (
        "ACL Exception Update Failed due to security constraints"
    )


def test_reopening_counts_and_clears_the_resolution(desk: Desk) -> None:
    incident = desk.incident()
    desk.patch(incident["sys_id"], state="6", close_code="Duplicate", close_notes="Dup.")
    reopened = desk.patch(incident["sys_id"], state="2").body.value["result"]
    assert (reopened["reopen_count"], reopened["resolved_at"]) == ("1", "")
    assert reopened["reopened_by"]["value"] == desk.ids["ana"]


def test_on_hold_needs_a_reason_and_pauses_the_sla(desk: Desk) -> None:
    incident = desk.incident()
    assert desk.patch(incident["sys_id"], state="3").status == 403
    assert desk.patch(incident["sys_id"], state="3", hold_reason="1").status == 200
    (sla,) = [s for s in desk.instance.rows["task_sla"].values() if s["task"] == incident["sys_id"]]
    assert sla["stage"] == "paused"
    desk.instance.advance(timedelta(hours=2))
    resumed = desk.patch(incident["sys_id"], state="2").body.value["result"]
    assert resumed["hold_reason"] == ""
    assert (sla["stage"], sla["pause_duration"]) == ("in_progress", "1970-01-01 02:01:00")


def test_an_sla_breaches_when_its_target_passes(desk: Desk) -> None:
    incident = desk.incident(impact="1", urgency="1")
    desk.instance.advance(timedelta(hours=5))
    resolved = desk.patch(
        incident["sys_id"], state="6", close_code="Solution provided", close_notes="Late."
    ).body.value["result"]
    assert resolved["made_sla"] == "false"
    (sla,) = [s for s in desk.instance.rows["task_sla"].values() if s["task"] == incident["sys_id"]]
    assert (sla["stage"], sla["has_breached"]) == ("completed", "true")


def test_the_assignee_must_belong_to_the_assignment_group(desk: Desk) -> None:
    incident = desk.incident()
    outsider = desk.patch(
        incident["sys_id"], assignment_group=desk.ids["Network"], assigned_to=desk.ids["cat"]
    )
    assert outsider.status == 403
    assert (
        "Cat is not a member of assignment group Network" in outsider.body.value["error"]["detail"]
    )
    member = desk.patch(
        incident["sys_id"], assignment_group=desk.ids["Network"], assigned_to=desk.ids["ben"]
    )
    assert member.status == 200


def test_every_field_change_is_audited_and_notes_are_journaled(desk: Desk) -> None:
    incident = desk.incident()
    desk.patch(incident["sys_id"], urgency="1", work_notes="Looking into it.")
    audit = sorted(
        (row["fieldname"], row["oldvalue"], row["newvalue"])
        for row in desk.instance.rows["sys_audit"].values()
        if row["documentkey"] == incident["sys_id"]
    )
    assert audit == [
        ("priority", "5", "3"),
        ("urgency", "3", "1"),
        ("work_notes", "", "Looking into it."),
    ]
    (entry,) = desk.instance.rows["sys_journal_field"].values()
    assert (entry["element"], entry["element_id"], entry["value"]) == (
        "work_notes",
        incident["sys_id"],
        "Looking into it.",
    )
    shown = desk.call(
        "GET",
        f"/api/now/table/incident/{incident['sys_id']}",
        params=[("sysparm_display_value", "true"), ("sysparm_fields", "work_notes")],
    ).body.value["result"]
    assert shown["work_notes"].endswith(" - Ana (Work notes)\nLooking into it.\n\n")


def test_a_change_is_scheduled_only_once_approved(desk: Desk) -> None:
    created = desk.call("POST", "/api/now/table/change_request", {"short_description": "c"})
    change = created.body.value["result"]["sys_id"]
    path = f"/api/now/table/change_request/{change}"
    assert desk.call("PATCH", path, {"state": "-2"}).status == 403
    assert desk.call("PATCH", path, {"state": "-3"}).body.value["result"]["approval"] == "requested"
    approved = desk.call("PATCH", path, {"approval": "approved"}).body.value["result"]
    assert approved["state"] == "-2"


USERS_URL = f"{HOST}/api/now/table/sys_user"


@pytest.mark.parametrize(
    ("limit", "offset", "total", "rels"),
    [
        (1, 0, 626, {"first": 0, "prev": -1, "next": 1, "last": 625}),
        (500, 0, 626, {"first": 0, "next": 500, "last": 500}),
        (500, 500, 626, {"first": 0, "prev": 0, "last": 500}),
        (500, 0, 46, None),
    ],
    ids=["limit-1", "first-of-two", "last-of-two", "one-page"],
)
def test_link_headers_match_the_recorded_instance(
    limit: int, offset: int, total: int, rels: dict[str, int] | None
) -> None:
    params = [("sysparm_limit", str(limit)), ("sysparm_offset", str(offset))]
    header = page_links(USERS_URL, params, limit, offset, total)
    if rels is None:
        assert header is None
        return
    assert header == ",".join(
        f'<{USERS_URL}?sysparm_limit={limit}&sysparm_offset={at}>;rel="{rel}"'
        for rel, at in rels.items()
    )


@pytest.mark.parametrize(
    ("mode", "exclude", "rendered"),
    [
        ("false", "false", {"link": f"{HOST}/api/now/table/sys_user/{{id}}", "value": "{id}"}),
        ("false", "true", "{id}"),
        (
            "true",
            "false",
            {"link": f"{HOST}/api/now/table/sys_user/{{id}}", "display_value": "Ben"},
        ),
        ("true", "true", "Ben"),
        (
            "all",
            "false",
            {
                "display_value": "Ben",
                "link": f"{HOST}/api/now/table/sys_user/{{id}}",
                "value": "{id}",
            },
        ),
        ("all", "true", {"display_value": "Ben", "value": "{id}"}),
    ],
)
def test_references_render_per_display_value_and_link_parameters(
    desk: Desk, mode: str, exclude: str, rendered: Any
) -> None:
    incident = desk.incident(caller_id=desk.ids["ben"])
    reply = desk.call(
        "GET",
        f"/api/now/table/incident/{incident['sys_id']}",
        params=[
            ("sysparm_display_value", mode),
            ("sysparm_exclude_reference_link", exclude),
            ("sysparm_fields", "caller_id"),
        ],
    )
    expected = json.loads(json.dumps(rendered).replace("{id}", desk.ids["ben"]))
    assert reply.body.value["result"] == {"caller_id": expected}


@pytest.mark.parametrize(
    ("query", "numbers"),
    [
        ("urgency=1", ["INC0010001"]),
        ("urgency!=1", ["INC0010002", "INC0010003"]),
        ("urgencyIN1,2", ["INC0010001", "INC0010002"]),
        ("short_descriptionLIKEdisk", ["INC0010002"]),
        ("short_descriptionSTARTSWITHmail", ["INC0010001"]),
        ("caller_idISEMPTY", ["INC0010003"]),
        ("caller_id.user_name=ben", ["INC0010001", "INC0010002"]),
        ("urgency=1^ORurgency=3", ["INC0010001", "INC0010003"]),
        ("urgency=1^NQurgency=3", ["INC0010001", "INC0010003"]),
        ("ORDERBYDESCnumber", ["INC0010003", "INC0010002", "INC0010001"]),
    ],
)
def test_encoded_queries_select_and_order(desk: Desk, query: str, numbers: list[str]) -> None:
    desk.incident(short_description="mail down", urgency="1", caller_id=desk.ids["ben"])
    desk.incident(short_description="disk full", urgency="2", caller_id=desk.ids["ben"])
    desk.incident(short_description="printer", urgency="3")
    reply = desk.call("GET", "/api/now/table/incident", params=[("sysparm_query", query)])
    assert [row["number"] for row in reply.body.value["result"]] == numbers
    assert ("X-Total-Count", str(len(numbers))) in reply.headers


def test_an_unknown_credential_gets_the_recorded_401(desk: Desk) -> None:
    reply = desk.instance.handle(Request("GET", "/api/now/table/incident", user="mallory"))
    assert reply.status == 401
    assert ("WWW-Authenticate", 'Basic realm="Service-now"') in reply.headers
    assert reply.body.value["error"]["message"] == "User Not Authenticated"


def test_a_batch_serves_each_request_and_encodes_the_answers(desk: Desk) -> None:
    incident = desk.incident()
    body = base64.b64encode(json.dumps({"urgency": "1"}).encode()).decode()
    reply = desk.call(
        "POST",
        "/api/now/v1/batch",
        {
            "batch_request_id": 7,
            "rest_requests": [
                {
                    "id": "a",
                    "method": "PATCH",
                    "url": f"/api/now/table/incident/{incident['sys_id']}",
                    "body": body,
                },
                {"id": "b", "method": "DELETE", "url": f"/api/now/table/incident/{'0' * 32}"},
            ],
        },
    )
    answer = reply.body.value
    assert (answer["batch_request_id"], answer["unserviced_requests"]) == ("7", [])
    patched, missing = answer["serviced_requests"]
    assert (patched["id"], patched["status_code"], missing["status_code"]) == ("a", 200, 404)
    assert json.loads(base64.b64decode(patched["body"]))["result"]["priority"] == "3"


def test_a_problem_resolves_only_with_a_resolution_code_and_fix_notes(desk: Desk) -> None:
    created = desk.call("POST", "/api/now/table/problem", {"short_description": "relay stalls"})
    problem = created.body.value["result"]
    assert (problem["number"], problem["state"], problem["problem_state"]) == (
        "PRB0010001",
        "101",
        "101",
    )
    incident = desk.incident()
    desk.patch(incident["sys_id"], problem_id=problem["sys_id"])
    assert desk.instance.rows["problem"][problem["sys_id"]]["related_incidents"] == "1"
    path = f"/api/now/table/problem/{problem['sys_id']}"
    # The state model walks Assess, Root Cause Analysis and Fix in Progress before Resolved.
    for state in ("102", "103", "104"):
        assert desk.call("PATCH", path, {"state": state}).status == 200
    refused = desk.call("PATCH", path, {"state": "106", "resolution_code": "fix_applied"})
    assert refused.body.value["error"]["detail"].endswith("mandatory: Fix notes")
    resolved = desk.call(
        "PATCH", path, {"state": "106", "resolution_code": "fix_applied", "fix_notes": "Patched."}
    ).body.value["result"]
    assert (resolved["state"], resolved["problem_state"]) == ("106", "106")
    assert resolved["resolved_by"]["value"] == desk.ids["ana"]


def test_a_closed_change_refuses_further_edits(desk: Desk) -> None:
    created = desk.call("POST", "/api/now/table/change_request", {"short_description": "c"})
    path = f"/api/now/table/change_request/{created.body.value['result']['sys_id']}"
    canceled = desk.call("PATCH", path, {"state": "4"}).body.value["result"]
    assert (canceled["state"], canceled["active"]) == ("4", "false")
    assert desk.call("PATCH", path, {"state": "-5"}).status == 403
