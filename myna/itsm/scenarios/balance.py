"""Balanced answers: no decision is common enough that guessing it without looking pays.

A scenario kind whose ground truth comes from history inherits history's skew: most incidents
end Closed, most groups of three incidents hold one of each state. An agent that answers the
commonest value without reading anything then scores that value's share. `balanced` keeps, per
form of question, at most `cap` scenarios of each answer, the largest cap under which no answer
holds more than `share` of what is kept; a form with too few distinct answers for that keeps one
of each (a guess then hits one in as many as there are answers, and never the guesser's own).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

SHARE = 0.05
"""The most any one answer may hold of a form's scenarios."""


def cap(counts: Iterable[int], share: float = SHARE) -> int:
    """The largest c such that, each answer cut to at most c scenarios, no answer holds more
    than `share` of those kept; at least 1."""
    sizes = sorted(counts)
    best = 1
    for c in range(2, (sizes[-1] if sizes else 1) + 1):
        if c > share * sum(min(size, c) for size in sizes):
            break  # the share of the commonest answer only grows with c
        best = c
    return best


def balanced(
    items: Sequence[T],
    key: Callable[[T], Hashable | None],
    *,
    share: float = SHARE,
    form: Callable[[T], Hashable] = lambda item: None,
) -> list[T]:
    """`items` in order, each form's answers (`key`) cut to that form's cap; an item whose key
    is None has no answer to guess and is always kept."""
    counts: dict[Hashable, Counter[Hashable]] = {}
    for item in items:
        answer = key(item)
        if answer is not None:
            counts.setdefault(form(item), Counter())[answer] += 1
    limits = {name: cap(seen.values(), share) for name, seen in counts.items()}
    taken: Counter[tuple[Hashable, Hashable]] = Counter()
    out = []
    for item in items:
        answer = key(item)
        if answer is not None:
            slot = (form(item), answer)
            if taken[slot] >= limits[slot[0]]:
                continue
            taken[slot] += 1
        out.append(item)
    return out
