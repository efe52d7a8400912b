"""Recorded answers: what a mock replays for an operation it cannot simulate.

An operation whose answers hold no records of a resource (`/users/{id}/factors` answering `[]`,
`/org/privacy/oktaSupport`, a describe call) still has to answer. The learner keeps a few of its
recorded exchanges as `RecordedAnswer`s, keyed by the parameters each request carried; the mock
replays the best match (`myna.mocks.replayed`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from myna.schemas.evidence import Tally
from myna.schemas.model import RecordedAnswer

ANSWERS_PER_OPERATION = 16
"""Distinct answers kept per operation: enough for the variants a recording shows."""

KEPT_HEADERS = frozenset(
    {"content-type", "link", "location", "x-total-count", "www-authenticate", "retry-after"}
)


@dataclass(frozen=True, slots=True)
class AnswerSample:
    """One recorded exchange of an operation, reduced to what replaying it needs."""

    params: dict[str, str]
    sent: dict[str, str]
    status: int
    headers: dict[str, str]
    body: Any
    text: str | None
    anonymous: bool
    session: int
    example: str


def path_param(name: str) -> str:
    """The key a path parameter has among an answer's parameters (`{userId}`), apart from any
    query parameter of the same name."""
    return "{" + name + "}"


def sent_values(body: Any) -> dict[str, str]:
    """The top-level values of a JSON request body, as text: what a search sent as a POST body
    (`{"jql": "project = BUG"}`) picks its recorded answer by, as query parameters do."""
    if not isinstance(body, dict):
        return {}
    return {
        str(name): value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        for name, value in body.items()
    }


def recorded_answers(samples: Iterable[AnswerSample]) -> list[RecordedAnswer]:
    """The distinct answers among `samples`, in recorded order, each with its evidence."""
    kept: dict[str, tuple[AnswerSample, Tally]] = {}
    for sample in samples:
        key = json.dumps(
            [sample.params, sample.sent, sample.status, sample.body, sample.text, sample.anonymous],
            sort_keys=True,
        )
        found = kept.get(key)
        if found is None:
            if len(kept) >= ANSWERS_PER_OPERATION:
                continue
            found = kept[key] = (sample, Tally())
        found[1].add(sample.session, sample.example)
    return [
        RecordedAnswer(
            params=sample.params,
            sent=sample.sent,
            status=sample.status,
            headers=sample.headers,
            body=sample.body,
            text=sample.text,
            anonymous=sample.anonymous,
            evidence=tally.evidence(),
        )
        for sample, tally in kept.values()
    ]
