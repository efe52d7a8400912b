"""`myna bench itsm` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from myna.cli import app
from myna.itsm.bench import BenchResult
from myna.replay import Env, load_episode
from myna.replay.episode import HttpStep


def test_bench_itsm_writes_results_and_prints_a_table(tmp_path: Path) -> None:
    out = tmp_path / "run"
    outcome = CliRunner().invoke(
        app,
        ["bench", "itsm", "--agent", "oracle", "--limit", "10", "--trials", "2", "--out", str(out)],
    )
    assert outcome.exit_code == 0, outcome.output
    assert "ITSMBench: oracle" in outcome.output
    assert "survived the audit" in outcome.output
    result = BenchResult.model_validate_json((out / "results.json").read_text())
    assert result.overall.pass_hat == {1: 1.0, 2: 1.0}
    assert (out / "report.html").is_file()


def test_bench_itsm_json_prints_the_results(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        app, ["bench", "itsm", "--agent", "noop", "--limit", "5", "--json", "--out", str(tmp_path)]
    )
    assert outcome.exit_code == 0, outcome.output
    printed = json.loads(outcome.stdout)
    assert printed["agent"] == "noop"
    assert printed["overall"]["pass_hat"] == {"1": 0.0}


def test_bench_itsm_names_a_missing_export(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        app, ["bench", "itsm", "--data", str(tmp_path / "nope.csv"), "--out", str(tmp_path)]
    )
    assert outcome.exit_code != 0
    assert "nope.csv" in str(outcome.exception)


def test_bench_itsm_refuses_an_unknown_agent_before_any_work(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(app, ["bench", "itsm", "--agent", "gpt", "--out", str(tmp_path)])
    assert outcome.exit_code != 0
    assert "unknown agent 'gpt'" in str(outcome.exception)
    assert not (tmp_path / "results.json").exists()


def test_bench_itsm_episodes_replay_in_the_gymnasium_env(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(
        app,
        ["bench", "itsm", "--agent", "noop", "--limit", "3", "--episodes", "--out", str(tmp_path)],
    )
    assert outcome.exit_code == 0, outcome.output
    paths = sorted((tmp_path / "episodes").glob("*.json"))
    assert len(paths) == 3
    episode = load_episode(paths[0])
    assert episode.scores.status == "accepted"
    env = Env(episode)
    env.reset(seed=0)
    for step in episode.reference.steps:
        if isinstance(step, HttpStep):
            action = {"http": {"method": step.method, "path": step.path, "body": step.body}}
            env.step(action)
    answer = episode.reference.answer
    _, reward, terminated, _, _ = env.step({"submit": answer})
    assert terminated
    assert reward == 1.0
