"""Sample failure logs, written by the project: one logged failure per failure class on a
ServiceNow incident desk, and a successful session that corrects one of them.

The logs fit both the built-in ITSM back end (`myna.backends`, name `itsm`) and a small
incident-desk model of the same Table API (`incident_model()`), which keeps tests fast.
`python -m myna.replay.sample_logs DIR` writes `incident.model.yaml` (that model, OpenAPI 3.1)
and `failures.jsonl` (canonical trace JSONL) into DIR; the copies shipped in
`myna/replay/samples/` are kept current by a test. Every record and call below is what a
ServiceNow Table API would show; the mistakes are the ones agents make on it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from myna.schemas.model import (
    Auth,
    Conventions,
    Envelope,
    ErrorShape,
    FieldSpec,
    IdFormat,
    Operation,
    Pagination,
    Reference,
    Resource,
    ServiceModel,
    StateMachine,
    Transition,
)
from myna.traces.model import Body, Event, Exchange, Message, Session

BASE_URL = "https://dev-myna.service-now.com"
TABLE = "/api/now/table"
SAMPLES = Path(__file__).resolve().parent / "samples"

U_BETH = "9be8184b7ff860f9c2e0e0fd3b4c9cb4"
U_DAVID = "1b1c22e665bed4da8345b117fee87ec0"
G_NETWORK = "a26e90e65b8f62ac574f1b189bfbefda"
G_DESK = "b897554f0abb6b7049130373893190f4"
INCIDENTS = {
    "INC0010001": "3b0f02e201046f5d30d9b0efe1efbb55",
    "INC0010002": "769cbd8d455d2abec279e4b566efdb55",
    "INC0010003": "ad39c34f4f4fb4b4b2dd5a9e33464f8c",
    "INC0010004": "feec189548b6070f52e6a8d77c6dd3fc",
    "INC0010005": "3b85f0cb4bf89010d27a8a1d46a477aa",
    "INC0010006": "dd6649ac0d9b6542531456a18806c296",
}
CLOSE_CODES = ["Solution provided", "Workaround provided", "Resolved by problem"]


def _field(name: str, kind: str = "string", **facts: Any) -> FieldSpec:
    schema = facts.pop("schema", {"type": kind})
    return FieldSpec(name=name, schema_=schema, **facts)


def _server(name: str, **facts: Any) -> FieldSpec:
    return _field(name, required=True, server_generated=True, read_only=True, **facts)


def _table_operations(resource: str) -> list[Operation]:
    collection, item = f"{TABLE}/{resource}", f"{TABLE}/{resource}/{{sys_id}}"
    return [
        Operation(
            id=f"list_{resource}", method="GET", path=collection, kind="list", resource=resource
        ),
        Operation(
            id=f"create_{resource}",
            method="POST",
            path=collection,
            kind="create",
            resource=resource,
        ),
        Operation(id=f"get_{resource}", method="GET", path=item, kind="get", resource=resource),
        Operation(
            id=f"update_{resource}", method="PATCH", path=item, kind="update", resource=resource
        ),
        Operation(
            id=f"delete_{resource}", method="DELETE", path=item, kind="delete", resource=resource
        ),
    ]


def _resource(name: str, fields: list[FieldSpec], **facts: Any) -> Resource:
    return Resource(
        name=name,
        collection_path=f"{TABLE}/{name}",
        item_path=f"{TABLE}/{name}/{{sys_id}}",
        id_field="sys_id",
        id_format=IdFormat(kind="hex32"),
        fields={spec.name: spec for spec in fields},
        **facts,
    )


def incident_model() -> ServiceModel:
    """A ServiceNow-style incident desk: incidents, users and groups over the Table API."""
    states = ["1", "2", "3", "6", "7", "8"]
    moves = [
        (None, "1"),
        ("1", "2"),
        ("2", "3"),
        ("3", "2"),
        ("1", "6"),
        ("2", "6"),
        ("3", "6"),
        ("6", "7"),
        ("6", "2"),
        ("1", "8"),
        ("2", "8"),
        ("3", "8"),
    ]
    incident = _resource(
        "incident",
        [
            _server("sys_id"),
            _server(
                "number", generator=IdFormat(kind="sequence", prefix="INC", width=7, start=10001)
            ),
            _field("short_description", required=True, required_on_create=True),
            _field("state", schema={"type": "string", "enum": states}, required=True),
            _field("priority", schema={"type": "string", "enum": ["1", "2", "3", "4", "5"]}),
            _field("urgency", schema={"type": "string", "enum": ["1", "2", "3"]}),
            _field("assigned_to", reference=Reference(resource="sys_user", style="link_value")),
            _field(
                "assignment_group",
                reference=Reference(resource="sys_user_group", style="link_value"),
            ),
            _field(
                "close_code",
                schema={"type": "string", "enum": CLOSE_CODES},
                enum_frequencies={"Solution provided": 5, "Workaround provided": 3},
            ),
            _field("close_notes"),
            _server("sys_updated_on"),
        ],
        display_field="number",
        unique=["number"],
        state_machines=[
            StateMachine(
                field="state",
                states=states,
                labels={
                    "1": "New",
                    "2": "In Progress",
                    "3": "On Hold",
                    "6": "Resolved",
                    "7": "Closed",
                    "8": "Canceled",
                },
                initial=["1"],
                transitions=[Transition(source=a, target=b) for a, b in moves],
                required_on_entry={"6": ["close_code", "close_notes"]},
            )
        ],
    )
    user = _resource(
        "sys_user",
        [_server("sys_id"), _field("user_name", required=True), _field("name", required=True)],
        display_field="name",
        unique=["user_name"],
    )
    group = _resource(
        "sys_user_group", [_server("sys_id"), _field("name", required=True)], display_field="name"
    )
    return ServiceModel(
        name="incident-desk",
        title="Incident desk (ServiceNow Table API style)",
        servers=[BASE_URL],
        conventions=Conventions(
            envelope=Envelope(style="wrapped", item_key="result", list_key="result"),
            pagination=Pagination(
                style="limit_offset",
                limit_param="sysparm_limit",
                offset_param="sysparm_offset",
                total_header="X-Total-Count",
            ),
            errors=[
                ErrorShape(
                    template={
                        "error": {"message": "{message}", "detail": "{detail}"},
                        "status": "failure",
                    }
                )
            ],
            auth=Auth(scheme="basic"),
            values_as_strings=True,
            query_language="servicenow",
        ),
        resources={"incident": incident, "sys_user": user, "sys_user_group": group},
        operations=[
            op
            for name in ("incident", "sys_user", "sys_user_group")
            for op in _table_operations(name)
        ],
    )


def _ref(table: str, sys_id: str) -> dict[str, str]:
    return {"link": f"{BASE_URL}{TABLE}/{table}/{sys_id}", "value": sys_id}


def _incident(
    number: str, summary: str, state: str, priority: str, *, assigned_to: str = "", group: str = ""
) -> dict[str, Any]:
    return {
        "sys_id": INCIDENTS[number],
        "number": number,
        "short_description": summary,
        "state": state,
        "priority": priority,
        "urgency": "3",
        "assigned_to": _ref("sys_user", assigned_to) if assigned_to else "",
        "assignment_group": _ref("sys_user_group", group) if group else "",
        "close_code": "",
        "close_notes": "",
        "sys_updated_on": "2026-03-02 09:15:00",
    }


DESK = {
    "INC0010001": _incident("INC0010001", "Core switch down in building 2", "2", "2", group=G_DESK),
    "INC0010002": _incident(
        "INC0010002", "VPN drops every hour", "2", "3", assigned_to=U_BETH, group=G_NETWORK
    ),
    "INC0010003": _incident("INC0010003", "Printer jam on floor 4", "1", "4"),
    "INC0010004": _incident("INC0010004", "Laptop will not boot", "1", "3"),
    "INC0010005": _incident(
        "INC0010005", "Outlook crashes on start", "2", "3", assigned_to=U_DAVID
    ),
    "INC0010006": _incident("INC0010006", "VPN keeps dropping (reported twice)", "1", "3"),
}
USERS = {
    U_BETH: {"sys_id": U_BETH, "user_name": "beth.anglin", "name": "Beth Anglin"},
    U_DAVID: {"sys_id": U_DAVID, "user_name": "david.miller", "name": "David Miller"},
}
GROUPS = {
    G_NETWORK: {"sys_id": G_NETWORK, "name": "Network"},
    G_DESK: {"sys_id": G_DESK, "name": "Service Desk"},
}


class _Log:
    """Writes one session's events with sequential ids."""

    def __init__(self, session_id: str, task: str) -> None:
        self.session_id = session_id
        self.events: list[Event] = [Message(id=f"{session_id}-0", role="user", text=task)]

    def _id(self) -> str:
        return f"{self.session_id}-{len(self.events)}"

    def call(
        self,
        method: str,
        path: str,
        status: int,
        response: Any = None,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
    ) -> None:
        pairs = list((query or {}).items())
        url = f"{BASE_URL}{path}" + (f"?{urlencode(pairs)}" if pairs else "")
        self.events.append(
            Exchange(
                id=self._id(),
                method=method,
                url=url,
                status=status,
                query=pairs,
                request_headers=[("Accept", "application/json")],
                request_body=Body("json", body, "application/json") if body is not None else Body(),
                response_headers=[("Content-Type", "application/json;charset=UTF-8")],
                response_body=Body("json", response, "application/json")
                if response is not None
                else Body(),
            )
        )

    def find(self, table: str, query: str, records: list[dict[str, Any]]) -> None:
        self.call(
            "GET", f"{TABLE}/{table}", 200, {"result": records}, query={"sysparm_query": query}
        )

    def patch(
        self,
        table: str,
        record: dict[str, Any],
        body: dict[str, Any],
        status: int = 200,
        error: str | None = None,
    ) -> None:
        path = f"{TABLE}/{table}/{record['sys_id']}"
        if error is None:
            self.call("PATCH", path, status, {"result": {**record, **_wire(body)}}, body=body)
        else:
            reply = {"error": {"message": error, "detail": ""}, "status": "failure"}
            self.call("PATCH", path, status, reply, body=body)

    def say(self, text: str) -> None:
        self.events.append(Message(id=self._id(), role="assistant", text=text))

    def session(self, outcome: str, feedback: str | None = None, **metadata: Any) -> Session:
        return Session(
            id=self.session_id,
            events=self.events,
            task=self.events[0].text if isinstance(self.events[0], Message) else None,
            outcome="failure" if outcome == "failure" else "success",
            feedback=feedback,
            source="myna.replay.sample_logs",
            metadata=metadata,
        )


