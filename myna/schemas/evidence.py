"""Counting the evidence behind a fact while learning, and turning it into `Evidence`."""

from __future__ import annotations

from myna.schemas.model import Evidence

EXAMPLES = 3
"""Source exchange ids kept per fact: the smallest ones, so the choice is order-independent."""


def confidence(samples: int) -> float:
    """How sure one can be of a fact seen `samples` times: 1 -> 0.5, 3 -> 0.75, 9 -> 0.9."""
    return round(samples / (samples + 1), 3) if samples > 0 else 0.0


class Tally:
    """Samples, sessions and a few example ids for one fact."""

    __slots__ = ("examples", "samples", "sessions")

    def __init__(self) -> None:
        self.samples = 0
        self.sessions: set[int] = set()
        self.examples: list[str] = []

    def add(self, session: int, example: str) -> None:
        self.samples += 1
        self.sessions.add(session)
        examples = self.examples
        if len(examples) == EXAMPLES and example >= examples[-1]:
            return
        if len(examples) < EXAMPLES:
            if example not in examples:
                examples.append(example)
                examples.sort()
        elif example < examples[-1] and example not in examples:
            examples[-1] = example
            examples.sort()

    def absorb(self, other: Tally) -> None:
        self.samples += other.samples
        self.sessions |= other.sessions
        self.examples = sorted(set(self.examples) | set(other.examples))[:EXAMPLES]

    def evidence(self, *, samples: int | None = None, scale: float = 1.0) -> Evidence:
        """The `Evidence` for this tally; `scale` lowers confidence for weaker kinds of fact."""
        count = self.samples if samples is None else samples
        return Evidence(
            samples=count,
            sessions=len(self.sessions),
            examples=list(self.examples),
            confidence=round(confidence(count) * scale, 3),
        )


def count_evidence(samples: int) -> Evidence:
    """Evidence that is only a count (no sessions or examples to cite)."""
    tally = Tally()
    tally.samples = samples
    return tally.evidence()
