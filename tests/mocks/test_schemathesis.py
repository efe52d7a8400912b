"""schemathesis against the served `/openapi.json`: no server errors, responses match the schema."""

from __future__ import annotations

import base64

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from myna.mocks.app import create_app
from tests.mocks.conftest import USER, build_mock

APP = create_app(build_mock())
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP)
BASIC = "Basic " + base64.b64encode(":".join(USER).encode()).decode()


@SCHEMA.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_served_api_conforms_to_its_own_document(case: schemathesis.Case) -> None:
    case.call_and_validate(
        headers={"Authorization": BASIC},
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
