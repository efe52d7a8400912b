"""A small ServiceNow-like service model, written by hand, for tests, benchmarks and demos.

An incident table with a state machine (New -> In Progress -> Resolved -> Closed; resolution
fields required on Resolved; Closed cannot be reopened), references to users rendered as
`{link, value}`, values as strings, the `{result}` envelope, Link and X-Total-Count paging,
Basic auth and ServiceNow's error body. `myna.schemas.openapi.save(servicenow_example(), path)`
writes it as a model file for `myna serve`.
"""

from __future__ import annotations

from myna.schemas.model import (
    Auth,
    Conventions,
    Effect,
    Envelope,
    ErrorShape,
    FieldSpec,
    IdFormat,
    Operation,
    Pagination,
    Reference,
    RefusedTransition,
    Resource,
    ResponseSpec,
    ServiceModel,
    StateMachine,
    Transition,
)

__all__ = ["INCIDENT", "SYS_USER", "TABLE", "servicenow_example"]

TABLE = "/api/now/table"

HEX32 = IdFormat(kind="hex32", pattern="^[0-9a-f]{32}$")
STRING: dict[str, object] = {"type": "string"}
STAMP: dict[str, object] = {"type": "string", "format": "date-time"}


def _field(name: str, schema: dict[str, object] | None = None, **facts: object) -> FieldSpec:
    return FieldSpec.model_validate({"name": name, "schema": schema or STRING, **facts})


def _user_ref(name: str) -> FieldSpec:
    return _field(name, reference=Reference(resource="sys_user", style="link_value"))


INCIDENT_STATES = StateMachine(
    field="state",
    states=["1", "2", "6", "7"],
    labels={"1": "New", "2": "In Progress", "6": "Resolved", "7": "Closed"},
    initial=["1"],
    transitions=[
        Transition(source="1", target="2"),
        Transition(source="2", target="6"),
        Transition(source="1", target="6"),
        Transition(source="6", target="2"),
        Transition(source="6", target="7"),
    ],
    refused=[
        RefusedTransition(
            source="7", target="2", status=403, message="Closed incidents cannot be reopened"
        )
    ],
    required_on_entry={"6": ["close_code", "close_notes"]},
)

INCIDENT = Resource(
    name="incident",
    collection_path=f"{TABLE}/incident",
    item_path=f"{TABLE}/incident/{{sys_id}}",
    id_field="sys_id",
    id_format=HEX32,
    display_field="number",
    unique=["number"],
    fields={
        "sys_id": _field("sys_id", server_generated=True, read_only=True),
        "number": _field(
            "number",
            server_generated=True,
            read_only=True,
            generator=IdFormat(kind="sequence", prefix="INC", width=7, start=10001),
        ),
        "short_description": _field(
            "short_description", {"type": "string", "maxLength": 160}, required_on_create=True
        ),
        "description": _field("description"),
        "state": _field("state", {"type": "string", "enum": ["1", "2", "6", "7"]}),
        "priority": _field(
            "priority", {"type": "integer", "minimum": 1, "maximum": 5}, has_default=True, default=4
        ),
        "active": _field("active", {"type": "boolean"}, has_default=True, default=True),
        "caller_id": _user_ref("caller_id"),
        "assigned_to": _user_ref("assigned_to"),
        "close_code": _field("close_code"),
        "close_notes": _field("close_notes"),
        "sla_due": _field("sla_due", STAMP, read_only=True, write_policy="refuse"),
        "sys_created_on": _field("sys_created_on", STAMP, server_generated=True, immutable=True),
        "sys_updated_on": _field("sys_updated_on", STAMP, server_generated=True),
        "sys_created_by": _field("sys_created_by", server_generated=True),
        "sys_updated_by": _field("sys_updated_by", server_generated=True),
        "sys_mod_count": _field("sys_mod_count", {"type": "integer"}, server_generated=True),
    },
    state_machines=[INCIDENT_STATES],
)

SYS_USER = Resource(
    name="sys_user",
    collection_path=f"{TABLE}/sys_user",
    item_path=f"{TABLE}/sys_user/{{sys_id}}",
    id_field="sys_id",
    id_format=HEX32,
    display_field="name",
    unique=["user_name"],
    fields={
        "sys_id": _field("sys_id", server_generated=True, read_only=True),
        "user_name": _field("user_name", required_on_create=True),
        "name": _field("name"),
        "email": _field("email", {"type": "string", "format": "email"}),
    },
)


def _crud(resource: Resource, *, item_methods: tuple[str, ...]) -> list[Operation]:
    collection = resource.collection_path or ""
    item = resource.item_path or ""
    name = resource.name
    operations = [
        Operation(id=f"list_{name}", method="GET", path=collection, kind="list", resource=name),
        Operation(
            id=f"create_{name}",
            method="POST",
            path=collection,
            kind="create",
            resource=name,
            responses=[ResponseSpec(status=201)],
        ),
        Operation(id=f"get_{name}", method="GET", path=item, kind="get", resource=name),
    ]
    if "PATCH" in item_methods:
        operations.append(
            Operation(id=f"update_{name}", method="PATCH", path=item, kind="update", resource=name)
        )
    if "PUT" in item_methods:
        operations.append(
            Operation(id=f"put_{name}", method="PUT", path=item, kind="replace", resource=name)
        )
    if "DELETE" in item_methods:
        operations.append(
            Operation(
                id=f"delete_{name}",
                method="DELETE",
                path=item,
                kind="delete",
                resource=name,
                responses=[ResponseSpec(status=204)],
            )
        )
    return operations


RESOLVE = Operation(
    id="resolve_incident",
    method="POST",
    path=f"{TABLE}/incident/{{sys_id}}/resolve",
    kind="action",
    resource="incident",
    request_schema={
        "type": "object",
        "properties": {"close_code": STRING, "close_notes": STRING},
        "required": ["close_code"],
        "additionalProperties": False,
    },
    effects=[
        Effect(field="state", value="6"),
        Effect(field="close_code", from_request="/close_code"),
        Effect(field="close_notes", from_request="/close_notes"),
    ],
)

SERVICE_NOW_ERROR = ErrorShape(
    template={"error": {"message": "{message}", "detail": "{detail}"}, "status": "failure"}
)


def servicenow_example() -> ServiceModel:
    return ServiceModel(
        name="servicenow-test",
        title="ServiceNow-like test service",
        conventions=Conventions(
            envelope=Envelope(style="wrapped", item_key="result", list_key="result"),
            pagination=Pagination(
                style="limit_offset",
                limit_param="sysparm_limit",
                offset_param="sysparm_offset",
                max_limit=10_000,
                link_header=True,
                total_header="X-Total-Count",
            ),
            errors=[SERVICE_NOW_ERROR],
            auth=Auth(
                scheme="basic",
                unauthorized_headers={"WWW-Authenticate": 'Basic realm="Service-now"'},
            ),
            values_as_strings=True,
            datetime_format="%Y-%m-%d %H:%M:%S",
            query_language="servicenow",
        ),
        resources={"incident": INCIDENT, "sys_user": SYS_USER},
        operations=[
            *_crud(INCIDENT, item_methods=("PATCH", "PUT", "DELETE")),
            RESOLVE,
            *_crud(SYS_USER, item_methods=("PATCH",)),
        ],
    )
