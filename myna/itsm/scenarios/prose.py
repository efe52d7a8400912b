"""Free text the higher tiers turn on: work notes and knowledge articles, paraphrased.

A fact a scenario needs is stated here in one of several wordings, drawn from the scenario's
seeded `random.Random`: some name it the way a field would (a quoted close code, an incident
number), others only in words (what was done, who reported what and when, what caused a
fault). A script that pattern-matches the first kind passes those; reading the second needs
what a person (or a model) brings to a note. Everything is deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from myna.itsm.importers.model import stable_sys_id

Record = dict[str, str]

CODE_MEANINGS: Final[dict[str, tuple[str, ...]]] = {
    "Solution provided": (
        "Applied the fix and walked the caller through it; they confirm everything works now.",
        "Reinstalled the client and reset the profile, and the caller is back at work.",
    ),
    "Workaround provided": (
        "Gave the caller a temporary way around it until the permanent fix ships.",
        "They can carry on through the web version for now; the underlying fault remains.",
    ),
    "Resolved by caller": (
        "The caller rang back: it started working after they restarted it themselves.",
        "Before we got to it the caller had sorted it out on their own.",
    ),
    "User error": (
        "Nothing was broken: the caller was typing the old password format; showed them how.",
        "Turned out to be a mistake on the caller's side, explained the right steps to them.",
    ),
    "No resolution provided": (
        "Could not reproduce it; nothing was changed and the caller agreed we stop here.",
        "No fix was found or applied, and the caller no longer needs one.",
    ),
    "Known error": (
        "This is the documented defect already tracked; the caller was told the published fix.",
        "Matches the fault we already have on record as understood but not yet fixed.",
    ),
    "Resolved by problem": (
        "Fixed by the root-cause work on the linked problem; nothing further needed here.",
        "The investigation on the underlying problem removed the fault for this caller too.",
    ),
    "Resolved by change": (
        "The change deployed last night fixed it; the caller confirms.",
        "Fixed by the scheduled release that went out this morning.",
    ),
    "Duplicate": (
        "The same report is already being worked elsewhere; nothing separate to do here.",
        "Another ticket covers exactly this; work continues there.",
    ),
}
"""Each close code as a note says what was done, without the code's own words."""

_NUMBER_WORDS: Final = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]


def close_code_note(code: str, rng: random.Random) -> str:
    """A work note giving the close code: quoted as the field holds it, or in words only."""
    literal = (
        f'Agreed with the caller to close this as "{code}".',
        f"Close-out: {code}. Caller informed.",
    )
    meant = CODE_MEANINGS.get(code)
    if meant is None:
        number = code.rsplit(" ", 1)[-1]
        if number.isdigit() and int(number) < len(_NUMBER_WORDS):
            # An opaque code ("code 6") can only be paraphrased by its number, in words.
            word = _NUMBER_WORDS[int(number)]
            meant = (
                f"Per the desk's list this one closes under resolution code number {word}.",
                f"File it under the {word} code of the resolution list.",
            )
        else:
            meant = literal
    return rng.choice((*literal, *meant, *meant))


def when(at: datetime, rng: random.Random) -> str:
    """A point in time as a person writes it."""
    hour = at.hour % 12 or 12
    half = "am" if at.hour < 12 else "pm"
    return rng.choice(
        (
            f"{at:%A} {at.day} {at:%B} at {at:%H:%M}",
            f"the {_ordinal(at.day)} of {at:%B}, at {hour}:{at:%M} {half}",
            f"{at:%d/%m/%Y} around {at:%H:%M}",
        )
    )


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def earlier_report(number: str, caller: str | None, at: datetime, rng: random.Random) -> str:
    """A work note pointing at the incident a repeat report duplicates: by number, or by who
    reported it and when (the caller's name and the minute it was opened)."""
    by_number = (
        f"Same fault as {number}, which is already open for this caller.",
        f"Looks identical to {number}; linking them.",
    )
    if not caller:
        return rng.choice(by_number)
    moment = when(at, rng)
    in_words = (
        f"{caller} already reported this on {moment}; this call repeats that report.",
        f"Spoke to the caller: it is the same fault {caller} raised with us on {moment}.",
        f"Not new. The original report came from {caller}, logged {moment}.",
    )
    return rng.choice((*by_number, *in_words, *in_words))


@dataclass(frozen=True, slots=True)
class Cause:
    """A fault's cause: the words a note naming it must use (any one), sentences saying it (each
    with one of those words, few with "cause" or "because"), the symptom as an article states
    it, and how callers report it (in none of those words)."""

    words: tuple[str, ...]
    sentences: tuple[str, ...]
    symptom: str
    reports: tuple[str, ...]


