"""The optional model-graded rubric: graded through a real chat endpoint, reported apart from
the deterministic checks, and never able to change the reward or the verdict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from myna.errors import ReplayError
from myna.replay.episode import Episode, HttpStep, RubricCheck, TextSource
from myna.replay.rubric import OpenAIGrader
from myna.replay.run import run_steps
from tests.replay.conftest import A2
from tests.replay.test_env import make_runner

Endpoint = tuple[str, list[dict[str, Any]], list[dict[str, Any]]]
RUBRIC = RubricCheck(
    name="close notes explain the fix",
    criteria="The close notes say what was wrong and what was done about it.",
    sources=[TextSource(resource="incident", where={"number": "INC0010002"}, field="close_notes")],
)


def _graded(episode: Episode) -> Episode:
    checks = [*episode.verifier.checks, RUBRIC]
    return episode.model_copy(
        update={"verifier": episode.verifier.model_copy(update={"checks": checks})}
    )


def _said(content: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


def test_a_rubric_is_graded_through_the_endpoint_and_reported_apart(
    episode: Episode, chat_endpoint: Endpoint
) -> None:
    base_url, replies, seen = chat_endpoint
    replies.append(_said('{"score": 0.25, "rationale": "It never says what was wrong."}'))
    grader = OpenAIGrader(base_url, "judge-1", api_key="k")
    runner = make_runner(_graded(episode))
    runner.grader = grader
    result = run_steps(runner, episode.reference.steps)
    assert (result.passed, result.reward) == (True, 1.0)  # the judge does not decide
    [graded] = result.verification.graded
    assert (graded.score, graded.passed) == (0.25, False)
    assert "never says" in graded.detail
    prompt = seen[0]["messages"][1]["content"]
    assert "Restarted the VPN concentrator; tunnels hold again." in prompt
    assert RUBRIC.criteria in prompt
    assert result.as_dict()["graded"][0]["score"] == 0.25


@pytest.mark.parametrize(
    "reply",
    ["I think it is fine.", '{"score": 7}', '{"score": "high"}'],
    ids=["prose", "range", "type"],
)
def test_a_grader_reply_without_a_score_is_a_result_not_a_crash(
    episode: Episode, chat_endpoint: Endpoint, reply: str
) -> None:
    base_url, replies, _ = chat_endpoint
    replies.append(_said(reply))
    runner = make_runner(_graded(episode))
    runner.grader = OpenAIGrader(base_url, "judge-1")
    [graded] = run_steps(runner, episode.reference.steps).verification.graded
    assert graded.score is None
    assert "score from 0 to 1" in graded.detail


def test_without_a_grader_the_rubric_is_neither_graded_nor_counted(episode: Episode) -> None:
    graded = make_runner(_graded(episode))
    plain = make_runner(episode)
    nothing = [HttpStep(method="PATCH", path=f"/api/now/table/incident/{A2}", body={"state": "6"})]
    for steps in (episode.reference.steps, nothing):
        with_rubric, without = run_steps(graded, steps), run_steps(plain, steps)
        assert (with_rubric.reward, with_rubric.passed) == (without.reward, without.passed)
        assert with_rubric.verification.graded == ()


def test_the_grader_is_configured_from_the_environment() -> None:
    grader = OpenAIGrader.from_env(
        {
            "MYNA_OPENAI_BASE_URL": "http://x/v1/",
            "MYNA_RUBRIC_MODEL": "judge",
            "MYNA_OPENAI_API_KEY": "k",
        }
    )
    assert (grader.base_url, grader.model, grader.api_key) == ("http://x/v1", "judge", "k")
    with pytest.raises(ReplayError, match="MYNA_RUBRIC_MODEL"):
        OpenAIGrader.from_env({})
    assert json.dumps(RUBRIC.model_dump())  # the rubric is plain episode data
