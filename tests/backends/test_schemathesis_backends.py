"""schemathesis against each built-in back end as `myna serve` serves it: no server error, every
response matches the published document, no undocumented status, in the generated phase and
the stateful one (links between operations). Examples are few per operation: the ITSM document
alone has 94 operations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from myna.backends import BACKENDS
from myna.mocks.app import create_app
from myna.mocks.cli import served_mock

TOKEN = {"Authorization": "Bearer myna-token"}
CHECKS: list[Callable[..., Any]] = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
]


def _schema(backend: str) -> Any:
    mock = served_mock(backend, admin_token="schemathesis-admin-token")
    mock.strict = True  # the mock checks its own answers too
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(mock))


SCHEMAS = {backend: _schema(backend) for backend in sorted(BACKENDS)}


def _generated(backend: str) -> Any:
    @SCHEMAS[backend].parametrize()
    @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
    def test(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=TOKEN, checks=CHECKS)

    return test


test_itsm_generated = _generated("itsm")
test_crm_generated = _generated("crm")
test_erp_generated = _generated("erp")


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_stateful_links_hold(backend: str) -> None:
    machine = SCHEMAS[backend].as_state_machine()

    class Calls(machine):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
            return {"headers": TOKEN}

        def validate_response(self, response: Any, case: schemathesis.Case, **kwargs: Any) -> None:
            case.validate_response(response, checks=CHECKS)

    Calls.run(
        settings=settings(
            max_examples=5,
            stateful_step_count=4,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )
