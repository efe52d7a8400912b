"""schemathesis against mocks learned from real vendors' recordings (no overlay, default options),
served with their recorded records: every check schemathesis has, in the generated phase and the
stateful one (links between operations). No answer is a 5xx, every answer matches the schema the
mock publishes for its status, every status is documented, every request the published schemas
refuse is refused (`negative_data_rejection`: replayed operations check bodies too, and a text
field takes exactly the scalars the document says), and every request they take is taken
(`positive_data_acceptance`): a reference to a record the world does not hold is the 409 of a
conflict with the world, and a path the recordings only showed refused is not published.
Examples are few per operation. Skipped where the shared corpus is absent.

Strings are generated without NUL, which every mock refuses in any body (no database column
holds it) and no schema states."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS as REGISTERED_CHECKS

from myna.mocks.app import create_app
from myna.schemas import learn
from myna.traces import read_many
from tests.mocks.crud_session import recorded_mock

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
RECORDINGS = {
    "notion": ("vcr/notion-sdk-py", "*.yaml"),
    "github": ("nock/octokit_fixtures", "*.json"),
    "gitlab": ("har/jupiterone_graph-gitlab", "*.har"),
    "okta": ("har/jupiterone_graph-okta", "*.har"),
    "servicenow": ("har/jupiterone_graph-servicenow", "*.har"),
}
CREDENTIALS = {
    "Authorization": "Bearer myna-token",
    "Private-Token": "myna-token",
}
CHECKS: list[Callable[..., Any]] = REGISTERED_CHECKS.get_all()
STATEFUL_CHECKS = [check for check in CHECKS if check.__name__ != "negative_data_rejection"]
"""The stateful phase follows links with the data answers gave (what a create stored is what a
get answers); data the schemas refuse is the generated phase's, which sends it to every
operation. A step that mixed both found a replayed operation taking an unknown query parameter
on one CI run and not on the next (listed in the issue notes)."""
REPEATABLE: dict[str, Any] = {"derandomize": True, "database": None}
"""The same examples on every run: a few examples per operation are a sample, and which sample
must not decide whether CI passes. Wider random runs are `st run` against a served mock (see
BENCHMARKS.md); what they found and is not fixed yet is listed in the issue notes."""

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")


def _app(vendor: str) -> Any:
    folder, pattern = RECORDINGS[vendor]
    [model] = learn(read_many(sorted((CORPUS / folder).glob(pattern))))
    # Strict: the mock checks each answer it simulates against its own document too.
    return create_app(recorded_mock(model, strict=True))


def _schema(vendor: str) -> Any:
    schema = schemathesis.openapi.from_asgi("/openapi.json", _app(vendor))
    schema.config.generation.update(allow_x00=False)
    return schema


SCHEMAS = {vendor: _schema(vendor) for vendor in RECORDINGS} if CORPUS.is_dir() else {}


def _generated(vendor: str) -> Any:
    if vendor not in SCHEMAS:
        return pytest.mark.skip(reason="the shared corpus is not here")(lambda: None)

    @SCHEMAS[vendor].parametrize()
    @settings(**REPEATABLE, max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
    def test(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=CREDENTIALS, checks=CHECKS)

    return test


test_notion_generated = _generated("notion")
test_github_generated = _generated("github")
test_gitlab_generated = _generated("gitlab")
test_okta_generated = _generated("okta")
test_servicenow_generated = _generated("servicenow")


@pytest.mark.parametrize("vendor", sorted(RECORDINGS))
def test_stateful_sessions_hold(vendor: str) -> None:
    """Sequences of calls that feed one answer's ids into the next request (OpenAPI links):
    what a create stored is what a get, a list and an update answer with."""
    # A mock of its own: the generated tests before it leave records in the shared one, and
    # what a sequence meets must not depend on which tests ran first.
    machine = _schema(vendor).as_state_machine()

    class Calls(machine):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
            return {"headers": CREDENTIALS}

        def validate_response(self, response: Any, case: schemathesis.Case, **kwargs: Any) -> None:
            case.validate_response(response, checks=STATEFUL_CHECKS)

    Calls.run(
        settings=settings(
            **REPEATABLE,
            max_examples=8,
            stateful_step_count=5,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )


def test_a_paged_list_under_a_path_latin_1_cannot_hold_answers_with_its_links() -> None:
    """Found by the run above: the Link header echoed the decoded path (`/projects/Ā/...`) and
    the server failed to encode it."""

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=_app("gitlab"))
        async with httpx.AsyncClient(transport=transport, base_url="http://mock") as client:
            return await client.get(
                "/api/v4/projects/%C4%80/members/all",
                params={"page": 2, "per_page": 1},
                headers=CREDENTIALS,
            )

    answer = asyncio.run(call())

    assert answer.status_code == 200
    assert "/projects/%C4%80/members/all" in answer.headers["link"]
