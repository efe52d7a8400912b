"""The request schemas the mock compiles from a model: what a client may send."""

from __future__ import annotations

from typing import Any

import pytest

from myna.mocks.contract import ResourceContract, compile_resource
from myna.schemas.model import Conventions, FieldSpec, IdFormat, JsonSchema, Resource

SERVICENOW_TIME = {"type": "string", "format": "date-time", "pattern": r"^(?:\d{4}-\d\d-\d\d)?$"}
# A date-time field a corpus read both bare and with sysparm_display_value=all.
LEARNED_AS_UNION = {
    "anyOf": [
        SERVICENOW_TIME,
        {
            "type": "object",
            "properties": {"value": SERVICENOW_TIME, "display_value": SERVICENOW_TIME},
            "required": ["value", "display_value"],
        },
    ]
}
# A journal field: clients write it, every answer shows it empty.
ALWAYS_EMPTY = {"type": "string", "maxLength": 0, "enum": [""]}
EMPTY_OR_DISPLAYED = {
    "anyOf": [
        {"type": "string", "maxLength": 0},
        {"type": "object", "properties": {"display_value": {"type": "string"}}},
    ]
}


def contract(**schemas: JsonSchema) -> ResourceContract:
    fields = {name: FieldSpec(name=name, schema=schema) for name, schema in schemas.items()}
    fields["sys_id"] = FieldSpec(name="sys_id", schema={"type": "string"}, server_generated=True)
    resource = Resource(
        name="change", id_field="sys_id", id_format=IdFormat(kind="hex32"), fields=fields
    )
    conventions = Conventions(values_as_strings=True, datetime_format="%Y-%m-%d %H:%M:%S")
    return compile_resource(resource, conventions)


def accepts(resource: ResourceContract, body: dict[str, Any]) -> bool:
    return resource.create_validator.is_valid(body) and resource.update_validator.is_valid(body)


@pytest.mark.parametrize("schema", [SERVICENOW_TIME, LEARNED_AS_UNION])
def test_a_date_time_field_takes_the_services_own_layout(schema: JsonSchema) -> None:
    change = contract(start_date=schema)
    assert accepts(change, {"start_date": "2026-03-07 22:00:00"})
    assert accepts(change, {"start_date": ""})
    assert not accepts(change, {"start_date": "next Saturday"})
    assert not accepts(change, {"start_date": "2026-03-07T22:00:00Z"})


@pytest.mark.parametrize("schema", [ALWAYS_EMPTY, EMPTY_OR_DISPLAYED])
def test_a_field_clients_write_but_always_read_empty_takes_any_text(schema: JsonSchema) -> None:
    change = contract(comments=schema)
    assert accepts(change, {"comments": "Approved at CAB."})
    assert not accepts(change, {"comments": {"text": "Approved"}})


def test_a_field_read_with_values_keeps_its_learned_constraint() -> None:
    change = contract(risk={"type": "string", "enum": ["", "1", "2"]})
    assert accepts(change, {"risk": "2"})
    assert not accepts(change, {"risk": "7"})
