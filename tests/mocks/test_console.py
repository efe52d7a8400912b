"""The web console end to end: Playwright driving the OS's Chromium against `myna serve`'s app.

Each page is opened as a person would (the token in the URL fragment) and used: the model page
(facts weakest first, state machines drawn, pinning and editing a fact written back to the YAML
byte-stably), worlds (fork, diff, reset), calls arriving live with the rule that refused them,
and benchmark results down to a failing scenario. Chromium comes from Debian's `chromium` package
(`.ci/run` installs it); without it the tests skip, except under CI, where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from myna.itsm.bench import BenchResult, Score, Trial
from myna.mocks.cli import served_mock
from myna.mocks.console.app import CONSOLE_PREFIX
from myna.mocks.serve import Running, server_for, serving_app
from myna.schemas.openapi import load

playwright = pytest.importorskip("playwright.sync_api")

CHROMIUM = Path("/usr/bin/chromium")
ITSM_MODEL = Path(__file__).resolve().parents[2] / "myna/backends/itsm/model.yaml"
TOKEN = "console-test-token"
AUTH = ("myna", "myna")
TABLE = "/api/now/table"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        message = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield launched
        launched.close()


@pytest.fixture
def console(tmp_path: Path) -> Iterator[tuple[Running, Path]]:
    """The ITSM model served from a file of its own, with a results folder beside it."""
    model_file = tmp_path / "itsm.yaml"
    shutil.copy(ITSM_MODEL, model_file)
    results = tmp_path / "results"
    results.mkdir()
    (results / "results.json").write_text(_bench_result().model_dump_json())
    mock = served_mock(str(model_file), admin_token=TOKEN)
    server = server_for(mock, model_file=model_file, results=results)
    with serving_app(server.config.app) as running:
        yield running, model_file


@pytest.fixture
def page(browser: Any, console: tuple[Running, Path]) -> Iterator[Any]:
    opened = browser.new_page(viewport={"width": 1300, "height": 1000})
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(f"{console[0].base_url}{CONSOLE_PREFIX}/#token={TOKEN}")
    opened.wait_for_selector("h1")
    yield opened
    opened.close()
    assert errors == []


def test_the_model_page_lists_facts_weakest_first_and_draws_state_machines(page: Any) -> None:
    page.wait_for_selector("[data-testid='resource-incident']")
    confidences = [
        float(text)
        for text in page.locator("table.facts tbody tr td:nth-child(3)").all_inner_texts()
    ]
    assert len(confidences) > 20
    assert confidences == sorted(confidences)
    graph = page.locator("[data-testid='machine-incident.state']")
    assert graph.locator("g.state").count() >= 5
    assert graph.locator("g.edge").count() >= 4
    assert "\n" not in page.locator("h1").inner_text()


def test_pinning_a_fact_is_written_back_and_unpinning_restores_the_file(
    page: Any, console: tuple[Running, Path]
) -> None:
    model_file = console[1]
    original = model_file.read_bytes()
    row = page.locator("[data-testid='fact-operation:list_incident']")
    row.locator("[data-testid='pin']").click()
    page.wait_for_selector("[data-testid='notice']")
    page.wait_for_selector("[data-testid='fact-operation:list_incident'].pinned")

    assert load(model_file).operation("list_incident").evidence.pinned
    assert model_file.read_bytes() != original
    row.locator("[data-testid='pin']").click()
    page.wait_for_selector("[data-testid='fact-operation:list_incident']:not(.pinned)")
    assert model_file.read_bytes() == original


def test_editing_a_field_role_pins_the_field(page: Any, console: tuple[Running, Path]) -> None:
    row = page.locator("[data-testid='fact-field:incident.number']")
    checkbox = row.locator("[data-testid='role-immutable']")
    was = checkbox.is_checked()
    checkbox.click()
    page.wait_for_selector("[data-testid='fact-field:incident.number'].pinned")

    spec = load(console[1]).resources["incident"].fields["number"]
    assert (spec.immutable, spec.evidence.pinned) == (not was, True)


def test_worlds_are_forked_diffed_and_reset(page: Any, console: tuple[Running, Path]) -> None:
    base_url = console[0].base_url
    page.click("[data-testid='nav-worlds']")
    page.fill("[data-testid='fork-id']", "trial-1")
    page.click("[data-testid='fork']")
    page.wait_for_selector("[data-testid='world-trial-1']")
    # A forked world is reached with its own credential, which the admin API hands out.
    world = httpx.get(
        f"{base_url}/_myna/admin/worlds/trial-1", headers={"Authorization": f"Bearer {TOKEN}"}
    ).json()
    created = httpx.post(
        f"{base_url}/worlds/trial-1{TABLE}/incident",
        json={"short_description": "Only in trial-1"},
        auth=(world["credentials"]["user"], world["credentials"]["password"]),
    )
    assert created.status_code == 201

    page.select_option("[data-testid='diff-a']", "trial-1")
    page.select_option("[data-testid='diff-b']", "default")
    page.click("[data-testid='diff']")
    result = page.locator("[data-testid='diff-result']")
    result.wait_for()
    rows = result.locator("tbody tr").all_inner_texts()
    # The incident, and what the service writes beside it (its audit trail).
    assert any(row.startswith("incident") and "Only in trial-1" in row for row in rows)
    assert result.locator("h2").inner_text().endswith(f": {len(rows)} record(s) differ")

    page.click("[data-testid='reset-trial-1']")
    page.wait_for_selector("text=Reset trial-1.")
    page.click("[data-testid='diff']")
    page.wait_for_selector("[data-testid='diff-result'] h2:has-text('0 record(s) differ')")


def test_calls_arrive_live_with_the_rule_that_refused_them(
    page: Any, console: tuple[Running, Path]
) -> None:
    base_url = console[0].base_url
    page.click("[data-testid='nav-calls']")
    page.wait_for_selector("[data-testid='calls']")
    page.wait_for_timeout(300)  # the stream is open once the page shows
    accepted = httpx.get(f"{base_url}{TABLE}/incident", params={"sysparm_limit": 1}, auth=AUTH)
    refused = httpx.post(f"{base_url}{TABLE}/incident", json={"state": "99"}, auth=AUTH)
    anonymous = httpx.get(f"{base_url}{TABLE}/incident")
    assert (accepted.status_code, refused.status_code, anonymous.status_code) == (200, 400, 401)

    rows = page.locator("[data-testid='call']")
    rows.nth(2).wait_for()
    decisions = rows.locator("[data-testid='decision']").all_inner_texts()
    assert decisions[0].startswith("auth: ")
    assert decisions[1].startswith("invalid_request: ")
    assert "state" in decisions[1]
    assert decisions[2] == "accepted"
    rows.nth(1).click()
    assert '"state": "99"' in page.locator("tr.detail").inner_text()


def test_results_drill_down_to_a_failing_scenario(page: Any) -> None:
    page.click("[data-testid='nav-results']")
    page.click("[data-testid='result-results.json']")
    page.wait_for_selector("[data-testid='bench-report']")
    page.click("[data-testid='scenario-close-stale-2']")
    detail = page.locator("[data-testid='scenario-detail']").inner_text()
    assert "close-stale-2" in detail
    assert "closed the wrong incident" in detail
    assert "scenario-close-stale-1" not in page.content()  # it passed: not listed as failing


def test_the_console_api_needs_the_admin_token(console: tuple[Running, Path]) -> None:
    base = f"{console[0].base_url}{CONSOLE_PREFIX}"
    assert httpx.get(f"{base}/").status_code == 200  # the page itself holds no data
    assert httpx.get(f"{base}/api/model").status_code == 401
    assert httpx.get(f"{base}/api/model", auth=AUTH).status_code == 401  # an agent's credential
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(f"{base}/api/model", headers=bearer).status_code == 200
    for escape in ("%2e%2e/app.py", "vendor/%2e%2e/%2e%2e/app.py", "app.py", "vendor/VENDOR.txt"):
        assert httpx.get(f"{base}/{escape}").status_code == 404, escape
    found = httpx.get(f"{base}/api/results/..%2Fitsm.yaml", headers=bearer)
    assert found.status_code == 404
    for body, message in (
        ({"address": "field:nope.x", "pinned": True}, "no fact 'field:nope.x'"),
        ({"address": "field:incident.number"}, "nothing to change"),
        ({"address": "field:incident.number", "roles": {"primary": True}}, "not a field role"),
    ):
        refused = httpx.post(f"{base}/api/facts", headers=bearer, json=body, timeout=60)
        assert refused.status_code == 400
        assert message in refused.json()["error"]["message"]
    assert httpx.post(f"{base}/api/facts", headers=bearer, content=b"{").status_code == 400


def _bench_result() -> BenchResult:
    def trial(scenario: str, passed: bool, why: str | None = None) -> Trial:
        return Trial(
            scenario=scenario,
            kind="close-stale",
            tier=1,
            trial=0,
            passed=passed,
            reward=1.0 if passed else 0.0,
            tool_calls=3,
            repercussion=why,
        )

    trials = [
        trial("close-stale-1", True),
        trial("close-stale-2", False, "closed the wrong incident"),
    ]
    score = Score(scenarios=2, trials=2, pass_hat={1: 0.5}, reward=0.5, tool_calls=3.0)
    return BenchResult(
        source="synthetic",
        source_format="synthetic",
        synthetic=True,
        agent="heuristic",
        trials_per_scenario=1,
        seed=0,
        import_issues={},
        seed_issues=[],
        yields=[],
        overall=score,
        by_kind={"close-stale": score},
        by_tier={"1": score},
        trials=trials,
    )


def test_json_of_a_bench_result_is_listed_as_itsmbench(tmp_path: Path) -> None:
    from myna.mocks.console.views import result_files

    (tmp_path / "r.json").write_text(_bench_result().model_dump_json())
    (tmp_path / "other.json").write_text(json.dumps({"format": "something else"}))
    assert result_files(tmp_path) == [{"name": "r.json", "kind": "itsmbench"}]
