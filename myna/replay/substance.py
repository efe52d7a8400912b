"""What a goal left to the agent demands, and what a competent reference writes for it.

A failure log often says only that a field must be set ("mandatory fields: close_code,
close_notes"), not to what. Such a goal is judged by what the field is:
- a choice field (the model's enum, else the values it was seen to take) takes a value from its
  choice list, never any text: the reference picks the choice the instruction's words point to;
- a free-text field must say something of substance: name what the instruction's explanation
  names (the clause after its colon: "the VPN concentrator was restarted") and not merely repeat
  the instruction; the reference writes that explanation as a note would put it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from myna.replay.episode import TextCheck, Where
from myna.replay.text import informative, stem, words
from myna.schemas.model import FieldSpec

_CLAUSE: Final = re.compile(r"[:;\u2014]|\s-\s|\bbecause\b|\bsince\b", re.IGNORECASE)
_NO_NOTES: Final = re.compile(
    r"\b(?:do not|don't|never|without)\b[^.]*\b(?:notes?|comments?|work notes?)\b", re.IGNORECASE
)
MAX_TERMS: Final = 6
"""A free-text check names at most this many of the explanation's words as things to mention."""


def choices_of(spec: FieldSpec | None) -> list[str]:
    """The values a choice field takes: its enum, else the non-empty values it was seen with."""
    if spec is None:
        return []
    enum = spec.schema_.get("enum")
    if enum:
        return [str(value) for value in enum if str(value) != ""]
    return [value for value in (spec.enum_frequencies or {}) if value != ""]


def pick_choice(options: list[str], instruction: str, spec: FieldSpec | None) -> str:
    """The choice the instruction's words point to ("as solved with a workaround": Workaround
    provided), else the one the service uses most."""
    said = {stem(word) for word in informative(instruction)}
    frequencies = (spec.enum_frequencies if spec is not None else None) or {}

    def fit(option: str) -> tuple[int, int]:
        overlap = len({stem(word) for word in words(option)} & said)
        return overlap, frequencies.get(option, 0)

    return max(options, key=fit)


def explanation(instruction: str) -> str:
    """The part of the instruction that says what happened or what to do about it: the text
    after its first colon, semicolon, dash or "because"; "" when it has none."""
    parts = _CLAUSE.split(instruction, maxsplit=1)
    return parts[1].strip().rstrip(".") if len(parts) == 2 else ""


def terms(text: str, leave_out: Iterable[str] = ()) -> list[str]:
    """The distinct informative words of `text`, in order, without `leave_out` (record names)."""
    skipped = {stem(word) for name in leave_out for word in words(name)}
    out: list[str] = []
    for word in informative(text):
        if stem(word) not in skipped and word not in out:
            out.append(word)
    return out


def text_check(
    name: str, resource: str, where: Where, field: str, instruction: str, leave_out: Iterable[str]
) -> TextCheck:
    """A free-text goal: names at least two of the explanation's words, not a copy."""
    named = terms(explanation(instruction), leave_out)[:MAX_TERMS]
    return TextCheck(
        name=name,
        resource=resource,
        where=where,
        field=field,
        mentions=[[term] for term in named],
        min_mentions=min(2, len(named)),
        min_words=3,
        not_copy_of=instruction,
    )


def reference_note(instruction: str) -> str:
    """What a competent agent writes in a free-text field: the explanation, as a note puts it,
    and what was checked."""
    said = explanation(instruction)
    if not said:
        return "Handled as the request describes; verified the outcome with the requester."
    return f"{said[0].upper()}{said[1:]}. Verified afterwards with the requester: it holds."


def forbids_notes(instruction: str) -> bool:
    return _NO_NOTES.search(instruction) is not None
