"""Every vendor's real recordings, learned from scratch with default options, load, serve and
replay: no learned model is refused, no call answers 5xx, and each vendor's conformance stays
at least where `bench/bench_generic.py` measured it (BENCHMARKS.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from myna.errors import LearnError
from myna.mocks import Mock, MockClient
from myna.mocks.conformance import run_conformance
from myna.schemas import learn
from myna.schemas.model import ServiceModel
from myna.traces import read_many
from myna.traces.model import Exchange
from tests.mocks.crud_session import crud_session, seeded_client

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
ITSM_CORPUS = Path(__file__).resolve().parents[2] / "myna" / "backends" / "itsm" / "corpus.jsonl"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")

FLOORS = {
    "har/jupiterone_graph-asana": 0.98,
    "har/jupiterone_graph-gitlab": 0.96,
    "har/jupiterone_graph-jamf": 1.0,
    "har/jupiterone_graph-jira": 0.88,
    "har/jupiterone_graph-knowbe4": 1.0,
    "har/jupiterone_graph-okta": 0.90,
    "har/jupiterone_graph-salesforce": 1.0,
    "har/jupiterone_graph-servicenow": 1.0,
    "har/jupiterone_graph-snipe-it": 1.0,
    "nock/octokit_fixtures": 0.90,
    "vcr/notion-sdk-py": 0.96,
}
"""Share of recorded exchanges answered as recorded, per corpus folder (measured, rounded down)."""

CRUD_SESSIONS_PASSING = 58
"""Resources of the models above on which `crud_session` passes (measured)."""

ONE_WORLD = ("nock/", "vcr/")
"""Write-rich recordings made one after another against one account: replayed in one world."""


def _files(folder: str) -> list[Path]:
    pattern = "*.har" if folder.startswith("har/") else "*.json" if "nock" in folder else "*.yaml"
    return sorted((CORPUS / folder).glob(pattern))


@pytest.mark.parametrize("folder", sorted(FLOORS))
def test_each_vendor_replays_at_least_its_measured_share(folder: str) -> None:
    sessions = list(read_many(_files(folder)))
    total = matched = 0
    for model in learn(sessions):
        report = run_conformance(model, sessions, one_world=folder.startswith(ONE_WORLD))
        total += report.total
        matched += report.matched
        assert not [m for m in report.mismatches if m.status >= 500], folder

    assert matched / total >= FLOORS[folder]


def test_the_readme_main_job_replays_its_measured_share() -> None:
    sessions = list(read_many([ITSM_CORPUS]))
    [model] = learn(sessions, service="itsm")

    report = run_conformance(model, sessions)

    assert report.matched / report.total >= 0.97


def _every_file() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return [str(path.relative_to(CORPUS)) for folder in FLOORS for path in _files(folder)]


@pytest.mark.parametrize("name", _every_file())
def test_every_recording_alone_learns_a_mock_that_loads_and_never_answers_5xx(name: str) -> None:
    sessions = list(read_many([CORPUS / name]))
    if not any(_learnable(exchange) for s in sessions for exchange in s.exchanges):
        # Nothing but refusals (a bad key's 401) or files (a tarball): no service to learn.
        with pytest.raises(LearnError, match="nothing to learn"):
            learn(sessions)
        return
    for model in learn(sessions):
        client = MockClient(Mock(model), headers=_credentials(model))
        for operation in model.operations:
            path = re.sub(r"\{[^}]+\}", "1", operation.path)
            answer = client.request(operation.method, path, json={} if _sends(operation) else None)
            assert answer.status < 500, (name, operation.id, answer.json())


def _learnable(exchange: Exchange) -> bool:
    accepted = 200 <= exchange.status < 300
    return accepted and (exchange.response_body.is_json or exchange.method != "GET")


def _sends(operation: object) -> bool:
    return getattr(operation, "method", "GET") in ("POST", "PUT", "PATCH")


def _credentials(model: ServiceModel) -> dict[str, str]:
    return {"Authorization": "Bearer token"} if model.conventions.auth.scheme != "none" else {}


def _vendor_models() -> list[tuple[str, ServiceModel]]:
    found: list[tuple[str, ServiceModel]] = []
    for folder in sorted(FLOORS):
        sessions = list(read_many(_files(folder)))
        found += [(folder, model) for model in learn(sessions)]
    return found


@pytest.fixture(scope="module")
def vendor_models() -> list[tuple[str, ServiceModel]]:
    return _vendor_models()


def test_an_agent_session_of_crud_calls_passes_on_the_resources_of_every_vendor(
    vendor_models: list[tuple[str, ServiceModel]],
) -> None:
    sessions = failures = 0
    problems: list[str] = []
    for folder, model in vendor_models:
        client = seeded_client(model)
        for resource in model.resources.values():
            kinds = {op.kind: op for op in model.operations if op.resource == resource.name}
            if not {"create", "get", "delete"} <= kinds.keys():
                continue
            sessions += 1
            problem = crud_session(client, model, resource, kinds)
            if problem is not None:
                failures += 1
                problems.append(f"{folder} {resource.name}: {problem}")

    print("\n".join(problems))
    assert sessions >= 61
    assert sessions - failures >= CRUD_SESSIONS_PASSING, "\n".join(problems)
