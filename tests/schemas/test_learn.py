"""`learn`: what a person reviewing the model would expect from small, literal traffic."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate

from myna.errors import LearnError
from myna.schemas import learn
from myna.schemas.model import Evidence, FieldSpec, IdFormat, Resource, ServiceModel
from myna.schemas.openapi import dumps, loads, to_openapi
from myna.traces.model import Message, Session, ToolCall
from tests.schemas.traffic import (
    HEX,
    SN,
    exchange,
    incident,
    schemas_naming,
    servicenow_lifecycle,
    session,
)


@pytest.fixture(scope="module")
def servicenow() -> ServiceModel:
    [model] = learn(servicenow_lifecycle())
    return model


# --- services -----------------------------------------------------------------------------


def test_services_are_split_by_site_and_one_sites_api_bases_are_one_service() -> None:
    models = learn(
        [
            session(
                exchange("GET", f"{SN}/incident", 200, {"result": [{"sys_id": HEX[1]}]}),
                exchange("GET", "https://x.atlassian.net/rest/api/3/project", 200, [{"id": "1"}]),
                exchange("GET", "https://x.atlassian.net/rest/api/2/project", 200, [{"id": "1"}]),
            )
        ]
    )

    assert sorted((model.name, model.base_path) for model in models) == [
        ("atlassian", "/rest/api"),
        ("servicenow", "/api/now"),
    ]
    (jira,) = (model for model in models if model.name == "atlassian")
    recorded = {op.path for op in jira.operations if op.inferred is None}
    assert recorded == {"/rest/api/2/project", "/rest/api/3/project"}


def test_service_option_names_one_model_for_everything() -> None:
    models = learn(
        [
            session(
                exchange("GET", "https://a.example.com/api/v1/items", 200, [{"id": 1}]),
                exchange("GET", "https://b.example.com/api/v1/items", 200, [{"id": 2}]),
            )
        ],
        service="shop",
    )

    assert [model.name for model in models] == ["shop"]
    assert models[0].servers == ["https://a.example.com", "https://b.example.com"]


def test_instances_of_one_site_are_one_service(servicenow: ServiceModel) -> None:
    assert servicenow.name == "servicenow"
    assert servicenow.base_path == "/api/now"


@pytest.mark.parametrize(
    "sessions",
    [
        pytest.param([], id="no-sessions"),
        pytest.param([Session(id="s")], id="empty-session"),
        pytest.param([Session(id="s", events=[Message("m", "user", "hi")])], id="only-messages"),
        pytest.param(
            [
                session(
                    exchange("GET", "https://x.example.com/", 302),
                    exchange("HEAD", "https://x.example.com/"),
                )
            ],
            id="redirects-and-heads",
        ),
        pytest.param(
            [session(exchange("GET", "https://x.example.com/api/v1/a", 404, {"error": "no"}))],
            id="only-errors",
        ),
    ],
)
def test_nothing_usable_is_an_error_not_an_empty_model(sessions: list[Session]) -> None:
    with pytest.raises(LearnError, match="nothing to learn"):
        learn(sessions)


# --- resources and operations -------------------------------------------------------------


def test_resource_paths_and_id(servicenow: ServiceModel) -> None:
    incident = servicenow.resources["incident"]

    assert incident.collection_path == "/api/now/table/incident"
    assert incident.item_path == "/api/now/table/incident/{sys_id}"
    assert incident.id_field == "sys_id"
    assert incident.id_format.kind == "hex32"
    assert incident.display_field == "number"


def test_table_pattern_yields_one_resource_per_table(servicenow: ServiceModel) -> None:
    assert set(servicenow.resources) == {"incident", "sys_user"}


def test_crud_operation_kinds(servicenow: ServiceModel) -> None:
    kinds = {
        (op.method, op.path): (op.id, op.kind, op.resource)
        for op in servicenow.operations
        if op.inferred is None
    }

    assert kinds == {
        ("GET", "/api/now/table/incident"): ("list_incident", "list", "incident"),
        ("POST", "/api/now/table/incident"): ("create_incident", "create", "incident"),
        ("GET", "/api/now/table/incident/{sys_id}"): ("get_incident", "get", "incident"),
        ("PATCH", "/api/now/table/incident/{sys_id}"): ("update_incident", "update", "incident"),
        ("GET", "/api/now/table/sys_user"): ("list_sys_user", "list", "sys_user"),
    }


def test_every_fact_carries_evidence(servicenow: ServiceModel) -> None:
    create = servicenow.operation("create_incident")

    assert create.evidence.samples == 3
    assert create.evidence.sessions == 3
    assert len(create.evidence.examples) == 3
    assert create.evidence.examples == sorted(create.evidence.examples)
    assert 0 < create.evidence.confidence < 1


def test_path_parameter_is_named_and_typed(servicenow: ServiceModel) -> None:
    [parameter] = servicenow.operation("get_incident").parameters

    assert (parameter.name, parameter.location, parameter.role) == ("sys_id", "path", "id")
    assert parameter.schema_["pattern"] == "^[0-9a-f]{32}$"


def test_query_parameters_get_roles(servicenow: ServiceModel) -> None:
    roles = {p.name: p.role for p in servicenow.operation("list_incident").parameters}

    assert roles == {"sysparm_limit": "limit", "sysparm_offset": "offset", "sysparm_query": "query"}


def test_list_response_points_at_the_resource_schema(servicenow: ServiceModel) -> None:
    [ok] = servicenow.operation("list_incident").responses
    assert ok.schema_ is not None

    assert ok.schema_["properties"]["result"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/incident"},
    }
    assert set(ok.headers) == {"Link", "X-Total-Count"}


def test_custom_action_below_an_item() -> None:
    issue = {"id": "10010", "key": "JJJ-9", "fields": {"status": {"name": "To Do"}}}
    done = {"id": "10010", "key": "JJJ-9", "fields": {"status": {"name": "Done"}}}
    base = "https://x.atlassian.net/rest/api/3"
    [model] = learn(
        [
            session(
                exchange("GET", f"{base}/issue/JJJ-9", 200, issue),
                exchange(
                    "POST",
                    f"{base}/issue/JJJ-9/transitions",
                    204,
                    request={"transition": {"id": "41", "to": {"name": "Done"}}},
                ),
                exchange("GET", f"{base}/issue/10010", 200, done),
            )
        ]
    )

    action = model.operation("transition_issue")
    assert (action.kind, action.resource, action.path) == (
        "action",
        "issue",
        "/rest/api/3/issue/{issueIdOrKey}/transitions",
    )
    [machine] = model.resources["issue"].state_machines
    assert machine.field == "fields.status.name"
    assert [(t.source, t.target, t.operation) for t in machine.transitions] == [
        ("To Do", "Done", "transition_issue")
    ]
    assert [effect.model_dump() for effect in action.effects] == [
        {"field": "fields.status.name", "from_request": "/transition/to/name", "value": None}
    ]


# --- schemas and fields -------------------------------------------------------------------


def _field(model: ServiceModel, name: str) -> Any:
    return model.resources["incident"].fields[name]


def test_numbers_sent_as_strings(servicenow: ServiceModel) -> None:
    assert _field(servicenow, "priority").schema_["x-myna-type"] == "integer"
    assert servicenow.conventions.values_as_strings


def test_enum_with_frequencies(servicenow: ServiceModel) -> None:
    state = _field(servicenow, "state")

    assert state.schema_["enum"] == ["1", "2", "6"]
    assert state.enum_frequencies == {"1": 5, "2": 5, "6": 5}


def test_a_count_that_goes_up_with_every_update_is_no_enum(servicenow: ServiceModel) -> None:
    count = _field(servicenow, "sys_mod_count")

    # 0 -> 1 -> 2 on every incident: the next update takes it to 3.
    assert count.schema_ == {
        "type": "string",
        "x-myna-type": "integer",
        "pattern": "^(?:-?[0-9]+)$",
    }
    # The state went only forward too (1 -> 2 -> 6), but it is a life cycle, not a count.
    assert _field(servicenow, "state").schema_["enum"] == ["1", "2", "6"]


@pytest.mark.parametrize(
    ("moves", "enum"),
    [
        pytest.param(["0", "1"], None, id="went-up-a-count"),
        pytest.param(["0", "2", "1"], ["0", "1", "2"], id="went-down-a-choice"),
        pytest.param([], ["0", "1", "2"], id="never-moved-a-choice"),
    ],
)
def test_a_count_is_told_by_how_it_moves(moves: list[str], enum: list[str] | None) -> None:
    listing = [incident(index, escalation=str(index % 3)) for index in range(12)]
    item = f"{SN}/incident/{HEX[20]}"
    updates = [
        exchange("PATCH", item, 200, {"result": incident(20, escalation=value)}, request={})
        for value in moves
    ]
    [model] = learn(
        [session(exchange("GET", f"{SN}/incident", 200, {"result": listing}), *updates)]
    )

    assert model.resources["incident"].fields["escalation"].schema_.get("enum") == enum


def test_enum_decisions_count_every_record_of_a_long_answer() -> None:
    def record(index: int) -> dict[str, Any]:
        # Wide records: the learner walks only some of a long answer's records.
        filler = {f"field_{column}": f"text {index}-{column}" for column in range(40)}
        kind = "rare" if index == 1 else "abcd"[index % 4]
        return {"sys_id": f"{index:032x}", "kind": kind, **filler}

    records = [record(index) for index in range(100)]
    [model] = learn(
        [
            session(
                exchange("GET", f"{SN}/item", 200, {"result": records}),
                # The same records again: each still counts once.
                exchange("GET", f"{SN}/item", 200, {"result": records}),
                exchange("GET", f"{SN}/item?sysparm_offset=50", 200, {"result": records[50:]}),
            )
        ]
    )

    kind = model.resources["item"].fields["kind"]
    assert kind.enum_frequencies == {"a": 25, "b": 24, "c": 25, "d": 25, "rare": 1}
    assert kind.schema_["enum"] == ["a", "b", "c", "d", "rare"]


def test_datetime_format_of_the_service(servicenow: ServiceModel) -> None:
    assert _field(servicenow, "sys_created_on").schema_["format"] == "date-time"
    assert servicenow.conventions.datetime_format == "%Y-%m-%d %H:%M:%S"


def test_sequence_numbers_get_a_generator(servicenow: ServiceModel) -> None:
    generator = _field(servicenow, "number").generator

    assert (generator.kind, generator.prefix, generator.width) == ("sequence", "INC", 7)
    assert generator.start == 10016


def test_link_value_reference_names_its_table(servicenow: ServiceModel) -> None:
    reference = _field(servicenow, "caller_id").reference

    assert (reference.resource, reference.style) == ("sys_user", "link_value")


def test_plain_id_reference_from_values_matching_other_ids() -> None:
    base = "https://x.example.com/api/v1"
    [model] = learn(
        [
            session(
                exchange("GET", f"{base}/users", 200, [{"id": "u_1a2b3c4d"}, {"id": "u_5e6f7a8b"}]),
                exchange(
                    "GET",
                    f"{base}/orders",
                    200,
                    [{"id": 1, "owner": "u_1a2b3c4d"}, {"id": 2, "owner": "u_5e6f7a8b"}],
                ),
            )
        ]
    )

    reference = model.resources["order"].fields["owner"].reference
    assert reference is not None
    assert (reference.resource, reference.style) == ("user", "id")


# --- roles --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "roles"),
    [
        pytest.param("sys_id", {"server_generated", "read_only", "immutable", "required"}, id="id"),
        pytest.param(
            "short_description", {"required_on_create", "immutable", "required"}, id="sent"
        ),
        pytest.param("caller_id", {"required_on_create", "immutable", "required"}, id="reference"),
        pytest.param("state", {"required", "has_default"}, id="changes-with-updates"),
        pytest.param(
            "priority",
            {"server_generated", "read_only", "immutable", "required", "has_default"},
            id="defaulted",
        ),
    ],
)
def test_field_roles(servicenow: ServiceModel, name: str, roles: set[str]) -> None:
    spec = _field(servicenow, name)
    flags = {
        "server_generated",
        "read_only",
        "required_on_create",
        "immutable",
        "required",
        "has_default",
    }

    assert {flag for flag in flags if getattr(spec, flag)} == roles


def test_default_is_what_create_answered_when_the_request_left_it_out(
    servicenow: ServiceModel,
) -> None:
    assert _field(servicenow, "state").default == "1"


# --- conventions --------------------------------------------------------------------------


def test_envelope(servicenow: ServiceModel) -> None:
    envelope = servicenow.conventions.envelope

    assert (envelope.style, envelope.item_key, envelope.list_key) == ("wrapped", "result", "result")


def test_pagination_with_link_and_total_headers(servicenow: ServiceModel) -> None:
    pagination = servicenow.conventions.pagination

    assert pagination.style == "limit_offset"
    assert (pagination.limit_param, pagination.offset_param) == ("sysparm_limit", "sysparm_offset")
    assert pagination.link_header
    assert pagination.total_header == "X-Total-Count"


def test_servicenow_query_language(servicenow: ServiceModel) -> None:
    assert servicenow.conventions.query_language == "servicenow"


def test_error_template_has_placeholders(servicenow: ServiceModel) -> None:
    shape = servicenow.error_shape(403)
    assert shape is not None

    assert shape.template == {
        "error": {"message": "{message}", "detail": "{detail}"},
        "status": "failure",
    }
    fallback = servicenow.error_shape(404)
    assert fallback is not None
    assert fallback.status is None


def test_basic_auth_and_its_401_answer(servicenow: ServiceModel) -> None:
    auth = servicenow.conventions.auth

    assert auth.scheme == "basic"
    assert auth.unauthorized_status == 401
    assert auth.unauthorized_headers == {"WWW-Authenticate": 'Basic realm="Service-now"'}
    assert auth.unauthorized_body["error"]["message"] == "User Not Authenticated"


def test_salesforce_conventions() -> None:
    base = "https://x.my.salesforce.com/services/data/v50.0"
    record = {
        "attributes": {
            "type": "User",
            "url": "/services/data/v50.0/sobjects/User/005FECBB8C2B44CYXS",
        },
        "Id": "005FECBB8C2B44CYXS",
        "Name": "Ada",
    }
    other = {
        **record,
        "Id": "005Do000000QXYZIA4",
        "attributes": {
            "type": "User",
            "url": "/services/data/v50.0/sobjects/User/005Do000000QXYZIA4",
        },
    }
    [model] = learn(
        [
            session(
                exchange(
                    "POST",
                    "https://login.salesforce.com/services/oauth2/token",
                    200,
                    {"access_token": "[REDACTED]", "token_type": "Bearer"},
                ),
                exchange(
                    "GET",
                    f"{base}/query?q=SELECT+Id,Name+FROM+User",
                    200,
                    {
                        "totalSize": 2,
                        "done": False,
                        "nextRecordsUrl": "/services/data/v50.0/query/01g-2000",
                        "records": [record, other],
                    },
                ),
                exchange(
                    "GET",
                    f"{base}/sobjects/User/describe",
                    401,
                    [{"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}],
                    response_headers={"WWW-Authenticate": "Token"},
                ),
            )
        ]
    )

    conventions = model.conventions
    assert conventions.query_language == "soql"
    assert conventions.envelope.model_dump(exclude={"evidence"}) == {
        "style": "wrapped",
        "item_key": None,
        "list_key": "records",
        "total_key": "totalSize",
        "next_key": "nextRecordsUrl",
        "done_key": "done",
        "record_attributes": True,
        "request_key": None,
        "extra": {},
    }
    assert conventions.pagination.style == "next_url"
    assert (conventions.auth.scheme, conventions.auth.token_path) == (
        "oauth2",
        "/services/oauth2/token",
    )
    user = model.resources["User"]
    assert (user.id_field, user.id_format.kind, user.id_format.prefix, user.id_format.width) == (
        "Id",
        "salesforce",
        "005",
        18,
    )
    assert user.item_path == "/services/data/v50.0/sobjects/User/{Id}"
    assert model.operation("query").kind == "query"


# --- behaviour ----------------------------------------------------------------------------


def test_state_machine_from_ordered_observations(servicenow: ServiceModel) -> None:
    [machine] = servicenow.resources["incident"].state_machines

    assert machine.field == "state"
    assert machine.initial == ["1"]
    assert [(t.source, t.target, t.operation) for t in machine.transitions] == [
        (None, "1", "create_incident"),
        ("1", "2", "update_incident"),
        ("2", "6", "update_incident"),
    ]
    assert machine.enforce


def test_refused_transition_keeps_status_and_message(servicenow: ServiceModel) -> None:
    [refused] = servicenow.resources["incident"].state_machines[0].refused

    assert (refused.source, refused.target, refused.status, refused.message) == (
        "2",
        "7",
        403,
        "Invalid state transition",
    )


def test_fields_set_and_changed_on_entering_a_state(servicenow: ServiceModel) -> None:
    [machine] = servicenow.resources["incident"].state_machines

    # The client sent close_code; the server stamped resolved_at: only the first is required.
    assert machine.required_on_entry == {"6": ["close_code"]}
    # sys_mod_count changes with every write, so it says nothing about entering Resolved.
    assert machine.changes_on_entry == {"6": ["close_code", "resolved_at"]}


def test_a_status_the_server_moves_in_step_with_another_is_not_enforced() -> None:
    url = "https://x.example.com/api/v1/tickets"
    created = {"id": 1, "status": "open", "phase": "intake"}
    closed = {"id": 1, "status": "closed", "phase": "done"}
    [model] = learn(
        [
            session(
                exchange("POST", url, 201, created, request={"status": "open"}),
                exchange("PATCH", f"{url}/1", 200, closed, request={"status": "closed"}),
            )
        ]
    )

    machines = {m.field: m for m in model.resources["ticket"].state_machines}
    assert machines["status"].enforce
    assert not machines["phase"].enforce


def test_status_field_seen_only_in_listings_is_not_enforced() -> None:
    records = [{"id": index, "status": status} for index, status in enumerate("aabbcc")]
    [model] = learn(
        [session(exchange("GET", "https://x.example.com/api/v1/tickets", 200, records))]
    )

    [machine] = model.resources["ticket"].state_machines
    assert machine.states == ["a", "b", "c"]
    assert machine.transitions == []
    assert not machine.enforce


# --- tool calls ---------------------------------------------------------------------------


def test_tool_calls_become_operations_resources_and_id_flow() -> None:
    created = {"sys_id": HEX[1], "number": "INC0010001", "state": "1"}
    resolved = {**created, "state": "6"}
    calls: list[Any] = [
        ToolCall("c1", "create_incident", {"short_description": "Printer"}, created),
        ToolCall("c2", "get_incident", {"sys_id": HEX[1]}, created),
        ToolCall("c3", "resolve_incident", {"sys_id": HEX[1], "close_code": "Solved"}, resolved),
        ToolCall("c4", "search_incidents", {"query": "active=true"}, [resolved]),
    ]
    [model] = learn([Session(id="agent", events=calls)], service="itsm-tools")

    kinds = {op.id: (op.kind, op.resource) for op in model.operations}
    assert kinds == {
        "create_incident": ("create", "incident"),
        "get_incident": ("get", "incident"),
        "resolve_incident": ("action", "incident"),
        "search_incidents": ("query", "incident"),
    }
    get = model.operation("get_incident")
    # The argument naming the record is its id in the path; nothing is left for a body.
    assert [(p.name, p.role, p.location) for p in get.parameters] == [("sys_id", "id", "path")]
    assert get.path == "/tools/get_incident/{sys_id}"
    assert get.request_schema is None
    resolve = model.operation("resolve_incident")
    assert resolve.request_schema is not None
    assert list(resolve.request_schema["properties"]) == ["close_code"]
    assert [(e.field, e.value) for e in resolve.effects] == [("state", "6")]
    incident = model.resources["incident"]
    assert incident.id_field == "sys_id"
    [machine] = incident.state_machines
    assert [(t.source, t.target, t.operation) for t in machine.transitions] == [
        (None, "1", "create_incident"),
        ("1", "6", "resolve_incident"),
    ]


@pytest.mark.parametrize(
    "definition",
    [
        {"name": "get_incident", "description": "Read one.", "inputSchema": {"type": "object"}},
        {"name": "get_incident", "description": "Read one.", "input_schema": {"type": "object"}},
        {
            "type": "function",
            "function": {
                "name": "get_incident",
                "description": "Read one.",
                "parameters": {"type": "object"},
            },
        },
    ],
    ids=["mcp", "anthropic", "openai"],
)
def test_tool_definitions_in_the_session_are_kept_and_offered(definition: Any) -> None:
    calls: list[Any] = [ToolCall("c1", "get_incident", {"sys_id": HEX[1]}, {"sys_id": HEX[1]})]
    unused = {"name": "delete_incident", "description": "Delete one."}
    metadata = {"tools": [definition, unused, "not a tool"]}
    [model] = learn([Session(id="agent", events=calls, metadata=metadata)], service="t")

    tool = model.operation("get_incident").tool
    assert tool is not None
    assert (tool.description, tool.input_schema) == ("Read one.", {"type": "object"})
    assert model.operation("delete_incident").kind == "delete"


def test_tool_results_in_display_value_pairs_are_learned_as_values() -> None:
    def shown(code: str, label: str) -> dict[str, Any]:
        return {
            "sys_id": {"display_value": HEX[1], "value": HEX[1]},
            "state": {"display_value": label, "value": code},
        }

    calls: list[Any] = [
        ToolCall("c1", "create_incident", {"short_description": "Printer"}, shown("1", "New")),
        ToolCall("c2", "resolve_incident", {"sys_id": HEX[1]}, shown("6", "Resolved")),
    ]
    [model] = learn([Session(id="agent", events=calls)], service="itsm-tools")

    incident = model.resources["incident"]
    [machine] = incident.state_machines
    assert (incident.id_field, incident.id_format.kind) == ("sys_id", "hex32")
    assert incident.fields["state"].schema_["type"] == "string"
    assert machine.labels == {"1": "New", "6": "Resolved"}


# --- update -------------------------------------------------------------------------------


def test_update_merges_new_traces_and_keeps_pinned_facts(servicenow: ServiceModel) -> None:
    reviewed = servicenow.model_copy(deep=True)
    state = reviewed.resources["incident"].fields["state"]
    state.schema_ = {"type": "string", "enum": ["1", "2", "6", "7"]}
    state.evidence = Evidence(samples=1, pinned=True)
    extra = {**servicenow_lifecycle()[0].exchanges[-1].response_body.value["result"], "state": "8"}
    more = [
        session(
            exchange(
                "GET", f"{SN}/incident/{HEX[5]}", 200, {"result": {**extra, "sys_id": HEX[5]}}
            ),
            exchange(
                "GET",
                f"{SN}/problem",
                200,
                {"result": [{"sys_id": HEX[6], "number": "PRB0000001"}]},
            ),
        )
    ]

    [updated] = learn(more, update=reviewed)

    assert updated.resources["incident"].fields["state"] == state
    assert "problem" in updated.resources
    assert updated.operation("create_incident") == reviewed.operation("create_incident")
    assert updated.operation("list_problem").kind == "list"
    number = updated.resources["incident"].fields["number"]
    assert (
        number.evidence.samples > reviewed.resources["incident"].fields["number"].evidence.samples
    )


def test_a_pinned_field_keeps_the_place_the_service_shows_it_in(
    servicenow: ServiceModel,
) -> None:
    pinned = FieldSpec(name="priority", schema={"type": "string"}, evidence=Evidence(pinned=True))
    overlay = ServiceModel(
        name="servicenow",
        resources={
            "incident": Resource(
                name="incident",
                id_field="sys_id",
                id_format=IdFormat(kind="hex32"),
                fields={"priority": pinned},
            )
        },
    )

    [updated] = learn(servicenow_lifecycle(), update=overlay)

    incident = updated.resources["incident"]
    assert list(incident.fields) == list(servicenow.resources["incident"].fields)
    assert incident.fields["priority"] == pinned


def test_ids_wrapped_in_display_value_objects_do_not_break_learning() -> None:
    def record(index: int) -> dict[str, Any]:
        sys_id = {"display_value": HEX[index], "value": HEX[index]}
        return {"sys_id": sys_id, "state": {"display_value": "New", "value": "1"}}

    first = {"result": [{**record(1), "sys_id": HEX[1]}, record(2), record(3)]}
    page = {"result": [record(4), record(5), record(6)]}
    [model] = learn(
        [
            session(
                exchange("GET", f"{SN}/incident?sysparm_display_value=all", 200, first),
                exchange("GET", f"{SN}/incident?sysparm_display_value=all", 200, page),
                exchange("GET", f"{SN}/incident?sysparm_display_value=all", 200, page),
            )
        ]
    )

    assert model.operation("list_incident").evidence.samples == 3


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["id", "sys_id", "key", "state", "name", "result"]), inner, max_size=4
        )
    ),
    max_leaves=10,
)
_segments = st.sampled_from(["api", "v1", "items", "42", "JJJ-9", HEX[1], "search", "table", "x"])


@st.composite
def _exchanges(draw: st.DrawFn) -> Any:
    path = "/".join(draw(st.lists(_segments, max_size=4)))
    return exchange(
        draw(st.sampled_from(["GET", "POST", "PATCH", "PUT", "DELETE"])),
        f"https://{draw(st.sampled_from(['a.example.com', 'b.example.org']))}/{path}",
        draw(st.sampled_from([200, 201, 204, 400, 401, 404, 500])),
        draw(_json_values),
        request=draw(_json_values),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_exchanges(), max_size=6), min_size=1, max_size=3))
def test_any_traffic_learns_a_valid_model_or_says_why_not(batches: list[list[Any]]) -> None:
    sessions = [session(*batch, name=f"s{index}") for index, batch in enumerate(batches)]
    try:
        models, refusal = learn(sessions), ""
    except LearnError as error:
        models, refusal = [], str(error)

    assert models or "nothing to learn" in refusal
    for model in models:
        validate(to_openapi(model))
        assert loads(dumps(model)) == model


def test_display_value_pairs_give_state_labels() -> None:
    def record(index: int, code: str, shown: str) -> dict[str, Any]:
        return {
            "sys_id": HEX[index],
            "state": {"display_value": shown, "value": code},
        }

    listing = [record(1, "1", "New"), record(2, "1", "New"), record(3, "6", "Resolved")]
    listing += [record(4, "6", "Resolved")]
    [model] = learn([session(exchange("GET", f"{SN}/incident", 200, {"result": listing}))])

    [machine] = model.resources["incident"].state_machines
    assert machine.field == "state"
    assert machine.states == ["1", "6"]
    assert machine.labels == {"1": "New", "6": "Resolved"}


def test_numbered_fields_are_unique(servicenow: ServiceModel) -> None:
    assert servicenow.resources["incident"].unique == ["sys_id", "number"]


def test_tool_calls_beside_http_traffic_get_a_model_of_their_own() -> None:
    events: list[Any] = [
        exchange("GET", f"{SN}/incident", 200, {"result": [{"sys_id": HEX[1]}]}),
        ToolCall("c1", "get_incident", {"sys_id": HEX[1]}, {"sys_id": HEX[1], "state": "1"}),
    ]

    models = learn([Session(id="mixed", events=events)], service="itsm")

    assert [model.name for model in models] == ["itsm", "itsm-tools"]


def test_plain_and_display_value_records_share_one_state_machine() -> None:
    item = f"{SN}/incident/{HEX[1]}"
    plain = {"sys_id": HEX[1], "state": "1"}
    shown = {"sys_id": HEX[1], "state": {"display_value": "Resolved", "value": "6"}}
    [model] = learn(
        [
            session(
                exchange(
                    "GET", f"{SN}/incident", 200, {"result": [plain, {**plain, "sys_id": HEX[2]}]}
                ),
                exchange("PATCH", item, 200, {"result": shown}, request={"state": "6"}),
            )
        ]
    )

    [machine] = model.resources["incident"].state_machines
    assert machine.field == "state"
    assert [(t.source, t.target, t.operation) for t in machine.transitions] == [
        ("1", "6", "update_incident")
    ]
    assert machine.labels == {"6": "Resolved"}


# --- views, acknowledgements and nested lists ---------------------------------------------


def _shown(index: int, code: str, label: str) -> dict[str, Any]:
    """An incident as `sysparm_display_value=all` answers it."""
    plain = incident(index, code)
    record: dict[str, Any] = {
        name: {"display_value": value, "value": value} for name, value in plain.items()
    }
    record["state"] = {"display_value": label, "value": code}
    record["caller_id"] = {"display_value": "Abel Tuter", **plain["caller_id"]}
    return record


def _labelled(index: int, label: str) -> dict[str, Any]:
    """An incident as `sysparm_display_value=true` answers it."""
    return {**incident(index), "state": label, "priority": "3 - Moderate"}


@pytest.fixture(scope="module")
def shown() -> ServiceModel:
    pairs = [_shown(1, "1", "New"), _shown(2, "2", "In Progress"), _shown(3, "2", "In Progress")]
    labels = [_labelled(4, "New"), _labelled(5, "Resolved"), _labelled(6, "Resolved")]
    [model] = learn(
        [
            session(
                exchange("GET", f"{SN}/incident", 200, {"result": [incident(7), incident(8, "6")]}),
                exchange("GET", f"{SN}/incident?sysparm_display_value=all", 200, {"result": pairs}),
                exchange(
                    "GET", f"{SN}/incident?sysparm_display_value=true", 200, {"result": labels}
                ),
                exchange(
                    "GET",
                    f"{SN}/incident/{HEX[9]}?sysparm_display_value=true",
                    200,
                    {"result": _labelled(9, "Closed")},
                ),
            )
        ]
    )
    return model


def test_display_values_are_views_of_the_values(shown: ServiceModel) -> None:
    incident = shown.resources["incident"]

    assert schemas_naming(to_openapi(shown), "display_value") == []
    assert set(incident.fields["state"].enum_frequencies or ()) == {"1", "2", "6"}
    assert set(incident.fields["priority"].enum_frequencies or ()) == {"3"}
    assert incident.fields["short_description"].schema_ == {"type": "string"}
    assert incident.fields["sys_id"].schema_["pattern"] == "^(?:[0-9a-f]{32})$"
    assert incident.id_format.kind == "hex32"


def test_references_shown_with_display_values_keep_their_link(shown: ServiceModel) -> None:
    caller = shown.resources["incident"].fields["caller_id"]

    assert caller.reference is not None
    assert (caller.reference.resource, caller.reference.style) == ("sys_user", "link_value")
    assert set(caller.schema_["properties"]) == {"link", "value"}


def test_display_value_labels_name_the_states(shown: ServiceModel) -> None:
    [machine] = shown.resources["incident"].state_machines

    assert machine.states == ["1", "2", "6"]
    assert machine.labels == {"1": "New", "2": "In Progress"}


def test_an_answer_in_labels_still_teaches_its_operation(shown: ServiceModel) -> None:
    get = shown.operation("get_incident")
    [parameter] = [p for p in get.parameters if p.location == "query"]

    assert (get.kind, get.resource) == ("get", "incident")
    assert (parameter.name, parameter.role) == ("sysparm_display_value", "fields")
    assert get.evidence.samples == 1


SF = "https://acme.my.salesforce.com/services/data/v59.0/sobjects"
ACCOUNT_IDS = ["0015g0000000001AAA", "0015g0000000002AAA", "0015g0000000003AAA"]


def _account(index: int) -> dict[str, Any]:
    record_id = ACCOUNT_IDS[index]
    return {
        "attributes": {
            "type": "Account",
            "url": f"/services/data/v59.0/sobjects/Account/{record_id}",
        },
        "Id": record_id,
        "Name": f"Acme {index}",
        "Industry": "Retail",
    }


@pytest.fixture(scope="module")
def salesforce() -> ServiceModel:
    events = []
    for index, record_id in enumerate(ACCOUNT_IDS):
        events += [
            exchange(
                "POST",
                f"{SF}/Account",
                201,
                {"id": record_id, "success": True, "errors": []},
                request={"Name": f"Acme {index}", "Industry": "Retail"},
            ),
            exchange("GET", f"{SF}/Account/{record_id}", 200, _account(index)),
        ]
    events.append(
        exchange(
            "PATCH",
            f"{SF}/Account/External_Id__c/ACME-1",
            200,
            {"id": ACCOUNT_IDS[0], "success": True, "errors": [], "created": False},
            request={"Name": "Acme 0"},
        )
    )
    [model] = learn([session(*events)])
    return model


def test_a_create_answered_with_the_new_id_creates_the_object(salesforce: ServiceModel) -> None:
    create = salesforce.operation("create_Account")
    [created] = create.responses

    assert (create.kind, create.resource, create.path) == (
        "create",
        "Account",
        "/services/data/v59.0/sobjects/Account",
    )
    assert created.schema_ is not None
    assert set(created.schema_["properties"]) == {"id", "success", "errors"}


def test_the_create_answer_is_no_resource_and_adds_no_fields(salesforce: ServiceModel) -> None:
    account = salesforce.resources["Account"]

    assert set(salesforce.resources) == {"Account"}
    assert set(account.fields) == {"attributes", "Id", "Name", "Industry"}
    assert (account.id_field, account.id_format.kind) == ("Id", "salesforce")
    assert account.fields["Name"].required_on_create


def test_a_record_get_belongs_to_the_object_the_path_names(salesforce: ServiceModel) -> None:
    get = salesforce.operation("get_Account")

    assert (get.kind, get.resource, get.path) == (
        "get",
        "Account",
        "/services/data/v59.0/sobjects/Account/{accountId}",
    )
    assert salesforce.resources["Account"].item_path == get.path


def test_a_record_found_by_another_field_is_not_addressed_by_its_id(
    salesforce: ServiceModel,
) -> None:
    [upsert] = [op for op in salesforce.operations if "External_Id__c" in op.path]

    assert upsert.resource is None
    assert (
        salesforce.resources["Account"].collection_path == "/services/data/v59.0/sobjects/Account"
    )


def test_nested_lines_without_a_path_of_their_own_stay_a_field() -> None:
    base = "https://erp.example.com/api/erp/v1"

    def receipt(index: int) -> dict[str, Any]:
        return {
            "id": f"GR-00000{index}",
            "purchase_order": f"PO-00000{index}",
            "receipt_date": "2026-03-05",
            "lines": [{"line": 1, "quantity": 4}, {"line": 2, "quantity": 6}],
            "created_at": "2026-03-02T14:25:00Z",
            "updated_at": "2026-03-02T14:25:00Z",
        }

    events = []
    for index in (1, 2):
        request = {key: receipt(index)[key] for key in ("purchase_order", "lines")}
        events += [
            exchange("POST", f"{base}/goods-receipts", 201, receipt(index), request=request),
            exchange("GET", f"{base}/goods-receipts/GR-00000{index}", 200, receipt(index)),
        ]
    [model] = learn([session(*events)])

    receipts = model.resources["goods-receipt"]
    assert set(model.resources) == {"goods-receipt"}
    assert receipts.fields["lines"].schema_["type"] == "array"
    assert receipts.fields["lines"].schema_["items"]["type"] == "object"
    assert model.operation("create_goods-receipt").resource == "goods-receipt"


def test_a_reference_holding_numbered_ids_mints_none() -> None:
    base = "https://erp.example.com/api/erp/v1"
    orders = [{"id": f"PO-00000{index}", "total": "1.00"} for index in range(1, 5)]
    invoices = [
        {"id": f"VI-00000{index}", "purchase_order": f"PO-00000{index}"} for index in range(1, 5)
    ]
    [model] = learn(
        [
            session(
                exchange("GET", f"{base}/purchase-orders", 200, orders),
                exchange("GET", f"{base}/vendor-invoices", 200, invoices),
                exchange("GET", f"{base}/vendor-invoices", 200, invoices),
            )
        ]
    )
    order = model.resources["vendor-invoice"].fields["purchase_order"]

    assert order.reference is not None
    assert order.reference.resource == "purchase-order"
    assert order.generator is None
    assert model.resources["vendor-invoice"].unique == ["id"]


def test_a_field_written_but_always_answered_blank_takes_text() -> None:
    item = f"{SN}/incident/{HEX[1]}"
    answers = [exchange("GET", f"{SN}/incident", 200, {"result": [incident(2), incident(3)]})]
    for note in ("Rebooted.", "Replaced the toner.", "Called the user."):
        answers.append(
            exchange(
                "PATCH",
                item,
                200,
                {"result": {**incident(1), "work_notes": ""}},
                request={"work_notes": note},
            )
        )
    [model] = learn([session(*answers)])

    notes = model.resources["incident"].fields["work_notes"]
    assert notes.schema_ == {"type": "string"}
    assert notes.enum_frequencies is None


def test_a_reviewed_route_matches_whatever_its_parameter_is_called(
    salesforce: ServiceModel,
) -> None:
    reviewed = salesforce.model_copy(deep=True)
    get = reviewed.operation("get_Account")
    get.path = get.path.replace("{accountId}", "{Id}")
    for parameter in get.parameters:
        if parameter.location == "path":
            parameter.name = "Id"
    get.evidence = Evidence(pinned=True)

    [updated] = learn(
        [session(exchange("GET", f"{SF}/Account/{ACCOUNT_IDS[0]}", 200, _account(0)))],
        update=reviewed,
    )

    routes = [(op.method, op.path) for op in updated.operations if op.resource == "Account"]
    assert len(routes) == len(set(routes))
    assert updated.operation("get_Account").path.endswith("/{Id}")
    assert [p.name for p in updated.operation("get_Account").parameters] == ["Id"]