def _wire(body: dict[str, Any]) -> dict[str, Any]:
    links = {"assigned_to": "sys_user", "assignment_group": "sys_user_group"}
    return {k: _ref(links[k], v) if k in links and v else v for k, v in body.items()}


def _constraint_violation() -> Session:
    log = _Log(
        "resolve-vpn",
        "Resolve INC0010002: the VPN concentrator was restarted and the drops stopped.",
    )
    log.find("incident", "number=INC0010002", [DESK["INC0010002"]])
    log.patch(
        "incident",
        DESK["INC0010002"],
        {"state": "6"},
        400,
        error="Data policy exception: mandatory fields: close_code, close_notes",
    )
    log.say("I tried to resolve INC0010002 but the update was refused.")
    return log.session("failure", "The incident is still open; the update was refused.")


def _wrong_record() -> Session:
    log = _Log("assign-printer", "Assign INC0010003 to Beth Anglin.")
    log.find("incident", "active=true", list(DESK.values()))
    log.find("sys_user", "name=Beth Anglin", [USERS[U_BETH]])
    log.patch("incident", DESK["INC0010004"], {"assigned_to": U_BETH})
    log.say("Done: the ticket is now assigned to Beth Anglin.")
    return log.session(
        "failure", "Wrong ticket: you changed INC0010004, but I asked for INC0010003."
    )


