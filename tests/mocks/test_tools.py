"""Tool definitions derived from a service model, and tool calls mapped back to HTTP requests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from unittest.mock import ANY
from urllib.parse import unquote

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from myna.errors import MockError
from myna.mocks.tools import (
    HttpCall,
    Toolbox,
    ToolFormat,
    call_for_tool,
    mcp_tools,
    openai_tools,
    register_tools_command,
    tool_name,
    tool_names,
)
from myna.schemas.model import (
    Conventions,
    Effect,
    FieldSpec,
    IdFormat,
    Operation,
    Pagination,
    Parameter,
    Resource,
    ServiceModel,
    StateMachine,
    Transition,
)

TABLE = "/api/now/table/incident"
ITEM = TABLE + "/{sys_id}"


def incident_model() -> ServiceModel:
    incident = Resource(
        name="incident",
        collection_path=TABLE,
        item_path=ITEM,
        id_field="sys_id",
        id_format=IdFormat(kind="hex32"),
        fields={
            "sys_id": FieldSpec(name="sys_id", schema={"type": "string"}, server_generated=True),
            "number": FieldSpec(name="number", schema={"type": "string"}, server_generated=True),
            "short_description": FieldSpec(
                name="short_description",
                schema={"type": "string", "x-myna-note": "internal"},
                required_on_create=True,
            ),
            "state": FieldSpec(name="state", schema={"type": "string", "enum": ["1", "2", "6"]}),
            "close_code": FieldSpec(name="close_code", schema={"type": "string"}),
            "sys_updated_on": FieldSpec(
                name="sys_updated_on", schema={"type": "string"}, read_only=True
            ),
        },
        state_machines=[
            StateMachine(
                field="state",
                states=["1", "2", "6"],
                labels={"1": "New", "2": "In Progress", "6": "Resolved"},
                initial=["1"],
                transitions=[
                    Transition(source=None, target="1"),
                    Transition(source="1", target="2"),
                    Transition(source="2", target="6"),
                ],
                required_on_entry={"6": ["close_code"]},
            )
        ],
    )
    sys_id = Parameter(name="sys_id", location="path", required=True, role="id")
    return ServiceModel(
        name="itsm",
        conventions=Conventions(query_language="servicenow"),
        resources={"incident": incident},
        operations=[
            Operation(
                id="listIncident",
                method="GET",
                path=TABLE,
                kind="list",
                resource="incident",
                parameters=[
                    Parameter(name="sysparm_query", location="query", role="query"),
                    Parameter(
                        name="sysparm_limit",
                        location="query",
                        role="limit",
                        schema={"type": "integer", "minimum": 1},
                    ),
                    Parameter(name="sysparm_display_value", location="query", role="other"),
                    Parameter(name="Accept", location="header"),
                ],
            ),
            Operation(
                id="getIncident",
                method="GET",
                path=ITEM,
                kind="get",
                resource="incident",
                parameters=[sys_id],
            ),
            Operation(
                id="createIncident", method="POST", path=TABLE, kind="create", resource="incident"
            ),
            Operation(
                id="updateIncident",
                method="PATCH",
                path=ITEM,
                kind="update",
                resource="incident",
                parameters=[sys_id],
            ),
            Operation(
                id="deleteIncident",
                method="DELETE",
                path=ITEM,
                kind="delete",
                resource="incident",
                parameters=[sys_id],
            ),
            Operation(
                id="resolveIncident",
                method="POST",
                path=ITEM + "/resolve",
                kind="action",
                resource="incident",
                summary="Resolve an incident.",
                parameters=[sys_id],
                request_schema={
                    "type": "object",
                    "properties": {"close_code": {"type": "string"}},
                    "required": ["close_code"],
                    "additionalProperties": False,
                },
                effects=[Effect(field="state", value="6")],
            ),
            Operation(
                id="get_incident",  # collides with getIncident once snake-cased
                method="GET",
                path="/api/now/v2/table/incident/{sys_id}",
                kind="get",
                resource="incident",
                parameters=[sys_id],
            ),
            Operation(
                id="replaceIncidentKeepingSysId",
                method="PUT",
                path=ITEM,
                kind="replace",
                resource="incident",
                parameters=[sys_id],
                # The body repeats the path parameter's name, so it cannot be flattened.
                request_schema={
                    "type": "object",
                    "properties": {"sys_id": {"type": "string"}, "state": {"type": "string"}},
                },
            ),
        ],
    )


@pytest.fixture(scope="module")
def toolbox() -> Toolbox:
    return Toolbox(incident_model())


def tool_schema(toolbox: Toolbox, name: str) -> dict[str, Any]:
    return toolbox.tool(name).input_schema


# --- names ---


@pytest.mark.parametrize(
    ("operation_id", "name"),
    [
        pytest.param("listIncident", "list_incident", id="camel-case"),
        pytest.param("GetHTTPResponseCode", "get_http_response_code", id="acronym"),
        pytest.param("incident.list", "incident_list", id="dots"),
        pytest.param("get /api/now/table/{sys_id}", "get_api_now_table_sys_id", id="route-like"),
        pytest.param("--", "operation", id="nothing-usable"),
        pytest.param("v2Items", "v2_items", id="digits"),
    ],
)
def test_tool_names_are_snake_case(operation_id: str, name: str) -> None:
    assert tool_name(operation_id) == name


def test_long_names_are_cut_to_64_characters_with_a_digest() -> None:
    long_id = "getTheCurrentlyActiveServiceLevelAgreementBreachesForEveryAssignmentGroup"
    other = long_id + "InRegionEurope"
    assert len(tool_name(long_id)) == 64
    assert tool_name(long_id) != tool_name(other)
    assert tool_name(long_id).startswith("get_the_currently_active_service_level")


@given(st.lists(st.text(max_size=80), max_size=12))
def test_any_operation_ids_give_unique_valid_names(operation_ids: list[str]) -> None:
    names = tool_names(operation_ids)
    assert len(names) == len(operation_ids)
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z0-9_]{1,64}", name) for name in names)


def test_every_tool_name_is_unique_and_valid_for_openai(toolbox: Toolbox) -> None:
    names = [tool.name for tool in toolbox.tools]
    assert len(set(names)) == len(names) == len(incident_model().operations)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) for name in names)
    # getIncident and get_incident snake-case alike; the second one is numbered.
    assert names[1] == "get_incident"
    assert names[6] == "get_incident_2"


def test_token_endpoints_are_not_tools_unless_asked_for() -> None:
    model = incident_model()
    model.operations.append(
        Operation(id="oauthToken", method="POST", path="/oauth_token.do", kind="auth")
    )
    assert "oauth_token" not in {tool.name for tool in Toolbox(model).tools}
    assert "oauth_token" in {tool.name for tool in Toolbox(model, include_auth=True).tools}


# --- schemas and descriptions ---


def test_every_input_schema_is_a_valid_json_schema_object(toolbox: Toolbox) -> None:
    for tool in toolbox.tools:
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object"
        assert "x-myna-note" not in json.dumps(tool.input_schema)


def test_list_tool_takes_query_parameters_with_a_query_language_hint(toolbox: Toolbox) -> None:
    schema = tool_schema(toolbox, "list_incident")
    assert set(schema["properties"]) == {
        "sysparm_query",
        "sysparm_limit",
        "sysparm_display_value",
    }
    assert "ORDERBYDESC" in schema["properties"]["sysparm_query"]["description"]
    assert schema["properties"]["sysparm_limit"]["type"] == "integer"
    assert "required" not in schema
    assert "Filter with a ServiceNow encoded query in `sysparm_query`." in (
        toolbox.tool("list_incident").description
    )
    assert "encoded query" not in toolbox.tool("get_incident").description


def test_a_soql_query_endpoint_says_how_to_query() -> None:
    model = ServiceModel(
        name="crm",
        conventions=Conventions(query_language="soql"),
        operations=[
            Operation(
                id="query",
                method="GET",
                path="/services/data/v60.0/query",
                kind="query",
                parameters=[Parameter(name="q", location="query", role="query", required=True)],
            )
        ],
    )
    tool = Toolbox(model).tool("query")
    assert tool.read_only
    assert tool.description == (
        "Run a SOQL query. HTTP GET /services/data/v60.0/query. Filter with a SOQL query in `q`."
    )
    assert tool.input_schema["required"] == ["q"]
    assert "SELECT Id, Name FROM Account" in tool.input_schema["properties"]["q"]["description"]


def test_list_tools_offer_the_conventions_the_mock_serves() -> None:
    model = incident_model()
    model.conventions.pagination = Pagination(
        style="limit_offset", limit_param="sysparm_limit", offset_param="sysparm_offset"
    )
    properties = Toolbox(model).tool("list_incident").input_schema["properties"]
    # sysparm_limit stays as declared; the offset is implied by the paging convention.
    assert properties["sysparm_limit"] == {"type": "integer", "minimum": 1, "description": ANY}
    assert properties["sysparm_offset"]["type"] == "integer"
    assert Toolbox(model).call("list_incident", {"sysparm_offset": 20}).params == {
        "sysparm_offset": "20"
    }


def test_plain_field_filters_for_services_without_a_query_language() -> None:
    model = incident_model()
    model.conventions.query_language = "fields"
    properties = Toolbox(model).tool("list_incident").input_schema["properties"]
    assert {"number", "state", "short_description"} <= set(properties)
    assert properties["state"]["description"] == "return only records whose state equals this value"


def test_item_tools_require_the_path_parameter(toolbox: Toolbox) -> None:
    schema = tool_schema(toolbox, "get_incident")
    assert schema["required"] == ["sys_id"]
    assert schema["additionalProperties"] is False


def test_create_tool_offers_writable_fields_and_requires_create_fields(toolbox: Toolbox) -> None:
    schema = tool_schema(toolbox, "create_incident")
    assert set(schema["properties"]) == {"short_description", "state", "close_code"}
    assert schema["required"] == ["short_description"]
    assert "1 (New)" in schema["properties"]["state"]["description"]


def test_create_description_names_required_read_only_fields_and_the_state_machine(
    toolbox: Toolbox,
) -> None:
    description = toolbox.tool("create_incident").description
    assert description.startswith("Create an incident record. HTTP POST /api/now/table/incident.")
    assert "Required: short_description." in description
    assert "do not send: number, sys_updated_on" in description
    assert "state is one of 1 (New), 2 (In Progress), 6 (Resolved)" in description
    assert "allowed changes 1->2, 2->6" in description
    assert "moving to 6 (Resolved) requires close_code" in description


def test_action_description_uses_the_summary_and_states_its_effect(toolbox: Toolbox) -> None:
    description = toolbox.tool("resolve_incident").description
    assert description.startswith("Resolve an incident. HTTP POST /api/now/table/incident/")
    assert 'Sets state to "6".' in description
    schema = tool_schema(toolbox, "resolve_incident")
    assert schema["required"] == ["sys_id", "close_code"]


def test_a_body_whose_fields_collide_with_parameters_stays_nested(toolbox: Toolbox) -> None:
    schema = tool_schema(toolbox, "replace_incident_keeping_sys_id")
    assert set(schema["properties"]) == {"sys_id", "body"}
    assert schema["required"] == ["sys_id", "body"]


def test_openai_format(toolbox: Toolbox) -> None:
    rendered = openai_tools(incident_model())
    assert rendered == toolbox.openai()
    first = rendered[0]
    assert first == {
        "type": "function",
        "function": {
            "name": "list_incident",
            "description": toolbox.tools[0].description,
            "parameters": toolbox.tools[0].input_schema,
        },
    }


def test_anthropic_format(toolbox: Toolbox) -> None:
    tool = toolbox.tools[0]
    assert toolbox.anthropic()[0] == {
        "name": "list_incident",
        "description": tool.description,
        "input_schema": tool.input_schema,
    }


def test_mcp_format_validates_as_mcp_tools() -> None:
    from mcp.types import Tool

    rendered = mcp_tools(incident_model())
    tools = [Tool.model_validate(entry) for entry in rendered]
    # Every key we send is one the SDK knows: nothing is silently dropped.
    assert [tool.model_dump(by_alias=True, exclude_none=True) for tool in tools] == rendered
    by_name = {tool.name: tool for tool in tools}
    assert by_name["list_incident"].annotations is not None
    assert by_name["list_incident"].annotations.read_only_hint is True
    assert by_name["delete_incident"].annotations is not None
    assert by_name["delete_incident"].annotations.destructive_hint is True
    assert by_name["get_incident"].input_schema["required"] == ["sys_id"]


# --- tool calls back to HTTP ---


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        pytest.param(
            "list_incident",
            {"sysparm_query": "active=true^ORDERBYnumber", "sysparm_limit": 5},
            HttpCall(
                "GET",
                TABLE,
                {"sysparm_query": "active=true^ORDERBYnumber", "sysparm_limit": "5"},
                None,
            ),
            id="list-query-params-as-strings",
        ),
        pytest.param(
            "list_incident",
            {"sysparm_display_value": True, "sysparm_limit": None},
            HttpCall("GET", TABLE, {"sysparm_display_value": "true"}, None),
            id="booleans-lowercase-none-dropped",
        ),
        pytest.param(
            "get_incident",
            {"sys_id": "a/b c"},
            HttpCall("GET", TABLE + "/a%2Fb%20c", {}, None),
            id="path-parameter-quoted",
        ),
        pytest.param(
            "create_incident",
            {"short_description": "Disk full", "state": "1"},
            HttpCall("POST", TABLE, {}, {"short_description": "Disk full", "state": "1"}),
            id="flat-body",
        ),
        pytest.param(
            "create_incident",
            {"short_description": "x", "u_custom": 7},
            HttpCall("POST", TABLE, {}, {"short_description": "x", "u_custom": 7}),
            id="open-body-takes-extra-fields",
        ),
        pytest.param(
            "update_incident",
            {"sys_id": "abc"},
            HttpCall("PATCH", TABLE + "/abc", {}, {}),
            id="update-with-no-fields-sends-empty-object",
        ),
        pytest.param(
            "resolve_incident",
            {"sys_id": "abc", "close_code": "Solved"},
            HttpCall("POST", TABLE + "/abc/resolve", {}, {"close_code": "Solved"}),
            id="action",
        ),
        pytest.param(
            "replace_incident_keeping_sys_id",
            {"sys_id": "abc", "body": {"sys_id": "abc", "state": "2"}},
            HttpCall("PUT", TABLE + "/abc", {}, {"sys_id": "abc", "state": "2"}),
            id="nested-body",
        ),
        pytest.param(
            "delete_incident",
            {"sys_id": "abc"},
            HttpCall("DELETE", TABLE + "/abc", {}, None),
            id="delete",
        ),
    ],
)
def test_tool_calls_map_back_to_http_requests(
    toolbox: Toolbox, name: str, arguments: dict[str, Any], expected: HttpCall
) -> None:
    assert toolbox.call(name, arguments) == expected


def test_call_for_tool_is_the_same_mapping() -> None:
    method, path, params, body = call_for_tool(incident_model(), "get_incident", {"sys_id": "1"})
    assert (method, path, params, body) == ("GET", TABLE + "/1", {}, None)


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        pytest.param("no_such_tool", {}, "no tool 'no_such_tool'", id="unknown-tool"),
        pytest.param("get_incident", {}, "needs 'sys_id'", id="missing-path-argument"),
        pytest.param("get_incident", {"sys_id": ""}, "needs a value for 'sys_id'", id="empty-path"),
        pytest.param(
            "get_incident", {"sys_id": "1", "verbose": True}, "no argument 'verbose'", id="unknown"
        ),
        pytest.param(
            "resolve_incident",
            {"sys_id": "1", "close_code": "x", "extra": 1},
            "no argument 'extra'",
            id="closed-body-refuses-extra",
        ),
    ],
)
def test_bad_tool_calls_name_the_problem(
    toolbox: Toolbox, name: str, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(MockError, match=re.escape(message)):
        toolbox.call(name, arguments)


@given(st.text(min_size=1), st.dictionaries(st.sampled_from(["state", "close_code"]), st.text()))
def test_any_path_value_travels_as_one_quoted_segment(sys_id: str, fields: dict[str, str]) -> None:
    call = Toolbox(incident_model()).call("update_incident", {"sys_id": sys_id, **fields})
    prefix = TABLE + "/"
    assert call.path.startswith(prefix)
    segment = call.path[len(prefix) :]
    assert "/" not in segment
    assert unquote(segment) == sys_id
    assert call.json_body == fields


def test_every_tool_called_with_its_required_arguments_fills_its_route(toolbox: Toolbox) -> None:
    for tool in toolbox.tools:
        arguments = {name: "x" for name in tool.input_schema.get("required", [])}
        if "body" in arguments:
            arguments["body"] = {}
        call = toolbox.call(tool.name, arguments)
        assert call.method == tool.method
        assert "{" not in call.path


# --- CLI ---


@pytest.fixture
def cli() -> typer.Typer:
    app = typer.Typer()
    register_tools_command(app)

    @app.callback()
    def root() -> None:
        """Keep `tools` a subcommand."""

    return app


@pytest.mark.parametrize("format_", ["openai", "anthropic", "mcp"])
def test_tools_command_prints_the_definitions(
    cli: typer.Typer, tmp_path: Path, format_: ToolFormat
) -> None:
    from myna.schemas.openapi import save

    model = incident_model()
    model_file = tmp_path / "itsm.yaml"
    save(model, model_file)
    result = CliRunner().invoke(cli, ["tools", str(model_file), "--format", format_])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == Toolbox(model).render(format_)


def test_tools_command_writes_a_file(cli: typer.Typer, tmp_path: Path) -> None:
    from myna.schemas.openapi import save

    model_file = tmp_path / "itsm.yaml"
    save(incident_model(), model_file)
    out = tmp_path / "tools.json"
    result = CliRunner().invoke(cli, ["tools", str(model_file), "-f", "mcp", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert len(json.loads(out.read_text())) == 8


def test_tools_command_refuses_an_unknown_format(cli: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["tools", str(tmp_path / "m.yaml"), "--format", "xml"])
    assert result.exit_code == 2


# --- models learned from real recordings ---

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "har"


@pytest.mark.corpus
@pytest.mark.parametrize(
    "recordings",
    ["jupiterone_graph-servicenow", "jupiterone_graph-salesforce", "jupiterone_graph-jira"],
)
def test_tools_of_models_learned_from_real_recordings(recordings: str) -> None:
    from mcp.types import Tool

    from myna.schemas import learn
    from myna.traces import read

    files = sorted((CORPUS / recordings).rglob("*.har"))
    if not files:
        pytest.skip(f"no recordings under {CORPUS / recordings}")
    models = learn([session for file in files for session in read(file)])
    assert models
    for model in models:
        toolbox = Toolbox(model)
        assert len({tool.name for tool in toolbox.tools}) == len(toolbox.tools)
        for tool, rendered in zip(toolbox.tools, toolbox.mcp(), strict=True):
            Draft202012Validator.check_schema(tool.input_schema)
            assert Tool.model_validate(rendered).model_dump(by_alias=True, exclude_none=True) == (
                rendered
            )
            assert tool.description.startswith(tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            required = {name: "x" for name in tool.input_schema.get("required", [])}
            assert "{" not in toolbox.call(tool.name, required).path
