"""Replaying recorded answers for operations the mock cannot simulate.

The learner keeps a few recorded answers of every operation whose answers hold no records of a
resource (`myna.schemas.answers`). A request gets the recorded answer whose parameters match it
best (`best_answer`), with the recorded path values in the body replaced by the requested ones
(`echoed`): `/users/{id}/factors` for a user the recording never showed answers as the service
did for the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from myna.schemas.model import RecordedAnswer

_MIN_ECHO = 3
"""Shorter recorded values are not replaced in a body: `1` would rewrite every digit."""


def best_answer(
    answers: list[RecordedAnswer],
    params: Mapping[str, str],
    sent: Mapping[str, str] | None = None,
    *,
    anonymous: bool = False,
) -> RecordedAnswer:
    """The answer recorded for the request most like this one: every path parameter equal
    first, then one given to a caller who signed in as this one did (or did not), then the
    most query parameters and body values (`sent`) equal; between equals, a success over an
    error and the answer recorded most often. `answers` must not be empty."""
    sent = sent or {}

    def score(answer: RecordedAnswer) -> tuple[int, int, int, int, int]:
        path_equal = path_total = query_equal = 0
        for name, value in answer.params.items():
            same = params.get(name) == value
            if name.startswith("{"):
                path_total += 1
                path_equal += same
            else:
                query_equal += same
        extra = sum(1 for name in params if not name.startswith("{") and name not in answer.params)
        body_equal = sum(1 for name, value in answer.sent.items() if sent.get(name) == value)
        exact_path = int(path_equal == path_total)
        success = int(200 <= answer.status < 300)
        same_caller = int(answer.anonymous == anonymous)
        return (
            exact_path,
            same_caller,
            query_equal - extra + body_equal,
            success,
            answer.evidence.samples,
        )

    return max(answers, key=score)


def echoed(answer: RecordedAnswer, params: Mapping[str, str]) -> Any:
    """The answer's body with each recorded path value the request changed replaced by the
    requested one, wherever a string holds it."""
    swaps = {
        recorded: params[name]
        for name, recorded in answer.params.items()
        if name.startswith("{")
        and name in params
        and params[name] != recorded
        and len(recorded) >= _MIN_ECHO
    }
    if not swaps:
        return answer.body
    return _swap(answer.body, swaps)


def _swap(value: Any, swaps: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in swaps.items():
            if old in value:
                value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {key: _swap(item, swaps) for key, item in value.items()}
    if isinstance(value, list):
        return [_swap(item, swaps) for item in value]
    return value
