"""Judging free text for substance: pure functions over words, used by the `text` check.

A work note or close note passes when it names what it must name (a duplicate's number, the
cause, the fix), says something of its own (enough informative words: not function words, not
the filler of a low-effort note such as "done" or "fixed as requested"), and does not merely
repeat the instruction back. Words are compared by a light stem (lower case, common English
endings dropped), so "restarted" names "restart" and "drops" names "drop"; identifiers such as
`INC0010002` compare whole.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Final

_WORD: Final = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_ENDINGS: Final = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s", "e")

_STOPWORDS = """a about above after again against all also am an and any are as at be because
    been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself
    just me more most my no nor not now of off on once only or other our ours out over own
    same she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who whom
    why will with would you your yours it's i'm we've i've don't doesn't didn't won't can't
    isn't"""
_FILLER = """ok okay done fixed fix resolved resolve closed close closing complete completed
    issue issues ticket tickets incident incidents request requested requests task tasks per
    update updated updating note notes see above below attached please thanks thank regards
    na n/a nil none nothing test testing action actioned handled sorted solved solve work worked
    working as-is asis same etc various misc user users caller"""
STOPWORDS: Final = frozenset(_STOPWORDS.split())
FILLER: Final = frozenset(_FILLER.split())
"""Words a low-effort note is made of; they carry no information about what was done."""

COPY_SHARE: Final = 0.8
"""A text reproducing this share of the instruction's words, in order, and adding fewer than
`OWN_WORDS` informative words of its own, repeats it."""
OWN_WORDS: Final = 3


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """`word` without a common English ending; words with digits (identifiers) stay whole."""
    if any(ch.isdigit() for ch in word) or len(word) <= 4:
        return word
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            root = word[: -len(ending)]
            # "stopped" is "stop": a consonant doubled before the ending is one.
            if len(root) >= 4 and root[-1] == root[-2] and root[-1] not in "aeiouls":
                root = root[:-1]
            return root
    return word


def informative(text: str) -> list[str]:
    """The words that carry information: not function words, not filler, not one letter."""
    return [
        word
        for word in words(text)
        if word not in STOPWORDS
        and word not in FILLER
        and stem(word) not in _FILLER_STEMS
        and (len(word) >= 3 or any(ch.isdigit() for ch in word))
    ]


_FILLER_STEMS: Final = frozenset(stem(word) for word in FILLER)


def mentions(text: str, phrase: str) -> bool:
    """Whether the text holds the phrase's words, consecutively but for function words, compared
    by stem ("restarting the concentrators" mentions "restarted concentrator")."""
    wanted = _content_stems(phrase)
    if not wanted:
        return False
    have = _content_stems(text)
    width = len(wanted)
    return any(have[i : i + width] == wanted for i in range(len(have) - width + 1))


def _content_stems(text: str) -> list[str]:
    return [stem(word) for word in words(text) if word not in STOPWORDS]


def copy_share(text: str, source: str) -> float:
    """The share of `source`'s words that `text` reproduces in order (0 for an empty source)."""
    theirs = words(source)
    if not theirs:
        return 0.0
    matcher = difflib.SequenceMatcher(None, words(text), theirs, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(theirs)


def substance_problems(
    text: str,
    *,
    mentions_of: Sequence[Sequence[str]] = (),
    min_mentions: int | None = None,
    min_words: int = 3,
    not_copy_of: str = "",
    excludes: Sequence[Sequence[str]] = (),
) -> Iterator[str]:
    """Why `text` is not a note of substance; nothing when it is."""
    if not text.strip():
        yield "it is empty"
        return
    found = informative(text)
    if len(found) < min_words:
        yield f"it has {len(found)} informative words, fewer than {min_words}"
    missing = [group for group in mentions_of if not _names_one(text, group)]
    needed = len(mentions_of) if min_mentions is None else min(min_mentions, len(mentions_of))
    if len(mentions_of) - len(missing) < needed:
        shown = "; ".join(" or ".join(repr(term) for term in group) for group in missing)
        yield f"it names {len(mentions_of) - len(missing)} of the {needed} things it must: {shown}"
    if not_copy_of and repeats(text, not_copy_of):
        yield "it repeats the instruction"
    wrong = [term for group in excludes for term in group if mentions(text, term)]
    if wrong:
        yield f"it names what it must not: {', '.join(repr(term) for term in wrong)}"


def repeats(text: str, source: str) -> bool:
    """Whether `text` is `source` over again: most of its words, in order, and little else."""
    if copy_share(text, source) < COPY_SHARE:
        return False
    theirs = {stem(word) for word in words(source)}
    own = {stem(word) for word in informative(text)} - theirs
    return len(own) < OWN_WORDS


def _names_one(text: str, alternatives: Iterable[str]) -> bool:
    return any(mentions(text, term) for term in alternatives)
