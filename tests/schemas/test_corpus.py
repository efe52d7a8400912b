"""Learning the real recordings in ../shared/corpus/har (skipped when the corpus is absent)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from myna.schemas import learn
from myna.schemas.model import ServiceModel
from myna.schemas.openapi import dumps, loads, to_openapi
from myna.traces import read_many
from myna.traces.model import Body, Exchange, Session
from tests.schemas.traffic import schemas_naming

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "har"

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not present at {CORPUS}"),
]


def _learn(name: str) -> dict[str, ServiceModel]:
    files = sorted((CORPUS / name).glob("*.har"))
    return {model.name: model for model in learn(read_many(files))}


@pytest.fixture(scope="module")
def servicenow() -> ServiceModel:
    return _learn("jupiterone_graph-servicenow")["servicenow"]


@pytest.fixture(scope="module")
def salesforce() -> ServiceModel:
    return _learn("jupiterone_graph-salesforce")["salesforce"]


@pytest.fixture(scope="module")
def jira() -> dict[str, ServiceModel]:
    return _learn("jupiterone_graph-jira")


def test_servicenow_has_a_resource_per_table(servicenow: ServiceModel) -> None:
    assert {"sys_user", "sys_user_group", "sys_user_grmember", "incident", "sys_db_object"} <= set(
        servicenow.resources
    )
    assert any(name.startswith("cmdb_ci_") for name in servicenow.resources)


def test_servicenow_items_are_addressed_by_hex32_sys_id(servicenow: ServiceModel) -> None:
    for resource in servicenow.resources.values():
        assert resource.id_field == "sys_id"
        assert resource.id_format.kind == "hex32"
        assert resource.item_path == f"/api/now/table/{resource.name}/{{sys_id}}"
    get = servicenow.operation("get_sys_db_object")
    assert get.path == "/api/now/table/sys_db_object/{sys_id}"


def test_servicenow_link_value_references(servicenow: ServiceModel) -> None:
    caller = servicenow.resources["incident"].fields["caller_id"].reference
    group = servicenow.resources["sys_user_grmember"].fields["group"].reference

    assert caller is not None
    assert (caller.resource, caller.style) == ("sys_user", "link_value")
    assert group is not None
    assert group.resource == "sys_user_group"


def test_servicenow_conventions(servicenow: ServiceModel) -> None:
    conventions = servicenow.conventions

    assert (conventions.envelope.style, conventions.envelope.list_key) == ("wrapped", "result")
    assert conventions.pagination.link_header
    assert conventions.pagination.total_header == "X-Total-Count"
    assert conventions.pagination.limit_param == "sysparm_limit"
    assert conventions.values_as_strings
    assert conventions.datetime_format == "%Y-%m-%d %H:%M:%S"


def test_servicenow_error_template_and_basic_401(servicenow: ServiceModel) -> None:
    shape = servicenow.error_shape(401)
    auth = servicenow.conventions.auth

    assert shape is not None
    assert shape.template == {
        "error": {"message": "{message}", "detail": "{detail}"},
        "status": "failure",
    }
    assert auth.scheme == "basic"
    assert auth.unauthorized_headers == {"WWW-Authenticate": 'Basic realm="Service-now"'}
    assert auth.unauthorized_body == {
        "error": {
            "message": "User Not Authenticated",
            "detail": "Required to provide Auth information",
        },
        "status": "failure",
    }


def test_servicenow_incident_states_are_known(servicenow: ServiceModel) -> None:
    machines = {
        machine.field: machine for machine in servicenow.resources["incident"].state_machines
    }

    assert set(machines["state"].states) >= {"1", "2", "7"}


def test_salesforce_soql_endpoint_and_record_envelope(salesforce: ServiceModel) -> None:
    query = salesforce.operation("query")
    envelope = salesforce.conventions.envelope

    assert (query.method, query.path, query.kind) == ("GET", "/services/data/v50.0/query", "query")
    assert salesforce.conventions.query_language == "soql"
    assert (envelope.list_key, envelope.total_key, envelope.done_key) == (
        "records",
        "totalSize",
        "done",
    )
    assert envelope.record_attributes


def test_salesforce_objects_have_18_character_ids(salesforce: ServiceModel) -> None:
    for name in ("User", "UserRole", "Profile", "Group", "PermissionSet"):
        resource = salesforce.resources[name]
        assert resource.id_field == "Id"
        assert (resource.id_format.kind, resource.id_format.width) == ("salesforce", 18)
        assert re.fullmatch(r"[0-9A-Za-z]{3}", resource.id_format.prefix)
        assert resource.item_path == f"/services/data/v50.0/sobjects/{name}/{{Id}}"
    assert salesforce.resources["User"].id_format.prefix == "005"


def test_salesforce_auth_is_oauth2_with_its_token_endpoint(salesforce: ServiceModel) -> None:
    auth = salesforce.conventions.auth

    assert (auth.scheme, auth.token_path) == ("oauth2", "/services/oauth2/token")
    assert auth.unauthorized_headers == {"WWW-Authenticate": "Token"}


def test_jira_issue_transitions_are_a_state_changing_action(jira: dict[str, ServiceModel]) -> None:
    server = jira["localhost-8080"]
    action = server.operation("transition_issue")
    [machine] = server.resources["issue"].state_machines

    assert (action.kind, action.resource) == ("action", "issue")
    assert action.path == "/rest/api/2/issue/{issueIdOrKey}/transitions"
    assert machine.field == "fields.status.name"
    assert {"To Do", "Done"} <= set(machine.states)
    assert any(
        t.operation == "transition_issue" and t.target == "Done" for t in machine.transitions
    )
    assert any(t.operation == "create_issue" and t.target == "To Do" for t in machine.transitions)
    assert [(e.field, e.from_request) for e in action.effects] == [
        ("fields.status.name", "/transition/name")
    ]


def test_jira_cloud_transition_answered_404_is_no_refused_transition(
    jira: dict[str, ServiceModel],
) -> None:
    cloud = jira["atlassian"]
    [machine] = cloud.resources["issue"].state_machines

    assert cloud.operation("transition_issue").kind == "action"
    assert [response.status for response in cloud.operation("transition_issue").responses] == [404]
    assert machine.refused == []


def test_jira_cloud_and_server_are_separate_services(jira: dict[str, ServiceModel]) -> None:
    cloud = jira["atlassian"]
    # The cloud instance's API is under `/rest/api/3`; its root and login pages, which the
    # client probed without a credential, redirected it to the login page: a mock does too.
    assert {op.path for op in cloud.operations if not op.public} <= {
        op.path for op in cloud.operations if op.path.startswith("/rest/api/3/")
    }
    root = cloud.operation("head_root")
    assert (root.method, root.public, [answer.status for answer in root.recorded]) == (
        "HEAD",
        True,
        [302],
    )
    # The server instance also answered under `/test`: one service, two API bases.
    assert jira["localhost-8080"].base_path == ""
    assert {op.path for op in jira["localhost-8080"].operations} >= {
        "/rest/api/2/issue/{issueIdOrKey}",
        "/test/rest/api/2/serverInfo",
    }
    assert "/rest/api/3/project/{projectKey}" in {op.path for op in jira["atlassian"].operations}


def test_every_learned_model_is_valid_openapi_and_byte_stable(
    servicenow: ServiceModel, salesforce: ServiceModel, jira: dict[str, ServiceModel]
) -> None:
    for model in (servicenow, salesforce, *jira.values()):
        validate(to_openapi(model))
        text = dumps(model)
        assert dumps(loads(text)) == text


# --- answers shown as display values ------------------------------------------------------

ITENTIAL = CORPUS.parent / "servicenow_responses" / "itential"
ITSM_CORPUS = Path(__file__).resolve().parents[2] / "myna" / "backends" / "itsm"


@pytest.fixture(scope="module")
def change_management() -> ServiceModel:
    """ServiceNow's Change Management API, which answers every field as a display-value pair
    (the itential adapter's captures from a developer instance), learned as exchanges."""
    if not ITENTIAL.is_dir():
        pytest.skip(f"the captures are not at {ITENTIAL}")
    base = "https://dev58661.service-now.com/api/sn_chg_rest/change/normal"

    def body(stem: str) -> Any:
        text = (ITENTIAL / f"ChangeManagement__{stem}-default.json").read_text(encoding="utf-8")
        return json.loads(text)

    one = body("getNormalChangeRequestById")
    answers = [
        ("GET", base, body("getNormalChangeRequest")),
        ("GET", f"{base}/{one['result']['sys_id']['value']}", one),
        ("POST", base, body("createNormalChangeRequest")),
    ]
    events: list[Any] = [
        Exchange(
            id=f"itential/{index}",
            method=method,
            url=url,
            status=200,
            request_body=Body("json", {"short_description": "x"}) if method == "POST" else Body(),
            response_body=Body("json", answer, "application/json"),
        )
        for index, (method, url, answer) in enumerate(answers)
    ]
    [model] = learn([Session(id="itential", events=events)])
    return model


def test_change_requests_answered_in_pairs_are_learned_as_their_values(
    change_management: ServiceModel,
) -> None:
    [change] = change_management.resources.values()

    assert schemas_naming(to_openapi(change_management), "display_value") == []
    assert change.fields["sys_id"].schema_["pattern"] == "^(?:[0-9a-f]{32})$"
    assert (change.id_field, change.id_format.kind) == ("sys_id", "hex32")
    # One kind of change in every answer: its value, not its label, and no enum (one value
    # alone shows no choice).
    assert change.fields["type"].enum_frequencies is not None
    assert set(change.fields["type"].enum_frequencies) == {"normal"}
    assert "enum" not in change.fields["type"].schema_
    assert change.fields["state"].schema_["type"] == "integer"
    assert change.fields["knowledge"].schema_ == {"type": "boolean"}
    [state] = [machine for machine in change.state_machines if machine.field == "state"]
    assert state.labels["-5"] == "New"


@pytest.fixture(scope="module")
def itsm() -> ServiceModel:
    [model] = learn(read_many([ITSM_CORPUS / "corpus.jsonl"]), service="itsm")
    return model


def test_the_itsm_corpus_read_in_display_values_leaves_plain_incident_fields(
    itsm: ServiceModel,
) -> None:
    incident = itsm.resources["incident"]
    objects = {
        name
        for name, spec in incident.fields.items()
        for branch in spec.schema_.get("anyOf", [spec.schema_])
        if branch.get("type") == "object"
    }
    references = {name for name, spec in incident.fields.items() if spec.reference is not None}

    assert schemas_naming(to_openapi(itsm), "display_value") == []
    assert objects <= references
    assert incident.fields["short_description"].schema_ == {"type": "string"}
    assert incident.fields["sys_id"].schema_["pattern"] == "^(?:[0-9a-f]{32})$"
    assert incident.id_format.kind == "hex32"
    assert all(state.isdigit() for state in incident.fields["state"].schema_["enum"])
    [state] = [machine for machine in incident.state_machines if machine.field == "state"]
    assert state.labels["6"] == "Resolved"