CAUSES: Final[tuple[Cause, ...]] = (
    Cause(
        ("certificate", "tls", "ssl", "cert"),
        (
            "Root cause: the TLS certificate on {item} had expired.",
            "It happens because the certificate {item} presents ran past its expiry date.",
            "Whenever the certificate on {item} lapses, clients refuse the handshake until "
            "someone renews it.",
        ),
        "Clients cannot connect to {item} and report a secure connection error.",
        (
            "My browser says the site on {item} is not private and will not let me in.",
            "Since this morning {item} shows a red padlock warning and the app refuses to open.",
        ),
    ),
    Cause(
        ("disk", "storage", "volume", "partition"),
        (
            "Root cause: the data volume on {item} filled up.",
            "This is due to {item} running out of disk space during the nightly batch.",
            "Once the log partition on {item} is full, writes stop and the service hangs.",
        ),
        "{item} stops answering in the early morning and recovers after a restart.",
        (
            "Saving anything to {item} fails first thing in the morning, then works after lunch.",
            "{item} was dead when I came in again; someone restarted it and it came back.",
        ),
    ),
    Cause(
        ("memory", "leak", "heap", "ram"),
        (
            "Root cause: a memory leak in the agent running on {item}.",
            "The slowdown is caused by {item} exhausting its heap after a few days of uptime.",
            "After several days up, {item} has eaten all its RAM and starts swapping.",
        ),
        "{item} gets slower through the week until users cannot work.",
        (
            "{item} is fine on Monday and crawling by Thursday, every week.",
            "Each screen on {item} takes a minute to load now; it was quick after the weekend.",
        ),
    ),
    Cause(
        ("dns", "resolver"),
        (
            "Root cause: a stale DNS record pointing {item} at its old address.",
            "The errors are due to the resolver returning an outdated address for {item}.",
            "Clients' DNS lookups for {item} still return the address it had before the move.",
        ),
        "Some users reach {item} and others get a timeout.",
        (
            "My colleague can open {item} but from my desk it just spins and times out.",
            "{item} works over the VPN at home but not from the office.",
        ),
    ),
    Cause(
        ("password", "credential", "credentials"),
        (
            "Root cause: the service account {item} runs under had its password expire.",
            "It fails because the stored credentials for {item} are out of date.",
            "Every ninety days the account behind {item} must change its password, and the "
            "integration keeps the old one.",
        ),
        "Scheduled jobs on {item} fail with an authentication error.",
        (
            "The overnight export from {item} did not arrive again; the log says access denied.",
            "Reports scheduled on {item} stopped running at the start of the month.",
        ),
    ),
    Cause(
        ("firmware", "bios"),
        (
            "Root cause: a firmware bug in the network card of {item}.",
            "The drops are caused by the old firmware {item} still runs.",
            "The vendor confirmed the firmware flashed onto {item} in spring mishandles large "
            "frames; the newer release does not.",
        ),
        "{item} loses its network connection several times a day.",
        (
            "{item} keeps going offline for a few seconds, several times an hour.",
            "Every so often everyone on {item} is kicked out at once and has to reconnect.",
        ),
    ),
    Cause(
        ("deadlock", "lock", "locks", "locking"),
        (
            "Root cause: a database deadlock between two jobs on {item}.",
            "The freezes are due to lock contention on {item} when the reports run.",
            "Two nightly jobs on {item} lock the same rows in opposite order and wait on each "
            "other forever.",
        ),
        "Screens served by {item} freeze for minutes at a time.",
        (
            "Whenever month-end reporting starts, {item} hangs and nobody can save an order.",
            "{item} froze mid-transaction again and the order went through twice.",
        ),
    ),
    Cause(
        ("licence", "license", "licences", "licenses"),
        (
            "Root cause: {item} ran out of licences.",
            "It happens because every licensed seat on {item} is taken by the time the late "
            "shift logs on.",
            "The licence for {item} covers two hundred users and the company now has more; "
            "the last ones to log on are turned away.",
        ),
        "New sessions on {item} are refused in the afternoon.",
        (
            "I cannot log on to {item} after about three o'clock; mornings are fine.",
            "{item} tells the late shift that the maximum number of users is reached.",
        ),
    ),
)


WORKAROUND: Final = (
    "Until it is fixed, restarting the affected service restores it for a while.",
    "A restart brings it back for a few hours; keep the caller informed.",
)


def article(
    key: str, item: str, cause: Cause, rng: random.Random, at: datetime, *, current: bool = True
) -> Record:
    """A knowledge article about a fault of `item`: its symptom, its cause (in one of the
    cause's wordings) and a workaround; a retired one for an earlier, disproved diagnosis."""
    sentences = [
        cause.symptom.format(item=item),
        rng.choice(cause.sentences).format(item=item),
        rng.choice(WORKAROUND),
    ]
    stamp = f"{at:%Y-%m-%d %H:%M:%S}"
    number = f"KB{int(stable_sys_id('kb_knowledge', key)[:8], 16) % 10_000_000:07d}"
    return {
        "sys_id": stable_sys_id("kb_knowledge", key),
        "number": number,
        "short_description": f"Recurring fault on {item}",
        "text": " ".join(sentences),
        "workflow_state": "published" if current else "retired",
        "active": "true" if current else "false",
        "published": f"{at:%Y-%m-%d}",
        "sys_updated_on": stamp,
        "sys_created_on": stamp,
        "sys_mod_count": "0",
    }


def journal(key: str, incident: str, text: str, at: datetime, by: str) -> Record:
    """A work note on an incident as ServiceNow stores it (`sys_journal_field`)."""
    return {
        "sys_id": stable_sys_id("sys_journal_field", key),
        "element": "work_notes",
        "element_id": incident,
        "name": "incident",
        "value": text,
        "sys_created_on": f"{at:%Y-%m-%d %H:%M:%S}",
        "sys_created_by": by,
    }


AWAITING_CALLER: Final = (
    "Waiting on the caller: they will send the error screenshot when back at their desk.",
    "Left a voicemail asking for the asset tag; nothing we can do until she calls back.",
    "He is on leave until Monday and will try the fix then; the next move is his.",
    "Asked the caller which of the two printers jams; no answer from them yet.",
)
"""Notes saying the desk is waiting on the caller, some in those words, most not."""
OTHER_NOTES: Final = (
    "Caller chased again this morning; they are waiting for us, not the other way round.",
    "Waiting for the vendor's engineer to call back with a date for the replacement part.",
    "Caller asked for an update; told them we are still on it.",
    "Reproduced the fault on a test machine; working through the logs now.",
)
"""Notes on incidents the desk is working, some with the same words."""
