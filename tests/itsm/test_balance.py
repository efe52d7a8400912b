"""Balanced answers: once `balanced` has cut a form's scenarios, no answer is common enough
that a blind guess pays more than the share allowed."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from myna.itsm.scenarios.balance import balanced, cap

answers = st.lists(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), max_size=400)


@given(answers)
def test_no_answer_holds_more_than_the_share_unless_each_is_kept_once(items: list[str]) -> None:
    kept = balanced(items, key=lambda item: item, share=0.05)
    counts = Counter(kept)
    assert set(counts) == set(items)  # every answer stays represented
    if counts and max(counts.values()) > 1:
        assert max(counts.values()) <= 0.05 * len(kept)


@given(answers)
def test_the_cap_is_the_largest_that_holds(items: list[str]) -> None:
    sizes = list(Counter(items).values())
    limit = cap(sizes, 0.05)
    above = limit + 1
    if limit < max(sizes, default=0):
        assert above > 0.05 * sum(min(size, above) for size in sizes)


def test_forms_are_balanced_apart_and_answerless_items_are_kept() -> None:
    items = [("state", "Closed")] * 30 + [("count", str(n % 15)) for n in range(60)]
    items += [("none", None)] * 3
    kept = balanced(items, key=lambda item: item[1], form=lambda item: item[0])
    assert Counter(kept)[("state", "Closed")] == 1
    assert Counter(item[0] for item in kept)["count"] == 15  # one each: 15 answers are too few
    assert Counter(kept)[("none", None)] == 3
