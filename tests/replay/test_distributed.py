"""Rollouts on Ray (`myna.replay.distributed`): a local Ray instance, started once for the module,
runs the same episodes as the local path with the same results in the same order, and an actor
killed mid-run has its episodes run again elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from typer.testing import CliRunner

from myna.cli import app as myna_app
from myna.errors import ReplayError
from myna.replay.distributed import EpisodeTries, RayPool, tries
from myna.replay.episode import Episode, ModelRef, save_episode
from myna.replay.mock_world import MockWorlds, runner_for
from myna.schemas.model import ServiceModel
from tests.replay import ray_work
from tests.replay.conftest import build_samples_on_itsm
from tests.test_lean_install import _BLOCKER


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    # Four logical CPUs on this two-core machine: the module's pool holds two actors while the
    # CLI tests start pools of their own beside it (an actor waits for a free CPU).
    ray.init(
        num_cpus=4,
        object_store_memory=80 * 1024 * 1024,
        include_dashboard=False,
        logging_level="WARNING",
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def pool() -> Iterator[RayPool]:
    with RayPool("auto", actors=2) as started:
        yield started


@pytest.fixture(scope="module")
def built() -> tuple[ServiceModel, list[Episode]]:
    model, _, report = build_samples_on_itsm(variants=1)
    return model, report.episodes


def _local(
    model: ServiceModel, episodes: list[Episode], count: int = 2
) -> list[list[dict[str, Any]]]:
    worlds = MockWorlds(model)
    return [
        [r.as_dict() for r in tries(runner_for(e, model, worlds), None, count)] for e in episodes
    ]


def _on_ray(
    pool: RayPool,
    model: ServiceModel,
    episodes: list[Episode],
    progress: Callable[[int, int], None] | None = None,
) -> list[list[dict[str, Any]]]:
    setup = EpisodeTries(((ModelRef(name="itsm"), model),), None, 2)
    return [[r.as_dict() for r in runs] for runs in pool.map(setup, episodes, progress)]


def test_two_actors_give_the_local_results_in_order(
    pool: RayPool, built: tuple[ServiceModel, list[Episode]]
) -> None:
    model, episodes = built
    assert _on_ray(pool, model, episodes) == _local(model, episodes)


def test_results_come_back_in_the_items_order_from_every_actor(pool: RayPool) -> None:
    out = pool.map(ray_work.pids, list(range(97)))
    assert [item for item, _ in out] == list(range(97))
    assert len({pid for _, pid in out}) == 2
    assert os.getpid() not in {pid for _, pid in out}


def test_a_killed_actors_episodes_run_again_on_its_replacement(
    pool: RayPool, built: tuple[ServiceModel, list[Episode]]
) -> None:
    model, episodes = built
    seen: list[int] = []
    lost, victim = pool.lost, pool.actors[0]

    def kill_once(done: int, total: int) -> None:
        if not seen:
            ray.kill(victim)
        seen.append(done)

    assert _on_ray(pool, model, episodes, kill_once) == _local(model, episodes)
    assert pool.lost == lost + 1
    assert victim not in pool.actors
    assert seen[-1] == len(episodes)


def test_a_workers_error_reaches_the_driver_as_raised(pool: RayPool) -> None:
    with pytest.raises(ReplayError, match="episode 5") as raised:
        pool.map(ray_work.raising, list(range(10)))
    assert raised.value.context["file"] == "five.json"


def test_an_item_that_kills_every_actor_it_meets_is_given_up_on(pool: RayPool) -> None:
    lost = pool.lost
    with pytest.raises(ReplayError, match="lost their Ray actor 2 times"):
        pool.map(ray_work.exiting, list(range(8)), retries=1)
    assert pool.lost == lost + 2
    assert pool.map(ray_work.raising, [1, 2]) == [1, 2]  # the pool still works


def test_more_actors_than_the_cluster_has_cpus_is_refused() -> None:
    with pytest.raises(ReplayError, match="has 4 CPUs; 5 actors need one each"):
        RayPool("auto", actors=5)


def test_an_episode_mints_the_same_ids_whichever_episodes_came_before(
    built: tuple[ServiceModel, list[Episode]],
) -> None:
    """What lets any actor run any episode: a world's minted ids come from its base snapshot,
    which is named by the episode's content, not by how many episodes its mock loaded first
    (third in line, one episode used to mint the id of a record its world already held)."""
    model, episodes = built
    alone = [_local(model, [e], 1)[0] for e in episodes]
    count = len(episodes)
    for index, episode in enumerate(episodes):
        line = [episodes[(index + 1) % count], episodes[(index + 2) % count], episode]
        assert _local(model, line, 1)[-1] == alone[index], episode.id
    assert _local(model, episodes[::-1], 1) == alone[::-1]


def _cli(*args: str) -> str:
    done = CliRunner().invoke(myna_app, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_replay_run_on_ray_prints_what_the_local_run_prints(
    built: tuple[ServiceModel, list[Episode]], tmp_path: Path
) -> None:
    for episode in built[1]:
        save_episode(episode, tmp_path)
    local = _cli("replay", "run", str(tmp_path), "--k", "2", "--json")
    on_ray = _cli("replay", "run", str(tmp_path), "--k", "2", "--json", "--ray", "auto")
    assert on_ray == local
    assert {row["passed"] for row in json.loads(local)} == {"True"}
    two = _cli("replay", "run", str(tmp_path), "--json", "--ray", "auto", "--workers", "2")
    assert two == _cli("replay", "run", str(tmp_path), "--json")


def test_itsmbench_on_two_actors_writes_the_local_results(tmp_path: Path) -> None:
    args = ["bench", "itsm", "--limit", "6", "--agent", "heuristic", "--trials", "2", "--json"]
    local = _cli(*args, "--out", str(tmp_path / "local"))
    on_ray = _cli(*args, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2")
    assert on_ray == local
    assert json.loads(local)["overall"]["trials"] > 0


def test_workers_without_ray_is_a_one_line_error(tmp_path: Path) -> None:
    done = CliRunner().invoke(myna_app, ["replay", "run", str(tmp_path), "--workers", "2"])
    assert done.exit_code != 0
    assert "--ray" in str(done.exception)


def test_without_ray_installed_the_ray_extra_is_named(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _BLOCKER.format(blocked=["ray"]),
            "bench",
            "itsm",
            "--limit",
            "2",
            "--ray",
            "auto",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "pip install 'myna[ray]'" in line
