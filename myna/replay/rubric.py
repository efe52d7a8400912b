"""The optional model-graded rubric: a judge model scores free text against written criteria.

Deterministic checks decide the verdict and the reward; a `rubric` check adds what rules cannot
judge (is this close note a competent account of the fix?). It is graded only when a grader is
configured, and its score is reported apart (`VerifierResult.graded`), never mixed into the
reward: a judge model is slower, costs money and can be wrong or gamed, so training signal stays
deterministic and the rubric is evidence beside it.

`OpenAIGrader` talks to any OpenAI-compatible chat-completions endpoint: `MYNA_RUBRIC_BASE_URL`,
`MYNA_RUBRIC_MODEL`, `MYNA_RUBRIC_API_KEY` (each falling back to its `MYNA_OPENAI_*` setting).
It asks for a JSON object `{"score": 0..1, "rationale": "..."}`. Any failure (the endpoint, a
reply that is not that object) is a result with no score and the reason, never an exception.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

import httpx

from myna.errors import ReplayError
from myna.replay.chat import complete
from myna.replay.episode import RubricCheck, Verifier
from myna.replay.verify import GradedResult, Outcome, scalar, select

SYSTEM: Final = (
    "You grade the written work of an IT service desk agent against a rubric. Read the task, "
    "the criteria and the texts the agent wrote. Reply with one JSON object and nothing else: "
    '{"score": <a number from 0 to 1>, "rationale": "<one sentence>"}.'
)
MAX_TEXT: Final = 4000


@dataclass(frozen=True, slots=True)
class RubricRequest:
    criteria: str
    instruction: str
    texts: tuple[tuple[str, str], ...]
    """(where the text was read, the text)."""


@dataclass(frozen=True, slots=True)
class Grade:
    score: float
    rationale: str


class Grader(Protocol):
    def grade(self, request: RubricRequest) -> Grade:
        """Score the texts against the criteria; raise `ReplayError` when it cannot."""
        ...


def texts_for(check: RubricCheck, outcome: Outcome) -> tuple[tuple[str, str], ...]:
    found = [
        (f"{source.resource} {record_id} {source.field}", str(scalar(record.get(source.field))))
        for source in check.sources
        for record_id, record in select(outcome.final, source.resource, source.where)
    ]
    if check.include_answer:
        found.append(("final answer", outcome.answer or ""))
    return tuple((label, text[:MAX_TEXT]) for label, text in found)


def grade_all(
    verifier: Verifier, outcome: Outcome, instruction: str, grader: Grader
) -> tuple[GradedResult, ...]:
    """Every rubric check of the verifier, graded; failures are results with no score."""
    results = []
    for check in verifier.checks:
        if not isinstance(check, RubricCheck):
            continue
        request = RubricRequest(check.criteria, instruction, texts_for(check, outcome))
        try:
            grade = grader.grade(request)
        except ReplayError as failed:
            results.append(GradedResult(check.name, None, None, failed.message))
            continue
        results.append(
            GradedResult(check.name, grade.score, grade.score >= check.pass_score, grade.rationale)
        )
    return tuple(results)


@dataclass(slots=True)
class OpenAIGrader:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OpenAIGrader:
        source = os.environ if env is None else env

        def setting(name: str) -> str | None:
            return source.get(f"MYNA_RUBRIC_{name}") or source.get(f"MYNA_OPENAI_{name}")

        model, base = setting("MODEL"), setting("BASE_URL")
        if not model or not base:
            raise ReplayError(
                "the rubric grader needs an endpoint and a model: set MYNA_RUBRIC_BASE_URL and "
                "MYNA_RUBRIC_MODEL (or MYNA_OPENAI_BASE_URL and MYNA_OPENAI_MODEL)"
            )
        return cls(base.rstrip("/"), model, setting("API_KEY"))

    def grade(self, request: RubricRequest) -> Grade:
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": _prompt(request)},
            ],
            "temperature": 0,
        }
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=self.timeout) as http:
            reply = complete(http, body, error=ReplayError, what="rubric")
        return _parse(_content(reply))


def _prompt(request: RubricRequest) -> str:
    shown = "\n\n".join(f"[{label}]\n{text}" for label, text in request.texts) or "(no text)"
    return f"Task:\n{request.instruction}\n\nCriteria:\n{request.criteria}\n\nTexts:\n{shown}"


def _content(reply: Any) -> str:
    try:
        content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ReplayError("the rubric endpoint's reply has no choices[0].message.content") from None
    return str(content)


def _parse(content: str) -> Grade:
    text = content.strip()
    start, end = text.find("{"), text.rfind("}")
    try:
        parsed: Any = json.loads(text[start : end + 1]) if start >= 0 else None
    except json.JSONDecodeError:
        parsed = None
    score = parsed.get("score") if isinstance(parsed, dict) else None
    if not isinstance(score, int | float) or isinstance(score, bool) or not 0 <= score <= 1:
        raise ReplayError(f"the grader did not reply with a score from 0 to 1: {text[:200]!r}")
    return Grade(float(score), str(parsed.get("rationale", "")))
