"""A built episode runs on the real in-process mock: through `Env` with tool calls, through the
HTTP episode server, and out as an exported dataset; and the CLI chains the stages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from gymnasium.utils.env_checker import check_env
from typer.testing import CliRunner

from myna.cli import app as myna_app
from myna.replay.build import Builder, build
from myna.replay.env import Env
from myna.replay.episode import Episode, ModelRef, load_episode, save_episode
from myna.replay.export import export
from myna.replay.mock_world import MockWorlds, Replayers, ToolboxTranslator
from myna.replay.sample_logs import INCIDENTS, SAMPLES, TABLE, failure_sessions, incident_model
from myna.replay.server import create_app

EPISODE_TOKEN = "episode-server-token-for-tests"

MODEL = incident_model()
MODEL_REF = ModelRef(path="incident.model.yaml")
TARGET = INCIDENTS["INC0010002"]
RESOLVE = {
    "sys_id": TARGET,
    "state": "6",
    "close_code": "Solution provided",
    "close_notes": "Restarted the VPN concentrator; tunnels hold again.",
}


@pytest.fixture(scope="module")
def episodes() -> dict[str, Episode]:
    builder = Builder(
        model=MODEL,
        factory=MockWorlds(MODEL),
        model_ref=MODEL_REF,
        tools=tuple(ToolboxTranslator(MODEL).names()),
    )
    report = build(failure_sessions(), builder, variants=1)
    return {episode.id: episode for episode in report.episodes}


@pytest.fixture
def resolve(episodes: dict[str, Episode]) -> Episode:
    return episodes["resolve-vpn-constraint_violation"]


@pytest.fixture
def replayers() -> Replayers:
    replayers = Replayers()
    replayers.add(MODEL_REF, MODEL)
    return replayers


def test_an_agent_solves_it_through_env_with_tool_calls(
    resolve: Episode, replayers: Replayers
) -> None:
    env = Env(resolve, replayers.runner(resolve))
    observation, info = env.reset(seed=0)
    assert "update_incident" in json.loads(observation)["tools"]
    assert "update_incident" in {tool["function"]["name"] for tool in info["tools"]}
    refused = {"tool": "update_incident", "arguments": {"sys_id": TARGET, "state": "6"}}
    reply = json.loads(env.step(refused)[0])
    assert reply["status"] == 400  # the mock enforces what the logged service enforced
    reply = json.loads(env.step({"tool": "update_incident", "arguments": RESOLVE})[0])
    assert reply["status"] == 200
    _, reward, terminated, _, info = env.step({"submit": None})
    assert (reward, terminated) == (1.0, True)
    assert info["verification"]["passed"]


def test_deleting_the_incident_ends_the_episode_with_a_repercussion(
    episodes: dict[str, Episode], replayers: Replayers
) -> None:
    episode = episodes["cancel-duplicate-policy_breach"]
    env = Env(episode, replayers.runner(episode))
    env.reset()
    duplicate = INCIDENTS["INC0010006"]
    _, reward, terminated, _, info = env.step(
        {"tool": "delete_incident", "arguments": {"sys_id": duplicate}}
    )
    assert (reward, terminated) == (0.0, True)
    assert info["repercussion"]["kind"] == "forbidden_call"


def test_env_on_the_mock_passes_gymnasiums_checker(resolve: Episode, replayers: Replayers) -> None:
    check_env(Env(resolve, replayers.runner(resolve)), skip_render_check=True)


@pytest.fixture
def server(episodes: dict[str, Episode], replayers: Replayers) -> TestClient:
    app = create_app(list(episodes.values()), replayers, token=EPISODE_TOKEN)
    return TestClient(app, headers={"Authorization": f"Bearer {EPISODE_TOKEN}"})


def _mock_path(base_url: str) -> str:
    return base_url.removeprefix("http://testserver")


def test_the_http_server_resets_lets_the_agent_call_the_mock_and_scores_the_submit(
    server: TestClient,
) -> None:
    listed = server.get("/episodes").json()
    assert "resolve-vpn-constraint_violation" in {e["id"] for e in listed}
    started = server.post("/episodes/resolve-vpn-constraint_violation/reset").json()
    assert {"verifier", "reference"}.isdisjoint(started)
    assert "update_incident" in {t["function"]["name"] for t in started["tools"]}
    base, auth = _mock_path(started["base_url"]), tuple(started["auth"]["basic"])
    found = server.get(
        f"{base}{TABLE}/incident", params={"sysparm_query": "number=INC0010002"}, auth=auth
    )
    [incident] = found.json()["result"]
    body = {k: v for k, v in RESOLVE.items() if k != "sys_id"}
    assert (
        server.patch(
            f"{base}{TABLE}/incident/{incident['sys_id']}", json=body, auth=auth
        ).status_code
        == 200
    )
    scored = server.post(f"/attempts/{started['attempt_id']}/submit", json={}).json()
    assert (scored["reward"], scored["passed"], scored["repercussion"]) == (1.0, True, None)
    assert all(set(check) == {"name", "passed", "weight"} for check in scored["checks"])
    again = server.post(f"/attempts/{started['attempt_id']}/submit", json={})
    assert again.status_code == 404


def test_the_http_server_applies_the_policy_at_submit(server: TestClient) -> None:
    started = server.post("/episodes/cancel-duplicate-policy_breach/reset").json()
    base, auth = _mock_path(started["base_url"]), tuple(started["auth"]["basic"])
    deleted = server.delete(f"{base}{TABLE}/incident/{INCIDENTS['INC0010006']}", auth=auth)
    assert deleted.status_code == 204
    scored = server.post(f"/attempts/{started['attempt_id']}/submit", json={}).json()
    assert scored["reward"] == 0.0
    assert scored["repercussion"]["kind"] == "forbidden_call"


def test_each_reset_is_a_fresh_world(server: TestClient) -> None:
    first = server.post("/episodes/resolve-vpn-constraint_violation/reset").json()
    base, auth = _mock_path(first["base_url"]), tuple(first["auth"]["basic"])
    server.patch(f"{base}{TABLE}/incident/{TARGET}", json={"priority": "1"}, auth=auth)
    second = server.post("/episodes/resolve-vpn-constraint_violation/reset").json()
    record = server.get(
        f"{_mock_path(second['base_url'])}{TABLE}/incident/{TARGET}", auth=auth
    ).json()["result"]
    assert record["priority"] == "3"


def test_unknown_episodes_and_attempts_are_404(server: TestClient) -> None:
    assert server.post("/episodes/nope/reset").status_code == 404
    assert server.post("/attempts/nope/submit", json={}).status_code == 404


def test_export_writes_what_an_agent_may_see(episodes: dict[str, Episode], tmp_path: Path) -> None:
    chosen = list(episodes.values())
    written = export(chosen, {e.id: MODEL for e in chosen}, tmp_path / "set.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "set.jsonl").read_text().splitlines()]
    assert written == len(rows) == len(chosen)
    row = next(r for r in rows if r["episode_id"] == "resolve-vpn-constraint_violation")
    assert row["prompt"] == [{"role": "user", "content": row["instruction"]}]
    assert {t["function"]["name"] for t in row["tools"]} >= {"update_incident", "list_incident"}
    assert row["metadata"]["failure_class"] == "constraint_violation"
    assert "Solution provided" not in json.dumps(row["metadata"])


def _cli(*args: str) -> Any:
    result = CliRunner().invoke(myna_app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_the_cli_builds_audits_runs_ingests_and_exports(tmp_path: Path) -> None:
    out = tmp_path / "episodes"
    built = _cli(
        "replay",
        "build",
        str(SAMPLES / "failures.jsonl"),
        "--model",
        str(SAMPLES / "incident.model.yaml"),
        "-o",
        str(out),
        "--variants",
        "1",
        "--json",
    )
    assert len(json.loads(built.stdout)) == 12
    audited = json.loads(_cli("replay", "audit", str(out), "--k", "2", "--json").stdout)
    assert {row["status"] for row in audited} == {"accepted"}
    ran = json.loads(_cli("replay", "run", str(out), "--json").stdout)
    assert {row["reward"] for row in ran} == {"1.00"}
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(
        "\n".join(
            json.dumps({"episode_id": "who-has-vpn-wrong_answer", "agent": "gpt", "passed": True})
            for _ in range(5)
        )
    )
    ingested = json.loads(
        _cli("replay", "ingest", str(rollouts), "--episodes", str(out), "--json").stdout
    )
    assert ingested[0]["flags"].startswith("too_easy")
    assert load_episode(out / "who-has-vpn-wrong_answer.json").scores.rollouts["gpt"].tries == 5
    _cli("replay", "export", str(out), "-o", str(tmp_path / "set.jsonl"))
    assert len((tmp_path / "set.jsonl").read_text().splitlines()) == 12


def test_a_cli_user_error_names_the_file(tmp_path: Path, resolve: Episode) -> None:
    save_episode(resolve, tmp_path)
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text('{"episode_id": "resolve-vpn-constraint_violation"}\n')
    result = CliRunner().invoke(
        myna_app, ["replay", "ingest", str(rollouts), "--episodes", str(tmp_path)]
    )
    assert result.exit_code != 0
    assert "rollouts.jsonl" in str(result.exception)
    assert "passed" in str(result.exception)


def test_the_cli_builds_on_a_builtin_back_end_by_name(tmp_path: Path) -> None:
    out = tmp_path / "episodes"
    _cli("replay", "build", str(SAMPLES / "failures.jsonl"), "--model", "itsm", "-o", str(out))
    assert load_episode(out / "resolve-vpn-constraint_violation.json").environment.model == (
        ModelRef(name="itsm")
    )
    ran = json.loads(_cli("replay", "run", str(out), "--json").stdout)
    assert {row["passed"] for row in ran} == {"True"}


def test_a_delete_answered_204_is_a_reply_not_a_crash(
    resolve: Episode, replayers: Replayers
) -> None:
    attempt = replayers.runner(resolve).start()
    other = next(
        r["sys_id"] for r in resolve.environment.initial_world["incident"] if r["sys_id"] != TARGET
    )
    reply = attempt.call("DELETE", f"{TABLE}/incident/{other}")
    assert (reply.status, reply.body, attempt.repercussion) == (204, None, None)
    result = attempt.submit(None)
    failed = {c.name for c in result.verification.checks if not c.passed}
    assert "no collateral changes" in failed


def test_gymnasium_make_runs_a_saved_episode_on_its_model_file(
    resolve: Episode, tmp_path: Path
) -> None:
    import gymnasium

    from myna.replay.env import ENV_ID
    from myna.schemas import openapi

    openapi.save(MODEL, tmp_path / "incident.model.yaml")
    saved = load_episode(save_episode(resolve, tmp_path))
    env = gymnasium.make(ENV_ID, episode=saved, model_base=tmp_path)
    env.reset(seed=0)
    env.step({"tool": "update_incident", "arguments": RESOLVE})
    _, reward, terminated, _, _ = env.step({"submit": None})
    assert (reward, terminated) == (1.0, True)
    env.close()


def test_ingest_with_an_unknown_episode_changes_nothing(tmp_path: Path, resolve: Episode) -> None:
    path = save_episode(resolve, tmp_path)
    before = path.read_text()
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(
        json.dumps({"episode_id": resolve.id, "passed": True})
        + "\n"
        + json.dumps({"episode_id": "typo", "passed": True})
        + "\n"
    )
    result = CliRunner().invoke(
        myna_app, ["replay", "ingest", str(rollouts), "--episodes", str(tmp_path)]
    )
    assert "unknown episodes: typo" in str(result.exception)
    assert path.read_text() == before


def test_an_episode_world_is_stored_as_the_back_end_keeps_it() -> None:
    # An episode names a server only; ServiceNow keeps a server as a cmdb_ci record too, so a
    # query of cmdb_ci (what an agent looking for "the CI" asks) finds it, and no change is
    # charged to the agent for the derived row.
    from myna.backends import builtin_model
    from myna.replay.episode import Environment, ModelRef
    from myna.replay.mock_world import MockWorlds

    server = {"sys_id": "5" * 32, "name": "db-prod-01", "sys_class_name": "cmdb_ci_server"}
    environment = Environment(
        model=ModelRef(name="itsm"), initial_world={"cmdb_ci_server": [server]}
    )
    world = MockWorlds(builtin_model("itsm")).open(environment)
    try:
        listed = world.client.get("/api/now/table/cmdb_ci", params={"sysparm_fields": "name"})
        assert json.loads(listed.body)["result"] == [{"name": "db-prod-01"}]
        assert world.changes() == []
    finally:
        world.close()
