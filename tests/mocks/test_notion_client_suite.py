"""notion-client's own test suite (`test_endpoints.py`, notion-client 3.1.0) against a mock
learned from the cassettes it was recorded with, over real HTTP, with playback off.

The mock is learned with default options and no overlay; the suite runs unchanged in a pytest
subprocess, its clients pointed at the mock by `notion_suite_plugin`. The pass share must stay
at or above what BENCHMARKS.md reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from myna.mocks.auth import Credentials
from myna.mocks.serve import Running, serving
from myna.schemas import learn
from myna.traces import read_many
from tests.mocks.crud_session import recorded_mock

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "vcr"
CASSETTES = CORPUS / "notion-sdk-py"
SUITE = CORPUS / "notion-sdk-py-tests"
TOKEN = "ntn_myna_suite_token"
FLOOR = 0.9

pytestmark = pytest.mark.skipif(not SUITE.is_dir(), reason="the shared corpus is not here")


@pytest.fixture(scope="module")
def server() -> Iterator[Running]:
    [model] = learn(read_many(sorted(CASSETTES.glob("*.yaml"))))
    mock = recorded_mock(model, credentials=Credentials(tokens=frozenset({TOKEN})))
    with serving(mock) as running:
        yield running


def _parent_page_id() -> str:
    """The page the suite's recordings created their pages under, as its conftest finds it."""
    cassette = yaml.safe_load((CASSETTES / "test_pages_create.yaml").read_text())
    body = cassette["interactions"][0]["response"]["body"]["string"]
    return str(json.loads(body)["parent"]["page_id"])


def test_notion_clients_own_suite_passes_against_the_learned_mock(
    server: Running, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "MYNA_NOTION_BASE_URL": server.base_url,
        "NOTION_TOKEN": TOKEN,
        "NOTION_TEST_PAGE_ID": _parent_page_id(),
        "PYTHONPATH": str(ROOT),
        "MYNA_SUITE_REPORT": str(tmp_path / "suite.json"),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(SUITE / "test_endpoints.py"),
            "-p",
            "tests.mocks.notion_suite_plugin",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "-rfE",
            "--tb=line",
            f"--rootdir={tmp_path}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    outcomes = json.loads((tmp_path / "suite.json").read_text())
    passed = [name for name, phases in outcomes.items() if phases.get("call") == "passed"]
    clean = [name for name in passed if outcomes[name].get("teardown") == "passed"]

    print(f"notion-client suite: {len(passed)}/{len(outcomes)} passed, {len(clean)} cleaned up")
    assert len(outcomes) > 50, run.stdout[-2000:] + run.stderr[-2000:]
    assert len(passed) / len(outcomes) >= FLOOR, run.stdout[-3000:]
