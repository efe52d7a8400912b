"""The model file: valid OpenAPI 3.1, a lossless and byte-stable round trip, clear edit errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate

from myna.errors import ModelError
from myna.schemas.model import (
    EntryValues,
    Evidence,
    FieldSpec,
    IdFormat,
    Operation,
    Resource,
    ServiceModel,
    StateMachine,
)
from myna.schemas.openapi import dumps, from_openapi, load, loads, save, to_openapi
from tests.schemas.models import servicenow_model


def test_document_is_valid_openapi_31() -> None:
    document = to_openapi(servicenow_model())

    validate(document)

    assert document["openapi"] == "3.1.0"
    assert set(document["paths"]) == {
        "/api/now/table/incident",
        "/api/now/table/incident/{sys_id}",
    }


def test_resource_becomes_component_schema_with_extensions() -> None:
    schema = to_openapi(servicenow_model())["components"]["schemas"]["incident"]

    assert schema["x-myna-resource"]["id_field"] == "sys_id"
    assert schema["properties"]["state"]["enum"] == ["1", "2", "6", "7"]
    assert schema["properties"]["state"]["x-myna-field"]["default"] == "1"
    assert schema["required"] == ["number", "state", "sys_id"]


def test_operation_carries_operation_id_and_extension() -> None:
    get = to_openapi(servicenow_model())["paths"]["/api/now/table/incident/{sys_id}"]["get"]

    assert get["operationId"] == "get_incident"
    assert get["x-myna-operation"]["kind"] == "get"
    assert get["parameters"][0] == {
        "name": "sys_id",
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "x-myna-parameter": {"role": "id"},
    }


def test_round_trip_is_lossless() -> None:
    model = servicenow_model()

    assert from_openapi(to_openapi(model)) == model


def test_save_then_load_then_save_reproduces_the_bytes(tmp_path: Path) -> None:
    first = tmp_path / "model.yaml"
    second = tmp_path / "again.yaml"
    save(servicenow_model(), first)

    save(load(first), second)

    assert first.read_bytes() == second.read_bytes()


def test_saved_keys_are_sorted() -> None:
    text = dumps(servicenow_model())
    top_level = [line.split(":")[0] for line in text.splitlines() if line and line[0] not in " -"]

    assert top_level == sorted(top_level)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        pytest.param(
            lambda doc: doc["components"]["schemas"]["incident"]["properties"]["state"][
                "x-myna-field"
            ].update(required="sometimes"),
            "components.schemas.incident.properties.state.x-myna-field.required",
            id="field-flag-not-boolean",
        ),
        pytest.param(
            lambda doc: doc["components"]["schemas"]["incident"]["x-myna-resource"][
                "id_format"
            ].update(kind="snowflake"),
            "components.schemas.incident.x-myna-resource.id_format.kind",
            id="unknown-id-kind",
        ),
        pytest.param(
            lambda doc: doc["paths"]["/api/now/table/incident"]["get"]["x-myna-operation"].update(
                kind="fetch"
            ),
            "paths./api/now/table/incident.get.x-myna-operation.kind",
            id="unknown-operation-kind",
        ),
        pytest.param(
            lambda doc: doc["x-myna-conventions"]["pagination"].update(style="scroll"),
            "x-myna-conventions.pagination.style",
            id="unknown-pagination",
        ),
        pytest.param(
            lambda doc: doc["components"]["schemas"]["incident"]["x-myna-resource"][
                "state_machines"
            ][0]["sets_on_entry"].update({"7": ["active"]}),
            "components.schemas.incident.x-myna-resource.state_machines.0.sets_on_entry.7",
            id="entry-values-not-a-mapping",
        ),
        pytest.param(
            lambda doc: doc["x-myna-service"].pop("name"),
            "x-myna-service.name",
            id="missing-service-name",
        ),
    ],
)
def test_invalid_edit_names_the_yaml_path_and_field(edit: object, field: str) -> None:
    document = to_openapi(servicenow_model())
    edit(document)  # type: ignore[operator]

    with pytest.raises(ModelError) as raised:
        loads(yaml.safe_dump(document), source="model.yaml")

    assert raised.value.context["field"] == field
    assert "model.yaml" in str(raised.value)


def test_broken_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text("openapi: 3.1.0\npaths: [\n", encoding="utf-8")

    with pytest.raises(ModelError, match="line 3"):
        load(path)


def test_missing_file_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="cannot read"):
        load(tmp_path / "absent.yaml")


_names = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=12))
# Values a state's entry sets come from responses: any JSON scalar, floats included.
_entry_leaf = _json_leaf | st.floats(allow_nan=False, allow_infinity=False)
_state_machines = st.lists(
    st.builds(
        StateMachine,
        field=st.just("state"),
        states=st.lists(_names, max_size=3),
        sets_on_entry=st.dictionaries(
            _names,
            st.builds(
                EntryValues,
                values=st.dictionaries(_names, _entry_leaf, max_size=3),
                evidence=st.builds(Evidence, samples=st.integers(0, 9)),
            ),
            max_size=3,
        ),
    ),
    max_size=1,
)


@st.composite
def _models(draw: st.DrawFn) -> ServiceModel:
    resources: dict[str, Resource] = {}
    for name in draw(st.lists(_names, max_size=3, unique=True)):
        fields = {
            field: FieldSpec(
                name=field,
                schema={"type": draw(st.sampled_from(["string", "integer", "boolean"]))},
                required=draw(st.booleans()),
                default=draw(_json_leaf),
                evidence=Evidence(samples=draw(st.integers(0, 50))),
            )
            for field in draw(st.lists(_names, max_size=4, unique=True))
        }
        resources[name] = Resource(
            name=name,
            collection_path=f"/api/{name}",
            item_path=f"/api/{name}/{{id}}",
            id_field="id",
            id_format=IdFormat(kind=draw(st.sampled_from(["integer", "uuid", "hex32"]))),
            fields=fields,
            state_machines=draw(_state_machines),
        )
    operations = [
        Operation(
            id=f"{kind}_{name}",
            method=method,
            path=f"/api/{name}" if kind in ("list", "create") else f"/api/{name}/{{id}}",
            kind=kind,
            resource=name,
        )
        for name in resources
        for kind, method in (("list", "GET"), ("create", "POST"), ("get", "GET"))
        if draw(st.booleans())
    ]
    return ServiceModel(
        name=draw(_names),
        title=draw(st.none() | st.text(min_size=1, max_size=10)),
        resources=resources,
        operations=operations,
    )


@settings(max_examples=60, deadline=None)
@given(_models())
def test_any_model_round_trips_through_yaml_byte_for_byte(model: ServiceModel) -> None:
    text = dumps(model)

    again = loads(text)

    assert again == model
    assert dumps(again) == text


def test_pinned_facts_are_flagged_beside_the_fact() -> None:
    caller = to_openapi(servicenow_model())["components"]["schemas"]["incident"]["properties"][
        "caller_id"
    ]

    assert caller["x-myna-pinned"] is True
    assert "pinned" not in caller["x-myna-field"]["evidence"]


def test_a_reviewer_pins_a_fact_by_adding_x_myna_pinned() -> None:
    document = to_openapi(servicenow_model())
    document["paths"]["/api/now/table/incident"]["get"]["x-myna-pinned"] = True
    document["components"]["schemas"]["incident"]["properties"]["state"]["x-myna-pinned"] = True

    model = loads(yaml.safe_dump(document))

    assert model.operation("list_incident").evidence.pinned
    assert model.resources["incident"].fields["state"].evidence.pinned
    assert not model.resources["incident"].fields["number"].evidence.pinned