ESCALATE = "Escalate INC0010001: raise its urgency to 1 and hand it to the Network group."


def _missing_step() -> list[Session]:
    failed = _Log("escalate-switch", ESCALATE)
    failed.find("incident", "number=INC0010001", [DESK["INC0010001"]])
    failed.find("sys_user_group", "name=Network", [GROUPS[G_NETWORK]])
    failed.patch("incident", DESK["INC0010001"], {"urgency": "1"})
    failed.say("Urgency raised to 1.")
    done = _Log("escalate-switch-retry", ESCALATE)
    done.find("incident", "number=INC0010001", [DESK["INC0010001"]])
    done.find("sys_user_group", "name=Network", [GROUPS[G_NETWORK]])
    done.patch("incident", DESK["INC0010001"], {"urgency": "1", "assignment_group": G_NETWORK})
    done.say("Escalated: urgency 1, assigned to the Network group.")
    return [failed.session("failure", "The Network team never got it."), done.session("success")]


def _invented_value() -> Session:
    log = _Log(
        "close-outlook",
        "Resolve INC0010005 with a workaround: the user now starts Outlook in safe mode.",
    )
    log.find("incident", "number=INC0010005", [DESK["INC0010005"]])
    log.patch(
        "incident",
        DESK["INC0010005"],
        {"state": "6", "resolution": "workaround", "close_notes": "Outlook starts in safe mode."},
        400,
        error="Data policy exception: mandatory fields: close_code",
    )
    log.say("Resolved INC0010005.")
    expected = {
        "changes": [
            {
                "resource": "incident",
                "record": {"number": "INC0010005"},
                "set": {"state": "6", "close_code": "Workaround provided", "close_notes": None},
            }
        ]
    }
    return log.session("failure", None, expected=expected)


