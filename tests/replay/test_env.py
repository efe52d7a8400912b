"""Running episodes: attempts, the Gymnasium environment, and repercussions."""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st

from myna.errors import ReplayError
from myna.replay.env import ENV_ID, Env
from myna.replay.episode import Episode
from myna.replay.run import EpisodeRunner, Routes, run_steps
from myna.replay.world import HttpRequest
from myna.schemas.model import Operation, ServiceModel
from tests.replay.conftest import A2
from tests.replay.fakes import FakeFactory, incident_model

RESOLVE = {
    "http": {
        "method": "PATCH",
        "path": f"/api/now/table/incident/{A2}",
        "body": {
            "state": "6",
            "close_code": "Solved (Permanently)",
            "close_notes": "Restarted the VPN concentrator; tunnels hold again.",
        },
    }
}


def translate(name: str, arguments: Any) -> HttpRequest:
    if name != "update_incident":
        raise ReplayError(f"unknown tool {name}")
    fields = {k: v for k, v in arguments.items() if k != "sys_id"}
    return HttpRequest("PATCH", f"/api/now/table/incident/{arguments['sys_id']}", body=fields)


def make_runner(episode: Episode, factory: FakeFactory | None = None) -> EpisodeRunner:
    return EpisodeRunner(
        episode, factory or FakeFactory(), Routes.from_model(incident_model()), translate
    )


@pytest.fixture
def env(episode: Episode) -> Env:
    return Env(episode, make_runner(episode), max_steps=5)


def test_the_reference_solution_passes_and_doing_nothing_fails(episode: Episode) -> None:
    runner = make_runner(episode)
    assert run_steps(runner, episode.reference.steps).passed
    nothing = run_steps(runner, [])
    assert not nothing.passed
    assert nothing.reward == 0.0  # the two guards hold, but guards earn nothing


def test_each_attempt_gets_a_fresh_world(episode: Episode) -> None:
    factory = FakeFactory()
    runner = make_runner(episode, factory)
    run_steps(runner, episode.reference.steps)
    second = runner.start()
    assert second.world.changes() == []
    assert factory.opened[0].closed


def test_a_reset_shows_the_instruction_and_a_submit_scores_it(env: Env) -> None:
    observation, info = env.reset(seed=1)
    assert json.loads(observation)["instruction"].startswith("Resolve INC0010002")
    assert info == {"episode_id": "resolve-inc0010002", "tools": []}
    observation, reward, terminated, truncated, _ = env.step(json.dumps(RESOLVE))
    assert json.loads(observation)["status"] == 200
    assert (reward, terminated, truncated) == (0.0, False, False)
    _, reward, terminated, _, info = env.step({"submit": None})
    assert (reward, terminated) == (1.0, True)
    assert all(check["passed"] for check in info["verification"]["checks"])


def test_tool_actions_are_translated_to_calls(env: Env) -> None:
    env.reset()
    body = RESOLVE["http"]["body"]
    env.step({"tool": "update_incident", "arguments": {"sys_id": A2, **body}})
    _, reward, *_ = env.step({"submit": None})
    assert reward == 1.0


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ({"http": {"method": "DELETE", "path": f"/api/now/table/incident/{A2}"}}, "forbidden_call"),
        ({"http": {"method": "POST", "path": "/_myna/worlds/reset"}}, "forbidden_call"),
        ({"http": {"method": "GET", "path": "/api/now/stats/incident"}}, "forbidden_call"),
    ],
    ids=["forbidden-pattern", "admin-endpoint", "undocumented-endpoint"],
)
def test_a_forbidden_call_ends_the_episode_failed_and_is_never_sent(
    episode: Episode, action: dict[str, Any], kind: str
) -> None:
    factory = FakeFactory()
    env = Env(episode, make_runner(episode, factory))
    env.reset()
    _, reward, terminated, _, info = env.step(action)
    assert (reward, terminated) == (0.0, True)
    assert info["repercussion"]["kind"] == kind
    assert factory.opened[0].changes() == []


def test_a_crashing_world_ends_the_episode_instead_of_raising(episode: Episode) -> None:
    factory = FakeFactory()
    env = Env(episode, make_runner(episode, factory))
    env.reset()
    factory.opened[0].explode = True
    _, reward, terminated, _, info = env.step(RESOLVE)
    assert (reward, terminated) == (0.0, True)
    assert info["repercussion"] == {
        "kind": "crash",
        "detail": "RuntimeError: the fake world exploded",
    }


@pytest.mark.parametrize(
    "action",
    ["not json", "[1, 2]", '{"tool": "x", "submit": 1}', '{"http": {"path": "/x"}}'],
    ids=["not-json", "not-object", "two-kinds", "http-without-method"],
)
def test_a_malformed_action_is_answered_not_fatal(env: Env, action: str) -> None:
    env.reset()
    observation, reward, terminated, _, _ = env.step(action)
    assert json.loads(observation)["status"] == 400
    assert (reward, terminated) == (0.0, False)


def test_running_out_of_steps_truncates(env: Env) -> None:
    env.reset()
    for _ in range(4):
        assert not env.step("{}")[3]
    _, reward, terminated, truncated, _ = env.step("{}")
    assert (reward, terminated, truncated) == (0.0, False, True)
    with pytest.raises(ReplayError, match="call reset"):
        env.step("{}")


def test_passes_gymnasiums_env_checker(env: Env) -> None:
    check_env(env, skip_render_check=True)


def test_is_registered_with_gymnasium(episode: Episode) -> None:
    made = gymnasium.make(ENV_ID, episode=episode, runner=make_runner(episode))
    observation, _ = made.reset(seed=0)
    assert "INC0010002" in observation
    made.close()


def test_a_world_that_cannot_report_its_changes_fails_the_attempt(
    episode: Episode, monkeypatch: pytest.MonkeyPatch
) -> None:
    factory = FakeFactory()
    attempt = make_runner(episode, factory).start()

    def broken() -> list[Any]:
        raise RuntimeError("store went away")

    monkeypatch.setattr(factory.opened[0], "changes", broken)
    result = attempt.submit(None)
    assert (result.reward, result.passed) == (0.0, False)
    assert result.repercussion is not None
    assert result.repercussion.detail == "RuntimeError: store went away"


_segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12)


@given(
    literals=st.lists(_segment, min_size=1, max_size=4),
    values=st.lists(_segment, min_size=1, max_size=3),
)
def test_routes_match_templates_and_return_their_parameters(
    literals: list[str], values: list[str]
) -> None:
    names = [f"p{i}" for i in range(len(values))]
    template = "/" + "/".join(
        part for pair in zip(literals, (f"{{{n}}}" for n in names), strict=False) for part in pair
    )
    used = names[: min(len(literals), len(values))]
    model = ServiceModel(
        name="m", operations=[Operation(id="op", method="GET", path=template, kind="get")]
    )
    concrete = template
    for name, value in zip(used, values, strict=False):
        concrete = concrete.replace(f"{{{name}}}", value)
    routes = Routes.from_model(model)
    matched = routes.match("get", concrete + "?x=1")
    assert matched is not None
    assert matched[1] == dict(zip(used, values, strict=False))
    assert routes.match("POST", concrete) is None
    assert routes.match("GET", concrete + "/extra") is None
