"""A realistic hand-built service model (a slice of ServiceNow's Table API) shared by tests."""

from __future__ import annotations

from myna.schemas.model import (
    Auth,
    Conventions,
    EntryValues,
    Envelope,
    ErrorShape,
    Evidence,
    FieldSpec,
    IdFormat,
    Operation,
    Pagination,
    Parameter,
    Reference,
    Resource,
    ResponseSpec,
    ServiceModel,
    StateMachine,
    Transition,
)

SEEN = Evidence(samples=12, sessions=2, examples=["e1", "e7"], confidence=0.9)
INCIDENT_RECORD = {
    "type": "object",
    "properties": {"number": {"type": "string"}, "sys_id": {"type": "string"}},
}


def servicenow_model() -> ServiceModel:
    incident = Resource(
        name="incident",
        collection_path="/api/now/table/incident",
        item_path="/api/now/table/incident/{sys_id}",
        id_field="sys_id",
        id_format=IdFormat(kind="hex32", width=32, pattern="^[0-9a-f]{32}$"),
        display_field="number",
        fields={
            "sys_id": FieldSpec(
                name="sys_id",
                schema={"type": "string", "pattern": "^[0-9a-f]{32}$"},
                required=True,
                server_generated=True,
                read_only=True,
                immutable=True,
                evidence=SEEN,
            ),
            "number": FieldSpec(
                name="number",
                schema={"type": "string"},
                required=True,
                server_generated=True,
                generator=IdFormat(kind="sequence", prefix="INC", width=7, start=10002),
                evidence=SEEN,
            ),
            "state": FieldSpec(
                name="state",
                schema={"type": "string", "enum": ["1", "2", "6", "7"], "x-myna-type": "integer"},
                required=True,
                has_default=True,
                default="1",
                enum_frequencies={"1": 5, "2": 3, "6": 2, "7": 2},
                evidence=SEEN,
            ),
            "caller_id": FieldSpec(
                name="caller_id",
                schema={
                    "anyOf": [
                        {"type": "string", "maxLength": 0},
                        {"type": "object", "x-myna-reference": "link_value"},
                    ]
                },
                reference=Reference(resource="sys_user", style="link_value", evidence=SEEN),
                evidence=Evidence(samples=12, sessions=2, confidence=0.5, pinned=True),
            ),
            "opened_at": FieldSpec(
                name="opened_at",
                schema={"type": "string", "format": "date-time"},
                required_on_create=False,
                evidence=SEEN,
            ),
        },
        state_machines=[
            StateMachine(
                field="state",
                states=["1", "2", "6", "7"],
                labels={"6": "Resolved"},
                initial=["1"],
                transitions=[
                    Transition(source=None, target="1", operation="create_incident"),
                    Transition(source="1", target="6", operation="update_incident", evidence=SEEN),
                ],
                required_on_entry={"6": ["close_code"]},
                changes_on_entry={"6": ["resolved_at"]},
                sets_on_entry={
                    "7": EntryValues(
                        values={"active": "false", "incident_state": "7"}, evidence=SEEN
                    ),
                    "6": EntryValues(
                        values={"probability": 100.0, "reopened": False, "hold": None}
                    ),
                },
                evidence=SEEN,
            )
        ],
        evidence=SEEN,
    )
    operations = [
        Operation(
            id="list_incident",
            method="GET",
            path="/api/now/table/incident",
            kind="list",
            resource="incident",
            parameters=[
                Parameter(name="sysparm_limit", location="query", role="limit", evidence=SEEN),
                Parameter(name="sysparm_query", location="query", role="query"),
            ],
            responses=[
                ResponseSpec(
                    status=200,
                    schema={"type": "object", "properties": {"result": {"type": "array"}}},
                    headers={"X-Total-Count": {"type": "string"}},
                    evidence=SEEN,
                ),
                ResponseSpec(status=401, example={"error": {"message": "nope"}}),
            ],
            evidence=SEEN,
        ),
        Operation(
            id="get_incident",
            method="GET",
            path="/api/now/table/incident/{sys_id}",
            kind="get",
            resource="incident",
            parameters=[
                Parameter(
                    name="sys_id",
                    location="path",
                    required=True,
                    role="id",
                    schema={"type": "string"},
                )
            ],
            responses=[ResponseSpec(status=200, schema=INCIDENT_RECORD)],
        ),
        Operation(
            id="update_incident",
            method="PATCH",
            path="/api/now/table/incident/{sys_id}",
            kind="update",
            resource="incident",
            summary="Update an incident",
            request_schema={"type": "object", "properties": {"state": {"type": "string"}}},
            parameters=[Parameter(name="sys_id", location="path", required=True, role="id")],
            responses=[ResponseSpec(status=200, schema=INCIDENT_RECORD)],
        ),
    ]
    conventions = Conventions(
        envelope=Envelope(style="wrapped", item_key="result", list_key="result", evidence=SEEN),
        pagination=Pagination(
            style="limit_offset",
            limit_param="sysparm_limit",
            offset_param="sysparm_offset",
            link_header=True,
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
        auth=Auth(
            scheme="basic",
            unauthorized_headers={"WWW-Authenticate": 'Basic realm="Service-now"'},
            unauthorized_body={"error": {"message": "User Not Authenticated"}},
        ),
        values_as_strings=True,
        datetime_format="%Y-%m-%d %H:%M:%S",
        query_language="servicenow",
    )
    return ServiceModel(
        name="servicenow",
        servers=["https://dev1.service-now.com"],
        base_path="/api/now",
        conventions=conventions,
        resources={"incident": incident},
        operations=operations,
    )