def _wrong_answer() -> Session:
    log = _Log("who-has-vpn", "Who is INC0010002 assigned to? Reply with the person's full name.")
    log.find("incident", "active=true", list(DESK.values()))
    log.find("sys_user", "active=true", list(USERS.values()))
    log.call("GET", f"{TABLE}/sys_user/{U_BETH}", 200, {"result": USERS[U_BETH]})
    log.say("INC0010002 is assigned to beth.anglin.")
    return log.session("failure", 'Not quite: the correct answer is "Beth Anglin".')


def _policy_breach() -> Session:
    log = _Log("cancel-duplicate", "INC0010006 repeats INC0010002; cancel INC0010006.")
    log.find("incident", "number=INC0010002", [DESK["INC0010002"]])
    log.find("incident", "number=INC0010006", [DESK["INC0010006"]])
    log.call("DELETE", f"{TABLE}/incident/{INCIDENTS['INC0010006']}", 204)
    log.say("Deleted the duplicate INC0010006.")
    return log.session(
        "failure",
        "Incidents must not be deleted. INC0010006 should have been "
        'canceled: its state should be "8".',
    )


def failure_sessions() -> list[Session]:
    """One failure per class, plus the successful retry that corrects the missing step."""
    return [
        _constraint_violation(),
        _wrong_record(),
        *_missing_step(),
        _invented_value(),
        _wrong_answer(),
        _policy_breach(),
    ]


def write_samples(directory: Path) -> tuple[Path, Path]:
    from myna.schemas import openapi
    from myna.traces.jsonl import write_jsonl

    directory.mkdir(parents=True, exist_ok=True)
    model_path, log_path = directory / "incident.model.yaml", directory / "failures.jsonl"
    openapi.save(incident_model(), model_path)
    write_jsonl(failure_sessions(), log_path)
    return model_path, log_path


if __name__ == "__main__":
    for written in write_samples(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLES):
        print(written)
